/* Links: the only code that talks rtnetlink about links */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/addr.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/object.h>
#include <netlink/route/link.h>
#include <netlink/route/link/macvlan.h>

#include "common/net/link-internal.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/util/cleanup.h"

/* One member of IFLA_INFO_DATA, by the link's kind; wrong-size members are skipped. */
static void info_data_member(const struct nlattr *a, struct net_link *l)
{
	int type = nla_type(a);
	int len = nla_len(a);

	if (strcmp(l->kind, "ipoib") == 0 && len == sizeof(uint16_t)) {
		if (type == IFLA_IPOIB_PKEY)
			l->ipoib_pkey = nla_get_u16(a);
		else if (type == IFLA_IPOIB_MODE)
			l->ipoib_mode = nla_get_u16(a);
		else if (type == IFLA_IPOIB_UMCAST)
			l->ipoib_umcast = nla_get_u16(a);
	} else if (strcmp(l->kind, "ipvlan") == 0 && len == sizeof(uint16_t)) {
		if (type == IFLA_IPVLAN_MODE)
			l->ipvlan_mode = nla_get_u16(a);
		else if (type == IFLA_IPVLAN_FLAGS)
			l->ipvlan_flags = nla_get_u16(a);
	} else if (strcmp(l->kind, "vlan") == 0 && len == sizeof(uint16_t) && type == IFLA_VLAN_ID) {
		l->vlan_id = nla_get_u16(a);
	} else if (strcmp(l->kind, "vrf") == 0 && len == sizeof(uint32_t) && type == IFLA_VRF_TABLE) {
		l->vrf_table = nla_get_u32(a);
	}
}

/*
 * IFLA_INFO_DATA read by hand: libnl has no object for IPoIB nor ipvlan's
 * flags, and a static link pulls in only the link kinds a getter names.
 */
static void info_data_from_msg(const struct nlmsghdr *nlh, struct net_link *l)
{
	const struct nlattr *a, *info, *member;
	int rem, rem_info, rem_data;

	if (nlmsg_datalen(nlh) < (int)sizeof(struct ifinfomsg))
		return;
	nlmsg_for_each_attr(a, nlh, sizeof(struct ifinfomsg), rem) {
		if (nla_type(a) != IFLA_LINKINFO)
			continue;
		nla_for_each_nested(info, a, rem_info) {
			if (nla_type(info) != IFLA_INFO_DATA)
				continue;
			nla_for_each_nested(member, info, rem_data)
				info_data_member(member, l);
		}
	}
}

static int link_from_object(struct nl_object *obj, const struct nlmsghdr *nlh,
			    struct net_link *ret)
{
	struct rtnl_link *rl = (struct rtnl_link *)obj;
	struct net_link l = { 0 };
	struct nl_addr *hw;
	const char *s;

	if (strcmp(nl_object_get_type(obj), "route/link") != 0)
		return -EPROTO;
	l.ifindex = rtnl_link_get_ifindex(rl);
	s = rtnl_link_get_name(rl);
	snprintf(l.name, sizeof(l.name), "%s", s ? s : "");
	s = rtnl_link_get_type(rl);
	snprintf(l.kind, sizeof(l.kind), "%s", s ? s : "");
	l.mtu = rtnl_link_get_mtu(rl);
	l.flags = rtnl_link_get_flags(rl);
	l.type = (unsigned short)rtnl_link_get_arptype(rl);
	hw = rtnl_link_get_addr(rl);
	if (hw) {
		l.hwaddr_len = nl_addr_get_len(hw);
		if (l.hwaddr_len > sizeof(l.hwaddr))
			l.hwaddr_len = sizeof(l.hwaddr);
		memcpy(l.hwaddr, nl_addr_get_binary_addr(hw), l.hwaddr_len);
	}
	l.link_ifindex = rtnl_link_get_link(rl);
	l.master_ifindex = rtnl_link_get_master(rl);
	l.operstate = rtnl_link_get_operstate(rl);
	s = rtnl_link_get_ifalias(rl);
	snprintf(l.alias, sizeof(l.alias), "%s", s ? s : "");
	l.master_ifindex = rtnl_link_get_master(rl);
	if (strcmp(l.kind, "macvlan") == 0)
		l.macvlan_mode = rtnl_link_macvlan_get_mode(rl);
	else
		info_data_from_msg(nlh, &l);
	*ret = l;
	return 0;
}

