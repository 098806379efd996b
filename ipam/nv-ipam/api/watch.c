/* A watch's stream: newline-delimited JSON events, each checked before it is used */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/api/watch.h"

#define EVENT_MAX_DEPTH 64

int api_lines_feed(struct api_lines *l, const char *data, size_t len,
		   int (*on_line)(void *ctx, const char *line, size_t len), void *ctx)
{
	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		size_t piece = nl ? (size_t)(nl - data) : len;
		int r = 0;

		if (l->buf.len + piece > l->max)
			return -E2BIG;
		if (nl && l->buf.len == 0) {
			/* The whole line is in @data: no copy. */
			if (piece > 0)
				r = on_line(ctx, data, piece);
		} else {
			text_buf_add(&l->buf, data, piece);
			if (l->buf.oom)
				return -ENOMEM;
			if (nl) {
				r = on_line(ctx, l->buf.data, l->buf.len);
				l->buf.len = 0;
			}
		}
		if (r < 0)
			return r;
		if (!nl)
			break;
		data += piece + 1;
		len -= piece + 1;
	}
	return 0;
}

bool api_lines_pending(const struct api_lines *l)
{
	for (size_t i = 0; i < l->buf.len; i++)
		if (!strchr(" \t\r", l->buf.data[i]))
			return true;
	return false;
}

void api_lines_free(struct api_lines *l)
{
	text_buf_free(&l->buf);
}

DEFINE_CLEANUP_FUNC(json_tokener_freep, json_tokener *, json_tokener_free);

static int bad(struct cni_err *err, const char *why)
{
	return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "watch event: %s", why);
}

/* A metadata string; NULL without one, and for one holding a NUL ("\u0000"): cut there as a
 * C string, a name would pass for another. */
static const char *meta_str(struct json_object *o, const char *key)
{
	struct json_object *m = NULL, *v = NULL;

	if (!json_object_object_get_ex(o, "metadata", &m) || !json_object_is_type(m, json_type_object) ||
	    !json_object_object_get_ex(m, key, &v) || !json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return NULL;
	return json_object_get_string(v);
}

/* Whether a metadata member is a string (one meta_str() refuses holds a NUL). */
static bool meta_is_str(struct json_object *o, const char *key)
{
	struct json_object *m = NULL, *v = NULL;

	return json_object_object_get_ex(o, "metadata", &m) && json_object_object_get_ex(m, key, &v) &&
	       json_object_is_type(v, json_type_string);
}

int api_event_parse(const char *line, size_t len, struct api_event *ret, struct cni_err *err)
{
	static const char *const types[] = {
		[API_EVENT_ADDED] = "ADDED",
		[API_EVENT_MODIFIED] = "MODIFIED",
		[API_EVENT_DELETED] = "DELETED",
		[API_EVENT_BOOKMARK] = "BOOKMARK",
		[API_EVENT_ERROR] = "ERROR",
	};
	_cleanup_(json_tokener_freep) json_tokener *tok = NULL;
	_cleanup_(json_object_putp) struct json_object *root = NULL;
	struct json_object *type = NULL, *obj = NULL, *code = NULL;
	struct api_event e = { .namespace = "" };
	size_t i;

	if (len > API_EVENT_MAX_BYTES || len > 0x7fffffff)
		return bad(err, "too large");
	if (memchr(line, '\0', len))
		return bad(err, "NUL byte");
	tok = json_tokener_new_ex(EVENT_MAX_DEPTH);
	if (!tok)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	/* Strict: anything after the object but whitespace is an error too. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, line, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "watch event: malformed JSON: %s",
				   json_tokener_get_error(tok) == json_tokener_continue
					   ? "unexpected end"
					   : json_tokener_error_desc(json_tokener_get_error(tok)));
	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "type", &type) ||
	    !json_object_is_type(type, json_type_string))
		return bad(err, "no type");
	for (i = 0; i < ARRAY_SIZE(types); i++)
		if (strcmp(json_object_get_string(type), types[i]) == 0)
			break;
	if (i == ARRAY_SIZE(types))
		return bad(err, "unknown type");
	e.type = (enum api_event_type)i;
	if (!json_object_object_get_ex(root, "object", &obj) || !json_object_is_type(obj, json_type_object))
		return bad(err, "no object");
	if (e.type == API_EVENT_ERROR) {
		int64_t c;

		if (!json_object_object_get_ex(obj, "code", &code) || !json_object_is_type(code, json_type_int))
			return bad(err, "an ERROR without a Status code");
		c = json_object_get_int64(code);
		if (c < 0 || c > 999)
			return bad(err, "an ERROR whose code is not an HTTP status");
		e.code = (long)c;
	} else {
		e.resource_version = meta_str(obj, "resourceVersion");
		if (!e.resource_version || !*e.resource_version)
			return bad(err, "an object without metadata.resourceVersion (or one holding a NUL)");
		if (e.type != API_EVENT_BOOKMARK) {
			const char *ns = meta_str(obj, "namespace");

			e.name = meta_str(obj, "name");
			if (!e.name || !*e.name)
				return bad(err, "an object without metadata.name (or one holding a NUL)");
			if (!ns && meta_is_str(obj, "namespace"))
				return bad(err, "an object whose metadata.namespace holds a NUL");
			e.namespace = ns ? ns : "";
		}
	}
	e.object = json_object_get(obj);
	*ret = e;
	return 0;
}

void api_event_clear(struct api_event *e)
{
	if (!e)
		return;
	json_object_put(e->object);
	*e = (struct api_event){ 0 };
}

int api_object_key(struct json_object *o, char *buf, size_t size)
{
	const char *ns = meta_str(o, "namespace"), *name = meta_str(o, "name");
	int n;

	if (!name || !*name)
		return -EINVAL;
	n = snprintf(buf, size, "%s/%s", ns ? ns : "", name);
	return n < 0 || (size_t)n >= size ? -EINVAL : 0;
}
