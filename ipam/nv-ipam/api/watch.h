/* A watch's stream: newline-delimited JSON events, each checked before it is used */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/text.h"

struct cni_err;
struct json_object;

/* One event carries one object; Kubernetes objects stay below 1.5 MiB in etcd. */
#define API_EVENT_MAX_BYTES (16u << 20)

enum api_event_type {
	API_EVENT_ADDED,
	API_EVENT_MODIFIED,
	API_EVENT_DELETED,
	API_EVENT_BOOKMARK, /* only a newer resourceVersion: nothing changed */
	API_EVENT_ERROR,    /* the watch ends: its object is a Status */
};

struct api_event {
	enum api_event_type type;
	struct json_object *object;   /* owned; the Status for ERROR */
	const char *namespace;        /* metadata.namespace, "" for cluster objects (not ERROR) */
	const char *name;             /* metadata.name (not BOOKMARK, not ERROR) */
	const char *resource_version; /* metadata.resourceVersion (not ERROR) */
	long code;                    /* ERROR: Status.code (410 when the version is gone), else 0 */
};

/* Bytes cut into lines, as they arrive in pieces. */
struct api_lines {
	struct text_buf buf; /* the unfinished line */
	size_t max;          /* longest line accepted */
};

/**
 * api_lines_feed() - the next bytes of a stream: each complete line goes to @on_line
 * @l: the splitter ({ .max = API_EVENT_MAX_BYTES } to start)
 * @data: bytes
 * @len: their number
 * @on_line: called with each line, without its '\n' (empty lines are skipped); returns 0,
 *           or a negative errno that stops the feeding with it
 * @ctx: for @on_line
 *
 * Return: 0 on success, -E2BIG for a line longer than @l->max, -ENOMEM, @on_line's error.
 */
int api_lines_feed(struct api_lines *l, const char *data, size_t len,
		   int (*on_line)(void *ctx, const char *line, size_t len), void *ctx);

/**
 * api_lines_pending() - whether part of a line is waiting for its end
 * @l: the splitter
 *
 * Return: true when the stream stopped in the middle of a line (an event was cut).
 */
bool api_lines_pending(const struct api_lines *l);

/**
 * api_lines_free() - release a splitter's buffer and empty it
 * @l: the splitter
 */
void api_lines_free(struct api_lines *l);

/**
 * api_event_parse() - one line of a watch
 * @line: {"type": ..., "object": {...}} (need not be NUL-terminated)
 * @len: its length
 * @ret: the event, written only on success; release with api_event_clear()
 * @err: code 6 saying what is wrong: malformed JSON, an unknown type, an object without
 *       metadata.name or metadata.resourceVersion, an ERROR without a Status code
 *
 * Return: 0 on success, negative errno on failure.
 */
int api_event_parse(const char *line, size_t len, struct api_event *ret, struct cni_err *err);

/**
 * api_event_clear() - release an event's object and zero it
 * @e: event
 */
void api_event_clear(struct api_event *e);

/**
 * api_object_key() - "namespace/name" of an object, as a watch cache keys it
 * @o: object
 * @buf: output
 * @size: its size
 *
 * Return: 0, or -EINVAL when the object has no metadata.name or the key does not fit.
 */
int api_object_key(struct json_object *o, char *buf, size_t size);
