/* Trust: the directories a network config's paths may name, and opening files beneath them */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cni/trust.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/json-go.h"
#include "common/util/json.h"
#include "common/util/log.h"

/* The settings file lists a few directories; anything larger is not one. */
#define SETTINGS_MAX_BYTES (64u * 1024u)
#define AREA_DIRS_MAX 16
#define AREAS 7

struct area {
	const char *key;  /* in the settings file */
	const char *const *defs; /* the default directories, NULL-terminated */
	char *dirs[AREA_DIRS_MAX];
	size_t n;
	bool given; /* the settings file has the key: it replaces the default */
};

/* Read once per process: every plugin is a short-lived single-threaded process. */
static struct {
	bool loaded;
	bool missing;               /* the file does not exist: the defaults apply */
	int r;
	struct cni_err err;
	struct area areas[AREAS];
} settings = {
	.areas = {
		[TRUST_LOG] = { .key = "logDirs", .defs = (const char *const[]){ "/var/log", NULL } },
		[TRUST_CONF] = { .key = "confDirs",
				 .defs = (const char *const[]){ "/etc/cni/net.d", NULL } },
		[TRUST_STATE] = { .key = "stateDirs",
				  .defs = (const char *const[]){ "/var/lib/cni/nv-ipam", NULL } },
		[TRUST_DEVINFO] = { .key = "deviceInfoDirs",
				    .defs = (const char *const[]){ "/var/run/k8s.cni.cncf.io/devinfo",
								   NULL } },
		/* Where primary networks keep theirs: /var/lib/cni/networks, /run/cni-ipam-state. */
		[TRUST_STATE_ROOT] = { .key = "stateRoots",
				       .defs = (const char *const[]){ "/var/lib/cni", "/run",
								      "/var/run", NULL } },
		[TRUST_RESOLV] = { .key = "resolvConfDirs",
				   .defs = (const char *const[]){ "/etc", "/run", "/var/run", NULL } },
		/* Where upstream's dhcp daemon listens by default: /run/cni/dhcp.sock. */
		[TRUST_SOCKET] = { .key = "socketDirs",
				   .defs = (const char *const[]){ "/run/cni", NULL } },
	},
};

const char *trust_settings_path(void)
{
	const char *env = getenv(TRUST_SETTINGS_ENV);

	return env && *env ? env : TRUST_SETTINGS_FILE;
}

/*
 * An absolute path with repeated and trailing slashes dropped; "." and ".."
 * components are refused, so the result says lexically where it leads.
 */
static int normalize(const char *in, char *out, size_t size)
{
	size_t o = 0;

	if (in[0] != '/')
		return -EINVAL;
	for (const char *p = in; *p;) {
		size_t n;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (n == 0)
			break;
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (o + 1 + n >= size)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

/* The settings file grants trust, so only root may have written it. */
static int settings_read(const char *path, char **ret, size_t *ret_len, struct cni_err *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT) {
			const char *env = getenv(TRUST_SETTINGS_ENV);

			settings.missing = true;
			/* The node's own file is optional; one named on purpose was meant to exist. */
			if (env && *env)
				log_warning("node settings %s (%s) does not exist: the default directories apply",
					 path, TRUST_SETTINGS_ENV);
			return 0;
		}
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -errno,
				   "node settings %s: cannot be read: %s", path, strerror(errno));
	}
	if (!S_ISREG(st.st_mode))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "node settings %s: not a regular file", path);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -errno,
				   "node settings %s: cannot be read: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EPERM,
				   "node settings %s: must be a regular file owned by root and "
				   "writable by no one else", path);
	r = file_read_fd(fd, SETTINGS_MAX_BYTES, ret, ret_len);
	if (r == -EFBIG)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "node settings %s: larger than %u bytes", path, SETTINGS_MAX_BYTES);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r, "node settings %s: cannot be read: %s",
				   path, strerror(-r));
	return 1;
}

static int area_parse(struct json_object *root, const char *path, struct area *a,
		      struct cni_err *err)
{
	char **v = NULL;
	size_t n = 0;
	int r;

