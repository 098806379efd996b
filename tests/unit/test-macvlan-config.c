/* Unit tests: macvlan config fields, precedence and refusals (no kernel involved) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/if_link.h>

#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/macvlan/config.h"

/* Strings in a loaded macvlan_conf point into the config: it lives until the next load. */
static struct cni_ctx loaded;

static void release_loaded(void)
{
	cni_args_free(&loaded.args);
	cni_conf_free(&loaded.conf);
}

static int teardown(void **state)
{
	(void)state;
	release_loaded();
	return 0;
}

static int load(const char *json, const char *cni_args, struct macvlan_conf *c, struct cni_err *err)
{
	int r;

	release_loaded();
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	if (r < 0)
		return r;
	r = cni_args_parse(cni_args, &loaded.args, err);
	if (r >= 0)
		r = macvlan_config_load(&loaded, c, err);
	return r;
}

static void expect_refused(const char *json, const char *args, int code, const char *msg_part)
{
	struct macvlan_conf c;
	struct cni_err err = { 0 };

	assert_true(load(json, args, &c, &err) < 0);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg_part);
}

static void test_defaults(void **state)
{
	struct macvlan_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"macvlan\","
			      "\"ipam\":{\"type\":\"host-local\"}}", "", &c, &err), 0);
	assert_null(c.master);
	assert_int_equal(c.mode, MACVLAN_MODE_BRIDGE);
	assert_int_equal(c.mtu, 0);
	assert_false(c.has_mac);
	assert_false(c.link_in_container);
	assert_int_equal(c.bc_queue_len, 0);
	assert_true(c.has_ipam);
}

static void test_every_field(void **state)
{
	struct macvlan_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load("{\"cniVersion\":\"1.1.0\",\"name\":\"n\",\"type\":\"macvlan\","
			      "\"master\":\"ens2f0\",\"mode\":\"vepa\",\"mtu\":9000,"
			      "\"mac\":\"02:00:00:00:00:01\",\"linkInContainer\":true,"
			      "\"bcqueuelen\":1000,\"ipam\":{}}", "", &c, &err), 0);
	assert_string_equal(c.master, "ens2f0");
	assert_int_equal(c.mode, MACVLAN_MODE_VEPA);
	assert_int_equal(c.mtu, 9000);
	assert_true(c.has_mac);
	assert_int_equal(c.mac[5], 1);
	assert_true(c.link_in_container);
	assert_int_equal(c.bc_queue_len, 1000);
	assert_false(c.has_ipam);
}

static void test_modes(void **state)
{
	static const struct {
		const char *name;
		uint32_t mode;
	} ok[] = { { "bridge", MACVLAN_MODE_BRIDGE }, { "private", MACVLAN_MODE_PRIVATE },
		   { "vepa", MACVLAN_MODE_VEPA }, { "passthru", MACVLAN_MODE_PASSTHRU },
		   { "", MACVLAN_MODE_BRIDGE } };
	char json[256];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct macvlan_conf c;
		struct cni_err err = { 0 };

		snprintf(json, sizeof(json), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mode\":\"%s\"}",
			 ok[i].name);
		assert_int_equal(load(json, "", &c, &err), 0);
		assert_int_equal(c.mode, ok[i].mode);
	}
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mode\":\"source\"}", "",
		       CNI_ERR_INVALID_CONFIG,
		       "unknown macvlan mode: \"source\" (one of bridge, private, vepa, passthru)");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mode\":\"Bridge\"}", "",
		       CNI_ERR_INVALID_CONFIG, "unknown macvlan mode");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mode\":4}", "", CNI_ERR_DECODE,
		       "\"mode\"");
}

static void test_field_types(void **state)
{
	(void)state;
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mtu\":\"9000\"}", "", CNI_ERR_DECODE,
		       "\"mtu\"");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mtu\":-1}", "",
		       CNI_ERR_INVALID_CONFIG, "\"mtu\"");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"master\":[\"a\"]}", "",
		       CNI_ERR_DECODE, "\"master\"");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"master\":\"abcdefghijklmnopq\"}", "",
		       CNI_ERR_INVALID_CONFIG, "invalid master");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"linkInContainer\":\"yes\"}", "",
		       CNI_ERR_DECODE, "\"linkInContainer\"");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"bcqueuelen\":4294967296}", "",
		       CNI_ERR_INVALID_CONFIG, "\"bcqueuelen\"");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mac\":1}", "", CNI_ERR_DECODE,
		       "\"mac\"");
}

static void test_mac_precedence(void **state)
{
	static const char base[] = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mac\":\"02:00:00:00:00:01\"";
	struct macvlan_conf c;
	struct cni_err err = { 0 };
	char json[512];

	(void)state;
	snprintf(json, sizeof(json), "%s}", base);
	assert_int_equal(load(json, "IgnoreUnknown=1;MAC=02:00:00:00:00:02", &c, &err), 0);
	assert_int_equal(c.mac[5], 2);
	snprintf(json, sizeof(json), "%s,\"runtimeConfig\":{\"mac\":\"02:00:00:00:00:03\"}}", base);
	assert_int_equal(load(json, "IgnoreUnknown=1;MAC=02:00:00:00:00:02", &c, &err), 0);
	assert_int_equal(c.mac[5], 3);
	assert_int_equal(c.mac_len, 6);
}

static void test_mac_refusals(void **state)
{
	(void)state;
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mac\":\"zz:00:00:00:00:01\"}", "",
		       CNI_ERR_INVALID_CONFIG, "invalid MAC address");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mac\":\"01:00:5e:00:00:01\"}", "",
		       CNI_ERR_INVALID_CONFIG, "multicast");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mac\":\"00:00:00:00:00:00\"}", "",
		       CNI_ERR_INVALID_CONFIG, "all zero");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}", "MAC=02:00:00:00:00", CNI_ERR_INVALID_CONFIG,
		       "CNI_ARGS MAC");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"runtimeConfig\":{\"mac\":\"nope\"}}", "",
		       CNI_ERR_INVALID_CONFIG, "runtimeConfig.mac");
}

static void test_unknown_cni_args(void **state)
{
	struct macvlan_conf c;
	struct cni_err err = { 0 };

	(void)state;
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}", "K8S_POD_NAME=p", CNI_ERR_INVALID_ENV,
		       "unknown args");
	assert_int_equal(load("{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}",
			      "IgnoreUnknown=true;K8S_POD_NAME=p;K8S_POD_NAMESPACE=ns", &c, &err), 0);
}

static void test_l2_old_versions_refused(void **state)
{
	struct macvlan_conf c;
	struct cni_err err = { 0 };

	(void)state;
	expect_refused("{\"cniVersion\":\"0.2.0\",\"name\":\"n\",\"ipam\":{}}", "", CNI_ERR_INVALID_CONFIG,
		       "no valid IP addresses");
	expect_refused("{\"name\":\"n\"}", "", CNI_ERR_INVALID_CONFIG, "no valid IP addresses");
	assert_int_equal(load("{\"cniVersion\":\"0.2.0\",\"name\":\"n\",\"ipam\":{\"type\":\"host-local\"}}",
			      "", &c, &err), 0);
	assert_int_equal(load("{\"cniVersion\":\"0.3.0\",\"name\":\"n\",\"ipam\":{}}", "", &c, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_field),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_field_types),
		cmocka_unit_test(test_mac_precedence),
		cmocka_unit_test(test_mac_refusals),
		cmocka_unit_test(test_unknown_cni_args),
		cmocka_unit_test(test_l2_old_versions_refused),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
