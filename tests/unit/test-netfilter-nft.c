/*
 * Unit tests: common/netfilter's nftables messages against nft's own, and iptables'
 * command lines against go-iptables'.
 *
 * tests/unit/golden/nft holds what Debian's nft 1.0.6 sends for each command
 * (tests/unit/nft-golden.sh, from nft --debug=mnl). The same change built here
 * must give the same message type and the same bytes after the netlink header.
 * nlsock_open() and nlsock_batch() are replaced by the linker (-Wl,--wrap), so
 * the batch's messages are caught instead of sent.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <netlink/msg.h>
#include <netlink/socket.h>

#include "common/net/nlsock.h"
#include "common/netfilter/chainname.h"
#include "common/netfilter/iptables.h"
#include "common/netfilter/nft-rule.h"
#include "common/netfilter/nft.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"

/* --- the kernel side, faked ------------------------------------------------ */

static uint8_t sent[64][2048];
static size_t sent_len[64], n_sent;
static int batch_result;
static size_t batch_failed;

int __wrap_nlsock_open(int protocol, struct nl_sock **ret);
int __wrap_nlsock_open(int protocol, struct nl_sock **ret)
{
	assert_int_equal(protocol, NETLINK_NETFILTER);
	*ret = nl_socket_alloc();
	return *ret ? 0 : -ENOMEM;
}

int __wrap_nlsock_batch(struct nl_sock *sk, struct nl_msg *const *msgs, size_t n,
			size_t *ret_failed);
int __wrap_nlsock_batch(struct nl_sock *sk, struct nl_msg *const *msgs, size_t n,
			size_t *ret_failed)
{
	(void)sk;
	n_sent = n;
	for (size_t i = 0; i < n; i++) {
		const struct nlmsghdr *h = nlmsg_hdr(msgs[i]);

		assert_true(h->nlmsg_len <= sizeof(sent[i]));
		memcpy(sent[i], h, h->nlmsg_len);
		sent_len[i] = h->nlmsg_len;
	}
	*ret_failed = batch_failed;
	return batch_result;
}

/* --- goldens ----------------------------------------------------------------- */

/* The batch just committed holds one change, equal to the golden message @name. */
static void assert_golden(const char *name)
{
	char path[512], line[8192], *sp;
	const struct nlmsghdr *h = (const void *)sent[1];
	uint8_t want[4096];
	size_t n = 0;
	unsigned int type;
	FILE *f;

	snprintf(path, sizeof(path), "%s/nft/%s.hex", getenv("GOLDEN_DIR"), name);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_int_equal(sscanf(line, "%x", &type), 1);
	sp = strchr(line, ' ');
	assert_non_null(sp);
	for (char *p = sp + 1; p[0] && p[1] && p[0] != '\n'; p += 2) {
		unsigned int byte;

		assert_int_equal(sscanf(p, "%2x", &byte), 1);
		want[n++] = (uint8_t)byte;
	}
	/* The batch's edges, then the change. */
	assert_int_equal(n_sent, 3);
	assert_int_equal(((const struct nlmsghdr *)sent[0])->nlmsg_type, NFNL_MSG_BATCH_BEGIN);
	assert_int_equal(((const struct nlmsghdr *)sent[2])->nlmsg_type, NFNL_MSG_BATCH_END);
	if (h->nlmsg_type != type)
		fail_msg("%s: type %04x, nft sends %04x", name, h->nlmsg_type, type);
	if (sent_len[1] - NLMSG_HDRLEN != n || memcmp(sent[1] + NLMSG_HDRLEN, want, n) != 0) {
		char have[8192] = "";

		for (size_t i = NLMSG_HDRLEN; i < sent_len[1] && 2 * i < sizeof(have); i++)
			sprintf(have + 2 * (i - NLMSG_HDRLEN), "%02x", sent[1][i]);
		fail_msg("%s differs from nft's:\n ours %s\n nft  %s", name, have, sp + 1);
	}
	assert_true(h->nlmsg_flags & NLM_F_REQUEST);
	assert_true(h->nlmsg_flags & NLM_F_ACK);
}

static struct ip_prefix P(const char *s)
{
	struct ip_prefix p;

