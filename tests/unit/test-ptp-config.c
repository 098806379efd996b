/* Unit tests: ptp config keys, their types, defaults and refusals (no kernel) */
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
#include "plugins/ptp/config.h"

static struct cni_ctx loaded;

static int teardown(void **state)
{
	(void)state;
	cni_conf_free(&loaded.conf);
	return 0;
}

static int load(const char *json, bool add, struct ptp_conf *c, struct cni_err *err)
{
	int r;

	cni_conf_free(&loaded.conf);
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	return r < 0 ? r : ptp_config_load(&loaded, add, c, err);
}

static void expect_refused(const char *json, int code, const char *msg_part)
{
	struct ptp_conf c = { .mtu = 77 };
	struct cni_err err = { 0 };

	assert_true(load(json, true, &c, &err) < 0);
	assert_int_equal(err.code, code);
	assert_int_equal(c.mtu, 77); /* written only on success */
	if (!strstr(err.msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg_part);
}

#define HEAD "{\"cniVersion\":\"1.1.0\",\"name\":\"n\",\"type\":\"ptp\","
#define IPAM "\"ipam\":{\"type\":\"host-local\"}"

static void test_defaults(void **state)
{
	struct ptp_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load(HEAD IPAM "}", true, &c, &err), 0);
	assert_false(c.ip_masq);
	assert_int_equal(c.masq_backend, MASQ_DEFAULT);
	assert_int_equal(c.mtu, 0);
}

static void test_fields(void **state)
{
	struct ptp_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load(HEAD "\"ipMasq\":true,\"ipMasqBackend\":\"nftables\",\"mtu\":9000," IPAM "}",
			      true, &c, &err), 0);
	assert_true(c.ip_masq);
	assert_int_equal(c.masq_backend, MASQ_NFTABLES);
	assert_int_equal(c.mtu, 9000);
	assert_int_equal(load(HEAD "\"ipMasq\":true,\"ipMasqBackend\":\"iptables\",\"mtu\":68," IPAM "}",
			      true, &c, &err), 0);
	assert_int_equal(c.masq_backend, MASQ_IPTABLES);
	assert_int_equal(c.mtu, 68);
	assert_int_equal(load(HEAD "\"mtu\":65535,\"ipMasq\":false," IPAM "}", true, &c, &err), 0);
	assert_int_equal(c.mtu, 65535);
	assert_false(c.ip_masq);
	/* As upstream: the backend is read only when ipMasq is on. */
	assert_int_equal(load(HEAD "\"ipMasqBackend\":\"p6\"," IPAM "}", true, &c, &err), 0);
	assert_int_equal(c.masq_backend, MASQ_DEFAULT);
	/* DEL, CHECK and GC read the keys without an ipam section. */
	assert_int_equal(load(HEAD "\"mtu\":1400}", false, &c, &err), 0);
	assert_int_equal(c.mtu, 1400);
	/* ... and take the values ADD refuses: the DEL of a refused ADD succeeds. */
	assert_int_equal(load(HEAD "\"mtu\":20,\"ipMasq\":true,\"ipMasqBackend\":\"p6\"," IPAM "}",
			      false, &c, &err), 0);
	assert_true(c.ip_masq);
	assert_int_equal(c.masq_backend, MASQ_DEFAULT);
	assert_int_equal(load(HEAD "\"mtu\":-5," IPAM "}", false, &c, &err), 0);
	assert_int_equal(c.mtu, 0);
	/* Not their types. */
	err = (struct cni_err){ 0 };
	assert_true(load(HEAD "\"mtu\":\"20\"," IPAM "}", false, &c, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_DECODE);
}

static void test_refusals(void **state)
{
	(void)state;
	expect_refused(HEAD "\"ipMasq\":\"yes\"," IPAM "}", CNI_ERR_DECODE, "\"ipMasq\"");
	expect_refused(HEAD "\"ipMasq\":1," IPAM "}", CNI_ERR_DECODE, "\"ipMasq\"");
	expect_refused(HEAD "\"ipMasqBackend\":5," IPAM "}", CNI_ERR_DECODE, "\"ipMasqBackend\"");
	expect_refused(HEAD "\"ipMasq\":true,\"ipMasqBackend\":\"p6\"," IPAM "}", CNI_ERR_INVALID_CONFIG,
		       "unknown ipmasq backend \"p6\"");
	expect_refused(HEAD "\"mtu\":\"1500\"," IPAM "}", CNI_ERR_DECODE, "\"mtu\"");
	expect_refused(HEAD "\"mtu\":1500.5," IPAM "}", CNI_ERR_DECODE, "\"mtu\"");
	expect_refused(HEAD "\"mtu\":67," IPAM "}", CNI_ERR_INVALID_CONFIG, "invalid MTU 67");
	expect_refused(HEAD "\"mtu\":-1," IPAM "}", CNI_ERR_INVALID_CONFIG, "invalid MTU -1");
	expect_refused(HEAD "\"mtu\":65536," IPAM "}", CNI_ERR_INVALID_CONFIG, "invalid MTU 65536");
	expect_refused(HEAD "\"mtu\":1500}", CNI_ERR_INVALID_CONFIG,
		       "failed to execute IPAM delegate: no plugin name provided");
	expect_refused(HEAD "\"ipam\":{}}", CNI_ERR_INVALID_CONFIG, "needs an \"ipam\" section");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_defaults, teardown),
		cmocka_unit_test_teardown(test_fields, teardown),
		cmocka_unit_test_teardown(test_refusals, teardown),
	};

	return cmocka_run_group_tests_name("ptp config", tests, NULL, NULL);
}
