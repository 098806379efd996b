/*
 * The validating webhook's rules for IPPool and CIDRPool objects: every broken field, by path
 *
 * The reference's webhook and its controller apply one Validate() to a pool: it walks the
 * spec, collects a field error per broken member (in spec order, several at once) and
 * Kubernetes joins them into the denial's message. The rules here are the same rules, the
 * paths and the error kinds (Invalid value, Required value, Forbidden) the same, so that a
 * user reading the denial finds the field at once. The API server with the operator's CRDs
 * already refuses members of the wrong JSON type; with a looser schema they are errors here.
 * How each error is worded, and which are kept, is field_errors.c's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/cni/env.h"
#include "common/util/cleanup.h"
#include "common/util/ipaddr.h"
#include "common/util/json-exact.h"
#include "ipam/nv-ipam/controller/field_errors.h"
#include "ipam/nv-ipam/controller/validate.h"
#include "ipam/nv-ipam/pool/ipmath.h"

typedef ipmath_u128 u128;

/* ---- typed members: present with the right type (1), absent (0), or an error (-1) ---- */

static int get_str(struct field_errors *c, struct json_object *o, const char *base, const char *key,
			  const char **ret)
{
	struct json_object *v = cjson_member_any(o, key);
	char path[PATH_MAX_LEN];

	*ret = "";
	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_string)) {
		field_path_child(path, base, key);
		field_errors_add(c, VALIDATE_INVALID, path, JV(v), "must be a string");
		return -1;
	}
	if (strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v)) {
		field_path_child(path, base, key);
		field_errors_add(c, VALIDATE_INVALID, path, JV(v), "must not contain a NUL character");
		return -1;
	}
	*ret = json_object_get_string(v);
	return 1;
}

static int get_int(struct field_errors *c, struct json_object *o, const char *base, const char *key,
			  int64_t min, int64_t max, int64_t *ret)
{
	struct json_object *v = cjson_member_any(o, key);
	char path[PATH_MAX_LEN];

	*ret = 0;
	if (!v)
		return 0;
	field_path_child(path, base, key);
	if (!json_object_is_type(v, json_type_int)) {
		field_errors_add(c, VALIDATE_INVALID, path, JV(v), "must be an integer");
		return -1;
	}
	errno = 0;
	*ret = json_object_get_int64(v);
	if (errno || *ret < min || *ret > max) {
		field_errors_add(c, VALIDATE_INVALID, path, JV(v), "must be a %s integer",
				 max == INT32_MAX ? "32-bit" : "64-bit");
		*ret = 0;
		return -1;
	}
	return 1;
}

static int get_bool(struct field_errors *c, struct json_object *o, const char *base, const char *key,
			   bool *ret)
{
	struct json_object *v = cjson_member_any(o, key);
	char path[PATH_MAX_LEN];

	*ret = false;
	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_boolean)) {
		field_path_child(path, base, key);
		field_errors_add(c, VALIDATE_INVALID, path, JV(v), "must be a boolean");
		return -1;
	}
	*ret = json_object_get_boolean(v);
	return 1;
}

/* An array whose every element is an object (or, with @strings, a string). */
static int get_array(struct field_errors *c, struct json_object *o, const char *base, const char *key,
			    bool strings, struct json_object **ret)
{
	struct json_object *v = cjson_member_any(o, key);
	enum json_type want = strings ? json_type_string : json_type_object;
	char path[PATH_MAX_LEN];
	int rc = 1;

	*ret = NULL;
	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_array)) {
		field_path_child(path, base, key);
		field_errors_add(c, VALIDATE_INVALID, path, JV(v), "must be an array");
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *e = json_object_array_get_idx(v, i);

		if (json_object_is_type(e, want) &&
		    (!strings || strlen(json_object_get_string(e)) == (size_t)json_object_get_string_len(e)))
			continue;
		field_path_index(path, base, key, i);
		if (json_object_is_type(e, want))
			field_errors_add(c, VALIDATE_INVALID, path, JV(e), "must not contain a NUL character");
		else
			field_errors_add(c, VALIDATE_INVALID, path, JV(e), "must be %s", strings ? "a string" : "an object");
		rc = -1;
	}
	*ret = rc > 0 ? v : NULL;
	return rc;
}

