/*
 * Carving: a pool's current status, as the controller loads it before carving: valid
 * entries of matching nodes kept, conflicting ones dropped, the blocks they take
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json-exact.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/carve/carve.h"
#include "ipam/nv-ipam/carve/carve_private.h"
#include "ipam/nv-ipam/k8s/k8s.h"

struct entry {
	const char *node;
	bool parsed;
	u128 index;        /* block index */
	bool has_gateway;
	struct ip_addr gateway;
	bool drop;         /* not loaded */
	bool superseded;   /* IPPool: loaded, then replaced by a later entry of its node */
};

int carve_node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct carve_node *)a)->name, ((const struct carve_node *)b)->name);
}

const struct carve_node *carve_node_find(const struct carve_node *v, size_t n, const char *name)
{
	struct carve_node key = { .name = name };

	return bsearch(&key, v, n, sizeof(*v), carve_node_cmp);
}

bool carve_u128_in(const u128 *v, size_t n, u128 x)
{
	return n && bsearch(&x, v, n, sizeof(*v), carve_u128_cmp) != NULL;
}

/*
 * A string of a status entry; NULL when it is absent, no string, or holds a NUL (which
 * would cut it short: "10.0.0.0/24\u0000junk" is no prefix).
 */
static const char *entry_str(struct json_object *e, const char *key)
{
	struct json_object *v = cjson_member_any(e, key);

	if (!json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return NULL;
	return json_object_get_string(v);
}

/*
 * An IPPool status entry the controller loads: aligned, right-sized, inside the subnet,
 * not fully excluded, a one-address block not on the gateway.
 */
static bool ippool_entry_parse(const struct carve_spec *p, struct json_object *e, struct entry *ret)
{
	const char *vs = entry_str(e, "startIP"), *ve = entry_str(e, "endIP");
	struct ip_addr a, b;
	u128 x, y, next;

	if (!vs || !ve || ip_addr_parse(vs, &a) < 0 || ip_addr_parse(ve, &b) < 0 ||
	    a.family != p->sp.family || b.family != p->sp.family)
		return false;
	x = ipmath_from_addr(&a);
	y = ipmath_from_addr(&b);
	if (x < p->sp.first || (x - p->sp.first) % p->sp.size != 0 || y < x ||
	    y - x + 1 != p->sp.size)
		return false;
	ret->index = (x - p->sp.first) / p->sp.size;
	return ret->index < p->sp.count && !carve_block_excluded(&p->sp, ret->index, &next) &&
	       !(p->sp.skip_gw && x == p->sp.gw);
}

static bool cidr_entry_parse(const struct carve_spec *p, struct json_object *e, struct entry *ret)
{
	const char *vp = entry_str(e, "prefix");
	struct json_object *vg = cjson_member_any(e, "gateway");
	struct ip_prefix pfx, net;

	if (!vp || ip_prefix_parse(vp, &pfx) < 0)
		return false;
	net = ip_prefix_network(&pfx);
	if (!ip_addr_equal(&net.addr, &pfx.addr) || pfx.addr.family != p->sp.family ||
	    pfx.len != p->prefix_len || !ip_prefix_contains(&p->net, &pfx.addr))
		return false;
	ret->index = (ipmath_from_addr(&pfx.addr) - p->sp.first) / p->sp.size;
	if (vg && !entry_str(e, "gateway"))
		return false;
	if (vg && *json_object_get_string(vg)) {
		if (ip_addr_parse(json_object_get_string(vg), &ret->gateway) < 0)
			return false;
		ret->has_gateway = true;
	}
	return true;
}

static bool gateway_matches(bool has, const struct ip_addr *gw, bool want, const struct ip_addr *w)
{
	return has == want && (!has || ip_addr_equal(gw, w));
}

static int key_node(const struct entry *x, const struct entry *y)
{
	return strcmp(x->node, y->node);
}

static int key_index(const struct entry *x, const struct entry *y)
{
	return carve_u128_cmp(&x->index, &y->index);
}

static int key_gateway(const struct entry *x, const struct entry *y)
{
	if (x->has_gateway != y->has_gateway)
		return x->has_gateway ? 1 : -1;
	return ip_addr_cmp(&x->gateway, &y->gateway);
}

typedef int (*entry_key_fn)(const struct entry *, const struct entry *);

struct sort_ctx {
	const struct entry *v;
	entry_key_fn key;
};

/* By key, then by position: equal keys keep their order in the status. */
static int entry_cmp(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int r = c->key(&c->v[i], &c->v[j]);

	return r ? r : (i < j ? -1 : i > j);
}

/*
 * Entries sharing a block, a node or a gateway. An IPPool's, as the controller loads them
 * in status order: an entry on a block an earlier loaded entry holds is dropped; a node's
 * last loaded entry is its allocation, its earlier ones are superseded but their blocks
 * stay taken for this run. A CIDRPool drops every entry sharing a node, a prefix or a
 * gateway with another, as the reference validates them.
 */
static int mark_conflicts(struct entry *v, size_t n, bool cidrpool)
{
	static const entry_key_fn ippool_keys[] = { key_index, key_node };
	static const entry_key_fn cidr_keys[] = { key_node, key_index, key_gateway };
	const entry_key_fn *keys = cidrpool ? cidr_keys : ippool_keys;
	size_t n_keys = cidrpool ? 3 : 2;
	_cleanup_free_ size_t *idx = malloc((n ? n : 1) * sizeof(size_t));

	if (!idx)
		return -ENOMEM;
	for (size_t k = 0; k < n_keys; k++) {
		struct sort_ctx c = { .v = v, .key = keys[k] };
		size_t m = 0;

		/* A dropped IPPool entry was never loaded: it supersedes no one. */
		for (size_t i = 0; i < n; i++)
			if (v[i].parsed && (cidrpool || !v[i].drop))
				idx[m++] = i;
		qsort_r(idx, m, sizeof(*idx), entry_cmp, &c);
		for (size_t i = 1; i < m; i++) {
			struct entry *x = &v[idx[i - 1]], *y = &v[idx[i]];

			if (keys[k](x, y) != 0 || (keys[k] == key_gateway && !x->has_gateway))
				continue;
			if (cidrpool)
				x->drop = y->drop = true;
			else if (keys[k] == key_index)
				y->drop = true;
			else
				x->superseded = true;
		}
	}
	return 0;
}


int carve_kept_cmp(const void *a, const void *b)
{
	return strcmp(((const struct carve_kept *)a)->node, ((const struct carve_kept *)b)->node);
}

/*
 * Valid status entries of matching nodes, sorted by node name, and the blocks they take,
 * sorted (superseded IPPool entries take their block without keeping it).
 */
int carve_status_kept(const struct carve_spec *p, struct json_object *pool,
			const struct carve_node *match, size_t n_match, struct carve_kept **ret,
			size_t *ret_n, u128 **ret_taken, size_t *ret_n_taken)
{
	struct json_object *arr = k8s_object_member(pool, "status", "allocations");
	size_t n = json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
	_cleanup_free_ struct entry *v = calloc(n ? n : 1, sizeof(*v));
	_cleanup_free_ struct carve_kept *out = calloc(n ? n : 1, sizeof(*out));
	_cleanup_free_ u128 *taken = malloc((n ? n : 1) * sizeof(*taken));
	size_t m = 0, n_taken = 0;
	u128 next;

	if (!v || !out || !taken)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *vn = entry_str(e, "nodeName");
		struct entry *x = &v[i];

		if (!vn || !*vn)
			continue;
		x->node = vn;
		/*
		 * Entries of nodes that left or no longer match are discarded before the others
		 * are checked for conflicts, so a stale entry never displaces a live node's block.
		 */
		if (!carve_node_find(match, n_match, x->node))
			continue;
		x->parsed = p->cidrpool ? cidr_entry_parse(p, e, x) : ippool_entry_parse(p, e, x);
	}
	if (mark_conflicts(v, n, p->cidrpool) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct entry *x = &v[i];
		const struct carve_node *node = x->parsed ? carve_node_find(match, n_match, x->node) : NULL;
		struct ip_addr want = { 0 };
		bool has_want;

		if (!node || x->drop)
			continue;
		if (p->cidrpool) {
			const struct static_alloc *st = carve_static_for(p, x->node);
			bool reserved = !st && carve_static_at(p, x->index);

			if (reserved || (st && st->index != x->index))
				continue;
			has_want = carve_gateway(p, x->index, st, &want);
			if (!gateway_matches(x->has_gateway, &x->gateway, has_want, &want))
				continue;
			if (!st && carve_block_excluded(&p->sp, x->index, &next))
				continue;
		}
		taken[n_taken++] = x->index;
		if (x->superseded)
			continue;
		out[m++] = (struct carve_kept){ .node = node->name, .index = x->index,
					  .has_gateway = x->has_gateway, .gateway = x->gateway };
	}
	qsort(out, m, sizeof(*out), carve_kept_cmp);
	qsort(taken, n_taken, sizeof(*taken), carve_u128_cmp);
	*ret = TAKE_PTR(out);
	*ret_n = m;
	*ret_taken = TAKE_PTR(taken);
	*ret_n_taken = n_taken;
	return 0;
}

