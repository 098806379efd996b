/* Attaching an interface to a pod: the steps every interface plugin shares */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/attach/attach.h"
#include "common/attach/iface.h"
#include "common/cni/conf.h"
#include "common/cni/ipam.h"
#include "common/cni/plugin.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/ns.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/hwaddr.h"
#include "common/util/log.h"
#include "common/util/text.h"

static int netns_err(const struct cni_ctx *ctx, int r, struct cni_err *err)
{
	return cni_err_set(err, CNI_ERR_INVALID_ENV, r, "failed to open netns \"%s\": %s",
			   ctx->env.netns,
			   r == -EMEDIUMTYPE ? "not a network namespace" :
			   r == -EINVAL ? "not a namespace" : strerror(-r));
}

/* The handle to the pod's netns the steps talk through. */
static int pod_handle(struct attach *a, struct cni_err *err)
{
	int r = net_ns_open(a->pod_fd, &a->pod);

	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot open netlink in netns %s: %s",
				   a->ctx->env.netns, strerror(-r));
	return 0;
}

/* The handle to the host's netns: every host-side request of the command on one socket. */
static int host_handle(struct attach *a, const struct cni_ctx *ctx, struct cni_err *err)
{
	int r;

	*a = (struct attach){ .ctx = ctx, .pod_fd = ctx->netns_fd };
	r = net_ns_open(-1, &a->host);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	return 0;
}

int attach_open(struct attach *a, const struct cni_ctx *ctx, struct cni_err *err)
{
	int r = host_handle(a, ctx, err);

	if (r < 0)
		return r;
	r = cni_conf_get_bool(&ctx->conf, "ipv6Autoconf", &a->ipv6_autoconf, err);
	if (r < 0)
		return r;
	if (a->pod_fd < 0)
		return netns_err(ctx, ctx->netns_err ? ctx->netns_err : -ENOENT, err);
	return pod_handle(a, err);
}

int attach_open_del(struct attach *a, const struct cni_ctx *ctx, struct cni_err *err)
{
	int r = host_handle(a, ctx, err);

	if (r < 0)
		return r;
	r = ctx->netns_err;
	if (!*ctx->env.netns)
		return 0;
	if (r == -ENOENT || r == -EINVAL) {
		log_info("DEL: netns %s is gone (%s)", ctx->env.netns,
			 r == -EINVAL ? "a file that is no namespace any more" : strerror(-r));
		return 0;
	}
	if (r < 0)
		return netns_err(ctx, r, err);
	r = pod_handle(a, err);
	return r < 0 ? r : 1;
}

void attach_close(struct attach *a)
{
	net_ns_close(a->pod);
	net_ns_close(a->host);
	cni_result_free(&a->ipam);
	*a = (struct attach){ .ctx = a->ctx, .pod_fd = -1 };
}

void attach_tmp_name(const struct cni_ctx *ctx, const char *prefix, char *buf, size_t size)
{
	uint64_t h = text_hash64(ctx->env.container_id, strlen(ctx->env.container_id) + 1,
				 TEXT_HASH64_INIT);

	h = text_hash64(ctx->env.ifname, strlen(ctx->env.ifname), h);
	snprintf(buf, size, "%.5s%010llx", prefix, (unsigned long long)(h & 0xffffffffffULL));
}

int attach_ipam_add(struct attach *a, struct cni_err *err)
{
	int r;

	if (!cni_conf_has_ipam(&a->ctx->conf))
		return 0;
	r = cni_ipam_run(a->ctx, CNI_CMD_ADD, &a->ipam, err);
	if (r < 0)
		return r;
	a->ipam_added = true;
	if (!a->ipam.n_ips) {
		attach_ipam_undo(a);
		return cni_err_set(err, CNI_ERR_IPAM, -EINVAL, "IPAM plugin returned missing IP config");
	}
	return 0;
}

void attach_ipam_undo(struct attach *a)
{
	if (!a->ipam_added)
		return;
	a->ipam_added = false;
	cni_ipam_undo(a->ctx);
}

