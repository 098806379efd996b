/*
 * Unit tests: the overlap finder of pools (k8s/overlap.c): IPPool subnets and CIDRPool cidrs
 * of both families against each other, a node pool file's blocks, and the finder against
 * every pair compared on random ranges.
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

#include "common/util/error.h"
#include "ipam/nv-ipam/k8s/overlap.h"
#include "ipam/nv-ipam/pool/pool.h"

static struct json_object *pool(const char *kind, const char *name, const char *prefix)
{
	char text[512];
	struct json_object *o;

	snprintf(text, sizeof(text), "{\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\"},\"spec\":{\"%s\":\"%s\"}}",
		 kind, name, strcmp(kind, "CIDRPool") == 0 ? "cidr" : "subnet", prefix);
	o = json_tokener_parse(text);
	assert_non_null(o);
	return o;
}

/* The pairs found, as "a+b;" with the pools' names, in the finder's order. */
static void pairs_text(struct json_object **objs, size_t n, size_t max, char *buf, size_t size,
		       bool *truncated)
{
	struct overlap_item *items = NULL;
	struct overlap_result res = { 0 };
	size_t *from = NULL, m = 0, len = 0;

	assert_int_equal(overlap_items_from_pools(objs, n, &items, &from, &m), 0);
	assert_int_equal(overlap_find(items, m, max, &res), 0);
	buf[0] = '\0';
	for (size_t i = 0; i < res.n; i++) {
		assert_true(res.pairs[i].a < res.pairs[i].b);
		len += (size_t)snprintf(buf + len, size - len, "%s+%s;", items[res.pairs[i].a].name,
					items[res.pairs[i].b].name);
	}
	*truncated = res.truncated;
	overlap_result_free(&res);
	free(items);
	free(from);
}

/* The case, nesting, neighbours, both kinds, both families, specs that do not parse. */
static void test_pools(void **state)
{
	struct json_object *objs[] = {
		pool("IPPool", "wide", "192.168.96.0/24"),
		pool("IPPool", "half", "192.168.96.0/25"),
		pool("IPPool", "next", "192.168.97.0/24"),     /* touches "wide", shares nothing */
		pool("CIDRPool", "rail", "192.168.96.128/26"), /* inside "wide", not "half" */
		pool("IPPool", "host-bits", "192.168.97.77/24"), /* the same as "next" */
		pool("CIDRPool", "v6", "fd00::/48"),
		pool("IPPool", "v6-small", "fd00:0:0:1::/64"),
		pool("IPPool", "v4-mapped-not", "::c0a8:6000/120"), /* IPv6: never meets IPv4 */
		pool("IPPool", "broken", "192.168.96.0/33"),
		pool("Node", "node-1", "192.168.96.0/24"),
	};
	size_t n = sizeof(objs) / sizeof(objs[0]);
	char buf[512];
	bool truncated;

	(void)state;
	pairs_text(objs, n, SIZE_MAX, buf, sizeof(buf), &truncated);
	assert_false(truncated);
	assert_string_equal(buf, "wide+half;wide+rail;next+host-bits;v6+v6-small;");
	pairs_text(objs, n, 2, buf, sizeof(buf), &truncated);
	assert_true(truncated);
	for (size_t i = 0; i < n; i++)
		json_object_put(objs[i]);
}

/* The message both the webhook and the Event carry. */
static void test_describe(void **state)
{
	struct json_object *a = pool("IPPool", "half", "192.168.96.0/25");
	struct json_object *b = pool("CIDRPool", "bad\nname", "192.168.96.0/24");
	struct overlap_item x, y;
	char buf[OVERLAP_DESCRIBE_SIZE];

	(void)state;
	assert_int_equal(overlap_item_from_pool(a, &x), 0);
	assert_int_equal(overlap_item_from_pool(b, &y), 0);
	assert_true(overlap_meet(&x, &y));
	overlap_describe(&x, &y, buf, sizeof(buf));
	assert_string_equal(buf, "IPPool \"half\" 192.168.96.0/25 overlaps CIDRPool \"bad\\nname\" "
			    "192.168.96.0/24");
	json_object_put(a);
	json_object_put(b);
}

/* A node pool file's blocks: the range each pool allocates from, not the subnet. */
static void test_node_blocks(void **state)
{
	const char *file = "{\"pools\":{"
		"\"a\":{\"subnet\":\"10.0.0.0/16\",\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.100\"},"
		"\"b\":{\"subnet\":\"10.0.0.0/16\",\"startIP\":\"10.0.0.101\",\"endIP\":\"10.0.0.200\"},"
		"\"c\":{\"subnet\":\"10.0.0.0/24\",\"startIP\":\"10.0.0.50\",\"endIP\":\"10.0.0.60\"},"
		"\"cidrpool/d\":{\"cidr\":\"10.0.0.0/24\",\"prefix\":\"10.0.0.192/28\"}}}";
	struct nvipam_pools pools = { 0 };
	struct overlap_blocks blocks = { 0 };
	struct overlap_result res = { 0 };
	struct cni_err *err = calloc(1, sizeof(*err));
	char buf[256] = "";
	size_t len = 0;

	(void)state;
	assert_int_equal(nvipam_pools_parse(file, strlen(file), "t", &pools, err), 0);
	assert_int_equal(overlap_blocks_from_node_pools(&pools, &blocks), 0);
	assert_int_equal(overlap_find(blocks.items, blocks.n, SIZE_MAX, &res), 0);
	for (size_t i = 0; i < res.n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s %s+%s %s;",
					blocks.items[res.pairs[i].a].name, blocks.items[res.pairs[i].a].text,
					blocks.items[res.pairs[i].b].name, blocks.items[res.pairs[i].b].text);
	assert_string_equal(buf, "a 10.0.0.1-10.0.0.100+c 10.0.0.50-10.0.0.60;"
			    "b 10.0.0.101-10.0.0.200+d 10.0.0.193-10.0.0.206;");
	assert_string_equal(blocks.items[3].kind, "CIDRPool");
	overlap_result_free(&res);
	overlap_blocks_free(&blocks);
	nvipam_pools_free(&pools);
	free(err);
}

/* Random ranges: the finder gives exactly the pairs a comparison of every pair gives. */
static void test_against_every_pair(void **state)
{
	enum { N = 300 };
	struct overlap_item items[N];
	struct overlap_result res = { 0 };
	size_t k = 0, expect = 0;

	(void)state;
	srand(31);
	for (size_t i = 0; i < N; i++) {
		ipmath_u128 lo = (ipmath_u128)(rand() % 20000), len = (ipmath_u128)(rand() % 60);

		items[i] = (struct overlap_item){ .kind = "IPPool", .name = "p", .text = "",
						  .family = i % 7 ? AF_INET : AF_INET6,
						  .lo = lo, .hi = lo + len };
	}
	assert_int_equal(overlap_find(items, N, SIZE_MAX, &res), 0);
	for (size_t a = 0; a < N; a++)
		for (size_t b = a + 1; b < N; b++) {
			if (!overlap_meet(&items[a], &items[b]))
				continue;
			expect++;
			assert_true(k < res.n);
			assert_int_equal(res.pairs[k].a, a);
			assert_int_equal(res.pairs[k].b, b);
			k++;
		}
	assert_true(expect > 50);
	assert_int_equal(res.n, expect);
	overlap_result_free(&res);
	assert_int_equal(overlap_find(items, 0, SIZE_MAX, &res), 0);
	assert_int_equal(res.n, 0);
	overlap_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pools),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_node_blocks),
		cmocka_unit_test(test_against_every_pair),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
