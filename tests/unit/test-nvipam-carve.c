/* Unit tests: nv-ipam-tool carve against the reference controller's golden tables */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/carve/carve.h"
#include "ipam/nv-ipam/carve/carve_private.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "tests/unit/compare-count.h"

/*
 * What a carve's scans cost, in blocks tested: carve_block_excluded() counts each call, by
 * the linker (-Wl,--wrap in tests/unit/meson.build), a count that no load moves.
 */
static unsigned long blocks_tested;

bool __real_carve_block_excluded(const struct space *sp, u128 k, u128 *ret_next);
bool __wrap_carve_block_excluded(const struct space *sp, u128 k, u128 *ret_next);

bool __wrap_carve_block_excluded(const struct space *sp, u128 k, u128 *ret_next)
{
	blocks_tested++;
	return __real_carve_block_excluded(sp, k, ret_next);
}

/* The outcome of one carve, as compact JSON plus the nodes left out. */
struct outcome {
	char *allocs;       /* compact status.allocations */
	char unplaced[512]; /* space-separated */
	bool invalid;
	char reason[512];
	size_t kept;
};

static void outcome_free(struct outcome *o)
{
	free(o->allocs);
}

static void carve(const char *pool_json, const char *nodes_json, struct outcome *ret)
{
	struct k8s_objects pools = { 0 }, nodes = { 0 };
	_cleanup_free_ struct carve_node *nv = NULL;
	struct carve_result res = { 0 };
	struct json_object *arr = NULL;
	struct cni_err err = { 0 };
	size_t n = 0;

	memset(ret, 0, sizeof(*ret));
	if (k8s_objects_parse(pool_json, strlen(pool_json), "pool", &pools, &err) < 0 ||
	    k8s_objects_parse(nodes_json, strlen(nodes_json), "nodes", &nodes, &err) < 0 ||
	    carve_nodes_from_objects(&nodes, &nv, &n, &err) < 0)
		fail_msg("input: %s", err.msg);
	assert_int_equal(pools.n_items, 1);
	if (carve_pool(pools.items[0], nv, n, &res, &err) < 0)
		fail_msg("carve: %s", err.msg);
	assert_int_equal(carve_result_json(&res, &arr), 0);
	ret->allocs = strdup(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	for (size_t i = 0; i < res.n_unplaced; i++) {
		size_t l = strlen(ret->unplaced);

		snprintf(ret->unplaced + l, sizeof(ret->unplaced) - l, "%s%s", l ? " " : "",
			 res.unplaced[i]);
	}
	ret->invalid = res.invalid;
	ret->kept = res.n_kept;
	snprintf(ret->reason, sizeof(ret->reason), "%s", res.reason);
	json_object_put(arr);
	carve_result_free(&res);
	k8s_objects_free(&pools);
	k8s_objects_free(&nodes);
}

static void expect(const char *pool_json, const char *nodes_json, const char *want,
		   const char *want_unplaced)
{
	struct outcome o;

	carve(pool_json, nodes_json, &o);
	if (o.invalid)
		fail_msg("spec refused: %s", o.reason);
	if (strcmp(o.allocs, want) != 0)
		fail_msg("allocations\n  got  %s\n  want %s", o.allocs, want);
	assert_string_equal(o.unplaced, want_unplaced);
	outcome_free(&o);
}

#define IPPOOL(spec) "{\"kind\":\"IPPool\",\"metadata\":{\"name\":\"pool1\"},\"spec\":{" spec "}}"
#define IPPOOL_ST(spec, status)                                                                    \
	"{\"kind\":\"IPPool\",\"metadata\":{\"name\":\"pool1\"},\"spec\":{" spec                   \
	"},\"status\":{\"allocations\":" status "}}"
#define CIDRPOOL(spec) "{\"kind\":\"CIDRPool\",\"metadata\":{\"name\":\"pool1\"},\"spec\":{" spec "}}"
#define CIDRPOOL_ST(spec, status)                                                                  \
	"{\"kind\":\"CIDRPool\",\"metadata\":{\"name\":\"pool1\"},\"spec\":{" spec                 \
	"},\"status\":{\"allocations\":" status "}}"
#define BLK(n, s, e) "{\"nodeName\":\"" n "\",\"startIP\":\"" s "\",\"endIP\":\"" e "\"}"
#define PFX(n, p) "{\"nodeName\":\"" n "\",\"prefix\":\"" p "\"}"
#define PFXGW(n, p, g) "{\"nodeName\":\"" n "\",\"prefix\":\"" p "\",\"gateway\":\"" g "\"}"

/* Golden A (README): host-a..k8s-master, blocks of 24, sorted by name whatever the input order. */
static void test_golden_readme(void **state)
{
	(void)state;
	expect(IPPOOL("\"subnet\":\"192.168.0.0/16\",\"perNodeBlockSize\":24,\"gateway\":\"192.168.0.1\""),
	       "{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"k8s-master\"}},"
	       "{\"kind\":\"Node\",\"metadata\":{\"name\":\"host-c\"}},{\"kind\":\"Node\",\"metadata\":"
	       "{\"name\":\"host-a\"}},{\"kind\":\"Node\",\"metadata\":{\"name\":\"host-b\"}}]}",
	       "[" BLK("host-a", "192.168.0.1", "192.168.0.24") "," BLK("host-b", "192.168.0.25", "192.168.0.48")
	       "," BLK("host-c", "192.168.0.49", "192.168.0.72") ","
	       BLK("k8s-master", "192.168.0.73", "192.168.0.96") "]", "");
}

#define NODES12 "[{\"name\":\"node-1\"},{\"name\":\"node-2\"}]"

static void expect_invalid(const char *pool_json, const char *part);
#define E_POOL "\"subnet\":\"10.10.0.0/16\",\"perNodeBlockSize\":256,\"gateway\":\"10.10.0.1\""

/* Golden E: the controller's exclusion table. */
static void test_golden_exclusions(void **state)
{
	(void)state;
	expect(IPPOOL(E_POOL), NODES12,
	       "[" BLK("node-1", "10.10.0.1", "10.10.1.0") "," BLK("node-2", "10.10.1.1", "10.10.2.0") "]", "");
	expect(IPPOOL(E_POOL ",\"exclusions\":[{\"startIP\":\"10.10.0.0\",\"endIP\":\"10.10.0.255\"},"
			     "{\"startIP\":\"10.10.1.0\",\"endIP\":\"10.10.1.100\"}]"), NODES12,
	       "[" BLK("node-1", "10.10.1.1", "10.10.2.0") "," BLK("node-2", "10.10.2.1", "10.10.3.0") "]", "");
	expect(IPPOOL(E_POOL ",\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":127}]"), NODES12,
	       "[" BLK("node-1", "10.10.0.1", "10.10.1.0") "," BLK("node-2", "10.10.1.1", "10.10.2.0") "]", "");
	/* Pool and per-node exclusions together cover node-1's first block: it is skipped. */
	expect(IPPOOL(E_POOL ",\"exclusions\":[{\"startIP\":\"10.10.0.129\",\"endIP\":\"10.10.1.0\"}],"
			     "\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":127}]"), NODES12,
	       "[" BLK("node-1", "10.10.1.1", "10.10.2.0") "," BLK("node-2", "10.10.2.1", "10.10.3.0") "]", "");
}

