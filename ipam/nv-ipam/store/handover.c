/* The store's boundary with the reference nv-ipam node daemon: who may allocate, handing over, taking back */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/log.h"
#include "common/util/rfc3339.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/commit.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/handover.h"
#include "ipam/nv-ipam/store/migrate.h"
#include "ipam/nv-ipam/store/private.h"
#include "ipam/nv-ipam/store/store.h"

#define MARKER_MAX_BYTES 4096

static void marker_name(const struct nvipam_store *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s" STORE_HANDOVER_SUFFIX, s->name);
}

uint32_t store_handover_marker_sum(const char *data)
{
	const char *line = strstr(data, "\nchecksum ");
	unsigned long long v;

	if (line && sscanf(line, "\nchecksum %llu", &v) == 1 && v <= UINT32_MAX)
		return (uint32_t)v;
	return 0;
}

bool store_handover_marker(const struct nvipam_store *s, uint32_t *ret_sum)
{
	char at[RFC3339_STRLEN];

	return store_handover_marker_read(s, ret_sum, at);
}

/* The store's directory as a path, for messages: @path up to its last "/". */
static int dir_len(const struct nvipam_store *s)
{
	const char *slash = strrchr(s->path, '/');

	return slash ? (int)(slash - s->path) : 1;
}

int store_handover_daemon(const struct nvipam_store *s, struct cni_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -errno, "cannot make a socket: %s",
				   strerror(errno));
	/* Through the directory already opened: no path game between the check and the connect. */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/" STORE_HANDOVER_DAEMON_SOCKET,
		 s->dir_fd);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN ||
	    errno == EINPROGRESS)
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, -EBUSY,
				   "the reference nv-ipam node daemon answers on %.*s/"
				   STORE_HANDOVER_DAEMON_SOCKET ": nv-ipam takes its store %s over "
				   "once it has stopped", dir_len(s), s->path, s->path);
	/* Refused (a socket left by a daemon that is gone), missing, or not a socket. */
	return 0;
}

/* The daemon's lock: a flock on the store file, kept by @s until close. */
static int lock_file(struct nvipam_store *s, struct cni_err *err)
{
	_cleanup_close_ int fd = openat(s->dir_fd, s->name,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat now, held;

	if (fd < 0)
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot open store file %s: %s", s->path,
				   strerror(errno));
	if (fstat(fd, &now) < 0)
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot read store file %s: %s", s->path,
				   strerror(errno));
	/* Read again after the node lock changed hands: the same file is locked already. */
	if (s->file_lock_fd >= 0 && fstat(s->file_lock_fd, &held) == 0 && held.st_dev == now.st_dev &&
	    held.st_ino == now.st_ino)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			return cni_err_set(err, CNI_ERR_TRY_AGAIN, -EBUSY,
					   "another process holds the lock on the reference store file "
					   "%s (the reference nv-ipam node daemon, or ipam-node about to "
					   "take the store over): try again", s->path);
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot lock store file %s: %s", s->path,
				   strerror(errno));
	}
	if (s->file_lock_fd >= 0)
		(void)close(s->file_lock_fd);
	s->file_lock_fd = TAKE_FD(fd);
	return 0;
}

int store_handover_gate(struct nvipam_store *s, enum store_file_kind kind, struct cni_err *err)
{
	uint32_t sum;
	int r;

	if (store_handover_marker(s, &sum))
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, -EBUSY,
				   "store %s was handed over to the reference nv-ipam node daemon "
				   "(%s" STORE_HANDOVER_SUFFIX " is there, written by ipam-node at its "
				   "stop or by nv-ipam-tool handover): ipam-node's start or "
				   "`nv-ipam-tool adopt` takes it back", s->path, s->path);
	if (kind != STORE_FILE_REFERENCE)
		return 0;
	/* Only under the exclusive node lock: nv-ipam processes sharing it would lock each other out. */
	r = s->whole ? lock_file(s, err) : 0;
	return r < 0 ? r : store_handover_daemon(s, err);
}

/* ---- the reference daemon's store file ---- */

struct entry {
	const struct nvipam_alloc *a;
	char *key; /* "<containerID>_<ifName>" */
};