	assert_int_equal(ip_prefix_parse(s, &p), 0);
	return p;
}

static struct ip_addr A(const char *s)
{
	struct ip_addr a;

	assert_int_equal(ip_addr_parse(s, &a), 0);
	return a;
}

/* Commits a batch of the one change @add puts in it and compares it with golden @name. */
#define ONE_CHANGE(name, add)                                                               \
	do {                                                                                \
		struct nft_batch *b;                                                        \
		struct cni_err err = { 0 };                                                 \
		assert_int_equal(nft_batch_new(&b), 0);                                     \
		assert_int_equal((add), 0);                                                 \
		assert_int_equal(nft_batch_commit(b, &err), 0);                             \
		nft_batch_free(b);                                                          \
		assert_golden(name);                                                        \
	} while (0)

/* Commits one rule @build made (in a rule named r) and compares it with golden @name. */
#define ONE_RULE(name, family, table, chain, build)                                         \
	do {                                                                                \
		struct nft_rule *r;                                                         \
		assert_int_equal(nft_rule_new(family, &r), 0);                              \
		build;                                                                      \
		ONE_CHANGE(name, nft_batch_add_rule(b, table, chain, r));                   \
		nft_rule_free(r);                                                           \
	} while (0)

static void test_tables_and_chains(void **state)
{
	const struct nft_chain_spec post = { .name = "postrouting", .type = "nat",
					     .hook = NFT_HOOK_POSTROUTING,
					     .priority = NFT_PRIORITY_SRCNAT };
	const struct nft_chain_spec masq = { .name = "masq_checks",
					     .comment = "Masquerade traffic" };
	const struct nft_chain_spec fwd = { .name = "forward", .type = "filter",
					    .hook = NFT_HOOK_FORWARD, .priority = 0,
					    .policy = NFT_POLICY_DROP };

	(void)state;
	ONE_CHANGE("table-comment", nft_batch_add_table(b, NFT_FAMILY_INET, "rmmasq",
							 "Masquerading for plugins"));
	ONE_CHANGE("table-plain", nft_batch_add_table(b, NFT_FAMILY_IP, "rmnat", NULL));
	ONE_CHANGE("table-delete", nft_batch_delete_table(b, NFT_FAMILY_IP, "rmnat"));
	ONE_CHANGE("chain-base", nft_batch_add_chain(b, NFT_FAMILY_INET, "rmmasq", &post));
	ONE_CHANGE("chain-comment", nft_batch_add_chain(b, NFT_FAMILY_INET, "rmmasq", &masq));
	ONE_CHANGE("chain-policy", nft_batch_add_chain(b, NFT_FAMILY_IP, "rmfw", &fwd));
	ONE_CHANGE("chain-flush", nft_batch_flush_chain(b, NFT_FAMILY_IP, "rmnat", "prerouting"));
	ONE_CHANGE("chain-delete", nft_batch_delete_chain(b, NFT_FAMILY_IP, "rmnat", "hostports"));
	ONE_CHANGE("rule-delete", nft_batch_delete_rule(b, NFT_FAMILY_IP, "rmnat", "hostports", 4));
}

