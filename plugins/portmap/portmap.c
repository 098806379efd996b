/* portmap CNI meta plugin: host ports forwarded to a chained container's address */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/plugin.h"
#include "common/cni/result-copy.h"
#include "common/cni/result.h"
#include "common/net/link.h"
#include "common/net/netsysctl.h"
#include "common/net/route.h"
#include "common/netfilter/conntrack.h"
#include "common/netfilter/nft.h"
#include "common/record/record.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/portmap/config.h"
#include "plugins/portmap/iptables.h"
#include "plugins/portmap/nftables.h"
#include "plugins/portmap/portmap.h"

/*
 * The containers whose nftables rules a GC may take: nftables rules carry only the
 * container ID (upstream's comment, which its DEL finds them by), so which network
 * made them is kept here, one record "<container ID>:<network>" each. iptables rules
 * name their network in the entry rule's comment and need none.
 */
#define RECORD_DIR RECORD_ROOT "/portmap"

static int copy_result(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	if (cni_result_copy(ctx->conf.prev_result, ret) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

/*
 * The backend a config does not name: iptables when the host's can be run, else nftables
 * when the kernel speaks it, else iptables (whose failure then says why), as upstream picks.
 */
static int pick_backend(struct portmap_conf *c, struct cni_err *err)
{
	struct cni_err e = { 0 };

	if (!c->backend_given) {
		c->backend = PORTMAP_IPTABLES;
		if (!portmap_ipt_usable(&e) && portmap_nft_usable(&e))
			c->backend = PORTMAP_NFTABLES;
	}
	return cni_err_prefix(err, portmap_config_check_backend(c, err), "failed to parse config");
}

static int record_name_of(const char *cid, const char *network, char *buf, size_t size)
{
	const char *parts[] = { cid, network };

	return record_name(parts, 2, buf, size);
}

/* Set route_localnet on the host link that routes to the container: 127/8 may then cross. */
static int enable_localnet(const struct ip_addr *ip, struct cni_err *err)
{
	struct net_link link;
	char path[64];
	int ifindex, r;

	/* Upstream goes on without it when no route or link is found. */
	if (net_route_get(NULL, ip, &ifindex) < 0 || net_link_get_by_index(NULL, ifindex, &link) < 0)
		return 0;
	snprintf(path, sizeof(path), "ipv4/conf/%s/route_localnet", link.name);
	r = net_sysctl_write(NULL, path, "1");
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "unable to enable route_localnet: %s: %s",
				   link.name, strerror(-r));
	return 0;
}

/* UDP conntrack entries made before the mapping would keep its traffic: deleted, as upstream. */
static void forget_udp(const struct portmap_conf *c, int family)
{
	_cleanup_free_ uint16_t *ports = calloc(c->n_maps + 1, sizeof(*ports));
	struct cni_err e = { 0 };
	size_t n = 0;

	if (!ports)
		return;
	for (size_t i = 0; i < c->n_maps; i++)
		if (c->maps[i].proto == IPPROTO_UDP)
			ports[n++] = c->maps[i].host_port;
	if (ct_delete_dports(family, IPPROTO_UDP, ports, n, NULL, &e) < 0)
		log_warning("failed to delete stale UDP conntrack entries: %s", e.msg);
}

static int nft_add(const struct cni_ctx *ctx, const struct portmap_conf *c,
		   struct nft_batch **ret, struct cni_err *err)
{
	char name[RECORD_NAME_MAX + 1];
	bool recorded = false;
	int r;

	/* Before the rules: a process killed between the two leaves nothing GC cannot find. */
	if (record_name_of(ctx->env.container_id, ctx->conf.name, name, sizeof(name)) < 0) {
		log_debug("container ID and network name too long for a record: GC will not see it");
	} else {
		r = record_mark(RECORD_DIR, name);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_IO, r, "cannot keep the record of %s: %s",
					   name, strerror(-r));
		recorded = true;
	}
	r = portmap_nft_add(c, ctx->env.container_id, ret, err);
	if (r < 0 && recorded)
		(void)record_remove(RECORD_DIR, name);
	return r;
}

static int undo_rules(const struct cni_ctx *ctx, const struct portmap_conf *c)
{
	struct cni_err e = { 0 };
	int r;

	if (c->backend == PORTMAP_NFTABLES) {
		char name[RECORD_NAME_MAX + 1];

		r = portmap_nft_del(ctx->env.container_id, &e);
		if (r >= 0 && record_name_of(ctx->env.container_id, ctx->conf.name, name,
					     sizeof(name)) >= 0)
			(void)record_remove(RECORD_DIR, name);
	} else {
		r = portmap_ipt_del(ctx->conf.name, ctx->env.container_id, &e);
	}
	if (r < 0)
		log_warning("undo: %s", e.msg);
	return r;
}

static int portmap_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	struct nft_batch *committed = NULL;
	struct cni_result res = { 0 };
	struct portmap_conf c;
	int r;

	r = portmap_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	if (!ctx->conf.prev_result) {
		r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "must be called as chained plugin");
		goto out;
	}
	if ((r = copy_result(ctx, &res, err)) < 0)
		goto out;
	if (c.n_maps == 0 || (!c.has_ip4 && !c.has_ip6))
		goto done;
	if ((r = pick_backend(&c, err)) < 0)
		goto out;
	r = c.backend == PORTMAP_NFTABLES ? nft_add(ctx, &c, &committed, err) :
					    portmap_ipt_add(&c, ctx->conf.name, ctx->env.container_id, err);
	if (r < 0)
		goto out;
	if (c.has_ip4)
		forget_udp(&c, AF_INET);
	if (c.has_ip6)
		forget_udp(&c, AF_INET6);
	if (c.snat && c.has_ip4 && (r = enable_localnet(&c.ip4.addr, err)) < 0) {
		undo_rules(ctx, &c);
		goto out;
	}
	log_debug("ADD %s: %zu port mapping(s) through %s", ctx->env.container_id, c.n_maps,
		  c.backend == PORTMAP_NFTABLES ? "nftables" : "iptables");
