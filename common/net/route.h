/* Routes: rtnetlink requests and dumps */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"

struct net_ns;

struct net_route {
	int ifindex;
	struct ip_prefix dst;
	bool has_gw;
	struct ip_addr gw;
	unsigned int mtu;      /* 0: none */
	unsigned int advmss;   /* 0: none */
	unsigned int priority; /* 0: none */
	unsigned int table;    /* 0: main */
	int scope;             /* -1: the kernel's default for the route */
	bool has_src;
	struct ip_addr src;    /* RTA_PREFSRC, the source hint */
	unsigned int protocol; /* 0: boot */
	unsigned int type;     /* 0: unicast */
};

/**
 * net_route_add() - add a route (NLM_F_CREATE, no NLM_F_EXCL, as the reference)
 * @ns: the netns (its handle), NULL for the caller's
 * @route: route
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_route_add(struct net_ns *ns, const struct net_route *route);

/**
 * net_route_list() - the routes through a link in every table
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @family: AF_INET, AF_INET6 or AF_UNSPEC for both
 * @ret: malloc'ed array, written only on success
 * @ret_n: number of entries
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_route_list(struct net_ns *ns, int ifindex, int family, struct net_route **ret,
		   size_t *ret_n);

/**
 * net_default_route_ifindex() - the link of the first default route (any family)
 * @ns: the netns (its handle), NULL for the caller's
 * @ret_ifindex: interface index, written only on success
 *
 * Return: 0 on success, -ENOENT when there is no default route, negative errno otherwise.
 */
int net_default_route_ifindex(struct net_ns *ns, int *ret_ifindex);

/**
 * net_route_get() - the link the kernel would send a packet to an address through
 * @ns: the netns (its handle), NULL for the caller's
 * @dst: the address
 * @ret_ifindex: interface index, written only on success
 *
 * As "ip route get": the routing decision, not a route of the tables.
 *
 * Return: 0 on success, -ENETUNREACH (or the kernel's errno) when none, negative errno otherwise.
 */
int net_route_get(struct net_ns *ns, const struct ip_addr *dst, int *ret_ifindex);

/**
 * net_route_replace() - add a route or replace the one it matches (NLM_F_CREATE|NLM_F_REPLACE)
 * @ns: the netns (its handle), NULL for the caller's
 * @route: route
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_route_replace(struct net_ns *ns, const struct net_route *route);

/**
 * net_route_del() - delete a route
 * @ns: the netns (its handle), NULL for the caller's
 * @route: as net_route_list_table() returned it: every field given must match
 *
 * Return: 0 on success, -ESRCH when no route matches, negative errno otherwise.
 */
int net_route_del(struct net_ns *ns, const struct net_route *route);

/**
 * net_route_list_table() - the routes of one table, or of every table
 * @ns: the netns (its handle), NULL for the caller's
 * @table: the table, 0 for every one
 * @family: AF_INET, AF_INET6 or AF_UNSPEC for both
 * @ret: malloc'ed array, written only on success
 * @ret_n: number of entries
 *
 * Unlike net_route_list(), routes without a link (blackhole, unreachable) and
 * multipath routes are listed too, with ifindex 0: a table that holds only
 * those is still in use.
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_route_list_table(struct net_ns *ns, unsigned int table, int family,
			 struct net_route **ret, size_t *ret_n);
