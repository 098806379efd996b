/*
 * common/netfilter against the real kernel, in network namespaces of its own.
 *
 * nftables: the tables, chains and rules upstream's ipMasq and portmap make are built
 * here through nfnetlink in one netns, and by Debian's nft from the same commands in a
 * second; "nft list ruleset" must print the same in both. Then rules are found by
 * comment and deleted by handle, and a batch with a failing change must change
 * nothing; conntrack entries deleted by port. iptables: chains and rules through the
 * host's iptables and ip6tables, read back with iptables-save. Exits 77 when namespaces cannot be created (not root).
 */
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/netfilter.h>

#include "common/netfilter/conntrack.h"
#include "common/netfilter/iptables.h"
#include "common/netfilter/nft-list.h"
#include "common/netfilter/nft-rule.h"
#include "common/netfilter/nft.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"

static int n_pass, n_fail;

__attribute__((format(printf, 2, 3)))
static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", n_pass + n_fail + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		n_pass++;
	else
		n_fail++;
	return ok;
}

/* A command's stdout, run in this process's netns. */
static char *output_of(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int c;

	if (!p)
		return strdup("");
	while ((c = fgetc(p)) != EOF) {
		if (len + 2 > cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		buf[len++] = (char)c;
	}
	pclose(p);
	if (!buf)
		return strdup("");
	buf[len] = '\0';
	return buf;
}

static struct ip_prefix P(const char *s)
{
	struct ip_prefix p = { 0 };

	if (ip_prefix_parse(s, &p) < 0)
		abort();
	return p;
}

static struct ip_addr A(const char *s)
{
	struct ip_addr a = { 0 };

	if (ip_addr_parse(s, &a) < 0)
		abort();
	return a;
}

/* The same steps as ours(), as nft commands. */
static const char nft_steps[] =
	"add table inet rmmasq { comment \"Masquerading for plugins\"; }\n"
	"add chain inet rmmasq masq_checks { comment \"Masquerade traffic\"; }\n"
	"add chain inet rmmasq postrouting { type nat hook postrouting priority srcnat; }\n"
	"flush chain inet rmmasq postrouting\n"
	"add rule inet rmmasq postrouting ip daddr 224.0.0.0/4 return\n"
	"add rule inet rmmasq postrouting ip6 daddr ff00::/8 return\n"
	"add rule inet rmmasq postrouting goto masq_checks\n"
	"add rule inet rmmasq masq_checks ip saddr 10.1.0.5 ip daddr != 10.1.0.0/24 masquerade comment \"c1 eth0\"\n"
	"add rule inet rmmasq masq_checks ip6 saddr fd00::5 ip6 daddr != fd00::/64 masquerade comment \"c1 eth0\"\n"
	"add rule inet rmmasq masq_checks ip saddr 10.1.0.6 ip daddr != 10.1.0.0/24 masquerade comment \"c2 eth0\"\n"
	"add table ip rmnat { comment \"CNI portmap plugin\"; }\n"
	"add chain ip rmnat hostports\n"
	"add chain ip rmnat hostports_all\n"
	"add rule ip rmnat hostports_all jump hostports\n"
	"add chain ip rmnat prerouting { type nat hook prerouting priority dstnat; }\n"
	"add rule ip rmnat prerouting fib daddr type local jump hostports_all\n"
	"add chain ip rmnat masquerading { type nat hook postrouting priority srcnat; }\n"
	"add rule ip rmnat hostports tcp dport 8080 dnat to 10.1.0.5:80 comment \"c1\"\n"
	"add rule ip rmnat hostports ip daddr 192.0.2.1 udp dport 53 dnat to 10.1.0.5:5353 comment \"c1\"\n"
	"add rule ip rmnat masquerading ip saddr 127.0.0.1 ip daddr 10.1.0.5 masquerade comment \"c1\"\n"
	"add rule ip rmnat masquerading meta mark & 0x00002000 == 0x00002000 masquerade\n"
	"add chain ip rmnat filtering { type filter hook forward priority 0; policy accept; }\n"
	"add rule ip rmnat filtering ct state established,related accept\n"
	"add rule ip rmnat filtering iifname \"cni0\" oifname != \"cni0\" meta mark set meta mark | 0x00002000\n";

#define OK(expr) check((expr) == 0, "%s", #expr)

static int ours(void)
{
	struct nft_chain_spec masq = { .name = "masq_checks",
				       .comment = "Masquerade traffic" };
	struct nft_chain_spec post = { .name = "postrouting", .type = "nat",
				       .hook = NFT_HOOK_POSTROUTING,
				       .priority = NFT_PRIORITY_SRCNAT };
	struct nft_chain_spec hp = { .name = "hostports" };
	struct nft_chain_spec hpa = { .name = "hostports_all" };
	struct nft_chain_spec pre = { .name = "prerouting", .type = "nat",
				      .hook = NFT_HOOK_PREROUTING,
				      .priority = NFT_PRIORITY_DSTNAT };
	struct nft_chain_spec mq = { .name = "masquerading", .type = "nat",
				     .hook = NFT_HOOK_POSTROUTING,
				     .priority = NFT_PRIORITY_SRCNAT };
	struct nft_chain_spec flt = { .name = "filtering", .type = "filter",
				      .hook = NFT_HOOK_FORWARD, .priority = 0, .policy = NFT_POLICY_ACCEPT };
	struct ip_prefix mc4 = P("224.0.0.0/4"), mc6 = P("ff00::/8"), s1 = P("10.1.0.5/32"),
			 net = P("10.1.0.0/24"), s6 = P("fd00::5/128"), net6 = P("fd00::/64"),
			 s2 = P("10.1.0.6/32"), host = P("192.0.2.1/32"), lo = P("127.0.0.1/32");
	struct ip_addr c1 = A("10.1.0.5");
	struct cni_err err = { 0 };
	struct nft_batch *b = NULL;
	struct nft_rule *r[14] = { 0 };
	int ret = 0;

	for (size_t i = 0; i < 14; i++)
		ret |= nft_rule_new(i < 6 ? NFT_FAMILY_INET : NFT_FAMILY_IP, &r[i]);
	ret |= nft_batch_new(&b);
	ret |= nft_batch_add_table(b, NFT_FAMILY_INET, "rmmasq", "Masquerading for plugins");
	ret |= nft_batch_add_chain(b, NFT_FAMILY_INET, "rmmasq", &masq);
	ret |= nft_batch_add_chain(b, NFT_FAMILY_INET, "rmmasq", &post);
	ret |= nft_batch_flush_chain(b, NFT_FAMILY_INET, "rmmasq", "postrouting");
	ret |= nft_match_addr(r[0], true, &mc4, false) | nft_verdict(r[0], NFT_VERDICT_RETURN, NULL);
	ret |= nft_match_addr(r[1], true, &mc6, false) | nft_verdict(r[1], NFT_VERDICT_RETURN, NULL);
	ret |= nft_verdict(r[2], NFT_VERDICT_GOTO, "masq_checks");
	ret |= nft_match_addr(r[3], false, &s1, false) | nft_match_addr(r[3], true, &net, true) |
	       nft_masquerade(r[3], false) | nft_rule_comment(r[3], "c1 eth0");
	ret |= nft_match_addr(r[4], false, &s6, false) | nft_match_addr(r[4], true, &net6, true) |
	       nft_masquerade(r[4], false) | nft_rule_comment(r[4], "c1 eth0");
	ret |= nft_match_addr(r[5], false, &s2, false) | nft_match_addr(r[5], true, &net, true) |
	       nft_masquerade(r[5], false) | nft_rule_comment(r[5], "c2 eth0");
	for (size_t i = 0; i < 3; i++)
		ret |= nft_batch_add_rule(b, "rmmasq", "postrouting", r[i]);
	for (size_t i = 3; i < 6; i++)
		ret |= nft_batch_add_rule(b, "rmmasq", "masq_checks", r[i]);
	check(ret == 0, "the ipMasq batch is built");
	ret = nft_batch_commit(b, &err);
	check(ret == 0, "the ipMasq batch commits: %d %s %s", ret, err.msg, err.details);
	nft_batch_free(b);

	/* Portmap's shapes, a second batch. */
	ret = nft_batch_new(&b);
	ret |= nft_batch_add_table(b, NFT_FAMILY_IP, "rmnat", "CNI portmap plugin");
	ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, "rmnat", &hp);
	ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, "rmnat", &hpa);
	ret |= nft_verdict(r[6], NFT_VERDICT_JUMP, "hostports");
	ret |= nft_batch_add_rule(b, "rmnat", "hostports_all", r[6]);
	ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, "rmnat", &pre);
	ret |= nft_match_daddr_local(r[7]) | nft_verdict(r[7], NFT_VERDICT_JUMP, "hostports_all");
	ret |= nft_batch_add_rule(b, "rmnat", "prerouting", r[7]);
	ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, "rmnat", &mq);
	ret |= nft_match_port(r[8], IPPROTO_TCP, true, 8080) | nft_nat(r[8], true, &c1, 80) |
	       nft_rule_comment(r[8], "c1");
	ret |= nft_match_addr(r[9], true, &host, false) | nft_match_port(r[9], IPPROTO_UDP, true, 53) |
	       nft_nat(r[9], true, &c1, 5353) | nft_rule_comment(r[9], "c1");
	ret |= nft_batch_add_rule(b, "rmnat", "hostports", r[8]);
	ret |= nft_batch_add_rule(b, "rmnat", "hostports", r[9]);
	ret |= nft_match_addr(r[10], false, &lo, false) | nft_match_addr(r[10], true, &s1, false) |
	       nft_masquerade(r[10], false) | nft_rule_comment(r[10], "c1");
	ret |= nft_batch_add_rule(b, "rmnat", "masquerading", r[10]);
	ret |= nft_match_mark(r[11], 0x2000, 0x2000) | nft_masquerade(r[11], false);
	ret |= nft_batch_add_rule(b, "rmnat", "masquerading", r[11]);
	ret |= nft_batch_add_chain(b, NFT_FAMILY_IP, "rmnat", &flt);
	ret |= nft_match_ct_state(r[12], NFT_CT_ESTABLISHED | NFT_CT_RELATED) |
	       nft_verdict(r[12], NFT_VERDICT_ACCEPT, NULL);
	ret |= nft_batch_add_rule(b, "rmnat", "filtering", r[12]);
	ret |= nft_match_ifname(r[13], false, "cni0", false) | nft_match_ifname(r[13], true, "cni0", true) |
	       nft_set_mark_bits(r[13], 0x2000);
	ret |= nft_batch_add_rule(b, "rmnat", "filtering", r[13]);
	check(ret == 0, "the portmap batch is built");
	err = (struct cni_err){ 0 };
	ret = nft_batch_commit(b, &err);
	check(ret == 0, "the portmap batch commits: %d %s %s", ret, err.msg, err.details);
	nft_batch_free(b);
	for (size_t i = 0; i < 14; i++)
		nft_rule_free(r[i]);
	return 0;
}

