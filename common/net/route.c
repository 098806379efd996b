/* Routes: rtnetlink requests and dumps */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/addr.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/object.h>
#include <netlink/route/route.h>

#include "common/net/neterr.h"
#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/net/route.h"
#include "common/util/cleanup.h"

static bool family_ok(int family)
{
	return family == AF_INET || family == AF_INET6;
}

static int route_send(struct net_ns *ns, uint16_t type, uint16_t flags,
		      const struct net_route *route)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct rtmsg rtm = { 0 };
	unsigned int table;
	int alen, r;

	net_ack_clear();
	if (!route || route->ifindex <= 0 || !family_ok(route->dst.addr.family))
		return -EINVAL;
	alen = (int)ip_addr_size(&route->dst.addr);
	if (route->dst.len > (unsigned int)alen * 8 || route->scope > 255)
		return -EINVAL;
	if ((route->has_gw && route->gw.family != route->dst.addr.family) ||
	    (route->has_src && route->src.family != route->dst.addr.family) ||
	    route->protocol > 255 || route->type > 255)
		return -EINVAL;
	table = route->table ? route->table : RT_TABLE_MAIN;
	rtm.rtm_family = (uint8_t)route->dst.addr.family;
	rtm.rtm_dst_len = (uint8_t)route->dst.len;
	/* Tables past 255 only fit in RTA_TABLE. */
	rtm.rtm_table = table < 256 ? (uint8_t)table : RT_TABLE_UNSPEC;
	rtm.rtm_protocol = route->protocol ? (uint8_t)route->protocol : RTPROT_BOOT;
	/* Unset means universe, as the reference sends when the result has no scope. */
	rtm.rtm_scope = route->scope >= 0 ? (uint8_t)route->scope : RT_SCOPE_UNIVERSE;
	rtm.rtm_type = route->type ? (uint8_t)route->type : RTN_UNICAST;
	r = nlsock_msg_new(type, flags, &rtm, sizeof(rtm), &msg);
	if (r < 0)
		return r;
	if (nla_put(msg, RTA_DST, alen, route->dst.addr.bytes) < 0 ||
	    (route->has_gw && nla_put(msg, RTA_GATEWAY, alen, route->gw.bytes) < 0) ||
	    (route->has_src && nla_put(msg, RTA_PREFSRC, alen, route->src.bytes) < 0) ||
	    nla_put_u32(msg, RTA_OIF, (uint32_t)route->ifindex) < 0 ||
	    (route->priority && nla_put_u32(msg, RTA_PRIORITY, route->priority) < 0) ||
	    (table >= 256 && nla_put_u32(msg, RTA_TABLE, table) < 0))
		return -EMSGSIZE;
	if (route->mtu || route->advmss) {
		struct nlattr *metrics = nla_nest_start(msg, RTA_METRICS);

		if (!metrics || (route->mtu && nla_put_u32(msg, RTAX_MTU, route->mtu) < 0) ||
		    (route->advmss && nla_put_u32(msg, RTAX_ADVMSS, route->advmss) < 0) ||
		    nla_nest_end(msg, metrics) < 0)
			return -EMSGSIZE;
	}
	return nlsock_request(ns, msg);
}

int net_route_add(struct net_ns *ns, const struct net_route *route)
{
	return route_send(ns, RTM_NEWROUTE, NLM_F_CREATE, route);
}

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
	} else if (nlsock_ip_from_addr(dst, family, &rt.dst.addr)) {
		rt.dst.len = nl_addr_get_prefixlen(dst);
	} else {
		return -EPROTO;
	}
	rt.ifindex = rtnl_route_nh_get_ifindex(nh);
	rt.has_gw = nlsock_ip_from_addr(rtnl_route_nh_get_gateway(nh), family, &rt.gw);
	if (rtnl_route_get_metric(rr, RTAX_MTU, &v) == 0)
		rt.mtu = v;
	if (rtnl_route_get_metric(rr, RTAX_ADVMSS, &v) == 0)
		rt.advmss = v;
	rt.priority = rtnl_route_get_priority(rr);
	rt.table = rtnl_route_get_table(rr);
	rt.scope = rtnl_route_get_scope(rr);
	rt.has_src = nlsock_ip_from_addr(rtnl_route_get_pref_src(rr), family, &rt.src);
	rt.protocol = rtnl_route_get_protocol(rr);
	rt.type = rtnl_route_get_type(rr);
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
	r = nlsock_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v));
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
static int route_dump(struct net_ns *ns, int family, struct route_list *l)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct rtmsg rtm = { .rtm_family = (uint8_t)family };
	int r;

	r = nlsock_msg_new(RTM_GETROUTE, NLM_F_DUMP, &rtm, sizeof(rtm), &msg);
	if (r < 0)
		return r;
	l->base = l->n;
	return nlsock_query(ns, msg, route_cb, route_reset, l);
}

int net_route_list(struct net_ns *ns, int ifindex, int family, struct net_route **ret,
		   size_t *ret_n)
{
	struct route_list l = { .ifindex = ifindex };
	int r = 0;

	net_ack_clear();
	if (ifindex <= 0 || (family != AF_UNSPEC && !family_ok(family)))
		return -EINVAL;
	/* One family per dump: AF_UNSPEC would also bring multicast routing tables. */
	if (family == AF_UNSPEC || family == AF_INET)
		r = route_dump(ns, AF_INET, &l);
	if (r >= 0 && (family == AF_UNSPEC || family == AF_INET6))
		r = route_dump(ns, AF_INET6, &l);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*ret = l.v;
	*ret_n = l.n;
	return 0;
}