/* ---- names ---- */

static bool is_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

static bool is_lower_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

/* A lowercase RFC 1123 subdomain: labels of [a-z0-9-] joined by '.', each alphanumeric at both ends. */
static const char *dns_subdomain_problem(const char *s, size_t n)
{
	if (n > 253)
		return "must be no more than 253 characters";
	for (size_t i = 0; i < n; i++) {
		bool label_edge = i == 0 || i + 1 == n || s[i - 1] == '.' || s[i + 1] == '.';

		if (s[i] == '.' ? label_edge : !(is_lower_alnum(s[i]) || (s[i] == '-' && !label_edge)))
			return "must be a lowercase RFC 1123 subdomain: lowercase alphanumeric characters, "
			       "'-' or '.', each part starting and ending with an alphanumeric character";
	}
	return n ? NULL : "must be a lowercase RFC 1123 subdomain, not empty";
}

/* A label key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters. */
static void check_label_key(struct field_errors *c, const char *path, const char *key)
{
	const char *slash = strchr(key, '/');
	const char *name = slash ? slash + 1 : key;
	size_t n = strlen(name);

	if (slash && strchr(name, '/')) {
		field_errors_add(c, VALIDATE_INVALID, path, SV(key), "must be a name with an optional DNS subdomain prefix "
				 "and '/' (e.g. 'example.com/MyName')");
		return;
	}
	if (slash) {
		const char *why = slash == key ? "must be non-empty"
					       : dns_subdomain_problem(key, (size_t)(slash - key));

		if (why)
			field_errors_add(c, VALIDATE_INVALID, path, SV(key), "prefix part %s", why);
	}
	if (n == 0) {
		field_errors_add(c, VALIDATE_INVALID, path, SV(key), "name part must be non-empty");
		return;
	}
	if (n > 63)
		field_errors_add(c, VALIDATE_INVALID, path, SV(key), "name part must be no more than 63 characters");
	for (size_t i = 0; i < n; i++) {
		bool edge = i == 0 || i + 1 == n;

		if (is_alnum(name[i]) || (!edge && (name[i] == '-' || name[i] == '_' || name[i] == '.')))
			continue;
		field_errors_add(c, VALIDATE_INVALID, path, SV(key), "name part must consist of alphanumeric characters, "
				 "'-', '_' or '.', and start and end with an alphanumeric character");
		return;
	}
}

static void check_name(struct field_errors *c, struct json_object *pool, const char *kind)
{
	struct json_object *v = cjson_member_any(cjson_member_any(pool, "metadata"), "name");
	const char *name = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";

	if (v && strlen(name) != (size_t)json_object_get_string_len(v))
		field_errors_add(c, VALIDATE_INVALID, "metadata.name", JV(v), "must not contain a NUL character");
	else if (!cni_env_valid_id(name))
		field_errors_add(c, VALIDATE_INVALID, "metadata.name", SV(name),
				 "invalid %s pool name, should be compatible with CNI network name", kind);
}

/* ---- node selector ---- */

enum op { OP_IN, OP_NOT_IN, OP_EXISTS, OP_DOES_NOT_EXIST, OP_GT, OP_LT, OP_OTHER };

