/* dhcp's config: the daemon's socket and the request the plugin sends it */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/ctx.h"
#include "common/util/error.h"
#include "common/util/json-go.h"
#include "ipam/dhcp/config.h"

static const char *const ipam_keys[] = {
	"type", "daemonSocketPath", "provide", "request", "priority", "logFile", "logLevel", NULL,
};

const struct cni_conf_keys dhcp_config_keys[] = {
	{ "ipam", ipam_keys },
	{ 0 },
};

/* Upstream's names; any other option is given by its number. */
static const struct {
	const char *name;
	uint8_t code;
} option_names[] = {
	{ "dhcp-client-identifier", DHCP_OPT_CLIENT_ID },
	{ "subnet-mask", DHCP_OPT_SUBNET_MASK },
	{ "routers", DHCP_OPT_ROUTER },
	{ "host-name", DHCP_OPT_HOST_NAME },
	{ "user-class", DHCP_OPT_USER_CLASS },
	{ "vendor-class-identifier", DHCP_OPT_VENDOR_CLASS },
};

int dhcp_option_code(const char *name, uint8_t *ret)
{
	char *end;
	unsigned long v;

	for (size_t i = 0; i < sizeof(option_names) / sizeof(option_names[0]); i++)
		if (strcmp(name, option_names[i].name) == 0) {
			*ret = option_names[i].code;
			return 0;
		}
	if (name[0] < '0' || name[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(name, &end, 10);
	/* 0 and 255 are padding and the end mark, 53 the message type: none is an option to give. */
	if (errno || *end || v == 0 || v > 254 || v == DHCP_OPT_MSG_TYPE)
		return -EINVAL;
	*ret = (uint8_t)v;
	return 0;
}

static int entry_option(struct json_object *e, const char *what, size_t i, uint8_t *ret,
			bool *ret_present, struct cni_err *err)
{
	const char *name = NULL;
	int r;

	if (!json_object_is_type(e, json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "ipam.%s[%zu]: expected an object, got %s",
				   what, i, cjson_type_name(e));
	if ((r = cjson_get_str(e, "option", &name, err)) < 0)
		return r;
	*ret_present = name && *name;
	if (!*ret_present)
		return 0;
	if (dhcp_option_code(name, ret) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "Can not parse option \"%.64s\": neither a name dhcp knows "
				   "(dhcp-client-identifier, subnet-mask, routers, host-name, user-class, "
				   "vendor-class-identifier) nor a number from 1 to 254 but 53", name);
	return 0;
}

static void put_opt(struct dhcp_req *req, uint8_t code, const char *value)
{
	struct dhcp_opt *o = NULL;

	for (size_t i = 0; i < req->n_opts; i++)
		if (req->opts[i].code == code)
			o = &req->opts[i];
	if (!o)
		o = &req->opts[req->n_opts++];
	o->code = code;
	o->len = (uint8_t)strlen(value);
	memcpy(o->value, value, o->len);
}

static int load_provide(const struct cni_ctx *ctx, struct json_object *a, struct dhcp_req *req,
			struct cni_err *err)
{
	size_t n = json_object_array_length(a);

	if (n > DHCP_PROVIDE_MAX)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -E2BIG,
				   "ipam.provide: more than %d options", DHCP_PROVIDE_MAX);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(a, i);
		const char *value = NULL, *from = NULL, *arg;
		bool present;
		uint8_t code = 0;
		int r;

		if ((r = entry_option(e, "provide", i, &code, &present, err)) < 0 ||
		    (r = cjson_get_str(e, "value", &value, err)) < 0 ||
		    (r = cjson_get_str(e, "fromArg", &from, err)) < 0)
			return r;
		if (!present)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "Can not parse option \"\": ipam.provide[%zu] names none", i);
		arg = from ? cni_args_get(&ctx->args, from) : NULL;
		if ((value && strlen(value) > 255) || (arg && strlen(arg) > 255))
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "value too long for option %u%s", code,
					   arg && strlen(arg) > 255 ? " from CNI_ARGS" : "");
		if (value && *value)
			put_opt(req, code, value);
		if (arg)
			put_opt(req, code, arg);
	}
	return 0;
}

