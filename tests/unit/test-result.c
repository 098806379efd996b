/* Unit tests: CNI result model, parsing and conversion between versions
 *
 * The expected conversions are the goldens in $GOLDEN_DIR (tests/unit/golden), written by
 * the Go program tests/unit/golden/gen from the reference libcni types; see its header
 * comment. For an input X.json and a version V the golden is X.to-V.json, or
 * X.to-V.error.json ({"error": msg}) when the reference refuses the conversion.
 * Comparison is semantic (json_object_equal): key order and indentation do not matter.
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
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/cni/result.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"

static const char *const versions[] = { "0.1.0", "0.2.0", "0.3.0", "0.3.1",
					 "0.4.0", "1.0.0", "1.1.0" };
#define N_VERSIONS (sizeof(versions) / sizeof(versions[0]))

static const char *const inputs[] = {
	"result-1.0.0-full",   /* 2 interfaces (one host-side), v4+v6, routes with/without gw, full dns */
	"result-1.0.0-l2",     /* interfaces only: no 0.1.0/0.2.0 form */
	"result-1.0.0-extras", /* route mtu/advmss/priority/table/scope, iface mtu/socketPath/pciID */
	"result-0.4.0",        /* ips[].version, non-canonical IPv6 text, partial dns */
	"result-0.3.1-nodns",  /* IPAM-style: one IPv6, no interfaces, no dns */
	"result-0.2.0",        /* ip4 + ip6 with routes, full dns */
};
#define N_INPUTS (sizeof(inputs) / sizeof(inputs[0]))

/* ---- helpers ---- */

static const char *golden_dir(void)
{
	const char *d = getenv("GOLDEN_DIR");

	return d && *d ? d : "tests/unit/golden";
}

static char *golden_path(const char *name, const char *suffix)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/%s%s", golden_dir(), name, suffix) > 0);
	return p;
}

static bool file_exists(const char *path)
{
	return access(path, R_OK) == 0;
}

static char *read_text(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	char chunk[4096];
	size_t n;

	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	m = open_memstream(&buf, &len);
	assert_non_null(m);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(fwrite(chunk, 1, n, m), n);
	fclose(f);
	fclose(m);
	if (ret_len)
		*ret_len = len;
	return buf;
}

static struct json_object *parse_text(const char *what, const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	if (!o)
		fail_msg("%s is not JSON:\n%s", what, text);
	return o;
}

/* Print a text to stderr with every line commented, so TAP on stdout stays clean. */
static void dump(const char *title, const char *text)
{
	fprintf(stderr, "# --- %s ---\n# ", title);
	for (const char *c = text; *c; c++) {
		fputc(*c, stderr);
		if (*c == '\n')
			fputs("# ", stderr);
	}
	fputc('\n', stderr);
}

/* Compare two JSON texts semantically; on a mismatch print both and return false. */
static bool json_equal(const char *what, const char *expected, const char *actual)
{
	struct json_object *e = parse_text("expected", expected);
	struct json_object *a = parse_text("actual", actual);
	int eq = json_object_equal(e, a);

	if (!eq) {
		dump("expected (reference golden)", json_object_to_json_string_ext(e, JSON_C_TO_STRING_PRETTY));
		dump("actual (cni_result_to_json)", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PRETTY));
	}
	json_object_put(e);
	json_object_put(a);
	if (!eq)
		fprintf(stderr, "# %s: the texts differ\n", what);
	return eq;
}

static void parse_ok(const char *text, const char *version, struct cni_result *res)
{
	struct cni_err err = { 0 };
	int r = cni_result_parse(text, strlen(text), version, res, &err);

	if (r < 0)
		fail_msg("cni_result_parse failed (%d): code %d: %s\n%s", r, err.code, err.msg, text);
	assert_int_equal(err.code, 0);
}

static void parse_input(const char *name, struct cni_result *res)
{
	char *path = golden_path(name, ".json");
	char *text = read_text(path, NULL);

	parse_ok(text, NULL, res);
	free(text);
	free(path);
}

static char *to_json_ok(const struct cni_result *res, const char *version)
{
	struct cni_err err = { 0 };
	char *out = NULL;
	int r = cni_result_to_json(res, version, &out, &err);

	if (r < 0)
		fail_msg("cni_result_to_json(%s) failed (%d): code %d: %s", version, r, err.code, err.msg);
	assert_non_null(out);
	return out;
}

