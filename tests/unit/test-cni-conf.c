/* Unit tests: network config parsing and typed access */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cni/conf-keys.h"
#include "common/cni/conf.h"
#include "common/util/error.h"
#include "common/util/json.h"
#include "common/util/log.h"

static int parse(const char *json, struct cni_conf *c, struct cni_err *err)
{
	*c = (struct cni_conf){ 0 };
	return cni_conf_parse(json, strlen(json), c, err);
}

static void expect_fail(const char *json, int code, const char *msg_part)
{
	struct cni_conf c;
	struct cni_err err = { 0 };

	assert_true(parse(json, &c, &err) < 0);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg_part);
}

static void test_operator_nad(void **state)
{
	/* Rendered by the Network Operator from a MacvlanNetwork, spacing as it is. */
	static const char nad[] = "{ \"cniVersion\":\"0.3.1\", \"name\":\"example-macvlannetwork\", "
				  "\"type\":\"macvlan\",\"master\": \"ens2f0\",\"mode\" : \"bridge\","
				  "\"mtu\" : 1500,\"ipam\":{\"type\":\"nv-ipam\",\"poolName\":\"my-pool\"} } ";
	struct cni_conf c;
	struct cni_err err = { 0 };
	const char *s = NULL;
	int64_t mtu = 0;

	(void)state;
	assert_int_equal(parse(nad, &c, &err), 0);
	assert_string_equal(c.cni_version, "0.3.1");
	assert_string_equal(c.name, "example-macvlannetwork");
	assert_string_equal(c.type, "macvlan");
	assert_string_equal(c.ipam_type, "nv-ipam");
	assert_int_equal(cni_conf_get_str(&c, "master", &s, &err), 1);
	assert_string_equal(s, "ens2f0");
	assert_int_equal(cni_conf_get_int(&c, "mtu", 0, 65535, &mtu, &err), 1);
	assert_int_equal(mtu, 1500);
	assert_int_equal(cni_conf_get_str(&c, "ipam.poolName", &s, &err), 1);
	assert_string_equal(s, "my-pool");
	assert_null(c.prev_result);
	assert_false(c.has_dns);
	cni_conf_free(&c);
}

