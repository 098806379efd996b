/*
 * A Kubernetes List read as a stream: one item at a time, never the whole document in memory
 *
 * The reader walks the document's outer layer byte by byte: the top object's keys, its
 * colons and commas, the "items" array's brackets and commas. Everything else (a key, a
 * member's value, an item) is cut out whole, by counting brackets outside strings, and
 * handed to json-c's strict tokener, which checks it completely. A listing of 100 MB of
 * pods thus costs the memory of its largest pod, not ten times its size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/k8s/liststream.h"

#define KEY_MAX_BYTES 1024
#define DEPTH_MAX 64

enum state {
	ST_START,       /* before the document */
	ST_KEY_FIRST,   /* after '{': a key or '}' */
	ST_KEY,         /* after ',' in the object: a key */
	ST_COLON,       /* after a key */
	ST_VALUE,       /* after ':' */
	ST_OBJ_NEXT,    /* after a member: ',' or '}' */
	ST_ITEM_FIRST,  /* after '[': an item or ']' */
	ST_ITEM,        /* after ',' in the array: an item */
	ST_ITEM_NEXT,   /* after an item: ',' or ']' */
	ST_CAPTURE,     /* inside a key, a member's value or an item */
	ST_DONE,        /* after the document */
	ST_FAILED,
};

enum capture { CAP_TOP, CAP_KEY, CAP_MEMBER, CAP_ITEM };

struct liststream {
	const char *origin;
	int (*on_item)(void *ctx, struct json_object *item, size_t index, struct cni_err *err);
	void *ctx;
	int (*skim)(void *ctx, const char *text, size_t len, char **ret, size_t *ret_len);
	void *skim_ctx;
	enum state st;
	bool is_list;
	bool has_items;
	bool in_items;       /* inside the object's "items" (not a top-level array) */
	size_t offset;       /* of the byte being read */
	size_t n_items;
	/* the value being cut out */
	enum capture cap;
	struct text_buf buf;
	size_t depth;
	bool in_string;
	bool escape;
	bool scalar;         /* a number, true, false or null: ends at the next delimiter */
	char *key;           /* the object's member whose value comes next */
	struct json_object *members; /* the List's members other than "items" */
	json_tokener *tok;
};

