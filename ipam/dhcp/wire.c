/* The plugin's requests to the daemon and its answers, over the daemon's unix socket */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cni/result.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/json-exact.h"
#include "ipam/dhcp/wire.h"

/* Our own text, written and read back by one build: its keys are exact (docs/layout.md). */
static const char *const op_names[] = {
	[DHCP_OP_ADD] = "add",
	[DHCP_OP_DEL] = "del",
	[DHCP_OP_CHECK] = "check",
	[DHCP_OP_STATUS] = "status",
};

static int add(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int dup_text(struct json_object *o, char **ret)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);

	*ret = s ? strdup(s) : NULL;
	return *ret ? 0 : -ENOMEM;
}

int dhcp_wire_req_encode(const struct dhcp_req *req, char **ret)
{
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
	struct json_object *opts = json_object_new_array(), *params = json_object_new_array();
	int r = 0;

	if (!o || add(o, "provide", opts) < 0 || add(o, "request", params) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < req->n_opts && r == 0; i++) {
		struct json_object *e = json_object_new_object();

		if (!e || json_object_array_add(opts, e) < 0) {
			json_object_put(e);
			return -ENOMEM;
		}
		r = add(e, "code", json_object_new_int(req->opts[i].code));
		if (r == 0)
			r = add(e, "value", json_object_new_string_len((const char *)req->opts[i].value,
								       req->opts[i].len));
	}
	for (size_t i = 0; i < req->n_params && r == 0; i++)
		if (json_object_array_add(params, json_object_new_int(req->params[i])) < 0)
			r = -ENOMEM;
	if (r < 0 || add(o, "op", json_object_new_string(op_names[req->op])) < 0 ||
	    add(o, "clientId", json_object_new_string(req->client_id)) < 0 ||
	    add(o, "netns", json_object_new_string(req->netns)) < 0 ||
	    add(o, "ifName", json_object_new_string(req->ifname)) < 0 ||
	    add(o, "priority", json_object_new_int(req->priority)) < 0)
		return -ENOMEM;
	return dup_text(o, ret);
}

static int copy_str(struct json_object *o, const char *key, char *out, size_t size, bool required,
		    struct cni_err *err)
{
	const char *s = NULL;
	int r = cjson_member_str(o, key, &s, err);

	if (r < 0)
		return r;
	if (!s && !required) {
		out[0] = '\0';
		return 0;
	}
	if (!s || strlen(s) >= size)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "request: \"%s\" missing or longer than %zu bytes", key, size - 1);
	strcpy(out, s);
	return 0;
}

static int read_opts(struct json_object *o, struct dhcp_req *req, struct cni_err *err)
{
	struct json_object *a = NULL;
	int64_t v;
	int r;

	if ((r = cjson_member_typed(o, "provide", json_type_array, &a, err)) < 0)
		return r;
	if (a && json_object_array_length(a) > DHCP_PROVIDE_MAX)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -E2BIG, "request: too many options");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *e = json_object_array_get_idx(a, i), *val = NULL;
		struct dhcp_opt *opt = &req->opts[req->n_opts];

		if ((r = cjson_member_int(e, "code", 1, 254, &v, err)) <= 0 ||
		    (r = cjson_member_typed(e, "value", json_type_string, &val, err)) <= 0)
			return r < 0 ? r : cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
						       "request: option without code or value");
		if (json_object_get_string_len(val) > 255)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "request: option value too long");
		opt->code = (uint8_t)v;
		opt->len = (uint8_t)json_object_get_string_len(val);
		memcpy(opt->value, json_object_get_string(val), opt->len);
		req->n_opts++;
	}
	if ((r = cjson_member_typed(o, "request", json_type_array, &a, err)) < 0)
		return r;
	if (a && json_object_array_length(a) > sizeof(req->params))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -E2BIG, "request: too many parameters");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *e = json_object_array_get_idx(a, i);

		if (!json_object_is_type(e, json_type_int) || json_object_get_int64(e) < 1 ||
		    json_object_get_int64(e) > 254)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "request: parameter not an option code");
		req->params[req->n_params++] = (uint8_t)json_object_get_int64(e);
	}
	return 0;
}

