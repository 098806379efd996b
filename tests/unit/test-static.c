/* Unit tests: static IPAM inputs, precedence, refusals, CHECK and the result per version
 *
 * The result goldens are tests/unit/golden/static-<case>.to-<V>.json for the config
 * static-<case>.conf.json with "VERSION" replaced by V. 0.2.0 ... 1.0.0 are what Debian's
 * Go static (containernetworking-plugins 1.1.1) printed for that config, adjusted only as
 * tests/unit/golden/gen/main.go adjusts libcni 1.1.2 to the reference revision: 1.1.0 is
 * the 1.0.0 output relabelled, a 1.x result drops an empty "dns", and a route of a result
 * of version >= 0.3.0 carries the mtu, advmss, priority (when not 0), table and scope
 * (when given) of its config route, which that build predates. Comparison is semantic.
 */
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
#include <json-c/json.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "ipam/static/config.h"
#include "ipam/static/static.h"

static struct cni_ctx ctx;

static void release(void)
{
	cni_args_free(&ctx.args);
	cni_conf_free(&ctx.conf);
}

static int teardown(void **state)
{
	(void)state;
	release();
	return 0;
}

/* Parse a config and CNI_ARGS into ctx as the dispatch would. */
static int parse(const char *json, const char *args, struct cni_err *err)
{
	int r;

	release();
	ctx.env = (struct cni_env){ .command = CNI_CMD_ADD, .command_name = "ADD",
				    .container_id = "c1", .netns = "", .ifname = "net1",
				    .args = args, .path = "" };
	r = cni_conf_parse(json, strlen(json), &ctx.conf, err);
	if (r >= 0)
		r = cni_args_parse(args, &ctx.args, err);
	return r;
}

static int load(const char *json, const char *args, struct cni_result *res, struct cni_err *err)
{
	int r = parse(json, args, err);

	if (r >= 0)
		r = static_config_load(&ctx.conf, &ctx.args, res, err);
	return r;
}

static void load_ok(const char *json, const char *args, struct cni_result *res)
{
	struct cni_err err = { 0 };

	*res = (struct cni_result){ 0 };
	if (load(json, args, res, &err) < 0)
		fail_msg("refused: code %d: %s\n%s", err.code, err.msg, json);
}

static void expect_refused(const char *json, const char *args, int code, const char *msg)
{
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };

	if (load(json, args, &res, &err) >= 0)
		fail_msg("accepted:\n%s\nCNI_ARGS=%s", json, args);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg);
	assert_int_equal(res.n_ips, 0);
}

/* "addr/len" or "addr/len gw" of result ip i */
static void assert_ip(const struct cni_result *res, size_t i, const char *addr, const char *gw)
{
	char buf[IP_PREFIX_STRLEN];

	assert_true(i < res->n_ips);
	assert_string_equal(ip_prefix_format(&res->ips[i].address, buf, sizeof(buf)), addr);
	assert_int_equal(res->ips[i].iface, -1);
	if (!gw) {
		assert_false(res->ips[i].has_gateway);
		return;
	}
	assert_true(res->ips[i].has_gateway);
	assert_string_equal(ip_addr_format(&res->ips[i].gateway, buf, sizeof(buf)), gw);
}

#define CONF(version, ipam_rest, extra)                                                         \
	"{\"cniVersion\":\"" version "\",\"name\":\"rail0\",\"type\":\"macvlan\","                 \
	"\"ipam\":{\"type\":\"static\"" ipam_rest "}" extra "}"

#define ADDRS "\"addresses\":[{\"address\":\"10.1.0.5/16\",\"gateway\":\"10.1.0.1\"}," \
	      "{\"address\":\"fd00::5/64\"}]"

static void test_config_addresses(void **state)
{
	struct cni_result res;

	(void)state;
	load_ok(CONF("1.0.0", "," ADDRS, ""), "", &res);
	assert_int_equal(res.n_ips, 2);
	assert_ip(&res, 0, "10.1.0.5/16", "10.1.0.1");
	assert_ip(&res, 1, "fd00::5/64", NULL);
	assert_int_equal(res.n_routes, 0);
	assert_null(res.dns.nameservers);
	cni_result_free(&res);

	/* Nothing at all is an empty result, not an error (as upstream). */
	load_ok(CONF("1.0.0", "", ""), "", &res);
	assert_int_equal(res.n_ips, 0);
	cni_result_free(&res);

	/* An empty gateway is none; duplicates are passed on as upstream does. */
	load_ok(CONF("1.0.0", ",\"addresses\":[{\"address\":\"10.1.0.5/16\",\"gateway\":\"\"},"
			      "{\"address\":\"10.1.0.5/16\"}]", ""), "", &res);
	assert_int_equal(res.n_ips, 2);
	assert_ip(&res, 0, "10.1.0.5/16", NULL);
	assert_ip(&res, 1, "10.1.0.5/16", NULL);
	cni_result_free(&res);
}

