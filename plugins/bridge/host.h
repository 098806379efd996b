/* The bridge side of an attachment: the bridge, its gateway addresses, forwarding */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/net/bridge.h"
#include "common/net/link.h"
#include "common/util/ipaddr.h"

struct bridge_conf;
struct cni_err;
struct net_ns;

/* Gateway addresses an ADD may add or (forceAddress) take away: one per family and a few. */
#define BRIDGE_HOST_ADDRS_MAX 8

/*
 * What one ADD found and changed on the node's shared side. The bridge, its
 * addresses and the VLAN gateway interface serve every pod on it: an ADD that
 * fails takes back what it made or changed only while no other pod's port is
 * on the bridge, under the bridge's lock (bridge_host_lock()).
 */
struct bridge_host {
	struct net_ns *ns;                /* the host's netns (the attachment's handle) */
	int lock_fd;                      /* -1 when not held */
	struct net_link br;               /* the bridge, as found before the pod's port */
	struct net_bridge_info info;      /* its VLAN settings, when VLANs are configured */
	bool created;                     /* this ADD made the bridge */
	bool promisc_set;                 /* this ADD turned its promiscuous mode on */
	bool set_up;                      /* this ADD brought it up */
	struct net_link gw;               /* where the gateway addresses went (the bridge, or "<br>.<vlan>") */
	bool vlan_created;                /* this ADD made "<br>.<vlan>" */
	int vlan_port;                    /* the bridge port of "<br>.<vlan>"'s pair, 0 for none */
	struct ip_prefix added[BRIDGE_HOST_ADDRS_MAX];
	size_t n_added;
	struct ip_prefix removed[BRIDGE_HOST_ADDRS_MAX];
	size_t n_removed;
	int removed_from;                 /* the link @removed were taken from */
};

/**
 * bridge_host_lock() - hold the lock of a bridge name, waiting for it
 * @h: the host side (lock_fd set)
 * @name: the bridge
 * @err: code 100 when it cannot be taken
 *
 * Return: 0 on success, negative errno on failure.
 */
int bridge_host_lock(struct bridge_host *h, const char *name, struct cni_err *err);

/**
 * bridge_host_unlock() - release the lock when held
 * @h: the host side
 */
void bridge_host_unlock(struct bridge_host *h);

/**
 * bridge_host_ensure() - the bridge up, made when missing, as upstream's ensureBridge()
 * @h: the host side (ns set)
 * @c: config
 * @err: code 7 for a name of another kind of link (the node's uplink named as such),
 *       100 for the kernel's refusals
 *
 * A bridge that exists keeps its MTU and VLAN filtering; promiscuous mode is turned
 * on when asked; router advertisements are ignored on it. A new bridge is brought up at
 * once; one of the node's that is down by bridge_host_up(), once nothing is left that
 * can fail: it stays as it was (its qdisc too) when the ADD fails.
 *
 * Return: 0 on success, negative errno on failure.
 */
int bridge_host_ensure(struct bridge_host *h, const struct bridge_conf *c, struct cni_err *err);

/**
 * bridge_host_up() - the bridge up, as upstream's ensureBridge() leaves it
 * @h: the host side, after bridge_host_ensure()
 * @err: code 100
 *
 * Return: 0 on success, negative errno on failure.
 */
int bridge_host_up(struct bridge_host *h, struct cni_err *err);

/**
 * bridge_host_gateway() - a gateway address on the bridge (or on "<br>.<vlan>"), as
 *                         upstream's ensureAddr()
 * @h: the host side, after bridge_host_ensure()
 * @c: config
 * @gw: the gateway with the pod's prefix length
 * @err: code 7 when another address of the family is there and forceAddress is off,
 *       100 for the kernel's refusals
 *
 * Return: 0 on success, negative errno on failure.
 */
int bridge_host_gateway(struct bridge_host *h, const struct bridge_conf *c,
			const struct ip_prefix *gw, struct cni_err *err);

/**
 * bridge_host_forward() - forwarding on for a family, as upstream's EnableIP4Forward()
 * @family: AF_INET or AF_INET6
 * @err: code 100
 *
 * Return: 0 on success, negative errno on failure.
 */
int bridge_host_forward(int family, struct cni_err *err);

/**
 * bridge_host_undo() - take back what a failed ADD made or changed, when no other pod uses it
 * @h: the host side (its pod port already removed)
 *
 * Takes the lock when not held. Failures are logged: the ADD's own error is the one
 * to report.
 */
void bridge_host_undo(struct bridge_host *h);