int attach_delete_link(struct net_ns *ns, const char *name, const char *kind, const char *what,
		       struct cni_err *err)
{
	struct net_link link;
	int r;

	r = net_link_get_by_name(ns, name, &link);
	if (r == -ENODEV)
		return 0;
	if (r < 0)
		return net_err_op(err, r, "failed to look up", name);
	if (strcmp(link.kind, kind) != 0) {
		log_warning("%s is a %s link, not %s; left in place", name,
			    link.kind[0] ? link.kind : "non-virtual", what);
		return 0;
	}
	log_info("deleting %s %s", kind, name);
	r = net_link_delete(ns, link.ifindex);
	if (r < 0 && r != -ENODEV)
		return net_err_op(err, r, "failed to delete", name);
	return 0;
}

void attach_undo_link(struct net_ns *ns, struct net_link *link, const char *tmp_name)
{
	int r;

	if (!link->ifindex && net_link_get_by_name(ns, tmp_name, link) < 0) {
		log_error("undo: new link %s not found", tmp_name);
		return;
	}
	r = net_link_delete(ns, link->ifindex);
	if (r < 0 && r != -ENODEV)
		log_error("undo: cannot delete link %s (ifindex %d): %s", link->name, link->ifindex,
			  strerror(-r));
}

int attach_configure(struct attach *a, const struct net_link *link, struct cni_err *err)
{
	int r;

	if (a->ipam.n_ips)
		return iface_configure(a->pod, link, &a->ipam, a->ipv6_autoconf, err);
	if (link->flags & IFF_UP)
		return 0;
	r = net_link_set_up(a->pod, link->ifindex, true);
	return r < 0 ? net_err_op(err, r, "failed to set up", link->name) : 0;
}

int attach_result(struct attach *a, const uint8_t *hwaddr, size_t hwaddr_len,
		  struct cni_result *ret, struct cni_err *err)
{
	const struct cni_ctx *ctx = a->ctx;
	char mac[CNI_MAC_STRLEN];

	if (hwaddr)
		hwaddr_format(hwaddr, hwaddr_len, mac, sizeof(mac));
	if (cni_result_add_attachment(ret, ctx->env.ifname, hwaddr ? mac : NULL, ctx->env.netns,
				      &a->ipam, ctx->conf.has_dns ? &ctx->conf.dns : &a->ipam.dns) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

int attach_address(struct attach *a, const struct net_link *link, struct cni_result *ret,
		   struct cni_err *err)
{
	int r;

	r = attach_ipam_add(a, err);
	if (r < 0)
		return r;
	if ((r = attach_configure(a, link, err)) < 0 ||
	    (r = attach_result(a, link->hwaddr, link->hwaddr_len, ret, err)) < 0)
		attach_ipam_undo(a);
	return r;
}

int attach_address_created(struct attach *a, const char *what, struct cni_result *ret,
			   struct cni_err *err)
{
	const char *ifname = a->ctx->env.ifname;
	struct net_link link = { 0 };
	char op[64];
	int r;

	r = net_link_get_by_name(a->pod, ifname, &link);
	if (r < 0) {
		snprintf(op, sizeof(op), "failed to find new %s", what);
		net_err_op(err, r, op, ifname);
		goto fail_link;
	}
	r = attach_address(a, &link, ret, err);
	if (r < 0)
		goto fail_link;
	log_debug("ADD %s: %s in %s", a->ctx->env.container_id, ifname, a->ctx->env.netns);
	return 0;

fail_link:
	attach_undo_link(a->pod, &link, ifname);
	return r;
}

/* The interface prevResult records for CNI_IFNAME in CNI_NETNS. */
static int prev_iface(const struct cni_ctx *ctx, const struct cni_iface **ret, struct cni_err *err)
{
	const struct cni_result *prev = ctx->conf.prev_result;
	const struct cni_iface *iface = NULL;

	if (!prev)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "required prevResult missing");
	for (size_t i = 0; i < prev->n_ifaces && !iface; i++)
		if (strcmp(prev->ifaces[i].name, ctx->env.ifname) == 0)
			iface = &prev->ifaces[i];
	if (!iface)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "container interface name missing in prevResult: %s", ctx->env.ifname);
	if (!iface->sandbox || strcmp(iface->sandbox, ctx->env.netns) != 0)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "sandbox in prevResult %s doesn't match configured netns: %s",
				   iface->sandbox ? iface->sandbox : "", ctx->env.netns);
	*ret = iface;
	return 0;
}

