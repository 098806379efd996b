/* nv-ipam and nv-ipam-tool installed into the host's CNI bin directory, atomically */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/node/install.h"
#include "tools/cni-install/install.h"

#define LOCK_POLL_MS 100

static bool stop_pending(void)
{
	sigset_t pending;

	return sigpending(&pending) == 0 &&
	       (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

/*
 * The installers' lock (install_lock()'s), waited for without blocking a stop: another
 * installer may hold it for long (or a planted directory may stall it).
 */
static int lock_dir(const char *dir, int *ret_fd)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return -errno;
		if (stop_pending())
			return -ECANCELED;
		(void)poll(NULL, 0, LOCK_POLL_MS);
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int node_install(const char *bin_dir, const char *nvipam, void (*log)(const char *line),
		 struct cni_err *err)
{
	const char *slash = strrchr(nvipam, '/');
	const char *srcs[2] = { nvipam, NULL }, *names[2] = { "nv-ipam", "nv-ipam-tool" };
	_cleanup_free_ char *tool = NULL;
	_cleanup_close_ int lock = -1;
	int r;

	/* nv-ipam-tool comes from beside nv-ipam ("/nv-ipam": "/nv-ipam-tool"). */
	if (asprintf(&tool, "%.*snv-ipam-tool", slash ? (int)(slash - nvipam + 1) : 0, nvipam) < 0) {
		tool = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	srcs[1] = tool;
	if (mkdir(bin_dir, 0755) < 0 && errno != EEXIST)
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot create %s: %s", bin_dir,
				   strerror(errno));
	r = lock_dir(bin_dir, &lock);
	if (r == -ECANCELED)
		return cni_err_set(err, CNI_ERR_IO, r, "stopped while waiting for the lock on %s", bin_dir);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot lock %s: %s", bin_dir, strerror(-r));
	for (size_t i = 0; i < 2; i++) {
		enum install_outcome outcome;
		const char *step = "";
		char line[512];
		size_t size = 0;

		/* A temporary file found under the lock is a killed installer's. */
		(void)install_sweep(lock, names[i]);
		r = install_binary(bin_dir, names[i], srcs[i], &outcome, &size, &step);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_IO, r, "cannot install %s as %s/%s: %s: %s", srcs[i],
					   bin_dir, names[i], step, strerror(-r));
		snprintf(line, sizeof(line), "%s %s as %s/%s (%zu bytes)",
			 outcome == INSTALL_COPIED ? "installed" : "identical, left alone:", srcs[i],
			 bin_dir, names[i], size);
		if (log)
			log(line);
	}
	return 0;
}
