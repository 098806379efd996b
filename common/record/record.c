/* Records: what a plugin keeps on the node between an ADD and its DEL, one small file each */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/cni/conf.h"
#include "common/cni/env.h"
#include "common/record/record.h"
#include "common/util/cleanup.h"
#include "common/util/file.h"

#define RECORD_PARTS_MAX 3

DEFINE_CLEANUP_FUNC(closedirp, DIR *, closedir);

static bool part_valid(const char *p, size_t len)
{
	char part[RECORD_NAME_MAX + 1];

	if (len == 0 || len > RECORD_NAME_MAX)
		return false;
	memcpy(part, p, len);
	part[len] = '\0';
	return cni_env_valid_id(part) || !cni_env_ifname_invalid(part);
}

/* Whether @name is one record_name() could give: a file name never a temporary one. */
static bool name_valid(const char *name)
{
	size_t n = 0, len = strlen(name);

	if (len == 0 || len > RECORD_NAME_MAX)
		return false;
	for (const char *p = name;; n++) {
		const char *colon = strchr(p, ':');
		size_t plen = colon ? (size_t)(colon - p) : strlen(p);

		if (n == RECORD_PARTS_MAX || !part_valid(p, plen))
			return false;
		if (!colon)
			return true;
		p = colon + 1;
	}
}

int record_name(const char *const *parts, size_t n, char *buf, size_t size)
{
	size_t len = 0;

	if (n == 0 || n > RECORD_PARTS_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		size_t plen = strlen(parts[i]);

		if (len + (i > 0) + plen >= size || len + (i > 0) + plen > RECORD_NAME_MAX)
			return -ENAMETOOLONG;
		if (!part_valid(parts[i], plen))
			return -EINVAL;
		if (i > 0)
			buf[len++] = ':';
		memcpy(buf + len, parts[i], plen);
		len += plen;
	}
	buf[len] = '\0';
	return 0;
}

/*
 * The folder, made when @create; no symbolic link on the way from "/", and
 * only root may change what it holds: a record tells DEL what to set a device
 * or a sysctl back to.
 */
static int dir_open(const char *dir, bool create, int *ret_fd)
{
	_cleanup_close_ int root = -1, fd = -1;
	int r;

	if (dir[0] != '/')
		return -EINVAL;
	root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	r = file_dir_open_beneath(root, dir + 1, create ? 0700 : 0, &fd);
	if (r >= 0)
		r = file_dir_check_private(fd);
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/* The PID a temporary file's name ends with when it is one ("<name>::tmp.<digits>"), else 0. */
static long temp_pid(const char *entry, const char **ret_sep)
{
	const char *sep = strstr(entry, RECORD_TEMP_SEP), *digits;
	char *end;
	long pid;

	if (!sep || sep == entry)
		return 0;
	digits = sep + strlen(RECORD_TEMP_SEP);
	if (!*digits || digits[strspn(digits, "0123456789")] || strlen(digits) > 10)
		return 0;
	pid = strtol(digits, &end, 10);
	*ret_sep = sep;
	return pid > 0 ? pid : 0;
}

/*
 * A killed save leaves its temporary file. A live one must keep it until its
 * rename, so only files whose writer's PID no process has go. Plugins run in
 * the node's PID namespace, where that PID is the writer's; a reused PID keeps
 * a dead writer's file until the next save.
 */
static void sweep_temps(int dirfd, const char *name)
{
	size_t first = strcspn(name, ":");
	_cleanup_(closedirp) DIR *d = file_dir_stream(dirfd);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		const char *sep = NULL;
		long pid = temp_pid(e->d_name, &sep);

		if (!pid || strncmp(e->d_name, name, first) != 0 ||
		    (e->d_name + first != sep && e->d_name[first] != ':'))
			continue;
		if (pid == (long)getpid() || (kill((pid_t)pid, 0) < 0 && errno == ESRCH))
			(void)unlinkat(dirfd, e->d_name, 0);
	}
}

