/*
 * The check subcommand: the store's integrity against the node pool file
 *
 * Errors (exit 1): a store that cannot be read or parsed, two pools whose blocks on this
 * node overlap, an address held twice in one
 * pool, one interface of a container (an attachment) holding two addresses in one pool,
 * an allocation in a pool this node has no block of, an address outside its pool's
 * subnet (IPPool) or prefix (CIDRPool). Warnings (exit 1 only with --strict): an address
 * inside the subnet but outside the node's current block (a static IP, or one left from
 * before the pool changed), the same address held in two pools, and with --pods an
 * allocation whose pod is not in the node's pod listing or is there with another UID (a
 * leak gc releases), and a pool log without its header line. The logs are read whole,
 * snapshots aside: a damaged line a snapshot covers is an error too.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/overlap.h"
#include "ipam/nv-ipam/k8s/pods.h"
#include "ipam/nv-ipam/pool/ipmath.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/store/store.h"
#include "ipam/nv-ipam/tool/check.h"
#include "ipam/nv-ipam/tool/cli.h"

static const char check_help[] =
	"Usage: nv-ipam-tool check [--store FILE] [--pool-file FILE] [--strict]\n"
	"                          [--pods FILE [--listed-at SECONDS]] [--lock-timeout-ms N]\n"
	"\n"
	"Check that no two pools' blocks in the node pool file overlap, and the store under\n"
	"its lock: that it parses, that no address is held twice in a pool, that no\n"
	"container interface holds two addresses in a pool, that every allocation is\n"
	"in a pool this node has a block of and inside its subnet or prefix.\n"
	"Warns about addresses outside the node's current block (static IPs, or left over\n"
	"after a pool change), about one address held in two pools and, with --pods, about\n"
	"allocations whose pod is gone: not in the pod listing, or there with another UID\n"
	"(what gc releases).\n"
	"\n"
	"  --store FILE           the store (default " NVIPAM_DEFAULT_STORE_FILE ")\n"
	"  --pool-file FILE       the node pool file (default " NVIPAM_DEFAULT_POOL_FILE ")\n"
	"  --lock-timeout-ms N    wait at most N ms for the store lock (default " CLI_STR(NVIPAM_DEFAULT_LOCK_TIMEOUT_MS) ")\n"
	"  --strict               warnings count as problems too\n"
	"  --pods FILE            this node's pod listing (kubectl get pods -A --field-selector\n"
	"                         spec.nodeName=NODE -o json; - for stdin)\n"
	"  --listed-at SECONDS    when that listing was started (date +%s): allocations made\n"
	"                         since (or in the second before) are not reported\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: 0 clean, 1 problems found (or the store cannot be read), 2 bad usage.\n";

static int by_ip(const void *a, const void *b)
{
	const struct nvipam_alloc *x = *(const struct nvipam_alloc *const *)a;
	const struct nvipam_alloc *y = *(const struct nvipam_alloc *const *)b;
	int c = ip_addr_cmp(&x->ip, &y->ip);

	return c ? c : strcmp(x->pool, y->pool);
}

struct tally {
	size_t errors;
	size_t warnings;
};

static void report(struct tally *t, bool error, const struct nvipam_alloc *a, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void report(struct tally *t, bool error, const struct nvipam_alloc *a, const char *fmt, ...)
{
	char ip[IP_PREFIX_STRLEN];
	va_list ap;

	printf("%s: pool ", error ? "error" : "warning");
	k8s_fput_escaped(stdout, a->pool);
	printf(": %s (container ", ip_addr_format(&a->ip, ip, sizeof(ip)));
	k8s_fput_escaped(stdout, a->container_id);
	fputs(" interface ", stdout);
	k8s_fput_escaped(stdout, a->ifname);
	fputs(" pod ", stdout);
	k8s_fput_escaped(stdout, *a->pod_namespace ? a->pod_namespace : "-");
	putchar('/');
	k8s_fput_escaped(stdout, *a->pod_name ? a->pod_name : "-");
	fputs("): ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (error)
		t->errors++;
	else
		t->warnings++;
}

/* The store's allocations as pointers sorted by @cmp, NULL when out of memory. */
static const struct nvipam_alloc **sorted(const struct nvipam_store *st,
					  int (*cmp)(const void *a, const void *b))
{
	size_t n = nvipam_store_count(st);
	const struct nvipam_alloc **v = malloc((n + 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		v[i] = nvipam_store_alloc_at(st, i);
	qsort(v, n, sizeof(*v), cmp);
	return v;
}

static int check_addresses(const struct nvipam_store *st, struct tally *t)
{
	_cleanup_free_ const struct nvipam_alloc **v = sorted(st, by_ip);

	if (!v)
		return -ENOMEM;
	for (size_t i = 1; i < nvipam_store_count(st); i++) {
		const struct nvipam_alloc *x = v[i - 1], *y = v[i];

		if (!ip_addr_equal(&x->ip, &y->ip))
			continue;
		if (strcmp(x->pool, y->pool) == 0)
			report(t, true, y, "held twice in the pool, also by container %s", x->container_id);
		else
			report(t, false, y, "also held in pool %s", x->pool);
	}
	return 0;
}

static int by_attachment(const void *a, const void *b)
{
	const struct nvipam_alloc *x = *(const struct nvipam_alloc *const *)a;
	const struct nvipam_alloc *y = *(const struct nvipam_alloc *const *)b;
	int c = strcmp(x->pool, y->pool);

	c = c ? c : strcmp(x->container_id, y->container_id);
	c = c ? c : strcmp(x->ifname, y->ifname);
	return c ? c : by_ip(a, b);
}

/*
 * nv-ipam gives an attachment (container, interface) one address per pool, static IPs
 * and the gateway included; a second one is damage, and DEL would release both.
 */
static int check_attachments(const struct nvipam_store *st, struct tally *t)
{
	_cleanup_free_ const struct nvipam_alloc **v = sorted(st, by_attachment);
	char ip[IP_PREFIX_STRLEN];

	if (!v)
		return -ENOMEM;
	for (size_t i = 1; i < nvipam_store_count(st); i++) {
		const struct nvipam_alloc *x = v[i - 1], *y = v[i];

		if (strcmp(x->pool, y->pool) || strcmp(x->container_id, y->container_id) ||
		    strcmp(x->ifname, y->ifname))
			continue;
		report(t, true, y, "the interface holds another address in the pool, %s "
		       "(DEL releases both)", ip_addr_format(&x->ip, ip, sizeof(ip)));
	}
	return 0;
}

static int by_pod_interface(const void *a, const void *b)
{
	const struct nvipam_alloc *x = *(const struct nvipam_alloc *const *)a;
	const struct nvipam_alloc *y = *(const struct nvipam_alloc *const *)b;
	int c = strcmp(x->pool, y->pool);

	c = c ? c : strcmp(x->pod_uid, y->pod_uid);
	c = c ? c : strcmp(x->ifname, y->ifname);
	return c ? c : (x->created > y->created) - (x->created < y->created);
}

/*
 * A pod has one sandbox at a time: two containers of one pod UID holding addresses for
 * one interface in one pool means a sandbox replaced without a DEL (a build before the
 * takeover, or the reference daemon's store). The older is reported: the pod's next ADD
 * takes it over, or release frees it.
 */
static int check_sandboxes(const struct nvipam_store *st, struct tally *t)
{
	_cleanup_free_ const struct nvipam_alloc **v = sorted(st, by_pod_interface);

	if (!v)
		return -ENOMEM;
	for (size_t i = 1; i < nvipam_store_count(st); i++) {
		const struct nvipam_alloc *x = v[i - 1], *y = v[i];

		if (!*x->pod_uid || strcmp(x->pool, y->pool) || strcmp(x->pod_uid, y->pod_uid) ||
		    strcmp(x->ifname, y->ifname) || strcmp(x->container_id, y->container_id) == 0)
			continue;
		report(t, false, x, "a replaced sandbox of pod UID %s: container %s holds the "
		       "interface's address now (release this one, or the pod's next ADD takes it "
		       "over)", x->pod_uid, y->container_id);
	}
	return 0;
}

static void check_ranges(const struct nvipam_store *st, const struct nvipam_pools *pools,
			 struct tally *t)
{
	const struct nvipam_alloc *a;

	for (size_t i = 0; (a = nvipam_store_alloc_at(st, i)); i++) {
		const struct nvipam_pool *p = nvipam_pools_find(pools, a->pool);
		char buf[2 * IP_PREFIX_STRLEN + 8], x[IP_PREFIX_STRLEN], y[IP_PREFIX_STRLEN];
		ipmath_u128 v;

		if (!p) {
			report(t, true, a, "this node has no block of the pool");
			continue;
		}
		if (!ip_prefix_contains(&p->subnet, &a->ip)) {
			report(t, true, a, "outside the pool's %s",
			       ip_prefix_format(&p->subnet, buf, sizeof(buf)));
			continue;
		}
		v = ipmath_from_addr(&a->ip);
		if (v < ipmath_from_addr(&p->range.start) || v > ipmath_from_addr(&p->range.end)) {
			snprintf(buf, sizeof(buf), "%s-%s", ip_addr_format(&p->range.start, x, sizeof(x)),
				 ip_addr_format(&p->range.end, y, sizeof(y)));
			report(t, false, a, "outside the node's block %s (a static IP, or left from before "
			       "the pool changed)", buf);
		}
	}
}

/*
 * Two pools whose blocks on this node share addresses: nv-ipam may hand one address to a
 * pod from each. An error, whether or not it has happened yet.
 */
static int check_overlaps(const struct nvipam_pools *pools, struct tally *t)
{
	struct overlap_blocks blocks = { 0 };
	struct overlap_result res = { 0 };
	char line[OVERLAP_DESCRIBE_SIZE];
	int r;

	r = overlap_blocks_from_node_pools(pools, &blocks);
	r = r ? r : overlap_find(blocks.items, blocks.n, SIZE_MAX, &res);
	for (size_t i = 0; r == 0 && i < res.n; i++) {
		overlap_describe(&blocks.items[res.pairs[i].a], &blocks.items[res.pairs[i].b], line,
				 sizeof(line));
		printf("error: overlapping pools: %s (this node may hand out one address twice)\n", line);
		t->errors++;
	}
	overlap_result_free(&res);
	overlap_blocks_free(&blocks);
	return r;
}

/*
 * Allocations whose pod is gone, as gc judges them (without counting): skipped without a
 * pod, and when they may be newer than the listing. The listing's strings are validated.
 */
static void check_pods(const struct nvipam_store *st, const struct pods *pods, bool has_listed_at,
		       time_t listed_at, struct tally *t)
{
	const struct nvipam_alloc *a;

	for (size_t i = 0; (a = nvipam_store_alloc_at(st, i)); i++) {
		const char *uid = "";

		if (!*a->pod_namespace || !*a->pod_name ||
		    (has_listed_at && pods_may_be_unlisted(a->created, listed_at)))
			continue;
		switch (pods_lookup(pods, a->pod_namespace, a->pod_name, a->pod_uid, &uid)) {
		case PODS_PRESENT:
			break;
		case PODS_ABSENT:
			report(t, false, a, "the pod is not in the pod list (gc releases it)");
			break;
		case PODS_OTHER_UID:
			report(t, false, a, "the listed pod has UID %s, not the one recorded (gc releases it)",
			       uid);
			break;
		}
	}
}

/* A log without its header holds nothing: left by an ADD killed as it created it, or cut. */
static void check_logs(const struct nvipam_store *st, struct tally *t)
{
	size_t n;
	const char *const *stems = nvipam_store_headerless(st, &n);

	for (size_t i = 0; i < n; i++) {
		printf("warning: pool log %s.log has no header line: it is read as an empty pool "
		       "(left by an ADD killed while creating it, or cut short)\n", stems[i]);
		t->warnings++;
	}
}

struct check_args {
	bool strict;
	const char *pods;
	bool has_listed_at;
	unsigned long listed_at;
};

static int check_option(int opt, const char *arg, void *ctx)
{
	struct check_args *a = ctx;

	if (opt == 'S') {
		a->strict = true;
	} else if (opt == 'P') {
		a->pods = arg;
	} else if (opt == 'L') {
		if (cli_parse_listed_at("check", arg, &a->listed_at))
			return CLI_EXIT_USAGE;
		a->has_listed_at = true;
	} else {
		return cli_usage_error("check", "invalid option");
	}
	return 0;
}

int check_main(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_NODE_FILE_OPTIONS,
		{ "strict", no_argument, NULL, 'S' },
		{ "pods", required_argument, NULL, 'P' },
		{ "listed-at", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_node_files files = CLI_NODE_FILES_INIT;
	struct nvipam_store *st = NULL;
	struct nvipam_pools pools = { 0 };
	struct check_args a = { 0 };
	struct pods pods = { 0 };
	struct cni_err err = { 0 };
	const char *pool_file;
	struct tally t = { 0 };
	int r;

	r = cli_options("check", check_help, argc, argv, opts, check_option, &a, &files);
	if (r <= 0)
		return -r;
	if (a.has_listed_at && !a.pods)
		return cli_usage_error("check", "--listed-at needs --pods");
	pool_file = files.pool_file;

	if (nvipam_pools_load(pool_file, false, &pools, &err) < 0 ||
	    (a.pods && pods_read(a.pods, &pods, &err) < 0)) {
		nvipam_pools_free(&pools);
		printf("error: %s\n", err.msg);
		return CLI_EXIT_FAIL;
	}
	if (cli_store_open(&files, true, &st, &err) < 0) {
		nvipam_pools_free(&pools);
		pods_free(&pods);
		if (err.code == CNI_ERR_TRY_AGAIN)
			return cli_fail(&err);
		printf("error: %s\n", err.msg);
		return CLI_EXIT_FAIL;
	}
	check_logs(st, &t);
	r = check_overlaps(&pools, &t);
	if (r >= 0)
		r = check_addresses(st, &t);
	if (r >= 0)
		r = check_attachments(st, &t);
	if (r >= 0)
		r = check_sandboxes(st, &t);
	if (r >= 0)
		check_ranges(st, &pools, &t);
	if (r >= 0 && a.pods)
		check_pods(st, &pods, a.has_listed_at, (time_t)a.listed_at, &t);
	printf("%zu allocations, %zu errors, %zu warnings\n", nvipam_store_count(st), t.errors,
	       t.warnings);
	nvipam_store_close(st);
	nvipam_pools_free(&pools);
	pods_free(&pods);
	if (r < 0) {
		cni_err_set(&err, CNI_ERR_INTERNAL, r, "out of memory");
		return cli_fail(&err);
	}
	return t.errors || (a.strict && t.warnings) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
