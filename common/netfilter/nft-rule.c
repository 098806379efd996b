/* nftables rules: the expressions nft builds for the matches and statements the plugins use */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/netfilter/nft-internal.h"
#include "common/netfilter/nft-rule.h"
#include "common/util/cleanup.h"
#include "common/util/ipaddr.h"

/* nft loads everything into register 1 (16 bytes) and NAT's port into register 2. */
#define REG_1 NFT_REG_1
#define REG_2 NFT_REG_2

int nft_rule_new(enum nft_family family, struct nft_rule **ret)
{
	struct nft_rule *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->exprs = nlmsg_alloc();
	if (!r->exprs) {
		free(r);
		return -ENOMEM;
	}
	r->family = family;
	*ret = r;
	return 0;
}

void nft_rule_free(struct nft_rule *r)
{
	if (!r)
		return;
	nlmsg_free(r->exprs);
	free(r);
}

enum nft_family nft_rule_family(const struct nft_rule *r)
{
	return r->family;
}

int nft_rule_comment(struct nft_rule *r, const char *comment)
{
	size_t n = strlen(comment);

	if (n > NFT_COMMENT_MAX)
		return -EINVAL;
	memcpy(r->comment, comment, n + 1);
	r->has_comment = true;
	return 0;
}

/*
 * One expression: NFTA_LIST_ELEM { NFTA_EXPR_NAME, NFTA_EXPR_DATA { @fill } }.
 * A failed put leaves the rule as it was: the element is cut back off.
 */
struct expr {
	struct nl_msg *m;
	struct nlattr *elem, *data;
};

static int expr_open(struct nft_rule *r, const char *name, struct expr *e)
{
	e->m = r->exprs;
	e->elem = nla_nest_start(e->m, NLA_F_NESTED | NFTA_LIST_ELEM);
	if (!e->elem)
		return -ENOMEM;
	if (nla_put_string(e->m, NFTA_EXPR_NAME, name) < 0 ||
	    !(e->data = nla_nest_start(e->m, NLA_F_NESTED | NFTA_EXPR_DATA))) {
		nla_nest_cancel(e->m, e->elem);
		return -ENOMEM;
	}
	return 0;
}

static int expr_close(struct expr *e, int r)
{
	if (r < 0) {
		nla_nest_cancel(e->m, e->elem);
		return -ENOMEM;
	}
	/* An expression without attributes (masq) still sends its empty data, as nft does. */
	nla_nest_end_keep_empty(e->m, e->data);
	nla_nest_end(e->m, e->elem);
	return 0;
}

static int put_be32(struct nl_msg *m, int type, uint32_t v)
{
	return nla_put_u32(m, type, htonl(v));
}

/* NFTA_DATA_VALUE nested in @type. */
static int put_data(struct nl_msg *m, int type, const void *v, size_t len)
{
	struct nlattr *n = nla_nest_start(m, NLA_F_NESTED | type);

	if (!n || nla_put(m, NFTA_DATA_VALUE, (int)len, v) < 0)
		return -1;
	return nla_nest_end(m, n);
}

static int meta_load(struct nft_rule *r, uint32_t key)
{
	struct expr e;
	int ret = expr_open(r, "meta", &e);

	if (ret < 0)
		return ret;
	ret = put_be32(e.m, NFTA_META_KEY, key);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_META_DREG, REG_1);
	return expr_close(&e, ret);
}

static int cmp(struct nft_rule *r, bool neq, const void *v, size_t len)
{
	struct expr e;
	int ret = expr_open(r, "cmp", &e);

	if (ret < 0)
		return ret;
	ret = put_be32(e.m, NFTA_CMP_SREG, REG_1);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_CMP_OP, neq ? NFT_CMP_NEQ : NFT_CMP_EQ);
	if (ret >= 0)
		ret = put_data(e.m, NFTA_CMP_DATA, v, len);
	return expr_close(&e, ret);
}

