/* host-device CNI plugin: moves an existing host netdev (and its RDMA device) into the pod */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/cni/error.h"
#include "common/cni/ipam.h"
#include "common/cni/result.h"
#include "common/net/device.h"
#include "common/net/iface.h"
#include "common/net/link.h"
#include "common/net/netns.h"
#include "common/net/rdma.h"
#include "common/util/cleanup.h"
#include "common/util/log.h"
#include "plugins/host-device/hostdev.h"

enum selector {
	SEL_DEVICE,
	SEL_HWADDR,
	SEL_KERNELPATH,
	SEL_PCI,
	SEL_AUX,
};

struct hostdev_conf {
	enum selector sel;
	const char *value;  /* the selector's text */
	const char *source; /* the field it came from, for messages */
	uint8_t mac[HWADDR_MAX];
	size_t mac_len;
	bool dpdk;          /* a PCI device bound to a userspace driver: nothing moves */
	bool has_ipam;
};

/*
 * A device ID from the device plugin names a PCI function or an auxiliary
 * device (a Mellanox SF). runtimeConfig.deviceID (capability "deviceID") wins
 * over the top-level "deviceID" Multus writes, which wins over "pciBusID".
 */
static int conf_device_id(const struct cni_ctx *ctx, struct hostdev_conf *c, bool *ret_found,
			  struct cni_err *err)
{
	static const char *const fields[] = { "runtimeConfig.deviceID", "deviceID", "pciBusID" };
	const char *v;
	int r;

	*ret_found = false;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		v = NULL;
		if ((r = cni_conf_get_str(&ctx->conf, fields[i], &v, err)) < 0)
			return r;
		if (!v || !*v)
			continue;
		c->value = v;
		c->source = fields[i];
		*ret_found = true;
		if (device_pci_exists(v)) {
			c->sel = SEL_PCI;
			return 0;
		}
		if (device_aux_exists(v)) {
			c->sel = SEL_AUX;
			return 0;
		}
		if (i == 0)
			return cni_err_set(err, CNI_ERR_NOT_FOUND, -ENODEV,
					   "runtime config DeviceID %.64s not found or unsupported", v);
		return cni_err_set(err, CNI_ERR_NOT_FOUND, -ENODEV,
				   "%s %.64s not found: neither a PCI nor an auxiliary-bus device",
				   fields[i], v);
	}
	return 0;
}

/*
 * Everything that can be refused is refused here, before the kernel is
 * touched. @lenient (DEL) accepts a device that is gone: DEL only needs to know
 * whether it was a DPDK device.
 */
static int hostdev_conf_load(const struct cni_ctx *ctx, bool lenient, struct hostdev_conf *ret,
			     struct cni_err *err)
{
	struct hostdev_conf c = { 0 };
	const char *device = NULL, *hwaddr = NULL, *kpath = NULL;
	struct cni_err ignored = { 0 };
	bool found = false;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "device", &device, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "hwaddr", &hwaddr, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "kernelpath", &kpath, err)) < 0)
		return r;
	c.has_ipam = ctx->conf.ipam_type && *ctx->conf.ipam_type;

	/* The first selector given wins, in the reference's order. */
	if (device && *device) {
		if (strlen(device) >= IFNAMSIZ)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid device \"%.64s\": longer than %d bytes", device,
					   IFNAMSIZ - 1);
		c.sel = SEL_DEVICE;
		c.value = device;
		c.source = "device";
	} else if (hwaddr && *hwaddr) {
		if (hwaddr_parse(hwaddr, c.mac, &c.mac_len) < 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid hwaddr \"%.64s\"", hwaddr);
		c.sel = SEL_HWADDR;
		c.value = hwaddr;
		c.source = "hwaddr";
	} else if (kpath && *kpath) {
		if (strncmp(kpath, "/sys/devices/", strlen("/sys/devices/")) != 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid kernelpath \"%.64s\": not under /sys/devices/",
					   kpath);
		c.sel = SEL_KERNELPATH;
		c.value = kpath;
		c.source = "kernelpath";
	} else {
		r = conf_device_id(ctx, &c, &found, lenient ? &ignored : err);
		if (r < 0 && !lenient)
			return r;
		if (r < 0)
			c.value = NULL; /* gone: DEL goes by the pod's interface alone */
		if (!found)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "specify either \"device\", \"hwaddr\", \"kernelpath\" or "
					   "\"pciBusID\"");
	}
	if (c.sel == SEL_PCI && c.value) {
		r = device_pci_driver_is_dpdk(c.value);
		if (r < 0 && !lenient)
			return cni_err_set(err, CNI_ERR_NOT_FOUND, r, "cannot read the driver of %s: %s",
					   c.value, strerror(-r));
		c.dpdk = r > 0;
	}
	if (!c.has_ipam && !lenient && (r = cni_plugin_check_l2_version(ctx, err)) < 0)
		return r;
	*ret = c;
	return 0;
}