/* What upstream's ipMasq (nftables) writes, in its inet table. */
static void test_ipmasq_rules(void **state)
{
	struct ip_prefix mc4 = P("224.0.0.0/4"), mc6 = P("ff00::/8"), src = P("10.1.0.5/32"),
			 net = P("10.1.0.0/24"), src6 = P("fd00::5/128"), net6 = P("fd00::/64");

	(void)state;
	ONE_RULE("rule-multicast-return", NFT_FAMILY_INET, "rmmasq", "postrouting", {
		assert_int_equal(nft_match_addr(r, true, &mc4, false), 0);
		assert_int_equal(nft_verdict(r, NFT_VERDICT_RETURN, NULL), 0);
	});
	ONE_RULE("rule-multicast6-return", NFT_FAMILY_INET, "rmmasq", "postrouting", {
		assert_int_equal(nft_match_addr(r, true, &mc6, false), 0);
		assert_int_equal(nft_verdict(r, NFT_VERDICT_RETURN, NULL), 0);
	});
	ONE_RULE("rule-goto", NFT_FAMILY_INET, "rmmasq", "postrouting", {
		assert_int_equal(nft_verdict(r, NFT_VERDICT_GOTO, "masq_checks"), 0);
	});
	ONE_RULE("rule-masq", NFT_FAMILY_INET, "rmmasq", "masq_checks", {
		assert_int_equal(nft_match_addr(r, false, &src, false), 0);
		assert_int_equal(nft_match_addr(r, true, &net, true), 0);
		assert_int_equal(nft_masquerade(r, false), 0);
		assert_int_equal(nft_rule_comment(r, "3d8c, net: n, if: eth0, id: c1"), 0);
	});
	ONE_RULE("rule-masq6", NFT_FAMILY_INET, "rmmasq", "masq_checks", {
		assert_int_equal(nft_match_addr(r, false, &src6, false), 0);
		assert_int_equal(nft_match_addr(r, true, &net6, true), 0);
		assert_int_equal(nft_masquerade(r, false), 0);
	});
}

/* What upstream's portmap (nftables) writes, in its ip and ip6 tables. */
static void test_portmap_rules(void **state)
{
	struct ip_addr c4 = A("10.1.0.5"), c6 = A("fd00::5"), host = A("192.0.2.1");
	struct ip_prefix hostip = P("192.0.2.1/32"), lo = P("127.0.0.1/32"), c4p = P("10.1.0.5/32");

	(void)state;
	ONE_RULE("rule-fib-jump", NFT_FAMILY_IP, "rmnat", "prerouting", {
		assert_int_equal(nft_match_daddr_local(r), 0);
		assert_int_equal(nft_verdict(r, NFT_VERDICT_JUMP, "hostports_all"), 0);
	});
	ONE_RULE("rule-dnat", NFT_FAMILY_IP, "rmnat", "hostports", {
		assert_int_equal(nft_match_port(r, IPPROTO_TCP, true, 8080), 0);
		assert_int_equal(nft_nat(r, true, &c4, 80), 0);
		assert_int_equal(nft_rule_comment(r, "cid1"), 0);
	});
	ONE_RULE("rule-dnat-hostip", NFT_FAMILY_IP, "rmnat", "hostports", {
		assert_int_equal(nft_match_addr(r, true, &hostip, false), 0);
		assert_int_equal(nft_match_port(r, IPPROTO_UDP, true, 53), 0);
		assert_int_equal(nft_nat(r, true, &c4, 5353), 0);
		assert_int_equal(nft_rule_comment(r, "cid1"), 0);
	});
	ONE_RULE("rule-dnat6", NFT_FAMILY_IP6, "rmnat", "hostports", {
		assert_int_equal(nft_match_port(r, IPPROTO_TCP, true, 8080), 0);
		assert_int_equal(nft_nat(r, true, &c6, 80), 0);
		assert_int_equal(nft_rule_comment(r, "cid1"), 0);
	});
	ONE_RULE("rule-masq-hairpin", NFT_FAMILY_IP, "rmnat", "hostports", {
		assert_int_equal(nft_match_addr(r, false, &lo, false), 0);
		assert_int_equal(nft_match_addr(r, true, &c4p, false), 0);
		assert_int_equal(nft_masquerade(r, false), 0);
	});
	ONE_RULE("rule-snat", NFT_FAMILY_IP, "rmnat", "hostports", {
		assert_int_equal(nft_match_addr(r, false, &c4p, false), 0);
		assert_int_equal(nft_nat(r, false, &host, 0), 0);
	});
}

