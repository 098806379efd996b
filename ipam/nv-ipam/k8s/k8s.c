/* Kubernetes objects as kubectl prints them: lists of pools, nodes and pods */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/json-exact.h"
#include "common/util/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/k8s/k8s.h"

DEFINE_CLEANUP_FUNC(json_tokener_freep, json_tokener *, json_tokener_free);

/* Appends to an array whose capacity is the next power of two of its length. */
static int push(void ***v, size_t *n, void *x)
{
	if ((*n & (*n - 1)) == 0) {
		void **nv = realloc(*v, (*n ? *n * 2 : 1) * sizeof(**v));

		if (!nv)
			return -ENOMEM;
		*v = nv;
	}
	(*v)[(*n)++] = x;
	return 0;
}

/* The objects of one document: a List's items, an array's elements or the object itself. */
static int add_document(struct k8s_objects *o, struct json_object *doc, const char *origin,
			struct cni_err *err)
{
	struct json_object *items = doc;
	size_t n;

	if (json_object_is_type(doc, json_type_object)) {
		items = cjson_member_any(doc, "items");
		if (!items) {
			if (push((void ***)&o->items, &o->n_items, doc) < 0)
				return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			return 0;
		}
	}
	if (!json_object_is_type(items, json_type_array))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "%s: expected a List, an array or an object, got %s", origin,
				   cjson_type_name(items));
	n = json_object_array_length(items);
	for (size_t i = 0; i < n; i++) {
		struct json_object *it = json_object_array_get_idx(items, i);

		if (!json_object_is_type(it, json_type_object))
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					   "%s: item %zu: expected an object, got %s", origin, i,
					   cjson_type_name(it));
		if (push((void ***)&o->items, &o->n_items, it) < 0)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	return 0;
}

int k8s_objects_parse(const char *buf, size_t len, const char *origin, struct k8s_objects *ret,
		      struct cni_err *err)
{
	_cleanup_(json_tokener_freep) json_tokener *tok = NULL;
	struct k8s_objects o = { 0 };
	size_t pos = 0;
	int r = 0;

	if (memchr(buf, '\0', len))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s: NUL byte in input", origin);
	tok = json_tokener_new_ex(CNI_JSON_MAX_DEPTH);
	if (!tok)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	/* Several documents may follow each other (kubectl prints one per get). */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
				    JSON_TOKENER_VALIDATE_UTF8);
	for (;;) {
		struct json_object *doc;
		enum json_tokener_error jerr;
		size_t chunk;

		while (pos < len && strchr(" \t\r\n", buf[pos]))
			pos++;
		if (pos == len)
			break;
		/* json-c takes an int length: feed at most INT_MAX bytes per call. */
		chunk = len - pos > 0x7fffffff ? 0x7fffffff : len - pos;
		json_tokener_reset(tok);
		doc = json_tokener_parse_ex(tok, buf + pos, (int)chunk);
		jerr = json_tokener_get_error(tok);
		if (!doc || jerr != json_tokener_success) {
			json_object_put(doc);
			/* YAML (kubectl's default for -o yaml) is the usual mistake: say what is read. */
			r = cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s: malformed JSON at offset %zu: %s%s",
					origin, pos + json_tokener_get_parse_end(tok),
					jerr == json_tokener_continue ? "unexpected end of input"
								      : json_tokener_error_desc(jerr),
					buf[pos] != '{' && buf[pos] != '['
						? " (this reads JSON, as `kubectl get ippools,cidrpools -o json` "
						  "prints it)"
						: "");
			goto fail;
		}
		pos += json_tokener_get_parse_end(tok);
		if (push((void ***)&o.roots, &o.n_roots, doc) < 0) {
			json_object_put(doc);
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			goto fail;
		}
		r = add_document(&o, doc, origin, err);
		if (r < 0)
			goto fail;
	}
	if (o.n_roots == 0)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s: empty input", origin);
	*ret = o;
	return 0;
fail:
	k8s_objects_free(&o);
	return r;
}

int k8s_objects_read(const char *path, struct k8s_objects *ret, struct cni_err *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r;

	if (strcmp(path, "-") == 0)
		r = file_read_fd(STDIN_FILENO, K8S_INPUT_MAX_BYTES, &buf, &len);
	else
		r = file_read(path, K8S_INPUT_MAX_BYTES, &buf, &len);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read %s: %s",
				   strcmp(path, "-") == 0 ? "stdin" : path,
				   r == -EFBIG ? "too large"
				   : r == -EINVAL ? "not a regular file" : strerror(-r));
	return k8s_objects_parse(buf, len, strcmp(path, "-") == 0 ? "stdin" : path, ret, err);
}

void k8s_objects_free(struct k8s_objects *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n_roots; i++)
		json_object_put(o->roots[i]);
	free(o->roots);
	free(o->items);
	*o = (struct k8s_objects){ 0 };
}

struct json_object *k8s_object_member(struct json_object *item, const char *outer,
				      const char *inner)
{
	struct json_object *v = cjson_member_any(item, outer);

	return inner ? cjson_member_any(v, inner) : v;
}

/* A string holding a NUL is none: C would read a shorter name than the object's. */
static const char *string_or_null(struct json_object *v)
{
	if (!json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return NULL;
	return json_object_get_string(v);
}

const char *k8s_object_name(struct json_object *item)
{
	const char *name = string_or_null(k8s_object_member(item, "metadata", "name"));

	return name ? name : string_or_null(k8s_object_member(item, "name", NULL));
}

const char *k8s_object_kind(struct json_object *item)
{
	const char *kind = string_or_null(k8s_object_member(item, "kind", NULL));

	if (kind)
		return kind;
	if (k8s_object_member(item, "spec", "subnet"))
		return "IPPool";
	if (k8s_object_member(item, "spec", "cidr"))
		return "CIDRPool";
	return "";
}

int k8s_json_add(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

int k8s_json_add_str(struct json_object *o, const char *key, const char *s)
{
	return k8s_json_add(o, key, json_object_new_string(s));
}

const char *k8s_quote(const char *s, char *buf, size_t size)
{
	size_t n = strlen(s), cut = n > 40 ? 40 : n, len;

	len = text_escape(s, cut, buf, size - 3);
	if (cut < n)
		memcpy(buf + len, "...", 4);
	return buf;
}

void k8s_fput_escaped(FILE *out, const char *s)
{
	size_t n = strlen(s);
	/* An escape is at most four characters for one byte ("\xNN"). */
	_cleanup_free_ char *buf = malloc(4 * n + 1);

	if (!buf) {
		fputs("(out of memory)", out);
		return;
	}
	text_escape(s, n, buf, 4 * n + 1);
	fputs(buf, out);
}