/* The device in the current netns, as the selector names it. */
static int find_host_link(const struct hostdev_conf *c, struct net_link *ret)
{
	char name[IFNAMSIZ];
	int r;

	switch (c->sel) {
	case SEL_DEVICE:
		return net_link_get_by_name(c->value, ret);
	case SEL_HWADDR:
		return net_link_get_by_hwaddr(c->mac, c->mac_len, ret);
	case SEL_KERNELPATH:
		r = device_kernelpath_netdev(c->value, name);
		break;
	case SEL_PCI:
		r = device_pci_netdev(c->value, name);
		break;
	case SEL_AUX:
		r = device_aux_netdev(c->value, name);
		break;
	default:
		return -EINVAL;
	}
	return r < 0 ? r : net_link_get_by_name(name, ret);
}

static int kernel_err(struct cni_err *err, int r, const char *what, const char *name)
{
	return net_err_set(err, CNI_ERR_KERNEL, r, "%s \"%s\": %s", what, name, strerror(-r));
}

/*
 * One change to a link that is looked up by name in the netns it runs in:
 * indices can change when a link moves between namespaces, names are what
 * each step controls.
 */
enum op_kind {
	OP_GET,
	OP_UP,
	OP_DOWN,
	OP_MOVE,
	OP_RENAME,
	OP_ALIAS,
	OP_RDMA_MOVE,
};

struct op {
	enum op_kind kind;
	const char *name;   /* the link's name where the op runs */
	const char *arg;    /* OP_RENAME: new name; OP_ALIAS: alias */
	int fd;             /* OP_MOVE, OP_RDMA_MOVE: target netns */
	uint32_t rdma;      /* OP_RDMA_MOVE: RDMA device index */
	struct net_link link; /* the link as found before the change */
};

static int op_run(void *userdata)
{
	struct op *o = userdata;
	int r;

	if (o->kind == OP_RDMA_MOVE)
		return rdma_dev_set_netns(o->rdma, o->fd);
	r = net_link_get_by_name(o->name, &o->link);
	if (r < 0)
		return r;
	switch (o->kind) {
	case OP_GET:
		return 0;
	case OP_UP:
		return net_link_set_up(o->link.ifindex, true);
	case OP_DOWN:
		return net_link_set_up(o->link.ifindex, false);
	case OP_MOVE:
		return net_link_set_netns(o->link.ifindex, o->fd);
	case OP_RENAME:
		if (strcmp(o->name, o->arg) == 0)
			return 0;
		return net_link_set_name(o->link.ifindex, o->arg);
	case OP_ALIAS:
		return net_link_set_alias(o->link.ifindex, o->arg);
	case OP_RDMA_MOVE:
	default:
		return -EINVAL;
	}
}

static int op_in(int ns_fd, struct op *o)
{
	return netns_run(ns_fd, op_run, o);
}

/* An undo step: its failure is logged, the original error is what the caller reports. */
static void undo_in(int ns_fd, struct op o, const char *what)
{
	int r = op_in(ns_fd, &o);

	if (r < 0)
		log_error("undo: cannot %s (%s): %s", what, o.name ? o.name : "rdma", strerror(-r));
}

/*
 * RDMA devices follow their netdev only in exclusive mode; in shared mode
 * every netns sees every RDMA device and nothing is moved. No RDMA netlink at
 * all (ib_core not loaded) or a kernel before netns modes means shared.
 */
struct rdma_plan {
	bool move;
	struct rdma_dev dev;
	struct cni_err *err;
	int ifindex;
};

