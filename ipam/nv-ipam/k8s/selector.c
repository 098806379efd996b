/* Kubernetes NodeSelector: validating a pool's selector and matching nodes */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/error.h"
#include "common/util/json-exact.h"
#include "ipam/nv-ipam/k8s/selector.h"

/* A selector Kubernetes would refuse: the pool's spec is invalid (code 7). */
#define invalid(err, ...) cni_err_set((err), CNI_ERR_INVALID_CONFIG, -EINVAL, __VA_ARGS__)

enum op { OP_IN, OP_NOT_IN, OP_EXISTS, OP_DOES_NOT_EXIST, OP_GT, OP_LT, OP_INVALID };

/* A string holding a NUL, which C would read cut short ("In\u0000x" is no "In"). */
static bool has_nul(struct json_object *v)
{
	return strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v);
}

static enum op op_parse(struct json_object *req)
{
	static const char *const names[] = { "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt" };
	struct json_object *v = NULL;
	const char *s;

	if (!json_object_object_get_ex(req, "operator", &v) || !json_object_is_type(v, json_type_string) ||
	    has_nul(v))
		return OP_INVALID;
	s = json_object_get_string(v);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0)
			return (enum op)i;
	return OP_INVALID;
}

static bool parse_int(const char *s, long long *ret)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*ret = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0';
}

static int check_requirement(struct json_object *req, bool field, struct cni_err *err)
{
	struct json_object *key = cjson_member(req, "key", json_type_string);
	struct json_object *vals = NULL;
	enum op op = op_parse(req);
	size_t n = 0;
	long long x;

	if (!key || !*json_object_get_string(key))
		return invalid(err, "a requirement has no \"key\"");
	if (has_nul(key))
		return invalid(err, "a requirement's \"key\" contains a NUL character");
	if (op == OP_INVALID)
		return invalid(err, "key \"%s\": invalid operator",
				json_object_get_string(key));
	if (json_object_object_get_ex(req, "values", &vals) &&
	    !json_object_is_type(vals, json_type_null)) {
		if (!json_object_is_type(vals, json_type_array))
			return invalid(err, "key \"%s\": \"values\" must be an array",
					json_object_get_string(key));
		n = json_object_array_length(vals);
		for (size_t i = 0; i < n; i++)
			if (!json_object_is_type(json_object_array_get_idx(vals, i), json_type_string))
				return invalid(err, "key \"%s\": values must be strings",
						json_object_get_string(key));
			else if (has_nul(json_object_array_get_idx(vals, i)))
				return invalid(err, "key \"%s\": values[%zu] contains a NUL character",
						json_object_get_string(key), i);
	}
	if (field && (strcmp(json_object_get_string(key), "metadata.name") != 0 ||
		      (op != OP_IN && op != OP_NOT_IN) || n != 1))
		return invalid(err, "matchFields supports only \"metadata.name\" with In or "
				"NotIn and one value");
	switch (op) {
	case OP_IN:
	case OP_NOT_IN:
		if (n == 0)
			return invalid(err, "key \"%s\": In and NotIn need values",
					json_object_get_string(key));
		break;
	case OP_EXISTS:
	case OP_DOES_NOT_EXIST:
		if (n != 0)
			return invalid(err, "key \"%s\": Exists and DoesNotExist take no values",
					json_object_get_string(key));
		break;
	case OP_GT:
	case OP_LT:
		if (n != 1 || !parse_int(json_object_get_string(json_object_array_get_idx(vals, 0)), &x))
			return invalid(err, "key \"%s\": Gt and Lt need one integer value",
					json_object_get_string(key));
		break;
	case OP_INVALID:
		return -EINVAL;
	}
	return 0;
}

int selector_validate(struct json_object *sel, struct cni_err *err)
{
	struct json_object *terms;
	size_t n;

	if (!json_object_is_type(sel, json_type_object))
		return invalid(err, "nodeSelector must be an object");
	terms = cjson_member(sel, "nodeSelectorTerms", json_type_array);
	if (!terms)
		return invalid(err, "nodeSelector needs \"nodeSelectorTerms\"");
	n = json_object_array_length(terms);
	for (size_t i = 0; i < n; i++) {
		struct json_object *t = json_object_array_get_idx(terms, i);
		static const char *const lists[] = { "matchExpressions", "matchFields" };

		if (!json_object_is_type(t, json_type_object))
			return invalid(err, "nodeSelectorTerms[%zu] must be an object", i);
		for (size_t l = 0; l < 2; l++) {
			struct json_object *reqs = NULL;

			if (!json_object_object_get_ex(t, lists[l], &reqs) ||
			    json_object_is_type(reqs, json_type_null))
				continue;
			if (!json_object_is_type(reqs, json_type_array))
				return invalid(err, "nodeSelectorTerms[%zu].%s must be an array",
						i, lists[l]);
			for (size_t j = 0; j < json_object_array_length(reqs); j++) {
				int r = check_requirement(json_object_array_get_idx(reqs, j), l == 1, err);

				if (r < 0)
					return r;
			}
		}
	}
	return 0;
}

static bool in_values(struct json_object *vals, const char *v)
{
	for (size_t i = 0; vals && i < json_object_array_length(vals); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(vals, i)), v) == 0)
			return true;
	return false;
}

static bool requirement_match(struct json_object *req, const char *value)
{
	struct json_object *vals = cjson_member(req, "values", json_type_array);
	long long a, b;

	switch (op_parse(req)) {
	case OP_IN:
		return value && in_values(vals, value);
	case OP_NOT_IN:
		return !value || !in_values(vals, value);
	case OP_EXISTS:
		return value != NULL;
	case OP_DOES_NOT_EXIST:
		return value == NULL;
	case OP_GT:
	case OP_LT:
		if (!value || !parse_int(value, &a) ||
		    !parse_int(json_object_get_string(json_object_array_get_idx(vals, 0)), &b))
			return false;
		return op_parse(req) == OP_GT ? a > b : a < b;
	case OP_INVALID:
		break;
	}
	return false;
}

static bool term_match(struct json_object *t, const char *name, struct json_object *labels)
{
	struct json_object *exprs = cjson_member(t, "matchExpressions", json_type_array);
	struct json_object *fields = cjson_member(t, "matchFields", json_type_array);
	size_t ne = exprs ? json_object_array_length(exprs) : 0;
	size_t nf = fields ? json_object_array_length(fields) : 0;

	if (ne + nf == 0)
		return false;
	for (size_t i = 0; i < ne; i++) {
		struct json_object *req = json_object_array_get_idx(exprs, i);
		struct json_object *key = cjson_member(req, "key", json_type_string);
		struct json_object *v = cjson_member(labels, json_object_get_string(key), json_type_string);

		if (!requirement_match(req, v ? json_object_get_string(v) : NULL))
			return false;
	}
	for (size_t i = 0; i < nf; i++)
		if (!requirement_match(json_object_array_get_idx(fields, i), name))
			return false;
	return true;
}

bool selector_match(struct json_object *sel, const char *name, struct json_object *labels)
{
	struct json_object *terms = cjson_member(sel, "nodeSelectorTerms", json_type_array);

	if (!sel)
		return true;
	for (size_t i = 0; terms && i < json_object_array_length(terms); i++)
		if (term_match(json_object_array_get_idx(terms, i), name, labels))
			return true;
	return false;
}
