/* vrf CNI meta plugin: the interface of the chain moved into a VRF of the pod */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/rtnetlink.h>

#include "common/attach/attach.h"
#include "common/cni/plugin.h"
#include "common/cni/result-copy.h"
#include "common/cni/result.h"
#include "common/net/addr.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/route.h"
#include "common/net/rule.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/vrf/config.h"
#include "plugins/vrf/vrf.h"

/* Waits for a restored IPv6 address's local route, as the reference: 10 ms doubling, 9 looks. */
#define LOCAL_ROUTE_LOOKS 9
#define LOCAL_ROUTE_FIRST_WAIT_NS (10L * 1000 * 1000)

/* One ADD: what it found, made and moved, for its undo. */
struct vrf_add {
	const struct vrf_conf *c;
	struct net_ns *pod;
	struct net_link link;        /* CNI_IFNAME */
	struct net_link vrf;
	bool created;                /* the VRF is this ADD's */
	bool enslaved;
	struct net_addr *v6;         /* the link's global IPv6 addresses before */
	size_t n_v6;
	struct net_route *routes;    /* its main-table routes of scope universe before */
	size_t n_routes;
};

/*
 * Runs on one pod wait for each other: both lock the netns file, as sbr
 * does, so that a table one picks is not picked by another (nor by sbr).
 */
static int lock_netns(int fd, struct cni_err *err)
{
	int r = flock(fd, LOCK_EX) < 0 ? -errno : 0;

	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot lock the pod's netns: %s", strerror(-r));
	return 0;
}

static bool table_listed(const uint32_t *v, size_t n, uint32_t table)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == table)
			return true;
	return false;
}

/*
 * Every table the pod uses: the VRFs', those holding a route, those a rule
 * points at. The reference counts only the VRFs'; a table sbr filled is
 * taken just as much.
 */
static int tables_in_use(struct net_ns *pod, uint32_t **ret, size_t *ret_n, struct cni_err *err)
{
	_cleanup_free_ struct net_link *links = NULL;
	_cleanup_free_ struct net_route *routes = NULL;
	_cleanup_free_ struct net_rule *rules = NULL;
	size_t n_links = 0, n_routes = 0, n_rules = 0, n = 0;
	uint32_t *v;
	int r;

	if ((r = net_link_list(pod, &links, &n_links)) < 0 ||
	    (r = net_route_list_table(pod, 0, AF_UNSPEC, &routes, &n_routes)) < 0 ||
	    (r = net_rule_list(pod, AF_UNSPEC, &rules, &n_rules)) < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "createVRF: Failed to find links %s",
				   strerror(-r));
	v = calloc(n_links + n_routes + n_rules + 1, sizeof(*v));
	if (!v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n_links; i++)
		if (strcmp(links[i].kind, "vrf") == 0)
			v[n++] = links[i].vrf_table;
	for (size_t i = 0; i < n_routes; i++)
		v[n++] = routes[i].table;
	for (size_t i = 0; i < n_rules; i++)
		v[n++] = rules[i].table;
	*ret = v;
	*ret_n = n;
	return 0;
}

/* The config's table, or the first from 1 nothing in the pod uses (253-255 are the kernel's). */
static int pick_table(struct vrf_add *s, uint32_t *ret, struct cni_err *err)
{
	_cleanup_free_ uint32_t *used = NULL;
	size_t n = 0;
	int r;

	r = tables_in_use(s->pod, &used, &n, err);
	if (r < 0)
		return r;
	if (s->c->table) {
		if (table_listed(used, n, s->c->table))
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EBUSY,
					   "cmdAdd failed: table %u is in use in the pod (a VRF, a route "
					   "or a rule points at it): not one for a new VRF %s",
					   s->c->table, s->c->name);
		*ret = s->c->table;
		return 0;
	}
	for (uint32_t t = 1; t != 0; t++) {
		if (t == RT_TABLE_DEFAULT || t == RT_TABLE_MAIN || t == RT_TABLE_LOCAL ||
		    table_listed(used, n, t))
			continue;
		*ret = t;
		return 0;
	}
	return cni_err_set(err, CNI_ERR_KERNEL, -ENOSPC,
			   "findFreeRoutingTableID: Failed to find an available routing id");
}

