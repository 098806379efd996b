/*
 * One pass of the cleaner: allocations judged against a pod listing, the due ones released
 *
 * Shared by nv-ipam-tool gc and ipam-node's cleaner. Under the store lock from start to
 * end (see gc_run() for the steps). Crash safety, for a kill at any instant: each file is
 * replaced by rename, so it holds its old or its new contents, and the counts are written
 * before the store. Killed before the counts, nothing changed. Killed between the counts
 * and the store, the counts hold this pass's observation and the store still holds what
 * was due: the next pass misses those again and releases them then, one pass late. A
 * recorded count is thus never more than the number of consecutive passes that missed
 * the allocation, and nothing is released before its N-th consecutive miss.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/ipaddr.h"
#include "common/util/json-exact.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/gc/misses.h"
#include "ipam/nv-ipam/gc/run.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/pods.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/store/store.h"

/* A pool file's size limit, as nv-ipam's loader has. */
#define POOL_FILE_MAX_BYTES (64u << 20)

enum verdict { V_NO_POD, V_NEW, V_SEEN, V_ABSENT, V_OTHER_UID };

struct judged {
	const struct nvipam_alloc *a;
	enum verdict v;
	const char *listed_uid; /* V_OTHER_UID */
	unsigned long count;    /* misses, this run's included */
	bool due;               /* its whole attachment reached the threshold: released */
	bool held;              /* reached it, but shares its attachment with one that did not */
};

static void judge(struct judged *j, const struct pods *pods, const struct misses *old,
		  time_t listed_at)
{
	const struct nvipam_alloc *a = j->a;

	if (!*a->pod_namespace || !*a->pod_name) {
		j->v = V_NO_POD;
		return;
	}
	if (pods_may_be_unlisted(a->created, listed_at)) {
		j->v = V_NEW;
		return;
	}
	switch (pods_lookup(pods, a->pod_namespace, a->pod_name, a->pod_uid, &j->listed_uid)) {
	case PODS_PRESENT:
		j->v = V_SEEN;
		return;
	case PODS_ABSENT:
		j->v = V_ABSENT;
		break;
	case PODS_OTHER_UID:
		j->v = V_OTHER_UID;
		break;
	}
	/* Capped where the counts file stops reading them: a held allocation misses forever. */
	j->count = misses_get(old, a) + 1;
	if (j->count > MISSES_COUNT_MAX)
		j->count = MISSES_COUNT_MAX;
}

static bool missed(const struct judged *j)
{
	return j->v == V_ABSENT || j->v == V_OTHER_UID;
}

static bool same_attachment(const struct nvipam_alloc *a, const struct nvipam_alloc *b)
{
	return strcmp(a->pool, b->pool) == 0 && strcmp(a->container_id, b->container_id) == 0 &&
	       strcmp(a->ifname, b->ifname) == 0;
}

/*
 * Removing goes by attachment (pool, container, interface), as DEL does: an attachment is
 * released when every allocation in it is due. Two in one attachment happen only in a
 * damaged store (see check); one whose pod is listed then keeps the other. @v is in
 * misses_alloc_cmp() order, which keeps an attachment's allocations together.
 */
static void mark_due(struct judged *v, size_t n, unsigned long threshold)
{
	for (size_t i = 0, end; i < n; i = end) {
		bool all = true;

		for (end = i; end < n && same_attachment(v[end].a, v[i].a); end++)
			all = all && missed(&v[end]) && v[end].count >= threshold;
		for (size_t k = i; k < end; k++) {
			bool reached = missed(&v[k]) && v[k].count >= threshold;

			v[k].due = reached && all;
			v[k].held = reached && !all;
		}
	}
}

static void put_alloc(FILE *out, const struct nvipam_alloc *a)
{
	char ip[IP_PREFIX_STRLEN];

	fprintf(out, "%s in pool ", ip_addr_format(&a->ip, ip, sizeof(ip)));
	k8s_fput_escaped(out, a->pool);
	fputs(": container ", out);
	k8s_fput_escaped(out, a->container_id);
	fputs(" interface ", out);
	k8s_fput_escaped(out, a->ifname);
	fputs(" pod ", out);
	k8s_fput_escaped(out, a->pod_namespace);
	putc('/', out);
	k8s_fput_escaped(out, a->pod_name);
}

