/* bridge CNI plugin: a veth pair from the pod to a Linux bridge of the node */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/attach/attach.h"
#include "common/attach/iface.h"
#include "common/attach/veth.h"
#include "common/cni/conf.h"
#include "common/cni/ipam.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/net/addr.h"
#include "common/net/link.h"
#include "common/net/linkwait.h"
#include "common/net/neterr.h"
#include "common/net/netsysctl.h"
#include "common/netfilter/masq.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/hwaddr.h"
#include "common/util/log.h"
#include "plugins/bridge/bridge.h"
#include "plugins/bridge/config.h"
#include "plugins/bridge/host.h"
#include "plugins/bridge/port.h"
#include "plugins/bridge/spoofchk.h"

/* Upstream waits 0, 50, 500, 1000 and 1000 ms for the port to come up. */
#define PORT_UP_TIMEOUT_MS 2550

/* What an ADD made, for the result and for its undo. */
struct add {
	const struct bridge_conf *c;
	struct attach a;
	struct bridge_host h;
	struct bridge_port port;
	struct net_link pod;     /* CNI_IFNAME in the pod */
	bool port_made;
	bool spoofchk_set;
	bool masq_set;
	struct ip_prefix gws[BRIDGE_HOST_ADDRS_MAX];
	size_t n_gws;
	bool v4, v6;             /* the families of IPAM's addresses */
};

static const struct masq_owner *owner_of(const struct cni_ctx *ctx, struct masq_owner *o)
{
	*o = (struct masq_owner){ .network = ctx->conf.name, .ifname = ctx->env.ifname,
				  .container_id = ctx->env.container_id };
	return o;
}

/*
 * calcGateways(): a gateway for each address that has none (the subnet's first
 * address) when the bridge is the gateway, a default route per family through it
 * when asked and IPAM gave none, and the bridge's addresses to add.
 */
static int gateways(struct add *x, struct cni_err *err)
{
	struct cni_result *res = &x->a.ipam;
	bool found[2] = { false, false };

	for (size_t i = 0; i < res->n_ips; i++) {
		struct cni_ip *ip = &res->ips[i];
		int fam = ip->address.addr.family, k = fam == AF_INET6;
		struct cni_route def = { .dst = { .addr = { .family = fam } }, .scope = -1 };

		x->v4 = x->v4 || fam == AF_INET;
		x->v6 = x->v6 || fam == AF_INET6;
		if (!ip->has_gateway && x->c->is_gw) {
			struct ip_prefix net = ip_prefix_network(&ip->address);

			ip->gateway = net.addr;
			ip->gateway.bytes[ip_addr_size(&net.addr) - 1]++;
			ip->has_gateway = true;
		}
		for (size_t j = 0; x->c->is_default_gw && !found[k] && j < res->n_routes; j++) {
			const struct cni_route *rt = &res->routes[j];

			found[k] = rt->has_gw && rt->dst.len == 0 && rt->dst.addr.family == fam;
		}
		if (x->c->is_default_gw && !found[k]) {
			def.has_gw = ip->has_gateway;
			def.gw = ip->gateway;
			if (cni_result_add_route(res, &def) < 0)
				return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			found[k] = true;
		}
		if (x->c->is_gw && x->n_gws < BRIDGE_HOST_ADDRS_MAX)
			x->gws[x->n_gws++] = (struct ip_prefix){ .addr = ip->gateway,
								 .len = ip->address.len };
	}
	return 0;
}

/* IPv6 duplicate address detection as asked, then the addresses and routes. */
static int configure(struct add *x, struct cni_err *err)
{
	const char *ifname = x->a.ctx->env.ifname;
	char dad[96], enhanced[96];
	struct net_sysctl_op ops[2] = {
		{ .rel = dad, .value = x->c->enable_dad ? "1" : "0" },
		{ .rel = enhanced, .value = "1" },
	};
	size_t done;

	snprintf(dad, sizeof(dad), "ipv6/conf/%s/accept_dad", ifname);
	snprintf(enhanced, sizeof(enhanced), "ipv6/conf/%s/enhanced_dad", ifname);
	/* As upstream, whether they took is not asked (a kernel without IPv6 has neither). */
	(void)net_sysctl_batch(x->a.pod, ops, x->c->enable_dad ? 2 : 1, &done);
	return iface_configure(x->a.pod, &x->pod, &x->a.ipam, x->a.ipv6_autoconf, err);
}

/* The bridge's gateway addresses, as upstream's cmdAdd() adds them. */
static int gateway(struct add *x, struct cni_err *err)
{
	int r;

	if (!x->n_gws)
		return 0;
	r = bridge_host_lock(&x->h, x->c->bridge, err);
	for (size_t i = 0; i < x->n_gws && r >= 0; i++)
		r = bridge_host_gateway(&x->h, x->c, &x->gws[i], err);
	bridge_host_unlock(&x->h);
	return r;
}

