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
