/* Network configuration from stdin: common fields and typed access for plugins */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/conf.h"
#include "common/cni/env.h"
#include "common/cni/version.h"
#include "common/util/error.h"
#include "common/util/json-go.h"
#include "common/util/json.h"

void cni_conf_free(struct cni_conf *conf)
{
	if (conf->prev_result) {
		cni_result_free(conf->prev_result);
		free(conf->prev_result);
	}
	cjson_strv_free(conf->dns.nameservers, conf->dns.n_nameservers);
	cjson_strv_free(conf->dns.search, conf->dns.n_search);
	cjson_strv_free(conf->dns.options, conf->dns.n_options);
	free(conf->dns.domain);
	json_object_put(conf->root);
	*conf = (struct cni_conf){ 0 };
}

static int parse_dns(struct json_object *root, struct cni_conf *c, struct cni_err *err)
{
	struct json_object *d = NULL;
	const char *domain = NULL;
	int r;

	r = cjson_get_typed(root, "dns", json_type_object, &d, err);
	if (r <= 0)
		return r;
	if ((r = cjson_get_str_array(d, "nameservers", &c->dns.nameservers, &c->dns.n_nameservers,
				     err)) < 0 ||
	    (r = cjson_get_str_array(d, "search", &c->dns.search, &c->dns.n_search, err)) < 0 ||
	    (r = cjson_get_str_array(d, "options", &c->dns.options, &c->dns.n_options, err)) < 0 ||
	    (r = cjson_get_str(d, "domain", &domain, err)) < 0)
		return r;
	if (domain && !(c->dns.domain = strdup(domain)))
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	c->has_dns = true;
	return 0;
}

static int parse_prev_result(struct json_object *root, struct cni_conf *c, struct cni_err *err)
{
	struct json_object *prev = NULL;
	struct cni_result *res;
	int r;

	r = cjson_get_typed(root, "prevResult", json_type_object, &prev, err);
	if (r <= 0)
		return r;
	res = calloc(1, sizeof(*res));
	if (!res)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	/* The spec has prevResult in the config's own version. */
	r = cni_result_from_object(prev, c->cni_version, res, err);
	if (r < 0) {
		free(res);
		return r;
	}
	c->prev_result = res;
	return 0;
}

static int parse_common(struct json_object *root, struct cni_conf *c, struct cni_err *err)
{
	struct json_object *ipam = NULL;
	const char *version = NULL;
	char list[128];
	int r;

	if (!json_object_is_type(root, json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "error unmarshall network config: expected an object, got %s",
				   cjson_type_name(root));
	r = cjson_get_str(root, "cniVersion", &version, err);
	if (r < 0)
		return r;
	if (!version || !*version)
		version = "0.1.0";
	if (!cni_version_supported(version)) {
		cni_err_set(err, CNI_ERR_INCOMPATIBLE_VERSION, -EINVAL, "incompatible CNI versions");
		cni_err_details(err, "config is \"%.32s\", plugin supports %s", version,
				cni_version_list(list, sizeof(list)));
		return -EINVAL;
	}
	snprintf(c->cni_version, sizeof(c->cni_version), "%s", version);

	if ((r = cjson_get_str(root, "name", &c->name, err)) < 0)
		return r;
	if (!c->name || !*c->name)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "missing network name");
	if (!cni_env_valid_id(c->name))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid characters found in network name \"%.64s\"", c->name);
	if ((r = cjson_get_str(root, "type", &c->type, err)) < 0)
		return r;
	if ((r = cjson_get_typed(root, "ipam", json_type_object, &ipam, err)) < 0)
		return r;
	if (ipam && (r = cjson_get_str(ipam, "type", &c->ipam_type, err)) < 0)
		return r;
	/* ipam.type names a file in CNI_PATH: refuse what could leave those directories. */
	if (cni_conf_has_ipam(c) && !cni_conf_ipam_type_valid(c->ipam_type))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid ipam type \"%.64s\": must be a plugin name without '/'",
				   c->ipam_type);
	if ((r = cjson_get_str(root, "logFile", &c->log_file, err)) < 0 ||
	    (r = cjson_get_str(root, "logLevel", &c->log_level, err)) < 0)
		return r;
	if ((r = parse_dns(root, c, err)) < 0)
		return r;
	return parse_prev_result(root, c, err);
}

int cni_conf_parse(const char *buf, size_t len, struct cni_conf *ret, struct cni_err *err)
{
	struct cni_conf c = { .raw = buf, .raw_len = len };
	int r;

	r = cjson_parse(buf, len, "network config", &c.root, err);
	if (r < 0)
		return r;
	r = parse_common(c.root, &c, err);
	if (r < 0) {
		snprintf(ret->cni_version, sizeof(ret->cni_version), "%s", c.cni_version);
		cni_conf_free(&c);
		return r;
	}
	*ret = c;
	return 0;
}

void cni_attachments_free(struct cni_attachment *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++) {
		free(a[i].container_id);
		free(a[i].ifname);
	}
	free(a);
}

int cni_conf_gc_attachments(const struct cni_conf *conf, struct cni_attachment **ret,
			    size_t *ret_n, struct cni_err *err)
{
	static const char *const keys[] = { "cni.dev/valid-attachments", "cni.dev/attachments" };
	struct json_object *arr = NULL;
	struct cni_attachment *a;
	size_t n;
	int r = 0;

	for (size_t k = 0; k < 2 && !arr; k++) {
		r = cjson_get_typed(conf->root, keys[k], json_type_array, &arr, err);
		if (r < 0)
			return r;
	}
	if (!arr)
		return 0;
	n = json_object_array_length(arr);
	a = calloc(n + 1, sizeof(*a));
	if (!a)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *id = NULL, *ifname = NULL;

		if ((r = cjson_get_str(e, "containerID", &id, err)) < 0 ||
		    (r = cjson_get_str(e, "ifname", &ifname, err)) < 0)
			goto fail;
		if (!json_object_is_type(e, json_type_object) || !id || !ifname) {
			r = cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					"GC attachment %zu: expected {\"containerID\",\"ifname\"}", i);
			goto fail;
		}
		a[i].container_id = strdup(id);
		a[i].ifname = strdup(ifname);
		if (!a[i].container_id || !a[i].ifname) {
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			goto fail;
		}
	}
	*ret = a;
	*ret_n = n;
	return 1;
fail:
	cni_attachments_free(a, n);
	return r;
}

bool cni_conf_has_ipam(const struct cni_conf *conf)
{
	return conf->ipam_type && *conf->ipam_type;
}

bool cni_conf_ipam_type_valid(const char *type)
{
	return type && *type && !strchr(type, '/') && strcmp(type, ".") != 0 && strcmp(type, "..") != 0;
}

int cni_conf_check_l2_version(const struct cni_conf *conf, struct cni_err *err)
{
	if (cni_version_cmp(conf->cni_version, "0.3.0") >= 0)
		return 0;
	cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "cannot convert: no valid IP addresses");
	cni_err_details(err, "an interface without IPAM (\"ipam\": {}) needs cniVersion 0.3.0 or "
			"later; config is %s", conf->cni_version);
	return -EINVAL;
}
