/* RDMA devices over RDMA netlink: the netns mode, the device of a netdev, netns moves */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <rdma/rdma_netlink.h>

#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/net/rdma.h"
#include "common/util/cleanup.h"

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20
#endif

/* RDMA netlink messages carry no family header, only attributes. */
static int rdma_msg(uint16_t op, uint16_t flags, struct nl_msg **ret)
{
	return nlsock_msg_new(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op), flags, NULL, 0, ret);
}

/* Attribute table of one reply; unknown or malformed attributes are skipped. */
struct attrs {
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
};

static bool attr_valid(const struct nlattr *a)
{
	int len = nla_len(a);

	switch (nla_type(a)) {
	case RDMA_NLDEV_ATTR_DEV_INDEX:
	case RDMA_NLDEV_ATTR_PORT_INDEX:
	case RDMA_NLDEV_ATTR_NDEV_INDEX:
		return len == sizeof(uint32_t);
	case RDMA_NLDEV_SYS_ATTR_NETNS_MODE:
		return len == sizeof(uint8_t);
	case RDMA_NLDEV_ATTR_DEV_NAME:
		return len > 0 && ((const char *)nla_data(a))[len - 1] == '\0';
	default:
		return true;
	}
}

static void parse_reply_attrs(const struct nlmsghdr *nlh, struct attrs *a)
{
	const struct nlattr *attr;
	int rem;

	memset(a, 0, sizeof(*a));
	nlmsg_for_each_attr(attr, nlh, 0, rem) {
		int type = nla_type(attr);

		if (type < RDMA_NLDEV_ATTR_MAX && attr_valid(attr))
			a->tb[type] = attr;
	}
}

/* --- netns mode ------------------------------------------------------------------------ */

struct mode_reply {
	bool found;
	bool exclusive;
};

static int mode_cb(const struct nlmsghdr *nlh, void *data)
{
	struct mode_reply *m = data;
	struct attrs a;

	parse_reply_attrs(nlh, &a);
	if (a.tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE]) {
		m->found = true;
		/* The kernel's value: 1 shared, 0 exclusive. */
		m->exclusive = nla_get_u8(a.tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE]) == 0;
	}
	return 0;
}

int rdma_netns_exclusive(struct net_ns *ns, bool *ret_exclusive)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct mode_reply m = { 0 };
	int r;

	r = rdma_msg(RDMA_NLDEV_CMD_SYS_GET, 0, &msg);
	if (r < 0)
		return r;
	r = nlsock_talk(ns, NETLINK_RDMA, msg, mode_cb, NULL, &m);
	/*
	 * Kernels before 5.2 have no SYS_GET handler, and rdma_nl_rcv_msg()
	 * refuses an operation without one with -EINVAL: they only share.
	 */
	if (r == -EINVAL)
		return -EOPNOTSUPP;
	if (r < 0)
		return r;
	/* Every kernel with SYS_GET sends the mode. */
	if (!m.found)
		return -EBADMSG;
	*ret_exclusive = m.exclusive;
	return 0;
}

/* --- the device of a netdev -------------------------------------------------------------- */

struct dev_list {
	struct rdma_dev *devs;
	size_t n;
	size_t cap;
};

static void dev_list_reset(void *data)
{
	struct dev_list *l = data;

	l->n = 0;
}

static int dev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dev_list *l = data;
	struct rdma_dev *d;
	struct attrs a;
	int r;

	parse_reply_attrs(nlh, &a);
	if (!a.tb[RDMA_NLDEV_ATTR_DEV_INDEX])
		return 0;
	r = nlsock_grow((void **)&l->devs, &l->cap, l->n, sizeof(*l->devs));
	if (r < 0)
		return r;
	d = &l->devs[l->n++];
	memset(d, 0, sizeof(*d));
	d->index = nla_get_u32(a.tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	if (a.tb[RDMA_NLDEV_ATTR_DEV_NAME])
		snprintf(d->name, sizeof(d->name), "%s",
			 (const char *)nla_data(a.tb[RDMA_NLDEV_ATTR_DEV_NAME]));
	return 0;
}

struct port_match {
	uint32_t ifindex;
	bool found;
};

static void port_match_reset(void *data)
{
	((struct port_match *)data)->found = false;
}

static int port_cb(const struct nlmsghdr *nlh, void *data)
{
	struct port_match *p = data;
	struct attrs a;

	parse_reply_attrs(nlh, &a);
	if (a.tb[RDMA_NLDEV_ATTR_NDEV_INDEX] &&
	    nla_get_u32(a.tb[RDMA_NLDEV_ATTR_NDEV_INDEX]) == p->ifindex)
		p->found = true;
	return 0;
}

static int port_has_netdev(struct net_ns *ns, uint32_t dev_index, int ifindex, bool *ret_found)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct port_match p = { .ifindex = (uint32_t)ifindex };
	int r;

	r = rdma_msg(RDMA_NLDEV_CMD_PORT_GET, NLM_F_DUMP, &msg);
	if (r < 0)
		return r;
	if (nla_put_u32(msg, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index) < 0)
		return -EMSGSIZE;
	r = nlsock_talk(ns, NETLINK_RDMA, msg, port_cb, port_match_reset, &p);
	if (r < 0)
		return r;
	*ret_found = p.found;
	return 0;
}

int rdma_dev_of_netdev(struct net_ns *ns, int ifindex, struct rdma_dev *ret)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct dev_list l = { 0 };
	int r;

	if (ifindex <= 0)
		return -EINVAL;
	r = rdma_msg(RDMA_NLDEV_CMD_GET, NLM_F_DUMP, &msg);
	if (r < 0)
		return r;
	r = nlsock_talk(ns, NETLINK_RDMA, msg, dev_cb, dev_list_reset, &l);
	for (size_t i = 0; r >= 0 && i < l.n; i++) {
		bool found = false;

		r = port_has_netdev(ns, l.devs[i].index, ifindex, &found);
		/* A device unregistered between the two dumps is no longer a candidate. */
		if (r == -ENODEV || r == -EINVAL) {
			r = 0;
			continue;
		}
		if (r >= 0 && found) {
			*ret = l.devs[i];
			free(l.devs);
			return 0;
		}
	}
	free(l.devs);
	return r < 0 ? r : -ENODEV;
}

int rdma_dev_present(struct net_ns *ns, const struct rdma_dev *dev)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct dev_list l = { 0 };
	bool found = false;
	int r;

	r = rdma_msg(RDMA_NLDEV_CMD_GET, NLM_F_DUMP, &msg);
	if (r < 0)
		return r;
	r = nlsock_talk(ns, NETLINK_RDMA, msg, dev_cb, dev_list_reset, &l);
	for (size_t i = 0; r >= 0 && !found && i < l.n; i++)
		found = l.devs[i].index == dev->index && strcmp(l.devs[i].name, dev->name) == 0;
	free(l.devs);
	return r < 0 ? r : found;
}

/* --- netns moves ------------------------------------------------------------------------- */

int rdma_dev_set_netns(struct net_ns *ns, uint32_t index, int netns_fd)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	if (netns_fd < 0)
		return -EBADF;
	r = rdma_msg(RDMA_NLDEV_CMD_SET, 0, &msg);
	if (r < 0)
		return r;
	if (nla_put_u32(msg, RDMA_NLDEV_ATTR_DEV_INDEX, index) < 0 ||
	    nla_put_u32(msg, RDMA_NLDEV_NET_NS_FD, (uint32_t)netns_fd) < 0)
		return -EMSGSIZE;
	return nlsock_talk(ns, NETLINK_RDMA, msg, NULL, NULL, NULL);
}
