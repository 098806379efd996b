/* nftables listing: the rules a table's chains hold, found by the comment they carry */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/neterr.h"
#include "common/net/nlsock.h"
#include "common/netfilter/nft-list.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"

static int request(uint16_t type, uint16_t flags, enum nft_family family, struct nl_msg **ret)
{
	struct nfgenmsg g = { .nfgen_family = (uint8_t)family, .version = NFNETLINK_V0 };

	return nlsock_msg_new((uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | type), flags, &g, sizeof(g), ret);
}

/* One question; the answers go to @cb. -ENOENT is the kernel's "no such table or chain". */
static int ask(struct nl_msg *m, nlsock_msg_cb cb, void *data, struct cni_err *err)
{
	_cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
	bool done;
	int r;

	r = nlsock_open(NETLINK_NETFILTER, &sk);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "nftables: cannot open a netlink socket: %s",
				   strerror(-r));
	net_ack_clear();
	r = nlsock_exchange(sk, m, cb, NULL, data, &done);
	if (r == -ENOENT || r >= 0)
		return r;
	return net_err_set(err, CNI_ERR_KERNEL, r, "nftables: cannot list: %s", strerror(-r));
}

int nft_chain_exists(enum nft_family family, const char *table, const char *chain,
		     struct cni_err *err)
{
	_cleanup_(nlmsg_freep) struct nl_msg *m = NULL;
	int r;

	r = request(chain ? NFT_MSG_GETCHAIN : NFT_MSG_GETTABLE, 0, family, &m);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	if (chain)
		r = nla_put_string(m, NFTA_CHAIN_TABLE, table) < 0 ||
		    nla_put_string(m, NFTA_CHAIN_NAME, chain) < 0 ? -ENOMEM : 0;
	else
		r = nla_put_string(m, NFTA_TABLE_NAME, table) < 0 ? -ENOMEM : 0;
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	r = ask(m, NULL, NULL, err);
	return r == -ENOENT ? 0 : r < 0 ? r : 1;
}

/* A rule comment: the userdata TLV of type 0 (NFTNL_UDATA_RULE_COMMENT), NUL-terminated. */
static char *udata_comment(const struct nlattr *a)
{
	const uint8_t *p = nla_data(a);
	size_t len = (size_t)nla_len(a);

	for (size_t i = 0; i + 2 <= len; i += 2 + (size_t)p[i + 1]) {
		size_t n = p[i + 1];

		if (i + 2 + n > len)
			return NULL;
		if (p[i] == 0 && n > 0 && memchr(p + i + 2, '\0', n) == p + i + 2 + n - 1)
			return strdup((const char *)p + i + 2);
	}
	return NULL;
}

/* An expression's name and data: a list element's NFTA_EXPR_NAME and NFTA_EXPR_DATA. */
static bool expr_parts(const struct nlattr *elem, const char **ret_name, struct nlattr **ret_data)
{
	struct nlattr *tb[NFTA_EXPR_MAX + 1];

	if (nla_parse_nested(tb, NFTA_EXPR_MAX, (struct nlattr *)elem, NULL) < 0 ||
	    !tb[NFTA_EXPR_NAME] || !tb[NFTA_EXPR_DATA])
		return false;
	*ret_name = nla_data(tb[NFTA_EXPR_NAME]);
	*ret_data = tb[NFTA_EXPR_DATA];
	return memchr(*ret_name, '\0', (size_t)nla_len(tb[NFTA_EXPR_NAME])) != NULL;
}

/*
 * The interface an 'iifname "X"' match names: a "meta" load of the input interface's
 * name followed by a "cmp" with it, as nft builds the match (a spoof check's jump is
 * found by the bridge port it guards).
 */
