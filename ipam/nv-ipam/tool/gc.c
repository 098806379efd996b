/*
 * The gc subcommand: release the allocations whose pod is gone from the node's pod listing
 *
 * One run, under the store lock from start to end:
 *  1. each allocation is judged against the listing: without a pod name (skipped), newer
 *     than the listing (its pod may not be listed yet: not counted), its pod listed (seen),
 *     or missed (its pod absent, or listed with another UID than the one recorded);
 *  2. the counts file ("<store>.gc") is replaced: a missed allocation's count goes up by
 *     one, every other allocation has none (a pod seen again starts over);
 *  3. the allocations whose count reached the threshold are removed and the store committed.
 *
 * Crash safety, for a kill at any instant: each file is replaced by rename, so it holds its
 * old or its new contents, and the counts are written before the store. Killed before 2,
 * nothing changed. Killed between 2 and 3, the counts hold this run's observation and the
 * store still holds what was due: the next run misses those again and releases them then,
 * one run late. A recorded count is thus never more than the number of consecutive runs
 * that missed the allocation, and nothing is released before its N-th consecutive miss.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/cni/error.h"
#include "common/util/cleanup.h"
#include "common/util/file.h"
#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/store/store.h"
#include "ipam/nv-ipam/tool/cli.h"
#include "ipam/nv-ipam/tool/gc.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/gc/misses.h"
#include "ipam/nv-ipam/k8s/pods.h"

#define GC_DEFAULT_MISSES 4
#define GC_MAX_MISSES 1000

static const char gc_help[] =
	"Usage: nv-ipam-tool gc --pods FILE --listed-at SECONDS [--store FILE] [--pool-file FILE]\n"
	"                       [--misses N] [--lock-timeout-ms N] [--dry-run]\n"
	"\n"
	"Release the allocations whose pod is gone. FILE is this node's pod listing, what\n"
	"  kubectl get pods -A --field-selector spec.nodeName=NODE -o json\n"
	"prints (a List, or an array of pods; - for stdin). An allocation is missed when its\n"
	"pod (namespace/name) is not listed, or is listed with another UID than the one\n"
	"recorded; it is released under the store lock on its N-th consecutive miss, and a\n"
	"pod listed again starts its count over. The counts are kept between runs in\n"
	"\"<store>.gc\". Allocations without a pod name are skipped. Those made after\n"
	"--listed-at, or less than a second before it, are not counted: their pod may be\n"
	"starting and not in the listing. The store's record of a pool left with no\n"
	"allocation and no block in the node pool file is dropped. Prints a line per\n"
	"address missed or released, and a summary.\n"
	"\n"
	"  --pods FILE            the pod listing (required)\n"
	"  --listed-at SECONDS    when the listing was started, in seconds since the epoch,\n"
	"                         taken before kubectl runs (required):\n"
	"                           t=$(date +%s); kubectl get pods ... >pods.json\n"
	"                           nv-ipam-tool gc --pods pods.json --listed-at \"$t\"\n"
	"  --store FILE           the store (default " NVIPAM_DEFAULT_STORE_FILE ")\n"
	"  --pool-file FILE       the node pool file (default " NVIPAM_DEFAULT_POOL_FILE ");\n"
	"                         when missing, no pool record is dropped\n"
	"  --misses N             release on the N-th consecutive miss (default 4, as the\n"
	"                         reference's cleaner; 1 releases at once)\n"
	"  --lock-timeout-ms N    wait at most N ms for the store lock (default "
	CLI_STR(NVIPAM_DEFAULT_LOCK_TIMEOUT_MS) ")\n"
	"  --dry-run              print what would be released, change nothing (counts included)\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: 0 success, 1 failure (nothing released: a listing that does not parse or\n"
	"is not a pod list, a store that cannot be read or written), 2 bad usage.\n";

enum verdict { V_NO_POD, V_NEW, V_SEEN, V_ABSENT, V_OTHER_UID };

struct judged {
	const struct nvipam_alloc *a;
	enum verdict v;
	const char *listed_uid; /* V_OTHER_UID */
	unsigned long count;    /* misses, this run's included */
	bool due;               /* its whole attachment reached the threshold: released */
	bool held;              /* reached it, but shares its attachment with one that did not */
};

