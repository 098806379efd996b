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
#include "common/cni/trust.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/ipaddr.h"
#include "common/util/json-go.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/pool/ipmath.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/pool/spec.h"

#define CIDRPOOL_KEY_PREFIX "cidrpool/"

#define invalid(err, ...) cni_err_set((err), CNI_ERR_INVALID_CONFIG, -EINVAL, __VA_ARGS__)

/* "routes", "defaultGateway" and the rules tying them to the gateway. */
static int parse_routing(struct json_object *o, struct nvipam_pool *p, struct cni_err *err)
{
	struct json_object *arr;
	size_t n;
	int r;

	r = cjson_get_bool(o, "defaultGateway", &p->default_gateway, err);
	if (r >= 0)
		r = spec_read_objects(cjson_get, o, "routes", &arr, err);
	if (r < 0)
		return r;
	n = arr ? json_object_array_length(arr) : 0;
	if (n > 0) {
		p->routes = calloc(n, sizeof(*p->routes));
		if (!p->routes)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *rt = json_object_array_get_idx(arr, i);
		char where[48], buf[IP_PREFIX_STRLEN], sbuf[IP_PREFIX_STRLEN];
		struct ip_prefix dst;

		snprintf(where, sizeof(where), "routes[%zu]: ", i);
		r = spec_read_prefix(cjson_get, rt, where, "dst", &dst, err);
		if (r < 0)
			return r;
		if (dst.addr.family != p->subnet.addr.family)
			return invalid(err, "%s\"dst\" %s and subnet %s are of different address families",
				       where, ip_prefix_format(&dst, buf, sizeof(buf)),
				       ip_prefix_format(&p->subnet, sbuf, sizeof(sbuf)));
		if (p->default_gateway && dst.len == 0)
			return invalid(err, "%sdefault route %s is not allowed with \"defaultGateway\"",
				       where, ip_prefix_format(&dst, buf, sizeof(buf)));
		p->routes[p->n_routes++] = dst;
	}
	if (p->default_gateway && !p->has_gateway)
		return invalid(err, "\"defaultGateway\" requires \"gateway\"");
	if (p->n_routes > 0 && !p->has_gateway)
		return invalid(err, "\"routes\" require \"gateway\"");
	return 0;
}

static int parse_ippool(struct json_object *o, struct nvipam_pool *p, struct spec_spans *excl,
			struct cni_err *err)
{
	char a[IP_PREFIX_STRLEN], b[IP_PREFIX_STRLEN], what[2 * IP_PREFIX_STRLEN + 16];
	struct ip_prefix subnet;
	struct ip_addr start, end;
	ipmath_u128 lo, hi;
	int r;

	if (!cjson_get(o, "subnet") && (cjson_get(o, "cidr") || cjson_get(o, "prefix")))
		return invalid(err, "a CIDRPool entry (\"cidr\", \"prefix\") needs the key "
			       "\"" CIDRPOOL_KEY_PREFIX "%s\"; an IPPool entry needs \"subnet\", "
			       "\"startIP\" and \"endIP\"", p->name);
	r = spec_read_prefix(cjson_get, o, "", "subnet", &subnet, err);
	if (r < 0)
		return r;
	subnet = ip_prefix_network(&subnet);
	if ((r = spec_read_addr(cjson_get, o, "", "startIP", true, &subnet, "subnet", &start,
				err)) < 0 ||
	    (r = spec_read_addr(cjson_get, o, "", "endIP", true, &subnet, "subnet", &end, err)) < 0)
		return r;
	lo = ipmath_from_addr(&start);
	hi = ipmath_from_addr(&end);
	ip_addr_format(&start, a, sizeof(a));
	ip_addr_format(&end, b, sizeof(b));
	if (lo > hi)
		return invalid(err, "\"startIP\" %s is after \"endIP\" %s", a, b);
	p->type = NVIPAM_POOL_IPPOOL;
	p->subnet = subnet;
	p->range = (struct nvipam_ip_range){ .start = start, .end = end };
	r = spec_read_addr(cjson_get, o, "", "gateway", false, &subnet, "subnet", &p->gateway, err);
	if (r < 0)
		return r;
	p->has_gateway = r > 0;
	snprintf(what, sizeof(what), "block %s-%s", a, b);
	if ((r = spec_read_exclusions(cjson_get, o, &subnet, "subnet", NULL, excl, err)) < 0 ||
	    (r = spec_read_per_node(cjson_get, o, lo, hi - lo, what, excl, err)) < 0)
		return r;
	return parse_routing(o, p, err);
}

