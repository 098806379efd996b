/* Files: bounded reads of whole files and descriptors, atomic replacement */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/file.h"

int file_read_fd(int fd, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	/* Reading goes one byte past the bound, so that excess is seen, not cut off. */
	while (len <= max) {
		ssize_t n;

		if (cap - len < 4096 && cap < max + 1) {
			size_t ncap = cap ? cap * 2 : 16384;
			char *nb;

			if (ncap > max + 1)
				ncap = max + 1;
			nb = realloc(buf, ncap + 1);
			if (!nb)
				return -ENOMEM;
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max)
		return -EFBIG;
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

int file_read(const char *path, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((unsigned long long)st.st_size > max)
		return -EFBIG;
	return file_read_fd(fd, max, ret, ret_len);
}

int file_make_parents(const char *path, mode_t mode)
{
	_cleanup_free_ char *dir = strdup(path);
	char *slash;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(dir, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fsync_dir_of(const char *path)
{
	_cleanup_free_ char *dir = strdup(path);
	_cleanup_close_ int fd = -1;
	char *slash;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		return -errno;
	return 0;
}

int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		      const char **ret_step)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	*ret_step = "create";
	if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0) {
		tmp = NULL;
		return -ENOMEM;
	}
	fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0 && errno == EEXIST) {
		/* Left by a killed process that had our PID. */
		(void)unlink(tmp);
		fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
	}
	if (fd < 0)
		return -errno;
	*ret_step = "write";
	r = fchmod(fd, mode) < 0 ? -errno : write_all(fd, data, len);
	if (r < 0)
		goto fail;
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
	if (rename(tmp, path) < 0) {
		r = -errno;
		goto fail;
	}
	*ret_step = "sync directory";
	return fsync_dir_of(path);

fail:
	(void)unlink(tmp);
	return r;
}

void file_sweep_temps(const char *path)
{
	_cleanup_free_ char *dir_path = strdup(path);
	const char *base;
	char *slash;
	size_t base_len;
	DIR *dir;
	struct dirent *e;

	if (!dir_path)
		return;
	slash = strrchr(dir_path, '/');
	if (slash) {
		*slash = '\0';
		base = path + (slash - dir_path) + 1;
	} else {
		base = path;
	}
	base_len = strlen(base);
	dir = opendir(!slash ? "." : *dir_path ? dir_path : "/");
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		if (strncmp(e->d_name, base, base_len) == 0 &&
		    strncmp(e->d_name + base_len, ".tmp.", 5) == 0)
			(void)unlinkat(dirfd(dir), e->d_name, 0);
	}
	closedir(dir);
}
