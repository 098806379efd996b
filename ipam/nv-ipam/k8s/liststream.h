/* A Kubernetes List read as a stream: one item at a time, never the whole document in memory */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct cni_err;
struct json_object;
struct liststream;

/* One item, its members and strings included: a pod is a few KiB, a pool less. */
#define LISTSTREAM_ITEM_MAX_BYTES (16u << 20)
/* A member of the List other than "items" ("metadata", "kind"). */
#define LISTSTREAM_MEMBER_MAX_BYTES (1u << 20)

/**
 * liststream_new() - a reader of one JSON document: a List ({"kind", "metadata",
 *                    "items": [...]}, members in any order) or an array of items
 * @origin: the input's name, for messages ("stdin", a file, "GET /api/v1/pods")
 * @on_item: called with each item as soon as it is complete, in order; the item is only
 *           borrowed (json_object_get() keeps it); returns 0 to go on, or a negative errno
 *           (with @err filled) that stops the reading with it
 * @ctx: for @on_item
 * @ret: the reader, written only on success; release with liststream_free()
 *
 * Each item is parsed on its own with json-c's strict, UTF-8 validating tokener; the text
 * around the items is checked by the reader itself. Memory stays near the largest item.
 *
 * Return: 0 on success, -ENOMEM.
 */
int liststream_new(const char *origin,
		   int (*on_item)(void *ctx, struct json_object *item, size_t index,
				  struct cni_err *err),
		   void *ctx, struct liststream **ret);

/**
 * liststream_set_skim() - cut each item's text before it is parsed
 * @ls: reader, before it is fed
 * @skim: given an item's text: 1 with a shorter text to parse instead in *@ret (malloc'd),
 *        0 to parse it as it is, or -ENOMEM
 * @ctx: for @skim
 */
void liststream_set_skim(struct liststream *ls,
			 int (*skim)(void *ctx, const char *text, size_t len, char **ret,
				     size_t *ret_len),
			 void *ctx);

/**
 * liststream_feed() - the next bytes of the document
 * @ls: reader
 * @data: bytes (need not be NUL-terminated)
 * @len: their number
 * @err: code 6 naming the origin and the offset on malformed JSON, a NUL byte, an item
 *       that is not an object, an item or member larger than its limit, anything after
 *       the document; @on_item's error
 *
 * Return: 0 on success, negative errno on failure (the reader is then done).
 */
int liststream_feed(struct liststream *ls, const char *data, size_t len, struct cni_err *err);

/**
 * liststream_end() - the input ended
 * @ls: reader
 * @err: code 6 when the document is incomplete or there was none
 *
 * Return: 0 when a whole document was read, negative errno otherwise.
 */
int liststream_end(struct liststream *ls, struct cni_err *err);

/**
 * liststream_is_list() - whether the document was an object (a List) rather than an array
 * @ls: reader, after liststream_end()
 *
 * Return: true for an object.
 */
bool liststream_is_list(const struct liststream *ls);

/**
 * liststream_has_items() - whether the object had an "items" member (an array always has)
 * @ls: reader, after liststream_end()
 *
 * Return: true when it had.
 */
bool liststream_has_items(const struct liststream *ls);

/**
 * liststream_member() - a member of the List other than "items", as parsed
 * @ls: reader, after liststream_end()
 * @key: "kind", "apiVersion", "metadata"
 *
 * Return: the value (owned by @ls), NULL when absent.
 */
struct json_object *liststream_member(const struct liststream *ls, const char *key);

/**
 * liststream_string() - a string member of the List, or of its metadata
 * @ls: reader, after liststream_end()
 * @key: "kind", or "metadata.resourceVersion", "metadata.continue"
 *
 * Return: the string (owned by @ls), "" when absent or not a string.
 */
const char *liststream_string(const struct liststream *ls, const char *key);

/**
 * liststream_count() - how many items were read
 * @ls: reader
 *
 * Return: the count.
 */
size_t liststream_count(const struct liststream *ls);

/**
 * liststream_ctx() - the context given to liststream_new()
 * @ls: reader
 *
 * Return: the context.
 */
void *liststream_ctx(const struct liststream *ls);

/**
 * liststream_free() - release a reader (not its context)
 * @ls: reader (NULL does nothing)
 */
void liststream_free(struct liststream *ls);
