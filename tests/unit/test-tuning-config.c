/* Unit tests: tuning config fields, sources and precedence, sysctl keys, allowlist, state text */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cni/conf-map.h"
#include "common/cni/plugin.h"
#include "common/record/record.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "plugins/tuning/allowlist.h"
#include "plugins/tuning/config.h"
#include "plugins/tuning/state.h"
#include "plugins/tuning/sysctl-key.h"

/* A path no test creates: no allowlist, every key allowed. */
#define NO_ALLOWLIST "/nonexistent/tuning-allowlist.conf"

static struct cni_ctx loaded;
static struct tuning_conf conf;

static void release_loaded(void)
{
	tuning_config_free(&conf);
	cni_args_free(&loaded.args);
	cni_conf_free(&loaded.conf);
}

static int teardown(void **state)
{
	(void)state;
	release_loaded();
	return 0;
}

static int load_with(const char *json, const char *cni_args, const char *ifname,
		     const char *allowlist, struct cni_err *err)
{
	int r;

	release_loaded();
	loaded.env.ifname = ifname;
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	if (r < 0)
		return r;
	r = cni_args_parse(cni_args, &loaded.args, err);
	if (r >= 0)
		r = tuning_config_load(&loaded, allowlist, &conf, err);
	return r;
}

static int load(const char *json, const char *cni_args, struct cni_err *err)
{
	return load_with(json, cni_args, "net1", NO_ALLOWLIST, err);
}

static void expect_refused(const char *json, const char *args, int code, const char *msg_part)
{
	struct cni_err err = { 0 };

	assert_true(load(json, args, &err) < 0);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg_part);
}

#define HEAD "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"tuning\""

static void test_defaults(void **state)
{
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load(HEAD "}", "", &err), 0);
	assert_int_equal(conf.n_sysctls, 0);
	assert_false(conf.has_mac);
	assert_false(conf.promisc);
	assert_int_equal(conf.mtu, 0);
	assert_false(conf.has_allmulti);
	assert_false(conf.has_txqlen);
	assert_false(tuning_config_changes(&conf));
}

static void test_every_field(void **state)
{
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load(HEAD ",\"sysctl\":{\"net.ipv4.conf.IFNAME.arp_ignore\":\"1\","
			      "\"net/ipv6/conf/IFNAME/accept_ra\":\"0\",\"net.core.somaxconn\":\"512\"},"
			      "\"mac\":\"C2:00:00:00:00:01\",\"promisc\":true,\"mtu\":1400,"
			      "\"allmulti\":false,\"txQLen\":0,\"dataDir\":\"/tmp/x\"}", "", &err), 0);
	assert_int_equal(conf.n_sysctls, 3);
	assert_string_equal(conf.sysctls[0].path, "ipv4/conf/net1/arp_ignore");
	assert_int_equal(conf.sysctls[0].scope, TUNING_KEY_OWN);
	assert_string_equal(conf.sysctls[1].path, "ipv6/conf/net1/accept_ra");
	assert_string_equal(conf.sysctls[2].path, "core/somaxconn");
	assert_int_equal(conf.sysctls[2].scope, TUNING_KEY_NETNS);
	assert_string_equal(conf.sysctls[2].value, "512");
	assert_true(conf.has_mac);
	assert_string_equal(conf.mac_text, "c2:00:00:00:00:01");
	assert_true(conf.promisc);
	assert_int_equal(conf.mtu, 1400);
	assert_true(conf.has_allmulti);
	assert_false(conf.allmulti);
	assert_true(conf.has_txqlen);
	assert_int_equal(conf.txqlen, 0);
	assert_true(tuning_config_changes(&conf));
}

/* NVIDIA's multi-rail profile: the "all" keys and the IFNAME ones both work. */
static void test_multirail_profile(void **state)
{
	struct cni_err err = { 0 };
	static const char *const want[] = {
		"ipv4/conf/all/arp_ignore", "ipv4/conf/all/arp_announce", "ipv4/conf/all/rp_filter",
		"ipv4/conf/net3/arp_ignore", "ipv4/conf/net3/arp_announce", "ipv4/conf/net3/rp_filter",
	};

	(void)state;
	assert_int_equal(load_with(HEAD ",\"sysctl\":{\"net.ipv4.conf.all.arp_ignore\":\"1\","
				   "\"net.ipv4.conf.all.arp_announce\":\"2\",\"net.ipv4.conf.all.rp_filter\":\"0\","
				   "\"net.ipv4.conf.IFNAME.arp_ignore\":\"1\",\"net.ipv4.conf.IFNAME.arp_announce\":\"2\","
				   "\"net.ipv4.conf.IFNAME.rp_filter\":\"0\"}}", "", "net3", NO_ALLOWLIST, &err), 0);
	assert_int_equal(conf.n_sysctls, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(conf.sysctls[i].path, want[i]);
		assert_int_equal(conf.sysctls[i].scope, i < 3 ? TUNING_KEY_NETNS : TUNING_KEY_OWN);
	}
}