struct link_parsed {
	const struct nlmsghdr *nlh;
	struct net_link *link;
	int r;
};

static void link_parsed_cb(struct nl_object *obj, void *data)
{
	struct link_parsed *p = data;

	p->r = link_from_object(obj, p->nlh, p->link);
}

int net_link_parse(const void *msg, size_t len, struct net_link *ret)
{
	const struct nlmsghdr *nlh = msg;
	struct link_parsed p = { .link = ret, .r = -EBADMSG };
	struct nl_msg *m;
	int r;

	if (len < sizeof(*nlh) || nlh->nlmsg_len > len || nlh->nlmsg_len < NLMSG_HDRLEN ||
	    nlh->nlmsg_type != RTM_NEWLINK)
		return -EBADMSG;
	m = nlmsg_convert((struct nlmsghdr *)nlh);
	if (!m)
		return -ENOMEM;
	nlmsg_set_proto(m, NETLINK_ROUTE);
	p.nlh = nlmsg_hdr(m);
	r = nl_msg_parse(m, link_parsed_cb, &p);
	nlmsg_free(m);
	return r < 0 ? -EBADMSG : p.r;
}

/* What a lookup looks for; the first link that matches is kept. */
struct link_match {
	const uint8_t *hwaddr;
	size_t hwaddr_len;
	const char *alias;
	bool (*match)(const struct net_link *link, void *data);
	void *data;
	bool found;
	struct net_link link;
};

static int link_match_cb(struct nl_object *obj, const struct nlmsghdr *nlh, void *data)
{
	struct link_match *m = data;
	struct net_link l;
	int r;

	if (m->found)
		return 0;
	r = link_from_object(obj, nlh, &l);
	if (r < 0)
		return r;
	if (m->hwaddr && (l.hwaddr_len != m->hwaddr_len || memcmp(l.hwaddr, m->hwaddr, l.hwaddr_len)))
		return 0;
	if (m->alias && strcmp(l.alias, m->alias) != 0)
		return 0;
	if (m->match && !m->match(&l, m->data))
		return 0;
	m->link = l;
	m->found = true;
	return 0;
}

static void link_match_reset(void *data)
{
	struct link_match *m = data;

	m->found = false;
}

static int link_get(struct net_ns *ns, int ifindex, const char *name, struct net_link *ret)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct link_match m = { 0 };
	int r;

	r = rtnl_link_build_get_request(ifindex, name, &msg);
	if (r < 0)
		return nlsock_nle_errno(r);
	r = nlsock_query(ns, msg, link_match_cb, link_match_reset, &m);
	if (r < 0)
		return r;
	if (!m.found)
		return -ENODEV;
	*ret = m.link;
	return 0;
}

static int link_find(struct net_ns *ns, struct link_match *m, struct net_link *ret)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	int r;

	r = nlsock_msg_new(RTM_GETLINK, NLM_F_DUMP, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	r = nlsock_query(ns, msg, link_match_cb, link_match_reset, m);
	if (r < 0)
		return r;
	if (!m->found)
		return -ENODEV;
	*ret = m->link;
	return 0;
}

int net_link_get_by_name(struct net_ns *ns, const char *name, struct net_link *ret)
{
	if (!name || !*name || strlen(name) >= IFNAMSIZ)
		return -EINVAL;
	return link_get(ns, 0, name, ret);
}

int net_link_get_by_index(struct net_ns *ns, int ifindex, struct net_link *ret)
{
	if (ifindex <= 0)
		return -EINVAL;
	return link_get(ns, ifindex, NULL, ret);
}

int net_link_get_by_hwaddr(struct net_ns *ns, const uint8_t *hwaddr, size_t len,
			   struct net_link *ret)
{
	struct link_match m = { .hwaddr = hwaddr, .hwaddr_len = len };

	if (!hwaddr || len == 0 || len > HWADDR_MAX)
		return -EINVAL;
	return link_find(ns, &m, ret);
}

