/* dummy CNI plugin: a dummy link in the pod, addressed by IPAM */
#include <errno.h>
#include <net/if.h>
#include <string.h>

#include "common/attach/attach.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/dummy/config.h"
#include "plugins/dummy/dummy.h"

/*
 * Made in the pod under CNI_IFNAME, as macvlan's child is: a plugin killed
 * after this leaves CNI_IFNAME, which DEL removes.
 */
static int create(struct attach *a, struct cni_err *err)
{
	const char *ifname = a->ctx->env.ifname;
	int r;

	log_debug("creating dummy %s in %s", ifname, a->ctx->env.netns);
	r = net_link_create(a->pod, &(struct net_child){ .kind = NET_CHILD_DUMMY, .name = ifname,
							 .netns_fd = -1 });
	if (r == -EEXIST)
		return net_err_op(err, r, "container already has an interface named", ifname);
	/* What the kernel answers for a link type it has no driver for, even as a module. */
	if (r == -EOPNOTSUPP)
		return net_err_set(err, CNI_ERR_KERNEL, r,
				   "failed to create dummy \"%s\": the kernel has no dummy driver "
				   "(CONFIG_DUMMY, module \"dummy\")", ifname);
	if (r < 0)
		return net_err_op(err, r, "failed to create dummy", ifname);
	return 0;
}

static int dummy_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	struct attach a = { .pod_fd = -1 };
	int r;

	r = dummy_config_load(ctx, err);
	if (r < 0)
		return r;
	r = attach_open(&a, ctx, err);
	if (r < 0)
		goto out;
	r = create(&a, err);
	if (r < 0)
		goto out;

	r = attach_address_created(&a, "dummy", ret, err);
out:
	attach_close(&a);
	return r;
}

static int dummy_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	return attach_del_created(ctx, "dummy", "a dummy", err);
}

static int dummy_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	const struct cni_iface *iface = NULL;
	struct attach a = { .pod_fd = -1 };
	struct net_link link;
	int r;

	r = dummy_config_load(ctx, err);
	if (r < 0)
		return r;
	if ((r = attach_check_begin(&a, ctx, &iface, err)) < 0 ||
	    (r = attach_check_link(&a, &link, err)) < 0)
		goto out;
	if (strcmp(link.kind, "dummy") != 0) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"Container interface %s not of type dummy", ifname);
		goto out;
	}
	if (!(link.flags & IFF_UP)) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENETDOWN, "Interface %s is down", ifname);
		goto out;
	}
	r = attach_check_end(&a, iface, &link, err);
out:
	attach_close(&a);
	return r;
}

const struct cni_plugin dummy_plugin = {
	.name = "dummy",
	.summary = "dummy: gives a pod a dummy link holding IPAM's addresses",
	.keys = dummy_config_keys,
	.add = dummy_add,
	.del = dummy_del,
	.check = dummy_check,
};
