/* host-local's resolvConf: the DNS of a resolv.conf file, read as upstream reads it */
#pragma once

#include <stddef.h>

struct cni_dns;
struct cni_err;

/* resolv.conf is a few lines; anything larger is not one. */
#define HL_RESOLV_MAX_BYTES (1024u * 1024u)

/**
 * hl_dns_parse() - the DNS settings of resolv.conf text, as upstream's parseResolvConf()
 * @text: the file's bytes (NUL-terminated)
 * @len: their number
 * @ret: nameservers, domain (the last "domain" line), search and options (every line's
 *       fields appended), written only on success; release with the result's DNS
 * @err: code 7 for a line longer than 64 KiB (upstream's scanner refuses it too)
 *
 * Lines are trimmed of white space; empty ones and those starting with '#' or ';' are
 * skipped, as are lines of fewer than two fields. Bytes that are not UTF-8 become
 * U+FFFD, as Go's JSON encoder writes them.
 *
 * Return: 0 on success, negative errno on failure.
 */
int hl_dns_parse(const char *text, size_t len, struct cni_dns *ret, struct cni_err *err);

/**
 * hl_dns_load() - hl_dns_parse() of the file a config's resolvConf names
 * @path: the path (below a directory the node lists: trust.h's TRUST_RESOLV; links are
 *        followed as long as the file they lead to is there too)
 * @ret: as hl_dns_parse()
 * @err: code 7 for a path the node does not allow, a missing file, a file that is no
 *       regular file or larger than HL_RESOLV_MAX_BYTES; code 5 when it cannot be read
 *
 * Return: 0 on success, negative errno on failure.
 */
int hl_dns_load(const char *path, struct cni_dns *ret, struct cni_err *err);