/* Marks, conntrack states and interfaces, for firewall-like and hairpin rules. */
static void test_other_words(void **state)
{
	struct ip_prefix net = P("10.1.0.0/24");

	(void)state;
	ONE_RULE("rule-ct-accept", NFT_FAMILY_IP, "rmfw", "forwarding", {
		assert_int_equal(nft_match_ct_state(r, NFT_CT_ESTABLISHED | NFT_CT_RELATED), 0);
		assert_int_equal(nft_verdict(r, NFT_VERDICT_ACCEPT, NULL), 0);
	});
	ONE_RULE("rule-mark-set", NFT_FAMILY_IP, "rmnat", "hostports", {
		assert_int_equal(nft_set_mark_bits(r, 0x2000), 0);
	});
	ONE_RULE("rule-mark-match", NFT_FAMILY_IP, "rmnat", "hostports", {
		assert_int_equal(nft_match_mark(r, 0x2000, 0x2000), 0);
		assert_int_equal(nft_masquerade(r, false), 0);
	});
	ONE_RULE("rule-iifname", NFT_FAMILY_IP, "rmnat", "hostports", {
		assert_int_equal(nft_match_ifname(r, false, "cni0", false), 0);
		assert_int_equal(nft_match_addr(r, false, &net, false), 0);
		assert_int_equal(nft_verdict(r, NFT_VERDICT_ACCEPT, NULL), 0);
	});
	ONE_RULE("rule-oifname-drop", NFT_FAMILY_IP, "rmnat", "hostports", {
		assert_int_equal(nft_match_ifname(r, true, "cni0", true), 0);
		assert_int_equal(nft_verdict(r, NFT_VERDICT_DROP, NULL), 0);
	});
}

static void test_refusals(void **state)
{
	struct ip_prefix v6 = P("fd00::/64"), zero = P("0.0.0.0/0");
	struct ip_addr v4 = A("10.0.0.1");
	const struct nft_chain_spec regular_policy = { .name = "c", .policy = NFT_POLICY_DROP };
	char long_text[300];
	struct nft_batch *b;
	struct nft_rule *r;

	(void)state;
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	assert_int_equal(nft_rule_new(NFT_FAMILY_IP, &r), 0);
	assert_int_equal(nft_match_addr(r, true, &v6, false), -EINVAL);
	assert_int_equal(nft_match_addr(r, true, &zero, false), -EINVAL);
	assert_int_equal(nft_match_port(r, IPPROTO_ICMP, true, 1), -EINVAL);
	assert_int_equal(nft_match_ifname(r, false, "sixteen-chars-xx", false), -EINVAL);
	assert_int_equal(nft_match_ct_state(r, 0), -EINVAL);
	assert_int_equal(nft_verdict(r, NFT_VERDICT_JUMP, NULL), -EINVAL);
	assert_int_equal(nft_verdict(r, NFT_VERDICT_ACCEPT, "c"), -EINVAL);
	assert_int_equal(nft_rule_comment(r, long_text), -EINVAL);
	assert_int_equal(nft_batch_new(&b), 0);
	/* A rule without expressions, names nft refuses. */
	assert_int_equal(nft_batch_add_rule(b, "t", "c", r), -EINVAL);
	assert_int_equal(nft_batch_add_table(b, NFT_FAMILY_IP, "", NULL), -EINVAL);
	assert_int_equal(nft_batch_add_table(b, NFT_FAMILY_IP, long_text, NULL), -EINVAL);
	assert_int_equal(nft_batch_add_chain(b, NFT_FAMILY_IP, "t", &regular_policy), -EINVAL);
	nft_rule_free(r);
	assert_int_equal(nft_rule_new(NFT_FAMILY_IP6, &r), 0);
	assert_int_equal(nft_nat(r, true, &v4, 80), -EINVAL);
	nft_rule_free(r);
	/* Nothing was added: an empty batch sends nothing. */
	n_sent = 0;
	assert_int_equal(nft_batch_commit(b, &(struct cni_err){ 0 }), 0);
	assert_int_equal(n_sent, 0);
	nft_batch_free(b);
}