static int cmp_entry(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	int c = strcmp(a->a->pool, b->a->pool);

	return c ? c : strcmp(a->key, b->key);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/*
 * @s with every byte that is not UTF-8 replaced by U+FFFD (a copy, or @s itself when it
 * is valid; NULL when out of memory). Go's encoder writes such a byte as "\ufffd", its
 * decoder reads that back as U+FFFD, which the encoder then writes as it is: the
 * daemon's checksum is of that second form, so the file must hold it.
 */
static char *go_decoded(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *v;

	if (text_utf8_valid(s, n))
		return (char *)s;
	v = malloc(n * 3 + 1);
	if (!v)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t len = text_utf8_decode(s + i, n - i, NULL);

		if (len == 0) {
			memcpy(v + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(v + o, s + i, len);
		o += len;
		i += len;
	}
	v[o] = '\0';
	return v;
}

/* A JSON string as the daemon reads it back and writes it again. */
static void put_str(struct text_buf *b, const char *s)
{
	char *v = go_decoded(s);

	if (!v) {
		b->oom = true;
		return;
	}
	text_buf_put_json_str(b, v, TEXT_JSON_GO);
	if (v != s)
		free(v);
}

static void put_member(struct text_buf *b, const char *name, const char *value, bool first)
{
	if (!first)
		text_buf_putc(b, ',');
	text_buf_put_json_str(b, name, TEXT_JSON_GO);
	text_buf_putc(b, ':');
	put_str(b, value);
}

static void put_entry(struct text_buf *b, const struct entry *e)
{
	const struct nvipam_alloc *a = e->a;
	char ip[IP_PREFIX_STRLEN], created[RFC3339_STRLEN];

	put_str(b, e->key);
	text_buf_putc(b, ':');
	text_buf_putc(b, '{');
	put_member(b, "container_id", a->container_id, true);
	put_member(b, "interface_name", a->ifname, false);
	put_member(b, "ip_address", ip_addr_format(&a->ip, ip, sizeof(ip)), false);
	text_buf_puts(b, ",\"metadata\":{");
	put_member(b, "create_time", rfc3339_format(a->created, created), true);
	put_member(b, "pod_uuid", a->pod_uid, false);
	put_member(b, "pod_name", a->pod_name, false);
	put_member(b, "pod_namespace", a->pod_namespace, false);
	put_member(b, "device_id", a->device_id, false);
	/* The pool's range then: the daemon only records it (the CRs are its truth). */
	put_member(b, "pool_config_snapshot", "", false);
	text_buf_puts(b, "}}");
}

/*
 * Entries keyed as the daemon keys them, sorted as Go sorts map keys. The daemon holds
 * one address per attachment and pool; a second one an older store gave keeps its
 * address under a key no DEL names (its pod's going frees it, through the cleaner).
 */
static int entries_sorted(const struct nvipam_store *s, struct entry **ret)
{
	struct entry *v = calloc(s->n_allocs ? s->n_allocs : 1, sizeof(*v));
	char ip[IP_PREFIX_STRLEN];
	bool renamed = false;
	int r = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < s->n_allocs; i++) {
		v[i].a = &s->allocs[i].a;
		char *key;

		if (asprintf(&v[i].key, "%s_%s", s->allocs[i].a.container_id, s->allocs[i].a.ifname) < 0) {
			v[i].key = NULL, r = -ENOMEM;
			continue;
		}
		/* Sorted as written: a key is compared as the daemon reads it. */
		key = go_decoded(v[i].key);
		if (key != v[i].key) {
			free(v[i].key);
			v[i].key = key;
			r = key ? 0 : -ENOMEM;
		}
	}
	if (r >= 0)
		qsort(v, s->n_allocs, sizeof(*v), cmp_entry);
	for (size_t i = 1; r >= 0 && i < s->n_allocs; i++) {
		char *key;

		if (cmp_entry(&v[i - 1], &v[i]) != 0)
			continue;
		if (asprintf(&key, "%s_%s", v[i].key, ip_addr_format(&v[i].a->ip, ip, sizeof(ip))) < 0) {
			r = -ENOMEM;
			break;
		}
		free(v[i].key);
		v[i].key = key;
		renamed = true;
	}
	if (r >= 0 && renamed)
		qsort(v, s->n_allocs, sizeof(*v), cmp_entry);
	if (r < 0) {
		for (size_t i = 0; i < s->n_allocs; i++)
			free(v[i].key);
		free(v);
		return r;
	}
	*ret = v;
	return 0;
}

/* Every pool key, of the records and of the allocations, sorted and once each. */
static int pool_keys(const struct nvipam_store *s, const char ***ret, size_t *ret_n)
{
	const char **v = malloc((s->n_pools + s->n_allocs + 1) * sizeof(*v));
	size_t n = 0, k = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_pools; i++)
		v[n++] = s->pools[i].key;
	for (size_t i = 0; i < s->n_allocs; i++)
		v[n++] = s->allocs[i].a.pool;
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || strcmp(v[k - 1], v[i]) != 0)
			v[k++] = v[i];
	*ret = v;
	*ret_n = k;
	return 0;
}

