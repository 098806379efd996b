/*
 * Carving: reading an IPPool's or a CIDRPool's spec into the row of blocks it is carved
 * into, as the nv-ipam controller validates it (an invalid spec empties the status)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <json-c/json.h>

#include "common/util/error.h"
#include "common/util/json-exact.h"
#include "ipam/nv-ipam/carve/carve.h"
#include "ipam/nv-ipam/carve/carve_private.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/selector.h"
#include "ipam/nv-ipam/pool/pool.h"

int carve_u128_cmp(const void *a, const void *b)
{
	u128 x = *(const u128 *)a, y = *(const u128 *)b;

	return x < y ? -1 : x > y;
}

/* Beyond this many host bits, block counts no longer fit the arithmetic. */
#define HOST_BITS_MAX 126

/* The spec is invalid: the reason, as the controller's InvalidSpec gives one (code 7). */
#define bad(p, ...) cni_err_set((p)->err, CNI_ERR_INVALID_CONFIG, -EINVAL, __VA_ARGS__)

bool carve_block_excluded(const struct space *sp, u128 k, u128 *ret_next)
{
	u128 start = sp->first + k * sp->size;
	u128 cur = start, end = start + sp->use_hi;
	const struct spec_span *s;

	if (sp->all_excluded) {
		*ret_next = sp->count;
		return true;
	}
	for (;;) {
		const struct spec_span *a = spec_spans_find(&sp->excl, cur);
		const struct spec_span *b = spec_spans_find(&sp->per_node, cur - start);
		u128 reach;

		if (!a && !b)
			return false;
		reach = a ? a->hi : start + b->hi;
		if (a && b && start + b->hi > reach)
			reach = start + b->hi;
		if (reach >= end)
			break;
		cur = reach + 1;
	}
	s = spec_spans_find(&sp->excl, end);
	*ret_next = k + 1;
	if (s && (s->hi - sp->first + 1) / sp->size > k + 1)
		*ret_next = (s->hi - sp->first + 1) / sp->size;
	return true;
}

/* Typed members: a wrong type makes the spec invalid. */

static int get_int(struct carve_spec *p, struct json_object *o, const char *where, const char *key,
		   int64_t min, int64_t max, bool required, int64_t *ret)
{
	int r = cjson_member_int(o, key, min, max, ret, p->err);

	if (r < 0 && *where)
		return cni_err_prefix(p->err, r, "%.*s", (int)strlen(where) - 2, where);
	if (r == 0 && required)
		return bad(p, "%smissing \"%s\"", where, key);
	return r;
}

static const char *net_what(const struct carve_spec *p)
{
	return p->cidrpool ? "cidr" : "subnet";
}

static int parse_exclusions(struct carve_spec *p, struct json_object *spec)
{
	int r = spec_read_exclusions(cjson_member_any, spec, &p->net, net_what(p), NULL,
				     &p->sp.excl, p->err);

	if (r < 0)
		return r;
	spec_spans_merge(&p->sp.excl);
	return 0;
}

/* perNodeExclusions; sp.use_hi must be set. */
static int parse_per_node(struct carve_spec *p, struct json_object *spec, u128 last_index)
{
	const struct spec_span *s;
	int r = spec_read_per_node(cjson_member_any, spec, 0, last_index,
				   p->cidrpool ? "prefix" : "block", &p->sp.per_node, p->err);

	if (r < 0)
		return r;
	spec_spans_merge(&p->sp.per_node);
	/*
	 * Per-node exclusions alone covering the range a node hands out exclude every block.
	 * Said once here, or a scan would test each of up to 2^126 blocks in turn.
	 */
	s = spec_spans_find(&p->sp.per_node, 0);
	p->sp.all_excluded = s && s->hi >= p->sp.use_hi;
	return 0;
}

