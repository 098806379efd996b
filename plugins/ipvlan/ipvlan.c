/* ipvlan CNI plugin: an ipvlan child of a master link, in the pod */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/attach/attach.h"
#include "common/attach/master.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/net/addr.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/ipvlan/config.h"
#include "plugins/ipvlan/ipvlan.h"

/* The master, in the pod with linkInContainer, and what the kernel would refuse of it. */
static int find_master(const struct ipvlan_conf *c, struct attach *a, struct net_link *ret,
		       struct cni_err *err)
{
	int r = attach_master(a, c->master, c->link_in_container, ret, err);

	if (r < 0)
		return r;
	/* The kernel's own condition, said before it answers a bare EINVAL. */
	if (ret->type != ARPHRD_ETHER || (ret->flags & IFF_LOOPBACK))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "master \"%s\" is not an Ethernet link (%s): ipvlan needs an "
				   "Ethernet or RoCE master", ret->name,
				   ret->type == ARPHRD_INFINIBAND ? "it is InfiniBand" :
				   (ret->flags & IFF_LOOPBACK) ? "it is a loopback" :
				   "its link type is not Ethernet");
	if (c->mtu > ret->mtu)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MTU %lld, must be [0, master MTU(%u)]", (long long)c->mtu,
				   ret->mtu);
	return 0;
}

/*
 * In the pod netns directly under CNI_IFNAME, as macvlan's child: no
 * temporary name and rename. A plugin killed after this leaves CNI_IFNAME,
 * which DEL removes.
 */
static int create(const struct ipvlan_conf *c, struct attach *a, const struct net_link *master,
		  struct cni_err *err)
{
	const char *ifname = a->ctx->env.ifname;
	int r;

	log_debug("creating ipvlan %s on %s (mode %s, %s) in %s", ifname, master->name,
		  ipvlan_config_mode_name(c->mode), ipvlan_config_flag_name(c->flags),
		  a->ctx->env.netns);
	r = net_link_create(c->link_in_container ? a->pod : a->host,
			    &(struct net_child){
				    .kind = NET_CHILD_IPVLAN,
				    .name = ifname,
				    .master_ifindex = master->ifindex,
				    .netns_fd = c->link_in_container ? -1 : a->pod_fd,
				    .mtu = (unsigned int)c->mtu,
				    .ipvlan = { .mode = c->mode, .flags = c->flags },
			    });
	if (r == -EEXIST)
		return net_err_op(err, r, "container already has an interface named", ifname);
	/* What the kernel answers for a link type it has no driver for, even as a module. */
	if (r == -EOPNOTSUPP)
		return net_err_set(err, CNI_ERR_KERNEL, r,
				   "failed to create ipvlan on master \"%s\": the kernel has no ipvlan "
				   "driver (CONFIG_IPVLAN, module \"ipvlan\")", master->name);
	if (r == -EBUSY)
		return net_err_set(err, CNI_ERR_KERNEL, r,
				   "failed to create ipvlan on master \"%s\": another driver holds it "
				   "(a bridge or bond port, a macvlan master)", master->name);
	if (r < 0)
		return net_err_op(err, r, "failed to create ipvlan on master", master->name);
	return 0;
}

/*
 * Chained after a plugin that addressed the master: its addresses are the
 * ipvlan's (the reference points them all at it), its routes and dns kept.
 */
static int prev_addresses(struct attach *a, struct cni_err *err)
{
	const struct cni_result *prev = a->ctx->conf.prev_result;
	int r = 0;

	for (size_t i = 0; i < prev->n_ips && r >= 0; i++) {
		struct cni_ip ip = prev->ips[i];

		ip.iface = -1;
		r = cni_result_add_ip(&a->ipam, &ip);
	}
	for (size_t i = 0; i < prev->n_routes && r >= 0; i++)
		r = cni_result_add_route(&a->ipam, &prev->routes[i]);
	if (r >= 0)
		r = cni_result_set_dns(&a->ipam, &prev->dns);
	return r < 0 ? cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory") : 0;
}

/*
 * An ipvlan shares its master's MAC: frames for an address the ipvlan holds
 * go to the ipvlan, so an address of the master's own would be taken from it
 * (the node's uplink losing its address). Refused.
 */
static int check_not_master_address(struct attach *a, const struct net_link *master, bool in_pod,
				    struct cni_err *err)
{
	_cleanup_free_ struct net_addr *addrs = NULL;
	char text[IP_PREFIX_STRLEN];
	size_t n = 0;
	int r;

