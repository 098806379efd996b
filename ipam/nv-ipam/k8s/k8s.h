/* Kubernetes objects as kubectl prints them: lists of pools, nodes and pods */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

struct cni_err;

/* How the tool prints JSON for people and files: indented, "a/b" left as is. */
#define K8S_JSON_PRETTY                                                                            \
	(JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* kubectl output for a few thousand nodes runs to tens of MiB. */
#define K8S_INPUT_MAX_BYTES (256u << 20)

/* Every object found in one input, in input order; the JSON trees stay owned here. */
struct k8s_objects {
	struct json_object **roots;
	size_t n_roots;
	struct json_object **items; /* borrowed from roots */
	size_t n_items;
};

/**
 * k8s_objects_parse() - objects from one or more concatenated JSON documents
 * @buf: text (need not be NUL-terminated)
 * @len: its length
 * @origin: input name for messages
 * @ret: objects, written only on success; release with k8s_objects_free()
 * @err: code 6 naming @origin and the offset on malformed JSON
 *
 * Each document is a List ({"items": [...]}), an array of objects or one object.
 *
 * Return: 0 on success, negative errno on failure.
 */
int k8s_objects_parse(const char *buf, size_t len, const char *origin, struct k8s_objects *ret,
		      struct cni_err *err);

/**
 * k8s_objects_read() - k8s_objects_parse() on a file
 * @path: file, or "-" for stdin
 * @ret: objects, written only on success
 * @err: code 5 when unreadable, 6 when malformed
 *
 * Return: 0 on success, negative errno on failure.
 */
int k8s_objects_read(const char *path, struct k8s_objects *ret, struct cni_err *err);

/**
 * k8s_objects_free() - release objects and zero them
 * @o: objects
 */
void k8s_objects_free(struct k8s_objects *o);

/**
 * k8s_object_name() - metadata.name, or a top-level "name" for plain node lists
 * @item: object
 *
 * Return: the name, NULL when there is none.
 */
const char *k8s_object_name(struct json_object *item);

/**
 * k8s_object_kind() - "IPPool", "CIDRPool", "Node", ... (from "kind", else guessed
 *                     from the spec: "subnet" is an IPPool, "cidr" a CIDRPool)
 * @item: object
 *
 * Return: the kind, "" when unknown.
 */
const char *k8s_object_kind(struct json_object *item);

/**
 * k8s_object_member() - a member of a member ("spec", "subnet"), NULL when absent or null
 * @item: object
 * @outer: first key
 * @inner: second key, NULL for @outer itself
 *
 * Return: the member, NULL when absent.
 */
struct json_object *k8s_object_member(struct json_object *item, const char *outer,
				      const char *inner);

/**
 * k8s_json_add() - add a member, taking ownership of @v
 * @o: object
 * @key: member name
 * @v: value (NULL, from a failed json_object_new_*(), gives -ENOMEM)
 *
 * Return: 0 on success, -ENOMEM (then @v is released).
 */
int k8s_json_add(struct json_object *o, const char *key, struct json_object *v);

/**
 * k8s_json_add_str() - k8s_json_add() of a new string
 * @o: object
 * @key: member name
 * @s: string, copied
 *
 * Return: 0 on success, -ENOMEM.
 */
int k8s_json_add_str(struct json_object *o, const char *key, const char *s);

/* Room for k8s_quote()'s text: 40 bytes escaped, "..." and the NUL. */
#define K8S_QUOTE_SIZE (40 * 4 + 4)

/**
 * k8s_quote() - a string from the API escaped (text_escape()) and cut after 40 bytes,
 *               for a message quoting it
 * @s: string
 * @buf: output
 * @size: its size, K8S_QUOTE_SIZE
 *
 * Return: @buf.
 */
const char *k8s_quote(const char *s, char *buf, size_t size);

/**
 * k8s_fput_escaped() - print a string from the API (or the store) escaped as log lines
 *                      are (text_escape(): control characters and bytes that are not
 *                      UTF-8 as \xNN, the backslash doubled), so it cannot forge output
 * @out: stream
 * @s: string
 */
void k8s_fput_escaped(FILE *out, const char *s);
