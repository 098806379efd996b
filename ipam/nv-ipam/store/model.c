/* The store's model: its pools in lock order, their allocations, the strings they point to, the changes to write */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/log.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/model.h"

/* Blocks of strings of allocations added or migrated, freed at close. */
struct store_strings {
	void **blocks;
	size_t n;
	size_t cap;
};

struct store_pool *store_model_pool(const struct nvipam_store *s, const char *key)
{
	for (size_t i = 0; i < s->n_pools; i++)
		if (s->pools[i].key && strcmp(s->pools[i].key, key) == 0)
			return &s->pools[i];
	return NULL;
}

int store_model_add_pool(struct nvipam_store *s, const char *key, const char *stem)
{
	struct store_pool *v, p = { 0 };
	size_t i;

	p.disk = calloc(1, sizeof(*p.disk));
	p.key = key ? strdup(key) : NULL;
	v = realloc(s->pools, (s->n_pools + 1) * sizeof(*v));
	if (v)
		s->pools = v;
	if (!p.disk || (key && !p.key) || !v) {
		free(p.key);
		free(p.disk);
		return -ENOMEM;
	}
	*p.disk = (struct store_pool_disk){ .lock_fd = -1, .log_fd = -1 };
	if (key)
		store_format_stem(key, p.disk->stem);
	else
		snprintf(p.disk->stem, sizeof(p.disk->stem), "%s", stem);
	for (i = s->n_pools; i > 0 && strcmp(v[i - 1].disk->stem, p.disk->stem) > 0; i--)
		v[i] = v[i - 1];
	v[i] = p;
	s->n_pools++;
	return (int)i;
}

void store_model_drop_pool(struct nvipam_store *s, size_t i)
{
	const struct store_base *b = s->pools[i].disk->base;

	/* What a command read of a pool's snapshot: a few blocks and allocations, whatever it holds. */
	if (b) {
		size_t live = store_model_live(s, &s->pools[i]);

		log_debug("pool log %s.d/%s.log: %zu of its snapshot's %zu blocks checked, %zu of its %zu "
			  "allocations read", s->path, s->pools[i].disk->stem, b->snap.n_checked,
			  b->snap.n_blocks, live - b->live, live);
	}
	store_disk_close(s->pools[i].disk);
	free(s->pools[i].disk);
	free(s->pools[i].key);
	memmove(&s->pools[i], &s->pools[i + 1], (s->n_pools - i - 1) * sizeof(s->pools[0]));
	s->n_pools--;
}

int store_model_keep(struct nvipam_store *s, void *block)
{
	struct store_strings *st = s->strings;

	if (!st) {
		st = s->strings = calloc(1, sizeof(*st));
		if (!st) {
			free(block);
			return -ENOMEM;
		}
	}
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 16;
		void **v = realloc(st->blocks, cap * sizeof(*v));

		if (!v) {
			free(block);
			return -ENOMEM;
		}
		st->blocks = v;
		st->cap = cap;
	}
	st->blocks[st->n++] = block;
	return 0;
}

int store_model_copy(struct nvipam_store *s, const char *const *in, const char **const *out,
		     size_t n)
{
	size_t total = 0;
	char *block, *p;

	for (size_t i = 0; i < n; i++)
		total += (in[i] ? strlen(in[i]) : 0) + 1;
	block = malloc(total);
	if (!block || store_model_keep(s, block) < 0)
		return -ENOMEM;
	p = block;
	for (size_t i = 0; i < n; i++) {
		size_t len = in[i] ? strlen(in[i]) : 0;

		memcpy(p, in[i] ? in[i] : "", len + 1);
		*out[i] = p;
		p += len + 1;
	}
	return 0;
}

int store_model_reserve(struct nvipam_store *s, size_t more)
{
	struct store_alloc *v;
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

int store_model_queue(struct store_pool *p, const struct store_line *l)
{
	struct store_pool_disk *d = p->disk;
	struct store_line *v = realloc(d->queue, (d->n_queue + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	d->queue = v;
	d->queue[d->n_queue++] = *l;
	return 0;
}

size_t store_model_live(const struct nvipam_store *s, const struct store_pool *p)
{
	size_t n = 0;

	/* Allocations point at their pool's key: one comparison each. */
	for (size_t i = 0; i < s->n_allocs; i++)
		n += s->allocs[i].a.pool == p->key;
	return n + (p->disk->base ? p->disk->base->live : 0);
}

void store_model_reset(struct nvipam_store *s)
{
	while (s->n_pools)
		store_model_drop_pool(s, s->n_pools - 1);
	free(s->pools);
	s->pools = NULL;
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
	for (size_t i = 0; i < s->n_dropped; i++)
		free(s->dropped[i]);
	free(s->dropped);
	s->dropped = NULL;
	s->n_dropped = 0;
	for (size_t i = 0; i < s->n_headerless; i++)
		free(s->headerless[i]);
	free(s->headerless);
	s->headerless = NULL;
	s->n_headerless = 0;
	free(s->adopted);
	s->adopted = NULL;
	s->adopted_len = 0;
	s->merge = false;
	s->migrate = false;
	s->dirty = false;
}

int nvipam_alloc_ptr_cmp(const void *x, const void *y)
{
	const struct nvipam_alloc *a = *(const struct nvipam_alloc *const *)x;
	const struct nvipam_alloc *b = *(const struct nvipam_alloc *const *)y;
	int c = strcmp(a->pool, b->pool);

	return c ? c : ip_addr_cmp(&a->ip, &b->ip);
}