/* "network/len" of block @index of a CIDRPool. */
static void prefix_text(const struct carve_spec *p, u128 index, char *buf, size_t len)
{
	struct ip_prefix pfx = { .addr = ipmath_to_addr(p->sp.family, p->sp.first + index * p->sp.size),
				 .len = p->prefix_len };

	ip_prefix_format(&pfx, buf, len);
}

#define refused(err, ...) cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, __VA_ARGS__)

/* Why a CIDRPool status entry is not the node's to use (in @err); 0 when it is. */
static int cidr_entry_check(const struct carve_spec *p, struct json_object *pool,
			    const char *node, struct json_object *entry, struct cni_err *err)
{
	struct json_object *arr = k8s_object_member(pool, "status", "allocations");
	const struct static_alloc *st = carve_static_for(p, node), *held;
	struct entry x = { .node = node };
	char a[IP_PREFIX_STRLEN], b[IP_PREFIX_STRLEN];
	struct ip_addr want;
	bool has_want;

	if (!cidr_entry_parse(p, entry, &x))
		return refused(err, "its prefix is not a /%u inside the pool's cidr, or its gateway "
			       "is not an address", p->prefix_len);
	prefix_text(p, x.index, a, sizeof(a));
	if (st && st->index != x.index) {
		prefix_text(p, st->index, b, sizeof(b));
		return refused(err, "prefix %s doesn't match prefix %s from the node's static "
			       "allocation", a, b);
	}
	held = st ? NULL : carve_static_at(p, x.index);
	if (held)
		return refused(err, "prefix %s is statically allocated %s%s", a,
			       *held->node ? "for different node: " : "without a node (reserved)",
			       held->node);
	has_want = carve_gateway(p, x.index, st, &want);
	if (!gateway_matches(x.has_gateway, &x.gateway, has_want, &want)) {
		if (has_want)
			return refused(err, "gateway %s doesn't match the gateway %s of %s",
				       x.has_gateway ? ip_addr_format(&x.gateway, b, sizeof(b)) : "(none)",
				       ip_addr_format(&want, a, sizeof(a)),
				       st && st->has_gateway ? "the node's static allocation" :
							       "gatewayIndex");
		return refused(err, "gateway %s given, but the pool has no gatewayIndex",
			       ip_addr_format(&x.gateway, b, sizeof(b)));
	}
	/* The reference takes an entry only when no other shares its prefix, gateway or node. */
	for (size_t i = 0; json_object_is_type(arr, json_type_array) &&
			   i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *vn = entry_str(e, "nodeName");
		struct entry y = { .node = vn ? vn : "" };
		char q[K8S_QUOTE_SIZE];

		if (e == entry)
			continue;
		if (strcmp(y.node, node) == 0)
			return refused(err, "the node has two allocations in the status");
		if (!cidr_entry_parse(p, e, &y))
			continue;
		if (y.index == x.index || (x.has_gateway && y.has_gateway &&
					   ip_addr_equal(&x.gateway, &y.gateway)))
			return refused(err, "its %s is also given to node %s",
				       y.index == x.index ? "prefix" : "gateway",
				       k8s_quote(y.node, q, sizeof(q)));
	}
	return 0;
}

