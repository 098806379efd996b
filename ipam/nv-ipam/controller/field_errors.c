/*
 * Field errors: a pool's broken fields in Kubernetes' words, the first few kept, in one message
 *
 * validate.c's rules find what is broken; this is how each finding is written: its path,
 * its kind, the offending value shown by its first bytes, the detail, and whether it is
 * kept or only counted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/text.h"
#include "ipam/nv-ipam/controller/field_errors.h"

static const char *const kind_text[] = {
	[VALIDATE_INVALID] = "Invalid value",
	[VALIDATE_REQUIRED] = "Required value",
	[VALIDATE_FORBIDDEN] = "Forbidden",
};

/*
 * The bytes of a string shown in an error, and of a value's text (escapes included); a
 * longer one is cut and ends in "...".
 */
#define VALUE_MAX 256
#define VALUE_TEXT_MAX (2 * VALUE_MAX)

/* The length of @s cut to at most @max bytes, not inside a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

/* A string as a JSON string: its first VALUE_MAX bytes, then "..." when it is longer. */
static void put_str(struct text_buf *b, const char *s, size_t len)
{
	char part[VALUE_MAX + 1];
	size_t n = utf8_cut(s, len, VALUE_MAX), i = 0;

	text_buf_putc(b, '"');
	while (i < n) {
		struct text_buf t = { 0 };
		size_t k = strnlen(s + i, n - i);

		memcpy(part, s + i, k);
		part[k] = '\0';
		text_buf_put_json_str(&t, part, TEXT_JSON_PLAIN);
		if (t.oom || t.len < 2)
			b->oom = true;
		else
			text_buf_add(b, t.data + 1, t.len - 2);
		text_buf_free(&t);
		i += k;
		/* An embedded NUL is shown, not taken for the string's end. */
		if (i < n) {
			text_buf_puts(b, "\\u0000");
			i++;
		}
	}
	text_buf_putc(b, '"');
	if (n < len)
		text_buf_puts(b, "...");
}

/*
 * A value as JSON text, as json-c writes it plainly, but only as far as @limit bytes of
 * output: a member holding a whole array of a 3 MiB object costs what is shown of it.
 */
static void put_json(struct text_buf *b, struct json_object *o, size_t limit)
{
	size_t i = 0;

	if (b->len >= limit)
		return;
	switch (json_object_get_type(o)) {
	case json_type_string:
		put_str(b, json_object_get_string(o), (size_t)json_object_get_string_len(o));
		return;
	case json_type_array:
		text_buf_putc(b, '[');
		for (i = 0; i < json_object_array_length(o) && b->len < limit; i++) {
			text_buf_puts(b, i ? "," : "");
			put_json(b, json_object_array_get_idx(o, i), limit);
		}
		text_buf_putc(b, ']');
		return;
	case json_type_object: {
		struct json_object_iterator it = json_object_iter_begin(o);
		struct json_object_iterator end = json_object_iter_end(o);

		text_buf_putc(b, '{');
		for (; !json_object_iter_equal(&it, &end) && b->len < limit; json_object_iter_next(&it)) {
			const char *key = json_object_iter_peek_name(&it);

			text_buf_puts(b, i++ ? "," : "");
			put_str(b, key, strlen(key));
			text_buf_putc(b, ':');
			put_json(b, json_object_iter_peek_value(&it), limit);
		}
		text_buf_putc(b, '}');
		return;
	}
	case json_type_null:
	case json_type_boolean:
	case json_type_double:
	case json_type_int:
		text_buf_puts(b, o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "null");
		return;
	}
}

/* @v as the text of a message, at most VALUE_TEXT_MAX bytes and "...". */
static void put_value(struct text_buf *b, const struct field_value *v)
{
	struct text_buf t = { 0 };
	size_t n;

	if (v->kind == VAL_STR)
		put_str(&t, v->s, strlen(v->s));
	else if (v->kind == VAL_JSON)
		put_json(&t, v->o, VALUE_TEXT_MAX);
	else
		text_buf_puts(&t, v->s);
	if (t.oom) {
		b->oom = true;
	} else {
		n = utf8_cut(t.data ? t.data : "", t.len, VALUE_TEXT_MAX);
		text_buf_add(b, t.data, n);
		if (n < t.len)
			text_buf_puts(b, "...");
	}
	text_buf_free(&t);
}

