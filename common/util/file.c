/* Files: bounded reads of whole files and descriptors, atomic replacement */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
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

/* A regular file's size, looked at before it is opened: a FIFO or a device is refused unopened. */
static int check_regular(int dirfd, const char *name, int at_flags, size_t max)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, at_flags) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((unsigned long long)st.st_size > max)
		return -EFBIG;
	return 0;
}

/* The open file is still a regular file (it was not swapped since it was looked at). */
static int check_opened(int fd, size_t max)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((unsigned long long)st.st_size > max)
		return -EFBIG;
	return 0;
}

static int read_at(int dirfd, const char *name, int at_flags, size_t max, char **ret,
		   size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	int r;

	r = check_regular(dirfd, name, at_flags, max);
	if (r < 0)
		return r;
	if (at_flags & AT_SYMLINK_NOFOLLOW)
		flags |= O_NOFOLLOW;
	fd = openat(dirfd, name, flags);
	if (fd < 0)
		return -errno;
	r = check_opened(fd, max);
	if (r < 0)
		return r;
	return file_read_fd(fd, max, ret, ret_len);
}

int file_read(const char *path, size_t max, char **ret, size_t *ret_len)
{
	return read_at(AT_FDCWD, path, 0, max, ret, ret_len);
}

int file_read_at(int dirfd, const char *name, size_t max, char **ret, size_t *ret_len)
{
	if (!*name || strchr(name, '/'))
		return -EINVAL;
	return read_at(dirfd, name, AT_SYMLINK_NOFOLLOW, max, ret, ret_len);
}

/*
 * The next component of a relative path, copied into @buf; @p advances past it.
 * Return: 1 with a component, 0 at the end, -EINVAL for "", ".", ".." or a
 * component that does not fit.
 */
static int next_component(const char **p, char *buf, size_t size)
{
	size_t n;

	if (!**p)
		return 0;
	n = strcspn(*p, "/");
	if (n == 0 || n >= size || (n == 1 && (*p)[0] == '.') ||
	    (n == 2 && (*p)[0] == '.' && (*p)[1] == '.'))
		return -EINVAL;
	memcpy(buf, *p, n);
	buf[n] = '\0';
	*p += n;
	if (**p == '/') {
		(*p)++;
		if (!**p)
			return -EINVAL;
	}
	return 1;
}

/* Opens one directory below @dirfd, never through a symbolic link; creates it with @create_mode. */
static int subdir_open(int dirfd, const char *name, mode_t create_mode, int *ret_fd)
{
	struct stat st;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create_mode) {
		if (mkdirat(dirfd, name, create_mode) < 0 && errno != EEXIST)
			return -errno;
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		int e = errno;

		/* O_DIRECTORY|O_NOFOLLOW on a link gives ELOOP or ENOTDIR: say which it was. */
		if ((e == ENOTDIR || e == ELOOP) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
		return -e;
	}
	*ret_fd = fd;
	return 0;
}