/*
 * Check cni_result_to_json(res, version) against the golden of input @name: equal to
 * X.to-V.json, or failing with code 1 and the message of X.to-V.error.json.
 * Return: false (after printing both texts) when the output differs from the golden;
 * every other problem fails the test at once.
 */
static bool golden_matches(const struct cni_result *res, const char *name, const char *version)
{
	char suffix[64];
	char *ok_path, *err_path;
	bool same = true;

	snprintf(suffix, sizeof(suffix), ".to-%s.json", version);
	ok_path = golden_path(name, suffix);
	snprintf(suffix, sizeof(suffix), ".to-%s.error.json", version);
	err_path = golden_path(name, suffix);

	if (file_exists(ok_path)) {
		char *expected = read_text(ok_path, NULL);
		char *actual = to_json_ok(res, version);
		char what[256];

		assert_false(file_exists(err_path));
		snprintf(what, sizeof(what), "%s -> %s", name, version);
		same = json_equal(what, expected, actual);
		free(expected);
		free(actual);
	} else if (file_exists(err_path)) {
		char *text = read_text(err_path, NULL);
		struct json_object *g = parse_text(err_path, text), *m = NULL;
		struct cni_err err = { 0 };
		char *sentinel = (char *)"untouched", *out = sentinel;
		int r;

		assert_true(json_object_object_get_ex(g, "error", &m));
		r = cni_result_to_json(res, version, &out, &err);
		if (r >= 0) {
			dump("unexpected output", out);
			fail_msg("%s -> %s: the reference refuses this conversion (\"%s\") but it succeeded",
				 name, version, json_object_get_string(m));
		}
		assert_ptr_equal(out, sentinel);
		assert_int_equal(err.code, CNI_ERR_INCOMPATIBLE_VERSION);
		assert_string_equal(err.msg, json_object_get_string(m));
		json_object_put(g);
		free(text);
	} else {
		fail_msg("no golden %s or %s: run tests/unit/golden/gen", ok_path, err_path);
	}
	free(ok_path);
	free(err_path);
	return same;
}

/* golden_matches() for every version; fails after checking them all. */
static void assert_goldens_all_versions(const struct cni_result *res, const char *name)
{
	char bad[256] = "";

	for (size_t v = 0; v < N_VERSIONS; v++)
		if (!golden_matches(res, name, versions[v])) {
			strncat(bad, " ", sizeof(bad) - strlen(bad) - 1);
			strncat(bad, versions[v], sizeof(bad) - strlen(bad) - 1);
		}
	if (bad[0])
		fail_msg("%s: output differs from the reference in:%s", name, bad);
}

/* ---- golden conversions: one test per input x version ---- */

struct golden_case {
	const char *input;
	const char *version;
};

static void test_golden(void **state)
{
	const struct golden_case *c = *state;
	struct cni_result res = { 0 };

	parse_input(c->input, &res);
	if (!golden_matches(&res, c->input, c->version))
		fail_msg("%s -> %s: output differs from the reference", c->input, c->version);
	cni_result_free(&res);
}

/* The goldens for the inputs each test relies on are present (a guard against a
 * generator run that silently wrote nothing). */
static void test_goldens_complete(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_INPUTS; i++)
		for (size_t v = 0; v < N_VERSIONS; v++) {
			char suffix[64];
			char *a, *b;

			snprintf(suffix, sizeof(suffix), ".to-%s.json", versions[v]);
			a = golden_path(inputs[i], suffix);
			snprintf(suffix, sizeof(suffix), ".to-%s.error.json", versions[v]);
			b = golden_path(inputs[i], suffix);
			if (file_exists(a) == file_exists(b))
				fail_msg("need exactly one of %s and %s", a, b);
			free(a);
			free(b);
		}
}

