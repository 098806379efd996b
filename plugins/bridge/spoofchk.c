/* macspoofchk: frames a pod sends with another source MAC dropped, as upstream's pkg/link */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/cni/conf.h"
#include "common/net/link.h"
#include "common/netfilter/nft-list.h"
#include "common/netfilter/nft-rule.h"
#include "common/netfilter/nft.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/bridge/spoofchk.h"

#define TABLE "nat"
#define BASE_CHAIN "PREROUTING"
#define CHAIN_PREFIX "cni-br-iface-"
#define COMMENT_PREFIX "macspoofchk-"

DEFINE_CLEANUP_FUNC(nft_batch_freep, struct nft_batch *, nft_batch_free);
DEFINE_CLEANUP_FUNC(nft_rule_freep, struct nft_rule *, nft_rule_free);

/* The attachment's chains and comment, named after "<container ID>-<ifname>". */
struct names {
	char iface[256];
	char mac[256];
	char comment[NFT_COMMENT_MAX + 1];
};

static int names_of(const char *ref, struct names *n)
{
	if ((size_t)snprintf(n->iface, sizeof(n->iface), CHAIN_PREFIX "%s", ref) >= sizeof(n->iface) ||
	    (size_t)snprintf(n->mac, sizeof(n->mac), "%s-mac", n->iface) >= sizeof(n->mac) ||
	    (size_t)snprintf(n->comment, sizeof(n->comment), COMMENT_PREFIX "%s", ref) >=
		    sizeof(n->comment))
		return -ENAMETOOLONG;
	return 0;
}

static int ref_of(const char *container_id, const char *ifname, char *buf, size_t size)
{
	return (size_t)snprintf(buf, size, "%s-%s", container_id, ifname) < size ? 0 : -ENAMETOOLONG;
}

/* One rule of the attachment: its matches by @fill, its verdict, its comment. */
static int add_rule(struct nft_batch *b, const char *chain, const struct names *n,
		    const char *iifname, const uint8_t *mac, enum nft_verdict v, const char *to)
{
	_cleanup_(nft_rule_freep) struct nft_rule *r = NULL;
	int ret = nft_rule_new(NFT_FAMILY_BRIDGE, &r);

	if (ret >= 0 && iifname)
		ret = nft_match_ifname(r, false, iifname, false);
	if (ret >= 0 && mac)
		ret = nft_match_ether_saddr(r, mac);
	if (ret >= 0)
		ret = nft_verdict(r, v, to);
	if (ret >= 0)
		ret = nft_rule_comment(r, n->comment);
	if (ret >= 0)
		ret = nft_batch_add_rule(b, TABLE, chain, r);
	return ret;
}

int bridge_spoofchk_setup(const char *container_id, const char *ifname, const char *host_veth,
			  const uint8_t mac[6], struct cni_err *err)
{
	const struct nft_chain_spec base = { .name = BASE_CHAIN, .type = "filter",
					     .hook = NFT_HOOK_PREROUTING,
					     .priority = NFT_PRIORITY_BRIDGE_DSTNAT,
					     .policy = NFT_POLICY_ACCEPT };
	_cleanup_(nft_batch_freep) struct nft_batch *b = NULL;
	char ref[256];
	struct names n;
	int r;

	if (ref_of(container_id, ifname, ref, sizeof(ref)) < 0 || names_of(ref, &n) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ENAMETOOLONG,
				   "failed to setup spoof-check: container ID too long for a chain name");
	r = nft_batch_new(&b);
	if (r >= 0)
		r = nft_batch_add_table(b, NFT_FAMILY_BRIDGE, TABLE, NULL);
	if (r >= 0)
		r = nft_batch_add_chain(b, NFT_FAMILY_BRIDGE, TABLE, &base);
	if (r >= 0)
		r = nft_batch_add_chain(b, NFT_FAMILY_BRIDGE, TABLE, &(struct nft_chain_spec){ .name = n.iface });
	if (r >= 0)
		r = nft_batch_add_chain(b, NFT_FAMILY_BRIDGE, TABLE, &(struct nft_chain_spec){ .name = n.mac });
	if (r >= 0)
		r = nft_batch_flush_chain(b, NFT_FAMILY_BRIDGE, TABLE, n.iface);
	if (r >= 0)
		r = nft_batch_flush_chain(b, NFT_FAMILY_BRIDGE, TABLE, n.mac);
	if (r >= 0)
		r = add_rule(b, BASE_CHAIN, &n, host_veth, NULL, NFT_VERDICT_JUMP, n.iface);
	if (r >= 0)
		r = add_rule(b, n.iface, &n, NULL, NULL, NFT_VERDICT_JUMP, n.mac);
	if (r >= 0)
		r = add_rule(b, n.mac, &n, NULL, mac, NFT_VERDICT_RETURN, NULL);
	if (r >= 0)
		r = add_rule(b, n.mac, &n, NULL, NULL, NFT_VERDICT_DROP, NULL);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "failed to setup spoof-check: %s",
				   strerror(-r));
	r = nft_batch_commit(b, err);
	return r < 0 ? cni_err_prefix(err, r, "failed to setup spoof-check") : 0;
}

static bool nft_missing(int r)
{
	return r == -EPROTONOSUPPORT || r == -EOPNOTSUPP || r == -EAFNOSUPPORT;
}