static void report_line(FILE *out, const struct judged *j, unsigned long threshold, bool dry_run)
{
	if (!missed(j))
		return;
	if (j->due)
		fputs(dry_run ? "would release " : "released ", out);
	else
		fputs(j->held ? "kept " : "missed ", out);
	put_alloc(out, j->a);
	if (j->v == V_ABSENT) {
		fputs(": not in the pod list", out);
	} else {
		fputs(": the listed pod has UID ", out);
		k8s_fput_escaped(out, j->listed_uid);
		fputs(", not ", out);
		k8s_fput_escaped(out, j->a->pod_uid);
	}
	/* A count carried over from runs with a higher --misses can be past this one's. */
	if (j->count <= threshold)
		fprintf(out, " (miss %lu of %lu)", j->count, threshold);
	else
		fprintf(out, " (miss %lu; %lu is enough to release)", j->count, threshold);
	if (j->held)
		fputs(": its interface holds another address in the pool whose pod is listed "
		      "(a damaged store: see nv-ipam-tool check)", out);
	putc('\n', out);
}

static int by_pool_ip(const void *a, const void *b)
{
	const struct judged *x = a, *y = b;

	return nvipam_alloc_ptr_cmp(&x->a, &y->a);
}

static int by_key(const void *a, const void *b)
{
	const struct judged *x = a, *y = b;

	return misses_alloc_cmp(&x->a, &y->a);
}

/* The counts file's text: one entry per missed allocation (@with_due: the released ones too). */
static int counts_text(const struct judged *v, size_t n, bool with_due, char **ret, size_t *ret_len,
		       size_t *ret_n)
{
	_cleanup_free_ const struct nvipam_alloc **allocs = calloc(n + 1, sizeof(*allocs));
	_cleanup_free_ unsigned long *counts = calloc(n + 1, sizeof(*counts));
	size_t k = 0;

	if (!allocs || !counts)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!missed(&v[i]) || (v[i].due && !with_due))
			continue;
		allocs[k] = v[i].a;
		counts[k++] = v[i].count;
	}
	*ret_n = k;
	return misses_format(allocs, counts, k, ret, ret_len);
}

struct attachment {
	char *pool, *container_id, *ifname;
};

/* Copies of the due attachments, taken before removing: removal frees the strings. */
static int due_attachments(const struct judged *v, size_t n, struct attachment **ret,
			   size_t *ret_n)
{
	const struct nvipam_alloc *prev = NULL;
	struct attachment *at;

	*ret_n = 0;
	*ret = at = calloc(n + 1, sizeof(*at));
	if (!at)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct nvipam_alloc *a = v[i].a;
		struct attachment *x = &at[*ret_n];

		if (!v[i].due || (prev && same_attachment(prev, a)))
			continue;
		prev = a;
		(*ret_n)++;
		x->pool = strdup(a->pool);
		x->container_id = strdup(a->container_id);
		x->ifname = strdup(a->ifname);
		if (!x->pool || !x->container_id || !x->ifname)
			return -ENOMEM;
	}
	return 0;
}

static void attachments_free(struct attachment *at, size_t n)
{
	for (size_t i = 0; at && i < n; i++) {
		free(at[i].pool);
		free(at[i].container_id);
		free(at[i].ifname);
	}
	free(at);
}

/* Drops the records of pools with no allocation and no block here; reports each. */
static int drop_pools(struct nvipam_store *st, const struct nvipam_pools *pools, FILE *out,
		      bool dry_run, size_t *ret_n)
{
	*ret_n = 0;
	/* Backwards: dropping record i moves only the ones after it. */
	for (size_t i = nvipam_store_pool_count(st); i-- > 0;) {
		_cleanup_free_ char *key = NULL;
		struct nvipam_store_pool_info p;

		if (!nvipam_store_pool_at(st, i, &p) || nvipam_pools_find(pools, p.key))
			continue;
		key = strdup(p.key);
		if (!key)
			return -ENOMEM;
		if (!nvipam_store_drop_pool(st, key))
			continue;
		fputs(dry_run ? "would drop the record of pool " : "dropped the record of pool ", out);
		k8s_fput_escaped(out, key);
		fputs(": no allocation, no block on this node\n", out);
		(*ret_n)++;
	}
	return 0;
}

struct run {
	const struct gc_params *p;
	const struct pods *pods;
	const char *node;    /* this node, "" when unknown */
	struct nvipam_pools pools;
	bool have_pools;
	struct nvipam_store *st;  /* NULL: no store */
	struct misses old;
	bool rewrite_counts; /* the counts file did not load: replace it */
	char *counts_path;   /* for messages */
	char *counts_name;   /* in the store's directory */
	struct judged *v;
	struct attachment *due;
	size_t n_due;
	char *report;
	size_t report_len;
	FILE *out;
	char *node_from_file;
};

static void run_free(struct run *r)
{
	if (r->out)
		(void)fclose(r->out);
	free(r->report);
	attachments_free(r->due, r->n_due);
	free(r->v);
	free(r->counts_path);
	free(r->counts_name);
	free(r->node_from_file);
	misses_free(&r->old);
	nvipam_store_close(r->st);
	nvipam_pools_free(&r->pools);
}

