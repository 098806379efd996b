/* A deep copy of a result: what a chained plugin passes on from prevResult */
#pragma once

struct cni_result;

/**
 * cni_result_copy() - copy a result with everything it owns
 * @src: result to copy
 * @ret: the copy, written only on success; release with cni_result_free()
 *
 * Return: 0 on success, -ENOMEM.
 */
int cni_result_copy(const struct cni_result *src, struct cni_result *ret);
