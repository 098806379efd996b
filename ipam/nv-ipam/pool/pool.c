/*
 * Node pool file: this node's blocks of each IPPool/CIDRPool, and their address ranges
 *
 * The file is one JSON object. "pools" maps a pool key to this node's allocation as
 * the nv-ipam controller writes it into the pool's status, plus the spec fields the
 * node needs. A top-level "nodeName" and any unknown member are ignored.
 *
 *   {
 *     "nodeName": "host-a",
 *     "pools": {
 *       "my-pool": {
 *         "subnet": "192.168.0.0/24",          spec.subnet, required
 *         "startIP": "192.168.0.1",            this node's block (status.allocations),
 *         "endIP": "192.168.0.100",            both required, inside subnet, start <= end
 *         "gateway": "192.168.0.1",            optional, inside subnet ("" = none)
 *         "exclusions": [ { "startIP": "192.168.0.10", "endIP": "192.168.0.19" } ],
 *         "perNodeExclusions": [ { "startIndex": 0, "endIndex": 1 } ],
 *         "routes": [ { "dst": "10.200.0.0/16" } ],
 *         "defaultGateway": false
 *       },
 *       "cidrpool/pool-cidr": {
 *         "cidr": "10.100.0.0/16",             spec.cidr, required, no host bits
 *         "prefix": "10.100.0.0/24",           this node's prefix (status), required,
 *                                              inside cidr, no host bits
 *         "gateway": "10.100.0.1",             optional (status), inside prefix
 *         "exclusions": [...], "perNodeExclusions": [...], "routes": [...],
 *         "defaultGateway": true
 *       }
 *     }
 *   }
 *
 * Keys: "<name>" holds an IPPool entry, "cidrpool/<name>" a CIDRPool entry; a name
 * matches ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ and is at most 253 characters.
 *
 * Rules for both kinds: every address has the family of the subnet/cidr; exclusions
 * are inclusive, inside the subnet (IPPool) or cidr (CIDRPool), startIP <= endIP;
 * perNodeExclusions are inclusive indexes, 0 <= startIndex <= endIndex, endIndex inside
 * the node's block (IPPool: counted from startIP) or prefix (CIDRPool: counted from
 * the prefix's network address); route destinations are CIDRs of the same family;
 * "routes" and "defaultGateway" require "gateway"; with "defaultGateway" no route may
 * be a default route (0.0.0.0/0, ::/0).
 *
 * What the node makes of an entry (nv-ipam's node side):
 * - IPPool: addresses are handed out from [startIP, endIP] with the subnet's mask;
 *   the gateway may lie outside the block and is still returned. Exclusions are kept
 *   unclipped; per-node exclusions become startIP+index ranges.
 * - CIDRPool: addresses come from network+1 up to the last address of the prefix,
 *   except the IPv4 broadcast address (IPv6 keeps its all-ones address); /31, /32,
 *   /127 and /128 use the whole prefix. The mask is the prefix length. Exclusions
 *   touching the prefix are clipped to it; per-node exclusions become network+index
 *   ranges.
 * - Overlapping and adjacent exclusions are merged (nv-ipam refuses overlaps).
 */
#include <errno.h>
#include <fcntl.h>
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
#include "common/cni/trust.h"
#include "common/util/cleanup.h"
#include "common/util/file.h"
#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/pool/ipmath.h"
#include "ipam/nv-ipam/pool/pool.h"

#define POOL_NAME_MAX 253
#define CIDRPOOL_KEY_PREFIX "cidrpool/"

/* What messages point at: the file and the pool being read. */
struct loader {
	const char *origin;
	const char *key;
	size_t index;          /* the pool's place in "pools", for a key that is no pool key */
	struct cni_err *err;
};

struct span {
	ipmath_u128 lo;
	ipmath_u128 hi;
};

struct span_list {
	struct span *v;
	size_t n;
	size_t cap;
};

static bool pool_key_valid(const char *key);

/*
 * Puts the file and the pool in front of a failure recorded in the pool.
 * A network config may point poolFile at any file of the node's config
 * directories: a message names the file and where in it, never a value it
 * could not use. A key that is not a pool key is such a value.
 */
