/* A fake sysfs tree in place of /sys for common/net/device.c, made by the linker */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/fake-sysfs.h"

static char sysfs_root[PATH_MAX];

void fake_sysfs_set_root(const char *root)
{
	snprintf(sysfs_root, sizeof(sysfs_root), "%s", root ? root : "");
}

const char *fake_sysfs_root(void)
{
	return sysfs_root;
}

/* A path below /sys, below the fake tree instead when there is one. */
static const char *sysfs_path(const char *path, char *buf, size_t size)
{
	if (!sysfs_root[0] || strncmp(path, "/sys/", 5) != 0)
		return path;
	snprintf(buf, size, "%s%s", sysfs_root, path + 4);
	return buf;
}

/*
 * The linker sends device.c's calls here (__wrap_*) and these on to libc and
 * common/util/file.c (__real_*).
 */
int __real_stat64(const char *path, struct stat64 *st);
DIR *__real_opendir(const char *path);
ssize_t __real_readlink(const char *path, char *buf, size_t size);
int __real_file_read(const char *path, size_t max, char **ret, size_t *ret_len);
int __wrap_stat64(const char *path, struct stat64 *st);
DIR *__wrap_opendir(const char *path);
ssize_t __wrap_readlink(const char *path, char *buf, size_t size);
int __wrap_file_read(const char *path, size_t max, char **ret, size_t *ret_len);

int __wrap_stat64(const char *path, struct stat64 *st)
{
	char buf[PATH_MAX];

	return __real_stat64(sysfs_path(path, buf, sizeof(buf)), st);
}

DIR *__wrap_opendir(const char *path)
{
	char buf[PATH_MAX];

	return __real_opendir(sysfs_path(path, buf, sizeof(buf)));
}

ssize_t __wrap_readlink(const char *path, char *buf, size_t size)
{
	char p[PATH_MAX];

	return __real_readlink(sysfs_path(path, p, sizeof(p)), buf, size);
}

int __wrap_file_read(const char *path, size_t max, char **ret, size_t *ret_len)
{
	char buf[PATH_MAX];

	return __real_file_read(sysfs_path(path, buf, sizeof(buf)), max, ret, ret_len);
}

int fake_sysfs_mkdirs(const char *root, const char *rel)
{
	char path[PATH_MAX];
	size_t skip = strlen(root) + 1;
	int n = snprintf(path, sizeof(path), "%s/%s", root, rel);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + skip; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}