static void rule_iifname(const struct nlattr *exprs, char ret[16])
{
	const struct nlattr *elem;
	bool loaded = false;
	int rem;

	nla_for_each_nested(elem, exprs, rem) {
		struct nlattr *data, *cmp[NFTA_CMP_MAX + 1], *meta[NFTA_META_MAX + 1];
		const char *name;

		if (!expr_parts(elem, &name, &data))
			return;
		if (loaded && strcmp(name, "cmp") == 0 &&
		    nla_parse_nested(cmp, NFTA_CMP_MAX, data, NULL) >= 0 && cmp[NFTA_CMP_DATA]) {
			struct nlattr *v[NFTA_DATA_MAX + 1];

			if (nla_parse_nested(v, NFTA_DATA_MAX, cmp[NFTA_CMP_DATA], NULL) >= 0 &&
			    v[NFTA_DATA_VALUE] && nla_len(v[NFTA_DATA_VALUE]) <= 16) {
				memcpy(ret, nla_data(v[NFTA_DATA_VALUE]),
				       (size_t)nla_len(v[NFTA_DATA_VALUE]));
				ret[15] = '\0';
			}
			return;
		}
		loaded = strcmp(name, "meta") == 0 &&
			 nla_parse_nested(meta, NFTA_META_MAX, data, NULL) >= 0 && meta[NFTA_META_KEY] &&
			 nla_len(meta[NFTA_META_KEY]) == 4 &&
			 be32toh(nla_get_u32(meta[NFTA_META_KEY])) == NFT_META_IIFNAME;
	}
}

struct listing {
	const char *table, *chain;
	struct nft_rule_list l;
	size_t cap;
};

static bool attr_is(const struct nlattr *a, const char *s)
{
	return a && (size_t)nla_len(a) == strlen(s) + 1 && memcmp(nla_data(a), s, strlen(s) + 1) == 0;
}

static int on_rule(const struct nlmsghdr *nlh, void *data)
{
	struct listing *ls = data;
	struct nlattr *tb[NFTA_RULE_MAX + 1];
	struct nft_rule_info *info;
	int r;

	if (nlh->nlmsg_type != (NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWRULE))
		return 0;
	r = nlmsg_parse((struct nlmsghdr *)nlh, sizeof(struct nfgenmsg), tb, NFTA_RULE_MAX, NULL);
	if (r < 0 || !tb[NFTA_RULE_HANDLE] || !tb[NFTA_RULE_CHAIN] ||
	    nla_len(tb[NFTA_RULE_HANDLE]) != 8)
		return -EBADMSG;
	/* Kernels that ignore the dump's filter send every table's rules. */
	if (!attr_is(tb[NFTA_RULE_TABLE], ls->table) ||
	    (ls->chain && !attr_is(tb[NFTA_RULE_CHAIN], ls->chain)))
		return 0;
	r = nlsock_grow((void **)&ls->l.v, &ls->cap, ls->l.n, sizeof(*ls->l.v));
	if (r < 0)
		return r;
	info = &ls->l.v[ls->l.n];
	*info = (struct nft_rule_info){ .handle = be64toh(nla_get_u64(tb[NFTA_RULE_HANDLE])) };
	info->chain = strndup(nla_data(tb[NFTA_RULE_CHAIN]), (size_t)nla_len(tb[NFTA_RULE_CHAIN]));
	if (!info->chain)
		return -ENOMEM;
	ls->l.n++;
	if (tb[NFTA_RULE_USERDATA])
		info->comment = udata_comment(tb[NFTA_RULE_USERDATA]);
	if (tb[NFTA_RULE_EXPRESSIONS])
		rule_iifname(tb[NFTA_RULE_EXPRESSIONS], info->iifname);
	return 0;
}

int nft_list_rules(enum nft_family family, const char *table, const char *chain,
		   struct nft_rule_list *ret, struct cni_err *err)
{
	_cleanup_(nlmsg_freep) struct nl_msg *m = NULL;
	struct listing ls = { .table = table, .chain = chain };
	int r;

	/* A dump of a missing table or chain is empty, not an error: ask first. */
	r = nft_chain_exists(family, table, chain, err);
	if (r <= 0)
		return r == 0 ? -ENOENT : r;
	r = request(NFT_MSG_GETRULE, NLM_F_DUMP, family, &m);
	if (r >= 0 && nla_put_string(m, NFTA_RULE_TABLE, table) < 0)
		r = -ENOMEM;
	if (r >= 0 && chain && nla_put_string(m, NFTA_RULE_CHAIN, chain) < 0)
		r = -ENOMEM;
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	r = ask(m, on_rule, &ls, err);
	if (r < 0) {
		nft_rule_list_free(&ls.l);
		return r == -ENOENT ? r : cni_err_set(err, CNI_ERR_KERNEL, r,
						      "nftables: cannot list the rules of %s: %s",
						      table, strerror(-r));
	}
	*ret = ls.l;
	return 0;
}

void nft_rule_list_free(struct nft_rule_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].chain);
		free(l->v[i].comment);
	}
	free(l->v);
	*l = (struct nft_rule_list){ 0 };
}