static void test_routes_dns(void **state)
{
	struct cni_result res;

	(void)state;
	load_ok(CONF("1.1.0",
		     ",\"routes\":[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"10.9.0.0/16\",\"gw\":\"10.1.0.254\","
		     "\"mtu\":1400,\"advmss\":1360,\"priority\":7,\"table\":101,\"scope\":253}],"
		     "\"dns\":{\"nameservers\":[\"10.1.0.53\"],\"domain\":\"d\",\"search\":[\"s1\",\"s2\"],"
		     "\"options\":[\"ndots:1\"]}",
		     ",\"dns\":{\"nameservers\":[\"9.9.9.9\"]}"),
		"", &res);
	assert_int_equal(res.n_routes, 2);
	assert_false(res.routes[0].has_gw);
	assert_int_equal(res.routes[0].dst.len, 0);
	assert_int_equal(res.routes[0].scope, -1);
	assert_true(res.routes[1].has_gw);
	assert_int_equal(res.routes[1].mtu, 1400);
	assert_int_equal(res.routes[1].advmss, 1360);
	assert_int_equal(res.routes[1].priority, 7);
	assert_int_equal(res.routes[1].table, 101);
	assert_int_equal(res.routes[1].scope, 253);
	/* ipam.dns, not the top-level dns (that one is the runtime's business). */
	assert_int_equal(res.dns.n_nameservers, 1);
	assert_string_equal(res.dns.nameservers[0], "10.1.0.53");
	assert_string_equal(res.dns.domain, "d");
	assert_int_equal(res.dns.n_search, 2);
	assert_string_equal(res.dns.options[0], "ndots:1");
	cni_result_free(&res);
}

static void test_env_args(void **state)
{
	struct cni_result res;

	(void)state;
	/* IP= is appended to ipam.addresses; items are trimmed. */
	load_ok(CONF("0.3.1", "," ADDRS, ""), "IP=10.1.0.7/16 , 10.2.0.7/16;GATEWAY=10.1.0.254", &res);
	assert_int_equal(res.n_ips, 4);
	/* GATEWAY= reaches only IP= addresses: upstream applies it before reading the config's. */
	assert_ip(&res, 0, "10.1.0.5/16", "10.1.0.1");
	assert_ip(&res, 1, "fd00::5/64", NULL);
	assert_ip(&res, 2, "10.1.0.7/16", "10.1.0.254");
	assert_ip(&res, 3, "10.2.0.7/16", NULL);
	cni_result_free(&res);

	/* Several gateways: each goes where it fits, a later one wins. */
	load_ok(CONF("1.0.0", "", ""),
		"IP=10.1.0.7/16,fd00::7/64;GATEWAY=fd00::1,10.1.0.1,10.1.0.2,192.0.2.1", &res);
	assert_ip(&res, 0, "10.1.0.7/16", "10.1.0.2");
	assert_ip(&res, 1, "fd00::7/64", "fd00::1");
	cni_result_free(&res);

	/* Empty values are unset; IgnoreUnknown lets a runtime's own keys through. */
	load_ok(CONF("1.0.0", "," ADDRS, ""), "IgnoreUnknown=1;IP=;GATEWAY=;K8S_POD_NAME=p", &res);
	assert_int_equal(res.n_ips, 2);
	cni_result_free(&res);
	expect_refused(CONF("1.0.0", "", ""), "IP=10.1.0.7/16;K8S_POD_NAME=p", CNI_ERR_INVALID_ENV,
		       "ARGS: unknown args [\"K8S_POD_NAME=p\"]");
	/* Keys are case-sensitive, as Go's field lookup is. */
	expect_refused(CONF("1.0.0", "", ""), "ip=10.1.0.7/16", CNI_ERR_INVALID_ENV, "unknown args");
}

