/* Fakes of the common/net calls host-device adds to fake-net: new netns, RDMA netlink, ethtool */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <rdma/rdma_netlink.h>

#include "common/net/ethtool.h"
#include "common/net/nlsock-ns.h"
#include "common/net/rdma.h"
#include "common/util/nsfd.h"
#include "tests/unit/fake-net-hostdev.h"
#include "tests/unit/fake-sysfs.h"

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20
#endif

struct fake_rdma fake_rdma;
struct fake_ethtool fake_ethtool[FAKE_ETHTOOL_MAX];
static unsigned int tmp_netns;

/* --- common/util/nsfd.h additions -------------------------------------------------------- */

int nsfd_new(int *ret_fd)
{
	char path[32];
	int ns, r = fake_net_op("new netns");

	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "tmp%u", ++tmp_netns);
	ns = fake_net_add_netns(path);
	if (ns < 0)
		return ns;
	*ret_fd = FAKE_NET_FD_BASE + ns;
	return 0;
}

int nsfd_open_current(int *ret_fd)
{
	int r = fake_net_op("open current netns");

	if (r < 0)
		return r;
	*ret_fd = FAKE_NET_FD_BASE + fake_net.current;
	return 0;
}

unsigned int fake_net_tmp_netns(void)
{
	return tmp_netns;
}

/* --- common/net/ethtool.h ---------------------------------------------------------------- */

/* The ethtool entry of a link in the current netns; NULL for a link without one (a veth). */
static const struct fake_ethtool *ethtool_of(const char *ifname, int *ret_r)
{
	const struct net_link *l = fake_net_find(fake_net.current, ifname);

	*ret_r = l ? 0 : -ENODEV;
	for (size_t i = 0; l && i < FAKE_ETHTOOL_MAX; i++)
		if (fake_ethtool[i].ifindex == l->ifindex)
			return &fake_ethtool[i];
	return NULL;
}

static int here_perm_hwaddr(const char *ifname, uint8_t *ret, size_t *ret_len)
{
	const struct fake_ethtool *e;
	int r = fake_net_op("ethtool permaddr %s", ifname);

	if (r < 0)
		return r;
	e = ethtool_of(ifname, &r);
	if (r < 0)
		return r;
	if (!e || !e->perm_len)
		return -ENODATA;
	memcpy(ret, e->perm, e->perm_len);
	*ret_len = e->perm_len;
	return 0;
}

static int here_bus_info(const char *ifname, char *ret, size_t size)
{
	const struct fake_ethtool *e;
	int r = fake_net_op("ethtool drvinfo %s", ifname);

	if (r < 0)
		return r;
	e = ethtool_of(ifname, &r);
	if (r < 0)
		return r;
	snprintf(ret, size, "%s", e ? e->bus_info : "");
	return 0;
}

int net_ethtool_perm_hwaddr(struct net_ns *ns, const char *ifname, uint8_t *ret, size_t *ret_len)
{
	return IN_NS(ns, here_perm_hwaddr(ifname, ret, ret_len));
}

int net_ethtool_bus_info(struct net_ns *ns, const char *ifname, char *ret, size_t size)
{
	return IN_NS(ns, here_bus_info(ifname, ret, size));
}

struct fake_ethtool *fake_ethtool_set(int ifindex, const uint8_t *perm, size_t perm_len,
				      const char *bus_info)
{
	for (size_t i = 0; i < FAKE_ETHTOOL_MAX; i++) {
		struct fake_ethtool *e = &fake_ethtool[i];

		if (e->ifindex && e->ifindex != ifindex)
			continue;
		*e = (struct fake_ethtool){ .ifindex = ifindex, .perm_len = perm ? perm_len : 0 };
		if (perm)
			memcpy(e->perm, perm, perm_len);
		snprintf(e->bus_info, sizeof(e->bus_info), "%s", bus_info ? bus_info : "");
		return e;
	}
	return NULL;
}

