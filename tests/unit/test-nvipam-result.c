/* Unit tests: nv-ipam results against the reference's golden examples, in every version */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/cni/result.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/plugin/result.h"
#include "ipam/nv-ipam/pool/pool.h"

static const char pools_json[] =
	"{\"pools\":{"
	"\"pool1\":{\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.1\",\"endIP\":\"192.168.0.24\","
	"\"gateway\":\"192.168.0.1\"},"
	"\"pool1dg\":{\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.1\",\"endIP\":\"192.168.0.24\","
	"\"gateway\":\"192.168.0.1\",\"defaultGateway\":true,\"routes\":[{\"dst\":\"5.5.0.0/24\"}]},"
	"\"pool6\":{\"subnet\":\"fd52:2eb5:44::/48\",\"startIP\":\"fd52:2eb5:44::1\",\"endIP\":\"fd52:2eb5:44::ff\","
	"\"gateway\":\"fd52:2eb5:44::1\"},"
	"\"cidrpool/p2p\":{\"cidr\":\"192.168.100.0/24\",\"prefix\":\"192.168.100.0/31\"},"
	"\"cidrpool/pool1\":{\"cidr\":\"192.168.0.0/16\",\"prefix\":\"192.168.1.0/24\",\"gateway\":\"192.168.1.1\"}"
	"}}";

static struct nvipam_pools pools;

static int setup(void **state)
{
	struct cni_err err = { 0 };

	(void)state;
	return nvipam_pools_parse(pools_json, strlen(pools_json), "test", &pools, &err);
}

static int teardown(void **state)
{
	(void)state;
	nvipam_pools_free(&pools);
	return 0;
}

struct pick {
	const char *pool;
	const char *ip;
};

/* Builds the result of one ADD from (pool, address) picks and compares it in @version. */
static void expect_result(const struct pick *picks, size_t n, bool gateway_allocated,
			  const char *version, const char *expected)
{
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };
	struct json_object *want, *got;
	char *text = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct nvipam_pool *p = nvipam_pools_find(&pools, picks[i].pool);
		struct ip_addr ip;

		assert_non_null(p);
		assert_int_equal(ip_addr_parse(picks[i].ip, &ip), 0);
		assert_int_equal(nvipam_result_add_pool(p, &ip, gateway_allocated, &res), 0);
	}
	assert_int_equal(cni_result_to_json(&res, version, &text, &err), 0);
	want = json_tokener_parse(expected);
	got = json_tokener_parse(text);
	assert_non_null(want);
	assert_non_null(got);
	if (!json_object_equal(want, got))
		fail_msg("version %s\nwant %s\ngot  %s", version, expected, text);
	json_object_put(want);
	json_object_put(got);
	free(text);
	cni_result_free(&res);
}

static void test_golden_a_ippool(void **state)
{
	static const struct pick a[] = { { "pool1", "192.168.0.2" } };

	(void)state;
	/* Golden A: the first ADD on host-a, as the reference prints it at 0.3.1. */
	expect_result(a, 1, false, "0.3.1",
		      "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"4\",\"address\":\"192.168.0.2/16\","
		      "\"gateway\":\"192.168.0.1\"}],\"dns\":{}}");
	expect_result(a, 1, false, "1.1.0",
		      "{\"cniVersion\":\"1.1.0\",\"ips\":[{\"address\":\"192.168.0.2/16\","
		      "\"gateway\":\"192.168.0.1\"}]}");
	expect_result(a, 1, false, "0.2.0",
		      "{\"cniVersion\":\"0.2.0\",\"ip4\":{\"ip\":\"192.168.0.2/16\","
		      "\"gateway\":\"192.168.0.1\"},\"dns\":{}}");
}

static void test_golden_b_routes(void **state)
{
	static const struct pick b[] = { { "pool1dg", "192.168.0.2" } };
	static const struct pick dual[] = { { "pool1dg", "192.168.0.2" }, { "pool6", "fd52:2eb5:44::2" } };

	(void)state;
	/* Golden B: defaultGateway and a route; the default route comes first. */
	expect_result(b, 1, false, "1.0.0",
		      "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"192.168.0.2/16\",\"gateway\":"
		      "\"192.168.0.1\"}],\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"192.168.0.1\"},"
		      "{\"dst\":\"5.5.0.0/24\",\"gw\":\"192.168.0.1\"}]}");
	expect_result(b, 1, false, "0.4.0",
		      "{\"cniVersion\":\"0.4.0\",\"ips\":[{\"version\":\"4\",\"address\":\"192.168.0.2/16\","
		      "\"gateway\":\"192.168.0.1\"}],\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"192.168.0.1\"},"
		      "{\"dst\":\"5.5.0.0/24\",\"gw\":\"192.168.0.1\"}],\"dns\":{}}");
	/* With "pool1,pool6": ips follow pool order. */
	expect_result(dual, 2, false, "1.0.0",
		      "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"192.168.0.2/16\",\"gateway\":"
		      "\"192.168.0.1\"},{\"address\":\"fd52:2eb5:44::2/48\",\"gateway\":\"fd52:2eb5:44::1\"}],"
		      "\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"192.168.0.1\"},"
		      "{\"dst\":\"5.5.0.0/24\",\"gw\":\"192.168.0.1\"}]}");
}

static void test_golden_c_cidrpool(void **state)
{
	static const struct pick c[] = { { "cidrpool/pool1", "192.168.1.2" } };

	(void)state;
	/* Golden C: the mask is the node prefix's. */
	expect_result(c, 1, false, "1.0.0",
		      "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"192.168.1.2/24\","
		      "\"gateway\":\"192.168.1.1\"}]}");
}

static void test_golden_d_point_to_point(void **state)
{
	static const struct pick d[] = { { "cidrpool/p2p", "192.168.100.0" } };

	(void)state;
	/* Golden D: no gateway, so no gateway and no routes. */
	expect_result(d, 1, false, "0.3.1",
		      "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"4\","
		      "\"address\":\"192.168.100.0/31\"}],\"dns\":{}}");
}

static void test_gateway_allocated(void **state)
{
	static const struct pick g[] = { { "pool1dg", "192.168.0.1" } };

	(void)state;
	/* allocateDefaultGateway: the pod is the gateway, so neither gateway nor routes. */
	expect_result(g, 1, true, "1.0.0",
		      "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"192.168.0.1/16\"}]}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_a_ippool),
		cmocka_unit_test(test_golden_b_routes),
		cmocka_unit_test(test_golden_c_cidrpool),
		cmocka_unit_test(test_golden_d_point_to_point),
		cmocka_unit_test(test_gateway_allocated),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