static int rdma_plan_run(void *userdata)
{
	struct rdma_plan *p = userdata;
	bool exclusive = false;
	int r;

	p->move = false;
	r = rdma_netns_exclusive(&exclusive);
	if (r == -EPROTONOSUPPORT || r == -EOPNOTSUPP || (r >= 0 && !exclusive)) {
		log_debug("RDMA: %s; no RDMA device moves",
			  r == -EPROTONOSUPPORT ? "no RDMA netlink" : "shared netns mode");
		return 0;
	}
	if (r < 0)
		return net_err_set(p->err, CNI_ERR_KERNEL, r, "cannot read the RDMA netns mode: %s",
				   strerror(-r));
	r = rdma_dev_of_netdev(p->ifindex, &p->dev);
	if (r == -ENODEV)
		return 0;
	if (r < 0)
		return net_err_set(p->err, CNI_ERR_KERNEL, r,
				   "cannot find the RDMA device of ifindex %d: %s", p->ifindex,
				   strerror(-r));
	p->move = true;
	log_debug("RDMA: exclusive netns mode; %s (%u) moves with ifindex %d", p->dev.name,
		  p->dev.index, p->ifindex);
	return 0;
}

static int build_result(const struct cni_ctx *ctx, const char *mac, struct cni_result *ipam,
			struct cni_result *ret, struct cni_err *err)
{
	/* The config's dns wins, as in the reference; without one, IPAM's is kept. */
	if (cni_result_add_attachment(ret, ctx->env.ifname, mac, ctx->env.netns, ipam,
				      ctx->conf.has_dns ? &ctx->conf.dns : &ipam->dns) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

static int ipam_add(const struct cni_ctx *ctx, struct cni_result *ipam, struct cni_err *err)
{
	int r = cni_ipam_exec(&ctx->env, &ctx->conf, CNI_CMD_ADD, ipam, err);

	if (r < 0)
		return r;
	if (!ipam->n_ips) {
		cni_plugin_ipam_undo(ctx);
		return cni_err_set(err, CNI_ERR_IPAM, -EINVAL, "IPAM plugin returned missing IP config");
	}
	return 0;
}

/* A DPDK device stays bound to its userspace driver: IPAM only, no mac. */
static int dpdk_add(const struct cni_ctx *ctx, const struct hostdev_conf *c,
		    struct cni_result *ret, struct cni_err *err)
{
	struct cni_result ipam = { 0 };
	int r;

	log_debug("%s is bound to a DPDK driver; nothing moves", c->value);
	if (c->has_ipam && (r = ipam_add(ctx, &ipam, err)) < 0)
		return r;
	r = build_result(ctx, NULL, &ipam, ret, err);
	if (r < 0 && c->has_ipam)
		cni_plugin_ipam_undo(ctx);
	cni_result_free(&ipam);
	return r;
}

struct pod_configure {
	const struct cni_ctx *ctx;
	const struct cni_result *ipam;
	struct cni_err *err;
};

static int pod_configure(void *userdata)
{
	struct pod_configure *p = userdata;
	const char *ifname = p->ctx->env.ifname;
	struct net_link link;
	int r;

	if (p->ipam->n_ips)
		return iface_configure(ifname, p->ipam, p->err);
	r = net_link_get_by_name(ifname, &link);
	if (r >= 0)
		r = net_link_set_up(link.ifindex, true);
	if (r < 0)
		return kernel_err(p->err, r, "failed to set up", ifname);
	return 0;
}

/*
 * A device's way from one netns to another through a temporary one: down,
 * into the temporary netns, renamed and given its alias there (no name
 * outside can clash), into the target. Used by ADD (host to pod) and DEL
 * (pod to host).
 */
struct transit {
	int from_fd, tmp_fd, to_fd;
	const char *from_name;  /* its name where it is */
	const char *to_name;    /* its name where it goes */
	const char *alias;      /* set on the way */
	const char *old_alias;  /* put back by the undo */
	bool was_up;            /* put back by the undo */
	int clash_code;         /* the error when @to_name is taken in the target */
	const char *clash_msg;
};

/* How far a transit got: the undo starts there and walks back to the start. */
enum transit_stage {
	T_NONE,
	T_DOWN,
	T_TMP,
	T_RENAMED,
	T_ALIASED,
	T_DONE,
};

static void transit_undo(const struct transit *t, enum transit_stage stage)
{
	switch (stage) {
	case T_DONE:
		undo_in(t->to_fd, (struct op){ .kind = OP_DOWN, .name = t->to_name }, "set down");
		undo_in(t->to_fd, (struct op){ .kind = OP_MOVE, .name = t->to_name, .fd = t->tmp_fd },
			"move to the temporary netns");
		/* fall through */
	case T_ALIASED:
		undo_in(t->tmp_fd, (struct op){ .kind = OP_ALIAS, .name = t->to_name, .arg = t->old_alias },
			"restore the alias");
		/* fall through */
	case T_RENAMED:
		undo_in(t->tmp_fd, (struct op){ .kind = OP_RENAME, .name = t->to_name, .arg = t->from_name },
			"restore the name");
		/* fall through */
	case T_TMP:
		undo_in(t->tmp_fd, (struct op){ .kind = OP_MOVE, .name = t->from_name, .fd = t->from_fd },
			"move back");
		/* fall through */
	case T_DOWN:
		if (t->was_up)
			undo_in(t->from_fd, (struct op){ .kind = OP_UP, .name = t->from_name }, "set up");
		/* fall through */
	case T_NONE:
		break;
	}
}

static int transit(const struct transit *t, struct cni_err *err)
{
	/* Renaming needs the link down; a netns move takes it down anyway. */
	const struct {
		int fd;
		struct op o;
		const char *what;
		const char *name;
	} steps[] = {
		{ t->from_fd, { .kind = OP_DOWN, .name = t->from_name }, "failed to set down",
		  t->from_name },
		{ t->from_fd, { .kind = OP_MOVE, .name = t->from_name, .fd = t->tmp_fd },
		  "failed to move to a temporary netns", t->from_name },
		{ t->tmp_fd, { .kind = OP_RENAME, .name = t->from_name, .arg = t->to_name },
		  "failed to rename to", t->to_name },
		{ t->tmp_fd, { .kind = OP_ALIAS, .name = t->to_name, .arg = t->alias },
		  "failed to set the alias of", t->to_name },
		{ t->tmp_fd, { .kind = OP_MOVE, .name = t->to_name, .fd = t->to_fd },
		  "failed to move out of the temporary netns", t->to_name },
	};

	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		struct op o = steps[i].o;
		int r = op_in(steps[i].fd, &o);

		if (r >= 0)
			continue;
		if (i == ARRAY_SIZE(steps) - 1 && r == -EEXIST)
			cni_err_set(err, t->clash_code, r, "%s", t->clash_msg);
		else
			kernel_err(err, r, steps[i].what, steps[i].name);
		/* Step i failed: steps 0..i-1 are done, which is stage i. */
		transit_undo(t, (enum transit_stage)i);
		return r;
	}
	return 0;
}

static int hostdev_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	_cleanup_close_ int pod_fd = -1;
	_cleanup_close_ int host_fd = -1;
	_cleanup_close_ int tmp_fd = -1;
	const char *ifname = ctx->env.ifname;
	struct hostdev_conf c;
	struct net_link dev;
	struct rdma_plan rdma = { .err = err };
	struct pod_configure conf = { .ctx = ctx, .err = err };
	struct cni_result ipam = { 0 };
	char clash[128], mac[CNI_MAC_STRLEN];
	struct transit in;
	struct op o;
	int r;