/*
 * Forwarding for the gateways' families. Upstream turns it on before ipMasq; after it,
 * the result is the same and an ADD that fails on the masquerade has not touched the
 * node-wide switch (which no undo could turn back without racing other bridges' ADDs).
 */
static int forward(struct add *x, struct cni_err *err)
{
	int r = 0;

	for (size_t i = 0; i < x->n_gws && r >= 0; i++)
		r = bridge_host_forward(x->gws[i].addr.family, err);
	return r;
}

static int masquerade(struct add *x, struct cni_err *err)
{
	struct ip_prefix addrs[BRIDGE_HOST_ADDRS_MAX];
	struct masq_owner o;
	size_t n = 0;
	int r;

	for (size_t i = 0; i < x->a.ipam.n_ips && n < BRIDGE_HOST_ADDRS_MAX; i++)
		addrs[n++] = x->a.ipam.ips[i].address;
	x->masq_set = true;
	r = masq_setup(x->c->masq_backend, owner_of(x->a.ctx, &o), addrs, n, err);
	return r;
}

static int add_iface(struct cni_result *res, const char *name, const struct net_link *l,
		     const char *sandbox)
{
	char mac[CNI_MAC_STRLEN];

	hwaddr_format(l->hwaddr, l->hwaddr_len, mac, sizeof(mac));
	return cni_result_add_iface(res, name, mac, sandbox);
}

/* Upstream's result: bridge, host end, pod end (IPAM's addresses on it), the VLAN interface. */
static int result(struct add *x, const struct net_link *host_end, struct cni_result *ret,
		  struct cni_err *err)
{
	const struct cni_ctx *ctx = x->a.ctx;
	const struct cni_result *ipam = &x->a.ipam;
	struct net_link br;
	int r, pod;