/* The VRF of that name, made (up) when there is none. */
static int find_or_create(struct vrf_add *s, struct cni_err *err)
{
	const struct vrf_conf *c = s->c;
	struct net_child child = { .kind = NET_CHILD_VRF, .name = c->name, .netns_fd = -1,
				   .up = true };
	int r;

	r = net_link_get_by_name(s->pod, c->name, &s->vrf);
	if (r == 0 && strcmp(s->vrf.kind, "vrf") != 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EEXIST,
				   "cmdAdd failed: Netlink %s is not a VRF", c->name);
	if (r == 0 && c->table && s->vrf.vrf_table != c->table)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "cmdAdd failed: VRF %s already exist with different routing table %u",
				   c->name, s->vrf.vrf_table);
	if (r == 0)
		return 0;
	if (r != -ENODEV)
		return net_err_op(err, r, "cmdAdd failed: cannot look up", c->name);

	if ((r = pick_table(s, &child.vrf.table, err)) < 0)
		return r;
	log_debug("creating vrf %s (table %u)", c->name, child.vrf.table);
	r = net_link_create(s->pod, &child);
	if (r == -EOPNOTSUPP)
		return net_err_set(err, CNI_ERR_KERNEL, r,
				   "cmdAdd failed: could not add VRF %s: the kernel has no VRF driver "
				   "(CONFIG_NET_VRF, module \"vrf\")", c->name);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "cmdAdd failed: could not add VRF %s: %s",
				   c->name, strerror(-r));
	s->created = true;
	r = net_link_get_by_name(s->pod, c->name, &s->vrf);
	if (r < 0)
		return net_err_op(err, r, "cmdAdd failed: cannot find the new VRF", c->name);
	return 0;
}

/*
 * What the enslavement takes from the link: the kernel cycles it down and up
 * into the VRF, which drops its routes of scope universe and, unless
 * keep_addr_on_down, its global IPv6 addresses.
 */
static int save(struct vrf_add *s, struct cni_err *err)
{
	_cleanup_free_ struct net_addr *addrs = NULL;
	_cleanup_free_ struct net_route *routes = NULL;
	size_t n_addrs = 0, n_routes = 0;
	int r;

	r = net_addr_list(s->pod, s->link.ifindex, AF_INET6, &addrs, &n_addrs);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r,
				   "cmdAdd failed: failed getting global ipv6 addresses before "
				   "slaving interface: %s", strerror(-r));
	r = net_route_list(s->pod, s->link.ifindex, AF_UNSPEC, &routes, &n_routes);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r,
				   "cmdAdd failed: failed getting all routes for %s", s->link.name);
	for (size_t i = 0; i < n_addrs; i++)
		if (addrs[i].scope == RT_SCOPE_UNIVERSE)
			addrs[s->n_v6++] = addrs[i];
	for (size_t i = 0; i < n_routes; i++)
		if (routes[i].table == RT_TABLE_MAIN && routes[i].scope == RT_SCOPE_UNIVERSE)
			routes[s->n_routes++] = routes[i];
	s->v6 = TAKE_PTR(addrs);
	s->routes = TAKE_PTR(routes);
	return 0;
}

/* The saved global IPv6 addresses the link has lost: put back; @ret_added[i] says which. */
static int restore_addresses(struct vrf_add *s, bool *ret_added, struct cni_err *err)
{
	_cleanup_free_ struct net_addr *now = NULL;
	char text[IP_PREFIX_STRLEN];
	size_t n_now = 0;
	int r;

	r = net_addr_list(s->pod, s->link.ifindex, AF_INET6, &now, &n_now);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r,
				   "cmdAdd failed: failed getting global ipv6 addresses after slaving "
				   "interface: %s", strerror(-r));
	for (size_t i = 0; i < s->n_v6; i++) {
		bool there = false;

		ret_added[i] = false;
		for (size_t j = 0; j < n_now && !there; j++)
			there = ip_addr_equal(&s->v6[i].prefix.addr, &now[j].prefix.addr);
		if (there)
			continue;
		r = net_addr_add(s->pod, s->link.ifindex, &s->v6[i].prefix);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "cmdAdd failed: could not restore address %s to %s @ %s: %s",
					   ip_prefix_format(&s->v6[i].prefix, text, sizeof(text)),
					   s->link.name, s->vrf.name, strerror(-r));
		ret_added[i] = true;
	}
	return 0;
}

