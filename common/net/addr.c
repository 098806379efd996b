/* Addresses and routes: rtnetlink requests and dumps */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/addr.h>
#include <netlink/msg.h>
#include <netlink/object.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>

#include "common/net/addr.h"
#include "common/net/link.h"
#include "common/net/nlsock.h"
#include "common/util/cleanup.h"

DEFINE_CLEANUP_FUNC(nlmsg_freep, struct nl_msg *, nlmsg_free)

static bool family_ok(int family)
{
	return family == AF_INET || family == AF_INET6;
}

/* An nl_addr of the given family as an ip_addr; false when it is not one. */
static bool ip_from_nl(const struct nl_addr *a, int family, struct ip_addr *ret)
{
	struct ip_addr ip = { .family = family };
	size_t n;

	if (!a || nl_addr_get_family(a) != family)
		return false;
	n = ip_addr_size(&ip);
	/* A default route's destination comes with no bytes at all. */
	if (nl_addr_get_len(a) != 0 && nl_addr_get_len(a) != n)
		return false;
	memcpy(ip.bytes, nl_addr_get_binary_addr(a), nl_addr_get_len(a));
	*ret = ip;
	return true;
}

/* Builds the dump request for one family. */
static int dump_msg(int type, int family, struct nl_msg **ret)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	union {
		struct ifaddrmsg ifa;
		struct rtmsg rtm;
	} hdr;
	size_t len;
	int r;

	memset(&hdr, 0, sizeof(hdr));
	if (type == RTM_GETADDR) {
		hdr.ifa.ifa_family = (uint8_t)family;
		len = sizeof(hdr.ifa);
	} else {
		hdr.rtm.rtm_family = (uint8_t)family;
		len = sizeof(hdr.rtm);
	}
	msg = nlmsg_alloc_simple(type, NLM_F_DUMP);
	if (!msg)
		return -ENOMEM;
	r = nlmsg_append(msg, &hdr, len, NLMSG_ALIGNTO);
	if (r < 0)
		return nlsock_nle_errno(r);
	*ret = TAKE_PTR(msg);
	return 0;
}

/* Requests */

int net_addr_add(int ifindex, const struct ip_prefix *prefix)
{
	struct nlsock_buf b;
	struct nlmsghdr *nlh;
	struct ifaddrmsg ifa = { 0 };
	size_t alen;

	nlsock_ack_clear();
	if (ifindex <= 0 || !prefix || !family_ok(prefix->addr.family))
		return -EINVAL;
	alen = ip_addr_size(&prefix->addr);
	if (prefix->len > alen * 8)
		return -EINVAL;
	ifa.ifa_family = (uint8_t)prefix->addr.family;
	ifa.ifa_prefixlen = (uint8_t)prefix->len;
	ifa.ifa_index = (uint32_t)ifindex;
	ifa.ifa_scope = RT_SCOPE_UNIVERSE;
	nlh = nlsock_msg_init(b.data, sizeof(b.data), RTM_NEWADDR,
			      NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, &ifa, sizeof(ifa));
	if (!nlh ||
	    !mnl_attr_put_check(nlh, sizeof(b.data), IFA_LOCAL, alen, prefix->addr.bytes) ||
	    !mnl_attr_put_check(nlh, sizeof(b.data), IFA_ADDRESS, alen, prefix->addr.bytes))
		return -EMSGSIZE;
	/* As the reference's netlink library: a broadcast address where the subnet has one. */
	if (prefix->addr.family == AF_INET && prefix->len < 31) {
		uint8_t brd[4];

		for (unsigned int i = 0; i < 4; i++) {
			unsigned int bits = prefix->len > i * 8 ? prefix->len - i * 8 : 0;
			uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));

			brd[i] = prefix->addr.bytes[i] | (uint8_t)~mask;
		}
		if (!mnl_attr_put_check(nlh, sizeof(b.data), IFA_BROADCAST, sizeof(brd), brd))
			return -EMSGSIZE;
	}
	return nlsock_rtnl_request(nlh);
}

