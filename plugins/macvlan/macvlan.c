/* macvlan CNI plugin: a macvlan child of a master link, moved into the pod */
#include <errno.h>
#include <linux/if_link.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/cni/error.h"
#include "common/cni/ipam.h"
#include "common/cni/result.h"
#include "common/net/iface.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/util/netns.h"
#include "common/net/route.h"
#include "common/util/cleanup.h"
#include "common/util/log.h"
#include "plugins/macvlan/macvlan.h"

struct macvlan_conf {
	const char *master;     /* NULL: the default-route interface */
	const char *mode_name;
	uint32_t mode;
	unsigned int mtu;       /* 0: inherit */
	bool has_mac;
	uint8_t mac[HWADDR_MAX];
	size_t mac_len;
	bool link_in_container;
	uint32_t bc_queue_len;
	bool has_ipam;
};

static const struct {
	const char *name;
	uint32_t mode;
} modes[] = {
	{ "", MACVLAN_MODE_BRIDGE },
	{ "bridge", MACVLAN_MODE_BRIDGE },
	{ "private", MACVLAN_MODE_PRIVATE },
	{ "vepa", MACVLAN_MODE_VEPA },
	{ "passthru", MACVLAN_MODE_PASSTHRU },
};

static const char *mode_name(uint32_t mode)
{
	for (size_t i = 1; i < ARRAY_SIZE(modes); i++)
		if (modes[i].mode == mode)
			return modes[i].name;
	return "unknown";
}

static int parse_mac(const char *text, const char *source, struct macvlan_conf *c,
		     struct cni_err *err)
{
	size_t len = 0;

	if (hwaddr_parse(text, c->mac, &len) < 0 || len != 6)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MAC address \"%.64s\" from %s", text, source);
	/* The kernel refuses these with EADDRNOTAVAIL; say why before creating anything. */
	if (c->mac[0] & 1)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MAC address \"%.64s\" from %s: multicast", text, source);
	if (!(c->mac[0] | c->mac[1] | c->mac[2] | c->mac[3] | c->mac[4] | c->mac[5]))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MAC address \"%.64s\" from %s: all zero", text, source);
	c->has_mac = true;
	c->mac_len = len;
	return 0;
}

/* CNI_ARGS keys besides IgnoreUnknown. */
static const char *const known_args[] = { "MAC", NULL };

/* Everything that can be refused is refused here, before the kernel is touched. */
static int macvlan_conf_load(const struct cni_ctx *ctx, struct macvlan_conf *ret,
			     struct cni_err *err)
{
	struct macvlan_conf c = { .mode_name = "" };
	const char *mac = NULL, *why;
	int64_t v;
	bool found = false;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "master", &c.master, err)) < 0)
		return r;
	if (c.master && !*c.master)
		c.master = NULL;
	if (c.master && (why = cni_env_ifname_invalid(c.master)))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "invalid master \"%.64s\": %s",
				   c.master, why);
	if ((r = cni_conf_get_str(&ctx->conf, "mode", &c.mode_name, err)) < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(modes) && !found; i++) {
		if (strcmp(c.mode_name, modes[i].name) == 0) {
			c.mode = modes[i].mode;
			found = true;
		}
	}
	if (!found)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "unknown macvlan mode: \"%.32s\"",
				   c.mode_name);
	if ((r = cni_conf_get_int(&ctx->conf, "mtu", 0, INT32_MAX, &v, err)) < 0)
		return r;
	c.mtu = r ? (unsigned int)v : 0;
	if ((r = cni_conf_get_bool(&ctx->conf, "linkInContainer", &c.link_in_container, err)) < 0)
		return r;
	if ((r = cni_conf_get_int(&ctx->conf, "bcqueuelen", 0, UINT32_MAX, &v, err)) < 0)
		return r;
	c.bc_queue_len = r ? (uint32_t)v : 0;

	/* Precedence: config "mac" < CNI_ARGS MAC < runtimeConfig.mac. */
	if ((r = cni_conf_get_str(&ctx->conf, "mac", &mac, err)) < 0)
		return r;
	if (mac && *mac && (r = parse_mac(mac, "config \"mac\"", &c, err)) < 0)
		return r;
	if ((r = cni_args_check_known(&ctx->args, known_args, err)) < 0)
		return r;
	mac = cni_args_get(&ctx->args, "MAC");
	if (mac && *mac && (r = parse_mac(mac, "CNI_ARGS MAC", &c, err)) < 0)
		return r;
	mac = NULL;
	if ((r = cni_conf_get_str(&ctx->conf, "runtimeConfig.mac", &mac, err)) < 0)
		return r;
	if (mac && *mac && (r = parse_mac(mac, "runtimeConfig.mac", &c, err)) < 0)
		return r;

	c.has_ipam = ctx->conf.ipam_type && *ctx->conf.ipam_type;
	if (!c.has_ipam && (r = cni_plugin_check_l2_version(ctx, err)) < 0)
		return r;
	*ret = c;
	return 0;
}

