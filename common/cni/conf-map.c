/* String maps of a network config ({"key": "value", ...}), copied out in their order */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/conf-map.h"
#include "common/cni/conf.h"
#include "common/util/error.h"
#include "common/util/json-go.h"
#include "common/util/json.h"

void cni_conf_pairs_free(struct cni_conf_pair *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++) {
		free(p[i].key);
		free(p[i].value);
	}
	free(p);
}

static int lookup(struct json_object *root, const char *path, struct json_object **ret,
		  struct cni_err *err)
{
	struct json_object *o = root;
	const char *p = path;

	for (;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		char key[64];

		if (len >= sizeof(key))
			return -EINVAL;
		memcpy(key, p, len);
		key[len] = '\0';
		o = cjson_get(o, key);
		if (!o)
			return 0;
		if (!json_object_is_type(o, json_type_object))
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					   "field \"%.*s\": expected an object, got %s",
					   (int)(p + len - path), path, cjson_type_name(o));
		if (!dot)
			break;
		p = dot + 1;
	}
	*ret = o;
	return 1;
}

int cni_conf_get_str_map(const struct cni_conf *conf, const char *path,
			 struct cni_conf_pair **ret, size_t *ret_n, struct cni_err *err)
{
	struct json_object_iterator it, end;
	struct json_object *obj = NULL;
	struct cni_conf_pair *v;
	size_t n = 0;
	int r;

	r = lookup(conf->root, path, &obj, err);
	if (r <= 0)
		return r;
	v = calloc((size_t)json_object_object_length(obj) + 1, sizeof(*v));
	if (!v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	it = json_object_iter_begin(obj);
	end = json_object_iter_end(obj);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *key = json_object_iter_peek_name(&it);
		struct json_object *val = json_object_iter_peek_value(&it);
		const char *s;

		if (!json_object_is_type(val, json_type_string)) {
			r = cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					"field \"%s\": member \"%.64s\": expected a string, got %s", path,
					key, cjson_type_name(val));
			goto fail;
		}
		s = json_object_get_string(val);
		/* The C strings stop at a NUL the JSON may carry (\u0000): refused, not cut. */
		if (strlen(s) != (size_t)json_object_get_string_len(val)) {
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					"field \"%s\": member \"%.64s\": value holds a NUL", path, key);
			goto fail;
		}
		v[n].key = strdup(key);
		v[n].value = strdup(s);
		n++;
		if (!v[n - 1].key || !v[n - 1].value) {
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			goto fail;
		}
	}
	*ret = v;
	*ret_n = n;
	return 1;
fail:
	cni_conf_pairs_free(v, n);
	return r;
}