done:
	*ret = res;
	res = (struct cni_result){ 0 };
out:
	/* Last: the kernel's freeing of the nftables transaction has run meanwhile. */
	nft_batch_free(committed);
	cni_result_free(&res);
	portmap_config_free(&c);
	return r;
}

static int portmap_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct portmap_conf c;
	int r;

	r = portmap_config_load(ctx, &c, err);
	if (r < 0 && err->code != CNI_ERR_INVALID_CONFIG)
		return r;
	if (r < 0) {
		/*
		 * A config ours refuses may be one the reference took (a node moved to ours
		 * with pods live): what its ADD made goes all the same, whichever backend.
		 */
		struct cni_err e = { 0 };

		log_warning("DEL with a config ADD refuses (%s): deleting this container's rules of "
			    "both backends", err->msg);
		*err = (struct cni_err){ 0 };
		if (portmap_nft_del(ctx->env.container_id, &e) < 0)
			log_warning("DEL: %s", e.msg);
		return portmap_ipt_del(ctx->conf.name, ctx->env.container_id, err);
	}
	/* As upstream: without mappings there is nothing this container was given. */
	if (c.n_maps == 0)
		goto out;
	if ((r = pick_backend(&c, err)) < 0)
		goto out;
	if (c.backend == PORTMAP_NFTABLES) {
		char name[RECORD_NAME_MAX + 1];

		r = portmap_nft_del(ctx->env.container_id, err);
		if (r >= 0 && record_name_of(ctx->env.container_id, ctx->conf.name, name,
					     sizeof(name)) >= 0)
			r = record_remove(RECORD_DIR, name);
		if (r < 0 && !err->code)
			r = cni_err_set(err, CNI_ERR_IO, r, "cannot remove the record of %s: %s",
					name, strerror(-r));
	} else {
		r = portmap_ipt_del(ctx->conf.name, ctx->env.container_id, err);
	}
out:
	portmap_config_free(&c);
	return r;
}

static int portmap_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct portmap_conf c;
	int r;

	r = portmap_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	if (!ctx->conf.prev_result)
		r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "Required prevResult missing");
	else if (c.n_maps > 0 && (r = pick_backend(&c, err)) >= 0)
		r = c.backend == PORTMAP_NFTABLES ?
			    portmap_nft_check(&c, ctx->env.container_id, err) :
			    portmap_ipt_check(&c, ctx->conf.name, ctx->env.container_id, err);
	portmap_config_free(&c);
	return r;
}

/* STATUS: whether the backend the config names (or either, when none) can be used. */
static int portmap_status(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct cni_err e = { 0 };
	struct portmap_conf c;
	int r, ipt = 0, nft = 0;

	r = portmap_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	if (!c.backend_given || c.backend == PORTMAP_IPTABLES)
		ipt = portmap_ipt_usable(&e);
	if (!c.backend_given || c.backend == PORTMAP_NFTABLES)
		nft = !ipt && portmap_nft_usable(&e);
	portmap_config_free(&c);
	if (ipt || nft)
		return 0;
	return cni_err_set(err, CNI_ERR_STATUS_UNAVAILABLE, -ENOEXEC,
			   "portmap cannot write rules: %s", e.msg);
}

struct gc {
	const char *network;
	struct cni_err *err;
};

static int gc_gone(const char *cid, bool elsewhere, void *data)
{
	struct gc *g = data;

	log_debug("GC: container %s of network %s is gone: its port mappings go", cid, g->network);
	/* Its rules are another network's too (they carry the container ID alone): kept. */
	return elsewhere ? 0 : portmap_nft_del(cid, g->err);
}

static int gc_nft(const struct cni_ctx *ctx, const struct cni_attachment *valid, size_t n,
		  struct cni_err *err)
{
	struct gc g = { .network = ctx->conf.name, .err = err };
	int r = record_sweep(RECORD_DIR, ctx->conf.name, valid, n, gc_gone, &g);

	if (r < 0 && !err->code)
		r = cni_err_set(err, CNI_ERR_IO, r, "cannot sweep %s: %s", RECORD_DIR, strerror(-r));
	return r;
}

/*
 * GC: the port mappings of this network's containers that are not among the valid
 * attachments. Upstream has no GC. iptables rules are found by their comment (the
 * reference's too); nftables rules through the records ADD kept.
 */
static int portmap_gc(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct cni_attachment *valid = NULL;
	struct portmap_conf c;
	size_t n = 0;
	int r;

	r = portmap_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	r = cni_conf_gc_attachments(&ctx->conf, &valid, &n, err);
	/* Without the list nothing can be told gone. */
	if (r <= 0)
		goto out;
	r = gc_nft(ctx, valid, n, err);
	if (r >= 0 && (r = pick_backend(&c, err)) >= 0 && c.backend == PORTMAP_IPTABLES)
		r = portmap_ipt_gc(ctx->conf.name, valid, n, err);
out:
	cni_attachments_free(valid, n);
	portmap_config_free(&c);
	return r;
}

const struct cni_plugin portmap_plugin = {
	.name = "portmap",
	.keys = portmap_config_keys,
	.summary = "portmap: host ports forwarded to a chained container's address (iptables or nftables)",
	.about_state = "Keeps " RECORD_DIR "/<container ID>:<network> (nftables rules, for GC)",
	.add = portmap_add,
	.del = portmap_del,
	.check = portmap_check,
	.status = portmap_status,
	.gc = portmap_gc,
};