/* The pool file's "nodeName" (ipam-node and nv-ipam-tool node-pools write it), or NULL. */
static char *pool_file_node(const char *path)
{
	_cleanup_(json_object_putp) struct json_object *root = NULL;
	_cleanup_free_ char *buf = NULL;
	struct cni_err e = { 0 };
	const char *node = NULL;
	size_t len = 0;

	if (file_read(path, POOL_FILE_MAX_BYTES, &buf, &len) < 0 ||
	    cjson_parse(buf, len, path, &root, &e) < 0 ||
	    cjson_member_str(root, "nodeName", &node, &e) <= 0 || !*node)
		return NULL;
	return strdup(node);
}

/* The store as it is, or an empty one when there is none: looking creates nothing. */
static int store_open(const struct gc_params *p, struct nvipam_store **ret, struct cni_err *err)
{
	_cleanup_free_ char *pool_dir = NULL;
	struct stat sb;

	if (asprintf(&pool_dir, "%s.d", p->store) < 0) {
		pool_dir = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	if (stat(p->store, &sb) < 0 && errno == ENOENT && stat(pool_dir, &sb) < 0 && errno == ENOENT) {
		*ret = NULL;
		return 0;
	}
	return nvipam_store_open_inspect(p->store, p->lock_timeout_ms, ret, err);
}

static int load_inputs(struct run *r, FILE *warn, struct cni_err *err)
{
	struct stat sb;
	int k;

	if (stat(r->p->pool_file, &sb) == 0 || errno != ENOENT) {
		k = nvipam_pools_load(r->p->pool_file, false, &r->pools, err);
		if (k < 0)
			return k;
		r->have_pools = true;
		if (!r->p->node || !*r->p->node)
			r->node_from_file = pool_file_node(r->p->pool_file);
	}
	r->node = r->p->node && *r->p->node ? r->p->node
		: r->node_from_file ? r->node_from_file : "";
	k = store_open(r->p, &r->st, err);
	if (k < 0 || !r->st)
		return k;
	r->counts_path = misses_path(nvipam_store_path(r->st));
	r->counts_name = misses_path(nvipam_store_name(r->st));
	if (!r->counts_path || !r->counts_name)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	/* The lock is ours: a temporary counts file is a killed gc's. */
	file_sweep_temps_at(nvipam_store_dir_fd(r->st), r->counts_name);
	if (misses_load(nvipam_store_dir_fd(r->st), r->counts_name, r->counts_path, &r->old, err) < 0) {
		/* Counts that start over only delay releases. */
		fprintf(warn, "%s; the miss counts start over\n", err->msg);
		*err = (struct cni_err){ 0 };
		r->rewrite_counts = true;
	}
	return 0;
}

/*
 * Whether the listing can be this node's. One of no pod at all is a wrong node name in
 * its field selector far more often than a node without pods (ipam-node's own pod is on
 * it); one whose pods are all bound elsewhere is another node's. Taken at its word,
 * either would release the addresses of every live pod.
 */
static int listing_check(const struct run *r, struct cni_err *err)
{
	bool counted = false;
	char q[K8S_QUOTE_SIZE];

	for (size_t i = 0; i < nvipam_store_count(r->st); i++)
		counted |= r->v[i].v != V_NO_POD && r->v[i].v != V_NEW;
	if (!counted)
		return 0;
	if (!r->pods->n)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "the pod listing holds no pod, but the store holds allocations "
				   "of pods listed before it: is the listing's node name right? "
				   "Nothing released or counted");
	if (*r->node && !pods_on_node(r->pods, r->node))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "the pod listing holds no pod bound to node %s (spec.nodeName), but "
				   "the store holds allocations of pods listed before it: is it this "
				   "node's listing? Nothing released or counted",
				   k8s_quote(r->node, q, sizeof(q)));
	return 0;
}

/* Per pool: allocations, those missed and not due, those due (@v in pool order). */
static int count_pools(const struct run *r, struct gc_result *res)
{
	size_t n = nvipam_store_count(r->st);

	res->pools = calloc(n + 1, sizeof(*res->pools));
	if (!res->pools)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct judged *j = &r->v[i];
		struct gc_pool_count *c = res->n_pools ? &res->pools[res->n_pools - 1] : NULL;

		if (!c || strcmp(c->pool, j->a->pool) != 0) {
			c = &res->pools[res->n_pools];
			c->pool = strdup(j->a->pool);
			if (!c->pool)
				return -ENOMEM;
			res->n_pools++;
		}
		c->allocated++;
		if (j->due && !r->p->dry_run) {
			c->allocated--;
			c->released++;
		} else if (missed(j)) {
			c->missed++;
		}
	}
	return 0;
}

