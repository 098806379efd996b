/* Unit tests: nv-ipam node pool file, node-side ranges and exclusions */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/pool/pool.h"

#define ORIGIN "node-pools.json"

/* One pool entry under a key, as a whole file. */
#define ONE(key, body) "{\"pools\":{\"" key "\":{" body "}}}"
#define IPPOOL_BASE "\"subnet\":\"10.0.0.0/16\",\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.24\""
#define CIDR_BASE "\"cidr\":\"10.1.0.0/16\",\"prefix\":\"10.1.5.0/24\""

static void parse_ok(const char *json, struct nvipam_pools *pools)
{
	struct cni_err err = { 0 };
	int r = nvipam_pools_parse(json, strlen(json), ORIGIN, pools, &err);

	if (r < 0)
		fail_msg("parse failed (%d, code %d): %s", r, err.code, err.msg);
	assert_int_equal(err.code, CNI_OK);
}

static void expect_fail(const char *json, int code, const char *key, const char *part)
{
	struct nvipam_pools pools = { .n = 4242 };
	struct cni_err err = { 0 };
	char want_key[400];

	if (nvipam_pools_parse(json, strlen(json), ORIGIN, &pools, &err) >= 0)
		fail_msg("parsed, expected \"%s\": %s", part, json);
	/* Written only on success. */
	assert_int_equal(pools.n, 4242);
	assert_null(pools.pools);
	if (err.code != code)
		fail_msg("code %d, expected %d: %s", err.code, code, err.msg);
	if (!strstr(err.msg, "node pool file " ORIGIN))
		fail_msg("message \"%s\" does not name the file", err.msg);
	if (key) {
		snprintf(want_key, sizeof(want_key), "pool \"%s\": ", key);
		if (!strstr(err.msg, want_key))
			fail_msg("message \"%s\" does not name the pool \"%s\"", err.msg, key);
	}
	if (!strstr(err.msg, part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, part);
}

/*
 * A key that is no pool key is named by its place, never echoed: poolFile may
 * point at any file of the node's config directories, whose content is not
 * for the NAD author to read in an error.
 */
static void expect_key_refused(const char *json, const char *key)
{
	struct nvipam_pools pools = { 0 };
	struct cni_err err = { 0 };
	char quoted[400];

	assert_true(nvipam_pools_parse(json, strlen(json), ORIGIN, &pools, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	if (!strstr(err.msg, "node pool file " ORIGIN ": pools member 0: invalid pool key"))
		fail_msg("message \"%s\" does not name the member by its place", err.msg);
	snprintf(quoted, sizeof(quoted), "\"%s\"", key);
	if (strstr(err.msg, quoted))
		fail_msg("message \"%s\" echoes the key %s", err.msg, quoted);
}

/* A value that does not parse is not echoed either. */
static void expect_value_hidden(const char *json, const char *part, const char *value)
{
	struct nvipam_pools pools = { 0 };
	struct cni_err err = { 0 };

	assert_true(nvipam_pools_parse(json, strlen(json), ORIGIN, &pools, &err) < 0);
	if (!strstr(err.msg, part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, part);
	if (strstr(err.msg, value))
		fail_msg("message \"%s\" echoes \"%s\"", err.msg, value);
}

static void assert_ip(const struct ip_addr *a, const char *want)
{
	char buf[IP_PREFIX_STRLEN];

	assert_string_equal(ip_addr_format(a, buf, sizeof(buf)), want);
}

static void assert_prefix(const struct ip_prefix *p, const char *want)
{
	char buf[IP_PREFIX_STRLEN];

	assert_string_equal(ip_prefix_format(p, buf, sizeof(buf)), want);
}

static void assert_range(const struct nvipam_ip_range *r, const char *start, const char *end)
{
	assert_ip(&r->start, start);
	assert_ip(&r->end, end);
}

static void test_both_pool_types(void **state)
{
	static const char file[] =
		"{\n"
		"  \"nodeName\": \"host-a\",\n"
		"  \"pools\": {\n"
		"    \"my-pool\": {\n"
		"      \"subnet\": \"192.168.0.0/24\",\n"
		"      \"startIP\": \"192.168.0.1\",\n"
		"      \"endIP\": \"192.168.0.100\",\n"
		"      \"gateway\": \"192.168.0.1\",\n"
		"      \"exclusions\": [ { \"startIP\": \"192.168.0.10\", \"endIP\": \"192.168.0.19\" } ],\n"
		"      \"perNodeExclusions\": [ { \"startIndex\": 0, \"endIndex\": 1 } ],\n"
		"      \"routes\": [ { \"dst\": \"10.200.0.0/16\" } ]\n"
		"    },\n"
		"    \"cidrpool/pool-cidr\": {\n"
		"      \"cidr\": \"10.100.0.0/16\",\n"
		"      \"prefix\": \"10.100.0.0/24\",\n"
		"      \"gateway\": \"10.100.0.1\",\n"
		"      \"perNodeExclusions\": [ { \"startIndex\": 2, \"endIndex\": 9 } ],\n"
		"      \"defaultGateway\": true\n"
		"    }\n"
		"  }\n"
		"}\n";
	struct nvipam_pools pools;
	const struct nvipam_pool *ip, *cp;

	(void)state;
	parse_ok(file, &pools);
	assert_int_equal(pools.n, 2);

	ip = nvipam_pools_find(&pools, "my-pool");
	assert_ptr_equal(ip, &pools.pools[0]);
	assert_string_equal(ip->key, "my-pool");
	assert_string_equal(ip->name, "my-pool");
	assert_int_equal(ip->type, NVIPAM_POOL_IPPOOL);
	assert_prefix(&ip->subnet, "192.168.0.0/24");
	assert_range(&ip->range, "192.168.0.1", "192.168.0.100");
	assert_true(ip->has_gateway);
	assert_ip(&ip->gateway, "192.168.0.1");
	assert_int_equal(ip->n_exclusions, 2);
	assert_range(&ip->exclusions[0], "192.168.0.1", "192.168.0.2");
	assert_range(&ip->exclusions[1], "192.168.0.10", "192.168.0.19");
	assert_int_equal(ip->n_routes, 1);
	assert_prefix(&ip->routes[0], "10.200.0.0/16");
	assert_false(ip->default_gateway);

	cp = nvipam_pools_find(&pools, "cidrpool/pool-cidr");
	assert_ptr_equal(cp, &pools.pools[1]);
	assert_string_equal(cp->key, "cidrpool/pool-cidr");
	assert_string_equal(cp->name, "pool-cidr");
	assert_int_equal(cp->type, NVIPAM_POOL_CIDRPOOL);
	assert_prefix(&cp->subnet, "10.100.0.0/24");
	assert_range(&cp->range, "10.100.0.1", "10.100.0.254");
	assert_true(cp->has_gateway);
	assert_ip(&cp->gateway, "10.100.0.1");
	assert_int_equal(cp->n_exclusions, 1);
	assert_range(&cp->exclusions[0], "10.100.0.2", "10.100.0.9");
	assert_int_equal(cp->n_routes, 0);
	assert_true(cp->default_gateway);

	/* The pool type is part of the key. */
	assert_null(nvipam_pools_find(&pools, "pool-cidr"));
	assert_null(nvipam_pools_find(&pools, "cidrpool/my-pool"));
	assert_null(nvipam_pools_find(&pools, "My-pool"));

	nvipam_pools_free(&pools);
	assert_null(pools.pools);
	assert_int_equal(pools.n, 0);
	nvipam_pools_free(&pools);
}

static void test_ippool_details(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;

	(void)state;
	/* Host bits in the subnet are dropped; the gateway may lie outside the block;
	 * unknown members are ignored. */
	parse_ok("{\"nodeName\":\"n\",\"extra\":[1],\"pools\":{\"a.b_c-1\":{"
		 "\"subnet\":\"192.168.7.9/16\",\"startIP\":\"192.168.0.25\",\"endIP\":\"192.168.0.48\","
		 "\"gateway\":\"192.168.0.1\",\"perNodeBlockSize\":24,\"comment\":\"x\"}}}",
		 &pools);
	assert_int_equal(pools.n, 1);
	p = &pools.pools[0];
	assert_string_equal(p->key, "a.b_c-1");
	assert_prefix(&p->subnet, "192.168.0.0/16");
	assert_range(&p->range, "192.168.0.25", "192.168.0.48");
	assert_true(p->has_gateway);
	assert_ip(&p->gateway, "192.168.0.1");
	assert_int_equal(p->n_exclusions, 0);
	assert_null(p->exclusions);
	nvipam_pools_free(&pools);

	/* An empty gateway is no gateway; a single-address block is fine. */
	parse_ok(ONE("p", "\"subnet\":\"10.10.10.10/32\",\"startIP\":\"10.10.10.10\","
		     "\"endIP\":\"10.10.10.10\",\"gateway\":\"\""), &pools);
	assert_false(pools.pools[0].has_gateway);
	assert_range(&pools.pools[0].range, "10.10.10.10", "10.10.10.10");
	nvipam_pools_free(&pools);

	/* IPv6, with routes and defaultGateway. */
	parse_ok(ONE("pool6", "\"subnet\":\"fd52:2eb5:44::/48\",\"startIP\":\"fd52:2eb5:44::1\","
		     "\"endIP\":\"fd52:2eb5:44::ff\",\"gateway\":\"fd52:2eb5:44::1\","
		     "\"routes\":[{\"dst\":\"fd00:aa::/64\"},{\"dst\":\"fd00:bb::/64\"}],"
		     "\"defaultGateway\":true"), &pools);
	p = &pools.pools[0];
	assert_prefix(&p->subnet, "fd52:2eb5:44::/48");
	assert_range(&p->range, "fd52:2eb5:44::1", "fd52:2eb5:44::ff");
	assert_int_equal(p->n_routes, 2);
	assert_prefix(&p->routes[1], "fd00:bb::/64");
	assert_true(p->default_gateway);
	nvipam_pools_free(&pools);

	/* A node without pools. */
	parse_ok("{\"pools\":{}}", &pools);
	assert_int_equal(pools.n, 0);
	assert_null(nvipam_pools_find(&pools, "p"));
	nvipam_pools_free(&pools);
}

static void test_cidrpool_ranges(void **state)
{
	static const struct {
		const char *cidr, *prefix, *start, *end;
	} cases[] = {
		{ "192.168.0.0/16", "192.168.1.0/24", "192.168.1.1", "192.168.1.254" },
		{ "192.168.0.0/16", "192.168.1.4/30", "192.168.1.5", "192.168.1.6" },
		{ "192.168.100.0/24", "192.168.100.0/31", "192.168.100.0", "192.168.100.1" },
		{ "192.168.100.0/24", "192.168.100.7/32", "192.168.100.7", "192.168.100.7" },
		{ "192.168.100.0/24", "192.168.100.0/24", "192.168.100.1", "192.168.100.254" },
		/* IPv6 keeps the all-ones address. */
		{ "fd00:1::/32", "fd00:1:0:7::/64", "fd00:1:0:7::1", "fd00:1:0:7:ffff:ffff:ffff:ffff" },
		{ "fd00:1::/32", "fd00:1::4/126", "fd00:1::5", "fd00:1::7" },
		{ "fd00:1::/32", "fd00:1::6/127", "fd00:1::6", "fd00:1::7" },
		{ "fd00:1::/32", "fd00:1::9/128", "fd00:1::9", "fd00:1::9" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char json[256];
		struct nvipam_pools pools;
		struct ip_prefix want;

		snprintf(json, sizeof(json), "{\"pools\":{\"cidrpool/c\":{\"cidr\":\"%s\",\"prefix\":\"%s\"}}}",
			 cases[i].cidr, cases[i].prefix);
		parse_ok(json, &pools);
		assert_int_equal(ip_prefix_parse(cases[i].prefix, &want), 0);
		assert_true(ip_addr_equal(&pools.pools[0].subnet.addr, &want.addr));
		assert_int_equal(pools.pools[0].subnet.len, want.len);
		assert_range(&pools.pools[0].range, cases[i].start, cases[i].end);
		assert_false(pools.pools[0].has_gateway);
		nvipam_pools_free(&pools);
	}
}

static void test_invalid_files(void **state)
{
	struct nvipam_pools pools;
	const int inv = CNI_ERR_INVALID_CONFIG, dec = CNI_ERR_DECODE;

	char name[256], json[512];

	(void)state;
	memset(name, 'a', 254);
	name[254] = '\0';

	/* The file itself. */
	expect_fail("{\"pools\":", dec, NULL, "unexpected end");
	expect_fail("{\"pools\":{},}", dec, NULL, "error unmarshall");
	expect_fail("[]", dec, NULL, "expected an object, got array");
	expect_fail("{\"nodeName\":\"n\"}", inv, NULL, "missing \"pools\"");
	expect_fail("{\"pools\":[]}", dec, NULL, "\"pools\"");
	expect_fail("{\"pools\":{\"p\":1}}", dec, "p", "expected an object, got number");

	/* Keys. */
	expect_key_refused(ONE("bad key", IPPOOL_BASE), "bad key");
	expect_key_refused(ONE("-p", IPPOOL_BASE), "-p");
	expect_key_refused(ONE("", IPPOOL_BASE), "");
	expect_key_refused(ONE("cidrpool/", CIDR_BASE), "cidrpool/");
	expect_key_refused(ONE("ippool/p", IPPOOL_BASE), "ippool/p");
	expect_key_refused(ONE("cidrpool/a/b", CIDR_BASE), "cidrpool/a/b");
	expect_key_refused(ONE("token: s3cr3t", IPPOOL_BASE), "token: s3cr3t");
	snprintf(json, sizeof(json), "{\"pools\":{\"%s\":{" IPPOOL_BASE "}}}", name);
	expect_fail(json, inv, NULL, "at most 253 characters");
	expect_key_refused(json, name);
	/* 253 characters are fine. */
	name[253] = '\0';
	snprintf(json, sizeof(json), "{\"pools\":{\"cidrpool/%s\":{" CIDR_BASE "}}}", name);
	parse_ok(json, &pools);
	assert_string_equal(pools.pools[0].name, name);
	nvipam_pools_free(&pools);
	expect_fail(ONE("p", CIDR_BASE), inv, "p", "needs the key \"cidrpool/p\"");
	expect_fail(ONE("cidrpool/c", IPPOOL_BASE), inv, "cidrpool/c", "needs the plain key \"c\"");

	/* IPPool entries. */
	expect_fail(ONE("p", "\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.2\""), inv, "p",
		    "missing \"subnet\"");
	expect_fail(ONE("p", "\"subnet\":\"10.0.0.0/16\",\"endIP\":\"10.0.0.2\""), inv, "p",
		    "missing \"startIP\"");
	expect_fail(ONE("p", "\"subnet\":\"10.0.0.0/16\",\"startIP\":\"10.0.0.2\""), inv, "p",
		    "missing \"endIP\"");
	expect_fail(ONE("p", "\"subnet\":\"10.0.0.0\",\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.2\""),
		    inv, "p", "\"subnet\": not a CIDR");
	expect_value_hidden(ONE("p", "\"subnet\":\"s3cr3t\",\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.2\""),
			    "\"subnet\": not a CIDR", "s3cr3t");
	expect_fail(ONE("p", "\"subnet\":\"10.0.0.0/16\",\"startIP\":\"10.0.0.300\",\"endIP\":\"10.0.0.2\""),
		    inv, "p", "\"startIP\": not an IP address");
	expect_value_hidden(ONE("p", "\"subnet\":\"10.0.0.0/16\",\"startIP\":\"s3cr3t\",\"endIP\":\"10.0.0.2\""),
			    "\"startIP\": not an IP address", "s3cr3t");
	expect_fail(ONE("p", "\"subnet\":\"10.0.0.0/16\",\"startIP\":167772161,\"endIP\":\"10.0.0.2\""),
		    dec, "p", "field \"startIP\": expected a string, got number");
	expect_fail(ONE("p", "\"subnet\":\"10.0.0.0/16\",\"startIP\":\"10.0.0.9\",\"endIP\":\"10.0.0.2\""),
		    inv, "p", "\"startIP\" 10.0.0.9 is after \"endIP\" 10.0.0.2");
	expect_fail(ONE("p", "\"subnet\":\"10.0.0.0/16\",\"startIP\":\"10.1.0.1\",\"endIP\":\"10.1.0.24\""),
		    inv, "p", "\"startIP\" 10.1.0.1 is outside subnet 10.0.0.0/16");
	expect_fail(ONE("p", "\"subnet\":\"10.0.0.0/16\",\"startIP\":\"10.0.255.250\",\"endIP\":\"10.1.0.5\""),
		    inv, "p", "\"endIP\" 10.1.0.5 is outside subnet 10.0.0.0/16");
	expect_fail(ONE("p", "\"subnet\":\"10.0.0.0/16\",\"startIP\":\"fd00::1\",\"endIP\":\"10.0.0.2\""),
		    inv, "p", "\"startIP\" fd00::1 and subnet 10.0.0.0/16 are of different address families");
	expect_fail(ONE("p", IPPOOL_BASE ",\"gateway\":\"10.9.0.1\""), inv, "p",
		    "\"gateway\" 10.9.0.1 is outside subnet 10.0.0.0/16");
	expect_fail(ONE("p", IPPOOL_BASE ",\"gateway\":\"fd00::1\""), inv, "p",
		    "different address families");
	expect_fail(ONE("p", IPPOOL_BASE ",\"defaultGateway\":true"), inv, "p",
		    "\"defaultGateway\" requires \"gateway\"");
	expect_fail(ONE("p", IPPOOL_BASE ",\"defaultGateway\":\"true\""), dec, "p",
		    "field \"defaultGateway\": expected a boolean, got string");
	expect_fail(ONE("p", IPPOOL_BASE ",\"routes\":[{\"dst\":\"5.5.0.0/24\"}]"), inv, "p",
		    "\"routes\" require \"gateway\"");
	expect_fail(ONE("p", IPPOOL_BASE ",\"gateway\":\"10.0.0.1\",\"defaultGateway\":true,"
			"\"routes\":[{\"dst\":\"5.5.0.0/24\"},{\"dst\":\"0.0.0.0/0\"}]"),
		    inv, "p", "routes[1]: default route 0.0.0.0/0 is not allowed with \"defaultGateway\"");
	expect_fail(ONE("p", IPPOOL_BASE ",\"gateway\":\"10.0.0.1\",\"routes\":[{\"dst\":\"5.5.0.0\"}]"),
		    inv, "p", "routes[0]: \"dst\": not a CIDR");
	expect_fail(ONE("p", IPPOOL_BASE ",\"gateway\":\"10.0.0.1\",\"routes\":[{}]"), inv, "p",
		    "routes[0]: missing \"dst\"");
	expect_fail(ONE("p", IPPOOL_BASE ",\"gateway\":\"10.0.0.1\",\"routes\":[{\"dst\":\"fd00::/64\"}]"),
		    inv, "p", "routes[0]: \"dst\" fd00::/64 and subnet 10.0.0.0/16 are of different");
	expect_fail(ONE("p", IPPOOL_BASE ",\"gateway\":\"10.0.0.1\",\"routes\":{\"dst\":\"5.5.0.0/24\"}"),
		    dec, "p", "field \"routes\": expected array, got object");
	expect_fail(ONE("p", IPPOOL_BASE ",\"exclusions\":[\"10.0.0.5\"]"), dec, "p",
		    "exclusions[0]: expected an object, got string");
	expect_fail(ONE("p", IPPOOL_BASE ",\"exclusions\":[{\"startIP\":\"10.0.0.5\"}]"), inv, "p",
		    "exclusions[0]: missing \"endIP\"");
	expect_fail(ONE("p", IPPOOL_BASE ",\"exclusions\":[{\"startIP\":\"10.0.0.5\",\"endIP\":\"10.0.0.4\"}]"),
		    inv, "p", "exclusions[0]: \"startIP\" 10.0.0.5 is after \"endIP\" 10.0.0.4");
	expect_fail(ONE("p", IPPOOL_BASE ",\"exclusions\":[{\"startIP\":\"10.0.0.5\",\"endIP\":\"10.0.0.6\"},"
			"{\"startIP\":\"10.0.0.5\",\"endIP\":\"10.1.0.4\"}]"),
		    inv, "p", "exclusions[1]: \"endIP\" 10.1.0.4 is outside subnet 10.0.0.0/16");
	expect_fail(ONE("p", IPPOOL_BASE ",\"exclusions\":[{\"startIP\":\"fd00::1\",\"endIP\":\"fd00::2\"}]"),
		    inv, "p", "exclusions[0]: \"startIP\" fd00::1 and subnet 10.0.0.0/16 are of different");
	expect_fail(ONE("p", IPPOOL_BASE ",\"perNodeExclusions\":[{\"startIndex\":20,\"endIndex\":24}]"),
		    inv, "p",
		    "perNodeExclusions[0]: \"endIndex\" 24 is outside the node's block 10.0.0.1-10.0.0.24");
	expect_fail(ONE("p", IPPOOL_BASE ",\"perNodeExclusions\":[{\"startIndex\":5,\"endIndex\":4}]"),
		    inv, "p", "perNodeExclusions[0]: \"startIndex\" 5 is after \"endIndex\" 4");
	expect_fail(ONE("p", IPPOOL_BASE ",\"perNodeExclusions\":[{\"startIndex\":-1,\"endIndex\":4}]"),
		    inv, "p", "perNodeExclusions[0]: field \"startIndex\": -1 out of range");
	expect_fail(ONE("p", IPPOOL_BASE ",\"perNodeExclusions\":[{\"startIndex\":1}]"), inv, "p",
		    "perNodeExclusions[0]: missing \"endIndex\"");
	expect_fail(ONE("p", IPPOOL_BASE ",\"perNodeExclusions\":[{\"startIndex\":1,\"endIndex\":\"2\"}]"),
		    dec, "p", "perNodeExclusions[0]: field \"endIndex\": expected an integer");

	/* CIDRPool entries. */
	expect_fail(ONE("cidrpool/c", "\"prefix\":\"10.1.5.0/24\""), inv, "cidrpool/c",
		    "missing \"cidr\"");
	expect_fail(ONE("cidrpool/c", "\"cidr\":\"10.1.0.0/16\""), inv, "cidrpool/c",
		    "missing \"prefix\"");
	expect_fail(ONE("cidrpool/c", "\"cidr\":\"10.1.0.1/16\",\"prefix\":\"10.1.5.0/24\""), inv,
		    "cidrpool/c", "\"cidr\" 10.1.0.1/16 has host bits set");
	expect_fail(ONE("cidrpool/c", "\"cidr\":\"10.1.0.0/16\",\"prefix\":\"10.1.5.1/24\""), inv,
		    "cidrpool/c", "\"prefix\" 10.1.5.1/24 has host bits set");
	expect_fail(ONE("cidrpool/c", "\"cidr\":\"10.1.0.0/16\",\"prefix\":\"10.2.5.0/24\""), inv,
		    "cidrpool/c", "\"prefix\" 10.2.5.0/24 is not inside cidr 10.1.0.0/16");
	expect_fail(ONE("cidrpool/c", "\"cidr\":\"10.0.0.0/16\",\"prefix\":\"10.0.0.0/8\""), inv,
		    "cidrpool/c", "\"prefix\" 10.0.0.0/8 is not inside cidr 10.0.0.0/16");
	expect_fail(ONE("cidrpool/c", "\"cidr\":\"10.1.0.0/16\",\"prefix\":\"fd00::/64\""), inv,
		    "cidrpool/c", "\"prefix\" fd00::/64 and cidr 10.1.0.0/16 are of different");
	/* Inside the cidr but in another node's prefix. */
	expect_fail(ONE("cidrpool/c", CIDR_BASE ",\"gateway\":\"10.1.6.1\""), inv, "cidrpool/c",
		    "\"gateway\" 10.1.6.1 is outside prefix 10.1.5.0/24");
	expect_fail(ONE("cidrpool/c", CIDR_BASE ",\"defaultGateway\":true"), inv, "cidrpool/c",
		    "\"defaultGateway\" requires \"gateway\"");
	expect_fail(ONE("cidrpool/c", CIDR_BASE ",\"routes\":[{\"dst\":\"5.5.0.0/24\"}]"), inv,
		    "cidrpool/c", "\"routes\" require \"gateway\"");
	expect_fail(ONE("cidrpool/c6", "\"cidr\":\"fd00::/48\",\"prefix\":\"fd00:0:0:1::/64\","
			"\"gateway\":\"fd00:0:0:1::1\",\"defaultGateway\":true,\"routes\":[{\"dst\":\"::/0\"}]"),
		    inv, "cidrpool/c6", "routes[0]: default route ::/0 is not allowed");
	expect_fail(ONE("cidrpool/c", CIDR_BASE ",\"exclusions\":[{\"startIP\":\"10.2.0.1\",\"endIP\":\"10.2.0.2\"}]"),
		    inv, "cidrpool/c", "exclusions[0]: \"startIP\" 10.2.0.1 is outside cidr 10.1.0.0/16");
	expect_fail(ONE("cidrpool/c", CIDR_BASE ",\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":256}]"),
		    inv, "cidrpool/c",
		    "perNodeExclusions[0]: \"endIndex\" 256 is outside the node's prefix 10.1.5.0/24");
}

static void test_exclusions_merged(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;

	(void)state;
	/* Unsorted, overlapping, adjacent, contained and duplicate ranges; the per-node
	 * range .1-.3 (block start .1) touches the spec range .4-.4. */
	parse_ok(ONE("p", "\"subnet\":\"10.0.0.0/24\",\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.100\","
		     "\"exclusions\":["
		     "{\"startIP\":\"10.0.0.40\",\"endIP\":\"10.0.0.40\"},"
		     "{\"startIP\":\"10.0.0.15\",\"endIP\":\"10.0.0.25\"},"
		     "{\"startIP\":\"10.0.0.10\",\"endIP\":\"10.0.0.20\"},"
		     "{\"startIP\":\"10.0.0.26\",\"endIP\":\"10.0.0.30\"},"
		     "{\"startIP\":\"10.0.0.11\",\"endIP\":\"10.0.0.12\"},"
		     "{\"startIP\":\"10.0.0.42\",\"endIP\":\"10.0.0.42\"},"
		     "{\"startIP\":\"10.0.0.40\",\"endIP\":\"10.0.0.40\"},"
		     "{\"startIP\":\"10.0.0.4\",\"endIP\":\"10.0.0.4\"}],"
		     "\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":2}]"),
		 &pools);
	p = &pools.pools[0];
	assert_int_equal(p->n_exclusions, 4);
	assert_range(&p->exclusions[0], "10.0.0.1", "10.0.0.4");
	assert_range(&p->exclusions[1], "10.0.0.10", "10.0.0.30");
	assert_range(&p->exclusions[2], "10.0.0.40", "10.0.0.40");
	assert_range(&p->exclusions[3], "10.0.0.42", "10.0.0.42");
	nvipam_pools_free(&pools);

	/* Merging at the very top of the IPv6 space must not wrap around. */
	parse_ok(ONE("cidrpool/top", "\"cidr\":\"ffff::/16\",\"prefix\":\"ffff:ffff:ffff:ffff::/64\","
		     "\"exclusions\":[{\"startIP\":\"ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0\","
		     "\"endIP\":\"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\"},"
		     "{\"startIP\":\"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\","
		     "\"endIP\":\"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\"},"
		     "{\"startIP\":\"ffff:ffff:ffff:ffff::\",\"endIP\":\"ffff:ffff:ffff:ffff::\"}]"),
		 &pools);
	p = &pools.pools[0];
	assert_range(&p->range, "ffff:ffff:ffff:ffff::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	assert_int_equal(p->n_exclusions, 2);
	assert_range(&p->exclusions[0], "ffff:ffff:ffff:ffff::", "ffff:ffff:ffff:ffff::");
	assert_range(&p->exclusions[1], "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0",
		     "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	nvipam_pools_free(&pools);
}

static void test_ippool_exclusions_unclipped(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;

	(void)state;
	/* IPPool keeps spec exclusions whole, even outside this node's block. */
	parse_ok(ONE("p", "\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.25\","
		     "\"endIP\":\"192.168.0.48\",\"exclusions\":["
		     "{\"startIP\":\"192.168.0.200\",\"endIP\":\"192.168.0.200\"},"
		     "{\"startIP\":\"192.168.0.20\",\"endIP\":\"192.168.0.30\"}]"),
		 &pools);
	p = &pools.pools[0];
	assert_int_equal(p->n_exclusions, 2);
	assert_range(&p->exclusions[0], "192.168.0.20", "192.168.0.30");
	assert_range(&p->exclusions[1], "192.168.0.200", "192.168.0.200");
	nvipam_pools_free(&pools);
}

static void test_cidrpool_exclusions_clipped(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;

	(void)state;
	parse_ok(ONE("cidrpool/c", "\"cidr\":\"10.0.0.0/16\",\"prefix\":\"10.0.1.0/24\",\"exclusions\":["
		     "{\"startIP\":\"10.0.0.250\",\"endIP\":\"10.0.1.5\"},"
		     "{\"startIP\":\"10.0.1.250\",\"endIP\":\"10.0.2.10\"},"
		     "{\"startIP\":\"10.0.3.0\",\"endIP\":\"10.0.3.9\"},"
		     "{\"startIP\":\"10.0.0.0\",\"endIP\":\"10.0.0.255\"},"
		     "{\"startIP\":\"10.0.1.100\",\"endIP\":\"10.0.1.100\"}]"),
		 &pools);
	p = &pools.pools[0];
	assert_int_equal(p->n_exclusions, 3);
	assert_range(&p->exclusions[0], "10.0.1.0", "10.0.1.5");
	assert_range(&p->exclusions[1], "10.0.1.100", "10.0.1.100");
	assert_range(&p->exclusions[2], "10.0.1.250", "10.0.1.255");
	nvipam_pools_free(&pools);

	/* One exclusion over the whole cidr covers exactly the prefix. */
	parse_ok(ONE("cidrpool/c", "\"cidr\":\"10.0.0.0/16\",\"prefix\":\"10.0.7.0/24\",\"exclusions\":["
		     "{\"startIP\":\"10.0.0.0\",\"endIP\":\"10.0.255.255\"}]"),
		 &pools);
	p = &pools.pools[0];
	assert_int_equal(p->n_exclusions, 1);
	assert_range(&p->exclusions[0], "10.0.7.0", "10.0.7.255");
	nvipam_pools_free(&pools);
}

static void test_per_node_exclusions(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;

	(void)state;
	/* IPPool: relative to the block's startIP; the last index is the block's end. */
	parse_ok(ONE("p", "\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.25\","
		     "\"endIP\":\"192.168.0.48\",\"perNodeExclusions\":["
		     "{\"startIndex\":23,\"endIndex\":23},{\"startIndex\":0,\"endIndex\":1}]"),
		 &pools);
	p = &pools.pools[0];
	assert_int_equal(p->n_exclusions, 2);
	assert_range(&p->exclusions[0], "192.168.0.25", "192.168.0.26");
	assert_range(&p->exclusions[1], "192.168.0.48", "192.168.0.48");
	nvipam_pools_free(&pools);

	/* CIDRPool: relative to the prefix's network address, not network+1. */
	parse_ok(ONE("cidrpool/c", "\"cidr\":\"10.100.0.0/16\",\"prefix\":\"10.100.1.0/24\","
		     "\"perNodeExclusions\":[{\"startIndex\":2,\"endIndex\":9},"
		     "{\"startIndex\":255,\"endIndex\":255}]"),
		 &pools);
	p = &pools.pools[0];
	assert_int_equal(p->n_exclusions, 2);
	assert_range(&p->exclusions[0], "10.100.1.2", "10.100.1.9");
	assert_range(&p->exclusions[1], "10.100.1.255", "10.100.1.255");
	nvipam_pools_free(&pools);

	/* IPv6: large indexes inside a /64. */
	parse_ok(ONE("cidrpool/c6", "\"cidr\":\"fd00::/48\",\"prefix\":\"fd00:0:0:5::/64\","
		     "\"perNodeExclusions\":[{\"startIndex\":4294967296,\"endIndex\":9223372036854775807}]"),
		 &pools);
	p = &pools.pools[0];
	assert_int_equal(p->n_exclusions, 1);
	assert_range(&p->exclusions[0], "fd00::5:0:1:0:0", "fd00::5:7fff:ffff:ffff:ffff");
	nvipam_pools_free(&pools);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* The plugin reads only its network's pools: another pool's bad entry fails no one else. */
static void test_only_asked_pools(void **state)
{
	static const char json[] = "{\"pools\":{\"bad\":{\"subnet\":\"10.9.0.0/16\"},"
				   "\"p\":{" IPPOOL_BASE "},\"cidrpool/c\":{" CIDR_BASE "}}}";
	const char *const wanted[] = { "p", "cidrpool/c", "absent" }, *const bad[] = { "bad" };
	struct nvipam_pools pools = { 0 };
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(nvipam_pools_parse_some(json, strlen(json), ORIGIN, wanted, 3, &pools, &err), 0);
	assert_int_equal(pools.n, 2);
	assert_non_null(nvipam_pools_find(&pools, "p"));
	assert_non_null(nvipam_pools_find(&pools, "cidrpool/c"));
	assert_null(nvipam_pools_find(&pools, "bad"));
	nvipam_pools_free(&pools);
	/* Asked for, it is refused as ever; so is the whole file. */
	assert_true(nvipam_pools_parse_some(json, strlen(json), ORIGIN, bad, 1, &pools, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(err.msg, "pool \"bad\": missing \"startIP\""));
	err = (struct cni_err){ 0 };
	assert_true(nvipam_pools_parse(json, strlen(json), ORIGIN, &pools, &err) < 0);
	/* What is not a pool file at all fails every pool. */
	err = (struct cni_err){ 0 };
	assert_true(nvipam_pools_parse_some("{\"pools\":[]}", 12, ORIGIN, wanted, 1, &pools, &err) < 0);
}

static void test_load_file(void **state)
{
	char dir[] = "/tmp/test-nvipam-pool-XXXXXX";
	char path[64], want[160];
	struct nvipam_pools pools = { 0 };
	struct cni_err err = { 0 };
	char *big;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/pools.json", dir);

	/* Missing file: code 5. */
	assert_int_equal(nvipam_pools_load(path, false, &pools, &err), -ENOENT);
	assert_int_equal(err.code, CNI_ERR_IO);
	snprintf(want, sizeof(want), "failed to read node pool file %s: No such file or directory", path);
	assert_string_equal(err.msg, want);
	assert_null(pools.pools);

	/* A directory opens but cannot be read. */
	err = (struct cni_err){ 0 };
	assert_int_equal(nvipam_pools_load(dir, false, &pools, &err), -EISDIR);
	assert_int_equal(err.code, CNI_ERR_IO);
	assert_non_null(strstr(err.msg, "failed to read node pool file /tmp/test-nvipam-pool-"));

	/* An empty file is malformed JSON, named by its path. */
	write_file(path, "");
	err = (struct cni_err){ 0 };
	assert_true(nvipam_pools_load(path, false, &pools, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	assert_non_null(strstr(err.msg, path));

	/* An invalid pool names the path and the pool. */
	write_file(path, ONE("p", IPPOOL_BASE ",\"gateway\":\"10.9.0.1\""));
	err = (struct cni_err){ 0 };
	assert_int_equal(nvipam_pools_load(path, false, &pools, &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	snprintf(want, sizeof(want), "node pool file %s: pool \"p\": \"gateway\" 10.9.0.1 is outside subnet",
		 path);
	assert_non_null(strstr(err.msg, want));

	write_file(path, ONE("p", IPPOOL_BASE));
	err = (struct cni_err){ 0 };
	assert_int_equal(nvipam_pools_load(path, false, &pools, &err), 0);
	assert_int_equal(err.code, CNI_OK);
	assert_int_equal(pools.n, 1);
	assert_range(&pools.pools[0].range, "10.0.0.1", "10.0.0.24");
	nvipam_pools_free(&pools);

	/* Larger than one read; then larger than any config may be. */
	big = malloc(CNI_JSON_MAX_BYTES + 2);
	assert_non_null(big);
	memset(big, ' ', CNI_JSON_MAX_BYTES + 1);
	big[CNI_JSON_MAX_BYTES + 1] = '\0';
	memcpy(big + 100000, ONE("p", IPPOOL_BASE), strlen(ONE("p", IPPOOL_BASE)));
	big[200000] = '\0';
	write_file(path, big);
	err = (struct cni_err){ 0 };
	assert_int_equal(nvipam_pools_load(path, false, &pools, &err), 0);
	assert_int_equal(pools.n, 1);
	nvipam_pools_free(&pools);
	big[200000] = ' ';
	write_file(path, big);
	free(big);
	assert_true(nvipam_pools_load(path, false, &pools, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	assert_non_null(strstr(err.msg, "larger than"));
	assert_non_null(strstr(err.msg, path));

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_pool_types),
		cmocka_unit_test(test_ippool_details),
		cmocka_unit_test(test_cidrpool_ranges),
		cmocka_unit_test(test_invalid_files),
		cmocka_unit_test(test_exclusions_merged),
		cmocka_unit_test(test_ippool_exclusions_unclipped),
		cmocka_unit_test(test_cidrpool_exclusions_clipped),
		cmocka_unit_test(test_per_node_exclusions),
		cmocka_unit_test(test_only_asked_pools),
		cmocka_unit_test(test_load_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