static int payload_load(struct nft_rule *r, uint32_t base, uint32_t offset, uint32_t len)
{
	struct expr e;
	int ret = expr_open(r, "payload", &e);

	if (ret < 0)
		return ret;
	ret = put_be32(e.m, NFTA_PAYLOAD_DREG, REG_1);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_PAYLOAD_BASE, base);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_PAYLOAD_OFFSET, offset);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_PAYLOAD_LEN, len);
	return expr_close(&e, ret);
}

/*
 * reg1 = (reg1 & mask) ^ xor. nft names the operation (NFTA_BITWISE_OP) only for
 * an operator written in the rule ("meta mark & 0x2000", "| 0x2000"), not for the
 * mask it makes of a prefix or a set of flags.
 */
static int bitwise(struct nft_rule *r, bool written, const void *mask, const void *xor,
		   size_t len)
{
	struct expr e;
	int ret = expr_open(r, "bitwise", &e);

	if (ret < 0)
		return ret;
	ret = put_be32(e.m, NFTA_BITWISE_SREG, REG_1);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_BITWISE_DREG, REG_1);
	if (ret >= 0 && written)
		ret = put_be32(e.m, NFTA_BITWISE_OP, NFT_BITWISE_BOOL);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_BITWISE_LEN, (uint32_t)len);
	if (ret >= 0)
		ret = put_data(e.m, NFTA_BITWISE_MASK, mask, len);
	if (ret >= 0)
		ret = put_data(e.m, NFTA_BITWISE_XOR, xor, len);
	return expr_close(&e, ret);
}

static int immediate_value(struct nft_rule *r, uint32_t reg, const void *v, size_t len)
{
	struct expr e;
	int ret = expr_open(r, "immediate", &e);

	if (ret < 0)
		return ret;
	ret = put_be32(e.m, NFTA_IMMEDIATE_DREG, reg);
	if (ret >= 0)
		ret = put_data(e.m, NFTA_IMMEDIATE_DATA, v, len);
	return expr_close(&e, ret);
}

/* In an inet table, nft first matches the packet's family, once per rule. */
static int nfproto_dependency(struct nft_rule *r, int family)
{
	uint8_t proto = family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;
	int ret;

	if (r->family != NFT_FAMILY_INET) {
		bool same = r->family == (family == AF_INET ? NFT_FAMILY_IP : NFT_FAMILY_IP6);

		return same ? 0 : -EINVAL;
	}
	if (r->nfproto == proto)
		return 0;
	ret = meta_load(r, NFT_META_NFPROTO);
	if (ret >= 0)
		ret = cmp(r, false, &proto, 1);
	if (ret >= 0)
		r->nfproto = proto;
	return ret;
}

int nft_match_addr(struct nft_rule *r, bool daddr, const struct ip_prefix *p, bool neq)
{
	bool v4 = p->addr.family == AF_INET;
	uint32_t full = v4 ? 4 : 16, offset;
	uint8_t mask[16] = { 0 }, net[16] = { 0 };
	unsigned int bits = p->len;
	int ret;

	if ((!v4 && p->addr.family != AF_INET6) || bits == 0 || bits > full * 8)
		return -EINVAL;
	ret = nfproto_dependency(r, p->addr.family);
	if (ret < 0)
		return ret;
	offset = v4 ? (daddr ? 16 : 12) : (daddr ? 24 : 8);
	for (unsigned int i = 0; i < full; i++) {
		unsigned int b = bits > 8 * i ? bits - 8 * i : 0;

		mask[i] = b >= 8 ? 0xff : (uint8_t)(0xff << (8 - b));
		net[i] = p->addr.bytes[i] & mask[i];
	}
	/* A prefix of whole bytes is compared on those bytes alone; another is masked. */
	if (bits % 8 == 0) {
		ret = payload_load(r, NFT_PAYLOAD_NETWORK_HEADER, offset, bits / 8);
		return ret < 0 ? ret : cmp(r, neq, net, bits / 8);
	}
	{
		uint8_t zero[16] = { 0 };

		ret = payload_load(r, NFT_PAYLOAD_NETWORK_HEADER, offset, full);
		if (ret >= 0)
			ret = bitwise(r, false, mask, zero, full);
	}
	return ret < 0 ? ret : cmp(r, neq, net, full);
}

