/* The bridge side of an attachment: the bridge, its gateway addresses, forwarding */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/net/addr.h"
#include "common/net/bridge.h"
#include "common/net/link.h"
#include "common/net/linkattr.h"
#include "common/net/neterr.h"
#include "common/net/route.h"
#include "common/net/sysctl.h"
#include "common/record/record.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/bridge/config.h"
#include "plugins/bridge/host.h"
#include "plugins/bridge/port.h"

/* Where the bridges' locks are: the plugin's records folder. */
#define LOCK_DIR RECORD_ROOT "/bridge"

int bridge_host_lock(struct bridge_host *h, const char *name, struct cni_err *err)
{
	int r;

	if (h->lock_fd >= 0)
		return 0;
	r = record_lock(LOCK_DIR, name, &h->lock_fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot lock bridge %s (%s): %s", name,
				   LOCK_DIR, strerror(-r));
	return 0;
}

void bridge_host_unlock(struct bridge_host *h)
{
	if (h->lock_fd >= 0)
		close(h->lock_fd);
	h->lock_fd = -1;
}

/* The name is taken by another kind of link: the node's uplink is worth naming as such. */
static int not_a_bridge(struct bridge_host *h, const struct net_link *l, struct cni_err *err)
{
	int uplink = 0;

	if (net_default_route_ifindex(h->ns, &uplink) == 0 && uplink == l->ifindex)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EEXIST,
				   "\"%s\" already exists but is not a bridge: it is the node's uplink "
				   "(the link of its default route)", l->name);
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EEXIST,
			   "\"%s\" already exists but is not a bridge (a %s link)", l->name,
			   l->kind[0] ? l->kind : "physical");
}

/* The bridge, made when missing; a concurrent ADD making it first is no error. */
static int find_or_make(struct bridge_host *h, const struct bridge_conf *c, struct cni_err *err)
{
	bool filtering = c->vlan || c->trunk_given;
	int r = net_link_get_by_name(h->ns, c->bridge, &h->br);

	if (r == -ENODEV) {
		r = net_bridge_create(h->ns, c->bridge, c->mtu, filtering);
		if (r < 0 && r != -EEXIST)
			return net_err_set(err, CNI_ERR_KERNEL, r, "failed to create bridge \"%s\": %s%s",
					   c->bridge, strerror(-r),
					   r == -EOPNOTSUPP && filtering ?
						   " (this kernel has no bridge VLAN filtering)" : "");
		h->created = r == 0;
		r = net_link_get_by_name(h->ns, c->bridge, &h->br);
	}
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "could not lookup \"%s\": %s", c->bridge,
				   strerror(-r));
	if (strcmp(h->br.kind, "bridge") != 0)
		return not_a_bridge(h, &h->br, err);
	return 0;
}

int bridge_host_ensure(struct bridge_host *h, const struct bridge_conf *c, struct cni_err *err)
{
	char path[64];
	int r;

	r = find_or_make(h, c, err);
	if (r < 0)
		return r;
	if (c->promisc && !(h->br.flags & IFF_PROMISC)) {
		r = net_linkattr_set_flag(h->ns, h->br.ifindex, IFF_PROMISC, true);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "could not set promiscuous mode on \"%s\": %s", c->bridge,
					   strerror(-r));
		h->promisc_set = true;
	}
	/* As upstream: we want to own the routes of this interface. */
	snprintf(path, sizeof(path), "net/ipv6/conf/%s/accept_ra", c->bridge);
	(void)sysctl_write(path, "0");
	/* A new one up at once as upstream's (IPv6 sets it up while it has carrier, before its ports). */
	if (h->created && (r = bridge_host_up(h, err)) < 0)
		return r;
	if (c->vlan || c->n_trunk) {
		r = net_bridge_get(h->ns, h->br.ifindex, &h->info);
		if (r < 0)
			return net_err_op(err, r, "could not read the VLAN settings of", c->bridge);
	}
	h->gw = h->br;
	return 0;
}