struct tally {
	size_t seen, fresh, no_pod, missed, released, held;
};

struct gc_args {
	const char *pods;
	bool has_listed_at;
	unsigned long listed_at;
	unsigned long misses;
	bool dry_run;
};

static int gc_option(int opt, const char *arg, void *ctx)
{
	struct gc_args *a = ctx;

	if (opt == 'P') {
		a->pods = arg;
	} else if (opt == 'L') {
		if (cli_parse_listed_at("gc", arg, &a->listed_at))
			return CLI_EXIT_USAGE;
		a->has_listed_at = true;
	} else if (opt == 'm') {
		if (cli_parse_uint(arg, GC_MAX_MISSES, &a->misses) < 0 || a->misses == 0)
			return cli_usage_error("gc", "invalid --misses \"%s\": 1 to %d", arg, GC_MAX_MISSES);
	} else if (opt == 'n') {
		a->dry_run = true;
	} else {
		return cli_usage_error("gc", "invalid option");
	}
	return 0;
}

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
	fprintf(out, " (miss %lu of %lu)", j->count, threshold);
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
	struct gc_args args;
	struct cli_node_files files;
	struct pods pods;
	struct nvipam_pools pools;
	bool have_pools;
	struct nvipam_store *st;
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
	misses_free(&r->old);
	nvipam_store_close(r->st);
	nvipam_pools_free(&r->pools);
	pods_free(&r->pods);
}

static int load_inputs(struct run *r, struct cni_err *err)
{
	struct stat sb;
	int k;

	k = pods_read(r->args.pods, &r->pods, err);
	if (k < 0)
		return k;
	if (stat(r->files.pool_file, &sb) == 0 || errno != ENOENT) {
		k = nvipam_pools_load(r->files.pool_file, false, &r->pools, err);
		if (k < 0)
			return k;
		r->have_pools = true;
	}
	k = cli_store_open(&r->files, &r->st, err);
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
		fprintf(stderr, "nv-ipam-tool gc: warning: %s; the miss counts start over\n", err->msg);
		*err = (struct cni_err){ 0 };
		r->rewrite_counts = true;
	}
	return 0;
}