	r = net_link_get_by_index(x->a.host, x->h.br.ifindex, &br);
	if (r < 0)
		return net_err_op(err, r, "could not lookup", x->c->bridge);
	if (add_iface(ret, br.name, &br, NULL) < 0 || add_iface(ret, host_end->name, host_end, NULL) < 0 ||
	    (pod = add_iface(ret, ctx->env.ifname, &x->pod, ctx->env.netns)) < 0 ||
	    (x->h.gw.ifindex != x->h.br.ifindex && add_iface(ret, x->h.gw.name, &x->h.gw, NULL) < 0))
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < ipam->n_ips; i++) {
		struct cni_ip ip = ipam->ips[i];

		ip.iface = pod;
		if (cni_result_add_ip(ret, &ip) < 0)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ipam->n_routes; i++)
		if (cni_result_add_route(ret, &ipam->routes[i]) < 0)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (cni_result_set_dns(ret, ctx->conf.has_dns ? &ctx->conf.dns : &ipam->dns) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

/* What upstream's cmdAdd() does once the port is there, before the port's state is waited on. */
static int address(struct add *x, struct cni_err *err)
{
	int r;

	if (x->c->macspoofchk) {
		x->spoofchk_set = true;
		r = bridge_spoofchk_setup(x->a.ctx->env.container_id, x->a.ctx->env.ifname,
					  x->port.name, x->pod.hwaddr, err);
		if (r < 0)
			return r;
	}
	if (!x->c->has_ipam)
		return 0;
	if ((r = attach_ipam_add(&x->a, err)) < 0 || (r = gateways(x, err)) < 0 ||
	    (r = configure(x, err)) < 0 || (r = gateway(x, err)) < 0 ||
	    (x->c->ip_masq && (r = masquerade(x, err)) < 0))
		return r;
	return forward(x, err);
}

/* Everything an ADD did, taken back in reverse (IPAM's result is still held). */
static void undo(struct add *x)
{
	const struct cni_ctx *ctx = x->a.ctx;
	struct cni_err err = { 0 };
	struct masq_owner o;

	if (x->masq_set) {
		struct ip_prefix addrs[BRIDGE_HOST_ADDRS_MAX];
		size_t n = 0;

		for (size_t i = 0; i < x->a.ipam.n_ips && n < BRIDGE_HOST_ADDRS_MAX; i++)
			addrs[n++] = x->a.ipam.ips[i].address;
		if (masq_teardown(owner_of(ctx, &o), addrs, n, &err) < 0)
			log_error("undo: %s", err.msg);
	}
	attach_ipam_undo(&x->a);
	err = (struct cni_err){ 0 };
	if (x->spoofchk_set && bridge_spoofchk_teardown(ctx->env.container_id, ctx->env.ifname, &err) < 0)
		log_error("undo: %s", err.msg);
	if (x->port_made)
		attach_undo_link(x->a.host, &(struct net_link){ .ifindex = x->port.ifindex }, x->port.name);
	bridge_host_undo(&x->h);
	bridge_host_unlock(&x->h);
}

static int bridge_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	_cleanup_free_ struct bridge_conf *c = malloc(sizeof(*c));
	struct add x = { .a = { .pod_fd = -1 }, .h = { .lock_fd = -1 } };
	struct net_link host_end;
	int r;

	if (!c)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = bridge_config_load(ctx, c, err);
	if (r < 0)
		return r;
	x.c = c;
	r = attach_open(&x.a, ctx, err);
	if (r < 0)
		goto out;
	x.h.ns = x.a.host;
	/* The bridge and the port under the lock: no failed ADD takes the bridge from under it. */
	if ((r = bridge_host_lock(&x.h, c->bridge, err)) < 0 ||
	    (r = bridge_host_ensure(&x.h, c, err)) < 0 ||
	    (r = bridge_port_add(&x.h, &(struct bridge_port_spec){
					    .peer_name = ctx->env.ifname,
					    .peer_netns_fd = x.a.pod_fd,
					    .peer_ns = x.a.pod,
					    .peer_hwaddr = c->has_mac ? c->mac : NULL,
					    .peer_up = !c->has_ipam && !c->no_container_iface,
					    .mtu = c->mtu,
					    .hairpin = c->hairpin,
					    .isolated = c->port_isolation,
					    .vlan = c->vlan,
					    .trunk = c->trunk,
					    .n_trunk = c->n_trunk,
					    .preserve_default_vlan = c->preserve_default_vlan,
				    }, &x.port, err)) < 0)
		goto fail;
	x.port_made = true;
	bridge_host_unlock(&x.h);
	r = net_link_get_by_name(x.a.pod, ctx->env.ifname, &x.pod);
	if (r < 0) {
		net_err_op(err, r, "failed to find new veth", ctx->env.ifname);
		goto fail;
	}
	r = address(&x, err);
	if (r >= 0)
		r = bridge_host_up(&x.h, err);
	if (r < 0)
		goto fail;
	r = net_link_get_by_index(x.a.host, x.port.ifindex, &host_end);
	if (r == 0 && !c->no_container_iface)
		r = net_link_wait_up(x.port.ifindex, PORT_UP_TIMEOUT_MS, &host_end);
	if (r < 0) {
		net_err_set(err, CNI_ERR_KERNEL, r, "bridge port in error state: %s",
			    r == -ETIMEDOUT ? "not up" : strerror(-r));
		goto fail;
	}
	r = result(&x, &host_end, ret, err);
	if (r < 0)
		goto fail;
	log_info("ADD %s: %s in %s, port %s on %s", ctx->env.container_id, ctx->env.ifname,
		 ctx->env.netns, x.port.name, c->bridge);
	goto out;

fail:
	undo(&x);
out:
	bridge_host_unlock(&x.h);
	attach_close(&x.a);
	return r;
}

static int bridge_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_free_ struct bridge_conf *c = malloc(sizeof(*c));
	struct ip_prefix addrs[BRIDGE_HOST_ADDRS_MAX];
	struct attach a = { .pod_fd = -1 };
	struct masq_owner o;
	size_t n = 0;
	int r;

	if (!c)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = bridge_config_load(ctx, c, err);
	if (r < 0)
		return r;
	r = cni_ipam_run(ctx, CNI_CMD_DEL, NULL, err);
	if (r < 0)
		return r;
	r = attach_open_del(&a, ctx, err);
	if (r > 0)
		r = attach_veth_delete(&a, addrs, BRIDGE_HOST_ADDRS_MAX, &n, err);
	attach_close(&a);
	if (r < 0)
		return r;
	if (n == 0)
		attach_veth_prev_addrs(ctx, addrs, BRIDGE_HOST_ADDRS_MAX, &n);
	if (c->macspoofchk &&
	    (r = bridge_spoofchk_teardown(ctx->env.container_id, ctx->env.ifname, err)) < 0)
		return r;
	/* By names, not addresses: the pod (and what it held) may be gone. */
	if (c->has_ipam && c->ip_masq)
		return masq_teardown(owner_of(ctx, &o), n ? addrs : NULL, n, err);
	return 0;
}

/* validateCniBrInterface(): the bridge of prevResult is a bridge here, promiscuous as asked. */
static int check_bridge(const struct bridge_conf *c, const struct cni_iface *iface,
			struct net_link *ret, struct cni_err *err)
{
	char mac[CNI_MAC_STRLEN];
	bool promisc;