/* Master lookup and MTU check, run in the netns that holds the master. */
struct master_lookup {
	const struct macvlan_conf *conf;
	struct net_link master;
	struct cni_err *err;
};

static int master_lookup(void *userdata)
{
	struct master_lookup *m = userdata;
	const struct macvlan_conf *c = m->conf;
	int ifindex;
	int r;

	if (c->master) {
		r = net_link_get_by_name(c->master, &m->master);
		if (r < 0)
			return cni_err_set(m->err, CNI_ERR_NOT_FOUND, r, "failed to lookup master \"%s\": %s",
					   c->master, strerror(-r));
	} else {
		r = net_default_route_ifindex(&ifindex);
		if (r < 0)
			return cni_err_set(m->err, CNI_ERR_NOT_FOUND, r, "no default route interface found");
		r = net_link_get_by_index(ifindex, &m->master);
		if (r < 0)
			return cni_err_set(m->err, CNI_ERR_NOT_FOUND, r,
					   "failed to lookup default route interface %d: %s", ifindex,
					   strerror(-r));
	}
	if (c->mtu > m->master.mtu)
		return cni_err_set(m->err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MTU %u, must be [0, master MTU(%u)]", c->mtu, m->master.mtu);
	return 0;
}

static int find_master(const struct macvlan_conf *c, int pod_fd, struct net_link *ret,
		       struct cni_err *err)
{
	struct master_lookup m = { .conf = c, .err = err };
	int r;

	r = c->link_in_container ? netns_run(pod_fd, master_lookup, &m) : master_lookup(&m);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot enter netns: %s", strerror(-r));
	*ret = m.master;
	return 0;
}

static int kernel_err(struct cni_err *err, int r, const char *what, const char *name)
{
	return net_err_set(err, CNI_ERR_KERNEL, r, "%s \"%s\": %s", what, name, strerror(-r));
}

/* Steps run inside the pod netns. */
struct pod_step {
	const struct cni_ctx *ctx;
	const char *tmp_name;
	struct cni_result *result;
	struct net_link link;
	struct cni_err *err;
};

static int pod_rename(void *userdata)
{
	struct pod_step *s = userdata;
	int r;

	r = net_link_get_by_name(s->tmp_name, &s->link);
	if (r < 0)
		return kernel_err(s->err, r, "failed to find new macvlan", s->tmp_name);
	r = net_link_set_name(s->link.ifindex, s->ctx->env.ifname);
	if (r < 0)
		return kernel_err(s->err, r, "failed to rename macvlan to", s->ctx->env.ifname);
	r = net_link_get_by_index(s->link.ifindex, &s->link);
	if (r < 0)
		return kernel_err(s->err, r, "failed to refetch macvlan", s->ctx->env.ifname);
	return 0;
}

static int pod_configure(void *userdata)
{
	struct pod_step *s = userdata;
	int r;

	if (s->result->n_ips)
		return iface_configure(s->ctx->env.ifname, s->result, s->err);
	r = net_link_set_up(s->link.ifindex, true);
	if (r < 0)
		return kernel_err(s->err, r, "failed to set up", s->ctx->env.ifname);
	return 0;
}

/* Deletes the link we created, by index so that a same-named stranger is never hit. */
static int pod_undo_create(void *userdata)
{
	struct pod_step *s = userdata;
	int r;

	if (!s->link.ifindex && net_link_get_by_name(s->tmp_name, &s->link) < 0) {
		log_error("undo: new macvlan %s not found in %s", s->tmp_name, s->ctx->env.netns);
		return 0;
	}
	r = net_link_delete(s->link.ifindex);

	if (r < 0 && r != -ENODEV)
		log_error("undo: cannot delete macvlan %d in %s: %s", s->link.ifindex,
			  s->ctx->env.netns, strerror(-r));
	return 0;
}

/*
 * A macvlan under this attachment's temporary name is one a killed ADD of it
 * left behind: it goes, whether this is a DEL or an ADD run again.
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
	if (strcmp(link.kind, "macvlan") != 0)
		return 0;
	log_info("deleting macvlan %s, left by an ADD that did not finish", tmp_name);
	r = net_link_delete(link.ifindex);
	if (r < 0 && r != -ENODEV)
		return kernel_err(err, r, "failed to delete", tmp_name);
	return 0;
}

static int create_child(void *userdata)
{
	return net_link_create(userdata);
}

static int pod_delete_leftover(void *userdata)
{
	struct pod_step *s = userdata;

	return delete_leftover(s->tmp_name, s->err);
}

/* In the pod netns, from the netns of the master; a leftover of the same name is replaced. */
static int create_in_pod(const struct macvlan_conf *c, int pod_fd, struct net_child *child,
			 struct pod_step *s)
{
	int r;

	for (int attempt = 0;; attempt++) {
		r = c->link_in_container ? netns_run(pod_fd, create_child, child) :
					   net_link_create(child);
		if (r != -EEXIST || attempt == 1)
			return r;
		r = netns_run(pod_fd, pod_delete_leftover, s);
		if (r < 0)
			return r;
	}
}

static int build_result(const struct cni_ctx *ctx, struct pod_step *s, struct cni_result *ipam,
			struct cni_result *ret, struct cni_err *err)
{
	char mac[CNI_MAC_STRLEN];

	hwaddr_format(s->link.hwaddr, s->link.hwaddr_len, mac, sizeof(mac));
	/* The config's dns wins, as in the reference; without one, IPAM's is kept. */
	if (cni_result_add_attachment(ret, ctx->env.ifname, mac, ctx->env.netns, ipam,
				      ctx->conf.has_dns ? &ctx->conf.dns : &ipam->dns) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

static int macvlan_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	_cleanup_close_ int pod_fd = -1;
	struct macvlan_conf c;
	struct net_link master;
	struct net_child child;
	struct cni_result ipam = { 0 };
	struct pod_step step = { .ctx = ctx, .err = err };
	char tmp_name[IFNAMSIZ];
	int r;

	r = macvlan_conf_load(ctx, &c, err);
	if (r < 0)
		return r;
	r = cni_plugin_open_netns(ctx, &pod_fd, err);
	if (r < 0)
		return r;
	r = find_master(&c, pod_fd, &master, err);
	if (r < 0)
		return r;

	cni_plugin_tmp_name(ctx, "cnimv", tmp_name, sizeof(tmp_name));
	step.tmp_name = tmp_name;

	child = (struct net_child){
		.kind = NET_CHILD_MACVLAN,
		.name = tmp_name,
		.master_ifindex = master.ifindex,
		.netns_fd = c.link_in_container ? -1 : pod_fd,
		.mtu = c.mtu,
		.hwaddr = c.has_mac ? c.mac : NULL,
		.hwaddr_len = c.mac_len,
		.macvlan = { .mode = c.mode, .bc_queue_len = c.bc_queue_len },
	};
	log_debug("creating macvlan %s on %s (mode %s) in %s", tmp_name, master.name,
		  mode_name(c.mode), ctx->env.netns);
	r = create_in_pod(&c, pod_fd, &child, &step);
	if (r < 0)
		return kernel_err(err, r, "failed to create macvlan on master", master.name);

	/* From here on the link exists in the pod and every failure removes it. */
	r = netns_run(pod_fd, pod_rename, &step);
	if (r < 0)
		goto fail_link;

	if (c.has_ipam) {
		r = cni_ipam_exec(&ctx->env, &ctx->conf, CNI_CMD_ADD, &ipam, err);
		if (r < 0)
			goto fail_link;
		if (!ipam.n_ips) {
			r = cni_err_set(err, CNI_ERR_IPAM, -EINVAL, "IPAM plugin returned missing IP config");
			goto fail_ipam;
		}
	}
	step.result = &ipam;
	r = netns_run(pod_fd, pod_configure, &step);
	if (r < 0)
		goto fail_ipam;
	r = build_result(ctx, &step, &ipam, ret, err);
	if (r < 0)
		goto fail_ipam;
	cni_result_free(&ipam);
	log_debug("ADD %s: %s in %s", ctx->env.container_id, ctx->env.ifname, ctx->env.netns);
	return 0;

fail_ipam:
	if (c.has_ipam)
		cni_plugin_ipam_undo(ctx);
fail_link:
	(void)netns_run(pod_fd, pod_undo_create, &step);
	cni_result_free(&ipam);
	return r;
}

struct pod_delete {
	const char *ifname;
	const char *tmp_name;
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
	if (r == 0 && strcmp(link.kind, "macvlan") != 0) {
		log_warning("DEL: %s is a %s link, not a macvlan; left in place", d->ifname,
			    link.kind[0] ? link.kind : "non-virtual");
	} else if (r == 0) {
		r = net_link_delete(link.ifindex);
		if (r < 0 && r != -ENODEV)
			return kernel_err(d->err, r, "failed to delete", d->ifname);
	}
	/* An ADD killed before its rename left the link under its temporary name. */
	return delete_leftover(d->tmp_name, d->err);
}

static int macvlan_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_close_ int pod_fd = -1;
	char tmp_name[IFNAMSIZ];
	struct pod_delete d = { .ifname = ctx->env.ifname, .tmp_name = tmp_name, .err = err };
	int r;

	cni_plugin_tmp_name(ctx, "cnimv", tmp_name, sizeof(tmp_name));
	/* IPAM first: its reservation must go even when the netns is already gone. */
	if (ctx->conf.ipam_type && *ctx->conf.ipam_type) {
		r = cni_ipam_exec(&ctx->env, &ctx->conf, CNI_CMD_DEL, NULL, err);
		if (r < 0)
			return r;
	}
	r = cni_plugin_open_netns_del(ctx, &pod_fd, err);
	if (r <= 0)
		return r;
	r = netns_run(pod_fd, pod_delete, &d);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "failed to delete %s in %s: %s",
				   ctx->env.ifname, ctx->env.netns, strerror(-r));
	return 0;
}

