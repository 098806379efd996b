/* A node's pool file from the pools' status */
#pragma once

#include <stdio.h>

struct cni_err;
struct k8s_objects;

/**
 * nodefile_render() - the text of a node's pool file
 * @objs: IPPool and CIDRPool objects with the status the nv-ipam controller wrote
 * @node: the node's name
 * @ret: malloc'ed text (pretty JSON, a newline at the end), written only on success
 * @notes: a line for each pool left out, and why ("skipping pool \"p\": ..."), names escaped
 * @err: code 7 for an object that is neither an IPPool nor a CIDRPool
 *
 * Pools without an entry for @node are left out; so are, with a note, a pool without a
 * name, one listed twice, an entry the reference node refuses (carve_entry_check()) and
 * one nv-ipam's loader would refuse: what comes out always loads (nvipam_pools_parse()).
 *
 * Return: 0 on success, negative errno on failure.
 */
int nodefile_render(const struct k8s_objects *objs, const char *node, char **ret, FILE *notes,
		    struct cni_err *err);

/**
 * nodefile_changes() - a line per pool added, removed or changed between two pool files
 * @old_text: the old file, NULL when there was none
 * @old_len: its length
 * @new_text: the new file (NUL-terminated)
 * @out: where the lines go ("pool p: added (10.0.0.1-10.0.0.8)", "pool p: changed (a -> b)",
 *       "pool p: removed"); pool names escaped
 */
void nodefile_changes(const char *old_text, size_t old_len, const char *new_text, FILE *out);