static enum op op_of(const char *s)
{
	static const char *const names[] = { "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(s, names[i]) == 0)
			return (enum op)i;
	return OP_OTHER;
}

/* One requirement: matchExpressions on labels (@field false) or matchFields on the node. */
static void check_requirement(struct field_errors *c, struct json_object *req, const char *base, bool field)
{
	struct json_object *values;
	const char *key, *op_s;
	char path[PATH_MAX_LEN];
	size_t n;
	enum op op;

	if (get_str(c, req, base, "key", &key) < 0 || get_str(c, req, base, "operator", &op_s) < 0 ||
	    get_array(c, req, base, "values", true, &values) < 0)
		return;
	n = values ? json_object_array_length(values) : 0;
	op = op_of(op_s);
	field_path_child(path, base, "values");
	if (field) {
		if (op == OP_IN || op == OP_NOT_IN) {
			if (n != 1)
				field_errors_add(c, VALIDATE_REQUIRED, path, NO_VALUE,
						 "must be exactly one value when `operator` is 'In' or 'NotIn' for a node field selector");
		} else {
			field_path_child(path, base, "operator");
			field_errors_add(c, VALIDATE_INVALID, path, SV(op_s), "not a valid selector operator");
		}
		if (strcmp(key, "metadata.name") != 0) {
			field_path_child(path, base, "key");
			field_errors_add(c, VALIDATE_INVALID, path, SV(key),
					 "not a valid field selector key (only metadata.name)");
			return;
		}
		for (size_t i = 0; i < n; i++) {
			const char *v = json_object_get_string(json_object_array_get_idx(values, i));
			const char *why = dns_subdomain_problem(v, strlen(v));

			field_path_index(path, base, "values", i);
			if (why)
				field_errors_add(c, VALIDATE_INVALID, path, SV(v), "%s", why);
		}
		return;
	}
	switch (op) {
	case OP_IN:
	case OP_NOT_IN:
		if (n == 0)
			field_errors_add(c, VALIDATE_REQUIRED, path, NO_VALUE,
					 "must be specified when `operator` is 'In' or 'NotIn'");
		break;
	case OP_EXISTS:
	case OP_DOES_NOT_EXIST:
		if (n > 0)
			field_errors_add(c, VALIDATE_FORBIDDEN, path, NO_VALUE,
					 "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
		break;
	case OP_GT:
	case OP_LT:
		if (n != 1)
			field_errors_add(c, VALIDATE_REQUIRED, path, NO_VALUE,
					 "must be a single value when `operator` is 'Lt' or 'Gt'");
		break;
	case OP_OTHER:
		field_path_child(path, base, "operator");
		field_errors_add(c, VALIDATE_INVALID, path, SV(op_s), "not a valid selector operator");
		break;
	}
	field_path_child(path, base, "key");
	check_label_key(c, path, key);
}

/* spec.nodeSelector; its terms are reported as spec.nodeSelectorTerms, as the reference does. */
static void check_node_selector(struct field_errors *c, struct json_object *spec)
{
	struct json_object *sel = cjson_member_any(spec, "nodeSelector"), *terms;
	char path[PATH_MAX_LEN];

	if (!sel)
		return;
	if (!json_object_is_type(sel, json_type_object)) {
		field_errors_add(c, VALIDATE_INVALID, "spec.nodeSelector", JV(sel), "must be an object");
		return;
	}
	if (get_array(c, sel, "spec", "nodeSelectorTerms", false, &terms) < 0)
		return;
	if (!terms || json_object_array_length(terms) == 0) {
		field_errors_add(c, VALIDATE_REQUIRED, "spec.nodeSelectorTerms", NO_VALUE,
				 "must have at least one node selector term");
		return;
	}
	for (size_t i = 0; i < json_object_array_length(terms); i++) {
		struct json_object *t = json_object_array_get_idx(terms, i);
		static const char *const lists[] = { "matchExpressions", "matchFields" };
		char term[PATH_MAX_LEN];

		field_path_index(term, "spec", "nodeSelectorTerms", i);
		for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
			struct json_object *reqs;

			if (get_array(c, t, term, lists[l], false, &reqs) <= 0)
				continue;
			for (size_t j = 0; j < json_object_array_length(reqs); j++) {
				field_path_index(path, term, lists[l], j);
				check_requirement(c, json_object_array_get_idx(reqs, j), path, l == 1);
			}
		}
	}
}

/* ---- addresses ---- */

/* An address; false (and an error) when it is not one. */
static bool parse_ip(struct field_errors *c, const char *path, const char *s, struct ip_addr *ret)
{

	if (ip_addr_parse(s, ret) == 0)
		return true;
	field_errors_add(c, VALIDATE_INVALID, path, SV(s), "is not a valid IP address");
	return false;
}

/* "a.b.c.d/n" of a prefix's network. */
static const char *net_text(const struct ip_prefix *p, char *buf, size_t size)
{
	struct ip_prefix n = ip_prefix_network(p);

	return ip_prefix_format(&n, buf, size);
}

/* exclusions: addresses inside @net (NULL when the network itself is invalid), start <= end. */
static void check_exclusions(struct field_errors *c, struct json_object *spec, const struct ip_prefix *net)
{
	struct json_object *arr;
	char nt[IP_PREFIX_STRLEN];

	if (get_array(c, spec, "spec", "exclusions", false, &arr) <= 0 || !net)
		return;
	net_text(net, nt, sizeof(nt));
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *keys[2] = { "startIP", "endIP" };
		struct ip_addr a[2];
		bool ok[2] = { false, false };
		char base[PATH_MAX_LEN], path[PATH_MAX_LEN];

		field_path_index(base, "spec", "exclusions", i);
		for (size_t k = 0; k < 2; k++) {
			const char *s;

			if (get_str(c, e, base, keys[k], &s) < 0)
				continue;
			field_path_child(path, base, keys[k]);
			if (!parse_ip(c, path, s, &a[k]))
				continue;
			ok[k] = true;
			if (!ip_prefix_contains(net, &a[k]))
				field_errors_add(c, VALIDATE_INVALID, path, SV(s),
						 "is not part of the %s subnet", nt);
		}
		if (ok[0] && ok[1] && a[0].family == a[1].family &&
		    ipmath_from_addr(&a[1]) < ipmath_from_addr(&a[0]))
			field_errors_add(c, VALIDATE_INVALID, base, JV(e), "endIP should be equal or greater than startIP");
	}
}

