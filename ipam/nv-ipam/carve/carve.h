/* Carving pools into per-node blocks exactly as the nv-ipam controller does (no I/O) */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"

struct cni_err;
struct json_object;
struct k8s_objects;

struct carve_node {
	const char *name;           /* borrowed from the input objects */
	struct json_object *labels; /* NULL when the node has none */
};

struct carve_alloc {
	const char *node;           /* borrowed from the nodes */
	struct ip_addr start;       /* IPPool: the block; CIDRPool: the prefix's network */
	struct ip_addr end;         /* IPPool only */
	unsigned int prefix_len;    /* CIDRPool only */
	bool has_gateway;           /* CIDRPool only */
	struct ip_addr gateway;
};

struct carve_result {
	bool cidrpool;
	bool invalid;               /* InvalidSpec: the status becomes [] */
	char reason[512];           /* why the spec is invalid */
	struct carve_alloc *allocs; /* status.allocations, sorted by node name */
	size_t n_allocs;
	const char **unplaced;      /* matching nodes left without a block (NoFreeRanges/Prefixes) */
	size_t n_unplaced;
	size_t n_kept;              /* allocations kept from the existing status */
};

/**
 * carve_nodes_from_objects() - the node list, sorted by name
 * @objs: Node objects (kubectl get nodes -o json) or {"name", "labels"} objects
 * @ret: malloc'ed array borrowing from @objs, written only on success
 * @ret_n: number of nodes
 * @err: code 7 for a node without a name or listed twice
 *
 * Return: 0 on success, negative errno on failure.
 */
int carve_nodes_from_objects(const struct k8s_objects *objs, struct carve_node **ret,
			     size_t *ret_n, struct cni_err *err);

/**
 * carve_pool() - compute a pool's status.allocations as the controller would
 * @pool: an IPPool or CIDRPool object (spec and, optionally, the current status)
 * @nodes: every node, sorted by name (carve_nodes_from_objects())
 * @n_nodes: number of nodes
 * @ret: result, written only on success; release with carve_result_free()
 * @err: code 7 when @pool is neither an IPPool nor a CIDRPool
 *
 * Nodes matching spec.nodeSelector are taken in name order. Valid existing
 * allocations of matching nodes are kept (an IPPool node listed twice keeps its
 * last valid entry, the earlier one's block staying unused this run); every
 * other matching node gets its CIDRPool static allocation or the first free
 * aligned block, skipping blocks that are taken, statically reserved, fully
 * excluded (exclusions plus perNodeExclusions) or, for blocks of one address,
 * the gateway. An invalid spec gives an empty status and @ret->invalid with
 * the reason.
 *
 * Return: 0 on success, negative errno on failure.
 */
int carve_pool(struct json_object *pool, const struct carve_node *nodes, size_t n_nodes,
	       struct carve_result *ret, struct cni_err *err);

/**
 * carve_entry_check() - whether a node may use its status entry, as the reference node daemon
 *                       decides: the pool's spec valid (the controller's rules), and for a
 *                       CIDRPool the entry's prefix of the right size inside cidr, not given
 *                       to another node nor reserved by another node's static allocation (or
 *                       one without a node), matching the node's own static allocation, its
 *                       gateway the one gatewayIndex (or the static allocation) gives, none
 *                       without one, and no other entry sharing its prefix, gateway or node
 * @pool: an IPPool or CIDRPool object
 * @node: the node
 * @entry: the node's entry in @pool's status.allocations
 * @err: the reason, when refused (code 7); code 999 when out of memory
 *
 * An IPPool's block is checked by nv-ipam's pool file loader (inside the subnet, start
 * before end).
 *
 * Return: 0 when usable, -EINVAL when refused, -ENOMEM.
 */
int carve_entry_check(struct json_object *pool, const char *node, struct json_object *entry,
		      struct cni_err *err);

/**
 * carve_pool_trim() - what a node keeps of a pool: only what nodefile_render() and
 *                     carve_entry_check() read for it
 * @pool: an IPPool or CIDRPool object, as listed or watched
 * @cidrpool: whether it is a CIDRPool (list items may come without their kind)
 * @node: the node
 * @ret: a new object sharing nothing with @pool: the kind, metadata.name, a copy of the spec
 *       and status.allocations with copies of the node's entries, and for a CIDRPool of the
 *       other entries that share the prefix or gateway of the node's first one, in order
 *
 * nodefile_render() of the trimmed pool gives the same file and the same notes as of
 * @pool, at the cost of a few entries instead of one per node of the cluster.
 *
 * Return: 0 on success, -ENOMEM.
 */
int carve_pool_trim(struct json_object *pool, bool cidrpool, const char *node,
		    struct json_object **ret);

/**
 * carve_result_json() - status.allocations as JSON
 * @res: result
 * @ret: new array ({nodeName, startIP, endIP} or {nodeName, prefix[, gateway]})
 *
 * Return: 0 on success, -ENOMEM.
 */
int carve_result_json(const struct carve_result *res, struct json_object **ret);

/**
 * carve_result_free() - release a result and zero it
 * @res: result
 */
void carve_result_free(struct carve_result *res);
