/* host-local's network config: ranges, requested addresses, routes and where its state lives */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/result.h"
#include "common/cni/version.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json-go.h"
#include "common/util/json.h"
#include "ipam/host-local/config.h"
#include "ipam/host-local/ip.h"

/* CNI_ARGS keys host-local reads; any other needs IgnoreUnknown, as upstream. */
static const char *const ipam_keys[] = {
	"type", "subnet", "rangeStart", "rangeEnd", "gateway", "ranges", "routes", "dataDir",
	"resolvConf", "logFile", "logLevel", NULL,
};
static const char *const args_keys[] = { "ips", NULL };

const struct cni_conf_keys host_local_config_keys[] = {
	{ "ipam", ipam_keys },
	{ "args.cni", args_keys },
	{ 0 },
};

static const char *const env_args_known[] = { "IP", NULL };

/* A text member that names an address, "" and absent alike none (Go's net.IP). */
static int read_ip(struct json_object *o, const char *key, bool *ret_has, struct ip_addr *ret,
		   struct cni_err *err)
{
	const char *s = NULL;
	int r;

	if ((r = cjson_get_str(o, key, &s, err)) < 0)
		return r;
	*ret_has = false;
	if (!s || !*s)
		return 0;
	if (hl_ip_parse(s, ret) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "invalid IP address: %.64s", s);
	*ret_has = true;
	return 0;
}

/*
 * One range of a config; @has_subnet says whether it names one. Without a subnet a
 * range of a set fails upstream's canonicalization of the empty address.
 */
static int read_range(struct json_object *o, struct hl_range_spec *ret, bool *ret_has_subnet,
		      struct cni_err *err)
{
	struct hl_range_spec spec = { 0 };
	const char *subnet = NULL;
	int r;

	if ((r = cjson_get_str(o, "subnet", &subnet, err)) < 0 ||
	    (r = read_ip(o, "rangeStart", &spec.has_start, &spec.start, err)) < 0 ||
	    (r = read_ip(o, "rangeEnd", &spec.has_end, &spec.end, err)) < 0 ||
	    (r = read_ip(o, "gateway", &spec.has_gateway, &spec.gateway, err)) < 0)
		return r;
	*ret_has_subnet = subnet != NULL;
	if (subnet && hl_cidr_parse(subnet, &spec.subnet) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "invalid CIDR address: %.64s",
				   subnet);
	*ret = spec;
	return 0;
}

/* A range set as upstream canonicalizes it; the index is the set's in the final list. */
static int make_set(const struct hl_range_spec *specs, const bool *has_subnet, size_t n,
		    size_t index, struct hl_range_set *ret, struct cni_err *err)
{
	struct hl_range_set set = { .n = n };
	int r;

	set.ranges = calloc(n ? n : 1, sizeof(*set.ranges));
	if (!set.ranges)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		r = has_subnet[i] ? hl_range_canonicalize(&specs[i], &set.ranges[i], err) :
				    cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
						"IP <nil> not v4 nor v6");
		if (r < 0)
			goto fail;
	}
	r = hl_range_set_check(&set, err);
	if (r < 0)
		goto fail;
	*ret = set;
	return 0;
fail:
	free(set.ranges);
	return cni_err_prefix(err, r, "invalid range set %zu", index);
}

/* The specs of the sets a "ranges" array holds, appended to a list. */
struct set_specs {
	struct hl_range_spec *specs; /* every set's ranges, one after the other */
	bool *has_subnet;
	size_t *count;               /* ranges per set */
	size_t n_specs, n_sets;
};

static void set_specs_free(struct set_specs *s)
{
	free(s->specs);
	free(s->has_subnet);
	free(s->count);
	*s = (struct set_specs){ 0 };
}

static int set_specs_add_set(struct set_specs *s, size_t n_ranges, struct cni_err *err)
{
	size_t *count = realloc(s->count, (s->n_sets + 1) * sizeof(*count));
	struct hl_range_spec *specs;
	bool *has;

	if (!count)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	s->count = count;
	specs = realloc(s->specs, (s->n_specs + n_ranges + 1) * sizeof(*specs));
	if (!specs)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	s->specs = specs;
	has = realloc(s->has_subnet, (s->n_specs + n_ranges + 1) * sizeof(*has));
	if (!has)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	s->has_subnet = has;
	s->count[s->n_sets++] = n_ranges;
	return 0;
}

/* [[range, ...], ...] at @key of @o (ipam.ranges, runtimeConfig.ipRanges). */
static int read_sets(struct json_object *o, const char *key, const char *label,
		     struct set_specs *s, struct cni_err *err)
{
	struct json_object *arr = NULL;
	int r;

