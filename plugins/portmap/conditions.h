/* portmap's nftables conditions: the words of conditionsV4/V6 read into rule expressions */
#pragma once

#include <stdbool.h>

struct cni_err;
struct nft_rule;
struct portmap_conditions;

/**
 * portmap_nft_conditions() - append a condition list's matches to a rule
 * @r: the rule (of an ip or ip6 table)
 * @c: the conditions, their words joined by blanks as upstream joins them into its rule
 * @key: "conditionsV4" or "conditionsV6", for the error
 * @err: code 7 naming the word that is not read
 *
 * Upstream hands the words to nft as text. Ours builds the rule's expressions itself
 * and reads what a condition of the host side of a port mapping is: "ip saddr|daddr
 * [==|!=] ADDRESS[/LEN]" (ip6 in an ip6 table), "[meta] iifname|oifname [==|!=] NAME"
 * (a name quoted or not) and "tcp|udp|sctp sport|dport PORT", any number of them in a
 * row; anything else is refused, naming it.
 *
 * Return: 0 on success, -EINVAL for a condition not read, -ENOMEM.
 */
int portmap_nft_conditions(struct nft_rule *r, const struct portmap_conditions *c,
			   const char *key, struct cni_err *err);
