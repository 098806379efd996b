/* The show subcommand: the store per pool: blocks, used and free counts, allocations */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "common/util/json.h"
#include "common/util/rfc3339.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/pool/allocator.h"
#include "ipam/nv-ipam/pool/ipmath.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/store/store.h"
#include "ipam/nv-ipam/tool/cli.h"
#include "ipam/nv-ipam/tool/show.h"

static const char show_help[] =
	"Usage: nv-ipam-tool show [--store FILE] [--pool-file FILE] [--pool KEY] [--json]\n"
	"                         [--lock-timeout-ms N]\n"
	"\n"
	"Show the store per pool: this node's block (from the node pool file), the used and\n"
	"free address counts, and each allocation with its pod namespace/name, container ID,\n"
	"interface, network and age (a container ID longer than 16 characters shows its\n"
	"first 13, as crictl does; --json has it whole). Takes the store lock while reading.\n"
	"A store handed over to the reference nv-ipam node daemon is shown from its file as\n"
	"that daemon reads it (network names unknown), under a first line that says so;\n"
	"the daemon's lock is not taken. Nothing is ever written, the lock's file included.\n"
	"\n"
	"  --store FILE           the store (default " NVIPAM_DEFAULT_STORE_FILE ")\n"
	"  --pool-file FILE       the node pool file (default " NVIPAM_DEFAULT_POOL_FILE ");\n"
	"                         a FILE that is not there is an error; the default not\n"
	"                         there leaves blocks and free counts out, saying so\n"
	"  --no-pool-file         the store alone: no blocks or free counts\n"
	"  --pool KEY             only this pool (\"<name>\" or \"cidrpool/<name>\")\n"
	"  --lock-timeout-ms N    wait at most N ms for the store lock (default " CLI_STR(NVIPAM_DEFAULT_LOCK_TIMEOUT_MS) ")\n"
	"  --json                 print JSON\n"
	"  -h, --help             this text\n";

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void format_age(long long s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, len, "%llds", s);
	else if (s < 2 * 3600)
		snprintf(buf, len, "%lldm", s / 60);
	else if (s < 2 * 86400)
		snprintf(buf, len, "%lldh", s / 3600);
	else
		snprintf(buf, len, "%lldd", s / 86400);
}

/* What one pool shows: its node pool entry (may be NULL) and its allocations sorted by IP. */
struct shown {
	const char *key;
	const struct nvipam_pool *pool;
	bool stored;                    /* the store has a record of it: */
	struct nvipam_store_pool_info record;
	const struct nvipam_alloc **allocs;
	size_t n;
	unsigned long free_count;
};

struct widths {
	int ip, pod, net, ifname, age;
};

/*
 * What a store holds as a name (an older build's, a daemon's, a hand's) reaches a terminal
 * escaped: control characters and bytes that are not UTF-8 as text_escape() writes them.
 */
static const char *esc(const char *s, char *buf, size_t size)
{
	text_escape(s, strlen(s), buf, size);
	return buf;
}

/* A row's cells, escaped. */
struct row {
	char ip[IP_PREFIX_STRLEN], age[32], pod[1200], net[600], ifname[80], cid[600];
};

static void row_text(const struct nvipam_alloc *a, time_t now, struct row *r)
{
	char ns[600], name[600];

	ip_addr_format(&a->ip, r->ip, sizeof(r->ip));
	snprintf(r->pod, sizeof(r->pod), "%s/%s",
		 *a->pod_namespace ? esc(a->pod_namespace, ns, sizeof(ns)) : "-",
		 *a->pod_name ? esc(a->pod_name, name, sizeof(name)) : "-");
	esc(*a->network ? a->network : "-", r->net, sizeof(r->net));
	esc(a->ifname, r->ifname, sizeof(r->ifname));
	esc(a->container_id, r->cid, sizeof(r->cid));
	format_age((long long)(now - a->created), r->age, sizeof(r->age));
}

static void widen(int *w, const char *s)
{
	int n = (int)strlen(s);

	if (n > *w)
		*w = n;
}

static void row_widths(const struct nvipam_alloc *a, time_t now, struct widths *w)
{
	struct row r;

	row_text(a, now, &r);
	widen(&w->ip, r.ip);
	widen(&w->pod, r.pod);
	widen(&w->net, r.net);
	widen(&w->ifname, r.ifname);
	widen(&w->age, r.age);
}

