/* The webhook's look at the other pools: an overlap warned about, or refused with --reject-overlapping-pools */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct json_object;

/* At most this many other pools are named; the rest are counted. */
#define OVERLAP_HOOK_NAMED 5

/* The pools the controller mirrors now, for the webhook. */
struct admission_pools {
	struct json_object *const *objs; /* IPPools and CIDRPools of @ns */
	size_t n;
	const char *ns;                  /* --ippools-namespace: a pool elsewhere is not looked at */
	bool reject;                     /* --reject-overlapping-pools */
};

/**
 * overlap_hook_check() - a pool under review against the others
 * @obj: the pool (valid by the webhook's rules)
 * @pools: the others (the same kind and name as @obj is its old self: skipped); @obj
 *         is not looked at when its metadata.namespace is set and not @pools->ns (no
 *         node or controller uses such a pool)
 * @ret_warnings: a new array of strings when it overlaps and @pools->reject is false
 *                (the AdmissionReview response's warnings), else NULL
 * @ret_denial: malloc'ed message when it overlaps and @pools->reject is true, else NULL
 *
 * Return: 0, or -ENOMEM.
 */
int overlap_hook_check(struct json_object *obj, const struct admission_pools *pools,
		       struct json_object **ret_warnings, char **ret_denial);