/* The L2 result has no 0.1.0/0.2.0 form: the golden records the refusal. */
static void test_l2_refused_below_030(void **state)
{
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };
	char *out = NULL;

	(void)state;
	parse_input("result-1.0.0-l2", &res);
	for (size_t v = 0; v < 2; v++) {
		char *p = golden_path("result-1.0.0-l2", v ? ".to-0.2.0.error.json" : ".to-0.1.0.error.json");

		assert_true(file_exists(p));
		free(p);
		err = (struct cni_err){ 0 };
		assert_true(cni_result_to_json(&res, versions[v], &out, &err) < 0);
		assert_null(out);
		assert_int_equal(err.code, CNI_ERR_INCOMPATIBLE_VERSION);
		assert_string_equal(err.msg, "cannot convert: no valid IP addresses");
	}
	cni_result_free(&res);
}

/* ---- the parsed model ---- */

static void test_model_of_full_input(void **state)
{
	struct cni_result res = { 0 };
	struct ip_addr a;

	(void)state;
	parse_input("result-1.0.0-full", &res);
	assert_string_equal(res.cni_version, "1.0.0");
	assert_int_equal(res.n_ifaces, 2);
	assert_string_equal(res.ifaces[0].name, "mv-host0");
	assert_string_equal(res.ifaces[0].mac, "0a:58:0a:f4:00:01");
	assert_null(res.ifaces[0].sandbox);
	assert_string_equal(res.ifaces[1].sandbox, "/var/run/netns/cni-1234");
	assert_int_equal(res.ifaces[1].mtu, 0);

	assert_int_equal(res.n_ips, 3);
	assert_int_equal(res.ips[0].address.addr.family, AF_INET);
	assert_int_equal(res.ips[0].address.len, 24);
	assert_int_equal(ip_addr_parse("10.244.0.5", &a), 0);
	assert_true(ip_addr_equal(&res.ips[0].address.addr, &a));
	assert_true(res.ips[0].has_gateway);
	assert_int_equal(res.ips[0].iface, 1);
	assert_int_equal(res.ips[1].address.addr.family, AF_INET6);
	assert_int_equal(res.ips[2].iface, 0);
	assert_false(res.ips[2].has_gateway);

	assert_int_equal(res.n_routes, 4);
	assert_true(res.routes[0].has_gw);
	assert_false(res.routes[1].has_gw);
	assert_int_equal(res.routes[1].scope, -1);
	assert_int_equal(res.routes[1].mtu, 0);

	assert_int_equal(res.dns.n_nameservers, 2);
	assert_string_equal(res.dns.nameservers[1], "2001:db8::53");
	assert_string_equal(res.dns.domain, "cluster.local");
	assert_int_equal(res.dns.n_search, 2);
	assert_int_equal(res.dns.n_options, 2);
	assert_string_equal(res.dns.options[0], "ndots:5");

	cni_result_free(&res);
	assert_null(res.ifaces);
	assert_int_equal(res.n_ifaces, 0);
	assert_int_equal(res.n_ips, 0);
	assert_null(res.dns.domain);
	cni_result_free(&res); /* freeing a zeroed result is harmless */
}

static void test_model_of_020_input(void **state)
{
	struct cni_result res = { 0 };

	(void)state;
	parse_input("result-0.2.0", &res);
	assert_string_equal(res.cni_version, "0.2.0");
	assert_int_equal(res.n_ifaces, 0);
	assert_int_equal(res.n_ips, 2);
	assert_int_equal(res.ips[0].iface, -1); /* 0.2.0 has no interface index */
	assert_int_equal(res.ips[1].iface, -1);
	assert_int_equal(res.n_routes, 3); /* ip4 routes then ip6 routes */
	assert_int_equal(res.routes[0].dst.addr.family, AF_INET);
	assert_int_equal(res.routes[2].dst.addr.family, AF_INET6);
	cni_result_free(&res);
}

static void test_model_of_extras_input(void **state)
{
	struct cni_result res = { 0 };

	(void)state;
	parse_input("result-1.0.0-extras", &res);
	assert_int_equal(res.ifaces[0].mtu, 9000);
	assert_string_equal(res.ifaces[0].socket_path, "/run/vhost-user/sock0");
	assert_string_equal(res.ifaces[0].pci_id, "0000:04:00.5");
	assert_null(res.ifaces[1].socket_path);
	assert_int_equal(res.routes[0].mtu, 1400);
	assert_int_equal(res.routes[0].advmss, 1360);
	assert_int_equal(res.routes[0].priority, 100);
	assert_int_equal(res.routes[0].table, 100);
	assert_int_equal(res.routes[0].scope, 0);
	assert_int_equal(res.routes[1].scope, 253);
	assert_int_equal(res.routes[2].scope, -1);
	cni_result_free(&res);
}

