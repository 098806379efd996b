/* OverlappingPools Events: once per overlapping pair of pools, again when either's prefix changes */
#pragma once

#include <stddef.h>

struct json_object;

/* The pairs told about, as "<kind>/<name> <prefix>\n<kind>/<name> <prefix>", sorted. */
struct overlap_seen {
	char **keys;
	size_t n;
};

/* At most this many pairs are looked at in a pass (n identical pools make n(n-1)/2). */
#define OVERLAP_EVENTS_MAX_PAIRS 1000

/**
 * overlap_events_pass() - tell about the pairs of pools that overlap and were not told about
 * @s: the pairs told about so far; replaced by the pairs overlapping now that were told
 * @pools: the IPPools and CIDRPools now
 * @n: how many
 * @emit: writes an Event on @pool with @message: 0 written, 1 held back, negative failed
 *        (the pair is tried again at the next pass)
 * @ctx: for @emit
 *
 * Each new pair gets an Event on both pools, each naming the other.
 *
 * Return: 0, 1 when an Event failed (its pair is tried again at the next pass), or -ENOMEM.
 */
int overlap_events_pass(struct overlap_seen *s, struct json_object *const *pools, size_t n,
			int (*emit)(void *ctx, struct json_object *pool, const char *message),
			void *ctx);

/**
 * overlap_seen_free() - release the pairs and zero them
 * @s: pairs
 */
void overlap_seen_free(struct overlap_seen *s);