int liststream_new(const char *origin,
		   int (*on_item)(void *ctx, struct json_object *item, size_t index,
				  struct cni_err *err),
		   void *ctx, struct liststream **ret)
{
	struct liststream *ls = calloc(1, sizeof(*ls));

	if (!ls)
		return -ENOMEM;
	ls->origin = origin;
	ls->on_item = on_item;
	ls->ctx = ctx;
	ls->members = json_object_new_object();
	ls->tok = json_tokener_new_ex(DEPTH_MAX);
	if (!ls->members || !ls->tok) {
		liststream_free(ls);
		return -ENOMEM;
	}
	json_tokener_set_flags(ls->tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	*ret = ls;
	return 0;
}

void liststream_set_skim(struct liststream *ls,
			 int (*skim)(void *ctx, const char *text, size_t len, char **ret,
				     size_t *ret_len),
			 void *ctx)
{
	ls->skim = skim;
	ls->skim_ctx = ctx;
}

void liststream_free(struct liststream *ls)
{
	if (!ls)
		return;
	text_buf_free(&ls->buf);
	free(ls->key);
	json_object_put(ls->members);
	if (ls->tok)
		json_tokener_free(ls->tok);
	free(ls);
}

static int fail(struct liststream *ls, struct cni_err *err, const char *what)
{
	ls->st = ST_FAILED;
	return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s: malformed JSON at offset %zu: %s",
			   ls->origin, ls->offset, what);
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *type_of(char c)
{
	switch (c) {
	case '[':
		return "array";
	case '"':
		return "string";
	case 't':
	case 'f':
		return "boolean";
	case 'n':
		return "null";
	default:
		return "number";
	}
}

static int start_capture(struct liststream *ls, enum capture cap, char c, struct cni_err *err)
{
	ls->cap = cap;
	ls->buf.len = 0;
	ls->depth = 0;
	ls->in_string = c == '"';
	ls->escape = false;
	ls->scalar = false;
	if (c == '{' || c == '[')
		ls->depth = 1;
	else if (c != '"' && !strchr("-0123456789tfn", c))
		return fail(ls, err, "expected a value");
	else if (c != '"')
		ls->scalar = true;
	text_buf_putc(&ls->buf, c);
	ls->st = ST_CAPTURE;
	return 0;
}

/* The text cut out, parsed whole by the strict tokener (null gives NULL). */
static int parse_capture(struct liststream *ls, struct json_object **ret, struct cni_err *err)
{
	enum json_tokener_error jerr;
	struct json_object *o;
	size_t end;

	/* A number is complete only at a delimiter. */
	if (ls->scalar)
		text_buf_putc(&ls->buf, ' ');
	if (ls->buf.oom)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (ls->cap == CAP_ITEM && ls->skim) {
		char *cut = NULL;
		size_t cut_len = 0;
		int r = ls->skim(ls->skim_ctx, ls->buf.data, ls->buf.len, &cut, &cut_len);

		if (r < 0)
			return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
		/* What is parsed instead of the item: the buffer holds it until the next capture. */
		if (r > 0) {
			free(ls->buf.data);
			ls->buf = (struct text_buf){ .data = cut, .len = cut_len, .cap = cut_len };
		}
	}
	json_tokener_reset(ls->tok);
	o = json_tokener_parse_ex(ls->tok, ls->buf.data, (int)ls->buf.len);
	jerr = json_tokener_get_error(ls->tok);
	end = json_tokener_get_parse_end(ls->tok);
	while (end < ls->buf.len && is_ws(ls->buf.data[end]))
		end++;
	if (jerr != json_tokener_success || end != ls->buf.len) {
		json_object_put(o);
		return fail(ls, err, jerr == json_tokener_success ? "unexpected characters in a value"
				   : jerr == json_tokener_continue ? "a value ends early"
								   : json_tokener_error_desc(jerr));
	}
	*ret = o;
	return 0;
}

static int finish_capture(struct liststream *ls, struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *o = NULL;
	int r = parse_capture(ls, &o, err);

	if (r < 0)
		return r;
	switch (ls->cap) {
	case CAP_KEY:
		if (!json_object_is_type(o, json_type_string))
			return fail(ls, err, "a key is not a string");
		free(ls->key);
		ls->key = strdup(json_object_get_string(o));
		if (!ls->key)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		if ((strcmp(ls->key, "items") == 0 && ls->has_items) ||
		    json_object_object_get_ex(ls->members, ls->key, NULL))
			return fail(ls, err, "a key appears twice in the List");
		ls->st = ST_COLON;
		return 0;
	case CAP_MEMBER:
		if (strcmp(ls->key, "kind") == 0 || strcmp(ls->key, "apiVersion") == 0 ||
		    strcmp(ls->key, "metadata") == 0) {
			if (json_object_object_add(ls->members, ls->key, TAKE_PTR(o)) < 0)
				return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		}
		ls->st = ST_OBJ_NEXT;
		return 0;
	case CAP_TOP:
		/* It parsed, but a string or a number is no listing. */
		ls->st = ST_FAILED;
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "%s: expected a List, an array or an object, got %s", ls->origin,
				   type_of(ls->buf.data[0]));
	case CAP_ITEM:
		r = ls->on_item(ls->ctx, o, ls->n_items, err);
		if (r < 0) {
			ls->st = ST_FAILED;
			return r;
		}
		ls->n_items++;
		ls->st = ST_ITEM_NEXT;
		return 0;
	}
	return fail(ls, err, "internal error");
}

/* One byte inside a captured value; *@ret_again when it belongs to the next state. */
static int capture_byte(struct liststream *ls, char c, bool *ret_again, struct cni_err *err)
{
	size_t max = ls->cap == CAP_ITEM ? LISTSTREAM_ITEM_MAX_BYTES
		   : ls->cap == CAP_KEY ? KEY_MAX_BYTES : LISTSTREAM_MEMBER_MAX_BYTES;

	if (ls->scalar && (is_ws(c) || c == ',' || c == '}' || c == ']')) {
		*ret_again = true;
		return finish_capture(ls, err);
	}
	if (ls->buf.len >= max) {
		ls->st = ST_FAILED;
		return cni_err_set(err, CNI_ERR_DECODE, -EFBIG, "%s: %s %zu is larger than %zu bytes",
				   ls->origin, ls->cap == CAP_ITEM ? "item" : "a member before item",
				   ls->n_items, max);
	}
	text_buf_putc(&ls->buf, c);
	if (ls->in_string) {
		if (ls->escape)
			ls->escape = false;
		else if (c == '\\')
			ls->escape = true;
		else if (c == '"')
			ls->in_string = false;
		if (!ls->in_string && ls->depth == 0)
			return finish_capture(ls, err);
		return 0;
	}
	if (ls->scalar)
		return 0;
	if (c == '"') {
		ls->in_string = true;
	} else if (c == '{' || c == '[') {
		/* An item is cut before it is parsed (skim): what is too deep may be dropped. */
		if (++ls->depth > DEPTH_MAX && !(ls->cap == CAP_ITEM && ls->skim))
			return fail(ls, err, "nested too deeply");
	} else if (c == '}' || c == ']') {
		if (--ls->depth == 0)
			return finish_capture(ls, err);
	}
	return 0;
}

static int end_items(struct liststream *ls)
{
	ls->st = ls->in_items ? ST_OBJ_NEXT : ST_DONE;
	ls->in_items = false;
	return 0;
}

