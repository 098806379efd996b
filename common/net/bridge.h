/* Linux bridges: the bridge device, its ports' flags and their VLANs */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct net_ns;

/* A bridge's settings a port's VLANs depend on (IFLA_INFO_DATA of its link). */
struct net_bridge_info {
	bool vlan_filtering;
	uint16_t default_pvid; /* the VLAN a new port joins untagged, 0 for none */
};

/* VLANs of a port: min to max (one when equal), with BRIDGE_VLAN_INFO_PVID and _UNTAGGED. */
struct net_bridge_vlans {
	uint16_t min;
	uint16_t max;
	uint16_t flags;
};

/**
 * net_bridge_create() - create a bridge, down (RTM_NEWLINK, NLM_F_CREATE|NLM_F_EXCL)
 * @ns: the netns (its handle), NULL for the caller's
 * @name: its name
 * @mtu: its MTU, 0 for the kernel's
 * @vlan_filtering: created with VLAN filtering on
 *
 * Return: 0 on success, -EEXIST when a link of that name exists (of any kind),
 * -EOPNOTSUPP when the kernel cannot filter VLANs, negative errno otherwise.
 */
int net_bridge_create(struct net_ns *ns, const char *name, unsigned int mtu, bool vlan_filtering);

/**
 * net_bridge_get() - a bridge's VLAN settings
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: the bridge
 * @ret: written only on success
 *
 * Return: 0 on success, -ENODEV when there is no such link, -EMEDIUMTYPE for a
 * link that is no bridge, negative errno otherwise.
 */
int net_bridge_get(struct net_ns *ns, int ifindex, struct net_bridge_info *ret);

/**
 * net_bridge_port_set() - a port's hairpin mode and isolation (IFLA_PROTINFO)
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: the port
 * @hairpin: frames may go back out the port they came in
 * @isolated: no frames to or from the other isolated ports
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_bridge_port_set(struct net_ns *ns, int ifindex, bool hairpin, bool isolated);

/**
 * net_bridge_vlan_add() - add VLANs to a port, in one request
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: the port
 * @v: the VLANs, each a range or one (a PVID must be one)
 * @n: how many
 *
 * Return: 0 on success, -EINVAL for a VLAN outside 1-4094 or a PVID range,
 * -EOPNOTSUPP when the kernel cannot filter VLANs, negative errno otherwise.
 */
int net_bridge_vlan_add(struct net_ns *ns, int ifindex, const struct net_bridge_vlans *v, size_t n);

/**
 * net_bridge_vlan_del() - remove VLANs from a port
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: the port
 * @v: the VLANs (flags ignored)
 * @n: how many
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_bridge_vlan_del(struct net_ns *ns, int ifindex, const struct net_bridge_vlans *v, size_t n);
