/*
 * The node's allocation store: one log per pool, each changed under its own lock
 *
 * The interface once a store is open: the model's operations (find, add, remove, the
 * listings and usage), commit and close. Opening, and DEL's release, are in open.c,
 * above this file; the allocation type is alloc.h. The model is in model.c, reading pools
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/pool/allocator.h"
#include "ipam/nv-ipam/store/base.h"
#include "ipam/nv-ipam/store/commit.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/model.h"
#include "ipam/nv-ipam/store/private.h"
#include "ipam/nv-ipam/store/released.h"
#include "ipam/nv-ipam/store/store.h"

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
		if (s->allocs[i].a.pool == p->key && store_is_attachment(&s->allocs[i].a, container_id, ifname))
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
				store_is_attachment(&s->allocs[k].a, container_id, ifname);
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

			if (a->pool == p->key && store_is_attachment(a, l.alloc.container_id, l.alloc.ifname))
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
