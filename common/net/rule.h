/* Policy routing rules: rtnetlink requests and dumps */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util/ipaddr.h"

struct net_ns;

struct net_rule {
	int family;            /* AF_INET or AF_INET6 */
	bool has_src;
	struct ip_prefix src;  /* "from": address and prefix length */
	uint32_t table;        /* "lookup": the table of a to-table rule, 0 for another action */
	bool has_priority;     /* false on add: the kernel numbers it (below the last one) */
	uint32_t priority;
	/*
	 * A to-table rule with no selector but its source, what
	 * "ip rule add from A lookup T" makes: no dst, iif, oif, fwmark, tos,
	 * ports, uid range, "not". Only dumps set it.
	 */
	bool plain;
};

/**
 * net_rule_add() - add a to-table rule (NLM_F_CREATE|NLM_F_EXCL)
 * @ns: the netns (its handle), NULL for the caller's
 * @rule: the rule: family, source (optional), table (not 0), priority (optional)
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_rule_add(struct net_ns *ns, const struct net_rule *rule);

/**
 * net_rule_del() - delete the first rule matching the given fields
 * @ns: the netns (its handle), NULL for the caller's
 * @rule: as net_rule_list() returned it (family, source, table, priority)
 *
 * Return: 0 on success, -ENOENT when no rule matches, negative errno otherwise.
 */
int net_rule_del(struct net_ns *ns, const struct net_rule *rule);

/**
 * net_rule_list() - the rules of one family or both
 * @ns: the netns (its handle), NULL for the caller's
 * @family: AF_INET, AF_INET6 or AF_UNSPEC for both
 * @ret: malloc'ed array, written only on success
 * @ret_n: number of entries
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_rule_list(struct net_ns *ns, int family, struct net_rule **ret, size_t *ret_n);
