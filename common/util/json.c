/* Strict JSON parsing, and typed member reads under a key rule given (json-c stays behind this) */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json.h"

DEFINE_CLEANUP_FUNC(json_tokener_freep, json_tokener *, json_tokener_free);

/* Members of every object in a parsed tree (depth is bounded by the tokener). */
static size_t tree_members(struct json_object *o)
{
	size_t n = 0;

	if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			n += tree_members(json_object_array_get_idx(o, i));
	} else if (json_object_is_type(o, json_type_object)) {
		struct json_object_iterator it = json_object_iter_begin(o);
		struct json_object_iterator end = json_object_iter_end(o);

		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
			n += 1 + tree_members(json_object_iter_peek_value(&it));
	}
	return n;
}

/*
 * Members written in text the tokener accepted: one ':' outside strings each. A member name
 * holding "\u0000" is counted in @ret_nul_keys: json-c keeps names as C strings, cut there.
 */
static size_t text_members(const char *buf, size_t len, size_t *ret_nul_keys)
{
	bool in_string = false, nul = false;
	size_t n = 0;

	*ret_nul_keys = 0;
	for (size_t i = 0; i < len; i++) {
		if (in_string) {
			if (buf[i] == '\\') {
				nul |= i + 5 < len && strncmp(buf + i + 1, "u0000", 5) == 0;
				i++;
			} else if (buf[i] == '"') {
				in_string = false;
			}
		} else if (buf[i] == '"') {
			in_string = true;
			nul = false;
		} else if (buf[i] == ':') {
			/* The string just before a ':' is its member's name. */
			n++;
			*ret_nul_keys += nul;
		}
	}
	return n;
}

/* "offset N (line L, column C)": an editor finds the line, a byte count finds the rest. */
static void where_at(const char *buf, size_t off, char *out, size_t size)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(out, size, "offset %zu (line %zu, column %zu)", off, line, col);
}

int cjson_parse(const char *buf, size_t len, const char *what, struct json_object **ret,
		struct cni_err *err)
{
	char at[80];
	_cleanup_(json_tokener_freep) json_tokener *tok = NULL;
	struct json_object *o;
	enum json_tokener_error jerr;
	size_t used, nul_keys;

	if (len > CNI_JSON_MAX_BYTES)
		return cni_err_set(err, CNI_ERR_DECODE, -E2BIG, "error unmarshall %s: larger than %u bytes",
				   what, CNI_JSON_MAX_BYTES);
	if (len == 0)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "error unmarshall %s: empty input", what);
	if (memchr(buf, '\0', len))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "error unmarshall %s: NUL byte in input",
				   what);
	tok = json_tokener_new_ex(CNI_JSON_MAX_DEPTH);
	if (!tok)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!o || jerr != json_tokener_success) {
		json_object_put(o);
		if (jerr == json_tokener_continue)
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					   "error unmarshall %s: unexpected end of JSON input", what);
		where_at(buf, json_tokener_get_parse_end(tok), at, sizeof(at));
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "error unmarshall %s: %s at %s", what,
				   json_tokener_error_desc(jerr), at);
	}
	used = json_tokener_get_parse_end(tok);
	while (used < len && strchr(" \t\r\n", buf[used]))
		used++;
	if (used != len) {
		json_object_put(o);
		where_at(buf, used, at, sizeof(at));
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "error unmarshall %s: invalid character after top-level value at %s", what, at);
	}
	/*
	 * json-c keeps one member per key, at the first one's place with the last
	 * one's value, so the order a key given twice was written in is lost, and
	 * with it what Go's decoder (last one wins) would read: refused.
	 */
	if (text_members(buf, len, &nul_keys) != tree_members(o)) {
		json_object_put(o);
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "error unmarshall %s: a key appears twice in one object", what);
	}
	/* Cut at its NUL, a name would pass for another (a sysctl key set as a shorter one). */
	if (nul_keys) {
		json_object_put(o);
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s: a key holds a NUL character (\\u0000)", what);
	}
	*ret = o;
	return 0;
}

/* The names Go's encoding/json gives JSON types in its errors. */
static const char *const type_names[] = {
	[json_type_null] = "null",     [json_type_boolean] = "boolean", [json_type_double] = "number",
	[json_type_int] = "number",    [json_type_object] = "object",   [json_type_array] = "array",
	[json_type_string] = "string",
};

const char *cjson_type_name(struct json_object *o)
{
	enum json_type t = json_object_get_type(o);

	if ((size_t)t >= ARRAY_SIZE(type_names) || !type_names[t])
		return "unknown";
	return type_names[t];
}