/* perNodeExclusions: indexes 0..@max (@what: "block" or "subnet", for the message). */
static void check_per_node(struct field_errors *c, struct json_object *spec, int64_t max, const char *what)
{
	struct json_object *arr;

	if (get_array(c, spec, "spec", "perNodeExclusions", false, &arr) <= 0)
		return;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *keys[2] = { "startIndex", "endIndex" };
		int64_t v[2];
		int got[2];
		char base[PATH_MAX_LEN], path[PATH_MAX_LEN];

		field_path_index(base, "spec", "perNodeExclusions", i);
		for (size_t k = 0; k < 2; k++)
			got[k] = get_int(c, e, base, keys[k], INT32_MIN, INT32_MAX, &v[k]);
		for (size_t k = 0; k < 2; k++) {
			field_path_child(path, base, keys[k]);
			if (got[k] >= 0 && v[k] < 0)
				field_errors_add(c, VALIDATE_INVALID, path, JV(cjson_member_any(e, keys[k])), "must be non-negative");
		}
		if (got[0] >= 0 && got[1] >= 0 && v[1] < v[0])
			field_errors_add(c, VALIDATE_INVALID, base, JV(e),
					 "endIndex must be greater than or equal to startIndex");
		for (size_t k = 0; k < 2; k++) {
			field_path_child(path, base, keys[k]);
			if (got[k] >= 0 && v[k] > max)
				field_errors_add(c, VALIDATE_INVALID, path, JV(cjson_member_any(e, keys[k])),
						 "index is outside of the per-node %s range (max: %lld)", what, (long long)max);
		}
	}
}

/* defaultGateway and routes without a gateway; routes' CIDRs (@net NULL when invalid). */
static void check_routes(struct field_errors *c, struct json_object *spec, const struct ip_prefix *net,
				bool has_gateway, const char *gw_field)
{
	struct json_object *arr;
	bool def = false;
	int r;

	r = get_bool(c, spec, "spec", "defaultGateway", &def);
	if (r > 0 && def && !has_gateway)
		field_errors_add(c, VALIDATE_INVALID, "spec.defaultGateway", RV("true"), "cannot be true if spec.%s is not set",
				 gw_field);
	if (get_array(c, spec, "spec", "routes", false, &arr) <= 0)
		return;
	if (!has_gateway && json_object_array_length(arr) > 0)
		field_errors_add(c, VALIDATE_INVALID, "spec.routes", JV(arr), "cannot be set if spec.%s is not set",
				 gw_field);
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		char base[PATH_MAX_LEN], path[PATH_MAX_LEN];
		struct ip_prefix dst;
		const char *s;

		field_path_index(base, "spec", "routes", i);
		if (get_str(c, e, base, "dst", &s) < 0)
			continue;
		field_path_child(path, base, "dst");
			if (ip_prefix_parse(s, &dst) < 0) {
			field_errors_add(c, VALIDATE_INVALID, path, SV(s), "is not a valid CIDR");
			continue;
		}
		if (net && dst.addr.family != net->addr.family)
			field_errors_add(c, VALIDATE_INVALID, path, SV(s), "is not of the pool's address family (IPv4/IPv6)");
		if (def && dst.len == 0)
			field_errors_add(c, VALIDATE_INVALID, path, SV(s),
					 "a default route is not allowed when 'defaultGateway' is true");
	}
}

