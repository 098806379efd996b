/* The release subcommand: release allocations by container ID or by pod, under the store lock */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/store/store.h"
#include "ipam/nv-ipam/tool/cli.h"
#include "ipam/nv-ipam/tool/release.h"

static const char release_help[] =
	"Usage: nv-ipam-tool release [--store FILE] --container-id ID [--ifname NAME] [--pool KEY]\n"
	"                            [--lock-timeout-ms N] [--dry-run]\n"
	"       nv-ipam-tool release [--store FILE] --pod NAMESPACE/NAME [--pool KEY]\n"
	"                            [--lock-timeout-ms N] [--dry-run]\n"
	"\n"
	"Release allocations under the store lock, as DEL would: those of a container (one\n"
	"interface with --ifname, else all of them) or of a pod, in every pool or in one.\n"
	"Each released address is printed, with any other address the same interface\n"
	"holds in the pool (a damaged store: DEL drops them together); nothing matching\n"
	"is an error (exit 1).\n"
	"\n"
	"  --store FILE           the store (default " NVIPAM_DEFAULT_STORE_FILE ")\n"
	"  --container-id ID      the container (CNI_CONTAINERID)\n"
	"  --ifname NAME          only this interface of the container\n"
	"  --pod NS/NAME          every allocation recorded for this pod\n"
	"  --pool KEY             only this pool (\"<name>\" or \"cidrpool/<name>\")\n"
	"  --lock-timeout-ms N    wait at most N ms for the store lock (default " CLI_STR(NVIPAM_DEFAULT_LOCK_TIMEOUT_MS) ")\n"
	"  --dry-run              print what would be released, change nothing\n"
	"  -h, --help             this text\n";

struct query {
	const char *container_id;
	const char *ifname;
	const char *pod_ns;
	size_t pod_ns_len;
	const char *pod_name;
	const char *pool;
};

static bool matches(const struct query *q, const struct nvipam_alloc *a)
{
	if (q->pool && strcmp(a->pool, q->pool) != 0)
		return false;
	if (q->container_id)
		return strcmp(a->container_id, q->container_id) == 0 &&
		       (!q->ifname || strcmp(a->ifname, q->ifname) == 0);
	return strlen(a->pod_namespace) == q->pod_ns_len &&
	       strncmp(a->pod_namespace, q->pod_ns, q->pod_ns_len) == 0 &&
	       strcmp(a->pod_name, q->pod_name) == 0;
}

static bool same_attachment(const struct nvipam_alloc *a, const struct nvipam_alloc *b)
{
	return strcmp(a->pool, b->pool) == 0 && strcmp(a->container_id, b->container_id) == 0 &&
	       strcmp(a->ifname, b->ifname) == 0;
}

/*
 * Marks in @drop what releasing the matching allocations removes: nvipam_store_remove()
 * drops a whole attachment (pool, container, interface), so every allocation sharing one
 * with a match goes too (two in one attachment only in a damaged store). Returns how many.
 */
static size_t mark_released(const struct nvipam_store *st, const struct query *q, bool *drop)
{
	const struct nvipam_alloc *a, *b;
	size_t n = 0;

	for (size_t i = 0; (a = nvipam_store_alloc_at(st, i)); i++) {
		if (drop[i] || !matches(q, a))
			continue;
		for (size_t j = 0; (b = nvipam_store_alloc_at(st, j)); j++) {
			if (!drop[j] && same_attachment(a, b)) {
				drop[j] = true;
				n++;
			}
		}
	}
	return n;
}

struct release_args {
	struct query q;
	const char *pod;
	bool dry_run;
};

static int release_option(int opt, const char *arg, void *ctx)
{
	struct release_args *a = ctx;

	if (opt == 'c')
		a->q.container_id = arg;
	else if (opt == 'i')
		a->q.ifname = arg;
	else if (opt == 'P')
		a->pod = arg;
	else if (opt == 'p')
		a->q.pool = arg;
	else if (opt == 'n')
		a->dry_run = true;
	else
		return cli_usage_error("release", "invalid option");
	return 0;
}