/* --- the RDMA netlink "kernel" ------------------------------------------------------------ */

void fake_rdma_reset(void)
{
	memset(&fake_rdma, 0, sizeof(fake_rdma));
	memset(fake_ethtool, 0, sizeof(fake_ethtool));
	fake_rdma.mode_attr = 1;
	tmp_netns = 0;
}

struct fake_rdma_dev *fake_rdma_add(uint32_t index, const char *name, int ns, int ndev_ifindex)
{
	for (size_t i = 0; i < FAKE_RDMA_MAX_DEVS; i++) {
		struct fake_rdma_dev *d = &fake_rdma.devs[i];

		if (d->used)
			continue;
		*d = (struct fake_rdma_dev){ .used = true, .index = index, .ns = ns,
					     .ndev_ifindex = ndev_ifindex };
		snprintf(d->name, sizeof(d->name), "%s", name);
		return d;
	}
	return NULL;
}

static bool visible(const struct fake_rdma_dev *d)
{
	return d->used && (fake_rdma.mode_attr != 0 || d->ns == fake_net.current);
}

static struct fake_rdma_dev *find_dev(uint32_t index)
{
	for (size_t i = 0; i < FAKE_RDMA_MAX_DEVS; i++)
		if (visible(&fake_rdma.devs[i]) && fake_rdma.devs[i].index == index)
			return &fake_rdma.devs[i];
	return NULL;
}

static bool ndev_in(int ns, int ifindex)
{
	for (size_t i = 0; i < FAKE_NET_MAX_LINKS; i++)
		if (fake_net.links[i].used && fake_net.links[i].ns == ns &&
		    fake_net.links[i].link.ifindex == ifindex)
			return true;
	return false;
}

/* Whether a netdev is in the requester's netns (the kernel reports its index only then). */
static bool ndev_here(int ifindex)
{
	return ndev_in(fake_net.current, ifindex);
}

/* rxe and siw unregister their device when its netdev leaves the device's netns. */
static void software_devs_follow_netdevs(void)
{
	for (size_t i = 0; i < FAKE_RDMA_MAX_DEVS; i++) {
		struct fake_rdma_dev *d = &fake_rdma.devs[i];

		if (d->used && d->software && !ndev_in(d->ns, d->ndev_ifindex))
			d->used = false;
	}
}

/* One reply message handed to the caller's callback. */
static int reply_start(uint16_t type, struct nl_msg **ret)
{
	*ret = nlmsg_alloc_simple(type, 0);
	return *ret ? 0 : -ENOMEM;
}

static int deliver(struct nl_msg *reply, int (*cb)(const struct nlmsghdr *, void *), void *data)
{
	int r = cb ? cb(nlmsg_hdr(reply), data) : 0;

	nlmsg_free(reply);
	return r;
}

static int dev_reply(const struct fake_rdma_dev *d, uint16_t type,
		     int (*cb)(const struct nlmsghdr *, void *), void *data)
{
	struct nl_msg *rp;

	if (reply_start(type, &rp) < 0)
		return -ENOMEM;
	nla_put_u32(rp, RDMA_NLDEV_ATTR_DEV_INDEX, d->index);
	nla_put_string(rp, RDMA_NLDEV_ATTR_DEV_NAME, d->name);
	return deliver(rp, cb, data);
}

static int dump_devs(uint16_t type, int (*cb)(const struct nlmsghdr *, void *), void *data)
{
	int r;

	for (size_t i = 0; i < FAKE_RDMA_MAX_DEVS; i++)
		if (visible(&fake_rdma.devs[i]) && (r = dev_reply(&fake_rdma.devs[i], type, cb, data)) < 0)
			return r;
	return 0;
}