/* Whether the VRF's table has the local route of an address through the link. */
static int has_local_route(struct vrf_add *s, const struct ip_addr *addr, bool *ret)
{
	_cleanup_free_ struct net_route *routes = NULL;
	size_t n = 0;
	int r;

	r = net_route_list_table(s->pod, s->vrf.vrf_table, AF_INET6, &routes, &n);
	if (r < 0)
		return r;
	*ret = false;
	for (size_t i = 0; i < n && !*ret; i++)
		*ret = routes[i].ifindex == s->link.ifindex && routes[i].dst.len == 128 &&
		       ip_addr_equal(&routes[i].dst.addr, addr);
	return 0;
}

/*
 * A restored IPv6 address is usable (as a route's source) once DAD passed
 * and the kernel put its local route into the VRF's table: waited for, at
 * most about 2.5 s, as the reference does.
 */
static int wait_local_route(struct vrf_add *s, const struct net_addr *a, struct cni_err *err)
{
	char text[IP_PREFIX_STRLEN];
	long wait = LOCAL_ROUTE_FIRST_WAIT_NS;
	bool found = false;
	int r;

	for (int look = 0; look < LOCAL_ROUTE_LOOKS; look++) {
		struct timespec ts = { .tv_sec = wait / 1000000000L, .tv_nsec = wait % 1000000000L };

		r = has_local_route(s, &a->prefix.addr, &found);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "cmdAdd failed: failed getting routes for %s table %u for dst %s: %s",
					   s->link.name, s->vrf.vrf_table,
					   ip_prefix_format(&a->prefix, text, sizeof(text)), strerror(-r));
		if (found)
			return 0;
		if (look + 1 == LOCAL_ROUTE_LOOKS)
			break;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		wait *= 2;
	}
	return cni_err_set(err, CNI_ERR_KERNEL, -ETIMEDOUT,
			   "cmdAdd failed: failed getting local/host addresses for %s in table %u with dst %s",
			   s->link.name, s->vrf.vrf_table, ip_prefix_format(&a->prefix, text, sizeof(text)));
}

/* The saved routes, each into @table (`ip route replace ... table T`). */
static int put_routes(struct vrf_add *s, unsigned int table, struct cni_err *err)
{
	char text[IP_PREFIX_STRLEN];

	for (size_t i = 0; i < s->n_routes; i++) {
		struct net_route rt = s->routes[i];
		int r;

		rt.table = table;
		r = net_route_replace(s->pod, &rt);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "cmdAdd failed: could not add route '%s' to table %u: %s",
					   ip_prefix_format(&rt.dst, text, sizeof(text)), table, strerror(-r));
	}
	return 0;
}

static int enslave(struct vrf_add *s, struct cni_err *err)
{
	_cleanup_free_ bool *added = NULL;
	int r;

	if ((r = save(s, err)) < 0)
		return r;
	added = calloc(s->n_v6 + 1, sizeof(*added));
	if (!added)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	log_debug("enslaving %s to vrf %s (table %u)", s->link.name, s->vrf.name, s->vrf.vrf_table);
	r = net_link_set_master(s->pod, s->link.ifindex, s->vrf.ifindex);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "cmdAdd failed: could not set vrf %s as master of %s: %s",
				   s->vrf.name, s->link.name, strerror(-r));
	s->enslaved = true;
	if ((r = restore_addresses(s, added, err)) < 0)
		return r;
	for (size_t i = 0; i < s->n_v6; i++)
		if (added[i] && (r = wait_local_route(s, &s->v6[i], err)) < 0)
			return r;
	return put_routes(s, s->vrf.vrf_table, err);
}

