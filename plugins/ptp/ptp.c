/* ptp CNI plugin: a veth pair routed point to point between the pod and the node */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "common/attach/attach.h"
#include "common/attach/iface.h"
#include "common/attach/veth.h"
#include "common/cni/conf.h"
#include "common/cni/ipam.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/net/addr.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/route.h"
#include "common/net/sysctl.h"
#include "common/net/veth.h"
#include "common/netfilter/masq.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/hwaddr.h"
#include "common/util/log.h"
#include "plugins/ptp/config.h"
#include "plugins/ptp/ptp.h"

/* Upstream's tries at a free random name before it gives up. */
#define NAME_TRIES 10
/* The addresses one attachment's masquerade and DEL handle: IPAM gives one or two. */
#define PTP_ADDRS_MAX 16

/* What an ADD made, for the result and for its undo. */
struct add {
	const struct ptp_conf *c;
	struct attach a;
	char host_name[IFNAMSIZ];
	struct net_link host;    /* the node's end */
	struct net_link pod;     /* CNI_IFNAME in the pod */
	bool pair_made;
	bool masq_set;
};

static const struct masq_owner *owner_of(const struct cni_ctx *ctx, struct masq_owner *o)
{
	*o = (struct masq_owner){ .network = ctx->conf.name, .ifname = ctx->env.ifname,
				  .container_id = ctx->env.container_id };
	return o;
}

static size_t ipam_addrs(const struct cni_result *res, struct ip_prefix *addrs)
{
	size_t n = 0;

	for (size_t i = 0; i < res->n_ips && n < PTP_ADDRS_MAX; i++)
		addrs[n++] = res->ips[i].address;
	return n;
}

static int random_name(char name[IFNAMSIZ])
{
	uint8_t b[4];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -errno;
	snprintf(name, IFNAMSIZ, "veth%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
	return 0;
}

/*
 * The pair, the node's end under a free random name, up, without router
 * advertisements (upstream's SetupVeth()); EEXIST of the pod's name is the caller's error.
 */
static int make_pair(struct add *x, struct cni_err *err)
{
	const char *ifname = x->a.ctx->env.ifname;
	struct net_link l;
	char path[64];
	int r = -EEXIST;

	for (int i = 0; i < NAME_TRIES && r == -EEXIST; i++) {
		r = random_name(x->host_name);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_INTERNAL, r, "failed to generate random veth name: %s",
					   strerror(-r));
		r = net_veth_create(x->a.host, &(struct net_veth){
						   .name = x->host_name,
						   .up = true,
						   /* Upstream's node end is the peer it makes, with a length of 0. */
						   .no_queue = true,
						   .peer_name = ifname,
						   .peer_netns_fd = x->a.pod_fd,
						   .mtu = x->c->mtu,
					   });
		if (r == -EEXIST && net_link_get_by_name(x->a.pod, ifname, &l) == 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "container veth name (\"%s\") peer provided (\"%s\") already exists",
					   ifname, x->host_name);
	}
	if (r == -EEXIST)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "failed to find a unique veth name");
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "failed to make veth pair: %s", strerror(-r));
	x->pair_made = true;
	r = net_link_get_by_name(x->a.host, x->host_name, &x->host);
	if (r < 0)
		return net_err_op(err, r, "failed to lookup", x->host_name);
	snprintf(path, sizeof(path), "net/ipv6/conf/%s/accept_ra", x->host_name);
	(void)sysctl_write(path, "0");
	r = net_link_get_by_name(x->a.pod, ifname, &x->pod);
	if (r < 0)
		return net_err_op(err, r, "failed to look up", ifname);
	return 0;
}

static void route_err(struct cni_err *err, int r, const char *what, const struct net_route *rt)
{
	char dst[INET6_ADDRSTRLEN + 8];

	ip_prefix_format(&rt->dst, dst, sizeof(dst));
	net_err_set(err, CNI_ERR_KERNEL, r, "failed to %s route %s: %s", what, dst, strerror(-r));
}

/*
 * The pod's end as upstream's setupContainerVeth() leaves it: IPAM's addresses and
 * routes, then the subnet's own route replaced by a host route to the gateway and
 * the subnet through it, so that everything goes by the node's end.
 */