/* The query the options ask for: as cli_options(), 1 to go on or -CLI_EXIT_USAGE. */
static int release_query(const struct release_args *args, struct query *ret)
{
	const char *pod = args->pod, *slash;

	*ret = args->q;
	if (!ret->container_id == !pod)
		return -cli_usage_error("release", "give exactly one of --container-id and --pod");
	if (ret->container_id && !*ret->container_id)
		return -cli_usage_error("release", "--container-id is empty");
	if (ret->ifname && !ret->container_id)
		return -cli_usage_error("release", "--ifname needs --container-id");
	if (pod) {
		slash = strchr(pod, '/');
		if (!slash || slash == pod || !slash[1] || strchr(slash + 1, '/'))
			return -cli_usage_error("release", "--pod must be NAMESPACE/NAME, got \"%s\"", pod);
		ret->pod_ns = pod;
		ret->pod_ns_len = (size_t)(slash - pod);
		ret->pod_name = slash + 1;
	}
	return 1;
}

static void print_marked(const struct nvipam_store *st, const bool *drop, bool dry_run, FILE *out)
{
	for (size_t i = 0; i < nvipam_store_count(st); i++) {
		const struct nvipam_alloc *a = nvipam_store_alloc_at(st, i);
		char ip[IP_PREFIX_STRLEN];

		if (!drop[i])
			continue;
		fprintf(out, "%s %s in pool %s: container %s interface %s pod %s/%s\n",
			dry_run ? "would release" : "released", ip_addr_format(&a->ip, ip, sizeof(ip)),
			a->pool, a->container_id, a->ifname, *a->pod_namespace ? a->pod_namespace : "-",
			*a->pod_name ? a->pod_name : "-");
	}
}

/*
 * Release one attachment at a time: nvipam_store_remove() reorders the array, so the scan
 * restarts after each removal (a pod has a handful of attachments). It removes exactly the
 * allocations mark_released() marked: whole attachments, each holding a match.
 */
static int remove_matching(struct nvipam_store *st, const struct query *q, struct cni_err *err)
{
	for (size_t i = 0; i < nvipam_store_count(st);) {
		const struct nvipam_alloc *a = nvipam_store_alloc_at(st, i);
		_cleanup_free_ char *pool = NULL, *cid = NULL, *ifname = NULL;

		if (!matches(q, a)) {
			i++;
			continue;
		}
		pool = strdup(a->pool);
		cid = strdup(a->container_id);
		ifname = strdup(a->ifname);
		if (!pool || !cid || !ifname)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		(void)nvipam_store_remove(st, pool, cid, ifname);
		i = 0;
	}
	return 0;
}

int release_main(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_STORE_OPTIONS,
		{ "container-id", required_argument, NULL, 'c' },
		{ "ifname", required_argument, NULL, 'i' },
		{ "pod", required_argument, NULL, 'P' },
		{ "pool", required_argument, NULL, 'p' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_node_files files = CLI_NODE_FILES_INIT;
	struct nvipam_store *st = NULL;
	struct release_args args = { 0 };
	struct cni_err err = { 0 };
	_cleanup_free_ char *report = NULL;
	_cleanup_free_ bool *drop = NULL;
	size_t released, report_len = 0;
	FILE *out = NULL;
	struct query q;
	int r;

	r = cli_options("release", release_help, argc, argv, opts, release_option, &args, &files);
	if (r <= 0)
		return -r;
	r = release_query(&args, &q);
	if (r <= 0)
		return -r;

	if (cli_store_open(&files, false, &st, &err) < 0)
		return cli_fail(&err);
	/* The lines wait for the commit: "released" is printed only once it is true. */
	out = open_memstream(&report, &report_len);
	drop = calloc(nvipam_store_count(st) + 1, sizeof(*drop));
	if (!out || !drop) {
		cni_err_set(&err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto fail;
	}
	released = mark_released(st, &q, drop);
	print_marked(st, drop, args.dry_run, out);
	if (!args.dry_run && remove_matching(st, &q, &err) < 0)
		goto fail;
	r = fclose(out);
	out = NULL;
	if (r != 0) {
		cni_err_set(&err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto fail;
	}
	if (!args.dry_run && released && nvipam_store_commit(st, &err) < 0)
		goto fail;
	nvipam_store_close(st);
	fputs(report, stdout);
	if (!released) {
		fprintf(stderr, "nv-ipam-tool: no allocation matches in %s\n", files.store);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
fail:
	if (out)
		(void)fclose(out);
	nvipam_store_close(st);
	return cli_fail(&err);
}
