/*
 * Opening the store: the whole store, some pools, a store handed over; and DEL, which opens
 * each pool of the node in turn to release an attachment
 *
 * Above store.c, whose model operations, commit and close it calls; store.h is both files'
 * interface. Opening reads the store file (manifest.c, migrate.c), takes the locks (disk.c)
 * and loads the pools (load.c); gate.c says first whether the reference daemon may hold
 * the store.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "ipam/nv-ipam/store/base.h"
#include "ipam/nv-ipam/store/commit.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/gate.h"
#include "ipam/nv-ipam/store/load.h"
#include "ipam/nv-ipam/store/manifest.h"
#include "ipam/nv-ipam/store/migrate.h"
#include "ipam/nv-ipam/store/model.h"
#include "ipam/nv-ipam/store/open.h"
#include "ipam/nv-ipam/store/private.h"
#include "ipam/nv-ipam/store/released.h"
#include "ipam/nv-ipam/store/store.h"

/* ---- opening ---- */

/* A new handle, nothing opened yet. */
static int store_new(const char *path, unsigned int timeout_ms, struct nvipam_store **ret,
		     struct cni_err *err)
{
	struct nvipam_store *s;

	if (!path || !*path)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "no store file given");
	s = malloc(sizeof(*s));
	if (!s)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	*s = (struct nvipam_store)STORE_INIT;
	s->path = strdup(path);
	if (!s->path) {
		free(s);
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	store_disk_set_deadline(s, timeout_ms);
	*ret = s;
	return 0;
}

/*
 * The store file, read once: what it is, and an older store's contents (caller frees).
 * The manifest this store writes is known by its bytes; only another file is parsed.
 */
static int file_read(struct nvipam_store *s, enum store_file_kind *ret_kind,
		     struct store_legacy *ret, struct cni_err *err)
{
	_cleanup_free_ char *data = NULL;
	struct cni_err why = { 0 };
	char pool_dir[NAME_MAX + 3];
	size_t len = 0;
	int r;

	*ret = (struct store_legacy){ 0 };
	r = store_disk_read_file(s, &data, &len, err);
	if (r < 0)
		return r;
	*ret_kind = len ? STORE_FILE_CURRENT : STORE_FILE_NONE;
	r = snprintf(pool_dir, sizeof(pool_dir), "%s.d", s->name);
	if (len && !(r > 0 && (size_t)r < sizeof(pool_dir) &&
		     store_manifest_is_current(data, len, pool_dir))) {
		r = store_migrate_read(data, len, ret_kind, ret, &why);
		if (r == -ENOMEM)
			return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
		if (r == -EPROTONOSUPPORT)
			return cni_err_set(err, CNI_ERR_IO, r, "store file %s has an %s", s->path,
					   why.msg);
		if (r == -ENOMSG)
			return cni_err_set(err, CNI_ERR_IO, r, "%s is not a store (%s): the store is the "
					   "file nv-ipam.conf's storeFile names", s->path, why.msg);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_IO, r, "store file %s is corrupt: %s", s->path,
					   why.msg);
	}
	/* Kept to be recorded, should it be taken over: its later change is seen by comparison. */
	if (s->whole && *ret_kind == STORE_FILE_REFERENCE) {
		free(s->adopted);
		s->adopted_len = len;
		s->adopted = TAKE_PTR(data);
	}
	/*
	 * Every command but its owner's, whatever the file holds: the reference daemon may
	 * hold the store (a handover killed before it replaced our store file left the marker).
	 */
	if (!s->owner && (r = store_handover_gate(s, *ret_kind, err)) < 0) {
		store_migrate_free(ret);
		return r;
	}
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

