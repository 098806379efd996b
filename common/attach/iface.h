/* Applying an IPAM result to an interface of the pod netns, and checking it */
#pragma once

#include <stdbool.h>

struct cni_err;
struct cni_result;
struct net_link;
struct net_ns;

/**
 * iface_configure() - addresses, link up, routes, as the reference ConfigureIface
 * @ns: the netns of the interface (its handle), NULL for the caller's
 * @link: the interface there, as looked up (its index and name)
 * @res: result whose ips (interface index absent or naming @link) and routes apply
 * @autoconf: leave accept_ra and autoconf as they are; otherwise both are turned off
 *            before the link goes up: an interface IPAM addressed gets no SLAAC address
 *            and no route from a router advertisement beside the result's
 * @err: filled on failure, with the kernel's extended-ack text in details
 *
 * Sets arp_notify/ndisc_notify, enables IPv6 where an IPv6 address needs it
 * (the sysctls in one trip into the netns, the rest through @ns's socket),
 * waits (bounded) for DAD when there is an IPv6 gateway.
 *
 * Return: 0 on success, negative errno on failure.
 */
int iface_configure(struct net_ns *ns, const struct net_link *link, const struct cni_result *res,
		    bool autoconf, struct cni_err *err);

/**
 * iface_check() - verify that the addresses and routes of a result are present
 * @ns: the netns of the interface (its handle), NULL for the caller's
 * @ifname: interface there
 * @res: the prevResult
 * @err: filled on failure
 *
 * Return: 0 when everything is present, negative errno otherwise.
 */
int iface_check(struct net_ns *ns, const char *ifname, const struct cni_result *res,
		struct cni_err *err);