	r = cjson_get_str_array(root, a->key, &v, &n, err);
	if (r < 0)
		return cni_err_code(err, CNI_ERR_INVALID_CONFIG,
				    cni_err_prefix(err, r, "node settings %s", path));
	if (r == 0)
		return 0;
	a->given = true;
	if (n > AREA_DIRS_MAX) {
		cjson_strv_free(v, n);
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -E2BIG,
				   "node settings %s: \"%s\" lists more than %d directories", path,
				   a->key, AREA_DIRS_MAX);
	}
	for (size_t i = 0; i < n; i++) {
		char norm[PATH_MAX];

		if (normalize(v[i], norm, sizeof(norm)) < 0) {
			cjson_strv_free(v, n);
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "node settings %s: \"%s\"[%zu] must be an absolute path "
					   "without \".\" or \"..\" components", path, a->key, i);
		}
		strcpy(v[i], norm); /* never longer than the original */
	}
	memcpy(a->dirs, v, n * sizeof(*v));
	a->n = n;
	free(v);
	return 0;
}

static int settings_parse(const char *path, const char *text, size_t len, struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *root = NULL;
	struct json_object_iterator it, end;
	char label[PATH_MAX + 16];
	int r;

	snprintf(label, sizeof(label), "node settings %s", path);
	r = cjson_parse(text, len, label, &root, err);
	if (r < 0)
		return cni_err_code(err, CNI_ERR_INVALID_CONFIG, r);
	if (!json_object_is_type(root, json_type_object))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "node settings %s: expected an object", path);
	/* A misspelt key would silently leave a default in place. */
	it = json_object_iter_begin(root);
	end = json_object_iter_end(root);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *name = json_object_iter_peek_name(&it);
		bool known = false;

		for (size_t i = 0; i < AREAS && !known; i++)
			known = strcasecmp(name, settings.areas[i].key) == 0;
		if (!known)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "node settings %s: unknown key (known: logDirs, confDirs, "
					   "stateDirs, deviceInfoDirs, stateRoots, resolvConfDirs, "
					   "socketDirs)", path);
	}
	for (size_t i = 0; i < AREAS; i++)
		if ((r = area_parse(root, path, &settings.areas[i], err)) < 0)
			return r;
	return 0;
}

static int settings_load(struct cni_err *err)
{
	_cleanup_free_ char *text = NULL;
	const char *path = trust_settings_path();
	size_t len = 0;
	int r;

	if (settings.loaded) {
		if (settings.r < 0 && err && err->code == CNI_OK)
			*err = settings.err;
		return settings.r;
	}
	settings.loaded = true;
	r = settings_read(path, &text, &len, &settings.err);
	if (r > 0)
		r = settings_parse(path, text, len, &settings.err);
	for (size_t i = 0; i < AREAS && r >= 0; i++) {
		struct area *a = &settings.areas[i];

		/* A key given replaces the default; an empty list allows nothing. */
		for (size_t k = 0; !a->given && a->defs[k] && r >= 0; k++) {
			a->dirs[k] = strdup(a->defs[k]);
			if (!a->dirs[k])
				r = cni_err_set(&settings.err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			else
				a->n = k + 1;
		}
	}
	settings.r = r < 0 ? r : 0;
	if (r < 0 && err && err->code == CNI_OK)
		*err = settings.err;
	return settings.r;
}

static void area_list(const struct area *a, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < a->n && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", a->dirs[i]);
	if (a->n == 0)
		snprintf(buf, size, "none");
}

/*
 * Splits @path into the area directory it lies in (the deepest that holds it)
 * and the rest below that directory ("" for the directory itself).
 */
static int locate(enum trust_area area, const char *key, const char *path, const char **ret_root,
		  char *rel, size_t size, struct cni_err *err)
{
	const struct area *a = &settings.areas[area];
	char norm[PATH_MAX], list[512];
	const char *best = NULL;
	size_t best_len = 0;
	int r;

	r = settings_load(err);
	if (r < 0)
		return r;
	if (normalize(path, norm, sizeof(norm)) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s \"%.256s\": must be an absolute path without \".\" or \"..\" "
				   "components", key, path);
	for (size_t i = 0; i < a->n; i++) {
		size_t n = strcmp(a->dirs[i], "/") == 0 ? 0 : strlen(a->dirs[i]);

		if (strncmp(norm, a->dirs[i], n) != 0 || (norm[n] != '/' && norm[n] != '\0'))
			continue;
		if (!best || n > best_len) {
			best = a->dirs[i];
			best_len = n;
		}
	}
	if (!best) {
		area_list(a, list, sizeof(list));
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s \"%.256s\" is outside the directories a network config may name "
				   "for it (%s); the node allows others in %s (\"%s\")%s",
				   key, path, list, trust_settings_path(), a->key,
				   settings.missing ? ", a file that does not exist" : "");
	}
	snprintf(rel, size, "%s", norm[best_len] == '/' ? norm + best_len + 1 : "");
	*ret_root = best;
	return 0;
}