/* Walks @rel below @root_fd up to its last component, which is left in @last ("" when none). */
static int walk_beneath(int root_fd, const char *rel, mode_t create_mode, bool keep_last,
			char *last, size_t size, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	const char *p = rel;
	int r;

	last[0] = '\0';
	if (*rel == '/')
		return -EINVAL;
	fd = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	while ((r = next_component(&p, last, size)) > 0) {
		int next = -1;

		if (keep_last && !*p)
			break;
		r = subdir_open(fd, last, create_mode, &next);
		if (r < 0)
			return r;
		closep(&fd);
		fd = next;
		last[0] = '\0';
	}
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int file_open_beneath(int root_fd, const char *rel, int flags, mode_t mode, int *ret_fd)
{
	_cleanup_close_ int dirfd = -1;
	_cleanup_close_ int fd = -1;
	char name[NAME_MAX + 1];
	int r;

	r = walk_beneath(root_fd, rel, 0, true, name, sizeof(name), &dirfd);
	if (r < 0)
		return r;
	if (!name[0])
		return -EINVAL;
	r = check_regular(dirfd, name, AT_SYMLINK_NOFOLLOW, SIZE_MAX);
	if (r < 0 && !(r == -ENOENT && (flags & O_CREAT)))
		return r;
	fd = openat(dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	r = check_opened(fd, SIZE_MAX);
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* A new file that holds @mark from the instant it has a name: O_TMPFILE, written, linked. */
static int create_marked(int dirfd, const char *name, const char *mark, size_t len, mode_t mode,
			 int *ret_fd)
{
	_cleanup_close_ int fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
	int r;

	if (fd < 0) {
		/* A file system without O_TMPFILE: created, then marked (a reader may come between). */
		fd = openat(dirfd, name, O_CREAT | O_EXCL | O_WRONLY | O_APPEND | O_NOFOLLOW |
				 O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
		if (fd < 0)
			return -errno;
		r = file_pwrite_all(fd, mark, len, 0);
		if (r < 0)
			return r;
		*ret_fd = TAKE_FD(fd);
		return 0;
	}
	r = file_pwrite_all(fd, mark, len, 0);
	if (r < 0)
		return r;
	if (linkat(fd, "", dirfd, name, AT_EMPTY_PATH) < 0)
		return -errno;
	if (fcntl(fd, F_SETFL, O_APPEND) < 0)
		return -errno;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int file_open_marked_beneath(int root_fd, const char *rel, const char *mark, mode_t mode,
			     int *ret_fd)
{
	_cleanup_close_ int dirfd = -1;
	_cleanup_close_ int fd = -1;
	char name[NAME_MAX + 1], head[256];
	size_t len = strlen(mark);
	int r;

	if (len == 0 || len > sizeof(head))
		return -EINVAL;
	r = walk_beneath(root_fd, rel, 0, true, name, sizeof(name), &dirfd);
	if (r < 0)
		return r;
	if (!name[0])
		return -EINVAL;
	r = check_regular(dirfd, name, AT_SYMLINK_NOFOLLOW, SIZE_MAX);
	if (r == -ENOENT) {
		r = create_marked(dirfd, name, mark, len, mode, ret_fd);
		/* Another process created it meanwhile: it is opened as an existing one. */
		if (r != -EEXIST)
			return r;
		r = check_regular(dirfd, name, AT_SYMLINK_NOFOLLOW, SIZE_MAX);
	}
	if (r < 0)
		return r;
	fd = openat(dirfd, name, O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = check_opened(fd, SIZE_MAX);
	if (r < 0)
		return r;
	if (pread(fd, head, len, 0) != (ssize_t)len || memcmp(head, mark, len) != 0)
		return -EPERM;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int file_dir_open_beneath(int root_fd, const char *rel, mode_t create_mode, int *ret_fd)
{
	char name[NAME_MAX + 1];

	return walk_beneath(root_fd, rel, create_mode, false, name, sizeof(name), ret_fd);
}

int file_dir_check_private(int dirfd)
{
	struct stat st;

	if (fstat(dirfd, &st) < 0)
		return -errno;
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return -EPERM;
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return -EPERM;
	return 0;
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

int file_pwrite_all(int fd, const void *data, size_t len, off_t off)
{
	const char *p = data;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Opens the directory of @path and returns the file's name in it. */
static int dir_of(const char *path, int *ret_fd, const char **ret_name)
{
	_cleanup_free_ char *dir = strdup(path);
	const char *slash = strrchr(path, '/');
	int fd;

	if (!dir)
		return -ENOMEM;
	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		dir[1] = '\0';
	else
		dir[slash - path] = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	*ret_name = slash ? slash + 1 : path;
	return 0;
}

/* @data through @tmp, synced and renamed over @name; the directory is not synced. */
static int replace_via(int dirfd, const char *name, const char *tmp, const void *data, size_t len,
		       mode_t mode, const char **ret_step)
{
	_cleanup_close_ int fd = -1;
	int r;

	*ret_step = "create";
	if (!*name || strchr(name, '/') || !*tmp || strchr(tmp, '/') || strcmp(name, tmp) == 0)
		return -EINVAL;
	fd = openat(dirfd, tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0 && errno == EEXIST) {
		/* Left by a killed process that had our PID. */
		(void)unlinkat(dirfd, tmp, 0);
		fd = openat(dirfd, tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
	}
	if (fd < 0)
		return -errno;
	*ret_step = "write";
	r = fchmod(fd, mode) < 0 ? -errno : file_pwrite_all(fd, data, len, 0);
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
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		r = -errno;
		goto fail;
	}
	return 0;

fail:
	(void)unlinkat(dirfd, tmp, 0);
	return r;
}

/* @name's temporary file: "<name>.tmp.<pid>". */
static int tmp_name(const char *name, char **ret)
{
	if (!*name || strchr(name, '/'))
		return -EINVAL;
	if (asprintf(ret, "%s.tmp.%ld", name, (long)getpid()) < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

int file_replace_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
		    const char **ret_step)
{
	_cleanup_free_ char *tmp = NULL;
	int r;

	*ret_step = "create";
	r = tmp_name(name, &tmp);
	if (r < 0)
		return r;
	return replace_via(dirfd, name, tmp, data, len, mode, ret_step);
}

int file_write_atomic_via(int dirfd, const char *name, const char *tmp, const void *data,
			  size_t len, mode_t mode, const char **ret_step)
{
	int r = replace_via(dirfd, name, tmp, data, len, mode, ret_step);

	if (r < 0)
		return r;
	*ret_step = "sync directory";
	return fsync(dirfd) < 0 ? -errno : 0;
}

int file_write_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
			 const char **ret_step)
{
	_cleanup_free_ char *tmp = NULL;
	int r;

	*ret_step = "create";
	r = tmp_name(name, &tmp);
	if (r < 0)
		return r;
	return file_write_atomic_via(dirfd, name, tmp, data, len, mode, ret_step);
}

int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		      const char **ret_step)
{
	_cleanup_close_ int dirfd = -1;
	const char *name = NULL;
	int r;

	*ret_step = "create";
	r = dir_of(path, &dirfd, &name);
	if (r < 0)
		return r;
	return file_write_atomic_at(dirfd, name, data, len, mode, ret_step);
}

/*
 * Where a temporary file's ".tmp.<pid>" starts in @entry, or NULL: only digits may
 * follow, so that no other file (a pool named "a.tmp.b", whose log is "a.tmp.b.log")
 * is ever taken for one.
 */
static const char *temp_suffix(const char *entry)
{
	const char *at = NULL;

	for (const char *p = entry; (p = strstr(p, ".tmp.")); p++)
		at = p;
	if (!at || at == entry || !at[5] || at[5 + strspn(at + 5, "0123456789")])
		return NULL;
	return at;
}

DIR *file_dir_stream(int dirfd)
{
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	DIR *dir;

	if (fd < 0)
		return NULL;
	dir = fdopendir(fd);
	if (!dir) {
		int e = errno;

		close(fd);
		errno = e;
		return NULL;
	}
	/* A duplicate shares the offset: a descriptor read before starts where that left off. */
	rewinddir(dir);
	return dir;
}

/* The temporary files of @names (every file's when @names is NULL) removed, in one pass. */
static void sweep_temps(int dirfd, const char *const *names, size_t n)
{
	DIR *dir = file_dir_stream(dirfd);
	struct dirent *e;

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		const char *suffix = temp_suffix(e->d_name);
		size_t len = suffix ? (size_t)(suffix - e->d_name) : 0;
		bool ours = suffix && !names;

		for (size_t i = 0; suffix && names && i < n && !ours; i++)
			ours = strlen(names[i]) == len && strncmp(e->d_name, names[i], len) == 0;
		if (ours)
			(void)unlinkat(dirfd, e->d_name, 0);
	}
	closedir(dir);
}

void file_sweep_temps_at(int dirfd, const char *name)
{
	sweep_temps(dirfd, name ? &name : NULL, 1);
}

void file_sweep_temps_of(int dirfd, const char *const *names, size_t n)
{
	sweep_temps(dirfd, names, n);
}
