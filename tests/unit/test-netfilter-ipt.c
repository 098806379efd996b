/*
 * Unit tests: iptables change sets (common/netfilter/ipt-batch.c) against fake iptables
 * and iptables-restore binaries in PATH: what is asked of the listing and what with "-C",
 * the restore script (its quoting, its order), and the failures.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "common/netfilter/ipt-batch.h"
#include "common/util/error.h"

static char dir[] = "/tmp/nf-ipt-test.XXXXXX";
static char path[512];

/* The fakes: "-S" prints listing.txt; "-C" is logged and exits as check-status says; the
 * restore writes its input to restore.txt and exits as restore-status says. */
static const char fake_iptables[] =
	"#!/bin/sh\n"
	"d=$(dirname \"$0\")\n"
	"for a; do case $a in -S) cat \"$d/listing.txt\"; exit 0 ;; -C) echo \"$*\" >>\"$d/checks.txt\";\n"
	"  s=$(cat \"$d/check-status\" 2>/dev/null || echo 1)\n"
	"  [ \"$s\" = 1 ] && echo 'iptables: Bad rule (does a matching rule exist in that chain?).' >&2\n"
	"  exit $s ;; esac; done\n"
	"exit 3\n";
static const char fake_restore[] =
	"#!/bin/sh\n"
	"d=$(dirname \"$0\")\n"
	"echo \"$*\" >\"$d/restore-args.txt\"\n"
	"cat >\"$d/restore.txt\"\n"
	"s=$(cat \"$d/restore-status\" 2>/dev/null || echo 0)\n"
	"[ \"$s\" = 0 ] || echo \"iptables-restore: line 2 failed: Chain already exists.\" >&2\n"
	"exit $s\n";