/* Whether a chain exists: seen holding a rule in @l, or asked. */
static int chain_exists(const struct nft_rule_list *l, const char *chain, struct cni_err *err)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].chain, chain) == 0)
			return 1;
	return nft_chain_exists(NFT_FAMILY_BRIDGE, TABLE, chain, err);
}

/* Appends the removal of one attachment's jump rules and chains to @b. */
static int put_teardown(struct nft_batch *b, const struct nft_rule_list *l, const char *ref,
			struct cni_err *err)
{
	struct names n;
	int r;

	if (names_of(ref, &n) < 0)
		return 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct nft_rule_info *ri = &l->v[i];

		if (strcmp(ri->chain, BASE_CHAIN) == 0 && ri->comment && strcmp(ri->comment, n.comment) == 0 &&
		    nft_batch_delete_rule(b, NFT_FAMILY_BRIDGE, TABLE, BASE_CHAIN, ri->handle) < 0)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	/* The chain that jumps first: deleting it drops its jump to the other. */
	if ((r = chain_exists(l, n.iface, err)) > 0)
		r = nft_batch_delete_chain(b, NFT_FAMILY_BRIDGE, TABLE, n.iface);
	if (r >= 0 && (r = chain_exists(l, n.mac, err)) > 0)
		r = nft_batch_delete_chain(b, NFT_FAMILY_BRIDGE, TABLE, n.mac);
	return r < 0 ? r : 0;
}

/* The rules of table bridge nat; none when it is missing, or nftables is. */
static int list(struct nft_rule_list *ret, struct cni_err *err)
{
	struct cni_err quiet = { 0 };
	int r = nft_list_rules(NFT_FAMILY_BRIDGE, TABLE, NULL, ret, &quiet);

	if (r == -ENOENT || nft_missing(r)) {
		*ret = (struct nft_rule_list){ 0 };
		return 0;
	}
	if (r < 0)
		*err = quiet;
	return r;
}

int bridge_spoofchk_teardown(const char *container_id, const char *ifname, struct cni_err *err)
{
	_cleanup_(nft_batch_freep) struct nft_batch *b = NULL;
	struct nft_rule_list l = { 0 };
	char ref[256];
	int r;

	if (ref_of(container_id, ifname, ref, sizeof(ref)) < 0)
		return 0;
	r = list(&l, err);
	if (r < 0)
		return cni_err_prefix(err, r, "failed to teardown spoof-check");
	r = nft_batch_new(&b);
	if (r < 0)
		r = cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	if (r >= 0 && l.n)
		r = put_teardown(b, &l, ref, err);
	nft_rule_list_free(&l);
	if (r >= 0)
		r = nft_batch_commit(b, err);
	return r < 0 ? cni_err_prefix(err, r, "failed to teardown spoof-check") : 0;
}

static bool valid_ref(const char *ref, const struct cni_attachment *valid, size_t n)
{
	char want[256];

	for (size_t i = 0; i < n; i++)
		if (ref_of(valid[i].container_id, valid[i].ifname, want, sizeof(want)) == 0 &&
		    strcmp(ref, want) == 0)
			return true;
	return false;
}

/* A check is this bridge's to collect when its port is gone or on @bridge_ifindex. */
static bool stale(const struct nft_rule_info *ri, int bridge_ifindex)
{
	struct net_link l;
	int r;

	if (!ri->iifname[0])
		return false;
	r = net_link_get_by_name(NULL, ri->iifname, &l);
	return r == -ENODEV || (r == 0 && bridge_ifindex > 0 && l.master_ifindex == bridge_ifindex);
}

/* Whether an earlier PREROUTING rule has the same comment (a repeated ADD's): removed with it. */
static bool seen_before(const struct nft_rule_list *l, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(l->v[j].chain, BASE_CHAIN) == 0 && l->v[j].comment &&
		    strcmp(l->v[j].comment, l->v[i].comment) == 0)
			return true;
	return false;
}

int bridge_spoofchk_gc(const char *bridge, const struct cni_attachment *valid, size_t n,
		       struct cni_err *err)
{
	_cleanup_(nft_batch_freep) struct nft_batch *b = NULL;
	struct nft_rule_list l = { 0 };
	struct net_link br = { 0 };
	int r;

	r = list(&l, err);
	if (r < 0 || l.n == 0)
		return r;
	(void)net_link_get_by_name(NULL, bridge, &br);
	r = nft_batch_new(&b);
	if (r < 0)
		r = cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	for (size_t i = 0; i < l.n && r >= 0; i++) {
		const struct nft_rule_info *ri = &l.v[i];
		const char *ref;

		if (strcmp(ri->chain, BASE_CHAIN) != 0 || !ri->comment ||
		    strncmp(ri->comment, COMMENT_PREFIX, strlen(COMMENT_PREFIX)) != 0)
			continue;
		ref = ri->comment + strlen(COMMENT_PREFIX);
		if (valid_ref(ref, valid, n) || !stale(ri, br.ifindex) || seen_before(&l, i))
			continue;
		log_info("GC: removing the spoof check of %s (port %s)", ref, ri->iifname);
		r = put_teardown(b, &l, ref, err);
	}
	nft_rule_list_free(&l);
	if (r >= 0)
		r = nft_batch_commit(b, err);
	return r < 0 ? cni_err_prefix(err, r, "failed to collect spoof checks") : 0;
}