int nft_match_port(struct nft_rule *r, uint8_t l4proto, bool dport, uint16_t port)
{
	uint16_t be = htons(port);
	int ret = 0;

	if (l4proto != IPPROTO_TCP && l4proto != IPPROTO_UDP && l4proto != IPPROTO_SCTP)
		return -EINVAL;
	if (r->l4proto != l4proto) {
		ret = meta_load(r, NFT_META_L4PROTO);
		if (ret >= 0)
			ret = cmp(r, false, &l4proto, 1);
		if (ret < 0)
			return ret;
		r->l4proto = l4proto;
	}
	/* Source and destination ports lead the TCP, UDP and SCTP headers alike. */
	ret = payload_load(r, NFT_PAYLOAD_TRANSPORT_HEADER, dport ? 2 : 0, 2);
	return ret < 0 ? ret : cmp(r, false, &be, 2);
}

int nft_match_ifname(struct nft_rule *r, bool out, const char *name, bool neq)
{
	char buf[16] = { 0 };
	size_t n = strlen(name);
	int ret;

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, name, n);
	ret = meta_load(r, out ? NFT_META_OIFNAME : NFT_META_IIFNAME);
	return ret < 0 ? ret : cmp(r, neq, buf, sizeof(buf));
}

int nft_match_ether_saddr(struct nft_rule *r, const uint8_t mac[6])
{
	/* The link-layer header: the destination's 6 bytes, then the source's. */
	int ret = payload_load(r, NFT_PAYLOAD_LL_HEADER, 6, 6);

	return ret < 0 ? ret : cmp(r, false, mac, 6);
}

int nft_match_mark(struct nft_rule *r, uint32_t mask, uint32_t value)
{
	uint32_t zero = 0;
	int ret = meta_load(r, NFT_META_MARK);

	/* The mark is a host-order number in the register, as nft writes it. */
	if (ret >= 0)
		ret = bitwise(r, true, &mask, &zero, 4);
	return ret < 0 ? ret : cmp(r, false, &value, 4);
}

int nft_match_ct_state(struct nft_rule *r, uint32_t states)
{
	uint32_t zero = 0;
	struct expr e;
	int ret;

	if (!states)
		return -EINVAL;
	ret = expr_open(r, "ct", &e);
	if (ret < 0)
		return ret;
	ret = put_be32(e.m, NFTA_CT_KEY, NFT_CT_STATE);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_CT_DREG, REG_1);
	ret = expr_close(&e, ret);
	if (ret >= 0)
		ret = bitwise(r, false, &states, &zero, 4);
	return ret < 0 ? ret : cmp(r, true, &zero, 4);
}

int nft_match_daddr_local(struct nft_rule *r)
{
	uint32_t local = RTN_LOCAL;
	struct expr e;
	int ret = expr_open(r, "fib", &e);

	if (ret < 0)
		return ret;
	ret = put_be32(e.m, NFTA_FIB_FLAGS, NFTA_FIB_F_DADDR);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_FIB_DREG, REG_1);
	ret = expr_close(&e, ret);
	return ret < 0 ? ret : cmp(r, false, &local, 4);
}

int nft_set_mark_bits(struct nft_rule *r, uint32_t bits)
{
	uint32_t keep = ~bits;
	struct expr e;
	int ret = meta_load(r, NFT_META_MARK);

	if (ret >= 0)
		ret = bitwise(r, true, &keep, &bits, 4);
	if (ret < 0)
		return ret;
	ret = expr_open(r, "meta", &e);
	if (ret < 0)
		return ret;
	ret = put_be32(e.m, NFTA_META_KEY, NFT_META_MARK);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_META_SREG, REG_1);
	return expr_close(&e, ret);
}