	r = hostdev_conf_load(ctx, false, &c, err);
	if (r < 0)
		return r;
	r = cni_plugin_open_netns(ctx, &pod_fd, err);
	if (r < 0)
		return r;
	if (c.dpdk)
		return dpdk_add(ctx, &c, ret, err);

	r = find_host_link(&c, &dev);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_NOT_FOUND, r, "failed to find host device (%s %.64s): %s",
				   c.source, c.value,
				   r == -ENODEV ? "no such network interface" : strerror(-r));
	r = netns_open_current(&host_fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot open the host netns: %s", strerror(-r));
	rdma.ifindex = dev.ifindex;
	r = rdma_plan_run(&rdma);
	if (r < 0)
		return r;
	r = netns_new(&tmp_fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot create a temporary netns: %s",
				   strerror(-r));
	snprintf(clash, sizeof(clash), "container already has an interface named \"%s\"", ifname);
	/* The original name travels with the device as its alias, for DEL (see the README). */
	in = (struct transit){ .from_fd = host_fd, .tmp_fd = tmp_fd, .to_fd = pod_fd,
			       .from_name = dev.name, .to_name = ifname, .alias = dev.name,
			       .old_alias = dev.alias, .was_up = dev.flags & IFF_UP,
			       .clash_code = CNI_ERR_KERNEL, .clash_msg = clash };
	log_debug("moving %s (%s %s) into %s as %s", dev.name, c.source, c.value, ctx->env.netns,
		  ifname);
	r = transit(&in, err);
	if (r < 0)
		return r;

	/* From here on the device is in the pod and every failure brings it home. */
	o = (struct op){ .kind = OP_GET, .name = ifname };
	r = op_in(pod_fd, &o);
	if (r < 0) {
		kernel_err(err, r, "failed to find in the container", ifname);
		goto fail_pod;
	}
	hwaddr_format(o.link.hwaddr, o.link.hwaddr_len, mac, sizeof(mac));
	if (rdma.move) {
		o = (struct op){ .kind = OP_RDMA_MOVE, .rdma = rdma.dev.index, .fd = pod_fd };
		r = op_in(host_fd, &o);
		if (r < 0) {
			kernel_err(err, r, "failed to move RDMA device into the container",
				   rdma.dev.name);
			goto fail_pod;
		}
	}
	if (c.has_ipam) {
		r = ipam_add(ctx, &ipam, err);
		if (r < 0)
			goto fail_rdma;
	}
	conf.ipam = &ipam;
	r = netns_run(pod_fd, pod_configure, &conf);
	if (r < 0) {
		cni_err_set(err, CNI_ERR_KERNEL, r, "failed to configure %s: %s", ifname, strerror(-r));
		goto fail_ipam;
	}
	r = build_result(ctx, mac, &ipam, ret, err);
	if (r < 0)
		goto fail_ipam;
	cni_result_free(&ipam);
	log_debug("ADD %s: %s is %s in %s", ctx->env.container_id, dev.name, ifname, ctx->env.netns);
	return 0;

fail_ipam:
	if (c.has_ipam)
		cni_plugin_ipam_undo(ctx);
fail_rdma:
	if (rdma.move)
		undo_in(pod_fd, (struct op){ .kind = OP_RDMA_MOVE, .rdma = rdma.dev.index,
					     .fd = host_fd }, "move the RDMA device back");
fail_pod:
	transit_undo(&in, T_DONE);
	cni_result_free(&ipam);
	return r;
}

