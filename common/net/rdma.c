/* RDMA devices over RDMA netlink: the netns mode, the device of a netdev, netns moves */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "common/net/nlsock.h"
#include "common/net/rdma.h"
#include "common/util/cleanup.h"

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20
#endif

static rdma_transport_fn transport = nlsock_talk;

void rdma_set_transport(rdma_transport_fn fn)
{
	transport = fn ? fn : nlsock_talk;
}

/*
 * RDMA netlink messages carry no family header, only attributes. Built here
 * rather than with nlsock_msg_init() so that the transport is this file's
 * only tie to nlsock.c, and unit tests can link it next to fake-net.
 */
static struct nlmsghdr *rdma_msg(struct nlsock_buf *b, uint16_t op, uint16_t flags)
{
	struct nlmsghdr *nlh;

	memset(b, 0, sizeof(*b)); /* no stack bytes go to the kernel */
	nlh = mnl_nlmsg_put_header(b->data);
	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	return nlh;
}

/* Attribute table of one reply; unknown or malformed attributes are skipped. */
struct attrs {
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
};

static int collect_attr_cb(const struct nlattr *attr, void *data)
{
	struct attrs *a = data;
	uint16_t type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, RDMA_NLDEV_ATTR_MAX - 1) < 0)
		return MNL_CB_OK;
	switch (type) {
	case RDMA_NLDEV_ATTR_DEV_INDEX:
	case RDMA_NLDEV_ATTR_PORT_INDEX:
	case RDMA_NLDEV_ATTR_NDEV_INDEX:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			return MNL_CB_OK;
		break;
	case RDMA_NLDEV_SYS_ATTR_NETNS_MODE:
		if (mnl_attr_validate(attr, MNL_TYPE_U8) < 0)
			return MNL_CB_OK;
		break;
	case RDMA_NLDEV_ATTR_DEV_NAME:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			return MNL_CB_OK;
		break;
	default:
		break;
	}
	a->tb[type] = attr;
	return MNL_CB_OK;
}

static int parse_reply_attrs(const struct nlmsghdr *nlh, struct attrs *a)
{
	memset(a, 0, sizeof(*a));
	if (mnl_attr_parse(nlh, 0, collect_attr_cb, a) < 0) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
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

	if (parse_reply_attrs(nlh, &a) != MNL_CB_OK)
		return MNL_CB_ERROR;
	if (a.tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE]) {
		m->found = true;
		/* The kernel's value: 1 shared, 0 exclusive. */
		m->exclusive = mnl_attr_get_u8(a.tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE]) == 0;
	}
	return MNL_CB_OK;
}

int rdma_netns_exclusive(bool *ret_exclusive)
{
	struct nlsock_buf b;
	struct nlmsghdr *nlh = rdma_msg(&b, RDMA_NLDEV_CMD_SYS_GET, 0);
	struct mode_reply m = { 0 };
	int r;

	r = transport(NETLINK_RDMA, nlh, mode_cb, NULL, &m);
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
};

static void dev_list_reset(void *data)
{
	struct dev_list *l = data;

	free(l->devs);
	l->devs = NULL;
	l->n = 0;
}

static int dev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dev_list *l = data;
	struct rdma_dev *grown;
	struct attrs a;

	if (parse_reply_attrs(nlh, &a) != MNL_CB_OK)
		return MNL_CB_ERROR;
	if (!a.tb[RDMA_NLDEV_ATTR_DEV_INDEX])
		return MNL_CB_OK;
	grown = realloc(l->devs, (l->n + 1) * sizeof(*l->devs));
	if (!grown) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	l->devs = grown;
	grown = &l->devs[l->n++];
	memset(grown, 0, sizeof(*grown));
	grown->index = mnl_attr_get_u32(a.tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	if (a.tb[RDMA_NLDEV_ATTR_DEV_NAME])
		snprintf(grown->name, sizeof(grown->name), "%s",
			 mnl_attr_get_str(a.tb[RDMA_NLDEV_ATTR_DEV_NAME]));
	return MNL_CB_OK;
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

	if (parse_reply_attrs(nlh, &a) != MNL_CB_OK)
		return MNL_CB_ERROR;
	if (a.tb[RDMA_NLDEV_ATTR_NDEV_INDEX] &&
	    mnl_attr_get_u32(a.tb[RDMA_NLDEV_ATTR_NDEV_INDEX]) == p->ifindex)
		p->found = true;
	return MNL_CB_OK;
}

static int port_has_netdev(uint32_t dev_index, int ifindex, bool *ret_found)
{
	struct nlsock_buf b;
	struct nlmsghdr *nlh = rdma_msg(&b, RDMA_NLDEV_CMD_PORT_GET, NLM_F_DUMP);
	struct port_match p = { .ifindex = (uint32_t)ifindex };
	int r;

	if (!mnl_attr_put_u32_check(nlh, sizeof(b.data), RDMA_NLDEV_ATTR_DEV_INDEX, dev_index))
		return -EMSGSIZE;
	r = transport(NETLINK_RDMA, nlh, port_cb, port_match_reset, &p);
	if (r < 0)
		return r;
	*ret_found = p.found;
	return 0;
}

int rdma_dev_of_netdev(int ifindex, struct rdma_dev *ret)
{
	struct nlsock_buf b;
	struct nlmsghdr *nlh = rdma_msg(&b, RDMA_NLDEV_CMD_GET, NLM_F_DUMP);
	struct dev_list l = { 0 };
	int r;

	if (ifindex <= 0)
		return -EINVAL;
	r = transport(NETLINK_RDMA, nlh, dev_cb, dev_list_reset, &l);
	for (size_t i = 0; r >= 0 && i < l.n; i++) {
		bool found = false;

		r = port_has_netdev(l.devs[i].index, ifindex, &found);
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

/* --- netns moves ------------------------------------------------------------------------- */

int rdma_dev_set_netns(uint32_t index, int netns_fd)
{
	struct nlsock_buf b;
	struct nlmsghdr *nlh = rdma_msg(&b, RDMA_NLDEV_CMD_SET, 0);

	if (netns_fd < 0)
		return -EBADF;
	if (!mnl_attr_put_u32_check(nlh, sizeof(b.data), RDMA_NLDEV_ATTR_DEV_INDEX, index) ||
	    !mnl_attr_put_u32_check(nlh, sizeof(b.data), RDMA_NLDEV_NET_NS_FD, (uint32_t)netns_fd))
		return -EMSGSIZE;
	return transport(NETLINK_RDMA, nlh, NULL, NULL, NULL);
}
