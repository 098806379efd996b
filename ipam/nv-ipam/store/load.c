/* Reading pools into the model: a pool's snapshot and its log's tail (or the whole log), pending ADDs settled */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/load.h"
#include "ipam/nv-ipam/store/model.h"
#include "ipam/nv-ipam/store/private.h"
#include "ipam/nv-ipam/store/snap.h"

/* One A line of the replayed part of the log. */
struct entry {
	struct store_alloc r;
	const char *partner; /* pending until confirmed: the pool it waits for */
	uint32_t next;       /* the previous entry in its hash bucket, plus one */
	bool alive;
	bool pending;
};

struct replay {
	struct store_snap *base;       /* what the log holds before its replayed part, or NULL */
	struct store_base *gone;       /* its records released by the replayed lines */
	struct entry *v;
	size_t n;
	size_t cap;
	uint32_t *buckets;             /* entry index plus one, by attachment */
	size_t mask;
};

static int log_corrupt(const struct nvipam_store *s, const struct store_pool_disk *d, int r,
		       const char *why, struct cni_err *err)
{
	if (r == -ENOMEM)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	if (r == -EPROTONOSUPPORT)
		return cni_err_set(err, CNI_ERR_IO, r, "pool log %s.d/%s.log has an %s", s->path, d->stem,
				   why);
	return cni_err_set(err, CNI_ERR_IO, r, "pool log %s.d/%s.log is corrupt: %s", s->path, d->stem,
			   why);
}

