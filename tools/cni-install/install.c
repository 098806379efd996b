/* Atomic installation of one binary into a CNI bin directory */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/file.h"
#include "tools/cni-install/install.h"

DEFINE_CLEANUP_FUNC(closedirp, DIR *, closedir);

int install_lock(const char *dir, const sigset_t *stop, void (*on_wait)(const char *dir),
		 int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	bool told = false;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		const struct timespec step = { .tv_nsec = 100 * 1000 * 1000 };
		sigset_t pending;

		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return -errno;
		if (!told) {
			on_wait(dir);
			told = true;
		}
		/* Looked at, not taken: the caller sees it pending and stops. */
		if (sigpending(&pending) == 0)
			for (int sig = 1; sig < NSIG; sig++)
				if (sigismember(stop, sig) == 1 && sigismember(&pending, sig) == 1)
					return -EINTR;
		(void)nanosleep(&step, NULL);
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int install_sweep(int dirfd, const char *name)
{
	_cleanup_(closedirp) DIR *d = NULL;
	char prefix[NAME_MAX + 1];
	struct dirent *de;
	int fd, n = 0;

	if (snprintf(prefix, sizeof(prefix), "%s" INSTALL_TMP_TAG, name) >= (int)sizeof(prefix))
		return -ENAMETOOLONG;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		if (unlinkat(dirfd, de->d_name, 0) < 0 && errno != ENOENT)
			return -errno;
		n++;
	}
	return n;
}

/* Whether the target is a regular file with the source's mode and bytes. */
static int same_file(const char *target, const char *data, size_t len, mode_t mode, bool *ret_same)
{
	_cleanup_free_ char *cur = NULL;
	_cleanup_close_ int fd = -1;
	size_t cur_len;
	struct stat st;
	int r;

	*ret_same = false;
	fd = open(target, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ELOOP ? 0 : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size != len || (st.st_mode & 07777) != mode)
		return 0;
	r = file_read_fd(fd, len, &cur, &cur_len);
	if (r == -EFBIG)
		return 0;
	if (r < 0)
		return r;
	*ret_same = cur_len == len && memcmp(cur, data, len) == 0;
	return 0;
}

int install_binary(const char *dir, const char *name, const char *src, enum install_outcome *ret,
		   size_t *ret_size, const char **ret_step)
{
	_cleanup_free_ char *data = NULL, *target = NULL;
	struct stat st;
	size_t len;
	bool same;
	int r;

	*ret_step = "read source";
	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	if (asprintf(&target, "%s/%s", dir, name) < 0) {
		target = NULL;
		return -ENOMEM;
	}
	r = file_read(src, INSTALL_MAX_SIZE, &data, &len);
	if (r < 0)
		return r;
	if (stat(src, &st) < 0)
		return -errno;
	*ret_size = len;
	*ret_step = "compare";
	r = same_file(target, data, len, st.st_mode & 07777, &same);
	if (r < 0)
		return r;
	if (same) {
		*ret = INSTALL_UNCHANGED;
		return 0;
	}
	r = file_write_atomic(target, data, len, st.st_mode & 07777, ret_step);
	if (r < 0)
		return r;
	*ret = INSTALL_COPIED;
	return 0;
}
