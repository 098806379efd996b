/* The handover and adopt subcommands: the store handed to the reference nv-ipam daemon, and taken back */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/store/store.h"
#include "ipam/nv-ipam/tool/cli.h"
#include "ipam/nv-ipam/tool/handover.h"

static const char handover_help[] =
	"Usage: nv-ipam-tool handover [--store FILE] [--lock-timeout-ms N]\n"
	"\n"
	"Write the store in the reference nv-ipam node daemon's format (one JSON file at\n"
	"--store, every allocation with its pod), for that daemon to start on: what\n"
	"ipam-node does when it stops. From then on nv-ipam answers code 11 (try again\n"
	"later) until ipam-node, or nv-ipam-tool adopt, takes the store back. For a node\n"
	"whose ipam-node was killed before it could do it, before the reference daemon\n"
	"starts there. Refused while another process (ipam-node, the daemon) holds the\n"
	"store lock, and when there is no store at --store. A store handed over already,\n"
	"its file in the daemon's format, is left as it is (the daemon may have changed it).\n"
	"\n"
	"  --store FILE           the store (default " NVIPAM_DEFAULT_STORE_FILE ")\n"
	"  --lock-timeout-ms N    wait at most N ms for the store lock (default " CLI_STR(NVIPAM_DEFAULT_LOCK_TIMEOUT_MS) ")\n"
	"  -h, --help             this text\n";

static const char adopt_help[] =
	"Usage: nv-ipam-tool adopt [--store FILE] [--lock-timeout-ms N]\n"
	"\n"
	"Take the store over, as ipam-node does when it starts: a store handed over and\n"
	"unchanged since is ours again as it was; one the reference nv-ipam node daemon\n"
	"wrote (changed since, or never ours) is migrated into pool logs. nv-ipam then\n"
	"allocates again. Refused while the daemon answers on daemon.sock beside the store,\n"
	"or another process holds the store lock, and when there is no store at --store.\n"
	"\n"
	"  --store FILE           the store (default " NVIPAM_DEFAULT_STORE_FILE ")\n"
	"  --lock-timeout-ms N    wait at most N ms for the store lock (default " CLI_STR(NVIPAM_DEFAULT_LOCK_TIMEOUT_MS) ")\n"
	"  -h, --help             this text\n";

/* The daemon's lock, as it takes it (a flock on the store file), held until exit. */
static int lock_store_file(const char *path, int *ret_fd, struct cni_err *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		*ret_fd = -1;
		return 0;
	}
	if (fd < 0)
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot open %s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		close(fd);
		if (e == EWOULDBLOCK)
			return cni_err_set(err, CNI_ERR_TRY_AGAIN, -e,
					   "another process holds the store lock on %s (ipam-node or the "
					   "reference nv-ipam node daemon): stop it first", path);
		return cni_err_set(err, CNI_ERR_IO, -e, "cannot lock %s: %s", path, strerror(e));
	}
	*ret_fd = fd;
	return 0;
}

/* Neither the store file nor its pool directory: refused, before anything creates them. */
static int store_required(const char *store, const char *what, struct cni_err *err)
{
	bool there;
	int r = cli_store_exists(store, &there, err);

	if (r < 0 || there)
		return r;
	return cni_err_set(err, CNI_ERR_IO, -ENOENT, "no store at %s: nothing to %s (--store "
			   "names another)", store, what);
}

/*
 * Handed over already, the daemon's file there: written again from the pool logs, it
 * would lose what the daemon did since, and the next adopt would take the logs as
 * unchanged. Return: 1 when it was (said on stdout), 0 to hand over, negative errno.
 */
static int handed_over_already(const struct cli_node_files *files, struct cni_err *err)
{
	struct nvipam_store_handover_info info;
	struct nvipam_store *s = NULL;
	int r = nvipam_store_open_handed_over(files->store, (unsigned int)files->lock_timeout_ms,
					      &s, &info, err);

	if (r < 0 || !s)
		return r;
	printf("already handed over%s%s; nothing written: %s holds %zu allocations in the "
	       "reference daemon's format%s\n", *info.at ? " at " : "", info.at, files->store,
	       nvipam_store_count(s), info.changed ? ", written by that daemon since" : "");
	nvipam_store_close(s);
	return 1;
}

static int parse(const char *cmd, const char *help, int argc, char **argv,
		 struct cli_node_files *files)
{
	static const struct option opts[] = {
		CLI_STORE_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};

	return cli_options(cmd, help, argc, argv, opts, NULL, NULL, files);
}

int handover_main(int argc, char **argv)
{
	struct cli_node_files files = CLI_NODE_FILES_INIT;
	_cleanup_close_ int lock = -1;
	struct cni_err err = { 0 };
	uint32_t sum;
	size_t n;
	int ret;

	ret = parse("handover", handover_help, argc, argv, &files);
	if (ret <= 0)
		return -ret;
	if (store_required(files.store, "hand over", &err) < 0 ||
	    lock_store_file(files.store, &lock, &err) < 0)
		return cli_fail(&err);
	ret = handed_over_already(&files, &err);
	if (ret < 0)
		return cli_fail(&err);
	if (ret > 0)
		return CLI_EXIT_OK;
	if (nvipam_store_handover(files.store, (unsigned int)files.lock_timeout_ms, &n, &sum, &err) < 0)
		return cli_fail(&err);
	printf("handed over: %s holds %zu allocations in the reference daemon's format "
	       "(checksum %" PRIu32 "); nv-ipam answers code 11 until the store is adopted\n",
	       files.store, n, sum);
	return CLI_EXIT_OK;
}

int adopt_main(int argc, char **argv)
{
	static const char *const said[] = {
		[NVIPAM_STORE_OURS] = "the store was ours",
		[NVIPAM_STORE_RESUMED] = "the store was as handed over: resumed from the pool logs",
		[NVIPAM_STORE_MIGRATED] = "the reference daemon's store was migrated into pool logs",
		[NVIPAM_STORE_MERGED] = "the reference daemon's store file, written after it was taken over, was merged into the pool logs",
	};
	struct cni_err err = { 0 };
	struct cli_node_files files = CLI_NODE_FILES_INIT;
	enum nvipam_store_adoption how;
	_cleanup_close_ int lock = -1;
	size_t n;
	int ret;

	ret = parse("adopt", adopt_help, argc, argv, &files);
	if (ret <= 0)
		return -ret;
	if (store_required(files.store, "adopt", &err) < 0 ||
	    lock_store_file(files.store, &lock, &err) < 0 ||
	    nvipam_store_adopt(files.store, (unsigned int)files.lock_timeout_ms, &how, &n, &err) < 0)
		return cli_fail(&err);
	printf("adopted: %s (%zu allocations)\n", said[how], n);
	return CLI_EXIT_OK;
}
