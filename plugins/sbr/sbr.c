/* sbr CNI plugin: source-based routing for the interface an earlier plugin of the chain set up */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>

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
#include "plugins/sbr/config.h"
#include "plugins/sbr/sbr.h"
#include "plugins/sbr/state.h"
#include "plugins/sbr/table.h"

/* One ADD's view of the pod and what it has changed there, in order, for the undo. */
struct sbr_add {
	const struct sbr_conf *c;
	struct net_ns *pod;
	int ifindex;
	const struct cni_ip **ips;
	size_t n_ips;
	struct net_route *main;  /* the link's routes in the main table before the ADD */
	size_t n_main;
	size_t n_main_deleted;   /* main[0 .. n_main_deleted) are gone from it */
	uint32_t *plan;          /* the table of each address, picked before anything changes */
	struct net_rule *rules;  /* rules added (n_ips of room) */
	size_t n_rules;
	uint32_t *tables;        /* tables filled with the link's routes (n_ips of room) */
	size_t n_tables;
};

/*
 * Runs of this plugin on one pod wait for each other, as the reference's do:
 * both lock the netns file, so a table one picks is not picked by another.
 */
static int lock_netns(int fd, struct cni_err *err)
{
	int r = flock(fd, LOCK_EX) < 0 ? -errno : 0;

	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot lock the pod's netns: %s", strerror(-r));
	return 0;
}

static struct net_rule source_rule(const struct cni_ip *ip, uint32_t table)
{
	struct net_rule rule = { .family = ip->address.addr.family, .has_src = true, .table = table };

	/* The one address, not its subnet. */
	rule.src.addr = ip->address.addr;
	rule.src.len = ip->address.addr.family == AF_INET ? 32 : 128;
	return rule;
}

static int add_rule(struct sbr_add *s, const struct cni_ip *ip, uint32_t table, struct cni_err *err)
{
	struct net_rule rule = source_rule(ip, table);
	char text[IP_PREFIX_STRLEN];
	int r;

	log_debug("rule from %s lookup %u", ip_addr_format(&ip->address.addr, text, sizeof(text)), table);
	r = net_rule_add(s->pod, &rule);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "Failed to add rule from %s lookup %u: %s",
				   text, table, strerror(-r));
	s->rules[s->n_rules++] = rule;
	return 0;
}

/*
 * What the reference moves along with an address: routes from it, through a
 * gateway of its subnet, or of no source and no gateway.
 */
static bool route_goes_with(const struct net_route *rt, const struct cni_ip *ip)
{
	if (rt->has_src && ip_prefix_contains(&ip->address, &rt->src))
		return true;
	if (rt->has_gw && ip_prefix_contains(&ip->address, &rt->gw))
		return true;
	return !rt->has_src && !rt->has_gw;
}

static const struct ip_addr *gateway_of(const struct sbr_conf *c, const struct cni_ip *ip)
{
	bool v4 = ip->address.addr.family == AF_INET;

	if (v4 && c->has_gw4)
		return &c->gw4;
	if (!v4 && c->has_gw6)
		return &c->gw6;
	return ip->has_gateway ? &ip->gateway : NULL;
}

/* One address: its rule, a default route through its gateway, copies of the link's routes. */
static int fill_table(struct sbr_add *s, const struct cni_ip *ip, uint32_t table,
		      struct cni_err *err)
{
	const struct ip_addr *gw = gateway_of(s->c, ip);
	char text[IP_PREFIX_STRLEN];
	int r;

	r = add_rule(s, ip, table, err);
	if (r < 0)
		return r;
	s->tables[s->n_tables++] = table;
	/* The earlier plugin may have left no default route: this table gets its own. */
	if (gw) {
		struct net_route def = { .ifindex = s->ifindex, .has_gw = true, .gw = *gw,
					 .table = table, .scope = -1 };

		/* A gateway of the other family is the kernel's to refuse, as in the reference. */
		def.dst.addr.family = ip->address.addr.family;
		r = net_route_add(s->pod, &def);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r,
					   "Failed to add default route to %s: %s",
					   ip_addr_format(gw, text, sizeof(text)), strerror(-r));
	}
	for (size_t i = 0; i < s->n_main; i++) {
		struct net_route copy = s->main[i];

		if (!route_goes_with(&copy, ip))
			continue;
		copy.table = table;
		/* Replace: the default route just added may be among them. */
		r = net_route_replace(s->pod, &copy);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r, "Failed to readd route to %s in table %u: %s",
					   ip_prefix_format(&copy.dst, text, sizeof(text)), table,
					   strerror(-r));
	}
	return 0;
}

