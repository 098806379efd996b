/* SR-IOV VF settings a PF applies for its VF: an InfiniBand VF's node and port GUID */
#include <errno.h>
#include <sys/socket.h>

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/net/vf.h"
#include "common/util/cleanup.h"

int net_vf_ib_guid_msg(int pf_ifindex, uint32_t vf, enum net_vf_guid which, uint64_t guid,
		       struct nl_msg **ret)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = pf_ifindex };
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	/* Zeroed whole: the padding after .vf goes to the kernel too. */
	struct ifla_vf_guid g = { 0 };
	struct nlattr *list, *info;
	int r;

	r = nlsock_msg_new(RTM_SETLINK, 0, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	g.vf = vf;
	g.guid = guid;
	if (!(list = nla_nest_start(msg, IFLA_VFINFO_LIST)) ||
	    !(info = nla_nest_start(msg, IFLA_VF_INFO)) ||
	    nla_put(msg, which == NET_VF_NODE_GUID ? IFLA_VF_IB_NODE_GUID : IFLA_VF_IB_PORT_GUID,
		    sizeof(g), &g) < 0 ||
	    nla_nest_end(msg, info) < 0 || nla_nest_end(msg, list) < 0)
		return -EMSGSIZE;
	*ret = TAKE_PTR(msg);
	return 0;
}

int net_vf_set_ib_guid(struct net_ns *ns, int pf_ifindex, uint32_t vf, enum net_vf_guid which,
		       uint64_t guid)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r = net_vf_ib_guid_msg(pf_ifindex, vf, which, guid, &msg);

	/* nlsock_talk(), not nlsock_request(): one seam for the fake kernel of the unit tests. */
	return r < 0 ? r : nlsock_talk(ns, NETLINK_ROUTE, msg, NULL, NULL, NULL);
}
