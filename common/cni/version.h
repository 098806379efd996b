/* CNI spec versions this suite speaks */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define CNI_VERSION_CURRENT "1.1.0"

extern const char *const cni_versions[];
extern const size_t cni_versions_count;

/**
 * cni_version_supported() - whether a version string is one of cni_versions
 * @v: version text
 *
 * Return: true when supported.
 */
bool cni_version_supported(const char *v);

/**
 * cni_version_cmp() - order two version strings of the form X.Y.Z
 * @a: first
 * @b: second
 *
 * Return: negative, 0 or positive as for strcmp.
 */
int cni_version_cmp(const char *a, const char *b);

/**
 * cni_version_list() - the supported versions as a JSON array text
 * @buf: output
 * @len: size of @buf
 *
 * Return: @buf.
 */
const char *cni_version_list(char *buf, size_t len);

struct cni_err;

/**
 * cni_version_check_families() - refuse more than one address of a family where a
 *                                version's result cannot hold them
 * @version: the config's cniVersion
 * @n_v4: the IPv4 addresses the result would hold
 * @n_v6: the IPv6 ones
 * @err: code 7 with the reference's message when refused
 *
 * A 0.1.0 or 0.2.0 result has one ip4 and one ip6 field.
 *
 * Return: 0, or -EINVAL with @err filled.
 */
int cni_version_check_families(const char *version, size_t n_v4, size_t n_v6, struct cni_err *err);
