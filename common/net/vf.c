/* SR-IOV VF settings a PF applies for its VF: an InfiniBand VF's node and port GUID */
#include <errno.h>
#include <sys/socket.h>

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/nlsock.h"
#include "common/net/vf.h"
#include "common/util/cleanup.h"

int net_vf_ib_guid_msg(int pf_ifindex, uint32_t vf, uint64_t node_guid, uint64_t port_guid,
		       struct nl_msg **ret)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = pf_ifindex };
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	/* Zeroed whole: the padding after .vf goes to the kernel too. */
	struct ifla_vf_guid node = { 0 }, port = { 0 };
	struct nlattr *list, *info;
	int r;

	r = nlsock_msg_new(RTM_SETLINK, 0, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	node.vf = vf;
	node.guid = node_guid;
	port.vf = vf;
	port.guid = port_guid;
	if (!(list = nla_nest_start(msg, IFLA_VFINFO_LIST)) ||
	    !(info = nla_nest_start(msg, IFLA_VF_INFO)) ||
	    nla_put(msg, IFLA_VF_IB_NODE_GUID, sizeof(node), &node) < 0 ||
	    nla_put(msg, IFLA_VF_IB_PORT_GUID, sizeof(port), &port) < 0 ||
	    nla_nest_end(msg, info) < 0 || nla_nest_end(msg, list) < 0)
		return -EMSGSIZE;
	*ret = TAKE_PTR(msg);
	return 0;
}

int net_vf_set_ib_guid(struct net_ns *ns, int pf_ifindex, uint32_t vf, uint64_t node_guid,
		       uint64_t port_guid)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r = net_vf_ib_guid_msg(pf_ifindex, vf, node_guid, port_guid, &msg);

	/* nlsock_talk(), not nlsock_request(): one seam for the fake kernel of the unit tests. */
	return r < 0 ? r : nlsock_talk(ns, NETLINK_ROUTE, msg, NULL, NULL, NULL);
}
