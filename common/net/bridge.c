/* Linux bridges: the bridge device, its ports' flags and their VLANs */
#include <errno.h>
#include <string.h>

#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/bridge.h"
#include "common/net/neterr.h"
#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/util/cleanup.h"

int net_bridge_create(struct net_ns *ns, const char *name, unsigned int mtu, bool vlan_filtering)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nlattr *info, *data;
	int r;

	net_ack_clear();
	if (!name || !*name || strlen(name) >= IFNAMSIZ)
		return -EINVAL;
	r = nlsock_msg_new(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	if (nla_put_string(msg, IFLA_IFNAME, name) < 0 ||
	    (mtu > 0 && nla_put_u32(msg, IFLA_MTU, mtu) < 0))
		return -EMSGSIZE;
	/* An empty IFLA_INFO_DATA without VLAN filtering, as vishvananda/netlink sends it. */
	info = nla_nest_start(msg, IFLA_LINKINFO);
	if (!info || nla_put(msg, IFLA_INFO_KIND, (int)strlen("bridge"), "bridge") < 0 ||
	    !(data = nla_nest_start(msg, IFLA_INFO_DATA)) ||
	    (vlan_filtering && nla_put_u8(msg, IFLA_BR_VLAN_FILTERING, 1) < 0))
		return -EMSGSIZE;
	nla_nest_end_keep_empty(msg, data);
	if (nla_nest_end(msg, info) < 0)
		return -EMSGSIZE;
	return nlsock_request(ns, msg);
}

struct bridge_get {
	int ifindex;
	bool found, bridge;
	struct net_bridge_info info;
};

static void parse_info_data(const struct nlattr *data, struct net_bridge_info *ret)
{
	const struct nlattr *a;
	int rem;

	nla_for_each_nested(a, data, rem) {
		if (nla_type(a) == IFLA_BR_VLAN_FILTERING && nla_len(a) >= 1)
			ret->vlan_filtering = nla_get_u8(a) != 0;
		else if (nla_type(a) == IFLA_BR_VLAN_DEFAULT_PVID && nla_len(a) >= 2)
			ret->default_pvid = nla_get_u16(a);
	}
}

static int bridge_get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct bridge_get *g = data;
	const struct ifinfomsg *ifi = nlmsg_data(nlh);
	const struct nlattr *a, *info;
	int rem, rem_info;

	if (nlh->nlmsg_type != RTM_NEWLINK || nlmsg_datalen(nlh) < (int)sizeof(*ifi) ||
	    ifi->ifi_index != g->ifindex)
		return 0;
	g->found = true;
	nlmsg_for_each_attr(a, nlh, sizeof(*ifi), rem) {
		if (nla_type(a) != IFLA_LINKINFO)
			continue;
		nla_for_each_nested(info, a, rem_info) {
			if (nla_type(info) == IFLA_INFO_KIND && nla_len(info) >= 6 &&
			    memcmp(nla_data(info), "bridge", 6) == 0 &&
			    (nla_len(info) == 6 || ((const char *)nla_data(info))[6] == '\0'))
				g->bridge = true;
			else if (nla_type(info) == IFLA_INFO_DATA)
				parse_info_data(info, &g->info);
		}
	}
	return 0;
}

int net_bridge_get(struct net_ns *ns, int ifindex, struct net_bridge_info *ret)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
	struct bridge_get g = { .ifindex = ifindex };
	int r;

	if (ifindex <= 0)
		return -EINVAL;
	r = nlsock_msg_new(RTM_GETLINK, 0, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	r = nlsock_talk(ns, NETLINK_ROUTE, msg, bridge_get_cb, NULL, &g);
	if (r < 0)
		return r;
	if (!g.found)
		return -ENODEV;
	if (!g.bridge)
		return -EMEDIUMTYPE;
	*ret = g.info;
	return 0;
}

/* A request to the bridge a port belongs to: AF_BRIDGE, the port's index. */
static int port_msg(uint16_t type, int ifindex, struct nl_msg **ret)
{
	struct ifinfomsg ifi = { .ifi_family = AF_BRIDGE, .ifi_index = ifindex };

	if (ifindex <= 0)
		return -EINVAL;
	return nlsock_msg_new(type, 0, &ifi, sizeof(ifi), ret);
}

int net_bridge_port_set(struct net_ns *ns, int ifindex, bool hairpin, bool isolated)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct nlattr *proto;
	int r;

	net_ack_clear();
	r = port_msg(RTM_SETLINK, ifindex, &msg);
	if (r < 0)
		return r;
	proto = nla_nest_start(msg, NLA_F_NESTED | IFLA_PROTINFO);
	if (!proto || nla_put_u8(msg, IFLA_BRPORT_MODE, hairpin) < 0 ||
	    nla_put_u8(msg, IFLA_BRPORT_ISOLATED, isolated) < 0 || nla_nest_end(msg, proto) < 0)
		return -EMSGSIZE;
	return nlsock_request(ns, msg);
}

static int put_vlan(struct nl_msg *msg, uint16_t flags, uint16_t vid)
{
	struct bridge_vlan_info info = { .flags = flags, .vid = vid };

	return nla_put(msg, IFLA_BRIDGE_VLAN_INFO, sizeof(info), &info);
}

/* IFLA_AF_SPEC: to the master (the bridge), each VLAN or range of VLANs. */
static int vlan_msg(uint16_t type, int ifindex, const struct net_bridge_vlans *v, size_t n,
		    struct nl_msg **ret)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct nlattr *spec;
	int r;

	for (size_t i = 0; i < n; i++)
		if (v[i].min < 1 || v[i].max > 4094 || v[i].min > v[i].max ||
		    (v[i].min != v[i].max && (v[i].flags & BRIDGE_VLAN_INFO_PVID)))
			return -EINVAL;
	r = port_msg(type, ifindex, &msg);
	if (r < 0)
		return r;
	spec = nla_nest_start(msg, IFLA_AF_SPEC);
	if (!spec || nla_put_u16(msg, IFLA_BRIDGE_FLAGS, BRIDGE_FLAGS_MASTER) < 0)
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++) {
		uint16_t f = v[i].flags & (BRIDGE_VLAN_INFO_PVID | BRIDGE_VLAN_INFO_UNTAGGED);

		if (v[i].min == v[i].max)
			r = put_vlan(msg, f, v[i].min);
		else if ((r = put_vlan(msg, f | BRIDGE_VLAN_INFO_RANGE_BEGIN, v[i].min)) >= 0)
			r = put_vlan(msg, f | BRIDGE_VLAN_INFO_RANGE_END, v[i].max);
		if (r < 0)
			return -EMSGSIZE;
	}
	if (nla_nest_end(msg, spec) < 0)
		return -EMSGSIZE;
	*ret = TAKE_PTR(msg);
	return 0;
}

int net_bridge_vlan_add(struct net_ns *ns, int ifindex, const struct net_bridge_vlans *v, size_t n)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	net_ack_clear();
	r = vlan_msg(RTM_SETLINK, ifindex, v, n, &msg);
	return r < 0 ? r : nlsock_request(ns, msg);
}

int net_bridge_vlan_del(struct net_ns *ns, int ifindex, const struct net_bridge_vlans *v, size_t n)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	net_ack_clear();
	r = vlan_msg(RTM_DELLINK, ifindex, v, n, &msg);
	return r < 0 ? r : nlsock_request(ns, msg);
}
