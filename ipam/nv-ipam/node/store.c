/* ipam-node's store: its lock, taken back at start, handed over at stop */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/daemon/klog.h"
#include "ipam/nv-ipam/node/flags.h"
#include "ipam/nv-ipam/node/node.h"
#include "ipam/nv-ipam/store/store.h"

/* How long adopting waits for the store's node lock (ADDs under way). */
#define STORE_LOCK_WAIT_MS 5000u


int node_store_lock(struct node *n, struct cni_err *err)
{
	const char *path = n->flags->store_file;
	struct stat now;
	int fd, e;

	if (n->store_lock_fd >= 0 && stat(path, &now) == 0 && now.st_dev == n->store_locked.st_dev &&
	    now.st_ino == n->store_locked.st_ino)
		return 0;
	/* Missing, or replaced by rename since: the lock goes to the file there now. Opened
	 * non-blocking: a FIFO there must not hang the start (the signals are blocked). */
	fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0) {
		e = errno;
		return cni_err_set(err, CNI_ERR_IO, -e, "cannot open store file %s: %s", path,
				   e == ELOOP ? "it is a symbolic link" : strerror(e));
	}
	if (fstat(fd, &now) == 0 && !S_ISREG(now.st_mode)) {
		close(fd);
		return cni_err_set(err, CNI_ERR_IO, -EINVAL, "store file %s is not a regular file", path);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &now) < 0) {
		e = errno;
		close(fd);
		return cni_err_set(err, CNI_ERR_IO, -e,
				   e == EWOULDBLOCK ? "store lock is held by a different process: %s"
						    : "cannot lock %s", path);
	}
	if (n->store_lock_fd >= 0)
		close(n->store_lock_fd);
	n->store_lock_fd = fd;
	n->store_locked = now;
	return 0;
}

int node_store_adopt(struct node *n)
{
	static const char *const said[] = {
		[NVIPAM_STORE_OURS] = "store is ours",
		[NVIPAM_STORE_RESUMED] = "store taken back as handed over",
		[NVIPAM_STORE_MIGRATED] = "store migrated from the reference nv-ipam node daemon's",
		[NVIPAM_STORE_MERGED] = "store merged with the reference daemon's late write",
	};
	const char *path = n->flags->store_file;
	enum nvipam_store_adoption how;
	struct cni_err err = { 0 }, lock_err = { 0 };
	char count[32];
	size_t total;
	int r;

	r = nvipam_store_adopt(path, STORE_LOCK_WAIT_MS, &how, &total, &err);
	/* From here on a stop hands over, whatever happens next: the store may be ours now. */
	n->store_adopted = r >= 0;
	if (r == -EPROTONOSUPPORT) {
		klog_error(err.msg, "store format not readable by this build: nv-ipam not installed, "
			   "the store left as it is", "store", path, "formats", NVIPAM_STORE_FORMATS, NULL);
		return 0;
	}
	if (r < 0) {
		klog_error(err.msg, "failed to adopt store", "store", path, NULL);
		return 1;
	}
	snprintf(count, sizeof(count), "%zu", total);
	klog_info(0, said[how], "store", path, "allocations", count, NULL);
	/* A rewritten store file is a new inode: the lock moves to it (no ipam-node can have
	 * taken it meanwhile: they wait for the owner lock). */
	r = node_store_lock(n, &lock_err);
	if (r < 0) {
		klog_error(lock_err.msg, "failed to lock store", NULL);
		return 1;
	}
	return 0;
}

bool node_store_handover(const struct node *n, int64_t deadline_ms)
{
	const char *path = n->flags->store_file;
	struct cni_err err = { 0 };
	char count[32], sum[16];
	uint32_t checksum;
	int64_t wait_ms = deadline_ms - clock_mono_ms();
	size_t total;

	if (!n->store_adopted || !n->flags->store_handover)
		return true;
	if (!node_owner_held(n)) {
		klog_error("the owner lock file was removed or replaced", "store not handed over: "
			   "another ipam-node may own it", "store", path, NULL);
		return false;
	}
	/* The store's wait polls the lock until then: a short ADD ends within it. */
	if (nvipam_store_handover(path, (unsigned int)(wait_ms > 0 ? wait_ms : 0), &total, &checksum,
				  &err) < 0) {
		_cleanup_free_ char *run = NULL;

		if (asprintf(&run, "nv-ipam-tool handover --store %s", path) < 0)
			run = NULL;
		klog_error(err.msg, "failed to hand the store over: the reference daemon cannot start "
			   "on it; run what follows once nothing holds the store", "store", path, "run",
			   run ? run : "nv-ipam-tool handover", NULL);
		return false;
	}
	snprintf(count, sizeof(count), "%zu", total);
	snprintf(sum, sizeof(sum), "%u", checksum);
	klog_info(0, "store handed over in the reference daemon's format: nv-ipam waits for "
		  "ipam-node to start again", "store", path, "allocations", count, "checksum", sum, NULL);
	return true;
}