static int located(const struct loader *l, int r)
{
	if (!pool_key_valid(l->key))
		return cni_err_prefix(l->err, r, "node pool file %s: pools member %zu", l->origin,
				      l->index);
	return cni_err_prefix(l->err, r, "node pool file %s: pool \"%s\"", l->origin, l->key);
}

#define invalid(l, ...) located((l), cni_err_set((l)->err, CNI_ERR_INVALID_CONFIG, -EINVAL, __VA_ARGS__))

/*
 * A getter's failure (code 6 for a wrong type), with the item in the pool
 * in front: @where is "" or "<item>: ", as the messages of invalid() use it.
 */
static int at_item(const struct loader *l, const char *where, int r)
{
	if (*where)
		cni_err_prefix(l->err, r, "%.*s", (int)strlen(where) - 2, where);
	return located(l, r);
}

static int get_typed(const struct loader *l, const char *where, struct json_object *o,
		     const char *key, enum json_type type, struct json_object **ret)
{
	int r = cjson_get_typed(o, key, type, ret, l->err);

	return r < 0 ? at_item(l, where, r) : r;
}

static int get_str(const struct loader *l, const char *where, struct json_object *o,
		   const char *key, bool required, const char **ret)
{
	int r = cjson_get_str(o, key, ret, l->err);

	if (r < 0)
		return at_item(l, where, r);
	if (r == 0 && required)
		return invalid(l, "%smissing \"%s\"", where, key);
	return r;
}

static int get_index(const struct loader *l, const char *where, struct json_object *o,
		     const char *key, int64_t *ret)
{
	int r = cjson_get_int(o, key, 0, INT64_MAX, ret, l->err);

	if (r < 0)
		return at_item(l, where, r);
	if (r == 0)
		return invalid(l, "%smissing \"%s\"", where, key);
	return r;
}

/*
 * An address member, of the family of @within and inside it. An optional member
 * that is absent or "" is reported as absent (0).
 */
static int get_addr(const struct loader *l, const char *where, struct json_object *o,
		    const char *key, bool required, const struct ip_prefix *within,
		    const char *within_what, struct ip_addr *ret)
{
	char pbuf[IP_PREFIX_STRLEN];
	struct ip_addr a;
	const char *s = NULL;
	int r;

	r = get_str(l, where, o, key, required, &s);
	if (r <= 0)
		return r;
	if (!required && !*s)
		return 0;
	if (ip_addr_parse(s, &a) < 0)
		return invalid(l, "%s\"%s\": not an IP address", where, key);
	if (a.family != within->addr.family)
		return invalid(l, "%s\"%s\" %s and %s %s are of different address families", where,
			       key, s, within_what, ip_prefix_format(within, pbuf, sizeof(pbuf)));
	if (!ip_prefix_contains(within, &a))
		return invalid(l, "%s\"%s\" %s is outside %s %s", where, key, s, within_what,
			       ip_prefix_format(within, pbuf, sizeof(pbuf)));
	*ret = a;
	return 1;
}

static int get_prefix(const struct loader *l, const char *where, struct json_object *o,
		      const char *key, struct ip_prefix *ret)
{
	const char *s = NULL;
	int r;

	r = get_str(l, where, o, key, true, &s);
	if (r < 0)
		return r;
	if (ip_prefix_parse(s, ret) < 0)
		return invalid(l, "%s\"%s\": not a CIDR", where, key);
	return 1;
}

/* The member must be an array of objects; returns it (or NULL when absent) via @ret. */
static int get_object_array(const struct loader *l, struct json_object *o, const char *key,
			    struct json_object **ret)
{
	struct json_object *arr = NULL;
	size_t n;
	int r;

	*ret = NULL;
	r = get_typed(l, "", o, key, json_type_array, &arr);
	if (r <= 0)
		return r;
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		if (!json_object_is_type(e, json_type_object))
			return located(l, cni_err_set(l->err, CNI_ERR_DECODE, -EINVAL,
						      "%s[%zu]: expected an object, got %s", key, i,
						      cjson_type_name(e)));
	}
	*ret = arr;
	return 1;
}

static int span_push(const struct loader *l, struct span_list *s, ipmath_u128 lo, ipmath_u128 hi)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		struct span *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return cni_err_set(l->err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct span){ .lo = lo, .hi = hi };
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return 0;
}