/*
 * The late write merged: merge into the pool logs what the reference daemon changed
 *                          in its store file after it was taken over
 * @s: store opened whole, its pool logs loaded, its @adopted the file found now
 * @late: what that file holds
 * @err: 999 for out of memory
 *
 * Compared with the file recorded at the takeover: an entry the daemon added is added
 * (unless nv-ipam gave its address, or the attachment another address, since: then
 * nv-ipam's stays and the clash is logged as an error); an entry it released is
 * released when nv-ipam still holds it as it was. What both files hold is left as the
 * pool logs have it (nv-ipam may have released it since). Without a readable record,
 * every entry of @late is taken as the daemon's addition. Logged as a warning with the
 * counts. The caller commits: the lines, then the record of @late, then the store file.
 *
 * Return: 0 on success, negative errno on failure.
 */
static int merge_late(struct nvipam_store *s, const struct store_legacy *late, struct cni_err *err)
{
	struct store_legacy base = { 0 }, now = *late;
	size_t added = 0, released = 0, clashes = 0;
	bool same;
	int r = 0;

	store_handover_record_read(s, &base);
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

/* Every pool of the node, under the exclusive node lock. */
static int load_whole(struct nvipam_store *s, bool allow_dups, struct cni_err *err)
{
	struct store_legacy legacy;
	enum store_file_kind kind;
	char **stems = NULL;
	size_t n = 0;
	int r;

	s->whole = true;
	r = file_read(s, &kind, &legacy, err);
	if (r < 0)
		return r;
	if (kind == STORE_FILE_REFERENCE && s->resume_sum && legacy.checksum == s->resume_sum) {
		/* What its owner handed over, unchanged: the pool logs say the same, and more. */
		store_migrate_free(&legacy);
		kind = STORE_FILE_NONE;
	} else if (kind == STORE_FILE_REFERENCE && !s->marked && store_handover_recorded(s)) {
		/*
		 * Taken over before, and the daemon's file is back: its last write landed
		 * after (a daemon stopping). The pool logs stay the truth, and what the daemon
		 * did since the file recorded then is merged into them.
		 */
		s->merge = true;
		kind = STORE_FILE_NONE;
	}
	if (kind == STORE_FILE_REFERENCE) {
		r = store_migrate_load(s, &legacy, allow_dups, err);
		store_migrate_free(&legacy);
		return r;
	}
	s->has_manifest = kind == STORE_FILE_CURRENT;
	r = store_disk_pool_dir(s, false, err);
	if (r == -ENOENT) {
		r = s->merge ? merge_late(s, &legacy, err) : 0;
		store_migrate_free(&legacy);
		return r;
	}
	if (r >= 0)
		r = store_disk_list(s, &stems, &n, err);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		r = store_model_add_pool(s, NULL, stems[i]);
		if (r < 0)
			cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		free(stems[i]);
	free(stems);
	for (size_t i = 0; r >= 0 && i < s->n_pools; i++)
		r = store_load_pool(s, i, allow_dups, err);
	/* A log without its header never held anything: named for the tool, then left out. */
	for (size_t i = 0; r >= 0 && i < s->n_pools;) {
		char **v;

		if (s->pools[i].key) {
			i++;
			continue;
		}
		v = realloc(s->headerless, (s->n_headerless + 1) * sizeof(*v));
		if (v)
			s->headerless = v;
		if (!v || !(v[s->n_headerless] = strdup(s->pools[i].disk->stem)))
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		else
			s->n_headerless++;
		store_model_drop_pool(s, i);
	}
	for (size_t i = 0; r >= 0 && i < s->n_pools; i++)
		r = store_load_settle(s, i, err);
	if (r >= 0 && s->merge)
		r = merge_late(s, &legacy, err);
	store_migrate_free(&legacy);
	return r;
}

/*
 * The node lock if its file is there, without making it: a store whose lock file is
 * missing was never opened by nv-ipam, so nothing of ours writes it. Nothing held then.
 */
static int lock_existing(struct nvipam_store *s, bool exclusive, struct cni_err *err)
{
	_cleanup_free_ char *name = NULL;
	int fd;

	if (asprintf(&name, "%s.lock", s->name) < 0) {
		name = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	fd = openat(s->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot open store lock %s.lock: %s",
				   s->path, strerror(errno));
	s->lock_fd = fd;
	return store_disk_lock_node(s, exclusive, err);
}

/* Whether the node lock's file is there now. */
static bool lock_file_exists(const struct nvipam_store *s)
{
	char name[NAME_MAX + 8];
	struct stat st;

	snprintf(name, sizeof(name), "%s.lock", s->name);
	return fstatat(s->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

/* @read_only: no file made (the lock's included) or removed, for a command that only reads. */
static int open_whole(const char *path, bool confined, unsigned int timeout_ms, bool inspect,
		      bool owner, bool read_only, struct nvipam_store **ret, struct cni_err *err)
{
	struct nvipam_store *s = NULL;
	int r;

	r = store_new(path, timeout_ms, &s, err);
	if (r >= 0)
		r = store_disk_open_dir(s, confined, err);
	if (r >= 0)
		r = read_only ? lock_existing(s, true, err) : store_disk_lock_node(s, true, err);
	if (r >= 0 && owner) {
		s->owner = true;
		s->marked = store_handover_marker(s, &s->resume_sum);
	}
	if (r >= 0)
		r = load_whole(s, inspect, err);
	if (r >= 0 && !read_only)
		store_disk_sweep(s);
	if (r < 0) {
		nvipam_store_close(s);
		return r;
	}
	*ret = s;
	return 0;
}

int nvipam_store_open(const char *path, bool confined, unsigned int timeout_ms,
		      struct nvipam_store **ret, struct cni_err *err)
{
	return open_whole(path, confined, timeout_ms, false, false, false, ret, err);
}

int nvipam_store_open_inspect(const char *path, unsigned int timeout_ms,
			      struct nvipam_store **ret, struct cni_err *err)
{
	return open_whole(path, false, timeout_ms, true, false, false, ret, err);
}

int nvipam_store_open_read(const char *path, unsigned int timeout_ms, struct nvipam_store **ret,
			   struct cni_err *err)
{
	int r = open_whole(path, false, timeout_ms, true, false, true, ret, err);

	/* Read unlocked, no lock file: an nv-ipam that made it meanwhile may have been writing. */
	if (r >= 0 && (*ret)->lock_fd < 0 && lock_file_exists(*ret)) {
		nvipam_store_close(*ret);
		*ret = NULL;
		r = open_whole(path, false, timeout_ms, true, false, true, ret, err);
	}
	return r;
}

int store_open_owner(const char *path, unsigned int timeout_ms, struct nvipam_store **ret,
		     struct cni_err *err)
{
	return open_whole(path, false, timeout_ms, false, true, false, ret, err);
}

/*
 * Under the shared node lock: the store file says version 2, or the exclusive lock
 * is taken to migrate an older store (or write a missing file) and let go again.
 * Return: 1 to go on, 0 to take the shared lock again and look once more, or negative.
 */
static int ensure_current(struct nvipam_store *s, bool write_missing, struct cni_err *err)
{
	struct store_legacy legacy;
	enum store_file_kind kind;
	int r;

	r = file_read(s, &kind, &legacy, err);
	if (r < 0)
		return r;
	store_migrate_free(&legacy);
	if (kind == STORE_FILE_CURRENT || (kind == STORE_FILE_NONE && !write_missing))
		return 1;
	store_disk_unlock_node(s);
	r = store_disk_lock_node(s, true, err);
	if (r >= 0)
		r = load_whole(s, false, err);
	if (r >= 0 && (s->migrate || (s->merge && s->dirty)))
		r = nvipam_store_commit(s, err);
	else if (r >= 0 && !s->has_manifest)
		r = store_commit_file(s, err);
	if (r >= 0)
		store_disk_sweep(s);
	store_model_reset(s);
	s->whole = false;
	store_disk_unlock_node(s);
	return r < 0 ? r : 0;
}

/* Shared node lock, with the store file current (@write_missing: written when missing). */
static int lock_shared(struct nvipam_store *s, bool write_missing, struct cni_err *err)
{
	int r;

	do {
		r = store_disk_lock_node(s, false, err);
		if (r >= 0)
			r = ensure_current(s, write_missing, err);
	} while (r == 0);
	if (r < 0)
		return r;
	s->has_manifest = true;
	return 0;
}

/* Lock, read and replay pool @pi, its pending lines settled. */
static int pool_open(struct nvipam_store *s, size_t pi, struct cni_err *err)
{
	int r = store_disk_lock_pool(s, s->pools[pi].disk, err);

	if (r >= 0) {
		store_disk_sweep_pool(s, s->pools[pi].disk);
		r = store_load_pool(s, pi, false, err);
	}
	if (r >= 0)
		r = store_load_settle(s, pi, err);
	return r;
}

int nvipam_store_open_pools(const char *path, bool confined, unsigned int timeout_ms,
			    const char *const *keys, size_t n_keys, struct nvipam_store **ret,
			    struct cni_err *err)
{
	struct nvipam_store *s = NULL;
	int r;

	r = store_new(path, timeout_ms, &s, err);
	if (r >= 0)
		r = store_disk_open_dir(s, confined, err);
	if (r >= 0)
		r = lock_shared(s, true, err);
	if (r >= 0)
		r = store_disk_pool_dir(s, true, err);
	for (size_t i = 0; r >= 0 && i < n_keys; i++) {
		if (!keys[i] || !*keys[i])
			r = cni_err_set(err, CNI_ERR_INTERNAL, -EINVAL, "empty pool key");
		else if (!store_model_pool(s, keys[i]) && (r = store_model_add_pool(s, keys[i], NULL)) < 0)
			cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	}
	/* In stem order: every process takes pool locks in the same order. */
	for (size_t i = 0; r >= 0 && i < s->n_pools; i++)
		r = pool_open(s, i, err);
	if (r < 0) {
		nvipam_store_close(s);
		return r;
	}
	*ret = s;
	return 0;
}

/* ---- releasing an attachment (DEL) ---- */

/* The addresses an attachment holds in an open pool, into @ips (at most @max). */
static size_t attachment_ips(struct nvipam_store *s, struct store_pool *p,
			     const char *container_id, const char *ifname, struct ip_addr *ips,
			     size_t max)
{
	size_t n = 0;

	(void)store_base_pull_key(s, p, container_id, ifname);
	for (size_t i = 0; i < s->n_allocs && n < max; i++)
		if (s->allocs[i].a.pool == p->key && store_is_attachment(&s->allocs[i].a, container_id, ifname))
			ips[n++] = s->allocs[i].a.ip;
	return n;
}

/*
 * DEL in pool @stem: released under its lock, written, the lock let go before the sync.
 * With a cooldown, the addresses released are noted under the lock: the pool's next ADD
 * reads them there.
 */
static int release_in(struct nvipam_store *s, const char *stem, const char *container_id,
		      const char *ifname, unsigned int cooldown_s, size_t *released,
		      struct cni_err *err)
{
	int r = store_model_add_pool(s, NULL, stem);

	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	r = pool_open(s, 0, err);
	if (r >= 0 && s->pools[0].key) {
		struct ip_addr ips[8];
		size_t n_ips = cooldown_s ? attachment_ips(s, &s->pools[0], container_id, ifname,
							   ips, ARRAY_SIZE(ips)) : 0;

		*released += nvipam_store_remove(s, s->pools[0].key, container_id, ifname);
		r = s->dirty ? store_commit_write(s, true, err) : 0;
		s->dirty = false;
		if (r >= 0)
			store_released_note(s, s->pools[0].disk, ips, n_ips, cooldown_s);
		/* As nvipam_store_commit_close(): the pool's lock goes before the wait for the disk. */
		store_disk_unlock_pool(s->pools[0].disk);
		if (r >= 0)
			r = store_commit_sync(s, err);
	}
	store_model_reset(s);
	return r < 0 ? r : 0;
}

int nvipam_store_release(const char *path, bool confined, unsigned int timeout_ms,
			 const char *container_id, const char *ifname, unsigned int cooldown_s,
			 size_t *ret_n, struct cni_err *err)
{
	struct nvipam_store *s = NULL;
	char **stems = NULL;
	size_t n = 0, released = 0;
	uint32_t sum;
	int r;

	r = store_new(path, timeout_ms, &s, err);
	if (r >= 0)
		r = store_disk_open_dir(s, confined, err);
	if (r >= 0)
		r = lock_shared(s, false, err);
	if (r == -EBUSY && store_handover_marker(s, &sum)) {
		/* Handed over: released in the daemon's file, unless a daemon has the store. */
		*err = (struct cni_err){ 0 };
		r = store_handover_release(s, container_id, ifname, &released, err);
		nvipam_store_close(s);
		if (r >= 0)
			*ret_n = released;
		return r;
	}
	if (r >= 0) {
		r = store_disk_pool_dir(s, false, err);
		if (r == -ENOENT)
			r = 1; /* never written: nothing to release */
	}
	if (r == 0)
		r = store_disk_list(s, &stems, &n, err);
	for (size_t i = 0; r == 0 && i < n; i++) {
		/*
		 * A pool whose files do not name the attachment is passed by without its lock:
		 * the runtime never runs ADD and DEL of one attachment at once, and a log being
		 * compacted holds the same allocations in its old and its new file.
		 */
		if (store_load_mentions(s, stems[i], container_id, ifname))
			r = release_in(s, stems[i], container_id, ifname, cooldown_s, &released, err);
	}
	for (size_t i = 0; i < n; i++)
		free(stems[i]);
	free(stems);
	nvipam_store_close(s);
	if (r < 0)
		return r;
	*ret_n = released;
	return 0;
}

/* ---- a store handed over, read for the operator tool ---- */

/* The node lock shared, when its file is there: creating it would write into the store. */
int nvipam_store_open_handed_over(const char *path, unsigned int timeout_ms,
				  struct nvipam_store **ret,
				  struct nvipam_store_handover_info *info, struct cni_err *err)
{
	_cleanup_free_ char *data = NULL;
	struct store_legacy legacy = { 0 };
	struct nvipam_store *s = NULL;
	enum store_file_kind kind = STORE_FILE_NONE;
	struct cni_err why = { 0 };
	uint32_t sum = 0;
	size_t len = 0;
	int r;

	*info = (struct nvipam_store_handover_info){ 0 };
	r = store_new(path, timeout_ms, &s, err);
	if (r >= 0)
		r = store_disk_open_dir(s, false, err);
	/* Looked at before the lock too: a store not handed over is not locked for nothing. */
	if (r >= 0 && store_handover_marker(s, &sum))
		r = lock_existing(s, false, err);
	else if (r >= 0)
		goto none;
	if (r >= 0 && !(info->marked = store_handover_marker_read(s, &sum, info->at)))
		goto none;
	if (r >= 0)
		r = store_disk_read_file(s, &data, &len, err);
	if (r >= 0) {
		r = store_migrate_read(data, len, &kind, &legacy, &why);
		if (r == -ENOMEM)
			cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
		else if (r == -EPROTONOSUPPORT)
			cni_err_set(err, CNI_ERR_IO, r, "store file %s has an %s", s->path, why.msg);
		else if (r < 0)
			cni_err_set(err, CNI_ERR_IO, r, "store file %s is corrupt: %s", s->path, why.msg);
	}
	/* The marker without the daemon's file: a handover killed before it wrote the file. */
	if (r >= 0 && kind != STORE_FILE_REFERENCE) {
		store_migrate_free(&legacy);
		goto none;
	}
	if (r >= 0) {
		info->handed_over = true;
		/* An unreadable marker has no checksum: nothing to compare with. */
		info->changed = sum && legacy.checksum != sum;
		r = store_migrate_load(s, &legacy, true, err);
	}
	store_migrate_free(&legacy);
	if (r < 0) {
		nvipam_store_close(s);
		return r;
	}
	*ret = s;
	return 0;
none:
	nvipam_store_close(s);
	*ret = NULL;
	return 0;
}
