/* SR-IOV VF settings a PF applies for its VF: an InfiniBand VF's node and port GUID */
#pragma once

#include <stdint.h>

struct net_ns;
struct nl_msg;

/* Which GUID of a VF. */
enum net_vf_guid {
	NET_VF_NODE_GUID,
	NET_VF_PORT_GUID,
};

/**
 * net_vf_ib_guid_msg() - the RTM_SETLINK request that gives a PF's VF one of its GUIDs
 * @pf_ifindex: the PF's netdev
 * @vf: the VF's index on the PF (its virtfnN)
 * @which: node or port GUID
 * @guid: the GUID
 * @ret: the request, written only on success; release with nlmsg_free()
 *
 * IFLA_VFINFO_LIST holding one IFLA_VF_INFO with IFLA_VF_IB_NODE_GUID or
 * IFLA_VF_IB_PORT_GUID, a struct ifla_vf_guid. One GUID per request:
 * do_setvfinfo() applies the node GUID of an IFLA_VF_INFO and returns,
 * ignoring a port GUID beside it, and of a list it stops at the first
 * failure, so only separate requests tell which GUID the kernel took.
 *
 * Return: 0 on success, -ENOMEM or -EMSGSIZE.
 */
int net_vf_ib_guid_msg(int pf_ifindex, uint32_t vf, enum net_vf_guid which, uint64_t guid,
		       struct nl_msg **ret);

/**
 * net_vf_set_ib_guid() - set an InfiniBand VF's node or port GUID through its PF
 * @ns: the PF's netns (the host's), NULL for the caller's
 * @pf_ifindex: the PF's netdev
 * @vf: the VF's index on the PF
 * @which: node or port GUID
 * @guid: the GUID
 *
 * The kernel refuses it with -EOPNOTSUPP for a PF that is no InfiniBand device
 * or whose driver has no VF GUIDs. mlx5 applies a new GUID when the VF's driver
 * binds again (device_pci_rebind()).
 *
 * Return: 0 on success, the kernel's negative errno otherwise.
 */
int net_vf_set_ib_guid(struct net_ns *ns, int pf_ifindex, uint32_t vf, enum net_vf_guid which,
		       uint64_t guid);
