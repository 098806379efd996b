/* nftables rules: the expressions nft builds for the matches and statements the plugins use */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/netfilter/nft.h"

struct ip_addr;
struct ip_prefix;

/*
 * A rule is built as nft builds it from its text: each call appends the
 * expressions nft emits for that word, in the same order and with the same
 * attributes (tests/unit/golden/nft holds what nft 1.0.6 sends). In an inet
 * table an address match is preceded once by "meta nfproto", a port match
 * once per protocol by "meta l4proto", as nft adds them.
 */
struct nft_rule;

enum nft_verdict {
	NFT_VERDICT_ACCEPT,
	NFT_VERDICT_DROP,
	NFT_VERDICT_RETURN,
	NFT_VERDICT_JUMP,
	NFT_VERDICT_GOTO,
};

/* The conntrack states "ct state" names, as the kernel's bits. */
enum nft_ct_state {
	NFT_CT_INVALID = 1u << 0,
	NFT_CT_ESTABLISHED = 1u << 1,
	NFT_CT_RELATED = 1u << 2,
	NFT_CT_NEW = 1u << 3,
	NFT_CT_UNTRACKED = 1u << 6,
};

/**
 * nft_rule_new() - an empty rule for a table of @family
 * @family: the table's family
 * @ret: the rule, written only on success; release with nft_rule_free()
 *
 * Return: 0 on success, -ENOMEM.
 */
int nft_rule_new(enum nft_family family, struct nft_rule **ret);

/**
 * nft_rule_free() - release a rule
 * @r: rule, may be NULL
 */
void nft_rule_free(struct nft_rule *r);

/**
 * nft_rule_family() - the family of the table a rule is for
 * @r: rule
 *
 * Return: the family.
 */
enum nft_family nft_rule_family(const struct nft_rule *r);

/**
 * nft_rule_comment() - 'comment "..."': the text nft_list_rules() finds the rule by
 * @r: rule
 * @comment: at most NFT_COMMENT_MAX bytes, no NUL
 *
 * Return: 0 on success, -EINVAL for a longer one.
 */
int nft_rule_comment(struct nft_rule *r, const char *comment);

/**
 * nft_match_addr() - "ip saddr P", "ip6 daddr != P" and the like
 * @r: rule
 * @daddr: the destination address, else the source
 * @p: an address (prefix of its full length) or a prefix (its host bits ignored);
 *     its family picks ip or ip6
 * @neq: "!=" rather than "=="
 *
 * Return: 0 on success, -EINVAL for a zero-length prefix or an IPv6 match in an ip
 * table (and the reverse), -ENOMEM.
 */
int nft_match_addr(struct nft_rule *r, bool daddr, const struct ip_prefix *p, bool neq);

/**
 * nft_match_port() - "tcp dport N", "udp sport N", "sctp dport N"
 * @r: rule
 * @l4proto: IPPROTO_TCP, IPPROTO_UDP or IPPROTO_SCTP
 * @dport: the destination port, else the source
 * @port: the port
 *
 * Return: 0 on success, -EINVAL for another protocol, -ENOMEM.
 */
int nft_match_port(struct nft_rule *r, uint8_t l4proto, bool dport, uint16_t port);

/**
 * nft_match_ifname() - 'iifname "X"', 'oifname != "X"'
 * @r: rule
 * @out: the output interface, else the input one
 * @name: the interface name (at most 15 bytes)
 * @neq: "!=" rather than "=="
 *
 * Return: 0 on success, -EINVAL, -ENOMEM.
 */
int nft_match_ifname(struct nft_rule *r, bool out, const char *name, bool neq);

/**
 * nft_match_ether_saddr() - "ether saddr M": the frame's source MAC, in a bridge table
 * @r: rule
 * @mac: the address, 6 bytes
 *
 * Return: 0 on success, -ENOMEM.
 */
int nft_match_ether_saddr(struct nft_rule *r, const uint8_t mac[6]);

/**
 * nft_match_mark() - "meta mark & MASK == VALUE"
 * @r: rule
 * @mask: the bits looked at
 * @value: what they must be
 *
 * Return: 0 on success, -ENOMEM.
 */
int nft_match_mark(struct nft_rule *r, uint32_t mask, uint32_t value);

/**
 * nft_match_ct_state() - "ct state S1,S2": the connection is in one of the states
 * @r: rule
 * @states: nft_ct_state bits, at least one
 *
 * Return: 0 on success, -EINVAL for none, -ENOMEM.
 */
int nft_match_ct_state(struct nft_rule *r, uint32_t states);

/**
 * nft_match_daddr_local() - "fib daddr type local": the destination is one of the node's
 * @r: rule
 *
 * Return: 0 on success, -ENOMEM.
 */
int nft_match_daddr_local(struct nft_rule *r);

/**
 * nft_set_mark_bits() - "meta mark set meta mark | BITS"
 * @r: rule
 * @bits: the bits set
 *
 * Return: 0 on success, -ENOMEM.
 */
int nft_set_mark_bits(struct nft_rule *r, uint32_t bits);

/**
 * nft_verdict() - "accept", "drop", "return", "jump C", "goto C"
 * @r: rule
 * @v: the verdict
 * @chain: the chain of a jump or goto, NULL otherwise
 *
 * Return: 0 on success, -EINVAL for a missing or needless chain, -ENOMEM.
 */
int nft_verdict(struct nft_rule *r, enum nft_verdict v, const char *chain);

/**
 * nft_nat() - "dnat to A", "dnat to A:P", "snat to A" (and ip6's "[A]:P")
 * @r: rule
 * @dnat: destination NAT, else source NAT
 * @addr: the address translated to
 * @port: the port translated to, 0 for the packet's own
 *
 * Return: 0 on success, -EINVAL for an address of the other family than an ip or ip6
 * table's, -ENOMEM.
 */
int nft_nat(struct nft_rule *r, bool dnat, const struct ip_addr *addr, uint16_t port);

/**
 * nft_masquerade() - "masquerade", "masquerade fully-random"
 * @r: rule
 * @fully_random: source ports picked at random
 *
 * Return: 0 on success, -ENOMEM.
 */
int nft_masquerade(struct nft_rule *r, bool fully_random);