#define NODES4 "[{\"name\":\"n1\"},{\"name\":\"n2\"},{\"name\":\"n3\"},{\"name\":\"n4\"}]"

/* Golden E, small pools: /32, block 1 around the gateway, block 15. */
static void test_golden_small_pools(void **state)
{
	(void)state;
	expect(IPPOOL("\"subnet\":\"10.10.10.10/32\",\"perNodeBlockSize\":1"), NODES12,
	       "[" BLK("node-1", "10.10.10.10", "10.10.10.10") "]", "node-2");
	expect(IPPOOL("\"subnet\":\"172.16.0.0/16\",\"perNodeBlockSize\":1,\"gateway\":\"172.16.0.3\""), NODES4,
	       "[" BLK("n1", "172.16.0.1", "172.16.0.1") "," BLK("n2", "172.16.0.2", "172.16.0.2") ","
	       BLK("n3", "172.16.0.4", "172.16.0.4") "," BLK("n4", "172.16.0.5", "172.16.0.5") "]", "");
	expect(IPPOOL("\"subnet\":\"192.168.0.0/24\",\"perNodeBlockSize\":15"), NODES4,
	       "[" BLK("n1", "192.168.0.1", "192.168.0.15") "," BLK("n2", "192.168.0.16", "192.168.0.30") ","
	       BLK("n3", "192.168.0.31", "192.168.0.45") "," BLK("n4", "192.168.0.46", "192.168.0.60") "]", "");
	/* A /31 starts at the network address; the /29's last block may not end on broadcast. */
	expect(IPPOOL("\"subnet\":\"10.9.0.0/31\",\"perNodeBlockSize\":2"), NODES12,
	       "[" BLK("node-1", "10.9.0.0", "10.9.0.1") "]", "node-2");
	expect(IPPOOL("\"subnet\":\"10.9.0.0/29\",\"perNodeBlockSize\":3"), "[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]",
	       "[" BLK("a", "10.9.0.1", "10.9.0.3") "," BLK("b", "10.9.0.4", "10.9.0.6") "]", "c");
	/* IPv6 starts at network+1 and may use the all-ones address. */
	expect(IPPOOL("\"subnet\":\"fd52:2eb5:44::/126\",\"perNodeBlockSize\":3"), NODES12,
	       "[" BLK("node-1", "fd52:2eb5:44::1", "fd52:2eb5:44::3") "]", "node-2");
}

/*
 * /127 and /128, like /31 and /32, are point-to-point and single-address subnets: every
 * address is usable, from the network address on (the controller's canUseNetworkAddress()
 * tests the prefix length against the address width, whatever the family).
 */
static void test_ipv6_smallest_subnets(void **state)
{
	struct outcome o;

	(void)state;
	expect(IPPOOL("\"subnet\":\"fd00::/127\",\"perNodeBlockSize\":1"), NODES12,
	       "[" BLK("node-1", "fd00::", "fd00::") "," BLK("node-2", "fd00::1", "fd00::1") "]", "");
	expect(IPPOOL("\"subnet\":\"fd00::/127\",\"perNodeBlockSize\":2"), NODES12,
	       "[" BLK("node-1", "fd00::", "fd00::1") "]", "node-2");
	expect(IPPOOL("\"subnet\":\"fd00::/128\",\"perNodeBlockSize\":1"), NODES12,
	       "[" BLK("node-1", "fd00::", "fd00::") "]", "node-2");
	expect(IPPOOL("\"subnet\":\"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128\",\"perNodeBlockSize\":1"),
	       NODES12, "[" BLK("node-1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
				"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff") "]", "node-2");
	expect_invalid(IPPOOL("\"subnet\":\"fd00::/127\",\"perNodeBlockSize\":3"), "perNodeBlockSize");
	expect_invalid(IPPOOL("\"subnet\":\"fd00::/128\",\"perNodeBlockSize\":2"), "perNodeBlockSize");
	/* A one-address block on the gateway is skipped, the network address included. */
	expect(IPPOOL("\"subnet\":\"fd00::/127\",\"perNodeBlockSize\":1,\"gateway\":\"fd00::\""), NODES12,
	       "[" BLK("node-1", "fd00::1", "fd00::1") "]", "node-2");
	/* A status entry on the network address of a /127 is a valid block: it is kept. */
	carve(IPPOOL_ST("\"subnet\":\"fd00::/127\",\"perNodeBlockSize\":1", "[" BLK("node-2", "fd00::", "fd00::") "]"),
	      NODES12, &o);
	assert_string_equal(o.allocs, "[" BLK("node-1", "fd00::1", "fd00::1") "," BLK("node-2", "fd00::", "fd00::") "]");
	assert_int_equal(o.kept, 1);
	outcome_free(&o);
	/* IPv4 /31 and /32 the same way. */
	expect(IPPOOL("\"subnet\":\"10.9.0.0/31\",\"perNodeBlockSize\":1"), NODES12,
	       "[" BLK("node-1", "10.9.0.0", "10.9.0.0") "," BLK("node-2", "10.9.0.1", "10.9.0.1") "]", "");
}