int trust_path_check(enum trust_area area, const char *key, const char *path,
		     struct cni_err *err)
{
	char rel[PATH_MAX];
	const char *root;

	return locate(area, key, path, &root, rel, sizeof(rel), err);
}

/* What an open beneath the area's directory returned, as the CNI error it is. */
static int open_err(int r, const char *key, const char *path, const char *root,
		    struct cni_err *err)
{
	switch (r) {
	case -ENOENT:
		return r;
	case -ELOOP:
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "%s \"%.256s\": a symbolic link is on the way (none is followed "
				   "below %s)", key, path, root);
	case -EISDIR:
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "%s \"%.256s\" is not a regular file but a directory", key, path);
	case -ENOTDIR:
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "%s \"%.256s\": a component on the way is not a directory", key, path);
	case -EINVAL:
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "%s \"%.256s\" is not a regular file", key, path);
	default:
		return cni_err_set(err, CNI_ERR_IO, r, "%s \"%.256s\": %s", key, path, strerror(-r));
	}
}

static int root_open(const char *root, mode_t create_mode, int *ret_fd)
{
	char probe[PATH_MAX + 2];
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	/* The area's own directory is the node's: made as named, links and all. */
	if (fd < 0 && errno == ENOENT && create_mode) {
		int r;

		snprintf(probe, sizeof(probe), "%s/x", strcmp(root, "/") == 0 ? "" : root);
		r = file_make_parents(probe, create_mode);
		if (r < 0)
			return r;
		fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

/*
 * The allowed root a file path lies beneath, opened, and the path relative to it: what
 * opening a file of an area starts with. A path that is the root itself names no file.
 * Return: 0, or the error already filled (-errno with @root_fd unset).
 */
static int file_root(enum trust_area area, const char *key, const char *path, int *root_fd,
		     const char **ret_root, char *rel, size_t rel_size, struct cni_err *err)
{
	int r;

	r = locate(area, key, path, ret_root, rel, rel_size, err);
	if (r < 0)
		return r;
	if (!rel[0])
		return open_err(-EISDIR, key, path, *ret_root, err);
	r = root_open(*ret_root, 0, root_fd);
	return r < 0 ? open_err(r, key, path, *ret_root, err) : 0;
}

int trust_open_file(enum trust_area area, const char *key, const char *path, int flags,
		    mode_t mode, int *ret_fd, struct cni_err *err)
{
	_cleanup_close_ int root_fd = -1;
	char rel[PATH_MAX];
	const char *root;
	int r;

	r = file_root(area, key, path, &root_fd, &root, rel, sizeof(rel), err);
	if (r < 0)
		return r;
	r = file_open_beneath(root_fd, rel, flags, mode, ret_fd);
	return r < 0 ? open_err(r, key, path, root, err) : 0;
}

int trust_open_log(const char *key, const char *path, int *ret_fd, struct cni_err *err)
{
	_cleanup_close_ int root_fd = -1;
	char rel[PATH_MAX];
	const char *root;
	int r;

	r = file_root(TRUST_LOG, key, path, &root_fd, &root, rel, sizeof(rel), err);
	if (r < 0)
		return r;
	r = file_open_marked_beneath(root_fd, rel, TRUST_LOG_MARK, 0600, ret_fd);
	if (r == -EPERM)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "%s \"%.256s\" is a file the plugins did not create (it does not "
				   "start with their mark): a network config may only name a new log "
				   "file or one they created", key, path);
	return r < 0 ? open_err(r, key, path, root, err) : 0;
}

int trust_open_dir_mode(enum trust_area area, const char *key, const char *path,
			mode_t create_mode, int *ret_fd, struct cni_err *err)
{
	_cleanup_close_ int root_fd = -1;
	char rel[PATH_MAX];
	const char *root;
	int r;

	r = locate(area, key, path, &root, rel, sizeof(rel), err);
	if (r < 0)
		return r;
	r = root_open(root, create_mode, &root_fd);
	if (r >= 0)
		r = file_dir_open_beneath(root_fd, rel, create_mode, ret_fd);
	return r < 0 ? open_err(r, key, path, root, err) : 0;
}

int trust_open_dir(enum trust_area area, const char *key, const char *path, bool create,
		   int *ret_fd, struct cni_err *err)
{
	return trust_open_dir_mode(area, key, path, create ? 0700 : 0, ret_fd, err);
}

/* Whether @real (a canonical path) lies at or below @dir or the place @dir's links lead to. */
static bool below(const char *real, const char *dir)
{
	char canon[PATH_MAX];
	const char *d[2] = { dir, realpath(dir, canon) };

	for (size_t i = 0; i < 2; i++) {
		size_t n = d[i] && strcmp(d[i], "/") != 0 ? strlen(d[i]) : 0;

		if (d[i] && strncmp(real, d[i], n) == 0 && (real[n] == '/' || real[n] == '\0'))
			return true;
	}
	return false;
}

int trust_open_file_follow(enum trust_area area, const char *key, const char *path, int *ret_fd,
			   struct cni_err *err)
{
	const struct area *a = &settings.areas[area];
	_cleanup_close_ int pfd = -1;
	char rel[PATH_MAX], real[PATH_MAX], proc[64], list[512];
	const char *root;
	struct stat st;
	ssize_t n;
	int fd, r;

	r = locate(area, key, path, &root, rel, sizeof(rel), err);
	if (r < 0)
		return r;
	/* O_PATH opens nothing: a FIFO or a device is looked at, not opened. */
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0 || fstat(pfd, &st) < 0)
		return open_err(-errno, key, path, root, err);
	if (S_ISDIR(st.st_mode))
		return open_err(-EISDIR, key, path, root, err);
	if (!S_ISREG(st.st_mode))
		return open_err(-EINVAL, key, path, root, err);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	n = readlink(proc, real, sizeof(real) - 1);
	if (n < 0)
		return open_err(-errno, key, path, root, err);
	real[n] = '\0';
	for (size_t i = 0; i < a->n; i++)
		if (below(real, a->dirs[i]))
			goto inside;
	area_list(a, list, sizeof(list));
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
			   "%s \"%.256s\" leads to \"%.256s\", outside the directories a network "
			   "config may name for it (%s); the node allows others in %s (\"%s\")",
			   key, path, real, list, trust_settings_path(), a->key);