int record_save(const char *dir, const char *name, const char *kind, unsigned int version,
		const char *body)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	char tmp[NAME_MAX + 1];
	const char *step;
	int n, r;

	if (!name_valid(name) || !*kind || strpbrk(kind, " \n") || version == 0)
		return -EINVAL;
	n = asprintf(&text, RECORD_MAGIC "%s state %u\n%s", kind, version, body);
	if (n < 0) {
		text = NULL;
		return -ENOMEM;
	}
	snprintf(tmp, sizeof(tmp), "%s" RECORD_TEMP_SEP "%ld", name, (long)getpid());
	r = dir_open(dir, true, &fd);
	if (r < 0)
		return r;
	sweep_temps(fd, name);
	return file_write_atomic_via(fd, name, tmp, text, (size_t)n, 0600, &step);
}

int record_note(const char *dir, const char *name, const char *kind, unsigned int version,
		const char *body)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1, file = -1;
	char tmp[NAME_MAX + 1];
	ssize_t w;
	int n, r;

	if (!name_valid(name) || !*kind || strpbrk(kind, " \n") || version == 0)
		return -EINVAL;
	n = asprintf(&text, RECORD_MAGIC "%s state %u\n%s", kind, version, body);
	if (n < 0) {
		text = NULL;
		return -ENOMEM;
	}
	snprintf(tmp, sizeof(tmp), "%s" RECORD_TEMP_SEP "%ld", name, (long)getpid());
	r = dir_open(dir, true, &fd);
	if (r < 0)
		return r;
	sweep_temps(fd, name);
	file = openat(fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (file < 0)
		return -errno;
	w = write(file, text, (size_t)n);
	if (w != n) {
		r = w < 0 ? -errno : -EIO;
		(void)unlinkat(fd, tmp, 0);
		return r;
	}
	/* Whole or not at all to any reader; a power loss is the boot /run does not outlive. */
	if (renameat(fd, tmp, fd, name) < 0) {
		r = -errno;
		(void)unlinkat(fd, tmp, 0);
		return r;
	}
	return 0;
}

int record_mark(const char *dir, const char *name)
{
	_cleanup_close_ int fd = -1, file = -1;
	int r;

	if (!name_valid(name))
		return -EINVAL;
	r = dir_open(dir, true, &fd);
	if (r < 0)
		return r;
	file = openat(fd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	return file < 0 ? -errno : 0;
}

/* The version the first line gives, when it is @kind's; 0 otherwise. */
static unsigned int header_version(const char *text, const char *kind, const char **ret_body)
{
	size_t k = strlen(kind);
	const char *p = text, *nl;
	unsigned long v;
	char *end;

	if (strncmp(p, RECORD_MAGIC, strlen(RECORD_MAGIC)) != 0)
		return 0;
	p += strlen(RECORD_MAGIC);
	if (strncmp(p, kind, k) != 0 || strncmp(p + k, " state ", 7) != 0)
		return 0;
	p += k + 7;
	nl = strchr(p, '\n');
	if (!nl || nl == p || p[0] == '0' || strspn(p, "0123456789") != (size_t)(nl - p) ||
	    nl - p > 9)
		return 0;
	v = strtoul(p, &end, 10);
	*ret_body = nl + 1;
	return (unsigned int)v;
}

int record_parse(char *text, const char *kind, unsigned int max_version, unsigned int *ret_version)
{
	const char *body = NULL;
	unsigned int version = header_version(text, kind, &body);

	if (version == 0 || version > max_version)
		return -EBADMSG;
	memmove(text, body, strlen(body) + 1);
	*ret_version = version;
	return 0;
}

int record_load(const char *dir, const char *name, const char *kind, unsigned int max_version,
		size_t max_bytes, char **ret_body, unsigned int *ret_version)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	unsigned int version;
	size_t len;
	int r;

	if (!name_valid(name))
		return -EINVAL;
	r = dir_open(dir, false, &fd);
	if (r < 0)
		return r;
	r = file_read_at(fd, name, max_bytes, &text, &len);
	if (r == -EFBIG || (r >= 0 && strlen(text) != len))
		return -EBADMSG;
	if (r < 0)
		return r;
	r = record_parse(text, kind, max_version, &version);
	if (r < 0)
		return r;
	*ret_body = TAKE_PTR(text);
	*ret_version = version;
	return 0;
}

