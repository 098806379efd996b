/* CNI_ARGS: "K=V;K=V" pairs */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct cni_err;

struct cni_arg {
	char *key;
	char *value;
};

struct cni_args {
	struct cni_arg *pairs;
	size_t n;
	bool ignore_unknown; /* IgnoreUnknown=1|true (any case), the last one given wins */
};

/**
 * cni_args_parse() - split CNI_ARGS into pairs
 * @s: CNI_ARGS text; empty pairs are skipped, a value may contain '='
 * @ret: pairs in order, written only on success
 * @err: code 4 for a pair without '=' or with an empty key
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_args_parse(const char *s, struct cni_args *ret, struct cni_err *err);

/**
 * cni_args_free() - release the pairs and zero @a
 * @a: parsed args
 */
void cni_args_free(struct cni_args *a);

/**
 * cni_args_get() - the value of a key (case-sensitive); a later duplicate wins
 * @a: parsed args
 * @key: key
 *
 * Return: the value, NULL when absent.
 */
const char *cni_args_get(const struct cni_args *a, const char *key);

/**
 * cni_args_check_known() - refuse keys outside a list unless IgnoreUnknown is set
 * @a: parsed args
 * @known: NULL-terminated list of accepted keys (IgnoreUnknown is always accepted)
 * @err: code 4 naming the unknown pairs
 *
 * Return: 0 when acceptable, -EINVAL otherwise.
 */
int cni_args_check_known(const struct cni_args *a, const char *const *known, struct cni_err *err);