/* nodeSelector, defaultGateway and routes; @gw_what names what a gateway needs. */
static int parse_common(struct carve_spec *p, struct json_object *spec, bool has_gw,
			const char *gw_what)
{
	struct json_object *arr;
	bool def = false;
	int r;

	p->selector = k8s_object_member(spec, "nodeSelector", NULL);
	if (p->selector && selector_validate(p->selector, p->err) < 0)
		return -EINVAL;
	if (cjson_member_bool(spec, "defaultGateway", &def, p->err) < 0)
		return -EINVAL;
	if (def && !has_gw)
		return bad(p, "\"defaultGateway\" cannot be true if %s is not set", gw_what);
	r = spec_read_objects(cjson_member_any, spec, "routes", &arr, p->err);
	if (r < 0)
		return r;
	for (size_t i = 0; r > 0 && i < json_object_array_length(arr); i++) {
		struct ip_prefix dst;
		const char *s = NULL;
		char where[32];

		if (!has_gw)
			return bad(p, "\"routes\" cannot be set if %s is not set", gw_what);
		snprintf(where, sizeof(where), "routes[%zu]: ", i);
		if (spec_read_str(cjson_member_any, json_object_array_get_idx(arr, i), where, "dst",
				  true, &s, p->err) < 0)
			return -EINVAL;
		if (ip_prefix_parse(s, &dst) < 0)
			return bad(p, "%s\"dst\": invalid CIDR \"%s\"", where, s);
		if (dst.addr.family != p->net.addr.family)
			return bad(p, "%s\"dst\" %s is not of the pool's address family", where, s);
		if (def && dst.len == 0)
			return bad(p, "%sdefault route %s is not allowed with \"defaultGateway\"", where, s);
	}
	return 0;
}

static int parse_network(struct carve_spec *p, struct json_object *spec, const char *key,
			 bool strict)
{
	const char *s = NULL;
	struct ip_prefix net;

	if (spec_read_str(cjson_member_any, spec, "", key, true, &s, p->err) < 0)
		return -EINVAL;
	if (ip_prefix_parse(s, &p->net) < 0)
		return bad(p, "\"%s\": invalid CIDR \"%s\"", key, s);
	net = ip_prefix_network(&p->net);
	if (strict && !ip_addr_equal(&net.addr, &p->net.addr))
		return bad(p, "\"%s\" %s: network prefix has host bits set", key, s);
	p->net = net;
	p->sp.family = net.addr.family;
	return 0;
}

static int parse_ippool(struct carve_spec *p, struct json_object *spec)
{
	unsigned int bits, hb;
	u128 net, host, last, usable;
	int64_t size = 0;
	int r;

	if (parse_network(p, spec, "subnet", false) < 0)
		return -EINVAL;
	bits = ipmath_bits(p->sp.family);
	hb = bits - p->net.len;
	if (hb > HOST_BITS_MAX)
		return bad(p, "\"subnet\" is too large");
	net = ipmath_from_addr(&p->net.addr);
	host = ipmath_host_mask(p->sp.family, p->net.len);
	/*
	 * Point-to-point and single-address subnets (/31, /127, /32, /128) use every address,
	 * from the network address on, whatever the family: the controller tests the prefix
	 * length against the address width. Otherwise network+1 up to broadcast-1 (IPv4,
	 * 2^n-2 usable) or up to the all-ones address (IPv6, 2^n-1 usable).
	 */
	if (hb <= 1) {
		p->sp.first = net;
		last = net | host;
	} else {
		p->sp.first = net + 1;
		last = p->sp.family == AF_INET ? (net | host) - 1 : net | host;
	}
	usable = last - p->sp.first + 1;
	if (get_int(p, spec, "", "perNodeBlockSize", 1, INT64_MAX, true, &size) < 0)
		return -EINVAL;
	if ((u128)size > usable)
		return bad(p, "\"perNodeBlockSize\" %lld is larger than the subnet's usable addresses",
			   (long long)size);
	p->sp.size = (u128)size;
	p->sp.count = usable / p->sp.size;
	p->sp.use_hi = p->sp.size - 1;
	r = spec_read_addr(cjson_member_any, spec, "", "gateway", false, &p->net, "subnet",
			   &p->gateway, p->err);
	if (r < 0)
		return r;
	p->has_gateway = r > 0;
	p->sp.skip_gw = p->has_gateway && size == 1;
	p->sp.gw = ipmath_from_addr(&p->gateway);
	if ((r = parse_exclusions(p, spec)) < 0 || (r = parse_per_node(p, spec, p->sp.size - 1)) < 0)
		return r;
	return parse_common(p, spec, p->has_gateway, "spec.gateway");
}

/* The gateway for the prefix at @base, as gatewayIndex places it; false without one. */
static bool index_gateway(const struct carve_spec *p, u128 base, struct ip_addr *ret)
{
	if (!p->has_gw_index)
		return false;
	/* parse_cidrpool() refused an index outside the prefix's usable addresses. */
	*ret = ipmath_to_addr(p->sp.family, base + p->gw_index);
	return true;
}

/* One element of staticAllocations, the @i-th; its failure in @err. */
static int parse_static(const struct carve_spec *p, struct json_object *e, size_t i,
			struct static_alloc *st, struct cni_err *err)
{
	struct ip_prefix pfx, pnet;
	const char *s = NULL;
	char where[48];
	int r;

