/* Strict JSON parsing, and typed member reads under a key rule given (json-c stays behind this) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"

struct cni_err;

/* Configs are small; anything larger than this is refused before parsing. */
#define CNI_JSON_MAX_BYTES (4u << 20)
#define CNI_JSON_MAX_DEPTH 64

DEFINE_CLEANUP_FUNC(json_object_putp, struct json_object *, json_object_put);

/**
 * cjson_parse() - parse one JSON value strictly, rejecting trailing garbage
 * @buf: text (need not be NUL-terminated)
 * @len: its length
 * @what: what is parsed, for the message ("network config")
 * @ret: parsed value, written only on success
 * @err: code 6 on failure
 *
 * Return: 0 on success, negative errno on failure.
 */
int cjson_parse(const char *buf, size_t len, const char *what, struct json_object **ret,
		struct cni_err *err);

/*
 * Which member a key names is a rule of the source the JSON came from (docs/layout.md,
 * "JSON keys"): common/util/json-go.h matches as Go's encoding/json does (a user's
 * config), common/util/json-exact.h exactly (what the Kubernetes API server sends). A
 * finder is one of the two; the reads below take it from the caller.
 */
typedef struct json_object *cjson_find_fn(struct json_object *obj, const char *key);

/**
 * cjson_find_str() - string member
 * @find: the key rule (cjson_get or cjson_member_any)
 * @obj: object
 * @key: member name
 * @ret: string owned by @obj, written only when present
 * @err: code 6 naming the key when the member is not a string or holds a NUL
 *
 * Return: 1 when present, 0 when absent (or null), negative errno on a wrong type.
 */
int cjson_find_str(cjson_find_fn *find, struct json_object *obj, const char *key,
		   const char **ret, struct cni_err *err);

/**
 * cjson_find_bool() - boolean member
 * @find: the key rule
 * @obj: object
 * @key: member name
 * @ret: value, written only when present
 * @err: code 6 naming the key when the member is not a boolean
 *
 * Return: 1 when present, 0 when absent, negative errno on a wrong type.
 */
int cjson_find_bool(cjson_find_fn *find, struct json_object *obj, const char *key, bool *ret,
		    struct cni_err *err);

/**
 * cjson_find_int() - integer member within bounds
 * @find: the key rule
 * @obj: object
 * @key: member name
 * @min: lowest accepted value
 * @max: highest accepted value
 * @ret: value, written only when present and valid
 * @err: code 6 for a wrong type, 7 for a value out of range, naming the key
 *
 * Return: 1 when present, 0 when absent, negative errno on failure.
 */
int cjson_find_int(cjson_find_fn *find, struct json_object *obj, const char *key, int64_t min,
		   int64_t max, int64_t *ret, struct cni_err *err);

/**
 * cjson_find_typed() - member of a given JSON type
 * @find: the key rule
 * @obj: object
 * @key: member name
 * @type: expected json-c type
 * @ret: member, written only when present
 * @err: code 6 naming the key on a wrong type
 *
 * Return: 1 when present, 0 when absent, negative errno on a wrong type.
 */
int cjson_find_typed(cjson_find_fn *find, struct json_object *obj, const char *key,
		     enum json_type type, struct json_object **ret, struct cni_err *err);

/**
 * cjson_find_str_array() - array of strings, copied
 * @find: the key rule
 * @obj: object
 * @key: member name
 * @ret: malloc'ed array of malloc'ed strings, written only when present
 * @ret_n: number of entries
 * @err: code 6 naming the key on a wrong type
 *
 * Return: 1 when present, 0 when absent, negative errno on failure.
 */
int cjson_find_str_array(cjson_find_fn *find, struct json_object *obj, const char *key,
			 char ***ret, size_t *ret_n, struct cni_err *err);

/*
 * The reads above, for a member reached by a dotted path from @root
 * ("runtimeConfig.mac", each key matched by @find); messages name the whole
 * path. A component that is absent makes the member absent (0); one that is not
 * an object is code 6 naming the path up to it. The _uint_text read takes an
 * integer or a decimal or 0x-prefixed string, up to @max.
 */
int cjson_find_path_str(cjson_find_fn *find, struct json_object *root, const char *path,
			const char **ret, struct cni_err *err);
int cjson_find_path_bool(cjson_find_fn *find, struct json_object *root, const char *path,
			 bool *ret, struct cni_err *err);
int cjson_find_path_int(cjson_find_fn *find, struct json_object *root, const char *path,
			int64_t min, int64_t max, int64_t *ret, struct cni_err *err);
int cjson_find_path_uint_text(cjson_find_fn *find, struct json_object *root, const char *path,
			      uint64_t max, uint64_t *ret, struct cni_err *err);
int cjson_find_path_str_array(cjson_find_fn *find, struct json_object *root, const char *path,
			      char ***ret, size_t *ret_n, struct cni_err *err);

/**
 * cjson_strv_free() - free an array from cjson_find_str_array() and its wrappers
 * @v: array
 * @n: number of entries
 */
void cjson_strv_free(char **v, size_t n);

/**
 * cjson_type_name() - JSON type name for messages
 * @o: value
 *
 * Return: "string", "number", ...
 */
const char *cjson_type_name(struct json_object *o);