static int wrong_type(struct cni_err *err, const char *key, const char *want, struct json_object *v)
{
	return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "field \"%s\": expected %s, got %s", key, want,
			   cjson_type_name(v));
}

/*
 * json-c saturates a number below INT64_MIN (reporting ERANGE) and keeps one
 * above INT64_MAX as a uint64, which json_object_get_int64() clamps silently.
 * Return: false when the number does not fit an int64_t.
 */
static bool int_value(struct json_object *v, int64_t *ret)
{
	errno = 0;
	*ret = json_object_get_int64(v);
	return errno != ERANGE &&
	       !(*ret == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX);
}

/*
 * The getters read @key of @obj and name @label in their messages: the key
 * itself, or the dotted path it was reached by.
 */
static int get_typed(cjson_find_fn *find, struct json_object *obj, const char *key,
		     const char *label, enum json_type type, struct json_object **ret, struct cni_err *err)
{
	struct json_object *v = find(obj, key);

	if (!v)
		return 0;
	if (!json_object_is_type(v, type))
		return wrong_type(err, label, json_type_to_name(type), v);
	*ret = v;
	return 1;
}

static int get_str(cjson_find_fn *find, struct json_object *obj, const char *key,
		   const char *label, const char **ret, struct cni_err *err)
{
	struct json_object *v = find(obj, key);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return wrong_type(err, label, "a string", v);
	/* "\u0000" would cut the C string short and pass checks it should fail. */
	if (strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "field \"%s\": NUL character in string",
				   label);
	*ret = json_object_get_string(v);
	return 1;
}

static int get_bool(cjson_find_fn *find, struct json_object *obj, const char *key,
		    const char *label, bool *ret, struct cni_err *err)
{
	struct json_object *v = find(obj, key);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return wrong_type(err, label, "a boolean", v);
	*ret = json_object_get_boolean(v);
	return 1;
}

static int get_int(cjson_find_fn *find, struct json_object *obj, const char *key,
		   const char *label, int64_t min, int64_t max, int64_t *ret, struct cni_err *err)
{
	struct json_object *v = find(obj, key);
	int64_t x;

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return wrong_type(err, label, "an integer", v);
	if (!int_value(v, &x) || x < min || x > max)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ERANGE,
				   "field \"%s\": %s out of range [%lld, %lld]", label,
				   json_object_get_string(v), (long long)min, (long long)max);
	*ret = x;
	return 1;
}

static int get_uint_text(cjson_find_fn *find, struct json_object *obj, const char *key,
			 const char *label, uint64_t max, uint64_t *ret, struct cni_err *err)
{
	struct json_object *v = find(obj, key);
	const char *text, *digits;
	uint64_t x = 0;
	int64_t n;
	int base;

	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_int)) {
		if (!int_value(v, &n) || n < 0 || (uint64_t)n > max)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ERANGE,
					   "field \"%s\": %s out of range [0, %llu]", label,
					   json_object_get_string(v), (unsigned long long)max);
		*ret = (uint64_t)n;
		return 1;
	}
	if (!json_object_is_type(v, json_type_string))
		return wrong_type(err, label, "an integer or a string", v);
	text = json_object_get_string(v);
	if (strlen(text) != (size_t)json_object_get_string_len(v))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "field \"%s\": NUL character in string",
				   label);
	base = strncasecmp(text, "0x", 2) == 0 ? 16 : 10;
	digits = base == 16 ? text + 2 : text;
	if (!*digits)
		goto bad;
	for (const char *p = digits; *p; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned int)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (unsigned int)(*p - 'a' + 10);
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = (unsigned int)(*p - 'A' + 10);
		else
			goto bad;
		if (d > max || x > (max - d) / (uint64_t)base)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ERANGE,
					   "field \"%s\": \"%.32s\" out of range [0, %llu]", label, text,
					   (unsigned long long)max);
		x = x * (uint64_t)base + d;
	}
	*ret = x;
	return 1;
bad:
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
			   "field \"%s\": \"%.32s\" is not a decimal or 0x-prefixed hex number", label,
			   text);
}

