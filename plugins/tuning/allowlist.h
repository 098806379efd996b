/* tuning: the node's sysctl allowlist (/etc/cni/tuning/allowlist.conf), as upstream reads it */
#pragma once

#include <stddef.h>

struct cni_conf_pair;
struct cni_err;

/* Upstream's place for it: the node's, never a network config's, to choose. */
#define TUNING_ALLOWLIST_PATH "/etc/cni/tuning/allowlist.conf"

/* A node file of patterns: refused beyond this rather than read without end. */
#define TUNING_ALLOWLIST_MAX_BYTES (64u << 10)

/**
 * tuning_allowlist_check() - refuse sysctl keys the node's allowlist does not match
 * @path: the allowlist file (TUNING_ALLOWLIST_PATH)
 * @pairs: the sysctls, keys as the config gives them
 * @n: their number
 * @err: code 7 naming the first key no pattern matches, or a pattern that does
 *       not compile; code 5 for a file that cannot be read
 *
 * No file: every key is allowed. Otherwise each non-blank line, trimmed, is an
 * extended regular expression (POSIX ERE, unanchored as upstream's RE2 match)
 * and every key must match at least one.
 *
 * Return: 0 when every key is allowed, negative errno otherwise.
 */
int tuning_allowlist_check(const char *path, const struct cni_conf_pair *pairs, size_t n,
			   struct cni_err *err);