struct pod_check {
	const struct cni_ctx *ctx;
	const struct macvlan_conf *conf;
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
	if (strcmp(link.kind, "macvlan") != 0)
		return cni_err_set(k->err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "Container interface %s not of type macvlan", ifname);
	if (link.macvlan_mode != k->conf->mode)
		return cni_err_set(k->err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "container macvlan mode %s does not match expected value: %s",
				   mode_name(link.macvlan_mode), mode_name(k->conf->mode));
	r = cni_plugin_check_mac(k->iface, link.hwaddr, link.hwaddr_len, k->err);
	if (r < 0)
		return r;
	return iface_check(ifname, k->ctx->conf.prev_result, k->err);
}

static int macvlan_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_close_ int pod_fd = -1;
	struct pod_check k = { .ctx = ctx, .err = err };
	struct macvlan_conf c;
	struct net_link master;
	int r;

	r = macvlan_conf_load(ctx, &c, err);
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
	r = find_master(&c, pod_fd, &master, err);
	if (r < 0)
		return r;
	k.conf = &c;
	r = netns_run(pod_fd, pod_check, &k);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot enter netns %s: %s", ctx->env.netns,
				   strerror(-r));
	return 0;
}

const struct cni_plugin macvlan_plugin = {
	.name = "macvlan",
	.summary = "macvlan: gives a pod a macvlan child of a host (or pod) master interface",
	.add = macvlan_add,
	.del = macvlan_del,
	.check = macvlan_check,
};