static void test_precedence(void **state)
{
	static const char with_args[] = CONF(
		"1.0.0", "," ADDRS, ",\"args\":{\"cni\":{\"ips\":[\"10.3.0.2/24\",\"fd03::2/64\"]}}");
	static const char with_both[] = CONF(
		"1.0.0", "," ADDRS,
		",\"args\":{\"cni\":{\"ips\":[\"10.3.0.2/24\"]}},\"runtimeConfig\":{\"ips\":[\"10.4.0.2/24\"]}");
	static const char empty_lists[] = CONF(
		"1.0.0", "," ADDRS, ",\"args\":{\"cni\":{\"ips\":[]}},\"runtimeConfig\":{\"ips\":[]}");
	struct cni_result res;

	(void)state;
	/* args.cni.ips replaces ipam.addresses and IP=, gateways included. */
	load_ok(with_args, "IP=10.1.0.7/16;GATEWAY=10.1.0.254", &res);
	assert_int_equal(res.n_ips, 2);
	assert_ip(&res, 0, "10.3.0.2/24", NULL);
	assert_ip(&res, 1, "fd03::2/64", NULL);
	cni_result_free(&res);

	/* runtimeConfig.ips (the "ips" capability) replaces everything before it. */
	load_ok(with_both, "IP=10.1.0.7/16", &res);
	assert_int_equal(res.n_ips, 1);
	assert_ip(&res, 0, "10.4.0.2/24", NULL);
	cni_result_free(&res);

	/* Empty lists replace nothing. */
	load_ok(empty_lists, "IP=10.1.0.7/16", &res);
	assert_int_equal(res.n_ips, 3);
	cni_result_free(&res);

	/* Keys are matched as Go matches them: exactly, then in any case. */
	load_ok(CONF("1.0.0", "", ",\"RuntimeConfig\":{\"IPs\":[\"10.5.0.2/24\"]}"), "", &res);
	assert_ip(&res, 0, "10.5.0.2/24", NULL);
	cni_result_free(&res);
}

static void test_versions(void **state)
{
	struct cni_result res;

	(void)state;
	/* One address per family fits ip4/ip6 of 0.1.0 and 0.2.0. */
	load_ok(CONF("0.2.0", "," ADDRS, ""), "", &res);
	assert_int_equal(res.n_ips, 2);
	cni_result_free(&res);
	load_ok(CONF("0.3.0", "," ADDRS, ""), "IP=10.2.0.7/16,fd00::7/64", &res);
	assert_int_equal(res.n_ips, 4);
	cni_result_free(&res);
	expect_refused(CONF("0.2.0", "," ADDRS, ""), "IP=10.2.0.7/16", CNI_ERR_INVALID_CONFIG,
		       "CNI version 0.2.0 does not support more than 1 address per family");
	expect_refused(CONF("0.1.0", "", ",\"runtimeConfig\":{\"ips\":[\"fd00::1/64\",\"fd00::2/64\"]}"),
		       "", CNI_ERR_INVALID_CONFIG,
		       "CNI version 0.1.0 does not support more than 1 address per family");
}

