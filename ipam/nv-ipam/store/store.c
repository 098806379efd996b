/*
 * The node's allocation store: one log per pool, each changed under its own lock
 *
 * The interface: opening (the whole store, some pools, or each pool in turn for DEL),
 * the model's operations, commit and close. The model is in model.c, reading pools
 * in load.c, writing in commit.c, the log's lines in format.c, the
 * snapshots in snap.c, files and locks in disk.c, the store file and older
 * stores in migrate.c.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>

#include "common/cni/error.h"
#include "common/util/cleanup.h"
#include "common/util/log.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/store.h"
#include "ipam/nv-ipam/store/commit.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/format.h"
#include "ipam/nv-ipam/store/handover.h"
#include "ipam/nv-ipam/store/load.h"
#include "ipam/nv-ipam/store/migrate.h"
#include "ipam/nv-ipam/store/model.h"
#include "ipam/nv-ipam/store/released.h"
#include "ipam/nv-ipam/store/snap.h"

static int64_t now_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- opening ---- */

static int store_init(const char *path, unsigned int timeout_ms, struct nvipam_store *s,
		      struct cni_err *err)
{
	*s = (struct nvipam_store)NVIPAM_STORE_INIT;
	if (!path || !*path)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "no store file given");
	s->path = strdup(path);
	if (!s->path)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	s->timeout_ms = timeout_ms;
	s->deadline_us = now_us() + (int64_t)timeout_ms * 1000;
	return 0;
}

/* The store file: what it is, and an older store's contents (caller frees). */
static int file_read(struct nvipam_store *s, enum store_file_kind *ret_kind,
		     struct store_legacy *ret, struct cni_err *err)
{
	_cleanup_free_ char *data = NULL;
	struct cni_err why = { 0 };
	size_t len = 0;
	int r;

	r = store_disk_read_file(s, &data, &len, err);
	if (r < 0)
		return r;
	r = store_migrate_read(data, len, ret_kind, ret, &why);
	if (r == -ENOMEM)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	if (r == -EPROTONOSUPPORT)
		return cni_err_set(err, CNI_ERR_IO, r, "store file %s has an %s", s->path, why.msg);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "store file %s is corrupt: %s", s->path, why.msg);
	/* Every command but its owner's: the reference daemon may hold the store. */
	if (!s->owner && (r = store_handover_gate(s, *ret_kind, err)) < 0) {
		store_migrate_free(ret);
		return r;
	}
	return 0;
}

/* Find an IP held twice in one pool among every allocation (an older store). */
static int cmp_pool_ip(const void *x, const void *y)
{
	const struct nvipam_alloc *a = *(const struct nvipam_alloc *const *)x;
	const struct nvipam_alloc *b = *(const struct nvipam_alloc *const *)y;
	int c = strcmp(a->pool, b->pool);

	if (c)
		return c;
	if (a->ip.family != b->ip.family)
		return a->ip.family < b->ip.family ? -1 : 1;
	return memcmp(a->ip.bytes, b->ip.bytes, sizeof(a->ip.bytes));
}

int nvipam_alloc_ptr_cmp(const void *a, const void *b)
{
	return cmp_pool_ip(a, b);
}

static int legacy_duplicates(const struct nvipam_store *s, struct cni_err *err)
{
	_cleanup_free_ const struct nvipam_alloc **v = NULL;
	char ip[IP_PREFIX_STRLEN];

	if (s->n_allocs < 2)
		return 0;
	v = malloc(s->n_allocs * sizeof(*v));
	if (!v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n_allocs; i++)
		v[i] = &s->allocs[i];
	qsort(v, s->n_allocs, sizeof(*v), cmp_pool_ip);
	for (size_t i = 1; i < s->n_allocs; i++)
		if (cmp_pool_ip(&v[i - 1], &v[i]) == 0)
			return cni_err_set(err, CNI_ERR_IO, -EINVAL,
					   "store file %s is corrupt: IP %s is held twice in pool \"%s\"",
					   s->path, ip_addr_format(&v[i]->ip, ip, sizeof(ip)), v[i]->pool);
	return 0;
}