static int configure_pod(struct add *x, struct cni_err *err)
{
	const struct cni_result *res = &x->a.ipam;
	int r;

	r = iface_configure(x->a.pod, &x->pod, res, x->a.ipv6_autoconf, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < res->n_ips; i++) {
		const struct cni_ip *ip = &res->ips[i];
		unsigned int bits = (unsigned int)ip_addr_size(&ip->address.addr) * 8;
		struct net_route kernel = { .ifindex = x->pod.ifindex,
					    .dst = ip_prefix_network(&ip->address),
					    .scope = RT_SCOPE_NOWHERE, .protocol = RTPROT_KERNEL };
		struct net_route to_gw = { .ifindex = x->pod.ifindex,
					   .dst = { .addr = ip->gateway, .len = bits },
					   .scope = RT_SCOPE_LINK, .has_src = true,
					   .src = ip->address.addr };
		struct net_route subnet = { .ifindex = x->pod.ifindex, .dst = kernel.dst,
					    .has_gw = true, .gw = ip->gateway,
					    .scope = RT_SCOPE_UNIVERSE, .has_src = true,
					    .src = ip->address.addr };

		if ((r = net_route_del(x->a.pod, &kernel)) < 0) {
			route_err(err, r, "delete", &kernel);
			return r;
		}
		if ((r = net_route_add(x->a.pod, &to_gw)) < 0) {
			route_err(err, r, "add", &to_gw);
			return r;
		}
		if ((r = net_route_add(x->a.pod, &subnet)) < 0) {
			route_err(err, r, "add", &subnet);
			return r;
		}
	}
	return 0;
}

/* upstream's setupHostVeth(): the gateway on the node's end, a host route to each pod address. */
static int configure_host(struct add *x, struct cni_err *err)
{
	const struct cni_result *res = &x->a.ipam;
	char s[INET6_ADDRSTRLEN + 8];
	int r;

	for (size_t i = 0; i < res->n_ips; i++) {
		const struct cni_ip *ip = &res->ips[i];
		unsigned int bits = (unsigned int)ip_addr_size(&ip->address.addr) * 8;
		struct ip_prefix gw = { .addr = ip->gateway, .len = bits };
		struct net_route host = { .ifindex = x->host.ifindex,
					  .dst = { .addr = ip->address.addr, .len = bits },
					  .scope = RT_SCOPE_HOST };

		if ((r = net_addr_add(x->a.host, x->host.ifindex, &gw)) < 0) {
			ip_prefix_format(&gw, s, sizeof(s));
			return net_err_set(err, CNI_ERR_KERNEL, r, "failed to add IP addr %s to veth: %s",
					   s, strerror(-r));
		}
		if ((r = net_route_add(x->a.host, &host)) < 0 && r != -EEXIST) {
			ip_prefix_format(&host.dst, s, sizeof(s));
			return net_err_set(err, CNI_ERR_KERNEL, r, "failed to add route on host: %s: %s",
					   s, strerror(-r));
		}
	}
	return 0;
}

/* Forwarding for IPAM's families, last: a failed ADD has not touched the node-wide switch. */
static int forward(const struct cni_result *res, struct cni_err *err)
{
	bool done[2] = { false, false };

	for (size_t i = 0; i < res->n_ips; i++) {
		int fam = res->ips[i].address.addr.family, k = fam == AF_INET6;
		const char *path = k ? "net/ipv6/conf/all/forwarding" : "net/ipv4/ip_forward";
		char v[16];
		int r;

		if (done[k])
			continue;
		done[k] = true;
		if (sysctl_read(path, v, sizeof(v)) == 0 && strcmp(v, "1") == 0)
			continue;
		r = sysctl_write(path, "1");
		if (r < 0)
			return cni_err_set(err, CNI_ERR_KERNEL, r, "Could not enable IP forwarding: %s",
					   strerror(-r));
	}
	return 0;
}

/* Every address needs the gateway its routes and the node's end are built on. */
static int need_gateways(const struct cni_result *res, struct cni_err *err)
{
	char s[INET6_ADDRSTRLEN + 8];

	for (size_t i = 0; i < res->n_ips; i++) {
		if (res->ips[i].has_gateway)
			continue;
		ip_prefix_format(&res->ips[i].address, s, sizeof(s));
		return cni_err_set(err, CNI_ERR_IPAM, -EINVAL,
				   "IPAM result gives address %s no gateway: ptp routes through it", s);
	}
	return 0;
}