static void block_text(const struct nvipam_pool *p, char *buf, size_t len)
{
	char a[IP_PREFIX_STRLEN], b[IP_PREFIX_STRLEN];

	if (p->type == NVIPAM_POOL_CIDRPOOL)
		snprintf(buf, len, "prefix %s", ip_prefix_format(&p->subnet, a, sizeof(a)));
	else
		snprintf(buf, len, "block %s-%s", ip_addr_format(&p->range.start, a, sizeof(a)),
			 ip_addr_format(&p->range.end, b, sizeof(b)));
}

static void print_text(const struct shown *v, size_t n, time_t now)
{
	for (size_t i = 0; i < n; i++) {
		const struct shown *s = &v[i];
		char blk[2 * IP_PREFIX_STRLEN + 16], gw[IP_PREFIX_STRLEN], key[1200];

		printf("pool %s", esc(s->key, key, sizeof(key)));
		if (s->pool) {
			block_text(s->pool, blk, sizeof(blk));
			printf("  %s  gateway %s  used %zu  free %lu\n", blk,
			       s->pool->has_gateway ? ip_addr_format(&s->pool->gateway, gw, sizeof(gw)) : "-",
			       s->n, s->free_count);
		} else {
			printf("  (no block on this node)  used %zu\n", s->n);
		}
		/* Columns as wide as this pool's values: 80 columns for IPv4 and short names. */
		struct widths w = { 2, 3, 7, 6, 3 };

		for (size_t j = 0; j < s->n; j++)
			row_widths(s->allocs[j], now, &w);
		if (s->n)
			printf("  %-*s %-*s %-*s %-*s %-*s %s\n", w.ip, "IP", w.pod, "POD", w.net, "NETWORK",
			       w.ifname, "IFNAME", w.age, "AGE", "CONTAINER");
		for (size_t j = 0; j < s->n; j++) {
			struct row r;

			row_text(s->allocs[j], now, &r);
			/* A runtime's 64-digit ID shortened as crictl shows it; --json has it whole. */
			printf("  %-*s %-*s %-*s %-*s %-*s %.*s\n", w.ip, r.ip, w.pod, r.pod, w.net, r.net,
			       w.ifname, r.ifname, w.age, r.age, strlen(r.cid) > 16 ? 13 : 16, r.cid);
		}
	}
}

/* The first line over a store handed over: what is shown, and how it comes back. */
static void print_handed_over(const char *store, const struct nvipam_store_handover_info *h)
{
	printf("store %s is handed over to the reference nv-ipam node daemon%s%s%s: shown as "
	       "that daemon reads it (network names unknown); ipam-node's start or "
	       "`nv-ipam-tool adopt` takes it back\n", store, *h->at ? " at " : "", h->at,
	       h->changed ? " (the daemon has written it since)" : "");
}

/* A name from the store as a JSON string: valid UTF-8, a byte that is not as Go writes it (U+FFFD). */
static int add_text(struct json_object *o, const char *key, const char *s)
{
	_cleanup_free_ char *scrubbed = NULL;
	size_t len;

	if (text_utf8_valid(s, strlen(s)))
		return k8s_json_add_str(o, key, s);
	scrubbed = text_utf8_scrub(s, strlen(s), &len);
	return scrubbed ? k8s_json_add_str(o, key, scrubbed) : -ENOMEM;
}

