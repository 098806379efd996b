/* host-device CNI plugin: moves an existing host netdev (and its RDMA device) into the pod */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/attach/attach.h"
#include "common/cni/env.h"
#include "common/cni/ipam.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/net/device.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/ns.h"
#include "common/net/rdma.h"
#include "common/util/error.h"
#include "common/util/guid.h"
#include "common/util/log.h"
#include "common/util/nsfd.h"
#include "common/util/signals.h"
#include "plugins/host-device/config.h"
#include "plugins/host-device/devinfo.h"
#include "plugins/host-device/guid.h"
#include "plugins/host-device/hostdev.h"
#include "plugins/host-device/recover.h"
#include "plugins/host-device/state.h"
#include "plugins/host-device/transit.h"

/* The host's netns, for moves back to it and the RDMA steps there. */
struct host {
	int fd;
	struct net_ns *ns;
};

static int host_open(struct host *h, struct cni_err *err)
{
	int r = nsfd_open_current(&h->fd);

	/* The plugin runs in the host netns: its handle needs no trip there. */
	if (r >= 0)
		r = net_ns_open(-1, &h->ns);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot open the host netns: %s", strerror(-r));
	return 0;
}

static void host_close(struct host *h)
{
	net_ns_close(h->ns);
	if (h->fd >= 0)
		close(h->fd);
}

/*
 * RDMA devices follow their netdev only in exclusive mode; in shared mode
 * every netns sees every RDMA device and nothing is moved. No RDMA netlink at
 * all (ib_core not loaded) or a kernel before netns modes means shared.
 * @mode_optional (DEL): a mode that cannot be read means no move rather than
 * a failure; the kernel returns RDMA devices to the host with their netns.
 */
struct rdma_plan {
	bool move;
	struct rdma_dev dev;
};

static int rdma_plan(struct net_ns *ns, int ifindex, bool mode_optional, struct rdma_plan *p,
		     struct cni_err *err)
{
	bool exclusive = false;
	int r;

	p->move = false;
	r = rdma_netns_exclusive(ns, &exclusive);
	if (r == -EPROTONOSUPPORT || r == -EOPNOTSUPP || (r >= 0 && !exclusive)) {
		log_debug("RDMA: %s; no RDMA device moves",
			  r == -EPROTONOSUPPORT ? "no RDMA netlink" : "shared netns mode");
		return 0;
	}
	if (r < 0 && mode_optional) {
		log_warning("cannot read the RDMA netns mode (%s); no RDMA device moves",
			    strerror(-r));
		return 0;
	}
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "cannot read the RDMA netns mode: %s",
				   strerror(-r));
	r = rdma_dev_of_netdev(ns, ifindex, &p->dev);
	if (r == -ENODEV)
		return 0;
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "cannot find the RDMA device of ifindex %d: %s",
				   ifindex, strerror(-r));
	p->move = true;
	log_debug("RDMA: exclusive netns mode; %s (%u) moves with ifindex %d", p->dev.name,
		  p->dev.index, ifindex);
	return 0;
}

/*
 * A software RDMA device (rxe, siw) is bound to its netdev in the netns it
 * was made in: the kernel unregisters it when the netdev leaves, and the
 * RDMA move then names an index that is gone (EINVAL). Say so rather than
 * pass the bare errno on; any other failure is reported as it is.
 */
static int rdma_move_in_err(struct net_ns *host, const struct rdma_dev *dev, const char *netdev,
			    int r, struct cni_err *err)
{
	if (rdma_dev_present(host, dev) == 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r,
				   "RDMA device %s was removed by the kernel when %s left the host "
				   "netns; software RDMA devices (rxe, siw) cannot change netns",
				   dev->name, netdev);
	return net_err_op(err, r, "failed to move RDMA device into the container", dev->name);
}

static void rdma_move_back(struct net_ns *from, const struct rdma_dev *dev, int to_fd)
{
	int r = rdma_dev_set_netns(from, dev->index, to_fd);

	if (r < 0)
		log_error("undo: cannot move the RDMA device %s back: %s", dev->name, strerror(-r));
}