	r = cjson_get_typed(o, key, json_type_array, &arr, err);
	if (r <= 0)
		return r;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *set = json_object_array_get_idx(arr, i);
		size_t n;

		/* null is Go's nil set: empty. */
		if (set && !json_object_is_type(set, json_type_array))
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					   "%s[%zu]: expected an array of ranges, got %s", label, i,
					   cjson_type_name(set));
		n = set ? json_object_array_length(set) : 0;
		if ((r = set_specs_add_set(s, n, err)) < 0)
			return r;
		for (size_t k = 0; k < n; k++) {
			struct json_object *range = json_object_array_get_idx(set, k);
			size_t at = s->n_specs++;

			s->specs[at] = (struct hl_range_spec){ 0 };
			s->has_subnet[at] = false;
			if (!range)
				continue;
			if (!json_object_is_type(range, json_type_object))
				return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
						   "%s[%zu][%zu]: expected an object, got %s", label, i, k,
						   cjson_type_name(range));
			r = read_range(range, &s->specs[at], &s->has_subnet[at], err);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int add_requested(struct hl_config *c, const struct ip_addr *a, struct cni_err *err)
{
	struct ip_addr *v;

	/* Upstream keeps them in a map by their text: a repeat is one request. */
	for (size_t i = 0; i < c->n_requested; i++)
		if (ip_addr_equal(&c->requested[i], a))
			return 0;
	v = realloc(c->requested, (c->n_requested + 1) * sizeof(*v));
	if (!v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	c->requested = v;
	c->requested[c->n_requested++] = *a;
	return 0;
}

/*
 * An address as upstream's ip.IP reads it: bare or with a prefix (which is dropped).
 * Return: 1 with an address, 0 for "" (Go's empty IP), -EINVAL.
 */
static int parse_ip_arg(const char *s, struct ip_addr *ret)
{
	struct hl_cidr c;

	if (!*s)
		return 0;
	if (strchr(s, '/')) {
		if (hl_cidr_parse(s, &c) < 0)
			return -EINVAL;
		*ret = c.ip;
		return 1;
	}
	return hl_ip_parse(s, ret) < 0 ? -EINVAL : 1;
}

static int read_env_ip(const struct cni_args *args, struct hl_config *c, struct cni_err *err)
{
	const char *ip;
	struct ip_addr a;
	int r;

	if ((r = cni_args_check_known(args, env_args_known, err)) < 0)
		return r;
	ip = cni_args_get(args, "IP");
	if (!ip)
		return 0;
	r = parse_ip_arg(ip, &a);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL,
				   "ARGS: error parsing value of pair \"IP=%.64s\": invalid IP address %.64s",
				   ip, ip);
	return r ? add_requested(c, &a, err) : 0;
}

/* args.cni.ips, runtimeConfig.ips: appended after IP=. */
static int read_ip_list(const struct cni_conf *conf, const char *path, struct hl_config *c,
			struct cni_err *err)
{
	char **ips = NULL;
	size_t n = 0;
	struct ip_addr a;
	int r;

	r = cni_conf_get_str_array(conf, path, &ips, &n, err);
	for (size_t i = 0; r > 0 && i < n; i++) {
		r = parse_ip_arg(ips[i], &a);
		if (r < 0)
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "invalid IP address %.64s",
					ips[i]);
		else if (r == 0)
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					"cannot understand ip: IP <nil> not v4 nor v6");
		else
			r = add_requested(c, &a, err);
		if (r >= 0)
			r = 1;
	}
	cni_conf_strv_free(ips, n);
	return r < 0 ? r : 0;
}

