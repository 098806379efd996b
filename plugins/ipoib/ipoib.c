/* ipoib CNI plugin: an IPoIB child of an InfiniBand master, moved into the pod */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>

#include "common/attach/attach.h"
#include "common/cni/ipam.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/net/device.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/ns.h"
#include "common/net/sysctl.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "common/util/signals.h"
#include "plugins/ipoib/config.h"
#include "plugins/ipoib/ipoib.h"

/* Children found by their alias in one DEL; more than one means an earlier DEL never ran. */
#define IPOIB_SWEEP_MAX 16

/* The master, in the host netns: it must be an IPoIB device that is not itself a child. */
static int find_master(const struct ipoib_conf *c, struct net_ns *host, struct net_link *ret,
		       struct cni_err *err)
{
	int r = net_link_get_by_name(host, c->master, ret);
	char names[200];

	if (r == -ENODEV) {
		attach_link_names(host, ARPHRD_INFINIBAND, names, sizeof(names));
		return cni_err_set(err, CNI_ERR_NOT_FOUND, r,
				   "failed to lookup master \"%s\": %s; the host's InfiniBand links: %s "
				   "(the master is the IPoIB port's name, ip -br link show type ipoib)",
				   c->master, strerror(-r), names);
	}
	if (r < 0)
		return net_err_set(err, CNI_ERR_NOT_FOUND, r, "failed to lookup master \"%s\": %s",
				   c->master, strerror(-r));
	if (strcmp(ret->kind, "ipoib") != 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "master device %s is not of type ipoib (its link kind: %s)",
				   c->master, ret->kind[0] ? ret->kind : "none");
	/* The kernel refuses a child of a child with EINVAL and no text. */
	if (ret->link_ifindex && ret->link_ifindex != ret->ifindex)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "master device %s is itself an IPoIB child (of ifindex %d)",
				   c->master, ret->link_ifindex);
	if (c->mtu > ret->mtu)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MTU %u, must be [0, master MTU(%u)]", c->mtu, ret->mtu);
	return 0;
}

static uint16_t want_pkey(const struct ipoib_conf *c, const struct net_link *master)
{
	return c->has_pkey ? c->pkey : master->ipoib_pkey & IPOIB_PKEY_MASK;
}

/*
 * A pkey the port is not a member of makes a child the kernel creates and leaves down,
 * with no error anywhere: refused here, naming the table, when sysfs shows it (the
 * kernel sets the full-membership bit itself, so only the 15 bits count).
 */
static int check_pkey(const struct ipoib_conf *c, const struct net_link *master,
		      struct cni_err *err)
{
	struct device_ib_port port;
	char table[128 * 8] = "";
	size_t o = 0;

	if (!c->has_pkey || device_ib_port(master->name, &port) < 0)
		return 0;
	for (size_t i = 0; i < port.n_pkeys; i++)
		if ((port.pkeys[i] & IPOIB_PKEY_MASK) == c->pkey)
			return 0;
	for (size_t i = 0; i < port.n_pkeys && o < sizeof(table); i++)
		o += (size_t)snprintf(table + o, sizeof(table) - o, "%s0x%04x", i ? ", " : "",
				      port.pkeys[i]);
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
			   "pkey 0x%04x is not in the pkey table of %s port %u (master %s): %s; the "
			   "child would stay down: the subnet manager must make the port a member "
			   "of that partition", c->pkey, port.dev, port.port, master->name,
			   port.n_pkeys ? table : "empty");
}

static uint16_t want_mode(const struct ipoib_conf *c, const struct net_link *master)
{
	return c->mode >= 0 ? (uint16_t)c->mode : master->ipoib_mode;
}

/*
 * Creates the child in the host and marks it with the alias DEL looks for.
 * Termination signals are held back from the create until the mark is set (or
 * the child deleted again): a plugin stopped in between would leave a child
 * that only its temporary name tells.
 */
static int create_marked(struct net_ns *host, const struct net_child *child, const char *master,
			 const char *alias, struct net_link *ret, struct cni_err *err)
{
	sigset_t sigmask;
	int r;

	signals_block_termination(&sigmask);
	r = net_link_create(host, child);
	if (r == -EEXIST) {
		/* A child under this attachment's temporary name: an ADD killed before marking it. */
		r = attach_delete_link(host, child->name, "ipoib", "an IPoIB child", err);
		if (r >= 0)
			r = net_link_create(host, child);
	}
	if (r < 0) {
		net_err_op(err, r, "failed to create IPoIB child of master", master);
		goto restore_signals;
	}
	r = net_link_get_by_name(host, child->name, ret);
	if (r < 0) {
		net_err_op(err, r, "failed to find the new IPoIB child", child->name);
		goto fail;
	}
	/* The mark DEL looks for if the kernel hands the child back to the host as dev<N>. */
	r = net_link_set_alias(host, ret->ifindex, alias);
	if (r < 0) {
		net_err_op(err, r, "failed to mark IPoIB child", child->name);
		goto fail;
	}
	signals_restore(&sigmask);
	return 0;

fail:
	attach_undo_link(host, ret, child->name);
restore_signals:
	signals_restore(&sigmask);
	return r;
}