/* addSourceHints: the main table keeps each subnet, with the address as source, loses the rest. */
static void hint_main(struct sbr_add *s)
{
	char text[IP_PREFIX_STRLEN];
	int r;

	for (size_t i = 0; i < s->n_ips; i++) {
		struct net_route rt = { .ifindex = s->ifindex, .dst = ip_prefix_network(&s->ips[i]->address),
					.has_src = true, .src = s->ips[i]->address.addr,
					.table = RT_TABLE_MAIN, .scope = RT_SCOPE_LINK };

		r = net_route_replace(s->pod, &rt);
		if (r < 0)
			log_warning("cannot add the subnet route %s with its source to the main table: %s",
				    ip_prefix_format(&rt.dst, text, sizeof(text)), strerror(-r));
	}
	for (size_t i = 0; i < s->n_main; i++) {
		if (s->main[i].scope == RT_SCOPE_LINK)
			continue;
		r = net_route_del(s->pod, &s->main[i]);
		if (r < 0)
			log_warning("cannot delete the route to %s from the main table: %s",
				    ip_prefix_format(&s->main[i].dst, text, sizeof(text)), strerror(-r));
	}
}

/* The link's routes in the given tables go: they are what an ADD put there (or copies of it). */
static int flush_tables(struct net_ns *pod, int ifindex, const uint32_t *tables, size_t n_tables)
{
	_cleanup_free_ struct net_route *routes = NULL;
	size_t n = 0;
	int r, ret = 0;

	if (n_tables == 0)
		return 0;
	r = net_route_list_table(pod, 0, AF_UNSPEC, &routes, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		bool ours = false;

		for (size_t t = 0; t < n_tables && !ours; t++)
			ours = routes[i].table == tables[t];
		if (!ours || routes[i].ifindex != ifindex)
			continue;
		r = net_route_del(pod, &routes[i]);
		/* Gone already: an IPv6 route may leave with another one. */
		if (r < 0 && r != -ESRCH)
			ret = r;
	}
	return ret;
}

static void undo(struct sbr_add *s)
{
	int r;

	for (size_t i = s->n_main_deleted; i-- > 0;) {
		r = net_route_add(s->pod, &s->main[i]);
		if (r < 0)
			log_warning("undo: cannot put a route back into the main table: %s", strerror(-r));
	}
	r = flush_tables(s->pod, s->ifindex, s->tables, s->n_tables);
	if (r < 0)
		log_warning("undo: cannot empty the tables of this ADD: %s", strerror(-r));
	for (size_t i = s->n_rules; i-- > 0;) {
		r = net_rule_del(s->pod, &s->rules[i]);
		if (r < 0)
			log_warning("undo: cannot delete rule to table %u: %s", s->rules[i].table,
				    strerror(-r));
	}
}

/* The ids every rule points at and every route lives in. */
static int used_tables(struct net_ns *pod, uint32_t **ret, size_t *ret_n, struct cni_err *err)
{
	_cleanup_free_ struct net_rule *rules = NULL;
	_cleanup_free_ struct net_route *routes = NULL;
	_cleanup_free_ uint32_t *used = NULL;
	size_t n_rules = 0, n_routes = 0, n = 0;
	int r;

	r = net_rule_list(pod, AF_UNSPEC, &rules, &n_rules);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "Failed to list all rules: %s", strerror(-r));
	r = net_route_list_table(pod, 0, AF_UNSPEC, &routes, &n_routes);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "Failed to list all routes: %s", strerror(-r));
	used = calloc(n_rules + n_routes + 1, sizeof(*used));
	if (!used)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n_rules; i++)
		if (rules[i].table)
			used[n++] = rules[i].table;
	for (size_t i = 0; i < n_routes; i++)
		used[n++] = routes[i].table;
	*ret = TAKE_PTR(used);
	*ret_n = n;
	return 0;
}

