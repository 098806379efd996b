/* Applying an IPAM result to an interface of the pod netns, and checking it */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/rtnetlink.h>

#include "common/attach/iface.h"
#include "common/cni/result.h"
#include "common/net/addr.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/ns.h"
#include "common/net/route.h"
#include "common/net/rule.h"
#include "common/net/sysctl.h"
#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"

#define DAD_POLL_NS (50L * 1000 * 1000)
#define DAD_TIMEOUT_S 5

/* Whether an IP of the result is for @ifname: no interface index, or one naming it. */
static bool ip_for_iface(const struct cni_result *res, const struct cni_ip *ip, const char *ifname)
{
	if (ip->iface < 0)
		return true;
	return (size_t)ip->iface < res->n_ifaces && res->ifaces[ip->iface].name &&
	       strcmp(res->ifaces[ip->iface].name, ifname) == 0;
}

/* net/<proto>/conf/<ifname>/<key> = value, errors ignored. */
static void sysctl_if(const char *proto, const char *ifname, const char *key, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), "net/%s/conf/%s/%s", proto, ifname, key);
	(void)sysctl_write(path, value);
}

/* IPv6 on for lo and the link, addresses kept across down. */
static int enable_ipv6(const char *ifname, struct cni_err *err)
{
	const char *names[] = { "lo", ifname };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char path[128], value[16];
		int r;

		snprintf(path, sizeof(path), "net/ipv6/conf/%s/disable_ipv6", names[i]);
		/* Unreadable (e.g. IPv6 compiled out): leave it, the address add will tell. */
		if (sysctl_read(path, value, sizeof(value)) < 0 || strcmp(value, "0") == 0)
			continue;
		r = sysctl_write(path, "0");
		if (r < 0)
			return cni_err_set(err, CNI_ERR_KERNEL, r,
				    "failed to enable IPv6 for interface \"%s\" (%s=%s): %s", names[i],
				    path, value, strerror(-r));
	}
	sysctl_if("ipv6", ifname, "keep_addr_on_down", "1");
	return 0;
}

/* The sysctls of a configuration, set from inside the netns (/proc/sys follows the caller's). */
struct sysctls {
	const char *ifname;
	bool ipv6;
	bool autoconf;
	struct cni_err *err;
};

static int set_sysctls(void *userdata)
{
	const struct sysctls *s = userdata;

	/* Announce the new addresses on link up; the reference ignores failures too. */
	sysctl_if("ipv4", s->ifname, "arp_notify", "1");
	sysctl_if("ipv6", s->ifname, "ndisc_notify", "1");
	/*
	 * No SLAAC address beside IPAM's (NCCL would pick it) and no RA route: off before the
	 * link goes up, whatever family IPAM gave; absent without IPv6, which is no error.
	 */
	if (!s->autoconf) {
		sysctl_if("ipv6", s->ifname, "accept_ra", "0");
		sysctl_if("ipv6", s->ifname, "autoconf", "0");
	}
	return s->ipv6 ? enable_ipv6(s->ifname, s->err) : 0;
}

static void sleep_ns(long ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ns };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Waits until no address of the link is tentative, as the reference does before routes. */
static int settle_addresses(struct net_ns *ns, const char *ifname, int ifindex,
			    struct cni_err *err)
{
	int64_t deadline = clock_mono_ns() + DAD_TIMEOUT_S * 1000000000LL;
	struct net_link link;
	int r;

	for (;;) {
		_cleanup_free_ struct net_addr *addrs = NULL;
		bool tentative = false;
		size_t n = 0;

		r = net_addr_list(ns, ifindex, AF_UNSPEC, &addrs, &n);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
				    "failed to settle addresses for \"%s\": %s", ifname, strerror(-r));
		for (size_t i = 0; i < n; i++) {
			char a[IP_PREFIX_STRLEN];

			if (addrs[i].dadfailed)
				return cni_err_set(err, CNI_ERR_KERNEL, -EADDRINUSE,
					    "link %s has address %s in DADFAILED state", ifname,
					    ip_addr_format(&addrs[i].prefix.addr, a, sizeof(a)));
			tentative = tentative || addrs[i].tentative;
		}
		if (!tentative)
			return 0;
		if (clock_mono_ns() >= deadline)
			break;
		sleep_ns(DAD_POLL_NS);
	}
	/*
	 * Without carrier DAD never starts, so addresses stay tentative for as
	 * long as the link is not operationally up; that is not a failure.
	 * IFF_RUNNING is the kernel's operational-up bit.
	 */
	r = net_link_get_by_index(ns, ifindex, &link);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "failed to lookup \"%s\": %s", ifname,
			    strerror(-r));
	if (!(link.flags & IFF_RUNNING))
		return 0;
	return cni_err_set(err, CNI_ERR_KERNEL, -ETIMEDOUT,
		    "link %s still has tentative addresses after %d seconds", ifname, DAD_TIMEOUT_S);
}