int net_route_add(const struct net_route *route)
{
	struct nlsock_buf b;
	struct nlmsghdr *nlh;
	struct rtmsg rtm = { 0 };
	unsigned int table;
	size_t alen;

	nlsock_ack_clear();
	if (!route || route->ifindex <= 0 || !family_ok(route->dst.addr.family))
		return -EINVAL;
	alen = ip_addr_size(&route->dst.addr);
	if (route->dst.len > alen * 8 || route->scope > 255)
		return -EINVAL;
	if (route->has_gw && route->gw.family != route->dst.addr.family)
		return -EINVAL;
	table = route->table ? route->table : RT_TABLE_MAIN;
	rtm.rtm_family = (uint8_t)route->dst.addr.family;
	rtm.rtm_dst_len = (uint8_t)route->dst.len;
	/* Tables past 255 only fit in RTA_TABLE. */
	rtm.rtm_table = table < 256 ? (uint8_t)table : RT_TABLE_UNSPEC;
	rtm.rtm_protocol = RTPROT_BOOT;
	/* Unset means universe, as the reference sends when the result has no scope. */
	rtm.rtm_scope = route->scope >= 0 ? (uint8_t)route->scope : RT_SCOPE_UNIVERSE;
	rtm.rtm_type = RTN_UNICAST;
	nlh = nlsock_msg_init(b.data, sizeof(b.data), RTM_NEWROUTE, NLM_F_CREATE | NLM_F_ACK,
			      &rtm, sizeof(rtm));
	if (!nlh ||
	    !mnl_attr_put_check(nlh, sizeof(b.data), RTA_DST, alen, route->dst.addr.bytes) ||
	    (route->has_gw &&
	     !mnl_attr_put_check(nlh, sizeof(b.data), RTA_GATEWAY, alen, route->gw.bytes)) ||
	    !mnl_attr_put_u32_check(nlh, sizeof(b.data), RTA_OIF, (uint32_t)route->ifindex) ||
	    (route->priority &&
	     !mnl_attr_put_u32_check(nlh, sizeof(b.data), RTA_PRIORITY, route->priority)) ||
	    (table >= 256 && !mnl_attr_put_u32_check(nlh, sizeof(b.data), RTA_TABLE, table)))
		return -EMSGSIZE;
	if (route->mtu || route->advmss) {
		struct nlattr *metrics = mnl_attr_nest_start_check(nlh, sizeof(b.data), RTA_METRICS);

		if (!metrics ||
		    (route->mtu &&
		     !mnl_attr_put_u32_check(nlh, sizeof(b.data), RTAX_MTU, route->mtu)) ||
		    (route->advmss &&
		     !mnl_attr_put_u32_check(nlh, sizeof(b.data), RTAX_ADVMSS, route->advmss)))
			return -EMSGSIZE;
		mnl_attr_nest_end(nlh, metrics);
	}
	return nlsock_rtnl_request(nlh);
}

/* Address dump */

struct addr_list {
	int ifindex;
	int family;
	struct net_addr *v;
	size_t n;
	size_t cap;
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 8;
	p = reallocarray(*v, c, size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

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
	if (!ip_from_nl(rtnl_addr_get_local(ra), family, &a.prefix.addr))
		return 0;
	a.prefix.len = rtnl_addr_get_prefixlen(ra);
	flags = rtnl_addr_get_flags(ra);
	a.tentative = flags & IFA_F_TENTATIVE;
	a.dadfailed = flags & IFA_F_DADFAILED;
	r = grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v));
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

int net_addr_list(int ifindex, int family, struct net_addr **ret, size_t *ret_n)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct addr_list l = { .ifindex = ifindex, .family = family };
	int r;

	nlsock_ack_clear();
	if (ifindex <= 0 || (family != AF_UNSPEC && !family_ok(family)))
		return -EINVAL;
	r = dump_msg(RTM_GETADDR, family, &msg);
	if (r < 0)
		return r;
	r = nlsock_nl_query(msg, addr_cb, addr_reset, &l);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*ret = l.v;
	*ret_n = l.n;
	return 0;
}

/* Route dumps */

struct route_list {
	int ifindex;       /* 0: any link */
	bool default_only; /* first default route in the main table */
	struct net_route *v;
	size_t n;
	size_t cap;
	size_t base; /* entries of earlier dumps, kept when a dump is retried */
};

