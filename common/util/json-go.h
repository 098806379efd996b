/* JSON members matched as Go's encoding/json matches them: for what a user writes (network configs, the node pool file) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util/json.h"

/*
 * The reference reads these sources with Go's encoding/json, which takes a member
 * whose name differs from the field's in case alone: a network config's "Master" is
 * its "master" there, and so here. Never for what the Kubernetes API server sends
 * (common/util/json-exact.h; tests/house/layers.py refuses this header there).
 */

/**
 * cjson_get() - member of an object, matching the key as Go's encoding/json does:
 *               ignoring ASCII case (and U+212A as 'k', U+017F as 's'), the last
 *               member that matches winning; JSON null counts as absent
 * @obj: object (NULL or a non-object gives NULL)
 * @key: member name, ASCII
 *
 * Return: the member, NULL when absent. A cjson_find_fn.
 */
struct json_object *cjson_get(struct json_object *obj, const char *key);

/* cjson_find_*() of common/util/json.h with cjson_get(): messages name @key or @path. */
int cjson_get_str(struct json_object *obj, const char *key, const char **ret,
		  struct cni_err *err);
int cjson_get_bool(struct json_object *obj, const char *key, bool *ret, struct cni_err *err);
int cjson_get_int(struct json_object *obj, const char *key, int64_t min, int64_t max,
		  int64_t *ret, struct cni_err *err);
int cjson_get_typed(struct json_object *obj, const char *key, enum json_type type,
		    struct json_object **ret, struct cni_err *err);
int cjson_get_str_array(struct json_object *obj, const char *key, char ***ret, size_t *ret_n,
			struct cni_err *err);
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
