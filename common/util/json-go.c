/* JSON members matched as Go's encoding/json matches them: for what a user writes (network configs, the node pool file) */
#include <ctype.h>
#include <stdbool.h>

#include "common/util/json-go.h"

/*
 * Whether a member name matches a field name as Go's encoding/json matches
 * them: ignoring case, where the Kelvin sign (U+212A) is a 'k' and the long s
 * (U+017F) an 's'. @name is ASCII.
 */
static bool go_fold_equal(const char *key, const char *name)
{
	const unsigned char *k = (const unsigned char *)key;

	for (const char *n = name; *n; n++) {
		char c = (char)tolower((unsigned char)*n);

		if (*k < 0x80 && tolower(*k) == c) {
			k++;
		} else if (c == 'k' && k[0] == 0xe2 && k[1] == 0x84 && k[2] == 0xaa) {
			k += 3;
		} else if (c == 's' && k[0] == 0xc5 && k[1] == 0xbf) {
			k += 2;
		} else {
			return false;
		}
	}
	return *k == '\0';
}

struct json_object *cjson_get(struct json_object *obj, const char *key)
{
	struct json_object_iterator it, end;
	struct json_object *v = NULL;

	if (!obj || !json_object_is_type(obj, json_type_object))
		return NULL;
	/*
	 * Go assigns every member that matches the field in the order they come, so
	 * the last one that matches is what it reads: {"master":"a","Master":"b"} is b.
	 */
	it = json_object_iter_begin(obj);
	end = json_object_iter_end(obj);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
		if (go_fold_equal(json_object_iter_peek_name(&it), key))
			v = json_object_iter_peek_value(&it);
	if (v && json_object_is_type(v, json_type_null))
		return NULL;
	return v;
}

int cjson_get_str(struct json_object *obj, const char *key, const char **ret,
		  struct cni_err *err)
{
	return cjson_find_str(cjson_get, obj, key, ret, err);
}

int cjson_get_bool(struct json_object *obj, const char *key, bool *ret, struct cni_err *err)
{
	return cjson_find_bool(cjson_get, obj, key, ret, err);
}

int cjson_get_int(struct json_object *obj, const char *key, int64_t min, int64_t max,
		  int64_t *ret, struct cni_err *err)
{
	return cjson_find_int(cjson_get, obj, key, min, max, ret, err);
}

int cjson_get_typed(struct json_object *obj, const char *key, enum json_type type,
		    struct json_object **ret, struct cni_err *err)
{
	return cjson_find_typed(cjson_get, obj, key, type, ret, err);
}

int cjson_get_str_array(struct json_object *obj, const char *key, char ***ret, size_t *ret_n,
			struct cni_err *err)
{
	return cjson_find_str_array(cjson_get, obj, key, ret, ret_n, err);
}

int cjson_path_get_str(struct json_object *root, const char *path, const char **ret,
		       struct cni_err *err)
{
	return cjson_find_path_str(cjson_get, root, path, ret, err);
}

int cjson_path_get_bool(struct json_object *root, const char *path, bool *ret,
			struct cni_err *err)
{
	return cjson_find_path_bool(cjson_get, root, path, ret, err);
}

int cjson_path_get_int(struct json_object *root, const char *path, int64_t min, int64_t max,
		       int64_t *ret, struct cni_err *err)
{
	return cjson_find_path_int(cjson_get, root, path, min, max, ret, err);
}

int cjson_path_get_uint_text(struct json_object *root, const char *path, uint64_t max,
			     uint64_t *ret, struct cni_err *err)
{
	return cjson_find_path_uint_text(cjson_get, root, path, max, ret, err);
}

int cjson_path_get_str_array(struct json_object *root, const char *path, char ***ret,
			     size_t *ret_n, struct cni_err *err)
{
	return cjson_find_path_str_array(cjson_get, root, path, ret, ret_n, err);
}
