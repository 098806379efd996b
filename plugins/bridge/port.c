/* A port of the bridge: a veth pair, its host end enslaved, flagged and in its VLANs */
#include <errno.h>
#include <linux/if_bridge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/net/bridge.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/sysctl.h"
#include "common/net/veth.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/bridge/host.h"
#include "plugins/bridge/port.h"

/* Upstream's tries at a free random name before it gives up. */
#define NAME_TRIES 10
/* The most VLAN ranges one request carries: well within a netlink page. */
#define VLANS_PER_REQUEST 200

static int random_name(char name[IFNAMSIZ])
{
	uint8_t b[4];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -errno;
	snprintf(name, IFNAMSIZ, "veth%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
	return 0;
}

/* The pair, under a free random name; EEXIST of the peer's name is the caller's error. */
static int make_pair(struct bridge_host *h, const struct bridge_port_spec *s, struct bridge_port *p,
		     struct cni_err *err)
{
	struct net_link l;
	int r = -EEXIST;

	for (int i = 0; i < NAME_TRIES && r == -EEXIST; i++) {
		r = random_name(p->name);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_INTERNAL, r, "failed to generate random veth name: %s",
					   strerror(-r));
		r = net_veth_create(h->ns, &(struct net_veth){
						   .name = p->name,
						   .master_ifindex = h->br.ifindex,
						   .up = true,
						   /* As upstream's: its host end is the peer it makes with a length of 0. */
						   .no_queue = true,
						   .peer_name = s->peer_name,
						   .peer_netns_fd = s->peer_netns_fd,
						   .peer_hwaddr = s->peer_hwaddr,
						   .mtu = s->mtu,
					   });
		if (r == -EEXIST && net_link_get_by_name(s->peer_ns, s->peer_name, &l) == 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "container veth name (\"%s\") peer provided (\"%s\") already exists",
					   s->peer_name, p->name);
	}
	if (r == -EEXIST)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "failed to find a unique veth name");
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "failed to make veth pair: %s", strerror(-r));
	return 0;
}

/* Upstream's order: the VLAN untagged as PVID, the trunk, VLAN 1 as a bare trunk's native one. */
static int add_vlans(struct bridge_host *h, const struct bridge_port_spec *s, const char *name,
		     int ifindex, struct cni_err *err)
{
	const uint16_t pvid = BRIDGE_VLAN_INFO_PVID | BRIDGE_VLAN_INFO_UNTAGGED;
	_cleanup_free_ struct net_bridge_vlans *v = calloc(s->n_trunk + 1, sizeof(*v));
	size_t n = 0;
	int r;

	if (!v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (s->vlan)
		v[n++] = (struct net_bridge_vlans){ .min = s->vlan, .max = s->vlan, .flags = pvid };
	memcpy(v + n, s->trunk, s->n_trunk * sizeof(*v));
	n += s->n_trunk;
	if (!s->vlan && s->n_trunk)
		v[n++] = (struct net_bridge_vlans){ .min = 1, .max = 1, .flags = pvid };
	for (size_t i = 0; i < n; i += VLANS_PER_REQUEST) {
		r = net_bridge_vlan_add(h->ns, ifindex, v + i,
					n - i < VLANS_PER_REQUEST ? n - i : VLANS_PER_REQUEST);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "failed to setup vlan tag on interface \"%s\": %s", name,
					   strerror(-r));
	}
	return 0;
}

static int setup(struct bridge_host *h, const struct bridge_port_spec *s, const struct bridge_port *p,
		 struct cni_err *err)
{
	char path[64];
	int r;

	/* Upstream's SetupVeth(): we want to own the routes of this interface. */
	snprintf(path, sizeof(path), "net/ipv6/conf/%s/accept_ra", p->name);
	(void)sysctl_write(path, "0");
	if (s->hairpin || s->isolated) {
		r = net_bridge_port_set(h->ns, p->ifindex, s->hairpin, s->isolated);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "failed to setup hairpin mode or isolation for %s: %s",
					   p->name, strerror(-r));
	}
	if (!s->vlan && !s->n_trunk)
		return 0;
	/* removeDefaultVlan(): a new port has the bridge's default PVID and nothing else. */
	if (!s->preserve_default_vlan && (s->vlan || s->n_trunk) && h->info.default_pvid) {
		const struct net_bridge_vlans d = { .min = h->info.default_pvid,
						    .max = h->info.default_pvid };

		r = net_bridge_vlan_del(h->ns, p->ifindex, &d, 1);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "failed to remove default vlan on interface \"%s\": %s",
					   p->name, strerror(-r));
	}
	return add_vlans(h, s, p->name, p->ifindex, err);
}

/* The other end up: the kernel cannot open it in the request that makes the pair. */
static int peer_up(const struct bridge_port_spec *s, struct cni_err *err)
{
	struct net_link l;
	int r = net_link_get_by_name(s->peer_ns, s->peer_name, &l);

	if (r < 0)
		return net_err_op(err, r, "failed to lookup", s->peer_name);
	r = net_link_set_up(s->peer_ns, l.ifindex, true);
	return r < 0 ? net_err_op(err, r, "failed to set up", s->peer_name) : 0;
}

int bridge_port_add(struct bridge_host *h, const struct bridge_port_spec *s,
		    struct bridge_port *ret, struct cni_err *err)
{
	struct bridge_port p = { 0 };
	struct net_link l;
	int r;

	r = make_pair(h, s, &p, err);
	if (r < 0)
		return r;
	r = net_link_get_by_name(h->ns, p.name, &l);
	if (r < 0) {
		net_err_set(err, CNI_ERR_KERNEL, r, "failed to lookup \"%s\": %s", p.name, strerror(-r));
		goto fail;
	}
	p.ifindex = l.ifindex;
	if (s->peer_up)
		r = peer_up(s, err);
	if (r >= 0)
		r = setup(h, s, &p, err);
	if (r < 0)
		goto fail;
	*ret = p;
	return 0;

fail:
	/* By name when the lookup failed: the random name is this ADD's alone. */
	if (!p.ifindex && net_link_get_by_name(h->ns, p.name, &l) == 0)
		p.ifindex = l.ifindex;
	if (p.ifindex && net_link_delete(h->ns, p.ifindex) < 0)
		log_error("undo: cannot delete veth %s", p.name);
	return r;
}
