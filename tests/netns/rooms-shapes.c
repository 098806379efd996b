/*
 * What upstream's bandwidth and portmap (nftables) build, built here through the rooms
 * (common/tc, common/netfilter), for tests/netns/rooms-vs-reference.sh to compare with
 * what the reference binaries build. Test code: it holds the shapes of the plugins not
 * written yet as upstream v1.9.1 has them, to show the rooms suffice; ipMasq is the
 * room's own masq.c (bridge's, and ptp's to come).
 *
 * Usage:
 *   rooms-shapes bandwidth HOSTIF IFB IN_RATE IN_BURST OUT_RATE OUT_BURST   (bits, bits/s)
 *   rooms-shapes portmap-nft CID IPV4 PROTO:HOSTPORT:CONTPORT[:HOSTIP]...
 *   rooms-shapes portmap-ipt DN_CHAIN NAME CID IPV4/LEN PROTO:HOSTPORT:CONTPORT[:HOSTIP]...
 *     (DN_CHAIN: upstream's hashed chain name, "CNI-DN-" and sha512(NAME CID) cut to 28)
 *   rooms-shapes ipmasq-nft|ipmasq-ipt NETWORK IFNAME CID IP/LEN   (common/netfilter/masq.c)
 */
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_mirred.h>

#include "common/net/link.h"
#include "common/netfilter/iptables.h"
#include "common/netfilter/masq.h"
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
	for (int i = 0; i < 3; i++) {
		static const char *const regular[] = { "hostports", "hostip_hostports", "hostports_all" };

		ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, T,
					   &(struct nft_chain_spec){ .name = regular[i] });
	}
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
			.priority = NFT_PRIORITY_DSTNAT });
		ret |= nft_batch_flush_chain(b, NFT_FAMILY_IP, T, name);
		r = rule();
		ret |= nft_match_daddr_local(r) | nft_verdict(r, NFT_VERDICT_JUMP, "hostports_all");
		add_rule(b, name, r);
	}
	ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, T, &(struct nft_chain_spec){
		.name = "masquerading", .type = "nat", .hook = NFT_HOOK_POSTROUTING,
		.priority = NFT_PRIORITY_SRCNAT });
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

/* chain.setup() of upstream's portmap chain.go: the chain, its rules, the jumps to it. */
static void ipt_setup(const char *name, const char *const *const *rules, size_t n_rules,
		      const char *const *entry_chains, size_t n_entry,
		      const char *const *const *entry_rules, size_t n_entry_rules, bool prepend)
{
	struct cni_err err = { 0 };

	if (ipt_chain_ensure(IPT_IPV4, "nat", name, &err) < 0)
		DIE("%s", err.msg);
	for (size_t i = 0; i < n_rules; i++) {
		size_t n = 0;

		while (rules[i][n])
			n++;
		if (ipt_rule_ensure(IPT_IPV4, "nat", name, false, rules[i], n, &err) < 0)
			DIE("%s", err.msg);
	}
	for (size_t c = 0; c < n_entry; c++)
		for (size_t i = 0; i < n_entry_rules; i++) {
			const char *r[32];
			size_t n = 0;

			while (entry_rules[i][n]) {
				r[n] = entry_rules[i][n];
				n++;
			}
			r[n++] = "-j";
			r[n++] = name;
			if (ipt_rule_ensure(IPT_IPV4, "nat", entry_chains[c], prepend, r, n, &err) < 0)
				DIE("%s", err.msg);
		}
}