int carve_entry_check(struct json_object *pool, const char *node, struct json_object *entry,
		      struct cni_err *err)
{
	struct carve_spec p = { .cidrpool = strcmp(k8s_object_kind(pool), "CIDRPool") == 0 };
	int r = carve_spec_parse(&p, pool, err);

	if (r < 0 && r != -ENOMEM)
		cni_err_prefix(err, r, "invalid spec");
	else if (r == 0 && p.cidrpool)
		r = cidr_entry_check(&p, pool, node, entry, err);
	carve_spec_free(&p);
	return r < 0 && r != -ENOMEM ? -EINVAL : r;
}

/*
 * A copy of @v into @to (an array when @key is NULL): nothing of @pool is shared, since its
 * tree is freed on the thread that parsed it while another may copy what was kept.
 */
static int add_copy(struct json_object *to, const char *key, struct json_object *v)
{
	struct json_object *copy = NULL;

	if (json_object_deep_copy(v, &copy, NULL) < 0)
		return -ENOMEM;
	if (!key) {
		if (json_object_array_add(to, copy) < 0) {
			json_object_put(copy);
			return -ENOMEM;
		}
		return 0;
	}
	return k8s_json_add(to, key, copy);
}

static bool entry_is_node(struct json_object *e, const char *node)
{
	struct json_object *v = k8s_object_member(e, "nodeName", NULL);

	return json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), node) == 0;
}