static int parse_cidrpool(struct json_object *o, struct nvipam_pool *p, struct spec_spans *excl,
			  struct cni_err *err)
{
	char a[IP_PREFIX_STRLEN], b[IP_PREFIX_STRLEN], what[IP_PREFIX_STRLEN + 16];
	struct ip_prefix cidr, prefix, net;
	ipmath_u128 base, host;
	struct spec_span clip;
	int family;
	int r;

	if (!cjson_get(o, "cidr") && !cjson_get(o, "prefix") &&
	    (cjson_get(o, "subnet") || cjson_get(o, "startIP") || cjson_get(o, "endIP")))
		return invalid(err, "an IPPool entry (\"subnet\", \"startIP\", \"endIP\") needs the plain "
			       "key \"%s\"; a CIDRPool entry needs \"cidr\" and \"prefix\"", p->name);
	r = spec_read_prefix(cjson_get, o, "", "cidr", &cidr, err);
	if (r < 0)
		return r;
	net = ip_prefix_network(&cidr);
	if (!ip_addr_equal(&net.addr, &cidr.addr))
		return invalid(err, "\"cidr\" %s has host bits set", ip_prefix_format(&cidr, a, sizeof(a)));
	r = spec_read_prefix(cjson_get, o, "", "prefix", &prefix, err);
	if (r < 0)
		return r;
	ip_prefix_format(&cidr, a, sizeof(a));
	ip_prefix_format(&prefix, b, sizeof(b));
	if (prefix.addr.family != cidr.addr.family)
		return invalid(err, "\"prefix\" %s and cidr %s are of different address families", b, a);
	if (prefix.len < cidr.len || !ip_prefix_contains(&cidr, &prefix.addr))
		return invalid(err, "\"prefix\" %s is not inside cidr %s", b, a);
	net = ip_prefix_network(&prefix);
	if (!ip_addr_equal(&net.addr, &prefix.addr))
		return invalid(err, "\"prefix\" %s has host bits set", b);

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
	r = spec_read_addr(cjson_get, o, "", "gateway", false, &prefix, "prefix", &p->gateway, err);
	if (r < 0)
		return r;
	p->has_gateway = r > 0;
	clip = (struct spec_span){ .lo = base, .hi = base | host };
	snprintf(what, sizeof(what), "prefix %s", b);
	if ((r = spec_read_exclusions(cjson_get, o, &cidr, "cidr", &clip, excl, err)) < 0 ||
	    (r = spec_read_per_node(cjson_get, o, base, host, what, excl, err)) < 0)
		return r;
	return parse_routing(o, p, err);
}

const char *nvipam_pool_type_name(enum nvipam_pool_type t)
{
	return t == NVIPAM_POOL_CIDRPOOL ? "cidrpool" : "ippool";
}

bool nvipam_pool_name_valid(const char *name)
{
	return strlen(name) <= NVIPAM_POOL_NAME_MAX && cni_env_valid_id(name);
}

/* "<name>" (IPPool) or "cidrpool/<name>" (CIDRPool). */
static bool pool_key_valid(const char *key)
{
	const size_t plen = strlen(CIDRPOOL_KEY_PREFIX);

	return nvipam_pool_name_valid(strncmp(key, CIDRPOOL_KEY_PREFIX, plen) == 0 ? key + plen : key);
}

static int parse_entry(const char *key, struct json_object *o, struct nvipam_pool *p,
		       struct cni_err *err)
{
	const size_t plen = strlen(CIDRPOOL_KEY_PREFIX);
	_cleanup_(spec_spans_free) struct spec_spans excl = { 0 };
	bool cidrpool = strncmp(key, CIDRPOOL_KEY_PREFIX, plen) == 0;
	int r;