/* The link's routes in the main table: what moves. Multipath routes stay, as in the reference. */
static int main_routes(struct sbr_add *s, struct cni_err *err)
{
	struct net_route *routes = NULL;
	size_t n = 0, kept = 0;
	int r;

	r = net_route_list_table(s->pod, RT_TABLE_MAIN, AF_UNSPEC, &routes, &n);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "Unable to list routes: %s", strerror(-r));
	for (size_t i = 0; i < n; i++)
		if (routes[i].ifindex == s->ifindex)
			routes[kept++] = routes[i];
	s->main = routes;
	s->n_main = kept;
	return 0;
}

/* The table of each address: the config's, or the first free ones from SBR_FIRST_TABLE on. */
static int plan_tables(struct sbr_add *s, struct cni_err *err)
{
	_cleanup_free_ uint32_t *used = NULL;
	size_t n_used = 0;
	uint32_t table;
	int r;

	if (s->c->has_table) {
		for (size_t i = 0; i < s->n_ips; i++)
			s->plan[i] = s->c->table;
		return 0;
	}
	r = used_tables(s->pod, &used, &n_used, err);
	if (r < 0)
		return r;
	table = sbr_table_next(used, n_used, SBR_FIRST_TABLE);
	for (size_t i = 0; i < s->n_ips; i++) {
		if (!table)
			return cni_err_set(err, CNI_ERR_KERNEL, -ENOSPC,
					   "no free routing table left from %u on", SBR_FIRST_TABLE);
		log_debug("table %u for address %zu", table, i);
		s->plan[i] = table;
		table = table == UINT32_MAX ? 0 : sbr_table_next(used, n_used, table + 1);
	}
	return 0;
}

static int add_tables(struct sbr_add *s, struct cni_err *err)
{
	int r;

	if ((r = main_routes(s, err)) < 0)
		return r;
	for (size_t i = 0; i < s->n_ips; i++) {
		r = fill_table(s, s->ips[i], s->plan[i], err);
		if (r < 0)
			return r;
	}
	if (s->c->add_source_hints) {
		hint_main(s);
		return 0;
	}
	/*
	 * Only now: with the subnet route gone from the main table a second
	 * address's gateway would be unreachable, and the kernel refuses a route
	 * through it.
	 */
	for (size_t i = 0; i < s->n_main; i++) {
		char text[IP_PREFIX_STRLEN];

		r = net_route_del(s->pod, &s->main[i]);
		if (r < 0)
			return net_err_set(err, CNI_ERR_KERNEL, r, "Failed to delete route to %s: %s",
					   ip_prefix_format(&s->main[i].dst, text, sizeof(text)),
					   strerror(-r));
		s->n_main_deleted++;
	}
	return 0;
}

/*
 * The rules about to be made, kept before the first of them (a killed ADD leaves its DEL
 * what to delete), after those an earlier ADD of the attachment kept (an ADD again, no DEL
 * between). @old is what to put back should this ADD fail; *@ret_had_old whether there was.
 */
static int keep_rules(const char *name, const struct sbr_add *s, struct sbr_state_rule **old,
		      size_t *n_old, bool *ret_had_old, struct cni_err *err)
{
	_cleanup_free_ struct sbr_state_rule *v = NULL;
	size_t n = 0;
	int r;

	*ret_had_old = false;
	r = sbr_state_load(name, old, n_old);
	if (r == 0)
		*ret_had_old = true;
	else if (r != -ENOENT)
		log_warning("ADD: the record %s/%s kept before cannot be used (%s); replaced", SBR_STATE_DIR,
			    name, r == -EBADMSG ? "not one sbr wrote" : strerror(-r));
	if (!*ret_had_old)
		*n_old = 0;
	v = calloc(*n_old + s->n_ips + 1, sizeof(*v));
	if (!v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (*n_old)
		memcpy(v, *old, *n_old * sizeof(*v));
	n = *n_old;
	for (size_t i = 0; i < s->n_ips; i++) {
		struct sbr_state_rule rule = { .src = s->ips[i]->address.addr, .table = s->plan[i],
					       .filled = !s->c->has_table };
		size_t j = 0;

		while (j < n && !(ip_addr_equal(&v[j].src, &rule.src) && v[j].table == rule.table))
			j++;
		v[j] = rule;
		n += j == n;
	}
	r = sbr_state_save(name, v, n);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot keep the rules of %s in %s: %s", name,
				   SBR_STATE_DIR, strerror(-r));
	return 0;
}

