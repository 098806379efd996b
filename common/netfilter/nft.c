/* nftables through nfnetlink: tables, chains and rules changed in one atomic batch */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/neterr.h"
#include "common/net/nlsock.h"
#include "common/netfilter/nft-internal.h"
#include "common/netfilter/nft.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"

/* The kernel's longest table, chain and set name, its NUL included. */
#define NAME_MAX_BYTES 256

struct nft_batch {
	struct nl_msg **msgs;
	char **what;          /* each change as nft would write it, for the error */
	size_t n, cap;
	struct nl_sock *sk;   /* of the last commit, closed by nft_batch_free() */
};

int nft_batch_new(struct nft_batch **ret)
{
	struct nft_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	*ret = b;
	return 0;
}

void nft_batch_free(struct nft_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		nlmsg_free(b->msgs[i]);
		free(b->what[i]);
	}
	free(b->msgs);
	free(b->what);
	nl_socket_free(b->sk);
	free(b);
}

static const char *family_name(enum nft_family f)
{
	switch (f) {
	case NFT_FAMILY_INET:
		return "inet";
	case NFT_FAMILY_IP:
		return "ip";
	case NFT_FAMILY_IP6:
		return "ip6";
	case NFT_FAMILY_BRIDGE:
		return "bridge";
	}
	return "?";
}

static bool name_ok(const char *s)
{
	return s && *s && strlen(s) < NAME_MAX_BYTES;
}

/* A message of the batch: its netlink and nfnetlink headers, described for errors. */
static int batch_msg(struct nft_batch *b, uint16_t type, uint16_t flags, enum nft_family family,
		     struct nl_msg **ret, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int batch_msg(struct nft_batch *b, uint16_t type, uint16_t flags, enum nft_family family,
		     struct nl_msg **ret, const char *fmt, ...)
{
	struct nfgenmsg g = { .nfgen_family = (uint8_t)family, .version = NFNETLINK_V0 };
	_cleanup_(nlmsg_freep) struct nl_msg *m = NULL;
	_cleanup_free_ char *what = NULL;
	va_list ap;
	int r;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 8;
		struct nl_msg **msgs = reallocarray(b->msgs, cap, sizeof(*msgs));
		char **whats;

		if (!msgs)
			return -ENOMEM;
		b->msgs = msgs;
		whats = reallocarray(b->what, cap, sizeof(*whats));
		if (!whats)
			return -ENOMEM;
		b->what = whats;
		b->cap = cap;
	}
	va_start(ap, fmt);
	r = vasprintf(&what, fmt, ap);
	va_end(ap);
	if (r < 0) {
		what = NULL;
		return -ENOMEM;
	}
	r = nlsock_msg_new((uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | type), flags, &g, sizeof(g), &m);
	if (r < 0)
		return r;
	b->msgs[b->n] = TAKE_PTR(m);
	b->what[b->n] = TAKE_PTR(what);
	*ret = b->msgs[b->n++];
	return 0;
}

/* The last message, taken back when filling it failed. */
static int batch_drop_last(struct nft_batch *b, int r)
{
	b->n--;
	nlmsg_free(b->msgs[b->n]);
	free(b->what[b->n]);
	return r;
}

static int put_comment(struct nl_msg *m, int type, const char *comment)
{
	uint8_t udata[NFT_COMMENT_MAX + 3];

	return nla_put(m, type, (int)nft_udata_comment(comment, udata), udata);
}

int nft_batch_add_table(struct nft_batch *b, enum nft_family family, const char *name,
			const char *comment)
{
	struct nl_msg *m;
	int r;

	if (!name_ok(name) || (comment && strlen(comment) > NFT_COMMENT_MAX))
		return -EINVAL;
	r = batch_msg(b, NFT_MSG_NEWTABLE, NLM_F_CREATE, family, &m, "add table %s %s",
		      family_name(family), name);
	if (r < 0)
		return r;
	if (nla_put_string(m, NFTA_TABLE_NAME, name) < 0 || nla_put_u32(m, NFTA_TABLE_FLAGS, 0) < 0 ||
	    (comment && put_comment(m, NFTA_TABLE_USERDATA, comment) < 0))
		return batch_drop_last(b, -ENOMEM);
	return 0;
}