static int rdma_here(int protocol, struct nl_msg *msg,
		     int (*cb)(const struct nlmsghdr *nlh, void *data), void (*reset)(void *data),
		     void *data)
{
	const struct nlmsghdr *nlh = nlmsg_hdr(msg);
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = { 0 };
	uint16_t op = nlh->nlmsg_type & ((1 << 10) - 1);
	const struct nlattr *a;
	struct fake_rdma_dev *d;
	struct nl_msg *rp;
	int r, rem;

	fake_rdma.requests++;
	fake_rdma.last_bus = protocol;
	fake_rdma.last_len = nlh->nlmsg_len < sizeof(fake_rdma.last) ? nlh->nlmsg_len : 0;
	memcpy(fake_rdma.last, nlh, fake_rdma.last_len);
	if (protocol != NETLINK_RDMA || fake_rdma.absent)
		return -EPROTONOSUPPORT;
	software_devs_follow_netdevs();
	if ((nlh->nlmsg_type >> 10) != RDMA_NL_NLDEV)
		return -EOPNOTSUPP;
	nlmsg_for_each_attr(a, nlh, 0, rem) {
		if (nla_type(a) < RDMA_NLDEV_ATTR_MAX)
			tb[nla_type(a)] = a;
	}
	switch (op) {
	case RDMA_NLDEV_CMD_SYS_GET:
		if ((r = fake_net_op("rdma sys get")) < 0)
			return r;
		/* rdma_nl_rcv_msg(): an operation without a handler is -EINVAL (is_nl_valid). */
		if (fake_rdma.before_5_2)
			return -EINVAL;
		if (reply_start(nlh->nlmsg_type, &rp) < 0)
			return -ENOMEM;
		nla_put_u8(rp, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, (uint8_t)fake_rdma.mode_attr);
		return deliver(rp, cb, data);
	case RDMA_NLDEV_CMD_GET:
		if (!(nlh->nlmsg_flags & NLM_F_DUMP))
			return -EOPNOTSUPP;
		if ((r = fake_net_op("rdma dev dump")) < 0)
			return r;
		if (fake_rdma.interrupt_dump) {
			/* What nlsock_talk() does on NLM_F_DUMP_INTR: reset, then dump again. */
			fake_rdma.interrupt_dump = false;
			if ((r = dump_devs(nlh->nlmsg_type, cb, data)) < 0)
				return r;
			if (reset)
				reset(data);
		}
		return dump_devs(nlh->nlmsg_type, cb, data);
	case RDMA_NLDEV_CMD_PORT_GET:
		if (!(nlh->nlmsg_flags & NLM_F_DUMP) || !tb[RDMA_NLDEV_ATTR_DEV_INDEX])
			return -EINVAL;
		d = find_dev(nla_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]));
		if ((r = fake_net_op("rdma port dump %s", d ? d->name : "?")) < 0)
			return r;
		if (!d)
			return -EINVAL;
		if (reply_start(nlh->nlmsg_type, &rp) < 0)
			return -ENOMEM;
		nla_put_u32(rp, RDMA_NLDEV_ATTR_DEV_INDEX, d->index);
		nla_put_u32(rp, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
		if (d->ndev_ifindex && ndev_here(d->ndev_ifindex))
			nla_put_u32(rp, RDMA_NLDEV_ATTR_NDEV_INDEX, (uint32_t)d->ndev_ifindex);
		return deliver(rp, cb, data);
	case RDMA_NLDEV_CMD_SET: {
		int ns;

		if (!tb[RDMA_NLDEV_ATTR_DEV_INDEX])
			return -EINVAL;
		d = find_dev(nla_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]));
		ns = tb[RDMA_NLDEV_NET_NS_FD] ?
			     (int)nla_get_u32(tb[RDMA_NLDEV_NET_NS_FD]) - FAKE_NET_FD_BASE : -1;
		if ((r = fake_net_op("rdma move %s to %d", d ? d->name : "?", ns)) < 0)
			return r;
		/* nldev_set_doit(): no device of that index in sight is -EINVAL. */
		if (!d)
			return -EINVAL;
		if (!tb[RDMA_NLDEV_NET_NS_FD])
			return 0;
		if (fake_rdma.mode_attr != 0)
			return -EOPNOTSUPP; /* the kernel moves RDMA devices only in exclusive mode */
		if (ns < 0 || ns >= FAKE_NET_MAX_NS || !fake_net.ns_path[ns][0])
			return -EBADF;
		d->ns = ns;
		return 0;
	}
	default:
		return -EOPNOTSUPP;
	}
}

