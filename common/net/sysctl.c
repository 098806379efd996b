/* sysctl under /proc/sys, following the caller's netns */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/net/sysctl.h"
#include "common/util/cleanup.h"

/*
 * /proc/sys/<path>. Interface names may hold dots ("eth0.100"), so the path is
 * slash-separated and taken as is; ".." components would leave /proc/sys.
 */
static int sysctl_path(const char *path, char *buf, size_t len)
{
	int n;

	if (!path || !*path || path[0] == '/')
		return -EINVAL;
	for (const char *p = path; p; p = strchr(p, '/')) {
		if (*p == '/')
			p++;
		if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0'))
			return -EINVAL;
	}
	n = snprintf(buf, len, "/proc/sys/%s", path);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

int sysctl_write(const char *path, const char *value)
{
	_cleanup_close_ int fd = -1;
	char p[PATH_MAX];
	size_t len, off = 0;
	int r;

	if (!value)
		return -EINVAL;
	r = sysctl_path(path, p, sizeof(p));
	if (r < 0)
		return r;
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = strlen(value);
	while (off < len) {
		ssize_t n = write(fd, value + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		off += (size_t)n;
	}
	return 0;
}

int sysctl_read(const char *path, char *buf, unsigned long len)
{
	_cleanup_close_ int fd = -1;
	char p[PATH_MAX];
	size_t off = 0;
	int r;

	if (!buf || len == 0)
		return -EINVAL;
	r = sysctl_path(path, p, sizeof(p));
	if (r < 0)
		return r;
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		char extra;
		ssize_t n;

		if (off < len)
			n = read(fd, buf + off, len - off);
		else
			n = read(fd, &extra, 1); /* full: is there more? */
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		if (off >= len)
			return -ENOBUFS;
		off += (size_t)n;
	}
	if (off > 0 && buf[off - 1] == '\n')
		off--;
	if (off >= len)
		return -ENOBUFS;
	buf[off] = '\0';
	return 0;
}