/* forwardPorts() of upstream's portmap_iptables.go: IPv4, SNAT, mark bit 13, no conditions. */
static int portmap_ipt(int argc, char **argv)
{
	static const char *const setmark[] = { "-m", "comment", "--comment", "CNI portfwd masquerade mark",
					       "-j", "MARK", "--set-xmark", "0x2000/0x2000", NULL };
	static const char *const masq[] = { "-m", "mark", "--mark", "0x2000/0x2000", "-j", "MASQUERADE", NULL };
	static const char *const masq_entry[] = { "-m", "comment", "--comment",
						  "CNI portfwd requiring masquerade", NULL };
	static const char *const local[] = { "-m", "addrtype", "--dst-type", "LOCAL", NULL };
	static const char *const post[] = { "POSTROUTING" }, *const top[] = { "PREROUTING", "OUTPUT" };
	const char *dn = argv[0], *cidr = argv[3];
	char comment[256], ip[64], ports[2][256] = { "", "" }, texts[64][3][64];
	const char *const *rules[64], *entry[2][16], *const *entries[2];
	const char *const dn_entry_chain[] = { "CNI-HOSTPORT-DNAT" };
	size_t n_rules = 0, n_entries = 0;

	snprintf(comment, sizeof(comment), "dnat name: \"%s\" id: \"%s\"", argv[1], argv[2]);
	snprintf(ip, sizeof(ip), "%.*s", (int)strcspn(cidr, "/"), cidr);
	ipt_setup("CNI-HOSTPORT-SETMARK", (const char *const *const[]){ setmark }, 1, NULL, 0, NULL, 0,
		  false);
	ipt_setup("CNI-HOSTPORT-MASQ", (const char *const *const[]){ masq }, 1, post, 1,
		  (const char *const *const[]){ masq_entry }, 1, true);
	ipt_setup("CNI-HOSTPORT-DNAT", NULL, 0, top, 2, (const char *const *const[]){ local }, 1, false);
	/* The entry rules: one per protocol, in sorted order (tcp before udp), ports joined. */
	for (int i = 4; i < argc; i++) {
		unsigned int hp = 0;
		char proto[8] = "";
		int udp;

		sscanf(argv[i], "%7[a-z]:%u", proto, &hp);
		udp = strcmp(proto, "udp") == 0;
		snprintf(ports[udp] + strlen(ports[udp]), sizeof(ports[udp]) - strlen(ports[udp]), "%s%u",
			 *ports[udp] ? "," : "", hp);
	}
	for (int p = 0; p < 2; p++) {
		if (!*ports[p])
			continue;
		entry[p][0] = "-m"; entry[p][1] = "comment"; entry[p][2] = "--comment"; entry[p][3] = comment;
		entry[p][4] = "-m"; entry[p][5] = "multiport"; entry[p][6] = "-p"; entry[p][7] = p ? "udp" : "tcp";
		entry[p][8] = "--destination-ports"; entry[p][9] = ports[p]; entry[p][10] = NULL;
		entries[n_entries++] = entry[p];
	}
	/* Per mapping: the hairpin mark, the localhost mark, the DNAT. */
	for (int i = 4; i < argc; i++) {
		static const char *rule[64][16];
		char proto[8] = "", host_ip[64] = "";
		unsigned int hp = 0, cp = 0;

		sscanf(argv[i], "%7[a-z]:%u:%u:%63s", proto, &hp, &cp, host_ip);
		for (int k = 0; k < 3; k++) {
			const char **r = rule[n_rules];
			size_t n = 0;

			snprintf(texts[n_rules][0], sizeof(texts[0][0]), "%s", proto);
			snprintf(texts[n_rules][1], sizeof(texts[0][1]), "%u", hp);
			r[n++] = "-p"; r[n++] = texts[n_rules][0]; r[n++] = "--dport"; r[n++] = texts[n_rules][1];
			if (*host_ip) {
				snprintf(texts[n_rules][2], sizeof(texts[0][2]), "%s", host_ip);
				r[n++] = "-d"; r[n++] = texts[n_rules][2];
			}
			if (k == 0) {
				r[n++] = "-s"; r[n++] = cidr; r[n++] = "-j"; r[n++] = "CNI-HOSTPORT-SETMARK";
			} else if (k == 1) {
				r[n++] = "-s"; r[n++] = "127.0.0.1"; r[n++] = "-j"; r[n++] = "CNI-HOSTPORT-SETMARK";
			} else {
				static char dest[64][96];

				snprintf(dest[n_rules], sizeof(dest[0]), "%s:%u", ip, cp);
				r[n++] = "-j"; r[n++] = "DNAT"; r[n++] = "--to-destination"; r[n++] = dest[n_rules];
			}
			r[n] = NULL;
			rules[n_rules] = r;
			n_rules++;
		}
	}
	ipt_setup(dn, rules, n_rules, dn_entry_chain, 1, entries, n_entries, false);
	return 0;
}

/* ipMasq through common/netfilter/masq.c, the room bridge and ptp share: one address. */
static int ipmasq(const char *backend, char **argv)
{
	const struct masq_owner o = { .network = argv[0], .ifname = argv[1], .container_id = argv[2] };
	struct cni_err err = { 0 };
	enum masq_backend b;
	struct ip_prefix a;

	if (masq_backend_parse(backend, &b) < 0 || ip_prefix_parse(argv[3], &a) < 0)
		DIE("backend or prefix");
	if (masq_setup(b, &o, &a, 1, &err) < 0)
		DIE("%s", err.msg);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 8 && strcmp(argv[1], "bandwidth") == 0)
		return bandwidth(argv + 2);
	if (argc >= 5 && strcmp(argv[1], "portmap-nft") == 0)
		return portmap_nft(argc - 2, argv + 2);
	if (argc >= 7 && strcmp(argv[1], "portmap-ipt") == 0)
		return portmap_ipt(argc - 2, argv + 2);
	if (argc == 6 && strcmp(argv[1], "ipmasq-nft") == 0)
		return ipmasq("nftables", argv + 2);
	if (argc == 6 && strcmp(argv[1], "ipmasq-ipt") == 0)
		return ipmasq("iptables", argv + 2);
	DIE("usage: rooms-shapes bandwidth|portmap-nft|portmap-ipt|ipmasq-nft|ipmasq-ipt ...");
}