/* The result passes through unchanged; the dispatch prints it in the config's version. */
static int copy_result(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	if (cni_result_copy(ctx->conf.prev_result, ret) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

static int state_name(const struct cni_ctx *ctx, char *buf, size_t size, struct cni_err *err)
{
	if (sbr_state_name(ctx->env.container_id, ctx->env.ifname, buf, size) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL,
				   "container ID and interface name cannot name a record");
	return 0;
}

static int sbr_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	_cleanup_free_ const struct cni_ip **ips = NULL;
	_cleanup_free_ struct sbr_state_rule *old = NULL;
	struct attach a = { .pod_fd = -1 };
	struct cni_result res = { 0 };
	struct sbr_add s = { 0 };
	struct net_link link;
	struct sbr_conf c;
	char name[RECORD_NAME_MAX + 1];
	size_t n_ips = 0, n_old = 0;
	bool had_old = false;
	int r;

	/* Everything that can be refused is refused before the pod is looked at. */
	if ((r = sbr_config_load(ctx, &c, err)) < 0 ||
	    (r = sbr_config_addresses(ctx->conf.prev_result, ifname, &ips, &n_ips, err)) < 0 ||
	    (r = state_name(ctx, name, sizeof(name), err)) < 0 ||
	    (r = copy_result(ctx, &res, err)) < 0)
		goto out;
	if ((r = attach_open(&a, ctx, err)) < 0 || (r = lock_netns(a.pod_fd, err)) < 0)
		goto out;
	r = net_link_get_by_name(a.pod, ifname, &link);
	if (r < 0) {
		/* prevResult names an interface the pod does not have: the chain is not what it says. */
		if (r == -ENODEV)
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
					"Cannot find network interface %s in the pod's netns", ifname);
		else
			net_err_op(err, r, "Cannot find network interface", ifname);
		goto out;
	}
	s = (struct sbr_add){ .c = &c, .pod = a.pod, .ifindex = link.ifindex, .ips = ips,
			      .n_ips = n_ips };
	s.plan = calloc(n_ips, sizeof(*s.plan));
	s.rules = calloc(n_ips, sizeof(*s.rules));
	s.tables = calloc(n_ips, sizeof(*s.tables));
	if (!s.plan || !s.rules || !s.tables) {
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto out;
	}
	if ((r = plan_tables(&s, err)) < 0 ||
	    (r = keep_rules(name, &s, &old, &n_old, &had_old, err)) < 0)
		goto out;
	if (c.has_table) {
		/* Rules only: the routes are the earlier plugins' to put in that table. */
		for (size_t i = 0; i < n_ips && r >= 0; i++)
			r = add_rule(&s, ips[i], s.plan[i], err);
	} else {
		r = add_tables(&s, err);
	}
	if (r < 0) {
		undo(&s);
		if ((had_old ? sbr_state_save(name, old, n_old) : sbr_state_remove(name)) < 0)
			log_warning("undo: cannot %s the record %s/%s", had_old ? "put back" : "remove",
				    SBR_STATE_DIR, name);
		goto out;
	}
	*ret = res;
	res = (struct cni_result){ 0 };
	log_debug("ADD %s: %zu rule(s) for %s in %s", ctx->env.container_id, s.n_rules, ifname,
		  ctx->env.netns);
out:
	free(s.main);
	free(s.plan);
	free(s.rules);
	free(s.tables);
	cni_result_free(&res);
	attach_close(&a);
	return r;
}

