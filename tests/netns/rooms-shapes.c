/*
 * What upstream's bandwidth and portmap (nftables) build, built here through the rooms
 * (common/tc, common/netfilter), for tests/netns/rooms-vs-reference.sh to compare with
 * what the reference binaries build. Test code: the plugins themselves are not written
 * yet; this holds their shapes as upstream v1.9.1 has them, to show the rooms suffice.
 *
 * Usage:
 *   rooms-shapes bandwidth HOSTIF IFB IN_RATE IN_BURST OUT_RATE OUT_BURST   (bits, bits/s)
 *   rooms-shapes portmap-nft CID IPV4 PROTO:HOSTPORT:CONTPORT[:HOSTIP]...
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_mirred.h>

#include "common/net/link.h"
#include "common/netfilter/nft-rule.h"
#include "common/netfilter/nft.h"
#include "common/tc/tc.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

/* createTBF() of upstream's ifb_creator.go: bytes, a 25 ms latency. */
static void tbf(int ifindex, unsigned long long rate_bits, unsigned long long burst_bits)
{
	unsigned long long rate = rate_bits / 8, burst = burst_bits / 8;
	struct tc_tbf t = { .rate = rate };
	int r;

	r = tc_ticks((uint32_t)((double)burst * 1000000.0 / (double)rate), &t.buffer);
	if (r < 0)
		DIE("ticks: %s", strerror(-r));
	t.limit = (uint32_t)((double)rate * 25000.0 / 1000000.0) + (uint32_t)burst;
	r = tc_qdisc_add_tbf(NULL, ifindex, &t);
	if (r < 0)
		DIE("tbf: %s", strerror(-r));
}

static int bandwidth(char **argv)
{
	struct net_link host, ifb;
	int r;

	if (net_link_get_by_name(NULL, argv[0], &host) < 0)
		DIE("no %s", argv[0]);
	tbf(host.ifindex, strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
	r = tc_ifb_create(NULL, argv[1], host.mtu);
	if (r < 0 || net_link_get_by_name(NULL, argv[1], &ifb) < 0)
		DIE("ifb: %s", strerror(-r));
	r = tc_qdisc_add_ingress(NULL, host.ifindex);
	if (r < 0)
		DIE("ingress: %s", strerror(-r));
	{
		const struct tc_redirect_action acts[] = {
			{ .eaction = TCA_EGRESS_REDIR, .action = TC_ACT_STOLEN, .ifindex = ifb.ifindex },
			{ .eaction = TCA_EGRESS_REDIR, .action = TC_ACT_OK, .ifindex = ifb.ifindex },
		};

		r = tc_filter_add_redirect(NULL, host.ifindex, TC_HANDLE(0xffff, 0), 1, TC_HANDLE(1, 1),
					   acts, 2);
	}
	if (r < 0)
		DIE("filter: %s", strerror(-r));
	tbf(ifb.ifindex, strtoull(argv[4], NULL, 10), strtoull(argv[5], NULL, 10));
	return 0;
}

#define T "cni_hostport"

static void add_rule(struct nft_batch *b, const char *chain, struct nft_rule *r)
{
	if (nft_batch_add_rule(b, T, chain, r) < 0)
		DIE("rule in %s", chain);
	nft_rule_free(r);
}

static struct nft_rule *rule(void)
{
	struct nft_rule *r;

	if (nft_rule_new(NFT_FAMILY_IP, &r) < 0)
		DIE("oom");
	return r;
}

/* forwardPorts() of upstream's portmap_nftables.go, IPv4, SNAT on, no conditions. */
static int portmap_nft(int argc, char **argv)
{
	const char *cid = argv[0];
	struct ip_prefix c, lo, hip;
	struct cni_err err = { 0 };
	struct nft_batch *b;
	struct nft_rule *r;
	int ret = 0;

	if (ip_addr_parse(argv[1], &c.addr) < 0 || ip_prefix_parse("127.0.0.1/32", &lo) < 0)
		DIE("address");
	c.len = 32;
	if (nft_batch_new(&b) < 0)
		DIE("oom");
	ret |= nft_batch_add_table(b, NFT_FAMILY_IP, T, "CNI portmap plugin");
	ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, T, &(struct nft_chain_spec){ .name = "hostports", .policy = -1 });
	ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, T, &(struct nft_chain_spec){ .name = "hostip_hostports", .policy = -1 });
	ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, T, &(struct nft_chain_spec){ .name = "hostports_all", .policy = -1 });
	ret |= nft_batch_flush_chain(b, NFT_FAMILY_IP, T, "hostports_all");
	r = rule();
	ret |= nft_verdict(r, NFT_VERDICT_JUMP, "hostip_hostports");
	add_rule(b, "hostports_all", r);
	r = rule();
	ret |= nft_verdict(r, NFT_VERDICT_JUMP, "hostports");
	add_rule(b, "hostports_all", r);
	for (int hook = 0; hook < 2; hook++) {
		const char *name = hook ? "output" : "prerouting";

		ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, T, &(struct nft_chain_spec){
			.name = name, .type = "nat", .hook = hook ? NFT_HOOK_OUTPUT : NFT_HOOK_PREROUTING,
			.priority = NFT_PRIORITY_DSTNAT, .policy = -1 });
		ret |= nft_batch_flush_chain(b, NFT_FAMILY_IP, T, name);
		r = rule();
		ret |= nft_match_daddr_local(r) | nft_verdict(r, NFT_VERDICT_JUMP, "hostports_all");
		add_rule(b, name, r);
	}
	ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, T, &(struct nft_chain_spec){
		.name = "masquerading", .type = "nat", .hook = NFT_HOOK_POSTROUTING,
		.priority = NFT_PRIORITY_SRCNAT, .policy = -1 });
	for (int i = 2; i < argc; i++) {
		char proto[8] = "", host_ip[64] = "";
		unsigned int hp = 0, cp = 0;

		if (sscanf(argv[i], "%7[a-z]:%u:%u:%63s", proto, &hp, &cp, host_ip) < 3)
			DIE("mapping %s", argv[i]);
		r = rule();
		if (*host_ip) {
			if (ip_addr_parse(host_ip, &hip.addr) < 0)
				DIE("host IP");
			hip.len = 32;
			ret |= nft_match_addr(r, true, &hip, false);
		}
		ret |= nft_match_port(r, strcmp(proto, "udp") == 0 ? IPPROTO_UDP : IPPROTO_TCP, true,
				      (uint16_t)hp);
		ret |= nft_nat(r, true, &c.addr, (uint16_t)cp) | nft_rule_comment(r, cid);
		add_rule(b, "hostports", r);
	}
	r = rule();
	ret |= nft_match_addr(r, false, &c, false) | nft_match_addr(r, true, &c, false) |
	       nft_masquerade(r, false) | nft_rule_comment(r, cid);
	add_rule(b, "masquerading", r);
	r = rule();
	ret |= nft_match_addr(r, false, &lo, false) | nft_match_addr(r, true, &c, false) |
	       nft_masquerade(r, false) | nft_rule_comment(r, cid);
	add_rule(b, "masquerading", r);
	if (ret)
		DIE("building the batch");
	ret = nft_batch_commit(b, &err);
	nft_batch_free(b);
	if (ret < 0)
		DIE("%s", err.msg);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 8 && strcmp(argv[1], "bandwidth") == 0)
		return bandwidth(argv + 2);
	if (argc >= 5 && strcmp(argv[1], "portmap-nft") == 0)
		return portmap_nft(argc - 2, argv + 2);
	DIE("usage: rooms-shapes bandwidth|portmap-nft ...");
}