int bridge_host_up(struct bridge_host *h, struct cni_err *err)
{
	int r;

	if (h->br.flags & IFF_UP)
		return 0;
	r = net_link_set_up(h->ns, h->br.ifindex, true);
	if (r < 0)
		return net_err_op(err, r, "failed to set up", h->br.name);
	h->set_up = !h->created;
	h->br.flags |= IFF_UP;
	return 0;
}

/* ensureVlanInterface(): "<br>.<vlan>", one end of a pair whose other end is a port in the VLAN. */
static int vlan_interface(struct bridge_host *h, const struct bridge_conf *c, struct cni_err *err)
{
	char name[IFNAMSIZ];
	struct bridge_port port;
	int r;

	if (h->gw.ifindex != h->br.ifindex)
		return 0;
	r = bridge_config_vlan_ifname(c, name, sizeof(name));
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r, "%s.%u: name too long", c->bridge,
				   c->vlan);
	r = net_link_get_by_name(h->ns, name, &h->gw);
	if (r == 0)
		return 0;
	if (r != -ENODEV)
		return net_err_set(err, CNI_ERR_KERNEL, r, "failed to find interface \"%s\": %s", name,
				   strerror(-r));
	r = bridge_port_add(h, &(struct bridge_port_spec){
				       .peer_name = name,
				       .peer_netns_fd = -1,
				       .peer_ns = h->ns,
				       .peer_up = true,
				       .mtu = h->br.mtu,
				       .vlan = c->vlan,
				       .preserve_default_vlan = c->preserve_default_vlan,
			       }, &port, err);
	if (r < 0)
		return cni_err_prefix(err, r, "failed to create vlan interface");
	h->vlan_created = true;
	h->vlan_port = port.ifindex;
	r = net_link_get_by_name(h->ns, name, &h->gw);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "failed to lookup \"%s\": %s", name,
				   strerror(-r));
	return 0;
}

static bool overlaps(const struct ip_prefix *a, const struct ip_prefix *b)
{
	return ip_prefix_contains(a, &b->addr) || ip_prefix_contains(b, &a->addr);
}

/* Upstream's ensureAddr(): the address, in place of others of IPv4 (or overlapping IPv6). */
static int ensure_addr(struct bridge_host *h, const struct bridge_conf *c, const struct ip_prefix *gw,
		       const uint8_t *mac, struct cni_err *err)
{
	_cleanup_free_ struct net_addr *addrs = NULL;
	const struct net_link *l = &h->gw;
	char want[IP_PREFIX_STRLEN], have[IP_PREFIX_STRLEN];
	size_t n = 0;
	int r;

	ip_prefix_format(gw, want, sizeof(want));
	r = net_addr_list(h->ns, l->ifindex, gw->addr.family, &addrs, &n);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "could not get list of IP addresses: %s",
				   strerror(-r));
	for (size_t i = 0; i < n; i++) {
		const struct ip_prefix *a = &addrs[i].prefix;

		if (a->len == gw->len && ip_addr_equal(&a->addr, &gw->addr))
			return 0;
		if (gw->addr.family == AF_INET6 && !overlaps(a, gw))
			continue;
		if (!c->force_address)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EEXIST,
					   "\"%s\" already has an IP address different from %s (%s)",
					   l->name, want, ip_prefix_format(a, have, sizeof(have)));
		r = net_addr_del(h->ns, l->ifindex, a);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "could not remove IP address from \"%s\": %s", l->name,
					   strerror(-r));
		if (h->n_removed < BRIDGE_HOST_ADDRS_MAX) {
			h->removed[h->n_removed++] = *a;
			h->removed_from = l->ifindex;
		}
		log_info("forceAddress: %s taken off %s for %s", have, l->name, want);
	}
	r = net_addr_add(h->ns, l->ifindex, gw);
	if (r < 0 && r != -EEXIST)
		return net_err_set(err, CNI_ERR_KERNEL, r, "could not add IP address %s to \"%s\": %s",
				   want, l->name, strerror(-r));
	if (r == 0 && h->n_added < BRIDGE_HOST_ADDRS_MAX)
		h->added[h->n_added++] = *gw;
	/* Fixed, or the bridge takes the lowest MAC of its ports, changing as they come and go. */
	r = net_linkattr_set_hwaddr(h->ns, l->ifindex, mac, 6);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "could not set bridge's mac: %s",
				   strerror(-r));
	return 0;
}