/* A result without cniVersion is read in the version the caller gives (Go reads 0.1.0). */
static void test_missing_version_uses_default(void **state)
{
	static const char text[] = "{\"ip4\": {\"ip\": \"10.9.8.7/8\", \"gateway\": \"10.0.0.1\"}}";
	struct cni_result res = { 0 };

	(void)state;
	parse_ok(text, "0.1.0", &res);
	assert_string_equal(res.cni_version, "0.1.0");
	assert_int_equal(res.n_ips, 1);
	assert_int_equal(res.ips[0].address.len, 8);
	cni_result_free(&res);

	/* Read as 1.0.0, the same text has no ips: ip4 means nothing there. */
	parse_ok(text, "1.0.0", &res);
	assert_string_equal(res.cni_version, "1.0.0");
	assert_int_equal(res.n_ips, 0);
	cni_result_free(&res);
}

/* Go's decoder ignores unknown keys; so does ours. */
static void test_unknown_keys_ignored(void **state)
{
	static const char text[] =
		"{\"cniVersion\": \"1.0.0\", \"extra\": {\"x\": 1},"
		" \"ips\": [{\"address\": \"10.0.0.1/8\", \"whatever\": true}]}";
	struct cni_result res = { 0 };

	(void)state;
	parse_ok(text, NULL, &res);
	assert_int_equal(res.n_ips, 1);
	cni_result_free(&res);
}

/* ---- parse errors ---- */

static void expect_parse_error(const char *text, int code, const char *needle)
{
	struct cni_result res = { .n_ips = 12345 }; /* must stay untouched */
	struct cni_err err = { 0 };
	int r = cni_result_parse(text, strlen(text), "1.0.0", &res, &err);

	if (r >= 0)
		fail_msg("parse of %s succeeded, expected code %d", text, code);
	fprintf(stderr, "# code %d: %s\n", err.code, err.msg);
	assert_int_equal(res.n_ips, 12345);
	assert_null(res.ips);
	if (err.code != code)
		fail_msg("parse of %s: code %d (%s), expected %d", text, err.code, err.msg, code);
	if (needle && !strstr(err.msg, needle))
		fail_msg("parse of %s: message \"%s\" does not mention \"%s\"", text, err.msg, needle);
}

static void test_parse_malformed_json(void **state)
{
	(void)state;
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"ips\": [", CNI_ERR_DECODE, NULL);
	expect_parse_error("{\"cniVersion\": \"1.0.0\"} trailing", CNI_ERR_DECODE, NULL);
	expect_parse_error("", CNI_ERR_DECODE, NULL);
	expect_parse_error("[]", CNI_ERR_DECODE, NULL);
}

static void test_parse_wrong_types(void **state)
{
	(void)state;
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"ips\": {}}", CNI_ERR_DECODE, "ips");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"interfaces\": \"eth0\"}", CNI_ERR_DECODE,
			   "interfaces");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"interfaces\": [{\"name\": 7}]}",
			   CNI_ERR_DECODE, "name");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"routes\": [{\"dst\": 5}]}", CNI_ERR_DECODE,
			   "dst");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"routes\": {\"dst\": \"0.0.0.0/0\"}}",
			   CNI_ERR_DECODE, "routes");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"dns\": {\"nameservers\": \"10.0.0.53\"}}",
			   CNI_ERR_DECODE, "nameservers");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"dns\": []}", CNI_ERR_DECODE, "dns");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"ips\": [{\"address\": \"10.0.0.1/8\","
			   " \"interface\": \"0\"}], \"interfaces\": [{\"name\": \"eth0\"}]}",
			   CNI_ERR_DECODE, "interface");
	expect_parse_error("{\"cniVersion\": 1}", CNI_ERR_DECODE, "cniVersion");
	expect_parse_error("{\"cniVersion\": \"0.2.0\", \"ip4\": [\"10.0.0.1/8\"]}", CNI_ERR_DECODE,
			   "ip4");
}

