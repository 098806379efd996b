/* cni-install: the image's entrypoint, putting the suite's binaries into the host's CNI bin dir */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util/cleanup.h"
#include "common/util/file.h"
#include "common/util/log.h"
#include "tools/cni-install/install.h"

/* Where the image keeps the binaries (Containerfile). */
#define DEFAULT_SRC_DIR "/opt/cni-rdma-plugins/bin"
/* Where the Network Operator's DaemonSets mount the host's CNI bin directory. */
#define DEFAULT_CNI_BIN_DIR "/host/opt/cni/bin"

/*
 * The binaries an image may bring; each image brings its slot's, all of them this
 * suite's: a node that takes the cniPlugins image for the slot finds every binary the
 * reference image installs there.
 */
static const char *const suite[] = {
	"macvlan", "ipoib", "host-device", "tuning", "sbr", "static", "dummy", "tap", "loopback",
	"host-local", "portmap", "bandwidth", "firewall", "ipvlan", "vlan", "vrf", "bridge", "ptp",
	"dhcp",
};

/*
 * Installed by the nv-ipam image alone: one owner per binary on a node, so
 * that a plugin image never puts back a build the nv-ipam image replaced.
 */
static const char *const not_ours[] = { "nv-ipam", "nv-ipam-tool" };

struct options {
	const char *cni_bin_dir;
	const char *src_dir;
	const char *ipoib_bin_file;
	bool no_sleep;
	bool version;
	bool by_name;
	bool named[ARRAY_SIZE(suite)];
	bool chosen[ARRAY_SIZE(suite)];
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cni-install [OPTIONS] [BINARY...]\n"
		"Copies the CNI plugins this image brings (those found in SRC-DIR, or the\n"
		"BINARYs named) into the CNI bin directory, each atomically (temporary file\n"
		"in that directory, fsync, mode, rename, directory fsync), leaves identical\n"
		"ones alone, then waits for SIGTERM or SIGINT and exits 0. nv-ipam and\n"
		"nv-ipam-tool come from the nv-ipam image.\n"
		"\n"
		"BINARY: one of macvlan ipoib host-device tuning sbr static dummy tap loopback\n"
		"host-local portmap bandwidth firewall ipvlan vlan vrf bridge ptp dhcp.\n"
		"\n"
		"  --cni-bin-dir=DIR      target directory, must exist [%s]\n"
		"  --src-dir=DIR          where the image keeps its binaries [%s]\n"
		"  --ipoib-bin-file=FILE  the ipoib binary to install [SRC-DIR/ipoib]\n"
		"  --no-sleep             exit after installing (init containers)\n"
		"  -h, --help             this text\n"
		"      --version          print the version (that of every binary it installs)\n"
		"\n"
		"Options also take the value as the next argument and a single dash, as the\n"
		"reference images' entrypoints do. Exit status: 0 after installing and a\n"
		"termination signal (or at once with --no-sleep), 1 on an error.\n",
		DEFAULT_CNI_BIN_DIR, DEFAULT_SRC_DIR);
}

static void print_version(void)
{
	printf("cni-install (cni-rdma-plugins) %s\n", PROJECT_VERSION);
}

static int name_index(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -1;
}

/* Return: systemd's convention: 1 to go on, 0 to exit 0 (help, version), -EINVAL to exit 1
 * (told). */
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
			return 0;
		case OPT_VERSION:
			/* After the loop: --src-dir may come after it. */
			o->version = true;
			break;
		default:
			fprintf(stderr, "cni-install: unknown option or missing value: %s\n",
				argv[optind - 1]);
			usage(stderr);
			return -EINVAL;
		}
	}
	for (int i = optind; i < argc; i++) {
		int k = name_index(suite, ARRAY_SIZE(suite), argv[i]);

		if (k < 0 && name_index(not_ours, ARRAY_SIZE(not_ours), argv[i]) >= 0) {
			fprintf(stderr, "cni-install: %s is installed by the nv-ipam image, not by "
					"a plugin image (one owner per binary)\n", argv[i]);
			return -EINVAL;
		}
		if (k < 0) {
			fprintf(stderr, "cni-install: unknown binary \"%s\" (--help lists them)\n",
				argv[i]);
			return -EINVAL;
		}
		o->named[k] = true;
	}
	if (o->version) {
		print_version();
		return 0;
	}
	if (o->cni_bin_dir[0] != '/') {
		fprintf(stderr, "cni-install: --cni-bin-dir must be an absolute path, got \"%s\"\n",
			o->cni_bin_dir);
		return -EINVAL;
	}
	return 1;
}

/* Where binary @i comes from. */
static int source_path(const struct options *o, size_t i, char *buf, size_t size)
{
	if (strcmp(suite[i], "ipoib") == 0 && o->ipoib_bin_file)
		return snprintf(buf, size, "%s", o->ipoib_bin_file) >= (int)size ? -ENAMETOOLONG : 0;
	return snprintf(buf, size, "%s/%s", o->src_dir, suite[i]) >= (int)size ? -ENAMETOOLONG : 0;
}

/*
 * The binaries to install: those named, else those the image brings. The
 * operator passes no argument, so an image's set is what its source
 * directory holds (a source that cannot be looked at counts as brought and
 * fails at its copy, saying why). A binary the image does not bring is never
 * installed, and asking for one (by name or --ipoib-bin-file) is an error
 * before anything is copied.
 *
 * Return: 0, or -1 after saying what is wrong.
 */
static int choose(struct options *o)
{
	bool any = false;
	char src[4096];

	for (size_t i = 0; i < ARRAY_SIZE(suite); i++)
		o->by_name |= o->named[i];
	for (size_t i = 0; i < ARRAY_SIZE(suite); i++) {
		bool wanted = !o->by_name || o->named[i];
		bool asked = o->named[i] || (strcmp(suite[i], "ipoib") == 0 && o->ipoib_bin_file);
		struct stat st;
		bool brought;

		if (source_path(o, i, src, sizeof(src)) < 0) {
			fprintf(stderr, "cni-install: the source path of %s is too long\n", suite[i]);
			return -1;
		}
		brought = stat(src, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
		if (wanted && asked && !brought) {
			fprintf(stderr, "cni-install: %s is not in this image (no %s)\n", suite[i],
				src);
			return -1;
		}
		o->chosen[i] = wanted && brought;
		any |= o->chosen[i];
	}
	if (!any) {
		fprintf(stderr, "cni-install: %s holds none of the binaries an image may bring "
				"(--help lists them): nothing to install\n", o->src_dir);
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
	char set[512] = "";
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
	for (size_t i = 0, len = 0; i < ARRAY_SIZE(suite); i++)
		if (o->chosen[i])
			len += (size_t)snprintf(set + len, sizeof(set) - len, " %s", suite[i]);
	if (o->by_name)
		log_info("installing%s into %s", set, o->cni_bin_dir);
	else
		log_info("installing%s (what %s holds) into %s", set, o->src_dir, o->cni_bin_dir);
	for (size_t i = 0; i < ARRAY_SIZE(suite); i++) {
		enum install_outcome outcome;
		const char *step = "";
		char src[4096];
		size_t size = 0;
		int swept;

		if (!o->chosen[i])
			continue;
		r = source_path(o, i, src, sizeof(src));
		if (r < 0)
			return r;
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
	if (r <= 0)
		return r < 0 ? 1 : 0;
	if (choose(&o) < 0)
		return 1;
	/* A container's entrypoint: its stderr is the pod's log. */
	log_setup("cni-install", LOG_LEVEL_INFO, LOG_LEVEL_INFO, -1);
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