int attach_check_begin(struct attach *a, const struct cni_ctx *ctx,
		       const struct cni_iface **ret_iface, struct cni_err *err)
{
	int r;

	r = attach_open(a, ctx, err);
	if (r < 0)
		return r;
	r = cni_ipam_run(ctx, CNI_CMD_CHECK, NULL, err);
	if (r < 0)
		return r;
	return prev_iface(ctx, ret_iface, err);
}

int attach_check_link(struct attach *a, struct net_link *ret, struct cni_err *err)
{
	const char *ifname = a->ctx->env.ifname;
	int r = net_link_get_by_name(a->pod, ifname, ret);

	if (r < 0)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, r,
				   "container Interface name in prevResult: %s not found", ifname);
	return 0;
}

int attach_check_end(struct attach *a, const struct cni_iface *iface, const struct net_link *link,
		     struct cni_err *err)
{
	char mac[CNI_MAC_STRLEN];

	hwaddr_format(link->hwaddr, link->hwaddr_len, mac, sizeof(mac));
	if (iface->mac[0] && strcasecmp(iface->mac, mac) != 0)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				   "interface %s Mac %s doesn't match container Mac: %s", iface->name,
				   iface->mac, mac);
	return iface_check(a->pod, a->ctx->env.ifname, a->ctx->conf.prev_result, err);
}

int attach_del_created(const struct cni_ctx *ctx, const char *kind, const char *what,
		       struct cni_err *err)
{
	struct attach a = { .pod_fd = -1 };
	int r;

	r = cni_ipam_run(ctx, CNI_CMD_DEL, NULL, err);
	if (r < 0)
		return r;
	r = attach_open_del(&a, ctx, err);
	if (r > 0)
		r = attach_delete_link(a.pod, ctx->env.ifname, kind, what, err);
	attach_close(&a);
	return r;
}

struct link_names {
	unsigned short type;
	char *buf;
	size_t size;
	size_t n, shown;
	int seen[256]; /* the ifindexes counted: an interrupted dump shows links again */
};

static bool link_name(const struct net_link *link, void *data)
{
	struct link_names *l = data;
	size_t o = strlen(l->buf);

	if (link->type != l->type || (link->flags & IFF_LOOPBACK))
		return false;
	for (size_t i = 0; i < l->n && i < ARRAY_SIZE(l->seen); i++)
		if (l->seen[i] == link->ifindex)
			return false;
	if (l->n < ARRAY_SIZE(l->seen))
		l->seen[l->n] = link->ifindex;
	l->n++;
	/* Room kept for " and N more". */
	if (l->shown == l->n - 1 && o + strlen(link->name) + 24 < l->size) {
		snprintf(l->buf + o, l->size - o, "%s%s", o ? ", " : "", link->name);
		l->shown++;
	}
	return false;
}

void attach_link_names(struct net_ns *ns, unsigned short type, char *buf, size_t size)
{
	struct link_names l = { .type = type, .buf = buf, .size = size };
	struct net_link unused;
	size_t o;

	buf[0] = '\0';
	if (net_link_find(ns, link_name, &l, &unused) != -ENODEV) {
		snprintf(buf, size, "unknown");
		return;
	}
	o = strlen(buf);
	if (!l.n)
		snprintf(buf, size, "none");
	else if (l.shown < l.n)
		snprintf(buf + o, size - o, " and %zu more", l.n - l.shown);
}