static int add_route(struct net_ns *ns, const char *ifname, int ifindex, const struct cni_route *cr,
		     const struct ip_addr *v4gw, const struct ip_addr *v6gw, struct cni_err *err)
{
	struct net_route rt = {
		.ifindex = ifindex,
		.dst = cr->dst,
		.has_gw = cr->has_gw,
		.gw = cr->gw,
		.mtu = cr->mtu > 0 ? (unsigned int)cr->mtu : 0,
		.advmss = cr->advmss > 0 ? (unsigned int)cr->advmss : 0,
		.priority = cr->priority > 0 ? (unsigned int)cr->priority : 0,
		.table = cr->table > 0 ? (unsigned int)cr->table : 0,
		.scope = cr->scope,
	};
	char dst[IP_PREFIX_STRLEN], gw[IP_PREFIX_STRLEN];
	int r;

	if (!rt.has_gw) {
		const struct ip_addr *fam = cr->dst.addr.family == AF_INET ? v4gw : v6gw;

		if (fam->family) {
			rt.has_gw = true;
			rt.gw = *fam;
		}
	}
	r = net_route_add(ns, &rt);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r,
			    "failed to add route '%s via %s dev %s metric %u (Scope: %d, Table: %u)': %s",
			    ip_prefix_format(&cr->dst, dst, sizeof(dst)),
			    rt.has_gw ? ip_addr_format(&rt.gw, gw, sizeof(gw)) : "<nil>", ifname,
			    rt.priority, rt.scope >= 0 ? rt.scope : RT_SCOPE_UNIVERSE, rt.table,
			    strerror(-r));
	return 0;
}