static void test_nft_same_as_nft(void)
{
	_cleanup_free_ char *mine = NULL, *theirs = NULL;
	FILE *p;

	ours();
	/* Twice: "add" of what exists changes nothing, the flush empties postrouting first. */
	mine = output_of("nft list ruleset 2>&1");
	check(strstr(mine, "masquerade comment \"c2 eth0\"") != NULL, "our ruleset holds the rules:\n%s", mine);
	if (unshare(CLONE_NEWNET) < 0) {
		check(false, "a second netns: %s", strerror(errno));
		return;
	}
	p = popen("nft -f -", "w");
	if (!p || fputs(nft_steps, p) < 0 || pclose(p) != 0) {
		check(false, "nft runs the same steps");
		return;
	}
	theirs = output_of("nft list ruleset 2>&1");
	check(strcmp(mine, theirs) == 0, "nft list ruleset: ours equals nft's\n--- ours\n%s--- nft's\n%s",
	      mine, theirs);
}

static void test_nft_find_and_delete(void)
{
	struct nft_rule_list l = { 0 };
	struct cni_err err = { 0 };
	struct nft_batch *b;
	size_t found = 0;
	int r;

	r = nft_list_rules(NFT_FAMILY_INET, "rmmasq", "masq_checks", &l, &err);
	check(r == 0 && l.n == 3, "masq_checks lists 3 rules: %d, %zu", r, l.n);
	nft_batch_new(&b);
	for (size_t i = 0; i < l.n; i++) {
		if (!l.v[i].comment || strcmp(l.v[i].comment, "c1 eth0") != 0)
			continue;
		found++;
		nft_batch_delete_rule(b, NFT_FAMILY_INET, "rmmasq", l.v[i].chain, l.v[i].handle);
	}
	check(found == 2, "2 of them carry c1's comment: %zu", found);
	nft_rule_list_free(&l);
	r = nft_batch_commit(b, &err);
	check(r == 0, "deleting them by handle: %d %s", r, err.msg);
	nft_batch_free(b);
	r = nft_list_rules(NFT_FAMILY_INET, "rmmasq", NULL, &l, &err);
	found = 0;
	for (size_t i = 0; r == 0 && i < l.n; i++)
		found += l.v[i].comment && strcmp(l.v[i].comment, "c2 eth0") == 0 &&
			 strcmp(l.v[i].chain, "masq_checks") == 0;
	check(r == 0 && l.n == 4 && found == 1, "the table holds 4 rules, one c2's in masq_checks: "
	      "%d %zu %zu", r, l.n, found);
	nft_rule_list_free(&l);
	r = nft_list_rules(NFT_FAMILY_INET, "rmmasq", "nochain", &l, &err);
	check(r == -ENOENT, "a missing chain lists as -ENOENT: %d", r);
	r = nft_list_rules(NFT_FAMILY_IP6, "rmmasq", NULL, &l, &err);
	check(r == -ENOENT, "a missing table lists as -ENOENT: %d", r);
	check(nft_chain_exists(NFT_FAMILY_IP, "rmnat", "hostports", &err) == 1, "hostports exists");
	check(nft_chain_exists(NFT_FAMILY_IP, "rmnat", NULL, &err) == 1, "rmnat exists");
	check(nft_chain_exists(NFT_FAMILY_IP, "rmnone", NULL, &err) == 0, "rmnone does not");
}

