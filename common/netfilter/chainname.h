/* The names and comments upstream's plugins give their netfilter chains and rules (pkg/utils) */
#pragma once

#include <stddef.h>

/* iptables' longest chain name upstream makes: "CNI-" and 24 hex digits. */
#define CHAINNAME_IPT_LEN 28

/**
 * chainname_ipt() - an iptables chain of a network's container: "CNI-" + @prefix + the hash
 *                   of network name and container ID, CHAINNAME_IPT_LEN characters
 * @network: the network's name
 * @id: the container ID
 * @prefix: what follows "CNI-" ("" for ipMasq's chains, "DN-" for portmap's)
 * @buf: output, CHAINNAME_IPT_LEN + 1 bytes
 *
 * Return: 0 on success, -EINVAL for a prefix that leaves no room for the hash,
 * -ENOMEM.
 */
int chainname_ipt(const char *network, const char *id, const char *prefix, char *buf);

/**
 * chainname_comment() - upstream's iptables comment: name: "NETWORK" id: "ID", each
 *                       quoted as Go's %q quotes it
 * @network: the network's name
 * @id: the container ID
 * @buf: output
 * @size: its size
 *
 * Return: 0 on success, -ENAMETOOLONG when it does not fit.
 */
int chainname_comment(const char *network, const char *id, char *buf, size_t size);
