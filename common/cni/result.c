/* CNI result: one model for 1.1.0 and conversion from and to every version */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/result.h"
#include "common/cni/version.h"
#include "common/util/error.h"
#include "common/util/json-go.h"
#include "common/util/json.h"

enum result_shape {
	SHAPE_020, /* 0.1.0, 0.2.0: ip4/ip6 */
	SHAPE_040, /* 0.3.0, 0.3.1, 0.4.0: ips[].version, dns always */
	SHAPE_100, /* 1.0.0, 1.1.0 */
};

static enum result_shape shape_of(const char *version)
{
	if (cni_version_cmp(version, "0.3.0") < 0)
		return SHAPE_020;
	if (cni_version_cmp(version, "1.0.0") < 0)
		return SHAPE_040;
	return SHAPE_100;
}

static void strv_free(char **v, size_t n)
{
	cjson_strv_free(v, n);
}

static void dns_free(struct cni_dns *d)
{
	strv_free(d->nameservers, d->n_nameservers);
	strv_free(d->search, d->n_search);
	strv_free(d->options, d->n_options);
	free(d->domain);
	*d = (struct cni_dns){ 0 };
}

void cni_result_free(struct cni_result *res)
{
	for (size_t i = 0; i < res->n_ifaces; i++) {
		free(res->ifaces[i].name);
		free(res->ifaces[i].sandbox);
		free(res->ifaces[i].socket_path);
		free(res->ifaces[i].pci_id);
	}
	free(res->ifaces);
	free(res->ips);
	free(res->routes);
	dns_free(&res->dns);
	*res = (struct cni_result){ 0 };
}

static void *grow(void *arr, size_t n, size_t size)
{
	/* Arrays grow one element at a time: results hold a handful of entries. */
	return realloc(arr, (n + 1) * size);
}

static char *strdup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int cni_result_add_iface(struct cni_result *res, const char *name, const char *mac,
			 const char *sandbox)
{
	struct cni_iface *arr = grow(res->ifaces, res->n_ifaces, sizeof(*arr));
	struct cni_iface *i;

	if (!arr)
		return -ENOMEM;
	res->ifaces = arr;
	i = &arr[res->n_ifaces];
	*i = (struct cni_iface){ 0 };
	i->name = strdup(name);
	i->sandbox = strdup_or_null(sandbox);
	if (!i->name || (sandbox && !i->sandbox)) {
		free(i->name);
		free(i->sandbox);
		return -ENOMEM;
	}
	if (mac)
		snprintf(i->mac, sizeof(i->mac), "%s", mac);
	return (int)res->n_ifaces++;
}

int cni_result_add_ip(struct cni_result *res, const struct cni_ip *ip)
{
	struct cni_ip *arr = grow(res->ips, res->n_ips, sizeof(*arr));

	if (!arr)
		return -ENOMEM;
	res->ips = arr;
	arr[res->n_ips++] = *ip;
	return 0;
}

int cni_result_add_route(struct cni_result *res, const struct cni_route *route)
{
	struct cni_route *arr = grow(res->routes, res->n_routes, sizeof(*arr));

	if (!arr)
		return -ENOMEM;
	res->routes = arr;
	arr[res->n_routes++] = *route;
	return 0;
}

static int strv_copy(char **src, size_t n, char ***dst)
{
	char **v;

	*dst = NULL;
	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i] = strdup(src[i]);
		if (!v[i]) {
			strv_free(v, i);
			return -ENOMEM;
		}
	}
	*dst = v;
	return 0;
}

int cni_result_set_dns(struct cni_result *res, const struct cni_dns *dns)
{
	struct cni_dns d = { 0 };

	if (strv_copy(dns->nameservers, dns->n_nameservers, &d.nameservers) < 0)
		goto oom;
	d.n_nameservers = dns->n_nameservers;
	if (strv_copy(dns->search, dns->n_search, &d.search) < 0)
		goto oom;
	d.n_search = dns->n_search;
	if (strv_copy(dns->options, dns->n_options, &d.options) < 0)
		goto oom;
	d.n_options = dns->n_options;
	if (dns->domain && !(d.domain = strdup(dns->domain)))
		goto oom;
	dns_free(&res->dns);
	res->dns = d;
	return 0;
oom:
	dns_free(&d);
	return -ENOMEM;
}

/* ---- parsing ---- */

static int parse_addr(struct json_object *o, const char *key, bool *has, struct ip_addr *ret,
		      struct cni_err *err)
{
	const char *s = NULL;
	int r = cjson_get_str(o, key, &s, err);