static int set_proxy_arp(void *userdata)
{
	char path[128];

	snprintf(path, sizeof(path), "net/ipv4/conf/%s/proxy_arp", (const char *)userdata);
	return sysctl_write(path, "1");
}

/* In the pod, as the reference does it: proxy_arp, the name, the MTU, up. */
static int pod_setup(struct attach *a, const struct ipoib_conf *c, const char *tmp_name,
		     struct net_link *link, struct cni_err *err)
{
	const char *ifname = a->ctx->env.ifname;
	int r;

	/* The ifindex may change on the move; the temporary name does not. */
	r = net_link_get_by_name(a->pod, tmp_name, link);
	if (r < 0)
		return net_err_op(err, r, "failed to find the moved IPoIB child", tmp_name);
	r = net_ns_run(a->pod, set_proxy_arp, (void *)tmp_name);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r,
				   "failed to set proxy_arp on newly added interface \"%s\": %s",
				   tmp_name, strerror(-r));
	r = net_link_set_name(a->pod, link->ifindex, ifname);
	if (r < 0)
		return net_err_op(err, r, "failed to rename IPoIB child to", ifname);
	if (c->mtu) {
		r = net_link_set_mtu(a->pod, link->ifindex, c->mtu);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "failed to set MTU %u on interface \"%s\": %s", c->mtu, ifname,
					   strerror(-r));
	}
	r = net_link_set_up(a->pod, link->ifindex, true);
	if (r < 0)
		return net_err_op(err, r, "failed to set up", ifname);
	r = net_link_get_by_index(a->pod, link->ifindex, link);
	if (r < 0)
		return net_err_op(err, r, "failed to refetch interface", ifname);
	return 0;
}

static int ipoib_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	struct attach a = { .pod_fd = -1 };
	struct net_link master, link = { 0 };
	struct ipoib_conf c;
	char tmp_name[IFNAMSIZ], alias[IPOIB_ALIAS_MAX + 1];
	int r;

	r = ipoib_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	r = attach_open(&a, ctx, err);
	if (r < 0)
		goto out;
	r = find_master(&c, a.host, &master, err);
	if (r >= 0)
		r = check_pkey(&c, &master, err);
	if (r < 0)
		goto out;

	attach_tmp_name(ctx, "cniib", tmp_name, sizeof(tmp_name));
	ipoib_config_alias(ctx->env.container_id, ctx->env.ifname, alias, sizeof(alias));
	/* Created in the host and moved: creating it in the pod directly hits a kernel bug. */
	log_debug("creating IPoIB child %s of %s (pkey 0x%04x, %s, umcast %u) for %s", tmp_name,
		  master.name, want_pkey(&c, &master), ipoib_config_mode_name(want_mode(&c, &master)),
		  c.umcast, ctx->env.netns);
	r = create_marked(a.host, &(struct net_child){
				  .kind = NET_CHILD_IPOIB,
				  .name = tmp_name,
				  .master_ifindex = master.ifindex,
				  .netns_fd = -1,
				  .ipoib = {
					  .pkey = want_pkey(&c, &master),
					  .mode = want_mode(&c, &master),
					  .umcast = c.umcast,
				  },
			  },
			  master.name, alias, &link, err);
	if (r < 0)
		goto out;

	/* From here on the child exists and every failure removes it. */
	r = net_link_set_netns(a.host, link.ifindex, a.pod_fd);
	if (r < 0) {
		net_err_set(err, CNI_ERR_KERNEL, r, "failed to move interface %s to netns %s: %s",
			    tmp_name, ctx->env.netns, strerror(-r));
		goto fail_host;
	}
	link.ifindex = 0;
	r = pod_setup(&a, &c, tmp_name, &link, err);
	if (r < 0)
		goto fail_pod;
	if (c.has_ipam) {
		r = attach_ipam_add(&a, err);
		if (r < 0)
			goto fail_pod;
		r = attach_configure(&a, &link, err);
		if (r < 0)
			goto fail_ipam;
	}
	r = attach_result(&a, link.hwaddr, link.hwaddr_len, ret, err);
	if (r < 0)
		goto fail_ipam;
	log_info("ADD %s: IPoIB child of %s as %s in %s", ctx->env.container_id, master.name,
		 ctx->env.ifname, ctx->env.netns);
	goto out;

fail_ipam:
	attach_ipam_undo(&a);
fail_pod:
	attach_undo_link(a.pod, &link, tmp_name);
	goto out;
fail_host:
	attach_undo_link(a.host, &link, tmp_name);
out:
	attach_close(&a);
	return r;
}

struct sweep {
	const char *alias;
	char foreign[IFNAMSIZ]; /* the first link with the alias that is not IPoIB, for the warning */
};

