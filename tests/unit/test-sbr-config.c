/* Unit tests: sbr config fields and refusals, prevResult's addresses, the table choice, its record */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/util/error.h"
#include "plugins/sbr/config.h"
#include "plugins/sbr/state.h"
#include "plugins/sbr/table.h"

static struct cni_ctx loaded;

static int teardown(void **state)
{
	(void)state;
	cni_conf_free(&loaded.conf);
	return 0;
}

static int load(const char *members, struct sbr_conf *c, struct cni_err *err)
{
	char json[2048];
	int r;

	cni_conf_free(&loaded.conf);
	snprintf(json, sizeof(json), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"sbr\"%s%s}",
		 *members ? "," : "", members);
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	if (r >= 0)
		r = sbr_config_load(&loaded, c, err);
	return r;
}

static void expect_refused(const char *members, int code, const char *msg_part)
{
	struct sbr_conf c;
	struct cni_err err = { 0 };

	assert_true(load(members, &c, &err) < 0);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg_part))
		fail_msg("%s: message \"%s\" lacks \"%s\"", members, err.msg, msg_part);
}

static void expect_addr(const struct ip_addr *a, const char *text)
{
	char buf[IP_PREFIX_STRLEN];

	assert_string_equal(ip_addr_format(a, buf, sizeof(buf)), text);
}

static void test_defaults(void **state)
{
	struct sbr_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load("", &c, &err), 0);
	assert_false(c.has_table);
	assert_false(c.has_gw4);
	assert_false(c.has_gw6);
	assert_false(c.add_source_hints);
	/* null is absent, as Go's decoder leaves a pointer nil */
	assert_int_equal(load("\"table\":null,\"gateways\":null", &c, &err), 0);
	assert_false(c.has_table);
	assert_false(c.has_gw4);
}

static void test_every_field(void **state)
{
	struct sbr_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load("\"table\":5000,\"gateways\":[\"fd00::1\",\"10.0.0.1\"],"
			      "\"addSourceHints\":true", &c, &err), 0);
	assert_true(c.has_table);
	assert_int_equal(c.table, 5000);
	assert_true(c.has_gw4);
	expect_addr(&c.gw4, "10.0.0.1");
	assert_true(c.has_gw6);
	expect_addr(&c.gw6, "fd00::1");
	assert_true(c.add_source_hints);
	/* Keys match in any case, as Go's decoder matches them. */
	assert_int_equal(load("\"Table\":7", &c, &err), 0);
	assert_int_equal(c.table, 7);
}

static void test_table_range(void **state)
{
	struct sbr_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load("\"table\":1", &c, &err), 0);
	assert_int_equal(c.table, 1);
	assert_int_equal(load("\"table\":4294967295", &c, &err), 0);
	assert_int_equal(c.table, UINT32_MAX);
	/* The kernel's own tables are accepted as in the reference: "lookup main" has a use. */
	assert_int_equal(load("\"table\":254", &c, &err), 0);
	assert_int_equal(c.table, 254);
	expect_refused("\"table\":0", CNI_ERR_INVALID_CONFIG, "out of range");
	expect_refused("\"table\":-1", CNI_ERR_INVALID_CONFIG, "out of range");
	expect_refused("\"table\":4294967296", CNI_ERR_INVALID_CONFIG, "out of range");
	expect_refused("\"table\":99999999999999999999", CNI_ERR_INVALID_CONFIG, "out of range");
	expect_refused("\"table\":\"100\"", CNI_ERR_DECODE, "table");
	expect_refused("\"table\":100.5", CNI_ERR_DECODE, "table");
	expect_refused("\"table\":true", CNI_ERR_DECODE, "table");
}