static bool is_link_addr(const struct ip_addr *a, const struct net_addr *addrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ip_addr_equal(a, &addrs[i].prefix.addr))
			return true;
	return false;
}

/*
 * The rules of the link's addresses go, as in the reference: every to-table
 * rule from one of them (to the config's table only, when it names one) that
 * selects on nothing else. Without "table", the link's routes in the tables
 * they pointed at go too.
 */
static int tidy(struct net_ns *pod, const struct net_link *link, const struct sbr_conf *c,
		struct cni_err *err)
{
	_cleanup_free_ struct net_addr *addrs = NULL;
	_cleanup_free_ struct net_rule *rules = NULL;
	_cleanup_free_ uint32_t *tables = NULL;
	size_t n_addrs = 0, n_rules = 0, n_tables = 0;
	char text[IP_PREFIX_STRLEN];
	int r, ret = 0;

	r = net_addr_list(pod, link->ifindex, AF_UNSPEC, &addrs, &n_addrs);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "Failed to list all addrs: %s", strerror(-r));
	r = net_rule_list(pod, AF_UNSPEC, &rules, &n_rules);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "Failed to list all rules to tidy: %s",
				   strerror(-r));
	tables = calloc(n_rules + 1, sizeof(*tables));
	if (!tables)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n_rules; i++) {
		const struct net_rule *rule = &rules[i];

		if (!rule->plain || !rule->table || (c->has_table && rule->table != c->table) ||
		    !is_link_addr(&rule->src.addr, addrs, n_addrs))
			continue;
		log_debug("deleting rule from %s lookup %u",
			  ip_addr_format(&rule->src.addr, text, sizeof(text)), rule->table);
		r = net_rule_del(pod, rule);
		/* On with the others: the last failure is the one reported. */
		if (r < 0 && r != -ENOENT) {
			ret = net_err_set(err, CNI_ERR_KERNEL, r, "Failed to delete rule from %s lookup %u: %s",
					  text, rule->table, strerror(-r));
			continue;
		}
		if (!c->has_table && rule->table != RT_TABLE_DEFAULT && rule->table != RT_TABLE_MAIN &&
		    rule->table != RT_TABLE_LOCAL)
			tables[n_tables++] = rule->table;
	}
	r = flush_tables(pod, link->ifindex, tables, n_tables);
	if (r < 0)
		ret = net_err_set(err, CNI_ERR_KERNEL, r, "Failed to delete the routes of %s: %s",
				  link->name, strerror(-r));
	return ret;
}

/*
 * The rules an ADD kept in its record, whatever addresses the link has (prevResult may
 * have named some it never had): each found among the pod's plain to-table rules and
 * deleted, and with the link still there its routes in the tables the ADD filled. On with
 * the others after a failure; the last one is reported.
 */
static int forget_rules(struct net_ns *pod, const struct net_link *link,
			const struct sbr_state_rule *v, size_t n, struct cni_err *err)
{
	_cleanup_free_ struct net_rule *rules = NULL;
	_cleanup_free_ uint32_t *tables = NULL;
	size_t n_rules = 0, n_tables = 0;
	char text[IP_PREFIX_STRLEN];
	int r, ret = 0;

	if (n == 0)
		return 0;
	r = net_rule_list(pod, AF_UNSPEC, &rules, &n_rules);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "Failed to list all rules: %s", strerror(-r));
	tables = calloc(n + 1, sizeof(*tables));
	if (!tables)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		unsigned int len = v[i].src.family == AF_INET ? 32 : 128;

		if (v[i].filled && link)
			tables[n_tables++] = v[i].table;
		for (size_t k = 0; k < n_rules; k++) {
			const struct net_rule *rule = &rules[k];

			if (!rule->plain || !rule->has_src || rule->table != v[i].table ||
			    rule->src.len != len || !ip_addr_equal(&rule->src.addr, &v[i].src))
				continue;
			r = net_rule_del(pod, rule);
			if (r < 0 && r != -ENOENT)
				ret = net_err_set(err, CNI_ERR_KERNEL, r,
						  "Failed to delete rule from %s lookup %u: %s",
						  ip_addr_format(&v[i].src, text, sizeof(text)), v[i].table,
						  strerror(-r));
			break;
		}
	}
	r = link ? flush_tables(pod, link->ifindex, tables, n_tables) : 0;
	if (r < 0)
		ret = net_err_set(err, CNI_ERR_KERNEL, r, "Failed to delete the routes of %s: %s",
				  link->name, strerror(-r));
	return ret;
}