/* ---- IPPool ---- */

/* How many addresses of @net a node may be given: 2^n-2 (IPv4), 2^n-1 (IPv6), 2 (/31), 1 (/32). */
static u128 usable_count(const struct ip_prefix *net)
{
	unsigned int host = ipmath_bits(net->addr.family) - net->len;
	u128 all;

	if (host == 0)
		return 1;
	if (host == 1)
		return 2;
	if (host >= 127)
		return ~(u128)0;
	all = (u128)1 << host;
	return net->addr.family == AF_INET ? all - 2 : all - 1;
}

int validate_ippool(struct json_object *pool, struct validate_result *ret)
{
	struct validate_result res = { 0 };
	struct field_errors c = { .res = &res };
	struct json_object *spec = cjson_member_any(pool, "spec");
	struct ip_prefix net;
	struct ip_addr gw;
	const char *subnet, *gateway;
	bool net_ok = false;
	int64_t size = 0;
	int r;

	check_name(&c, pool, "IP");
	if (get_str(&c, spec, "spec", "subnet", &subnet) >= 0) {
		net_ok = ip_prefix_parse(subnet, &net) == 0;
		if (!net_ok)
			field_errors_add(&c, VALIDATE_INVALID, "spec.subnet", SV(subnet),
					 "is not a valid CIDR");
	}
	r = get_int(&c, spec, "spec", "perNodeBlockSize", INT64_MIN, INT64_MAX, &size);
	if (r >= 0 && size < 1)
		field_errors_add(&c, VALIDATE_INVALID, "spec.perNodeBlockSize", r ? JV(cjson_member_any(spec, "perNodeBlockSize")) : RV("0"),
				 "must be at least 1");
	if (net_ok && size >= 1 && usable_count(&net) < (u128)size)
		field_errors_add(&c, VALIDATE_INVALID, "spec.perNodeBlockSize", JV(cjson_member_any(spec, "perNodeBlockSize")),
				 "is larger than the number of usable addresses in the subnet");
	check_exclusions(&c, spec, net_ok ? &net : NULL);
	if (size >= 1)
		check_per_node(&c, spec, size - 1 > INT32_MAX ? INT32_MAX : size - 1, "block");
	if (get_str(&c, spec, "spec", "gateway", &gateway) > 0 && *gateway &&
	    parse_ip(&c, "spec.gateway", gateway, &gw) && net_ok && !ip_prefix_contains(&net, &gw))
		field_errors_add(&c, VALIDATE_INVALID, "spec.gateway", SV(gateway), "is not part of the subnet");
	check_node_selector(&c, spec);
	check_routes(&c, spec, net_ok ? &net : NULL, *gateway != '\0', "gateway");
	if (c.err) {
		validate_result_free(&res);
		return c.err;
	}
	*ret = res;
	return 0;
}

/* ---- CIDRPool ---- */

/* The address a gateway index gives in the prefix @net/@len; false when none (the reference's rule). */
static bool gateway_index_ok(const struct ip_prefix *net, unsigned int len, int64_t index)
{
	struct ip_prefix node = { .addr = net->addr, .len = len };
	u128 count = usable_count(&node);
	unsigned int host = ipmath_bits(net->addr.family) - len;

	if (host <= 1)
		return (u128)index <= count - 1;
	return index != 0 && (u128)index <= count;
}

/* A node name or a prefix of staticAllocations, and where it is listed. */
struct listed {
	const char *node; /* NULL for a prefix */
	struct ip_prefix pfx;
	size_t pos;
};

