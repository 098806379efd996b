/*
 * Carving pools into per-node blocks exactly as the nv-ipam controller does (no I/O)
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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <json-c/json.h>

#include "common/cni/env.h"
#include "common/cni/error.h"
#include "common/cni/json.h"
#include "common/util/cleanup.h"
#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/pool/ipmath.h"
#include "ipam/nv-ipam/k8s/carve.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/selector.h"

#define POOL_NAME_MAX 253
/* Beyond this many host bits, block counts no longer fit the arithmetic. */
#define HOST_BITS_MAX 126

typedef ipmath_u128 u128;

struct span {
	u128 lo;
	u128 hi;
};

struct spans {
	struct span *v;
	size_t n;
};

/* The row of blocks a pool is carved into. */
struct space {
	int family;
	u128 first;    /* start of block 0 */
	u128 size;     /* addresses per block */
	u128 count;    /* number of blocks */
	u128 use_hi;   /* offsets 0..use_hi of a block must all be excluded for it to count */
	struct spans excl;     /* absolute, merged */
	struct spans per_node; /* offsets from a block's start, merged */
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
struct pool_spec {
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
	struct json_object *selector;
	char *why;                /* reason for InvalidSpec */
	size_t why_len;
};

static int bad(struct pool_spec *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct pool_spec *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why, p->why_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void spec_free(struct pool_spec *p)
{
	free(p->sp.excl.v);
	free(p->sp.per_node.v);
	free(p->statics);
}

/* ---- spans ---- */

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void spans_merge(struct spans *s)
{
	size_t out = 0;

	if (s->n == 0)
		return;
	qsort(s->v, s->n, sizeof(*s->v), span_cmp);
	for (size_t i = 1; i < s->n; i++) {
		if (s->v[i].lo == 0 || s->v[i].lo - 1 <= s->v[out].hi) {
			if (s->v[i].hi > s->v[out].hi)
				s->v[out].hi = s->v[i].hi;
		} else {
			s->v[++out] = s->v[i];
		}
	}
	s->n = out + 1;
}

/* The span holding @x, NULL when none (spans merged and sorted). */
static const struct span *spans_find(const struct spans *s, u128 x)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].hi < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo].lo <= x ? &s->v[lo] : NULL;
}

/*
 * Whether every checked address of block @k is excluded. When it is, *@ret_next is the
 * first block past the pool exclusion covering its end (blocks before it are excluded too).
 */
