/*
 * The node's allocation store: one log per pool, each changed under its own lock
 *
 * The model (the allocations and pools of what is open), opening (locks, the store
 * file, replaying the pool logs), committing (appending, compacting, migrating).
 * The line format is in store_format.c, the files and locks in store_disk.c, the
 * store file and older stores in store_migrate.c.
 *
 * Crash safety (docs/nv-ipam.md): a change is one line appended and synced before
 * the command returns; a line only counts once it is complete (a killed writer's
 * torn line is cut by the next writer); a log is only ever replaced whole, by
 * rename. An ADD in two pools writes its first pool's lines as pending and confirms
 * them once the second pool's are written: a reader that finds a pending line looks
 * for its transaction in the partner pool, whose lock comes later in the lock order
 * (pools are locked in file name order), and records the verdict.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/cni/error.h"
#include "common/util/cleanup.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store.h"
#include "ipam/nv-ipam/store_disk.h"
#include "ipam/nv-ipam/store_format.h"
#include "ipam/nv-ipam/store_migrate.h"

/* A log is compacted once its dead lines outnumber its live ones by this much. */
#define COMPACT_SLACK 512

/* Blocks of strings of allocations added or migrated, freed at close. */
struct store_strings {
	void **blocks;
	size_t n;
	size_t cap;
};

static int64_t now_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int strings_keep(struct nvipam_store *s, void *block)
{
	struct store_strings *st = s->strings;

	if (!st) {
		st = s->strings = calloc(1, sizeof(*st));
		if (!st)
			return -ENOMEM;
	}
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 16;
		void **v = realloc(st->blocks, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		st->blocks = v;
		st->cap = cap;
	}
	st->blocks[st->n++] = block;
	return 0;
}

/* Copies of @n strings in one block kept by the store; NULL strings become "". */
static int strings_copy(struct nvipam_store *s, const char *const *in, char **const *out, size_t n)
{
	size_t total = 0;
	char *block, *p;

	for (size_t i = 0; i < n; i++)
		total += (in[i] ? strlen(in[i]) : 0) + 1;
	block = malloc(total);
	if (!block || strings_keep(s, block) < 0) {
		free(block);
		return -ENOMEM;
	}
	p = block;
	for (size_t i = 0; i < n; i++) {
		size_t len = in[i] ? strlen(in[i]) : 0;

		memcpy(p, in[i] ? in[i] : "", len + 1);
		*out[i] = p;
		p += len + 1;
	}
	return 0;
}

/* ---- pools ---- */

static struct nvipam_store_pool *pool_find(const struct nvipam_store *s, const char *key)
{
	for (size_t i = 0; i < s->n_pools; i++)
		if (s->pools[i].key && strcmp(s->pools[i].key, key) == 0)
			return &s->pools[i];
	return NULL;
}

/*
 * Add pool @key (NULL: known by @stem until its log is read) in stem order.
 * Return: its index, or -ENOMEM.
 */
static int pool_insert(struct nvipam_store *s, const char *key, const char *stem)
{
	struct nvipam_store_pool *v, p = { 0 };
	size_t i;

	p.disk = calloc(1, sizeof(*p.disk));
	if (!p.disk)
		return -ENOMEM;
	*p.disk = (struct store_pool_disk){ .lock_fd = -1, .log_fd = -1 };
	if (key)
		store_format_stem(key, p.disk->stem);
	else
		snprintf(p.disk->stem, sizeof(p.disk->stem), "%s", stem);
	p.key = key ? strdup(key) : NULL;
	v = realloc(s->pools, (s->n_pools + 1) * sizeof(*v));
	if ((key && !p.key) || !v) {
		free(p.key);
		free(p.disk);
		if (v)
			s->pools = v;
		return -ENOMEM;
	}
	s->pools = v;
	for (i = s->n_pools; i > 0 && strcmp(v[i - 1].disk->stem, p.disk->stem) > 0; i--)
		v[i] = v[i - 1];
	v[i] = p;
	s->n_pools++;
	return (int)i;
}

static void pools_free(struct nvipam_store *s)
{
	for (size_t i = 0; i < s->n_pools; i++) {
		store_disk_close(s->pools[i].disk);
		free(s->pools[i].disk);
		free(s->pools[i].key);
	}
	free(s->pools);
	s->pools = NULL;
	s->n_pools = 0;
}