int nft_batch_delete_table(struct nft_batch *b, enum nft_family family, const char *name)
{
	struct nl_msg *m;
	int r;

	if (!name_ok(name))
		return -EINVAL;
	r = batch_msg(b, NFT_MSG_DELTABLE, 0, family, &m, "delete table %s %s", family_name(family),
		      name);
	if (r < 0)
		return r;
	if (nla_put_string(m, NFTA_TABLE_NAME, name) < 0)
		return batch_drop_last(b, -ENOMEM);
	return 0;
}

int nft_batch_add_chain(struct nft_batch *b, enum nft_family family, const char *table,
			const struct nft_chain_spec *c)
{
	struct nlattr *hook;
	struct nl_msg *m;
	int r;

	if (!name_ok(table) || !name_ok(c->name) || (c->type && !*c->type) ||
	    (c->comment && strlen(c->comment) > NFT_COMMENT_MAX) ||
	    (!c->type && c->policy != NFT_POLICY_NONE))
		return -EINVAL;
	r = batch_msg(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE, family, &m, "add chain %s %s %s",
		      family_name(family), table, c->name);
	if (r < 0)
		return r;
	/* The order nft puts them in. */
	r = nla_put_string(m, NFTA_CHAIN_TABLE, table);
	if (r >= 0)
		r = nla_put_string(m, NFTA_CHAIN_NAME, c->name);
	if (r >= 0 && c->comment)
		r = put_comment(m, NFTA_CHAIN_USERDATA, c->comment);
	if (r >= 0 && c->type) {
		r = nla_put_string(m, NFTA_CHAIN_TYPE, c->type);
		if (r >= 0 && c->policy != NFT_POLICY_NONE)
			r = nla_put_u32(m, NFTA_CHAIN_POLICY,
					htonl(c->policy == NFT_POLICY_DROP ? NF_DROP : NF_ACCEPT));
		hook = r < 0 ? NULL : nla_nest_start(m, NLA_F_NESTED | NFTA_CHAIN_HOOK);
		r = hook ? nla_put_u32(m, NFTA_HOOK_HOOKNUM, htonl(c->hook)) : -1;
		if (r >= 0)
			r = nla_put_u32(m, NFTA_HOOK_PRIORITY, htonl((uint32_t)c->priority));
		if (r >= 0)
			r = nla_nest_end(m, hook);
	}
	return r < 0 ? batch_drop_last(b, -ENOMEM) : 0;
}

/* A chain named in a rule message: flush (no handle) or delete (a handle). */
static int rule_del(struct nft_batch *b, enum nft_family family, const char *table,
		    const char *chain, const uint64_t *handle)
{
	struct nl_msg *m;
	int r;

	if (!name_ok(table) || !name_ok(chain))
		return -EINVAL;
	if (handle)
		r = batch_msg(b, NFT_MSG_DELRULE, 0, family, &m, "delete rule %s %s %s handle %llu",
			      family_name(family), table, chain, (unsigned long long)*handle);
	else
		r = batch_msg(b, NFT_MSG_DELRULE, 0, family, &m, "flush chain %s %s %s",
			      family_name(family), table, chain);
	if (r < 0)
		return r;
	r = nla_put_string(m, NFTA_RULE_TABLE, table);
	if (r >= 0)
		r = nla_put_string(m, NFTA_RULE_CHAIN, chain);
	if (r >= 0 && handle)
		r = nla_put_u64(m, NFTA_RULE_HANDLE, htobe64(*handle));
	return r < 0 ? batch_drop_last(b, -ENOMEM) : 0;
}

int nft_batch_flush_chain(struct nft_batch *b, enum nft_family family, const char *table,
			  const char *chain)
{
	return rule_del(b, family, table, chain, NULL);
}