static bool block_excluded(const struct space *sp, u128 k, u128 *ret_next)
{
	u128 start = sp->first + k * sp->size;
	u128 cur = start, end = start + sp->use_hi;
	const struct span *s;

	if (sp->all_excluded) {
		*ret_next = sp->count;
		return true;
	}
	for (;;) {
		const struct span *a = spans_find(&sp->excl, cur);
		const struct span *b = spans_find(&sp->per_node, cur - start);
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
	s = spans_find(&sp->excl, end);
	*ret_next = k + 1;
	if (s && (s->hi - sp->first + 1) / sp->size > k + 1)
		*ret_next = (s->hi - sp->first + 1) / sp->size;
	return true;
}

/* ---- typed members; a wrong type makes the spec invalid ---- */

static int get_str(struct pool_spec *p, struct json_object *o, const char *where, const char *key,
		   bool required, const char **ret)
{
	struct cni_err e = { 0 };
	int r = cjson_get_str(o, key, ret, &e);

	if (r < 0)
		return bad(p, "%s%s", where, e.msg);
	if (r == 0 && required)
		return bad(p, "%s\"%s\" is required", where, key);
	return r;
}

static int get_int(struct pool_spec *p, struct json_object *o, const char *where, const char *key,
		   int64_t min, int64_t max, bool required, int64_t *ret)
{
	struct cni_err e = { 0 };
	int r = cjson_get_int(o, key, min, max, ret, &e);

	if (r < 0)
		return bad(p, "%s%s", where, e.msg);
	if (r == 0 && required)
		return bad(p, "%s\"%s\" is required", where, key);
	return r;
}

static int get_array(struct pool_spec *p, struct json_object *o, const char *key,
		     struct json_object **ret)
{
	struct cni_err e = { 0 };
	int r;

	*ret = NULL;
	r = cjson_get_typed(o, key, json_type_array, ret, &e);
	if (r < 0)
		return bad(p, "%s", e.msg);
	for (size_t i = 0; r > 0 && i < json_object_array_length(*ret); i++)
		if (!json_object_is_type(json_object_array_get_idx(*ret, i), json_type_object))
			return bad(p, "%s[%zu] must be an object", key, i);
	return r;
}

/* An address member inside @within ("" counts as absent when optional). */
static int get_addr(struct pool_spec *p, struct json_object *o, const char *where, const char *key,
		    bool required, const struct ip_prefix *within, struct ip_addr *ret)
{
	const char *s = NULL;
	int r = get_str(p, o, where, key, required, &s);

	if (r <= 0)
		return r;
	if (!*s && !required)
		return 0;
	if (ip_addr_parse(s, ret) < 0)
		return bad(p, "%s\"%s\": invalid IP address \"%s\"", where, key, s);
	if (within && !ip_prefix_contains(within, ret))
		return bad(p, "%s\"%s\" %s is outside the pool's network", where, key, s);
	return 1;
}

static int push_span(struct spans *s, u128 lo, u128 hi)
{
	struct span *v = realloc(s->v, (s->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	v[s->n++] = (struct span){ .lo = lo, .hi = hi };
	s->v = v;
	return 0;
}

static int parse_exclusions(struct pool_spec *p, struct json_object *spec)
{
	struct json_object *arr;
	int r = get_array(p, spec, "exclusions", &arr);

	for (size_t i = 0; r > 0 && i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		struct ip_addr a, b;
		char where[48];

		snprintf(where, sizeof(where), "exclusions[%zu]: ", i);
		if (get_addr(p, e, where, "startIP", true, &p->net, &a) < 0 ||
		    get_addr(p, e, where, "endIP", true, &p->net, &b) < 0)
			return -EINVAL;
		if (ipmath_from_addr(&a) > ipmath_from_addr(&b))
			return bad(p, "%s\"startIP\" is after \"endIP\"", where);
		if (push_span(&p->sp.excl, ipmath_from_addr(&a), ipmath_from_addr(&b)) < 0)
			return -ENOMEM;
	}
	if (r < 0)
		return r;
	spans_merge(&p->sp.excl);
	return 0;
}

/* perNodeExclusions; sp.use_hi must be set. */
static int parse_per_node(struct pool_spec *p, struct json_object *spec, u128 last_index)
{
	struct json_object *arr;
	const struct span *s;
	int r = get_array(p, spec, "perNodeExclusions", &arr);

	for (size_t i = 0; r > 0 && i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		int64_t a = 0, b = 0;
		char where[48];

		snprintf(where, sizeof(where), "perNodeExclusions[%zu]: ", i);
		if (get_int(p, e, where, "startIndex", 0, INT32_MAX, true, &a) < 0 ||
		    get_int(p, e, where, "endIndex", 0, INT32_MAX, true, &b) < 0)
			return -EINVAL;
		if (a > b)
			return bad(p, "%s\"startIndex\" is after \"endIndex\"", where);
		if ((u128)b > last_index)
			return bad(p, "%s\"endIndex\" %lld is outside the node's block", where,
				   (long long)b);
		if (push_span(&p->sp.per_node, (u128)a, (u128)b) < 0)
			return -ENOMEM;
	}
	if (r < 0)
		return r;
	spans_merge(&p->sp.per_node);
	/*
	 * Per-node exclusions alone covering the range a node hands out exclude every block.
	 * Said once here, or a scan would test each of up to 2^126 blocks in turn.
	 */
	s = spans_find(&p->sp.per_node, 0);
	p->sp.all_excluded = s && s->hi >= p->sp.use_hi;
	return 0;
}

/* nodeSelector, defaultGateway and routes; @gw_what names what a gateway needs. */
static int parse_common(struct pool_spec *p, struct json_object *spec, bool has_gw,
			const char *gw_what)
{
	struct json_object *arr;
	struct cni_err e = { 0 };
	bool def = false;
	int r;

	p->selector = k8s_object_member(spec, "nodeSelector", NULL);
	if (p->selector && selector_validate(p->selector, p->why, p->why_len) < 0)
		return -EINVAL;
	if (cjson_get_bool(spec, "defaultGateway", &def, &e) < 0)
		return bad(p, "%s", e.msg);
	if (def && !has_gw)
		return bad(p, "\"defaultGateway\" cannot be true if %s is not set", gw_what);
	r = get_array(p, spec, "routes", &arr);
	if (r < 0)
		return r;
	for (size_t i = 0; r > 0 && i < json_object_array_length(arr); i++) {
		struct ip_prefix dst;
		const char *s = NULL;
		char where[32];

		if (!has_gw)
			return bad(p, "\"routes\" cannot be set if %s is not set", gw_what);
		snprintf(where, sizeof(where), "routes[%zu]: ", i);
		if (get_str(p, json_object_array_get_idx(arr, i), where, "dst", true, &s) < 0)
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

static int parse_network(struct pool_spec *p, struct json_object *spec, const char *key,
			 bool strict)
{
	const char *s = NULL;
	struct ip_prefix net;

	if (get_str(p, spec, "", key, true, &s) < 0)
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

static int parse_ippool(struct pool_spec *p, struct json_object *spec)
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
	r = get_addr(p, spec, "", "gateway", false, &p->net, &p->gateway);
	if (r < 0)
		return r;
	p->has_gateway = r > 0;
	p->sp.skip_gw = p->has_gateway && size == 1;
	p->sp.gw = ipmath_from_addr(&p->gateway);
	if (parse_exclusions(p, spec) < 0 || parse_per_node(p, spec, p->sp.size - 1) < 0)
		return -EINVAL;
	return parse_common(p, spec, p->has_gateway, "spec.gateway");
}

/* The gateway for the prefix at @base, as gatewayIndex places it; false without one. */
static bool index_gateway(const struct pool_spec *p, u128 base, struct ip_addr *ret)
{
	if (!p->has_gw_index)
		return false;
	/* parse_cidrpool() refused an index outside the prefix's usable addresses. */
	*ret = ipmath_to_addr(p->sp.family, base + p->gw_index);
	return true;
}

static int parse_statics(struct pool_spec *p, struct json_object *spec)
{
	struct json_object *arr;
	int r = get_array(p, spec, "staticAllocations", &arr);
	size_t n = r > 0 ? json_object_array_length(arr) : 0;

	if (r < 0)
		return r;
	p->statics = calloc(n ? n : 1, sizeof(*p->statics));
	if (!p->statics)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		struct static_alloc *st = &p->statics[i];
		struct ip_prefix pfx, pnet;
		const char *s = NULL;
		char where[48];

		snprintf(where, sizeof(where), "staticAllocations[%zu]: ", i);
		st->node = "";
		if (get_str(p, e, where, "nodeName", false, &st->node) < 0 ||
		    get_str(p, e, where, "prefix", true, &s) < 0)
			return -EINVAL;
		if (ip_prefix_parse(s, &pfx) < 0)
			return bad(p, "%s\"prefix\" %s is not a valid network prefix", where, s);
		pnet = ip_prefix_network(&pfx);
		if (!ip_addr_equal(&pnet.addr, &pfx.addr))
			return bad(p, "%s\"prefix\" %s: network prefix has host bits set", where, s);
		if (!ip_prefix_contains(&p->net, &pfx.addr))
			return bad(p, "%s\"prefix\" %s is not part of the pool cidr", where, s);
		if (pfx.len != p->prefix_len)
			return bad(p, "%s\"prefix\" %s: size doesn't match spec.perNodeNetworkPrefix",
				   where, s);
		st->index = (ipmath_from_addr(&pfx.addr) - p->sp.first) / p->sp.size;
		r = get_addr(p, e, where, "gateway", false, &pfx, &st->gateway);
		if (r < 0)
			return r;
		st->has_gateway = r > 0;
		for (size_t j = 0; j < i; j++) {
			if (*st->node && strcmp(p->statics[j].node, st->node) == 0)
				return bad(p, "staticAllocations contains multiple entries for node %s",
					   st->node);
			if (p->statics[j].index == st->index)
				return bad(p, "staticAllocations contains multiple entries for prefix %s", s);
		}
		p->n_statics++;
	}
	return 0;
}

static int parse_cidrpool(struct pool_spec *p, struct json_object *spec)
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
	if (parse_exclusions(p, spec) < 0 || parse_per_node(p, spec, p->sp.size - 1) < 0 ||
	    parse_statics(p, spec) < 0)
		return -EINVAL;
	return parse_common(p, spec, p->has_gw_index, "spec.gatewayIndex");
}

/* "network/len" of block @index of a CIDRPool. */
static void ipmath_to_prefix_text(const struct pool_spec *p, u128 index, char *buf, size_t len)
{
	struct ip_prefix pfx = { .addr = ipmath_to_addr(p->sp.family, p->sp.first + index * p->sp.size),
				 .len = p->prefix_len };

	ip_prefix_format(&pfx, buf, len);
}

/* ---- existing status ---- */

struct entry {
	const char *node;
	bool parsed;
	u128 index;        /* block index */
	bool has_gateway;
	struct ip_addr gateway;
	bool drop;         /* not loaded */
	bool superseded;   /* IPPool: loaded, then replaced by a later entry of its node */
};

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct carve_node *)a)->name, ((const struct carve_node *)b)->name);
}