/* Whether another error would only be counted: what it names need not be written out. */
bool field_errors_full(const struct field_errors *c)
{
	return c->res->n == VALIDATE_ERRORS_KEPT;
}

/*
 * One field error. Past VALIDATE_ERRORS_KEPT it is only counted, before anything is
 * formatted: a flood of errors costs a counter each. A repeat of a kept one is dropped, as
 * Kubernetes' aggregate drops it.
 */
void field_errors_add(struct field_errors *c, enum validate_kind kind, const char *path,
		      struct field_value value, const char *fmt, ...)
{
	struct validate_result *res = c->res;
	struct text_buf b = { 0 };
	char detail[512];
	va_list ap;

	if (c->err)
		return;
	if (field_errors_full(c)) {
		res->more++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	text_buf_puts(&b, path);
	text_buf_puts(&b, ": ");
	text_buf_puts(&b, kind_text[kind]);
	text_buf_puts(&b, ": ");
	if (kind == VALIDATE_INVALID) {
		put_value(&b, &value);
		text_buf_puts(&b, ": ");
	}
	text_buf_puts(&b, detail);
	text_buf_putc(&b, '\0');
	if (b.oom) {
		text_buf_free(&b);
		c->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < res->n; i++)
		if (strcmp(res->errors[i], b.data) == 0) {
			text_buf_free(&b);
			return;
		}
	if (!res->errors && !(res->errors = calloc(VALIDATE_ERRORS_KEPT, sizeof(*res->errors)))) {
		text_buf_free(&b);
		c->err = -ENOMEM;
		return;
	}
	res->errors[res->n++] = b.data;
}

const char *field_name_text(const char *s, char buf[NAME_TEXT_SIZE])
{
	text_escape(s, strlen(s), buf, NAME_TEXT_SIZE);
	return buf;
}

/*
 * Paths are the code's keys and indexes: a cut one (never seen) still names the field's
 * start. Written by hand, not by snprintf(): a path is made for each of up to a hundred
 * thousand elements of an array, most never shown.
 */
static size_t path_put(char *out, size_t at, const char *s, size_t n)
{
	if (at + n > PATH_MAX_LEN - 1)
		n = PATH_MAX_LEN - 1 - at;
	memcpy(out + at, s, n);
	return at + n;
}

void field_path_child(char *out, const char *base, const char *key)
{
	size_t at = path_put(out, 0, base, strlen(base));

	at = path_put(out, at, ".", 1);
	out[path_put(out, at, key, strlen(key))] = '\0';
}

void field_path_index(char *out, const char *base, const char *key, size_t i)
{
	char num[24];
	size_t n = sizeof(num), at;

	num[--n] = ']';
	do
		num[--n] = (char)('0' + i % 10);
	while ((i /= 10) > 0);
	num[--n] = '[';
	field_path_child(out, base, key);
	at = strlen(out);
	out[path_put(out, at, num + n, sizeof(num) - n)] = '\0';
}

char *validate_message(const struct validate_result *res)
{
	struct text_buf b = { 0 };
	bool list = res->n > 1 || res->more;
	char more[64];

	text_buf_puts(&b, list ? "[" : "");
	for (size_t i = 0; i < res->n; i++) {
		text_buf_puts(&b, i ? ", " : "");
		text_buf_puts(&b, res->errors[i]);
	}
	if (res->more) {
		snprintf(more, sizeof(more), ", and %zu more error%s", res->more, res->more > 1 ? "s" : "");
		text_buf_puts(&b, more);
	}
	text_buf_puts(&b, list ? "]" : "");
	text_buf_putc(&b, '\0');
	if (b.oom) {
		text_buf_free(&b);
		return NULL;
	}
	return b.data;
}

void validate_result_free(struct validate_result *res)
{
	for (size_t i = 0; res && i < res->n; i++)
		free(res->errors[i]);
	if (res) {
		free(res->errors);
		*res = (struct validate_result){ 0 };
	}
}
