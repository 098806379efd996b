/* Link attributes a meta plugin tunes: flags, hardware address, queue length, MTU bounds */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/linkattr.h"
#include "common/net/neterr.h"
#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/util/cleanup.h"

struct linkattr_reply {
	bool found;
	struct net_linkattr attr;
};

static unsigned int attr_u32(const struct nlattr *a)
{
	return nla_len(a) >= (int)sizeof(uint32_t) ? nla_get_u32(a) : 0;
}

/* Read raw: libnl's link object has no getter for the MTU bounds. */
static int linkattr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct linkattr_reply *p = data;
	struct net_linkattr l = { 0 };
	const struct ifinfomsg *ifi;
	const struct nlattr *a;
	int rem;

	if (nlh->nlmsg_type != RTM_NEWLINK || nlmsg_datalen(nlh) < (int)sizeof(*ifi))
		return 0;
	ifi = nlmsg_data(nlh);
	l.ifindex = ifi->ifi_index;
	l.flags = ifi->ifi_flags;
	nlmsg_for_each_attr(a, nlh, sizeof(*ifi), rem) {
		switch (nla_type(a)) {
		case IFLA_MTU:
			l.mtu = attr_u32(a);
			break;
		case IFLA_MIN_MTU:
			l.min_mtu = attr_u32(a);
			break;
		case IFLA_MAX_MTU:
			l.max_mtu = attr_u32(a);
			break;
		case IFLA_TXQLEN:
			l.txqlen = attr_u32(a);
			break;
		case IFLA_ADDRESS:
			if (nla_len(a) > 0 && (size_t)nla_len(a) <= sizeof(l.hwaddr)) {
				l.hwaddr_len = (size_t)nla_len(a);
				memcpy(l.hwaddr, nla_data(a), l.hwaddr_len);
			}
			break;
		default:
			break;
		}
	}
	p->attr = l;
	p->found = true;
	return 0;
}

int net_linkattr_get(struct net_ns *ns, const char *name, struct net_linkattr *ret)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct linkattr_reply p = { 0 };
	int r;

	net_ack_clear();
	if (!name || !*name || strlen(name) >= IFNAMSIZ)
		return -EINVAL;
	r = nlsock_msg_new(RTM_GETLINK, 0, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	if (nla_put_string(msg, IFLA_IFNAME, name) < 0)
		return -EMSGSIZE;
	r = nlsock_talk(ns, NETLINK_ROUTE, msg, linkattr_cb, NULL, &p);
	if (r < 0)
		return r;
	if (!p.found)
		return -ENODEV;
	*ret = p.attr;
	return 0;
}

static int linkattr_set(struct net_ns *ns, int ifindex, unsigned int change, unsigned int flags,
			int type, size_t len, const void *data)
{
	struct ifinfomsg ifi = {
		.ifi_family = AF_UNSPEC,
		.ifi_index = ifindex,
		.ifi_change = change,
		.ifi_flags = flags,
	};
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	net_ack_clear();
	if (ifindex <= 0)
		return -EINVAL;
	r = nlsock_msg_new(RTM_NEWLINK, 0, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	if (data && nla_put(msg, type, (int)len, data) < 0)
		return -EMSGSIZE;
	return nlsock_request(ns, msg);
}

int net_linkattr_set_flag(struct net_ns *ns, int ifindex, unsigned int flag, bool on)
{
	if (flag != IFF_PROMISC && flag != IFF_ALLMULTI)
		return -EINVAL;
	return linkattr_set(ns, ifindex, flag, on ? flag : 0, 0, 0, NULL);
}

int net_linkattr_set_hwaddr(struct net_ns *ns, int ifindex, const uint8_t *hwaddr, size_t len)
{
	if (!hwaddr || len == 0 || len > HWADDR_MAX)
		return -EINVAL;
	return linkattr_set(ns, ifindex, 0, 0, IFLA_ADDRESS, len, hwaddr);
}

int net_linkattr_set_txqlen(struct net_ns *ns, int ifindex, uint32_t txqlen)
{
	return linkattr_set(ns, ifindex, 0, 0, IFLA_TXQLEN, sizeof(txqlen), &txqlen);
}
