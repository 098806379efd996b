/* Pools whose addresses overlap: IPPool subnets and CIDRPool cidrs, or a node's blocks */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/pool/ipmath.h"

struct nvipam_pools;

/* One pool's addresses, inclusive; the strings are borrowed from what it was read from. */
struct overlap_item {
	const char *kind;   /* "IPPool", "CIDRPool" */
	const char *name;
	const char *text;   /* "192.168.96.0/24" as the spec wrote it, or "a-b" for a block */
	int family;         /* AF_INET or AF_INET6 */
	ipmath_u128 lo, hi;
};

/* Two items whose addresses overlap: indexes into the items given, a < b. */
struct overlap_pair {
	size_t a, b;
};

struct overlap_result {
	struct overlap_pair *pairs; /* sorted by (a, b) */
	size_t n;
	bool truncated;             /* more pairs than the cap: the first ones found are kept */
};

/* Room for a node block as "start-end" text. */
#define OVERLAP_TEXT_SIZE 96

/* A node pool file's blocks as items, with the text the items point to. */
struct overlap_blocks {
	struct overlap_item *items;
	char (*texts)[OVERLAP_TEXT_SIZE];
	size_t n;
};

/**
 * overlap_meet() - whether two items share an address
 * @a: item
 * @b: item
 *
 * Return: true when they do.
 */
static inline bool overlap_meet(const struct overlap_item *a, const struct overlap_item *b)
{
	return a->family == b->family && a->lo <= b->hi && b->lo <= a->hi;
}

/**
 * overlap_find() - every pair of items whose addresses overlap
 * @items: the items (any order; IPv4 and IPv6 never overlap each other)
 * @n: how many
 * @max_pairs: stop after this many pairs (n identical pools make n(n-1)/2)
 * @ret: the pairs, written only on success; release with overlap_result_free()
 *
 * Sorts by family and first address and walks each item's successors while they start
 * inside it: O(n log n) plus the pairs found.
 *
 * Return: 0, or -ENOMEM.
 */
int overlap_find(const struct overlap_item *items, size_t n, size_t max_pairs,
		 struct overlap_result *ret);

/**
 * overlap_result_free() - release the pairs and zero them
 * @r: result
 */
void overlap_result_free(struct overlap_result *r);

/* Room for overlap_describe()'s text. */
#define OVERLAP_DESCRIBE_SIZE (4 * K8S_QUOTE_SIZE + 64)

/**
 * overlap_describe() - '<kind> "<name>" <prefix> overlaps <kind> "<name>" <prefix>', the
 *                      strings escaped and cut (k8s_quote())
 * @a: item
 * @b: item
 * @buf: output
 * @size: its size, OVERLAP_DESCRIBE_SIZE
 */
void overlap_describe(const struct overlap_item *a, const struct overlap_item *b, char *buf,
		      size_t size);

/**
 * overlap_item_from_pool() - a pool object's addresses: IPPool spec.subnet, CIDRPool spec.cidr
 * @obj: the pool (kind from "kind", else guessed as k8s_object_kind() does)
 * @ret: the item, pointing into @obj
 *
 * Return: 0, or -EINVAL when the object has no name or no prefix that parses (the webhook's
 * rules refuse it; nothing is allocated from it).
 */
int overlap_item_from_pool(struct json_object *obj, struct overlap_item *ret);

/**
 * overlap_items_from_pools() - overlap_item_from_pool() of each object, skipping those it refuses
 * @objs: the pools
 * @n: how many
 * @ret: malloc'ed items pointing into @objs, written only on success
 * @ret_idx: malloc'ed, the object each item came from (NULL when not wanted)
 * @ret_n: how many items
 *
 * Return: 0, or -ENOMEM.
 */
int overlap_items_from_pools(struct json_object *const *objs, size_t n, struct overlap_item **ret,
			     size_t **ret_idx, size_t *ret_n);

/**
 * overlap_blocks_from_node_pools() - the blocks of a node pool file (the range each pool
 *                                    allocates from) as items
 * @pools: the file as nv-ipam loads it
 * @ret: items pointing into @pools and @ret's texts; release with overlap_blocks_free()
 *
 * Return: 0, or -ENOMEM.
 */
int overlap_blocks_from_node_pools(const struct nvipam_pools *pools, struct overlap_blocks *ret);

/**
 * overlap_blocks_free() - release blocks and zero them
 * @b: blocks
 */
void overlap_blocks_free(struct overlap_blocks *b);