	if (!pool_key_valid(key))
		return invalid(err, "invalid pool key: expected \"<name>\" (IPPool) or "
			       "\"" CIDRPOOL_KEY_PREFIX "<name>\" (CIDRPool), the name matching "
			       "^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ and at most %d characters",
			       NVIPAM_POOL_NAME_MAX);
	if (!json_object_is_type(o, json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "expected an object, got %s",
				   cjson_type_name(o));
	snprintf(p->key, sizeof(p->key), "%s", key);
	snprintf(p->name, sizeof(p->name), "%s", cidrpool ? key + plen : key);
	r = cidrpool ? parse_cidrpool(o, p, &excl, err) : parse_ippool(o, p, &excl, err);
	if (r < 0)
		return r;
	spec_spans_merge(&excl);
	if (excl.n > 0) {
		p->exclusions = calloc(excl.n, sizeof(*p->exclusions));
		if (!p->exclusions)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < excl.n; i++) {
		p->exclusions[i].start = ipmath_to_addr(p->subnet.addr.family, excl.v[i].lo);
		p->exclusions[i].end = ipmath_to_addr(p->subnet.addr.family, excl.v[i].hi);
	}
	p->n_exclusions = excl.n;
	return 0;
}

/*
 * One pool's entry, its failure with the file and the pool in front. A network config
 * may point poolFile at any file of the node's config directories: a message names the
 * file and where in it, never a value it could not use. A key that is not a pool key is
 * such a value: the entry's place names it instead.
 */
static int parse_pool(const char *origin, const char *key, size_t index, struct json_object *o,
		      struct nvipam_pool *p, struct cni_err *err)
{
	int r = parse_entry(key, o, p, err);

	if (r < 0 && !pool_key_valid(key))
		return cni_err_prefix(err, r, "node pool file %s: pools member %zu", origin, index);
	if (r < 0)
		return cni_err_prefix(err, r, "node pool file %s: pool \"%s\"", origin, key);
	return 0;
}

/* Whether @key is wanted: every key when @keys is NULL. */
static bool wanted(const char *key, const char *const *keys, size_t n_keys)
{
	for (size_t i = 0; keys && i < n_keys; i++)
		if (strcmp(keys[i], key) == 0)
			return true;
	return !keys;
}

/*
 * A pool of the file in @pools->names, its name and type as a network config gives them;
 * once one does not fit, no later one is shown (room is kept for " and N more").
 */
static void name_add(struct nvipam_pools *pools, const char *key, size_t *shown)
{
	static const char cidr[] = "cidrpool/";
	bool is_cidr = strncmp(key, cidr, sizeof(cidr) - 1) == 0;
	const char *name = is_cidr ? key + sizeof(cidr) - 1 : key;
	size_t o = strlen(pools->names);

	if (*shown == SIZE_MAX || o + strlen(name) + 40 > sizeof(pools->names)) {
		*shown = SIZE_MAX;
		return;
	}
	snprintf(pools->names + o, sizeof(pools->names) - o, "%s\"%s\" (%s)", o ? ", " : "", name,
		 is_cidr ? "cidrpool" : "ippool");
	(*shown)++;
}

static int parse_some(const char *json, size_t len, const char *origin, const char *const *keys,
		      size_t n_keys, struct nvipam_pools *ret, struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *root = NULL;
	struct nvipam_pools pools = { 0 };
	struct json_object *map = NULL;
	struct json_object_iterator it, end;
	char what[1100];
	size_t n, seen = 0, shown = 0, listed = 0;
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
		const char *key = json_object_iter_peek_name(&it);
		size_t index = seen++;

		name_add(&pools, key, &shown);
		if (shown != SIZE_MAX)
			listed = shown;
		if (!wanted(key, keys, n_keys))
			continue;
		/* Counted first so a half-read pool is released with the others. */
		r = parse_pool(origin, key, index, json_object_iter_peek_value(&it), &pools.pools[pools.n++],
			       err);
		if (r < 0) {
			nvipam_pools_free(&pools);
			return r;
		}
	}
	if (listed < seen)
		snprintf(pools.names + strlen(pools.names), sizeof(pools.names) - strlen(pools.names),
			 " and %zu more", seen - listed);
	*ret = pools;
	return 0;
}

int nvipam_pools_parse(const char *json, size_t len, const char *origin,
		       struct nvipam_pools *ret, struct cni_err *err)
{
	return parse_some(json, len, origin, NULL, 0, ret, err);
}

int nvipam_pools_parse_some(const char *json, size_t len, const char *origin,
			    const char *const *keys, size_t n_keys, struct nvipam_pools *ret,
			    struct cni_err *err)
{
	return parse_some(json, len, origin, keys, n_keys, ret, err);
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