/*
 * A record of an older store that no pool log line can hold (a string of hundreds of
 * KiB) keeps its address, or the next ADD hands it out again: its pod's names are
 * dropped and, when its container ID and interface alone are too long, they become
 * "oversized-<address>", which no runtime's DEL names: the address stays held until
 * `nv-ipam-tool release` frees it. Refusing the record would refuse every pool.
 */
static int legacy_fit(struct nvipam_store *s, struct nvipam_alloc *a)
{
	static const int steps = 2;
	char buf[IP_PREFIX_STRLEN], id[IP_PREFIX_STRLEN + 16];

	for (int step = 0;; step++) {
		struct store_line l = { .type = 'A', .partner = "", .alloc = *a };
		struct text_buf b = { 0 };
		int r = store_format_line(&b, &l);

		r = b.oom ? -ENOMEM : r;
		text_buf_free(&b);
		if (r != -E2BIG || step == steps)
			return r;
		ip_addr_format(&a->ip, buf, sizeof(buf));
		if (step == 0) {
			log_warning("store %s: the older store's allocation of %s in pool %s is too "
				    "long to record: kept without its network and pod names", s->path,
				    buf, a->pool);
			a->network = a->pod_namespace = a->pod_name = a->pod_uid = a->device_id =
				(char *)"";
			continue;
		}
		snprintf(id, sizeof(id), "oversized-%s", buf);
		log_warning("store %s: the older store's allocation of %s in pool %s has a container "
			    "ID or interface too long to record: kept as container %s; once its pod is "
			    "gone, free it with nv-ipam-tool release --pool %s --ip %s", s->path, buf,
			    a->pool, id, a->pool, buf);
		r = store_model_copy(s, (const char *const[]){ id, "net0" },
				     (char **const[]){ &a->container_id, &a->ifname }, 2);
		if (r < 0)
			return r;
	}
}

/* An older store into the model: every pool and allocation, to be written at commit. */
static int load_legacy(struct nvipam_store *s, struct store_legacy *l, bool allow_dups,
		       struct cni_err *err)
{
	int r = store_model_reserve(s, l->n_allocs);

	for (size_t i = 0; r >= 0 && i < l->n_pools; i++) {
		struct nvipam_store_pool *p = store_model_pool(s, l->pools[i].key);

		if (!p && (r = store_model_add_pool(s, l->pools[i].key, NULL)) >= 0)
			p = &s->pools[r];
		if (p) {
			p->has_last = l->pools[i].has_last;
			p->last_reserved = l->pools[i].last_reserved;
		}
	}
	for (size_t i = 0; r >= 0 && i < l->n_allocs; i++) {
		struct nvipam_alloc *a = &l->allocs[i];
		struct nvipam_store_pool *p = store_model_pool(s, a->pool);

		if (!p) {
			r = store_model_add_pool(s, a->pool, NULL);
			p = r >= 0 ? &s->pools[r] : NULL;
		}
		if (r < 0 || (r = store_model_keep(s, a->pool)) < 0 || (r = legacy_fit(s, a)) < 0)
			break;
		s->allocs[s->n_allocs] = *a;
		s->allocs[s->n_allocs++].pool = p->key;
		/* The store owns the block now. */
		a->pool = NULL;
	}
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	s->migrate = true;
	s->dirty = true;
	return allow_dups ? 0 : legacy_duplicates(s, err);
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
	}
	if (kind == STORE_FILE_V1 || kind == STORE_FILE_REFERENCE) {
		r = load_legacy(s, &legacy, allow_dups, err);
		store_migrate_free(&legacy);
		return r;
	}
	s->has_manifest = kind == STORE_FILE_CURRENT;
	r = store_disk_pool_dir(s, false, err);
	if (r == -ENOENT)
		return 0;
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
	return r;
}

