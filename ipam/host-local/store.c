/* host-local's store: upstream's directory of a file per address, its lock, byte for byte */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cni/conf.h"
#include "common/cni/env.h"
#include "common/cni/trust.h"
#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/log.h"
#include "ipam/host-local/gotext.h"
#include "ipam/host-local/ip.h"
#include "ipam/host-local/range.h"
#include "ipam/host-local/store.h"

/* Upstream's file modes. */
#define DIR_MODE 0755
#define LOCK_MODE 0750
#define FILE_MODE 0600

/*
 * What a file may hold to be an attachment's: a container ID, "\r\n" and an interface
 * name. A file longer than this holds no attachment of ours and is never matched.
 */
#define CONTENT_MAX 4096

/* A directory entry as the store read it under the lock. */
struct entry {
	char *name;
	bool is_ip;           /* the name is an address (upstream's net.ParseIP) */
	struct ip_addr ip;
	bool readable;        /* a regular file that could be read whole */
	char *content;        /* trimmed as Go's strings.TrimSpace does; "" when unreadable */
	bool removed;
};

/* What undo puts back for a last_reserved_ip.N file. */
struct last_saved {
	size_t set;
	bool existed;
	char text[HL_IP_STRLEN + 1];
	size_t len;
};

struct hl_store {
	int dir_fd;
	int lock_fd;
	struct entry *entries;   /* sorted by name, as upstream's walk visits them */
	size_t n_entries;
	char **made;             /* address files this command made, for undo */
	size_t n_made;
	struct last_saved *saved;
	size_t n_saved;
	bool changed;            /* an address file linked or removed: the directory to sync */
};

static void entries_free(struct entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].content);
	}
	free(e);
}

void hl_store_close(struct hl_store *s)
{
	if (!s)
		return;
	/* Closing the descriptor releases the flock. */
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	entries_free(s->entries, s->n_entries);
	for (size_t i = 0; i < s->n_made; i++)
		free(s->made[i]);
	free(s->made);
	free(s->saved);
	free(s);
}

/*
 * The suite's own state is no place for a network's store: a config could otherwise have
 * host-local's files made and removed among nv-ipam's, tuning's or host-device's. Asked
 * of the path as given (repeated slashes aside) before anything is made, and of where
 * the opened dataDir really is before the network's directory is made in it.
 */
static int check_not_ours(const char *dir, const char *network, struct cni_err *err)
{
	static const char *const own = "/run/cni-rdma-plugins";
	struct cni_err ignored = { 0 };
	char path[PATH_MAX];
	size_t o = 0, n = strlen(own);

	for (const char *p = dir; *p && o + 1 < sizeof(path); p++)
		if (*p != '/' || o == 0 || path[o - 1] != '/')
			path[o++] = *p;
	if (o && path[o - 1] == '/')
		o--;
	snprintf(path + o, sizeof(path) - o, "/%s", network);
	if ((strncmp(path, own, n) == 0 && (path[n] == '/' || path[n] == '\0')) ||
	    trust_path_check(TRUST_STATE, "dataDir", path, &ignored) == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "dataDir: the store \"%.256s\" would lie in the state of the suite's "
				   "own plugins", path);
	return 0;
}

/* Where a directory descriptor really is. */
static int fd_path(int fd, char *buf, size_t size)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/*
 * flock() the lock before the deadline. flock() has no timeout and a blocking wait
 * cannot be bounded without a signal: poll, backing off up to 5 ms.
 */
static int lock_take(int fd)
{
	int64_t deadline = clock_mono_us() + (int64_t)HL_LOCK_TIMEOUT_MS * 1000;
	int64_t backoff = 100;

	for (;;) {
		struct timespec ts;
		int64_t left;

		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return -errno;
		left = deadline - clock_mono_us();
		if (left <= 0)
			return -EAGAIN;
		if (backoff > left)
			backoff = left;
		ts = (struct timespec){ .tv_sec = 0, .tv_nsec = (long)backoff * 1000 };
		(void)nanosleep(&ts, NULL);
		if (backoff < 5000)
			backoff *= 2;
	}
}