int dhcp_wire_req_decode(const char *text, size_t len, struct dhcp_req *ret, struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *o = NULL;
	char op[16];
	int64_t prio = 0;
	struct dhcp_req req = { 0 };
	size_t i;
	int r;

	if ((r = cjson_parse(text, len, "request", &o, err)) < 0)
		return r;
	if (!json_object_is_type(o, json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "request: not an object");
	if ((r = copy_str(o, "op", op, sizeof(op), true, err)) < 0)
		return r;
	for (i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (strcmp(op, op_names[i]) == 0)
			break;
	if (i == sizeof(op_names) / sizeof(op_names[0]))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "request: unknown op");
	req.op = (enum dhcp_op)i;
	if (req.op == DHCP_OP_STATUS) {
		*ret = req;
		return 0;
	}
	if ((r = copy_str(o, "clientId", req.client_id, sizeof(req.client_id), true, err)) < 0 ||
	    (r = copy_str(o, "netns", req.netns, sizeof(req.netns), false, err)) < 0 ||
	    (r = copy_str(o, "ifName", req.ifname, sizeof(req.ifname), true, err)) < 0 ||
	    (r = cjson_member_int(o, "priority", INT32_MIN, INT32_MAX, &prio, err)) < 0 ||
	    (r = read_opts(o, &req, err)) < 0)
		return r;
	req.priority = (int)prio;
	*ret = req;
	return 0;
}

int dhcp_wire_answer_encode(const struct cni_result *res, const struct cni_err *err, int r,
			    char **ret)
{
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
	_cleanup_free_ char *text = NULL;
	struct cni_err conv = { 0 };

	if (!o)
		return -ENOMEM;
	if (r >= 0 && res && cni_result_to_json(res, "1.1.0", &text, &conv) < 0) {
		err = &conv;
		r = -EINVAL;
	}
	if (r < 0) {
		struct json_object *e = json_object_new_object();

		if (add(o, "error", e) < 0 || add(e, "code", json_object_new_int(err->code)) < 0 ||
		    add(e, "msg", json_object_new_string(err->msg)) < 0 ||
		    (err->details[0] && add(e, "details", json_object_new_string(err->details)) < 0))
			return -ENOMEM;
	} else if (text) {
		if (add(o, "result", json_tokener_parse(text)) < 0)
			return -ENOMEM;
	}
	return dup_text(o, ret);
}

int dhcp_wire_answer_decode(const char *text, size_t len, struct cni_result *ret,
			    struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *o = NULL;
	struct json_object *e, *res;
	const char *msg = NULL, *details = NULL;
	int64_t code = CNI_ERR_INTERNAL;
	int r;

	if ((r = cjson_parse(text, len, "DHCP daemon answer", &o, err)) < 0)
		return cni_err_code(err, CNI_ERR_INTERNAL, r);
	if (!json_object_is_type(o, json_type_object))
		return cni_err_set(err, CNI_ERR_INTERNAL, -EPROTO,
				   "DHCP daemon answer: not an object (a daemon of another build?)");
	e = cjson_member(o, "error", json_type_object);
	if (e) {
		if (cjson_member_int(e, "code", 1, INT32_MAX, &code, err) < 0 ||
		    cjson_member_str(e, "msg", &msg, err) < 0 || cjson_member_str(e, "details", &details, err) < 0)
			return cni_err_code(err, CNI_ERR_INTERNAL, -EPROTO);
		cni_err_set(err, (int)code, -EIO, "%s", msg ? msg : "DHCP daemon: unknown error");
		if (details)
			cni_err_details(err, "%s", details);
		return -EIO;
	}
	res = cjson_member(o, "result", json_type_object);
	if (!res)
		return 0;
	msg = json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN);
	if (!msg)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return cni_result_parse(msg, strlen(msg), "1.1.0", ret, err);
}

int dhcp_wire_send(int fd, const char *text)
{
	size_t len = strlen(text), off = 0;

	while (off < len) {
		ssize_t n = send(fd, text + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return shutdown(fd, SHUT_WR) < 0 ? -errno : 0;
}

int dhcp_wire_recv(int fd, char **ret, size_t *ret_len)
{
	return file_read_fd(fd, DHCP_WIRE_MAX, ret, ret_len);
}
