/* host-device CNI plugin: moves an existing host netdev (and its RDMA device) into the pod */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/cni/env.h"
#include "common/cni/error.h"
#include "common/cni/ipam.h"
#include "common/cni/result.h"
#include "common/net/device.h"
#include "common/net/ethtool.h"
#include "common/net/iface.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/util/netns.h"
#include "common/net/rdma.h"
#include "common/util/cleanup.h"
#include "common/util/log.h"
#include "common/util/signals.h"
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

/* A kernelpath longer than this cannot be looked up below a sysfs root (device.c). */
#define KERNELPATH_MAX (PATH_MAX - 64)

/* Whether one of the '/'-separated components of @path is @comp. */
static bool path_has_component(const char *path, const char *comp)
{
	size_t n = strlen(comp);

	for (const char *p = path; *p; p += strcspn(p, "/")) {
		p += strspn(p, "/");
		if (strncmp(p, comp, n) == 0 && (p[n] == '/' || p[n] == '\0'))
			return true;
	}
	return false;
}

/*
 * A device ID from the device plugin names a PCI function or an auxiliary
 * device (a Mellanox SF). runtimeConfig.deviceID (capability "deviceID") wins
 * over the top-level "deviceID" Multus writes, which wins over "pciBusID".
 * @lenient (DEL) accepts a device that is gone, with a NULL value: nothing in
 * a pod can then be it. A wrong JSON type is an error either way.
 */
static int conf_device_id(const struct cni_ctx *ctx, bool lenient, struct hostdev_conf *c,
			  bool *ret_found, struct cni_err *err)
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
		if (lenient) {
			c->sel = SEL_PCI;
			c->value = NULL;
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
	bool found = false;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "device", &device, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "hwaddr", &hwaddr, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "kernelpath", &kpath, err)) < 0)
		return r;
	c.has_ipam = ctx->conf.ipam_type && *ctx->conf.ipam_type;

	/* The first selector given wins, in the reference's order. */
	if (device && *device) {
		const char *why = cni_env_ifname_invalid(device);

		if (why)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid device \"%.64s\": %s", device, why);
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
		if (strncmp(kpath, "/sys/devices/", strlen("/sys/devices/")) != 0 ||
		    path_has_component(kpath, ".."))
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid kernelpath \"%.64s\": not under /sys/devices/ or "
					   "with a \"..\" component",
					   kpath);
		if (strlen(kpath) >= KERNELPATH_MAX)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid kernelpath: longer than %d bytes",
					   KERNELPATH_MAX - 1);
		c.sel = SEL_KERNELPATH;
		c.value = kpath;
		c.source = "kernelpath";
	} else {
		r = conf_device_id(ctx, lenient, &c, &found, err);
		if (r < 0)
			return r;
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

static int set_kernel_err(struct cni_err *err, int r, const char *what, const char *name)
{
	return net_err_set(err, CNI_ERR_KERNEL, r, "%s \"%s\": %s", what, name, strerror(-r));
}

/* What the kernel (and the reference) accept as an interface name. */
static bool ifname_valid(const char *s)
{
	return !cni_env_ifname_invalid(s);
}

/*
 * The names a device has when the kernel hands it back to the initial netns
 * because its netns went away (a pod's, or the temporary one of a move the
 * plugin did not live to finish): its name there, CNI_IFNAME, or dev<N> when
 * that is taken (default_device_exit_net()).
 */
static bool is_returned_name(const char *name, const char *ifname)
{
	size_t digits;

	if (strcmp(name, ifname) == 0)
		return true;
	if (strncmp(name, "dev", 3) != 0)
		return false;
	digits = strspn(name + 3, "0123456789");
	return digits > 0 && name[3 + digits] == '\0';
}

/*
 * Whether a link's alias is an original name it can be given back in the
 * current netns: a valid name that differs from its own and that no link has.
 *
 * Return: 0 when it is, -EEXIST when a link has that name, -EINVAL when the
 * alias is no such name, another negative errno when the lookup failed.
 */
static int alias_name_free(const struct net_link *link)
{
	struct net_link other;
	int r;

	if (!ifname_valid(link->alias) || strcmp(link->alias, link->name) == 0)
		return -EINVAL;
	r = net_link_get_by_name(link->alias, &other);
	if (r == 0)
		return -EEXIST;
	return r == -ENODEV ? 0 : r;
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
};

struct op {
	enum op_kind kind;
	const char *name;   /* the link's name where the op runs */
	const char *arg;    /* OP_RENAME: new name; OP_MOVE: the alias it gets (NULL: kept) */
	int fd;             /* OP_MOVE: target netns */
	struct net_link link; /* the link as found before the change */
};

static int op_run(void *userdata)
{
	struct op *o = userdata;
	int r;

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
		return net_link_move(o->link.ifindex, o->fd, o->arg);
	case OP_RENAME:
		if (strcmp(o->name, o->arg) == 0)
			return 0;
		return net_link_set_name(o->link.ifindex, o->arg);
	}
	return -EINVAL;
}

