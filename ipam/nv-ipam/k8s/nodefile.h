/* A node's pool file from the pools' status */
#pragma once

struct cni_err;
struct k8s_objects;

/**
 * nodefile_render() - the text of a node's pool file
 * @objs: IPPool and CIDRPool objects with the status the nv-ipam controller wrote
 * @node: the node's name
 * @ret: malloc'ed text (pretty JSON, a newline at the end), written only on success
 * @err: code 7 for an object that is neither an IPPool nor a CIDRPool
 *
 * Pools without an entry for @node are left out; so are, with a warning on stderr, a
 * pool without a name, one listed twice, and one nv-ipam's loader would refuse: what
 * comes out always loads (nvipam_pools_parse()).
 *
 * Return: 0 on success, negative errno on failure.
 */
int nodefile_render(const struct k8s_objects *objs, const char *node, char **ret,
		    struct cni_err *err);