static void test_refusals(void **state)
{
	char *big;

	(void)state;
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"macvlan\"}", "",
		       CNI_ERR_INVALID_CONFIG, "IPAM config missing 'ipam' key");
	expect_refused(CONF("1.0.0", ",\"addresses\":[{\"address\":\"10.1.0.5\"}]", ""), "",
		       CNI_ERR_INVALID_CONFIG,
		       "the 'address' field is expected to be in CIDR notation, got: '10.1.0.5'");
	expect_refused(CONF("1.0.0", ",\"addresses\":[{\"gateway\":\"10.1.0.1\"}]", ""), "",
		       CNI_ERR_INVALID_CONFIG,
		       "the 'address' field is expected to be in CIDR notation, got: ''");
	expect_refused(CONF("1.0.0", ",\"addresses\":[{\"address\":\"10.1.0.5/33\"}]", ""), "",
		       CNI_ERR_INVALID_CONFIG, "got: '10.1.0.5/33'");
	expect_refused(CONF("1.0.0", ",\"addresses\":[{\"address\":\"10.1.0.5/16\",\"gateway\":\"fd00::1\"}]", ""),
		       "", CNI_ERR_INVALID_CONFIG,
		       "gateway fd00::1 is not of the family of address 10.1.0.5/16");
	expect_refused(CONF("1.0.0", ",\"addresses\":[{\"address\":\"10.1.0.5/16\",\"gateway\":\"10.1.0\"}]", ""),
		       "", CNI_ERR_INVALID_CONFIG, "invalid IP address: 10.1.0");
	expect_refused(CONF("1.0.0", "", ""), "IP=10.1.0.7", CNI_ERR_INVALID_ENV,
		       "the 'ip' field is expected to be in CIDR notation, got: '10.1.0.7'");
	expect_refused(CONF("1.0.0", "", ""), "IP=10.1.0.7/16,", CNI_ERR_INVALID_ENV,
		       "the 'ip' field is expected to be in CIDR notation, got: ''");
	expect_refused(CONF("1.0.0", "", ""), "IP=10.1.0.7/16;GATEWAY=10.1.0.1/16", CNI_ERR_INVALID_ENV,
		       "invalid gateway address: 10.1.0.1/16");
	expect_refused(CONF("1.0.0", "", ",\"args\":{\"cni\":{\"ips\":[\"10.3.0.2\"]}}"), "",
		       CNI_ERR_INVALID_CONFIG,
		       "an entry in the 'ips' field is NOT in CIDR notation, got: '10.3.0.2'");
	expect_refused(CONF("1.0.0", "", ",\"runtimeConfig\":{\"ips\":[\"10.3.0.2/24\",\"x/1\"]}"), "",
		       CNI_ERR_INVALID_CONFIG,
		       "an entry in the 'ips' field is NOT in CIDR notation, got: 'x/1'");
	/* Wrong JSON types are decode errors naming the key. */
	expect_refused(CONF("1.0.0", ",\"addresses\":{}", ""), "", CNI_ERR_DECODE, "addresses");
	expect_refused(CONF("1.0.0", ",\"addresses\":[\"10.1.0.5/16\"]", ""), "", CNI_ERR_DECODE,
		       "ipam.addresses: expected an object, got string");
	expect_refused(CONF("1.0.0", ",\"addresses\":[{\"address\":5}]", ""), "", CNI_ERR_DECODE,
		       "address");
	expect_refused(CONF("1.0.0", "", ",\"runtimeConfig\":{\"ips\":\"10.3.0.2/24\"}"), "",
		       CNI_ERR_DECODE, "runtimeConfig.ips");
	expect_refused(CONF("1.0.0", ",\"routes\":[{\"dst\":\"10.0.0.0\"}]", ""), "", CNI_ERR_DECODE,
		       "ipam: field \"dst\": invalid CIDR \"10.0.0.0\"");
	expect_refused(CONF("1.0.0", ",\"routes\":[{\"gw\":\"10.0.0.1\"}]", ""), "", CNI_ERR_DECODE,
		       "ipam: field \"dst\" missing");
	expect_refused(CONF("1.0.0", ",\"routes\":[{\"dst\":\"10.0.0.0/8\",\"mtu\":-1}]", ""), "",
		       CNI_ERR_INVALID_CONFIG, "mtu");
	expect_refused(CONF("1.0.0", ",\"routes\":{}", ""), "", CNI_ERR_DECODE, "routes");
	expect_refused(CONF("1.0.0", ",\"dns\":{\"nameservers\":\"10.0.0.53\"}", ""), "",
		       CNI_ERR_DECODE, "nameservers");

	/* A long hostile value is cut in the message, never copied whole. */
	big = malloc(70000);
	assert_non_null(big);
	memset(big, 'a', 69999);
	big[69999] = '\0';
	{
		char *json = NULL, *args = NULL;
		struct cni_result res = { 0 };
		struct cni_err err = { 0 };

		assert_true(asprintf(&json, CONF("1.0.0", ",\"addresses\":[{\"address\":\"%s\"}]", ""),
				     big) > 0);
		assert_true(load(json, "", &res, &err) < 0);
		assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
		assert_true(strlen(err.msg) < 200);
		assert_true(asprintf(&args, "IP=%s", big) > 0);
		err = (struct cni_err){ 0 };
		assert_true(load(CONF("1.0.0", "", ""), args, &res, &err) < 0);
		assert_int_equal(err.code, CNI_ERR_INVALID_ENV);
		assert_true(strlen(err.msg) < 200);
		free(json);
		free(args);
	}
	free(big);
}

static int run_check(const char *json, struct cni_err *err)
{
	int r = parse(json, "", err);

	if (r < 0)
		fail_msg("config refused: %s", err->msg);
	ctx.env.command = CNI_CMD_CHECK;
	ctx.env.command_name = "CHECK";
	return static_plugin.check(&ctx, err);
}

#define PREV(ips) ",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"ips\":[" ips "]}"