static int listed_key_cmp(const struct listed *x, const struct listed *y)
{
	if (x->node)
		return strcmp(x->node, y->node);
	if (x->pfx.len != y->pfx.len)
		return x->pfx.len < y->pfx.len ? -1 : 1;
	return ip_addr_cmp(&x->pfx.addr, &y->pfx.addr);
}

static int listed_cmp(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;
	int r = listed_key_cmp(x, y);

	return r ? r : (x->pos < y->pos ? -1 : x->pos > y->pos);
}

static int listed_pos_cmp(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * What is listed more than once, each once and in the order first listed, moved to the
 * front of @v: sorted, equal ones are neighbours, whatever their number.
 */
static size_t listed_repeats(struct listed *v, size_t n)
{
	size_t m = 0;

	qsort(v, n, sizeof(*v), listed_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && listed_key_cmp(&v[i], &v[j]) == 0; j++)
			;
		if (j - i > 1)
			v[m++] = v[i];
	}
	qsort(v, m, sizeof(*v), listed_pos_cmp);
	return m;
}

static void check_static_allocations(struct field_errors *c, struct json_object *spec,
					    const struct ip_prefix *cidr, unsigned int len)
{
	struct json_object *arr;
	_cleanup_free_ struct listed *nodes = NULL, *prefixes = NULL;
	size_t n, n_nodes = 0, n_prefixes = 0;
	char t[NAME_TEXT_SIZE];

	if (get_array(c, spec, "spec", "staticAllocations", false, &arr) <= 0)
		return;
	n = json_object_array_length(arr);
	nodes = calloc(n + 1, sizeof(*nodes));
	prefixes = calloc(n + 1, sizeof(*prefixes));
	if (!nodes || !prefixes) {
		c->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		char base[PATH_MAX_LEN], path[PATH_MAX_LEN];
		const char *node, *pfx_s, *gw_s;
		struct ip_prefix pfx, pnet;
		struct ip_addr gw;

		field_path_index(base, "spec", "staticAllocations", i);
		if (get_str(c, e, base, "nodeName", &node) > 0 && *node)
			nodes[n_nodes++] = (struct listed){ .node = node, .pos = i };
		if (get_str(c, e, base, "prefix", &pfx_s) < 0)
			continue;
		field_path_child(path, base, "prefix");
		if (ip_prefix_parse(pfx_s, &pfx) < 0) {
			field_errors_add(c, VALIDATE_INVALID, path, SV(pfx_s), "is not a valid network prefix");
			continue;
		}
		pnet = ip_prefix_network(&pfx);
		if (!ip_addr_equal(&pnet.addr, &pfx.addr)) {
			field_errors_add(c, VALIDATE_INVALID, path, SV(pfx_s), "network prefix has host bits set");
			continue;
		}
		prefixes[n_prefixes++] = (struct listed){ .pfx = pfx, .pos = i };
		if (!ip_prefix_contains(cidr, &pfx.addr)) {
			field_errors_add(c, VALIDATE_INVALID, path, SV(pfx_s), "prefix is not part of the pool cidr");
			continue;
		}
		if (pfx.len != len) {
			field_errors_add(c, VALIDATE_INVALID, path, SV(pfx_s), "prefix size doesn't match spec.perNodeNetworkPrefix");
			continue;
		}
		if (get_str(c, e, base, "gateway", &gw_s) <= 0 || !*gw_s)
			continue;
		field_path_child(path, base, "gateway");
		if (ip_addr_parse(gw_s, &gw) < 0)
			field_errors_add(c, VALIDATE_INVALID, path, SV(gw_s), "is not a valid IP address");
		else if (!ip_prefix_contains(&pfx, &gw))
			field_errors_add(c, VALIDATE_INVALID, path, SV(gw_s), "is outside of the node prefix");
	}
	/* Each node and each prefix once; a repeat is named once, in the order first seen. */
	n_nodes = listed_repeats(nodes, n_nodes);
	for (size_t i = 0; i < n_nodes; i++) {
		if (field_errors_full(c)) {
			c->res->more += n_nodes - i;
			break;
		}
		field_errors_add(c, VALIDATE_INVALID, "spec.staticAllocations", JV(arr),
				 "contains multiple entries for node %s", field_name_text(nodes[i].node, t));
	}
	n_prefixes = listed_repeats(prefixes, n_prefixes);
	for (size_t i = 0; i < n_prefixes; i++) {
		if (field_errors_full(c)) {
			c->res->more += n_prefixes - i;
			break;
		}
		field_errors_add(c, VALIDATE_INVALID, "spec.staticAllocations", JV(arr),
				 "contains multiple entries for prefix %s",
				 ip_prefix_format(&prefixes[i].pfx, t, sizeof(t)));
	}
}

