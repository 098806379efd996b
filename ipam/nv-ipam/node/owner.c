/* The owner lock: one ipam-node per store, on a file nothing ever replaces */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/daemon/klog.h"
#include "ipam/nv-ipam/node/flags.h"
#include "ipam/nv-ipam/node/node.h"

/* How often a wait for a lock looks again (and at the signals). */
#define RETRY_MS 50L

int node_owner_lock(struct node *n, struct cni_err *err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	int e;

	if (asprintf(&path, "%s" NODE_OWNER_SUFFIX, n->flags->store_file) < 0)
		return cni_err_set(err, CNI_ERR_IO, -ENOMEM, "out of memory");
	/* Non-blocking: a FIFO planted there must not hang the start with the signals blocked. */
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) < 0) {
		e = errno;
		return cni_err_set(err, CNI_ERR_IO, -e, "cannot open the owner lock %s: %s", path,
				   e == ELOOP ? "it is a symbolic link" : strerror(e));
	}
	if (!S_ISREG(st.st_mode))
		return cni_err_set(err, CNI_ERR_IO, -EINVAL, "the owner lock %s is not a regular file",
				   path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		e = errno;
		return cni_err_set(err, CNI_ERR_IO, -e,
				   e == EWOULDBLOCK ? "another ipam-node holds the owner lock %s"
						    : "cannot lock %s", path);
	}
	n->owner_fd = TAKE_FD(fd);
	n->owner_locked = st;
	return 0;
}

bool node_owner_held(const struct node *n)
{
	_cleanup_free_ char *path = NULL;
	struct stat now;

	if (n->owner_fd < 0 || asprintf(&path, "%s" NODE_OWNER_SUFFIX, n->flags->store_file) < 0)
		return false;
	/* Removed or replaced: a process that locks the file there now thinks it owns the store. */
	return stat(path, &now) == 0 && now.st_dev == n->owner_locked.st_dev &&
	       now.st_ino == n->owner_locked.st_ino;
}

int node_lock_wait(struct node *n, int (*take)(struct node *, struct cni_err *), long wait_ms,
		   const sigset_t *sigs, struct cni_err *err)
{
	int64_t deadline = clock_mono_ms() + wait_ms;
	bool said = false;
	int r;

	for (;;) {
		struct timespec tick = { .tv_nsec = RETRY_MS * 1000000L };

		struct cni_err e = { 0 };

		r = take(n, &e);
		if (r != -EWOULDBLOCK || clock_mono_ms() >= deadline) {
			if (r < 0)
				*err = e;
			return r;
		}
		if (!said)
			klog_info(0, "waiting for a lock", "detail", e.msg, NULL);
		said = true;
		r = sigtimedwait(sigs, NULL, &tick);
		if (r == SIGTERM || r == SIGINT)
			return cni_err_set(err, CNI_ERR_IO, -ECANCELED, "stopped while waiting for a lock");
	}
}
