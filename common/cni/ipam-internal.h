/* What common/cni/ipam.c lets tests reach: the search of CNI_PATH */
#pragma once

struct cni_err;

/**
 * cni_ipam_find() - locate a plugin binary in a CNI_PATH list
 * @type: plugin name (no '/')
 * @path: ':'-separated directories
 * @ret: malloc'ed full path, written only on success
 * @err: code 7 for a bad name, 101 when not found
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_ipam_find(const char *type, const char *path, char **ret, struct cni_err *err);