/* A refusal names the change the kernel refused; a failed commit says so. */
static void test_errors_name_the_change(void **state)
{
	struct cni_err err = { 0 };
	struct nft_batch *b;

	(void)state;
	assert_int_equal(nft_batch_new(&b), 0);
	assert_int_equal(nft_batch_add_table(b, NFT_FAMILY_IP, "t", NULL), 0);
	assert_int_equal(nft_batch_flush_chain(b, NFT_FAMILY_IP, "t", "missing"), 0);
	batch_result = -ENOENT;
	batch_failed = 2;
	assert_int_equal(nft_batch_commit(b, &err), -ENOENT);
	assert_int_equal(err.code, CNI_ERR_KERNEL);
	assert_string_equal(err.msg, "nftables: flush chain ip t missing: No such file or directory");
	/* The four messages: begin, both changes, end. */
	assert_int_equal(n_sent, 4);
	err = (struct cni_err){ 0 };
	batch_result = -EBUSY;
	batch_failed = 0;
	assert_int_equal(nft_batch_commit(b, &err), -EBUSY);
	assert_non_null(strstr(err.msg, "the batch of 2 changes (add table ip t, ...) failed"));
	batch_result = 0;
	batch_failed = 0;
	nft_batch_free(b);
}

/* What upstream's macspoofchk writes, in table bridge nat (pkg/link/spoofcheck.go). */
static void test_spoofchk_rules(void **state)
{
	const struct nft_chain_spec base = { .name = "PREROUTING", .type = "filter",
					     .hook = NFT_HOOK_PREROUTING,
					     .priority = NFT_PRIORITY_BRIDGE_DSTNAT,
					     .policy = NFT_POLICY_ACCEPT };
	const uint8_t mac[6] = { 0x02, 0x42, 0xac, 0x11, 0x00, 0x02 };

	(void)state;
	ONE_CHANGE("table-bridge", nft_batch_add_table(b, NFT_FAMILY_BRIDGE, "rmbr", NULL));
	ONE_CHANGE("chain-bridge-base", nft_batch_add_chain(b, NFT_FAMILY_BRIDGE, "rmbr", &base));
	ONE_RULE("rule-bridge-iifname-jump", NFT_FAMILY_BRIDGE, "rmbr", "PREROUTING", {
		assert_int_equal(nft_match_ifname(r, false, "veth0a1b2c3d", false), 0);
		assert_int_equal(nft_verdict(r, NFT_VERDICT_JUMP, "cni-br-iface-c1-eth0"), 0);
		assert_int_equal(nft_rule_comment(r, "macspoofchk-c1-eth0"), 0);
	});
	ONE_RULE("rule-bridge-ether-return", NFT_FAMILY_BRIDGE, "rmbr", "cni-br-iface-c1-eth0-mac", {
		assert_int_equal(nft_match_ether_saddr(r, mac), 0);
		assert_int_equal(nft_verdict(r, NFT_VERDICT_RETURN, NULL), 0);
		assert_int_equal(nft_rule_comment(r, "macspoofchk-c1-eth0"), 0);
	});
	ONE_RULE("rule-bridge-drop", NFT_FAMILY_BRIDGE, "rmbr", "cni-br-iface-c1-eth0-mac", {
		assert_int_equal(nft_verdict(r, NFT_VERDICT_DROP, NULL), 0);
		assert_int_equal(nft_rule_comment(r, "macspoofchk-c1-eth0"), 0);
	});
}

/* Upstream's names: the reference bridge's and portmap's chains, and their comments. */
static void test_chain_names(void **state)
{
	char name[64];

	(void)state;
	/* ipMasq's chain of network brn, container brcid1 (the reference bridge made it). */
	assert_int_equal(chainname_ipt("brn", "brcid1", "", name), 0);
	assert_string_equal(name, "CNI-648ebe223b34ee7253886ba0");
	/* portmap's: "CNI-DN-" and the hash cut to 28 in all. */
	assert_int_equal(chainname_ipt("rmpm", "rmcid1", "DN-", name), 0);
	assert_string_equal(name, "CNI-DN-164cddbc31700e1d05161");
	assert_int_equal(chainname_comment("brn", "brcid1", name, sizeof(name)), 0);
	assert_string_equal(name, "name: \"brn\" id: \"brcid1\"");
	/* Go's %q of what a config could not pass as a name, for GC's attachments. */
	assert_int_equal(chainname_comment("a\"b\\c", "d\n\x01", name, sizeof(name)), 0);
	assert_string_equal(name, "name: \"a\\\"b\\\\c\" id: \"d\\n\\x01\"");
	assert_int_equal(chainname_comment("brn", "brcid1", name, 20), -ENAMETOOLONG);
}