/*
 * When the pod netns is gone, the kernel has already handed a physical
 * device back to the initial netns, under its pod name (or devN when that
 * name was taken). Give it its original name back when that name is free.
 */
static void recover_in_host(const struct hostdev_conf *c)
{
	struct net_link link;
	int r;

	if (!c->value)
		return;
	r = c->sel == SEL_DEVICE ? net_link_get_by_alias(c->value, &link) : find_host_link(c, &link);
	if (r < 0 || !link.alias[0] || strcmp(link.alias, link.name) == 0)
		return;
	if (net_link_get_by_name(link.alias, &(struct net_link){ 0 }) == 0) {
		log_warning("DEL: %s came back to the host; its original name %s is taken, left as is",
			    link.name, link.alias);
		return;
	}
	r = net_link_set_up(link.ifindex, false);
	if (r >= 0)
		r = net_link_set_name(link.ifindex, link.alias);
	if (r >= 0)
		r = net_link_set_alias(link.ifindex, "");
	if (r < 0)
		log_warning("DEL: cannot rename %s back to %s: %s", link.name, link.alias, strerror(-r));
	else
		log_info("DEL: %s, returned to the host by the kernel, is %s again", link.name,
			 link.alias);
}

static int hostdev_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_close_ int pod_fd = -1;
	_cleanup_close_ int host_fd = -1;
	_cleanup_close_ int tmp_fd = -1;
	const char *ifname = ctx->env.ifname;
	struct hostdev_conf c = { 0 };
	struct rdma_plan rdma = { .err = err };
	struct net_link dev, clash;
	char orig[IFNAMSIZ], clash_msg[160];
	struct transit out;
	struct op o;
	int r;

	r = hostdev_conf_load(ctx, true, &c, err);
	if (r < 0)
		return r;
	/* IPAM first: its reservation must go even when the netns or the device is gone. */
	if (c.has_ipam && (r = cni_ipam_exec(&ctx->env, &ctx->conf, CNI_CMD_DEL, NULL, err)) < 0)
		return r;
	if (c.dpdk)
		return 0;
	if (!*ctx->env.netns) {
		recover_in_host(&c);
		return 0;
	}
	r = netns_open(ctx->env.netns, &pod_fd);
	if (r == -ENOENT) {
		recover_in_host(&c);
		return 0;
	}
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INVALID_ENV, r, "failed to open netns \"%s\": %s",
				   ctx->env.netns, strerror(-r));
	o = (struct op){ .kind = OP_GET, .name = ifname };
	r = op_in(pod_fd, &o);
	if (r == -ENODEV)
		return 0; /* a second DEL, or an ADD that never got this far */
	if (r < 0)
		return kernel_err(err, r, "failed to look up", ifname);
	dev = o.link;
	/* The alias is the mark of a device this plugin moved in. */
	if (!dev.alias[0] || strlen(dev.alias) >= IFNAMSIZ) {
		log_warning("DEL: %s in %s has no original name (alias); not moved in by host-device, "
			    "left in place", ifname, ctx->env.netns);
		return 0;
	}
	memcpy(orig, dev.alias, strlen(dev.alias) + 1); /* length checked above */
	snprintf(clash_msg, sizeof(clash_msg),
		 "cannot return %s to the host as \"%s\": the host has a link of that name; the "
		 "device stays in the container", ifname, orig);
	if (net_link_get_by_name(orig, &clash) == 0)
		return cni_err_set(err, HOSTDEV_ERR_NAME_TAKEN, -EEXIST, "%s", clash_msg);
	r = netns_open_current(&host_fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot open the host netns: %s", strerror(-r));
	rdma.ifindex = dev.ifindex;
	r = netns_run(pod_fd, rdma_plan_run, &rdma);
	if (r < 0)
		return r;
	r = netns_new(&tmp_fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot create a temporary netns: %s",
				   strerror(-r));
	if (rdma.move) {
		o = (struct op){ .kind = OP_RDMA_MOVE, .rdma = rdma.dev.index, .fd = host_fd };
		r = op_in(pod_fd, &o);
		if (r < 0)
			return kernel_err(err, r, "failed to move RDMA device back to the host",
					  rdma.dev.name);
	}
	out = (struct transit){ .from_fd = pod_fd, .tmp_fd = tmp_fd, .to_fd = host_fd,
				.from_name = ifname, .to_name = orig, .alias = "", .old_alias = orig,
				.was_up = dev.flags & IFF_UP, .clash_code = HOSTDEV_ERR_NAME_TAKEN,
				.clash_msg = clash_msg };
	r = transit(&out, err);
	if (r < 0) {
		if (rdma.move)
			undo_in(host_fd, (struct op){ .kind = OP_RDMA_MOVE, .rdma = rdma.dev.index,
						      .fd = pod_fd }, "move the RDMA device back");
		return r;
	}
	log_debug("DEL %s: %s is %s in the host again", ctx->env.container_id, ifname, orig);
	return 0;
}

