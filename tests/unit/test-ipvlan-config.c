/* Unit tests: ipvlan config fields, the chained master and addresses, refusals (no kernel) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <linux/if_link.h>

#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/ipvlan/config.h"

/* Strings in a loaded ipvlan_conf point into the config: it lives until the next load. */
static struct cni_ctx loaded;

static int teardown(void **state)
{
	(void)state;
	cni_conf_free(&loaded.conf);
	return 0;
}

static int load(const char *json, bool check, struct ipvlan_conf *c, struct cni_err *err)
{
	int r;

	cni_conf_free(&loaded.conf);
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	return r < 0 ? r : ipvlan_config_load(&loaded, check, c, err);
}

static void expect_refused(const char *json, int code, const char *msg_part)
{
	struct ipvlan_conf c;
	struct cni_err err = { 0 };

	assert_true(load(json, false, &c, &err) < 0);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg_part);
}

#define HEAD "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"ipvlan\","
#define IPAM "\"ipam\":{\"type\":\"host-local\"}"

static void test_defaults(void **state)
{
	struct ipvlan_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load(HEAD IPAM "}", false, &c, &err), 0);
	assert_null(c.master);
	assert_false(c.master_from_prev);
	assert_int_equal(c.mode, IPVLAN_MODE_L2);
	assert_int_equal(c.flags, 0);
	assert_int_equal(c.mtu, 0);
	assert_false(c.link_in_container);
	assert_true(c.has_ipam);
	assert_false(c.use_prev_ips);
}

static void test_every_field(void **state)
{
	struct ipvlan_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load(HEAD "\"master\":\"ens2f0\",\"mode\":\"l3s\",\"flag\":\"vepa\","
			      "\"mtu\":9000,\"linkInContainer\":true," IPAM "}", false, &c, &err), 0);
	assert_string_equal(c.master, "ens2f0");
	assert_int_equal(c.mode, IPVLAN_MODE_L3S);
	assert_int_equal(c.flags, IPVLAN_F_VEPA);
	assert_int_equal(c.mtu, 9000);
	assert_true(c.link_in_container);
}

static void test_modes_and_flags(void **state)
{
	static const struct {
		const char *key, *name;
		uint16_t mode, flags;
	} ok[] = {
		{ "mode", "", IPVLAN_MODE_L2, 0 },	   { "mode", "l2", IPVLAN_MODE_L2, 0 },
		{ "mode", "l3", IPVLAN_MODE_L3, 0 },	   { "mode", "l3s", IPVLAN_MODE_L3S, 0 },
		{ "flag", "", IPVLAN_MODE_L2, 0 },	   { "flag", "bridge", IPVLAN_MODE_L2, 0 },
		{ "flag", "private", IPVLAN_MODE_L2, IPVLAN_F_PRIVATE },
		{ "flag", "vepa", IPVLAN_MODE_L2, IPVLAN_F_VEPA },
	};
	char json[256];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct ipvlan_conf c;
		struct cni_err err = { 0 };

		snprintf(json, sizeof(json), HEAD "\"%s\":\"%s\"," IPAM "}", ok[i].key, ok[i].name);
		assert_int_equal(load(json, false, &c, &err), 0);
		assert_int_equal(c.mode, ok[i].mode);
		assert_int_equal(c.flags, ok[i].flags);
	}
	assert_string_equal(ipvlan_config_mode_name(IPVLAN_MODE_L3S), "l3s");
	assert_string_equal(ipvlan_config_flag_name(IPVLAN_F_PRIVATE), "private");
	assert_string_equal(ipvlan_config_flag_name(0), "bridge");
	assert_string_equal(ipvlan_config_mode_name(9), "unknown");
	expect_refused(HEAD "\"mode\":\"l4\"," IPAM "}", CNI_ERR_INVALID_CONFIG,
		       "unknown ipvlan mode: \"l4\"");
	expect_refused(HEAD "\"mode\":\"L2\"," IPAM "}", CNI_ERR_INVALID_CONFIG, "unknown ipvlan mode");
	expect_refused(HEAD "\"flag\":\"passthru\"," IPAM "}", CNI_ERR_INVALID_CONFIG,
		       "unknown ipvlan flag: \"passthru\"");
	expect_refused(HEAD "\"mode\":2," IPAM "}", CNI_ERR_DECODE, "\"mode\"");
	expect_refused(HEAD "\"flag\":true," IPAM "}", CNI_ERR_DECODE, "\"flag\"");
}