/* net_link_find() predicate: an IPoIB child with the alias; others with it are noted, skipped. */
static bool marked_child(const struct net_link *link, void *data)
{
	struct sweep *w = data;

	if (strcmp(link->alias, w->alias) != 0)
		return false;
	if (strcmp(link->kind, "ipoib") == 0)
		return true;
	if (!w->foreign[0])
		snprintf(w->foreign, sizeof(w->foreign), "%s", link->name);
	return false;
}

/*
 * Children of this attachment found by their alias in a netns: in the host,
 * handed back as dev<N> when the pod netns went before DEL, or never moved by
 * an ADD that was killed; in the pod, one whose rename and undo both failed.
 */
static int sweep_marked(struct net_ns *ns, const char *alias, struct cni_err *err)
{
	struct sweep w = { .alias = alias };
	struct net_link link;
	int r;

	for (int i = 0; i < IPOIB_SWEEP_MAX; i++) {
		r = net_link_find(ns, marked_child, &w, &link);
		if (r == -ENODEV)
			break;
		if (r < 0)
			return net_err_op(err, r, "failed to look for links marked", alias);
		log_info("DEL: deleting IPoIB child %s marked \"%s\"", link.name, alias);
		r = net_link_delete(ns, link.ifindex);
		if (r < 0 && r != -ENODEV)
			return net_err_op(err, r, "failed to delete", link.name);
	}
	if (w.foreign[0])
		log_warning("DEL: %s carries alias \"%s\" but is not an IPoIB child; left in place",
			    w.foreign, alias);
	return 0;
}

/* CNI_IFNAME in the pod, when it is an IPoIB child, and the children marked there. */
static int pod_delete(struct attach *a, const char *alias, struct cni_err *err)
{
	int r = attach_delete_link(a->pod, a->ctx->env.ifname, "ipoib", "an IPoIB child", err);

	return r < 0 ? r : sweep_marked(a->pod, alias, err);
}

static int ipoib_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct attach a = { .pod_fd = -1 };
	char alias[IPOIB_ALIAS_MAX + 1], tmp_name[IFNAMSIZ];
	int r;

	ipoib_config_alias(ctx->env.container_id, ctx->env.ifname, alias, sizeof(alias));
	attach_tmp_name(ctx, "cniib", tmp_name, sizeof(tmp_name));

	/* IPAM first: its reservation must go even when the netns is already gone. An
	 * ADD with dhcp never got that far, so there is nothing of dhcp's to release. */
	if (!(cni_conf_has_ipam(&ctx->conf) && strcmp(ctx->conf.ipam_type, "dhcp") == 0)) {
		r = cni_ipam_run(ctx, CNI_CMD_DEL, NULL, err);
		if (r < 0)
			return r;
	}
	r = attach_open_del(&a, ctx, err);
	if (r > 0)
		r = pod_delete(&a, alias, err);
	if (r >= 0)
		r = sweep_marked(a.host, alias, err);
	/* Created but not yet marked when its ADD was killed: only its name tells. */
	if (r >= 0)
		r = attach_delete_link(a.host, tmp_name, "ipoib", "an IPoIB child", err);
	attach_close(&a);
	return r;
}

static int ipoib_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	const struct cni_iface *iface = NULL;
	struct attach a = { .pod_fd = -1 };
	struct net_link master, link;
	struct ipoib_conf c;
	uint16_t pkey, mode;
	int r;

	r = ipoib_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	if ((r = attach_check_begin(&a, ctx, &iface, err)) < 0 ||
	    (r = find_master(&c, a.host, &master, err)) < 0 ||
	    (r = attach_check_link(&a, &link, err)) < 0)
		goto out;
	pkey = want_pkey(&c, &master);
	mode = want_mode(&c, &master);
	if (strcmp(link.kind, "ipoib") != 0)
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"container interface %s not of type ipoib", ifname);
	else if ((link.ipoib_pkey & IPOIB_PKEY_MASK) != pkey)
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"container interface %s pkey 0x%04x does not match expected 0x%04x",
				ifname, link.ipoib_pkey & IPOIB_PKEY_MASK, pkey);
	else if (link.ipoib_mode != mode)
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"container interface %s mode %s does not match expected %s", ifname,
				ipoib_config_mode_name(link.ipoib_mode), ipoib_config_mode_name(mode));
	else if (c.mtu && link.mtu != c.mtu)
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"container interface %s MTU %u does not match expected %u", ifname,
				link.mtu, c.mtu);
	else
		r = attach_check_end(&a, iface, &link, err);
out:
	attach_close(&a);
	return r;
}

const struct cni_plugin ipoib_plugin = {
	.name = "ipoib",
	.summary = "ipoib: gives a pod an IPoIB child (pkey, mode, umcast) of an InfiniBand master",
	.keys = ipoib_config_keys,
	.add = ipoib_add,
	.del = ipoib_del,
	.check = ipoib_check,
};
