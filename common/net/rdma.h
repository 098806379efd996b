/* RDMA devices over RDMA netlink: the netns mode, the device of a netdev, netns moves */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct net_ns;

struct rdma_dev {
	uint32_t index;  /* RDMA_NLDEV_ATTR_DEV_INDEX */
	char name[64];   /* RDMA_NLDEV_ATTR_DEV_NAME, e.g. "mlx5_0" */
};

/**
 * rdma_netns_exclusive() - the RDMA subsystem's netns mode (RDMA_NLDEV_CMD_SYS_GET)
 * @ns: the netns asked (its handle), NULL for the caller's
 * @ret_exclusive: true in exclusive mode (each RDMA device lives in one netns),
 *                 false in shared mode; written only on success
 *
 * Return: 0 on success, -EPROTONOSUPPORT when the kernel has no RDMA netlink
 * (ib_core not loaded), -EOPNOTSUPP when it predates netns modes (before 5.2
 * it refuses SYS_GET with -EINVAL), -EBADMSG for a reply without the mode,
 * negative errno otherwise.
 */
int rdma_netns_exclusive(struct net_ns *ns, bool *ret_exclusive);

/**
 * rdma_dev_of_netdev() - the RDMA device one of whose ports is a netdev
 * @ns: the netns the netdev is in (its handle), NULL for the caller's
 * @ifindex: the netdev's index there
 * @ret: device, written only on success
 *
 * Dumps the RDMA devices visible in that netns, then each device's
 * ports (the kernel needs a device index for a port dump) and matches
 * RDMA_NLDEV_ATTR_NDEV_INDEX, which the kernel reports only for a netdev in
 * that netns.
 *
 * Return: 0 on success, -ENODEV when no RDMA device has it, -EPROTONOSUPPORT
 * without RDMA netlink, negative errno otherwise.
 */
int rdma_dev_of_netdev(struct net_ns *ns, int ifindex, struct rdma_dev *ret);

/**
 * rdma_dev_present() - whether an RDMA device is still listed in a netns
 * @ns: the netns asked (its handle), NULL for the caller's
 * @dev: the device, by index and name
 *
 * Software RDMA devices (rxe, siw) are unregistered by the kernel when their
 * netdev leaves their netns; this tells such a loss from another failure.
 *
 * Return: 1 when a device of that index and name is listed, 0 when not,
 * negative errno when the dump fails.
 */
int rdma_dev_present(struct net_ns *ns, const struct rdma_dev *dev);

/**
 * rdma_dev_set_netns() - move an RDMA device into the netns behind a descriptor
 * @ns: the netns it is in (its handle), NULL for the caller's
 * @index: RDMA device index
 * @netns_fd: target netns (RDMA_NLDEV_NET_NS_FD)
 *
 * Only possible in exclusive mode; the kernel refuses it otherwise.
 *
 * Return: 0 on success, negative errno on failure.
 */
int rdma_dev_set_netns(struct net_ns *ns, uint32_t index, int netns_fd);