/* The steps of gc_run(); the report is written to r->out. */
static int collect(struct run *r, struct gc_result *res, FILE *warn, struct cni_err *err)
{
	const unsigned long threshold = r->p->misses;
	struct gc_tally *t = &res->tally;
	_cleanup_free_ char *text = NULL, *after = NULL;
	size_t n = nvipam_store_count(r->st), len = 0, after_len = 0, n_counts = 0, n_after = 0;
	size_t dropped = 0;
	struct cni_err e = { 0 };
	bool changed = false;
	int k;

	r->v = calloc(n + 1, sizeof(*r->v));
	if (!r->v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		r->v[i].a = nvipam_store_alloc_at(r->st, i);
		judge(&r->v[i], r->pods, &r->old, r->p->listed_at);
	}
	k = listing_check(r, err);
	if (k < 0)
		return k;
	qsort(r->v, n, sizeof(*r->v), by_key);
	mark_due(r->v, n, threshold);
	if (counts_text(r->v, n, true, &text, &len, &n_counts) < 0 ||
	    counts_text(r->v, n, false, &after, &after_len, &n_after) < 0 ||
	    due_attachments(r->v, n, &r->due, &r->n_due) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	qsort(r->v, n, sizeof(*r->v), by_pool_ip);
	if (count_pools(r, res) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct judged *j = &r->v[i];

		report_line(r->out, j, threshold, r->p->dry_run);
		t->no_pod += j->v == V_NO_POD;
		t->fresh += j->v == V_NEW;
		t->seen += j->v == V_SEEN;
		t->missed += missed(j);
		t->released += j->due;
		t->held += j->held;
	}
	/* Counts first: a kill before the store commit leaves them due, not lost. */
	if (!r->p->dry_run && (n_counts || r->old.text || r->rewrite_counts)) {
		k = misses_save(nvipam_store_dir_fd(r->st), r->counts_name, r->counts_path, &r->old, text,
				len, err);
		if (k < 0)
			return k;
	}
	/* From here the pointers in r->v go stale: the store's array changes. */
	for (size_t i = 0; i < r->n_due; i++)
		changed |= nvipam_store_remove(r->st, r->due[i].pool, r->due[i].container_id,
					       r->due[i].ifname) > 0;
	if (r->have_pools) {
		k = drop_pools(r->st, &r->pools, r->out, r->p->dry_run, &dropped);
		if (k < 0)
			return cni_err_set(err, CNI_ERR_INTERNAL, k, "out of memory");
		changed |= dropped > 0;
		t->dropped = dropped;
	}
	if (r->p->dry_run || !changed)
		return 0;
	k = nvipam_store_commit(r->st, err);
	if (k < 0 || !r->n_due)
		return k;
	/*
	 * The released allocations' counts match nothing now; dropped here to keep the file
	 * tidy. Failing (or a kill) leaves them for the next pass to drop: the release stands.
	 */
	if (misses_save(nvipam_store_dir_fd(r->st), r->counts_name, r->counts_path,
			&(struct misses){ 0 }, after, after_len, &e) < 0)
		fprintf(warn, "%s\n", e.msg);
	return 0;
}

int gc_run(const struct gc_params *p, const struct pods *pods, struct gc_result *ret,
	   struct cni_err *err)
{
	struct run r = { .p = p, .pods = pods };
	struct gc_result res = { 0 };
	char *warnings = NULL;
	size_t warnings_len = 0;
	FILE *warn = open_memstream(&warnings, &warnings_len);
	int k;

	if (!warn)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	/* The lines wait for the commit: "released" is said only once it is true. */
	r.out = open_memstream(&r.report, &r.report_len);
	if (!r.out) {
		k = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto out;
	}
	k = load_inputs(&r, warn, err);
	if (k >= 0)
		k = collect(&r, &res, warn, err);
	if (k >= 0 && fclose(r.out) != 0)
		k = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (k >= 0) {
		r.out = NULL;
		res.report = TAKE_PTR(r.report);
	}
out:
	if (fclose(warn) != 0 || !warnings_len) {
		free(warnings);
		warnings = NULL;
	}
	res.warnings = warnings;
	run_free(&r);
	if (k < 0) {
		gc_result_free(&res);
		return k;
	}
	*ret = res;
	return 0;
}

void gc_result_free(struct gc_result *r)
{
	if (!r)
		return;
	free(r->report);
	free(r->warnings);
	for (size_t i = 0; i < r->n_pools; i++)
		free(r->pools[i].pool);
	free(r->pools);
	*r = (struct gc_result){ 0 };
}