static int print_json(const char *store, const struct nvipam_store_handover_info *h,
		      const struct shown *v, size_t n, time_t now)
{
	_cleanup_(json_object_putp) struct json_object *root = json_object_new_object();
	struct json_object *pools = json_object_new_array();
	char buf[2 * IP_PREFIX_STRLEN + 16];
	int r;

	if (!root || !pools || json_object_object_add(root, "pools", pools) < 0) {
		json_object_put(pools);
		return -ENOMEM;
	}
	r = add_text(root, "store", store);
	r = r ? r : k8s_json_add(root, "handedOver", json_object_new_boolean(h->handed_over));
	if (h->handed_over && *h->at)
		r = r ? r : k8s_json_add_str(root, "handedOverAt", h->at);
	if (h->handed_over)
		r = r ? r : k8s_json_add(root, "changedSinceHandover", json_object_new_boolean(h->changed));
	for (size_t i = 0; !r && i < n; i++) {
		const struct shown *s = &v[i];
		struct json_object *o = json_object_new_object(), *arr = json_object_new_array();

		if (!o || json_object_array_add(pools, o) < 0 || !arr ||
		    json_object_object_add(o, "allocations", arr) < 0) {
			json_object_put(o);
			json_object_put(arr);
			return -ENOMEM;
		}
		r = add_text(o, "pool", s->key);
		if (s->pool) {
			char a[IP_PREFIX_STRLEN], b[IP_PREFIX_STRLEN];

			r = r ? r : k8s_json_add_str(o, "type", nvipam_pool_type_name(s->pool->type));
			r = r ? r : k8s_json_add_str(o, "subnet", ip_prefix_format(&s->pool->subnet, a, sizeof(a)));
			r = r ? r : k8s_json_add_str(o, "startIP", ip_addr_format(&s->pool->range.start, a, sizeof(a)));
			r = r ? r : k8s_json_add_str(o, "endIP", ip_addr_format(&s->pool->range.end, b, sizeof(b)));
			if (s->pool->has_gateway)
				r = r ? r : k8s_json_add_str(o, "gateway", ip_addr_format(&s->pool->gateway, a, sizeof(a)));
			r = r ? r : k8s_json_add(o, "free", json_object_new_int64(
						 s->free_count > INT64_MAX ? INT64_MAX : (int64_t)s->free_count));
		}
		r = r ? r : k8s_json_add(o, "used", json_object_new_int64((int64_t)s->n));
		if (s->stored && s->record.has_last)
			r = r ? r : k8s_json_add_str(o, "lastReservedIP",
						     ip_addr_format(&s->record.last_reserved, buf, sizeof(buf)));
		for (size_t j = 0; !r && j < s->n; j++) {
			const struct nvipam_alloc *a = s->allocs[j];
			struct json_object *e = json_object_new_object();

			if (!e || json_object_array_add(arr, e) < 0) {
				json_object_put(e);
				return -ENOMEM;
			}
			r = k8s_json_add_str(e, "ip", ip_addr_format(&a->ip, buf, sizeof(buf)));
			r = r ? r : add_text(e, "podNamespace", a->pod_namespace);
			r = r ? r : add_text(e, "podName", a->pod_name);
			r = r ? r : add_text(e, "podUID", a->pod_uid);
			r = r ? r : add_text(e, "containerID", a->container_id);
			r = r ? r : add_text(e, "ifname", a->ifname);
			r = r ? r : add_text(e, "network", a->network);
			r = r ? r : add_text(e, "deviceID", a->device_id);
			r = r ? r : k8s_json_add_str(e, "created", rfc3339_format(a->created, buf));
			r = r ? r : k8s_json_add(e, "ageSeconds", json_object_new_int64(
						 (int64_t)(now > a->created ? now - a->created : 0)));
		}
	}
	if (r < 0)
		return r;
	printf("%s\n", json_object_to_json_string_ext(root, K8S_JSON_PRETTY));
	return 0;
}

/* The pools to show: every pool of the pool file and of the store (or just @only), sorted. */
static int collect(const struct nvipam_store *st, const struct nvipam_pools *pools,
		   const char *only, struct shown **ret, size_t *ret_n)
{
	const size_t n_allocs = nvipam_store_count(st), n_records = nvipam_store_pool_count(st);
	_cleanup_free_ const char **keys = malloc((n_allocs + n_records + pools->n + 1) * sizeof(*keys));
	_cleanup_free_ const struct nvipam_alloc **sorted = malloc((n_allocs + 1) * sizeof(*sorted));
	struct nvipam_store_pool_info record;
	struct shown *v;
	size_t nk = 0, n = 0, pos = 0;

	if (!keys || !sorted)
		return -ENOMEM;
	for (size_t i = 0; i < pools->n; i++)
		keys[nk++] = pools->pools[i].key;
	for (size_t i = 0; nvipam_store_pool_at(st, i, &record); i++)
		keys[nk++] = record.key;
	for (size_t i = 0; i < n_allocs; i++) {
		sorted[i] = nvipam_store_alloc_at(st, i);
		keys[nk++] = sorted[i]->pool;
	}
	qsort(keys, nk, sizeof(*keys), str_cmp);
	qsort(sorted, n_allocs, sizeof(*sorted), nvipam_alloc_ptr_cmp);
	v = calloc(nk + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < nk; i++) {
		struct shown *s;

		if ((i > 0 && strcmp(keys[i - 1], keys[i]) == 0) || (only && strcmp(keys[i], only) != 0))
			continue;
		s = &v[n++];
		s->key = keys[i];
		s->pool = nvipam_pools_find(pools, keys[i]);
		for (size_t k = 0; !s->stored && nvipam_store_pool_at(st, k, &record); k++)
			if (strcmp(record.key, keys[i]) == 0) {
				s->stored = true;
				s->record = record;
			}
		while (pos < n_allocs && strcmp(sorted[pos]->pool, keys[i]) < 0)
			pos++;
		s->allocs = malloc((n_allocs - pos + 1) * sizeof(*s->allocs));
		if (!s->allocs)
			goto oom;
		while (pos < n_allocs && strcmp(sorted[pos]->pool, keys[i]) == 0)
			s->allocs[s->n++] = sorted[pos++];
	}
	/* Keys point into @st and @pools, which outlive the result. */
	*ret = v;
	*ret_n = n;
	return 0;
oom:
	for (size_t i = 0; i < n; i++)
		free(v[i].allocs);
	free(v);
	return -ENOMEM;
}

