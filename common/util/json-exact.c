/* JSON members matched by their exact names: for what the Kubernetes API server sends (any API object) */
#include <errno.h>

#include "common/util/json-exact.h"

struct json_object *cjson_member_any(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
	    json_object_is_type(v, json_type_null))
		return NULL;
	return v;
}

struct json_object *cjson_member(struct json_object *o, const char *key, enum json_type type)
{
	struct json_object *v = cjson_member_any(o, key);

	return json_object_is_type(v, type) ? v : NULL;
}

int cjson_member_get(struct json_object *o, const char *key, enum json_type type,
		     struct json_object **ret)
{
	*ret = cjson_member_any(o, key);
	if (!*ret)
		return 0;
	if (!json_object_is_type(*ret, type)) {
		*ret = NULL;
		return -EINVAL;
	}
	return 1;
}


int cjson_member_str(struct json_object *o, const char *key, const char **ret,
		     struct cni_err *err)
{
	return cjson_find_str(cjson_member_any, o, key, ret, err);
}

int cjson_member_bool(struct json_object *o, const char *key, bool *ret, struct cni_err *err)
{
	return cjson_find_bool(cjson_member_any, o, key, ret, err);
}

int cjson_member_int(struct json_object *o, const char *key, int64_t min, int64_t max,
		     int64_t *ret, struct cni_err *err)
{
	return cjson_find_int(cjson_member_any, o, key, min, max, ret, err);
}

int cjson_member_typed(struct json_object *o, const char *key, enum json_type type,
		       struct json_object **ret, struct cni_err *err)
{
	return cjson_find_typed(cjson_member_any, o, key, type, ret, err);
}

int cjson_member_path_str(struct json_object *root, const char *path, const char **ret,
			  struct cni_err *err)
{
	return cjson_find_path_str(cjson_member_any, root, path, ret, err);
}
