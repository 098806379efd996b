/* The store on disk: its directory, the node and pool locks, reading and writing the files */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cni/trust.h"
#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/private.h"

#define LOCK_BACKOFF_MAX_MS 5

void store_disk_set_deadline(struct nvipam_store *s, unsigned int timeout_ms)
{
	s->timeout_ms = timeout_ms;
	s->deadline_us = clock_mono_us() + (int64_t)timeout_ms * 1000;
}

/*
 * flock() @op on @fd before s->deadline_us. flock() has no timeout and a blocking
 * wait cannot be bounded without a signal: poll, backing off up to 5 ms.
 * Return: 0, -EAGAIN when the deadline passed, another negative errno.
 */
static int lock_wait(const struct nvipam_store *s, int fd, int op)
{
	int64_t backoff_us = 1000;

	for (;;) {
		struct timespec ts;
		int64_t left, us;

		if (flock(fd, op | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return -errno;
		left = s->deadline_us - clock_mono_us();
		if (left <= 0)
			return -EAGAIN;
		us = backoff_us < left ? backoff_us : left;
		ts = (struct timespec){ .tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000 };
		(void)nanosleep(&ts, NULL);
		if (backoff_us < LOCK_BACKOFF_MAX_MS * 1000)
			backoff_us += 1000;
	}
}

/* Open (creating) a lock file in @dirfd; a link planted in its place is refused. */
static int lock_open(int dirfd, const char *name, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = openat(dirfd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

static const char *lock_why(int r)
{
	return r == -ELOOP ? "it is a symbolic link" : r == -EINVAL ? "not a regular file" : strerror(-r);
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/*
 * A store named like one of another store's files would replace its lock (two
 * processes then allocate at once), its counts or its logs; one inside another
 * store's pool directory plants what that store cannot read. Whoever set the
 * path, neither is a store. Checked on the name, before anything is created.
 */
static int store_path_check(const char *path, struct cni_err *err)
{
	static const char *const own_suffixes[] = { ".lock", ".gc", ".d", ".log", ".snap",
						     ".handed-over", ".adopted", ".owner" };
	const char *name = strrchr(path, '/') + 1;
	size_t len = strlen(name);

	for (size_t i = 0; i < ARRAY_SIZE(own_suffixes); i++)
		if (ends_with(name, len, own_suffixes[i]))
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "store file %s: a store's name may not end in \"%s\" (the "
					   "name of a store's own file)", path, own_suffixes[i]);
	if (strstr(name, ".tmp."))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "store file %s: a store's name may not hold \".tmp.\" (the name "
				   "of a store's temporary file)", path);
	/* Each "<dir>/<x>.d" on the way that has a store "<dir>/<x>" beside it is its pool
	 * directory (the store file, or its lock for a store not yet written). */
	for (const char *end = name - 1; end > path; end = memrchr(path, '/', (size_t)(end - path))) {
		char sibling[4096];
		struct stat st;
		int n;

		if (!ends_with(path, (size_t)(end - path), ".d"))
			continue;
		for (size_t k = 0; k < 2; k++) {
			n = snprintf(sibling, sizeof(sibling), "%.*s%s", (int)(end - path - 2), path,
				     k ? ".lock" : "");
			if (n > 0 && (size_t)n < sizeof(sibling) && lstat(sibling, &st) == 0 &&
			    S_ISREG(st.st_mode))
				return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
						   "store file %s lies in the pool directory of the "
						   "store %.*s", path, (int)(end - path - 2), path);
		}
	}
	return 0;
}

int store_disk_open_dir(struct nvipam_store *s, bool confined, struct cni_err *err)
{
	_cleanup_free_ char *dir = strdup(s->path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	struct stat st;
	int r;

	if (!dir)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (!slash || !slash[1])
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "store file %s: must be an absolute path to a file", s->path);
	r = store_path_check(s->path, err);
	if (r < 0)
		return r;
	s->name = s->path + (slash - dir) + 1;
	if (slash == dir)
		slash++;
	*slash = '\0';
	/*
	 * A path from a network config is opened beneath the node's state directory
	 * (trust.h), created when missing; the operator's own path as it is named.
	 * Either way only root may be able to change what the directory holds, or
	 * anyone who can would decide what root reads, writes and removes there.
	 */
	if (confined) {
		r = trust_open_dir(TRUST_STATE, "storeFile", dir, true, &s->dir_fd, err);
		if (r == -ENOENT)
			return cni_err_set(err, CNI_ERR_IO, r, "cannot open the directory of store %s: %s",
					   s->path, strerror(-r));
		if (r < 0)
			return r;
	} else {
		s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (s->dir_fd < 0)
			return cni_err_set(err, CNI_ERR_IO, -errno, "cannot open the directory of store %s: %s",
					   s->path, strerror(errno));
	}
	r = file_dir_check_private(s->dir_fd);
	if (r == -EPERM && fstat(s->dir_fd, &st) == 0)
		return cni_err_set(err, CNI_ERR_IO, r,
				   "store directory %s is not safe: it must be owned by root and "
				   "writable by no one else (owner uid %u, mode %04o)", dir,
				   (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777));
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot check store directory %s: %s", dir,
				   strerror(-r));
	return 0;
}

int store_disk_lock_node(struct nvipam_store *s, bool exclusive, struct cni_err *err)
{
	_cleanup_free_ char *name = NULL;
	int r;

	if (s->lock_fd < 0) {
		if (asprintf(&name, "%s.lock", s->name) < 0) {
			name = NULL;
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		}
		r = lock_open(s->dir_fd, name, &s->lock_fd);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_IO, r, "cannot open store lock %s.lock: %s", s->path,
					   lock_why(r));
	}
	r = lock_wait(s, s->lock_fd, exclusive ? LOCK_EX : LOCK_SH);
	if (r == -EAGAIN)
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, r,
				   "store %s is locked by another process (waited %u ms)", s->path,
				   s->timeout_ms);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot lock %s.lock: %s", s->path, strerror(-r));
	return 0;
}