/* --- common/net/vf.h and device_pci_rebind() --------------------------------------------- */

struct fake_vfs fake_vfs;

void fake_vf_reset(void)
{
	fake_vfs = (struct fake_vfs){ 0 };
}

static int sysfs_rename(const char *pci, const char *name);

/* sysfs shows a VF's netdev under its name: a rename in the host shows there. */
static void vf_renamed(int ifindex, const char *name)
{
	for (size_t i = 0; i < FAKE_VF_MAX; i++)
		if (fake_vfs.vfs[i].used && fake_vfs.vfs[i].netdev_ifindex == ifindex &&
		    fake_net.current == 0)
			(void)sysfs_rename(fake_vfs.vfs[i].pci, name);
}

struct fake_vf *fake_vf_add(const char *pci, int pf_ifindex, uint32_t index, int netdev_ifindex)
{
	fake_net_renamed = vf_renamed;
	for (size_t i = 0; i < FAKE_VF_MAX; i++) {
		struct fake_vf *v = &fake_vfs.vfs[i];

		if (v->used)
			continue;
		*v = (struct fake_vf){ .used = true, .pf_ifindex = pf_ifindex, .index = index,
				       .netdev_ifindex = netdev_ifindex };
		snprintf(v->pci, sizeof(v->pci), "%s", pci);
		return v;
	}
	return NULL;
}

static struct fake_vf *vf_find(int pf_ifindex, uint32_t index)
{
	for (size_t i = 0; i < FAKE_VF_MAX; i++)
		if (fake_vfs.vfs[i].used && fake_vfs.vfs[i].pf_ifindex == pf_ifindex &&
		    fake_vfs.vfs[i].index == index)
			return &fake_vfs.vfs[i];
	return NULL;
}

/* The link of an ifindex in any netns. */
static struct net_link *link_any(int ifindex)
{
	for (size_t i = 0; i < FAKE_NET_MAX_LINKS; i++)
		if (fake_net.links[i].used && fake_net.links[i].link.ifindex == ifindex)
			return &fake_net.links[i].link;
	return NULL;
}

/*
 * do_setlink() -> do_setvfinfo() for every IFLA_VF_INFO, stopping at the
 * first failure: of each it applies the node GUID if there is one, else the
 * port GUID, and ignores the other (as the kernel does). A PF that is no
 * InfiniBand device is -EOPNOTSUPP, a VF index the PF does not have -EINVAL.
 */
static int vf_guid_one(const struct net_link *pf, int pf_ifindex, const struct nlattr *info)
{
	const struct nlattr *g, *node = NULL, *port = NULL;
	struct ifla_vf_guid v;
	struct fake_vf *f;
	int r, rem;

	if (nla_type(info) != IFLA_VF_INFO)
		return -EINVAL;
	nla_for_each_nested(g, info, rem) {
		if (nla_type(g) == IFLA_VF_IB_NODE_GUID)
			node = g;
		else if (nla_type(g) == IFLA_VF_IB_PORT_GUID)
			port = g;
	}
	g = node ? node : port;
	if (!g)
		return 0;
	if (nla_len(g) != sizeof(v))
		return -EINVAL;
	memcpy(&v, nla_data(g), sizeof(v));
	if ((r = fake_net_op("set vf %u %s guid on %s to %016llx", v.vf, node ? "node" : "port",
			     pf ? pf->name : "?", (unsigned long long)v.guid)) < 0)
		return r;
	if (!pf)
		return -ENODEV;
	if (pf->type != ARPHRD_INFINIBAND)
		return -EOPNOTSUPP;
	if (!(f = vf_find(pf_ifindex, v.vf)))
		return -EINVAL;
	if (node) {
		f->node_set = true;
		f->node_guid = v.guid;
	} else {
		f->port_set = true;
		f->port_guid = v.guid;
	}
	return 0;
}