/* Golden C and D: CIDRPool prefixes with gatewayIndex, and point-to-point /31. */
static void test_golden_cidrpool(void **state)
{
	(void)state;
	expect(CIDRPOOL("\"cidr\":\"192.168.0.0/16\",\"gatewayIndex\":1,\"perNodeNetworkPrefix\":24"),
	       "[{\"name\":\"host-b\"},{\"name\":\"host-a\"}]",
	       "[" PFXGW("host-a", "192.168.0.0/24", "192.168.0.1") ","
	       PFXGW("host-b", "192.168.1.0/24", "192.168.1.1") "]", "");
	expect(CIDRPOOL("\"cidr\":\"192.168.100.0/24\",\"perNodeNetworkPrefix\":31"), NODES12,
	       "[" PFX("node-1", "192.168.100.0/31") "," PFX("node-2", "192.168.100.2/31") "]", "");
	/* /32 per node, gateway index 0 allowed there; the cidr runs out after two. */
	expect(CIDRPOOL("\"cidr\":\"10.0.0.0/31\",\"perNodeNetworkPrefix\":32,\"gatewayIndex\":0"),
	       "[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]",
	       "[" PFXGW("a", "10.0.0.0/32", "10.0.0.0") "," PFXGW("b", "10.0.0.1/32", "10.0.0.1") "]", "c");
	/* A fully excluded prefix (network address to .254) is skipped. */
	expect(CIDRPOOL("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"exclusions\":"
			"[{\"startIP\":\"10.0.0.0\",\"endIP\":\"10.0.0.254\"}]"), NODES12,
	       "[" PFX("node-1", "10.0.1.0/24") "," PFX("node-2", "10.0.2.0/24") "]", "");
	expect(CIDRPOOL("\"cidr\":\"fd00::/48\",\"perNodeNetworkPrefix\":64,\"gatewayIndex\":1"), NODES12,
	       "[" PFXGW("node-1", "fd00::/64", "fd00::1") "," PFXGW("node-2", "fd00:0:0:1::/64", "fd00:0:0:1::1") "]", "");
}

/*
 * A pool is an API object, its keys read exactly (docs/layout.md, "JSON keys"): a key in
 * another case is another member, unread, and never shadows the real one, which Go's rule
 * (the last member matching without case wins) would let it do.
 */
static void test_api_keys_exact(void **state)
{
	(void)state;
	/* "GatewayIndex" is not gatewayIndex: prefixes without a gateway. */
	expect(CIDRPOOL("\"cidr\":\"192.168.0.0/16\",\"GatewayIndex\":1,\"perNodeNetworkPrefix\":24"),
	       NODES12, "[" PFX("node-1", "192.168.0.0/24") "," PFX("node-2", "192.168.1.0/24") "]", "");
	/* After the real key: Go's rule would read /25. */
	expect(CIDRPOOL("\"cidr\":\"192.168.0.0/16\",\"perNodeNetworkPrefix\":24,"
			"\"PerNodeNetworkPrefix\":25"),
	       NODES12, "[" PFX("node-1", "192.168.0.0/24") "," PFX("node-2", "192.168.1.0/24") "]", "");
	/* Only in another case: the spec has none. */
	expect_invalid(CIDRPOOL("\"cidr\":\"192.168.0.0/16\",\"PerNodeNetworkPrefix\":24"),
		       "perNodeNetworkPrefix");
	expect_invalid(IPPOOL("\"subnet\":\"10.0.0.0/24\",\"PerNodeBlockSize\":4"), "perNodeBlockSize");
	/* A status entry's "NodeName" names no node: node-2 does not keep 192.168.0.0/24. */
	expect(CIDRPOOL_ST("\"cidr\":\"192.168.0.0/16\",\"perNodeNetworkPrefix\":24",
			   "[{\"NodeName\":\"node-2\",\"prefix\":\"192.168.0.0/24\"}]"),
	       NODES12, "[" PFX("node-1", "192.168.0.0/24") "," PFX("node-2", "192.168.1.0/24") "]", "");
	/* The same entry keyed exactly is kept: what the case above tells apart. */
	expect(CIDRPOOL_ST("\"cidr\":\"192.168.0.0/16\",\"perNodeNetworkPrefix\":24",
			   "[{\"nodeName\":\"node-2\",\"prefix\":\"192.168.0.0/24\"}]"),
	       NODES12, "[" PFX("node-1", "192.168.1.0/24") "," PFX("node-2", "192.168.0.0/24") "]", "");
}

/*
 * A CIDRPool prefix is fully excluded only when its network address is excluded too, as the
 * reference controller tests it (from the network address to the last usable one), though
 * no node hands that address out: every usable address excluded is not enough.
 */