static void test_parse_bad_addresses(void **state)
{
	(void)state;
	/* an address without prefix length is not a CIDR */
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"ips\": [{\"address\": \"10.0.0.1\"}]}",
			   CNI_ERR_DECODE, "address");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"ips\": [{\"address\": \"10.0.0.300/24\"}]}",
			   CNI_ERR_DECODE, "10.0.0.300/24");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"ips\": [{\"address\": \"10.0.0.1/33\"}]}",
			   CNI_ERR_DECODE, "address");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"ips\": [{\"address\": \"fd00::1/129\"}]}",
			   CNI_ERR_DECODE, "address");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"ips\": [{}]}", CNI_ERR_DECODE, "address");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"ips\": [{\"address\": \"10.0.0.1/8\","
			   " \"gateway\": \"not-an-ip\"}]}",
			   CNI_ERR_DECODE, "gateway");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"routes\": [{\"dst\": \"default\"}]}",
			   CNI_ERR_DECODE, "dst");
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"routes\": [{\"dst\": \"0.0.0.0/0\","
			   " \"gw\": \"10.0.0.1/8\"}]}",
			   CNI_ERR_DECODE, "gw");
	expect_parse_error("{\"cniVersion\": \"0.2.0\", \"ip4\": {\"ip\": \"10.1.1.1\"}}",
			   CNI_ERR_DECODE, "\"ip\"");
}

static void test_parse_unknown_version(void **state)
{
	(void)state;
	expect_parse_error("{\"cniVersion\": \"9.9.9\", \"ips\": []}", CNI_ERR_INCOMPATIBLE_VERSION,
			   "9.9.9");
	expect_parse_error("{\"cniVersion\": \"1.0\"}", CNI_ERR_INCOMPATIBLE_VERSION, "1.0");
}

static void test_parse_interface_index_out_of_range(void **state)
{
	(void)state;
	/* two interfaces: index 2 names none of them */
	expect_parse_error("{\"cniVersion\": \"1.0.0\","
			   " \"interfaces\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
			   " \"ips\": [{\"address\": \"10.0.0.1/8\", \"interface\": 2}]}",
			   CNI_ERR_DECODE, "interface");
	/* negative: out of the integer range the getter accepts (code 7, naming the key) */
	expect_parse_error("{\"cniVersion\": \"1.0.0\", \"interfaces\": [{\"name\": \"a\"}],"
			   " \"ips\": [{\"address\": \"10.0.0.1/8\", \"interface\": -1}]}",
			   CNI_ERR_INVALID_CONFIG, "interface");
}

static void test_to_json_unknown_version(void **state)
{
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };
	char *sentinel = (char *)"untouched", *out = sentinel;

	(void)state;
	parse_input("result-1.0.0-full", &res);
	assert_true(cni_result_to_json(&res, "9.9.9", &out, &err) < 0);
	assert_ptr_equal(out, sentinel);
	assert_int_equal(err.code, CNI_ERR_INCOMPATIBLE_VERSION);
	assert_non_null(strstr(err.msg, "9.9.9"));
	cni_result_free(&res);
}

/* ---- round trip: parse(to_json(x, V)) renders as x in V ---- */

static void test_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_INPUTS; i++) {
		struct cni_result res = { 0 };

		parse_input(inputs[i], &res);
		for (size_t v = 0; v < N_VERSIONS; v++) {
			struct cni_result again = { 0 };
			struct cni_err err = { 0 };
			char *first = NULL, *second;
			char what[256];

			if (cni_result_to_json(&res, versions[v], &first, &err) < 0)
				continue; /* refused (L2 below 0.3.0): checked against the goldens */
			parse_ok(first, NULL, &again);
			assert_string_equal(again.cni_version, versions[v]);
			second = to_json_ok(&again, versions[v]);
			snprintf(what, sizeof(what), "round trip of %s in %s", inputs[i], versions[v]);
			if (!json_equal(what, first, second))
				fail_msg("%s: not stable", what);
			free(first);
			free(second);
			cni_result_free(&again);
		}
		cni_result_free(&res);
	}
}

/* A 1.1.0 rendering loses nothing: parsing it back gives the reference in every version. */
static void test_round_trip_via_current(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_INPUTS; i++) {
		struct cni_result res = { 0 }, again = { 0 };
		char *text;

		parse_input(inputs[i], &res);
		text = to_json_ok(&res, "1.1.0");
		parse_ok(text, NULL, &again);
		assert_goldens_all_versions(&again, inputs[i]);
		free(text);
		cni_result_free(&again);
		cni_result_free(&res);
	}
}

