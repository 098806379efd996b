/*
 * libFuzzer target: what ipam-node reads from the API server: a watch's stream (lines cut
 * from pieces as they arrive, each an event) and a List read as a stream; the same bytes
 * cut into other pieces must give the same result, and a List the reader takes must be
 * JSON that json-c takes whole, with as many items
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/error.h"
#include "ipam/nv-ipam/api/watch.h"
#include "ipam/nv-ipam/k8s/liststream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_line(void *ctx, const char *line, size_t len)
{
	struct api_event e = { 0 };
	struct cni_err err = { 0 };
	size_t *n = ctx;

	if (api_event_parse(line, len, &e, &err) < 0) {
		if (!err.msg[0] || e.object)
			abort();
		return 0;
	}
	if (!e.object || e.type > API_EVENT_ERROR)
		abort();
	if (e.type == API_EVENT_ERROR ? e.code > 999 : !e.resource_version || !*e.resource_version)
		abort();
	if ((e.type == API_EVENT_ADDED || e.type == API_EVENT_MODIFIED || e.type == API_EVENT_DELETED) &&
	    (!e.name || !*e.name || !e.namespace))
		abort();
	api_event_clear(&e);
	(*n)++;
	return 0;
}

/* The stream cut at @cut and at every byte give the same events. */
static void watch_stream(const uint8_t *data, size_t size, size_t cut)
{
	struct api_lines a = { .max = 4096 }, b = { .max = 4096 };
	size_t na = 0, nb = 0;
	int ra, rb = 0;

	ra = api_lines_feed(&a, (const char *)data, cut, on_line, &na);
	if (ra == 0)
		ra = api_lines_feed(&a, (const char *)data + cut, size - cut, on_line, &na);
	for (size_t i = 0; rb == 0 && i < size; i++)
		rb = api_lines_feed(&b, (const char *)data + i, 1, on_line, &nb);
	if (ra != rb || na != nb || (ra == 0 && api_lines_pending(&a) != api_lines_pending(&b)))
		abort();
	api_lines_free(&a);
	api_lines_free(&b);
}

static int on_item(void *ctx, struct json_object *item, size_t index, struct cni_err *err)
{
	size_t *n = ctx;

	(void)err;
	if (!json_object_is_type(item, json_type_object) || index != *n)
		abort();
	(*n)++;
	return 0;
}

static int read_list(const uint8_t *data, size_t size, size_t piece, size_t *ret_n, bool *ret_list)
{
	struct liststream *ls = NULL;
	struct cni_err err = { 0 };
	int r = 0;

	*ret_n = 0;
	if (liststream_new("fuzz", on_item, ret_n, &ls) < 0)
		abort();
	for (size_t i = 0; r == 0 && i < size; i += piece)
		r = liststream_feed(ls, (const char *)data + i, size - i < piece ? size - i : piece, &err);
	if (r == 0)
		r = liststream_end(ls, &err);
	if (r < 0 && !err.msg[0])
		abort();
	*ret_list = liststream_is_list(ls);
	liststream_free(ls);
	return r;
}

static void list_stream(const uint8_t *data, size_t size)
{
	size_t n1, n2;
	bool list1, list2;
	int r1 = read_list(data, size, size ? size : 1, &n1, &list1);
	int r2 = read_list(data, size, 7, &n2, &list2);
	struct json_tokener *tok;
	struct json_object *whole, *items;

	if ((r1 < 0) != (r2 < 0) || (r1 == 0 && (n1 != n2 || list1 != list2)))
		abort();
	if (r1 < 0 || size > 0x7fffffff)
		return;
	/* Taken: json-c takes it whole too, with the same number of items. */
	tok = json_tokener_new_ex(128);
	if (!tok)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	whole = json_tokener_parse_ex(tok, (const char *)data, (int)size);
	if (!whole || json_tokener_get_error(tok) != json_tokener_success)
		abort();
	items = list1 ? json_object_object_get(whole, "items") : whole;
	if (items && (size_t)json_object_array_length(items) != n1)
		abort();
	if (!items && n1)
		abort();
	json_object_put(whole);
	json_tokener_free(tok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	watch_stream(data, size, size ? data[0] % (size + 1) : 0);
	list_stream(data, size);
	return 0;
}
