/* sysctl of a netns's network subsystem (/proc/sys/net), read and written from inside it */
#pragma once

#include <stddef.h>

struct net_ns;

/**
 * net_sysctl_read() - read /proc/sys/net/<rel> as the netns behind @ns sees it
 * @ns: the netns (its handle), NULL for the caller's
 * @rel: path below /proc/sys/net ("ipv4/conf/net1/arp_ignore"): no "." or ".."
 *       component, no leading '/', no symbolic link on the way
 * @buf: output, the trailing newline removed
 * @len: size of @buf
 *
 * Return: 0 on success, -ENOENT when there is no such sysctl, -ELOOP for a
 * symbolic link, -ENOBUFS when the value does not fit, negative errno otherwise.
 */
int net_sysctl_read(struct net_ns *ns, const char *rel, char *buf, size_t len);

/**
 * net_sysctl_write() - write /proc/sys/net/<rel> in the netns behind @ns
 * @ns: the netns (its handle), NULL for the caller's
 * @rel: as for net_sysctl_read()
 * @value: text to write, in one write(2) as sysctl(8) does
 *
 * Return: 0 on success, the kernel's negative errno (-EINVAL for a value it
 * refuses) on failure.
 */
int net_sysctl_write(struct net_ns *ns, const char *rel, const char *value);