static void test_version_default_and_unknown(void **state)
{
	struct cni_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(parse("{\"name\":\"n\",\"type\":\"macvlan\"}", &c, &err), 0);
	assert_string_equal(c.cni_version, "0.1.0");
	assert_null(c.ipam_type);
	cni_conf_free(&c);

	assert_true(parse("{\"cniVersion\":\"9.9.9\",\"name\":\"n\"}", &c, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_INCOMPATIBLE_VERSION);
	assert_string_equal(err.msg, "incompatible CNI versions");
	assert_non_null(strstr(err.details, "config is \"9.9.9\", plugin supports [\"0.1.0\""));
	expect_fail("{\"cniVersion\":1.0,\"name\":\"n\"}", CNI_ERR_DECODE, "cniVersion");
}

static void test_name_rules(void **state)
{
	(void)state;
	expect_fail("{\"cniVersion\":\"1.0.0\"}", CNI_ERR_INVALID_CONFIG, "missing network name");
	expect_fail("{\"cniVersion\":\"1.0.0\",\"name\":\"\"}", CNI_ERR_INVALID_CONFIG,
		    "missing network name");
	expect_fail("{\"cniVersion\":\"1.0.0\",\"name\":\"a/../b\"}", CNI_ERR_INVALID_CONFIG,
		    "invalid characters found in network name");
	expect_fail("{\"cniVersion\":\"1.0.0\",\"name\":7}", CNI_ERR_DECODE, "\"name\"");
	expect_fail("{\"cniVersion\":\"1.0.0\",\"name\":\"ok\\u0000/../bad name\"}", CNI_ERR_DECODE,
		    "NUL character");
}

static void test_malformed(void **state)
{
	(void)state;
	expect_fail("{\"name\":\"n\",\"ipam\":{\"type\":\"../../bin/sh\"}}", CNI_ERR_INVALID_CONFIG,
		    "invalid ipam type");
	expect_fail("{\"name\":\"n\",\"ipam\":{\"type\":\"..\"}}", CNI_ERR_INVALID_CONFIG,
		    "invalid ipam type");
	expect_fail("", CNI_ERR_DECODE, "empty input");
	expect_fail("{", CNI_ERR_DECODE, "unexpected end");
	expect_fail("{\"name\":\"n\",}", CNI_ERR_DECODE, "error unmarshall network config");
	expect_fail("{\"name\":\"n\"} {}", CNI_ERR_DECODE, "unexpected character at offset 13");
	expect_fail("{\"name\":\"n\"}   x", CNI_ERR_DECODE, "error unmarshall network config");
	/* Where: the line and column too. */
	expect_fail("{\n  \"name\": \"n\",\n  \"mtu\": 15x\n}", CNI_ERR_DECODE, "(line 3, column 12)");
	expect_fail("[1,2]", CNI_ERR_DECODE, "expected an object");
	expect_fail("{'name':'n'}", CNI_ERR_DECODE, "error unmarshall");
	expect_fail("{\"name\":\"n\",\"x\":\"\xff\"}", CNI_ERR_DECODE, "error unmarshall");
	expect_fail("{\"name\":\"n\",\"ipam\":\"host-local\"}", CNI_ERR_DECODE, "\"ipam\"");
	expect_fail("{\"name\":\"n\",\"ipam\":{\"type\":1}}", CNI_ERR_DECODE, "\"type\"");
	expect_fail("{\"name\":\"n\",\"dns\":{\"nameservers\":\"1.1.1.1\"}}", CNI_ERR_DECODE,
		    "nameservers");
}

static void test_huge_and_deep_input(void **state)
{
	size_t n = CNI_JSON_MAX_BYTES + 16;
	char *big = malloc(n + 1);
	char deep[2 * 200 + 1];

	(void)state;
	assert_non_null(big);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	expect_fail(big, CNI_ERR_DECODE, "larger than");
	free(big);

	for (int i = 0; i < 200; i++) {
		deep[i] = '[';
		deep[200 + i] = ']';
	}
	deep[400] = '\0';
	expect_fail(deep, CNI_ERR_DECODE, "error unmarshall");
}

static void test_case_insensitive_keys(void **state)
{
	/* Go's decoder matches keys in any case; the upstream macvlan test relies on it. */
	static const char json[] = "{\"cniVersion\":\"1.0.0\",\"Name\":\"n\",\"RuntimeConfig\":"
				   "{\"MAC\":\"c2:11:22:33:44:55\"},\"IPAM\":{\"Type\":\"static\"}}";
	struct cni_conf c;
	struct cni_err err = { 0 };
	const char *s = NULL;

	(void)state;
	assert_int_equal(parse(json, &c, &err), 0);
	assert_string_equal(c.name, "n");
	assert_string_equal(c.ipam_type, "static");
	assert_int_equal(cni_conf_get_str(&c, "runtimeConfig.mac", &s, &err), 1);
	assert_string_equal(s, "c2:11:22:33:44:55");
	cni_conf_free(&c);
}

static void test_keys_matched_as_go(void **state)
{
	static const struct {
		const char *json;
		const char *master; /* what Go's decoder reads into "master" */
	} cases[] = {
		/* Every member matching the field is assigned in turn: the last one stays. */
		{ "{\"master\":\"a\",\"Master\":\"b\"}", "b" },
		{ "{\"Master\":\"b\",\"master\":\"a\"}", "a" },
		{ "{\"MASTER\":\"c\",\"master\":\"a\",\"mAsTeR\":\"b\"}", "b" },
		/* Go folds the long s (U+017F) to 's' and the Kelvin sign (U+212A) to 'k'. */
		{ "{\"master\":\"a\",\"ma\xc5\xbfter\":\"s\"}", "s" },
		{ "{\"ma\xc5\xbfter\":\"s\",\"master\":\"a\"}", "a" },
		/* Not a match: other letters have no such partner, "mastr" is another key. */
		{ "{\"master\":\"a\",\"m\xc3\xa1ster\":\"x\",\"mastr\":\"y\"}", "a" },
	};
	struct cni_err err = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char json[256];
		struct cni_conf c;
		const char *s = NULL;

		snprintf(json, sizeof(json), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"x\":%s}",
			 cases[i].json);
		assert_int_equal(parse(json, &c, &err), 0);
		assert_int_equal(cni_conf_get_str(&c, "x.master", &s, &err), 1);
		if (strcmp(s, cases[i].master) != 0)
			fail_msg("case %zu: read \"%s\", Go reads \"%s\"", i, s, cases[i].master);
		cni_conf_free(&c);
	}
	{
		struct cni_conf c;
		const char *s = NULL;
		const char *kelvin = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mask\":\"a\","
				     "\"mas\xe2\x84\xaa\":\"k\"}";

		assert_int_equal(parse(kelvin, &c, &err), 0);
		assert_int_equal(cni_conf_get_str(&c, "mask", &s, &err), 1);
		assert_string_equal(s, "k");
		cni_conf_free(&c);
	}
}