/*
 * In reverse: the link freed (the kernel cycles it again, back into the main
 * table) and given back what that drops, the VRF deleted when this ADD made it.
 * Failures are logged: the ADD's own error is the one reported.
 */
static void undo(struct vrf_add *s)
{
	struct cni_err ignored = { 0 };
	_cleanup_free_ bool *added = NULL;
	int r;

	if (s->enslaved) {
		r = net_link_set_master(s->pod, s->link.ifindex, 0);
		if (r < 0)
			log_error("undo: cannot free %s from vrf %s: %s", s->link.name, s->vrf.name,
				  strerror(-r));
		added = calloc(s->n_v6 + 1, sizeof(*added));
		if (r >= 0 && added && restore_addresses(s, added, &ignored) < 0)
			log_error("undo: %s", ignored.msg);
		ignored = (struct cni_err){ 0 };
		if (r >= 0 && put_routes(s, RT_TABLE_MAIN, &ignored) < 0)
			log_error("undo: %s", ignored.msg);
	}
	if (s->created) {
		/* Made, but its lookup failed: found by its name (the pod's lock is held). */
		if (!s->vrf.ifindex && net_link_get_by_name(s->pod, s->c->name, &s->vrf) < 0) {
			log_error("undo: the new vrf %s not found", s->c->name);
			return;
		}
		r = net_link_delete(s->pod, s->vrf.ifindex);
		if (r < 0 && r != -ENODEV)
			log_error("undo: cannot delete vrf %s: %s", s->vrf.name, strerror(-r));
	}
}

static int vrf_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	struct attach a = { .pod_fd = -1 };
	struct cni_result res = { 0 };
	struct vrf_add s = { 0 };
	struct vrf_conf c;
	int r;

	if ((r = vrf_config_load(ctx, &c, err)) < 0)
		return r;
	if (!ctx->conf.prev_result)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "missing prevResult from earlier plugin");
	if (cni_result_copy(ctx->conf.prev_result, &res) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if ((r = attach_open(&a, ctx, err)) < 0 || (r = lock_netns(a.pod_fd, err)) < 0)
		goto out;
	s = (struct vrf_add){ .c = &c, .pod = a.pod };
	/* The interface first: the reference makes the VRF, then fails and leaves it. */
	r = net_link_get_by_name(a.pod, ifname, &s.link);
	if (r < 0) {
		net_err_set(err, r == -ENODEV ? CNI_ERR_INVALID_CONFIG : CNI_ERR_KERNEL, r,
			    "cmdAdd failed: could not get link by name %s", ifname);
		goto out;
	}
	if ((r = find_or_create(&s, err)) < 0)
		goto fail;
	if (s.link.master_ifindex) {
		struct net_link m;

		r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EBUSY,
				"cmdAdd failed: interface %s has already a master set: %s", ifname,
				net_link_get_by_index(a.pod, s.link.master_ifindex, &m) == 0 ? m.name : "?");
		goto fail;
	}
	if ((r = enslave(&s, err)) < 0)
		goto fail;
	*ret = res;
	res = (struct cni_result){ 0 };
	log_debug("ADD %s: %s in vrf %s (table %u) in %s", ctx->env.container_id, ifname, c.name,
		  s.vrf.vrf_table, ctx->env.netns);
	goto out;
fail:
	undo(&s);
out:
	free(s.v6);
	free(s.routes);
	cni_result_free(&res);
	attach_close(&a);
	return r;
}

/* Whether a link other than @self is enslaved to the VRF. */
static int vrf_holds_others(struct net_ns *pod, const struct net_link *vrf, int self, bool *ret)
{
	_cleanup_free_ struct net_link *links = NULL;
	size_t n = 0;
	int r;

	r = net_link_list(pod, &links, &n);
	if (r < 0)
		return r;
	*ret = false;
	for (size_t i = 0; i < n && !*ret; i++)
		*ret = links[i].master_ifindex == vrf->ifindex && links[i].ifindex != self;
	return 0;
}

/*
 * CNI_IFNAME freed from the VRF (only from this one), and the VRF deleted
 * when nothing is left in it. A netns, VRF or link already gone is no error.
 */