void store_disk_unlock_node(struct nvipam_store *s)
{
	if (s->lock_fd >= 0)
		(void)flock(s->lock_fd, LOCK_UN);
}

void store_disk_unlock_pool(struct store_pool_disk *d)
{
	if (d->lock_fd >= 0)
		(void)flock(d->lock_fd, LOCK_UN);
}

int store_disk_pool_dir(struct nvipam_store *s, bool create, struct cni_err *err)
{
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (s->pool_dir_fd >= 0)
		return 0;
	if (asprintf(&name, "%s.d", s->name) < 0) {
		name = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	r = file_dir_open_beneath(s->dir_fd, name, 0, &fd);
	if (r == -ENOENT && create) {
		if (mkdirat(s->dir_fd, name, 0700) < 0 && errno != EEXIST)
			return cni_err_set(err, CNI_ERR_IO, -errno, "cannot create %s.d: %s", s->path,
					   strerror(errno));
		/* The new name must outlive a crash as the logs in it do. */
		if (fsync(s->dir_fd) < 0)
			return cni_err_set(err, CNI_ERR_IO, -errno, "cannot sync the directory of %s: %s",
					   s->path, strerror(errno));
		r = file_dir_open_beneath(s->dir_fd, name, 0, &fd);
	}
	if (r == -ENOENT && !create)
		return r;
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot open %s.d: %s", s->path,
				   r == -ELOOP ? "it is a symbolic link" :
				   r == -ENOTDIR ? "not a directory" : strerror(-r));
	r = file_dir_check_private(fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r,
				   "%s.d is not safe: it must be owned by root and writable by no one else",
				   s->path);
	s->pool_dir_fd = TAKE_FD(fd);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && strcmp(s + n - k, suffix) == 0;
}