static int open_lock(struct hl_store *s, const char *path, struct cni_err *err)
{
	struct stat st;
	int r;

	s->lock_fd = openat(s->dir_fd, HL_LOCK_FILE,
			    O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, LOCK_MODE);
	if (s->lock_fd < 0 || fstat(s->lock_fd, &st) < 0)
		return cni_err_set(err, CNI_ERR_IO, -errno, "store %.256s: cannot open its lock: %s",
				   path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return cni_err_set(err, CNI_ERR_IO, -EINVAL,
				   "store %.256s: its lock is not a regular file", path);
	r = lock_take(s->lock_fd);
	if (r == -EAGAIN)
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, r,
				   "store %.256s: its lock is held by another process for more than "
				   "%d s", path, HL_LOCK_TIMEOUT_MS / 1000);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "store %.256s: cannot lock: %s", path,
				   strerror(-r));
	return 0;
}

/* A file's content, as far as an attachment could be in it. */
static void entry_read(int dir_fd, struct entry *e)
{
	char buf[CONTENT_MAX + 1];
	_cleanup_close_ int fd = -1;
	size_t len = 0, n;
	ssize_t got;
	char *t;

	/* No link followed, nothing that blocks: only root writes here, but a FIFO is no file. */
	fd = openat(dir_fd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	/* A regular file reads short only at its end: no second read to see it end. */
	while (len < sizeof(buf)) {
		got = read(fd, buf + len, sizeof(buf) - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return;
		len += (size_t)got;
		if ((size_t)got < sizeof(buf) - (len - (size_t)got))
			break;
	}
	if (len > CONTENT_MAX)
		return;
	t = hl_trim_space(buf, len, &n);
	e->content = strndup(t, n);
	e->readable = e->content != NULL;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static int scan(struct hl_store *s, const char *path, struct cni_err *err)
{
	DIR *d = file_dir_stream(s->dir_fd);
	struct dirent *de;
	size_t cap = 0;
	int r = 0;

	if (!d)
		return cni_err_set(err, CNI_ERR_IO, -errno, "store %.256s: cannot be read: %s", path,
				   strerror(errno));
	while ((errno = 0, de = readdir(d))) {
		struct entry *e;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    de->d_type == DT_DIR)
			continue;
		if (s->n_entries == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct entry *v = realloc(s->entries, ncap * sizeof(*v));

			if (!v) {
				r = -ENOMEM;
				break;
			}
			s->entries = v;
			cap = ncap;
		}
		e = &s->entries[s->n_entries];
		*e = (struct entry){ .name = strdup(de->d_name) };
		if (!e->name) {
			r = -ENOMEM;
			break;
		}
		s->n_entries++;
		e->is_ip = hl_ip_parse(e->name, &e->ip) == 0;
		entry_read(s->dir_fd, e);
	}
	if (!r && errno)
		r = -errno;
	closedir(d);
	if (r == -ENOMEM)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "store %.256s: cannot be read: %s", path,
				   strerror(-r));
	qsort(s->entries, s->n_entries, sizeof(*s->entries), entry_cmp);
	return 0;
}

int hl_store_open(const char *data_dir, const char *network, bool create, struct hl_store **ret,
		  struct cni_err *err)
{
	_cleanup_close_ int data_fd = -1;
	char path[PATH_MAX], real[PATH_MAX];
	struct hl_store *s;
	int r;

	*ret = NULL;
	/* The name is the store's directory: one a filesystem can make, or a config error
	 * (DEL finds no store: nothing can have been stored under it). */
	if (strlen(network) > NAME_MAX && !create)
		return 0;
	if (strlen(network) > NAME_MAX)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ENAMETOOLONG,
				   "network name of %zu bytes: the store's directory in dataDir is named "
				   "by it, and a name holds at most %d", strlen(network), NAME_MAX);
	snprintf(path, sizeof(path), "%s/%s", data_dir, network);
	if ((r = check_not_ours(data_dir, network, err)) < 0)
		return r;
	r = trust_open_dir_mode(TRUST_STATE_ROOT, "dataDir", data_dir, create ? DIR_MODE : 0,
				&data_fd, err);
	if (r == -ENOENT && !create)
		return 0;
	if (r == -ENOENT)
		return cni_err_set(err, CNI_ERR_IO, r, "dataDir \"%.256s\" cannot be made", data_dir);
	if (r < 0)
		return r;
	if ((r = fd_path(data_fd, real, sizeof(real))) < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "dataDir \"%.256s\": %s", data_dir, strerror(-r));
	if ((r = check_not_ours(real, network, err)) < 0)
		return r;
	if (create && mkdirat(data_fd, network, DIR_MODE) == 0) {
		/* The network's directory is named on disk before a lease is linked in it. */
		if (fsync(data_fd) < 0)
			return cni_err_set(err, CNI_ERR_IO, -errno, "mkdir %.256s: sync: %s", path,
					   strerror(errno));
	} else if (create && errno != EEXIST) {
		return cni_err_set(err, CNI_ERR_IO, -errno, "mkdir %.256s: %s", path, strerror(errno));
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	s->lock_fd = -1;
	s->dir_fd = openat(data_fd, network, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0) {
		r = -errno;
		hl_store_close(s);
		if (r == -ENOENT && !create)
			return 0;
		if (r == -ELOOP || r == -ENOTDIR)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
					   "store %.256s: not a directory (no symbolic link is followed)",
					   path);
		return cni_err_set(err, CNI_ERR_IO, r, "store %.256s: %s", path, strerror(-r));
	}
	if ((r = open_lock(s, path, err)) < 0 || (r = scan(s, path, err)) < 0) {
		hl_store_close(s);
		return r;
	}
	*ret = s;
	return 0;
}