int iface_configure(struct net_ns *ns, const struct net_link *link, const struct cni_result *res,
		    bool autoconf, struct cni_err *err)
{
	const char *ifname = link->name;
	struct ip_addr v4gw = { 0 }, v6gw = { 0 };
	struct sysctls sc = { .ifname = ifname, .autoconf = autoconf, .err = err };
	char a[IP_PREFIX_STRLEN];
	int r;

	/* Checked before any change, so a bad result leaves the link untouched. */
	for (size_t i = 0; i < res->n_ips; i++) {
		if (!ip_for_iface(res, &res->ips[i], ifname))
			return cni_err_set(err, CNI_ERR_KERNEL, -EINVAL,
				    "failed to add IP addr %s to \"%s\": invalid interface index",
				    ip_prefix_format(&res->ips[i].address, a, sizeof(a)), ifname);
	}
	for (size_t i = 0; i < res->n_ips; i++)
		sc.ipv6 = sc.ipv6 || res->ips[i].address.addr.family == AF_INET6;
	r = net_ns_run(ns, set_sysctls, &sc);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot enter the netns of \"%s\": %s", ifname,
				   strerror(-r));

	for (size_t i = 0; i < res->n_ips; i++) {
		const struct cni_ip *ip = &res->ips[i];

		r = net_addr_add(ns, link->ifindex, &ip->address);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r, "failed to add IP addr %s to \"%s\": %s",
				    ip_prefix_format(&ip->address, a, sizeof(a)), ifname,
				    strerror(-r));
		if (!ip->has_gateway)
			continue;
		if (ip->gateway.family == AF_INET && !v4gw.family)
			v4gw = ip->gateway;
		else if (ip->gateway.family == AF_INET6 && !v6gw.family)
			v6gw = ip->gateway;
	}

	r = net_link_set_up(ns, link->ifindex, true);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "failed to set \"%s\" UP: %s", ifname,
			    strerror(-r));

	if (v6gw.family) {
		r = settle_addresses(ns, ifname, link->ifindex, err);
		if (r < 0)
			return r;
	}

	for (size_t i = 0; i < res->n_routes; i++) {
		r = add_route(ns, ifname, link->ifindex, &res->routes[i], &v4gw, &v6gw, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool addr_present(const struct net_addr *addrs, size_t n, const struct ip_prefix *p)
{
	for (size_t i = 0; i < n; i++)
		if (addrs[i].prefix.len == p->len && ip_addr_equal(&addrs[i].prefix.addr, &p->addr))
			return true;
	return false;
}

static bool prefix_same_network(const struct ip_prefix *a, const struct ip_prefix *b)
{
	struct ip_prefix na, nb;

	if (a->len != b->len || a->addr.family != b->addr.family)
		return false;
	na = ip_prefix_network(a);
	nb = ip_prefix_network(b);
	return ip_addr_equal(&na.addr, &nb.addr);
}

/* The tables a route of the result may be in: its own, or main and @tables. */
static bool route_present(const struct net_route *routes, size_t n, const struct cni_route *cr,
			  const uint32_t *tables, size_t n_tables)
{
	unsigned int table = cr->table > 0 ? (unsigned int)cr->table : RT_TABLE_MAIN;

	for (size_t i = 0; i < n; i++) {
		const struct net_route *rt = &routes[i];
		bool in = rt->table == table;

		for (size_t k = 0; !in && cr->table <= 0 && k < n_tables; k++)
			in = rt->table == tables[k];
		if (!in || !prefix_same_network(&rt->dst, &cr->dst))
			continue;
		/* Without a gw in the result, any gateway will do (the family's was used). */
		if (cr->has_gw && !(rt->has_gw && ip_addr_equal(&rt->gw, &cr->gw)))
			continue;
		return true;
	}
	return false;
}

/*
 * The tables a rule "from <an address of @ifname in the result>" looks up: a chained sbr
 * moves the interface's routes there, and leaves the result's routes without a table (as
 * upstream's sbr does), so they are looked for there too. At most @max.
 */
static int source_tables(struct net_ns *ns, const char *ifname, const struct cni_result *res,
			 uint32_t *ret, size_t max, size_t *ret_n, struct cni_err *err)
{
	_cleanup_free_ struct net_rule *rules = NULL;
	size_t n_rules = 0, n = 0;
	int r;

	r = net_rule_list(ns, AF_UNSPEC, &rules, &n_rules);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "Cannot obtain List of rules: %s",
				   strerror(-r));
	for (size_t i = 0; i < n_rules && n < max; i++) {
		const struct net_rule *ru = &rules[i];
		bool dup = false;

		if (!ru->has_src || !ru->table || ru->table == RT_TABLE_MAIN ||
		    ru->table == RT_TABLE_LOCAL || ru->table == RT_TABLE_DEFAULT)
			continue;
		for (size_t k = 0; k < n; k++)
			dup = dup || ret[k] == ru->table;
		for (size_t k = 0; !dup && k < res->n_ips; k++) {
			if (ip_for_iface(res, &res->ips[k], ifname) &&
			    ip_prefix_contains(&ru->src, &res->ips[k].address.addr)) {
				ret[n++] = ru->table;
				break;
			}
		}
	}
	*ret_n = n;
	return 0;
}

int iface_check(struct net_ns *ns, const char *ifname, const struct cni_result *res,
		struct cni_err *err)
{
	_cleanup_free_ struct net_addr *addrs = NULL;
	_cleanup_free_ struct net_route *routes = NULL;
	size_t n_addrs = 0, n_routes = 0, n_tables = 0;
	struct net_link link;
	char a[IP_PREFIX_STRLEN], g[IP_PREFIX_STRLEN];
	uint32_t tables[16];
	bool rules_read = false;
	int r;

	r = net_link_get_by_name(ns, ifname, &link);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "Cannot find container link %s: %s", ifname,
			    strerror(-r));
	r = net_addr_list(ns, link.ifindex, AF_UNSPEC, &addrs, &n_addrs);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "Cannot obtain List of IP Addresses: %s",
			    strerror(-r));
	for (size_t i = 0; i < res->n_ips; i++) {
		const struct cni_ip *ip = &res->ips[i];

		if (!ip_for_iface(res, ip, ifname))
			continue; /* an address of another interface of the result */
		if (!addr_present(addrs, n_addrs, &ip->address))
			return cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT,
				    "Failed to match addr %s on interface %s",
				    ip_prefix_format(&ip->address, a, sizeof(a)), ifname);
	}
	r = net_route_list(ns, link.ifindex, AF_UNSPEC, &routes, &n_routes);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "Cannot obtain List of routes: %s",
			    strerror(-r));
	for (size_t i = 0; i < res->n_routes; i++) {
		const struct cni_route *cr = &res->routes[i];

		/* Only when one is not where ADD put it: the rules are read once, if at all. */
		if (!route_present(routes, n_routes, cr, tables, n_tables) && !rules_read) {
			r = source_tables(ns, ifname, res, tables, ARRAY_SIZE(tables), &n_tables, err);
			if (r < 0)
				return r;
			rules_read = true;
		}
		if (!route_present(routes, n_routes, cr, tables, n_tables)) {
			char what[2 * IP_PREFIX_STRLEN + 8];

			snprintf(what, sizeof(what), "%s via %s",
				 ip_prefix_format(&cr->dst, a, sizeof(a)),
				 cr->has_gw ? ip_addr_format(&cr->gw, g, sizeof(g)) : "<nil>");
			return cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT,
				    "Expected Route %s not found in routing table", what);
		}
	}
	return 0;
}
