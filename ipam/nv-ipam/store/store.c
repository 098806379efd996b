/*
 * The node's allocation store: one log per pool, each changed under its own lock
 *
 * The interface: opening (the whole store, some pools, or each pool in turn for DEL),
 * the model's operations, commit and close. The model is in model.c, reading pools
 * in load.c, writing in commit.c, the log's lines in format.c, the
 * snapshots in snap.c, files and locks in disk.c, the store file in manifest.c, the
 * reference daemon's store in migrate.c, handing the store to that daemon and taking it
 * back in handover.c, the released addresses a cooldown keeps in released.c.
 *
 * Crash safety (docs/nv-ipam.md, "The store"): a change is one line appended and synced
 * before the command returns; a line counts only once complete (a killed writer's torn
 * line is cut by the next writer); a log is only ever replaced whole, by rename. An ADD
 * in two pools writes its first pool's lines as pending and confirms them once the
 * second pool's are written: a reader that finds a line pending looks for its
 * transaction in the partner pool, whose lock comes later in the lock order (pools are
 * locked in file name order), and records the verdict.
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
#include "common/util/text.h"
#include "ipam/nv-ipam/pool/allocator.h"
#include "ipam/nv-ipam/store/base.h"
#include "ipam/nv-ipam/store/commit.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/gate.h"
#include "ipam/nv-ipam/store/load.h"
#include "ipam/nv-ipam/store/manifest.h"
#include "ipam/nv-ipam/store/migrate.h"
#include "ipam/nv-ipam/store/model.h"
#include "ipam/nv-ipam/store/private.h"
#include "ipam/nv-ipam/store/released.h"

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

static bool is_attachment(const struct nvipam_alloc *a, const char *container_id, const char *ifname)
{
	return strcmp(a->container_id, container_id) == 0 && strcmp(a->ifname, ifname) == 0;
}

/* The addresses an attachment holds in an open pool, into @ips (at most @max). */
static size_t attachment_ips(struct nvipam_store *s, struct store_pool *p,
			     const char *container_id, const char *ifname, struct ip_addr *ips,
			     size_t max)
{
	size_t n = 0;

	(void)store_base_pull_key(s, p, container_id, ifname);
	for (size_t i = 0; i < s->n_allocs && n < max; i++)
		if (s->allocs[i].a.pool == p->key && is_attachment(&s->allocs[i].a, container_id, ifname))
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

/* ---- committing and closing ---- */

int nvipam_store_commit(struct nvipam_store *s, struct cni_err *err)
{
	int r;

	if (!s->dirty)
		return 0;
	r = store_commit_write(s, false, err);
	if (r >= 0)
		s->dirty = false;
	return r;
}

/* Let go of the pools' locks and the node's, the files staying open. */
static void unlock_all(struct nvipam_store *s)
{
	for (size_t i = 0; i < s->n_pools; i++)
		store_disk_unlock_pool(s->pools[i].disk);
	store_disk_unlock_node(s);
}

int nvipam_store_commit_close(struct nvipam_store *s, struct cni_err *err)
{
	int r = 0;

	if (s->dirty)
		r = store_commit_write(s, true, err);
	/*
	 * The locks go before the wait for the disk: the next writer of a pool appends after
	 * these lines, which it reads from the page cache, and its own sync covers them too.
	 * The lines were written whole: a kill from here on leaves the new state.
	 */
	unlock_all(s);
	if (r >= 0)
		r = store_commit_sync(s, err);
	nvipam_store_close(s);
	return r;
}

void nvipam_store_close(struct nvipam_store *s)
{
	if (!s)
		return;
	store_model_reset(s);
	if (s->lock_fd >= 0)
		(void)close(s->lock_fd); /* releases the flock */
	if (s->file_lock_fd >= 0)
		(void)close(s->file_lock_fd);
	if (s->pool_dir_fd >= 0)
		(void)close(s->pool_dir_fd);
	if (s->dir_fd >= 0)
		(void)close(s->dir_fd);
	free(s->path);
	free(s);
}

/* ---- the model ---- */

const struct nvipam_alloc *nvipam_store_find(struct nvipam_store *s, const char *pool,
					     const char *container_id, const char *ifname)
{
	struct store_pool *p = store_model_pool(s, pool);

	if (p)
		(void)store_base_pull_key(s, p, container_id, ifname);

	/* Allocations point at their pool's key: one comparison of pointers each. */
	for (size_t i = 0; p && i < s->n_allocs; i++)
		if (s->allocs[i].a.pool == p->key && is_attachment(&s->allocs[i].a, container_id, ifname))
			return &s->allocs[i].a;
	return NULL;
}

const struct nvipam_alloc *nvipam_store_find_pod(struct nvipam_store *s, const char *pool,
						 const char *pod_uid, const char *ifname,
						 const char *container_id)
{
	struct store_pool *p = store_model_pool(s, pool);

	if (p)
		(void)store_base_pull_pod(s, p, pod_uid, ifname);

	for (size_t i = 0; p && *pod_uid && i < s->n_allocs; i++) {
		const struct nvipam_alloc *m = &s->allocs[i].a;

		if (m->pool == p->key && strcmp(m->pod_uid, pod_uid) == 0 &&
		    strcmp(m->ifname, ifname) == 0 && strcmp(m->container_id, container_id) != 0)
			return m;
	}
	return NULL;
}

/* Byte @i of "<container_id>_<ifname>", the reference daemon's key of an attachment. */
static char key_at(const char *container_id, size_t id_len, const char *ifname, size_t i)
{
	if (i < id_len)
		return container_id[i];
	return i == id_len ? '_' : ifname[i - id_len - 1];
}

const struct nvipam_alloc *nvipam_store_find_key(struct nvipam_store *s, const char *pool,
						 const char *container_id, const char *ifname)
{
	struct store_pool *p = store_model_pool(s, pool);
	size_t id_len = strlen(container_id), len = id_len + 1 + strlen(ifname);

	if (p)
		(void)store_base_pull_key(s, p, container_id, ifname);

	for (size_t i = 0; p && i < s->n_allocs; i++) {
		const struct nvipam_alloc *m = &s->allocs[i].a;
		size_t m_id_len = strlen(m->container_id), k = 0;

		if (m->pool != p->key || m_id_len == id_len || m_id_len + 1 + strlen(m->ifname) != len)
			continue;
		while (k < len && key_at(container_id, id_len, ifname, k) ==
				  key_at(m->container_id, m_id_len, m->ifname, k))
			k++;
		if (k == len)
			return m;
	}
	return NULL;
}

int nvipam_store_add(struct nvipam_store *s, const struct nvipam_alloc *a, bool round_robin)
{
	const char *pool = a->pool ? a->pool : "";
	struct store_pool *p;
	struct nvipam_alloc c = { .ip = a->ip, .created = a->created };
	const char *in[] = { a->container_id, a->ifname,   a->network,	 a->pod_namespace,
			     a->pod_name,     a->pod_uid, a->device_id };
	const char **out[] = { &c.container_id, &c.ifname,  &c.network,  &c.pod_namespace,
			       &c.pod_name,	&c.pod_uid, &c.device_id };
	struct store_line l = { .type = 'A', .partner = "" };
	struct text_buf b = { 0 };
	int r;

	/* What the loader would refuse must never be written. */
	if (!*pool || !ip_addr_size(&a->ip))
		return -EINVAL;
	p = store_model_pool(s, pool);
	if (!p && !s->whole)
		return -EINVAL;
	if (p && store_base_held(s, p, &a->ip))
		return -EEXIST;
	if (!p) {
		r = store_model_add_pool(s, pool, NULL);
		if (r < 0)
			return r;
		p = &s->pools[r];
	}
	r = store_model_copy(s, in, out, ARRAY_SIZE(in));
	if (r < 0 || (r = store_model_reserve(s, 1)) < 0)
		return r;
	c.pool = p->key;
	l.alloc = c;
	l.flags = round_robin ? STORE_ADD_ROUND_ROBIN : 0;
	/* Rendered once, here; too long for the log of a shared pool: refused now rather than written. */
	r = store_format_add_fields(&b, &c);
	if (r >= 0 && b.oom)
		r = -ENOMEM;
	if (r >= 0 && store_format_add_head_len(&l) + b.len > STORE_FORMAT_ADD_LINE_MAX)
		r = -E2BIG;
	l.fields = b.data;
	l.fields_len = b.len;
	if (r < 0 || (r = store_model_keep(s, TAKE_PTR(b.data))) < 0) {
		text_buf_free(&b);
		return r;
	}
	if ((r = store_model_queue(p, &l)) < 0)
		return r;
	s->allocs[s->n_allocs++] = (struct store_alloc){ .a = c };
	if (round_robin) {
		p->has_last = true;
		p->last_reserved = a->ip;
	}
	s->dirty = true;
	return 0;
}

size_t nvipam_store_remove(struct nvipam_store *s, const char *pool, const char *container_id,
			   const char *ifname)
{
	size_t kept = 0, removed = 0;

	for (size_t i = 0; i < s->n_pools; i++) {
		struct store_pool *p = &s->pools[i];
		struct store_line l = { .type = 'D' };
		bool found = false;
		const char *in[] = { container_id, ifname };
		const char **out[] = { &l.alloc.container_id, &l.alloc.ifname };

		if (pool && strcmp(p->key, pool) != 0)
			continue;
		(void)store_base_pull_key(s, p, container_id, ifname);
		for (size_t k = 0; k < s->n_allocs && !found; k++)
			found = s->allocs[k].a.pool == p->key &&
				is_attachment(&s->allocs[k].a, container_id, ifname);
		if (!found)
			continue;
		/*
		 * Copied: the line is written at commit, the caller's strings may be gone by
		 * then. Out of memory here leaves the model as it was for this pool.
		 */
		if (store_model_copy(s, in, out, 2) < 0 || store_model_queue(p, &l) < 0)
			continue;
		for (size_t k = 0; k < s->n_allocs; k++) {
			struct nvipam_alloc *a = &s->allocs[k].a;

			if (a->pool == p->key && is_attachment(a, l.alloc.container_id, l.alloc.ifname))
				a->pool = NULL; /* marked: dropped below */
		}
	}
	/* Kept allocations keep their order; strings stay valid until close. */
	for (size_t i = 0; i < s->n_allocs; i++) {
		if (!s->allocs[i].a.pool) {
			removed++;
			continue;
		}
		s->allocs[kept++] = s->allocs[i];
	}
	s->n_allocs = kept;
	if (removed)
		s->dirty = true;
	return removed;
}

size_t nvipam_store_count(const struct nvipam_store *s)
{
	size_t n = s ? s->n_allocs : 0;

	for (size_t i = 0; s && i < s->n_pools; i++)
		n += s->pools[i].disk->base ? s->pools[i].disk->base->live : 0;
	return n;
}

/*
 * Reading more of a pool's snapshot into the model from a query: the model is the store's
 * own cache of its files, and every store is allocated by store_new(), never const itself.
 */
static struct nvipam_store *store_reading(const struct nvipam_store *s)
{
	return (struct nvipam_store *)s;
}

const struct nvipam_alloc *nvipam_store_alloc_at(const struct nvipam_store *s, size_t i)
{
	/* Past what the model holds: the rest of the pools' snapshots read into it. */
	for (size_t k = 0; s && i >= s->n_allocs && k < s->n_pools; k++)
		(void)store_base_pull_all(store_reading(s), &s->pools[k]);
	return s && i < s->n_allocs ? &s->allocs[i].a : NULL;
}

size_t nvipam_store_pool_count(const struct nvipam_store *s)
{
	return s ? s->n_pools : 0;
}

bool nvipam_store_pool_at(const struct nvipam_store *s, size_t i,
			  struct nvipam_store_pool_info *ret)
{
	if (!s || i >= s->n_pools)
		return false;
	*ret = (struct nvipam_store_pool_info){
		.key = s->pools[i].key,
		.has_last = s->pools[i].has_last,
		.last_reserved = s->pools[i].last_reserved,
	};
	return true;
}

static int cmp_ip(const void *x, const void *y)
{
	return ip_addr_cmp(x, y);
}

/*
 * The held addresses of a pool in order: its snapshot's (in address order) merged with
 * the model's, those replayed or added after (a few to sort).
 */
int nvipam_store_usage(const struct nvipam_store *s, const char *pool, struct nvipam_pool_usage *ret)
{
	struct store_pool *p = s ? store_model_pool(s, pool) : NULL;
	_cleanup_free_ struct ip_addr *ips = NULL, *base = NULL;
	size_t n = 0, n_base = 0, i, j, k;
	struct ip_addr *merged;
	int r;

	do {
		free(base);
		base = malloc(((p && p->disk->base ? p->disk->base->live : 0) + 1) * sizeof(*base));
		if (!base)
			return -ENOMEM;
		r = p ? store_base_ips(store_reading(s), p, base, &n_base) : 0;
	} while (r == -ESTALE);
	if (r < 0)
		return r;
	ips = malloc(((s ? s->n_allocs : 0) + 1) * sizeof(*ips));
	if (!ips)
		return -ENOMEM;
	for (i = 0; p && i < s->n_allocs; i++)
		if (s->allocs[i].a.pool == p->key)
			ips[n++] = s->allocs[i].a.ip;
	qsort(ips, n, sizeof(*ips), cmp_ip);
	merged = malloc((n + n_base + 1) * sizeof(*merged));
	if (!merged)
		return -ENOMEM;
	for (i = 0, j = 0, k = 0; k < n + n_base; k++)
		merged[k] = j >= n || (i < n_base && cmp_ip(&base[i], &ips[j]) <= 0) ? base[i++] : ips[j++];
	*ret = (struct nvipam_pool_usage){
		.reserved = merged,
		.n_reserved = n + n_base,
		.has_last = p && p->has_last,
		.last_reserved = p && p->has_last ? p->last_reserved : (struct ip_addr){ 0 },
	};
	return 0;
}

/* What nvipam_store_usage_lookup()'s answers come from. */
struct held_in {
	struct nvipam_store *s;
	const char *pool;
};

static bool held_in(void *ctx, const struct ip_addr *ip)
{
	struct held_in *h = ctx;
	struct store_pool *p = store_model_pool(h->s, h->pool);

	return p && store_base_held(h->s, p, ip);
}

int nvipam_store_usage_lookup(struct nvipam_store *s, const char *pool, struct nvipam_pool_usage *ret)
{
	const struct store_pool *p = store_model_pool(s, pool);
	struct held_in *h = malloc(sizeof(*h));

	if (!h)
		return -ENOMEM;
	*h = (struct held_in){ .s = s, .pool = p ? p->key : "" };
	*ret = (struct nvipam_pool_usage){
		.has_last = p && p->has_last,
		.last_reserved = p && p->has_last ? p->last_reserved : (struct ip_addr){ 0 },
		.held = held_in,
		.held_ctx = h,
	};
	return 0;
}

void nvipam_store_usage_free(struct nvipam_pool_usage *u)
{
	free((void *)u->reserved);
	u->reserved = NULL;
	/* Only ever this file's struct held_in. */
	free(u->held_ctx);
	u->held_ctx = NULL;
}

bool nvipam_store_dirty(const struct nvipam_store *s)
{
	return s && s->dirty;
}

const char *const *nvipam_store_headerless(const struct nvipam_store *s, size_t *ret_n)
{
	*ret_n = s ? s->n_headerless : 0;
	return s ? (const char *const *)s->headerless : NULL;
}

int nvipam_store_cooling(const struct nvipam_store *s, const char *pool, unsigned int cooldown_s,
			 struct ip_addr **ret, size_t *ret_n)
{
	const struct store_pool *p = store_model_pool(s, pool);
	int r;

	*ret = NULL;
	*ret_n = 0;
	if (!p || !cooldown_s)
		return 0;
	r = store_released_since(s, p->disk, time(NULL) - (time_t)cooldown_s, ret, ret_n);
	if (r >= 0 && *ret_n > 1)
		qsort(*ret, *ret_n, sizeof(**ret), cmp_ip);
	return r;
}

bool nvipam_store_drop_pool(struct nvipam_store *s, const char *pool)
{
	struct store_pool *p = s->whole ? store_model_pool(s, pool) : NULL;
	char **v;

	if (!p || store_model_live(s, p) > 0)
		return false;
	v = realloc(s->dropped, (s->n_dropped + 1) * sizeof(*v));
	if (!v)
		return false;
	s->dropped = v;
	v[s->n_dropped] = strdup(p->disk->stem);
	if (!v[s->n_dropped])
		return false;
	s->n_dropped++;
	/* Its queued lines (releases of its last allocations) go with it. */
	store_model_drop_pool(s, (size_t)(p - s->pools));
	s->dirty = true;
	return true;
}

const char *nvipam_store_path(const struct nvipam_store *s)
{
	return s->path;
}

int nvipam_store_dir_fd(const struct nvipam_store *s)
{
	return s->dir_fd;
}

const char *nvipam_store_name(const struct nvipam_store *s)
{
	return s->name;
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