static struct entry *find_entry(const struct hl_store *s, const char *name)
{
	struct entry key = { .name = (char *)name };

	return bsearch(&key, s->entries, s->n_entries, sizeof(*s->entries), entry_cmp);
}

/* A new entry, kept in name order. */
static int add_entry(struct hl_store *s, const char *name, const struct ip_addr *ip,
		     const char *content)
{
	struct entry *v = realloc(s->entries, (s->n_entries + 1) * sizeof(*v));
	struct entry e = { .is_ip = true, .ip = *ip, .readable = true };
	size_t at = 0;

	if (!v)
		return -ENOMEM;
	s->entries = v;
	e.name = strdup(name);
	e.content = strdup(content);
	if (!e.name || !e.content) {
		free(e.name);
		free(e.content);
		return -ENOMEM;
	}
	while (at < s->n_entries && strcmp(s->entries[at].name, name) < 0)
		at++;
	memmove(&s->entries[at + 1], &s->entries[at], (s->n_entries - at) * sizeof(*v));
	s->entries[at] = e;
	s->n_entries++;
	return 0;
}

/*
 * The file made whole before it has its name: unnamed (O_TMPFILE) and linked, or, where
 * the filesystem has no unnamed files, under a temporary name linked and removed. Either
 * link fails with EEXIST when the address is taken, as upstream's O_EXCL create does.
 */
static int write_new(int dir_fd, const char *name, const char *content, size_t len)
{
	char proc[64], tmp[NAME_MAX + 1];
	_cleanup_close_ int fd = -1;
	bool named = false;
	int r = 0;

	fd = openat(dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, FILE_MODE);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		snprintf(tmp, sizeof(tmp), "%s.tmp.%d", name, (int)getpid());
		(void)unlinkat(dir_fd, tmp, 0);
		fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    FILE_MODE);
		named = true;
	}
	if (fd < 0)
		return -errno;
	if (file_pwrite_all(fd, content, len, 0) < 0) {
		r = -errno;
		goto out;
	}
	/* Its bytes reach the disk before its name can: after a power loss a name that
	 * survived never holds a torn or empty file (upstream syncs nothing). */
	if (fsync(fd) < 0) {
		r = -errno;
		goto out;
	}
	if (named) {
		r = linkat(dir_fd, tmp, dir_fd, name, 0) < 0 ? -errno : 0;
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		r = linkat(AT_FDCWD, proc, dir_fd, name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
	}
out:
	if (named)
		(void)unlinkat(dir_fd, tmp, 0);
	return r;
}

static int last_name(size_t set, char *buf, size_t size)
{
	return snprintf(buf, size, HL_LAST_RESERVED_PREFIX "%zu", set);
}

/* The bytes of last_reserved_ip.N as they are: -ENOENT when there is none. */
static int last_read(const struct hl_store *s, size_t set, char *buf, size_t size, size_t *ret_len)
{
	char name[64];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	last_name(set, name, sizeof(name));
	fd = openat(s->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size);
	if (n < 0)
		return -errno;
	*ret_len = (size_t)n;
	return 0;
}

bool hl_store_last_reserved(struct hl_store *s, size_t set, struct ip_addr *ret)
{
	char buf[HL_IP_STRLEN + 1];
	size_t n;

	/* No trimming: upstream's net.ParseIP() of the bytes, a newline makes it none. */
	if (last_read(s, set, buf, sizeof(buf), &n) < 0 || n >= sizeof(buf))
		return false;
	buf[n] = '\0';
	return strlen(buf) == n && hl_ip_parse(buf, ret) == 0;
}

/*
 * Written over in place and cut to its length, not truncated first: ext4 flushes a file
 * truncated to zero and rewritten when it is closed (auto_da_alloc), a disk write per ADD.
 * A process killed between the two leaves an address with a tail, which upstream and ours
 * read as none: round-robin starts over from the set's start, nothing is handed out twice.
 */
