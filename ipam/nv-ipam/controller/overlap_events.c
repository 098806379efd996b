/*
 * OverlappingPools Events: once per overlapping pair of pools, again when either's prefix changes
 *
 * The webhook warns at admission, but only the person applying sees that, and a pool
 * admitted before this check (or while the mirror lagged) is never reviewed again: the
 * Event stays on both objects for kubectl describe. The pass remembers the pairs it told
 * about, so a steady overlap costs no writes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "ipam/nv-ipam/controller/overlap_events.h"
#include "ipam/nv-ipam/k8s/overlap.h"

static int by_key(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static char *pair_key(const struct overlap_item *a, const struct overlap_item *b)
{
	char *k;

	if (asprintf(&k, "%s/%s %s\n%s/%s %s", a->kind, a->name, a->text, b->kind, b->name, b->text) < 0)
		return NULL;
	return k;
}

static bool seen(const struct overlap_seen *s, const char *key)
{
	return s->n && bsearch(&key, s->keys, s->n, sizeof(*s->keys), by_key);
}

static int tell(const struct overlap_item *a, const struct overlap_item *b, struct json_object *pool,
		int (*emit)(void *ctx, struct json_object *pool, const char *message), void *ctx)
{
	char what[OVERLAP_DESCRIBE_SIZE], msg[OVERLAP_DESCRIBE_SIZE + 96];

	overlap_describe(a, b, what, sizeof(what));
	snprintf(msg, sizeof(msg), "%s: a node given blocks of both may hand out one address twice",
		 what);
	return emit(ctx, pool, msg);
}

int overlap_events_pass(struct overlap_seen *s, struct json_object *const *pools, size_t n,
			int (*emit)(void *ctx, struct json_object *pool, const char *message),
			void *ctx)
{
	_cleanup_free_ struct overlap_item *items = NULL;
	_cleanup_free_ size_t *from = NULL;
	struct overlap_result res = { 0 };
	struct overlap_seen now = { 0 };
	size_t n_items = 0;
	bool failed = false;
	int r;

	r = overlap_items_from_pools(pools, n, &items, &from, &n_items);
	r = r ? r : overlap_find(items, n_items, OVERLAP_EVENTS_MAX_PAIRS, &res);
	if (r)
		return r;
	now.keys = calloc(res.n + 1, sizeof(*now.keys));
	if (!now.keys) {
		overlap_result_free(&res);
		return -ENOMEM;
	}
	for (size_t i = 0; i < res.n; i++) {
		const struct overlap_item *a = &items[res.pairs[i].a], *b = &items[res.pairs[i].b];
		char *key = pair_key(a, b);

		if (!key) {
			r = -ENOMEM;
			break;
		}
		if (!seen(s, key) &&
		    (tell(a, b, pools[from[res.pairs[i].a]], emit, ctx) < 0 ||
		     tell(b, a, pools[from[res.pairs[i].b]], emit, ctx) < 0)) {
			free(key);
			failed = true;
			continue;
		}
		now.keys[now.n++] = key;
	}
	overlap_result_free(&res);
	qsort(now.keys, now.n, sizeof(*now.keys), by_key);
	/* Out of memory: the old set stays, so nothing is told twice. */
	if (r) {
		overlap_seen_free(&now);
		return r;
	}
	overlap_seen_free(s);
	*s = now;
	return failed ? 1 : 0;
}

void overlap_seen_free(struct overlap_seen *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->keys[i]);
	free(s->keys);
	*s = (struct overlap_seen){ 0 };
}
