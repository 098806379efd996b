/* SR-IOV VF settings a PF applies for its VF: an InfiniBand VF's node and port GUID */
#pragma once

#include <stdint.h>

struct net_ns;
struct nl_msg;

/**
 * net_vf_ib_guid_msg() - the RTM_SETLINK request that gives a PF's VF its GUIDs
 * @pf_ifindex: the PF's netdev
 * @vf: the VF's index on the PF (its virtfnN)
 * @node_guid: the VF's node GUID
 * @port_guid: the VF's port GUID
 * @ret: the request, written only on success; release with nlmsg_free()
 *
 * IFLA_VFINFO_LIST holding one IFLA_VF_INFO with IFLA_VF_IB_NODE_GUID and
 * IFLA_VF_IB_PORT_GUID, each a struct ifla_vf_guid: one request, so the
 * kernel applies both or refuses before the second (do_setvfinfo()).
 *
 * Return: 0 on success, -ENOMEM or -EMSGSIZE.
 */
int net_vf_ib_guid_msg(int pf_ifindex, uint32_t vf, uint64_t node_guid, uint64_t port_guid,
		       struct nl_msg **ret);

/**
 * net_vf_set_ib_guid() - set an InfiniBand VF's node and port GUID through its PF
 * @ns: the PF's netns (the host's), NULL for the caller's
 * @pf_ifindex: the PF's netdev
 * @vf: the VF's index on the PF
 * @node_guid: node GUID
 * @port_guid: port GUID
 *
 * The kernel refuses it with -EOPNOTSUPP for a PF that is no InfiniBand device
 * or whose driver has no VF GUIDs. mlx5 applies a new GUID when the VF's driver
 * binds again (device_pci_rebind()).
 *
 * Return: 0 on success, the kernel's negative errno otherwise.
 */
int net_vf_set_ib_guid(struct net_ns *ns, int pf_ifindex, uint32_t vf, uint64_t node_guid,
		       uint64_t port_guid);
