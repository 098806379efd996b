/* Unit tests: vrf config fields and refusals (no kernel) */
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
#include "plugins/vrf/config.h"

static struct cni_ctx loaded;

static int teardown(void **state)
{
	(void)state;
	cni_conf_free(&loaded.conf);
	return 0;
}

static int load(const char *json, struct vrf_conf *c, struct cni_err *err)
{
	int r;

	cni_conf_free(&loaded.conf);
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	return r < 0 ? r : vrf_config_load(&loaded, c, err);
}

static void expect_refused(const char *json, int code, const char *msg_part)
{
	struct vrf_conf c;
	struct cni_err err = { 0 };

	assert_true(load(json, &c, &err) < 0);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg_part);
}

#define HEAD "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"vrf\","

static void test_fields(void **state)
{
	struct vrf_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load(HEAD "\"vrfname\":\"blue\"}", &c, &err), 0);
	assert_string_equal(c.name, "blue");
	assert_int_equal(c.table, 0);
	assert_int_equal(load(HEAD "\"vrfname\":\"red\",\"table\":4294967295}", &c, &err), 0);
	assert_int_equal(c.table, 4294967295U);
	assert_int_equal(load(HEAD "\"vrfname\":\"red\",\"table\":1}", &c, &err), 0);
	assert_int_equal(c.table, 1);
	assert_int_equal(load(HEAD "\"vrfname\":\"red\",\"table\":252}", &c, &err), 0);
	assert_int_equal(load(HEAD "\"vrfname\":\"red\",\"table\":256}", &c, &err), 0);
	assert_int_equal(load(HEAD "\"vrfname\":\"red\",\"table\":0}", &c, &err), 0);
	assert_int_equal(c.table, 0);
}

static void test_refusals(void **state)
{
	(void)state;
	expect_refused(HEAD "\"table\":5}", CNI_ERR_INVALID_CONFIG,
		       "configuration is expected to have a valid vrf name");
	expect_refused(HEAD "\"vrfname\":\"\"}", CNI_ERR_INVALID_CONFIG, "valid vrf name");
	expect_refused(HEAD "\"vrfname\":5}", CNI_ERR_DECODE, "\"vrfname\"");
	expect_refused(HEAD "\"vrfname\":\"abcdefghijklmnopq\"}", CNI_ERR_INVALID_CONFIG,
		       "invalid vrfname");
	expect_refused(HEAD "\"vrfname\":\"a b\"}", CNI_ERR_INVALID_CONFIG, "invalid vrfname");
	expect_refused(HEAD "\"vrfname\":\"..\"}", CNI_ERR_INVALID_CONFIG, "invalid vrfname");
	expect_refused(HEAD "\"vrfname\":\"x\",\"table\":-1}", CNI_ERR_INVALID_CONFIG, "\"table\"");
	expect_refused(HEAD "\"vrfname\":\"x\",\"table\":4294967296}", CNI_ERR_INVALID_CONFIG,
		       "\"table\"");
	expect_refused(HEAD "\"vrfname\":\"x\",\"table\":\"10\"}", CNI_ERR_DECODE, "\"table\"");
	expect_refused(HEAD "\"vrfname\":\"x\",\"table\":10.5}", CNI_ERR_DECODE, "\"table\"");
	expect_refused(HEAD "\"vrfname\":\"x\",\"table\":254}", CNI_ERR_INVALID_CONFIG,
		       "the kernel's main table");
	expect_refused(HEAD "\"vrfname\":\"x\",\"table\":255}", CNI_ERR_INVALID_CONFIG,
		       "the kernel's local table");
	expect_refused(HEAD "\"vrfname\":\"x\",\"table\":253}", CNI_ERR_INVALID_CONFIG,
		       "the kernel's default table");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_fields, teardown),
		cmocka_unit_test_teardown(test_refusals, teardown),
	};

	return cmocka_run_group_tests_name("vrf config", tests, NULL, NULL);
}
