/*
 * Carving pools into per-node blocks exactly as the nv-ipam controller does (no I/O)
 *
 * The spec is read in carve_spec.c, the current status in carve_status.c; here, the
 * blocks are handed out.
 *
 * Both pool kinds are a row of equal blocks: an IPPool's blocks of perNodeBlockSize
 * addresses from network+1 (the network address for /31, /32, /127 and /128) up to the
 * last usable address (the IPv4 broadcast excluded), and a CIDRPool's prefixes of
 * perNodeNetworkPrefix inside cidr. A block is "fully excluded" when exclusions and
 * perNodeExclusions (relative to the block's start) cover it from its first address to
 * the last one a node would hand out: the whole IPPool block, or the CIDRPool prefix from
 * its network address (which no node hands out, yet the reference wants it excluded too)
 * to its last usable address (everything for two or one addresses).
 *
 * Scans never walk a huge pool one block at a time: perNodeExclusions covering a whole
 * block exclude every block (known when the spec is parsed), and a run of blocks under
 * one pool exclusion is skipped in one step, so an excluded block costs a step only per
 * exclusion span.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/k8s/carve.h"
#include "ipam/nv-ipam/k8s/carve_private.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/selector.h"

/* The first block at or after *@cursor that nobody holds; false when the pool is full. */
static bool next_free(const struct carve_spec *p, u128 *cursor, const u128 *taken, size_t n_taken,
		      const u128 *reserved, size_t n_reserved, u128 *ret)
{
	u128 k = *cursor, next;

	while (k < p->sp.count) {
		if (carve_u128_in(taken, n_taken, k) || carve_u128_in(reserved, n_reserved, k) ||
		    (p->sp.skip_gw && p->sp.first + k == p->sp.gw)) {
			k++;
			continue;
		}
		if (carve_block_excluded(&p->sp, k, &next)) {
			k = next;
			continue;
		}
		*ret = k;
		*cursor = k + 1;
		return true;
	}
	*cursor = k;
	return false;
}

static void push_alloc(struct carve_result *res, const struct carve_spec *p, const char *node,
		      u128 index, bool has_gw, const struct ip_addr *gw)
{
	struct carve_alloc *v = res->allocs; /* room for every matching node */
	u128 start = p->sp.first + index * p->sp.size;

	v[res->n_allocs++] = (struct carve_alloc){
		.node = node,
		.start = ipmath_to_addr(p->sp.family, start),
		.end = ipmath_to_addr(p->sp.family, start + p->sp.size - 1),
		.prefix_len = p->prefix_len,
		.has_gateway = has_gw,
		.gateway = has_gw ? *gw : (struct ip_addr){ 0 },
	};
}

static int carve_run(struct carve_spec *p, struct json_object *pool, const struct carve_node *nodes,
		     size_t n_nodes, struct carve_result *res)
{
	_cleanup_free_ struct carve_node *match = calloc(n_nodes ? n_nodes : 1, sizeof(*match));
	_cleanup_free_ struct carve_kept *kept = NULL;
	_cleanup_free_ u128 *taken = NULL, *reserved = NULL;
	size_t n_match = 0, n_kept = 0, n_taken = 0;
	u128 cursor = 0;
	int r;

	if (!match)
		return -ENOMEM;
	for (size_t i = 0; i < n_nodes; i++)
		if (selector_match(p->selector, nodes[i].name, nodes[i].labels))
			match[n_match++] = nodes[i];
	r = carve_status_kept(p, pool, match, n_match, &kept, &n_kept, &taken, &n_taken);
	if (r < 0)
		return r;
	reserved = malloc((p->n_statics ? p->n_statics : 1) * sizeof(*reserved));
	res->unplaced = calloc(n_match ? n_match : 1, sizeof(*res->unplaced));
	res->allocs = calloc(n_match ? n_match : 1, sizeof(*res->allocs));
	if (!reserved || !res->unplaced || !res->allocs)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_statics; i++)
		reserved[i] = p->statics[i].index;
	qsort(reserved, p->n_statics, sizeof(*reserved), carve_u128_cmp);
	res->n_kept = n_kept;

	for (size_t i = 0; i < n_match; i++) {
		struct carve_kept key = { .node = match[i].name };
		const struct carve_kept *k = bsearch(&key, kept, n_kept, sizeof(*kept), carve_kept_cmp);
		const struct static_alloc *st = p->cidrpool ? carve_static_for(p, match[i].name) : NULL;
		struct ip_addr gw = { 0 };
		bool has_gw;
		u128 index;

		if (k) {
			push_alloc(res, p, k->node, k->index, k->has_gateway, &k->gateway);
		} else if (st) {
			has_gw = carve_gateway(p, st->index, st, &gw);
			push_alloc(res, p, match[i].name, st->index, has_gw, &gw);
		} else if (next_free(p, &cursor, taken, n_taken, reserved, p->n_statics, &index)) {
			has_gw = p->cidrpool && carve_gateway(p, index, NULL, &gw);
			push_alloc(res, p, match[i].name, index, has_gw, &gw);
		} else {
			res->unplaced[res->n_unplaced++] = match[i].name;
		}
	}
	return 0;
}