static void test_gateways(void **state)
{
	struct sbr_conf c;
	struct cni_err err = { 0 };

	(void)state;
	/* An IPv4-mapped IPv6 address is IPv4, as Go's To4() sees it. */
	assert_int_equal(load("\"gateways\":[\"::ffff:192.0.2.1\"]", &c, &err), 0);
	assert_true(c.has_gw4);
	assert_false(c.has_gw6);
	expect_addr(&c.gw4, "192.0.2.1");
	assert_int_equal(load("\"gateways\":[]", &c, &err), 0);
	assert_false(c.has_gw4 || c.has_gw6);
	expect_refused("\"gateways\":[\"10.0.0.1\",\"fd00::1\",\"10.0.0.2\"]", CNI_ERR_INVALID_CONFIG,
		       "more than 2 entries");
	expect_refused("\"gateways\":[\"10.0.0.300\"]", CNI_ERR_INVALID_CONFIG,
		       "invalid static gateway IP address: 10.0.0.300");
	expect_refused("\"gateways\":[\"10.0.0.0/24\"]", CNI_ERR_INVALID_CONFIG, "invalid static gateway");
	expect_refused("\"gateways\":[\"\"]", CNI_ERR_INVALID_CONFIG, "invalid static gateway");
	expect_refused("\"gateways\":[\"10.0.0.1\",\"10.0.0.2\"]", CNI_ERR_INVALID_CONFIG,
		       "multiple IPv4 addresses: 10.0.0.1 and 10.0.0.2");
	expect_refused("\"gateways\":[\"fd00::1\",\"fd00::2\"]", CNI_ERR_INVALID_CONFIG,
		       "multiple IPv6 addresses");
	expect_refused("\"gateways\":\"10.0.0.1\"", CNI_ERR_DECODE, "gateways");
	expect_refused("\"gateways\":[1]", CNI_ERR_DECODE, "gateways");
	expect_refused("\"addSourceHints\":\"yes\"", CNI_ERR_DECODE, "addSourceHints");
}

static int parse_prev(const char *json, struct cni_result *ret)
{
	struct cni_err err = { 0 };

	return cni_result_parse(json, strlen(json), "1.0.0", ret, &err);
}

