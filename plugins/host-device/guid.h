/* host-device: an InfiniBand VF's GUIDs, set through its PF before the move and given back on DEL */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/net/device.h"

struct cni_err;
struct net_link;

/*
 * What a VF is given back when ADD found it without a GUID: ib-sriov-cni's
 * choice, since the kernel and mlx5 firmware take no zero GUID.
 */
#define HOSTDEV_GUID_DEFAULT UINT64_MAX

/* An InfiniBand VF and its PF, as a GUID change reaches it. */
struct hostdev_guid_vf {
	struct device_vf vf;
	int pf_ifindex;
	uint64_t found;        /* its port GUID as ADD found it (its hwaddr's last 8 octets) */
};

/**
 * hostdev_guid_vf() - the VF whose GUID a config sets, refused when the device is none
 * @dev: the device, in the host
 * @source: the config key of the GUID, for messages
 * @ret: filled on success
 * @err: 7 when @dev is no InfiniBand VF, 100 when sysfs or the PF cannot be read
 *
 * Return: 0 on success, negative errno on failure.
 */
int hostdev_guid_vf(const struct net_link *dev, const char *source, struct hostdev_guid_vf *ret,
		    struct cni_err *err);

/**
 * hostdev_guid_warn_zero() - warn when an InfiniBand device without a GUID is about to move as it is
 * @dev: the device, in the host
 *
 * The symptom users see is a pod interface that stays down: say why, and how to fix it.
 */
void hostdev_guid_warn_zero(const struct net_link *dev);

/**
 * hostdev_guid_set() - give an InfiniBand VF a node and port GUID, in effect, under its name
 * @v: the VF
 * @guid: the GUID (node and port alike, as ib-sriov-cni sets them)
 * @name: the name the VF's netdev has in the host, and keeps
 * @ret: the VF's netdev after the change, written only on success
 * @ret_changed: whether the kernel took a GUID (a failure after that leaves it set)
 *
 * Sets the node, then the port GUID through the PF, then binds the VF's driver again (mlx5
 * reads a VF's GUIDs when its driver binds) and waits for its netdev, which
 * comes back down, without alias, under a kernel name: it is named @name again.
 *
 * Return: 0 on success, negative errno on failure (logged: what failed, for
 * the caller's message).
 */
int hostdev_guid_set(const struct hostdev_guid_vf *v, uint64_t guid, const char *name,
		     struct net_link *ret, bool *ret_changed);

/**
 * hostdev_guid_netdev() - a VF's netdev in the host, named as it should be
 * @v: the VF
 * @name: its name
 * @ret: the netdev, written only on success
 *
 * A GUID change that failed after the bind can leave it under the kernel's name.
 *
 * Return: 0 on success, negative errno on failure.
 */
int hostdev_guid_netdev(const struct hostdev_guid_vf *v, const char *name, struct net_link *ret);

/**
 * hostdev_guid_restore() - give a host netdev that is an InfiniBand VF a GUID back
 * @name: the netdev, in the host
 * @guid: the GUID to give back
 * @ret: the netdev after the change, written only on success
 *
 * Return: 0 on success, negative errno on failure.
 */
int hostdev_guid_restore(const char *name, uint64_t guid, struct net_link *ret);