/*
 * What DEL gives back (docs/host-device.md): the device as ADD finds it, or,
 * for a device the kernel handed back from an interrupted move, what the ADD
 * before kept of it (its alias now is the original name, not the node's).
 * Without a state DEL leaves the device down without alias, as the reference.
 * An InfiniBand VF whose GUID @vf is to change gets back the GUID a state not
 * yet given back holds, else the one it has now.
 *
 * Return: 1 when a state of this ADD's own was written (a failed ADD removes it),
 * 0 when an older one was kept, negative errno when none could be written.
 */
static int state_keep(const struct cni_ctx *ctx, const struct net_link *dev, const char *orig,
		      bool returned, const struct hostdev_guid_vf *vf)
{
	struct hostdev_state s = { 0 };
	bool fresh = hostdev_state_load(orig, &s) < 0 || !returned;
	bool had_guid = s.has_guid;
	uint64_t guid = s.guid;
	int r;

	if (fresh) {
		s = (struct hostdev_state){ .up = dev->flags & IFF_UP, .mtu = dev->mtu };
		if (!returned)
			snprintf(s.alias, sizeof(s.alias), "%s", dev->alias);
	}
	if (vf) {
		s.has_guid = true;
		s.guid = had_guid ? guid : vf->found ? vf->found : HOSTDEV_GUID_DEFAULT;
	}
	s.attachment = hostdev_state_attachment(ctx->env.container_id, ctx->env.ifname);
	r = hostdev_state_save(orig, &s);
	if (r < 0) {
		log_warning("cannot keep the state of %s for DEL in %s: %s; DEL will leave it down "
			    "without alias", orig, HOSTDEV_STATE_DIR, strerror(-r));
		return r;
	}
	return fresh;
}

/*
 * An InfiniBand VF gets its GUID before the move: its driver binds again to
 * apply it, which only the host can see. The state is kept first, since DEL
 * cannot read back the GUID it replaces, and every way out gives it back.
 * Termination signals wait: between the bind and the rename the device has a
 * name the kernel chose, by which no DEL would find it.
 */
static int guid_set(const struct hostdev_conf *c, const struct hostdev_guid_vf *vf,
		    const char *orig, struct net_link *dev, bool *ret_changed, struct cni_err *err)
{
	char text[GUID_TEXT_SIZE];
	sigset_t sigmask;
	int r;

	signals_block_termination(&sigmask);
	r = hostdev_guid_set(vf, c->guid, orig, dev, ret_changed);
	signals_restore(&sigmask);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r,
				   "cannot give InfiniBand VF %s (VF %u of PF %s) GUID %s: %s", orig,
				   vf->vf.index, vf->vf.pf_pci, guid_format(c->guid, text),
				   strerror(-r));
	return 0;
}

/* A DPDK device stays bound to its userspace driver: IPAM only, no mac. */
static int dpdk_add(struct attach *a, const struct hostdev_conf *c, struct cni_result *ret,
		    struct cni_err *err)
{
	int r;

	log_debug("%s is bound to a DPDK driver; nothing moves", c->value);
	r = attach_ipam_add(a, err);
	if (r < 0)
		return r;
	r = attach_result(a, NULL, 0, ret, err);
	if (r >= 0 && devinfo_set_pci(ret, a->ctx->env.ifname, c->value) < 0)
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (r < 0) {
		attach_ipam_undo(a);
		return r;
	}
	if (c->devinfo_file)
		devinfo_write(c->devinfo_file, c->value, "");
	return 0;
}

/* What hostdev_add() prepares before the move and undoes after a failure. */
struct move {
	struct net_link dev;
	char orig[IFNAMSIZ];
	bool returned, kept, guid_changed;
	struct hostdev_guid_vf vf;
	struct rdma_plan rdma;
	char pci[DEVINFO_PCI_MAX];
	struct rdma_dev rdma_any;
};

/*
 * Everything before the move, read and kept while the device is the host's:
 * the device, its original name, its GUID set and kept for DEL, the RDMA
 * device to move along and what the pod is told of them. A failure leaves in
 * @m what the caller's undo needs (kept, guid_changed).
 */
