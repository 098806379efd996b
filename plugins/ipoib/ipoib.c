/* ipoib CNI plugin: an IPoIB child of an InfiniBand master, moved into the pod */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/cni/error.h"
#include "common/cni/ipam.h"
#include "common/cni/result.h"
#include "common/net/iface.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/util/netns.h"
#include "common/net/sysctl.h"
#include "common/util/cleanup.h"
#include "common/util/log.h"
#include "common/util/signals.h"
#include "plugins/ipoib/config.h"
#include "plugins/ipoib/ipoib.h"

/* Children found by their alias in one DEL; more than one means an earlier DEL never ran. */
#define IPOIB_SWEEP_MAX 16

static int kernel_err(struct cni_err *err, int r, const char *what, const char *name)
{
	return net_err_set(err, CNI_ERR_KERNEL, r, "%s \"%s\": %s", what, name, strerror(-r));
}

/*
 * After netns_run() failed: a step's own error stands (the first one set is
 * kept); without one, the netns could not be entered.
 */
static int enter_err(struct cni_err *err, int r, const char *netns)
{
	return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot enter netns %s: %s", netns, strerror(-r));
}

/* The master, in the host netns: it must be an IPoIB device that is not itself a child. */
static int find_master(const struct ipoib_conf *c, struct net_link *ret, struct cni_err *err)
{
	int r = net_link_get_by_name(c->master, ret);

	if (r < 0)
		return net_err_set(err, CNI_ERR_NOT_FOUND, r, "failed to lookup master \"%s\": %s",
				   c->master, strerror(-r));
	if (strcmp(ret->kind, "ipoib") != 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "master device %s is (%s) not of type ipoib", c->master,
				   ret->kind[0] ? ret->kind : "a device without a link kind");
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

static uint16_t want_mode(const struct ipoib_conf *c, const struct net_link *master)
{
	return c->mode >= 0 ? (uint16_t)c->mode : master->ipoib_mode;
}

/* Steps run inside the pod netns. */
struct pod_step {
	const struct cni_ctx *ctx;
	const struct ipoib_conf *conf;
	const char *tmp_name;
	struct cni_result *result;
	struct net_link link;
	struct cni_err *err;
};

static int pod_setup(void *userdata)
{
	struct pod_step *s = userdata;
	const char *ifname = s->ctx->env.ifname;
	char path[128];
	int r;

	/* The ifindex may change on the move; the temporary name does not. */
	r = net_link_get_by_name(s->tmp_name, &s->link);
	if (r < 0)
		return kernel_err(s->err, r, "failed to find the moved IPoIB child", s->tmp_name);
	snprintf(path, sizeof(path), "net/ipv4/conf/%s/proxy_arp", s->tmp_name);
	r = sysctl_write(path, "1");
	if (r < 0)
		return cni_err_set(s->err, CNI_ERR_KERNEL, r,
				   "failed to set proxy_arp on newly added interface \"%s\": %s",
				   s->tmp_name, strerror(-r));
	r = net_link_set_name(s->link.ifindex, ifname);
	if (r < 0)
		return kernel_err(s->err, r, "failed to rename IPoIB child to", ifname);
	if (s->conf->mtu) {
		r = net_link_set_mtu(s->link.ifindex, s->conf->mtu);
		if (r < 0)
			return net_err_set(s->err, CNI_ERR_KERNEL, r,
					   "failed to set MTU %u on interface \"%s\": %s", s->conf->mtu,
					   ifname, strerror(-r));
	}
	r = net_link_set_up(s->link.ifindex, true);
	if (r < 0)
		return kernel_err(s->err, r, "failed to set up", ifname);
	r = net_link_get_by_index(s->link.ifindex, &s->link);
	if (r < 0)
		return kernel_err(s->err, r, "failed to refetch interface", ifname);
	return 0;
}

static int pod_configure(void *userdata)
{
	struct pod_step *s = userdata;

	return iface_configure(s->ctx->env.ifname, s->result, s->err);
}

/* Deletes the child by index in the current netns; the name may be either one. */
static int undo_create(void *userdata)
{
	struct pod_step *s = userdata;
	int r;

	if (!s->link.ifindex && net_link_get_by_name(s->tmp_name, &s->link) < 0) {
		log_error("undo: IPoIB child %s not found", s->tmp_name);
		return 0;
	}
	r = net_link_delete(s->link.ifindex);
	if (r < 0 && r != -ENODEV)
		log_error("undo: cannot delete IPoIB child %s (ifindex %d): %s", s->link.name,
			  s->link.ifindex, strerror(-r));
	return 0;
}

/*
 * An IPoIB child under this attachment's temporary name in the current netns:
 * an ADD killed between creating and marking it left it there. It goes,
 * whether this is a DEL or an ADD run again.
 */
static int delete_leftover(const char *tmp_name, struct cni_err *err)
{
	struct net_link link;
	int r;

	r = net_link_get_by_name(tmp_name, &link);
	if (r == -ENODEV)
		return 0;
	if (r < 0)
		return kernel_err(err, r, "failed to look up", tmp_name);
	if (strcmp(link.kind, "ipoib") != 0)
		return 0;
	log_info("deleting IPoIB child %s, left by an ADD that did not finish", tmp_name);
	r = net_link_delete(link.ifindex);
	if (r < 0 && r != -ENODEV)
		return kernel_err(err, r, "failed to delete", tmp_name);
	return 0;
}

/*
 * Creates the child in the host and marks it with the alias DEL looks for.
 * Termination signals are held back from the create until the mark is set (or
 * the child deleted again): a plugin stopped in between would leave a child
 * that no DEL can find.
 */
static int create_marked(const struct net_child *child, const char *master, const char *alias,
			 struct pod_step *s)
{
	sigset_t sigmask;
	int r;

	signals_block_termination(&sigmask);
	r = net_link_create(child);
	if (r == -EEXIST) {
		r = delete_leftover(s->tmp_name, s->err);
		if (r >= 0)
			r = net_link_create(child);
	}
	if (r < 0) {
		kernel_err(s->err, r, "failed to create IPoIB child of master", master);
		goto restore_signals;
	}
	r = net_link_get_by_name(s->tmp_name, &s->link);
	if (r < 0) {
		kernel_err(s->err, r, "failed to find the new IPoIB child", s->tmp_name);
		goto fail;
	}
	/* The mark DEL looks for if the kernel hands the child back to the host as dev<N>. */
	r = net_link_set_alias(s->link.ifindex, alias);
	if (r < 0) {
		kernel_err(s->err, r, "failed to mark IPoIB child", s->tmp_name);
		goto fail;
	}
	signals_restore(&sigmask);
	return 0;

fail:
	(void)undo_create(s);
restore_signals:
	signals_restore(&sigmask);
	return r;
}

static int build_result(const struct cni_ctx *ctx, const struct net_link *link,
			struct cni_result *ipam, struct cni_result *ret, struct cni_err *err)
{
	char mac[CNI_MAC_STRLEN];

	hwaddr_format(link->hwaddr, link->hwaddr_len, mac, sizeof(mac));
	/* The config's dns wins; without one, IPAM's is kept (the reference drops it). */
	if (cni_result_add_attachment(ret, ctx->env.ifname, mac, ctx->env.netns, ipam,
				      ctx->conf.has_dns ? &ctx->conf.dns : &ipam->dns) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

static int ipoib_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	_cleanup_close_ int pod_fd = -1;
	struct ipoib_conf c;
	struct net_link master;
	struct net_child child;
	struct cni_result ipam = { 0 };
	struct pod_step step = { .ctx = ctx, .conf = &c, .err = err };
	char tmp_name[IFNAMSIZ], alias[IPOIB_ALIAS_MAX + 1];
	int r;

	r = ipoib_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	r = cni_plugin_open_netns(ctx, &pod_fd, err);
	if (r < 0)
		return r;
	r = find_master(&c, &master, err);
	if (r < 0)
		return r;

	cni_plugin_tmp_name(ctx, "cniib", tmp_name, sizeof(tmp_name));
	step.tmp_name = tmp_name;
	ipoib_config_alias(ctx->env.container_id, ctx->env.ifname, alias, sizeof(alias));

	/* Created in the host and moved: creating it in the pod directly hits a kernel bug. */
	child = (struct net_child){
		.kind = NET_CHILD_IPOIB,
		.name = tmp_name,
		.master_ifindex = master.ifindex,
		.netns_fd = -1,
		.ipoib = {
			.pkey = want_pkey(&c, &master),
			.mode = want_mode(&c, &master),
			.umcast = c.umcast,
		},
	};
	log_debug("creating IPoIB child %s of %s (pkey 0x%04x, %s, umcast %u) for %s", tmp_name,
		  master.name, child.ipoib.pkey, ipoib_config_mode_name(child.ipoib.mode),
		  child.ipoib.umcast, ctx->env.netns);
	r = create_marked(&child, master.name, alias, &step);
	if (r < 0)
		return r;

	/* From here on the child exists and every failure removes it. */
	r = net_link_set_netns(step.link.ifindex, pod_fd);
	if (r < 0) {
		net_err_set(err, CNI_ERR_KERNEL, r, "failed to move interface %s to netns %s: %s",
			    tmp_name, ctx->env.netns, strerror(-r));
		goto fail_host;
	}
	step.link.ifindex = 0;
	r = netns_run(pod_fd, pod_setup, &step);
	if (r < 0) {
		enter_err(err, r, ctx->env.netns);
		goto fail_pod;
	}

	if (c.has_ipam) {
		r = cni_ipam_exec(&ctx->env, &ctx->conf, CNI_CMD_ADD, &ipam, err);
		if (r < 0)
			goto fail_pod;
		if (!ipam.n_ips) {
			r = cni_err_set(err, CNI_ERR_IPAM, -EINVAL, "IPAM plugin returned missing IP config");
			goto fail_ipam;
		}
		step.result = &ipam;
		r = netns_run(pod_fd, pod_configure, &step);
		if (r < 0) {
			enter_err(err, r, ctx->env.netns);
			goto fail_ipam;
		}
	}
	r = build_result(ctx, &step.link, &ipam, ret, err);
	if (r < 0)
		goto fail_ipam;
	cni_result_free(&ipam);
	log_info("ADD %s: IPoIB child of %s as %s in %s", ctx->env.container_id, master.name,
		 ctx->env.ifname, ctx->env.netns);
	return 0;

fail_ipam:
	if (c.has_ipam)
		cni_plugin_ipam_undo(ctx);
fail_pod:
	(void)netns_run(pod_fd, undo_create, &step);
	cni_result_free(&ipam);
	return r;
fail_host:
	(void)undo_create(&step);
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
 * Children of this attachment found by their alias in the current netns: in
 * the host, handed back as dev<N> when the pod netns went before DEL, or never
 * moved by an ADD that was killed; in the pod, one whose rename and undo both
 * failed.
 */
static int sweep_marked(const char *alias, struct cni_err *err)
{
	struct sweep w = { .alias = alias };
	struct net_link link;
	int r;

	for (int i = 0; i < IPOIB_SWEEP_MAX; i++) {
		r = net_link_find(marked_child, &w, &link);
		if (r == -ENODEV)
			break;
		if (r < 0)
			return kernel_err(err, r, "failed to look for links marked", alias);
		log_info("DEL: deleting IPoIB child %s marked \"%s\"", link.name, alias);
		r = net_link_delete(link.ifindex);
		if (r < 0 && r != -ENODEV)
			return kernel_err(err, r, "failed to delete", link.name);
	}
	if (w.foreign[0])
		log_warning("DEL: %s carries alias \"%s\" but is not an IPoIB child; left in place",
			    w.foreign, alias);
	return 0;
}

struct pod_delete {
	const char *ifname;
	const char *alias;
	struct cni_err *err;
};

static int pod_delete(void *userdata)
{
	struct pod_delete *d = userdata;
	struct net_link link;
	int r;

	r = net_link_get_by_name(d->ifname, &link);
	if (r < 0 && r != -ENODEV)
		return kernel_err(d->err, r, "failed to look up", d->ifname);
	/* A DEL after a failed ADD must not remove another plugin's interface of that name. */
	if (r == 0 && strcmp(link.kind, "ipoib") != 0) {
		log_warning("DEL: %s is a %s link, not an IPoIB child; left in place", d->ifname,
			    link.kind[0] ? link.kind : "non-virtual");
	} else if (r == 0) {
		r = net_link_delete(link.ifindex);
		if (r < 0 && r != -ENODEV)
			return kernel_err(d->err, r, "failed to delete", d->ifname);
	}
	return sweep_marked(d->alias, d->err);
}

static int ipoib_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_close_ int pod_fd = -1;
	const char *ipam_type = ctx->conf.ipam_type;
	char alias[IPOIB_ALIAS_MAX + 1], tmp_name[IFNAMSIZ];
	struct pod_delete d = { .ifname = ctx->env.ifname, .alias = alias, .err = err };
	int r;

	ipoib_config_alias(ctx->env.container_id, ctx->env.ifname, alias, sizeof(alias));
	cni_plugin_tmp_name(ctx, "cniib", tmp_name, sizeof(tmp_name));

	/* IPAM first: its reservation must go even when the netns is already gone. An
	 * ADD with dhcp never got that far, so there is nothing of dhcp's to release. */
	if (ipam_type && *ipam_type && strcmp(ipam_type, "dhcp") != 0) {
		r = cni_ipam_exec(&ctx->env, &ctx->conf, CNI_CMD_DEL, NULL, err);
		if (r < 0)
			return r;
	}
	r = cni_plugin_open_netns_del(ctx, &pod_fd, err);
	if (r < 0)
		return r;
	if (r > 0) {
		r = netns_run(pod_fd, pod_delete, &d);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_KERNEL, r, "failed to delete %s in %s: %s",
					   ctx->env.ifname, ctx->env.netns, strerror(-r));
	}
	r = sweep_marked(alias, err);
	if (r < 0)
		return r;
	/* Created but not yet marked when its ADD was killed: only its name tells. */
	return delete_leftover(tmp_name, err);
}

struct pod_check {
	const struct cni_ctx *ctx;
	const struct ipoib_conf *conf;
	const struct net_link *master;
	const struct cni_iface *iface;
	struct cni_err *err;
};

static int pod_check(void *userdata)
{
	struct pod_check *k = userdata;
	const char *ifname = k->ctx->env.ifname;
	uint16_t pkey = want_pkey(k->conf, k->master), mode = want_mode(k->conf, k->master);
	struct net_link link;
	int r;

	r = net_link_get_by_name(ifname, &link);
	if (r < 0)
		return cni_err_set(k->err, CNI_ERR_CHECK_FAILED, r,
				   "container Interface name in prevResult: %s not found", ifname);
	if (strcmp(link.kind, "ipoib") != 0)
		return cni_err_set(k->err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "container interface %s not of type ipoib", ifname);
	if ((link.ipoib_pkey & IPOIB_PKEY_MASK) != pkey)
		return cni_err_set(k->err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "container interface %s pkey 0x%04x does not match expected 0x%04x",
				   ifname, link.ipoib_pkey & IPOIB_PKEY_MASK, pkey);
	if (link.ipoib_mode != mode)
		return cni_err_set(k->err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "container interface %s mode %s does not match expected %s", ifname,
				   ipoib_config_mode_name(link.ipoib_mode), ipoib_config_mode_name(mode));
	if (k->conf->mtu && link.mtu != k->conf->mtu)
		return cni_err_set(k->err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "container interface %s MTU %u does not match expected %u", ifname,
				   link.mtu, k->conf->mtu);
	r = cni_plugin_check_mac(k->iface, link.hwaddr, link.hwaddr_len, k->err);
	if (r < 0)
		return r;
	return iface_check(ifname, k->ctx->conf.prev_result, k->err);
}

static int ipoib_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_close_ int pod_fd = -1;
	struct pod_check k = { .ctx = ctx, .err = err };
	struct ipoib_conf c;
	struct net_link master;
	int r;

	r = ipoib_config_load(ctx, &c, err);
	if (r < 0)
		return r;
	r = cni_plugin_open_netns(ctx, &pod_fd, err);
	if (r < 0)
		return r;
	if (c.has_ipam && (r = cni_ipam_exec(&ctx->env, &ctx->conf, CNI_CMD_CHECK, NULL, err)) < 0)
		return r;
	r = cni_plugin_prev_iface(ctx, &k.iface, err);
	if (r < 0)
		return r;
	r = find_master(&c, &master, err);
	if (r < 0)
		return r;
	k.conf = &c;
	k.master = &master;
	r = netns_run(pod_fd, pod_check, &k);
	if (r < 0)
		return enter_err(err, r, ctx->env.netns);
	return 0;
}

const struct cni_plugin ipoib_plugin = {
	.name = "ipoib",
	.summary = "ipoib: gives a pod an IPoIB child (pkey, mode, umcast) of an InfiniBand master",
	.add = ipoib_add,
	.del = ipoib_del,
	.check = ipoib_check,
};