	if (!iface)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT,
				   "CNI created bridge %s in host namespace was not found", c->bridge);
	if (net_link_get_by_name(NULL, iface->name, ret) < 0)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT, "Interface name %s not found",
				   iface->name);
	if (iface->sandbox && *iface->sandbox)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "Interface %s should not be in sandbox", iface->name);
	if (strcmp(ret->kind, "bridge") != 0)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "Interface %s does not have link type of bridge", iface->name);
	hwaddr_format(ret->hwaddr, ret->hwaddr_len, mac, sizeof(mac));
	if (iface->mac[0] && strcasecmp(iface->mac, mac) != 0)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "Bridge interface %s Mac doesn't match: %s", iface->name, iface->mac);
	promisc = ret->flags & IFF_PROMISC;
	if (promisc != c->promisc)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "Bridge interface %s configured Promisc Mode %s doesn't match current state: %s ",
				   iface->name, c->promisc ? "true" : "false", promisc ? "true" : "false");
	return 0;
}

/* validateCniVethInterface(): a host interface of prevResult that is the pod's port on the bridge. */
static bool is_port(const struct cni_iface *iface, const struct net_link *br,
		    const struct net_link *pod, struct cni_err *err, int *r)
{
	char mac[CNI_MAC_STRLEN];
	struct net_link l;

	*r = 0;
	if (iface->sandbox && *iface->sandbox) {
		*r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				 "Interface %s should not be in sandbox", iface->name);
		return false;
	}
	if (net_link_get_by_name(NULL, iface->name, &l) < 0) {
		*r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT, "Interface name %s not found",
				 iface->name);
		return false;
	}
	if (strcmp(l.kind, "veth") != 0 || l.ifindex != pod->link_ifindex ||
	    l.link_ifindex != pod->ifindex || l.master_ifindex != br->ifindex)
		return false;
	hwaddr_format(l.hwaddr, l.hwaddr_len, mac, sizeof(mac));
	if (iface->mac[0] && strcasecmp(iface->mac, mac) != 0) {
		*r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				 "Interface %s Mac doesn't match: %s not found", iface->name, iface->mac);
		return false;
	}
	return true;
}

static int bridge_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_free_ struct bridge_conf *c = malloc(sizeof(*c));
	const struct cni_iface *iface = NULL, *br_iface = NULL;
	struct attach a = { .pod_fd = -1 };
	struct net_link br, pod;
	const struct cni_result *prev;
	bool found = false;
	int r;

	if (!c)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = bridge_config_load(ctx, c, err);
	if (r < 0)
		return r;
	if ((r = attach_check_begin(&a, ctx, &iface, err)) < 0)
		goto out;
	prev = ctx->conf.prev_result;
	for (size_t i = 0; i < prev->n_ifaces && !br_iface; i++)
		if (strcmp(prev->ifaces[i].name, c->bridge) == 0)
			br_iface = &prev->ifaces[i];
	if ((r = check_bridge(c, br_iface, &br, err)) < 0 || (r = attach_check_link(&a, &pod, err)) < 0)
		goto out;
	if (strcmp(pod.kind, "veth") != 0) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"Error: Container interface %s not of type veth", pod.name);
		goto out;
	}
	for (size_t i = 0; i < prev->n_ifaces && !found && r >= 0; i++)
		if (&prev->ifaces[i] != br_iface && &prev->ifaces[i] != iface)
			found = is_port(&prev->ifaces[i], &br, &pod, err, &r);
	if (r < 0)
		goto out;
	if (!found) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT,
				"CNI veth created for bridge %s was not found", c->bridge);
		goto out;
	}
	r = attach_check_end(&a, iface, &pod, err);
out:
	attach_close(&a);
	return r;
}

/* IPAM's STATUS, then the masquerade's backend when the config masquerades. */
static int bridge_status(const struct cni_ctx *ctx, struct cni_err *err)
{
	int r = cni_ipam_run(ctx, CNI_CMD_STATUS, NULL, err);

	return r < 0 ? r : masq_status(&ctx->conf, err);
}

static int bridge_gc(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_free_ struct bridge_conf *c = malloc(sizeof(*c));
	struct cni_attachment *valid = NULL;
	size_t n = 0;
	int r;

	if (!c)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = bridge_config_load(ctx, c, err);
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
	if (r >= 0)
		r = bridge_spoofchk_gc(c->bridge, valid, n, err);
	cni_attachments_free(valid, n);
	return r;
}

const struct cni_plugin bridge_plugin = {
	.name = "bridge",
	.keys = bridge_config_keys,
	.summary = "bridge: connects a pod to a Linux bridge of the node through a veth pair",
	.add = bridge_add,
	.del = bridge_del,
	.check = bridge_check,
	.status = bridge_status,
	.gc = bridge_gc,
};