static void test_addresses(void **state)
{
	const struct cni_ip **ips = NULL;
	struct cni_result prev = { 0 };
	struct cni_err err = { 0 };
	size_t n = 0;

	(void)state;
	/* Another interface's address is left out; one without an interface counts. */
	assert_int_equal(parse_prev("{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\"},"
				    "{\"name\":\"net1\",\"sandbox\":\"/x\"}],\"ips\":["
				    "{\"address\":\"10.0.0.2/24\",\"interface\":0},"
				    "{\"address\":\"10.1.0.2/24\",\"interface\":1},"
				    "{\"address\":\"fd01::2/64\"},"
				    "{\"address\":\"10.2.0.2/24\"}]}", &prev), 0);
	assert_int_equal(sbr_config_addresses(&prev, "net1", &ips, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_ptr_equal(ips[0], &prev.ips[1]);
	assert_ptr_equal(ips[1], &prev.ips[2]);
	assert_ptr_equal(ips[2], &prev.ips[3]);
	free(ips);

	/* Only those without an interface of their own are left for an interface not listed. */
	assert_int_equal(sbr_config_addresses(&prev, "net9", &ips, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_ptr_equal(ips[0], &prev.ips[2]);
	free(ips);
	cni_result_free(&prev);

	assert_int_equal(parse_prev("{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\"}],"
				    "\"ips\":[{\"address\":\"10.0.0.2/24\",\"interface\":0}]}", &prev), 0);
	err = (struct cni_err){ 0 };
	assert_true(sbr_config_addresses(&prev, "net1", &ips, &n, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(err.msg, "no IP address of interface net1"));
	cni_result_free(&prev);

	assert_int_equal(parse_prev("{\"cniVersion\":\"1.0.0\",\"ips\":[]}", &prev), 0);
	err = (struct cni_err){ 0 };
	assert_true(sbr_config_addresses(&prev, "net1", &ips, &n, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_string_equal(err.msg, "No IP addresses supplied on interface: net1");
	cni_result_free(&prev);

	err = (struct cni_err){ 0 };
	assert_true(sbr_config_addresses(NULL, "net1", &ips, &n, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_string_equal(err.msg, "This plugin must be called as chained plugin");
}

static void test_table_next(void **state)
{
	static const uint32_t two[] = { 101, 100, 100 };
	static const uint32_t gap[] = { 100, 102, 5000 };
	static const uint32_t top[] = { UINT32_MAX - 1, UINT32_MAX };
	uint32_t *full;

	(void)state;
	assert_int_equal(sbr_table_next(NULL, 0, 100), 100);
	assert_int_equal(sbr_table_next(two, 3, 100), 102);
	assert_int_equal(sbr_table_next(gap, 3, 100), 101);
	assert_int_equal(sbr_table_next(gap, 3, 102), 103);
	/* 0, 253, 254 and 255 are the kernel's, taken even when nothing points there */
	assert_int_equal(sbr_table_next(NULL, 0, 0), 1);
	assert_int_equal(sbr_table_next(NULL, 0, 253), 256);
	assert_int_equal(sbr_table_next(top, 2, UINT32_MAX - 1), 0);
	assert_int_equal(sbr_table_next(top, 1, UINT32_MAX - 1), UINT32_MAX);

	full = calloc(153, sizeof(*full));
	assert_non_null(full);
	for (uint32_t i = 0; i < 153; i++)
		full[i] = 100 + i;
	assert_int_equal(sbr_table_next(full, 153, 100), 256);
	free(full);
}

/* The record: its exact body, read back; anything it would not write refused whole. */
static void test_record(void **state)
{
	static const char *const bad[] = {
		"rule 10.1.2.3 100\n",          /* no flag */
		"rule 10.1.2.3 0 1\n",          /* table 0 */
		"rule 10.1.2.3 4294967296 1\n", /* past 32 bits */
		"rule 10.1.2.3 0100 1\n",       /* a leading zero */
		"rule 10.1.2 100 1\n",          /* not an address */
		"rule 10.1.2.3 100 2\n",        /* a flag of 2 */
		"rule 10.1.2.3 100 1",           /* no newline */
		"rules 10.1.2.3 100 1\n",       /* another key */
		"rule 10.1.2.3 100 1\nx\n",    /* a line after */
	};
	struct sbr_state_rule v[3] = { { .table = 100, .filled = true },
				       { .table = 4294967295u, .filled = false },
				       { .table = 7, .filled = true } }, *back = NULL;
	char *text = NULL, buf[64];
	size_t n = 0;

	(void)state;
	assert_int_equal(ip_addr_parse("10.1.2.3", &v[0].src), 0);
	assert_int_equal(ip_addr_parse("fd00::1", &v[1].src), 0);
	assert_int_equal(ip_addr_parse("10.200.0.1", &v[2].src), 0);
	assert_int_equal(sbr_state_format(v, 3, &text), 0);
	assert_string_equal(text, "rule 10.1.2.3 100 1\nrule fd00::1 4294967295 0\nrule 10.200.0.1 7 1\n");
	assert_int_equal(sbr_state_parse(text, &back, &n), 0);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_true(ip_addr_equal(&back[i].src, &v[i].src));
		assert_int_equal(back[i].table, v[i].table);
		assert_int_equal(back[i].filled, v[i].filled);
	}
	free(back);
	free(text);
	text = NULL;
	assert_int_equal(sbr_state_format(v, 0, &text), 0);
	assert_string_equal(text, "");
	assert_int_equal(sbr_state_parse(text, &back, &n), 0);
	assert_int_equal(n, 0);
	free(back);
	free(text);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		back = NULL;
		if (sbr_state_parse(buf, &back, &n) != -EBADMSG)
			fail_msg("accepted: %s", bad[i]);
	}
	assert_int_equal(sbr_state_name("c1", "net1", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "c1:net1");
	assert_int_equal(sbr_state_name("c:1", "net1", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sbr_state_name("c1", "../x", buf, sizeof(buf)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_defaults, teardown),
		cmocka_unit_test_teardown(test_every_field, teardown),
		cmocka_unit_test_teardown(test_table_range, teardown),
		cmocka_unit_test_teardown(test_gateways, teardown),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_table_next),
		cmocka_unit_test(test_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
