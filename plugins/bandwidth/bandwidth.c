/* bandwidth CNI meta plugin: a chained pod's traffic shaped on its veth's host side */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_mirred.h>

#include "common/attach/attach.h"
#include "common/cni/plugin.h"
#include "common/cni/result-copy.h"
#include "common/cni/result.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/record/record.h"
#include "common/tc/tc.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/hwaddr.h"
#include "common/util/log.h"
#include "common/util/sha512.h"
#include "plugins/bandwidth/bandwidth.h"
#include "plugins/bandwidth/config.h"

/*
 * Which containers of which network have an ifb, for GC: the device's name is a hash of
 * both, which cannot be read back. One record "<container ID>:<network>" each.
 */
#define RECORD_DIR RECORD_ROOT "/bandwidth"
/* The ifb's name: "bwp" and sha512(network + container ID), 15 characters, as upstream. */
#define IFB_NAME_LEN 15

static int ifb_name(const char *network, const char *cid, char *buf, size_t size,
		    struct cni_err *err)
{
	char text[1024];

	if ((size_t)snprintf(text, sizeof(text), "%s%s", network, cid) >= sizeof(text) ||
	    sha512_name(IFB_NAME_LEN, "bwp", text, buf, size) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "network name and container ID too long");
	return 0;
}

static int record_of(const struct cni_ctx *ctx, char *buf, size_t size)
{
	const char *parts[] = { ctx->env.container_id, ctx->conf.name };

	return record_name(parts, 2, buf, size);
}

/*
 * getHostInterface() of upstream: the pod's CNI_IFNAME is a veth; its peer's index, looked
 * up in the host, names a host-side interface of prevResult.
 */
static int host_link(const struct cni_result *prev, struct net_ns *pod, const char *ifname,
		     struct net_link *ret, struct cni_err *err)
{
	struct net_link pl;
	int r;

	if (prev->n_ifaces == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "no interfaces provided");
	r = net_link_get_by_name(pod, ifname, &pl);
	if (r < 0 || strcmp(pl.kind, "veth") != 0 || pl.link_ifindex <= 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r < 0 ? r : -EINVAL,
				   "container interface %s has no veth peer: %s", ifname,
				   r < 0 ? strerror(-r) : "not a veth");
	r = net_link_get_by_index(NULL, pl.link_ifindex, ret);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "veth peer with index %d is not in host ns", pl.link_ifindex);
	for (size_t i = 0; i < prev->n_ifaces; i++)
		if (!prev->ifaces[i].sandbox && prev->ifaces[i].name &&
		    strcmp(prev->ifaces[i].name, ret->name) == 0)
			return 0;
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ENOENT,
			   "no veth peer of container interface found in host ns");
}

/* What one ADD has made, in order, for the undo. */
struct made {
	int host;          /* the host link */
	bool host_tbf;     /* its root tbf (ingress shaping) */
	bool ingress;      /* its ingress qdisc (and the redirect filter on it) */
	char ifb[IFNAMSIZ];
	bool recorded;
	char record[RECORD_NAME_MAX + 1];
};

static void undo(const struct made *m)
{
	int r;

	if (m->ifb[0] && (r = tc_ifb_delete(NULL, m->ifb)) < 0)
		log_warning("undo: cannot delete %s: %s", m->ifb, strerror(-r));
	if (m->ingress && (r = tc_qdisc_delete(NULL, m->host, TC_HANDLE_INGRESS)) < 0)
		log_warning("undo: cannot delete the ingress qdisc: %s", strerror(-r));
	if (m->host_tbf && (r = tc_qdisc_delete(NULL, m->host, TC_HANDLE_ROOT)) < 0)
		log_warning("undo: cannot delete the tbf qdisc: %s", strerror(-r));
	if (m->recorded)
		(void)record_remove(RECORD_DIR, m->record);
}

/* The pod's egress: an ifb, the host link's ingress redirected to it, a tbf on it. */
static int shape_egress(const struct cni_ctx *ctx, const struct bandwidth_conf *c,
			const struct net_link *host, struct made *m, struct cni_result *res,
			struct cni_err *err)
{
	char name[IFNAMSIZ], mac[CNI_MAC_STRLEN] = "";
	struct net_link ifb;
	struct tc_tbf t;
	int r;