/* cidr, gatewayIndex, perNodeNetworkPrefix and what depends on them; @ret_net when cidr is valid. */
static void check_cidr(struct field_errors *c, struct json_object *spec, struct ip_prefix *ret_net,
			      bool *ret_net_ok)
{
	struct ip_prefix net, pnet;
	const char *cidr;
	int64_t idx = 0, len = 0;
	int r_idx, r_len;

	*ret_net_ok = false;
	if (get_str(c, spec, "spec", "cidr", &cidr) < 0)
		return;
	if (ip_prefix_parse(cidr, &net) < 0) {
		field_errors_add(c, VALIDATE_INVALID, "spec.cidr", SV(cidr), "is not a valid CIDR");
		return;
	}
	*ret_net = net;
	*ret_net_ok = true;
	pnet = ip_prefix_network(&net);
	if (!ip_addr_equal(&pnet.addr, &net.addr)) {
		field_errors_add(c, VALIDATE_INVALID, "spec.cidr", SV(cidr), "network prefix has host bits set");
		return;
	}
	/* As the reference: the first of these errors ends the checks of the addressing. */
	r_idx = get_int(c, spec, "spec", "gatewayIndex", INT32_MIN, INT32_MAX, &idx);
	if (r_idx < 0)
		return;
	if (r_idx > 0 && idx < 0) {
		field_errors_add(c, VALIDATE_INVALID, "spec.gatewayIndex", JV(cjson_member_any(spec, "gatewayIndex")),
				 "must not be negative");
		return;
	}
	r_len = get_int(c, spec, "spec", "perNodeNetworkPrefix", INT32_MIN, INT32_MAX, &len);
	if (r_len < 0)
		return;
	if (len < 0) {
		field_errors_add(c, VALIDATE_INVALID, "spec.perNodeNetworkPrefix", JV(cjson_member_any(spec, "perNodeNetworkPrefix")),
				 "must not be negative");
		return;
	}
	if (len == 0 || len > (int64_t)ipmath_bits(net.addr.family) || len < (int64_t)net.len) {
		field_errors_add(c, VALIDATE_INVALID, "spec.perNodeNetworkPrefix",
				 r_len ? JV(cjson_member_any(spec, "perNodeNetworkPrefix")) : RV("0"),
				 "must be between the prefix length of \"cidr\" and %u", ipmath_bits(net.addr.family));
		return;
	}
	if (r_idx > 0 && !gateway_index_ok(&net, (unsigned int)len, idx))
		field_errors_add(c, VALIDATE_INVALID, "spec.gatewayIndex", JV(cjson_member_any(spec, "gatewayIndex")),
				 "gateway index is outside of the node prefix");
	check_exclusions(c, spec, &net);
	{
		unsigned int host = ipmath_bits(net.addr.family) - (unsigned int)len;

		check_per_node(c, spec, host >= 31 ? INT32_MAX : ((int64_t)1 << host) - 1, "subnet");
	}
	check_static_allocations(c, spec, &net, (unsigned int)len);
}

int validate_cidrpool(struct json_object *pool, struct validate_result *ret)
{
	struct validate_result res = { 0 };
	struct field_errors c = { .res = &res };
	struct json_object *spec = cjson_member_any(pool, "spec");
	struct ip_prefix net;
	bool net_ok;

	check_name(&c, pool, "CIDR");
	check_cidr(&c, spec, &net, &net_ok);
	check_node_selector(&c, spec);
	check_routes(&c, spec, net_ok ? &net : NULL, cjson_member_any(spec, "gatewayIndex") != NULL, "gatewayIndex");
	if (c.err) {
		validate_result_free(&res);
		return c.err;
	}
	*ret = res;
	return 0;
}