static int route_from_object(struct rtnl_route *rr, struct rtnl_nexthop *nh, struct net_route *ret)
{
	struct nl_addr *dst = rtnl_route_get_dst(rr);
	struct net_route rt = { .scope = -1 };
	int family = rtnl_route_get_family(rr);
	uint32_t v;

	if (!dst) {
		rt.dst.addr.family = family; /* 0/0 */
	} else if (ip_from_nl(dst, family, &rt.dst.addr)) {
		rt.dst.len = nl_addr_get_prefixlen(dst);
	} else {
		return -EPROTO;
	}
	rt.ifindex = rtnl_route_nh_get_ifindex(nh);
	rt.has_gw = ip_from_nl(rtnl_route_nh_get_gateway(nh), family, &rt.gw);
	if (rtnl_route_get_metric(rr, RTAX_MTU, &v) == 0)
		rt.mtu = v;
	if (rtnl_route_get_metric(rr, RTAX_ADVMSS, &v) == 0)
		rt.advmss = v;
	rt.priority = rtnl_route_get_priority(rr);
	rt.table = rtnl_route_get_table(rr);
	rt.scope = rtnl_route_get_scope(rr);
	*ret = rt;
	return 0;
}

/* The nexthop through the wanted link, or any link when ifindex is 0. */
static struct rtnl_nexthop *route_nexthop(struct rtnl_route *rr, int ifindex)
{
	int n = rtnl_route_get_nnexthops(rr);

	for (int i = 0; i < n; i++) {
		struct rtnl_nexthop *nh = rtnl_route_nexthop_n(rr, i);
		int oif = nh ? rtnl_route_nh_get_ifindex(nh) : 0;

		if (oif > 0 && (ifindex == 0 || oif == ifindex))
			return nh;
	}
	return NULL;
}

static int route_cb(struct nl_object *obj, const struct nlmsghdr *nlh, void *data)
{
	struct rtnl_route *rr = (struct rtnl_route *)obj;
	struct route_list *l = data;
	struct rtnl_nexthop *nh;
	struct net_route rt;
	int r;

	(void)nlh;
	if (strcmp(nl_object_get_type(obj), "route/route") != 0 ||
	    !family_ok(rtnl_route_get_family(rr)))
		return 0;
	if (l->default_only) {
		struct nl_addr *dst = rtnl_route_get_dst(rr);

		if (l->n > 0 || rtnl_route_get_table(rr) != RT_TABLE_MAIN ||
		    rtnl_route_get_type(rr) != RTN_UNICAST || (dst && nl_addr_get_prefixlen(dst) != 0))
			return 0;
	}
	nh = route_nexthop(rr, l->ifindex);
	if (!nh)
		return 0;
	/* A route this module cannot represent is left out, not a failure of the list. */
	if (route_from_object(rr, nh, &rt) < 0)
		return 0;
	r = grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v));
	if (r < 0)
		return r;
	l->v[l->n++] = rt;
	return 0;
}

static void route_reset(void *data)
{
	struct route_list *l = data;

	l->n = l->base;
}

/* Appends the routes of one family to the list. */
static int route_dump(int family, struct route_list *l)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	r = dump_msg(RTM_GETROUTE, family, &msg);
	if (r < 0)
		return r;
	l->base = l->n;
	return nlsock_nl_query(msg, route_cb, route_reset, l);
}

int net_route_list(int ifindex, int family, struct net_route **ret, size_t *ret_n)
{
	struct route_list l = { .ifindex = ifindex };
	int r = 0;

	nlsock_ack_clear();
	if (ifindex <= 0 || (family != AF_UNSPEC && !family_ok(family)))
		return -EINVAL;
	/* One family per dump: AF_UNSPEC would also bring multicast routing tables. */
	if (family == AF_UNSPEC || family == AF_INET)
		r = route_dump(AF_INET, &l);
	if (r >= 0 && (family == AF_UNSPEC || family == AF_INET6))
		r = route_dump(AF_INET6, &l);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*ret = l.v;
	*ret_n = l.n;
	return 0;
}

/* Declared in link.h; it lives here with the other route dumps. */
int net_default_route_ifindex(int *ret_ifindex)
{
	static const int families[] = { AF_INET, AF_INET6 };

	nlsock_ack_clear();
	for (size_t i = 0; i < ARRAY_SIZE(families); i++) {
		struct route_list l = { .default_only = true };
		int r = route_dump(families[i], &l);
		int ifindex = l.n > 0 ? l.v[0].ifindex : 0;

		free(l.v);
		if (r < 0)
			return r;
		if (ifindex > 0) {
			*ret_ifindex = ifindex;
			return 0;
		}
	}
	return -ENOENT;
}