static void test_args_cni(void **state)
{
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load(HEAD ",\"sysctl\":{\"net.ipv4.conf.all.arp_ignore\":\"1\"},"
			      "\"promisc\":true,\"mtu\":1400,\"allmulti\":true,"
			      "\"args\":{\"cni\":{\"sysctl\":{\"net.ipv4.conf.all.arp_ignore\":\"2\","
			      "\"net.ipv4.conf.all.rp_filter\":\"2\"},\"promisc\":false,\"mtu\":1300,"
			      "\"allmulti\":false,\"txQLen\":100}}}", "", &err), 0);
	assert_int_equal(conf.n_sysctls, 2);
	assert_string_equal(conf.sysctls[0].value, "2");
	assert_string_equal(conf.sysctls[1].path, "ipv4/conf/all/rp_filter");
	assert_false(conf.promisc);
	assert_int_equal(conf.mtu, 1300);
	assert_false(conf.allmulti);
	assert_true(conf.has_txqlen);
	assert_int_equal(conf.txqlen, 100);
}

static void test_mac_precedence(void **state)
{
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load(HEAD ",\"mac\":\"02:00:00:00:00:01\"}", "", &err), 0);
	assert_string_equal(conf.mac_text, "02:00:00:00:00:01");
	assert_int_equal(load(HEAD ",\"mac\":\"02:00:00:00:00:01\"}", "MAC=02:00:00:00:00:02", &err), 0);
	assert_string_equal(conf.mac_text, "02:00:00:00:00:02");
	assert_int_equal(load(HEAD ",\"mac\":\"02:00:00:00:00:01\",\"runtimeConfig\":{\"mac\":"
			      "\"02:00:00:00:00:03\"}}", "MAC=02:00:00:00:00:02", &err), 0);
	assert_string_equal(conf.mac_text, "02:00:00:00:00:03");
	assert_int_equal(load(HEAD ",\"runtimeConfig\":{\"mac\":\"02:00:00:00:00:03\"},"
			      "\"args\":{\"cni\":{\"mac\":\"02:00:00:00:00:04\"}}}",
			      "MAC=02:00:00:00:00:02", &err), 0);
	assert_string_equal(conf.mac_text, "02:00:00:00:00:04");
	/* Only the winner is parsed: an overridden bad one does not matter. */
	assert_int_equal(load(HEAD ",\"mac\":\"bogus\",\"runtimeConfig\":{\"mac\":\"02:00:00:00:00:03\"}}",
			      "", &err), 0);
	assert_string_equal(conf.mac_text, "02:00:00:00:00:03");
	/* Empty is not given. */
	assert_int_equal(load(HEAD ",\"mac\":\"02:00:00:00:00:01\",\"runtimeConfig\":{\"mac\":\"\"}}",
			      "MAC=", &err), 0);
	assert_string_equal(conf.mac_text, "02:00:00:00:00:01");
}