int store_handover_render(const struct nvipam_store *s, struct text_buf *b, uint32_t *ret_sum)
{
	static const char head[] = "{\"version\":1,\"checksum\":";
	_cleanup_free_ const char **keys = NULL;
	struct text_buf body = { 0 };
	struct entry *e = NULL;
	size_t n_keys, j = 0;
	char num[16];
	uint32_t sum;
	int r;

	r = pool_keys(s, &keys, &n_keys);
	if (r >= 0)
		r = entries_sorted(s, &e);
	if (r < 0)
		return r;
	text_buf_puts(&body, ",\"pools\":{");
	for (size_t i = 0; i < n_keys; i++) {
		const struct store_pool *p = NULL;
		char last[IP_PREFIX_STRLEN] = "";
		bool first = true;

		for (size_t k = 0; k < s->n_pools && !p; k++)
			if (strcmp(s->pools[k].key, keys[i]) == 0)
				p = &s->pools[k];
		if (p && p->has_last)
			ip_addr_format(&p->last_reserved, last, sizeof(last));
		if (i)
			text_buf_putc(&body, ',');
		put_str(&body, keys[i]);
		text_buf_puts(&body, ":{");
		put_member(&body, "name", keys[i], true);
		text_buf_puts(&body, ",\"entries\":{");
		for (; j < s->n_allocs && strcmp(e[j].a->pool, keys[i]) == 0; j++) {
			if (!first)
				text_buf_putc(&body, ',');
			put_entry(&body, &e[j]);
			first = false;
		}
		text_buf_putc(&body, '}');
		put_member(&body, "last_pool_config", "", false);
		put_member(&body, "last_reserved_ip", last, false);
		text_buf_putc(&body, '}');
	}
	text_buf_puts(&body, "}}");
	for (size_t i = 0; i < s->n_allocs; i++)
		free(e[i].key);
	free(e);
	if (body.oom) {
		text_buf_free(&body);
		return -ENOMEM;
	}
	/* The daemon's checksum: of the same document with "checksum":0. */
	sum = text_hash32(head, sizeof(head) - 1, TEXT_HASH32_INIT);
	sum = text_hash32("0", 1, sum);
	sum = text_hash32(body.data, body.len, sum);
	snprintf(num, sizeof(num), "%" PRIu32, sum);
	text_buf_puts(b, head);
	text_buf_puts(b, num);
	text_buf_add(b, body.data, body.len);
	text_buf_free(&body);
	*ret_sum = sum;
	return b->oom ? -ENOMEM : 0;
}

/* ---- a reference file written after the takeover ---- */

static void record_name(const struct nvipam_store *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s" STORE_ADOPTED_SUFFIX, s->name);
}

