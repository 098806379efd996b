/* Network namespaces by descriptor: open and validate a path, enter and always return */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>
#include <linux/nsfs.h>

#include "common/util/cleanup.h"
#include "common/util/nsfd.h"

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

/* The netns of the calling thread; setns() changes the thread, not the process. */
#define NETNS_SELF "/proc/thread-self/ns/net"

int nsfd_open(const char *path, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	struct statfs sfs;
	struct stat st;
	int type;

	if (!path || !*path)
		return -EINVAL;
	/*
	 * Looked at before it is opened: a FIFO would block the open, and opening
	 * a device can do something (a watchdog starts counting). A namespace
	 * file is a regular file of nsfs.
	 */
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EMEDIUMTYPE;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EMEDIUMTYPE;
	/* nsfs for bind mounts and /proc/<pid>/ns/net; procfs on kernels before nsfs. */
	if ((unsigned long)sfs.f_type != NSFS_MAGIC && (unsigned long)sfs.f_type != PROC_SUPER_MAGIC)
		return -EINVAL;
	/* Another kind of namespace (/proc/self/ns/mnt); kernels before 4.11 cannot tell. */
	type = ioctl(fd, NS_GET_NSTYPE);
	if (type >= 0 && type != CLONE_NEWNET)
		return -EMEDIUMTYPE;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int nsfd_is_current(int fd)
{
	struct stat self, other;

	if (fd < 0)
		return -EBADF;
	if (fstat(fd, &other) < 0)
		return -errno;
	if (stat(NETNS_SELF, &self) < 0)
		return -errno;
	return self.st_dev == other.st_dev && self.st_ino == other.st_ino;
}

int nsfd_run(int fd, int (*fn)(void *userdata), void *userdata)
{
	_cleanup_close_ int orig = -1;
	int r;

	if (fd < 0 || !fn)
		return -EINVAL;
	orig = open(NETNS_SELF, O_RDONLY | O_CLOEXEC);
	if (orig < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET) < 0)
		return -errno;
	r = fn(userdata);
	/*
	 * Going on in the wrong netns would apply every later step of the plugin
	 * to the wrong links and addresses, in the pod or in the host. Nothing
	 * can be undone safely from there, so this is the one place that aborts.
	 */
	if (setns(orig, CLONE_NEWNET) < 0)
		abort();
	return r;
}

int nsfd_new(int *ret_fd)
{
	_cleanup_close_ int orig = -1;
	_cleanup_close_ int fd = -1;
	int r;

	orig = open(NETNS_SELF, O_RDONLY | O_CLOEXEC);
	if (orig < 0)
		return -errno;
	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	fd = open(NETNS_SELF, O_RDONLY | O_CLOEXEC);
	r = fd < 0 ? -errno : 0;
	/* As in nsfd_run(): going on in the wrong netns is never safe. */
	if (setns(orig, CLONE_NEWNET) < 0)
		abort();
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int nsfd_open_current(int *ret_fd)
{
	int fd = open(NETNS_SELF, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}
