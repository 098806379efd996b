/* vlan CNI plugin: an 802.1Q VLAN link of a master, in the pod */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <string.h>

#include "common/attach/attach.h"
#include "common/attach/master.h"
#include "common/cni/conf.h"
#include "common/cni/ipam.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/vlan/config.h"
#include "plugins/vlan/vlan.h"

/* The master, in the pod with linkInContainer, and what the kernel would refuse of it. */
static int find_master(const struct vlan_conf *c, struct attach *a, struct net_link *ret,
		       struct cni_err *err)
{
	int r = attach_master(a, c->master, c->link_in_container, ret, err);

	if (r < 0)
		return r;
	/* Both take no VLAN (NETIF_F_VLAN_CHALLENGED): said before the kernel's bare refusal. */
	if ((ret->flags & IFF_LOOPBACK) || ret->type == ARPHRD_INFINIBAND)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EOPNOTSUPP,
				   "master \"%s\" takes no VLAN (%s)", ret->name,
				   ret->type == ARPHRD_INFINIBAND ?
					   "it is InfiniBand: a partition is an ipoib network's pkey" :
					   "it is a loopback");
	if (c->mtu > ret->mtu)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MTU %lld, must be [0, master MTU(%u)]", (long long)c->mtu,
				   ret->mtu);
	/*
	 * A VLAN 0 link receives the frames that carry a priority tag only (VLAN
	 * 0, as RoCE with PFC sends them), which its master receives otherwise: on
	 * the node's master it would take them from the node. The reference makes
	 * one for a config without "vlanId".
	 */
	if (c->id == 0 && !c->link_in_container)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "vlanId 0 (or none given) on the node's master \"%s\": a VLAN 0 link "
				   "would take the master's priority-tagged frames from the node; give "
				   "a VLAN id 1-4094", ret->name);
	return 0;
}

/*
 * In the pod netns directly under CNI_IFNAME, as macvlan's child: no
 * temporary name and rename. A plugin killed after this leaves CNI_IFNAME,
 * which DEL removes.
 */
static int create(const struct vlan_conf *c, struct attach *a, const struct net_link *master,
		  struct cni_err *err)
{
	const char *ifname = a->ctx->env.ifname;
	struct net_link there;
	int r;

	log_debug("creating vlan %s on %s (id %u) in %s", ifname, master->name, c->id,
		  a->ctx->env.netns);
	r = net_link_create(c->link_in_container ? a->pod : a->host,
			    &(struct net_child){
				    .kind = NET_CHILD_VLAN,
				    .name = ifname,
				    .master_ifindex = master->ifindex,
				    .netns_fd = c->link_in_container ? -1 : a->pod_fd,
				    .mtu = (unsigned int)c->mtu,
				    .vlan = { .id = c->id },
			    });
	if (r == 0)
		return 0;
	/* Either name is taken in the pod, or the master has a link of that id (anywhere). */
	if (r == -EEXIST && net_link_get_by_name(a->pod, ifname, &there) == 0)
		return net_err_op(err, r, "container already has an interface named", ifname);
	if (r == -EEXIST)
		return net_err_set(err, CNI_ERR_KERNEL, r,
				   "failed to create vlan: master \"%s\" has a VLAN %u link already",
				   master->name, c->id);
	/* Both the kernel's answer for a link type it has no driver for and for a master without VLANs. */
	if (r == -EOPNOTSUPP)
		return net_err_set(err, CNI_ERR_KERNEL, r,
				   "failed to create vlan on master \"%s\": the kernel has no 802.1Q "
				   "driver (CONFIG_VLAN_8021Q, module \"8021q\"), or the master takes no "
				   "VLAN (the kernel's word in details)", master->name);
	return net_err_op(err, r, "failed to create vlan on master", master->name);
}

static int vlan_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	struct attach a = { .pod_fd = -1 };
	struct net_link master;
	struct vlan_conf c;
	int r;

	r = vlan_config_load(ctx, false, &c, err);
	if (r < 0)
		return r;
	if ((r = attach_open(&a, ctx, err)) < 0 || (r = find_master(&c, &a, &master, err)) < 0 ||
	    (r = create(&c, &a, &master, err)) < 0)
		goto out;
	r = attach_address_created(&a, "vlan", ret, err);
out:
	attach_close(&a);
	return r;
}

static int vlan_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	return attach_del_created(ctx, "vlan", "a vlan", err);
}

static int vlan_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	const struct cni_iface *iface = NULL;
	struct attach a = { .pod_fd = -1 };
	struct net_link master, link;
	struct vlan_conf c;
	int r;

	r = vlan_config_load(ctx, true, &c, err);
	if (r < 0)
		return r;
	if ((r = attach_check_begin(&a, ctx, &iface, err)) < 0 ||
	    (r = attach_master(&a, c.master, c.link_in_container, &master, err)) < 0 ||
	    (r = attach_check_link(&a, &link, err)) < 0)
		goto out;
	if (strcmp(link.kind, "vlan") != 0) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"Error: Container interface %s not of type vlan", ifname);
		goto out;
	}
	if (link.vlan_id != c.id) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"container vlan %s has VLAN id %u, the config %u", ifname, link.vlan_id,
				c.id);
		goto out;
	}
	if (c.mtu && link.mtu != c.mtu) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"container vlan %s has MTU %u, the config %lld", ifname, link.mtu,
				(long long)c.mtu);
		goto out;
	}
	r = attach_check_end(&a, iface, &link, err);
out:
	attach_close(&a);
	return r;
}

/* The reference asks IPAM "" and fails when the config has none: so does this. */
static int vlan_status(const struct cni_ctx *ctx, struct cni_err *err)
{
	if (!cni_conf_has_ipam(&ctx->conf))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "no plugin name provided (a vlan needs an \"ipam\" section)");
	return cni_ipam_run(ctx, CNI_CMD_STATUS, NULL, err);
}

const struct cni_plugin vlan_plugin = {
	.name = "vlan",
	.keys = vlan_config_keys,
	.summary = "vlan: gives a pod an 802.1Q VLAN link of a host (or pod) master interface",
	.add = vlan_add,
	.del = vlan_del,
	.check = vlan_check,
	.status = vlan_status,
};