/* A batch whose last change fails leaves nothing of its first. */
static void test_nft_all_or_nothing(void)
{
	struct cni_err err = { 0 };
	struct nft_batch *b;
	int r;

	nft_batch_new(&b);
	nft_batch_add_table(b, NFT_FAMILY_IP, "rmatomic", NULL);
	nft_batch_flush_chain(b, NFT_FAMILY_IP, "rmatomic", "missing");
	r = nft_batch_commit(b, &err);
	nft_batch_free(b);
	check(r == -ENOENT, "flushing a missing chain fails the batch: %d", r);
	check(strstr(err.msg, "flush chain ip rmatomic missing") != NULL, "the error names it: %s",
	      err.msg);
	check(nft_chain_exists(NFT_FAMILY_IP, "rmatomic", NULL, &err) == 0,
	      "the table the batch added first is not there");
	/* Deleting the whole table works, and a second delete is -ENOENT. */
	nft_batch_new(&b);
	nft_batch_delete_table(b, NFT_FAMILY_IP, "rmnat");
	r = nft_batch_commit(b, &err);
	check(r == 0, "delete table: %d", r);
	err = (struct cni_err){ 0 };
	r = nft_batch_commit(b, &err);
	check(r == -ENOENT, "delete it again: %d", r);
	nft_batch_free(b);
}