int store_disk_list(struct nvipam_store *s, char ***ret, size_t *ret_n, struct cni_err *err)
{
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d = file_dir_stream(s->pool_dir_fd);
	int r = 0;

	if (!d)
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot read %s.d: %s", s->path, strerror(errno));
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char *stem;

		if (!has_suffix(e->d_name, ".log") || len - 4 >= STORE_FORMAT_STEM_MAX)
			continue;
		if (n == cap) {
			char **nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));

			if (!nv) {
				r = -ENOMEM;
				break;
			}
			v = nv;
		}
		stem = strndup(e->d_name, len - 4);
		if (!stem) {
			r = -ENOMEM;
			break;
		}
		v[n++] = stem;
	}
	closedir(d);
	if (r < 0) {
		while (n)
			free(v[--n]);
		free(v);
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*ret = v;
	*ret_n = n;
	return 0;
}

int store_disk_lock_pool(struct nvipam_store *s, struct store_pool_disk *d, struct cni_err *err)
{
	char name[STORE_FORMAT_STEM_MAX + 8];
	int r;

	snprintf(name, sizeof(name), "%s.lock", d->stem);
	r = lock_open(s->pool_dir_fd, name, &d->lock_fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot open pool lock %s.d/%s: %s", s->path, name,
				   lock_why(r));
	r = lock_wait(s, d->lock_fd, LOCK_EX);
	if (r == -EAGAIN)
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, r,
				   "pool log %s.d/%s.log is locked by another process (waited %u ms)",
				   s->path, d->stem, s->timeout_ms);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot lock %s.d/%s: %s", s->path, name,
				   strerror(-r));
	return 0;
}

/*
 * A file of the pool directory, opened as file_open_beneath() opens one (never through a
 * link, never blocking, a regular file only) in two system calls, not six: a DEL opens two
 * files in each pool of the node. A pool file's name is one component (a stem and its
 * suffix), so there is no path to walk; the directory is root's and writable by no one
 * else (store_disk_pool_dir() checks it): no one else puts a device there for an open to
 * touch, and O_NONBLOCK keeps a FIFO from blocking until fstat() refuses it.
 */
static int open_pool_file(const struct nvipam_store *s, const char *name, int flags, int *ret_fd,
			  struct stat *st)
{
	_cleanup_close_ int fd = openat(s->pool_dir_fd, name,
					flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0)
		return -errno;
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int store_disk_open_log(struct nvipam_store *s, struct store_pool_disk *d, struct cni_err *err)
{
	char name[STORE_FORMAT_STEM_MAX + 8];
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	snprintf(name, sizeof(name), "%s.log", d->stem);
	d->file_len = 0;
	r = open_pool_file(s, name, O_RDWR, &fd, &st);
	if (r == -ENOENT) {
		d->log_fd = -1;
		return 0;
	}
	if (r == -ELOOP || r == -EISDIR || r == -EINVAL)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read pool log %s.d/%s: not a regular file",
				   s->path, name);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read pool log %s.d/%s: %s", s->path, name,
				   strerror(-r));
	if ((unsigned long long)st.st_size > STORE_DISK_MAX_BYTES)
		return cni_err_set(err, CNI_ERR_IO, -EFBIG, "pool log %s.d/%s is corrupt: larger than %u bytes",
				   s->path, name, STORE_DISK_MAX_BYTES);
	d->file_len = (size_t)st.st_size;
	d->log_fd = TAKE_FD(fd);
	return 0;
}

int store_disk_read_log(struct nvipam_store *s, struct store_pool_disk *d, size_t off, size_t len,
			char **ret, struct cni_err *err)
{
	char *buf = malloc(len + 1);
	size_t got = 0;

	if (!buf)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	while (got < len) {
		ssize_t n = pread(d->log_fd, buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;

			free(buf);
			return cni_err_set(err, CNI_ERR_IO, -e, "cannot read pool log %s.d/%s.log: %s",
					   s->path, d->stem, n < 0 ? strerror(e) : "shorter than it was");
		}
		got += (size_t)n;
	}
	buf[len] = '\0';
	*ret = buf;
	return 0;
}

