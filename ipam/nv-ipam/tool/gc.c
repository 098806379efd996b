/*
 * The gc subcommand: release the allocations whose pod is gone from the node's pod listing
 *
 * The pass itself (gc/run.c) is the one ipam-node's cleaner runs; this file reads the
 * options and the listing, and prints what the pass did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util/error.h"
#include "ipam/nv-ipam/gc/run.h"
#include "ipam/nv-ipam/k8s/pods.h"
#include "ipam/nv-ipam/tool/cli.h"
#include "ipam/nv-ipam/tool/gc.h"

#define GC_DEFAULT_MISSES 4
#define GC_MAX_MISSES 1000

static const char gc_help[] =
	"Usage: nv-ipam-tool gc --pods FILE --listed-at SECONDS [--store FILE] [--pool-file FILE]\n"
	"                       [--misses N] [--node NAME] [--lock-timeout-ms N] [--dry-run]\n"
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
	"address missed or released, and a summary. A listing of no pod, or of no pod bound\n"
	"to this node (spec.nodeName), is refused while the store holds allocations it would\n"
	"count: it is another node's, or a wrong field selector's.\n"
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
	"  --node NAME            this node (default: $NODE_NAME, else the pool file's\n"
	"                         nodeName; when neither is known, only an empty listing\n"
	"                         is refused)\n"
	"  --lock-timeout-ms N    wait at most N ms for the store lock (default "
	CLI_STR(NVIPAM_DEFAULT_LOCK_TIMEOUT_MS) ")\n"
	"  --dry-run              print what would be released, change nothing (counts included)\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: 0 success, 1 failure (nothing released: a listing that does not parse,\n"
	"is not a pod list or not this node's, a store that cannot be read or written), 2 bad\n"
	"usage.\n";

struct gc_args {
	const char *pods;
	bool has_listed_at;
	unsigned long listed_at;
	unsigned long misses;
	bool dry_run;
	const char *node;
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
	} else if (opt == 'N') {
		a->node = arg;
	} else {
		return cli_usage_error("gc", "invalid option");
	}
	return 0;
}


static void print_warnings(const char *text)
{
	const char *p = text;

	while (p && *p) {
		size_t n = strcspn(p, "\n");

		fprintf(stderr, "nv-ipam-tool gc: warning: %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

int gc_main(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_NODE_FILE_OPTIONS,
		{ "pods", required_argument, NULL, 'P' },
		{ "listed-at", required_argument, NULL, 'L' },
		{ "misses", required_argument, NULL, 'm' },
		{ "node", required_argument, NULL, 'N' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct gc_args a = { .misses = GC_DEFAULT_MISSES, .node = getenv("NODE_NAME") };
	struct cli_node_files files = CLI_NODE_FILES_INIT;
	struct gc_result res = { 0 };
	struct cni_err err = { 0 };
	struct pods pods = { 0 };
	struct gc_params p;
	const struct gc_tally *t = &res.tally;
	struct timespec now;
	int ret;

	ret = cli_options("gc", gc_help, argc, argv, opts, gc_option, &a, &files);
	if (ret <= 0)
		return -ret;
	if (!a.pods)
		return cli_usage_error("gc", "--pods is required");
	if (!a.has_listed_at)
		return cli_usage_error("gc", "--listed-at is required: the time (date +%%s) taken "
				       "just before the pod listing was started");
	/* The clock date(1) reads: time() may still be a clock tick behind it. */
	(void)clock_gettime(CLOCK_REALTIME, &now);
	if ((time_t)a.listed_at > now.tv_sec)
		return cli_usage_error("gc", "--listed-at %lu is in the future (now %lld)", a.listed_at,
				       (long long)now.tv_sec);
	p = (struct gc_params){ .store = files.store, .pool_file = files.pool_file,
				.lock_timeout_ms = (unsigned int)files.lock_timeout_ms,
				.misses = a.misses, .listed_at = (time_t)a.listed_at, .node = a.node,
				.dry_run = a.dry_run };
	if (pods_read(a.pods, &pods, &err) < 0)
		return cli_fail(&err);
	ret = gc_run(&p, &pods, &res, &err);
	pods_free(&pods);
	if (ret < 0)
		return cli_fail(&err);
	print_warnings(res.warnings);
	fputs(res.report, stdout);
	printf("%zu allocations: %zu with their pod listed, %zu newer than the listing, "
	       "%zu without a pod (skipped), %zu missed, %zu %s",
	       t->seen + t->fresh + t->no_pod + t->missed, t->seen, t->fresh, t->no_pod, t->missed,
	       t->released, a.dry_run ? "would be released" : "released");
	if (t->held)
		printf(", %zu kept (damaged store)", t->held);
	printf("%s\n", a.dry_run ? " (dry run: nothing changed)" : "");
	gc_result_free(&res);
	return CLI_EXIT_OK;
}