static void test_iptables(void)
{
	const char *rule[] = { "-s", "10.1.0.5", "-j", "RMTEST", "-m", "comment", "--comment", "rm c1" };
	const char *masq[] = { "!", "-d", "224.0.0.0/4", "-j", "MASQUERADE" };
	struct cni_err err = { 0 };
	_cleanup_free_ char *save = NULL, *list = NULL;
	int r;

	check(ipt_chain_exists(IPT_IPV4, "nat", "RMTEST", &err) == 0, "no RMTEST chain yet");
	check(ipt_chain_ensure(IPT_IPV4, "nat", "RMTEST", &err) == 0, "RMTEST made");
	check(ipt_chain_ensure(IPT_IPV4, "nat", "RMTEST", &err) == 0, "and made again: %s", err.msg);
	check(ipt_chain_exists(IPT_IPV4, "nat", "RMTEST", &err) == 1, "RMTEST exists");
	check(ipt_rule_ensure(IPT_IPV4, "nat", "RMTEST", false, masq, 5, &err) == 0, "masquerade rule");
	check(ipt_rule_ensure(IPT_IPV4, "nat", "POSTROUTING", false, rule, 8, &err) == 0, "jump rule");
	check(ipt_rule_ensure(IPT_IPV4, "nat", "POSTROUTING", true, rule, 8, &err) == 0, "not twice");
	check(ipt_rule_exists(IPT_IPV4, "nat", "POSTROUTING", rule, 8, &err) == 1, "-C finds it");
	save = output_of("iptables-save -t nat");
	check(strstr(save, "-A POSTROUTING -s 10.1.0.5/32 -m comment --comment \"rm c1\" -j RMTEST\n") &&
	      strstr(save, "-A RMTEST ! -d 224.0.0.0/4 -j MASQUERADE\n") &&
	      !strstr(strstr(save, "-j RMTEST\n") + 1, "-j RMTEST\n"),
	      "iptables-save shows each rule once:\n%s", save);
	r = ipt_list(IPT_IPV4, "nat", "RMTEST", &list, &err);
	check(r == 0 && strcmp(list, "-N RMTEST\n-A RMTEST ! -d 224.0.0.0/4 -j MASQUERADE\n") == 0,
	      "-S RMTEST: %d\n%s", r, list);
	free(TAKE_PTR(list));
	check(ipt_list(IPT_IPV4, "nat", "RMNONE", &list, &err) == -ENOENT, "-S of no chain: -ENOENT");
	check(ipt_rule_delete(IPT_IPV4, "nat", "POSTROUTING", rule, 8, &err) == 0, "rule deleted");
	check(ipt_rule_delete(IPT_IPV4, "nat", "POSTROUTING", rule, 8, &err) == 0, "and again");
	check(ipt_rule_exists(IPT_IPV4, "nat", "POSTROUTING", rule, 8, &err) == 0, "-C misses it");
	check(ipt_chain_clear(IPT_IPV4, "nat", "RMTEST", &err) == 0, "RMTEST flushed");
	check(ipt_rule_exists(IPT_IPV4, "nat", "RMTEST", masq, 5, &err) == 0, "RMTEST is empty");
	check(ipt_chain_delete(IPT_IPV4, "nat", "RMTEST", &err) == 0, "RMTEST deleted");
	check(ipt_chain_delete(IPT_IPV4, "nat", "RMTEST", &err) == 0, "and again");
	check(ipt_chain_exists(IPT_IPV4, "nat", "RMTEST", &err) == 0, "RMTEST is gone");
	check(ipt_chain_clear(IPT_IPV6, "filter", "RMTEST6", &err) == 0, "ip6tables: RMTEST6 made");
	free(TAKE_PTR(save));
	save = output_of("ip6tables-save -t filter");
	check(strstr(save, ":RMTEST6 - [0:0]\n") != NULL, "ip6tables-save shows it:\n%s", save);
	err = (struct cni_err){ 0 };
	{
		const char *bad[] = { "-j", "NO-SUCH-TARGET-rm" };

		/* As upstream's DeleteRule(), exit status 2 (no such target) counts as deleted. */
		r = ipt_rule_delete(IPT_IPV6, "filter", "RMTEST6", bad, 2, &err);
		check(r == 0, "deleting a jump to no chain: %d %s", r, err.msg);
		r = ipt_rule_ensure(IPT_IPV6, "rmnotable", "RMTEST6", false, bad, 2, &err);
		check(r == -EIO && strstr(err.msg, "ip6tables -t rmnotable -C RMTEST6"),
		      "another failure names the command: %d %s", r, err.msg);
	}
}

