/* Reading a pool's spec, for the node pool file and the pools' objects alike: members, address spans, exclusions, per-node exclusions */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util/ipaddr.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/pool/ipmath.h"

struct cni_err;

/*
 * Every reader below records its failure with @where in front ("" or "<item>: ", as
 * "exclusions[2]: "): code 6 for a wrong JSON type, 7 for a value it refuses. The caller
 * adds the file and the pool. A message never holds a value it could not use.
 */

/* Inclusive spans of addresses (or of indexes). */
struct spec_span {
	ipmath_u128 lo;
	ipmath_u128 hi;
};

struct spec_spans {
	struct spec_span *v;
	size_t n;
	size_t cap;
};

/**
 * spec_spans_push() - add a span
 * @s: spans
 * @lo: first
 * @hi: last
 * @err: code 999 when out of memory
 *
 * Return: 0 on success, -ENOMEM.
 */
int spec_spans_push(struct spec_spans *s, ipmath_u128 lo, ipmath_u128 hi, struct cni_err *err);

/**
 * spec_spans_merge() - sort spans and merge those that overlap or touch
 * @s: spans
 */
void spec_spans_merge(struct spec_spans *s);

/**
 * spec_spans_find() - the span holding a value
 * @s: spans, merged
 * @x: value
 *
 * Return: the span, NULL when none holds @x.
 */
const struct spec_span *spec_spans_find(const struct spec_spans *s, ipmath_u128 x);

/**
 * spec_spans_free() - release spans and zero them
 * @s: spans
 */
void spec_spans_free(struct spec_spans *s);

/**
 * spec_read_str() - a string member
 * @find: the key rule: cjson_get for the node pool file, cjson_member_any for a pool object
 * @o: object
 * @where: "" or "<item>: ", in front of messages
 * @key: member name
 * @required: absent is refused ("missing")
 * @ret: the string (owned by @o), written when present
 * @err: the failure
 *
 * Return: 1 when present, 0 when absent, negative errno on failure.
 */
int spec_read_str(cjson_find_fn *find, struct json_object *o, const char *where, const char *key,
		  bool required, const char **ret, struct cni_err *err);

/**
 * spec_read_index() - a non-negative integer member, required
 * @find: as spec_read_str()
 * @o: object
 * @where: as spec_read_str()
 * @key: member name
 * @ret: the value
 * @err: the failure
 *
 * Return: 1, or negative errno on failure.
 */
int spec_read_index(cjson_find_fn *find, struct json_object *o, const char *where, const char *key,
		    int64_t *ret, struct cni_err *err);

/**
 * spec_read_addr() - an address member, of the family of @within and inside it
 * @find: as spec_read_str()
 * @o: object
 * @where: as spec_read_str()
 * @key: member name
 * @required: absent is refused; otherwise absent and "" are reported as absent
 * @within: the prefix it must lie in
 * @within_what: what @within is, for messages ("subnet", "cidr", "prefix")
 * @ret: the address, written when present
 * @err: the failure
 *
 * Return: 1 when present, 0 when absent, negative errno on failure.
 */
int spec_read_addr(cjson_find_fn *find, struct json_object *o, const char *where, const char *key,
		   bool required, const struct ip_prefix *within, const char *within_what,
		   struct ip_addr *ret, struct cni_err *err);

/**
 * spec_read_prefix() - a CIDR member, required
 * @find: as spec_read_str()
 * @o: object
 * @where: as spec_read_str()
 * @key: member name
 * @ret: the prefix
 * @err: the failure
 *
 * Return: 1, or negative errno on failure.
 */
int spec_read_prefix(cjson_find_fn *find, struct json_object *o, const char *where, const char *key,
		     struct ip_prefix *ret, struct cni_err *err);

/**
 * spec_read_objects() - an array member whose elements are all objects
 * @find: as spec_read_str()
 * @o: object
 * @key: member name
 * @ret: the array, NULL when absent
 * @err: the failure
 *
 * Return: 1 when present, 0 when absent, negative errno on failure.
 */
int spec_read_objects(cjson_find_fn *find, struct json_object *o, const char *key,
		      struct json_object **ret, struct cni_err *err);

/**
 * spec_read_exclusions() - "exclusions": [{"startIP", "endIP"}], inclusive
 * @find: as spec_read_str()
 * @o: the spec (or the node pool file's entry)
 * @within: the network every address must lie in
 * @within_what: what @within is, for messages
 * @clip: NULL to keep each range whole; else ranges are cut to it and those outside it
 *        dropped
 * @out: spans the ranges are added to
 * @err: the failure
 *
 * Return: 0 on success, negative errno on failure.
 */
int spec_read_exclusions(cjson_find_fn *find, struct json_object *o, const struct ip_prefix *within,
			 const char *within_what, const struct spec_span *clip,
			 struct spec_spans *out, struct cni_err *err);

/**
 * spec_read_per_node() - "perNodeExclusions": [{"startIndex", "endIndex"}], inclusive
 *                        indexes counted from a node's block or prefix
 * @find: as spec_read_str()
 * @o: the spec (or the node pool file's entry)
 * @base: what index 0 is (0 for offsets, the block's first address for addresses)
 * @last_index: the highest index inside the node's block or prefix
 * @what: that block or prefix, for messages ("block 10.0.0.1-10.0.0.24")
 * @out: spans the ranges are added to, as @base + index
 * @err: the failure
 *
 * Return: 0 on success, negative errno on failure.
 */
int spec_read_per_node(cjson_find_fn *find, struct json_object *o, ipmath_u128 base,
		       ipmath_u128 last_index, const char *what, struct spec_spans *out,
		       struct cni_err *err);