static int free_counts(const struct nvipam_store *st, struct shown *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_(nvipam_store_usage_free) struct nvipam_pool_usage u = { 0 };

		if (!v[i].pool)
			continue;
		if (nvipam_store_usage(st, v[i].key, &u) < 0)
			return -ENOMEM;
		v[i].free_count = nvipam_pool_free_count(v[i].pool, &u);
	}
	return 0;
}

struct show_args {
	const char *only;
	bool json;
	bool no_pool_file;
};

static int show_option(int opt, const char *arg, void *ctx)
{
	struct show_args *a = ctx;

	if (opt == 'p')
		a->only = arg;
	else if (opt == 'j')
		a->json = true;
	else if (opt == 'n')
		a->no_pool_file = true;
	else
		return cli_usage_error("show", "invalid option");
	return 0;
}

int show_main(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_NODE_FILE_OPTIONS,
		{ "pool", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-pool-file", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_node_files files = CLI_NODE_FILES_INIT;
	struct nvipam_store_handover_info handed = { 0 };
	struct nvipam_store *st = NULL;
	struct nvipam_pools pools = { 0 };
	struct cni_err err = { 0 };
	struct show_args a = { 0 };
	const char *store_path, *pool_file;
	struct shown *v = NULL;
	struct stat sb;
	bool there;
	size_t n = 0;
	int r, ret;

	ret = cli_options("show", show_help, argc, argv, opts, show_option, &a, &files);
	if (ret <= 0)
		return -ret;
	ret = CLI_EXIT_FAIL;
	store_path = files.store;
	pool_file = files.pool_file;

	if (a.no_pool_file && files.pool_file_given)
		return cli_usage_error("show", "--pool-file and --no-pool-file exclude each other");
	/* A mistyped --pool-file would show every pool as without a block on this node. */
	if (!a.no_pool_file && (stat(pool_file, &sb) == 0 || errno != ENOENT)) {
		if (nvipam_pools_load(pool_file, false, &pools, &err) < 0)
			return cli_fail(&err);
	} else if (!a.no_pool_file && files.pool_file_given) {
		cni_err_set(&err, CNI_ERR_IO, -ENOENT, "no node pool file at %s (--no-pool-file shows "
			    "the store alone)", pool_file);
		return cli_fail(&err);
	} else if (!a.no_pool_file) {
		fprintf(stderr, "nv-ipam-tool: no node pool file at %s: blocks and free counts left "
			"out (--pool-file names it)\n", pool_file);
	}
	if (cli_store_exists(store_path, &there, &err) < 0)
		goto out;
	/* Handed over, the store is the daemon's file: read as it is, nothing else opened. */
	if (there && nvipam_store_open_handed_over(store_path, (unsigned int)files.lock_timeout_ms,
						   &st, &handed, &err) < 0)
		goto out;
	if (!st && cli_store_open(&files, true, &st, &err) < 0)
		goto out;
	/* An empty listing would read as "nothing allocated": a mistyped --store says so. */
	if (!st) {
		cni_err_set(&err, CNI_ERR_IO, -ENOENT,
			    "no store at %s (nv-ipam creates it at its first ADD; --store names another)",
			    store_path);
		goto out;
	}
	r = collect(st, &pools, a.only, &v, &n);
	if (r >= 0 && a.only && n == 0) {
		cni_err_set(&err, CNI_ERR_INVALID_CONFIG, -ENOENT,
			    "no pool \"%s\" in %s or in the store %s", a.only, pool_file, store_path);
		goto out;
	}
	if (r >= 0)
		r = free_counts(st, v, n);
	if (r >= 0 && a.json) {
		r = print_json(store_path, &handed, v, n, time(NULL));
	} else if (r >= 0) {
		if (handed.handed_over)
			print_handed_over(store_path, &handed);
		print_text(v, n, time(NULL));
	}
	if (r < 0) {
		cni_err_set(&err, CNI_ERR_INTERNAL, r, "out of memory");
		goto out;
	}
	ret = CLI_EXIT_OK;
out:
	for (size_t i = 0; i < n; i++)
		free(v[i].allocs);
	free(v);
	nvipam_store_close(st);
	nvipam_pools_free(&pools);
	return ret == CLI_EXIT_OK ? ret : cli_fail(&err);
}