	r = net_addr_list(in_pod ? a->pod : a->host, master->ifindex, AF_UNSPEC, &addrs, &n);
	if (r < 0)
		return net_err_op(err, r, "failed to list the addresses of master", master->name);
	for (size_t i = 0; i < a->ipam.n_ips; i++)
		for (size_t j = 0; j < n; j++)
			if (ip_addr_equal(&a->ipam.ips[i].address.addr, &addrs[j].prefix.addr))
				return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EADDRINUSE,
						   "address %s is master \"%s\"'s own: an ipvlan holding "
						   "it would take its traffic from the master",
						   ip_addr_format(&addrs[j].prefix.addr, text, sizeof(text)),
						   master->name);
	return 0;
}

/* The new link addressed; from its lookup on, every failure removes it again. */
static int address(const struct ipvlan_conf *c, struct attach *a, const struct net_link *master,
		   struct cni_result *ret, struct cni_err *err)
{
	const char *ifname = a->ctx->env.ifname;
	struct net_link link = { 0 };
	int r;

	r = net_link_get_by_name(a->pod, ifname, &link);
	if (r < 0) {
		net_err_op(err, r, "failed to find new ipvlan", ifname);
		goto fail_link;
	}
	r = c->use_prev_ips ? prev_addresses(a, err) : attach_ipam_add(a, err);
	if (r < 0)
		goto fail_link;
	if ((r = check_not_master_address(a, master, c->link_in_container, err)) < 0 ||
	    (r = attach_configure(a, &link, err)) < 0 ||
	    (r = attach_result(a, link.hwaddr, link.hwaddr_len, ret, err)) < 0)
		goto fail_ipam;
	log_debug("ADD %s: %s in %s", a->ctx->env.container_id, ifname, a->ctx->env.netns);
	return 0;

fail_ipam:
	attach_ipam_undo(a);
fail_link:
	attach_undo_link(a->pod, &link, ifname);
	return r;
}

static int ipvlan_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	struct attach a = { .pod_fd = -1 };
	struct net_link master;
	struct ipvlan_conf c;
	int r;

	r = ipvlan_config_load(ctx, false, &c, err);
	if (r < 0)
		return r;
	if ((r = attach_open(&a, ctx, err)) < 0 || (r = find_master(&c, &a, &master, err)) < 0 ||
	    (r = create(&c, &a, &master, err)) < 0)
		goto out;
	r = address(&c, &a, &master, ret, err);
out:
	attach_close(&a);
	return r;
}

/* IPAM first (chained, there is none), then the link: as every plugin that created CNI_IFNAME. */
static int ipvlan_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	return attach_del_created(ctx, "ipvlan", "an ipvlan", err);
}

static int ipvlan_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	const struct cni_iface *iface = NULL;
	struct attach a = { .pod_fd = -1 };
	struct net_link master, link;
	struct ipvlan_conf c;
	int r;

	r = ipvlan_config_load(ctx, true, &c, err);
	if (r < 0)
		return r;
	if ((r = attach_check_begin(&a, ctx, &iface, err)) < 0)
		goto out;
	/* Without "master" the reference's CHECK fails; the default route's link may have moved. */
	if (c.master && (r = attach_master(&a, c.master, c.link_in_container, &master, err)) < 0)
		goto out;
	if ((r = attach_check_link(&a, &link, err)) < 0)
		goto out;
	if (strcmp(link.kind, "ipvlan") != 0) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"Error: Container interface %s not of type ipvlan", ifname);
		goto out;
	}
	if (link.ipvlan_mode != c.mode) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"Container IPVlan mode %s does not match expected value: %s",
				ipvlan_config_mode_name(link.ipvlan_mode), ipvlan_config_mode_name(c.mode));
		goto out;
	}
	if (link.ipvlan_flags != c.flags) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"Container IPVlan flag %s does not match expected value: %s",
				ipvlan_config_flag_name(link.ipvlan_flags), ipvlan_config_flag_name(c.flags));
		goto out;
	}
	r = attach_check_end(&a, iface, &link, err);
out:
	attach_close(&a);
	return r;
}

const struct cni_plugin ipvlan_plugin = {
	.name = "ipvlan",
	.keys = ipvlan_config_keys,
	.summary = "ipvlan: gives a pod an ipvlan child of a host (or pod) master interface",
	.add = ipvlan_add,
	.del = ipvlan_del,
	.check = ipvlan_check,
};
