/* Host devices in sysfs: PCI, auxiliary-bus and kernel-path lookups, DPDK drivers, SR-IOV VFs */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

/**
 * device_pci_exists() - whether /sys/bus/pci/devices/<addr> exists
 * @addr: PCI address, e.g. "0000:04:00.1"
 *
 * Return: true when it does (a malformed address never does).
 */
bool device_pci_exists(const char *addr);

/**
 * device_aux_exists() - whether /sys/bus/auxiliary/devices/<id> exists
 * @id: auxiliary device, e.g. "mlx5_core.sf.4"
 *
 * Return: true when it does.
 */
bool device_aux_exists(const char *id);

/**
 * device_pci_driver_is_dpdk() - whether a PCI device is bound to a userspace (DPDK) driver
 * @addr: PCI address
 *
 * The drivers are vfio-pci, uio_pci_generic and igb_uio, as the reference.
 *
 * Return: 1 when it is, 0 when it is not or has no driver, negative errno when
 * the device does not exist (-ENOENT) or the address is malformed (-EINVAL).
 */
int device_pci_driver_is_dpdk(const char *addr);

/**
 * device_pci_netdev() - the network interface of a PCI device
 * @addr: PCI address
 * @ret_name: interface name, written only on success
 *
 * Reads the first entry of <dev>/net, else of <dev>/virtio<N>/net, as the
 * reference. sysfs shows the interfaces of the netns it was mounted in.
 *
 * Return: 0 on success, -ENOENT when the device does not exist, -ENODEV when it
 * has no interface, -EINVAL for a malformed address, negative errno otherwise.
 */
int device_pci_netdev(const char *addr, char ret_name[IFNAMSIZ]);

/**
 * device_aux_netdev() - the network interface of an auxiliary-bus device
 * @id: auxiliary device name
 * @ret_name: interface name, written only on success
 *
 * Return: as device_pci_netdev().
 */
int device_aux_netdev(const char *id, char ret_name[IFNAMSIZ]);

/**
 * device_kernelpath_netdev() - the network interface of a device by its sysfs path
 * @path: absolute path under /sys/devices/ (no ".." component)
 * @ret_name: interface name, written only on success
 *
 * Return: as device_pci_netdev(); -EINVAL for a path outside /sys/devices/.
 */
int device_kernelpath_netdev(const char *path, char ret_name[IFNAMSIZ]);

/**
 * device_netdev_pci() - the PCI function a host netdev is (its sysfs "device" link)
 * @ifname: the netdev, in the netns sysfs shows (the host's)
 * @ret: its PCI address ("0000:3b:00.1")
 * @size: size of @ret
 *
 * Return: 0 on success, -ENOENT when it is no PCI function (a veth, an auxiliary-bus
 * device such as a Mellanox SF), another negative errno.
 */
int device_netdev_pci(const char *ifname, char *ret, size_t size);

/* What an IPoIB netdev's port admits: its RDMA device, port and pkey table. */
struct device_ib_port {
	char dev[64];          /* "mlx5_0" */
	unsigned int port;     /* 1-based */
	uint16_t pkeys[128];   /* the table's non-zero entries, in table order */
	size_t n_pkeys;
};

/**
 * device_ib_port() - the pkey table of the InfiniBand port an IPoIB netdev runs on
 * @ifname: the netdev (the host's)
 * @ret: filled on success
 *
 * From /sys/class/net/<ifname>/device/infiniband/, its dev_port (0-based) and
 * /sys/class/infiniband/<dev>/ports/<port>/pkeys/<index> ("0xffff" each).
 *
 * Return: 0 on success, -ENOENT when sysfs does not say (no such netdev, not on an RDMA
 * device), another negative errno.
 */
int device_ib_port(const char *ifname, struct device_ib_port *ret);

/* What identifies an SR-IOV VF to its PF. */
struct device_vf {
	char pci[32];          /* the VF's PCI address */
	char pf_pci[32];       /* its PF's, from its physfn link */
	unsigned int index;    /* N of the PF's virtfnN link to the VF */
};

/**
 * device_netdev_vf() - the SR-IOV VF a host netdev is
 * @ifname: the netdev (the host's)
 * @ret: filled on success
 *
 * From /sys/class/net/<ifname>/device, its physfn link, and the PF's virtfnN
 * link that points back to the VF.
 *
 * Return: 0 on success, -ENOENT when the netdev is no PCI function or no VF,
 * another negative errno.
 */
int device_netdev_vf(const char *ifname, struct device_vf *ret);

/**
 * device_pci_rebind() - unbind a PCI function from its driver and bind it again
 * @addr: PCI address
 *
 * Its netdevs and RDMA devices are removed and made again, in the host netns,
 * under new indices and kernel-chosen names, as udev may rename them later.
 *
 * Return: 0 on success, -ENOENT when it has no driver bound, another negative
 * errno (the function may be left without a driver when the bind fails).
 */
int device_pci_rebind(const char *addr);
