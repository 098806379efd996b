/* Policy routing rules: rtnetlink requests and dumps */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/fib_rules.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/neterr.h"
#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/net/rule.h"
#include "common/util/cleanup.h"

static size_t family_size(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

static int rule_send(struct net_ns *ns, uint16_t type, uint16_t flags, const struct net_rule *rule)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct fib_rule_hdr frh = { 0 };
	size_t alen;
	int r;

	net_ack_clear();
	alen = rule ? family_size(rule->family) : 0;
	if (!alen || !rule->table)
		return -EINVAL;
	if (rule->has_src && (rule->src.addr.family != rule->family || rule->src.len > alen * 8))
		return -EINVAL;
	frh.family = (uint8_t)rule->family;
	frh.src_len = rule->has_src ? (uint8_t)rule->src.len : 0;
	/* Tables past 255 only fit in FRA_TABLE, which is always sent. */
	frh.table = rule->table < 256 ? (uint8_t)rule->table : RT_TABLE_UNSPEC;
	frh.action = FR_ACT_TO_TBL;
	r = nlsock_msg_new(type, flags, &frh, sizeof(frh), &msg);
	if (r < 0)
		return r;
	if ((rule->has_src && nla_put(msg, FRA_SRC, (int)alen, rule->src.addr.bytes) < 0) ||
	    nla_put_u32(msg, FRA_TABLE, rule->table) < 0 ||
	    (rule->has_priority && nla_put_u32(msg, FRA_PRIORITY, rule->priority) < 0))
		return -EMSGSIZE;
	return nlsock_request(ns, msg);
}

int net_rule_add(struct net_ns *ns, const struct net_rule *rule)
{
	return rule_send(ns, RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL, rule);
}

int net_rule_del(struct net_ns *ns, const struct net_rule *rule)
{
	return rule_send(ns, RTM_DELRULE, 0, rule);
}

struct rule_list {
	struct net_rule *v;
	size_t n;
	size_t cap;
	size_t base; /* entries of earlier dumps, kept when a dump is retried */
};

/* Fills what the reply says; false for a reply too short or malformed to read. */
static bool rule_parse(const struct nlmsghdr *nlh, struct net_rule *ret)
{
	const struct fib_rule_hdr *frh;
	const struct nlattr *attr;
	struct net_rule rule = { 0 };
	size_t alen;
	bool plain;
	int rem;

	if (nlh->nlmsg_type != RTM_NEWRULE || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*frh)))
		return false;
	frh = NLMSG_DATA(nlh);
	alen = family_size(frh->family);
	if (!alen)
		return false;
	rule.family = frh->family;
	rule.table = frh->action == FR_ACT_TO_TBL ? frh->table : 0;
	plain = frh->action == FR_ACT_TO_TBL && !frh->dst_len && !frh->tos &&
		!(frh->flags & FIB_RULE_INVERT);
	nlmsg_for_each_attr(attr, nlh, sizeof(*frh), rem) {
		switch (nla_type(attr)) {
		case FRA_SRC:
			if ((size_t)nla_len(attr) != alen || frh->src_len > alen * 8)
				return false;
			rule.has_src = true;
			rule.src.addr.family = frh->family;
			memcpy(rule.src.addr.bytes, nla_data(attr), alen);
			rule.src.len = frh->src_len;
			break;
		case FRA_TABLE:
			if (nla_len(attr) != sizeof(uint32_t))
				return false;
			if (frh->action == FR_ACT_TO_TBL)
				rule.table = nla_get_u32(attr);
			break;
		case FRA_PRIORITY:
			if (nla_len(attr) != sizeof(uint32_t))
				return false;
			rule.has_priority = true;
			rule.priority = nla_get_u32(attr);
			break;
		case FRA_PROTOCOL: /* who made it, no selector */
			break;
		case FRA_SUPPRESS_PREFIXLEN:
		case FRA_SUPPRESS_IFGROUP:
			/* The kernel sends these unset too, as -1. */
			if (nla_len(attr) != sizeof(uint32_t) || nla_get_u32(attr) != UINT32_MAX)
				plain = false;
			break;
		default:
			/* Every other attribute the kernel sends is a selector or an action's. */
			plain = false;
			break;
		}
	}
	rule.plain = plain && rule.has_src;
	*ret = rule;
	return true;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rule_list *l = data;
	struct net_rule rule;
	int r;

	/* A rule this module cannot read is left out, not a failure of the list. */
	if (!rule_parse(nlh, &rule))
		return 0;
	r = nlsock_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v));
	if (r < 0)
		return r;
	l->v[l->n++] = rule;
	return 0;
}

static void rule_reset(void *data)
{
	struct rule_list *l = data;

	l->n = l->base;
}

static int rule_dump(struct net_ns *ns, int family, struct rule_list *l)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct fib_rule_hdr frh = { .family = (uint8_t)family };
	int r;

	r = nlsock_msg_new(RTM_GETRULE, NLM_F_DUMP, &frh, sizeof(frh), &msg);
	if (r < 0)
		return r;
	l->base = l->n;
	return nlsock_talk(ns, NETLINK_ROUTE, msg, rule_cb, rule_reset, l);
}

int net_rule_list(struct net_ns *ns, int family, struct net_rule **ret, size_t *ret_n)
{
	struct rule_list l = { 0 };
	int r = 0;

	net_ack_clear();
	if (family != AF_UNSPEC && !family_size(family))
		return -EINVAL;
	/* One family per dump, as the kernel keeps them: AF_UNSPEC would add other families' rules. */
	if (family == AF_UNSPEC || family == AF_INET)
		r = rule_dump(ns, AF_INET, &l);
	if (r >= 0 && (family == AF_UNSPEC || family == AF_INET6))
		r = rule_dump(ns, AF_INET6, &l);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*ret = l.v;
	*ret_n = l.n;
	return 0;
}