int nft_batch_delete_rule(struct nft_batch *b, enum nft_family family, const char *table,
			  const char *chain, uint64_t handle)
{
	return rule_del(b, family, table, chain, &handle);
}

int nft_batch_delete_chain(struct nft_batch *b, enum nft_family family, const char *table,
			   const char *chain)
{
	struct nl_msg *m;
	int r;

	if (!name_ok(table) || !name_ok(chain))
		return -EINVAL;
	r = batch_msg(b, NFT_MSG_DELCHAIN, 0, family, &m, "delete chain %s %s %s",
		      family_name(family), table, chain);
	if (r < 0)
		return r;
	r = nla_put_string(m, NFTA_CHAIN_TABLE, table);
	if (r >= 0)
		r = nla_put_string(m, NFTA_CHAIN_NAME, chain);
	return r < 0 ? batch_drop_last(b, -ENOMEM) : 0;
}

int nft_batch_add_rule(struct nft_batch *b, const char *table, const char *chain,
		       const struct nft_rule *rule)
{
	const struct nlmsghdr *eh = nlmsg_hdr(rule->exprs);
	struct nl_msg *m;
	int r;

	if (!name_ok(table) || !name_ok(chain) || nlmsg_datalen(eh) == 0)
		return -EINVAL;
	r = batch_msg(b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND, rule->family, &m,
		      "add rule %s %s %s", family_name(rule->family), table, chain);
	if (r < 0)
		return r;
	r = nla_put_string(m, NFTA_RULE_TABLE, table);
	if (r >= 0)
		r = nla_put_string(m, NFTA_RULE_CHAIN, chain);
	if (r >= 0)
		r = nla_put(m, NLA_F_NESTED | NFTA_RULE_EXPRESSIONS, nlmsg_datalen(eh), nlmsg_data(eh));
	if (r >= 0 && rule->has_comment)
		r = put_comment(m, NFTA_RULE_USERDATA, rule->comment);
	return r < 0 ? batch_drop_last(b, -ENOMEM) : 0;
}

/* The batch's opening or closing message: for the nf_tables subsystem, no answer asked. */
static int batch_edge(uint16_t type, struct nl_msg **ret)
{
	struct nfgenmsg g = { .nfgen_family = AF_UNSPEC, .version = NFNETLINK_V0,
			      .res_id = htons(NFNL_SUBSYS_NFTABLES) };
	struct nl_msg *m = nlmsg_alloc_simple(type, NLM_F_REQUEST);

	if (!m || nlmsg_append(m, &g, sizeof(g), NLMSG_ALIGNTO) < 0) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

int nft_batch_commit(struct nft_batch *b, struct cni_err *err)
{
	_cleanup_(nlmsg_freep) struct nl_msg *begin = NULL, *end = NULL;
	_cleanup_free_ struct nl_msg **all = NULL;
	size_t failed;
	int r;

	if (b->n == 0)
		return 0;
	all = calloc(b->n + 2, sizeof(*all));
	if (!all)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = batch_edge(NFNL_MSG_BATCH_BEGIN, &begin);
	if (r >= 0)
		r = batch_edge(NFNL_MSG_BATCH_END, &end);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	all[0] = begin;
	memcpy(all + 1, b->msgs, b->n * sizeof(*all));
	all[b->n + 1] = end;
	nl_socket_free(b->sk);
	b->sk = NULL;
	r = nlsock_open(NETLINK_NETFILTER, &b->sk);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "nftables: cannot open a netlink socket: %s",
				   strerror(-r));
	net_ack_clear();
	r = nlsock_batch(b->sk, all, b->n + 2, &failed);
	if (r < 0 && failed >= 1 && failed <= b->n)
		return net_err_set(err, CNI_ERR_KERNEL, r, "nftables: %s: %s", b->what[failed - 1],
				   strerror(-r));
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r,
				   "nftables: the batch of %zu changes (%s, ...) failed: %s", b->n,
				   b->what[0], strerror(-r));
	return 0;
}