static int prepare_move(const struct cni_ctx *ctx, struct hostdev_conf *c, struct host *host,
			struct move *m, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	int r;

	r = hostdev_config_find(c, &m->dev);
	if (r < 0) {
		return cni_err_set(err, CNI_ERR_NOT_FOUND, r, "failed to find host device (%s %.64s): %s",
				   c->source, c->value,
				   r == -ENODEV ? "no such network interface" : strerror(-r));
	}
	/* The kernel keeps a loopback in its netns (the move fails with EEXIST): the config's fault. */
	if (m->dev.flags & IFF_LOOPBACK)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s is a loopback device: it cannot be moved into a pod", m->dev.name);
	/*
	 * The original name travels with the device as its alias, for DEL (see
	 * docs/host-device.md). A device the kernel handed back after an
	 * interrupted move (named CNI_IFNAME or devN) still carries it: keep it.
	 */
	m->returned = hostdev_recover_returned_name(m->dev.name, ifname) &&
		      hostdev_recover_alias_free(NULL, &m->dev) == 0;
	/* A copy: the GUID change looks the device up again, under this name. */
	snprintf(m->orig, sizeof(m->orig), "%.*s", IFNAMSIZ - 1,
		 m->returned ? m->dev.alias : m->dev.name);
	if (m->returned) {
		log_info("%s came back to the host from an interrupted move; its original name %s is kept",
			 m->dev.name, m->orig);
	}
	r = host_open(host, err);
	if (r < 0)
		return r;
	if (c->has_guid) {
		r = hostdev_guid_vf(&m->dev, c->guid_source, &m->vf, err);
		if (r < 0)
			return r;
	} else {
		hostdev_guid_warn_zero(&m->dev);
	}
	r = state_keep(ctx, &m->dev, m->orig, m->returned, c->has_guid ? &m->vf : NULL);
	if (r < 0 && c->has_guid) {
		return cni_err_set(err, CNI_ERR_KERNEL, r,
				   "cannot keep the GUID of %s for DEL in %s: %s", m->orig,
				   HOSTDEV_STATE_DIR, strerror(-r));
	}
	m->kept = r > 0;
	if (c->has_guid) {
		r = guid_set(c, &m->vf, m->orig, &m->dev, &m->guid_changed, err);
		if (r < 0)
			return r;
	}
	r = rdma_plan(host->ns, m->dev.ifindex, false, &m->rdma, err);
	if (r < 0)
		return r;
	/* What the pod is told of its device, read while it is still the host's. */
	if (c->sel == HOSTDEV_SEL_PCI && c->value)
		snprintf(m->pci, sizeof(m->pci), "%s", c->value);
	else
		(void)device_netdev_pci(m->dev.name, m->pci, sizeof(m->pci));
	if (m->rdma.move)
		m->rdma_any = m->rdma.dev;
	else if (c->devinfo_file && rdma_dev_of_netdev(host->ns, m->dev.ifindex, &m->rdma_any) < 0)
		m->rdma_any.name[0] = '\0';
	return 0;
}

