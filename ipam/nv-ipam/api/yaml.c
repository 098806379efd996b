/* A YAML document as a json-c tree, for kubeconfig files */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <json-c/json.h>
#include <yaml.h>

#include "common/util/error.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/api/yaml.h"

#define YAML_MAX_DEPTH 64

struct frame {
	struct json_object *node; /* an object or an array */
	char *key;                /* an object's key waiting for its value */
};

struct builder {
	struct frame stack[YAML_MAX_DEPTH];
	size_t depth;
	struct json_object *root;
	const char *origin;
	struct cni_err *err;
};

static int fail(struct builder *b, const yaml_event_t *ev, const char *why)
{
	return cni_err_set(b->err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%s: line %zu: %s", b->origin,
			   (size_t)ev->start_mark.line + 1, why);
}

static struct json_object *scalar_value(const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;

	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag) {
		if (n == 0 || (n == 1 && v[0] == '~') || strcmp(v, "null") == 0 ||
		    strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0)
			return NULL;
		if (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 || strcmp(v, "TRUE") == 0)
			return json_object_new_boolean(1);
		if (strcmp(v, "false") == 0 || strcmp(v, "False") == 0 || strcmp(v, "FALSE") == 0)
			return json_object_new_boolean(0);
	}
	return json_object_new_string_len(v, (int)n);
}

/* Puts @v (owned) where the innermost container expects a value. */
static int place(struct builder *b, const yaml_event_t *ev, struct json_object *v)
{
	struct frame *f;

	if (b->depth == 0) {
		b->root = v;
		return 0;
	}
	f = &b->stack[b->depth - 1];
	if (json_object_is_type(f->node, json_type_array)) {
		if (json_object_array_add(f->node, v) < 0) {
			json_object_put(v);
			return cni_err_set(b->err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		}
		return 0;
	}
	if (!f->key) {
		/* A key: only strings are keys here. */
		if (!json_object_is_type(v, json_type_string)) {
			json_object_put(v);
			return fail(b, ev, "a mapping key that is not a string");
		}
		f->key = strdup(json_object_get_string(v));
		json_object_put(v);
		if (!f->key)
			return cni_err_set(b->err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		if (json_object_object_get_ex(f->node, f->key, NULL))
			return fail(b, ev, "a key given twice in one mapping");
		return 0;
	}
	if (json_object_object_add(f->node, f->key, v) < 0) {
		json_object_put(v);
		return cni_err_set(b->err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	free(f->key);
	f->key = NULL;
	return 0;
}

static int push(struct builder *b, const yaml_event_t *ev, struct json_object *node)
{
	int r;

	if (!node)
		return cni_err_set(b->err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (b->depth == YAML_MAX_DEPTH) {
		json_object_put(node);
		return fail(b, ev, "nested too deeply");
	}
	/* Placed first (the parent owns it), then entered. */
	r = place(b, ev, json_object_get(node));
	if (r < 0) {
		json_object_put(node);
		return r;
	}
	b->stack[b->depth++] = (struct frame){ .node = node };
	return 0;
}

static void pop(struct builder *b)
{
	struct frame *f = &b->stack[--b->depth];

	free(f->key);
	json_object_put(f->node);
}

static int on_event(struct builder *b, const yaml_event_t *ev, bool *ret_done)
{
	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_START_EVENT:
	case YAML_NO_EVENT:
		return 0;
	case YAML_DOCUMENT_END_EVENT:
	case YAML_STREAM_END_EVENT:
		*ret_done = true;
		return 0;
	case YAML_ALIAS_EVENT:
		return fail(b, ev, "aliases are not supported");
	case YAML_SCALAR_EVENT: {
		struct json_object *v = scalar_value(ev);

		if (!v && b->depth > 0 &&
		    json_object_is_type(b->stack[b->depth - 1].node, json_type_object) &&
		    !b->stack[b->depth - 1].key)
			return fail(b, ev, "a null mapping key");
		return place(b, ev, v);
	}
	case YAML_SEQUENCE_START_EVENT:
		return push(b, ev, json_object_new_array());
	case YAML_MAPPING_START_EVENT:
		return push(b, ev, json_object_new_object());
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		pop(b);
		return 0;
	}
	return fail(b, ev, "unexpected YAML event");
}

int api_yaml_parse(const char *buf, size_t len, const char *origin, struct json_object **ret,
		   struct cni_err *err)
{
	struct builder b = { .origin = origin, .err = err };
	yaml_parser_t parser;
	yaml_event_t ev;
	bool done = false, second = false;
	int r = 0;

	if (memchr(buf, '\0', len))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%s: NUL byte in the file",
				   origin);
	if (!yaml_parser_initialize(&parser))
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done && r >= 0) {
		if (!yaml_parser_parse(&parser, &ev)) {
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%s: line %zu: %s", origin,
					(size_t)parser.problem_mark.line + 1,
					parser.problem ? parser.problem : "invalid YAML");
			break;
		}
		r = on_event(&b, &ev, &done);
		yaml_event_delete(&ev);
	}
	/* Whatever follows the first document must be nothing but the end of the stream. */
	while (r >= 0 && !second) {
		if (!yaml_parser_parse(&parser, &ev)) {
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%s: line %zu: %s", origin,
					(size_t)parser.problem_mark.line + 1,
					parser.problem ? parser.problem : "invalid YAML");
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT)
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					"%s: more than one YAML document", origin);
		second = ev.type == YAML_STREAM_END_EVENT || ev.type == YAML_NO_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	while (b.depth > 0)
		pop(&b);
	if (r < 0) {
		json_object_put(b.root);
		return r;
	}
	*ret = b.root;
	return 0;
}