static void test_refusals(void **state)
{
	(void)state;
	expect_refused(HEAD ",\"mac\":\"01:00:5e:00:00:01\"}", "", CNI_ERR_INVALID_CONFIG, "multicast");
	expect_refused(HEAD ",\"mac\":\"00:00:00:00:00:00\"}", "", CNI_ERR_INVALID_CONFIG, "all zero");
	expect_refused(HEAD ",\"mac\":\"02:00:00:00:01\"}", "", CNI_ERR_INVALID_CONFIG,
		       "invalid MAC address");
	expect_refused(HEAD "}", "MAC=zz", CNI_ERR_INVALID_CONFIG, "from CNI_ARGS MAC");
	expect_refused(HEAD "}", "FOO=1", CNI_ERR_INVALID_ENV, "FOO");
	assert_int_equal(load(HEAD "}", "FOO=1;IgnoreUnknown=1", &(struct cni_err){ 0 }), 0);
	expect_refused(HEAD ",\"mtu\":-1}", "", CNI_ERR_INVALID_CONFIG, "mtu");
	expect_refused(HEAD ",\"mtu\":\"1400\"}", "", CNI_ERR_DECODE, "mtu");
	expect_refused(HEAD ",\"txQLen\":-5}", "", CNI_ERR_INVALID_CONFIG, "txQLen");
	expect_refused(HEAD ",\"promisc\":\"yes\"}", "", CNI_ERR_DECODE, "promisc");
	expect_refused(HEAD ",\"dataDir\":5}", "", CNI_ERR_DECODE, "dataDir");
	expect_refused(HEAD ",\"sysctl\":[\"net.ipv4.ip_forward\"]}", "", CNI_ERR_DECODE, "sysctl");
	expect_refused(HEAD ",\"sysctl\":{\"net.ipv4.ip_forward\":1}}", "", CNI_ERR_DECODE,
		       "expected a string, got number");
	expect_refused(HEAD ",\"sysctl\":{\"net.ipv4.ip_forward\":true}}", "", CNI_ERR_DECODE,
		       "expected a string");
	expect_refused(HEAD ",\"sysctl\":{\"net.ipv4.ip_forward\":\"1\\u0000\"}}", "",
		       CNI_ERR_INVALID_CONFIG, "NUL");
	expect_refused(HEAD ",\"args\":{\"cni\":{\"sysctl\":{\"kernel.hostname\":\"x\"}}}}", "",
		       CNI_ERR_INVALID_CONFIG, "not below net");
	expect_refused(HEAD ",\"sysctl\":{\"net.ipv4.ip_forward\":\"1\",\"net/ipv4/ip_forward\":\"0\"}}",
		       "", CNI_ERR_INVALID_CONFIG, "name the same file");
}

static void test_too_many_sysctls(void **state)
{
	char json[16384];
	int n = snprintf(json, sizeof(json), HEAD ",\"sysctl\":{");

	(void)state;
	for (int i = 0; i <= TUNING_MAX_SYSCTLS; i++)
		n += snprintf(json + n, sizeof(json) - (size_t)n, "%s\"net.ipv4.k%d\":\"1\"", i ? "," : "", i);
	snprintf(json + n, sizeof(json) - (size_t)n, "}}");
	expect_refused(json, "", CNI_ERR_INVALID_CONFIG, "too many sysctls");
}

static void expect_key(const char *key, const char *ifname, const char *path,
		       enum tuning_key_scope scope)
{
	char buf[TUNING_SYSCTL_PATH_MAX];
	enum tuning_key_scope got;
	struct cni_err err = { 0 };

	if (tuning_sysctl_key_resolve(key, ifname, buf, sizeof(buf), &got, &err) < 0)
		fail_msg("key \"%s\" refused: %s", key, err.msg);
	assert_string_equal(buf, path);
	assert_int_equal(got, scope);
}