static void test_duplicate_keys_refused(void **state)
{
	/*
	 * json-c keeps a repeated key at its first place: the order Go's decoder
	 * reads them in is gone, so a config that repeats a key is refused.
	 */
	static const char *const dup[] = {
		"{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"master\":\"a\",\"Master\":\"b\",\"master\":\"c\"}",
		"{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"name\":\"m\"}",
		"{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"ipam\":{\"type\":\"a\",\"type\":\"b\"}}",
		"{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"l\":[{\"k\":1,\"k\":2}]}",
		/* Escapes decode to the same key. */
		"{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"a\":1,\"\\u0061\":2}",
	};
	/* Colons in strings and keys are not members. */
	static const char ok[] =
		"{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"a:b\":\"x:y\\\":\",\"l\":[\":\",{\"k\":\"::\"}]}";
	struct cni_conf c;

	(void)state;
	for (size_t i = 0; i < sizeof(dup) / sizeof(dup[0]); i++) {
		struct cni_err err = { 0 };

		assert_int_equal(parse(dup[i], &c, &err), -EINVAL);
		assert_int_equal(err.code, CNI_ERR_DECODE);
		assert_non_null(strstr(err.msg, "a key appears twice in one object"));
	}
	{
		struct cni_err err = { 0 };

		assert_int_equal(parse(ok, &c, &err), 0);
		cni_conf_free(&c);
	}
}