	if ((r = bandwidth_tbf(&c->egress, "egress", &t, err)) < 0 ||
	    (r = ifb_name(ctx->conf.name, ctx->env.container_id, name, sizeof(name), err)) < 0)
		return r;
	/* Before the ifb: a process killed after making it leaves a record GC finds. */
	if (record_of(ctx, m->record, sizeof(m->record)) < 0) {
		log_debug("container ID and network name too long for a record: GC will not see it");
	} else {
		r = record_mark(RECORD_DIR, m->record);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_IO, r, "cannot keep the record of %s: %s",
					   m->record, strerror(-r));
		m->recorded = true;
	}
	r = tc_ifb_create(NULL, name, host->mtu);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "adding link: %s: %s", name, strerror(-r));
	snprintf(m->ifb, sizeof(m->ifb), "%s", name);
	r = net_link_get_by_name(NULL, name, &ifb);
	if (r < 0)
		return net_err_op(err, r, "get ifb device", name);
	r = tc_qdisc_add_ingress(NULL, host->ifindex);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "create ingress qdisc: %s", strerror(-r));
	m->ingress = true;
	{
		/* Upstream's filter carries its redirect twice: as RedirIndex and as an action. */
		const struct tc_redirect_action acts[] = {
			{ .eaction = TCA_EGRESS_REDIR, .action = TC_ACT_STOLEN, .ifindex = ifb.ifindex },
			{ .eaction = TCA_EGRESS_REDIR, .action = TC_ACT_OK, .ifindex = ifb.ifindex },
		};

		r = tc_filter_add_redirect(NULL, host->ifindex, TC_HANDLE(0xffff, 0), 1,
					   TC_HANDLE(1, 1), acts, ARRAY_SIZE(acts));
	}
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "add filter: %s", strerror(-r));
	r = tc_qdisc_add_tbf(NULL, ifb.ifindex, &t);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "create ifb qdisc: create qdisc: %s",
				   strerror(-r));
	hwaddr_format(ifb.hwaddr, ifb.hwaddr_len, mac, sizeof(mac));
	if (cni_result_add_iface(res, name, mac, NULL) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

static int bandwidth_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	struct attach a = { .pod_fd = -1 };
	struct cni_result res = { 0 };
	struct bandwidth_conf c;
	struct net_link host;
	struct made m = { 0 };
	struct tc_tbf t;
	int r;

	if ((r = bandwidth_config_load(ctx, &c, err)) < 0)
		return r;
	if (!ctx->conf.prev_result)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "must be called as chained plugin");
	if (cni_result_copy(ctx->conf.prev_result, &res) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (!bandwidth_limit_set(&c.ingress) && !bandwidth_limit_set(&c.egress))
		goto done;
	if ((r = attach_open(&a, ctx, err)) < 0 ||
	    (r = host_link(ctx->conf.prev_result, a.pod, ctx->env.ifname, &host, err)) < 0)
		goto out;
	m.host = host.ifindex;
	if (bandwidth_limit_set(&c.ingress)) {
		if ((r = bandwidth_tbf(&c.ingress, "ingress", &t, err)) < 0)
			goto fail;
		r = tc_qdisc_add_tbf(NULL, host.ifindex, &t);
		if (r < 0) {
			net_err_set(err, CNI_ERR_KERNEL, r, "create qdisc: %s", strerror(-r));
			goto fail;
		}
		m.host_tbf = true;
	}
	if (bandwidth_limit_set(&c.egress) && (r = shape_egress(ctx, &c, &host, &m, &res, err)) < 0)
		goto fail;
	log_debug("ADD %s: %s shaped (ingress %llu, egress %llu bits/s)", ctx->env.container_id,
		  host.name, (unsigned long long)c.ingress.rate, (unsigned long long)c.egress.rate);
done:
	*ret = res;
	res = (struct cni_result){ 0 };
	r = 0;
	goto out;
fail:
	undo(&m);
out:
	cni_result_free(&res);
	attach_close(&a);
	return r;
}

static int bandwidth_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	char name[IFNAMSIZ], rec[RECORD_NAME_MAX + 1];
	int r;

	/* Whatever the rates say (a config ADD refuses made nothing, or the reference's did). */
	if ((r = ifb_name(ctx->conf.name, ctx->env.container_id, name, sizeof(name), err)) < 0)
		return r;
	r = tc_ifb_delete(NULL, name);
	/* A link of that name that is no ifb is the node's: left alone. */
	if (r == -EPERM) {
		log_warning("DEL: %s is not an ifb: left alone", name);
		r = 0;
	}
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "cannot delete %s: %s", name, strerror(-r));
	/*
	 * The veth's qdiscs stay, as upstream leaves them: the chain's interface plugin
	 * deletes the veth right after (each delete here would wait a grace period).
	 */
	if (record_of(ctx, rec, sizeof(rec)) >= 0 && (r = record_remove(RECORD_DIR, rec)) < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot remove the record of %s: %s", rec,
				   strerror(-r));
	return 0;
}

