/* Link attributes a meta plugin tunes: flags, hardware address, queue length, MTU bounds */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util/hwaddr.h"

struct net_ns;

struct net_linkattr {
	int ifindex;
	unsigned int flags;        /* IFF_* as reported (IFF_PROMISC: what a user asked for) */
	unsigned int mtu;
	unsigned int min_mtu;      /* IFLA_MIN_MTU, 0 when the kernel does not say */
	unsigned int max_mtu;      /* IFLA_MAX_MTU, 0 when the kernel does not say */
	uint32_t txqlen;
	uint8_t hwaddr[HWADDR_MAX];
	size_t hwaddr_len;
};

/**
 * net_linkattr_get() - read the tunable attributes of a link
 * @ns: the netns (its handle), NULL for the caller's
 * @name: interface name
 * @ret: attributes, written only on success
 *
 * Return: 0 on success, -ENODEV when there is no such link, negative errno otherwise.
 */
int net_linkattr_get(struct net_ns *ns, const char *name, struct net_linkattr *ret);

/**
 * net_linkattr_set_flag() - set or clear IFF_PROMISC or IFF_ALLMULTI
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @flag: IFF_PROMISC or IFF_ALLMULTI
 * @on: true to set
 *
 * Return: 0 on success, -EINVAL for another flag, negative errno on failure.
 */
int net_linkattr_set_flag(struct net_ns *ns, int ifindex, unsigned int flag, bool on);

/**
 * net_linkattr_set_hwaddr() - set the hardware address (IFLA_ADDRESS)
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @hwaddr: address bytes
 * @len: their number
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_linkattr_set_hwaddr(struct net_ns *ns, int ifindex, const uint8_t *hwaddr, size_t len);

/**
 * net_linkattr_set_txqlen() - set the transmit queue length (IFLA_TXQLEN)
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @txqlen: new length
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_linkattr_set_txqlen(struct net_ns *ns, int ifindex, uint32_t txqlen);