static int last_write(struct hl_store *s, size_t set, const char *text, size_t len)
{
	char name[64];
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	last_name(set, name, sizeof(name));
	fd = openat(s->dir_fd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, FILE_MODE);
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	r = file_pwrite_all(fd, text, len, 0);
	if (r >= 0 && st.st_size > (off_t)len && ftruncate(fd, (off_t)len) < 0)
		r = -errno;
	return r;
}

/* The old content of last_reserved_ip.N, kept once per command for undo. */
static int last_save(struct hl_store *s, size_t set)
{
	struct last_saved *v, *l;
	int r;

	for (size_t i = 0; i < s->n_saved; i++)
		if (s->saved[i].set == set)
			return 0;
	v = realloc(s->saved, (s->n_saved + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->saved = v;
	l = &v[s->n_saved];
	*l = (struct last_saved){ .set = set };
	r = last_read(s, set, l->text, sizeof(l->text), &l->len);
	if (r < 0 && r != -ENOENT)
		return r;
	l->existed = r == 0;
	s->n_saved++;
	return 0;
}

int hl_store_reserve(struct hl_store *s, const char *id, const char *ifname,
		     const struct ip_addr *ip, size_t set, bool *ret_reserved, struct cni_err *err)
{
	char name[HL_IP_STRLEN], content[CONTENT_MAX + 1];
	char **made;
	int len, r;

	*ret_reserved = false;
	hl_ip_format(ip, name);
	/* Known taken: no system call. The link below is what decides, though. */
	if (find_entry(s, name))
		return 0;
	len = snprintf(content, sizeof(content), "%s\r\n%s", id, ifname);
	if (len < 0 || (size_t)len >= sizeof(content))
		return cni_err_set(err, CNI_ERR_INVALID_ENV, -ENAMETOOLONG,
				   "container ID too long for the store");
	made = realloc(s->made, (s->n_made + 1) * sizeof(*made));
	if (!made)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	s->made = made;
	if ((r = last_save(s, set)) < 0)
		return cni_err_set(err, r == -ENOMEM ? CNI_ERR_INTERNAL : CNI_ERR_IO, r,
				   "store: cannot read " HL_LAST_RESERVED_PREFIX "%zu: %s", set,
				   strerror(-r));
	r = write_new(s->dir_fd, name, content, (size_t)len);
	if (r == -EEXIST)
		return 0;
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "store: cannot write %s: %s", name, strerror(-r));
	s->made[s->n_made] = strdup(name);
	if (!s->made[s->n_made] || add_entry(s, name, ip, content) < 0) {
		free(s->made[s->n_made]);
		(void)unlinkat(s->dir_fd, name, 0);
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	s->n_made++;
	s->changed = true;
	r = last_write(s, set, name, strlen(name));
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r,
				   "store: cannot write " HL_LAST_RESERVED_PREFIX "%zu: %s", set,
				   strerror(-r));
	*ret_reserved = true;
	return 0;
}

/* Whether trimmed content is "<id>\r\n<ifname>" (@old: the container ID alone). */
static bool holds(const struct entry *e, const char *id, const char *ifname, bool old)
{
	size_t n = strlen(id);

	if (!e->readable || e->removed || strncmp(e->content, id, n) != 0)
		return false;
	if (old)
		return e->content[n] == '\0';
	return e->content[n] == '\r' && e->content[n + 1] == '\n' &&
	       strcmp(e->content + n + 2, ifname) == 0;
}

bool hl_store_owned_in(const struct hl_store *s, const char *id, const char *ifname,
		       const struct hl_range_set *set, struct ip_addr *ret)
{
	for (size_t i = 0; i < s->n_entries; i++) {
		const struct entry *e = &s->entries[i];

		if (!e->is_ip || !(holds(e, id, ifname, false) || holds(e, id, ifname, true)))
			continue;
		if (hl_range_set_find(set, &e->ip)) {
			*ret = e->ip;
			return true;
		}
	}
	return false;
}

bool hl_store_find(const struct hl_store *s, const char *id, const char *ifname)
{
	for (int old = 0; old < 2; old++)
		for (size_t i = 0; i < s->n_entries; i++)
			if (holds(&s->entries[i], id, ifname, old))
				return true;
	return false;
}

static int entry_remove(struct hl_store *s, struct entry *e, struct cni_err *err)
{
	if (unlinkat(s->dir_fd, e->name, 0) < 0 && errno != ENOENT)
		return cni_err_set(err, CNI_ERR_IO, -errno, "store: cannot remove %.64s: %s", e->name,
				   strerror(errno));
	e->removed = true;
	s->changed = true;
	return 0;
}

int hl_store_commit(struct hl_store *s, struct cni_err *err)
{
	if (!s || !s->changed)
		return 0;
	if (fsync(s->dir_fd) < 0)
		return cni_err_set(err, CNI_ERR_IO, -errno, "store: cannot sync its directory: %s",
				   strerror(errno));
	s->changed = false;
	return 0;
}

int hl_store_release(struct hl_store *s, const char *id, const char *ifname, size_t n_sets,
		     size_t *ret_n, struct cni_err *err)
{
	bool found = false;
	size_t n = 0;
	int r;

	*ret_n = 0;
	if (!s)
		return 0;
	/*
	 * Upstream releases once per range set: the files of "<id>\r\n<ifname>", or when
	 * there are none those of the container ID alone; a second set's pass then finds
	 * only the latter.
	 */
	for (size_t i = 0; i < s->n_entries; i++)
		found |= holds(&s->entries[i], id, ifname, false);
	for (int old = 0; old < 2; old++) {
		if ((old && found && n_sets < 2) || (!old && !found))
			continue;
		for (size_t i = 0; i < s->n_entries; i++) {
			if (!holds(&s->entries[i], id, ifname, old))
				continue;
			if ((r = entry_remove(s, &s->entries[i], err)) < 0)
				return r;
			n++;
		}
	}
	*ret_n = n;
	return 0;
}

static bool valid_holds(const struct entry *e, const struct cni_attachment *valid, size_t n_valid)
{
	for (size_t i = 0; i < n_valid; i++)
		if (holds(e, valid[i].container_id, valid[i].ifname, false) ||
		    holds(e, valid[i].container_id, valid[i].ifname, true))
			return true;
	return false;
}

/*
 * What an address file may hold: "<id>\r\n<ifname>", the ID alone (older upstream), or
 * nothing (an upstream ADD killed between creating and writing it, under the lock).
 */
static bool is_attachment(const char *content)
{
	_cleanup_free_ char *id = NULL;
	const char *nl = strstr(content, "\r\n");

	if (!*content)
		return true;
	id = strndup(content, nl ? (size_t)(nl - content) : strlen(content));
	return id && cni_env_valid_id(id) && (!nl || !cni_env_ifname_invalid(nl + 2));
}

int hl_store_gc(struct hl_store *s, const struct cni_attachment *valid, size_t n_valid,
		size_t *ret_n, struct cni_err *err)
{
	size_t n = 0;
	int r;

	*ret_n = 0;
	for (size_t i = 0; s && i < s->n_entries; i++) {
		struct entry *e = &s->entries[i];
		const char *nl;

		if (!e->is_ip || !e->readable || e->removed || valid_holds(e, valid, n_valid))
			continue;
		if (!is_attachment(e->content)) {
			log_warning("GC: %s holds no attachment; left alone", e->name);
			continue;
		}
		nl = strstr(e->content, "\r\n");
		log_info("GC: releasing %s (%.*s)", e->name, nl ? (int)(nl - e->content) : 256,
			 e->content[0] ? e->content : "empty");
		if ((r = entry_remove(s, e, err)) < 0)
			return r;
		n++;
	}
	*ret_n = n;
	return 0;
}

size_t hl_store_count_in(const struct hl_store *s, const struct hl_range_set *set)
{
	size_t n = 0;

	for (size_t i = 0; s && i < s->n_entries; i++)
		if (s->entries[i].is_ip && !s->entries[i].removed &&
		    hl_range_set_find(set, &s->entries[i].ip))
			n++;
	return n;
}

void hl_store_undo(struct hl_store *s)
{
	for (size_t i = s->n_made; i-- > 0;)
		if (unlinkat(s->dir_fd, s->made[i], 0) < 0 && errno != ENOENT)
			log_error("undo: cannot remove %s: %s", s->made[i], strerror(errno));
	for (size_t i = s->n_saved; i-- > 0;) {
		const struct last_saved *l = &s->saved[i];
		char name[64];
		int r;

		last_name(l->set, name, sizeof(name));
		if (l->existed)
			r = last_write(s, l->set, l->text, l->len);
		else
			r = unlinkat(s->dir_fd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
		if (r < 0)
			log_error("undo: cannot restore %s: %s", name, strerror(-r));
	}
}