static int vrf_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	struct attach a = { .pod_fd = -1 };
	struct net_link vrf, link;
	struct vrf_conf c;
	bool others = false;
	int r, self = 0;

	r = vrf_config_load(ctx, &c, err);
	/* ADD refuses such a config before it changes anything: there is nothing to tidy. */
	if (r < 0 && err->code == CNI_ERR_INVALID_CONFIG) {
		log_warning("DEL: nothing to tidy with this config: %s", err->msg);
		*err = (struct cni_err){ 0 };
		return 0;
	}
	if (r < 0)
		return r;
	r = attach_open_del(&a, ctx, err);
	if (r <= 0)
		goto out;
	if ((r = lock_netns(a.pod_fd, err)) < 0)
		goto out;
	r = net_link_get_by_name(a.pod, c.name, &vrf);
	if (r == -ENODEV || (r == 0 && strcmp(vrf.kind, "vrf") != 0)) {
		if (r == 0)
			log_warning("DEL: %s is a %s link, not a VRF: left in place", c.name,
				    vrf.kind[0] ? vrf.kind : "non-virtual");
		r = 0;
		goto out;
	}
	if (r < 0) {
		net_err_op(err, r, "cmdDel failed: cannot look up", c.name);
		goto out;
	}
	r = net_link_get_by_name(a.pod, ifname, &link);
	if (r < 0 && r != -ENODEV) {
		net_err_op(err, r, "cmdDel failed: cannot look up", ifname);
		goto out;
	}
	if (r == 0 && link.master_ifindex == vrf.ifindex) {
		self = link.ifindex;
		log_info("freeing %s from vrf %s", ifname, c.name);
		r = net_link_set_master(a.pod, link.ifindex, 0);
		if (r < 0) {
			net_err_set(err, CNI_ERR_KERNEL, r, "resetMaster: could reset master to %s: %s",
				    ifname, strerror(-r));
			goto out;
		}
	}
	r = vrf_holds_others(a.pod, &vrf, self, &others);
	if (r < 0) {
		net_err_set(err, CNI_ERR_KERNEL, r, "getAssignedInterfaces: Failed to find links %s",
			    strerror(-r));
		goto out;
	}
	if (!others) {
		log_info("deleting vrf %s: nothing is left in it", c.name);
		r = net_link_delete(a.pod, vrf.ifindex);
		if (r < 0 && r != -ENODEV) {
			net_err_op(err, r, "cmdDel failed: cannot delete", c.name);
			goto out;
		}
	}
	r = 0;
out:
	attach_close(&a);
	return r;
}

static int vrf_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	struct attach a = { .pod_fd = -1 };
	struct net_link vrf, link;
	struct vrf_conf c;
	int r;

	if ((r = vrf_config_load(ctx, &c, err)) < 0)
		return r;
	if (!ctx->conf.prev_result)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "missing prevResult from earlier plugin");
	if ((r = attach_open(&a, ctx, err)) < 0)
		goto out;
	r = net_link_get_by_name(a.pod, c.name, &vrf);
	if (r == 0 && strcmp(vrf.kind, "vrf") != 0)
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL, "Netlink %s is not a VRF", c.name);
	else if (r < 0)
		cni_err_set(err, CNI_ERR_CHECK_FAILED, r, "failed to find vrf %s: %s", c.name,
			    strerror(-r));
	if (r < 0)
		goto out;
	if (c.table && vrf.vrf_table != c.table) {
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
				"vrf %s has routing table %u, the config %u", c.name, vrf.vrf_table,
				c.table);
		goto out;
	}
	r = net_link_get_by_name(a.pod, ifname, &link);
	if (r < 0 || link.master_ifindex != vrf.ifindex)
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, r < 0 ? r : -EINVAL,
				"failed to find %s associated to vrf %s", ifname, c.name);
out:
	attach_close(&a);
	return r;
}

const struct cni_plugin vrf_plugin = {
	.name = "vrf",
	.keys = vrf_config_keys,
	.summary = "vrf: moves the chain's interface, its addresses and routes into a VRF of the pod",
	.add = vrf_add,
	.del = vrf_del,
	.check = vrf_check,
};
