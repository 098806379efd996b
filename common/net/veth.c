/* veth pairs: one end in the caller's netns (a bridge port), the other made in a pod's */
#include <errno.h>
#include <string.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/neterr.h"
#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/net/veth.h"
#include "common/util/cleanup.h"

static bool name_ok(const char *name)
{
	return name && *name && strlen(name) < IFNAMSIZ;
}

/* VETH_INFO_PEER: an ifinfomsg of its own, then the other end's attributes. */
static int put_peer(struct nl_msg *msg, const struct net_veth *v)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nlattr *peer = nla_nest_start(msg, VETH_INFO_PEER);

	if (!peer || nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 ||
	    nla_put_string(msg, IFLA_IFNAME, v->peer_name) < 0 ||
	    (v->mtu > 0 && nla_put_u32(msg, IFLA_MTU, v->mtu) < 0) ||
	    (v->peer_hwaddr && nla_put(msg, IFLA_ADDRESS, 6, v->peer_hwaddr) < 0) ||
	    (v->peer_netns_fd >= 0 && nla_put_u32(msg, IFLA_NET_NS_FD, (uint32_t)v->peer_netns_fd) < 0))
		return -EMSGSIZE;
	return nla_nest_end(msg, peer) < 0 ? -EMSGSIZE : 0;
}

int net_veth_create(struct net_ns *ns, const struct net_veth *v)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nlattr *info, *data;
	int r;

	net_ack_clear();
	if (!v || !name_ok(v->name) || !name_ok(v->peer_name) || v->master_ifindex < 0)
		return -EINVAL;
	if (v->up) {
		ifi.ifi_flags = IFF_UP;
		ifi.ifi_change = IFF_UP;
	}
	r = nlsock_msg_new(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	if (nla_put_string(msg, IFLA_IFNAME, v->name) < 0 ||
	    (v->mtu > 0 && nla_put_u32(msg, IFLA_MTU, v->mtu) < 0) ||
	    (v->no_queue && nla_put_u32(msg, IFLA_TXQLEN, 0) < 0) ||
	    (v->master_ifindex > 0 && nla_put_u32(msg, IFLA_MASTER, (uint32_t)v->master_ifindex) < 0))
		return -EMSGSIZE;
	info = nla_nest_start(msg, IFLA_LINKINFO);
	if (!info || nla_put(msg, IFLA_INFO_KIND, (int)strlen("veth"), "veth") < 0)
		return -EMSGSIZE;
	data = nla_nest_start(msg, IFLA_INFO_DATA);
	if (!data)
		return -EMSGSIZE;
	r = put_peer(msg, v);
	if (r < 0)
		return r;
	if (nla_nest_end(msg, data) < 0 || nla_nest_end(msg, info) < 0)
		return -EMSGSIZE;
	return nlsock_request(ns, msg);
}