static void test_field_types(void **state)
{
	(void)state;
	expect_refused(HEAD "\"mtu\":\"9000\"," IPAM "}", CNI_ERR_DECODE, "\"mtu\"");
	expect_refused(HEAD "\"mtu\":1.5," IPAM "}", CNI_ERR_DECODE, "\"mtu\"");
	expect_refused(HEAD "\"mtu\":-1," IPAM "}", CNI_ERR_INVALID_CONFIG, "invalid MTU -1");
	expect_refused(HEAD "\"mtu\":2147483648," IPAM "}", CNI_ERR_INVALID_CONFIG, "\"mtu\"");
	expect_refused(HEAD "\"master\":[\"a\"]," IPAM "}", CNI_ERR_DECODE, "\"master\"");
	expect_refused(HEAD "\"master\":\"abcdefghijklmnopq\"," IPAM "}", CNI_ERR_INVALID_CONFIG,
		       "invalid master");
	expect_refused(HEAD "\"master\":\"a/b\"," IPAM "}", CNI_ERR_INVALID_CONFIG, "invalid master");
	expect_refused(HEAD "\"linkInContainer\":\"yes\"," IPAM "}", CNI_ERR_DECODE,
		       "\"linkInContainer\"");
}

/* Addresses come from IPAM, or chained from prevResult; neither is refused before the kernel. */
static void test_addresses(void **state)
{
	struct ipvlan_conf c;
	struct cni_err err = { 0 };

	(void)state;
	expect_refused(HEAD "\"master\":\"eth0\"}", CNI_ERR_INVALID_CONFIG, "no plugin name provided");
	expect_refused(HEAD "\"master\":\"eth0\",\"ipam\":{}}", CNI_ERR_INVALID_CONFIG,
		       "no plugin name provided");
	expect_refused(HEAD "\"master\":\"eth0\",\"prevResult\":{\"cniVersion\":\"1.0.0\","
		       "\"interfaces\":[{\"name\":\"eth0\"}]}}", CNI_ERR_INVALID_CONFIG,
		       "no plugin name provided");
	assert_int_equal(load(HEAD "\"master\":\"eth0\",\"prevResult\":{\"cniVersion\":\"1.0.0\","
			      "\"ips\":[{\"address\":\"10.1.0.5/24\"}]}}", false, &c, &err), 0);
	assert_true(c.use_prev_ips);
	assert_false(c.has_ipam);
	/* IPAM given: prevResult's addresses are not used. */
	assert_int_equal(load(HEAD "\"master\":\"eth0\"," IPAM ",\"prevResult\":{\"cniVersion\":\"1.0.0\","
			      "\"ips\":[{\"address\":\"10.1.0.5/24\"}]}}", false, &c, &err), 0);
	assert_false(c.use_prev_ips);
	/* CHECK needs neither. */
	assert_int_equal(load(HEAD "\"master\":\"eth0\"}", true, &c, &err), 0);
}

/* Chained without "master": the one named interface of prevResult. */
static void test_chained_master(void **state)
{
	struct ipvlan_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load(HEAD "\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":"
			      "[{\"name\":\"net0\",\"sandbox\":\"/var/run/netns/p\"}],"
			      "\"ips\":[{\"address\":\"10.1.0.5/24\",\"interface\":0}]}}", false, &c, &err),
			 0);
	assert_string_equal(c.master, "net0");
	assert_true(c.master_from_prev);
	assert_true(c.use_prev_ips);
	/* Not at CHECK, whose prevResult is the ipvlan's own. */
	assert_int_equal(load(HEAD "\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":"
			      "[{\"name\":\"net1\"}]}}", true, &c, &err), 0);
	assert_null(c.master);
	expect_refused(HEAD IPAM ",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":"
		       "[{\"name\":\"a\"},{\"name\":\"b\"}]}}", CNI_ERR_INVALID_CONFIG,
		       "chained master failure. PrevResult lacks a single named interface");
	expect_refused(HEAD IPAM ",\"prevResult\":{\"cniVersion\":\"1.0.0\"}}", CNI_ERR_INVALID_CONFIG,
		       "chained master failure");
	expect_refused(HEAD IPAM ",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":"
		       "[{\"name\":\"abcdefghijklmnopq\"}]}}", CNI_ERR_INVALID_CONFIG, "invalid master");
	/* A master given wins over prevResult's interface. */
	assert_int_equal(load(HEAD "\"master\":\"eth9\"," IPAM ",\"prevResult\":{\"cniVersion\":\"1.0.0\","
			      "\"interfaces\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}", false, &c, &err), 0);
	assert_string_equal(c.master, "eth9");
	assert_false(c.master_from_prev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_defaults, teardown),
		cmocka_unit_test_teardown(test_every_field, teardown),
		cmocka_unit_test_teardown(test_modes_and_flags, teardown),
		cmocka_unit_test_teardown(test_field_types, teardown),
		cmocka_unit_test_teardown(test_addresses, teardown),
		cmocka_unit_test_teardown(test_chained_master, teardown),
	};

	return cmocka_run_group_tests_name("ipvlan config", tests, NULL, NULL);
}