int net_link_get_by_alias(struct net_ns *ns, const char *alias, struct net_link *ret)
{
	struct link_match m = { .alias = alias };

	if (!alias || !*alias)
		return -EINVAL;
	return link_find(ns, &m, ret);
}

int net_link_find(struct net_ns *ns, bool (*match)(const struct net_link *link, void *data),
		  void *data,
		  struct net_link *ret)
{
	struct link_match m = { .match = match, .data = data };

	if (!match)
		return -EINVAL;
	return link_find(ns, &m, ret);
}

/* Every link of a dump, in the kernel's order. */
struct link_all {
	struct net_link *v;
	size_t n;
	size_t cap;
};

static int link_all_cb(struct nl_object *obj, const struct nlmsghdr *nlh, void *data)
{
	struct link_all *l = data;
	int r;

	r = nlsock_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v));
	if (r < 0)
		return r;
	r = link_from_object(obj, nlh, &l->v[l->n]);
	if (r < 0)
		return r;
	l->n++;
	return 0;
}

static void link_all_reset(void *data)
{
	struct link_all *l = data;

	l->n = 0;
}

int net_link_list(struct net_ns *ns, struct net_link **ret, size_t *ret_n)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct link_all l = { 0 };
	int r;

	net_ack_clear();
	r = nlsock_msg_new(RTM_GETLINK, NLM_F_DUMP, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	r = nlsock_query(ns, msg, link_all_cb, link_all_reset, &l);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*ret = l.v;
	*ret_n = l.n;
	return 0;
}

/* Requests that change a link */

static int link_msg(uint16_t type, uint16_t flags, int ifindex, struct nl_msg **ret)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };

	return nlsock_msg_new(type, flags, &ifi, sizeof(ifi), ret);
}

static int macvlan_fill_data(struct nl_msg *msg, const struct net_child *c)
{
	if (nla_put_u32(msg, IFLA_MACVLAN_MODE, c->macvlan.mode) < 0)
		return -EMSGSIZE;
	if (c->macvlan.bc_queue_len > 0 &&
	    nla_put_u32(msg, IFLA_MACVLAN_BC_QUEUE_LEN, c->macvlan.bc_queue_len) < 0)
		return -EMSGSIZE;
	return 0;
}

/* All three, u16, in this order: what iproute2 and vishvananda/netlink send. */
static int ipoib_fill_data(struct nl_msg *msg, const struct net_child *c)
{
	if (nla_put_u16(msg, IFLA_IPOIB_PKEY, c->ipoib.pkey) < 0 ||
	    nla_put_u16(msg, IFLA_IPOIB_MODE, c->ipoib.mode) < 0 ||
	    nla_put_u16(msg, IFLA_IPOIB_UMCAST, c->ipoib.umcast) < 0)
		return -EMSGSIZE;
	return 0;
}

/* Both, u16, mode first: what iproute2 and vishvananda/netlink send. */
static int ipvlan_fill_data(struct nl_msg *msg, const struct net_child *c)
{
	if (nla_put_u16(msg, IFLA_IPVLAN_MODE, c->ipvlan.mode) < 0 ||
	    nla_put_u16(msg, IFLA_IPVLAN_FLAGS, c->ipvlan.flags) < 0)
		return -EMSGSIZE;
	return 0;
}

/* The id alone: the protocol is the kernel's default, 802.1Q, as `ip link` leaves it. */
static int vlan_fill_data(struct nl_msg *msg, const struct net_child *c)
{
	return nla_put_u16(msg, IFLA_VLAN_ID, c->vlan.id) < 0 ? -EMSGSIZE : 0;
}

static int vrf_fill_data(struct nl_msg *msg, const struct net_child *c)
{
	return nla_put_u32(msg, IFLA_VRF_TABLE, c->vrf.table) < 0 ? -EMSGSIZE : 0;
}

