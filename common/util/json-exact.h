/* JSON members matched by their exact names: for what the Kubernetes API server sends (any API object) */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/util/json.h"

/*
 * The API server writes every key in its canonical case, and the reference reads
 * its objects case-sensitively; a name that differs in case is another member,
 * which a reader must not take for the real one (docs/layout.md, "JSON keys").
 */

/**
 * cjson_member_any() - member of an object by its exact name, of any type but null
 * @o: object (NULL or a non-object gives NULL)
 * @key: member name
 *
 * Return: the member; NULL when absent or null. A cjson_find_fn.
 */
struct json_object *cjson_member_any(struct json_object *o, const char *key);

/**
 * cjson_member() - member of an object by its exact name, when of one type
 * @o: object (NULL or a non-object gives NULL)
 * @key: member name
 * @type: the type wanted
 *
 * Return: the member; NULL when absent, null or of another type.
 */
struct json_object *cjson_member(struct json_object *o, const char *key, enum json_type type);

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

/* cjson_find_*() of common/util/json.h with cjson_member_any(): messages name @key or @path. */
int cjson_member_str(struct json_object *o, const char *key, const char **ret,
		     struct cni_err *err);
int cjson_member_bool(struct json_object *o, const char *key, bool *ret, struct cni_err *err);
int cjson_member_int(struct json_object *o, const char *key, int64_t min, int64_t max,
		     int64_t *ret, struct cni_err *err);
int cjson_member_typed(struct json_object *o, const char *key, enum json_type type,
		       struct json_object **ret, struct cni_err *err);
int cjson_member_path_str(struct json_object *root, const char *path, const char **ret,
			  struct cni_err *err);