static void test_cidrpool_excluded_needs_network_address(void **state)
{
	struct outcome o;

	(void)state;
	/* .1-.254 excluded, .0 not: the prefix is given (the pods then find it exhausted). */
	expect(CIDRPOOL("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"exclusions\":"
			"[{\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.254\"}]"), NODES12,
	       "[" PFX("node-1", "10.0.0.0/24") "," PFX("node-2", "10.0.1.0/24") "]", "");
	/* The same through perNodeExclusions: 1-254 leaves every prefix; 0-254 excludes all. */
	expect(CIDRPOOL("\"cidr\":\"10.0.0.0/23\",\"perNodeNetworkPrefix\":24,\"perNodeExclusions\":"
			"[{\"startIndex\":1,\"endIndex\":254}]"), NODES12,
	       "[" PFX("node-1", "10.0.0.0/24") "," PFX("node-2", "10.0.1.0/24") "]", "");
	expect(CIDRPOOL("\"cidr\":\"10.0.0.0/23\",\"perNodeNetworkPrefix\":24,\"perNodeExclusions\":"
			"[{\"startIndex\":0,\"endIndex\":254}]"), NODES12, "[]", "node-1 node-2");
	/* A pool exclusion of .0 and per-node 1-254 together cover the first prefix only. */
	expect(CIDRPOOL("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"exclusions\":"
			"[{\"startIP\":\"10.0.0.0\",\"endIP\":\"10.0.0.0\"}],\"perNodeExclusions\":"
			"[{\"startIndex\":1,\"endIndex\":254}]"), NODES12,
	       "[" PFX("node-1", "10.0.1.0/24") "," PFX("node-2", "10.0.2.0/24") "]", "");
	/* IPv6: the all-ones address is usable, the network address must be excluded too. */
	expect(CIDRPOOL("\"cidr\":\"fd00::/120\",\"perNodeNetworkPrefix\":124,\"exclusions\":"
			"[{\"startIP\":\"fd00::1\",\"endIP\":\"fd00::f\"}]"), NODES12,
	       "[" PFX("node-1", "fd00::/124") "," PFX("node-2", "fd00::10/124") "]", "");
	expect(CIDRPOOL("\"cidr\":\"fd00::/120\",\"perNodeNetworkPrefix\":124,\"exclusions\":"
			"[{\"startIP\":\"fd00::\",\"endIP\":\"fd00::f\"}]"), NODES12,
	       "[" PFX("node-1", "fd00::10/124") "," PFX("node-2", "fd00::20/124") "]", "");
	/* A node's status entry on such a prefix stays put. */
	carve(CIDRPOOL_ST("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"exclusions\":"
			  "[{\"startIP\":\"10.0.2.1\",\"endIP\":\"10.0.2.254\"}]",
			  "[" PFX("node-1", "10.0.2.0/24") "]"), NODES12, &o);
	assert_false(o.invalid);
	assert_string_equal(o.allocs, "[" PFX("node-1", "10.0.2.0/24") "," PFX("node-2", "10.0.0.0/24") "]");
	assert_int_equal(o.kept, 1);
	outcome_free(&o);
	/* gatewayIndex 0 is still refused outside /31 and /32: the network address is no gateway. */
	expect_invalid(CIDRPOOL("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":0"),
		       "gatewayIndex");
	expect_invalid(CIDRPOOL("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":255"),
		       "gatewayIndex");
}

/* CIDRPool staticAllocations: a node's own prefix and gateway, and a prefix only reserved. */
static void test_static_allocations(void **state)
{
	(void)state;
	expect(CIDRPOOL("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":1,"
			"\"staticAllocations\":[{\"nodeName\":\"node-b\",\"prefix\":\"10.0.5.0/24\","
			"\"gateway\":\"10.0.5.254\"},{\"prefix\":\"10.0.0.0/24\"},"
			"{\"nodeName\":\"node-c\",\"prefix\":\"10.0.1.0/24\"}]"),
	       "[{\"name\":\"node-a\"},{\"name\":\"node-b\"},{\"name\":\"node-c\"},{\"name\":\"node-d\"}]",
	       "[" PFXGW("node-a", "10.0.2.0/24", "10.0.2.1") "," PFXGW("node-b", "10.0.5.0/24", "10.0.5.254") ","
	       PFXGW("node-c", "10.0.1.0/24", "10.0.1.1") "," PFXGW("node-d", "10.0.3.0/24", "10.0.3.1") "]", "");
}

/* Valid existing allocations are kept; invalid ones are re-carved; departed nodes' blocks reused. */
static void test_keep_and_reuse(void **state)
{
	struct outcome o;

	(void)state;
	/* node-2 left: node-4 takes its block, node-1 and node-3 keep theirs. */
	carve(IPPOOL_ST(E_POOL, "[" BLK("node-1", "10.10.0.1", "10.10.1.0") "," BLK("node-2", "10.10.1.1", "10.10.2.0")
			"," BLK("node-3", "10.10.2.1", "10.10.3.0") "]"),
	      "[{\"name\":\"node-1\"},{\"name\":\"node-3\"},{\"name\":\"node-4\"}]", &o);
	assert_string_equal(o.allocs, "[" BLK("node-1", "10.10.0.1", "10.10.1.0") ","
			    BLK("node-3", "10.10.2.1", "10.10.3.0") "," BLK("node-4", "10.10.1.1", "10.10.2.0") "]");
	assert_int_equal(o.kept, 2);
	outcome_free(&o);
	/* Kept out of order; a misaligned, a wrong-size and a duplicate block are re-carved. */
	expect(IPPOOL_ST(E_POOL, "[" BLK("b", "10.10.3.1", "10.10.4.0") "," BLK("c", "10.10.0.2", "10.10.1.1") ","
			 BLK("d", "10.10.1.1", "10.10.1.10") "," BLK("e", "10.10.3.1", "10.10.4.0") "]"),
	       "[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"},{\"name\":\"d\"},{\"name\":\"e\"}]",
	       "[" BLK("a", "10.10.0.1", "10.10.1.0") "," BLK("b", "10.10.3.1", "10.10.4.0") ","
	       BLK("c", "10.10.1.1", "10.10.2.0") "," BLK("d", "10.10.2.1", "10.10.3.0") ","
	       BLK("e", "10.10.4.1", "10.10.5.0") "]", "");
	/*
	 * CIDRPool: node-3's entry has the wrong gateway, so it is carved anew and, first in
	 * name order, takes the prefix node-2 left; node-9 gets the next one.
	 */
	expect(CIDRPOOL_ST("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":1",
			   "[" PFXGW("node-1", "10.0.0.0/24", "10.0.0.1") "," PFXGW("node-2", "10.0.1.0/24", "10.0.1.1")
			   "," PFXGW("node-3", "10.0.2.0/24", "10.0.2.9") "]"),
	       "[{\"name\":\"node-1\"},{\"name\":\"node-3\"},{\"name\":\"node-9\"}]",
	       "[" PFXGW("node-1", "10.0.0.0/24", "10.0.0.1") "," PFXGW("node-3", "10.0.1.0/24", "10.0.1.1") ","
	       PFXGW("node-9", "10.0.2.0/24", "10.0.2.1") "]", "");
}

/*
 * CIDRPool prefixes of nodes that left are reused by newcomers: the first free prefix in
 * cidr order goes to the first newcomer in name order, the kept prefixes stay put.
 */
static void test_cidrpool_reuse_after_leave(void **state)
{
	struct outcome o;

	(void)state;
	carve(CIDRPOOL_ST("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":1",
			  "[" PFXGW("node-1", "10.0.0.0/24", "10.0.0.1") "," PFXGW("node-2", "10.0.1.0/24", "10.0.1.1")
			  "," PFXGW("node-3", "10.0.2.0/24", "10.0.2.1") "," PFXGW("node-4", "10.0.3.0/24", "10.0.3.1") "]"),
	      "[{\"name\":\"node-1\"},{\"name\":\"node-3\"},{\"name\":\"alpha\"},{\"name\":\"zulu\"}]", &o);
	assert_string_equal(o.allocs, "[" PFXGW("alpha", "10.0.1.0/24", "10.0.1.1") ","
			    PFXGW("node-1", "10.0.0.0/24", "10.0.0.1") "," PFXGW("node-3", "10.0.2.0/24", "10.0.2.1")
			    "," PFXGW("zulu", "10.0.3.0/24", "10.0.3.1") "]");
	assert_int_equal(o.kept, 2);
	assert_string_equal(o.unplaced, "");
	outcome_free(&o);
	/*
	 * The departed node's entry shares its prefix with a live node's: it is discarded
	 * before the conflict check, so the live node keeps the prefix and the newcomer
	 * gets the next free one.
	 */
	expect(CIDRPOOL_ST("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24",
			   "[" PFX("node-1", "10.0.0.0/24") "," PFX("node-2", "10.0.1.0/24") ","
			   PFX("node-3", "10.0.1.0/24") "]"),
	       "[{\"name\":\"node-1\"},{\"name\":\"node-3\"},{\"name\":\"node-9\"}]",
	       "[" PFX("node-1", "10.0.0.0/24") "," PFX("node-3", "10.0.1.0/24") ","
	       PFX("node-9", "10.0.2.0/24") "]", "");
}

#define P24_4 "\"subnet\":\"192.168.0.0/24\",\"perNodeBlockSize\":4"

/*
 * An IPPool node listed twice, as the controller loads the status in order: the node's
 * last loaded entry is its block; an earlier one's block is not given to anyone in this
 * run; an entry on a block already loaded, or an invalid one, replaces nothing.
 */
static void test_ippool_node_listed_twice(void **state)
{
	(void)state;
	expect(IPPOOL_ST(P24_4,
			 "[" BLK("a", "192.168.0.1", "192.168.0.4") "," BLK("a", "192.168.0.5", "192.168.0.8") "]"),
	       "[{\"name\":\"a\"},{\"name\":\"b\"}]",
	       "[" BLK("a", "192.168.0.5", "192.168.0.8") "," BLK("b", "192.168.0.9", "192.168.0.12") "]", "");
	expect(IPPOOL_ST(P24_4,
			 "[" BLK("a", "192.168.0.5", "192.168.0.8") "," BLK("a", "192.168.0.1", "192.168.0.4") "]"),
	       "[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]",
	       "[" BLK("a", "192.168.0.1", "192.168.0.4") "," BLK("b", "192.168.0.9", "192.168.0.12") ","
	       BLK("c", "192.168.0.13", "192.168.0.16") "]", "");
	/* b's entry on a's block is not loaded; a's later entry supersedes its first. */
	expect(IPPOOL_ST(P24_4,
			 "[" BLK("a", "192.168.0.1", "192.168.0.4") "," BLK("b", "192.168.0.1", "192.168.0.4") ","
			 BLK("a", "192.168.0.5", "192.168.0.8") "]"),
	       "[{\"name\":\"a\"},{\"name\":\"b\"}]",
	       "[" BLK("a", "192.168.0.5", "192.168.0.8") "," BLK("b", "192.168.0.9", "192.168.0.12") "]", "");
	/* A misaligned or a fully excluded later entry leaves the first in place. */
	expect(IPPOOL_ST(P24_4 ",\"exclusions\":"
			 "[{\"startIP\":\"192.168.0.9\",\"endIP\":\"192.168.0.12\"}]",
			 "[" BLK("a", "192.168.0.1", "192.168.0.4") "," BLK("a", "192.168.0.6", "192.168.0.9") ","
			 BLK("a", "192.168.0.9", "192.168.0.12") "]"),
	       "[{\"name\":\"a\"},{\"name\":\"b\"}]",
	       "[" BLK("a", "192.168.0.1", "192.168.0.4") "," BLK("b", "192.168.0.5", "192.168.0.8") "]", "");
}

/* nodeSelector: terms ORed, expressions ANDed, matchFields on the name. */
static void test_node_selector(void **state)
{
	(void)state;
	expect(IPPOOL(E_POOL ",\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchExpressions\":["
			     "{\"key\":\"gpu\",\"operator\":\"In\",\"values\":[\"a100\",\"h100\"]},"
			     "{\"key\":\"drain\",\"operator\":\"DoesNotExist\"}]},"
			     "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"w9\"]}]}]}"),
	       "{\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"w1\",\"labels\":{\"gpu\":\"a100\"}}},"
	       "{\"kind\":\"Node\",\"metadata\":{\"name\":\"w2\",\"labels\":{\"gpu\":\"t4\"}}},"
	       "{\"kind\":\"Node\",\"metadata\":{\"name\":\"w3\",\"labels\":{\"gpu\":\"h100\",\"drain\":\"\"}}},"
	       "{\"kind\":\"Node\",\"metadata\":{\"name\":\"w4\",\"labels\":{\"gpu\":\"h100\"}}},"
	       "{\"kind\":\"Node\",\"metadata\":{\"name\":\"w9\"}}]}",
	       "[" BLK("w1", "10.10.0.1", "10.10.1.0") "," BLK("w4", "10.10.1.1", "10.10.2.0") ","
	       BLK("w9", "10.10.2.1", "10.10.3.0") "]", "");
}

/* Gt, Lt, NotIn and Exists; a term without requirements matches nothing. */
static void test_node_selector_operators(void **state)
{
	const char *nodes = "[{\"name\":\"a\",\"labels\":{\"rack\":\"3\",\"zone\":\"x\"}},"
			    "{\"name\":\"b\",\"labels\":{\"rack\":\"12\",\"zone\":\"y\"}},"
			    "{\"name\":\"c\",\"labels\":{\"rack\":\"7\"}},{\"name\":\"d\"}]";

	(void)state;
	expect(IPPOOL(E_POOL ",\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchExpressions\":["
			     "{\"key\":\"rack\",\"operator\":\"Gt\",\"values\":[\"5\"]},"
			     "{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"y\"]}]}]}"), nodes,
	       "[" BLK("c", "10.10.0.1", "10.10.1.0") "]", "");
	expect(IPPOOL(E_POOL ",\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchExpressions\":["
			     "{\"key\":\"rack\",\"operator\":\"Lt\",\"values\":[\"10\"]},"
			     "{\"key\":\"zone\",\"operator\":\"Exists\"}]},{}]}"), nodes,
	       "[" BLK("a", "10.10.0.1", "10.10.1.0") "]", "");
}

/* Status entries that cannot stay: on the gateway (block of one), conflicting CIDRPool entries. */
static void test_invalid_status_entries(void **state)
{
	(void)state;
	expect(IPPOOL_ST("\"subnet\":\"172.16.0.0/16\",\"perNodeBlockSize\":1,\"gateway\":\"172.16.0.3\"",
			 "[" BLK("n1", "172.16.0.3", "172.16.0.3") "]"),
	       "[{\"name\":\"n1\"}]", "[" BLK("n1", "172.16.0.1", "172.16.0.1") "]", "");
	/* Two entries with one prefix: both dropped, both nodes carved anew. */
	expect(CIDRPOOL_ST("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24",
			   "[" PFX("a", "10.0.7.0/24") "," PFX("b", "10.0.7.0/24") "," PFX("c", "10.0.9.0/24") "]"),
	       "[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]",
	       "[" PFX("a", "10.0.0.0/24") "," PFX("b", "10.0.1.0/24") "," PFX("c", "10.0.9.0/24") "]", "");
	/* A stale entry (node gone) or one of a node the selector no longer picks, on a live
	 * node's prefix, takes no part in the conflict check: the live node keeps its prefix. */
	expect(CIDRPOOL_ST("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24",
			   "[" PFX("gone", "10.0.7.0/24") "," PFX("a", "10.0.7.0/24") "," PFX("b", "10.0.3.0/24") "]"),
	       "[{\"name\":\"a\"},{\"name\":\"b\"}]",
	       "[" PFX("a", "10.0.7.0/24") "," PFX("b", "10.0.3.0/24") "]", "");
	expect(CIDRPOOL_ST("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":1,"
			   "\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchExpressions\":"
			   "[{\"key\":\"pool\",\"operator\":\"Exists\"}]}]}",
			   "[" PFXGW("a", "10.0.7.0/24", "10.0.7.1") "," PFXGW("x", "10.0.7.0/24", "10.0.7.1") "]"),
	       "[{\"name\":\"a\",\"labels\":{\"pool\":\"\"}},{\"name\":\"x\"}]",
	       "[" PFXGW("a", "10.0.7.0/24", "10.0.7.1") "]", "");
	/* A prefix statically reserved for another node is taken back. */
	expect(CIDRPOOL_ST("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"staticAllocations\":"
			   "[{\"nodeName\":\"b\",\"prefix\":\"10.0.4.0/24\"}]", "[" PFX("a", "10.0.4.0/24") "]"),
	       "[{\"name\":\"a\"},{\"name\":\"b\"}]",
	       "[" PFX("a", "10.0.0.0/24") "," PFX("b", "10.0.4.0/24") "]", "");
}

static void expect_invalid(const char *pool_json, const char *part)
{
	struct outcome o;

	carve(pool_json, NODES12, &o);
	if (!o.invalid)
		fail_msg("accepted, expected \"%s\": %s", part, pool_json);
	assert_string_equal(o.allocs, "[]");
	if (!strstr(o.reason, part))
		fail_msg("reason \"%s\" lacks \"%s\"", o.reason, part);
	outcome_free(&o);
}

/* An invalid spec empties the status (InvalidSpec). */
static void test_invalid_spec(void **state)
{
	(void)state;
	expect_invalid(IPPOOL("\"subnet\":\"10.0.0.0/30\",\"perNodeBlockSize\":3"), "perNodeBlockSize");
	expect_invalid(IPPOOL("\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":0"), "perNodeBlockSize");
	expect_invalid(IPPOOL("\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"gateway\":\"10.1.0.1\""), "gateway");
	expect_invalid(IPPOOL("\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"perNodeExclusions\":"
			      "[{\"startIndex\":0,\"endIndex\":4}]"), "endIndex");
	expect_invalid(IPPOOL("\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"defaultGateway\":true"),
		       "defaultGateway");
	expect_invalid(CIDRPOOL("\"cidr\":\"10.0.0.1/16\",\"perNodeNetworkPrefix\":24"), "host bits");
	expect_invalid(CIDRPOOL("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":8"), "perNodeNetworkPrefix");
	expect_invalid(CIDRPOOL("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":0"),
		       "gatewayIndex");
	expect_invalid(CIDRPOOL("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"staticAllocations\":"
				"[{\"nodeName\":\"a\",\"prefix\":\"10.0.1.0/25\"}]"), "perNodeNetworkPrefix");
	expect_invalid(CIDRPOOL("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"staticAllocations\":"
				"[{\"nodeName\":\"a\",\"prefix\":\"10.0.1.0/24\"},{\"nodeName\":\"a\",\"prefix\":\"10.0.2.0/24\"}]"),
		       "multiple entries for node a");
	expect_invalid(IPPOOL(E_POOL ",\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchExpressions\":"
			     "[{\"key\":\"x\",\"operator\":\"Near\"}]}]}"), "invalid operator");
	expect_invalid("{\"kind\":\"IPPool\",\"metadata\":{\"name\":\"bad name\"},\"spec\":{" E_POOL "}}",
		       "CNI network name");
}

/* Bad input is refused with a message naming it. */
static void test_bad_input(void **state)
{
	struct k8s_objects o = { 0 };
	struct carve_node *nv = NULL;
	struct cni_err err = { 0 };
	size_t n = 0;

	(void)state;
	assert_true(k8s_objects_parse("{\"items\":[1]}", 13, "x.json", &o, &err) < 0);
	assert_non_null(strstr(err.msg, "x.json: item 0"));
	err = (struct cni_err){ 0 };
	assert_true(k8s_objects_parse("{\"a\":", 5, "x.json", &o, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	err = (struct cni_err){ 0 };
	assert_int_equal(k8s_objects_parse("[{\"name\":\"a\"}] [{\"name\":\"a\"}]", 29, "n", &o, &err), 0);
	assert_int_equal(o.n_items, 2);
	assert_true(carve_nodes_from_objects(&o, &nv, &n, &err) < 0);
	assert_non_null(strstr(err.msg, "listed twice"));
	k8s_objects_free(&o);
}

/*
 * Carve @pool_json for NODES12 testing at most a few blocks a node. The alarm is a hang
 * guard only: a scan of 2^64 blocks one by one never ends, a carve takes milliseconds.
 */
static void expect_fast(const char *pool_json, const char *want, const char *want_unplaced)
{
	blocks_tested = 0;
	alarm(20);
	expect(pool_json, NODES12, want, want_unplaced);
	alarm(0);
	if (blocks_tested > 8)
		fail_msg("carve tested %lu blocks: %s", blocks_tested, pool_json);
}

/*
 * perNodeExclusions covering a block's whole range exclude every block: each node is left
 * out at once instead of after testing 2^64 or 2^80 blocks one by one.
 */
static void test_per_node_exclusions_cover_block(void **state)
{
	(void)state;
	expect_fast(IPPOOL("\"subnet\":\"fd00::/64\",\"perNodeBlockSize\":1,"
			   "\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":0}]"), "[]", "node-1 node-2");
	expect_fast(IPPOOL("\"subnet\":\"fd00::/64\",\"perNodeBlockSize\":4,\"perNodeExclusions\":"
			   "[{\"startIndex\":2,\"endIndex\":3},{\"startIndex\":0,\"endIndex\":1}]"), "[]", "node-1 node-2");
	expect_fast(CIDRPOOL("\"cidr\":\"fd00::/48\",\"perNodeNetworkPrefix\":128,"
			     "\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":0}]"), "[]", "node-1 node-2");
	/* A /120 per node covered from its network address ::0 to ::ff; without ::0 it is not. */
	expect_fast(CIDRPOOL("\"cidr\":\"fd00::/32\",\"perNodeNetworkPrefix\":120,"
			     "\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":255}]"), "[]", "node-1 node-2");
	expect_fast(CIDRPOOL("\"cidr\":\"fd00::/32\",\"perNodeNetworkPrefix\":120,"
			     "\"perNodeExclusions\":[{\"startIndex\":1,\"endIndex\":255}]"),
		    "[" PFX("node-1", "fd00::/120") "," PFX("node-2", "fd00::100/120") "]", "");
	expect_fast(IPPOOL_ST("\"subnet\":\"fd00::/64\",\"perNodeBlockSize\":1,"
			      "\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":0}]",
			      "[" BLK("node-1", "fd00::1", "fd00::1") "]"), "[]", "node-1 node-2");
	/* A static allocation is still given, as it is whatever the exclusions. */
	expect_fast(CIDRPOOL("\"cidr\":\"fd00::/48\",\"perNodeNetworkPrefix\":128,"
			     "\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":0}],"
			     "\"staticAllocations\":[{\"nodeName\":\"node-2\",\"prefix\":\"fd00::5/128\"}]"),
		    "[" PFX("node-2", "fd00::5/128") "]", "node-1");
	/* Not covering: the first block is free at once. */
	expect_fast(CIDRPOOL("\"cidr\":\"fd00::/48\",\"perNodeNetworkPrefix\":127,"
			     "\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":0}]"),
		    "[" PFX("node-1", "fd00::/127") "," PFX("node-2", "fd00::2/127") "]", "");
	/*
	 * Per-node and pool exclusions together over almost the whole /64: one step past the
	 * pool exclusion, not 2^63.
	 */
	expect_fast(IPPOOL("\"subnet\":\"fd00::/64\",\"perNodeBlockSize\":2,"
			   "\"perNodeExclusions\":[{\"startIndex\":1,\"endIndex\":1}],\"exclusions\":"
			   "[{\"startIP\":\"fd00::1\",\"endIP\":\"fd00::ffff:ffff:ffff:fff0\"}]"),
		    "[" BLK("node-1", "fd00::ffff:ffff:ffff:fff1", "fd00::ffff:ffff:ffff:fff2") ","
		    BLK("node-2", "fd00::ffff:ffff:ffff:fff3", "fd00::ffff:ffff:ffff:fff4") "]", "");
}

static int node_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct carve_node *)a)->name, ((const struct carve_node *)b)->name);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/*
 * 5000 nodes: every block where first-fit puts it, then a re-carve that keeps them all.
 * Each carve tests each block once (a kept one when its entry is loaded), not the row
 * from its start for each node.
 */
static void test_5000_nodes(void **state)
{
	enum { N = 5000 };
	struct k8s_objects pools = { 0 }, nodes = { 0 }, again = { 0 };
	_cleanup_free_ struct carve_node *nv = NULL;
	_cleanup_free_ char *nodes_json = malloc(N * 32 + 16);
	struct carve_result res = { 0 }, res2 = { 0 };
	struct json_object *arr = NULL, *copy = NULL;
	struct cni_err err = { 0 };
	struct timespec t0;
	size_t n = 0, len = 0;
	double first_ms, second_ms;
	unsigned long first_blocks, second_blocks;
	const char *pool = IPPOOL("\"subnet\":\"10.0.0.0/8\",\"perNodeBlockSize\":256,\"gateway\":\"10.0.0.1\"");

	(void)state;
	assert_non_null(nodes_json);
	len += (size_t)sprintf(nodes_json, "[");
	for (int i = N - 1; i >= 0; i--)
		len += (size_t)sprintf(nodes_json + len, "%s{\"name\":\"node-%05d\"}", i == N - 1 ? "" : ",", i);
	strcpy(nodes_json + len, "]");
	assert_int_equal(k8s_objects_parse(pool, strlen(pool), "pool", &pools, &err), 0);
	assert_int_equal(k8s_objects_parse(nodes_json, strlen(nodes_json), "nodes", &nodes, &err), 0);
	assert_int_equal(carve_nodes_from_objects(&nodes, &nv, &n, &err), 0);
	assert_int_equal(n, N);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	blocks_tested = 0;
	assert_int_equal(carve_pool(pools.items[0], nv, n, &res, &err), 0);
	first_ms = ms_since(&t0);
	first_blocks = blocks_tested;
	assert_int_equal(res.n_allocs, N);
	assert_int_equal(res.n_unplaced, 0);
	for (unsigned int i = 0; i < N; i++) {
		uint32_t start = 0x0a000001u + i * 256u, end = start + 255u;
		char name[16];

		snprintf(name, sizeof(name), "node-%05u", i);
		assert_string_equal(res.allocs[i].node, name);
		assert_memory_equal(res.allocs[i].start.bytes, ((uint8_t[]){ start >> 24, (start >> 16) & 255,
			(start >> 8) & 255, start & 255 }), 4);
		assert_memory_equal(res.allocs[i].end.bytes, ((uint8_t[]){ end >> 24, (end >> 16) & 255,
			(end >> 8) & 255, end & 255 }), 4);
	}

	/* Feed the status back: everything is kept, with node-00000 gone its block is reused. */
	assert_int_equal(carve_result_json(&res, &arr), 0);
	copy = json_object_new_object();
	json_object_object_add(copy, "allocations", arr);
	json_object_object_add(pools.items[0], "status", copy);
	{
		const char *txt = json_object_to_json_string_ext(pools.items[0], JSON_C_TO_STRING_PLAIN);

		assert_int_equal(k8s_objects_parse(txt, strlen(txt), "again", &again, &err), 0);
	}
	nv[0].name = "node-99999";
	qsort(nv, n, sizeof(*nv), node_name_cmp);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	blocks_tested = 0;
	assert_int_equal(carve_pool(again.items[0], nv, n, &res2, &err), 0);
	second_ms = ms_since(&t0);
	second_blocks = blocks_tested;
	assert_int_equal(res2.n_kept, N - 1);
	assert_int_equal(res2.n_allocs, N);
	assert_string_equal(res2.allocs[N - 1].node, "node-99999");
	assert_memory_equal(res2.allocs[N - 1].start.bytes, ((uint8_t[]){ 10, 0, 0, 1 }), 4);
	printf("# carve of %d nodes: %lu blocks tested, %.1f ms from scratch; %lu, %.1f ms keeping %d "
	       "and placing 1\n", N, first_blocks, first_ms, second_blocks, second_ms, N - 1);
	assert_true(first_blocks <= N + 1);
	assert_true(second_blocks <= N + 1);
	carve_result_free(&res);
	carve_result_free(&res2);
	k8s_objects_free(&pools);
	k8s_objects_free(&nodes);
	k8s_objects_free(&again);
}

#define STATICS(list) CIDRPOOL("\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"staticAllocations\":" list)
#define ST(node, prefix) "{\"nodeName\":\"" node "\",\"prefix\":\"" prefix "\"}"

/*
 * Repeats in staticAllocations, found on sorted lists: the reason is the one a scan in
 * list order gives, the first entry that is broken or repeats an earlier one deciding, a
 * repeated node before a repeated prefix of the same earlier entry.
 */
static void test_statics_first_error(void **state)
{
	(void)state;
	expect_invalid(STATICS("[" ST("a", "10.0.1.0/24") "," ST("b", "10.0.1.0/24") "]"),
		       "multiple entries for prefix 10.0.1.0/24");
	expect_invalid(STATICS("[" ST("a", "10.0.1.0/24") "," ST("b", "10.0.2.0/24") "," ST("a", "10.0.1.0/24") "]"),
		       "multiple entries for node a");
	expect_invalid(STATICS("[" ST("a", "10.0.1.0/24") "," ST("b", "10.0.2.0/24") "," ST("b", "10.0.1.0/24") "]"),
		       "multiple entries for prefix 10.0.1.0/24");
	expect_invalid(STATICS("[" ST("b", "10.0.2.0/24") "," ST("a", "10.0.1.0/24") "," ST("b", "10.0.1.0/24") "]"),
		       "multiple entries for node b");
	expect_invalid(STATICS("[" ST("c", "10.0.3.0/24") "," ST("d", "10.0.4.0/24") "," ST("c", "10.0.5.0/24") ","
			       ST("e", "10.0.4.0/24") "]"), "multiple entries for node c");
	expect_invalid(STATICS("[" ST("a", "10.0.1.0/24") "," ST("a", "10.0.2.0/24") "," ST("c", "10.0.3.1/24") "]"),
		       "multiple entries for node a");
	expect_invalid(STATICS("[" ST("a", "10.0.1.0/24") "," ST("c", "10.0.3.1/24") "," ST("a", "10.0.2.0/24") "]"),
		       "staticAllocations[1]: \"prefix\" 10.0.3.1/24: network prefix has host bits set");
	expect_invalid(STATICS("[" ST("a", "10.0.1.0/24") ",{\"prefix\":\"10.0.2.0/24\"},{\"prefix\":\"10.0.2.0/24\"}]"),
		       "multiple entries for prefix 10.0.2.0/24");
	/* An embedded NUL would have read "10.0.1.0/24": refused naming the field. */
	expect_invalid(STATICS("[" ST("a", "10.0.1.0/24\\u0000x") "]"),
		       "staticAllocations[0]: field \"prefix\": NUL character in string");
}

/* A CIDRPool with @n static allocations, node-00000 ... in 10.0.0.0/8, and no status. */
static struct json_object *statics_pool(size_t n)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	struct json_object *o;

	assert_non_null(f);
	fprintf(f, "{\"kind\":\"CIDRPool\",\"metadata\":{\"name\":\"pool1\"},\"spec\":{\"cidr\":"
		"\"10.0.0.0/8\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":1,\"staticAllocations\":[");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s{\"nodeName\":\"node-%05zu\",\"prefix\":\"10.%zu.%zu.0/24\"}", i ? "," : "", i,
			i / 256, i % 256);
	fprintf(f, "]}}");
	assert_int_equal(fclose(f), 0);
	o = json_tokener_parse(text);
	assert_non_null(o);
	free(text);
	return o;
}