static int child_linkinfo(struct nl_msg *msg, const struct net_child *c)
{
	int (*fill)(struct nl_msg *, const struct net_child *) = NULL;
	const char *kind = NULL;
	struct nlattr *info, *data;
	int r;

	switch (c->kind) {
	case NET_CHILD_MACVLAN:
		kind = "macvlan";
		fill = macvlan_fill_data;
		break;
	case NET_CHILD_IPOIB:
		kind = "ipoib";
		fill = ipoib_fill_data;
		break;
	case NET_CHILD_DUMMY:
		/* No IFLA_INFO_DATA at all, as `ip link add ... type dummy` sends. */
		kind = "dummy";
		break;
	case NET_CHILD_IFB:
		kind = "ifb";
		break;
	case NET_CHILD_IPVLAN:
		kind = "ipvlan";
		fill = ipvlan_fill_data;
		break;
	case NET_CHILD_VLAN:
		kind = "vlan";
		fill = vlan_fill_data;
		break;
	case NET_CHILD_VRF:
		kind = "vrf";
		fill = vrf_fill_data;
		break;
	}
	if (!kind)
		return -EINVAL;
	/* Without the terminator, byte for byte what iproute2 sends (the kernel takes both). */
	info = nla_nest_start(msg, IFLA_LINKINFO);
	if (!info || nla_put(msg, IFLA_INFO_KIND, (int)strlen(kind), kind) < 0)
		return -EMSGSIZE;
	if (!fill)
		return nla_nest_end(msg, info) < 0 ? -EMSGSIZE : 0;
	data = nla_nest_start(msg, IFLA_INFO_DATA);
	if (!data)
		return -EMSGSIZE;
	r = fill(msg, c);
	if (r < 0)
		return r;
	if (nla_nest_end(msg, data) < 0 || nla_nest_end(msg, info) < 0)
		return -EMSGSIZE;
	return 0;
}

/* The RTM_NEWLINK of net_link_create(), as a message. */
static int create_msg(const struct net_child *c, struct nl_msg **ret)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	bool masterless;
	int r;

	if (!c)
		return -EINVAL;
	masterless = c->kind == NET_CHILD_DUMMY || c->kind == NET_CHILD_IFB || c->kind == NET_CHILD_VRF;
	if (!c->name || !*c->name || strlen(c->name) >= IFNAMSIZ ||
	    (masterless ? c->master_ifindex != 0 : c->master_ifindex <= 0))
		return -EINVAL;
	/* What the kernel refuses with a bare EINVAL, refused here by name. */
	if ((c->kind == NET_CHILD_VLAN && c->vlan.id >= 4095) ||
	    (c->kind == NET_CHILD_VRF && c->vrf.table == 0) ||
	    (c->kind == NET_CHILD_IPVLAN && c->ipvlan.mode > IPVLAN_MODE_L3S))
		return -EINVAL;
	if (c->hwaddr && (c->hwaddr_len == 0 || c->hwaddr_len > HWADDR_MAX))
		return -EINVAL;
	/* The kernel applies the flags once the link is registered, as `ip link add ... up`. */
	if (c->up) {
		ifi.ifi_flags = IFF_UP;
		ifi.ifi_change = IFF_UP;
	}
	r = nlsock_msg_new(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	if (nla_put_string(msg, IFLA_IFNAME, c->name) < 0 ||
	    (c->master_ifindex > 0 && nla_put_u32(msg, IFLA_LINK, (uint32_t)c->master_ifindex) < 0))
		return -EMSGSIZE;
	if (c->netns_fd >= 0 && nla_put_u32(msg, IFLA_NET_NS_FD, (uint32_t)c->netns_fd) < 0)
		return -EMSGSIZE;
	if (c->mtu > 0 && nla_put_u32(msg, IFLA_MTU, c->mtu) < 0)
		return -EMSGSIZE;
	if (c->has_txqlen && nla_put_u32(msg, IFLA_TXQLEN, c->txqlen) < 0)
		return -EMSGSIZE;
	if (c->hwaddr && nla_put(msg, IFLA_ADDRESS, (int)c->hwaddr_len, c->hwaddr) < 0)
		return -EMSGSIZE;
	r = child_linkinfo(msg, c);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(msg);
	return 0;
}