static void test_typed_getters(void **state)
{
	static const char json[] = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mtu\":\"1500\","
				   "\"big\":99999999999999999999,\"u64\":18446744073709551615,"
				   "\"i64max\":9223372036854775807,\"neg\":-1,\"flag\":\"true\",\"ok\":true,"
				   "\"nul\":null,\"args\":{\"cni\":{\"ips\":[\"10.0.0.5/24\",3]}},"
				   "\"runtimeConfig\":7,\"frac\":1500.5}";
	struct cni_conf c;
	struct cni_err err = { 0 };
	const char *s = NULL;
	int64_t v = 42;
	bool b = false;
	char **arr = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(parse(json, &c, &err), 0);

	assert_true(cni_conf_get_int(&c, "mtu", 0, 65535, &v, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	assert_non_null(strstr(err.msg, "\"mtu\""));
	assert_int_equal(v, 42);

	err = (struct cni_err){ 0 };
	/* json-c saturates huge numbers; the bound still catches them. */
	assert_true(cni_conf_get_int(&c, "big", 0, UINT32_MAX, &v, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	/* One above INT64_MAX is kept by json-c as a uint64 and clamped by its int64 getter. */
	err = (struct cni_err){ 0 };
	assert_true(cni_conf_get_int(&c, "u64", 0, INT64_MAX, &v, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(err.msg, "out of range"));
	assert_int_equal(cni_conf_get_int(&c, "i64max", 0, INT64_MAX, &v, &err), 1);
	assert_true(v == INT64_MAX);
	err = (struct cni_err){ 0 };
	assert_true(cni_conf_get_int(&c, "neg", 0, 100, &v, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(err.msg, "out of range"));
	err = (struct cni_err){ 0 };
	assert_true(cni_conf_get_int(&c, "frac", 0, 100000, &v, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_DECODE);

	err = (struct cni_err){ 0 };
	assert_true(cni_conf_get_bool(&c, "flag", &b, &err) < 0);
	assert_int_equal(cni_conf_get_bool(&c, "ok", &b, &(struct cni_err){ 0 }), 1);
	assert_true(b);
	assert_int_equal(cni_conf_get_str(&c, "nul", &s, &err), 0);
	assert_int_equal(cni_conf_get_str(&c, "absent.deeper", &s, &err), 0);

	err = (struct cni_err){ 0 };
	assert_true(cni_conf_get_str(&c, "runtimeConfig.mac", &s, &err) < 0);
	assert_non_null(strstr(err.msg, "runtimeConfig"));

	err = (struct cni_err){ 0 };
	assert_true(cni_conf_get_str_array(&c, "args.cni.ips", &arr, &n, &err) < 0);
	assert_non_null(strstr(err.msg, "ips[1]"));
	cni_conf_free(&c);
}

static void test_dns_and_prev_result(void **state)
{
	static const char json[] =
		"{\"cniVersion\":\"0.4.0\",\"name\":\"n\",\"dns\":{\"nameservers\":[\"10.0.0.10\"],"
		"\"domain\":\"cluster.local\",\"search\":[\"a\",\"b\"],\"options\":[\"ndots:5\"]},"
		"\"prevResult\":{\"cniVersion\":\"0.4.0\",\"interfaces\":[{\"name\":\"net1\","
		"\"sandbox\":\"/var/run/netns/p\"}],\"ips\":[{\"version\":\"4\",\"interface\":0,"
		"\"address\":\"10.1.0.5/16\",\"gateway\":\"10.1.0.1\"}],\"dns\":{}}}";
	struct cni_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(parse(json, &c, &err), 0);
	assert_true(c.has_dns);
	assert_int_equal(c.dns.n_nameservers, 1);
	assert_string_equal(c.dns.domain, "cluster.local");
	assert_int_equal(c.dns.n_search, 2);
	assert_string_equal(c.dns.options[0], "ndots:5");
	assert_non_null(c.prev_result);
	assert_int_equal(c.prev_result->n_ifaces, 1);
	assert_string_equal(c.prev_result->ifaces[0].sandbox, "/var/run/netns/p");
	assert_int_equal(c.prev_result->n_ips, 1);
	assert_int_equal(c.prev_result->ips[0].iface, 0);
	assert_true(c.prev_result->ips[0].has_gateway);
	cni_conf_free(&c);

	expect_fail("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"prevResult\":{\"ips\":[{\"address\":"
		    "\"10.1.0.5\"}]}}", CNI_ERR_DECODE, "address");
}

static void test_gc_attachments(void **state)
{
	static const char both[] =
		"{\"cniVersion\":\"1.1.0\",\"name\":\"n\",\"cni.dev/valid-attachments\":"
		"[{\"containerID\":\"c1\",\"ifname\":\"net1\"},{\"containerID\":\"c2\",\"ifname\":\"net2\"}],"
		"\"cni.dev/attachments\":[{\"containerID\":\"old\",\"ifname\":\"x\"}]}";
	static const char legacy[] = "{\"cniVersion\":\"1.1.0\",\"name\":\"n\",\"cni.dev/attachments\":"
				     "[{\"containerID\":\"c9\",\"ifname\":\"net9\"}]}";
	static const char bad[] = "{\"cniVersion\":\"1.1.0\",\"name\":\"n\",\"cni.dev/valid-attachments\":"
				  "[{\"containerID\":\"c1\"}]}";
	struct cni_attachment *a = NULL;
	struct cni_conf c;
	struct cni_err err = { 0 };
	size_t n = 0;

	(void)state;
	assert_int_equal(parse(both, &c, &err), 0);
	assert_int_equal(cni_conf_gc_attachments(&c, &a, &n, &err), 1);
	assert_int_equal(n, 2);
	assert_string_equal(a[1].container_id, "c2");
	assert_string_equal(a[1].ifname, "net2");
	cni_attachments_free(a, n);
	cni_conf_free(&c);

	assert_int_equal(parse(legacy, &c, &err), 0);
	assert_int_equal(cni_conf_gc_attachments(&c, &a, &n, &err), 1);
	assert_string_equal(a[0].container_id, "c9");
	cni_attachments_free(a, n);
	cni_conf_free(&c);

	assert_int_equal(parse(bad, &c, &err), 0);
	assert_true(cni_conf_gc_attachments(&c, &a, &n, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	cni_conf_free(&c);
}

/* A member's name against a plugin's keys: known in any case, else the nearest within reach. */
static void test_key_near(void **state)
{
	static const char *const macvlan[] = { "master", "mode", "mtu", "mac", "linkInContainer",
					       "bcqueuelen", NULL };
	static const char *const near_pair[] = { "mastery", "master", NULL };

	(void)state;
	assert_string_equal(cni_conf_key_near("mastr", macvlan, true), "master");
	assert_string_equal(cni_conf_key_near("linkInContianer", macvlan, true), "linkInContainer");
	assert_null(cni_conf_key_near("MASTER", macvlan, true));
	assert_null(cni_conf_key_near("master", macvlan, true));
	/* Keys of other plugins a config may carry. */
	assert_null(cni_conf_key_near("isGateway", macvlan, true));
	assert_null(cni_conf_key_near("vlan", macvlan, true));
	/* Short keys: one edit only ("mtu" and "mac" are two apart). */
	assert_string_equal(cni_conf_key_near("mt", macvlan, true), "mtu");
	assert_string_equal(cni_conf_key_near("mxc", macvlan, true), "mac");
	assert_null(cni_conf_key_near("mxx", macvlan, true));
	assert_string_equal(cni_conf_key_near("moed", macvlan, true), "mode");
	assert_string_equal(cni_conf_key_near("mdoe", macvlan, true), "mode");
	/* The nearest wins, not the first listed. */
	assert_string_equal(cni_conf_key_near("mastre", near_pair, false), "master");
	/* Every config's keys at the top level only. */
	assert_string_equal(cni_conf_key_near("nmae", macvlan, true), "name");
	assert_string_equal(cni_conf_key_near("logfil", macvlan, true), "logFile");
	assert_null(cni_conf_key_near("nmae", macvlan, false));
	assert_null(cni_conf_key_near("ipam", macvlan, true));
	assert_null(cni_conf_key_near("nmae", NULL, false));
}

/* The warnings: one per near miss, in the objects the tables name, each naming both keys. */
static void test_keys_warn(void **state)
{
	static const char *const top[] = { "master", "mode", NULL };
	static const char *const ipam[] = { "type", "poolName", "poolType", NULL };
	static const char *const args[] = { "poolNames", NULL };
	static const struct cni_conf_keys tables[] = {
		{ NULL, top }, { "ipam", ipam }, { "args.cni", args }, { 0 },
	};
	struct cni_conf c = { 0 };
	struct cni_err err = { 0 };
	char out[4096] = "";
	int fds[2];
	ssize_t n;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	/* Warnings to the pipe, as to a logFile; none to stderr. */
	log_setup("test", LOG_LEVEL_INFO, LOG_LEVEL_ERROR, fds[1]);
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"mastr\":\"eth1\","
			       "\"mode\":\"bridge\",\"isGateway\":true,\"nmae\":1,"
			       "\"ipam\":{\"type\":\"nv-ipam\",\"poolTyp\":\"ippool\",\"PoolName\":\"p\"},"
			       "\"Args\":{\"CNI\":{\"poolNamse\":[\"p\"],\"mac\":\"x\"}}}", &c, &err), 0);
	assert_int_equal(cni_conf_keys_warn(c.root, tables, "config"), 4);
	log_setup("test", LOG_LEVEL_INFO, LOG_LEVEL_WARNING, -1); /* closes the pipe's end */
	n = read(fds[0], out, sizeof(out) - 1);
	close(fds[0]);
	assert_true(n > 0);
	out[n] = '\0';
	assert_non_null(strstr(out, "warning: config key \"mastr\" is not one this plugin reads and "
				    "is ignored: is it \"master\" misspelt?"));
	assert_non_null(strstr(out, "config key \"nmae\" is not one this plugin reads and is "
				    "ignored: is it \"name\" misspelt?"));
	assert_non_null(strstr(out, "\"ipam.poolTyp\" is not one this plugin reads and is ignored: "
				    "is it \"ipam.poolType\" misspelt?"));
	assert_non_null(strstr(out, "\"args.cni.poolNamse\" is not one this plugin reads and is "
				    "ignored: is it \"args.cni.poolNames\" misspelt?"));
	assert_null(strstr(out, "isGateway"));
	cni_conf_free(&c);

	/* An object of another type, or none: nothing to look at. */
	assert_int_equal(parse("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"ipam\":{},"
			       "\"args\":{\"cni\":\"poolNamse\"}}", &c, &err), 0);
	assert_int_equal(cni_conf_keys_warn(c.root, tables, "config"), 0);
	assert_int_equal(cni_conf_keys_warn(c.root, NULL, "config"), 0);
	cni_conf_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_operator_nad),
		cmocka_unit_test(test_version_default_and_unknown),
		cmocka_unit_test(test_name_rules),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_huge_and_deep_input),
		cmocka_unit_test(test_case_insensitive_keys),
		cmocka_unit_test(test_keys_matched_as_go),
		cmocka_unit_test(test_duplicate_keys_refused),
		cmocka_unit_test(test_typed_getters),
		cmocka_unit_test(test_dns_and_prev_result),
		cmocka_unit_test(test_gc_attachments),
		cmocka_unit_test(test_key_near),
		cmocka_unit_test(test_keys_warn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
