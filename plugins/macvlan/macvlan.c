/* macvlan CNI plugin: a macvlan child of a master link, moved into the pod */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>

#include "common/attach/attach.h"
#include "common/cni/conf.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/route.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/macvlan/config.h"
#include "plugins/macvlan/macvlan.h"

/* A master that is not there: the names it could have been, for the message. */
static int master_missing(struct net_ns *ns, const struct macvlan_conf *c, int r, struct cni_err *err)
{
	char names[200];

	attach_link_names(ns, ARPHRD_ETHER, names, sizeof(names));
	return cni_err_set(err, CNI_ERR_NOT_FOUND, r,
			   "failed to lookup master \"%s\": %s; the %s's Ethernet links: %s (%s)",
			   c->master, strerror(-r), c->link_in_container ? "pod" : "host", names,
			   c->link_in_container ? "linkInContainer: the master is looked up in the pod" :
			   "the master is one of the node's interface names");
}

/* The master and its MTU check, in the pod when it lives there (linkInContainer). */
static int find_master(const struct macvlan_conf *c, struct attach *a, struct net_link *ret,
		       struct cni_err *err)
{
	struct net_ns *ns = c->link_in_container ? a->pod : a->host;
	int ifindex;
	int r;

	if (c->master) {
		r = net_link_get_by_name(ns, c->master, ret);
		if (r == -ENODEV)
			return master_missing(ns, c, r, err);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_NOT_FOUND, r, "failed to lookup master \"%s\": %s",
					   c->master, strerror(-r));
	} else {
		r = net_default_route_ifindex(ns, &ifindex);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_NOT_FOUND, r, "no default route interface found");
		r = net_link_get_by_index(ns, ifindex, ret);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_NOT_FOUND, r,
					   "failed to lookup default route interface %d: %s", ifindex,
					   strerror(-r));
		/* The reference's choice, kept (a misspelt "master" is warned of by the dispatch). */
		log_info("no \"master\" given: %s, the link of the default route, is the master",
			 ret->name);
	}
	/* The kernel's own condition, said before it answers a bare EINVAL. */
	if (ret->type != ARPHRD_ETHER || (ret->flags & IFF_LOOPBACK))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "master \"%s\" is not an Ethernet link (%s): macvlan needs an "
				   "Ethernet or RoCE master%s", ret->name,
				   ret->type == ARPHRD_INFINIBAND ? "it is InfiniBand" :
				   (ret->flags & IFF_LOOPBACK) ? "it is a loopback" : "its link type is not Ethernet",
				   ret->type == ARPHRD_INFINIBAND ?
					   "; an IPoIB network uses the ipoib plugin (an IPoIBNetwork, not a MacvlanNetwork)" : "");
	if (c->mtu > ret->mtu)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MTU %u, must be [0, master MTU(%u)]", c->mtu, ret->mtu);
	return 0;
}

/*
 * In the pod netns directly, under its name there, sent from the netns of the
 * master (a host master's index means nothing in the pod). Renaming a link
 * costs the kernel a wait for an RCU grace period, as much as creating it:
 * there is no temporary name. A plugin killed after this leaves CNI_IFNAME,
 * which DEL removes; a link of that name already there is refused (EEXIST),
 * whoever made it.
 */
static int create(const struct macvlan_conf *c, struct attach *a, const struct net_link *master,
		  struct cni_err *err)
{
	const char *ifname = a->ctx->env.ifname;
	int r;

	log_debug("creating macvlan %s on %s (mode %s) in %s", ifname, master->name,
		  macvlan_config_mode_name(c->mode), a->ctx->env.netns);
	r = net_link_create(c->link_in_container ? a->pod : a->host,
			    &(struct net_child){
				    .kind = NET_CHILD_MACVLAN,
				    .name = ifname,
				    .master_ifindex = master->ifindex,
				    .netns_fd = c->link_in_container ? -1 : a->pod_fd,
				    .mtu = c->mtu,
				    .hwaddr = c->has_mac ? c->mac : NULL,
				    .hwaddr_len = c->mac_len,
				    /* Without IPAM nothing is set before it goes up: up at once. */
				    .up = !c->has_ipam,
				    .macvlan = { .mode = c->mode, .bc_queue_len = c->bc_queue_len },
			    });
	if (r == -EEXIST)
		return net_err_op(err, r, "container already has an interface named", ifname);
	if (r < 0)
		return net_err_op(err, r, "failed to create macvlan on master", master->name);
	return 0;
}

static int macvlan_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	struct attach a = { .pod_fd = -1 };
	struct net_link master;
	struct macvlan_conf c;
	int r;

	r = macvlan_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	r = attach_open(&a, ctx, err);
	if (r < 0)
		goto out;
	r = find_master(&c, &a, &master, err);
	if (r < 0)
		goto out;
	r = create(&c, &a, &master, err);
	if (r < 0)
		goto out;

	r = attach_address_created(&a, "macvlan", ret, err);
out:
	attach_close(&a);
	return r;
}

static int macvlan_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	return attach_del_created(ctx, "macvlan", "a macvlan", err);
}

static int macvlan_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	const struct cni_iface *iface = NULL;
	struct attach a = { .pod_fd = -1 };
	struct net_link master, link;
	struct macvlan_conf c;
	int r;

	r = macvlan_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	if ((r = attach_check_begin(&a, ctx, &iface, err)) < 0 ||
	    (r = find_master(&c, &a, &master, err)) < 0 ||
	    (r = attach_check_link(&a, &link, err)) < 0)
		goto out;
	if (strcmp(link.kind, "macvlan") != 0) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"Container interface %s not of type macvlan", ifname);
		goto out;
	}
	if (link.macvlan_mode != c.mode) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"container macvlan mode %s does not match expected value: %s",
				macvlan_config_mode_name(link.macvlan_mode),
				macvlan_config_mode_name(c.mode));
		goto out;
	}
	r = attach_check_end(&a, iface, &link, err);
out:
	attach_close(&a);
	return r;
}

const struct cni_plugin macvlan_plugin = {
	.name = "macvlan",
	.summary = "macvlan: gives a pod a macvlan child of a host (or pod) master interface",
	.keys = macvlan_config_keys,
	.add = macvlan_add,
	.del = macvlan_del,
	.check = macvlan_check,
};
