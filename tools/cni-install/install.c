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
#include <unistd.h>

#include "common/util/cleanup.h"
#include "tools/cni-install/install.h"

#define COPY_CHUNK (256 * 1024)

DEFINE_CLEANUP_FUNC(closedirp, DIR *, closedir)

int install_lock(const char *dir, int *ret_fd)
{
	_cleanup_close_ int fd = -1;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0)
		return -errno;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int install_sweep(int dirfd, const char *name)
{
	_cleanup_(closedirp) DIR *d = NULL;
	char prefix[NAME_MAX + 1];
	struct dirent *de;
	int fd, n = 0;

	if (snprintf(prefix, sizeof(prefix), ".%s" INSTALL_TMP_TAG, name) >= (int)sizeof(prefix))
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

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads up to @len bytes; fewer only at the end of the file. */
static ssize_t read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Whether the target is a regular file with the source's mode and bytes. */
static int same_file(int dirfd, const char *name, int src_fd, const struct stat *src_st,
		     bool *ret_same)
{
	_cleanup_free_ char *a = NULL, *b = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;

	*ret_same = false;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ELOOP ? 0 : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size != src_st->st_size ||
	    (st.st_mode & 07777) != (src_st->st_mode & 07777))
		return 0;
	a = malloc(COPY_CHUNK);
	b = malloc(COPY_CHUNK);
	if (!a || !b)
		return -ENOMEM;
	if (lseek(src_fd, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		ssize_t na = read_full(src_fd, a, COPY_CHUNK), nb = read_full(fd, b, COPY_CHUNK);

		if (na < 0)
			return (int)na;
		if (nb < 0)
			return (int)nb;
		if (na != nb || memcmp(a, b, (size_t)na) != 0)
			return 0;
		if (na == 0)
			break;
	}
	*ret_same = true;
	return 0;
}

static int copy_fd(int from, int to)
{
	_cleanup_free_ char *buf = malloc(COPY_CHUNK);
	ssize_t n;
	int r;

	if (!buf)
		return -ENOMEM;
	if (lseek(from, 0, SEEK_SET) < 0)
		return -errno;
	while ((n = read_full(from, buf, COPY_CHUNK)) > 0) {
		r = write_all(to, buf, (size_t)n);
		if (r < 0)
			return r;
	}
	return n < 0 ? (int)n : 0;
}

/* A new temporary file ".<name>.cni-install-XXXXXX" in the target directory. */
static int tmp_create(int dirfd, const char *name, mode_t mode, char *ret_name, size_t size)
{
	for (int tries = 0; tries < 100; tries++) {
		unsigned int rnd;
		int fd;

		if (getentropy(&rnd, sizeof(rnd)) < 0)
			return -errno;
		if (snprintf(ret_name, size, ".%s" INSTALL_TMP_TAG "%08x", name, rnd) >= (int)size)
			return -ENAMETOOLONG;
		fd = openat(dirfd, ret_name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
			    mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int install_binary(int dirfd, const char *name, const char *src, enum install_outcome *ret,
		   off_t *ret_size, const char **ret_step)
{
	_cleanup_close_ int src_fd = -1;
	_cleanup_close_ int fd = -1;
	char tmp[NAME_MAX + 1];
	struct stat st;
	bool same;
	int r;

	*ret_step = "open source";
	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	src_fd = open(src, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (src_fd < 0)
		return -errno;
	if (fstat(src_fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*ret_size = st.st_size;
	*ret_step = "compare";
	r = same_file(dirfd, name, src_fd, &st, &same);
	if (r < 0)
		return r;
	if (same) {
		*ret = INSTALL_UNCHANGED;
		return 0;
	}
	*ret_step = "create";
	fd = tmp_create(dirfd, name, 0700, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	*ret_step = "write";
	r = copy_fd(src_fd, fd);
	if (r < 0)
		goto fail;
	*ret_step = "chmod";
	if (fchmod(fd, st.st_mode & 07777) < 0) {
		r = -errno;
		goto fail;
	}
	*ret_step = "sync";
	if (fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	*ret_step = "close";
	if (close(TAKE_FD(fd)) < 0) {
		r = -errno;
		goto fail;
	}
	*ret_step = "rename";
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		r = -errno;
		goto fail;
	}
	*ret_step = "sync directory";
	if (fsync(dirfd) < 0)
		return -errno;
	*ret = INSTALL_COPIED;
	return 0;

fail:
	(void)unlinkat(dirfd, tmp, 0);
	return r;
}