inside:
	/* The very file looked at, whatever was renamed over its path since. */
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return open_err(-errno, key, path, root, err);
	*ret_fd = fd;
	return 0;
}

int trust_open_socket(enum trust_area area, const char *key, const char *path, int *ret_fd,
		      struct cni_err *err)
{
	_cleanup_close_ int root_fd = -1, dir_fd = -1;
	char rel[PATH_MAX], *slash;
	const char *root, *name = rel;
	struct stat st;
	int fd, r;

	r = file_root(area, key, path, &root_fd, &root, rel, sizeof(rel), err);
	if (r < 0)
		return r;
	slash = strrchr(rel, '/');
	if (slash) {
		*slash = '\0';
		name = slash + 1;
		r = file_dir_open_beneath(root_fd, rel, 0, &dir_fd);
		if (r < 0)
			return open_err(r, key, path, root, err);
	}
	if (fstatat(slash ? dir_fd : root_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return open_err(-errno, key, path, root, err);
	if (S_ISLNK(st.st_mode))
		return open_err(-ELOOP, key, path, root, err);
	if (!S_ISSOCK(st.st_mode))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ENOTSOCK,
				   "%s \"%.256s\" is not a unix socket", key, path);
	/* O_PATH opens nothing; the check is made again on the object held. */
	fd = openat(slash ? dir_fd : root_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return open_err(-errno, key, path, root, err);
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ENOTSOCK,
				   "%s \"%.256s\" is not a unix socket", key, path);
	}
	*ret_fd = fd;
	return 0;
}