static void test_check(void **state)
{
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(run_check(CONF("1.0.0", "," ADDRS, ""), &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_string_equal(err.msg, "required prevResult missing");

	err = (struct cni_err){ 0 };
	assert_int_equal(run_check(CONF("1.0.0", "," ADDRS,
					PREV("{\"address\":\"10.1.0.5/16\",\"gateway\":\"10.1.0.1\"},"
					     "{\"address\":\"fd00::5/64\",\"gateway\":\"fd00::1\"}")),
				   &err), 0);
	/* An address prevResult lacks is no failure, as upstream; nor is another prefix length. */
	assert_int_equal(run_check(CONF("1.0.0", "," ADDRS, PREV("{\"address\":\"10.1.0.5/24\","
								"\"gateway\":\"10.1.0.1\"}")),
				   &err), 0);
	assert_int_equal(run_check(CONF("1.0.0", "," ADDRS, PREV("")), &err), 0);
	assert_int_equal(err.code, 0);

	assert_int_equal(run_check(CONF("1.0.0", "," ADDRS, PREV("{\"address\":\"10.1.0.5/16\","
								"\"gateway\":\"10.1.0.9\"}")),
				   &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_CHECK_FAILED);
	assert_string_equal(err.msg, "static: Failed to match addr 10.1.0.5 on interface net1");

	err = (struct cni_err){ 0 };
	assert_int_equal(run_check(CONF("1.0.0", "," ADDRS, PREV("{\"address\":\"10.1.0.5/16\"}")),
				   &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_CHECK_FAILED);

	/* CHECK refuses what ADD refuses. */
	err = (struct cni_err){ 0 };
	assert_true(run_check(CONF("1.0.0", ",\"addresses\":[{\"address\":\"x\"}]", PREV("")), &err) < 0);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
}

static void test_del(void **state)
{
	struct cni_err err = { 0 };

	(void)state;
	/* Nothing is held: DEL succeeds whatever the addresses say. */
	assert_int_equal(parse(CONF("1.0.0", ",\"addresses\":[{\"address\":\"x\"}]", ""), "", &err), 0);
	assert_int_equal(static_plugin.del(&ctx, &err), 0);
	assert_int_equal(err.code, 0);
	assert_true(static_plugin.ipam);
	assert_null(static_plugin.status);
	assert_null(static_plugin.gc);
}

static char *read_golden(const char *name)
{
	const char *dir = getenv("GOLDEN_DIR");
	char *path = NULL, *buf = NULL;
	size_t len = 0;
	FILE *f, *m;
	int c;

	assert_true(asprintf(&path, "%s/%s", dir && *dir ? dir : "tests/unit/golden", name) > 0);
	f = fopen(path, "re");
	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	m = open_memstream(&buf, &len);
	assert_non_null(m);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	free(path);
	return buf;
}

/* The config of a golden case at a version: "VERSION" in the file replaced. */
static char *golden_config(const char *name, const char *version)
{
	char *text = read_golden(name);
	char *at = strstr(text, "VERSION");
	char *out = NULL;

	assert_non_null(at);
	*at = '\0';
	assert_true(asprintf(&out, "%s%s%s", text, version, at + strlen("VERSION")) > 0);
	free(text);
	return out;
}

static void test_golden(void **state)
{
	static const char *const cases[] = { "static-config", "static-extras" };
	static const char *const versions[] = { "0.2.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0" };

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); v++) {
			char conf_name[64], want_name[64];
			char *conf, *want, *got = NULL;
			struct json_object *w, *g;
			struct cni_result res;
			struct cni_err err = { 0 };

			snprintf(conf_name, sizeof(conf_name), "%s.conf.json", cases[c]);
			snprintf(want_name, sizeof(want_name), "%s.to-%s.json", cases[c], versions[v]);
			conf = golden_config(conf_name, versions[v]);
			load_ok(conf, "", &res);
			snprintf(res.cni_version, sizeof(res.cni_version), "%s", versions[v]);
			if (cni_result_to_json(&res, versions[v], &got, &err) < 0)
				fail_msg("%s: %s", want_name, err.msg);
			want = read_golden(want_name);
			w = json_tokener_parse(want);
			g = json_tokener_parse(got);
			assert_non_null(w);
			assert_non_null(g);
			if (!json_object_equal(w, g))
				fail_msg("%s differs:\nexpected %s\ngot      %s", want_name,
					 json_object_to_json_string(w), json_object_to_json_string(g));
			json_object_put(w);
			json_object_put(g);
			cni_result_free(&res);
			free(conf);
			free(want);
			free(got);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_config_addresses, teardown),
		cmocka_unit_test_teardown(test_routes_dns, teardown),
		cmocka_unit_test_teardown(test_env_args, teardown),
		cmocka_unit_test_teardown(test_precedence, teardown),
		cmocka_unit_test_teardown(test_versions, teardown),
		cmocka_unit_test_teardown(test_refusals, teardown),
		cmocka_unit_test_teardown(test_check, teardown),
		cmocka_unit_test_teardown(test_del, teardown),
		cmocka_unit_test_teardown(test_golden, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