static const struct carve_node *node_find(const struct carve_node *v, size_t n, const char *name)
{
	struct carve_node key = { .name = name };

	return bsearch(&key, v, n, sizeof(*v), node_cmp);
}

static int u128_cmp(const void *a, const void *b)
{
	u128 x = *(const u128 *)a, y = *(const u128 *)b;

	return x < y ? -1 : x > y;
}

static bool u128_in(const u128 *v, size_t n, u128 x)
{
	return n && bsearch(&x, v, n, sizeof(*v), u128_cmp) != NULL;
}

/*
 * An IPPool status entry the controller loads: aligned, right-sized, inside the subnet,
 * not fully excluded, a one-address block not on the gateway.
 */
static bool ippool_entry_parse(const struct pool_spec *p, struct json_object *e, struct entry *ret)
{
	struct json_object *vs = cjson_get(e, "startIP"), *ve = cjson_get(e, "endIP");
	struct ip_addr a, b;
	u128 x, y, next;

	if (!json_object_is_type(vs, json_type_string) || !json_object_is_type(ve, json_type_string) ||
	    ip_addr_parse(json_object_get_string(vs), &a) < 0 ||
	    ip_addr_parse(json_object_get_string(ve), &b) < 0 || a.family != p->sp.family ||
	    b.family != p->sp.family)
		return false;
	x = ipmath_from_addr(&a);
	y = ipmath_from_addr(&b);
	if (x < p->sp.first || (x - p->sp.first) % p->sp.size != 0 || y < x ||
	    y - x + 1 != p->sp.size)
		return false;
	ret->index = (x - p->sp.first) / p->sp.size;
	return ret->index < p->sp.count && !block_excluded(&p->sp, ret->index, &next) &&
	       !(p->sp.skip_gw && x == p->sp.gw);
}