static void put_file(const char *name, const char *text, mode_t mode)
{
	char p[600];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static char *get_file(const char *name)
{
	static char buf[1 << 16];
	char p[600];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void forget(const char *name)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	unlink(p);
}

static const char listing[] =
	"-P PREROUTING ACCEPT\n"
	"-P POSTROUTING ACCEPT\n"
	"-N CNI-HOSTPORT-DNAT\n"
	"-N CNI-DN-x\n"
	"-A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT\n"
	"-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment \"dnat name: \\\"n\\\" id: \\\"a\\\"\" -m multiport --dports 80 -j CNI-DN-x\n"
	"-A CNI-HOSTPORT-DNAT -p udp -m comment --comment \"dnat name: \\\"n\\\" id: \\\"a\\\"\" -m multiport --dports 53 -j CNI-DN-x\n"
	"-A CNI-DN-x -p tcp -m tcp --dport 80 -j DNAT --to-destination 10.0.0.2:80\n";

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	put_file("iptables", fake_iptables, 0755);
	put_file("ip6tables", fake_iptables, 0755);
	put_file("iptables-restore", fake_restore, 0755);
	put_file("listing.txt", listing, 0644);
	/* The fakes first; the shell tools they use after them. */
	snprintf(path, sizeof(path), "%s:/usr/bin:/bin", dir);
	setenv("PATH", path, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct ipt_batch *open_nat(void)
{
	struct ipt_batch *b = NULL;
	struct cni_err err = { 0 };

	forget("checks.txt");
	forget("restore.txt");
	assert_int_equal(ipt_batch_open(IPT_IPV4, "nat", &b, &err), 0);
	return b;
}

static void test_chains(void **state)
{
	struct ipt_batch *b = open_nat();
	struct cni_err err = { 0 };

	(void)state;
	assert_true(ipt_batch_has_chain(b, "PREROUTING"));
	assert_true(ipt_batch_has_chain(b, "CNI-HOSTPORT-DNAT"));
	assert_false(ipt_batch_has_chain(b, "CNI-HOSTPORT"));
	assert_false(ipt_batch_has_chain(b, "OUTPUT"));
	assert_int_equal(ipt_batch_ensure_chain(b, "CNI-HOSTPORT-DNAT"), 0);
	assert_int_equal(ipt_batch_changes(b), 0);
	assert_int_equal(ipt_batch_ensure_chain(b, "CNI-HOSTPORT-MASQ"), 0);
	assert_true(ipt_batch_has_chain(b, "CNI-HOSTPORT-MASQ"));
	assert_int_equal(ipt_batch_ensure_chain(b, "CNI-HOSTPORT-MASQ"), 0);
	assert_int_equal(ipt_batch_changes(b), 1);
	assert_int_equal(ipt_batch_ensure_chain(b, "A B"), -EINVAL);
	assert_int_equal(ipt_batch_delete_chain(b, "CNI-DN-x"), 1);
	assert_int_equal(ipt_batch_delete_chain(b, "CNI-DN-y"), 0);
	assert_int_equal(ipt_batch_commit(b, &err), 0);
	assert_string_equal(get_file("restore.txt"),
			    "*nat\n-N CNI-HOSTPORT-MASQ\n-F CNI-DN-x\n-X CNI-DN-x\nCOMMIT\n");
	assert_string_equal(get_file("restore-args.txt"), "--noflush --wait\n");
	ipt_batch_free(b);
	assert_true(ipt_chain_name_valid("KUBE-MARK-MASQ"));
	assert_true(ipt_chain_name_valid("ABCDEFGHIJKLMNOPQRSTUVWXYZ12"));
	assert_false(ipt_chain_name_valid("ABCDEFGHIJKLMNOPQRSTUVWXYZ123"));
	assert_false(ipt_chain_name_valid(""));
	assert_false(ipt_chain_name_valid("!X"));
	assert_false(ipt_chain_name_valid("X\"Y"));
	assert_false(ipt_chain_name_valid("X\tY"));
}

static void test_rules(void **state)
{
	const char *const local[] = { "-m", "addrtype", "--dst-type", "LOCAL", "-j",
				      "CNI-HOSTPORT-DNAT" };
	const char *const dnat[] = { "-p", "tcp", "--dport", "80", "-j", "DNAT",
				     "--to-destination", "10.0.0.2:80" };
	const char *const jump[] = { "-m", "comment", "--comment", "x", "-j", "NEW" };
	struct ipt_batch *b = open_nat();
	struct cni_err err = { 0 };

	(void)state;
	/* Found by its printed form: no process asked. */
	assert_int_equal(ipt_batch_ensure_rule(b, "PREROUTING", false, local, 6,
					       "-m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT",
					       &err), 0);
	assert_int_equal(ipt_batch_rule_exists(b, "CNI-DN-x", dnat, 8,
					       "-p tcp -m tcp --dport 80 -j DNAT --to-destination 10.0.0.2:80",
					       &err), 1);
	assert_null(get_file("checks.txt"));
	/* Not found so: asked with -C, as upstream; the fake says it is not there. */
	assert_int_equal(ipt_batch_ensure_rule(b, "POSTROUTING", true, local, 6, NULL, &err), 1);
	assert_string_equal(get_file("checks.txt"), "-t nat -C POSTROUTING -m addrtype --dst-type "
						    "LOCAL -j CNI-HOSTPORT-DNAT --wait\n");
	/* -C says it is there: nothing added. */
	put_file("check-status", "0", 0644);
	assert_int_equal(ipt_batch_ensure_rule(b, "CNI-DN-x", false, dnat, 8, "-p tcp other", &err), 0);
	forget("check-status");
	/* A missing chain, a chain made here, a jump to one: nothing to ask. */
	forget("checks.txt");
	assert_int_equal(ipt_batch_ensure_rule(b, "OUTPUT", false, local, 6, NULL, &err), 1);
	assert_int_equal(ipt_batch_ensure_chain(b, "NEW"), 0);
	assert_int_equal(ipt_batch_ensure_rule(b, "NEW", false, dnat, 8, NULL, &err), 1);
	assert_int_equal(ipt_batch_ensure_rule(b, "PREROUTING", true, jump, 6, NULL, &err), 1);
	assert_null(get_file("checks.txt"));
	assert_int_equal(ipt_batch_commit(b, &err), 0);
	assert_string_equal(get_file("restore.txt"),
			    "*nat\n"
			    "-I POSTROUTING 1 -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT\n"
			    "-A OUTPUT -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT\n"
			    "-N NEW\n"
			    "-A NEW -p tcp --dport 80 -j DNAT --to-destination 10.0.0.2:80\n"
			    "-I PREROUTING 1 -m comment --comment x -j NEW\n"
			    "COMMIT\n");
	ipt_batch_free(b);
}

/* A pod's rule whose host address no rule of the chain has: not there, no "-C" asked. */
static void test_absent_by_address(void **state)
{
	const char *const v4_new[] = { "-d", "10.1.0.7/32", "-j", "ACCEPT" };
	const char *const v4_long[] = { "--source", "10.1.0.9/32", "-j", "ACCEPT" };
	const char *const v4_held[] = { "-s", "10.1.0.5/32", "-m", "conntrack", "--ctstate",
					"RELATED,ESTABLISHED", "-j", "ACCEPT" };
	const char *const v4_prefix[] = { "-s", "10.1.0.50/32", "-j", "ACCEPT" };
	const char *const v4_nomask[] = { "-d", "10.1.0.7", "-j", "ACCEPT" };
	const char *const v4_net[] = { "-d", "10.1.0.0/24", "-j", "ACCEPT" };
	const char *const v6_new[] = { "-d", "2001:db8::7/128", "-j", "ACCEPT" };
	const char *const v6_held[] = { "-d", "2001:db8::5/128", "-p", "tcp", "-j", "ACCEPT" };
	const char *const v6_upper[] = { "-d", "2001:DB8::7/128", "-j", "ACCEPT" };
	struct ipt_batch *b;
	struct cni_err err = { 0 };
	char more[sizeof(listing) + 256];

	(void)state;
	snprintf(more, sizeof(more), "%s-N CNI-FORWARD\n-A CNI-FORWARD -s 10.1.0.5/32 -j ACCEPT\n"
		 "-A CNI-FORWARD -d 2001:db8::5/128 -j ACCEPT\n", listing);
	put_file("listing.txt", more, 0644);
	b = open_nat();
	assert_int_equal(ipt_batch_ensure_rule(b, "CNI-FORWARD", false, v4_new, 4, NULL, &err), 1);
	assert_int_equal(ipt_batch_rule_exists(b, "CNI-FORWARD", v4_long, 4, NULL, &err), 0);
	assert_int_equal(ipt_batch_rule_exists(b, "CNI-FORWARD", v4_prefix, 4, NULL, &err), 0);
	assert_int_equal(ipt_batch_ensure_rule(b, "CNI-FORWARD", false, v6_new, 4, NULL, &err), 1);
	assert_int_equal(ipt_batch_delete_rule(b, "CNI-FORWARD", v6_new, 4, NULL, &err), 0);
	assert_null(get_file("checks.txt"));
	/* The address is in the chain, or not in the form "-S" prints: asked. */
	assert_int_equal(ipt_batch_rule_exists(b, "CNI-FORWARD", v4_held, 8, "-s 10.1.0.5/32 x", &err), 0);
	assert_int_equal(ipt_batch_rule_exists(b, "CNI-FORWARD", v6_held, 6, NULL, &err), 0);
	assert_int_equal(ipt_batch_rule_exists(b, "CNI-FORWARD", v4_nomask, 4, NULL, &err), 0);
	assert_int_equal(ipt_batch_rule_exists(b, "CNI-FORWARD", v4_net, 4, NULL, &err), 0);
	assert_int_equal(ipt_batch_rule_exists(b, "CNI-FORWARD", v6_upper, 4, NULL, &err), 0);
	assert_string_equal(get_file("checks.txt"),
			    "-t nat -C CNI-FORWARD -s 10.1.0.5/32 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT --wait\n"
			    "-t nat -C CNI-FORWARD -d 2001:db8::5/128 -p tcp -j ACCEPT --wait\n"
			    "-t nat -C CNI-FORWARD -d 10.1.0.7 -j ACCEPT --wait\n"
			    "-t nat -C CNI-FORWARD -d 10.1.0.0/24 -j ACCEPT --wait\n"
			    "-t nat -C CNI-FORWARD -d 2001:DB8::7/128 -j ACCEPT --wait\n");
	ipt_batch_free(b);
	put_file("listing.txt", listing, 0644);
}

static void test_quoting(void **state)
{
	const char *const rule[] = { "-m", "comment", "--comment", "dnat name: \"n\" id: \"a\\b\"",
				     "--x", "", "-j", "it's" };
	const char *const bad[] = { "-s", "10.0.0.1\nCOMMIT" };
	struct ipt_batch *b = open_nat();
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(ipt_batch_add_rule(b, "X", false, rule, 8), 0);
	assert_int_equal(ipt_batch_add_rule(b, "X", false, bad, 2), -EINVAL);
	assert_int_equal(ipt_batch_ensure_rule(b, "NOPE", false, bad, 2, NULL, &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_int_equal(ipt_batch_changes(b), 1);
	assert_int_equal(ipt_batch_commit(b, &(struct cni_err){ 0 }), 0);
	assert_string_equal(get_file("restore.txt"),
			    "*nat\n-A X -m comment --comment \"dnat name: \\\"n\\\" id: \\\"a\\\\b\\\"\" "
			    "--x \"\" -j \"it's\"\nCOMMIT\n");
	ipt_batch_free(b);
}

struct collected {
	char lines[8][256];
	size_t n;
};

static int collect(const char *line, void *data)
{
	struct collected *c = data;

	snprintf(c->lines[c->n++], sizeof(c->lines[0]), "%s", line);
	return 0;
}

static void test_listed_rules(void **state)
{
	struct ipt_batch *b = open_nat();
	struct collected c = { 0 };
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(ipt_batch_rules(b, "CNI-HOSTPORT-DNAT", collect, &c), 0);
	assert_int_equal(c.n, 2);
	assert_non_null(strstr(c.lines[0], "-p tcp"));
	assert_non_null(strstr(c.lines[1], "-p udp"));
	assert_int_equal(ipt_batch_delete_printed(b, c.lines[1]), 0);
	assert_int_equal(ipt_batch_delete_printed(b, "-N CNI-DN-x"), -EINVAL);
	assert_int_equal(ipt_batch_delete_printed(b, "-A X\n-F Y"), -EINVAL);
	c.n = 0;
	assert_int_equal(ipt_batch_rules(b, "CNI-HOSTPORT", collect, &c), 0);
	assert_int_equal(c.n, 0);
	assert_int_equal(ipt_batch_commit(b, &err), 0);
	assert_string_equal(get_file("restore.txt"),
			    "*nat\n-D CNI-HOSTPORT-DNAT -p udp -m comment --comment \"dnat name: "
			    "\\\"n\\\" id: \\\"a\\\"\" -m multiport --dports 53 -j CNI-DN-x\nCOMMIT\n");
	ipt_batch_free(b);
}

static void test_commit(void **state)
{
	const char *const rule[] = { "-j", "RETURN" };
	struct ipt_batch *b = open_nat();
	struct cni_err err = { 0 };

	(void)state;
	/* Nothing to change: no process. */
	assert_int_equal(ipt_batch_commit(b, &err), 0);
	assert_null(get_file("restore.txt"));
	assert_int_equal(ipt_batch_add_rule(b, "X", false, rule, 2), 0);
	put_file("restore-status", "1", 0644);
	assert_int_equal(ipt_batch_commit(b, &err), -EIO);
	assert_int_equal(err.code, CNI_ERR_KERNEL);
	assert_non_null(strstr(err.msg, "iptables-restore --noflush --wait: exit status 1: "
					"iptables-restore: line 2 failed: Chain already exists."));
	forget("restore-status");
	ipt_batch_free(b);
	/* No binary at all. */
	setenv("PATH", "/nonexistent", 1);
	b = NULL;
	err = (struct cni_err){ 0 };
	assert_int_equal(ipt_batch_open(IPT_IPV4, "nat", &b, &err), -ENOEXEC);
	assert_null(b);
	assert_non_null(strstr(err.msg, "iptables: not found in PATH"));
	setenv("PATH", path, 1);
}

/* Thousands of rules: each one found by its printed form in the sorted listing. */
static void test_many(void **state)
{
	const char *const rule[] = { "-j", "X" };
	static char big[1 << 20];
	char printed[64];
	struct ipt_batch *b;
	size_t len = 0;

	(void)state;
	len += (size_t)snprintf(big + len, sizeof(big) - len, "-N C\n");
	for (int i = 4000; i > 0; i--)
		len += (size_t)snprintf(big + len, sizeof(big) - len, "-A C -p tcp --dport %d -j X\n", i);
	put_file("listing.txt", big, 0644);
	b = open_nat();
	for (int i = 1; i <= 4000; i++) {
		snprintf(printed, sizeof(printed), "-p tcp --dport %d -j X", i);
		assert_int_equal(ipt_batch_rule_exists(b, "C", rule, 2, printed, &(struct cni_err){ 0 }), 1);
	}
	assert_null(get_file("checks.txt"));
	ipt_batch_free(b);
	put_file("listing.txt", listing, 0644);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chains),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_absent_by_address),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_listed_rules),
		cmocka_unit_test(test_commit),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