/* ipam.routes have a result's form: the result parser reads them. */
static int read_routes(struct json_object *ipam, struct hl_config *c, struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *wrap = NULL;
	struct json_object *routes = NULL;
	struct cni_result parsed = { 0 };
	int r;

	r = cjson_get_typed(ipam, "routes", json_type_array, &routes, err);
	if (r <= 0)
		return r < 0 ? cni_err_prefix(err, r, "ipam") : 0;
	wrap = json_object_new_object();
	if (!wrap || json_object_object_add(wrap, "routes", json_object_get(routes)) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = cni_result_from_object(wrap, "1.1.0", &parsed, err);
	if (r < 0)
		return cni_err_prefix(err, r, "ipam");
	c->routes = TAKE_PTR(parsed.routes);
	c->n_routes = parsed.n_routes;
	parsed.n_routes = 0;
	cni_result_free(&parsed);
	return 0;
}

/* The sets in upstream's order: runtimeConfig.ipRanges, the single range, ipam.ranges. */
static int read_all_sets(const struct cni_conf *conf, struct json_object *ipam,
			 struct set_specs *s, struct cni_err *err)
{
	struct set_specs ranges = { 0 };
	struct json_object *rc = NULL;
	struct hl_range_spec spec;
	bool has_subnet = false;
	int r;

	if ((r = cjson_get_typed(conf->root, "runtimeConfig", json_type_object, &rc, err)) < 0 ||
	    (rc && (r = read_sets(rc, "ipRanges", "runtimeConfig.ipRanges", s, err)) < 0) ||
	    (r = read_range(ipam, &spec, &has_subnet, err)) < 0 ||
	    (r = read_sets(ipam, "ranges", "ipam.ranges", &ranges, err)) < 0)
		goto out;
	/* A subnet at the top of ipam is a set of one range, as older configs have it. */
	if (has_subnet) {
		if ((r = set_specs_add_set(s, 1, err)) < 0)
			goto out;
		s->specs[s->n_specs] = spec;
		s->has_subnet[s->n_specs++] = true;
	}
	for (size_t i = 0, at = 0; i < ranges.n_sets; at += ranges.count[i++]) {
		if ((r = set_specs_add_set(s, ranges.count[i], err)) < 0)
			goto out;
		memcpy(s->specs + s->n_specs, ranges.specs + at, ranges.count[i] * sizeof(*s->specs));
		memcpy(s->has_subnet + s->n_specs, ranges.has_subnet + at,
		       ranges.count[i] * sizeof(*s->has_subnet));
		s->n_specs += ranges.count[i];
	}
	r = 0;
out:
	set_specs_free(&ranges);
	return r;
}

static int make_sets(const struct cni_conf *conf, const struct set_specs *s, struct hl_config *c,
		     struct cni_err *err)
{
	size_t v4 = 0, v6 = 0;
	int r;

	if (s->n_sets == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "no IP ranges specified");
	c->sets = calloc(s->n_sets, sizeof(*c->sets));
	if (!c->sets)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0, at = 0; i < s->n_sets; at += s->count[i++]) {
		r = make_set(s->specs + at, s->has_subnet + at, s->count[i], i, &c->sets[i], err);
		if (r < 0)
			return r;
		c->n_sets++;
		if (c->sets[i].ranges[0].start.family == AF_INET)
			v4++;
		else
			v6++;
	}
	r = cni_version_check_families(conf->cni_version, v4, v6, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i + 1 < c->n_sets; i++)
		for (size_t j = i + 1; j < c->n_sets; j++)
			if (hl_range_sets_overlap(&c->sets[i], &c->sets[j]))
				return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
						   "range set %zu overlaps with %zu", i, j);
	return 0;
}

int hl_config_load(const struct cni_conf *conf, const struct cni_args *args,
		   struct hl_config *ret, struct cni_err *err)
{
	struct hl_config c = { .name = conf->name, .data_dir = HL_DEFAULT_DATA_DIR };
	struct set_specs specs = { 0 };
	struct json_object *ipam = NULL;
	const char *s;
	int r;

	r = cjson_get_typed(conf->root, "ipam", json_type_object, &ipam, err);
	if (r == 0)
		r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "IPAM config missing 'ipam' key");
	if (r < 0)
		return r;
	s = NULL;
	if ((r = cjson_get_str(ipam, "dataDir", &s, err)) < 0)
		goto fail;
	if (s && *s)
		c.data_dir = s;
	s = NULL;
	if ((r = cjson_get_str(ipam, "resolvConf", &s, err)) < 0)
		goto fail;
	if (s && *s)
		c.resolv_conf = s;
	if ((r = read_routes(ipam, &c, err)) < 0 || (r = read_all_sets(conf, ipam, &specs, err)) < 0 ||
	    (args->n && (r = read_env_ip(args, &c, err)) < 0) ||
	    (r = read_ip_list(conf, "args.cni.ips", &c, err)) < 0 ||
	    (r = read_ip_list(conf, "runtimeConfig.ips", &c, err)) < 0 ||
	    (r = make_sets(conf, &specs, &c, err)) < 0)
		goto fail;
	set_specs_free(&specs);
	*ret = c;
	return 0;
fail:
	set_specs_free(&specs);
	hl_config_free(&c);
	return r;
}

void hl_config_free(struct hl_config *c)
{
	free(c->routes);
	for (size_t i = 0; i < c->n_sets; i++)
		free(c->sets[i].ranges);
	free(c->sets);
	free(c->requested);
	*c = (struct hl_config){ 0 };
}