char *record_line(char **p, const char *key)
{
	size_t k = strlen(key);
	char *v, *nl;

	if (strncmp(*p, key, k) != 0 || !(nl = strchr(*p + k, '\n')))
		return NULL;
	v = *p + k;
	*nl = '\0';
	*p = nl + 1;
	return v;
}

int record_remove(const char *dir, const char *name)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (!name_valid(name))
		return -EINVAL;
	r = dir_open(dir, false, &fd);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	/* A DEL is the container's last chance to take what its killed saves left. */
	sweep_temps(fd, name);
	return unlinkat(fd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
}

int record_list(const char *dir, int (*cb)(const char *name, void *data), void *data)
{
	_cleanup_close_ int fd = -1;
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *e;
	int r;

	r = dir_open(dir, false, &fd);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	d = file_dir_stream(fd);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		/* A temporary file's name holds "::": never a record's (name_valid()). */
		if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN)
			continue;
		if (!name_valid(e->d_name))
			continue;
		r = cb(e->d_name, data);
		if (r < 0)
			return r;
	}
	return 0;
}

struct sweep {
	const char *network;
	char **names;         /* every record's name */
	size_t n, cap;
};

static int sweep_collect(const char *name, void *data)
{
	struct sweep *s = data;
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		char **v = reallocarray(s->names, cap, sizeof(*v));

		if (!v) {
			free(copy);
			return -ENOMEM;
		}
		s->names = v;
		s->cap = cap;
	}
	s->names[s->n++] = copy;
	return 0;
}

/* Whether another record than @name's (another network) names @name's container. */
static bool container_elsewhere(const struct sweep *s, const char *name)
{
	size_t cid = strcspn(name, ":");

	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->names[i], name) != 0 && strncmp(s->names[i], name, cid + 1) == 0)
			return true;
	return false;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int record_sweep(const char *dir, const char *network, const struct cni_attachment *valid,
		 size_t n_valid, int (*cb)(const char *cid, bool elsewhere, void *data), void *data)
{
	struct sweep s = { .network = network };
	int r = record_list(dir, sweep_collect, &s);

	/* In name order, whatever the folder's: a GC's log reads the same each time. */
	if (r >= 0 && s.n > 1)
		qsort(s.names, s.n, sizeof(*s.names), name_cmp);
	for (size_t i = 0; r >= 0 && i < s.n; i++) {
		const char *name = s.names[i], *colon = strchr(name, ':');
		char cid[RECORD_NAME_MAX + 1];
		bool kept = false;

		if (!colon || strcmp(colon + 1, network) != 0)
			continue;
		snprintf(cid, sizeof(cid), "%.*s", (int)(colon - name), name);
		for (size_t k = 0; k < n_valid && !kept; k++)
			kept = strcmp(valid[k].container_id, cid) == 0;
		if (kept)
			continue;
		r = cb(cid, container_elsewhere(&s, name), data);
		if (r >= 0)
			r = record_remove(dir, name);
	}
	for (size_t i = 0; i < s.n; i++)
		free(s.names[i]);
	free(s.names);
	return r;
}

int record_lock(const char *dir, const char *name, int *ret_fd)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	char file[NAME_MAX + 1];
	int r;

	if (!name_valid(name))
		return -EINVAL;
	snprintf(file, sizeof(file), "%s" RECORD_LOCK_SUFFIX, name);
	r = dir_open(dir, true, &dfd);
	if (r < 0)
		return r;
	fd = openat(dfd, file, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return -errno;
	*ret_fd = TAKE_FD(fd);
	return 0;
}