static void add_param(struct dhcp_req *req, uint8_t code)
{
	for (size_t i = 0; i < req->n_params; i++)
		if (req->params[i] == code)
			return;
	req->params[req->n_params++] = code;
}

static int load_request(struct json_object *a, struct dhcp_req *req, struct cni_err *err)
{
	size_t n = a ? json_object_array_length(a) : 0;
	bool skip_default = false;

	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(a, i);
		bool present, skip = false;
		uint8_t code = 0;
		int r;

		if ((r = entry_option(e, "request", i, &code, &present, err)) < 0 ||
		    (r = cjson_get_bool(e, "skipDefault", &skip, err)) < 0)
			return r;
		skip_default |= skip;
		if (present)
			add_param(req, code); /* at most 254 distinct codes: params holds them */
	}
	if (!skip_default) {
		add_param(req, DHCP_OPT_ROUTER);
		add_param(req, DHCP_OPT_SUBNET_MASK);
	}
	return 0;
}

static int absolute_netns(const char *netns, char *out, size_t size, struct cni_err *err)
{
	char cwd[PATH_MAX];

	/* The daemon runs elsewhere: a relative path is the plugin's, as upstream's filepath.Abs. */
	if (!netns[0] || netns[0] == '/') {
		if ((size_t)snprintf(out, size, "%s", netns) >= size)
			goto long_path;
		return 0;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return cni_err_set(err, CNI_ERR_INVALID_NETNS, -errno, "failed to make \"%.256s\" an absolute path",
				   netns);
	if ((size_t)snprintf(out, size, "%s/%s", strcmp(cwd, "/") ? cwd : "", netns) < size)
		return 0;
long_path:
	return cni_err_set(err, CNI_ERR_INVALID_NETNS, -ENAMETOOLONG, "CNI_NETNS too long");
}

int dhcp_config_load(const struct cni_ctx *ctx, enum dhcp_op op, struct dhcp_req *ret,
		     const char **socket_path, struct cni_err *err)
{
	struct json_object *ipam = NULL, *provide = NULL, *request = NULL;
	struct dhcp_req *req = ret;
	const char *path = NULL;
	int64_t prio = 0;
	int r;

	memset(req, 0, sizeof(*req));
	req->op = op;
	if ((r = cjson_get_typed(ctx->conf.root, "ipam", json_type_object, &ipam, err)) < 0)
		return r;
	if (!ipam)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "error parsing socket path conf: no \"ipam\"");
	if ((r = cjson_get_str(ipam, "daemonSocketPath", &path, err)) < 0)
		return cni_err_prefix(err, r, "ipam");
	*socket_path = path && *path ? path : DHCP_SOCKET_DEFAULT;
	if (op == DHCP_OP_STATUS)
		return 0;
	if ((r = cjson_get_typed(ipam, "provide", json_type_array, &provide, err)) < 0 ||
	    (r = cjson_get_typed(ipam, "request", json_type_array, &request, err)) < 0 ||
	    (r = cjson_get_int(ipam, "priority", INT32_MIN, INT32_MAX, &prio, err)) < 0)
		return cni_err_prefix(err, r, "ipam");
	req->priority = (int)prio;
	if ((op == DHCP_OP_ADD || op == DHCP_OP_CHECK) &&
	    ((provide && (r = load_provide(ctx, provide, req, err)) < 0) ||
	     (r = load_request(request, req, err)) < 0))
		return r;
	snprintf(req->client_id, sizeof(req->client_id), "%s/%s/%s", ctx->env.container_id,
		 ctx->conf.name ? ctx->conf.name : "", ctx->env.ifname);
	snprintf(req->ifname, sizeof(req->ifname), "%s", ctx->env.ifname);
	return absolute_netns(ctx->env.netns ? ctx->env.netns : "", req->netns, sizeof(req->netns), err);
}