static void expect_key_refused(const char *key, const char *why)
{
	char buf[TUNING_SYSCTL_PATH_MAX];
	enum tuning_key_scope got;
	struct cni_err err = { 0 };

	assert_int_equal(tuning_sysctl_key_resolve(key, "net1", buf, sizeof(buf), &got, &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	if (!strstr(err.msg, why) || !strstr(err.msg, "invalid net sysctl key"))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, why);
}

static void test_sysctl_keys(void **state)
{
	char long_key[300];

	(void)state;
	expect_key("net.ipv4.conf.IFNAME.arp_ignore", "net1", "ipv4/conf/net1/arp_ignore", TUNING_KEY_OWN);
	expect_key("net/ipv4/conf/IFNAME/arp_announce", "net1", "ipv4/conf/net1/arp_announce",
		   TUNING_KEY_OWN);
	/* The interface's own dots stay: IFNAME is put in after the dots became separators. */
	expect_key("net.ipv4.conf.IFNAME.rp_filter", "eth0.100", "ipv4/conf/eth0.100/rp_filter",
		   TUNING_KEY_OWN);
	expect_key("net.ipv4.neigh.IFNAME.base_reachable_time_ms", "net1",
		   "ipv4/neigh/net1/base_reachable_time_ms", TUNING_KEY_OWN);
	expect_key("net.ipv4.conf.net1.arp_ignore", "net1", "ipv4/conf/net1/arp_ignore", TUNING_KEY_OWN);
	expect_key("net.ipv4.conf.all.arp_ignore", "net1", "ipv4/conf/all/arp_ignore", TUNING_KEY_NETNS);
	expect_key("net.ipv6.conf.default.accept_ra", "net1", "ipv6/conf/default/accept_ra",
		   TUNING_KEY_NETNS);
	expect_key("net.ipv4.ip_forward", "net1", "ipv4/ip_forward", TUNING_KEY_NETNS);
	/* Allowed as upstream allows it; the plugin logs it. */
	expect_key("net.ipv4.conf.eth0.arp_ignore", "net1", "ipv4/conf/eth0/arp_ignore", TUNING_KEY_OTHER);
	/* Only the first IFNAME is replaced, as upstream. */
	expect_key("net.ipv4.conf.IFNAME.IFNAME", "net1", "ipv4/conf/net1/IFNAME", TUNING_KEY_OWN);

	expect_key_refused("", "empty");
	expect_key_refused("net/ipv4/../../kernel/hostname", "empty component");
	expect_key_refused("net.ipv4..ip_forward", "empty component");
	expect_key_refused("/proc/sys/net/ipv4/ip_forward", "empty component");
	expect_key_refused("net.ipv4.ip_forward.", "empty component");
	expect_key_refused("kernel.hostname", "not below net");
	expect_key_refused("network.x.y", "not below net");
	expect_key_refused("net.ipv4", "directory");
	expect_key_refused("net.ipv4.conf.all.arp ignore", "space");
	expect_key_refused("net.ipv4.conf.all.arp\nignore", "control");
	memset(long_key, 'a', sizeof(long_key) - 1);
	memcpy(long_key, "net.", 4);
	long_key[sizeof(long_key) - 1] = '\0';
	expect_key_refused(long_key, "too long");
}

/* The pairs are only read: literals stand in for the copies a config load makes. */
#define PAIR(k, v) { (char *)(uintptr_t)(k), (char *)(uintptr_t)(v) }

/* The allowlist of a test: a file in a temporary directory. */
static char *allowlist_file(const char *text)
{
	static char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/tu-allowlist-XXXXXX");
	close(mkstemp(path));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void test_allowlist(void **state)
{
	struct cni_conf_pair ok[] = { PAIR("net.ipv4.conf.IFNAME.arp_ignore", "1"),
				      PAIR("net.ipv4.conf.all.rp_filter", "0") };
	struct cni_conf_pair bad[] = { PAIR("net.ipv4.conf.IFNAME.arp_ignore", "1"),
				       PAIR("net.core.somaxconn", "1") };
	struct cni_err err = { 0 };
	char *path;

	(void)state;
	assert_int_equal(tuning_allowlist_check(NO_ALLOWLIST, bad, 2, &err), 0);
	path = allowlist_file("\n  ^net\\.ipv4\\.conf\\.IFNAME\\.arp_(ignore|announce)$  \n"
			      "^net\\.ipv4\\.conf\\.all\\.\n");
	assert_int_equal(tuning_allowlist_check(path, ok, 2, &err), 0);
	assert_int_equal(tuning_allowlist_check(path, bad, 2, &err), -EPERM);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(err.msg, "Sysctl net.core.somaxconn is not allowed"));
	unlink(path);

	/* Unanchored, as upstream's RE2 MatchString. */
	path = allowlist_file("arp_ignore");
	assert_int_equal(tuning_allowlist_check(path, ok, 1, &(struct cni_err){ 0 }), 0);
	unlink(path);

	path = allowlist_file("^net(\n");
	err = (struct cni_err){ 0 };
	assert_int_equal(tuning_allowlist_check(path, ok, 1, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "line 1"));
	unlink(path);

	/* Loaded with the config: keys of args.cni count too. */
	path = allowlist_file("^net\\.ipv4\\.conf\\.all\\.");
	err = (struct cni_err){ 0 };
	assert_true(load_with(HEAD ",\"sysctl\":{\"net.ipv4.conf.all.rp_filter\":\"0\"},\"args\":{\"cni\":"
			      "{\"sysctl\":{\"net.ipv4.ip_forward\":\"1\"}}}}", "", "net1", path, &err) < 0);
	assert_non_null(strstr(err.msg, "net.ipv4.ip_forward is not allowed"));
	unlink(path);
}

static void test_state_text(void **state)
{
	struct tuning_state s = { 0 }, back;
	struct tuning_state_sysctl sc[2] = { { "ipv4/conf/net1/arp_ignore", "0" },
					     { "ipv4/tcp_rmem", "4096\t131072 6291456" } };
	char *text = NULL;

	(void)state;
	s.has_mac = true;
	s.mac_len = 6;
	memcpy(s.mac, "\x02\x01\x02\x03\x04\x05", 6);
	s.has_mtu = true;
	s.mtu = 1500;
	s.has_promisc = true;
	s.has_allmulti = true;
	s.allmulti = true;
	s.has_txqlen = true;
	s.txqlen = 1000;
	s.sysctls = sc;
	s.n_sysctls = 2;
	assert_int_equal(tuning_state_format(&s, &text), 0);
	assert_int_equal(tuning_state_parse(text, &back), 0);
	free(text);
	assert_true(back.has_mac);
	assert_memory_equal(back.mac, s.mac, 6);
	assert_int_equal(back.mtu, 1500);
	assert_true(back.has_promisc);
	assert_false(back.promisc);
	assert_true(back.allmulti);
	assert_int_equal(back.txqlen, 1000);
	assert_int_equal(back.n_sysctls, 2);
	assert_string_equal(back.sysctls[1].path, "ipv4/tcp_rmem");
	assert_string_equal(back.sysctls[1].value, "4096\t131072 6291456");
	tuning_state_free(&back);

	/* Only what this plugin writes is taken. */
	static const char *const corrupt[] = {
		"mtu 0\n",
		"mtu 99999999999\n",
		"promisc 2\n",
		"txqlen -1\n",
		"mac zz\n",
		"sysctl ../../kernel/x 1\n",
		"sysctl /etc/x 1\n",
		"sysctl novalue\n",
		"mtu 1500\nmtu 1500\n",
		"mtu 1500",
		"sysctl a 1\nunknown\n",
		"cni-rdma-plugins tuning state 1\nmtu 1500\n",
	};
	for (size_t i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++) {
		char *t = strdup(corrupt[i]);

		if (tuning_state_parse(t, &back) != -EBADMSG)
			fail_msg("state %zu taken: %s", i, corrupt[i]);
		free(t);
	}
}

/*
 * A record the build before common/record wrote (tests/unit/golden/record, made by that
 * build's tuning_state_format()): read by this build, and formatted again to the same bytes.
 */
static void test_state_previous_build(void **state)
{
	char dir[] = "/tmp/rm-tuning.XXXXXX", path[512], *golden = NULL, *body = NULL, *again = NULL;
	struct tuning_state s;
	unsigned int version;
	size_t len;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/record/tuning.cid1-net1", getenv("GOLDEN_DIR"));
	assert_int_equal(file_read(path, TUNING_STATE_MAX_BYTES, &golden, &len), 0);
	snprintf(path, sizeof(path), "%s/cid1:net1", dir);
	assert_int_equal(file_write_atomic(path, golden, len, 0600, &(const char *){ NULL }), 0);
	assert_int_equal(record_load(dir, "cid1:net1", "tuning", 1, TUNING_STATE_MAX_BYTES, &body,
				     &version), 0);
	assert_int_equal(version, 1);
	assert_int_equal(tuning_state_parse(body, &s), 0);
	assert_true(s.has_mac && s.mac_len == 6 && s.mac[0] == 2 && s.mac[5] == 1);
	assert_true(s.has_mtu && s.mtu == 9000);
	assert_true(s.has_promisc && !s.promisc);
	assert_true(s.has_allmulti && s.allmulti);
	assert_true(s.has_txqlen && s.txqlen == 1000);
	assert_int_equal(s.n_sysctls, 2);
	assert_string_equal(s.sysctls[1].path, "ipv6/conf/net1/accept_ra");
	assert_string_equal(s.sysctls[1].value, "0 \n\\x");
	assert_int_equal(tuning_state_format(&s, &again), 0);
	assert_string_equal(again, strchr(golden, '\n') + 1);
	tuning_state_free(&s);
	free(again);
	free(body);
	free(golden);
	unlink(path);
	rmdir(dir);
}

static void test_state_name(void **state)
{
	char buf[300];

	(void)state;
	assert_int_equal(tuning_state_name("abc123", "net1", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "abc123:net1");
	assert_int_equal(tuning_state_name("../x", "net1", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tuning_state_name("abc", "a/b", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tuning_state_name("abc", "..", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tuning_state_name("", "net1", buf, sizeof(buf)), -EINVAL);
	memset(buf, 'a', 250);
	buf[250] = '\0';
	{
		char out[300];

		assert_int_equal(tuning_state_name(buf, "net1", out, sizeof(out)), -ENAMETOOLONG);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_field),
		cmocka_unit_test(test_multirail_profile),
		cmocka_unit_test(test_args_cni),
		cmocka_unit_test(test_mac_precedence),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_too_many_sysctls),
		cmocka_unit_test(test_sysctl_keys),
		cmocka_unit_test(test_allowlist),
		cmocka_unit_test(test_state_text),
		cmocka_unit_test(test_state_name),
		cmocka_unit_test(test_state_previous_build),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
