/* Strict JSON reading with typed, key-naming getters (json-c stays behind this) */
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

/**
 * cjson_get() - member of an object, matching the key exactly first and then
 *               case-insensitively, as Go's encoding/json does; JSON null counts as absent
 * @obj: object (NULL or a non-object gives NULL)
 * @key: member name
 *
 * Return: the member, NULL when absent.
 */
struct json_object *cjson_get(struct json_object *obj, const char *key);

/**
 * cjson_member() - member of an object by its exact name, when of one type
 * @o: object (NULL or a non-object gives NULL)
 * @key: member name, matched exactly (Kubernetes objects, not Go-decoded configs)
 * @type: the type wanted
 *
 * Return: the member; NULL when absent, null or of another type.
 */
struct json_object *cjson_member(struct json_object *o, const char *key, enum json_type type);

/**
 * cjson_member_any() - member of an object by its exact name, of any type but null
 * @o: object (NULL or a non-object gives NULL)
 * @key: member name
 *
 * Return: the member; NULL when absent or null.
 */
struct json_object *cjson_member_any(struct json_object *o, const char *key);

/**
 * cjson_member_get() - cjson_member() that tells a wrong type from an absent member
 * @o: object (NULL or a non-object: absent)
 * @key: member name
 * @type: the type wanted
 * @ret: the member, NULL when absent or null; written always
 *
 * Return: 1 when present, 0 when absent or null, -EINVAL when of another type.
 */
int cjson_member_get(struct json_object *o, const char *key, enum json_type type,
		     struct json_object **ret);

/**
 * cjson_get_str() - string member
 * @obj: object
 * @key: member name
 * @ret: string owned by @obj, written only when present
 * @err: code 6 naming the key when the member is not a string
 *
 * Return: 1 when present, 0 when absent, negative errno on a wrong type.
 */
int cjson_get_str(struct json_object *obj, const char *key, const char **ret,
		  struct cni_err *err);

/**
 * cjson_get_bool() - boolean member
 * @obj: object
 * @key: member name
 * @ret: value, written only when present
 * @err: code 6 naming the key when the member is not a boolean
 *
 * Return: 1 when present, 0 when absent, negative errno on a wrong type.
 */
int cjson_get_bool(struct json_object *obj, const char *key, bool *ret, struct cni_err *err);

/**
 * cjson_get_int() - integer member within bounds
 * @obj: object
 * @key: member name
 * @min: lowest accepted value
 * @max: highest accepted value
 * @ret: value, written only when present and valid
 * @err: code 6 for a wrong type, 7 for a value out of range, naming the key
 *
 * Return: 1 when present, 0 when absent, negative errno on failure.
 */
int cjson_get_int(struct json_object *obj, const char *key, int64_t min, int64_t max,
		  int64_t *ret, struct cni_err *err);

/**
 * cjson_get_typed() - member of a given JSON type
 * @obj: object
 * @key: member name
 * @type: expected json-c type
 * @ret: member, written only when present
 * @err: code 6 naming the key on a wrong type
 *
 * Return: 1 when present, 0 when absent, negative errno on a wrong type.
 */
int cjson_get_typed(struct json_object *obj, const char *key, enum json_type type,
		    struct json_object **ret, struct cni_err *err);

/**
 * cjson_get_str_array() - array of strings, copied
 * @obj: object
 * @key: member name
 * @ret: malloc'ed array of malloc'ed strings, written only when present
 * @ret_n: number of entries
 * @err: code 6 naming the key on a wrong type
 *
 * Return: 1 when present, 0 when absent, negative errno on failure.
 */
int cjson_get_str_array(struct json_object *obj, const char *key, char ***ret, size_t *ret_n,
			struct cni_err *err);

/*
 * The getters above, for a member reached by a dotted path from @root
 * ("runtimeConfig.mac", each key matched as cjson_get() does); messages name
 * the whole path. A component that is absent makes the member absent (0); one
 * that is not an object is code 6 naming the path up to it.
 */
int cjson_path_get_str(struct json_object *root, const char *path, const char **ret,
		       struct cni_err *err);
int cjson_path_get_bool(struct json_object *root, const char *path, bool *ret,
			struct cni_err *err);
int cjson_path_get_int(struct json_object *root, const char *path, int64_t min, int64_t max,
		       int64_t *ret, struct cni_err *err);
int cjson_path_get_uint_text(struct json_object *root, const char *path, uint64_t max,
			     uint64_t *ret, struct cni_err *err);
int cjson_path_get_str_array(struct json_object *root, const char *path, char ***ret,
			     size_t *ret_n, struct cni_err *err);

/**
 * cjson_strv_free() - free an array from cjson_get_str_array()
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
