/* String maps of a network config ({"key": "value", ...}), copied out in their order */
#pragma once

#include <stddef.h>

struct cni_conf;
struct cni_err;

struct cni_conf_pair {
	char *key;
	char *value;
};

/**
 * cni_conf_get_str_map() - the object at a dotted path, as key/value strings in document order
 * @conf: config
 * @path: keys separated by '.', each matched as Go does (exact, then any case)
 * @ret: array to release with cni_conf_pairs_free(), written only when present
 * @ret_n: number of pairs
 * @err: code 6 naming the path and key for a value that is not a string (or a
 *       path that is not an object), 7 for a key or value holding a NUL
 *
 * A member given twice counts once, with its last value (json-c keeps one).
 *
 * Return: 1 when present, 0 when absent or null, negative errno on failure.
 */
int cni_conf_get_str_map(const struct cni_conf *conf, const char *path,
			 struct cni_conf_pair **ret, size_t *ret_n, struct cni_err *err);

/**
 * cni_conf_pairs_free() - release an array from cni_conf_get_str_map()
 * @p: array, may be NULL
 * @n: number of pairs
 */
void cni_conf_pairs_free(struct cni_conf_pair *p, size_t n);