static int op_in(int ns_fd, struct op *o)
{
	return netns_run(ns_fd, op_run, o);
}

/* An undo step: its failure is logged, the original error is what the caller reports. */
static void run_undo_op(int ns_fd, struct op o, const char *what)
{
	int r = op_in(ns_fd, &o);

	if (r < 0)
		log_error("undo: cannot %s (%s): %s", what, o.name, strerror(-r));
}

struct rdma_move {
	uint32_t index;
	int to_fd;
};

static int rdma_move_run(void *userdata)
{
	const struct rdma_move *m = userdata;

	return rdma_dev_set_netns(m->index, m->to_fd);
}

/* Moves an RDMA device, as seen from the netns @from_fd, into @to_fd. */
static int rdma_move(int from_fd, const struct rdma_dev *dev, int to_fd)
{
	struct rdma_move m = { .index = dev->index, .to_fd = to_fd };

	return netns_run(from_fd, rdma_move_run, &m);
}

static void rdma_move_back(int from_fd, const struct rdma_dev *dev, int to_fd)
{
	int r = rdma_move(from_fd, dev, to_fd);

	if (r < 0)
		log_error("undo: cannot move the RDMA device %s back: %s", dev->name, strerror(-r));
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
	bool mode_optional;
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
	if (r < 0 && p->mode_optional) {
		log_warning("cannot read the RDMA netns mode (%s); no RDMA device moves",
			    strerror(-r));
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
		return set_kernel_err(p->err, r, "failed to set up", ifname);
	return 0;
}

/*
 * A device's way from one netns to another (ADD: host to pod; DEL: pod to
 * host), in one of two plans. Direct (@tmp_fd < 0): one move, and the rename
 * where it cannot touch the host: ADD moves the device under its own name
 * and renames it in the pod; DEL renames it in the pod and moves it. Through
 * a temporary netns: into the temporary netns, renamed there (no name outside
 * can clash), into the target; it costs a second move (the slow part) and is
 * taken only when a link in the way has the name the device crosses with
 * (the pod's in ADD, the pod's original name in DEL).
 *
 * The alias changes with the move into or out of the pod, in the same
 * request, so the device carries its original name at every step, as its name
 * or as its alias, and no kill between two requests leaves the host with a
 * change of ours: ADD changes nothing in the host before the move, and a
 * netns move takes a device down by itself.
 */
struct transit {
	int from_fd, tmp_fd, to_fd;
	const char *from_name;  /* its name where it is */
	const char *to_name;    /* its name where it goes */
	const char *alias;      /* set by the move out of the source */
	const char *old_alias;  /* put back by the undo */
	bool was_up;            /* put back by the undo */
	bool rename_first;      /* rename in the source, then move (DEL) */
	int clash_code;         /* the error when @to_name is taken in the target */
	const char *clash_msg;
};

#define TRANSIT_STEPS 4

/* What -EEXIST from a step means. */
enum step_eexist {
	EEXIST_FAILS,   /* an error like any other */
	EEXIST_CLASH,   /* @to_name is taken in the target: @clash_code */
	EEXIST_DETOUR,  /* the direct plan is blocked: undo it, go through a temporary netns */
};

/* An op that undoes a step, run in @fd; skipped when @what is NULL. */
struct undo_op {
	int fd;
	struct op o;
	const char *what;
};

/* A step, run in @fd, and the ops that undo it once it is done, in their order. */
struct transit_step {
	int fd;
	struct op o;
	const char *what;       /* the failure message ... */
	const char *subject;    /* ... and the name it names */
	enum step_eexist eexist;
	struct undo_op undo[2];
};

/* Ops for the steps and their undo. */
#define UP_OP(nm) { .kind = OP_UP, .name = (nm) }
#define DOWN_OP(nm) { .kind = OP_DOWN, .name = (nm) }
#define RENAME_OP(from, to) { .kind = OP_RENAME, .name = (from), .arg = (to) }
#define MOVE_OP(nm, to_fd, new_alias) { .kind = OP_MOVE, .name = (nm), .fd = (to_fd), .arg = (new_alias) }

/* ADD, direct: into the pod under the host name with the alias, renamed there. */
static size_t plan_add_direct(const struct transit *t, struct transit_step *ret)
{
	ret[0] = (struct transit_step){
		.fd = t->from_fd,
		.o = MOVE_OP(t->from_name, t->to_fd, t->alias),
		.what = "failed to move to the target netns",
		.subject = t->from_name,
		/* The pod has a link with the device's host name. */
		.eexist = EEXIST_DETOUR,
		.undo = {
			{ .fd = t->to_fd, .o = MOVE_OP(t->from_name, t->from_fd, t->old_alias),
			  .what = "move back" },
			/* It left the host up and comes back to it up. */
			{ .fd = t->from_fd, .o = UP_OP(t->from_name), .what = t->was_up ? "set up" : NULL },
		},
	};
	ret[1] = (struct transit_step){
		.fd = t->to_fd,
		.o = RENAME_OP(t->from_name, t->to_name),
		.what = "failed to rename to",
		.subject = t->to_name,
		/* CNI_IFNAME is taken in the pod. */
		.eexist = EEXIST_CLASH,
		.undo = {
			/* Renaming needs it down; after the configuration it is up. */
			{ .fd = t->to_fd, .o = DOWN_OP(t->to_name), .what = "set down" },
			{ .fd = t->to_fd, .o = RENAME_OP(t->to_name, t->from_name),
			  .what = "restore the name" },
		},
	};
	return 2;
}

/* ADD, around: into a temporary netns with the alias, renamed there, into the pod. */
static size_t plan_add_detour(const struct transit *t, struct transit_step *ret)
{
	ret[0] = (struct transit_step){
		.fd = t->from_fd,
		.o = MOVE_OP(t->from_name, t->tmp_fd, t->alias),
		.what = "failed to move to a temporary netns",
		.subject = t->from_name,
		.eexist = EEXIST_FAILS,
		.undo = {
			{ .fd = t->tmp_fd, .o = MOVE_OP(t->from_name, t->from_fd, t->old_alias),
			  .what = "move back" },
			{ .fd = t->from_fd, .o = UP_OP(t->from_name), .what = t->was_up ? "set up" : NULL },
		},
	};
	ret[1] = (struct transit_step){
		.fd = t->tmp_fd,
		.o = RENAME_OP(t->from_name, t->to_name),
		.what = "failed to rename to",
		.subject = t->to_name,
		.eexist = EEXIST_FAILS,
		.undo = { { .fd = t->tmp_fd, .o = RENAME_OP(t->to_name, t->from_name),
			    .what = "restore the name" } },
	};
	ret[2] = (struct transit_step){
		.fd = t->tmp_fd,
		.o = MOVE_OP(t->to_name, t->to_fd, NULL),
		.what = "failed to move out of the temporary netns",
		.subject = t->to_name,
		.eexist = EEXIST_CLASH,
		.undo = {
			{ .fd = t->to_fd, .o = DOWN_OP(t->to_name), .what = "set down" },
			{ .fd = t->to_fd, .o = MOVE_OP(t->to_name, t->tmp_fd, NULL),
			  .what = "move to the temporary netns" },
		},
	};
	return 3;
}

/* DEL, direct: down and renamed in the pod, into the host with the alias cleared. */
static size_t plan_del_direct(const struct transit *t, struct transit_step *ret)
{
	ret[0] = (struct transit_step){
		.fd = t->from_fd,
		.o = DOWN_OP(t->from_name),
		.what = "failed to set down",
		.subject = t->from_name,
		.eexist = EEXIST_FAILS,
		.undo = { { .fd = t->from_fd, .o = UP_OP(t->from_name),
			    .what = t->was_up ? "set up" : NULL } },
	};
	ret[1] = (struct transit_step){
		.fd = t->from_fd,
		.o = RENAME_OP(t->from_name, t->to_name),
		.what = "failed to rename to",
		.subject = t->to_name,
		/* The pod has a link with the original name. */
		.eexist = EEXIST_DETOUR,
		.undo = { { .fd = t->from_fd, .o = RENAME_OP(t->to_name, t->from_name),
			    .what = "restore the name" } },
	};
	ret[2] = (struct transit_step){
		.fd = t->from_fd,
		.o = MOVE_OP(t->to_name, t->to_fd, t->alias),
		.what = "failed to move to the target netns",
		.subject = t->to_name,
		/* The host has a link with the original name. */
		.eexist = EEXIST_CLASH,
		.undo = { { .fd = t->to_fd, .o = MOVE_OP(t->to_name, t->from_fd, t->old_alias),
			    .what = "move back" } },
	};
	return 3;
}

/* DEL, around: down in the pod, into a temporary netns, renamed, into the host, alias cleared. */
static size_t plan_del_detour(const struct transit *t, struct transit_step *ret)
{
	ret[0] = (struct transit_step){
		.fd = t->from_fd,
		.o = DOWN_OP(t->from_name),
		.what = "failed to set down",
		.subject = t->from_name,
		.eexist = EEXIST_FAILS,
		.undo = { { .fd = t->from_fd, .o = UP_OP(t->from_name),
			    .what = t->was_up ? "set up" : NULL } },
	};
	ret[1] = (struct transit_step){
		.fd = t->from_fd,
		.o = MOVE_OP(t->from_name, t->tmp_fd, NULL),
		.what = "failed to move to a temporary netns",
		.subject = t->from_name,
		.eexist = EEXIST_FAILS,
		.undo = { { .fd = t->tmp_fd, .o = MOVE_OP(t->from_name, t->from_fd, NULL),
			    .what = "move back" } },
	};
	ret[2] = (struct transit_step){
		.fd = t->tmp_fd,
		.o = RENAME_OP(t->from_name, t->to_name),
		.what = "failed to rename to",
		.subject = t->to_name,
		.eexist = EEXIST_FAILS,
		.undo = { { .fd = t->tmp_fd, .o = RENAME_OP(t->to_name, t->from_name),
			    .what = "restore the name" } },
	};
	ret[3] = (struct transit_step){
		.fd = t->tmp_fd,
		.o = MOVE_OP(t->to_name, t->to_fd, t->alias),
		.what = "failed to move out of the temporary netns",
		.subject = t->to_name,
		.eexist = EEXIST_CLASH,
		.undo = { { .fd = t->to_fd, .o = MOVE_OP(t->to_name, t->tmp_fd, t->old_alias),
			    .what = "move to the temporary netns" } },
	};
	return 4;
}

/* Return: the number of steps. */
static size_t transit_plan(const struct transit *t, struct transit_step ret[TRANSIT_STEPS])
{
	memset(ret, 0, TRANSIT_STEPS * sizeof(*ret));
	if (t->rename_first)
		return t->tmp_fd < 0 ? plan_del_direct(t, ret) : plan_del_detour(t, ret);
	return t->tmp_fd < 0 ? plan_add_direct(t, ret) : plan_add_detour(t, ret);
}

/* Undoes the first @n_done steps of a transit (TRANSIT_STEPS: all), the last one first. */
static void transit_undo(const struct transit *t, size_t n_done)
{
	struct transit_step steps[TRANSIT_STEPS];
	size_t n = transit_plan(t, steps);

	if (n_done > n)
		n_done = n;
	while (n_done-- > 0)
		for (size_t j = 0; j < ARRAY_SIZE(steps[n_done].undo); j++)
			if (steps[n_done].undo[j].what)
				run_undo_op(steps[n_done].undo[j].fd, steps[n_done].undo[j].o,
					    steps[n_done].undo[j].what);
}

/*
 * Runs a transit; a failed step undoes the steps before it.
 *
 * Return: 0 when done; 1 when the direct plan is blocked by a name in the
 * way (undone, @err untouched); else a negative errno, with @err set.
 */
static int transit_run(const struct transit *t, struct cni_err *err)
{
	struct transit_step steps[TRANSIT_STEPS];
	size_t n = transit_plan(t, steps);

	for (size_t i = 0; i < n; i++) {
		int r = op_in(steps[i].fd, &steps[i].o);

		if (r >= 0)
			continue;
		if (r == -EEXIST && steps[i].eexist == EEXIST_DETOUR) {
			log_debug("%s \"%s\": a link has that name; through a temporary netns",
				  steps[i].what, steps[i].subject);
			transit_undo(t, i);
			return 1;
		}
		if (r == -EEXIST && steps[i].eexist == EEXIST_CLASH)
			cni_err_set(err, t->clash_code, r, "%s", t->clash_msg);
		else
			set_kernel_err(err, r, steps[i].what, steps[i].subject);
		transit_undo(t, i);
		return r;
	}
	return 0;
}

/*
 * Moves a device by the direct plan, else through a temporary netns made for
 * it, into @ret_tmp_fd. On return @t names the plan taken (its @tmp_fd), for
 * transit_undo(). The caller holds termination signals back around it and
 * around an undo: a plugin stopped there would leave the device half moved,
 * in the pod under its original name or in a temporary netns the kernel
 * destroys, handing a physical device to the host under a name not its own.
 * SIGKILL cannot be held back; DEL mends both cases (see docs/host-device.md).
 */
static int transit_move(struct transit *t, int *ret_tmp_fd, struct cni_err *err)
{
	int r;

	t->tmp_fd = -1;
	r = transit_run(t, err);
	if (r <= 0)
		return r;
	r = netns_new(ret_tmp_fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot create a temporary netns: %s",
				   strerror(-r));
	t->tmp_fd = *ret_tmp_fd;
	return transit_run(t, err);
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
	const char *orig;
	struct transit in;
	sigset_t sigmask;
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
	/*
	 * The original name travels with the device as its alias, for DEL (see
	 * docs/host-device.md). A device the kernel handed back after an interrupted move
	 * (named CNI_IFNAME or devN) still carries it: keep it.
	 */
	orig = dev.name;
	if (is_returned_name(dev.name, ifname) && alias_name_free(&dev) == 0) {
		orig = dev.alias;
		log_info("%s came back to the host from an interrupted move; its original name %s is kept",
			 dev.name, orig);
	}
	r = netns_open_current(&host_fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot open the host netns: %s", strerror(-r));
	rdma.ifindex = dev.ifindex;
	r = rdma_plan_run(&rdma);
	if (r < 0)
		return r;
	snprintf(clash, sizeof(clash), "container already has an interface named \"%s\"", ifname);
	in = (struct transit){ .from_fd = host_fd, .tmp_fd = -1, .to_fd = pod_fd,
			       .from_name = dev.name, .to_name = ifname, .alias = orig,
			       .old_alias = dev.alias, .was_up = dev.flags & IFF_UP,
			       .clash_code = CNI_ERR_KERNEL, .clash_msg = clash };
	log_debug("moving %s (%s %s) into %s as %s", dev.name, c.source, c.value, ctx->env.netns,
		  ifname);
	signals_block_termination(&sigmask);
	r = transit_move(&in, &tmp_fd, err);
	signals_restore(&sigmask);
	if (r < 0)
		return r;

	/* From here on the device is in the pod and every failure brings it home. */
	o = (struct op){ .kind = OP_GET, .name = ifname };
	r = op_in(pod_fd, &o);
	if (r < 0) {
		set_kernel_err(err, r, "failed to find in the container", ifname);
		goto fail_pod;
	}
	hwaddr_format(o.link.hwaddr, o.link.hwaddr_len, mac, sizeof(mac));
	if (rdma.move) {
		r = rdma_move(host_fd, &rdma.dev, pod_fd);
		if (r < 0) {
			set_kernel_err(err, r, "failed to move RDMA device into the container",
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
		rdma_move_back(pod_fd, &rdma.dev, host_fd);
fail_pod:
	signals_block_termination(&sigmask);
	transit_undo(&in, TRANSIT_STEPS);
	signals_restore(&sigmask);
	cni_result_free(&ipam);
	return r;
}

/*
 * When the pod netns is gone, the kernel has already handed a physical
 * device back to the initial netns, under its pod name (or devN when that
 * name was taken); so has a plugin killed during a move. Give it its
 * original name, kept in its alias, back when that name is free. Only a
 * device with such a name is touched: a host link that merely has an alias
 * is not one the plugin moved.
 */
static void recover_in_host(const struct hostdev_conf *c, const char *ifname)
{
	struct net_link link;
	bool was_up;
	int r;

	if (!c->value)
		return;
	r = c->sel == SEL_DEVICE ? net_link_get_by_alias(c->value, &link) : find_host_link(c, &link);
	if (r < 0 || !is_returned_name(link.name, ifname))
		return;
	r = alias_name_free(&link);
	if (r == -EEXIST)
		log_warning("DEL: %s came back to the host; its original name %s is taken, left as is",
			    link.name, link.alias);
	if (r < 0)
		return;
	/* Renaming needs the link down; its up state is restored when the rename fails. */
	was_up = link.flags & IFF_UP;
	r = was_up ? net_link_set_up(link.ifindex, false) : 0;
	if (r >= 0) {
		r = net_link_set_name(link.ifindex, link.alias);
		if (r < 0 && was_up)
			(void)net_link_set_up(link.ifindex, true);
	}
	if (r >= 0)
		r = net_link_set_alias(link.ifindex, "");
	if (r < 0)
		log_warning("DEL: cannot rename %s back to %s: %s", link.name, link.alias, strerror(-r));
	else
		log_info("DEL: %s, returned to the host by the kernel, is %s again", link.name,
			 link.alias);
}

/*
 * Whether the pod's link is the device the config names, as far as the
 * selector lets the plugin tell: the pod can create, rename and alias links
 * of its own. device: the original name (alias); hwaddr: the permanent MAC,
 * else the current one; PCI and auxiliary device IDs: the bus device ethtool
 * reports, which must be the ID; kernelpath: that bus device, when the
 * driver reports one, must be a component of the path.
 */
struct pod_match {
	const struct hostdev_conf *c;
	const struct net_link *link;
	bool ok;
	char why[128];
};

static int pod_match_run(void *userdata)
{
	struct pod_match *m = userdata;
	const struct hostdev_conf *c = m->c;
	uint8_t hw[HWADDR_MAX];
	char text[3 * HWADDR_MAX], bus[64];
	size_t hw_len = 0;
	int r;

	m->ok = false;
	if (!c->value) {
		snprintf(m->why, sizeof(m->why), "the configured device is gone from sysfs");
		return 0;
	}
	switch (c->sel) {
	case SEL_DEVICE:
		m->ok = strcmp(m->link->alias, c->value) == 0;
		snprintf(m->why, sizeof(m->why), "its original name is not %s", c->value);
		return 0;
	case SEL_HWADDR:
		r = net_ethtool_perm_hwaddr(m->link->name, hw, &hw_len);
		if (r == -ENODATA || r == -EOPNOTSUPP) {
			hw_len = m->link->hwaddr_len;
			memcpy(hw, m->link->hwaddr, hw_len);
		} else if (r < 0) {
			return r;
		}
		m->ok = hw_len == c->mac_len && memcmp(hw, c->mac, hw_len) == 0;
		snprintf(m->why, sizeof(m->why), "its %sMAC is %s", r == 0 ? "permanent " : "",
			 hwaddr_format(hw, hw_len, text, sizeof(text)));
		return 0;
	case SEL_KERNELPATH:
	case SEL_PCI:
	case SEL_AUX:
		r = net_ethtool_bus_info(m->link->name, bus, sizeof(bus));
		if (r == -EOPNOTSUPP)
			bus[0] = '\0';
		else if (r < 0)
			return r;
		if (c->sel == SEL_KERNELPATH)
			m->ok = !bus[0] || path_has_component(c->value, bus);
		else
			m->ok = strcmp(bus, c->value) == 0;
		snprintf(m->why, sizeof(m->why), "its bus device is \"%s\"", bus);
		return 0;
	}
	return -EINVAL;
}

/*
 * A device a killed plugin left in the pod on the direct way: between the move
 * and the rename (ADD), or the rename and the move (DEL), it has its original
 * name as both name and alias (or a devN name, when ADD took it from the host
 * as such). Whether it is the configured device is for pod_match to say.
 */
static bool left_mid_move(const struct net_link *link, void *data)
{
	const char *ifname = data;

	return ifname_valid(link->alias) &&
	       (strcmp(link->alias, link->name) == 0 || is_returned_name(link->name, ifname));
}

struct pod_find_left {
	const char *ifname;
	struct net_link link;
};

static int pod_find_left(void *userdata)
{
	struct pod_find_left *f = userdata;

	return net_link_find(left_mid_move, (void *)f->ifname, &f->link);
}

static int hostdev_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_close_ int pod_fd = -1;
	_cleanup_close_ int host_fd = -1;
	_cleanup_close_ int tmp_fd = -1;
	const char *ifname = ctx->env.ifname;
	struct hostdev_conf c = { 0 };
	struct rdma_plan rdma = { .err = err, .mode_optional = true };
	struct net_link dev, clash;
	struct pod_match match = { .c = &c };
	struct pod_find_left left = { .ifname = ifname };
	bool left_behind = false;
	char orig[IFNAMSIZ], clash_msg[160];
	struct transit out;
	sigset_t sigmask;
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
	/* No netns, or a path that is no netns any more (a stale bind mount target): gone. */
	r = cni_plugin_open_netns_del(ctx, &pod_fd, err);
	if (r < 0)
		return r;
	if (r == 0) {
		recover_in_host(&c, ifname);
		return 0;
	}
	o = (struct op){ .kind = OP_GET, .name = ifname };
	r = op_in(pod_fd, &o);
	dev = o.link;
	if (r == -ENODEV) {
		/* A second DEL, an ADD that never got this far, or a plugin killed on the way. */
		r = netns_run(pod_fd, pod_find_left, &left);
		if (r == -ENODEV) {
			recover_in_host(&c, ifname);
			return 0;
		}
		dev = left.link;
		left_behind = r >= 0;
		if (left_behind)
			log_info("DEL: %s in %s carries its original name %s: a move that did not "
				 "finish; it goes back", dev.name, ctx->env.netns, dev.alias);
	}
	if (r < 0)
		return set_kernel_err(err, r, "failed to look up", ifname);
	/* The alias is the mark of a device this plugin moved in. */
	if (!ifname_valid(dev.alias)) {
		log_warning("DEL: %s in %s has no original name (alias); not moved in by host-device, "
			    "left in place", ifname, ctx->env.netns);
		return 0;
	}
	match.link = &dev;
	r = netns_run(pod_fd, pod_match_run, &match);
	if (r < 0)
		return set_kernel_err(err, r, "cannot tell the device of", dev.name);
	if (!match.ok) {
		log_warning("DEL: %s in %s is not the configured device (%s %.64s): %s; left in place",
			    dev.name, ctx->env.netns, c.source, c.value ? c.value : "", match.why);
		/* With no CNI_IFNAME in the pod, the device may be back in the host. */
		if (left_behind)
			recover_in_host(&c, ifname);
		return 0;
	}
	memcpy(orig, dev.alias, strlen(dev.alias) + 1); /* a valid name: shorter than IFNAMSIZ */
	snprintf(clash_msg, sizeof(clash_msg),
		 "cannot return %s to the host as \"%s\": the host has a link of that name; the "
		 "device stays in the container", dev.name, orig);
	if (net_link_get_by_name(orig, &clash) == 0)
		return cni_err_set(err, HOSTDEV_ERR_NAME_TAKEN, -EEXIST, "%s", clash_msg);
	r = netns_open_current(&host_fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot open the host netns: %s", strerror(-r));
	rdma.ifindex = dev.ifindex;
	r = netns_run(pod_fd, rdma_plan_run, &rdma);
	if (r < 0)
		return r;
	signals_block_termination(&sigmask);
	if (rdma.move) {
		r = rdma_move(pod_fd, &rdma.dev, host_fd);
		if (r < 0) {
			set_kernel_err(err, r, "failed to move RDMA device back to the host",
				       rdma.dev.name);
			goto restore_signals;
		}
	}
	out = (struct transit){ .from_fd = pod_fd, .tmp_fd = -1, .to_fd = host_fd,
				.from_name = dev.name, .to_name = orig, .alias = "", .old_alias = orig,
				.was_up = dev.flags & IFF_UP, .rename_first = true,
				.clash_code = HOSTDEV_ERR_NAME_TAKEN, .clash_msg = clash_msg };
	r = transit_move(&out, &tmp_fd, err);
	if (r < 0 && rdma.move)
		rdma_move_back(host_fd, &rdma.dev, pod_fd);
restore_signals:
	signals_restore(&sigmask);
	if (r >= 0)
		log_debug("DEL %s: %s is %s in the host again", ctx->env.container_id, dev.name, orig);
	return r;
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
