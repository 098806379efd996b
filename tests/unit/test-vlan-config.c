/* Unit tests: vlan config fields and refusals (no kernel) */
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
#include "plugins/vlan/config.h"

static struct cni_ctx loaded;

static int teardown(void **state)
{
	(void)state;
	cni_conf_free(&loaded.conf);
	return 0;
}

static int load(const char *json, bool check, struct vlan_conf *c, struct cni_err *err)
{
	int r;

	cni_conf_free(&loaded.conf);
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	return r < 0 ? r : vlan_config_load(&loaded, check, c, err);
}

static void expect_refused(const char *json, int code, const char *msg_part)
{
	struct vlan_conf c;
	struct cni_err err = { 0 };

	assert_true(load(json, false, &c, &err) < 0);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg_part);
}

#define HEAD "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"vlan\","
#define IPAM "\"ipam\":{\"type\":\"host-local\"}"

static void test_fields(void **state)
{
	struct vlan_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load(HEAD "\"master\":\"eth0\"," IPAM "}", false, &c, &err), 0);
	assert_string_equal(c.master, "eth0");
	assert_int_equal(c.id, 0);
	assert_int_equal(c.mtu, 0);
	assert_false(c.link_in_container);
	assert_int_equal(load(HEAD "\"master\":\"ens2f0\",\"vlanId\":4094,\"mtu\":1496,"
			      "\"linkInContainer\":true," IPAM "}", false, &c, &err), 0);
	assert_int_equal(c.id, 4094);
	assert_int_equal(c.mtu, 1496);
	assert_true(c.link_in_container);
	assert_int_equal(load(HEAD "\"master\":\"eth0\",\"vlanId\":1," IPAM "}", false, &c, &err), 0);
	assert_int_equal(c.id, 1);
}

static void test_refusals(void **state)
{
	struct vlan_conf c;
	struct cni_err err = { 0 };

	(void)state;
	expect_refused(HEAD IPAM "}", CNI_ERR_INVALID_CONFIG, "\"master\" field is required");
	expect_refused(HEAD "\"master\":\"\"," IPAM "}", CNI_ERR_INVALID_CONFIG,
		       "\"master\" field is required");
	expect_refused(HEAD "\"master\":\"abcdefghijklmnopq\"," IPAM "}", CNI_ERR_INVALID_CONFIG,
		       "invalid master");
	expect_refused(HEAD "\"master\":\"eth0\",\"vlanId\":4095," IPAM "}", CNI_ERR_INVALID_CONFIG,
		       "invalid VLAN ID 4095 (must be between 0 and 4095 inclusive)");
	expect_refused(HEAD "\"master\":\"eth0\",\"vlanId\":-1," IPAM "}", CNI_ERR_INVALID_CONFIG,
		       "invalid VLAN ID -1");
	expect_refused(HEAD "\"master\":\"eth0\",\"vlanId\":65541," IPAM "}", CNI_ERR_INVALID_CONFIG,
		       "invalid VLAN ID 65541");
	expect_refused(HEAD "\"master\":\"eth0\",\"vlanId\":\"5\"," IPAM "}", CNI_ERR_DECODE,
		       "\"vlanId\"");
	expect_refused(HEAD "\"master\":\"eth0\",\"vlanId\":5.5," IPAM "}", CNI_ERR_DECODE,
		       "\"vlanId\"");
	expect_refused(HEAD "\"master\":\"eth0\",\"vlanId\":5,\"mtu\":-5," IPAM "}",
		       CNI_ERR_INVALID_CONFIG, "invalid MTU -5");
	expect_refused(HEAD "\"master\":\"eth0\",\"vlanId\":5,\"mtu\":true," IPAM "}", CNI_ERR_DECODE,
		       "\"mtu\"");
	expect_refused(HEAD "\"master\":\"eth0\",\"vlanId\":5,\"linkInContainer\":1," IPAM "}",
		       CNI_ERR_DECODE, "\"linkInContainer\"");
	expect_refused(HEAD "\"master\":\"eth0\",\"vlanId\":5}", CNI_ERR_INVALID_CONFIG,
		       "failed to execute IPAM delegate: no plugin name provided");
	/* CHECK needs no IPAM of its own. */
	assert_int_equal(load(HEAD "\"master\":\"eth0\",\"vlanId\":5}", true, &c, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_fields, teardown),
		cmocka_unit_test_teardown(test_refusals, teardown),
	};

	return cmocka_run_group_tests_name("vlan config", tests, NULL, NULL);
}
