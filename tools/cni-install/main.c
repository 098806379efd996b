/* cni-install: the image's entrypoint, putting the suite's binaries into the host's CNI bin dir */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/cleanup.h"
#include "common/util/log.h"
#include "tools/cni-install/install.h"

/* Where the image keeps the binaries (Containerfile). */
#define DEFAULT_SRC_DIR "/opt/cni-rdma-plugins/bin"
/* Where the Network Operator's DaemonSets mount the host's CNI bin directory. */
#define DEFAULT_CNI_BIN_DIR "/host/opt/cni/bin"

static const char *const suite[] = { "macvlan", "ipoib", "host-device", "nv-ipam", "nv-ipam-tool" };

struct options {
	const char *cni_bin_dir;
	const char *src_dir;
	const char *ipoib_bin_file;
	bool no_sleep;
	bool chosen[ARRAY_SIZE(suite)];
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cni-install [OPTIONS] [BINARY...]\n"
		"Copies the suite's binaries (default: all of macvlan ipoib host-device nv-ipam\n"
		"nv-ipam-tool) into the CNI bin directory, each atomically (temporary file in that\n"
		"directory, fsync, mode, rename, directory fsync), leaves identical ones alone,\n"
		"then waits for SIGTERM or SIGINT and exits 0.\n"
		"\n"
		"  --cni-bin-dir=DIR      target directory, must exist [%s]\n"
		"  --src-dir=DIR          where the binaries are [%s]\n"
		"  --ipoib-bin-file=FILE  the ipoib binary to install [SRC-DIR/ipoib]\n"
		"  --no-sleep             exit after installing (init containers)\n"
		"  -h, --help             this text\n"
		"      --version          print the version\n"
		"\n"
		"Options also take the value as the next argument and a single dash, as the\n"
		"reference images' entrypoints do. Exit status: 0 after installing and a\n"
		"termination signal (or at once with --no-sleep), 1 on an error.\n",
		DEFAULT_CNI_BIN_DIR, DEFAULT_SRC_DIR);
}

static int choose(struct options *o, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(suite); i++) {
		if (strcmp(suite[i], name) == 0) {
			o->chosen[i] = true;
			return 0;
		}
	}
	return -EINVAL;
}

/* Return: 0 to go on, 1 to exit 0 (help, version), -1 to exit 1. */
static int parse(int argc, char **argv, struct options *o)
{
	enum { OPT_CNI_BIN_DIR = 256, OPT_SRC_DIR, OPT_IPOIB_BIN_FILE, OPT_NO_SLEEP, OPT_VERSION };
	static const struct option longopts[] = {
		{ "cni-bin-dir", required_argument, NULL, OPT_CNI_BIN_DIR },
		{ "src-dir", required_argument, NULL, OPT_SRC_DIR },
		{ "ipoib-bin-file", required_argument, NULL, OPT_IPOIB_BIN_FILE },
		{ "no-sleep", no_argument, NULL, OPT_NO_SLEEP },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ 0 },
	};
	bool any = false;
	int c;

	*o = (struct options){ .cni_bin_dir = DEFAULT_CNI_BIN_DIR, .src_dir = DEFAULT_SRC_DIR };
	opterr = 0;
	while ((c = getopt_long_only(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CNI_BIN_DIR:
			o->cni_bin_dir = optarg;
			break;
		case OPT_SRC_DIR:
			o->src_dir = optarg;
			break;
		case OPT_IPOIB_BIN_FILE:
			o->ipoib_bin_file = optarg;
			break;
		case OPT_NO_SLEEP:
			o->no_sleep = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case OPT_VERSION:
			printf("cni-install %s\n", PROJECT_VERSION);
			return 1;
		default:
			fprintf(stderr, "cni-install: unknown option or missing value: %s\n",
				argv[optind - 1]);
			usage(stderr);
			return -1;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (choose(o, argv[i]) < 0) {
			fprintf(stderr, "cni-install: unknown binary \"%s\" (one of macvlan ipoib "
					"host-device nv-ipam nv-ipam-tool)\n", argv[i]);
			return -1;
		}
		any = true;
	}
	if (!any)
		for (size_t i = 0; i < ARRAY_SIZE(suite); i++)
			o->chosen[i] = true;
	if (o->cni_bin_dir[0] != '/') {
		fprintf(stderr, "cni-install: --cni-bin-dir must be an absolute path, got \"%s\"\n",
			o->cni_bin_dir);
		return -1;
	}
	return 0;
}

static void lock_held(const char *dir)
{
	log_info("waiting for the lock of %s: another installer holds it (SIGTERM ends the wait)",
		 dir);
}

/* Every chosen binary is tried: one that cannot be installed does not keep the others out. */
static int install_all(const struct options *o, const sigset_t *stop)
{
	_cleanup_close_ int dirfd = -1;
	int r, failed = 0;

	r = install_lock(o->cni_bin_dir, stop, lock_held, &dirfd);
	if (r == -EINTR) {
		log_info("stopped while waiting for the lock of %s: nothing installed", o->cni_bin_dir);
		return r;
	}
	if (r < 0) {
		log_error("cannot use CNI bin directory %s: %s", o->cni_bin_dir, strerror(-r));
		return r;
	}
	for (size_t i = 0; i < ARRAY_SIZE(suite); i++) {
		enum install_outcome outcome;
		const char *step = "";
		char src[4096];
		size_t size = 0;
		int swept;

		if (!o->chosen[i])
			continue;
		if (strcmp(suite[i], "ipoib") == 0 && o->ipoib_bin_file)
			snprintf(src, sizeof(src), "%s", o->ipoib_bin_file);
		else if (snprintf(src, sizeof(src), "%s/%s", o->src_dir, suite[i]) >= (int)sizeof(src))
			return -ENAMETOOLONG;
		swept = install_sweep(dirfd, suite[i]);
		if (swept > 0)
			log_info("removed %d temporary file(s) of %s left by an interrupted install",
				 swept, suite[i]);
		r = install_binary(o->cni_bin_dir, suite[i], src, &outcome, &size, &step);
		if (r < 0) {
			log_error("cannot install %s as %s/%s (%s): %s%s", src, o->cni_bin_dir, suite[i],
				  step, strerror(-r), r == -EISDIR || r == -ENOTEMPTY ?
				  ": a directory is in its place; remove it" : "");
			failed = r;
			continue;
		}
		if (outcome == INSTALL_UNCHANGED)
			log_info("%s/%s is identical to %s (%zu bytes): left alone", o->cni_bin_dir,
				 suite[i], src, size);
		else
			log_info("installed %s as %s/%s (%zu bytes)", src, o->cni_bin_dir, suite[i],
				 size);
	}
	return failed;
}

int main(int argc, char **argv)
{
	struct options o;
	sigset_t term;
	int r, sig;

	r = parse(argc, argv, &o);
	if (r != 0)
		return r > 0 ? 0 : 1;
	log_setup("cni-install", LOG_LEVEL_INFO, -1);
	/*
	 * Held from the start: a SIGTERM during the copies ends the process once
	 * they are done, not half-way; as PID 1 of a container it must be caught
	 * to be seen at all.
	 */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigprocmask(SIG_BLOCK, &term, NULL);
	r = install_all(&o, &term);
	if (r == -EINTR)
		return 0;
	if (r < 0)
		return 1;
	if (o.no_sleep)
		return 0;
	log_info("binaries installed, waiting for SIGTERM");
	do
		sig = sigwaitinfo(&term, NULL);
	while (sig < 0 && errno == EINTR);
	log_info("received %s, exiting", sig == SIGINT ? "SIGINT" : "SIGTERM");
	return 0;
}