/* The command lines go-iptables runs for the same operations: the binary, -t, the op, --wait last. */
static void test_iptables_argv(void **state)
{
	const char *rule[] = { "-s", "10.1.0.5", "-j", "CNI-abc", "-m", "comment", "--comment", "x" };
	const char *want[] = { "iptables", "-t", "nat", "-A", "POSTROUTING", "-s", "10.1.0.5", "-j",
			       "CNI-abc", "-m", "comment", "--comment", "x", "--wait", NULL };
	const char *want6[] = { "ip6tables", "-t", "filter", "-S", "--wait", NULL };
	const char **argv;
	size_t i;

	(void)state;
	assert_int_equal(ipt_argv(IPT_IPV4, "nat", "-A", "POSTROUTING", rule, ARRAY_SIZE(rule), &argv), 0);
	for (i = 0; want[i]; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[i]);
	free(argv);
	assert_int_equal(ipt_argv(IPT_IPV6, "filter", "-S", NULL, NULL, 0, &argv), 0);
	for (i = 0; want6[i]; i++)
		assert_string_equal(argv[i], want6[i]);
	assert_null(argv[i]);
	free(argv);
}

/* A binary that cannot be found is an error naming it, not a missing chain. */
static void test_iptables_missing(void **state)
{
	const char *argv[] = { "rm-no-such-iptables", "-t", "nat", "-S", "--wait", NULL };
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(ipt_run(argv, NULL, &err), -ENOEXEC);
	assert_string_equal(err.msg, "rm-no-such-iptables: not found in PATH");
}

/*
 * iptables-restore --noflush --wait gets the text on its stdin, whole; a refusal names the
 * command and what it said. A fake iptables-restore first in PATH records what it got.
 */
static void test_iptables_restore(void **state)
{
	char dir[] = "/tmp/rm-ipt-restore.XXXXXX", path[256], got[512] = "", *old;
	const char *text = "*nat\n:CNI-x - [0:0]\n-A CNI-x -j ACCEPT\nCOMMIT\n";
	struct cni_err err = { 0 };
	size_t n;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/iptables-restore", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\necho \"$*\" >%s/args\n/bin/cat >%s/in\n"
		   "[ -e %s/refuse ] || exit 0\necho 'iptables-restore: line 3 failed' >&2\nexit 1\n",
		dir, dir, dir);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
	old = strdup(getenv("PATH"));
	setenv("PATH", dir, 1);
	assert_int_equal(ipt_restore(IPT_IPV4, text, &err), 0);
	snprintf(path, sizeof(path), "%s/in", dir);
	f = fopen(path, "r");
	n = fread(got, 1, sizeof(got) - 1, f);
	fclose(f);
	got[n] = '\0';
	assert_string_equal(got, text);
	snprintf(path, sizeof(path), "%s/args", dir);
	f = fopen(path, "r");
	assert_non_null(fgets(got, sizeof(got), f));
	fclose(f);
	assert_string_equal(got, "--noflush --wait\n");
	snprintf(path, sizeof(path), "%s/refuse", dir);
	fclose(fopen(path, "w"));
	assert_int_equal(ipt_restore(IPT_IPV4, text, &err), -EIO);
	assert_non_null(strstr(err.msg, "iptables-restore --noflush --wait: exit status 1: iptables-restore: line 3 failed"));
	err = (struct cni_err){ 0 };
	assert_int_equal(ipt_restore(IPT_IPV6, text, &err), -ENOEXEC);
	assert_string_equal(err.msg, "ip6tables-restore: not found in PATH");
	setenv("PATH", old, 1);
	free(old);
	for (const char *const *e = (const char *const[]){ "iptables-restore", "args", "in", "refuse", NULL }; *e; e++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *e);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_and_chains),
		cmocka_unit_test(test_ipmasq_rules),
		cmocka_unit_test(test_portmap_rules),
		cmocka_unit_test(test_other_words),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_errors_name_the_change),
		cmocka_unit_test(test_iptables_argv),
		cmocka_unit_test(test_iptables_missing),
		cmocka_unit_test(test_iptables_restore),
		cmocka_unit_test(test_spoofchk_rules),
		cmocka_unit_test(test_chain_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