/* Sorts and merges overlapping and adjacent spans in place; returns the new count. */
static size_t spans_merge(struct span *v, size_t n)
{
	size_t out = 0;

	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), span_cmp);
	for (size_t i = 1; i < n; i++) {
		/* Sorted, so v[i].lo >= v[out].lo; lo - 1 only wraps for lo == 0. */
		if (v[i].lo == 0 || v[i].lo - 1 <= v[out].hi) {
			if (v[i].hi > v[out].hi)
				v[out].hi = v[i].hi;
		} else {
			v[++out] = v[i];
		}
	}
	return out + 1;
}

/*
 * "exclusions": each range inside @within; with @clip, ranges are cut to it and
 * those outside it dropped (CIDRPool), without they are kept whole (IPPool).
 */
static int parse_exclusions(const struct loader *l, struct json_object *o,
			    const struct ip_prefix *within, const char *within_what,
			    const struct span *clip, struct span_list *out)
{
	struct json_object *arr;
	size_t n;
	int r;

	r = get_object_array(l, o, "exclusions", &arr);
	if (r <= 0)
		return r;
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		char where[48], a[IP_PREFIX_STRLEN], b[IP_PREFIX_STRLEN];
		struct ip_addr start, end;
		ipmath_u128 lo, hi;

		snprintf(where, sizeof(where), "exclusions[%zu]: ", i);
		r = get_addr(l, where, e, "startIP", true, within, within_what, &start);
		if (r < 0)
			return r;
		r = get_addr(l, where, e, "endIP", true, within, within_what, &end);
		if (r < 0)
			return r;
		lo = ipmath_from_addr(&start);
		hi = ipmath_from_addr(&end);
		if (lo > hi)
			return invalid(l, "%s\"startIP\" %s is after \"endIP\" %s", where,
				       ip_addr_format(&start, a, sizeof(a)),
				       ip_addr_format(&end, b, sizeof(b)));
		if (clip) {
			if (hi < clip->lo || lo > clip->hi)
				continue;
			lo = lo < clip->lo ? clip->lo : lo;
			hi = hi > clip->hi ? clip->hi : hi;
		}
		r = span_push(l, out, lo, hi);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * "perNodeExclusions": index ranges counted from @base, each inside [0, @last_index];
 * @what names the block or prefix for messages.
 */
static int parse_per_node(const struct loader *l, struct json_object *o, ipmath_u128 base,
			  ipmath_u128 last_index, const char *what, struct span_list *out)
{
	struct json_object *arr;
	size_t n;
	int r;

	r = get_object_array(l, o, "perNodeExclusions", &arr);
	if (r <= 0)
		return r;
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		int64_t first = 0, last = 0;
		char where[48];

		snprintf(where, sizeof(where), "perNodeExclusions[%zu]: ", i);
		r = get_index(l, where, e, "startIndex", &first);
		if (r < 0)
			return r;
		r = get_index(l, where, e, "endIndex", &last);
		if (r < 0)
			return r;
		if (first > last)
			return invalid(l, "%s\"startIndex\" %lld is after \"endIndex\" %lld", where,
				       (long long)first, (long long)last);
		if ((ipmath_u128)last > last_index)
			return invalid(l, "%s\"endIndex\" %lld is outside the node's %s", where,
				       (long long)last, what);
		r = span_push(l, out, base + (ipmath_u128)first, base + (ipmath_u128)last);
		if (r < 0)
			return r;
	}
	return 0;
}

