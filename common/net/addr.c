/* Addresses: rtnetlink requests and dumps */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/object.h>
#include <netlink/route/addr.h>

#include "common/net/addr.h"
#include "common/net/neterr.h"
#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/util/cleanup.h"

static bool family_ok(int family)
{
	return family == AF_INET || family == AF_INET6;
}

/* RTM_NEWADDR or RTM_DELADDR of one address of a link. */
static int addr_msg(int type, int flags, int ifindex, const struct ip_prefix *prefix,
		    struct nl_msg **ret)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifaddrmsg ifa = { 0 };
	int alen, r;

	if (ifindex <= 0 || !prefix || !family_ok(prefix->addr.family))
		return -EINVAL;
	alen = (int)ip_addr_size(&prefix->addr);
	if (prefix->len > (unsigned int)alen * 8)
		return -EINVAL;
	ifa.ifa_family = (uint8_t)prefix->addr.family;
	ifa.ifa_prefixlen = (uint8_t)prefix->len;
	ifa.ifa_index = (uint32_t)ifindex;
	ifa.ifa_scope = RT_SCOPE_UNIVERSE;
	r = nlsock_msg_new((uint16_t)type, (uint16_t)flags, &ifa, sizeof(ifa), &msg);
	if (r < 0)
		return r;
	if (nla_put(msg, IFA_LOCAL, alen, prefix->addr.bytes) < 0 ||
	    nla_put(msg, IFA_ADDRESS, alen, prefix->addr.bytes) < 0)
		return -EMSGSIZE;
	*ret = TAKE_PTR(msg);
	return 0;
}

int net_addr_add(struct net_ns *ns, int ifindex, const struct ip_prefix *prefix)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	net_ack_clear();
	r = addr_msg(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, ifindex, prefix, &msg);
	if (r < 0)
		return r;
	/* As the reference's netlink library: a broadcast address where the subnet has one. */
	if (prefix->addr.family == AF_INET && prefix->len < 31) {
		uint8_t brd[4];

		for (unsigned int i = 0; i < 4; i++) {
			unsigned int bits = prefix->len > i * 8 ? prefix->len - i * 8 : 0;
			uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));

			brd[i] = prefix->addr.bytes[i] | (uint8_t)~mask;
		}
		if (nla_put(msg, IFA_BROADCAST, sizeof(brd), brd) < 0)
			return -EMSGSIZE;
	}
	return nlsock_request(ns, msg);
}

int net_addr_del(struct net_ns *ns, int ifindex, const struct ip_prefix *prefix)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	net_ack_clear();
	r = addr_msg(RTM_DELADDR, 0, ifindex, prefix, &msg);
	if (r < 0)
		return r;
	return nlsock_request(ns, msg);
}

/* Address dump */

struct addr_list {
	int ifindex;
	int family;
	struct net_addr *v;
	size_t n;
	size_t cap;
};

static int addr_cb(struct nl_object *obj, const struct nlmsghdr *nlh, void *data)
{
	struct rtnl_addr *ra = (struct rtnl_addr *)obj;
	struct addr_list *l = data;
	struct net_addr a = { 0 };
	int family, flags, r;

	(void)nlh;
	if (strcmp(nl_object_get_type(obj), "route/addr") != 0)
		return 0;
	family = rtnl_addr_get_family(ra);
	if (rtnl_addr_get_ifindex(ra) != l->ifindex || !family_ok(family) ||
	    (l->family != AF_UNSPEC && family != l->family))
		return 0;
	/* libnl takes IFA_ADDRESS as the local address when IPv6 sends no IFA_LOCAL. */
	if (!nlsock_ip_from_addr(rtnl_addr_get_local(ra), family, &a.prefix.addr))
		return 0;
	a.prefix.len = rtnl_addr_get_prefixlen(ra);
	flags = rtnl_addr_get_flags(ra);
	a.tentative = flags & IFA_F_TENTATIVE;
	a.dadfailed = flags & IFA_F_DADFAILED;
	a.scope = (unsigned int)rtnl_addr_get_scope(ra);
	r = nlsock_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v));
	if (r < 0)
		return r;
	l->v[l->n++] = a;
	return 0;
}

static void addr_reset(void *data)
{
	struct addr_list *l = data;

	l->n = 0;
}

int net_addr_list(struct net_ns *ns, int ifindex, int family, struct net_addr **ret,
		  size_t *ret_n)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct addr_list l = { .ifindex = ifindex, .family = family };
	struct ifaddrmsg ifa = { .ifa_family = (uint8_t)family };
	int r;

	net_ack_clear();
	if (ifindex <= 0 || (family != AF_UNSPEC && !family_ok(family)))
		return -EINVAL;
	r = nlsock_msg_new(RTM_GETADDR, NLM_F_DUMP, &ifa, sizeof(ifa), &msg);
	if (r < 0)
		return r;
	r = nlsock_query(ns, msg, addr_cb, addr_reset, &l);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*ret = l.v;
	*ret_n = l.n;
	return 0;
}
