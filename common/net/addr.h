/* Addresses: rtnetlink requests and dumps */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"

struct net_ns;

struct net_addr {
	struct ip_prefix prefix;
	bool tentative;
	bool dadfailed;
	unsigned int scope;    /* RT_SCOPE_*: 0 (universe) for a global address */
};

/**
 * net_addr_add() - add an address to a link (NLM_F_CREATE|NLM_F_EXCL)
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @prefix: address with its prefix length
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_addr_add(struct net_ns *ns, int ifindex, const struct ip_prefix *prefix);

/**
 * net_addr_del() - remove an address from a link
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @prefix: address with its prefix length
 *
 * Return: 0 on success, -EADDRNOTAVAIL when the link has no such address, negative
 * errno otherwise.
 */
int net_addr_del(struct net_ns *ns, int ifindex, const struct ip_prefix *prefix);

/**
 * net_addr_list() - the addresses of a link
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @family: AF_INET, AF_INET6 or AF_UNSPEC for both
 * @ret: malloc'ed array, written only on success
 * @ret_n: number of entries
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_addr_list(struct net_ns *ns, int ifindex, int family, struct net_addr **ret,
		  size_t *ret_n);