	if (r <= 0)
		return r;
	if (ip_addr_parse(s, ret) < 0)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "field \"%s\": invalid IP address \"%s\"",
				   key, s);
	*has = true;
	return 1;
}

static int parse_prefix(struct json_object *o, const char *key, struct ip_prefix *ret,
			struct cni_err *err)
{
	const char *s = NULL;
	int r = cjson_get_str(o, key, &s, err);

	if (r < 0)
		return r;
	if (r == 0)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "field \"%s\" missing", key);
	if (ip_prefix_parse(s, ret) < 0)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "field \"%s\": invalid CIDR \"%s\"", key,
				   s);
	return 0;
}

static int parse_route(struct json_object *o, struct cni_route *rt, struct cni_err *err)
{
	int64_t v;
	int r;

	*rt = (struct cni_route){ .scope = -1 };
	if (!json_object_is_type(o, json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "routes: expected an object, got %s",
				   cjson_type_name(o));
	r = parse_prefix(o, "dst", &rt->dst, err);
	if (r < 0)
		return r;
	r = parse_addr(o, "gw", &rt->has_gw, &rt->gw, err);
	if (r < 0)
		return r;
	if ((r = cjson_get_int(o, "mtu", 0, INT32_MAX, &v, err)) < 0)
		return r;
	rt->mtu = r ? (int)v : 0;
	if ((r = cjson_get_int(o, "advmss", 0, INT32_MAX, &v, err)) < 0)
		return r;
	rt->advmss = r ? (int)v : 0;
	if ((r = cjson_get_int(o, "priority", 0, INT32_MAX, &v, err)) < 0)
		return r;
	rt->priority = r ? (int)v : 0;
	if ((r = cjson_get_int(o, "table", 0, INT32_MAX, &v, err)) < 0)
		return r;
	rt->table = r ? (int)v : 0;
	if ((r = cjson_get_int(o, "scope", 0, 255, &v, err)) < 0)
		return r;
	rt->scope = r ? (int)v : -1;
	return 0;
}

static int parse_routes(struct json_object *arr, struct cni_result *res, struct cni_err *err)
{
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		struct cni_route rt;
		int r = parse_route(json_object_array_get_idx(arr, i), &rt, err);

		if (r < 0)
			return r;
		if (cni_result_add_route(res, &rt) < 0)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	return 0;
}

static int parse_dns(struct json_object *o, struct cni_dns *dns, struct cni_err *err)
{
	struct json_object *d = NULL;
	const char *domain = NULL;
	int r;

	r = cjson_get_typed(o, "dns", json_type_object, &d, err);
	if (r <= 0)
		return r;
	if ((r = cjson_get_str_array(d, "nameservers", &dns->nameservers, &dns->n_nameservers, err)) < 0)
		return r;
	if ((r = cjson_get_str_array(d, "search", &dns->search, &dns->n_search, err)) < 0)
		return r;
	if ((r = cjson_get_str_array(d, "options", &dns->options, &dns->n_options, err)) < 0)
		return r;
	if ((r = cjson_get_str(d, "domain", &domain, err)) < 0)
		return r;
	if (domain && !(dns->domain = strdup(domain)))
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

static int parse_ipconfig_020(struct json_object *o, const char *key, int family,
			      struct cni_result *res, struct cni_err *err)
{
	struct json_object *cfg = NULL, *routes = NULL;
	struct cni_ip ip = { .iface = -1 };
	int r;

	r = cjson_get_typed(o, key, json_type_object, &cfg, err);
	if (r <= 0)
		return r;
	r = parse_prefix(cfg, "ip", &ip.address, err);
	if (r < 0)
		return r;
	if (ip.address.addr.family != family)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "field \"%s\": address of the wrong family",
				   key);
	r = parse_addr(cfg, "gateway", &ip.has_gateway, &ip.gateway, err);
	if (r < 0)
		return r;
	if (cni_result_add_ip(res, &ip) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = cjson_get_typed(cfg, "routes", json_type_array, &routes, err);
	if (r < 0)
		return r;
	return parse_routes(routes, res, err);
}

static int parse_020(struct json_object *o, struct cni_result *res, struct cni_err *err)
{
	int r = parse_ipconfig_020(o, "ip4", AF_INET, res, err);

	if (r < 0)
		return r;
	return parse_ipconfig_020(o, "ip6", AF_INET6, res, err);
}

static int parse_iface(struct json_object *o, struct cni_result *res, struct cni_err *err)
{
	const char *name = NULL, *mac = NULL, *sandbox = NULL, *sock = NULL, *pci = NULL;
	struct cni_iface *i;
	int64_t mtu = 0;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "interfaces: expected an object, got %s",
				   cjson_type_name(o));
	if ((r = cjson_get_str(o, "name", &name, err)) < 0 ||
	    (r = cjson_get_str(o, "mac", &mac, err)) < 0 ||
	    (r = cjson_get_str(o, "sandbox", &sandbox, err)) < 0 ||
	    (r = cjson_get_str(o, "socketPath", &sock, err)) < 0 ||
	    (r = cjson_get_str(o, "pciID", &pci, err)) < 0 ||
	    (r = cjson_get_int(o, "mtu", 0, INT32_MAX, &mtu, err)) < 0)
		return r;
	if (mac && strlen(mac) >= CNI_MAC_STRLEN)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "field \"mac\": too long");
	r = cni_result_add_iface(res, name ? name : "", mac, sandbox && *sandbox ? sandbox : NULL);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	i = &res->ifaces[r];
	i->mtu = (int)mtu;
	if ((sock && *sock && !(i->socket_path = strdup(sock))) ||
	    (pci && *pci && !(i->pci_id = strdup(pci))))
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

static int parse_ip(struct json_object *o, struct cni_result *res, struct cni_err *err)
{
	struct cni_ip ip = { .iface = -1 };
	int64_t idx;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "ips: expected an object, got %s",
				   cjson_type_name(o));
	r = parse_prefix(o, "address", &ip.address, err);
	if (r < 0)
		return r;
	r = parse_addr(o, "gateway", &ip.has_gateway, &ip.gateway, err);
	if (r < 0)
		return r;
	r = cjson_get_int(o, "interface", 0, INT32_MAX, &idx, err);
	if (r < 0)
		return r;
	if (r)
		ip.iface = (int)idx;
	if (cni_result_add_ip(res, &ip) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

static int parse_array(struct json_object *o, const char *key, struct cni_result *res,
		       int (*fn)(struct json_object *, struct cni_result *, struct cni_err *),
		       struct cni_err *err)
{
	struct json_object *arr = NULL;
	int r = cjson_get_typed(o, key, json_type_array, &arr, err);

	if (r <= 0)
		return r;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		r = fn(json_object_array_get_idx(arr, i), res, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_current(struct json_object *o, struct cni_result *res, struct cni_err *err)
{
	struct json_object *routes = NULL;
	int r;

	if ((r = parse_array(o, "interfaces", res, parse_iface, err)) < 0)
		return r;
	if ((r = parse_array(o, "ips", res, parse_ip, err)) < 0)
		return r;
	for (size_t i = 0; i < res->n_ips; i++)
		if (res->ips[i].iface >= (int)res->n_ifaces && res->n_ifaces)
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					   "ips[%zu].interface %d: no such interface in the result", i,
					   res->ips[i].iface);
	if ((r = cjson_get_typed(o, "routes", json_type_array, &routes, err)) < 0)
		return r;
	return parse_routes(routes, res, err);
}

int cni_result_from_object(struct json_object *o, const char *version, struct cni_result *ret,
			   struct cni_err *err)
{
	struct cni_result res = { 0 };
	const char *v = NULL;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "result: expected an object, got %s",
				   cjson_type_name(o));
	r = cjson_get_str(o, "cniVersion", &v, err);
	if (r < 0)
		return r;
	if (!v || !*v)
		v = version;
	if (!cni_version_supported(v))
		return cni_err_set(err, CNI_ERR_INCOMPATIBLE_VERSION, -EINVAL,
				   "unsupported result version \"%s\"", v ? v : "");
	snprintf(res.cni_version, sizeof(res.cni_version), "%s", v);
	r = shape_of(v) == SHAPE_020 ? parse_020(o, &res, err) : parse_current(o, &res, err);
	if (r >= 0)
		r = parse_dns(o, &res.dns, err);
	if (r < 0) {
		cni_result_free(&res);
		return r;
	}
	*ret = res;
	return 0;
}

int cni_result_parse(const char *json, size_t len, const char *version,
		     struct cni_result *ret, struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *o = NULL;
	int r;

	r = cjson_parse(json, len, "result", &o, err);
	if (r < 0)
		return r;
	return cni_result_from_object(o, version, ret, err);
}

/* ---- rendering ---- */

static int add_str(struct json_object *o, const char *key, const char *value)
{
	struct json_object *s = json_object_new_string(value);

	if (!s)
		return -ENOMEM;
	return json_object_object_add(o, key, s) < 0 ? -ENOMEM : 0;
}

static int add_int(struct json_object *o, const char *key, int64_t value)
{
	struct json_object *v = json_object_new_int64(value);

	if (!v)
		return -ENOMEM;
	return json_object_object_add(o, key, v) < 0 ? -ENOMEM : 0;
}

static int add_obj(struct json_object *o, const char *key, struct json_object *value)
{
	if (!value)
		return -ENOMEM;
	if (json_object_object_add(o, key, value) < 0) {
		json_object_put(value);
		return -ENOMEM;
	}
	return 0;
}

static int add_to_array(struct json_object *arr, struct json_object *value)
{
	if (!value)
		return -ENOMEM;
	if (json_object_array_add(arr, value) < 0) {
		json_object_put(value);
		return -ENOMEM;
	}
	return 0;
}

static struct json_object *strv_json(char **v, size_t n)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr && i < n; i++) {
		if (add_to_array(arr, json_object_new_string(v[i])) < 0) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

static bool dns_empty(const struct cni_dns *d)
{
	return !d->n_nameservers && !d->domain && !d->n_search && !d->n_options;
}

static struct json_object *dns_json(const struct cni_dns *d)
{
	struct json_object *o = json_object_new_object();
	int r = 0;

	if (!o)
		return NULL;
	if (d->n_nameservers)
		r = add_obj(o, "nameservers", strv_json(d->nameservers, d->n_nameservers));
	if (!r && d->domain)
		r = add_str(o, "domain", d->domain);
	if (!r && d->n_search)
		r = add_obj(o, "search", strv_json(d->search, d->n_search));
	if (!r && d->n_options)
		r = add_obj(o, "options", strv_json(d->options, d->n_options));
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* 0.1.0/0.2.0 routes carry only dst and gw. */
static struct json_object *route_json(const struct cni_route *rt, enum result_shape shape)
{
	struct json_object *o = json_object_new_object();
	char buf[IP_PREFIX_STRLEN];
	int r;

	if (!o)
		return NULL;
	r = add_str(o, "dst", ip_prefix_format(&rt->dst, buf, sizeof(buf)));
	if (!r && rt->has_gw)
		r = add_str(o, "gw", ip_addr_format(&rt->gw, buf, sizeof(buf)));
	if (!r && shape == SHAPE_020)
		return o;
	if (!r && rt->mtu)
		r = add_int(o, "mtu", rt->mtu);
	if (!r && rt->advmss)
		r = add_int(o, "advmss", rt->advmss);
	if (!r && rt->priority)
		r = add_int(o, "priority", rt->priority);
	if (!r && rt->table)
		r = add_int(o, "table", rt->table);
	if (!r && rt->scope >= 0)
		r = add_int(o, "scope", rt->scope);
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *ipconfig_020(const struct cni_result *res, int family)
{
	const struct cni_ip *ip = NULL;
	struct json_object *o, *routes;
	char buf[IP_PREFIX_STRLEN];
	int r;

	for (size_t i = 0; i < res->n_ips && !ip; i++)
		if (res->ips[i].address.addr.family == family)
			ip = &res->ips[i];
	if (!ip)
		return NULL;
	o = json_object_new_object();
	if (!o)
		return NULL;
	r = add_str(o, "ip", ip_prefix_format(&ip->address, buf, sizeof(buf)));
	if (!r && ip->has_gateway)
		r = add_str(o, "gateway", ip_addr_format(&ip->gateway, buf, sizeof(buf)));
	routes = json_object_new_array();
	for (size_t i = 0; !r && routes && i < res->n_routes; i++)
		if (res->routes[i].dst.addr.family == family)
			r = add_to_array(routes, route_json(&res->routes[i], SHAPE_020));
	if (!routes)
		r = -ENOMEM;
	else if (!r && json_object_array_length(routes))
		r = add_obj(o, "routes", routes);
	else
		json_object_put(routes);
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int render_020(const struct cni_result *res, struct json_object *o, struct cni_err *err)
{
	bool has4 = false, has6 = false;
	int r = 0;

	for (size_t i = 0; i < res->n_ips; i++) {
		has4 |= res->ips[i].address.addr.family == AF_INET;
		has6 |= res->ips[i].address.addr.family == AF_INET6;
	}
	if (!has4 && !has6)
		return cni_err_set(err, CNI_ERR_INCOMPATIBLE_VERSION, -EINVAL,
				   "cannot convert: no valid IP addresses");
	if (has4)
		r = add_obj(o, "ip4", ipconfig_020(res, AF_INET));
	if (!r && has6)
		r = add_obj(o, "ip6", ipconfig_020(res, AF_INET6));
	if (!r)
		r = add_obj(o, "dns", dns_json(&res->dns));
	return r;
}

static struct json_object *iface_json(const struct cni_iface *i, enum result_shape shape)
{
	struct json_object *o = json_object_new_object();
	int r;

	if (!o)
		return NULL;
	r = add_str(o, "name", i->name);
	if (!r && i->mac[0])
		r = add_str(o, "mac", i->mac);
	if (!r && shape == SHAPE_100 && i->mtu)
		r = add_int(o, "mtu", i->mtu);
	if (!r && i->sandbox)
		r = add_str(o, "sandbox", i->sandbox);
	if (!r && shape == SHAPE_100 && i->socket_path)
		r = add_str(o, "socketPath", i->socket_path);
	if (!r && shape == SHAPE_100 && i->pci_id)
		r = add_str(o, "pciID", i->pci_id);
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *ip_json(const struct cni_ip *ip, enum result_shape shape)
{
	struct json_object *o = json_object_new_object();
	char buf[IP_PREFIX_STRLEN];
	int r = 0;

	if (!o)
		return NULL;
	if (shape == SHAPE_040)
		r = add_str(o, "version", ip->address.addr.family == AF_INET6 ? "6" : "4");
	if (!r && ip->iface >= 0)
		r = add_int(o, "interface", ip->iface);
	if (!r)
		r = add_str(o, "address", ip_prefix_format(&ip->address, buf, sizeof(buf)));
	if (!r && ip->has_gateway)
		r = add_str(o, "gateway", ip_addr_format(&ip->gateway, buf, sizeof(buf)));
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int render_current(const struct cni_result *res, enum result_shape shape,
			  struct json_object *o)
{
	struct json_object *arr;
	int r = 0;

	if (res->n_ifaces) {
		arr = json_object_new_array();
		for (size_t i = 0; !r && arr && i < res->n_ifaces; i++)
			r = add_to_array(arr, iface_json(&res->ifaces[i], shape));
		r = r ? (json_object_put(arr), r) : add_obj(o, "interfaces", arr);
	}
	if (!r && res->n_ips) {
		arr = json_object_new_array();
		for (size_t i = 0; !r && arr && i < res->n_ips; i++)
			r = add_to_array(arr, ip_json(&res->ips[i], shape));
		r = r ? (json_object_put(arr), r) : add_obj(o, "ips", arr);
	}
	if (!r && res->n_routes) {
		arr = json_object_new_array();
		for (size_t i = 0; !r && arr && i < res->n_routes; i++)
			r = add_to_array(arr, route_json(&res->routes[i], shape));
		r = r ? (json_object_put(arr), r) : add_obj(o, "routes", arr);
	}
	/* 0.3.x/0.4.0 always carry dns; 1.x drops it when empty. */
	if (!r && (shape == SHAPE_040 || !dns_empty(&res->dns)))
		r = add_obj(o, "dns", dns_json(&res->dns));
	return r;
}

int cni_result_to_json(const struct cni_result *res, const char *version, char **ret,
		       struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *o = NULL;
	enum result_shape shape;
	char *text;
	int r;

	if (!cni_version_supported(version))
		return cni_err_set(err, CNI_ERR_INCOMPATIBLE_VERSION, -EINVAL,
				   "cannot convert result to unsupported version \"%s\"", version);
	shape = shape_of(version);
	o = json_object_new_object();
	if (!o)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = add_str(o, "cniVersion", version);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	r = shape == SHAPE_020 ? render_020(res, o, err) : render_current(res, shape, o);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							    JSON_C_TO_STRING_SPACED |
							    JSON_C_TO_STRING_NOSLASHESCAPE));
	if (!text)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	*ret = text;
	return 0;
}

int cni_result_add_attachment(struct cni_result *res, const char *ifname, const char *mac,
			      const char *sandbox, const struct cni_result *ipam,
			      const struct cni_dns *dns)
{
	int idx = cni_result_add_iface(res, ifname, mac, sandbox);
	int r = idx < 0 ? idx : 0;

	for (size_t i = 0; r >= 0 && i < ipam->n_ips; i++) {
		struct cni_ip ip = ipam->ips[i];

		ip.iface = idx;
		r = cni_result_add_ip(res, &ip);
	}
	for (size_t i = 0; r >= 0 && i < ipam->n_routes; i++)
		r = cni_result_add_route(res, &ipam->routes[i]);
	if (r >= 0)
		r = cni_result_set_dns(res, dns);
	return r;
}
