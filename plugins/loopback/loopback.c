/* loopback CNI plugin: the pod's lo up, its addresses in the result */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/attach/attach.h"
#include "common/cni/plugin.h"
#include "common/cni/result-copy.h"
#include "common/cni/result.h"
#include "common/net/addr.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "common/util/log.h"
#include "plugins/loopback/loopback.h"

/* Whatever CNI_IFNAME says: the plugin only ever works on the pod's loopback. */
#define LO "lo"

/* What Go's net.IP.IsLoopback() accepts: 127/8, ::1 and 127/8 mapped into IPv6. */
static bool is_loopback(const struct ip_addr *a)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t one[16] = { [15] = 1 };

	if (a->family == AF_INET)
		return a->bytes[0] == 127;
	if (memcmp(a->bytes, mapped, sizeof(mapped)) == 0)
		return a->bytes[12] == 127;
	return memcmp(a->bytes, one, sizeof(one)) == 0;
}

/*
 * The first address of each family, as the kernel lists them, after checking that
 * every address is a loopback one: a pod whose lo carries another is refused.
 */
static int read_addresses(struct net_ns *ns, int ifindex, struct cni_result *res,
			  struct cni_err *err)
{
	_cleanup_free_ struct net_addr *addrs = NULL;
	char buf[IP_PREFIX_STRLEN];
	bool have[2] = { false, false };
	size_t n = 0;
	int r;

	r = net_addr_list(ns, ifindex, AF_UNSPEC, &addrs, &n);
	if (r < 0)
		return net_err_op(err, r, "failed to list the addresses of", LO);
	for (size_t i = 0; i < n; i++)
		if (!is_loopback(&addrs[i].prefix.addr))
			return cni_err_set(err, CNI_ERR_INTERNAL, -EINVAL,
					   "loopback interface found with non-loopback address \"%s\"",
					   ip_addr_format(&addrs[i].prefix.addr, buf, sizeof(buf)));
	/* Upstream lists IPv4 first, then IPv6. */
	for (int fam = 0; fam < 2; fam++) {
		for (size_t i = 0; i < n; i++) {
			const struct cni_ip ip = { .address = addrs[i].prefix, .iface = 0 };

			if (addrs[i].prefix.addr.family != (fam ? AF_INET6 : AF_INET) || have[fam])
				continue;
			have[fam] = true;
			if (cni_result_add_ip(res, &ip) < 0)
				return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		}
	}
	return 0;
}

static int lo_get(struct attach *a, struct net_link *ret, struct cni_err *err)
{
	int r = net_link_get_by_name(a->pod, LO, ret);

	return r < 0 ? net_err_op(err, r, "failed to look up", LO) : 0;
}

static int loopback_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	struct cni_result res = { 0 };
	struct attach a = { .pod_fd = -1 };
	struct net_link lo;
	bool set_up = false;
	int r;

	if ((r = attach_open(&a, ctx, err)) < 0 || (r = lo_get(&a, &lo, err)) < 0)
		goto out;
	/* Up sets the kernel adding 127.0.0.1/8 and ::1/128 before it answers. */
	if (!(lo.flags & IFF_UP)) {
		r = net_link_set_up(a.pod, lo.ifindex, true);
		if (r < 0) {
			r = net_err_op(err, r, "failed to set up", LO);
			goto out;
		}
		set_up = true;
	}
	if (cni_result_add_iface(&res, LO, "00:00:00:00:00:00", ctx->env.netns) < 0) {
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto fail_up;
	}
	if ((r = read_addresses(a.pod, lo.ifindex, &res, err)) < 0)
		goto fail_up;
	/* A chained loopback hands on what the plugins before it reported. */
	if (ctx->conf.prev_result) {
		cni_result_free(&res);
		if (cni_result_copy(ctx->conf.prev_result, &res) < 0) {
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			goto fail_up;
		}
	}
	log_debug("ADD %s: lo up in %s", ctx->env.container_id, ctx->env.netns);
	*ret = res;
	res = (struct cni_result){ 0 };
	goto out;

fail_up:
	if (set_up && net_link_set_up(a.pod, lo.ifindex, false) < 0)
		log_error("undo: cannot set lo down again");
out:
	cni_result_free(&res);
	attach_close(&a);
	return r;
}

/* Upstream's DEL sets lo down; a netns already gone is no error. */
static int loopback_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct attach a = { .pod_fd = -1 };
	struct net_link lo;
	int r;

	r = attach_open_del(&a, ctx, err);
	if (r <= 0 || (r = lo_get(&a, &lo, err)) < 0)
		goto out;
	if ((lo.flags & IFF_UP) && (r = net_link_set_up(a.pod, lo.ifindex, false)) < 0)
		r = net_err_op(err, r, "failed to set down", LO);
out:
	attach_close(&a);
	return r < 0 ? r : 0;
}

static int loopback_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct attach a = { .pod_fd = -1 };
	struct net_link lo;
	int r;

	if ((r = attach_open(&a, ctx, err)) < 0 || (r = lo_get(&a, &lo, err)) < 0)
		goto out;
	if (!(lo.flags & IFF_UP))
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENETDOWN, "loopback interface is down");
out:
	attach_close(&a);
	return r;
}

/* No state and no IPAM: STATUS and GC have nothing to look at, whatever the config names. */
static int loopback_nothing(const struct cni_ctx *ctx, struct cni_err *err)
{
	(void)ctx;
	(void)err;
	return 0;
}

const struct cni_plugin loopback_plugin = {
	.name = "loopback",
	.summary = "loopback: sets the pod's lo up and reports 127.0.0.1/8 and ::1/128",
	.add = loopback_add,
	.del = loopback_del,
	.check = loopback_check,
	.status = loopback_nothing,
	.gc = loopback_nothing,
};
