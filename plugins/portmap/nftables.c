/* portmap's nftables backend: upstream's cni_hostport tables, one rule per mapping */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/netfilter/nft-list.h"
#include "common/netfilter/nft-rule.h"
#include "common/netfilter/nft.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "plugins/portmap/conditions.h"
#include "plugins/portmap/config.h"
#include "plugins/portmap/nftables.h"

#define T PORTMAP_NFT_TABLE
/* Upstream's chains: hostip_hostports is no longer written, kept so that upgrades see it. */
#define HOSTPORTS "hostports"
#define HOSTIP_HOSTPORTS "hostip_hostports"
#define HOSTPORTS_ALL "hostports_all"
#define MASQUERADING "masquerading"

DEFINE_CLEANUP_FUNC(nft_rule_freep, struct nft_rule *, nft_rule_free);
DEFINE_CLEANUP_FUNC(nft_batch_freep, struct nft_batch *, nft_batch_free);

static int oom(struct cni_err *err)
{
	return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
}

/* A rule built by @fill(@data), appended to @chain; any failure but a refused condition is memory. */
static int add(struct nft_batch *b, enum nft_family fam, const char *chain,
	       int (*fill)(struct nft_rule *r, const void *data, struct cni_err *err),
	       const void *data, struct cni_err *err)
{
	_cleanup_(nft_rule_freep) struct nft_rule *r = NULL;
	int ret;

	if (nft_rule_new(fam, &r) < 0)
		return oom(err);
	ret = fill(r, data, err);
	if (ret < 0)
		return err->code ? ret : oom(err);
	return nft_batch_add_rule(b, T, chain, r) < 0 ? oom(err) : 0;
}

struct jump {
	const struct portmap_conditions *cond;
	const char *key, *to;
};

/* "CONDITIONS fib daddr type local jump hostports_all", or a plain jump. */
static int fill_jump(struct nft_rule *r, const void *data, struct cni_err *err)
{
	const struct jump *j = data;
	int ret = 0;

	if (j->cond) {
		ret = portmap_nft_conditions(r, j->cond, j->key, err);
		if (ret >= 0)
			ret = nft_match_daddr_local(r);
	}
	return ret < 0 ? ret : nft_verdict(r, NFT_VERDICT_JUMP, j->to);
}

struct dnat {
	const struct portmap_mapping *m;
	const struct ip_addr *to;
	const char *cid;
};

/* "[ip daddr H] PROTO dport P dnat to C:PORT comment CID" */
static int fill_dnat(struct nft_rule *r, const void *data, struct cni_err *err)
{
	const struct dnat *d = data;
	int ret = 0;

	(void)err;
	if (d->m->has_host_ip) {
		struct ip_prefix h = { .addr = d->m->host_ip,
				       .len = (unsigned int)ip_addr_size(&d->m->host_ip) * 8 };

		ret = nft_match_addr(r, true, &h, false);
	}
	if (ret >= 0)
		ret = nft_match_port(r, d->m->proto, true, d->m->host_port);
	if (ret >= 0)
		ret = nft_nat(r, true, d->to, d->m->container_port);
	return ret < 0 ? ret : nft_rule_comment(r, d->cid);
}

struct masq {
	const struct ip_addr *from, *to;
	const char *cid;
};

/* "ip saddr S ip daddr C masquerade comment CID" */
static int fill_masq(struct nft_rule *r, const void *data, struct cni_err *err)
{
	const struct masq *m = data;
	struct ip_prefix s = { .addr = *m->from, .len = (unsigned int)ip_addr_size(m->from) * 8 };
	struct ip_prefix d = { .addr = *m->to, .len = (unsigned int)ip_addr_size(m->to) * 8 };
	int ret = nft_match_addr(r, false, &s, false);

	(void)err;
	if (ret >= 0)
		ret = nft_match_addr(r, true, &d, false);
	if (ret >= 0)
		ret = nft_masquerade(r, false);
	return ret < 0 ? ret : nft_rule_comment(r, m->cid);
}