int carve_pool(struct json_object *pool, const struct carve_node *nodes, size_t n_nodes,
	       struct carve_result *ret, struct cni_err *err)
{
	struct carve_result res = { 0 };
	struct carve_spec p = { 0 };
	struct cni_err why = { 0 };
	const char *kind = k8s_object_kind(pool), *name = k8s_object_name(pool);
	int r;

	if (strcmp(kind, "IPPool") != 0 && strcmp(kind, "CIDRPool") != 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "object \"%s\" is a \"%s\", not an IPPool or a CIDRPool",
				   name ? name : "", kind);
	p.cidrpool = res.cidrpool = strcmp(kind, "CIDRPool") == 0;
	r = carve_spec_parse(&p, pool, &why);
	if (r == -ENOMEM)
		goto oom;
	if (r < 0) {
		res.invalid = true;
		snprintf(res.reason, sizeof(res.reason), "%.*s", (int)sizeof(res.reason) - 1, why.msg);
	} else {
		r = carve_run(&p, pool, nodes, n_nodes, &res);
		if (r < 0)
			goto oom;
	}
	carve_spec_free(&p);
	*ret = res;
	return 0;
oom:
	carve_spec_free(&p);
	carve_result_free(&res);
	return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
}

void carve_result_free(struct carve_result *res)
{
	if (!res)
		return;
	free(res->allocs);
	free(res->unplaced);
	*res = (struct carve_result){ 0 };
}

int carve_result_json(const struct carve_result *res, struct json_object **ret)
{
	_cleanup_(json_object_putp) struct json_object *arr = json_object_new_array();

	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < res->n_allocs; i++) {
		const struct carve_alloc *a = &res->allocs[i];
		struct json_object *o = json_object_new_object();
		char buf[IP_PREFIX_STRLEN];
		struct ip_prefix pfx = { .addr = a->start, .len = a->prefix_len };
		int r;

		if (!o || json_object_array_add(arr, o) < 0) {
			json_object_put(o);
			return -ENOMEM;
		}
		r = k8s_json_add_str(o, "nodeName", a->node);
		if (res->cidrpool) {
			r = r ? r : k8s_json_add_str(o, "prefix", ip_prefix_format(&pfx, buf, sizeof(buf)));
			if (a->has_gateway)
				r = r ? r : k8s_json_add_str(o, "gateway", ip_addr_format(&a->gateway, buf, sizeof(buf)));
		} else {
			r = r ? r : k8s_json_add_str(o, "startIP", ip_addr_format(&a->start, buf, sizeof(buf)));
			r = r ? r : k8s_json_add_str(o, "endIP", ip_addr_format(&a->end, buf, sizeof(buf)));
		}
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(arr);
	return 0;
}

int carve_nodes_from_objects(const struct k8s_objects *objs, struct carve_node **ret,
			     size_t *ret_n, struct cni_err *err)
{
	_cleanup_free_ struct carve_node *v = calloc(objs->n_items ? objs->n_items : 1, sizeof(*v));
	size_t n = 0;

	if (!v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < objs->n_items; i++) {
		struct json_object *it = objs->items[i];
		const char *kind = k8s_object_kind(it);
		struct json_object *labels = k8s_object_member(it, "metadata", "labels");

		if (*kind && strcmp(kind, "Node") != 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "node list: item %zu is a \"%s\", not a Node", i, kind);
		if (!labels)
			labels = k8s_object_member(it, "labels", NULL);
		if (labels && !json_object_is_type(labels, json_type_object))
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					   "node list: item %zu: labels must be an object", i);
		v[n].name = k8s_object_name(it);
		v[n].labels = labels;
		if (!v[n].name || !*v[n].name)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "node list: item %zu has no name", i);
		n++;
	}
	qsort(v, n, sizeof(*v), carve_node_cmp);
	for (size_t i = 1; i < n; i++)
		if (strcmp(v[i - 1].name, v[i].name) == 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "node list: node \"%s\" is listed twice", v[i].name);
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}