int store_disk_map_snap(struct nvipam_store *s, struct store_pool_disk *d)
{
	char name[STORE_FORMAT_STEM_MAX + 8];
	_cleanup_close_ int fd = -1;
	struct stat st;
	void *map;
	int r;

	snprintf(name, sizeof(name), "%s.snap", d->stem);
	r = open_pool_file(s, name, O_RDONLY, &fd, &st);
	if (r < 0)
		return r;
	if (st.st_size == 0 || (unsigned long long)st.st_size > STORE_DISK_MAX_BYTES)
		return -EINVAL;
	/* Only ever replaced by rename, never changed in place: the mapping stays as it was. */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	/*
	 * A lookup reads a few scattered blocks: without this, each page it touches maps the
	 * 15 around it too, and letting go of the mapping unmaps them all (a DEL maps every
	 * pool's snapshot). Only advice: ignored, it costs time, not correctness.
	 */
	(void)madvise(map, (size_t)st.st_size, MADV_RANDOM);
	d->snap = map;
	d->snap_len = (size_t)st.st_size;
	return 0;
}

void store_disk_unmap_snap(struct store_pool_disk *d)
{
	if (d->snap)
		(void)munmap((void *)d->snap, d->snap_len);
	d->snap = NULL;
	d->snap_len = 0;
}

int store_disk_write_snap(struct nvipam_store *s, struct store_pool_disk *d, const char *data,
			  size_t len)
{
	char name[STORE_FORMAT_STEM_MAX + 8], tmp[STORE_FORMAT_STEM_MAX + 40];
	_cleanup_close_ int fd = -1;
	int r;

	snprintf(name, sizeof(name), "%s.snap", d->stem);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", name, (long)getpid());
	(void)unlinkat(s->pool_dir_fd, tmp, 0);
	fd = openat(s->pool_dir_fd, tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	r = file_pwrite_all(fd, data, len, 0);
	if (r >= 0 && renameat(s->pool_dir_fd, tmp, s->pool_dir_fd, name) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(s->pool_dir_fd, tmp, 0);
	return r;
}

int store_disk_append(struct nvipam_store *s, struct store_pool_disk *d, const char *data,
		      size_t len, bool sync, struct cni_err *err)
{
	char name[STORE_FORMAT_STEM_MAX + 8];
	const char *step = "create";
	bool created = false;
	int r = 0;

	snprintf(name, sizeof(name), "%s.log", d->stem);
	if (d->log_fd < 0) {
		/* Nobody else writes this pool: a log appearing meanwhile would be an error. */
		d->log_fd = openat(s->pool_dir_fd, name,
				   O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
		if (d->log_fd < 0)
			return cni_err_set(err, CNI_ERR_IO, -errno, "cannot write pool log %s.d/%s: %s: %s",
					   s->path, name, step, strerror(errno));
		created = true;
		d->good_len = d->file_len = 0;
	}
	/* A torn line is cut first: what follows a complete line must be a complete line. */
	step = "truncate";
	if (d->file_len > d->good_len && ftruncate(d->log_fd, (off_t)d->good_len) < 0)
		r = -errno;
	if (r >= 0) {
		d->file_len = d->good_len;
		step = "write";
		r = file_pwrite_all(d->log_fd, data, len, (off_t)d->good_len);
	}
	if (r >= 0 && sync) {
		step = "sync";
		r = fdatasync(d->log_fd) < 0 ? -errno : 0;
	}
	if (r >= 0 && created) {
		step = "sync directory";
		r = fsync(s->pool_dir_fd) < 0 ? -errno : 0;
	}
	if (r < 0) {
		/* Leave the log as it was; a failure here leaves a torn line, cut next time. */
		if (ftruncate(d->log_fd, (off_t)d->good_len) < 0)
			d->file_len = d->good_len + len;
		return cni_err_set(err, CNI_ERR_IO, r, "cannot write pool log %s.d/%s: %s: %s", s->path,
				   name, step, strerror(-r));
	}
	d->good_len += len;
	d->file_len = d->good_len;
	return 0;
}

int store_disk_rewrite(struct nvipam_store *s, struct store_pool_disk *d, const char *data,
		       size_t len, struct cni_err *err)
{
	char name[STORE_FORMAT_STEM_MAX + 8];
	const char *step = "create";
	int fd = -1, r;

	snprintf(name, sizeof(name), "%s.log", d->stem);
	r = file_write_atomic_at(s->pool_dir_fd, name, data, len, 0600, &step);
	if (r < 0 && strcmp(step, "sync directory") != 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot write pool log %s.d/%s: %s: %s", s->path,
				   name, step, strerror(-r));
	/* From here on the new log is in place, whatever the directory sync said. */
	if (d->log_fd >= 0)
		(void)close(d->log_fd);
	d->log_fd = -1;
	d->good_len = d->file_len = len;
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r,
				   "pool log %s.d/%s was replaced but its directory could not be synced: %s",
				   s->path, name, strerror(-r));
	r = file_open_beneath(s->pool_dir_fd, name, O_RDWR, 0, &fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot open pool log %s.d/%s: %s", s->path, name,
				   strerror(-r));
	d->log_fd = fd;
	return 0;
}

int store_disk_remove_log(struct nvipam_store *s, const char *stem, struct cni_err *err)
{
	char name[STORE_FORMAT_STEM_MAX + 8];

	snprintf(name, sizeof(name), "%s.snap", stem);
	(void)unlinkat(s->pool_dir_fd, name, 0);
	snprintf(name, sizeof(name), "%s.log", stem);
	if (unlinkat(s->pool_dir_fd, name, 0) < 0 && errno != ENOENT)
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot remove pool log %s.d/%s: %s", s->path,
				   name, strerror(errno));
	return 0;
}

int store_disk_read_file(struct nvipam_store *s, char **ret, size_t *ret_len, struct cni_err *err)
{
	int r = file_read_at(s->dir_fd, s->name, STORE_DISK_MAX_BYTES, ret, ret_len);

	if (r == -ENOENT) {
		*ret = NULL;
		*ret_len = 0;
		return 0;
	}
	if (r == -EISDIR || r == -EINVAL || r == -ELOOP)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read store file %s: not a regular file",
				   s->path);
	if (r == -EFBIG)
		return cni_err_set(err, CNI_ERR_IO, r, "store file %s is corrupt: larger than %u bytes",
				   s->path, STORE_DISK_MAX_BYTES);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read store file %s: %s", s->path,
				   strerror(-r));
	return 0;
}