/* The comparisons of a carve_entry_check() of node-00007's own entry (compare-count.h). */
static unsigned long entry_check_compares(struct json_object *pool)
{
	struct json_object *entry = json_tokener_parse("{\"nodeName\":\"node-00007\","
						       "\"prefix\":\"10.0.7.0/24\",\"gateway\":\"10.0.7.1\"}");
	struct cni_err err = { 0 };
	unsigned long n;

	assert_non_null(entry);
	compare_count_reset();
	if (carve_entry_check(pool, "node-00007", entry, &err) != 0)
		fail_msg("refused: %s", err.msg);
	n = compare_count();
	json_object_put(entry);
	return n;
}

/*
 * 40,000 static allocations (ipam-node's render took 10 s on them): every node placed on
 * its own prefix, and a node's entry checked in comparisons growing as n log n, not n^2:
 * four times the entries make n log n's 4.6 times as many, a pairwise check 16 times.
 */
static void test_40000_statics(void **state)
{
	enum { N = 40000 };
	struct json_object *small = statics_pool(N / 4), *pool = statics_pool(N);
	_cleanup_free_ struct carve_node *nv = calloc(N, sizeof(*nv));
	_cleanup_free_ char *names = malloc(N * 12);
	struct carve_result res = { 0 };
	struct cni_err err = { 0 };
	struct timespec t0;
	unsigned long c_small, c_big;
	double carve_ms;

	(void)state;
	assert_non_null(nv);
	assert_non_null(names);
	for (size_t i = 0; i < N; i++) {
		snprintf(names + i * 12, 12, "node-%05zu", i);
		nv[i].name = names + i * 12;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	blocks_tested = 0;
	assert_int_equal(carve_pool(pool, nv, N, &res, &err), 0);
	carve_ms = ms_since(&t0);
	assert_false(res.invalid);
	assert_int_equal(res.n_allocs, N);
	assert_int_equal(res.n_unplaced, 0);
	assert_string_equal(res.allocs[N - 1].node, "node-39999");
	assert_memory_equal(res.allocs[N - 1].start.bytes, ((uint8_t[]){ 10, 156, 63, 0 }), 4);
	carve_result_free(&res);
	/* Each node has its static prefix: no block is looked for. */
	assert_int_equal(blocks_tested, 0);
	c_small = entry_check_compares(small);
	c_big = entry_check_compares(pool);
	printf("# %d static allocations: carve %.1f ms; entry check %lu comparisons (%d: %lu)\n", N,
	       carve_ms, c_big, N / 4, c_small);
	/* Each entry's node name is compared at least once. */
	assert_true(c_small >= N / 4);
	if (c_big > 6 * c_small)
		fail_msg("4x the entries made %.2fx the comparisons", (double)c_big / (double)c_small);
	json_object_put(small);
	json_object_put(pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_readme),
		cmocka_unit_test(test_golden_exclusions),
		cmocka_unit_test(test_golden_small_pools),
		cmocka_unit_test(test_ipv6_smallest_subnets),
		cmocka_unit_test(test_per_node_exclusions_cover_block),
		cmocka_unit_test(test_golden_cidrpool),
		cmocka_unit_test(test_api_keys_exact),
		cmocka_unit_test(test_cidrpool_excluded_needs_network_address),
		cmocka_unit_test(test_static_allocations),
		cmocka_unit_test(test_keep_and_reuse),
		cmocka_unit_test(test_cidrpool_reuse_after_leave),
		cmocka_unit_test(test_ippool_node_listed_twice),
		cmocka_unit_test(test_node_selector),
		cmocka_unit_test(test_node_selector_operators),
		cmocka_unit_test(test_invalid_status_entries),
		cmocka_unit_test(test_invalid_spec),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_5000_nodes),
		cmocka_unit_test(test_statics_first_error),
		cmocka_unit_test(test_40000_statics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