int net_link_build_create(const struct net_child *c, void *buf, size_t size)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	const struct nlmsghdr *nlh;
	int r;

	r = create_msg(c, &msg);
	if (r < 0)
		return r;
	nlh = nlmsg_hdr(msg);
	if (nlh->nlmsg_len > size)
		return -EMSGSIZE;
	memcpy(buf, nlh, nlh->nlmsg_len);
	return (int)nlh->nlmsg_len;
}

int net_link_create(struct net_ns *ns, const struct net_child *child)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	net_ack_clear();
	r = create_msg(child, &msg);
	if (r < 0)
		return r;
	return nlsock_request(ns, msg);
}

int net_link_delete(struct net_ns *ns, int ifindex)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	net_ack_clear();
	if (ifindex <= 0)
		return -EINVAL;
	r = link_msg(RTM_DELLINK, 0, ifindex, &msg);
	if (r < 0)
		return r;
	return nlsock_request(ns, msg);
}

/* RTM_NEWLINK on an existing link with one attribute. */
static int link_set_attr(struct net_ns *ns, int ifindex, int type, size_t len, const void *data)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	net_ack_clear();
	if (ifindex <= 0)
		return -EINVAL;
	r = link_msg(RTM_NEWLINK, 0, ifindex, &msg);
	if (r < 0)
		return r;
	if (nla_put(msg, type, (int)len, data) < 0)
		return -EMSGSIZE;
	return nlsock_request(ns, msg);
}

int net_link_move(struct net_ns *ns, int ifindex, int netns_fd, const char *alias)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	size_t len = alias ? strlen(alias) : 0;
	int r;

	net_ack_clear();
	if (ifindex <= 0 || netns_fd < 0 || len >= sizeof(((struct net_link *)NULL)->alias))
		return -EINVAL;
	r = link_msg(RTM_NEWLINK, 0, ifindex, &msg);
	if (r < 0)
		return r;
	if (nla_put_u32(msg, IFLA_NET_NS_FD, (uint32_t)netns_fd) < 0)
		return -EMSGSIZE;
	/* Without the terminator, as net_link_set_alias() sends it. */
	if (alias && nla_put(msg, IFLA_IFALIAS, (int)len, alias) < 0)
		return -EMSGSIZE;
	return nlsock_request(ns, msg);
}

int net_link_set_netns(struct net_ns *ns, int ifindex, int netns_fd)
{
	if (netns_fd < 0)
		return -EBADF;
	return net_link_move(ns, ifindex, netns_fd, NULL);
}

int net_link_set_master(struct net_ns *ns, int ifindex, int master_ifindex)
{
	uint32_t v = (uint32_t)master_ifindex;

	if (master_ifindex < 0)
		return -EINVAL;
	return link_set_attr(ns, ifindex, IFLA_MASTER, sizeof(v), &v);
}

int net_link_set_name(struct net_ns *ns, int ifindex, const char *name)
{
	if (!name || !*name || strlen(name) >= IFNAMSIZ)
		return -EINVAL;
	return link_set_attr(ns, ifindex, IFLA_IFNAME, strlen(name) + 1, name);
}

int net_link_set_up(struct net_ns *ns, int ifindex, bool up)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC,
		.ifi_index = ifindex,
		.ifi_change = IFF_UP,
		.ifi_flags = up ? IFF_UP : 0,
	};
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	net_ack_clear();
	if (ifindex <= 0)
		return -EINVAL;
	r = nlsock_msg_new(RTM_NEWLINK, 0, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	return nlsock_request(ns, msg);
}

int net_link_set_mtu(struct net_ns *ns, int ifindex, unsigned int mtu)
{
	uint32_t v = mtu;

	return link_set_attr(ns, ifindex, IFLA_MTU, sizeof(v), &v);
}

int net_link_set_alias(struct net_ns *ns, int ifindex, const char *alias)
{
	size_t len;

	if (!alias)
		return -EINVAL;
	len = strlen(alias);
	/* Sent without the terminator, as iproute2 does: an empty payload clears the alias. */
	if (len >= sizeof(((struct net_link *)NULL)->alias))
		return -EINVAL;
	return link_set_attr(ns, ifindex, IFLA_IFALIAS, len, alias);
}