/* forwardPorts() of upstream's portmap_nftables.go, for one family. */
static int forward(struct nft_batch *b, const struct portmap_conf *c, bool v6, const char *cid,
		   struct cni_err *err)
{
	enum nft_family fam = v6 ? NFT_FAMILY_IP6 : NFT_FAMILY_IP;
	const struct ip_addr *ip = v6 ? &c->ip6.addr : &c->ip4.addr;
	const struct portmap_conditions *cond = v6 ? &c->cond6 : &c->cond4;
	const char *key = v6 ? "conditionsV6" : "conditionsV4";
	struct ip_addr lo;
	int r;

	r = nft_batch_add_table(b, fam, T, "CNI portmap plugin");
	for (size_t i = 0; r >= 0 && i < 3; i++) {
		static const char *const regular[] = { HOSTPORTS, HOSTIP_HOSTPORTS, HOSTPORTS_ALL };

		r = nft_batch_add_chain(b, fam, T, &(struct nft_chain_spec){ .name = regular[i] });
	}
	if (r >= 0)
		r = nft_batch_flush_chain(b, fam, T, HOSTPORTS_ALL);
	if (r < 0)
		return oom(err);
	if ((r = add(b, fam, HOSTPORTS_ALL, fill_jump, &(struct jump){ .to = HOSTIP_HOSTPORTS },
		     err)) < 0 ||
	    (r = add(b, fam, HOSTPORTS_ALL, fill_jump, &(struct jump){ .to = HOSTPORTS }, err)) < 0)
		return r;
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "output" : "prerouting";
		const struct nft_chain_spec spec = {
			.name = name, .type = "nat", .priority = NFT_PRIORITY_DSTNAT,
			.hook = i ? NFT_HOOK_OUTPUT : NFT_HOOK_PREROUTING,
		};

		if (nft_batch_add_chain(b, fam, T, &spec) < 0 ||
		    nft_batch_flush_chain(b, fam, T, name) < 0)
			return oom(err);
		r = add(b, fam, name, fill_jump,
			&(struct jump){ .cond = cond, .key = key, .to = HOSTPORTS_ALL }, err);
		if (r < 0)
			return r;
	}
	if (c->snat && nft_batch_add_chain(b, fam, T, &(struct nft_chain_spec){
			       .name = MASQUERADING, .type = "nat", .hook = NFT_HOOK_POSTROUTING,
			       .priority = NFT_PRIORITY_SRCNAT }) < 0)
		return oom(err);
	for (size_t i = 0; i < c->n_maps; i++) {
		if (!portmap_mapping_in(&c->maps[i], v6))
			continue;
		r = add(b, fam, HOSTPORTS, fill_dnat,
			&(struct dnat){ .m = &c->maps[i], .to = ip, .cid = cid }, err);
		if (r < 0)
			return r;
	}
	if (!c->snat)
		return 0;
	/* Hairpin and localhost traffic to the mapping is masqueraded (upstream's two rules). */
	r = add(b, fam, MASQUERADING, fill_masq, &(struct masq){ .from = ip, .to = ip, .cid = cid },
		err);
	if (r < 0 || v6)
		return r;
	(void)ip_addr_parse("127.0.0.1", &lo);
	return add(b, fam, MASQUERADING, fill_masq,
		   &(struct masq){ .from = &lo, .to = ip, .cid = cid }, err);
}

int portmap_nft_add(const struct portmap_conf *c, const char *cid, struct nft_batch **ret,
		    struct cni_err *err)
{
	_cleanup_(nft_batch_freep) struct nft_batch *b = NULL;
	int r;

	if (nft_batch_new(&b) < 0)
		return oom(err);
	if ((c->has_ip4 && (r = forward(b, c, false, cid, err)) < 0) ||
	    (c->has_ip6 && (r = forward(b, c, true, cid, err)) < 0))
		return r;
	r = nft_batch_commit(b, err);
	if (r < 0)
		return cni_err_prefix(err, r, "unable to set up nftables rules for port mappings");
	*ret = TAKE_PTR(b);
	return 0;
}