/*
 * @node's entries of @arr into @out, in order, and for a CIDRPool the other entries that
 * carve_entry_check() of the node's first entry refuses it for (sharing its prefix or
 * gateway): what it and nodefile_render() read, nothing else.
 */
static int trim_allocations(struct json_object *pool, bool cidrpool, const char *node,
			    struct json_object *arr, struct json_object *out)
{
	struct carve_spec p = { .cidrpool = cidrpool };
	struct cni_err err = { 0 };
	struct entry mine = { .node = node };
	size_t n = json_object_array_length(arr), i = 0;
	bool check = false;
	int r = 0;

	while (i < n && !entry_is_node(json_object_array_get_idx(arr, i), node))
		i++;
	if (i == n)
		return 0;
	if (cidrpool) {
		r = carve_spec_parse(&p, pool, &err);
		if (r == -ENOMEM)
			return r;
		/* An invalid spec or entry is refused before the other entries are read. */
		check = r == 0 && cidr_entry_parse(&p, json_object_array_get_idx(arr, i), &mine);
		r = 0;
	}
	for (i = 0; i < n && r == 0; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *vn = entry_str(e, "nodeName");
		struct entry y = { 0 };
		/* The check's own reading of the name too: one absent (or holding a NUL) is "". */
		bool keep = entry_is_node(e, node) || strcmp(vn ? vn : "", node) == 0;

		if (!keep && check && cidr_entry_parse(&p, e, &y))
			keep = y.index == mine.index || (mine.has_gateway && y.has_gateway &&
							  ip_addr_equal(&mine.gateway, &y.gateway));
		if (keep)
			r = add_copy(out, NULL, e);
	}
	carve_spec_free(&p);
	return r;
}

int carve_pool_trim(struct json_object *pool, bool cidrpool, const char *node,
		    struct json_object **ret)
{
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
	struct json_object *arr = k8s_object_member(pool, "status", "allocations");
	struct json_object *spec = k8s_object_member(pool, "spec", NULL);
	const char *name = k8s_object_name(pool);
	struct json_object *meta, *status, *out;

	if (!o || k8s_json_add(o, "metadata", meta = json_object_new_object()) < 0 ||
	    k8s_json_add_str(o, "kind", cidrpool ? "CIDRPool" : "IPPool") < 0 ||
	    (name && k8s_json_add_str(meta, "name", name) < 0) ||
	    (spec && add_copy(o, "spec", spec) < 0))
		return -ENOMEM;
	if (arr) {
		bool list = json_object_is_type(arr, json_type_array);

		if (k8s_json_add(o, "status", status = json_object_new_object()) < 0)
			return -ENOMEM;
		/* Not an array: kept as it is, for the render to find no entry in. */
		if (!list && add_copy(status, "allocations", arr) < 0)
			return -ENOMEM;
		if (list && (k8s_json_add(status, "allocations", out = json_object_new_array()) < 0 ||
			     trim_allocations(pool, cidrpool, node, arr, out) < 0))
			return -ENOMEM;
	}
	*ret = TAKE_PTR(o);
	return 0;
}