struct pod_check {
	const struct cni_ctx *ctx;
	const struct cni_iface *iface;
	struct cni_err *err;
};

static int pod_check(void *userdata)
{
	struct pod_check *k = userdata;
	const char *ifname = k->ctx->env.ifname;
	struct net_link link;
	int r;

	r = net_link_get_by_name(ifname, &link);
	if (r < 0)
		return cni_err_set(k->err, CNI_ERR_CHECK_FAILED, r,
				   "container Interface name in prevResult: %s not found", ifname);
	r = cni_plugin_check_mac(k->iface, link.hwaddr, link.hwaddr_len, k->err);
	if (r < 0)
		return r;
	return iface_check(ifname, k->ctx->conf.prev_result, k->err);
}

static int hostdev_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_close_ int pod_fd = -1;
	struct pod_check k = { .ctx = ctx, .err = err };
	struct hostdev_conf c;
	int r;

	/* The device is in the pod: its host-side lookup cannot apply, only the DPDK test. */
	r = hostdev_conf_load(ctx, true, &c, err);
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
	if (c.dpdk)
		return 0;
	r = netns_run(pod_fd, pod_check, &k);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot enter netns %s: %s", ctx->env.netns,
				   strerror(-r));
	return 0;
}

const struct cni_plugin hostdev_plugin = {
	.name = "host-device",
	.summary = "host-device: moves a host network device (and its RDMA device) into the pod",
	.add = hostdev_add,
	.del = hostdev_del,
	.check = hostdev_check,
};