/* "routes", "defaultGateway" and the rules tying them to the gateway. */
static int parse_routing(const struct loader *l, struct json_object *o, struct nvipam_pool *p)
{
	struct json_object *arr;
	size_t n;
	int r;

	r = cjson_get_bool(o, "defaultGateway", &p->default_gateway, l->err);
	if (r < 0)
		return located(l, r);
	r = get_object_array(l, o, "routes", &arr);
	if (r < 0)
		return r;
	n = arr ? json_object_array_length(arr) : 0;
	if (n > 0) {
		p->routes = calloc(n, sizeof(*p->routes));
		if (!p->routes)
			return cni_err_set(l->err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *rt = json_object_array_get_idx(arr, i);
		char where[48], buf[IP_PREFIX_STRLEN], sbuf[IP_PREFIX_STRLEN];
		struct ip_prefix dst;

		snprintf(where, sizeof(where), "routes[%zu]: ", i);
		r = get_prefix(l, where, rt, "dst", &dst);
		if (r < 0)
			return r;
		if (dst.addr.family != p->subnet.addr.family)
			return invalid(l, "%s\"dst\" %s and subnet %s are of different address families",
				       where, ip_prefix_format(&dst, buf, sizeof(buf)),
				       ip_prefix_format(&p->subnet, sbuf, sizeof(sbuf)));
		if (p->default_gateway && dst.len == 0)
			return invalid(l, "%sdefault route %s is not allowed with \"defaultGateway\"",
				       where, ip_prefix_format(&dst, buf, sizeof(buf)));
		p->routes[p->n_routes++] = dst;
	}
	if (p->default_gateway && !p->has_gateway)
		return invalid(l, "\"defaultGateway\" requires \"gateway\"");
	if (p->n_routes > 0 && !p->has_gateway)
		return invalid(l, "\"routes\" require \"gateway\"");
	return 0;
}

static int parse_ippool(const struct loader *l, struct json_object *o, struct nvipam_pool *p,
			struct span_list *excl)
{
	char a[IP_PREFIX_STRLEN], b[IP_PREFIX_STRLEN], what[2 * IP_PREFIX_STRLEN + 16];
	struct ip_prefix subnet;
	struct ip_addr start, end;
	ipmath_u128 lo, hi;
	int r;

	if (!cjson_get(o, "subnet") && (cjson_get(o, "cidr") || cjson_get(o, "prefix")))
		return invalid(l, "a CIDRPool entry (\"cidr\", \"prefix\") needs the key "
			       "\"" CIDRPOOL_KEY_PREFIX "%s\"; an IPPool entry needs \"subnet\", "
			       "\"startIP\" and \"endIP\"", p->name);
	r = get_prefix(l, "", o, "subnet", &subnet);
	if (r < 0)
		return r;
	subnet = ip_prefix_network(&subnet);
	r = get_addr(l, "", o, "startIP", true, &subnet, "subnet", &start);
	if (r < 0)
		return r;
	r = get_addr(l, "", o, "endIP", true, &subnet, "subnet", &end);
	if (r < 0)
		return r;
	lo = ipmath_from_addr(&start);
	hi = ipmath_from_addr(&end);
	ip_addr_format(&start, a, sizeof(a));
	ip_addr_format(&end, b, sizeof(b));
	if (lo > hi)
		return invalid(l, "\"startIP\" %s is after \"endIP\" %s", a, b);
	p->type = NVIPAM_POOL_IPPOOL;
	p->subnet = subnet;
	p->range = (struct nvipam_ip_range){ .start = start, .end = end };
	r = get_addr(l, "", o, "gateway", false, &subnet, "subnet", &p->gateway);
	if (r < 0)
		return r;
	p->has_gateway = r > 0;
	r = parse_exclusions(l, o, &subnet, "subnet", NULL, excl);
	if (r < 0)
		return r;
	snprintf(what, sizeof(what), "block %s-%s", a, b);
	r = parse_per_node(l, o, lo, hi - lo, what, excl);
	if (r < 0)
		return r;
	return parse_routing(l, o, p);
}

static int parse_cidrpool(const struct loader *l, struct json_object *o, struct nvipam_pool *p,
			  struct span_list *excl)
{
	char a[IP_PREFIX_STRLEN], b[IP_PREFIX_STRLEN], what[IP_PREFIX_STRLEN + 16];
	struct ip_prefix cidr, prefix, net;
	ipmath_u128 base, host;
	struct span clip;
	int family;
	int r;

	if (!cjson_get(o, "cidr") && !cjson_get(o, "prefix") &&
	    (cjson_get(o, "subnet") || cjson_get(o, "startIP") || cjson_get(o, "endIP")))
		return invalid(l, "an IPPool entry (\"subnet\", \"startIP\", \"endIP\") needs the plain "
			       "key \"%s\"; a CIDRPool entry needs \"cidr\" and \"prefix\"", p->name);
	r = get_prefix(l, "", o, "cidr", &cidr);
	if (r < 0)
		return r;
	net = ip_prefix_network(&cidr);
	if (!ip_addr_equal(&net.addr, &cidr.addr))
		return invalid(l, "\"cidr\" %s has host bits set", ip_prefix_format(&cidr, a, sizeof(a)));
	r = get_prefix(l, "", o, "prefix", &prefix);
	if (r < 0)
		return r;
	ip_prefix_format(&cidr, a, sizeof(a));
	ip_prefix_format(&prefix, b, sizeof(b));
	if (prefix.addr.family != cidr.addr.family)
		return invalid(l, "\"prefix\" %s and cidr %s are of different address families", b, a);
	if (prefix.len < cidr.len || !ip_prefix_contains(&cidr, &prefix.addr))
		return invalid(l, "\"prefix\" %s is not inside cidr %s", b, a);
	net = ip_prefix_network(&prefix);
	if (!ip_addr_equal(&net.addr, &prefix.addr))
		return invalid(l, "\"prefix\" %s has host bits set", b);

	family = prefix.addr.family;
	base = ipmath_from_addr(&prefix.addr);
	host = ipmath_host_mask(family, prefix.len);
	p->type = NVIPAM_POOL_CIDRPOOL;
	p->subnet = prefix;
	if (ipmath_bits(family) - prefix.len <= 1) {
		/* Point-to-point and single-address prefixes use every address. */
		p->range.start = ipmath_to_addr(family, base);
		p->range.end = ipmath_to_addr(family, base | host);
	} else {
		p->range.start = ipmath_to_addr(family, base + 1);
		p->range.end = ipmath_to_addr(family, family == AF_INET ? (base | host) - 1 : base | host);
	}
	r = get_addr(l, "", o, "gateway", false, &prefix, "prefix", &p->gateway);
	if (r < 0)
		return r;
	p->has_gateway = r > 0;
	clip = (struct span){ .lo = base, .hi = base | host };
	r = parse_exclusions(l, o, &cidr, "cidr", &clip, excl);
	if (r < 0)
		return r;
	snprintf(what, sizeof(what), "prefix %s", b);
	r = parse_per_node(l, o, base, host, what, excl);
	if (r < 0)
		return r;
	return parse_routing(l, o, p);
}

/* A CNI network name, as Kubernetes object names are at most 253 bytes. */
static bool pool_name_valid(const char *name)
{
	return strlen(name) <= POOL_NAME_MAX && cni_env_valid_id(name);
}

/* "<name>" (IPPool) or "cidrpool/<name>" (CIDRPool). */
static bool pool_key_valid(const char *key)
{
	const size_t plen = strlen(CIDRPOOL_KEY_PREFIX);

	return pool_name_valid(strncmp(key, CIDRPOOL_KEY_PREFIX, plen) == 0 ? key + plen : key);
}

static int parse_pool(const struct loader *l, struct json_object *o, struct nvipam_pool *p)
{
	const size_t plen = strlen(CIDRPOOL_KEY_PREFIX);
	struct span_list excl = { 0 };
	bool cidrpool;
	const char *name;
	size_t n;
	int r;

	cidrpool = strncmp(l->key, CIDRPOOL_KEY_PREFIX, plen) == 0;
	name = cidrpool ? l->key + plen : l->key;
	if (!pool_key_valid(l->key))
		return invalid(l, "invalid pool key: expected \"<name>\" (IPPool) or "
			       "\"" CIDRPOOL_KEY_PREFIX "<name>\" (CIDRPool), the name matching "
			       "^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ and at most %d characters",
			       POOL_NAME_MAX);
	if (!json_object_is_type(o, json_type_object))
		return located(l, cni_err_set(l->err, CNI_ERR_DECODE, -EINVAL,
					      "expected an object, got %s", cjson_type_name(o)));
	snprintf(p->key, sizeof(p->key), "%s", l->key);
	snprintf(p->name, sizeof(p->name), "%s", name);

	r = cidrpool ? parse_cidrpool(l, o, p, &excl) : parse_ippool(l, o, p, &excl);
	if (r < 0)
		goto out;
	n = spans_merge(excl.v, excl.n);
	if (n > 0) {
		p->exclusions = calloc(n, sizeof(*p->exclusions));
		if (!p->exclusions) {
			r = cni_err_set(l->err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		p->exclusions[i].start = ipmath_to_addr(p->subnet.addr.family, excl.v[i].lo);
		p->exclusions[i].end = ipmath_to_addr(p->subnet.addr.family, excl.v[i].hi);
	}
	p->n_exclusions = n;
	r = 0;
out:
	free(excl.v);
	return r;
}

/* Whether pool @key is among @keys (all are when @keys is NULL). */
static bool wanted(const char *key, const char *const *keys, size_t n_keys)
{
	if (!keys)
		return true;
	for (size_t i = 0; i < n_keys; i++)
		if (strcmp(keys[i], key) == 0)
			return true;
	return false;
}

static int parse_some(const char *json, size_t len, const char *origin, const char *const *keys,
		      size_t n_keys, struct nvipam_pools *ret, struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *root = NULL;
	struct nvipam_pools pools = { 0 };
	struct json_object *map = NULL;
	struct json_object_iterator it, end;
	char what[1100];
	size_t n;
	int r;

	snprintf(what, sizeof(what), "node pool file %s", origin);
	r = cjson_parse(json, len, what, &root, err);
	if (r < 0)
		return r;
	if (!json_object_is_type(root, json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "node pool file %s: expected an object, got %s",
				   origin, cjson_type_name(root));
	r = cjson_get_typed(root, "pools", json_type_object, &map, err);
	if (r < 0)
		return cni_err_prefix(err, r, "node pool file %s", origin);
	if (r == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "node pool file %s: missing \"pools\"", origin);

	n = (size_t)json_object_object_length(map);
	pools.pools = calloc(n ? n : 1, sizeof(*pools.pools));
	if (!pools.pools)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	it = json_object_iter_begin(map);
	end = json_object_iter_end(map);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		struct loader l = { .origin = origin, .key = json_object_iter_peek_name(&it),
				    .index = pools.n, .err = err };

		if (!wanted(l.key, keys, n_keys))
			continue;
		/* Counted first so a half-read pool is released with the others. */
		r = parse_pool(&l, json_object_iter_peek_value(&it), &pools.pools[pools.n++]);
		if (r < 0) {
			nvipam_pools_free(&pools);
			return r;
		}
	}
	*ret = pools;
	return 0;
}

int nvipam_pools_parse(const char *json, size_t len, const char *origin,
		       struct nvipam_pools *ret, struct cni_err *err)
{
	return parse_some(json, len, origin, NULL, 0, ret, err);
}

int nvipam_pools_load_some(const char *path, bool confined, const char *const *keys,
			   size_t n_keys, struct nvipam_pools *ret, struct cni_err *err)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = 0;
	int r;

	if (confined) {
		r = trust_open_file(TRUST_CONF, "poolFile", path, O_RDONLY, 0, &fd, err);
		if (r >= 0)
			r = file_read_fd(fd, CNI_JSON_MAX_BYTES, &buf, &len);
		else if (r != -ENOENT)
			return r;
	} else {
		r = file_read(path, CNI_JSON_MAX_BYTES, &buf, &len);
	}
	if (r == -EFBIG)
		return cni_err_set(err, CNI_ERR_DECODE, r, "error unmarshall %s: larger than %u bytes", path,
				   CNI_JSON_MAX_BYTES);
	if (r == -EINVAL || r == -EISDIR)
		return cni_err_set(err, CNI_ERR_IO, r, "failed to read node pool file %s: not a regular file",
				   path);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "failed to read node pool file %s: %s", path,
				   strerror(-r));
	return parse_some(buf, len, path, keys, n_keys, ret, err);
}

int nvipam_pools_load(const char *path, bool confined, struct nvipam_pools *ret,
		      struct cni_err *err)
{
	return nvipam_pools_load_some(path, confined, NULL, 0, ret, err);
}

const struct nvipam_pool *nvipam_pools_find(const struct nvipam_pools *pools, const char *key)
{
	for (size_t i = 0; pools && key && i < pools->n; i++) {
		if (strcmp(pools->pools[i].key, key) == 0)
			return &pools->pools[i];
	}
	return NULL;
}

void nvipam_pools_free(struct nvipam_pools *pools)
{
	if (!pools)
		return;
	for (size_t i = 0; i < pools->n; i++) {
		free(pools->pools[i].exclusions);
		free(pools->pools[i].routes);
	}
	free(pools->pools);
	*pools = (struct nvipam_pools){ 0 };
}