/* One UDP datagram from a socket of its own (a conntrack entry of its own) to 127.0.0.1:@port. */
static void udp_to(uint16_t port)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || sendto(fd, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)) != 1)
		check(false, "a datagram to port %u: %s", port, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* Portmap's cleanup after a UDP mapping: the entries of that port, and only those, go. */
static void test_conntrack(void)
{
	struct cni_err err = { 0 };
	size_t n = 99;
	int r;

	/* rmmasq's nat chain has conntrack track this netns' packets. */
	if (system("ip link set lo up") != 0) {
		check(false, "lo up");
		return;
	}
	udp_to(5301);
	udp_to(5301);
	udp_to(5302);
	r = ct_delete_dports(AF_INET, IPPROTO_TCP, (const uint16_t[]){ 5301 }, 1, &n, &err);
	check(r == 0 && n == 0, "no TCP entry of port 5301: %d %zu %s", r, n, err.msg);
	r = ct_delete_dports(AF_INET6, IPPROTO_UDP, (const uint16_t[]){ 5301 }, 1, &n, &err);
	check(r == 0 && n == 0, "no IPv6 entry of port 5301: %d %zu", r, n);
	r = ct_delete_dports(AF_INET, IPPROTO_UDP, (const uint16_t[]){ 5301 }, 1, &n, &err);
	check(r == 0 && n == 2, "the 2 UDP entries of port 5301 deleted: %d %zu %s", r, n, err.msg);
	r = ct_delete_dports(AF_INET, IPPROTO_UDP, (const uint16_t[]){ 5301 }, 1, &n, &err);
	check(r == 0 && n == 0, "none left: %d %zu", r, n);
	r = ct_delete_dports(AF_INET, IPPROTO_UDP, (const uint16_t[]){ 5302 }, 1, &n, &err);
	check(r == 0 && n == 1, "port 5302's entry was kept until now: %d %zu", r, n);
	check(ct_delete_dports(AF_INET, IPPROTO_ICMP, (const uint16_t[]){ 1 }, 1, &n, &err) == -EINVAL, "ICMP refused");
}

int main(void)
{
	if (unshare(CLONE_NEWNET) < 0) {
		printf("1..0 # SKIP cannot create a network namespace: %s\n", strerror(errno));
		return 77;
	}
	test_iptables();
	/* The nftables tests in a netns of their own: iptables-nft's tables are not theirs. */
	if (unshare(CLONE_NEWNET) < 0) {
		check(false, "a netns for nftables: %s", strerror(errno));
		return 1;
	}
	test_nft_same_as_nft();
	/* The second netns (nft's) has what ours had: go on in it. */
	test_nft_find_and_delete();
	test_nft_all_or_nothing();
	test_conntrack();
	printf("1..%d\n", n_pass + n_fail);
	return n_fail ? 1 : 0;
}