/* ---- building a result through the API ---- */

static struct cni_ip mk_ip(const char *cidr, const char *gw, int iface)
{
	struct cni_ip ip = { .iface = iface };

	assert_int_equal(ip_prefix_parse(cidr, &ip.address), 0);
	if (gw) {
		assert_int_equal(ip_addr_parse(gw, &ip.gateway), 0);
		ip.has_gateway = true;
	}
	return ip;
}

static struct cni_route mk_route(const char *dst, const char *gw)
{
	struct cni_route rt = { .scope = -1 };

	assert_int_equal(ip_prefix_parse(dst, &rt.dst), 0);
	if (gw) {
		assert_int_equal(ip_addr_parse(gw, &rt.gw), 0);
		rt.has_gw = true;
	}
	return rt;
}

/* Build result-1.0.0-full.json through the API; every version must match its goldens. */
static void test_build_full(void **state)
{
	char ns0[] = "10.96.0.10", ns1[] = "2001:db8::53", dom[] = "cluster.local";
	char s0[] = "default.svc.cluster.local", s1[] = "svc.cluster.local";
	char o0[] = "ndots:5", o1[] = "edns0";
	char *ns[] = { ns0, ns1 }, *search[] = { s0, s1 }, *opts[] = { o0, o1 };
	char junk0[] = "192.0.2.1", *junk[] = { junk0 };
	struct cni_dns dns = { .nameservers = ns, .n_nameservers = 2, .domain = dom,
			       .search = search, .n_search = 2, .options = opts, .n_options = 2 };
	struct cni_dns first = { .nameservers = junk, .n_nameservers = 1, .domain = junk0 };
	struct cni_result res = { 0 };
	struct cni_ip ip;
	struct cni_route rt;

	(void)state;
	snprintf(res.cni_version, sizeof(res.cni_version), "1.0.0");
	assert_int_equal(cni_result_add_iface(&res, "mv-host0", "0a:58:0a:f4:00:01", NULL), 0);
	assert_int_equal(cni_result_add_iface(&res, "eth0", "0a:58:0a:f4:00:05",
					      "/var/run/netns/cni-1234"),
			 1);
	ip = mk_ip("10.244.0.5/24", "10.244.0.1", 1);
	assert_int_equal(cni_result_add_ip(&res, &ip), 0);
	ip = mk_ip("2001:db8:1::5/64", "2001:db8:1::1", 1);
	assert_int_equal(cni_result_add_ip(&res, &ip), 0);
	ip = mk_ip("10.245.0.7/16", NULL, 0);
	assert_int_equal(cni_result_add_ip(&res, &ip), 0);
	rt = mk_route("0.0.0.0/0", "10.244.0.1");
	assert_int_equal(cni_result_add_route(&res, &rt), 0);
	rt = mk_route("192.168.0.0/16", NULL);
	assert_int_equal(cni_result_add_route(&res, &rt), 0);
	rt = mk_route("::/0", "2001:db8:1::1");
	assert_int_equal(cni_result_add_route(&res, &rt), 0);
	rt = mk_route("2001:db8:ff::/48", NULL);
	assert_int_equal(cni_result_add_route(&res, &rt), 0);

	/* set_dns replaces what was there and copies deeply */
	assert_int_equal(cni_result_set_dns(&res, &first), 0);
	assert_int_equal(cni_result_set_dns(&res, &dns), 0);
	ns0[0] = 'X';
	dom[0] = 'X';
	s1[0] = 'X';
	o0[0] = 'X';
	assert_ptr_not_equal(res.dns.nameservers, ns);
	assert_ptr_not_equal(res.dns.domain, dom);

	assert_goldens_all_versions(&res, "result-1.0.0-full");
	cni_result_free(&res);
}

/* Build the L2 result: interfaces only, and an empty dns (dropped in 1.x, {} below). */
static void test_build_l2(void **state)
{
	struct cni_result res = { 0 };
	struct cni_dns empty = { 0 };

	(void)state;
	snprintf(res.cni_version, sizeof(res.cni_version), "1.0.0");
	assert_int_equal(cni_result_add_iface(&res, "net1", "96:4a:8e:21:3c:0b",
					      "/var/run/netns/l2-only"),
			 0);
	assert_int_equal(cni_result_set_dns(&res, &empty), 0);
	assert_goldens_all_versions(&res, "result-1.0.0-l2");
	cni_result_free(&res);
}