static bool cidr_entry_parse(const struct pool_spec *p, struct json_object *e, struct entry *ret)
{
	struct json_object *vp = cjson_get(e, "prefix"), *vg = cjson_get(e, "gateway");
	struct ip_prefix pfx, net;

	if (!json_object_is_type(vp, json_type_string) ||
	    ip_prefix_parse(json_object_get_string(vp), &pfx) < 0)
		return false;
	net = ip_prefix_network(&pfx);
	if (!ip_addr_equal(&net.addr, &pfx.addr) || pfx.addr.family != p->sp.family ||
	    pfx.len != p->prefix_len || !ip_prefix_contains(&p->net, &pfx.addr))
		return false;
	ret->index = (ipmath_from_addr(&pfx.addr) - p->sp.first) / p->sp.size;
	if (vg && !json_object_is_type(vg, json_type_string))
		return false;
	if (vg && *json_object_get_string(vg)) {
		if (ip_addr_parse(json_object_get_string(vg), &ret->gateway) < 0)
			return false;
		ret->has_gateway = true;
	}
	return true;
}

static const struct static_alloc *static_for_node(const struct pool_spec *p, const char *node)
{
	for (size_t i = 0; i < p->n_statics; i++)
		if (*p->statics[i].node && strcmp(p->statics[i].node, node) == 0)
			return &p->statics[i];
	return NULL;
}

