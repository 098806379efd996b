/* Reading a pool's spec, for the node pool file and the pools' objects alike: members, address spans, exclusions, per-node exclusions */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/error.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/pool/spec.h"

/* A getter's failure (code 6 for a wrong type) with @where in front ("<item>: "). */
static int at_item(const char *where, int r, struct cni_err *err)
{
	if (*where)
		cni_err_prefix(err, r, "%.*s", (int)strlen(where) - 2, where);
	return r;
}

int spec_spans_push(struct spec_spans *s, ipmath_u128 lo, ipmath_u128 hi, struct cni_err *err)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		struct spec_span *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct spec_span){ .lo = lo, .hi = hi };
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct spec_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void spec_spans_merge(struct spec_spans *s)
{
	size_t out = 0;

	if (s->n == 0)
		return;
	qsort(s->v, s->n, sizeof(*s->v), span_cmp);
	for (size_t i = 1; i < s->n; i++) {
		/* Sorted, so v[i].lo >= v[out].lo; lo - 1 only wraps for lo == 0. */
		if (s->v[i].lo == 0 || s->v[i].lo - 1 <= s->v[out].hi) {
			if (s->v[i].hi > s->v[out].hi)
				s->v[out].hi = s->v[i].hi;
		} else {
			s->v[++out] = s->v[i];
		}
	}
	s->n = out + 1;
}

const struct spec_span *spec_spans_find(const struct spec_spans *s, ipmath_u128 x)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].hi < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo].lo <= x ? &s->v[lo] : NULL;
}

void spec_spans_free(struct spec_spans *s)
{
	free(s->v);
	*s = (struct spec_spans){ 0 };
}

int spec_read_str(cjson_find_fn *find, struct json_object *o, const char *where, const char *key,
		  bool required, const char **ret, struct cni_err *err)
{
	int r = cjson_find_str(find, o, key, ret, err);

	if (r < 0)
		return at_item(where, r, err);
	if (r == 0 && required)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%smissing \"%s\"", where, key);
	return r;
}

int spec_read_index(cjson_find_fn *find, struct json_object *o, const char *where, const char *key,
		    int64_t *ret, struct cni_err *err)
{
	/* Go's int: the node's block bounds it far below. */
	int r = cjson_find_int(find, o, key, 0, INT64_MAX, ret, err);

	if (r < 0)
		return at_item(where, r, err);
	if (r == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%smissing \"%s\"", where, key);
	return r;
}

int spec_read_addr(cjson_find_fn *find, struct json_object *o, const char *where, const char *key,
		   bool required, const struct ip_prefix *within, const char *within_what,
		   struct ip_addr *ret, struct cni_err *err)
{
	char pbuf[IP_PREFIX_STRLEN];
	struct ip_addr a;
	const char *s = NULL;
	int r;

	r = spec_read_str(find, o, where, key, required, &s, err);
	if (r <= 0)
		return r;
	if (!required && !*s)
		return 0;
	if (ip_addr_parse(s, &a) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%s\"%s\": not an IP address",
				   where, key);
	if (a.family != within->addr.family)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s\"%s\" %s and %s %s are of different address families", where, key,
				   s, within_what, ip_prefix_format(within, pbuf, sizeof(pbuf)));
	if (!ip_prefix_contains(within, &a))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%s\"%s\" %s is outside %s %s",
				   where, key, s, within_what, ip_prefix_format(within, pbuf, sizeof(pbuf)));
	*ret = a;
	return 1;
}

int spec_read_prefix(cjson_find_fn *find, struct json_object *o, const char *where, const char *key,
		     struct ip_prefix *ret, struct cni_err *err)
{
	const char *s = NULL;
	int r;

	r = spec_read_str(find, o, where, key, true, &s, err);
	if (r < 0)
		return r;
	if (ip_prefix_parse(s, ret) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%s\"%s\": not a CIDR", where,
				   key);
	return 1;
}

int spec_read_objects(cjson_find_fn *find, struct json_object *o, const char *key,
		      struct json_object **ret, struct cni_err *err)
{
	struct json_object *arr = NULL;
	int r;

	*ret = NULL;
	r = cjson_find_typed(find, o, key, json_type_array, &arr, err);
	if (r <= 0)
		return r;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		if (!json_object_is_type(e, json_type_object))
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s[%zu]: expected an object, got %s",
					   key, i, cjson_type_name(e));
	}
	*ret = arr;
	return 1;
}

int spec_read_exclusions(cjson_find_fn *find, struct json_object *o, const struct ip_prefix *within,
			 const char *within_what, const struct spec_span *clip,
			 struct spec_spans *out, struct cni_err *err)
{
	struct json_object *arr;
	int r;

	r = spec_read_objects(find, o, "exclusions", &arr, err);
	for (size_t i = 0; r > 0 && i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		char where[48], a[IP_PREFIX_STRLEN], b[IP_PREFIX_STRLEN];
		struct ip_addr start, end;
		ipmath_u128 lo, hi;

		snprintf(where, sizeof(where), "exclusions[%zu]: ", i);
		if ((r = spec_read_addr(find, e, where, "startIP", true, within, within_what, &start,
					err)) < 0 ||
		    (r = spec_read_addr(find, e, where, "endIP", true, within, within_what, &end,
					err)) < 0)
			return r;
		lo = ipmath_from_addr(&start);
		hi = ipmath_from_addr(&end);
		if (lo > hi)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "%s\"startIP\" %s is after \"endIP\" %s", where,
					   ip_addr_format(&start, a, sizeof(a)),
					   ip_addr_format(&end, b, sizeof(b)));
		if (clip) {
			if (hi < clip->lo || lo > clip->hi)
				continue;
			lo = lo < clip->lo ? clip->lo : lo;
			hi = hi > clip->hi ? clip->hi : hi;
		}
		r = spec_spans_push(out, lo, hi, err);
		r = r < 0 ? r : 1;
	}
	return r < 0 ? r : 0;
}

int spec_read_per_node(cjson_find_fn *find, struct json_object *o, ipmath_u128 base,
		       ipmath_u128 last_index, const char *what, struct spec_spans *out,
		       struct cni_err *err)
{
	struct json_object *arr;
	int r;

	r = spec_read_objects(find, o, "perNodeExclusions", &arr, err);
	for (size_t i = 0; r > 0 && i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		int64_t first = 0, last = 0;
		char where[48];

		snprintf(where, sizeof(where), "perNodeExclusions[%zu]: ", i);
		if ((r = spec_read_index(find, e, where, "startIndex", &first, err)) < 0 ||
		    (r = spec_read_index(find, e, where, "endIndex", &last, err)) < 0)
			return r;
		if (first > last)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "%s\"startIndex\" %lld is after \"endIndex\" %lld", where,
					   (long long)first, (long long)last);
		if ((ipmath_u128)last > last_index)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "%s\"endIndex\" %lld is outside the node's %s", where,
					   (long long)last, what);
		r = spec_spans_push(out, base + (ipmath_u128)first, base + (ipmath_u128)last, err);
		r = r < 0 ? r : 1;
	}
	return r < 0 ? r : 0;
}