int net_default_route_ifindex(struct net_ns *ns, int *ret_ifindex)
{
	static const int families[] = { AF_INET, AF_INET6 };

	net_ack_clear();
	for (size_t i = 0; i < ARRAY_SIZE(families); i++) {
		struct route_list l = { .default_only = true };
		int r = route_dump(ns, families[i], &l);
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

int net_route_replace(struct net_ns *ns, const struct net_route *route)
{
	return route_send(ns, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, route);
}

int net_route_del(struct net_ns *ns, const struct net_route *route)
{
	return route_send(ns, RTM_DELROUTE, 0, route);
}

struct table_list {
	unsigned int table; /* 0: every table */
	struct route_list l;
};

static int table_cb(struct nl_object *obj, const struct nlmsghdr *nlh, void *data)
{
	struct rtnl_route *rr = (struct rtnl_route *)obj;
	struct table_list *t = data;
	struct rtnl_nexthop *nh;
	struct net_route rt;
	int r;

	(void)nlh;
	if (strcmp(nl_object_get_type(obj), "route/route") != 0 ||
	    !family_ok(rtnl_route_get_family(rr)) ||
	    (t->table && rtnl_route_get_table(rr) != t->table))
		return 0;
	nh = rtnl_route_get_nnexthops(rr) == 1 ? rtnl_route_nexthop_n(rr, 0) : NULL;
	if (nh && route_from_object(rr, nh, &rt) < 0)
		return 0;
	if (!nh) {
		/* Only its table and destination say anything of a route through no one link. */
		struct nl_addr *dst = rtnl_route_get_dst(rr);

		rt = (struct net_route){ .scope = rtnl_route_get_scope(rr),
					 .table = rtnl_route_get_table(rr),
					 .type = rtnl_route_get_type(rr) };
		rt.dst.addr.family = rtnl_route_get_family(rr);
		if (dst && !nlsock_ip_from_addr(dst, rt.dst.addr.family, &rt.dst.addr))
			return 0;
		rt.dst.len = dst ? nl_addr_get_prefixlen(dst) : 0;
	}
	r = nlsock_grow((void **)&t->l.v, &t->l.cap, t->l.n, sizeof(*t->l.v));
	if (r < 0)
		return r;
	t->l.v[t->l.n++] = rt;
	return 0;
}

static void table_reset(void *data)
{
	struct table_list *t = data;

	t->l.n = t->l.base;
}

static int table_dump(struct net_ns *ns, int family, struct table_list *t)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct rtmsg rtm = { .rtm_family = (uint8_t)family };
	int r;

	r = nlsock_msg_new(RTM_GETROUTE, NLM_F_DUMP, &rtm, sizeof(rtm), &msg);
	if (r < 0)
		return r;
	t->l.base = t->l.n;
	return nlsock_query(ns, msg, table_cb, table_reset, t);
}

int net_route_list_table(struct net_ns *ns, unsigned int table, int family,
			 struct net_route **ret, size_t *ret_n)
{
	struct table_list t = { .table = table };
	int r = 0;

	net_ack_clear();
	if (family != AF_UNSPEC && !family_ok(family))
		return -EINVAL;
	if (family == AF_UNSPEC || family == AF_INET)
		r = table_dump(ns, AF_INET, &t);
	if (r >= 0 && (family == AF_UNSPEC || family == AF_INET6))
		r = table_dump(ns, AF_INET6, &t);
	if (r < 0) {
		free(t.l.v);
		return r;
	}
	*ret = t.l.v;
	*ret_n = t.l.n;
	return 0;
}

static int route_get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *tb[RTA_MAX + 1];
	int *ifindex = data;

	if (nlh->nlmsg_type != RTM_NEWROUTE ||
	    nlmsg_parse((struct nlmsghdr *)nlh, sizeof(struct rtmsg), tb, RTA_MAX, NULL) < 0)
		return 0;
	if (tb[RTA_OIF] && *ifindex == 0)
		*ifindex = (int)nla_get_u32(tb[RTA_OIF]);
	return 0;
}

int net_route_get(struct net_ns *ns, const struct ip_addr *dst, int *ret_ifindex)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct rtmsg rtm = { .rtm_family = (uint8_t)dst->family };
	int ifindex = 0, r;

	net_ack_clear();
	if (!family_ok(dst->family))
		return -EINVAL;
	rtm.rtm_dst_len = (uint8_t)(ip_addr_size(dst) * 8);
	r = nlsock_msg_new(RTM_GETROUTE, 0, &rtm, sizeof(rtm), &msg);
	if (r < 0)
		return r;
	if (nla_put(msg, RTA_DST, (int)ip_addr_size(dst), dst->bytes) < 0)
		return -EMSGSIZE;
	r = nlsock_talk(ns, NETLINK_ROUTE, msg, route_get_cb, NULL, &ifindex);
	if (r < 0)
		return r;
	if (ifindex <= 0)
		return -ENETUNREACH;
	*ret_ifindex = ifindex;
	return 0;
}