static int vf_here(struct nl_msg *msg)
{
	const struct nlmsghdr *nlh = nlmsg_hdr(msg);
	const struct ifinfomsg *ifi = nlmsg_data(nlh);
	const struct nlattr *a, *info;
	struct net_link *pf;
	int r, rem, rem2;

	fake_vfs.last_len = nlh->nlmsg_len <= sizeof(fake_vfs.last) ? nlh->nlmsg_len : 0;
	memcpy(fake_vfs.last, nlh, fake_vfs.last_len);
	if (nlh->nlmsg_type != RTM_SETLINK)
		return -EOPNOTSUPP;
	pf = link_any(ifi->ifi_index);
	if (pf && fake_net_find(fake_net.current, pf->name) != pf)
		pf = NULL;
	nlmsg_for_each_attr(a, nlh, sizeof(*ifi), rem) {
		if (nla_type(a) != IFLA_VFINFO_LIST)
			return -EOPNOTSUPP;
		nla_for_each_nested(info, a, rem2)
			if ((r = vf_guid_one(pf, ifi->ifi_index, info)) < 0)
				return r;
	}
	return 0;
}

/* The VF's entry below <pci>/net in the fake sysfs gets @name. */
static int sysfs_rename(const char *pci, const char *name)
{
	char dir[PATH_MAX], from[PATH_MAX + 256], to[PATH_MAX + 64];
	DIR *d;
	struct dirent *e;
	int r = -ENOENT;

	if (!fake_sysfs_root()[0])
		return -ENOENT;
	snprintf(dir, sizeof(dir), "%s/bus/pci/devices/%s/net", fake_sysfs_root(), pci);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(from, sizeof(from), "%s/%s", dir, e->d_name);
			snprintf(to, sizeof(to), "%s/%s", dir, name);
			r = rename(from, to) < 0 ? -errno : 0;
			break;
		}
	closedir(d);
	return r;
}

int __wrap_device_pci_rebind(const char *addr)
{
	struct fake_vf *v = NULL;
	struct net_link *l;
	int r;

	for (size_t i = 0; i < FAKE_VF_MAX; i++)
		if (fake_vfs.vfs[i].used && strcmp(fake_vfs.vfs[i].pci, addr) == 0)
			v = &fake_vfs.vfs[i];
	if ((r = fake_net_op("rebind %s", addr)) < 0)
		return r;
	if (!v || !(l = link_any(v->netdev_ifindex)))
		return -ENOENT;
	fake_vfs.rebinds++;
	/* A new netdev in the host, down, without alias; its GID holds the port GUID. */
	fake_net_place(l, 0);
	l->ifindex = v->netdev_ifindex = fake_net.next_ifindex++;
	l->flags &= ~IFF_UP;
	l->alias[0] = '\0';
	for (int i = 0; i < 8; i++)
		l->hwaddr[12 + i] = (uint8_t)(v->port_set ? v->port_guid >> (56 - 8 * i) : 0);
	if (v->rebind_name) {
		snprintf(l->name, sizeof(l->name), "%s", v->rebind_name);
		return sysfs_rename(addr, v->rebind_name);
	}
	return 0;
}

int __wrap_nlsock_talk(struct net_ns *ns, int protocol, struct nl_msg *msg,
		       int (*cb)(const struct nlmsghdr *nlh, void *data), void (*reset)(void *data),
		       void *data)
{
	if (protocol == NETLINK_ROUTE)
		return IN_NS(ns, vf_here(msg));
	return IN_NS(ns, rdma_here(protocol, msg, cb, reset, data));
}