int store_disk_write_file(struct nvipam_store *s, const char *data, size_t len,
			  struct cni_err *err)
{
	const char *step = "create";
	int r;

	/* Under the exclusive lock: a temporary file with our name is a dead writer's. */
	r = file_write_atomic_at(s->dir_fd, s->name, data, len, 0600, &step);
	if (r < 0 && strcmp(step, "sync directory") != 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot write store file %s: %s: %s", s->path,
				   step, strerror(-r));
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r,
				   "store file %s was replaced but its directory could not be synced: %s",
				   s->path, strerror(-r));
	return 0;
}

void store_disk_sweep_pool(struct nvipam_store *s, const struct store_pool_disk *d)
{
	char log[STORE_FORMAT_STEM_MAX + 8], snap[STORE_FORMAT_STEM_MAX + 8];
	const char *const names[] = { log, snap };

	snprintf(log, sizeof(log), "%s.log", d->stem);
	snprintf(snap, sizeof(snap), "%s.snap", d->stem);
	file_sweep_temps_of(s->pool_dir_fd, names, 2);
}

void store_disk_sweep(struct nvipam_store *s)
{
	file_sweep_temps_at(s->dir_fd, s->name);
	if (s->pool_dir_fd >= 0)
		file_sweep_temps_at(s->pool_dir_fd, NULL);
}

void store_disk_drop_base(struct store_pool_disk *d)
{
	if (!d->base)
		return;
	store_snap_free(&d->base->snap);
	free(d->base->gone);
	free(d->base);
	d->base = NULL;
}

void store_disk_close(struct store_pool_disk *d)
{
	if (!d)
		return;
	if (d->log_fd >= 0)
		(void)close(d->log_fd);
	if (d->lock_fd >= 0)
		(void)close(d->lock_fd); /* releases the flock */
	store_disk_drop_base(d);
	store_disk_unmap_snap(d);
	free(d->data);
	free(d->old_data);
	free(d->queue);
	*d = (struct store_pool_disk){ .lock_fd = -1, .log_fd = -1 };
}
