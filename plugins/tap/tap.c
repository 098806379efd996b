/* tap CNI plugin: a persistent tap device in the pod, for a VM or a userspace stack to attach to */
#include <errno.h>
#include <net/if_arp.h>
#include <string.h>
#include <unistd.h>

#include "common/attach/attach.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/tap.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/tap/config.h"
#include "plugins/tap/tap.h"

/* The bridge it joins, in the pod, looked up before anything is made. */
static int find_bridge(const struct tap_conf *c, struct attach *a, struct net_link *ret,
		       struct cni_err *err)
{
	int r = net_link_get_by_name(a->pod, c->bridge, ret);

	if (r < 0)
		return cni_err_set(err, CNI_ERR_NOT_FOUND, r, "failed to get bridge %s: %s", c->bridge,
				   strerror(-r));
	return 0;
}

/*
 * Made in the pod under CNI_IFNAME, not yet persistent: until the ADD is done
 * the device lives only as long as @ret_fd, so a failed or killed ADD leaves
 * no link behind.
 */
static int create(const struct tap_conf *c, struct attach *a, int *ret_fd, struct cni_err *err)
{
	const char *ifname = a->ctx->env.ifname;
	int r;

	log_debug("creating tap %s in %s", ifname, a->ctx->env.netns);
	r = net_tap_create(a->pod,
			   &(struct net_tap){
				   .name = ifname,
				   .multi_queue = c->multi_queue,
				   .owner = c->owner,
				   .group = c->group,
				   .hwaddr = c->has_mac ? c->mac : NULL,
			   },
			   ret_fd);
	if (r == -EEXIST)
		return net_err_op(err, r, "container already has an interface named", ifname);
	if (r == -ENODEV)
		return cni_err_set(err, CNI_ERR_KERNEL, r,
				   "failed to create tap \"%s\": no /dev/net/tun (the kernel's tun driver)",
				   ifname);
	if (r < 0)
		return net_err_op(err, r, "failed to create tap", ifname);
	return 0;
}

/* MTU and bridge port: what only netlink sets, before IPAM brings the link up. */
static int setup(const struct tap_conf *c, struct attach *a, const struct net_link *link,
		 const struct net_link *bridge, struct cni_err *err)
{
	int r;

	if (c->mtu) {
		r = net_link_set_mtu(a->pod, link->ifindex, c->mtu);
		if (r < 0)
			return net_err_op(err, r, "failed to set MTU of", link->name);
	}
	if (c->bridge) {
		r = net_tap_set_bridge(a->pod, link->ifindex, bridge->ifindex);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "failed to set tap %s as a port of bridge %s: %s", link->name,
					   c->bridge, strerror(-r));
	}
	return 0;
}

static int tap_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	struct attach a = { .pod_fd = -1 };
	struct net_link link = { 0 }, bridge = { 0 };
	_cleanup_close_ int fd = -1;
	struct tap_conf c;
	int r;

	r = tap_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	r = attach_open(&a, ctx, err);
	if (r < 0)
		goto out;
	if (c.bridge && (r = find_bridge(&c, &a, &bridge, err)) < 0)
		goto out;
	r = create(&c, &a, &fd, err);
	if (r < 0)
		goto out;

	/* From here on the device exists in the pod and every failure removes it. */
	r = net_link_get_by_name(a.pod, ifname, &link);
	if (r < 0) {
		net_err_op(err, r, "failed to find new tap", ifname);
		goto fail_link;
	}
	r = setup(&c, &a, &link, &bridge, err);
	if (r < 0)
		goto fail_link;
	r = attach_address(&a, &link, ret, err);
	if (r < 0)
		goto fail_link;
	/* The last step: only a complete attachment outlives this process. */
	r = net_tap_persist(fd);
	if (r < 0) {
		net_err_op(err, r, "failed to make persistent tap", ifname);
		goto fail_ipam;
	}
	log_debug("ADD %s: %s in %s", ctx->env.container_id, ifname, ctx->env.netns);
	goto out;

fail_ipam:
	attach_ipam_undo(&a);
fail_link:
	/* Not persistent: closing its one queue unregisters the device, addresses and all. */
	close(TAKE_FD(fd));
out:
	attach_close(&a);
	return r;
}

static int tap_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	return attach_del_created(ctx, "tun", "a tap", err);
}

static int tap_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	const struct cni_iface *iface = NULL;
	struct attach a = { .pod_fd = -1 };
	struct net_link link;
	struct tap_conf c;
	int r;

	r = tap_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	if ((r = attach_check_begin(&a, ctx, &iface, err)) < 0 ||
	    (r = attach_check_link(&a, &link, err)) < 0)
		goto out;
	/* A tun device in tap mode: kind "tun" with an Ethernet header. */
	if (strcmp(link.kind, "tun") != 0 || link.type != ARPHRD_ETHER) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"Container interface %s not of type tap", ifname);
		goto out;
	}
	r = attach_check_end(&a, iface, &link, err);
out:
	attach_close(&a);
	return r;
}

const struct cni_plugin tap_plugin = {
	.name = "tap",
	.summary = "tap: gives a pod a persistent tap device, optionally a bridge port, with or "
		   "without IPAM",
	.keys = tap_config_keys,
	.add = tap_add,
	.del = tap_del,
	.check = tap_check,
};