static int open_whole(const char *path, bool confined, unsigned int timeout_ms, bool allow_dups,
		      bool owner, struct nvipam_store *ret, struct cni_err *err)
{
	struct nvipam_store s;
	int r;

	r = store_init(path, timeout_ms, &s, err);
	if (r >= 0)
		r = store_disk_open_dir(&s, confined, err);
	if (r >= 0)
		r = store_disk_lock_node(&s, true, err);
	if (r >= 0 && owner) {
		s.owner = true;
		(void)store_handover_marker(&s, &s.resume_sum);
	}
	if (r >= 0)
		r = load_whole(&s, allow_dups, err);
	if (r >= 0)
		store_disk_sweep(&s);
	if (r < 0) {
		nvipam_store_close(&s);
		return r;
	}
	*ret = s;
	return 0;
}

int nvipam_store_open(const char *path, bool confined, unsigned int timeout_ms,
		      struct nvipam_store *ret, struct cni_err *err)
{
	return open_whole(path, confined, timeout_ms, false, false, ret, err);
}

int nvipam_store_open_inspect(const char *path, unsigned int timeout_ms, struct nvipam_store *ret,
			      struct cni_err *err)
{
	return open_whole(path, false, timeout_ms, true, false, ret, err);
}

int store_open_owner(const char *path, unsigned int timeout_ms, struct nvipam_store *ret,
		     struct cni_err *err)
{
	return open_whole(path, false, timeout_ms, false, true, ret, err);
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
	if (r >= 0 && s->migrate)
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
			    const char *const *keys, size_t n_keys, struct nvipam_store *ret,
			    struct cni_err *err)
{
	struct nvipam_store s;
	int r;