/* The gateway a CIDRPool allocation of prefix @index must carry. */
static bool cidr_expected_gateway(const struct pool_spec *p, u128 index,
				  const struct static_alloc *st, struct ip_addr *ret)
{
	if (st && st->has_gateway) {
		*ret = st->gateway;
		return true;
	}
	return index_gateway(p, p->sp.first + index * p->sp.size, ret);
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
	return u128_cmp(&x->index, &y->index);
}

static int key_gateway(const struct entry *x, const struct entry *y)
{
	if (x->has_gateway != y->has_gateway)
		return x->has_gateway ? 1 : -1;
	return memcmp(x->gateway.bytes, y->gateway.bytes, sizeof(x->gateway.bytes));
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

struct kept {
	const char *node;
	u128 index;
	bool has_gateway;
	struct ip_addr gateway;
};

static int kept_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kept *)a)->node, ((const struct kept *)b)->node);
}

/*
 * Valid status entries of matching nodes, sorted by node name, and the blocks they take,
 * sorted (superseded IPPool entries take their block without keeping it).
 */
static int collect_kept(const struct pool_spec *p, struct json_object *pool,
			const struct carve_node *match, size_t n_match, struct kept **ret,
			size_t *ret_n, u128 **ret_taken, size_t *ret_n_taken)
{
	struct json_object *arr = k8s_object_member(pool, "status", "allocations");
	size_t n = json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
	_cleanup_free_ struct entry *v = calloc(n ? n : 1, sizeof(*v));
	_cleanup_free_ struct kept *out = calloc(n ? n : 1, sizeof(*out));
	_cleanup_free_ u128 *taken = malloc((n ? n : 1) * sizeof(*taken));
	size_t m = 0, n_taken = 0;
	u128 next;

	if (!v || !out || !taken)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		struct json_object *vn = cjson_get(e, "nodeName");
		struct entry *x = &v[i];

		if (!json_object_is_type(vn, json_type_string) || !*json_object_get_string(vn))
			continue;
		x->node = json_object_get_string(vn);
		/*
		 * Entries of nodes that left or no longer match are discarded before the others
		 * are checked for conflicts, so a stale entry never displaces a live node's block.
		 */
		if (!node_find(match, n_match, x->node))
			continue;
		x->parsed = p->cidrpool ? cidr_entry_parse(p, e, x) : ippool_entry_parse(p, e, x);
	}
	if (mark_conflicts(v, n, p->cidrpool) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct entry *x = &v[i];
		const struct carve_node *node = x->parsed ? node_find(match, n_match, x->node) : NULL;
		struct ip_addr want = { 0 };
		bool has_want;

		if (!node || x->drop)
			continue;
		if (p->cidrpool) {
			const struct static_alloc *st = static_for_node(p, x->node);
			bool reserved = false;

			for (size_t j = 0; !st && j < p->n_statics; j++)
				reserved |= p->statics[j].index == x->index;
			if (reserved || (st && st->index != x->index))
				continue;
			has_want = cidr_expected_gateway(p, x->index, st, &want);
			if (!gateway_matches(x->has_gateway, &x->gateway, has_want, &want))
				continue;
			if (!st && block_excluded(&p->sp, x->index, &next))
				continue;
		}
		taken[n_taken++] = x->index;
		if (x->superseded)
			continue;
		out[m++] = (struct kept){ .node = node->name, .index = x->index,
					  .has_gateway = x->has_gateway, .gateway = x->gateway };
	}
	qsort(out, m, sizeof(*out), kept_cmp);
	qsort(taken, n_taken, sizeof(*taken), u128_cmp);
	*ret = TAKE_PTR(out);
	*ret_n = m;
	*ret_taken = TAKE_PTR(taken);
	*ret_n_taken = n_taken;
	return 0;
}