/* The rules of a chain carrying @cid: -ENOENT when the table or chain is missing. */
static int count(enum nft_family fam, const char *chain, const char *cid, size_t *ret,
		 struct cni_err *err)
{
	struct nft_rule_list l = { 0 };
	size_t n = 0;
	int r;

	r = nft_list_rules(fam, T, chain, &l, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < l.n; i++)
		n += l.v[i].comment && strcmp(l.v[i].comment, cid) == 0;
	nft_rule_list_free(&l);
	*ret = n;
	return 0;
}

static int check_chain(enum nft_family fam, const char *chain, const char *cid, size_t want,
		       struct cni_err *err)
{
	size_t found = 0;
	int r;

	if (want == 0)
		return 0;
	r = count(fam, chain, cid, &found, err);
	if (r == -ENOENT)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, r, "missing %s table or %s chain (%s)",
				   T, chain, fam == NFT_FAMILY_IP6 ? "ip6" : "ip");
	if (r < 0)
		return r;
	if (found < want)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT,
				   "missing hostport rules in \"%s\" chain (%s: %zu of %zu)", chain,
				   fam == NFT_FAMILY_IP6 ? "ip6" : "ip", found, want);
	return 0;
}

int portmap_nft_check(const struct portmap_conf *c, const char *cid, struct cni_err *err)
{
	for (int v6 = 0; v6 < 2; v6++) {
		enum nft_family fam = v6 ? NFT_FAMILY_IP6 : NFT_FAMILY_IP;
		size_t ports = 0, masq = c->snat ? (v6 ? 1 : 2) : 0;
		int r;

		if (!(v6 ? c->has_ip6 : c->has_ip4))
			continue;
		for (size_t i = 0; i < c->n_maps; i++)
			ports += portmap_mapping_in(&c->maps[i], v6);
		if ((r = check_chain(fam, HOSTPORTS, cid, ports, err)) < 0 ||
		    (r = check_chain(fam, MASQUERADING, cid, masq, err)) < 0)
			return r;
	}
	return 0;
}

/* Deletes in @b the rules of @chain whose comment is @cid; a missing chain has none. */
static int del_chain(struct nft_batch *b, enum nft_family fam, const char *chain, const char *cid,
		     struct cni_err *err)
{
	struct nft_rule_list l = { 0 };
	int r;

	r = nft_list_rules(fam, T, chain, &l, err);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return cni_err_prefix(err, r, "could not list rules in table %s", T);
	for (size_t i = 0; i < l.n && r >= 0; i++)
		if (l.v[i].comment && strcmp(l.v[i].comment, cid) == 0)
			r = nft_batch_delete_rule(b, fam, T, chain, l.v[i].handle);
	nft_rule_list_free(&l);
	return r < 0 ? oom(err) : 0;
}

int portmap_nft_del(const char *cid, struct cni_err *err)
{
	static const char *const chains[] = { HOSTPORTS, HOSTIP_HOSTPORTS, MASQUERADING };
	_cleanup_(nft_batch_freep) struct nft_batch *b = NULL;
	int r;

	if (nft_batch_new(&b) < 0)
		return oom(err);
	/* Both families whatever prevResult says, as upstream. */
	for (int v6 = 0; v6 < 2; v6++)
		for (size_t i = 0; i < ARRAY_SIZE(chains); i++) {
			r = del_chain(b, v6 ? NFT_FAMILY_IP6 : NFT_FAMILY_IP, chains[i], cid, err);
			if (r < 0)
				return r;
		}
	r = nft_batch_commit(b, err);
	return r < 0 ? cni_err_prefix(err, r, "error deleting nftables rules") : 0;
}

int portmap_nft_usable(struct cni_err *err)
{
	int r = nft_chain_exists(NFT_FAMILY_IP, T, NULL, err);

	return r < 0 ? 0 : 1;
}