static int replay_add(struct replay *rp, const struct store_line *l)
{
	struct entry *e;
	size_t b;

	if (rp->n == rp->cap) {
		size_t want = rp->cap ? rp->cap * 2 : 64;
		struct entry *v = realloc(rp->v, want * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rp->v = v;
		rp->cap = want;
	}
	e = &rp->v[rp->n];
	*e = (struct entry){ .r = { .a = l->alloc, .txn = l->txn }, .partner = l->partner, .alive = true,
			     .pending = l->flags & STORE_ADD_PENDING };
	b = store_snap_key_hash(e->r.a.container_id, e->r.a.ifname) & rp->mask;
	e->next = rp->buckets[b];
	rp->buckets[b] = (uint32_t)++rp->n;
	return 0;
}

static void base_release(size_t i, void *ctx)
{
	struct replay *rp = ctx;

	store_base_take(rp->gone, i);
}

/* Return: 0, or -ESTALE when a block of the snapshot is damaged. */
static int replay_del(struct replay *rp, const char *container_id, const char *ifname)
{
	size_t b = store_snap_key_hash(container_id, ifname) & rp->mask;

	if (rp->base && store_snap_find_attachment(rp->base, container_id, ifname, base_release, rp) < 0)
		return -ESTALE;
	for (uint32_t i = rp->buckets[b]; i; i = rp->v[i - 1].next) {
		struct entry *e = &rp->v[i - 1];

		if (e->alive && strcmp(e->r.a.container_id, container_id) == 0 &&
		    strcmp(e->r.a.ifname, ifname) == 0)
			e->alive = false;
	}
	return 0;
}

static void replay_txn(struct replay *rp, uint64_t txn, bool confirmed)
{
	for (size_t i = 0; i < rp->n; i++) {
		struct entry *e = &rp->v[i];

		if (e->alive && e->pending && e->r.txn == txn) {
			e->pending = false;
			e->alive = confirmed;
		}
	}
}

/*
 * An address held twice by live allocations: the second holder, or NULL (*ret: 0, -ENOMEM,
 * or -ESTALE when a block of the snapshot is damaged).
 */
static const struct nvipam_alloc *replay_duplicate(const struct replay *rp, int *ret)
{
	_cleanup_free_ uint32_t *set = calloc(rp->mask + 1, sizeof(*set));

	*ret = 0;
	if (!set) {
		*ret = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < rp->n; i++) {
		const struct entry *e = &rp->v[i];
		long in_base = -1;
		size_t b;

		if (!e->alive)
			continue;
		if (rp->base && store_snap_find_ip(rp->base, &e->r.a.ip, &in_base) < 0) {
			*ret = -ESTALE;
			return NULL;
		}
		if (in_base >= 0 && !store_base_gone(rp->gone, (size_t)in_base))
			return &e->r.a;
		b = text_checksum64(e->r.a.ip.bytes, sizeof(e->r.a.ip.bytes)) & rp->mask;
		for (;; b = (b + 1) & rp->mask) {
			if (!set[b]) {
				set[b] = (uint32_t)i + 1;
				break;
			}
			if (ip_addr_equal(&rp->v[set[b] - 1].r.a.ip, &e->r.a.ip))
				return &e->r.a;
		}
	}
	return NULL;
}

/* The pool's key from its log's header: taken by a pool known by stem, checked otherwise. */
static int pool_key(struct nvipam_store *s, struct store_pool *p, const char *key,
		    struct cni_err *err)
{
	char stem[STORE_FORMAT_STEM_MAX];

	if (p->key) {
		if (strcmp(key, p->key) != 0)
			return log_corrupt(s, p->disk, -EINVAL, "its header names another pool", err);
		return 0;
	}
	store_format_stem(key, stem);
	if (strcmp(stem, p->disk->stem) != 0)
		return log_corrupt(s, p->disk, -EINVAL, "its header names another pool", err);
	p->key = strdup(key);
	return p->key ? 0 : log_corrupt(s, p->disk, -ENOMEM, NULL, err);
}

/*
 * The start of the log: the key and id of its header, and where the lines after it start
 * (0: no header). @ret_head holds the first @ret_head_len bytes read (the header line's
 * fields decoded in place), for the lines after it not to be read again.
 */
static int read_header(struct nvipam_store *s, struct store_pool_disk *d, char **ret_head,
		       size_t *ret_head_len, const char **ret_key, size_t *ret_len, struct cni_err *err)
{
	_cleanup_free_ char *head = NULL;
	size_t len = d->file_len < 4096 ? d->file_len : 4096;
	struct cni_err why = { 0 };
	struct store_reader rd;
	const char *key;
	int r;

	*ret_len = 0;
	*ret_key = NULL;
	r = store_disk_read_log(s, d, 0, len, &head, err);
	/* A header is a few dozen bytes; one as long as a line may be is read as well. */
	if (r >= 0 && !memchr(head, '\n', len) && len < d->file_len) {
		free(head);
		head = NULL;
		len = d->file_len < STORE_FORMAT_LINE_MAX + 1 ? d->file_len : STORE_FORMAT_LINE_MAX + 1;
		r = store_disk_read_log(s, d, 0, len, &head, err);
	}
	if (r < 0)
		return r;
	r = store_format_read_header(&rd, head, len, &key, &d->log_id, &why);
	if (r < 0)
		return log_corrupt(s, d, r, why.msg, err);
	if (key) {
		*ret_len = rd.pos;
		d->tail_check = rd.last_check;
	}
	*ret_key = key;
	*ret_head_len = len;
	*ret_head = TAKE_PTR(head);
	return 0;
}

/* The log from @from to its end, its start taken from @head (its first @head_len bytes). */
static int read_from(struct nvipam_store *s, struct store_pool_disk *d, const char *head,
		     size_t head_len, size_t from, char **ret, struct cni_err *err)
{
	size_t have = from < head_len ? head_len - from : 0;
	char *rest = NULL, *all;
	int r;

	if (!have)
		return store_disk_read_log(s, d, from, d->file_len - from, ret, err);
	r = store_disk_read_log(s, d, head_len, d->file_len - head_len, &rest, err);
	if (r < 0)
		return r;
	all = malloc(d->file_len - from + 1);
	if (!all) {
		free(rest);
		return log_corrupt(s, d, -ENOMEM, NULL, err);
	}
	memcpy(all, head + from, have);
	memcpy(all + have, rest, d->file_len - head_len + 1);
	free(rest);
	*ret = all;
	return 0;
}

/*
 * Whether a snapshot was made from this log, at a point the log still has: the end of the
 * line it stops at is taken from @head when the log's start holds it.
 */
static bool snap_fits(struct nvipam_store *s, struct store_pool_disk *d, const struct store_snap *snap,
		      const char *key, size_t header_len, const char *head, size_t head_len)
{
	_cleanup_free_ char *end = NULL;
	struct cni_err ignored = { 0 };
	uint64_t check, at = snap->at.log_len - STORE_FORMAT_LINE_END;

	if (snap->at.log_id != d->log_id || strcmp(snap->key, key) != 0 ||
	    snap->at.log_len < header_len || snap->at.log_len > d->file_len)
		return false;
	if (snap->at.log_len <= head_len)
		return store_format_line_check(head + at, STORE_FORMAT_LINE_END, &check) == 0 &&
		       check == snap->at.log_tail_check;
	return store_disk_read_log(s, d, at, STORE_FORMAT_LINE_END, &end, &ignored) == 0 &&
	       store_format_line_check(end, STORE_FORMAT_LINE_END, &check) == 0 &&
	       check == snap->at.log_tail_check;
}

/* The snapshot of a pool, when there is one that fits its log (kept mapped in @d). */
static bool use_snap(struct nvipam_store *s, struct store_pool_disk *d, const char *key,
		     size_t header_len, const char *head, size_t head_len, struct store_snap *ret)
{
	if (store_disk_map_snap(s, d) < 0)
		return false;
	if (store_snap_parse(d->snap, d->snap_len, ret) == 0) {
		if (snap_fits(s, d, ret, key, header_len, head, head_len))
			return true;
		store_snap_free(ret);
	}
	store_disk_unmap_snap(d);
	return false;
}

static int replay_lines(struct nvipam_store *s, struct store_pool *p, struct replay *rp,
			struct store_reader *rd, size_t from, struct cni_err *err)
{
	struct store_pool_disk *d = p->disk;
	struct cni_err why = { 0 };
	struct store_line l;
	int r;

	while ((r = store_format_next(rd, &l, &why)) > 0) {
		d->n_lines++;
		d->good_len = from + rd->pos;
		d->tail_check = rd->last_check;
		switch (l.type) {
		case 'A':
			l.alloc.pool = p->key;
			if (l.flags & STORE_ADD_ROUND_ROBIN) {
				p->has_last = true;
				p->last_reserved = l.alloc.ip;
			}
			r = replay_add(rp, &l);
			if (r < 0)
				return log_corrupt(s, d, r, NULL, err);
			break;
		case 'D':
			if (replay_del(rp, l.alloc.container_id, l.alloc.ifname) < 0)
				return -ESTALE;
			break;
		case 'L':
			p->has_last = true;
			p->last_reserved = l.alloc.ip;
			break;
		default:
			replay_txn(rp, l.txn, l.type == 'C');
			break;
		}
	}
	return r < 0 ? log_corrupt(s, d, r, why.msg, err) : 0;
}

/*
 * Into the model: the snapshot's live allocations (a cache: their strings stay in its
 * mapping), then the replayed lines' live ones. With @lazy the snapshot's stay there,
 * read as lookups find them (store/base.c).
 * Return: 0, -ESTALE when a block of the snapshot is damaged, or as store_load_pool().
 */
static int replay_into_model(struct nvipam_store *s, struct store_pool *p, struct replay *rp,
			     bool lazy, struct cni_err *err)
{
	struct store_pool_disk *d = p->disk;
	size_t base_n = rp->base && !lazy ? rp->base->n_records : 0;
	int r = store_model_reserve(s, (rp->base && !lazy ? rp->gone->live : 0) + rp->n);

	for (size_t i = 0; r >= 0 && i < base_n; i++)
		if (!store_base_gone(rp->gone, i) &&
		    store_snap_record(rp->base, i, p->key, &s->allocs[s->n_allocs++]) < 0)
			return -ESTALE;
	if (r >= 0 && rp->base && lazy) {
		d->base = malloc(sizeof(*d->base));
		if (!d->base)
			r = -ENOMEM;
		else
			*d->base = (struct store_base){ .snap = *rp->base, .gone = rp->gone->gone,
							.live = rp->gone->live };
		/* Theirs now: not freed by the caller. */
		if (d->base) {
			rp->base->checked = NULL;
			rp->gone->gone = NULL;
		}
	}
	for (size_t i = 0; r >= 0 && i < rp->n; i++) {
		const struct entry *e = &rp->v[i];

		if (!e->alive)
			continue;
		s->allocs[s->n_allocs++] = e->r;
		/* Still pending: settled by store_load_settle(), which finds it by its transaction. */
		if (e->pending) {
			struct store_line w = { .type = 'X', .txn = e->r.txn, .partner = e->partner };

			r = store_model_queue(p, &w);
		}
	}
	return r < 0 ? log_corrupt(s, d, r, NULL, err) : 0;
}

/* One reading of pool @pi; -ESTALE when a block of its snapshot turned out damaged. */
static int load_once(struct nvipam_store *s, size_t pi, bool inspect, struct cni_err *err)
{
	struct store_pool *p = &s->pools[pi];
	struct store_pool_disk *d = p->disk;
	_cleanup_free_ char *head = NULL;
	struct store_base gone = { 0 };
	struct replay rp = { 0 };
	struct store_reader rd;
	struct store_snap snap = { 0 };
	size_t head_len = 0, header_len, from, lines = 0;
	const struct nvipam_alloc *dup;
	const char *key;
	int r;

	d->loaded = true;
	d->has_header = false;
	d->good_len = d->n_lines = d->snap_lines = 0;
	r = store_disk_open_log(s, d, err);
	if (r < 0 || d->log_fd < 0 || !d->file_len)
		return r;
	r = read_header(s, d, &head, &head_len, &key, &header_len, err);
	if (r < 0 || !key)
		return r; /* no header: torn while being created, nothing was ever in it */
	r = pool_key(s, p, key, err);
	if (r < 0)
		return r;
	d->has_header = true;
	d->good_len = header_len;
	if (!inspect && !d->snap_bad && use_snap(s, d, p->key, header_len, head, head_len, &snap)) {
		gone.gone = calloc(snap.n_records / 8 + 1, 1);
		gone.live = snap.n_records;
		if (!gone.gone) {
			store_snap_free(&snap);
			return log_corrupt(s, d, -ENOMEM, NULL, err);
		}
		rp.base = &snap;
		rp.gone = &gone;
		d->good_len = snap.at.log_len;
		d->tail_check = snap.at.log_tail_check;
		d->n_lines = d->snap_lines = snap.at.n_lines;
		p->has_last = snap.at.has_last;
		p->last_reserved = snap.at.last_reserved;
	}
	from = d->good_len;
	r = read_from(s, d, head, head_len, from, &d->data, err);
	if (r >= 0) {
		for (const char *c = d->data; (c = memchr(c, '\n', d->file_len - from - (size_t)(c - d->data)));
		     c++)
			lines++;
		for (rp.mask = 63; rp.mask < 2 * lines; rp.mask = rp.mask * 2 + 1)
			;
		rp.buckets = calloc(rp.mask + 1, sizeof(*rp.buckets));
		if (!rp.buckets)
			r = log_corrupt(s, d, -ENOMEM, NULL, err);
	}
	if (r >= 0) {
		store_format_read_tail(&rd, d->data, d->file_len - from, d->n_lines + 1);
		r = replay_lines(s, p, &rp, &rd, from, err);
	}
	if (r >= 0 && !inspect) {
		dup = replay_duplicate(&rp, &r);
		if (dup) {
			char ip[IP_PREFIX_STRLEN], why[300];

			snprintf(why, sizeof(why), "IP %s is held twice in pool \"%.200s\"",
				 ip_addr_format(&dup->ip, ip, sizeof(ip)), p->key);
			r = log_corrupt(s, d, -EINVAL, why, err);
		} else if (r < 0 && r != -ESTALE) {
			r = log_corrupt(s, d, r, NULL, err);
		}
	}
	if (r >= 0)
		r = replay_into_model(s, p, &rp, !s->whole, err);
	store_snap_free(&snap);
	free(gone.gone);
	free(rp.v);
	free(rp.buckets);
	return r;
}

int store_load_pool(struct nvipam_store *s, size_t pi, bool inspect, struct cni_err *err)
{
	struct store_pool_disk *d = s->pools[pi].disk;
	size_t n_allocs = s->n_allocs, n_queue = d->n_queue;
	int r = load_once(s, pi, inspect, err);

	if (r != -ESTALE)
		return r;
	/* Nothing read kept: what pointed into the snapshot or the tail is gone with it. */
	s->n_allocs = n_allocs;
	d->n_queue = n_queue;
	store_disk_unmap_snap(d);
	free(d->data);
	d->data = NULL;
	if (d->log_fd >= 0)
		(void)close(d->log_fd);
	d->log_fd = -1;
	d->snap_bad = true;
	return load_once(s, pi, inspect, err);
}

/* Apply a change line queued by this command to pool @p of the model read again. */
static int apply_queued(struct nvipam_store *s, struct store_pool *p, const struct store_line *l)
{
	size_t kept = 0;
	int r;

	if (l->type == 'A') {
		r = store_model_reserve(s, 1);
		if (r < 0)
			return r;
		s->allocs[s->n_allocs] = (struct store_alloc){ .a = l->alloc, .txn = l->txn };
		s->allocs[s->n_allocs++].a.pool = p->key;
		if (l->flags & STORE_ADD_ROUND_ROBIN) {
			p->has_last = true;
			p->last_reserved = l->alloc.ip;
		}
		return 0;
	}
	if (l->type != 'D' && l->type != 'X')
		return 0;
	for (size_t i = 0; i < s->n_allocs; i++) {
		const struct store_alloc *a = &s->allocs[i];
		bool drop = a->a.pool == p->key &&
			    (l->type == 'D' ? strcmp(a->a.container_id, l->alloc.container_id) == 0 &&
						      strcmp(a->a.ifname, l->alloc.ifname) == 0 :
					      a->txn == l->txn);

		if (!drop)
			s->allocs[kept++] = *a;
	}
	s->n_allocs = kept;
	return 0;
}

int store_load_again(struct nvipam_store *s, size_t pi, struct cni_err *err)
{
	struct store_pool *p = &s->pools[pi];
	struct store_pool_disk *d = p->disk;
	struct store_line *queue = d->queue;
	size_t n_queue = d->n_queue, kept = 0;
	int r = 0;

	for (size_t i = 0; i < s->n_allocs; i++)
		if (s->allocs[i].a.pool != p->key)
			s->allocs[kept++] = s->allocs[i];
	s->n_allocs = kept;
	/* The snapshot stays mapped and the tail read stays: callers may hold their strings. */
	store_disk_drop_base(d);
	d->snap_bad = true;
	free(d->old_data);
	d->old_data = d->data;
	d->data = NULL;
	if (d->log_fd >= 0)
		(void)close(d->log_fd);
	d->log_fd = -1;
	d->queue = NULL;
	d->n_queue = 0;
	r = store_load_pool(s, pi, false, err);
	/* Its pending lines were settled when first read: those verdicts are in @queue. */
	free(d->queue);
	d->queue = queue;
	d->n_queue = n_queue;
	for (size_t i = 0; r >= 0 && i < n_queue; i++)
		r = apply_queued(s, p, &queue[i]);
	if (r == -ENOMEM)
		cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	return r;
}

static bool holds_txn(const struct nvipam_store *s, const struct store_pool *p, uint64_t txn)
{
	for (size_t i = 0; i < s->n_allocs; i++)
		if (s->allocs[i].a.pool == p->key && s->allocs[i].txn == txn)
			return true;
	return false;
}

/* Whether the snapshot's share of pool @pi holds @txn (*@ret); read again when damaged. */
static int base_holds_txn(struct nvipam_store *s, size_t pi, uint64_t txn, bool *ret,
			  struct cni_err *err)
{
	struct store_pool *p = &s->pools[pi];
	struct store_base *b = p->disk->base;

	*ret = false;
	for (size_t i = 0; b && i < b->snap.n_records && !*ret; i++) {
		struct store_alloc a;

		if (store_base_gone(b, i))
			continue;
		if (store_snap_record(&b->snap, i, p->key, &a) < 0)
			return store_load_again(s, pi, err);
		*ret = a.txn == txn;
	}
	return 0;
}

/* A scratch store borrowing @s's directories, for reading one pool beside the model. */
static void scratch_init(const struct nvipam_store *s, struct nvipam_store *t)
{
	*t = (struct nvipam_store)STORE_INIT;
	t->path = s->path;
	t->name = s->name;
	t->dir_fd = s->dir_fd;
	t->pool_dir_fd = s->pool_dir_fd;
	t->whole = s->whole;
	t->timeout_ms = s->timeout_ms;
	t->deadline_us = s->deadline_us;
}

/* Whether pool @partner holds an allocation of @txn: the model's, or its log read under its lock. */
static int partner_holds(struct nvipam_store *s, const char *partner, uint64_t txn, bool *ret,
			 struct cni_err *err)
{
	const struct store_pool *q = store_model_pool(s, partner);
	struct nvipam_store t;
	int r;

	if (q && q->disk->loaded) {
		r = base_holds_txn(s, (size_t)(q - s->pools), txn, ret, err);
		if (r >= 0 && !*ret)
			*ret = holds_txn(s, q, txn);
		return r;
	}
	scratch_init(s, &t);
	r = store_model_add_pool(&t, partner, NULL);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	if (!t.whole)
		r = store_disk_lock_pool(&t, t.pools[0].disk, err);
	if (r >= 0)
		r = store_load_pool(&t, 0, true, err);
	*ret = r >= 0 && holds_txn(&t, &t.pools[0], txn);
	store_model_reset(&t);
	return r < 0 ? r : 0;
}

int store_load_settle(struct nvipam_store *s, size_t pi, struct cni_err *err)
{
	struct store_pool *p = &s->pools[pi];
	int r;

	for (size_t k = 0; k < p->disk->n_queue; k++) {
		struct store_line *w = &p->disk->queue[k];
		bool confirmed = false;

		if (w->type != 'X' || !w->partner)
			continue;
		r = partner_holds(s, w->partner, w->txn, &confirmed, err);
		if (r < 0)
			return r;
		w->partner = NULL;
		if (confirmed) {
			w->type = 'C';
			continue;
		}
		for (size_t i = 0; i < s->n_allocs;) {
			struct store_alloc *a = &s->allocs[i];

			if (a->a.pool == p->key && a->txn == w->txn) {
				memmove(a, a + 1, (s->n_allocs - i - 1) * sizeof(*a));
				s->n_allocs--;
			} else {
				i++;
			}
		}
	}
	return 0;
}

struct attachment_seen {
	bool seen;
};

static void mark_seen(size_t i, void *ctx)
{
	(void)i;
	((struct attachment_seen *)ctx)->seen = true;
}

bool store_load_mentions(struct nvipam_store *s, const char *stem, const char *container_id,
			 const char *ifname)
{
	_cleanup_free_ char *head = NULL, *tail = NULL;
	struct text_buf needle = { 0 };
	struct cni_err ignored = { 0 };
	struct attachment_seen seen = { 0 };
	struct store_pool_disk *d;
	struct store_snap snap = { 0 };
	struct nvipam_store t;
	size_t head_len = 0, header_len, from;
	const char *key;
	bool found = true;

	scratch_init(s, &t);
	if (store_model_add_pool(&t, NULL, stem) < 0)
		return true;
	d = t.pools[0].disk;
	/* As A and D lines hold the attachment: "\t<container ID>\t<interface>\t". */
	text_buf_putc(&needle, '\t');
	text_buf_put_escaped(&needle, container_id, strlen(container_id));
	text_buf_putc(&needle, '\t');
	text_buf_put_escaped(&needle, ifname, strlen(ifname));
	text_buf_putc(&needle, '\t');
	if (needle.oom || store_disk_open_log(&t, d, &ignored) < 0)
		goto out;
	/* No log, or one never written past its creation: nothing there. Unreadable: look. */
	found = false;
	if (d->log_fd < 0)
		goto out;
	if (read_header(&t, d, &head, &head_len, &key, &header_len, &ignored) < 0) {
		found = true;
		goto out;
	}
	if (!key)
		goto out;
	from = header_len;
	if (use_snap(&t, d, key, header_len, head, head_len, &snap)) {
		/* Damaged: looked at under the lock, where the log is read instead. */
		if (store_snap_find_attachment(&snap, container_id, ifname, mark_seen, &seen) < 0)
			seen.seen = true;
		from = snap.at.log_len;
	}
	if (seen.seen || read_from(&t, d, head, head_len, from, &tail, &ignored) < 0)
		found = true;
	else
		found = memmem(tail, d->file_len - from, needle.data, needle.len) != NULL;
out:
	store_snap_free(&snap);
	text_buf_free(&needle);
	store_model_reset(&t);
	return found;
}