void cjson_strv_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static int get_str_array(cjson_find_fn *find, struct json_object *obj, const char *key,
			 const char *label, char ***ret, size_t *ret_n, struct cni_err *err)
{
	struct json_object *arr = NULL;
	char **v;
	size_t n;
	int r;

	r = get_typed(find, obj, key, label, json_type_array, &arr, err);
	if (r <= 0)
		return r;
	n = json_object_array_length(arr);
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		if (!json_object_is_type(e, json_type_string) ||
		    strlen(json_object_get_string(e)) != (size_t)json_object_get_string_len(e)) {
			cjson_strv_free(v, i);
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					   "field \"%s[%zu]\": expected a string without NUL, got %s", label,
					   i, cjson_type_name(e));
		}
		v[i] = strdup(json_object_get_string(e));
		if (!v[i]) {
			cjson_strv_free(v, i);
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		}
	}
	*ret = v;
	*ret_n = n;
	return 1;
}

int cjson_find_typed(cjson_find_fn *find, struct json_object *obj, const char *key,
		     enum json_type type, struct json_object **ret, struct cni_err *err)
{
	return get_typed(find, obj, key, key, type, ret, err);
}

int cjson_find_str(cjson_find_fn *find, struct json_object *obj, const char *key,
		   const char **ret, struct cni_err *err)
{
	return get_str(find, obj, key, key, ret, err);
}

int cjson_find_bool(cjson_find_fn *find, struct json_object *obj, const char *key, bool *ret,
		    struct cni_err *err)
{
	return get_bool(find, obj, key, key, ret, err);
}

int cjson_find_int(cjson_find_fn *find, struct json_object *obj, const char *key, int64_t min,
		   int64_t max, int64_t *ret, struct cni_err *err)
{
	return get_int(find, obj, key, key, min, max, ret, err);
}

int cjson_find_str_array(cjson_find_fn *find, struct json_object *obj, const char *key,
			 char ***ret, size_t *ret_n, struct cni_err *err)
{
	return get_str_array(find, obj, key, key, ret, ret_n, err);
}

/*
 * Walks all but the last component of a dotted path from @root. Return: 1 with
 * the parent object and the last component, 0 when a component is absent, a
 * negative errno when one is not an object.
 */
static int walk(cjson_find_fn *find, struct json_object *root, const char *path,
		struct json_object **ret_parent, const char **ret_key, struct cni_err *err)
{
	struct json_object *o = root;
	const char *p = path;
	const char *dot;

	while ((dot = strchr(p, '.'))) {
		char key[64];
		struct json_object *next;

		snprintf(key, sizeof(key), "%.*s", (int)(dot - p), p);
		next = find(o, key);
		if (!next)
			return 0;
		if (!json_object_is_type(next, json_type_object))
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					   "field \"%.*s\": expected an object, got %s", (int)(dot - path),
					   path, cjson_type_name(next));
		o = next;
		p = dot + 1;
	}
	*ret_parent = o;
	*ret_key = p;
	return 1;
}

int cjson_find_path_str(cjson_find_fn *find, struct json_object *root, const char *path,
			const char **ret, struct cni_err *err)
{
	struct json_object *parent = NULL;
	const char *key = NULL;
	int r = walk(find, root, path, &parent, &key, err);

	return r <= 0 ? r : get_str(find, parent, key, path, ret, err);
}

int cjson_find_path_bool(cjson_find_fn *find, struct json_object *root, const char *path,
			 bool *ret, struct cni_err *err)
{
	struct json_object *parent = NULL;
	const char *key = NULL;
	int r = walk(find, root, path, &parent, &key, err);

	return r <= 0 ? r : get_bool(find, parent, key, path, ret, err);
}

int cjson_find_path_int(cjson_find_fn *find, struct json_object *root, const char *path,
			int64_t min, int64_t max, int64_t *ret, struct cni_err *err)
{
	struct json_object *parent = NULL;
	const char *key = NULL;
	int r = walk(find, root, path, &parent, &key, err);

	return r <= 0 ? r : get_int(find, parent, key, path, min, max, ret, err);
}

int cjson_find_path_uint_text(cjson_find_fn *find, struct json_object *root, const char *path,
			      uint64_t max, uint64_t *ret, struct cni_err *err)
{
	struct json_object *parent = NULL;
	const char *key = NULL;
	int r = walk(find, root, path, &parent, &key, err);

	return r <= 0 ? r : get_uint_text(find, parent, key, path, max, ret, err);
}

int cjson_find_path_str_array(cjson_find_fn *find, struct json_object *root, const char *path,
			      char ***ret, size_t *ret_n, struct cni_err *err)
{
	struct json_object *parent = NULL;
	const char *key = NULL;
	int r = walk(find, root, path, &parent, &key, err);

	return r <= 0 ? r : get_str_array(find, parent, key, path, ret, ret_n, err);
}
