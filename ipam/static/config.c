/* static IPAM: the addresses, routes and DNS a config, CNI_ARGS and runtimeConfig give */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/args.h"
#include "common/cni/conf-keys.h"
#include "common/cni/conf.h"
#include "common/cni/result.h"
#include "common/cni/version.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "common/util/json-go.h"
#include "common/util/json.h"
#include "ipam/static/config.h"

static const char *const ipam_keys[] = {
	"type", "addresses", "routes", "dns", "logFile", "logLevel", NULL,
};
static const char *const args_keys[] = { "ips", NULL };

const struct cni_conf_keys static_config_keys[] = {
	{ "ipam", ipam_keys },
	{ "args.cni", args_keys },
	{ 0 },
};

/* CNI_ARGS keys static reads; any other needs IgnoreUnknown, as with the reference. */
static const char *const env_args_known[] = { "IP", "GATEWAY", NULL };

static int add_address(struct cni_result *res, const struct ip_prefix *p, const struct ip_addr *gw,
		       struct cni_err *err)
{
	struct cni_ip ip = { .address = *p, .iface = -1 };

	if (gw) {
		ip.has_gateway = true;
		ip.gateway = *gw;
	}
	if (cni_result_add_ip(res, &ip) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

static int load_config_address(struct json_object *entry, struct cni_result *res,
			       struct cni_err *err)
{
	const char *address = "", *gateway = NULL;
	struct ip_prefix p;
	struct ip_addr gw;
	char buf[IP_PREFIX_STRLEN];
	int r;

	if (!json_object_is_type(entry, json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "ipam.addresses: expected an object, got %s", cjson_type_name(entry));
	if ((r = cjson_get_str(entry, "address", &address, err)) < 0 ||
	    (r = cjson_get_str(entry, "gateway", &gateway, err)) < 0)
		return r;
	if (ip_prefix_parse(address, &p) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "the 'address' field is expected to be in CIDR notation, got: '%.64s'",
				   address);
	/* An empty gateway is none, as Go reads an empty net.IP. */
	if (!gateway || !*gateway)
		return add_address(res, &p, NULL, err);
	if (ip_addr_parse(gateway, &gw) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid IP address: %.64s", gateway);
	/* The reference passes this on; the interface plugin's kernel would refuse it later. */
	if (gw.family != p.addr.family)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "gateway %.64s is not of the family of address %s", gateway,
				   ip_prefix_format(&p, buf, sizeof(buf)));
	return add_address(res, &p, &gw, err);
}

static int load_config_addresses(struct json_object *ipam, struct cni_result *res,
				 struct cni_err *err)
{
	struct json_object *arr = NULL;
	int r;

	r = cjson_get_typed(ipam, "addresses", json_type_array, &arr, err);
	if (r < 0)
		return cni_err_prefix(err, r, "ipam");
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		r = load_config_address(json_object_array_get_idx(arr, i), res, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Go's strings.TrimSpace, for the ASCII spaces a CNI_ARGS value can hold. */
static char *trim(char *s)
{
	char *end = s + strlen(s);

	while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		s++;
	while (end > s && (end[-1] == ' ' || (end[-1] >= '\t' && end[-1] <= '\r')))
		*--end = '\0';
	return s;
}

static int load_env_ips(const char *value, struct cni_result *res, struct cni_err *err)
{
	_cleanup_free_ char *copy = strdup(value);
	char *item, *rest;
	struct ip_prefix p;
	int r;

	if (!copy)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	/* strsep, not strtok: an empty item between commas is an error, as upstream. */
	for (rest = copy; (item = strsep(&rest, ",")) != NULL;) {
		item = trim(item);
		if (ip_prefix_parse(item, &p) < 0)
			return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL,
					   "the 'ip' field is expected to be in CIDR notation, got: '%.64s'",
					   item);
		if ((r = add_address(res, &p, NULL, err)) < 0)
			return r;
	}
	return 0;
}

/* Each gateway goes to every IP= address that contains it; a later one wins. */
static int load_env_gateways(const char *value, struct cni_result *res, size_t first,
			     struct cni_err *err)
{
	_cleanup_free_ char *copy = strdup(value);
	char *item, *rest;
	struct ip_addr gw;

	if (!copy)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (rest = copy; (item = strsep(&rest, ",")) != NULL;) {
		if (ip_addr_parse(trim(item), &gw) < 0)
			return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL,
					   "invalid gateway address: %.64s", item);
		for (size_t i = first; i < res->n_ips; i++) {
			if (!ip_prefix_contains(&res->ips[i].address, &gw))
				continue;
			res->ips[i].has_gateway = true;
			res->ips[i].gateway = gw;
		}
	}
	return 0;
}

/*
 * The reference reads IP= and GATEWAY= only when CNI_ARGS is set, and applies GATEWAY=
 * before it parses ipam.addresses: those never get a gateway from it.
 */
static int load_env_args(const struct cni_args *args, struct cni_result *res,
			 struct cni_err *err)
{
	const char *ip = cni_args_get(args, "IP");
	const char *gateway = cni_args_get(args, "GATEWAY");
	size_t first = res->n_ips;
	int r;

	if ((r = cni_args_check_known(args, env_args_known, err)) < 0)
		return r;
	if (ip && *ip && (r = load_env_ips(ip, res, err)) < 0)
		return r;
	if (gateway && *gateway && (r = load_env_gateways(gateway, res, first, err)) < 0)
		return r;
	return 0;
}

/* args.cni.ips and runtimeConfig.ips: a non-empty list replaces every address so far. */
static int load_ip_list(const struct cni_conf *conf, const char *path, struct cni_result *res,
			struct cni_err *err)
{
	struct cni_result list = { 0 };
	char **ips = NULL;
	size_t n = 0;
	struct ip_prefix p;
	int r;

	r = cni_conf_get_str_array(conf, path, &ips, &n, err);
	if (r <= 0 || n == 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (ip_prefix_parse(ips[i], &p) < 0) {
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					"an entry in the 'ips' field is NOT in CIDR notation, got: '%.64s'",
					ips[i]);
			goto out;
		}
		if ((r = add_address(&list, &p, NULL, err)) < 0)
			goto out;
	}
	free(res->ips);
	res->ips = TAKE_PTR(list.ips);
	res->n_ips = list.n_ips;
	r = 0;
out:
	cni_result_free(&list);
	cni_conf_strv_free(ips, n);
	return r;
}

/* 0.1.0 and 0.2.0 results have one ip4 and one ip6 field. */
static int check_version(const struct cni_conf *conf, const struct cni_result *res,
			 struct cni_err *err)
{
	size_t v4 = 0, v6 = 0;

	for (size_t i = 0; i < res->n_ips; i++) {
		if (res->ips[i].address.addr.family == AF_INET)
			v4++;
		else
			v6++;
	}
	return cni_version_check_families(conf->cni_version, v4, v6, err);
}

/* Another reference to @member (when there is one) under @key in @wrap. */
static int wrap_add(struct json_object *wrap, const char *key, struct json_object *member,
		    struct cni_err *err)
{
	if (!member)
		return 0;
	if (json_object_object_add(wrap, key, json_object_get(member)) < 0) {
		json_object_put(member);
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * ipam.routes and ipam.dns have the form of a result's routes and dns: they are read by
 * the result parser, from an object that holds just those two members.
 */
static int load_routes_dns(struct json_object *ipam, struct cni_result *res, struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *wrap = json_object_new_object();
	struct json_object *routes = NULL, *dns = NULL;
	struct cni_result parsed = { 0 };
	int r;

	if (!wrap)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if ((r = cjson_get_typed(ipam, "routes", json_type_array, &routes, err)) < 0 ||
	    (r = cjson_get_typed(ipam, "dns", json_type_object, &dns, err)) < 0)
		return cni_err_prefix(err, r, "ipam");
	if ((r = wrap_add(wrap, "routes", routes, err)) < 0 ||
	    (r = wrap_add(wrap, "dns", dns, err)) < 0)
		return r;
	r = cni_result_from_object(wrap, "1.1.0", &parsed, err);
	if (r < 0)
		return cni_err_prefix(err, r, "ipam");
	res->routes = TAKE_PTR(parsed.routes);
	res->n_routes = parsed.n_routes;
	res->dns = parsed.dns;
	parsed.n_routes = 0;
	parsed.dns = (struct cni_dns){ 0 };
	cni_result_free(&parsed);
	return 0;
}

int static_config_load(const struct cni_conf *conf, const struct cni_args *args,
		       struct cni_result *ret, struct cni_err *err)
{
	struct cni_result res = { 0 };
	struct json_object *ipam = NULL;
	int r;

	r = cjson_get_typed(conf->root, "ipam", json_type_object, &ipam, err);
	if (r == 0)
		r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "IPAM config missing 'ipam' key");
	if (r < 0)
		return r;
	if ((r = load_config_addresses(ipam, &res, err)) < 0 ||
	    (args->n && (r = load_env_args(args, &res, err)) < 0) ||
	    (r = load_ip_list(conf, "args.cni.ips", &res, err)) < 0 ||
	    (r = load_ip_list(conf, "runtimeConfig.ips", &res, err)) < 0 ||
	    (r = check_version(conf, &res, err)) < 0 ||
	    (r = load_routes_dns(ipam, &res, err)) < 0) {
		cni_result_free(&res);
		return r;
	}
	*ret = res;
	return 0;
}
