/* What common/net/link.c lets tests reach without a kernel: its reply parse and its create request */
#pragma once

#include <stddef.h>

#include <linux/netlink.h>

struct net_child;
struct net_link;

/* A request buffer aligned for struct nlmsghdr, for net_link_build_create(). */
struct net_link_buf {
	union {
		char data[8192];
		struct nlmsghdr align_;
	};
};

/**
 * net_link_parse() - what the lookups read from one RTM_NEWLINK message
 * @msg: the message, header first
 * @len: bytes at @msg
 * @ret: the link, written only on success
 *
 * The parse the lookups use, reachable without a kernel that has the link
 * (an IPoIB child, for tests on machines without InfiniBand).
 *
 * Return: 0 on success, -EBADMSG for a message that is not a whole RTM_NEWLINK.
 */
int net_link_parse(const void *msg, size_t len, struct net_link *ret);

/**
 * net_link_build_create() - build the RTM_NEWLINK request net_link_create() sends
 * @child: what to create
 * @buf: output buffer aligned for struct nlmsghdr (struct net_link_buf)
 * @size: size of @buf
 *
 * Lets tests compare the request attribute by attribute with a capture of
 * iproute2's without sending it. The sequence number and port are left 0.
 *
 * Return: length of the message at @buf, negative errno on invalid input or
 * -EMSGSIZE when @buf is too small.
 */
int net_link_build_create(const struct net_child *child, void *buf, size_t size);