int bridge_host_gateway(struct bridge_host *h, const struct bridge_conf *c,
			const struct ip_prefix *gw, struct cni_err *err)
{
	int r;

	if (!c->vlan) {
		/*
		 * The bridge's MAC as it was before the pod's port, as upstream sets it: all
		 * zero once its last port left (upstream then fails with EINVAL), in which case
		 * the one it took from the new port is made its own.
		 */
		static const uint8_t zero[6];

		if (h->br.hwaddr_len == 6 && memcmp(h->br.hwaddr, zero, 6) == 0) {
			struct net_link now;
			int r2 = net_link_get_by_index(h->ns, h->br.ifindex, &now);

			if (r2 < 0)
				return net_err_op(err, r2, "could not lookup", h->br.name);
			memcpy(h->br.hwaddr, now.hwaddr, 6);
		}
		return ensure_addr(h, c, gw, h->br.hwaddr, err);
	}
	r = vlan_interface(h, c, err);
	if (r < 0)
		return r;
	r = ensure_addr(h, c, gw, h->gw.hwaddr, err);
	return r < 0 ? cni_err_prefix(err, r, "failed to set vlan interface for bridge with addr") : 0;
}

int bridge_host_forward(int family, struct cni_err *err)
{
	const char *path = family == AF_INET ? "net/ipv4/ip_forward" : "net/ipv6/conf/all/forwarding";
	char v[16];
	int r;

	if (sysctl_read(path, v, sizeof(v)) == 0 && strcmp(v, "1") == 0)
		return 0;
	r = sysctl_write(path, "1");
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "failed to enable forwarding: %s", strerror(-r));
	return 0;
}

struct other_port {
	int bridge;
	int except;
};

static bool is_other_port(const struct net_link *l, void *data)
{
	const struct other_port *o = data;

	return l->master_ifindex == o->bridge && l->ifindex != o->except;
}

void bridge_host_undo(struct bridge_host *h)
{
	struct other_port o = { .bridge = h->br.ifindex, .except = h->vlan_port };
	struct cni_err err = { 0 };
	struct net_link l;
	int r;

	if (!h->created && !h->promisc_set && !h->set_up && !h->vlan_created && !h->n_added &&
	    !h->n_removed)
		return;
	if (bridge_host_lock(h, h->br.name, &err) < 0) {
		log_error("undo: %s", err.msg);
		return;
	}
	r = net_link_find(h->ns, is_other_port, &o, &l);
	if (r != -ENODEV) {
		log_info("undo: bridge %s is in use (%s): left as it is", h->br.name,
			 r == 0 ? l.name : strerror(-r));
		return;
	}
	if (h->vlan_created && (r = net_link_delete(h->ns, h->gw.ifindex)) < 0 && r != -ENODEV)
		log_error("undo: cannot delete %s: %s", h->gw.name, strerror(-r));
	if (h->created) {
		r = net_link_delete(h->ns, h->br.ifindex);
		if (r < 0 && r != -ENODEV)
			log_error("undo: cannot delete bridge %s: %s", h->br.name, strerror(-r));
		return;
	}
	for (size_t i = h->n_added; !h->vlan_created && i > 0; i--)
		if ((r = net_addr_del(h->ns, h->gw.ifindex, &h->added[i - 1])) < 0)
			log_error("undo: cannot remove an address of %s: %s", h->gw.name, strerror(-r));
	for (size_t i = 0; i < h->n_removed; i++)
		if ((r = net_addr_add(h->ns, h->removed_from, &h->removed[i])) < 0 && r != -EEXIST)
			log_error("undo: cannot give back an address of %s: %s", h->gw.name,
				  strerror(-r));
	if (h->promisc_set && (r = net_linkattr_set_flag(h->ns, h->br.ifindex, IFF_PROMISC, false)) < 0)
		log_error("undo: cannot turn promiscuous mode off on %s: %s", h->br.name, strerror(-r));
	if (h->set_up && (r = net_link_set_up(h->ns, h->br.ifindex, false)) < 0)
		log_error("undo: cannot set %s down again: %s", h->br.name, strerror(-r));
}
