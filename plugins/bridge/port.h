/* A port of the bridge: a veth pair, its host end enslaved, flagged and in its VLANs */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bridge_host;
struct cni_err;
struct net_bridge_vlans;
struct net_ns;

/* The other end of the pair and what the port joins. */
struct bridge_port_spec {
	const char *peer_name;        /* CNI_IFNAME in the pod, or "<br>.<vlan>" beside the bridge */
	int peer_netns_fd;            /* the pod's netns, -1 for the host's */
	struct net_ns *peer_ns;       /* the same netns as a handle, to tell which name is taken */
	const uint8_t *peer_hwaddr;   /* 6 bytes, NULL for the kernel's */
	bool peer_up;                 /* set up once the pair is made */
	unsigned int mtu;             /* 0: the kernel's */
	bool hairpin;
	bool isolated;
	uint16_t vlan;                /* the port's PVID, untagged; 0 for none */
	const struct net_bridge_vlans *trunk;
	size_t n_trunk;               /* a trunk without "vlan" gets VLAN 1 as its native one */
	bool preserve_default_vlan;
};

struct bridge_port {
	char name[IFNAMSIZ];          /* the host end: "veth" and 8 random hex digits */
	int ifindex;
};

/**
 * bridge_port_add() - the pair made, its host end up on the bridge, hairpin, isolation and
 *                     VLANs set, as upstream's setupVeth()
 * @h: the host side (its bridge found, its VLAN settings read when VLANs are configured)
 * @s: the pair
 * @ret: the host end, written only on success
 * @err: upstream's "container veth name ... already exists" (code 100) when the peer's
 *       name is taken; code 100 for the kernel's refusals
 *
 * A failure after the pair was made removes it again.
 *
 * Return: 0 on success, negative errno on failure.
 */
int bridge_port_add(struct bridge_host *h, const struct bridge_port_spec *s,
		    struct bridge_port *ret, struct cni_err *err);