/* The root tbf of a link, compared with what ADD makes of a limit. */
static int check_tbf(struct net_ns *ns, int ifindex, const char *what,
		     const struct bandwidth_limit *l, struct cni_err *err)
{
	struct tc_qdisc_info *q = NULL;
	struct tc_tbf want;
	size_t n = 0;
	int r;

	if ((r = bandwidth_tbf(l, what, &want, err)) < 0)
		return r;
	r = tc_qdisc_list(ns, ifindex, &q, &n);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "cannot list the qdiscs: %s", strerror(-r));
	r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT, "Failed to find qdisc (%s)", what);
	for (size_t i = 0; i < n; i++) {
		if (q[i].parent != TC_HANDLE_ROOT || !q[i].has_tbf)
			continue;
		*err = (struct cni_err){ 0 };
		if (q[i].tbf.rate != want.rate)
			r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL, "Rate doesn't match (%s)", what);
		else if (q[i].tbf.limit != want.limit)
			r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL, "Limit doesn't match (%s)", what);
		else if (q[i].tbf.buffer != want.buffer)
			r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL, "Buffer doesn't match (%s)", what);
		else
			r = 0;
		break;
	}
	free(q);
	return r;
}

static int bandwidth_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct attach a = { .pod_fd = -1 };
	struct bandwidth_conf c;
	struct net_link host, ifb;
	char name[IFNAMSIZ];
	int r;

	if ((r = bandwidth_config_load(ctx, &c, err)) < 0)
		return r;
	if (!ctx->conf.prev_result)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "must be called as a chained plugin");
	if ((r = attach_open(&a, ctx, err)) < 0 ||
	    (r = host_link(ctx->conf.prev_result, a.pod, ctx->env.ifname, &host, err)) < 0)
		goto out;
	if (bandwidth_limit_set(&c.ingress) &&
	    (r = check_tbf(NULL, host.ifindex, "ingress", &c.ingress, err)) < 0)
		goto out;
	if (bandwidth_limit_set(&c.egress)) {
		if ((r = ifb_name(ctx->conf.name, ctx->env.container_id, name, sizeof(name), err)) < 0)
			goto out;
		r = net_link_get_by_name(NULL, name, &ifb);
		if (r < 0) {
			r = cni_err_set(err, CNI_ERR_CHECK_FAILED, r, "get ifb device: %s: %s", name,
					strerror(-r));
			goto out;
		}
		r = check_tbf(NULL, ifb.ifindex, "egress", &c.egress, err);
	}
out:
	attach_close(&a);
	return r;
}

struct gc {
	const char *network;
	struct cni_err *err;
};

static int gc_gone(const char *cid, bool elsewhere, void *data)
{
	struct gc *g = data;
	char name[IFNAMSIZ];
	int r;

	(void)elsewhere;
	if ((r = ifb_name(g->network, cid, name, sizeof(name), g->err)) < 0)
		return r;
	log_debug("GC: container %s of network %s is gone: its ifb %s goes", cid, g->network, name);
	r = tc_ifb_delete(NULL, name);
	if (r == -EPERM)
		r = 0;
	return r < 0 ? net_err_set(g->err, CNI_ERR_KERNEL, r, "cannot delete %s: %s", name,
				   strerror(-r)) : 0;
}

/*
 * GC: the ifb of every container of this network ADD shaped that is not among the valid
 * attachments (a pod whose DEL never came keeps its ifb: the device outlives the veth).
 * Upstream has no GC.
 */
static int bandwidth_gc(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct cni_attachment *valid = NULL;
	struct gc g = { .network = ctx->conf.name, .err = err };
	size_t n = 0;
	int r;

	r = cni_conf_gc_attachments(&ctx->conf, &valid, &n, err);
	if (r > 0) {
		r = record_sweep(RECORD_DIR, ctx->conf.name, valid, n, gc_gone, &g);
		if (r < 0 && !err->code)
			r = cni_err_set(err, CNI_ERR_IO, r, "cannot sweep %s: %s", RECORD_DIR,
					strerror(-r));
	}
	cni_attachments_free(valid, n);
	return r;
}

/* STATUS: nothing to wait for (the kernel's tc is always there); the config must read. */
static int bandwidth_status(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct bandwidth_conf c;

	return bandwidth_config_load(ctx, &c, err);
}

const struct cni_plugin bandwidth_plugin = {
	.name = "bandwidth",
	.keys = bandwidth_config_keys,
	.summary = "bandwidth: a chained pod's ingress and egress shaped (tbf, and an ifb for egress)",
	.about_state = "Keeps " RECORD_DIR "/<container ID>:<network> (its ifb, for GC)",
	.add = bandwidth_add,
	.del = bandwidth_del,
	.check = bandwidth_check,
	.status = bandwidth_status,
	.gc = bandwidth_gc,
};