bool store_handover_recorded(const struct nvipam_store *s)
{
	char name[NAME_MAX + 1];

	record_name(s, name, sizeof(name));
	return faccessat(s->dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int store_handover_record(struct nvipam_store *s, struct cni_err *err)
{
	char name[NAME_MAX + 1];
	const char *step = "";
	int r;

	if (!s->adopted)
		return 0;
	record_name(s, name, sizeof(name));
	r = file_write_atomic_at(s->dir_fd, name, s->adopted, s->adopted_len, 0600, &step);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot write %s" STORE_ADOPTED_SUFFIX ": %s: %s",
				   s->path, step, strerror(-r));
	free(s->adopted);
	s->adopted = NULL;
	s->adopted_len = 0;
	return 0;
}

/* Entries compared whole: pool, attachment, address. */
static int cmp_legacy(const void *x, const void *y)
{
	const struct nvipam_alloc *a = &((const struct store_legacy_alloc *)x)->a;
	const struct nvipam_alloc *b = &((const struct store_legacy_alloc *)y)->a;
	int c = strcmp(a->pool, b->pool);

	if (!c)
		c = strcmp(a->container_id, b->container_id);
	if (!c)
		c = strcmp(a->ifname, b->ifname);
	return c ? c : ip_addr_cmp(&a->ip, &b->ip);
}

static bool legacy_has(const struct store_legacy *l, const struct store_legacy_alloc *e)
{
	return l->n_allocs && bsearch(e, l->allocs, l->n_allocs, sizeof(*l->allocs), cmp_legacy);
}

/* The record, read as a reference file; an empty one when it cannot be. */
static void record_read(struct nvipam_store *s, struct store_legacy *ret)
{
	_cleanup_free_ char *data = NULL;
	enum store_file_kind kind = STORE_FILE_NONE;
	struct cni_err why = { 0 };
	char name[NAME_MAX + 1];
	const char *what = NULL;
	size_t len = 0;
	int r;

	record_name(s, name, sizeof(name));
	r = file_read_at(s->dir_fd, name, STORE_DISK_MAX_BYTES, &data, &len);
	if (r < 0)
		what = strerror(-r);
	else if (store_migrate_read(data, len, &kind, ret, &why) < 0)
		what = why.msg;
	else if (kind != STORE_FILE_REFERENCE)
		what = "not the reference daemon's format";
	if (!what)
		return;
	store_migrate_free(ret);
	log_warning("store %s: %s" STORE_ADOPTED_SUFFIX " cannot be read (%s): every entry of the "
		    "reference store file is taken as the daemon's", s->path, s->path, what);
}

/* An entry the daemon added after the takeover, into the model unless nv-ipam's clash. */
static int merge_add(struct nvipam_store *s, const struct nvipam_alloc *e, size_t *added,
		     size_t *clashes)
{
	const struct nvipam_alloc *have = nvipam_store_find(s, e->pool, e->container_id, e->ifname);
	char ip[IP_PREFIX_STRLEN], other[IP_PREFIX_STRLEN];
	int r;

	ip_addr_format(&e->ip, ip, sizeof(ip));
	if (have && ip_addr_equal(&have->ip, &e->ip))
		return 0;
	if (have) {
		log_error("store %s: the reference daemon gave container %s, interface %s IP %s in "
			  "pool %s after nv-ipam took the store over, and nv-ipam gave it %s: nv-ipam's "
			  "kept", s->path, e->container_id, e->ifname, ip, e->pool,
			  ip_addr_format(&have->ip, other, sizeof(other)));
		++*clashes;
		return 0;
	}
	r = nvipam_store_add(s, e, false);
	if (r == -EEXIST) {
		log_error("store %s: the reference daemon gave IP %s in pool %s to container %s, "
			  "interface %s after nv-ipam took the store over, and nv-ipam gave it to "
			  "another attachment: nv-ipam's kept; one of the two pods must be restarted",
			  s->path, ip, e->pool, e->container_id, e->ifname);
		++*clashes;
		return 0;
	}
	if (r == -E2BIG) {
		log_error("store %s: the reference daemon's entry of IP %s in pool %s is too long to "
			  "record: not merged", s->path, ip, e->pool);
		++*clashes;
		return 0;
	}
	if (r >= 0)
		++*added;
	return r;
}

int store_handover_merge(struct nvipam_store *s, const struct store_legacy *late,
			 struct cni_err *err)
{
	struct store_legacy base = { 0 }, now = *late;
	size_t added = 0, released = 0, clashes = 0;
	bool same;
	int r = 0;

	record_read(s, &base);
	same = base.checksum && base.checksum == late->checksum;
	if (base.n_allocs)
		qsort(base.allocs, base.n_allocs, sizeof(*base.allocs), cmp_legacy);
	/* Sorted in place: the caller frees it whole, order does not matter to it. */
	if (now.n_allocs)
		qsort(now.allocs, now.n_allocs, sizeof(*now.allocs), cmp_legacy);
	for (size_t i = 0; r >= 0 && i < now.n_allocs; i++)
		if (!legacy_has(&base, &now.allocs[i]))
			r = merge_add(s, &now.allocs[i].a, &added, &clashes);
	for (size_t i = 0; r >= 0 && i < base.n_allocs; i++) {
		const struct nvipam_alloc *e = &base.allocs[i].a;
		const struct nvipam_alloc *have;

		if (legacy_has(&now, &base.allocs[i]))
			continue;
		have = nvipam_store_find(s, e->pool, e->container_id, e->ifname);
		if (have && ip_addr_equal(&have->ip, &e->ip))
			released += nvipam_store_remove(s, e->pool, e->container_id, e->ifname);
	}
	store_migrate_free(&base);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	if (same)
		log_warning("store %s: the reference daemon wrote its store file again after nv-ipam "
			    "took it over, unchanged: the pool logs hold it already", s->path);
	else
		log_warning("store %s: the reference daemon's store file changed after nv-ipam took "
			    "it over (a write of a daemon stopping landed late): merged into the pool "
			    "logs: %zu added, %zu released, %zu clashing with nv-ipam's own (kept)",
			    s->path, added, released, clashes);
	return 0;
}

/* ---- taking the store over and handing it back ---- */

int nvipam_store_adopt(const char *path, unsigned int timeout_ms, enum nvipam_store_adoption *ret,
		       size_t *ret_n, struct cni_err *err)
{
	struct nvipam_store *s = NULL;
	char name[NAME_MAX + 1];
	uint32_t sum;
	bool marked;
	int r;

	r = store_open_owner(path, timeout_ms, &s, err);
	if (r < 0)
		return r;
	marked = store_handover_marker(s, &sum);
	r = store_handover_daemon(s, err);
	if (r >= 0 && s->migrate) {
		*ret = NVIPAM_STORE_MIGRATED;
		r = nvipam_store_commit(s, err);
	} else if (r >= 0 && s->merge) {
		*ret = NVIPAM_STORE_MERGED;
		r = s->dirty ? nvipam_store_commit(s, err) : store_commit_file(s, err);
	} else if (r >= 0) {
		*ret = marked ? NVIPAM_STORE_RESUMED : NVIPAM_STORE_OURS;
		if (marked && !s->has_manifest)
			r = store_commit_file(s, err);
	}
	/* The marker goes last: until then, a kill leaves it and the next start does this again. */
	if (r >= 0 && marked) {
		marker_name(s, name, sizeof(name));
		if (unlinkat(s->dir_fd, name, 0) < 0 && errno != ENOENT)
			r = cni_err_set(err, CNI_ERR_IO, -errno, "cannot remove %s" STORE_HANDOVER_SUFFIX
					": %s", s->path, strerror(errno));
		else if (fsync(s->dir_fd) < 0)
			r = cni_err_set(err, CNI_ERR_IO, -errno, "cannot sync the directory of %s: %s",
					s->path, strerror(errno));
	}
	if (r >= 0)
		*ret_n = s->n_allocs;
	nvipam_store_close(s);
	return r;
}

int nvipam_store_handover(const char *path, unsigned int timeout_ms, size_t *ret_n,
			  uint32_t *ret_sum, struct cni_err *err)
{
	struct text_buf doc = { 0 }, mark = { 0 };
	char name[NAME_MAX + 1], now[RFC3339_STRLEN], num[16];
	struct nvipam_store *s = NULL;
	const char *step = "";
	uint32_t sum = 0;
	int r;

	r = store_open_owner(path, timeout_ms, &s, err);
	if (r < 0)
		return r;
	r = store_handover_daemon(s, err);
	/* A late write merged on the way is written first: taken back, the pool logs are read. */
	if (r >= 0 && s->merge)
		r = s->dirty ? nvipam_store_commit(s, err) : store_commit_file(s, err);
	if (r >= 0 && store_handover_render(s, &doc, &sum) < 0)
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (r >= 0) {
		snprintf(num, sizeof(num), "%" PRIu32, sum);
		text_buf_puts(&mark, "nv-ipam handed this store over to the reference nv-ipam node "
				     "daemon; ipam-node's start or nv-ipam-tool adopt takes it "
				     "back\nchecksum ");
		text_buf_puts(&mark, num);
		text_buf_puts(&mark, "\nat ");
		text_buf_puts(&mark, rfc3339_format(time(NULL), now));
		text_buf_putc(&mark, '\n');
		if (mark.oom)
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	/* The marker first: from it on nothing allocates, whatever the store file says. */
	if (r >= 0) {
		marker_name(s, name, sizeof(name));
		r = file_write_atomic_at(s->dir_fd, name, mark.data, mark.len, 0600, &step);
		if (r < 0)
			cni_err_set(err, CNI_ERR_IO, r, "cannot write %s" STORE_HANDOVER_SUFFIX ": %s: %s",
				    s->path, step, strerror(-r));
	}
	if (r >= 0)
		r = store_disk_write_file(s, doc.data, doc.len, err);
	if (r >= 0) {
		*ret_n = s->n_allocs;
		*ret_sum = sum;
	}
	text_buf_free(&doc);
	text_buf_free(&mark);
	nvipam_store_close(s);
	return r;
}

/* ---- the handover as the operator tool sees it ---- */

void store_handover_marker_at(const char *data, char ret_at[RFC3339_STRLEN])
{
	const char *line = strstr(data, "\nat ");
	char when[64];
	time_t t;

	ret_at[0] = '\0';
	/* Written again from the parsed time: the marker's bytes never reach a terminal. */
	if (line && sscanf(line, "\nat %63s", when) == 1 && rfc3339_parse(when, &t) == 0)
		rfc3339_format(t, ret_at);
}

bool store_handover_marker_read(const struct nvipam_store *s, uint32_t *ret_sum,
				char ret_at[RFC3339_STRLEN])
{
	_cleanup_free_ char *data = NULL;
	char name[NAME_MAX + 1];
	size_t len;
	int r;

	*ret_sum = 0;
	ret_at[0] = '\0';
	marker_name(s, name, sizeof(name));
	r = file_read_at(s->dir_fd, name, MARKER_MAX_BYTES, &data, &len);
	if (r == -ENOENT)
		return false;
	/* One that cannot be read still says the daemon may have the store: no checksum. */
	if (r < 0)
		return true;
	*ret_sum = store_handover_marker_sum(data);
	store_handover_marker_at(data, ret_at);
	return true;
}

/* ---- DEL while the store is handed over ---- */

int store_handover_release(struct nvipam_store *s, const char *container_id, const char *ifname,
			   size_t *ret_n, struct cni_err *err)
{
	_cleanup_free_ char *data = NULL;
	struct cni_err why = { 0 };
	struct text_buf doc = { 0 };
	uint32_t sum;
	size_t len = 0, n = 0;
	int r;

	*ret_n = 0;
	/* Exclusive: ipam-node cannot take the store back, nor another DEL edit it, meanwhile. */
	store_disk_unlock_node(s);
	r = store_disk_lock_node(s, true, err);
	if (r < 0)
		return r;
	if (!store_handover_marker(s, &sum))
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, -EBUSY,
				   "store %s was taken back from the reference nv-ipam node daemon "
				   "meanwhile: try again", s->path);
	/* The daemon's own lock, for the whole read-modify-write: no daemon starts on it meanwhile. */
	r = lock_file(s, err);
	if (r >= 0)
		r = store_handover_daemon(s, err);
	if (r >= 0)
		r = store_disk_read_file(s, &data, &len, err);
	if (r < 0)
		return r;
	r = store_migrate_release(data, len, container_id, ifname, &doc, &n, &why);
	if (r == -ENODATA)
		/* A handover killed before it replaced our store file: the pool logs hold it. */
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, -EBUSY,
				   "store %s was being handed over to the reference nv-ipam node "
				   "daemon (%s" STORE_HANDOVER_SUFFIX " is there) and its file is not "
				   "in the daemon's format: ipam-node takes it back when it starts",
				   s->path, s->path);
	if (r < 0) {
		text_buf_free(&doc);
		return cni_err_set(err, why.code, r, "store file %s: %s", s->path, why.msg);
	}
	/*
	 * The marker keeps the checksum of what was handed over: ipam-node then sees a file
	 * changed since and migrates it whole, pool logs replaced, the address gone from both.
	 */
	if (n)
		r = store_disk_write_file(s, doc.data, doc.len, err);
	text_buf_free(&doc);
	/* A DEL killed before its rename left its temporary file: ours to remove, under both locks. */
	store_disk_sweep(s);
	if (r < 0)
		return r;
	log_info("store %s is handed over and no reference nv-ipam node daemon has it: %zu "
		 "entr%s of %s/%s released in its file", s->path, n, n == 1 ? "y" : "ies",
		 container_id, ifname);
	*ret_n = n;
	return 0;
}
