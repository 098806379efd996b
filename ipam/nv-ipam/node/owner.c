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
#include "ipam/nv-ipam/daemon/klog.h"
#include "ipam/nv-ipam/node/flags.h"
#include "ipam/nv-ipam/node/node.h"

/* How often a wait for a lock looks again (and at the signals). */
#define RETRY_MS 50L

int node_owner_lock(struct node *n, char *msg, size_t len)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (asprintf(&path, "%s" NODE_OWNER_SUFFIX, n->flags->store_file) < 0) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	/* Non-blocking: a FIFO planted there must not hang the start with the signals blocked. */
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(msg, len, "cannot open the owner lock %s: %s", path,
			 errno == ELOOP ? "it is a symbolic link" : strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(msg, len, "the owner lock %s is not a regular file", path);
		return -EINVAL;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		snprintf(msg, len, e == EWOULDBLOCK ? "another ipam-node holds the owner lock %s"
						     : "cannot lock %s", path);
		return -e;
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

int node_lock_wait(struct node *n, int (*take)(struct node *, char *, size_t), long wait_ms,
		   const sigset_t *sigs, char *msg, size_t len)
{
	int64_t deadline = clock_mono_ms() + wait_ms;
	bool said = false;
	int r;

	for (;;) {
		struct timespec tick = { .tv_nsec = RETRY_MS * 1000000L };

		r = take(n, msg, len);
		if (r != -EWOULDBLOCK || clock_mono_ms() >= deadline)
			return r;
		if (!said)
			klog_info(0, "waiting for a lock", "detail", msg, NULL);
		said = true;
		r = sigtimedwait(sigs, NULL, &tick);
		if (r == SIGTERM || r == SIGINT) {
			snprintf(msg, len, "stopped while waiting for a lock");
			return -ECANCELED;
		}
	}
}