static int step(struct liststream *ls, char c, bool *ret_again, struct cni_err *err)
{
	char what[64];

	if (ls->st == ST_CAPTURE)
		return capture_byte(ls, c, ret_again, err);
	if (is_ws(c))
		return 0;
	switch (ls->st) {
	case ST_START:
		if (c == '{') {
			ls->is_list = true;
			ls->st = ST_KEY_FIRST;
			return 0;
		}
		if (c == '[') {
			ls->has_items = true;
			ls->st = ST_ITEM_FIRST;
			return 0;
		}
		return start_capture(ls, CAP_TOP, c, err);
	case ST_KEY_FIRST:
		if (c == '}') {
			ls->st = ST_DONE;
			return 0;
		}
		/* fall through */
	case ST_KEY:
		if (c != '"')
			return fail(ls, err, "expected a key");
		return start_capture(ls, CAP_KEY, c, err);
	case ST_COLON:
		if (c != ':')
			return fail(ls, err, "expected ':'");
		ls->st = ST_VALUE;
		return 0;
	case ST_VALUE:
		if (strcmp(ls->key, "items") != 0)
			return start_capture(ls, CAP_MEMBER, c, err);
		if (c != '[') {
			ls->st = ST_FAILED;
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					   "%s: expected a List, an array or an object, got %s", ls->origin,
					   type_of(c));
		}
		ls->has_items = true;
		ls->in_items = true;
		ls->st = ST_ITEM_FIRST;
		return 0;
	case ST_OBJ_NEXT:
		if (c == ',') {
			ls->st = ST_KEY;
			return 0;
		}
		if (c == '}') {
			ls->st = ST_DONE;
			return 0;
		}
		return fail(ls, err, "expected ',' or '}'");
	case ST_ITEM_FIRST:
		if (c == ']')
			return end_items(ls);
		/* fall through */
	case ST_ITEM:
		if (c == '{')
			return start_capture(ls, CAP_ITEM, c, err);
		if (c == ']')
			return fail(ls, err, "expected an item after ','");
		snprintf(what, sizeof(what), "%s", type_of(c));
		ls->st = ST_FAILED;
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s: item %zu: expected an object, got %s",
				   ls->origin, ls->n_items, what);
	case ST_ITEM_NEXT:
		if (c == ',') {
			ls->st = ST_ITEM;
			return 0;
		}
		if (c == ']')
			return end_items(ls);
		return fail(ls, err, "expected ',' or ']'");
	case ST_DONE:
		ls->st = ST_FAILED;
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "%s: more than one JSON document (at offset %zu)", ls->origin,
				   ls->offset);
	case ST_CAPTURE:
	case ST_FAILED:
		break;
	}
	return fail(ls, err, "the reading has failed");
}

int liststream_feed(struct liststream *ls, const char *data, size_t len, struct cni_err *err)
{
	for (size_t i = 0; i < len; i++, ls->offset++) {
		bool again = false;
		int r;

		if (ls->st == ST_FAILED)
			return fail(ls, err, "the reading has failed");
		if (data[i] == '\0') {
			ls->st = ST_FAILED;
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s: NUL byte in input",
					   ls->origin);
		}
		r = step(ls, data[i], &again, err);
		if (r < 0)
			return r;
		if (again) {
			r = step(ls, data[i], &again, err);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int liststream_end(struct liststream *ls, struct cni_err *err)
{
	/* A number, true, false or null at the top ends with the input. */
	if (ls->st == ST_CAPTURE && ls->scalar && ls->cap == CAP_TOP) {
		int r = finish_capture(ls, err);

		if (r < 0)
			return r;
	}
	if (ls->st == ST_DONE)
		return 0;
	if (ls->st == ST_START)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s: empty input", ls->origin);
	if (ls->st == ST_FAILED)
		return fail(ls, err, "the reading has failed");
	return fail(ls, err, "unexpected end of input");
}

bool liststream_is_list(const struct liststream *ls)
{
	return ls->is_list;
}

bool liststream_has_items(const struct liststream *ls)
{
	return ls->has_items;
}

struct json_object *liststream_member(const struct liststream *ls, const char *key)
{
	struct json_object *v = NULL;

	return json_object_object_get_ex(ls->members, key, &v) ? v : NULL;
}

const char *liststream_string(const struct liststream *ls, const char *key)
{
	struct json_object *v;
	const char *dot = strchr(key, '.');

	if (dot) {
		char outer[32];

		snprintf(outer, sizeof(outer), "%.*s", (int)(dot - key), key);
		v = liststream_member(ls, outer);
		if (!json_object_is_type(v, json_type_object) ||
		    !json_object_object_get_ex(v, dot + 1, &v))
			return "";
	} else {
		v = liststream_member(ls, key);
	}
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

size_t liststream_count(const struct liststream *ls)
{
	return ls->n_items;
}

void *liststream_ctx(const struct liststream *ls)
{
	return ls->ctx;
}