	r = store_init(path, timeout_ms, &s, err);
	if (r >= 0)
		r = store_disk_open_dir(&s, confined, err);
	if (r >= 0)
		r = lock_shared(&s, true, err);
	if (r >= 0)
		r = store_disk_pool_dir(&s, true, err);
	for (size_t i = 0; r >= 0 && i < n_keys; i++) {
		if (!keys[i] || !*keys[i])
			r = cni_err_set(err, CNI_ERR_INTERNAL, -EINVAL, "empty pool key");
		else if (!store_model_pool(&s, keys[i]) && (r = store_model_add_pool(&s, keys[i], NULL)) < 0)
			cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	}
	/* In stem order: every process takes pool locks in the same order. */
	for (size_t i = 0; r >= 0 && i < s.n_pools; i++)
		r = pool_open(&s, i, err);
	if (r < 0) {
		nvipam_store_close(&s);
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
struct base_ips {
	const struct store_pool_disk *d;
	struct ip_addr *ips;
	size_t n, max;
};

static void base_ip(size_t i, void *ctx)
{
	struct base_ips *b = ctx;

	if (!b->d->base_gone[i] && b->n < b->max)
		b->ips[b->n++] = b->d->base.ips[i];
}

static size_t attachment_ips(const struct nvipam_store *s, const struct nvipam_store_pool *p,
			     const char *container_id, const char *ifname, struct ip_addr *ips,
			     size_t max)
{
	struct base_ips b = { .d = p->disk, .ips = ips, .max = max };

	for (size_t i = 0; i < s->n_allocs && b.n < max; i++)
		if (s->allocs[i].pool == p->key && is_attachment(&s->allocs[i], container_id, ifname))
			ips[b.n++] = s->allocs[i].ip;
	if (p->disk->has_base)
		store_snap_find_attachment(&p->disk->base, container_id, ifname, base_ip, &b);
	return b.n;
}

int nvipam_store_release(const char *path, bool confined, unsigned int timeout_ms,
			 const char *container_id, const char *ifname, unsigned int cooldown_s,
			 size_t *ret_n, struct cni_err *err)
{
	struct nvipam_store s;
	char **stems = NULL;
	size_t n = 0, released = 0;
	int r;

	r = store_init(path, timeout_ms, &s, err);
	if (r >= 0)
		r = store_disk_open_dir(&s, confined, err);
	if (r >= 0)
		r = lock_shared(&s, false, err);
	if (r >= 0) {
		r = store_disk_pool_dir(&s, false, err);
		if (r == -ENOENT)
			r = 1; /* never written: nothing to release */
	}
	if (r == 0)
		r = store_disk_list(&s, &stems, &n, err);
	for (size_t i = 0; r == 0 && i < n; i++) {
		/*
		 * A pool whose files do not name the attachment is passed by without its lock:
		 * the runtime never runs ADD and DEL of one attachment at once, and a log being
		 * compacted holds the same allocations in its old and its new file.
		 */
		if (!store_load_mentions(&s, stems[i], container_id, ifname))
			continue;
		r = store_model_add_pool(&s, NULL, stems[i]);
		if (r < 0) {
			cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
			break;
		}
		r = pool_open(&s, 0, err);
		if (r >= 0 && s.pools[0].key) {
			struct ip_addr ips[8];
			size_t n_ips = cooldown_s ? attachment_ips(&s, &s.pools[0], container_id,
								   ifname, ips, 8) : 0;

			released += nvipam_store_remove(&s, s.pools[0].key, container_id, ifname);
			r = s.dirty ? store_commit_write(&s, true, err) : 0;
			s.dirty = false;
			/* Noted under the pool's lock: the next ADD of the pool reads it there. */
			if (r >= 0)
				store_released_note(&s, s.pools[0].disk, ips, n_ips, cooldown_s);
			/* As nvipam_store_commit_close(): the pool's lock goes before the wait for the disk. */
			if (s.pools[0].disk->lock_fd >= 0)
				(void)flock(s.pools[0].disk->lock_fd, LOCK_UN);
			if (r >= 0)
				r = store_commit_sync(&s, err);
		}
		store_model_reset(&s);
		r = r < 0 ? r : 0;
	}
	for (size_t i = 0; i < n; i++)
		free(stems[i]);
	free(stems);
	nvipam_store_close(&s);
	if (r < 0)
		return r;
	*ret_n = released;
	return 0;
}

const char *const *nvipam_store_headerless(const struct nvipam_store *s, size_t *ret_n)
{
	*ret_n = s->n_headerless;
	return (const char *const *)s->headerless;
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
		if (s->pools[i].disk->lock_fd >= 0)
			(void)flock(s->pools[i].disk->lock_fd, LOCK_UN);
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
	/* A zeroed store has lock_fd 0, which is not ours: only an opened store has a path. */
	if (s->path) {
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
	}
	*s = (struct nvipam_store)NVIPAM_STORE_INIT;
}

/* ---- the model ---- */

/* The first record of a pool's snapshot an attachment has, still there. */
struct base_match {
	const struct store_pool_disk *d;
	long first;
};

static void base_match(size_t i, void *ctx)
{
	struct base_match *m = ctx;

	if (m->first < 0 && !m->d->base_gone[i])
		m->first = (long)i;
}

struct nvipam_alloc *nvipam_store_find(struct nvipam_store *s, const char *pool,
				       const char *container_id, const char *ifname)
{
	struct nvipam_store_pool *p = store_model_pool(s, pool);
	struct base_match m = { .first = -1 };
	struct nvipam_alloc *a = NULL;

	/* Allocations point at their pool's key: one comparison of pointers each. */
	for (size_t i = 0; p && i < s->n_allocs; i++)
		if (s->allocs[i].pool == p->key && is_attachment(&s->allocs[i], container_id, ifname))
			return &s->allocs[i];
	if (!p || !p->disk->has_base)
		return NULL;
	m.d = p->disk;
	store_snap_find_attachment(&p->disk->base, container_id, ifname, base_match, &m);
	/* Pulled into the model to be returned; a record that cannot be read is as none. */
	if (m.first >= 0 && store_model_pull(s, p, (size_t)m.first, &a) < 0)
		return NULL;
	return a;
}

struct nvipam_alloc *nvipam_store_find_pod(struct nvipam_store *s, const char *pool,
					   const char *pod_uid, const char *ifname,
					   const char *container_id)
{
	struct nvipam_store_pool *p = store_model_pool(s, pool);
	struct nvipam_alloc *a = NULL;

	if (!p || !*pod_uid)
		return NULL;
	for (size_t i = 0; i < s->n_allocs; i++) {
		const struct nvipam_alloc *m = &s->allocs[i];

		if (m->pool == p->key && strcmp(m->pod_uid, pod_uid) == 0 &&
		    strcmp(m->ifname, ifname) == 0 && strcmp(m->container_id, container_id) != 0)
			return &s->allocs[i];
	}
	if (!p->disk->has_base)
		return NULL;
	/* No table by pod in a snapshot: a scan, strings compared in place (no copy). */
	for (size_t i = 0; i < p->disk->base.n_records; i++) {
		struct nvipam_alloc r;

		if (p->disk->base_gone[i] || store_snap_record(&p->disk->base, i, p->key, &r) < 0)
			continue;
		if (strcmp(r.pod_uid, pod_uid) != 0 || strcmp(r.ifname, ifname) != 0 ||
		    strcmp(r.container_id, container_id) == 0)
			continue;
		return store_model_pull(s, p, i, &a) < 0 ? NULL : a;
	}
	return NULL;
}

int nvipam_store_add(struct nvipam_store *s, const struct nvipam_alloc *a, bool round_robin)
{
	const char *pool = a->pool ? a->pool : "";
	struct nvipam_store_pool *p;
	struct nvipam_alloc c = { .ip = a->ip, .created = a->created };
	const char *in[] = { a->container_id, a->ifname,   a->network,	 a->pod_namespace,
			     a->pod_name,     a->pod_uid, a->device_id };
	char **out[] = { &c.container_id, &c.ifname,  &c.network,  &c.pod_namespace,
			 &c.pod_name,	  &c.pod_uid, &c.device_id };
	struct store_line l = { .type = 'A', .partner = "" };
	struct text_buf b = { 0 };
	int r;

	/* What the loader would refuse must never be written. */
	if (!*pool || !ip_addr_size(&a->ip))
		return -EINVAL;
	p = store_model_pool(s, pool);
	if (!p && !s->whole)
		return -EINVAL;
	for (size_t i = 0; p && i < s->n_allocs; i++)
		if (s->allocs[i].pool == p->key && store_model_same_ip(&s->allocs[i].ip, &a->ip))
			return -EEXIST;
	if (p && p->disk->has_base) {
		long i = store_snap_find_ip(&p->disk->base, &a->ip);

		if (i >= 0 && !p->disk->base_gone[i])
			return -EEXIST;
	}
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
	/* Too long for the log of a shared pool: refused now rather than written. */
	r = store_format_line(&b, &l);
	if (r >= 0 && !b.oom && b.len > STORE_FORMAT_ADD_LINE_MAX)
		r = -E2BIG;
	text_buf_free(&b);
	if (r < 0 || (r = store_model_queue(p, &l)) < 0)
		return r;
	s->allocs[s->n_allocs++] = c;
	if (round_robin) {
		p->has_last = true;
		p->last_reserved = a->ip;
	}
	s->dirty = true;
	return 0;
}

/* Every record of a pool's snapshot an attachment has, still there, released. */
struct base_release {
	struct store_pool_disk *d;
	size_t n;
};

static void base_release(size_t i, void *ctx)
{
	struct base_release *m = ctx;

	if (!m->d->base_gone[i]) {
		m->d->base_gone[i] = true;
		m->d->base_live--;
		m->n++;
	}
}

size_t nvipam_store_remove(struct nvipam_store *s, const char *pool, const char *container_id,
			   const char *ifname)
{
	size_t kept = 0, removed = 0;

	for (size_t i = 0; i < s->n_pools; i++) {
		struct nvipam_store_pool *p = &s->pools[i];
		struct store_line l = { .type = 'D' };
		struct base_release m = { .d = p->disk };
		bool found = false;
		const char *in[] = { container_id, ifname };
		char **out[] = { &l.alloc.container_id, &l.alloc.ifname };

		if (pool && strcmp(p->key, pool) != 0)
			continue;
		for (size_t k = 0; k < s->n_allocs && !found; k++)
			found = s->allocs[k].pool == p->key &&
				is_attachment(&s->allocs[k], container_id, ifname);
		if (p->disk->has_base) {
			struct base_match any = { .d = p->disk, .first = -1 };

			store_snap_find_attachment(&p->disk->base, container_id, ifname, base_match, &any);
			found |= any.first >= 0;
		}
		if (!found)
			continue;
		/*
		 * Copied: the line is written at commit, the caller's strings may be gone by
		 * then. Out of memory here leaves the model as it was for this pool.
		 */
		if (store_model_copy(s, in, out, 2) < 0 || store_model_queue(p, &l) < 0)
			continue;
		if (p->disk->has_base) {
			store_snap_find_attachment(&p->disk->base, l.alloc.container_id, l.alloc.ifname,
						   base_release, &m);
			removed += m.n;
		}
		for (size_t k = 0; k < s->n_allocs; k++) {
			struct nvipam_alloc *a = &s->allocs[k];

			if (a->pool == p->key && is_attachment(a, l.alloc.container_id, l.alloc.ifname))
				a->pool = NULL; /* marked: dropped below */
		}
	}
	/* Kept allocations keep their order; strings stay valid until close. */
	for (size_t i = 0; i < s->n_allocs; i++) {
		if (!s->allocs[i].pool) {
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

static int cmp_ip(const void *x, const void *y)
{
	const struct ip_addr *a = x, *b = y;

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	return memcmp(a->bytes, b->bytes, sizeof(a->bytes));
}

/* Sort @v in place, whose first @sorted are in order: a snapshot's addresses, then a few more. */
static int sort_ips(struct ip_addr *v, size_t n, size_t sorted)
{
	_cleanup_free_ struct ip_addr *merged = NULL;
	size_t i, j, k;

	if (!sorted)
		sorted = 1;
	while (sorted < n && cmp_ip(&v[sorted - 1], &v[sorted]) <= 0)
		sorted++;
	if (sorted >= n)
		return 0;
	qsort(v + sorted, n - sorted, sizeof(*v), cmp_ip);
	merged = malloc(n * sizeof(*v));
	if (!merged)
		return -ENOMEM;
	for (i = 0, j = sorted, k = 0; k < n; k++)
		merged[k] = j >= n || (i < sorted && cmp_ip(&v[i], &v[j]) <= 0) ? v[i++] : v[j++];
	memcpy(v, merged, n * sizeof(*v));
	return 0;
}

int nvipam_store_usage(const struct nvipam_store *s, const char *pool, struct ip_addr **ret_ips,
		       size_t *ret_n, bool *ret_has_last, struct ip_addr *ret_last)
{
	const struct nvipam_store_pool *p = store_model_pool(s, pool);
	const struct store_pool_disk *d = p ? p->disk : NULL;
	size_t base_live = d && d->has_base ? d->base_live : 0, n = 0;
	struct ip_addr *ips;

	ips = malloc((s->n_allocs + base_live + 1) * sizeof(*ips));
	if (!ips)
		return -ENOMEM;
	/* The snapshot's first: they are in address order. */
	if (base_live == (d && d->has_base ? d->base.n_records : 0)) {
		if (base_live)
			memcpy(ips, d->base.ips, base_live * sizeof(*ips));
		n = base_live;
	} else {
		for (size_t i = 0; i < d->base.n_records; i++)
			if (!d->base_gone[i])
				ips[n++] = d->base.ips[i];
	}
	for (size_t i = 0; p && i < s->n_allocs; i++)
		if (s->allocs[i].pool == p->key)
			ips[n++] = s->allocs[i].ip;
	if (sort_ips(ips, n, base_live) < 0) {
		free(ips);
		return -ENOMEM;
	}
	*ret_ips = ips;
	*ret_n = n;
	*ret_has_last = p && p->has_last;
	*ret_last = p && p->has_last ? p->last_reserved : (struct ip_addr){ 0 };
	return 0;
}

int nvipam_store_cooling(const struct nvipam_store *s, const char *pool, unsigned int cooldown_s,
			 struct ip_addr **ret, size_t *ret_n)
{
	const struct nvipam_store_pool *p = store_model_pool(s, pool);

	*ret = NULL;
	*ret_n = 0;
	if (!p || !cooldown_s)
		return 0;
	return store_released_since(s, p->disk, time(NULL) - (time_t)cooldown_s, ret, ret_n);
}

bool nvipam_store_drop_pool(struct nvipam_store *s, const char *pool)
{
	struct nvipam_store_pool *p = s->whole ? store_model_pool(s, pool) : NULL;
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