/* Steps 1 to 3 of the file comment; the report is written to r->out. */
static int collect(struct run *r, struct tally *t, struct cni_err *err)
{
	const unsigned long threshold = r->args.misses;
	_cleanup_free_ char *text = NULL, *after = NULL;
	size_t n = nvipam_store_count(r->st), len = 0, after_len = 0, n_counts = 0, n_after = 0, dropped = 0;
	struct cni_err e = { 0 };
	bool changed = false;
	int k;

	r->v = calloc(n + 1, sizeof(*r->v));
	if (!r->v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		r->v[i].a = nvipam_store_alloc_at(r->st, i);
		judge(&r->v[i], &r->pods, &r->old, (time_t)r->args.listed_at);
		/*
		 * A listing of no pod at all is a wrong node name in its field selector far
		 * more often than a node without pods (the agent's own pod is always on
		 * it): taken at its word, it would release the addresses of every live pod.
		 */
		if (!r->pods.n && r->v[i].v != V_NO_POD && r->v[i].v != V_NEW)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "the pod listing holds no pod, but the store holds allocations "
					   "of pods listed before it: is the listing's node name right? "
					   "Nothing released or counted");
	}
	qsort(r->v, n, sizeof(*r->v), by_key);
	mark_due(r->v, n, threshold);
	if (counts_text(r->v, n, true, &text, &len, &n_counts) < 0 ||
	    counts_text(r->v, n, false, &after, &after_len, &n_after) < 0 ||
	    due_attachments(r->v, n, &r->due, &r->n_due) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	qsort(r->v, n, sizeof(*r->v), by_pool_ip);
	for (size_t i = 0; i < n; i++) {
		const struct judged *j = &r->v[i];

		report_line(r->out, j, threshold, r->args.dry_run);
		t->no_pod += j->v == V_NO_POD;
		t->fresh += j->v == V_NEW;
		t->seen += j->v == V_SEEN;
		t->missed += missed(j);
		t->released += j->due;
		t->held += j->held;
	}
	/* Counts first: a kill before the store commit leaves them due, not lost. */
	if (!r->args.dry_run && (n_counts || r->old.text || r->rewrite_counts)) {
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
		k = drop_pools(r->st, &r->pools, r->out, r->args.dry_run, &dropped);
		if (k < 0)
			return cni_err_set(err, CNI_ERR_INTERNAL, k, "out of memory");
		changed |= dropped > 0;
	}
	if (r->args.dry_run || !changed)
		return 0;
	k = nvipam_store_commit(r->st, err);
	if (k < 0 || !r->n_due)
		return k;
	/*
	 * The released allocations' counts match nothing now; dropped here to keep the file
	 * tidy. Failing (or a kill) leaves them for the next run to drop: the release stands.
	 */
	if (misses_save(nvipam_store_dir_fd(r->st), r->counts_name, r->counts_path, &(struct misses){ 0 },
			after, after_len, &e) < 0)
		fprintf(stderr, "nv-ipam-tool gc: warning: %s\n", e.msg);
	return 0;
}

int gc_main(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_NODE_FILE_OPTIONS,
		{ "pods", required_argument, NULL, 'P' },
		{ "listed-at", required_argument, NULL, 'L' },
		{ "misses", required_argument, NULL, 'm' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct run r = { .files = CLI_NODE_FILES_INIT, .args.misses = GC_DEFAULT_MISSES };
	struct cni_err err = { 0 };
	struct tally t = { 0 };
	struct timespec now;
	size_t total;
	int ret;

	ret = cli_options("gc", gc_help, argc, argv, opts, gc_option, &r.args, &r.files);
	if (ret >= 0)
		return ret;
	if (!r.args.pods)
		return cli_usage_error("gc", "--pods is required");
	if (!r.args.has_listed_at)
		return cli_usage_error("gc", "--listed-at is required: the time (date +%%s) taken "
				       "just before the pod listing was started");
	/* The clock date(1) reads: time() may still be a clock tick behind it. */
	(void)clock_gettime(CLOCK_REALTIME, &now);
	if ((time_t)r.args.listed_at > now.tv_sec)
		return cli_usage_error("gc", "--listed-at %lu is in the future (now %lld)",
				       r.args.listed_at, (long long)now.tv_sec);

	if (load_inputs(&r, &err) < 0)
		goto fail;
	/* The lines wait for the commit: "released" is printed only once it is true. */
	r.out = open_memstream(&r.report, &r.report_len);
	if (!r.out) {
		cni_err_set(&err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto fail;
	}
	if (collect(&r, &t, &err) < 0)
		goto fail;
	if (fclose(r.out) != 0) {
		r.out = NULL;
		cni_err_set(&err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto fail;
	}
	r.out = NULL;
	total = t.no_pod + t.fresh + t.seen + t.missed;
	fputs(r.report, stdout);
	printf("%zu allocations: %zu with their pod listed, %zu newer than the listing, "
	       "%zu without a pod (skipped), %zu missed, %zu %s",
	       total, t.seen, t.fresh, t.no_pod, t.missed, t.released,
	       r.args.dry_run ? "would be released" : "released");
	if (t.held)
		printf(", %zu kept (damaged store)", t.held);
	printf("%s\n", r.args.dry_run ? " (dry run: nothing changed)" : "");
	run_free(&r);
	return CLI_EXIT_OK;
fail:
	run_free(&r);
	return cli_fail(&err);
}