	snprintf(where, sizeof(where), "staticAllocations[%zu]: ", i);
	st->node = "";
	if (spec_read_str(cjson_member_any, e, where, "nodeName", false, &st->node, err) < 0 ||
	    spec_read_str(cjson_member_any, e, where, "prefix", true, &s, err) < 0)
		return -EINVAL;
	if (ip_prefix_parse(s, &pfx) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s\"prefix\" %s is not a valid network prefix", where, s);
	pnet = ip_prefix_network(&pfx);
	if (!ip_addr_equal(&pnet.addr, &pfx.addr))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s\"prefix\" %s: network prefix has host bits set", where, s);
	if (!ip_prefix_contains(&p->net, &pfx.addr))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s\"prefix\" %s is not part of the pool cidr", where, s);
	if (pfx.len != p->prefix_len)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s\"prefix\" %s: size doesn't match spec.perNodeNetworkPrefix", where, s);
	st->index = (ipmath_from_addr(&pfx.addr) - p->sp.first) / p->sp.size;
	r = spec_read_addr(cjson_member_any, e, where, "gateway", false, &pfx, "prefix",
			   &st->gateway, err);
	if (r < 0)
		return r;
	st->has_gateway = r > 0;
	return 0;
}

/* Orders of the sorted views: by key, then by place in the list (a pointer into statics). */
static int by_node_cmp(const void *a, const void *b)
{
	const struct static_alloc *x = *(const struct static_alloc *const *)a;
	const struct static_alloc *y = *(const struct static_alloc *const *)b;
	int r = strcmp(x->node, y->node);

	return r ? r : (x < y ? -1 : x > y);
}

static int by_index_cmp(const void *a, const void *b)
{
	const struct static_alloc *x = *(const struct static_alloc *const *)a;
	const struct static_alloc *y = *(const struct static_alloc *const *)b;
	int r = carve_u128_cmp(&x->index, &y->index);

	return r ? r : (x < y ? -1 : x > y);
}

/*
 * The first entry listed after another of its node (@node) or of its prefix, and that
 * other: sorted, an entry's earliest equal is the head of its run. NULL when none.
 */
static const struct static_alloc *first_repeat(const struct static_alloc **v, size_t n, bool node,
					       const struct static_alloc **ret_earlier)
{
	const struct static_alloc *best = NULL;

	for (size_t i = 1, head = 0; i < n; i++) {
		bool same = node ? strcmp(v[i]->node, v[head]->node) == 0 : v[i]->index == v[head]->index;

		if (!same) {
			head = i;
			continue;
		}
		if (!best || v[i] < best) {
			best = v[i];
			*ret_earlier = v[head];
		}
	}
	return best;
}

/*
 * staticAllocations: each entry parsed, then repeats found on sorted views, reported as
 * a scan in list order meets them: the first entry that is broken or repeats an earlier
 * one decides, a repeated node before a repeated prefix of the same earlier entry.
 */
static int parse_statics(struct carve_spec *p, struct json_object *spec)
{
	const struct static_alloc *by_node_dup, *by_index_dup, *earlier_node = NULL, *earlier_index = NULL;
	struct cni_err broken = { 0 };
	struct json_object *arr;
	int r = spec_read_objects(cjson_member_any, spec, "staticAllocations", &arr, p->err);
	size_t n = r > 0 ? json_object_array_length(arr) : 0, bad_at;

	if (r < 0)
		return r;
	p->statics = calloc(n ? n : 1, sizeof(*p->statics));
	p->by_node = calloc(n ? n : 1, sizeof(*p->by_node));
	p->by_index = calloc(n ? n : 1, sizeof(*p->by_index));
	if (!p->statics || !p->by_node || !p->by_index)
		return -ENOMEM;
	for (bad_at = 0; bad_at < n; bad_at++) {
		struct static_alloc *st = &p->statics[bad_at];

		r = parse_static(p, json_object_array_get_idx(arr, bad_at), bad_at, st, &broken);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			break;
		if (*st->node)
			p->by_node[p->n_by_node++] = st;
		p->by_index[p->n_statics++] = st;
	}
	qsort(p->by_node, p->n_by_node, sizeof(*p->by_node), by_node_cmp);
	qsort(p->by_index, p->n_statics, sizeof(*p->by_index), by_index_cmp);
	by_node_dup = first_repeat(p->by_node, p->n_by_node, true, &earlier_node);
	by_index_dup = first_repeat(p->by_index, p->n_statics, false, &earlier_index);
	if (by_node_dup && (!by_index_dup || by_node_dup < by_index_dup ||
			    (by_node_dup == by_index_dup && earlier_node <= earlier_index)))
		return bad(p, "staticAllocations contains multiple entries for node %s", by_node_dup->node);
	if (by_index_dup) {
		const char *s = NULL;

		spec_read_str(cjson_member_any,
			      json_object_array_get_idx(arr, (size_t)(by_index_dup - p->statics)),
			      "", "prefix", true, &s, &broken);
		return bad(p, "staticAllocations contains multiple entries for prefix %s", s ? s : "");
	}
	if (bad_at < n)
		return cni_err_set(p->err, broken.code, -EINVAL, "%s", broken.msg);
	return 0;
}