int nft_verdict(struct nft_rule *r, enum nft_verdict v, const char *chain)
{
	static const int32_t codes[] = {
		[NFT_VERDICT_ACCEPT] = NF_ACCEPT, [NFT_VERDICT_DROP] = NF_DROP,
		[NFT_VERDICT_RETURN] = NFT_RETURN, [NFT_VERDICT_JUMP] = NFT_JUMP,
		[NFT_VERDICT_GOTO] = NFT_GOTO,
	};
	bool to_chain = v == NFT_VERDICT_JUMP || v == NFT_VERDICT_GOTO;
	struct nlattr *data, *verdict;
	struct expr e;
	int ret;

	if ((unsigned int)v >= ARRAY_SIZE(codes) || to_chain != (chain != NULL) ||
	    (chain && (!*chain || strlen(chain) > 255)))
		return -EINVAL;
	ret = expr_open(r, "immediate", &e);
	if (ret < 0)
		return ret;
	ret = put_be32(e.m, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
	data = ret < 0 ? NULL : nla_nest_start(e.m, NLA_F_NESTED | NFTA_IMMEDIATE_DATA);
	verdict = data ? nla_nest_start(e.m, NLA_F_NESTED | NFTA_DATA_VERDICT) : NULL;
	ret = verdict ? put_be32(e.m, NFTA_VERDICT_CODE, (uint32_t)codes[v]) : -1;
	if (ret >= 0 && chain)
		ret = nla_put_string(e.m, NFTA_VERDICT_CHAIN, chain);
	if (ret >= 0) {
		nla_nest_end(e.m, verdict);
		nla_nest_end(e.m, data);
	}
	return expr_close(&e, ret);
}

int nft_nat(struct nft_rule *r, bool dnat, const struct ip_addr *addr, uint16_t port)
{
	bool v4 = addr->family == AF_INET;
	uint16_t be = htons(port);
	struct expr e;
	int ret;

	if (!v4 && addr->family != AF_INET6)
		return -EINVAL;
	if (r->family != NFT_FAMILY_INET && r->family != (v4 ? NFT_FAMILY_IP : NFT_FAMILY_IP6))
		return -EINVAL;
	ret = immediate_value(r, REG_1, addr->bytes, v4 ? 4 : 16);
	if (ret >= 0 && port)
		ret = immediate_value(r, REG_2, &be, 2);
	if (ret < 0)
		return ret;
	ret = expr_open(r, "nat", &e);
	if (ret < 0)
		return ret;
	ret = put_be32(e.m, NFTA_NAT_TYPE, dnat ? NFT_NAT_DNAT : NFT_NAT_SNAT);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_NAT_FAMILY, v4 ? NFPROTO_IPV4 : NFPROTO_IPV6);
	if (ret >= 0)
		ret = put_be32(e.m, NFTA_NAT_REG_ADDR_MIN, REG_1);
	if (ret >= 0 && port)
		ret = put_be32(e.m, NFTA_NAT_REG_PROTO_MIN, REG_2);
	if (ret >= 0 && port)
		ret = put_be32(e.m, NFTA_NAT_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
	return expr_close(&e, ret);
}

int nft_masquerade(struct nft_rule *r, bool fully_random)
{
	struct expr e;
	int ret = expr_open(r, "masq", &e);

	if (ret < 0)
		return ret;
	if (fully_random)
		ret = put_be32(e.m, NFTA_MASQ_FLAGS, NF_NAT_RANGE_PROTO_RANDOM_FULLY);
	return expr_close(&e, ret);
}

size_t nft_udata_comment(const char *comment, uint8_t *buf)
{
	size_t n = strlen(comment) + 1;

	buf[0] = 0;
	buf[1] = (uint8_t)n;
	memcpy(buf + 2, comment, n);
	return n + 2;
}