/* The first block at or after *@cursor that nobody holds; false when the pool is full. */
static bool next_free(const struct pool_spec *p, u128 *cursor, const u128 *taken, size_t n_taken,
		      const u128 *reserved, size_t n_reserved, u128 *ret)
{
	u128 k = *cursor, next;

	while (k < p->sp.count) {
		if (u128_in(taken, n_taken, k) || u128_in(reserved, n_reserved, k) ||
		    (p->sp.skip_gw && p->sp.first + k == p->sp.gw)) {
			k++;
			continue;
		}
		if (block_excluded(&p->sp, k, &next)) {
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

static void push_alloc(struct carve_result *res, const struct pool_spec *p, const char *node,
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

static int carve_run(struct pool_spec *p, struct json_object *pool, const struct carve_node *nodes,
		     size_t n_nodes, struct carve_result *res)
{
	_cleanup_free_ struct carve_node *match = calloc(n_nodes ? n_nodes : 1, sizeof(*match));
	_cleanup_free_ struct kept *kept = NULL;
	_cleanup_free_ u128 *taken = NULL, *reserved = NULL;
	size_t n_match = 0, n_kept = 0, n_taken = 0;
	u128 cursor = 0;
	int r;

	if (!match)
		return -ENOMEM;
	for (size_t i = 0; i < n_nodes; i++)
		if (selector_match(p->selector, nodes[i].name, nodes[i].labels))
			match[n_match++] = nodes[i];
	r = collect_kept(p, pool, match, n_match, &kept, &n_kept, &taken, &n_taken);
	if (r < 0)
		return r;
	reserved = malloc((p->n_statics ? p->n_statics : 1) * sizeof(*reserved));
	res->unplaced = calloc(n_match ? n_match : 1, sizeof(*res->unplaced));
	res->allocs = calloc(n_match ? n_match : 1, sizeof(*res->allocs));
	if (!reserved || !res->unplaced || !res->allocs)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_statics; i++)
		reserved[i] = p->statics[i].index;
	qsort(reserved, p->n_statics, sizeof(*reserved), u128_cmp);
	res->n_kept = n_kept;

	for (size_t i = 0; i < n_match; i++) {
		struct kept key = { .node = match[i].name };
		const struct kept *k = bsearch(&key, kept, n_kept, sizeof(*kept), kept_cmp);
		const struct static_alloc *st = p->cidrpool ? static_for_node(p, match[i].name) : NULL;
		struct ip_addr gw = { 0 };
		bool has_gw;
		u128 index;

		if (k) {
			push_alloc(res, p, k->node, k->index, k->has_gateway, &k->gateway);
		} else if (st) {
			has_gw = cidr_expected_gateway(p, st->index, st, &gw);
			push_alloc(res, p, match[i].name, st->index, has_gw, &gw);
		} else if (next_free(p, &cursor, taken, n_taken, reserved, p->n_statics, &index)) {
			has_gw = p->cidrpool && cidr_expected_gateway(p, index, NULL, &gw);
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
	struct pool_spec p = { .why = res.reason, .why_len = sizeof(res.reason) };
	const char *kind = k8s_object_kind(pool), *name = k8s_object_name(pool);
	struct json_object *spec = k8s_object_member(pool, "spec", NULL);
	int r;

	if (strcmp(kind, "IPPool") != 0 && strcmp(kind, "CIDRPool") != 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "object \"%s\" is a \"%s\", not an IPPool or a CIDRPool",
				   name ? name : "", kind);
	p.cidrpool = res.cidrpool = strcmp(kind, "CIDRPool") == 0;
	if (!name || strlen(name) > POOL_NAME_MAX || !cni_env_valid_id(name))
		r = bad(&p, "invalid pool name, should be compatible with CNI network name");
	else if (!json_object_is_type(spec, json_type_object))
		r = bad(&p, "\"spec\" is missing");
	else
		r = p.cidrpool ? parse_cidrpool(&p, spec) : parse_ippool(&p, spec);
	if (r == -ENOMEM)
		goto oom;
	if (r < 0) {
		res.invalid = true;
	} else {
		r = carve_run(&p, pool, nodes, n_nodes, &res);
		if (r < 0)
			goto oom;
	}
	spec_free(&p);
	*ret = res;
	return 0;
oom:
	spec_free(&p);
	carve_result_free(&res);
	return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
}

/* Why a CIDRPool status entry is not the node's to use; 0 when it is. */
static int cidr_entry_check(const struct pool_spec *p, struct json_object *pool,
			    const char *node, struct json_object *entry, char *why, size_t len)
{
	struct json_object *arr = k8s_object_member(pool, "status", "allocations");
	const struct static_alloc *st = static_for_node(p, node);
	struct entry x = { .node = node };
	char a[IP_PREFIX_STRLEN], b[IP_PREFIX_STRLEN];
	struct ip_addr want;
	bool has_want;

	if (!cidr_entry_parse(p, entry, &x)) {
		snprintf(why, len, "its prefix is not a /%u inside the pool's cidr, or its gateway is "
			 "not an address", p->prefix_len);
		return -EINVAL;
	}
	ipmath_to_prefix_text(p, x.index, a, sizeof(a));
	if (st && st->index != x.index) {
		ipmath_to_prefix_text(p, st->index, b, sizeof(b));
		snprintf(why, len, "prefix %s doesn't match prefix %s from the node's static allocation",
			 a, b);
		return -EINVAL;
	}
	for (size_t i = 0; !st && i < p->n_statics; i++) {
		if (p->statics[i].index == x.index) {
			snprintf(why, len, "prefix %s is statically allocated %s%s", a,
				 *p->statics[i].node ? "for different node: " : "without a node (reserved)",
				 p->statics[i].node);
			return -EINVAL;
		}
	}
	has_want = cidr_expected_gateway(p, x.index, st, &want);
	if (!gateway_matches(x.has_gateway, &x.gateway, has_want, &want)) {
		if (has_want)
			snprintf(why, len, "gateway %s doesn't match the gateway %s of %s",
				 x.has_gateway ? ip_addr_format(&x.gateway, b, sizeof(b)) : "(none)",
				 ip_addr_format(&want, a, sizeof(a)),
				 st && st->has_gateway ? "the node's static allocation" : "gatewayIndex");
		else
			snprintf(why, len, "gateway %s given, but the pool has no gatewayIndex",
				 ip_addr_format(&x.gateway, b, sizeof(b)));
		return -EINVAL;
	}
	/* The reference takes an entry only when no other shares its prefix, gateway or node. */
	for (size_t i = 0; json_object_is_type(arr, json_type_array) &&
			   i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		struct json_object *vn = cjson_get(e, "nodeName");
		struct entry y = { .node = "" };

		if (e == entry)
			continue;
		if (json_object_is_type(vn, json_type_string))
			y.node = json_object_get_string(vn);
		if (strcmp(y.node, node) == 0) {
			snprintf(why, len, "the node has two allocations in the status");
			return -EINVAL;
		}
		if (!cidr_entry_parse(p, e, &y))
			continue;
		if (y.index == x.index || (x.has_gateway && y.has_gateway &&
					   ip_addr_equal(&x.gateway, &y.gateway))) {
			char q[K8S_QUOTE_SIZE];

			snprintf(why, len, "its %s is also given to node %s",
				 y.index == x.index ? "prefix" : "gateway", k8s_quote(y.node, q, sizeof(q)));
			return -EINVAL;
		}
	}
	return 0;
}

int carve_entry_check(struct json_object *pool, const char *node, struct json_object *entry,
		      char *why, size_t len)
{
	struct pool_spec p = { .why = why, .why_len = len };
	const char *kind = k8s_object_kind(pool), *name = k8s_object_name(pool);
	struct json_object *spec = k8s_object_member(pool, "spec", NULL);
	int r;

	p.cidrpool = strcmp(kind, "CIDRPool") == 0;
	if (!name || strlen(name) > POOL_NAME_MAX || !cni_env_valid_id(name))
		r = bad(&p, "invalid pool name, should be compatible with CNI network name");
	else if (!json_object_is_type(spec, json_type_object))
		r = bad(&p, "\"spec\" is missing");
	else
		r = p.cidrpool ? parse_cidrpool(&p, spec) : parse_ippool(&p, spec);
	if (r == -EINVAL) {
		char reason[512];

		snprintf(reason, sizeof(reason), "%s", why);
		snprintf(why, len, "invalid spec: %s", reason);
	} else if (r == 0 && p.cidrpool) {
		r = cidr_entry_check(&p, pool, node, entry, why, len);
	}
	spec_free(&p);
	return r < 0 && r != -ENOMEM ? -EINVAL : r;
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
	qsort(v, n, sizeof(*v), node_cmp);
	for (size_t i = 1; i < n; i++)
		if (strcmp(v[i - 1].name, v[i].name) == 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "node list: node \"%s\" is listed twice", v[i].name);
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}