/* Upstream's result: the node's end, then the pod's with IPAM's addresses, routes and dns. */
static int result(struct add *x, struct cni_result *ret, struct cni_err *err)
{
	const struct cni_ctx *ctx = x->a.ctx;
	char host_mac[CNI_MAC_STRLEN], pod_mac[CNI_MAC_STRLEN];

	hwaddr_format(x->host.hwaddr, x->host.hwaddr_len, host_mac, sizeof(host_mac));
	hwaddr_format(x->pod.hwaddr, x->pod.hwaddr_len, pod_mac, sizeof(pod_mac));
	if (cni_result_add_iface(ret, x->host.name, host_mac, NULL) < 0 ||
	    cni_result_add_attachment(ret, ctx->env.ifname, pod_mac, ctx->env.netns, &x->a.ipam,
				      ctx->conf.has_dns ? &ctx->conf.dns : &x->a.ipam.dns) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

static int masquerade(struct add *x, struct cni_err *err)
{
	struct ip_prefix addrs[PTP_ADDRS_MAX];
	struct masq_owner o;
	size_t n = ipam_addrs(&x->a.ipam, addrs);

	x->masq_set = true;
	return masq_setup(x->c->masq_backend, owner_of(x->a.ctx, &o), addrs, n, err);
}

/* Everything an ADD did, taken back in reverse; the node end's addresses and routes go with it. */
static void undo(struct add *x)
{
	struct cni_err err = { 0 };
	struct ip_prefix addrs[PTP_ADDRS_MAX];
	struct masq_owner o;

	if (x->masq_set &&
	    masq_teardown(owner_of(x->a.ctx, &o), addrs, ipam_addrs(&x->a.ipam, addrs), &err) < 0)
		log_error("undo: %s", err.msg);
	if (x->pair_made)
		attach_undo_link(x->a.host, &x->host, x->host_name);
	attach_ipam_undo(&x->a);
}

static int ptp_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	struct ptp_conf c;
	struct add x = { .c = &c, .a = { .pod_fd = -1 } };
	int r;

	r = ptp_config_load(ctx, true, &c, err);
	if (r < 0)
		return r;
	if ((r = attach_open(&x.a, ctx, err)) < 0)
		goto out;
	/* IPAM first, as upstream: its errors come before the kernel's. */
	if ((r = attach_ipam_add(&x.a, err)) < 0)
		goto out;
	if ((r = need_gateways(&x.a.ipam, err)) < 0)
		goto fail;
	if ((r = make_pair(&x, err)) < 0 || (r = configure_pod(&x, err)) < 0 ||
	    (r = configure_host(&x, err)) < 0 || (c.ip_masq && (r = masquerade(&x, err)) < 0) ||
	    (r = forward(&x.a.ipam, err)) < 0 || (r = result(&x, ret, err)) < 0)
		goto fail;
	log_info("ADD %s: %s in %s, %s on the node", ctx->env.container_id, ctx->env.ifname,
		 ctx->env.netns, x.host_name);
	goto out;

fail:
	undo(&x);
out:
	attach_close(&x.a);
	return r;
}

static int ptp_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct ip_prefix addrs[PTP_ADDRS_MAX];
	struct attach a = { .pod_fd = -1 };
	struct masq_owner o;
	struct ptp_conf c;
	size_t n = 0;
	int r;

	r = ptp_config_load(ctx, false, &c, err);
	if (r < 0)
		return r;
	r = cni_ipam_run(ctx, CNI_CMD_DEL, NULL, err);
	if (r < 0)
		return r;
	r = attach_open_del(&a, ctx, err);
	if (r > 0)
		r = attach_veth_delete(&a, addrs, PTP_ADDRS_MAX, &n, err);
	attach_close(&a);
	if (r < 0)
		return r;
	if (n == 0)
		attach_veth_prev_addrs(ctx, addrs, PTP_ADDRS_MAX, &n);
	/* By names, not addresses: the pod (and what it held) may be gone. */
	if (c.ip_masq)
		return masq_teardown(owner_of(ctx, &o), n ? addrs : NULL, n, err);
	return 0;
}

static int ptp_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	const struct cni_iface *iface = NULL;
	struct attach a = { .pod_fd = -1 };
	struct net_link pod;
	struct ptp_conf c;
	int r;

	r = ptp_config_load(ctx, false, &c, err);
	if (r < 0)
		return r;
	if ((r = attach_check_begin(&a, ctx, &iface, err)) < 0 ||
	    (r = attach_check_link(&a, &pod, err)) < 0)
		goto out;
	if (strcmp(pod.kind, "veth") != 0) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"Error: Container interface %s not of type veth/p2p", pod.name);
		goto out;
	}
	r = attach_check_end(&a, iface, &pod, err);
out:
	attach_close(&a);
	return r;
}

/* IPAM's STATUS, then the masquerade's backend when the config masquerades. */
static int ptp_status(const struct cni_ctx *ctx, struct cni_err *err)
{
	int r = cni_ipam_run(ctx, CNI_CMD_STATUS, NULL, err);

	return r < 0 ? r : masq_status(&ctx->conf, err);
}

static int ptp_gc(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct cni_attachment *valid = NULL;
	struct ptp_conf c;
	size_t n = 0;
	int r;

	r = ptp_config_load(ctx, false, &c, err);
	if (r < 0)
		return r;
	r = cni_ipam_run(ctx, CNI_CMD_GC, NULL, err);
	if (r < 0)
		return r;
	r = cni_conf_gc_attachments(&ctx->conf, &valid, &n, err);
	/* Without the list of attachments to keep, nothing can be told stale. */
	if (r <= 0)
		return r;
	r = masq_gc(ctx->conf.name, valid, n, err);
	cni_attachments_free(valid, n);
	return r;
}

const struct cni_plugin ptp_plugin = {
	.name = "ptp",
	.keys = ptp_config_keys,
	.summary = "ptp: routes a pod point to point through a veth pair to the node",
	.add = ptp_add,
	.del = ptp_del,
	.check = ptp_check,
	.status = ptp_status,
	.gc = ptp_gc,
};