static int hostdev_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	struct attach a = { .pod_fd = -1 };
	struct host host = { .fd = -1 };
	struct move m = { 0 };
	struct net_link link;
	struct hostdev_conf c;
	struct transit in = { .tmp = { .fd = -1 } };
	char clash[128];
	sigset_t sigmask;
	int r;

	r = hostdev_config_load(ctx, false, &c, err);
	if (r < 0)
		return r;
	r = attach_open(&a, ctx, err);
	if (r < 0)
		goto out;
	if (c.dpdk) {
		r = dpdk_add(&a, &c, ret, err);
		goto out;
	}
	r = prepare_move(ctx, &c, &host, &m, err);
	if (r < 0)
		goto out;
	snprintf(clash, sizeof(clash), "container already has an interface named \"%s\"", ifname);
	in = (struct transit){ .from = { host.ns, host.fd }, .tmp = { .fd = -1 },
			       .to = { a.pod, a.pod_fd }, .from_name = m.dev.name, .to_name = ifname,
			       .alias = m.orig, .old_alias = m.dev.alias, .was_up = m.dev.flags & IFF_UP,
			       .clash_code = CNI_ERR_KERNEL, .clash_msg = clash };
	log_debug("moving %s (%s %s) into %s as %s", m.dev.name, c.source, c.value, ctx->env.netns,
		  ifname);
	signals_block_termination(&sigmask);
	r = transit_move(&in, err);
	signals_restore(&sigmask);
	if (r < 0)
		goto out;

	/* From here on the device is in the pod and every failure brings it home. */
	r = net_link_get_by_name(a.pod, ifname, &link);
	if (r < 0) {
		net_err_op(err, r, "failed to find in the container", ifname);
		goto fail_pod;
	}
	if (m.rdma.move) {
		r = rdma_dev_set_netns(host.ns, m.rdma.dev.index, a.pod_fd);
		if (r < 0) {
			rdma_move_in_err(host.ns, &m.rdma.dev, m.dev.name, r, err);
			goto fail_pod;
		}
	}
	r = attach_ipam_add(&a, err);
	if (r < 0)
		goto fail_rdma;
	r = attach_configure(&a, &link, err);
	if (r < 0)
		goto fail_ipam;
	r = attach_result(&a, link.hwaddr, link.hwaddr_len, ret, err);
	if (r < 0)
		goto fail_ipam;
	if (devinfo_set_pci(ret, ifname, m.pci) < 0) {
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto fail_ipam;
	}
	if (c.devinfo_file)
		devinfo_write(c.devinfo_file, m.pci, m.rdma_any.name);
	log_debug("ADD %s: %s is %s in %s", ctx->env.container_id, m.dev.name, ifname, ctx->env.netns);
	goto out;

fail_ipam:
	attach_ipam_undo(&a);
fail_rdma:
	if (m.rdma.move)
		rdma_move_back(a.pod, &m.rdma.dev, host.fd);
fail_pod:
	signals_block_termination(&sigmask);
	transit_undo(&in);
	signals_restore(&sigmask);
out:
	/* The device is home: under its original name, it gets what it had there back. */
	if (r < 0 && m.guid_changed) {
		struct net_link home;
		int k;

		signals_block_termination(&sigmask);
		k = hostdev_guid_netdev(&m.vf, m.orig, &home);
		if (k < 0)
			log_error("undo: cannot find VF %s as %s to give its GUID back: %s", m.vf.vf.pci,
				  m.orig, strerror(-k));
		hostdev_state_restore(m.orig, hostdev_state_attachment(ctx->env.container_id, ifname));
		signals_restore(&sigmask);
	} else if (r < 0 && m.kept)
		(void)hostdev_state_remove(m.orig);
	transit_close(&in);
	host_close(&host);
	attach_close(&a);
	return r;
}

/*
 * The pod's link to bring home: CNI_IFNAME, else a device a killed plugin
 * left on the way. Return: 1 with @ret, 0 when there is none.
 */
static int pod_device(struct attach *a, struct net_link *ret, bool *ret_left_behind,
		      struct cni_err *err)
{
	const char *ifname = a->ctx->env.ifname;
	int r;

	*ret_left_behind = false;
	r = net_link_get_by_name(a->pod, ifname, ret);
	if (r == -ENODEV) {
		/* A second DEL, an ADD that never got this far, or a plugin killed on the way. */
		r = hostdev_recover_find_left(a->pod, ifname, ret);
		if (r == -ENODEV)
			return 0;
		*ret_left_behind = r >= 0;
		if (*ret_left_behind)
			log_info("DEL: %s in %s carries its original name %s: a move that did not "
				 "finish; it goes back", ret->name, a->ctx->env.netns, ret->alias);
	}
	if (r < 0)
		return net_err_op(err, r, "failed to look up", ifname);
	return 1;
}

