/* ethtool queries of a link: its permanent MAC and its bus device */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct net_ns;

/**
 * net_ethtool_perm_hwaddr() - the permanent hardware address of a link (ETHTOOL_GPERMADDR)
 * @ns: the link's netns (its handle), NULL for the caller's
 * @ifname: interface name there
 * @ret: address bytes, at least HWADDR_MAX; written only on success
 * @ret_len: number of bytes, written only on success
 *
 * Virtual links (veth, dummy) have none: the kernel reports zeros, which is
 * -ENODATA here.
 *
 * Return: 0 on success, -ENODATA when the link has no permanent address,
 * -ENODEV when there is no such link, negative errno otherwise.
 */
int net_ethtool_perm_hwaddr(struct net_ns *ns, const char *ifname, uint8_t *ret, size_t *ret_len);

/**
 * net_ethtool_bus_info() - the bus device of a link (ETHTOOL_GDRVINFO bus_info)
 * @ns: the link's netns (its handle), NULL for the caller's
 * @ifname: interface name there
 * @ret: text, e.g. "0000:08:00.2" (PCI) or "mlx5_core.sf.4" (auxiliary); "" when
 *       the driver names none (veth); written only on success
 * @size: size of @ret
 *
 * Return: 0 on success, -ENODEV when there is no such link, -EOPNOTSUPP when
 * the driver answers no ethtool request, negative errno otherwise.
 */
int net_ethtool_bus_info(struct net_ns *ns, const char *ifname, char *ret, size_t size);
