/* sysctl of a netns's network subsystem (/proc/sys/net), read and written from inside it */
#pragma once

#include <stddef.h>

struct net_ns;

/* One read or write of net_sysctl_batch(). */
struct net_sysctl_op {
	const char *rel; /* as for net_sysctl_read() */
	const char *value; /* the text to write; NULL: read into @buf */
	char *buf;
	size_t len;
};

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

/**
 * net_sysctl_batch() - net_sysctl_read() and net_sysctl_write() in order, in one visit to the netns
 * @ns: the netns (its handle), NULL for the caller's
 * @ops: the reads and writes
 * @n: how many
 * @ret_done: how many succeeded before the first failure (all of them on success)
 *
 * Return: 0 on success, the first failure's negative errno (as the single calls say).
 */
int net_sysctl_batch(struct net_ns *ns, struct net_sysctl_op *ops, size_t n, size_t *ret_done);