/* Build the extras result, setting the fields the add functions do not take. */
static void test_build_extras(void **state)
{
	char ns0[] = "10.10.0.53", *ns[] = { ns0 };
	struct cni_dns dns = { .nameservers = ns, .n_nameservers = 1 };
	struct cni_result res = { 0 };
	struct cni_ip ip;
	struct cni_route rt;

	(void)state;
	snprintf(res.cni_version, sizeof(res.cni_version), "1.0.0");
	assert_int_equal(cni_result_add_iface(&res, "eth0", "0a:00:00:00:00:01",
					      "/var/run/netns/extras"),
			 0);
	res.ifaces[0].mtu = 9000;
	res.ifaces[0].socket_path = strdup("/run/vhost-user/sock0");
	res.ifaces[0].pci_id = strdup("0000:04:00.5");
	assert_int_equal(cni_result_add_iface(&res, "vf-host", NULL, NULL), 1);
	res.ifaces[1].mtu = 1500;
	ip = mk_ip("10.10.0.2/24", "10.10.0.1", 0);
	assert_int_equal(cni_result_add_ip(&res, &ip), 0);
	ip = mk_ip("fd10::2/64", NULL, 0);
	assert_int_equal(cni_result_add_ip(&res, &ip), 0);
	rt = mk_route("10.20.0.0/16", "10.10.0.1");
	rt.mtu = 1400;
	rt.advmss = 1360;
	rt.priority = 100;
	rt.table = 100;
	rt.scope = 0;
	assert_int_equal(cni_result_add_route(&res, &rt), 0);
	rt = mk_route("10.10.0.0/24", NULL);
	rt.table = 254;
	rt.scope = 253;
	assert_int_equal(cni_result_add_route(&res, &rt), 0);
	rt = mk_route("fd20::/48", NULL);
	rt.mtu = 1280;
	rt.priority = 1024;
	assert_int_equal(cni_result_add_route(&res, &rt), 0);
	assert_int_equal(cni_result_set_dns(&res, &dns), 0);
	assert_goldens_all_versions(&res, "result-1.0.0-extras");
	cni_result_free(&res);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_goldens_complete),
		cmocka_unit_test(test_l2_refused_below_030),
		cmocka_unit_test(test_model_of_full_input),
		cmocka_unit_test(test_model_of_020_input),
		cmocka_unit_test(test_model_of_extras_input),
		cmocka_unit_test(test_missing_version_uses_default),
		cmocka_unit_test(test_unknown_keys_ignored),
		cmocka_unit_test(test_parse_malformed_json),
		cmocka_unit_test(test_parse_wrong_types),
		cmocka_unit_test(test_parse_bad_addresses),
		cmocka_unit_test(test_parse_unknown_version),
		cmocka_unit_test(test_parse_interface_index_out_of_range),
		cmocka_unit_test(test_to_json_unknown_version),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_via_current),
		cmocka_unit_test(test_build_full),
		cmocka_unit_test(test_build_l2),
		cmocka_unit_test(test_build_extras),
	};
	const size_t n_fixed = sizeof(fixed) / sizeof(fixed[0]);
	struct golden_case cases[N_INPUTS * N_VERSIONS];
	char names[N_INPUTS * N_VERSIONS][96];
	struct CMUnitTest tests[N_INPUTS * N_VERSIONS + sizeof(fixed) / sizeof(fixed[0])];
	size_t n = 0;

	for (size_t i = 0; i < N_INPUTS; i++)
		for (size_t v = 0; v < N_VERSIONS; v++) {
			cases[n] = (struct golden_case){ inputs[i], versions[v] };
			snprintf(names[n], sizeof(names[n]), "golden %s to %s", inputs[i], versions[v]);
			tests[n] = (struct CMUnitTest){ .name = names[n], .test_func = test_golden,
							.initial_state = &cases[n] };
			n++;
		}
	for (size_t i = 0; i < n_fixed; i++)
		tests[n++] = fixed[i];
	return _cmocka_run_group_tests("Result conversion", tests, n, NULL, NULL);
}