static int hostdev_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	struct attach a = { .pod_fd = -1 };
	struct host host = { .fd = -1 };
	struct hostdev_conf c = { 0 };
	struct rdma_plan rdma = { 0 };
	struct net_link dev, clash;
	struct transit out = { .tmp = { .fd = -1 } };
	bool left_behind = false;
	char orig[IFNAMSIZ], clash_msg[160], why[128];
	uint64_t attachment = hostdev_state_attachment(ctx->env.container_id, ifname);
	sigset_t sigmask;
	int r;

	r = hostdev_config_load(ctx, true, &c, err);
	if (r < 0)
		return r;
	/* IPAM first: its reservation must go even when the netns or the device is gone. */
	r = cni_ipam_run(ctx, CNI_CMD_DEL, NULL, err);
	if (r < 0 || c.dpdk)
		return r;
	/* No netns, or a path that is no netns any more (a stale bind mount target): gone. */
	r = attach_open_del(&a, ctx, err);
	if (r > 0)
		r = pod_device(&a, &dev, &left_behind, err);
	if (r == 0)
		hostdev_recover_in_host(&c, ifname, attachment);
	if (r <= 0)
		goto out;
	/* The alias is the mark of a device this plugin moved in. */
	if (cni_env_ifname_invalid(dev.alias)) {
		log_warning("DEL: %s in %s has no original name (alias); not moved in by host-device, "
			    "left in place", ifname, ctx->env.netns);
		r = 0;
		goto out;
	}
	r = hostdev_recover_is_device(a.pod, &c, &dev, why, sizeof(why));
	if (r < 0) {
		net_err_op(err, r, "cannot tell the device of", dev.name);
		goto out;
	}
	if (r == 0) {
		log_warning("DEL: %s in %s is not the configured device (%s %.64s): %s; left in place",
			    dev.name, ctx->env.netns, c.source, c.value ? c.value : "", why);
		/* With no CNI_IFNAME in the pod, the device may be back in the host. */
		if (left_behind)
			hostdev_recover_in_host(&c, ifname, attachment);
		goto out;
	}
	memcpy(orig, dev.alias, strlen(dev.alias) + 1); /* a valid name: shorter than IFNAMSIZ */
	snprintf(clash_msg, sizeof(clash_msg),
		 "cannot return %s to the host as \"%s\": the host has a link of that name; the "
		 "device stays in the container", dev.name, orig);
	if (net_link_get_by_name(NULL, orig, &clash) == 0) {
		r = cni_err_set(err, CNI_ERR_NAME_TAKEN, -EEXIST, "%s", clash_msg);
		goto out;
	}
	r = host_open(&host, err);
	if (r >= 0)
		r = rdma_plan(a.pod, dev.ifindex, true, &rdma, err);
	if (r < 0)
		goto out;
	signals_block_termination(&sigmask);
	if (rdma.move) {
		r = rdma_dev_set_netns(a.pod, rdma.dev.index, host.fd);
		if (r < 0) {
			net_err_op(err, r, "failed to move RDMA device back to the host", rdma.dev.name);
			goto restore_signals;
		}
	}
	out = (struct transit){ .from = { a.pod, a.pod_fd }, .tmp = { .fd = -1 },
				.to = { host.ns, host.fd }, .from_name = dev.name, .to_name = orig,
				.alias = "", .old_alias = orig, .was_up = dev.flags & IFF_UP,
				.rename_first = true, .clash_code = CNI_ERR_NAME_TAKEN,
				.clash_msg = clash_msg };
	r = transit_move(&out, err);
	if (r < 0 && rdma.move)
		rdma_move_back(host.ns, &rdma.dev, a.pod_fd);
restore_signals:
	signals_restore(&sigmask);
	if (r >= 0) {
		log_debug("DEL %s: %s is %s in the host again", ctx->env.container_id, dev.name, orig);
		hostdev_state_restore(orig, attachment);
	}
out:
	transit_close(&out);
	host_close(&host);
	attach_close(&a);
	return r;
}

static int hostdev_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	const struct cni_iface *iface = NULL;
	struct attach a = { .pod_fd = -1 };
	struct hostdev_conf c;
	struct net_link link;
	int r;

	/* The device is in the pod: its host-side lookup cannot apply, only the DPDK test. */
	r = hostdev_config_load(ctx, true, &c, err);
	if (r < 0)
		return r;
	r = attach_check_begin(&a, ctx, &iface, err);
	if (r >= 0 && !c.dpdk && (r = attach_check_link(&a, &link, err)) >= 0)
		r = attach_check_end(&a, iface, &link, err);
	attach_close(&a);
	return r;
}

const struct cni_plugin hostdev_plugin = {
	.name = "host-device",
	.summary = "host-device: moves a host network device (and its RDMA device) into the pod",
	.keys = hostdev_config_keys,
	.add = hostdev_add,
	.del = hostdev_del,
	.check = hostdev_check,
};
