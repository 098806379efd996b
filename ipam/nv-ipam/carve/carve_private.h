/* Carving's own types and steps, shared by carve.c, carve_spec.c and carve_status.c only */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/pool/ipmath.h"
#include "ipam/nv-ipam/pool/spec.h"

struct carve_node;
struct cni_err;
struct json_object;

typedef ipmath_u128 u128;

/* The row of blocks a pool is carved into. */
struct space {
	int family;
	u128 first;    /* start of block 0 */
	u128 size;     /* addresses per block */
	u128 count;    /* number of blocks */
	u128 use_hi;   /* offsets 0..use_hi of a block must all be excluded for it to count */
	struct spec_spans excl;     /* absolute, merged */
	struct spec_spans per_node; /* offsets from a block's start, merged */
	bool all_excluded;     /* per_node alone covers 0..use_hi: no block can be given */
	bool skip_gw;          /* blocks of one address: the gateway's is never handed out */
	u128 gw;
};

struct static_alloc {
	const char *node; /* "" only reserves the prefix */
	u128 index;
	bool has_gateway;
	struct ip_addr gateway;
};

/* Everything parsed from one pool object. */
struct carve_spec {
	bool cidrpool;
	struct ip_prefix net;     /* subnet or cidr, host bits cleared */
	struct space sp;
	unsigned int prefix_len;  /* CIDRPool: perNodeNetworkPrefix */
	bool has_gateway;         /* IPPool: spec.gateway */
	struct ip_addr gateway;
	bool has_gw_index;        /* CIDRPool: spec.gatewayIndex */
	u128 gw_index;
	struct static_alloc *statics;
	size_t n_statics;
	const struct static_alloc **by_node;  /* those with a node, sorted by node name */
	size_t n_by_node;
	const struct static_alloc **by_index; /* all of them, sorted by block index */
	struct json_object *selector;
	struct cni_err *err;      /* why the spec is invalid (InvalidSpec) */
};

/* A valid status entry of a matching node, kept as it is. */
struct carve_kept {
	const char *node;
	u128 index;
	bool has_gateway;
	struct ip_addr gateway;
};

/**
 * carve_spec_parse() - read an IPPool's or a CIDRPool's name and spec
 * @p: spec, @cidrpool and @err set; the rest is written
 * @pool: the object
 * @err: code 7 with the reason the controller gives for InvalidSpec, 999 for out of memory
 *
 * Return: 0 on success, -ENOMEM, another negative errno for an invalid spec.
 */
int carve_spec_parse(struct carve_spec *p, struct json_object *pool, struct cni_err *err);

/**
 * carve_spec_free() - release what carve_spec_parse() allocated
 * @p: spec
 */
void carve_spec_free(struct carve_spec *p);

/**
 * carve_block_excluded() - whether every checked address of block @k is excluded
 * @sp: the row of blocks
 * @k: the block
 * @ret_next: when it is, the first block past the pool exclusion covering its end
 *            (the blocks before it are excluded too)
 *
 * Return: true when it is.
 */
bool carve_block_excluded(const struct space *sp, u128 k, u128 *ret_next);

/**
 * carve_static_for() - a CIDRPool's static allocation of a node
 * @p: spec
 * @node: node name
 *
 * Return: the allocation, NULL when none.
 */
const struct static_alloc *carve_static_for(const struct carve_spec *p, const char *node);

/**
 * carve_static_at() - a CIDRPool's static allocation of a prefix
 * @p: spec
 * @index: the prefix's block index
 *
 * Return: the allocation (with or without a node), NULL when none.
 */
const struct static_alloc *carve_static_at(const struct carve_spec *p, u128 index);

/**
 * carve_gateway() - the gateway a CIDRPool allocation of prefix @index must carry
 * @p: spec
 * @index: the prefix's block index
 * @st: the node's static allocation, or NULL
 * @ret: the gateway
 *
 * Return: true with a gateway, false without one.
 */
bool carve_gateway(const struct carve_spec *p, u128 index, const struct static_alloc *st,
		   struct ip_addr *ret);

/**
 * carve_status_kept() - the valid status entries of matching nodes, and the blocks taken
 * @p: spec
 * @pool: the object, with its current status
 * @match: the matching nodes, sorted by name
 * @n_match: their number
 * @ret: malloc'ed entries kept, sorted by node name (carve_kept_cmp())
 * @ret_n: their number
 * @ret_taken: malloc'ed blocks taken, sorted (superseded IPPool entries take their block
 *             without keeping it)
 * @ret_n_taken: their number
 *
 * Return: 0 on success, -ENOMEM.
 */
int carve_status_kept(const struct carve_spec *p, struct json_object *pool,
		      const struct carve_node *match, size_t n_match, struct carve_kept **ret,
		      size_t *ret_n, u128 **ret_taken, size_t *ret_n_taken);

/**
 * carve_kept_cmp() - qsort()/bsearch() order of kept entries: by node name
 * @a: a const struct carve_kept *
 * @b: another
 *
 * Return: negative, 0 or positive.
 */
int carve_kept_cmp(const void *a, const void *b);

/**
 * carve_node_find() - a node by name
 * @v: nodes sorted by name
 * @n: their number
 * @name: the name
 *
 * Return: the node, NULL when absent.
 */
const struct carve_node *carve_node_find(const struct carve_node *v, size_t n, const char *name);

/**
 * carve_node_cmp() - qsort() order of nodes: by name
 * @a: a const struct carve_node *
 * @b: another
 *
 * Return: negative, 0 or positive.
 */
int carve_node_cmp(const void *a, const void *b);

/**
 * carve_u128_cmp() - qsort()/bsearch() order of u128 values
 * @a: a const u128 *
 * @b: another
 *
 * Return: negative, 0 or positive.
 */
int carve_u128_cmp(const void *a, const void *b);

/**
 * carve_u128_in() - whether a sorted array holds a value
 * @v: values, sorted
 * @n: their number
 * @x: the value
 *
 * Return: true when it does.
 */
bool carve_u128_in(const u128 *v, size_t n, u128 x);