/* The record of the attachment: -ENOENT when there is none, or one not to be trusted. */
static int load_rules(const char *name, struct sbr_state_rule **ret, size_t *ret_n,
		      struct cni_err *err)
{
	int r = sbr_state_load(name, ret, ret_n);

	if (r == -EBADMSG) {
		/* Not trusted, not removed: what it says may be anything, and an admin may want to see it. */
		log_error("DEL: the record %s/%s is not one sbr wrote; nothing deleted from it",
			  SBR_STATE_DIR, name);
		return -ENOENT;
	}
	if (r < 0 && r != -ENOENT)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read the record %s/%s: %s", SBR_STATE_DIR,
				   name, strerror(-r));
	return r;
}

static int sbr_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_free_ struct sbr_state_rule *kept = NULL;
	struct attach a = { .pod_fd = -1 };
	struct net_link link;
	struct sbr_conf c;
	char name[RECORD_NAME_MAX + 1];
	size_t n_kept = 0;
	bool recorded;
	int r, q;

	r = sbr_config_load(ctx, &c, err);
	/* ADD refuses such a config before it changes anything: there is nothing to tidy. */
	if (r < 0 && err->code == CNI_ERR_INVALID_CONFIG) {
		log_warning("DEL: nothing to tidy with this config: %s", err->msg);
		*err = (struct cni_err){ 0 };
		return 0;
	}
	if (r < 0 || (r = state_name(ctx, name, sizeof(name), err)) < 0)
		return r;
	r = load_rules(name, &kept, &n_kept, err);
	if (r < 0 && r != -ENOENT)
		return r;
	recorded = r == 0;
	r = attach_open_del(&a, ctx, err);
	if (r < 0)
		goto out;
	/* The netns gone, its rules went with it. */
	if (r == 0)
		goto forget;
	if ((r = lock_netns(a.pod_fd, err)) < 0)
		goto out;
	r = net_link_get_by_name(a.pod, ctx->env.ifname, &link);
	if (r == -ENODEV) {
		log_info("DEL: no interface %s in %s: only the rules its ADD kept to delete",
			 ctx->env.ifname, ctx->env.netns);
		r = forget_rules(a.pod, NULL, kept, n_kept, err);
		if (r < 0)
			goto out;
		goto forget;
	}
	if (r < 0) {
		net_err_op(err, r, "Failed to get link", ctx->env.ifname);
		goto out;
	}
	r = forget_rules(a.pod, &link, kept, n_kept, err);
	q = tidy(a.pod, &link, &c, err);
	if (r < 0 || (r = q) < 0)
		goto out;
forget:
	/* Kept until every rule went: a DEL that failed deletes the rest when tried again. */
	r = sbr_state_remove(name);
	if (r < 0)
		cni_err_set(err, CNI_ERR_IO, r, "cannot remove the record %s/%s: %s", SBR_STATE_DIR, name,
			    strerror(-r));
	else if (recorded)
		log_debug("DEL: %zu rule(s) of %s's record deleted", n_kept, name);
out:
	attach_close(&a);
	return r < 0 ? r : 0;
}

/* The reference checks nothing beyond what the dispatch does (the version). */
static int sbr_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	(void)ctx;
	(void)err;
	return 0;
}

const struct cni_plugin sbr_plugin = {
	.name = "sbr",
	.summary = "sbr: source-based routing, a rule and a table per address of a chained interface",
	.keys = sbr_config_keys,
	.add = sbr_add,
	.del = sbr_del,
	.check = sbr_check,
};