static int parse_cidrpool(struct carve_spec *p, struct json_object *spec)
{
	unsigned int bits, hb;
	int64_t len = 0, idx = 0;
	int r;

	if (parse_network(p, spec, "cidr", true) < 0)
		return -EINVAL;
	bits = ipmath_bits(p->sp.family);
	if (get_int(p, spec, "", "perNodeNetworkPrefix", 0, INT32_MAX, true, &len) < 0)
		return -EINVAL;
	if (len == 0 || len > (int64_t)bits || len < (int64_t)p->net.len)
		return bad(p, "\"perNodeNetworkPrefix\" %lld must be between the cidr's prefix length "
			   "and %u", (long long)len, bits);
	if ((unsigned int)len - p->net.len > HOST_BITS_MAX)
		return bad(p, "\"cidr\" holds too many node prefixes");
	p->prefix_len = (unsigned int)len;
	hb = bits - p->prefix_len;
	p->sp.first = ipmath_from_addr(&p->net.addr);
	p->sp.size = ipmath_host_mask(p->sp.family, p->prefix_len) + 1;
	p->sp.count = (u128)1 << (p->prefix_len - p->net.len);
	/* The last address a node hands out: the IPv4 broadcast address is not one. */
	p->sp.use_hi = hb > 1 && p->sp.family == AF_INET ? p->sp.size - 2 : p->sp.size - 1;
	r = get_int(p, spec, "", "gatewayIndex", 0, INT32_MAX, false, &idx);
	if (r < 0)
		return r;
	p->has_gw_index = r > 0;
	p->gw_index = (u128)idx;
	/* The gateway is a usable address: the network address only in a /31, /32, /127, /128. */
	if (p->has_gw_index && ((hb > 1 && p->gw_index == 0) || p->gw_index > p->sp.use_hi))
		return bad(p, "\"gatewayIndex\" %lld is outside of the node prefix", (long long)idx);
	if ((r = parse_exclusions(p, spec)) < 0 || (r = parse_per_node(p, spec, p->sp.size - 1)) < 0 ||
	    (r = parse_statics(p, spec)) < 0)
		return r;
	return parse_common(p, spec, p->has_gw_index, "spec.gatewayIndex");
}

static int node_key_cmp(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct static_alloc *const *)elem)->node);
}

static int index_key_cmp(const void *key, const void *elem)
{
	return carve_u128_cmp(key, &(*(const struct static_alloc *const *)elem)->index);
}

const struct static_alloc *carve_static_for(const struct carve_spec *p, const char *node)
{
	const struct static_alloc *const *hit =
		bsearch(node, p->by_node, p->n_by_node, sizeof(*p->by_node), node_key_cmp);

	return hit ? *hit : NULL;
}

const struct static_alloc *carve_static_at(const struct carve_spec *p, u128 index)
{
	const struct static_alloc *const *hit =
		bsearch(&index, p->by_index, p->n_statics, sizeof(*p->by_index), index_key_cmp);

	return hit ? *hit : NULL;
}

bool carve_gateway(const struct carve_spec *p, u128 index,
				  const struct static_alloc *st, struct ip_addr *ret)
{
	if (st && st->has_gateway) {
		*ret = st->gateway;
		return true;
	}
	return index_gateway(p, p->sp.first + index * p->sp.size, ret);
}

int carve_spec_parse(struct carve_spec *p, struct json_object *pool, struct cni_err *err)
{
	const char *name = k8s_object_name(pool);
	struct json_object *spec = k8s_object_member(pool, "spec", NULL);

	p->err = err;
	if (!name || !nvipam_pool_name_valid(name))
		return bad(p, "invalid pool name, should be compatible with CNI network name");
	if (!json_object_is_type(spec, json_type_object))
		return bad(p, "\"spec\" is missing");
	return p->cidrpool ? parse_cidrpool(p, spec) : parse_ippool(p, spec);
}

void carve_spec_free(struct carve_spec *p)
{
	spec_spans_free(&p->sp.excl);
	spec_spans_free(&p->sp.per_node);
	free(p->statics);
	free(p->by_node);
	free(p->by_index);
}