/* Forget the model (allocations, pools, their files), keeping the store's directory and lock. */
static void model_reset(struct nvipam_store *s)
{
	pools_free(s);
	free(s->allocs);
	s->allocs = NULL;
	s->n_allocs = s->cap_allocs = 0;
	if (s->strings) {
		for (size_t i = 0; i < s->strings->n; i++)
			free(s->strings->blocks[i]);
		free(s->strings->blocks);
		free(s->strings);
		s->strings = NULL;
	}
	s->migrate = false;
	s->dirty = false;
}

static int allocs_reserve(struct nvipam_store *s, size_t more)
{
	struct nvipam_alloc *v;
	size_t want;

	if (s->n_allocs + more <= s->cap_allocs)
		return 0;
	/* Doubling: the operator tool and tests add thousands; one at a time is quadratic. */
	want = s->cap_allocs ? s->cap_allocs * 2 : 16;
	while (want < s->n_allocs + more)
		want *= 2;
	v = realloc(s->allocs, want * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->allocs = v;
	s->cap_allocs = want;
	return 0;
}

static int queue_line(struct store_pool_disk *d, const struct store_line *l)
{
	struct store_line *v = realloc(d->queue, (d->n_queue + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	d->queue = v;
	d->queue[d->n_queue++] = *l;
	return 0;
}

static bool same_ip(const struct ip_addr *a, const struct ip_addr *b)
{
	return a->family == b->family && memcmp(a->bytes, b->bytes, sizeof(a->bytes)) == 0;
}

/* ---- replaying a log ---- */

/* One A line while the log is replayed. */
struct entry {
	struct nvipam_alloc a;
	const char *partner; /* pending until confirmed: the pool it waits for */
	uint32_t next;       /* the previous entry in its hash bucket, plus one */
	bool alive;
	bool pending;
};

struct replay {
	struct entry *v;
	size_t n;
	size_t cap;
	uint32_t *buckets; /* entry index plus one, by attachment */
	size_t mask;
};

static uint64_t attachment_hash(const char *container_id, const char *ifname)
{
	return text_checksum64(container_id, strlen(container_id)) ^
	       (text_checksum64(ifname, strlen(ifname)) * 31);
}

static int txn_seen(struct store_pool_disk *d, uint64_t txn, size_t *cap)
{
	if (d->n_txns == *cap) {
		size_t want = *cap ? *cap * 2 : 8;
		uint64_t *v = realloc(d->txns, want * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->txns = v;
		*cap = want;
	}
	d->txns[d->n_txns++] = txn;
	return 0;
}

static bool has_txn(const struct store_pool_disk *d, uint64_t txn)
{
	for (size_t i = 0; i < d->n_txns; i++)
		if (d->txns[i] == txn)
			return true;
	return false;
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
	*e = (struct entry){ .a = l->alloc, .partner = l->partner, .alive = true,
			     .pending = l->flags & STORE_ADD_PENDING };
	b = attachment_hash(e->a.container_id, e->a.ifname) & rp->mask;
	e->next = rp->buckets[b];
	rp->buckets[b] = (uint32_t)++rp->n;
	return 0;
}

static void replay_del(struct replay *rp, const char *container_id, const char *ifname)
{
	size_t b = attachment_hash(container_id, ifname) & rp->mask;

	for (uint32_t i = rp->buckets[b]; i; i = rp->v[i - 1].next) {
		struct entry *e = &rp->v[i - 1];

		if (e->alive && strcmp(e->a.container_id, container_id) == 0 &&
		    strcmp(e->a.ifname, ifname) == 0)
			e->alive = false;
	}
}

static void replay_txn(struct replay *rp, uint64_t txn, bool confirmed)
{
	for (size_t i = 0; i < rp->n; i++) {
		struct entry *e = &rp->v[i];

		if (e->alive && e->pending && e->a.txn == txn) {
			e->pending = false;
			e->alive = confirmed;
		}
	}
}

/* An IP held twice among the live entries: its entry, or NULL (or -ENOMEM in *ret). */
static const struct entry *replay_duplicate(const struct replay *rp, int *ret)
{
	_cleanup_free_ uint32_t *set = calloc(rp->mask + 1, sizeof(*set));

	*ret = 0;
	if (!set) {
		*ret = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < rp->n; i++) {
		const struct entry *e = &rp->v[i];
		size_t b;

		if (!e->alive)
			continue;
		b = text_checksum64(e->a.ip.bytes, sizeof(e->a.ip.bytes)) & rp->mask;
		for (;; b = (b + 1) & rp->mask) {
			if (!set[b]) {
				set[b] = (uint32_t)i + 1;
				break;
			}
			if (same_ip(&rp->v[set[b] - 1].a.ip, &e->a.ip))
				return e;
		}
	}
	return NULL;
}

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

/*
 * Read pool @pi's log (already in its disk struct) into the model: its allocations,
 * its last reserved address, the transactions it holds. A pool known only by its stem
 * takes its key from the header. Lines still pending are left in @ret_pending.
 */
static int pool_replay(struct nvipam_store *s, size_t pi, bool allow_dups, struct cni_err *err)
{
	struct nvipam_store_pool *p = &s->pools[pi];
	struct store_pool_disk *d = p->disk;
	struct replay rp = { 0 };
	struct store_reader rd;
	struct store_line l;
	const char *key;
	char why[256];
	size_t lines = 0, txn_cap = 0;
	int r;

	d->has_header = false;
	d->good_len = d->n_lines = 0;
	if (!d->data || !d->file_len)
		return 0;
	r = store_format_read_header(&rd, d->data, d->file_len, &key, why, sizeof(why));
	if (r < 0)
		return log_corrupt(s, d, r, why, err);
	if (!key)
		return 0; /* torn while being created: nothing was ever in it */
	if (!p->key) {
		char stem[STORE_FORMAT_STEM_MAX];

		store_format_stem(key, stem);
		if (strcmp(stem, d->stem) != 0)
			return log_corrupt(s, d, -EINVAL, "its header names another pool", err);
		p->key = strdup(key);
		if (!p->key)
			return log_corrupt(s, d, -ENOMEM, NULL, err);
	} else if (strcmp(key, p->key) != 0) {
		return log_corrupt(s, d, -EINVAL, "its header names another pool", err);
	}
	d->has_header = true;
	d->good_len = rd.pos;
	for (const char *c = d->data; (c = memchr(c, '\n', d->file_len - (size_t)(c - d->data))); c++)
		lines++;
	for (rp.mask = 63; rp.mask < 2 * lines; rp.mask = rp.mask * 2 + 1)
		;
	rp.buckets = calloc(rp.mask + 1, sizeof(*rp.buckets));
	if (!rp.buckets)
		return log_corrupt(s, d, -ENOMEM, NULL, err);
	while ((r = store_format_next(&rd, &l, why, sizeof(why))) > 0) {
		d->n_lines++;
		d->good_len = rd.pos;
		switch (l.type) {
		case 'A':
			l.alloc.pool = p->key;
			r = replay_add(&rp, &l);
			if (r >= 0 && l.txn)
				r = txn_seen(d, l.txn, &txn_cap);
			if (l.flags & STORE_ADD_ROUND_ROBIN) {
				p->has_last = true;
				p->last_reserved = l.alloc.ip;
			}
			break;
		case 'D':
			replay_del(&rp, l.alloc.container_id, l.alloc.ifname);
			break;
		case 'L':
			p->has_last = true;
			p->last_reserved = l.alloc.ip;
			break;
		default:
			replay_txn(&rp, l.txn, l.type == 'C');
			break;
		}
		if (r < 0)
			break;
	}
	if (r >= 0 && !allow_dups) {
		const struct entry *dup = replay_duplicate(&rp, &r);

		if (dup) {
			char ip[IP_PREFIX_STRLEN];

			snprintf(why, sizeof(why), "IP %s is held twice in pool \"%.200s\"",
				 ip_addr_format(&dup->a.ip, ip, sizeof(ip)), p->key);
			r = -EINVAL;
		}
	}
	if (r >= 0)
		r = allocs_reserve(s, rp.n);
	for (size_t i = 0; r >= 0 && i < rp.n; i++) {
		struct nvipam_alloc *a;

		if (!rp.v[i].alive)
			continue;
		a = &s->allocs[s->n_allocs++];
		*a = rp.v[i].a;
		/* Still pending: resolved by the caller, which finds it by its transaction. */
		if (rp.v[i].pending) {
			struct store_line w = { .type = 'X', .txn = a->txn, .partner = rp.v[i].partner };

			r = queue_line(d, &w);
		}
	}
	free(rp.v);
	free(rp.buckets);
	if (r < 0)
		return log_corrupt(s, d, r, why, err);
	return 0;
}

/* ---- pending transactions ---- */

/* Whether the log with stem @stem holds an A line of @txn (that pool's lock is taken here). */
static int partner_has_txn(struct nvipam_store *s, const char *partner, uint64_t txn, bool *ret,
			   struct cni_err *err)
{
	const struct nvipam_store_pool *q = pool_find(s, partner);
	struct store_pool_disk d = { .lock_fd = -1, .log_fd = -1 };
	struct store_reader rd;
	struct store_line l;
	const char *key;
	char why[256];
	int r;

	if (q && q->disk->has_header) {
		*ret = has_txn(q->disk, txn);
		return 0;
	}
	*ret = false;
	if (s->pool_dir_fd < 0)
		return 0;
	store_format_stem(partner, d.stem);
	/* Its stem comes after ours: taking its lock keeps the lock order. */
	r = s->whole ? 0 : store_disk_lock_pool(s, &d, err);
	if (r >= 0)
		r = store_disk_read_log(s, &d, err);
	if (r >= 0 && d.data) {
		r = store_format_read_header(&rd, d.data, d.file_len, &key, why, sizeof(why));
		while (r >= 0 && key && strcmp(key, partner) == 0 &&
		       (r = store_format_next(&rd, &l, why, sizeof(why))) > 0)
			if (l.type == 'A' && l.txn == txn)
				*ret = true;
		if (r < 0)
			r = log_corrupt(s, &d, r, why, err);
	}
	store_disk_close(&d);
	return r < 0 ? r : 0;
}

/*
 * Settle the lines pool_replay() left pending in pool @pi: confirmed when the partner
 * holds the transaction, dropped otherwise; the verdict is queued as a C or X line.
 */
static int pool_resolve(struct nvipam_store *s, size_t pi, struct cni_err *err)
{
	struct store_pool_disk *d = s->pools[pi].disk;
	int r;

	for (size_t k = 0; k < d->n_queue; k++) {
		struct store_line *w = &d->queue[k];
		bool confirmed = false;

		if (w->type != 'X' || !w->partner)
			continue;
		r = partner_has_txn(s, w->partner, w->txn, &confirmed, err);
		if (r < 0)
			return r;
		w->partner = NULL;
		if (confirmed) {
			w->type = 'C';
			continue;
		}
		for (size_t i = 0; i < s->n_allocs;) {
			struct nvipam_alloc *a = &s->allocs[i];

			if (a->txn == w->txn && strcmp(a->pool, s->pools[pi].key) == 0) {
				memmove(a, a + 1, (s->n_allocs - i - 1) * sizeof(*a));
				s->n_allocs--;
			} else {
				i++;
			}
		}
	}
	return 0;
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

/* An older store into the model: every pool and allocation, to be written at commit. */
static int load_legacy(struct nvipam_store *s, struct store_legacy *l, bool allow_dups,
		       struct cni_err *err)
{
	int r = allocs_reserve(s, l->n_allocs);

	for (size_t i = 0; r >= 0 && i < l->n_pools; i++) {
		struct nvipam_store_pool *p = pool_find(s, l->pools[i].key);

		if (!p && (r = pool_insert(s, l->pools[i].key, NULL)) >= 0)
			p = &s->pools[r];
		if (p) {
			p->has_last = l->pools[i].has_last;
			p->last_reserved = l->pools[i].last_reserved;
		}
	}
	for (size_t i = 0; r >= 0 && i < l->n_allocs; i++) {
		struct nvipam_alloc *a = &l->allocs[i];
		struct nvipam_store_pool *p = pool_find(s, a->pool);

		if (!p) {
			r = pool_insert(s, a->pool, NULL);
			p = r >= 0 ? &s->pools[r] : NULL;
		}
		if (r < 0 || (r = strings_keep(s, a->pool)) < 0)
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
		r = pool_insert(s, NULL, stems[i]);
		if (r < 0) {
			cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
			break;
		}
		r = store_disk_read_log(s, s->pools[r].disk, err);
	}
	for (size_t i = 0; i < n; i++)
		free(stems[i]);
	free(stems);
	for (size_t i = 0; r >= 0 && i < s->n_pools; i++)
		r = pool_replay(s, i, allow_dups, err);
	/* A log without its header never held anything. */
	for (size_t i = 0; r >= 0 && i < s->n_pools;) {
		if (s->pools[i].key) {
			i++;
			continue;
		}
		store_disk_close(s->pools[i].disk);
		free(s->pools[i].disk);
		memmove(&s->pools[i], &s->pools[i + 1], (s->n_pools - i - 1) * sizeof(s->pools[0]));
		s->n_pools--;
	}
	for (size_t i = 0; r >= 0 && i < s->n_pools; i++)
		r = pool_resolve(s, i, err);
	return r;
}

static int open_whole(const char *path, bool confined, unsigned int timeout_ms, bool allow_dups,
		      struct nvipam_store *ret, struct cni_err *err)
{
	struct nvipam_store s;
	int r;

	r = store_init(path, timeout_ms, &s, err);
	if (r >= 0)
		r = store_disk_open_dir(&s, confined, err);
	if (r >= 0)
		r = store_disk_lock_node(&s, true, err);
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
	return open_whole(path, confined, timeout_ms, false, ret, err);
}

int nvipam_store_open_inspect(const char *path, unsigned int timeout_ms, struct nvipam_store *ret,
			      struct cni_err *err)
{
	return open_whole(path, false, timeout_ms, true, ret, err);
}

static int write_store_file(struct nvipam_store *s, struct cni_err *err);

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
		r = write_store_file(s, err);
	if (r >= 0)
		store_disk_sweep(s);
	model_reset(s);
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

/* Lock, read and replay pool @pi (its pending lines resolved). */
static int pool_open(struct nvipam_store *s, size_t pi, struct cni_err *err)
{
	int r = store_disk_lock_pool(s, s->pools[pi].disk, err);

	if (r >= 0) {
		store_disk_sweep_pool(s, s->pools[pi].disk);
		r = store_disk_read_log(s, s->pools[pi].disk, err);
	}
	if (r >= 0)
		r = pool_replay(s, pi, false, err);
	if (r >= 0)
		r = pool_resolve(s, pi, err);
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
		else if (!pool_find(&s, keys[i]) && (r = pool_insert(&s, keys[i], NULL)) < 0)
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

/* Whether the log of @stem mentions @needle at all, read without its lock (a hint only). */
static bool log_mentions(struct nvipam_store *s, const char *stem, const struct text_buf *needle)
{
	struct store_pool_disk d = { .lock_fd = -1, .log_fd = -1 };
	struct cni_err ignored = { 0 };
	bool found;

	snprintf(d.stem, sizeof(d.stem), "%s", stem);
	/* Unreadable: the locked read says why. */
	if (store_disk_read_log(s, &d, &ignored) < 0)
		return true;
	found = d.data && memmem(d.data, d.file_len, needle->data, needle->len);
	store_disk_close(&d);
	return found;
}

int nvipam_store_release(const char *path, bool confined, unsigned int timeout_ms,
			 const char *container_id, const char *ifname, size_t *ret_n,
			 struct cni_err *err)
{
	struct text_buf needle = { 0 };
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
	/*
	 * A log that does not mention the container is passed by without its lock: the
	 * runtime never runs ADD and DEL of one attachment at once, and a log being
	 * compacted holds the same allocations in its old and its new file.
	 */
	text_buf_put_escaped(&needle, container_id, strlen(container_id));
	if (needle.oom)
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (needle.len && !log_mentions(&s, stems[i], &needle))
			continue;
		r = pool_insert(&s, NULL, stems[i]);
		if (r < 0) {
			cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
			break;
		}
		r = pool_open(&s, 0, err);
		if (r >= 0 && s.pools[0].key) {
			released += nvipam_store_remove(&s, s.pools[0].key, container_id, ifname);
			r = nvipam_store_commit(&s, err);
		}
		model_reset(&s);
		r = r < 0 ? r : 0;
	}
	for (size_t i = 0; i < n; i++)
		free(stems[i]);
	free(stems);
	text_buf_free(&needle);
	nvipam_store_close(&s);
	if (r < 0)
		return r;
	*ret_n = released;
	return 0;
}

/* ---- committing ---- */

static int write_store_file(struct nvipam_store *s, struct cni_err *err)
{
	struct text_buf b = { 0 };
	char dir[4096];
	int r;

	snprintf(dir, sizeof(dir), "%s.d", s->name);
	store_migrate_file(&b, dir);
	if (b.oom)
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	else
		r = store_disk_write_file(s, b.data, b.len, err);
	text_buf_free(&b);
	if (r >= 0)
		s->has_manifest = true;
	return r;
}

static size_t pool_live(const struct nvipam_store *s, const struct nvipam_store_pool *p)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_allocs; i++)
		n += s->allocs[i].pool == p->key;
	return n;
}

/* The whole log of pool @p as the model has it: header, allocations, last reserved address. */
static int pool_compacted(const struct nvipam_store *s, const struct nvipam_store_pool *p,
			  struct text_buf *b)
{
	int r = 0;

	store_format_header(b, p->key);
	for (size_t i = 0; r >= 0 && i < s->n_allocs; i++) {
		const struct nvipam_alloc *a = &s->allocs[i];
		struct store_line l = { .type = 'A', .txn = a->txn, .partner = "", .alloc = *a };

		if (a->pool == p->key)
			r = store_format_line(b, &l);
	}
	if (p->has_last) {
		struct store_line l = { .type = 'L', .alloc = { .ip = p->last_reserved } };

		r = r < 0 ? r : store_format_line(b, &l);
	}
	return r;
}

/* The queued lines of pool @p, after its header when its log has none. */
static int pool_lines(const struct nvipam_store_pool *p, struct text_buf *b)
{
	struct store_pool_disk *d = p->disk;
	int r = 0;

	if (!d->has_header)
		store_format_header(b, p->key);
	for (size_t i = 0; r >= 0 && i < d->n_queue; i++)
		r = store_format_line(b, &d->queue[i]);
	return r;
}

/*
 * Write pool @p: its queued lines appended, or its log rewritten whole when migrating or
 * when @may_compact and its dead lines outnumber its live ones by COMPACT_SLACK.
 */
static int pool_write(struct nvipam_store *s, struct nvipam_store_pool *p, bool may_compact,
		      struct cni_err *err)
{
	struct store_pool_disk *d = p->disk;
	struct text_buf b = { 0 };
	size_t live = pool_live(s, p);
	bool compact = s->migrate || (may_compact && d->n_lines + d->n_queue > 2 * live + COMPACT_SLACK);
	int r;

	r = compact ? pool_compacted(s, p, &b) : pool_lines(p, &b);
	if (r >= 0 && b.oom)
		r = -ENOMEM;
	if (r < 0) {
		text_buf_free(&b);
		return cni_err_set(err, CNI_ERR_INTERNAL, r, r == -E2BIG ? "a line is too long" :
				   "out of memory");
	}
	r = compact ? store_disk_rewrite(s, d, b.data, b.len, err) :
		      store_disk_append(s, d, b.data, b.len, true, err);
	text_buf_free(&b);
	if (r < 0)
		return r;
	d->has_header = true;
	d->n_lines = compact ? live + p->has_last : d->n_lines + d->n_queue;
	d->n_queue = 0;
	return 0;
}

static uint64_t new_txn(void)
{
	uint64_t t = 0;

	if (getrandom(&t, sizeof(t), GRND_NONBLOCK) != sizeof(t))
		t = (uint64_t)now_us() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	return t ? t : 1;
}

/*
 * An ADD that queued allocations in more than one pool: all but the last pool (in lock
 * order) get pending lines naming the last one, which holds the transaction; @pending
 * says which pools.
 * Return: the transaction, 0 when there is none.
 */
static uint64_t mark_transaction(struct nvipam_store *s, bool *pending)
{
	struct nvipam_store_pool *last = NULL;
	size_t pools = 0;
	uint64_t txn;

	for (size_t i = 0; i < s->n_pools; i++) {
		const struct store_pool_disk *d = s->pools[i].disk;

		pending[i] = false;
		for (size_t k = 0; k < d->n_queue; k++) {
			if (d->queue[k].type == 'A') {
				pending[i] = true;
				last = &s->pools[i];
				pools++;
				break;
			}
		}
	}
	if (pools < 2)
		return 0;
	pending[last - s->pools] = false;
	txn = new_txn();
	for (size_t i = 0; i < s->n_pools; i++) {
		struct nvipam_store_pool *p = &s->pools[i];
		struct store_pool_disk *d = p->disk;

		for (size_t k = 0; k < d->n_queue; k++) {
			struct store_line *l = &d->queue[k];

			if (l->type != 'A')
				continue;
			l->txn = txn;
			if (pending[i]) {
				l->flags |= STORE_ADD_PENDING;
				l->partner = last->key;
			}
			/* The model keeps it too: a compacted log keeps the partner's evidence. */
			for (size_t j = 0; j < s->n_allocs; j++)
				if (s->allocs[j].pool == p->key && same_ip(&s->allocs[j].ip, &l->alloc.ip))
					s->allocs[j].txn = txn;
		}
	}
	return txn;
}

/* Migration: every pool's log written whole, logs of pools the older store lacks removed. */
static int commit_migration(struct nvipam_store *s, struct cni_err *err)
{
	char **stems = NULL;
	size_t n = 0;
	int r;

	r = store_disk_pool_dir(s, true, err);
	if (r >= 0)
		r = store_disk_list(s, &stems, &n, err);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		bool kept = false;

		for (size_t k = 0; k < s->n_pools && !kept; k++)
			kept = strcmp(s->pools[k].disk->stem, stems[i]) == 0;
		if (!kept)
			r = store_disk_remove_log(s, stems[i], err);
	}
	for (size_t i = 0; i < n; i++)
		free(stems[i]);
	free(stems);
	for (size_t i = 0; r >= 0 && i < s->n_pools; i++)
		r = pool_write(s, &s->pools[i], true, err);
	/* Last: until the store file says version 2, the older store is the truth. */
	if (r >= 0)
		r = write_store_file(s, err);
	if (r >= 0)
		s->migrate = false;
	return r;
}

int nvipam_store_commit(struct nvipam_store *s, struct cni_err *err)
{
	_cleanup_free_ bool *pending = NULL;
	uint64_t txn;
	int r = 0;

	if (!s->dirty)
		return 0;
	if (s->migrate) {
		r = commit_migration(s, err);
		if (r >= 0)
			s->dirty = false;
		return r;
	}
	if (!s->has_manifest)
		r = write_store_file(s, err);
	if (r >= 0)
		r = store_disk_pool_dir(s, true, err);
	if (r < 0)
		return r;
	pending = calloc(s->n_pools + 1, sizeof(*pending));
	if (!pending)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	txn = mark_transaction(s, pending);
	for (size_t i = 0; i < s->n_pools; i++) {
		/* A log with pending lines is appended to: they stay pending until confirmed. */
		if (s->pools[i].disk->n_queue && (r = pool_write(s, &s->pools[i], !pending[i], err)) < 0)
			return r;
	}
	/* Every pool holds its lines: the pending ones are confirmed (a hint, not synced). */
	for (size_t i = 0; txn && i < s->n_pools; i++) {
		struct store_line c = { .type = 'C', .txn = txn };
		struct text_buf b = { 0 };
		struct cni_err ignored = { 0 };

		if (pending[i] && store_format_line(&b, &c) == 0 && !b.oom &&
		    store_disk_append(s, s->pools[i].disk, b.data, b.len, false, &ignored) == 0)
			s->pools[i].disk->n_lines++;
		text_buf_free(&b);
	}
	s->dirty = false;
	return 0;
}

void nvipam_store_close(struct nvipam_store *s)
{
	if (!s)
		return;
	/* A zeroed store has lock_fd 0, which is not ours: only an opened store has a path. */
	if (s->path) {
		model_reset(s);
		if (s->lock_fd >= 0)
			(void)close(s->lock_fd); /* releases the flock */
		if (s->pool_dir_fd >= 0)
			(void)close(s->pool_dir_fd);
		if (s->dir_fd >= 0)
			(void)close(s->dir_fd);
		free(s->path);
	}
	*s = (struct nvipam_store)NVIPAM_STORE_INIT;
}

/* ---- the model ---- */

static bool is_attachment(const struct nvipam_alloc *a, const char *pool, const char *container_id,
			  const char *ifname)
{
	return (!pool || strcmp(a->pool, pool) == 0) && strcmp(a->container_id, container_id) == 0 &&
	       strcmp(a->ifname, ifname) == 0;
}

struct nvipam_alloc *nvipam_store_find(struct nvipam_store *s, const char *pool,
				       const char *container_id, const char *ifname)
{
	for (size_t i = 0; i < s->n_allocs; i++)
		if (is_attachment(&s->allocs[i], pool, container_id, ifname))
			return &s->allocs[i];
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
	p = pool_find(s, pool);
	if (!p && !s->whole)
		return -EINVAL;
	for (size_t i = 0; i < s->n_allocs; i++)
		if (same_ip(&s->allocs[i].ip, &a->ip) && strcmp(s->allocs[i].pool, pool) == 0)
			return -EEXIST;
	if (!p) {
		r = pool_insert(s, pool, NULL);
		if (r < 0)
			return r;
		p = &s->pools[r];
	}
	r = strings_copy(s, in, out, ARRAY_SIZE(in));
	if (r < 0 || (r = allocs_reserve(s, 1)) < 0)
		return r;
	c.pool = p->key;
	l.alloc = c;
	l.flags = round_robin ? STORE_ADD_ROUND_ROBIN : 0;
	/* Too long to be read back: refused now rather than written. */
	r = store_format_line(&b, &l);
	text_buf_free(&b);
	if (r < 0 || (r = queue_line(p->disk, &l)) < 0)
		return r;
	s->allocs[s->n_allocs++] = c;
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
		struct nvipam_store_pool *p = &s->pools[i];
		struct store_line l = { .type = 'D' };
		bool found = false;
		const char *in[] = { container_id, ifname };
		char **out[] = { &l.alloc.container_id, &l.alloc.ifname };

		for (size_t k = 0; k < s->n_allocs && !found; k++)
			found = s->allocs[k].pool == p->key &&
				is_attachment(&s->allocs[k], NULL, container_id, ifname);
		if (!found || (pool && strcmp(p->key, pool) != 0))
			continue;
		/*
		 * Copied: the arguments may point into an allocation being removed. Out of
		 * memory here leaves the model as it was for this pool.
		 */
		if (strings_copy(s, in, out, 2) < 0 || queue_line(p->disk, &l) < 0)
			continue;
		for (size_t k = 0; k < s->n_allocs; k++) {
			struct nvipam_alloc *a = &s->allocs[k];

			if (a->pool == p->key && is_attachment(a, NULL, l.alloc.container_id,
								 l.alloc.ifname))
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

int nvipam_store_usage(const struct nvipam_store *s, const char *pool, struct ip_addr **ret_ips,
		       size_t *ret_n, bool *ret_has_last, struct ip_addr *ret_last)
{
	const struct nvipam_store_pool *p = pool_find(s, pool);
	struct ip_addr *ips;
	size_t n = 0;

	for (size_t i = 0; i < s->n_allocs; i++)
		if (strcmp(s->allocs[i].pool, pool) == 0)
			n++;
	ips = malloc((n ? n : 1) * sizeof(*ips));
	if (!ips)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < s->n_allocs; i++)
		if (strcmp(s->allocs[i].pool, pool) == 0)
			ips[n++] = s->allocs[i].ip;
	*ret_ips = ips;
	*ret_n = n;
	*ret_has_last = p && p->has_last;
	*ret_last = p && p->has_last ? p->last_reserved : (struct ip_addr){ 0 };
	return 0;
}
