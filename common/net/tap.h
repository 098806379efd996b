/* Tap devices: made through /dev/net/tun in a pod's netns, kept by a descriptor until persistent */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct net_ns;

/* No owner or group: anyone with CAP_NET_ADMIN may attach (the kernel's -1). */
#define NET_TAP_NOBODY UINT32_MAX

struct net_tap {
	const char *name;        /* the name it gets (CNI_IFNAME) */
	bool multi_queue;        /* IFF_MULTI_QUEUE: whoever attaches must ask for it too */
	uint32_t owner;          /* TUNSETOWNER; NET_TAP_NOBODY for none */
	uint32_t group;          /* TUNSETGROUP; NET_TAP_NOBODY for none */
	const uint8_t *hwaddr;   /* 6 bytes, NULL: the kernel's random one */
};

/**
 * net_tap_create() - a new tap device in a netns, alive as long as its descriptor
 * @ns: the netns (its handle), NULL for the caller's
 * @tap: what to create
 * @ret_fd: its queue descriptor (close-on-exec), written only on success
 *
 * The device is not persistent: closing @ret_fd removes it, so a failed or
 * killed ADD leaves nothing behind. net_tap_persist() keeps it.
 *
 * Return: 0 on success, -EEXIST when the netns has a link of that name,
 * -ENODEV when the kernel has no tun driver, negative errno otherwise.
 */
int net_tap_create(struct net_ns *ns, const struct net_tap *tap, int *ret_fd);

/**
 * net_tap_persist() - keep a tap device after its descriptor is closed
 * @fd: from net_tap_create()
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_tap_persist(int fd);

/**
 * net_tap_set_bridge() - make a link a port of a master (IFLA_MASTER)
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: the port
 * @master_ifindex: the bridge (or any master device) in the same netns
 *
 * Return: 0 on success, negative errno on failure (the kernel's text is kept
 * for net_err_set()).
 */
int net_tap_set_bridge(struct net_ns *ns, int ifindex, int master_ifindex);
