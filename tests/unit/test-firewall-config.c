/* Unit tests: firewall's keys (every one, its default and refusals) and prevResult's addresses */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/firewall/config.h"

static struct cni_ctx loaded;
static struct firewall_conf conf;

#define PREV "\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"cni0\"}," \
	     "{\"name\":\"eth0\",\"sandbox\":\"/x\"}],\"ips\":[{\"address\":\"10.1.0.5/24\"," \
	     "\"interface\":1},{\"address\":\"fd00::5/64\",\"interface\":1}]}"

static int teardown(void **state)
{
	(void)state;
	firewall_config_free(&conf);
	cni_conf_free(&loaded.conf);
	return 0;
}

static int load(const char *members, struct cni_err *err)
{
	char json[2048];
	int r;

	firewall_config_free(&conf);
	cni_conf_free(&loaded.conf);
	snprintf(json, sizeof(json), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"firewall\"%s%s}",
		 *members ? "," : "", members);
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	if (r >= 0)
		r = firewall_config_load(&loaded, &conf, err);
	return r;
}

static void expect(const char *members, int ret, int code, const char *part)
{
	struct cni_err err = { 0 };
	int r = load(members, &err);

	if (r != ret)
		fail_msg("%s: %d (%s), not %d", members, r, err.msg, ret);
	if (code && (err.code != code || !strstr(err.msg, part)))
		fail_msg("%s: code %d \"%s\", not %d \"%s\"", members, err.code, err.msg, code, part);
}

static void test_defaults_and_keys(void **state)
{
	char text[IP_PREFIX_STRLEN];

	(void)state;
	expect("", 0, 0, NULL);
	assert_int_equal(conf.backend, FIREWALL_AUTO);
	assert_string_equal(conf.admin_chain, "CNI-ADMIN");
	assert_string_equal(conf.zone, "trusted");
	assert_int_equal(conf.policy, FIREWALL_OPEN);
	assert_true(conf.policy_known);
	assert_false(conf.has_prev);
	assert_int_equal(conf.n_ips, 0);
	expect("\"backend\":\"iptables\",\"iptablesAdminChainName\":\"MY-ADMIN\",\"firewalldZone\":\"internal\","
	       "\"ingressPolicy\":\"isolated\"," PREV, 0, 0, NULL);
	assert_int_equal(conf.backend, FIREWALL_IPTABLES);
	assert_string_equal(conf.admin_chain, "MY-ADMIN");
	assert_string_equal(conf.zone, "internal");
	assert_int_equal(conf.policy, FIREWALL_ISOLATED);
	assert_string_equal(conf.bridge, "cni0");
	assert_true(conf.has_prev);
	/* Each address as one host: /32 and /128, as "-d", "-s" and firewalld's sources take them. */
	assert_int_equal(conf.n_ips, 2);
	assert_string_equal(ip_prefix_format(&conf.ips[0], text, sizeof(text)), "10.1.0.5/32");
	assert_string_equal(ip_prefix_format(&conf.ips[1], text, sizeof(text)), "fd00::5/128");
	expect("\"backend\":\"firewalld\",\"ingressPolicy\":\"same-bridge\"," PREV, 0, 0, NULL);
	assert_int_equal(conf.backend, FIREWALL_FIREWALLD);
	assert_int_equal(conf.policy, FIREWALL_SAME_BRIDGE);
	/* Upstream's switch: another backend is the automatic choice; empty strings the defaults. */
	expect("\"backend\":\"nftables\",\"firewalldZone\":\"\",\"iptablesAdminChainName\":\"\","
	       "\"ingressPolicy\":\"\"", 0, 0, NULL);
	assert_int_equal(conf.backend, FIREWALL_AUTO);
	assert_string_equal(conf.zone, "trusted");
	assert_string_equal(conf.admin_chain, "CNI-ADMIN");
	expect("\"ingressPolicy\":\"open\"", 0, 0, NULL);
	/* A policy without prevResult (DEL): no bridge needed. */
	expect("\"ingressPolicy\":\"isolated\"", 0, 0, NULL);
	assert_string_equal(conf.bridge, "");
}

static void test_refusals(void **state)
{
	(void)state;
	expect("\"backend\":7", -EINVAL, CNI_ERR_DECODE, "backend");
	expect("\"firewalldZone\":[]", -EINVAL, CNI_ERR_DECODE, "firewalldZone");
	expect("\"iptablesAdminChainName\":\"A B\"", -EINVAL, CNI_ERR_INVALID_CONFIG, "not an iptables chain name");
	expect("\"iptablesAdminChainName\":\"-X\"", -EINVAL, CNI_ERR_INVALID_CONFIG, "not an iptables chain name");
	expect("\"firewalldZone\":\"a\\nb\"", -EINVAL, CNI_ERR_INVALID_CONFIG, "firewalldZone");
	/* An unknown policy: the rest is read (DEL goes on), the return says so. */
	expect("\"ingressPolicy\":\"closed\"," PREV, -EBADR, CNI_ERR_INVALID_CONFIG,
	       "unknown ingress policy: \"closed\"");
	assert_int_equal(conf.n_ips, 2);
	assert_false(conf.policy_known);
	expect("\"ingressPolicy\":\"isolated\",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"ips\":[]}",
	       -EINVAL, CNI_ERR_INVALID_CONFIG, "interface needs to be set for ingress policy \"isolated\"");
	expect("\"ingressPolicy\":\"isolated\",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":"
	       "[{\"name\":\"\"}]}", -EINVAL, CNI_ERR_INVALID_CONFIG, "got empty bridge name");
	expect("\"ingressPolicy\":\"same-bridge\",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":"
	       "[{\"name\":\"a b -j ACCEPT\"}]}", -EINVAL, CNI_ERR_INVALID_CONFIG, "is no interface name");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_defaults_and_keys, teardown),
		cmocka_unit_test_teardown(test_refusals, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
