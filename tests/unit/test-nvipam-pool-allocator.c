/* Unit tests: nv-ipam allocator (round-robin, static, gateway, index, free count) */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/pool/allocator.h"
#include "ipam/nv-ipam/pool/pool.h"

#define ONE(key, body) "{\"pools\":{\"" key "\":{" body "}}}"

/* An in-memory store of one pool: held addresses (in order, as the store gives them) and the
 * last round-robin pick. */
struct fake_store {
	struct ip_addr *held;
	size_t n;
	size_t cap;
	bool has_last;
	struct ip_addr last;
};

static struct ip_addr ip(const char *s)
{
	struct ip_addr a;

	if (ip_addr_parse(s, &a) < 0)
		fail_msg("bad address in test: %s", s);
	return a;
}

static void hold(struct fake_store *s, struct ip_addr a)
{
	size_t i = s->n;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->held = realloc(s->held, s->cap * sizeof(*s->held));
		assert_non_null(s->held);
	}
	for (; i > 0 && ip_addr_cmp(&s->held[i - 1], &a) > 0; i--)
		s->held[i] = s->held[i - 1];
	s->held[i] = a;
	s->n++;
}

static void release(struct fake_store *s, const char *addr)
{
	struct ip_addr a = ip(addr);

	for (size_t i = 0; i < s->n; i++) {
		if (ip_addr_equal(&s->held[i], &a)) {
			memmove(&s->held[i], &s->held[i + 1], (s->n - i - 1) * sizeof(*s->held));
			s->n--;
			return;
		}
	}
	fail_msg("%s is not held", addr);
}

static void store_free(struct fake_store *s)
{
	free(s->held);
	*s = (struct fake_store){ 0 };
}

static struct nvipam_pool_usage usage_of(const struct fake_store *s)
{
	return (struct nvipam_pool_usage){ .reserved = s->held, .n_reserved = s->n,
					   .has_last = s->has_last, .last_reserved = s->last };
}

/* Allocates like nvipam's ADD: the store records the IP, round-robin moves the last pick. */
static int request(const struct nvipam_pool *p, struct fake_store *s, const struct nvipam_request *req,
		   char *out, size_t out_len, struct cni_err *err)
{
	struct nvipam_pool_usage u = usage_of(s);
	struct ip_addr got = { .family = -1 };
	int r;

	r = nvipam_allocate(p, &u, req, &got, err);
	if (r < 0) {
		/* Written only on success. */
		assert_int_equal(got.family, -1);
		return r;
	}
	hold(s, got);
	if (req->kind == NVIPAM_REQ_NEXT) {
		s->has_last = true;
		s->last = got;
	}
	ip_addr_format(&got, out, out_len);
	return 0;
}

static void expect_ok(const struct nvipam_pool *p, struct fake_store *s,
		      const struct nvipam_request *req, const char *want)
{
	struct cni_err err = { 0 };
	char got[IP_PREFIX_STRLEN];

	if (request(p, s, req, got, sizeof(got), &err) < 0)
		fail_msg("expected %s, got error %d: %s", want, err.code, err.msg);
	assert_string_equal(got, want);
	assert_int_equal(err.code, CNI_OK);
}

static void expect_next(const struct nvipam_pool *p, struct fake_store *s, const char *want)
{
	const struct nvipam_request req = { .kind = NVIPAM_REQ_NEXT };

	expect_ok(p, s, &req, want);
}

static void expect_err(const struct nvipam_pool *p, struct fake_store *s,
		       const struct nvipam_request *req, int r, int code, const char *msg)
{
	struct cni_err err = { 0 };
	char got[IP_PREFIX_STRLEN];
	size_t n = s->n;

	int got_r = request(p, s, req, got, sizeof(got), &err);

	if (got_r >= 0)
		fail_msg("expected \"%s\", got %s", msg, got);
	assert_int_equal(got_r, r);
	assert_int_equal(s->n, n);
	assert_int_equal(err.code, code);
	assert_string_equal(err.msg, msg);
}

static void expect_exhausted(const struct nvipam_pool *p, struct fake_store *s)
{
	const struct nvipam_request req = { .kind = NVIPAM_REQ_NEXT };
	char msg[512];

	snprintf(msg, sizeof(msg), "no free addresses in the pool \"%s\", poolType \"%s\"", p->name,
		 p->type == NVIPAM_POOL_CIDRPOOL ? "cidrpool" : "ippool");
	expect_err(p, s, &req, -ENOSPC, CNI_ERR_NO_FREE_ADDRESS, msg);
}

static unsigned long free_count(const struct nvipam_pool *p, const struct fake_store *s)
{
	struct nvipam_pool_usage u = usage_of(s);

	return nvipam_pool_free_count(p, &u);
}

static const struct nvipam_pool *load(const char *json, struct nvipam_pools *pools)
{
	struct cni_err err = { 0 };

	if (nvipam_pools_parse(json, strlen(json), "test.json", pools, &err) < 0)
		fail_msg("pool file refused: %s", err.msg);
	assert_int_equal(pools->n, 1);
	return &pools->pools[0];
}

/* Round-robin until exhaustion; the free count must match what was handed out. */
static void drain_matches_free_count(const struct nvipam_pool *p, struct fake_store *s)
{
	const struct nvipam_request req = { .kind = NVIPAM_REQ_NEXT };
	unsigned long before = free_count(p, s), got = 0;
	char out[IP_PREFIX_STRLEN];

	while (request(p, s, &req, out, sizeof(out), &(struct cni_err){ 0 }) == 0) {
		got++;
		assert_int_equal(free_count(p, s), before - got);
	}
	assert_int_equal(got, before);
	assert_int_equal(free_count(p, s), 0);
}

#define NET29 ONE("net29", "\"subnet\":\"192.168.1.0/29\",\"startIP\":\"192.168.1.1\"," \
			   "\"endIP\":\"192.168.1.6\"")
#define NET29_GW ONE("net29", "\"subnet\":\"192.168.1.0/29\",\"startIP\":\"192.168.1.1\"," \
			      "\"endIP\":\"192.168.1.6\",\"gateway\":\"192.168.1.1\"")

static void test_gateway_skipped_broadcast_never(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p = load(NET29_GW, &pools);
	struct fake_store s = { 0 };

	(void)state;
	assert_int_equal(free_count(p, &s), 5);
	expect_next(p, &s, "192.168.1.2");
	expect_next(p, &s, "192.168.1.3");
	expect_next(p, &s, "192.168.1.4");
	expect_next(p, &s, "192.168.1.5");
	expect_next(p, &s, "192.168.1.6");
	assert_int_equal(free_count(p, &s), 0);
	/* Neither .7 (broadcast) nor .0 nor the gateway. */
	expect_exhausted(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);
}

static void test_no_gateway_starts_at_first(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p = load(NET29, &pools);
	struct fake_store s = { 0 };

	(void)state;
	expect_next(p, &s, "192.168.1.1");
	expect_next(p, &s, "192.168.1.2");
	store_free(&s);
	nvipam_pools_free(&pools);
	p = load(NET29, &pools);
	drain_matches_free_count(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);
}

static void test_round_robin_table(void **state)
{
	static const struct {
		bool gateway;
		const char *last; /* NULL: none yet */
		const char *held[6];
		const char *want; /* NULL: exhausted */
	} cases[] = {
		{ false, NULL, { NULL }, "192.168.1.1" },
		{ false, "192.168.1.1", { NULL }, "192.168.1.2" },
		{ false, "192.168.1.2", { "192.168.1.3", "192.168.1.4", NULL }, "192.168.1.5" },
		/* Wrap around from the end. */
		{ false, "192.168.1.6", { NULL }, "192.168.1.1" },
		{ false, "192.168.1.5", { "192.168.1.6", NULL }, "192.168.1.1" },
		/* Wrap around from the middle. */
		{ false, "192.168.1.3", { "192.168.1.4", "192.168.1.5", "192.168.1.6", NULL }, "192.168.1.1" },
		{ false, "192.168.1.3",
		  { "192.168.1.4", "192.168.1.5", "192.168.1.6", "192.168.1.1", NULL }, "192.168.1.2" },
		/* The last pick itself comes last, once everything else is taken. */
		{ false, "192.168.1.3",
		  { "192.168.1.1", "192.168.1.2", "192.168.1.4", "192.168.1.5", "192.168.1.6", NULL },
		  "192.168.1.3" },
		{ false, "192.168.1.3",
		  { "192.168.1.1", "192.168.1.2", "192.168.1.3", "192.168.1.4", "192.168.1.5",
		    "192.168.1.6" },
		  NULL },
		/* A last pick outside the range (config changed) restarts at the range start. */
		{ false, "10.0.0.3", { NULL }, "192.168.1.1" },
		{ false, "192.168.1.0", { NULL }, "192.168.1.1" },
		{ false, "192.168.1.7", { NULL }, "192.168.1.1" },
		{ false, "fd00::3", { NULL }, "192.168.1.1" },
		{ false, "::c0a8:103", { NULL }, "192.168.1.1" },
		/* With the gateway at the range start. */
		{ true, NULL, { NULL }, "192.168.1.2" },
		{ true, "192.168.1.6", { NULL }, "192.168.1.2" },
		{ true, "192.168.1.4", { "192.168.1.5", "192.168.1.6", NULL }, "192.168.1.2" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nvipam_pools pools;
		const struct nvipam_pool *p = load(cases[i].gateway ? NET29_GW : NET29, &pools);
		struct fake_store s = { 0 };
		const struct nvipam_request req = { .kind = NVIPAM_REQ_NEXT };
		struct cni_err err = { 0 };
		char got[IP_PREFIX_STRLEN];
		int r;

		if (cases[i].last) {
			s.has_last = true;
			s.last = ip(cases[i].last);
		}
		for (size_t k = 0; k < 6 && cases[i].held[k]; k++)
			hold(&s, ip(cases[i].held[k]));
		r = request(p, &s, &req, got, sizeof(got), &err);
		if (cases[i].want && (r < 0 || strcmp(got, cases[i].want) != 0))
			fail_msg("case %zu: expected %s, got %s (%s)", i, cases[i].want,
				 r < 0 ? "error" : got, err.msg);
		if (!cases[i].want && (r != -ENOSPC || err.code != CNI_ERR_NO_FREE_ADDRESS))
			fail_msg("case %zu: expected exhaustion, got %d %s", i, r, r < 0 ? err.msg : got);
		store_free(&s);
		nvipam_pools_free(&pools);
	}
}

static void test_round_robin_with_releases(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p = load(NET29_GW, &pools);
	struct fake_store s = { 0 };

	(void)state;
	/* ADD -> DEL -> ADD gives the next address: DEL keeps the last pick. */
	expect_next(p, &s, "192.168.1.2");
	release(&s, "192.168.1.2");
	expect_next(p, &s, "192.168.1.3");
	expect_next(p, &s, "192.168.1.4");
	release(&s, "192.168.1.3");
	expect_next(p, &s, "192.168.1.5");
	expect_next(p, &s, "192.168.1.6");
	/* Wrapped: .2 and .3 are free again, the gateway is skipped. */
	expect_next(p, &s, "192.168.1.2");
	expect_next(p, &s, "192.168.1.3");
	expect_exhausted(p, &s);
	release(&s, "192.168.1.5");
	expect_next(p, &s, "192.168.1.5");
	store_free(&s);
	nvipam_pools_free(&pools);
}

/* The addresses a held() callback says are taken: asked one at a time, as the store's snapshot is. */
static bool held_by_snapshot(void *ctx, const struct ip_addr *a)
{
	const char *const *v = ctx;

	for (; *v; v++) {
		struct ip_addr h = ip(*v);

		if (ip_addr_equal(a, &h))
			return true;
	}
	return false;
}

static void test_held_asked(void **state)
{
	static const char *const snapshot[] = { "192.168.1.2", "192.168.1.3", "192.168.1.1", NULL };
	struct nvipam_pools pools;
	const struct nvipam_pool *p = load(NET29_GW, &pools);
	struct ip_addr listed = ip("192.168.1.4"), want = ip("192.168.1.5"), got;
	struct nvipam_pool_usage u = { .reserved = &listed, .n_reserved = 1, .held = held_by_snapshot,
				       .held_ctx = (void *)snapshot };
	struct nvipam_request next = { .kind = NVIPAM_REQ_NEXT };
	struct nvipam_request stat = { .kind = NVIPAM_REQ_STATIC, .ip = ip("192.168.1.3") };
	struct nvipam_request gw = { .kind = NVIPAM_REQ_GATEWAY };
	struct cni_err err = { 0 };

	(void)state;
	/* Round-robin steps over both: the listed address and those the callback holds. */
	assert_int_equal(nvipam_allocate(p, &u, &next, &got, &err), 0);
	assert_true(ip_addr_equal(&got, &want));
	assert_int_equal(nvipam_allocate(p, &u, &stat, &got, &err), -EEXIST);
	err = (struct cni_err){ 0 };
	assert_int_equal(nvipam_allocate(p, &u, &gw, &got, &err), -EEXIST);
	nvipam_pools_free(&pools);
}

static void test_point_to_point_and_single(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;
	struct fake_store s = { 0 };

	(void)state;
	/* Golden D: a /31 CIDRPool prefix, no gateway: .0, .1, then exhausted. */
	p = load(ONE("cidrpool/p2p", "\"cidr\":\"192.168.100.0/24\",\"prefix\":\"192.168.100.0/31\""),
		 &pools);
	assert_int_equal(p->subnet.len, 31);
	assert_false(p->has_gateway);
	assert_int_equal(free_count(p, &s), 2);
	expect_next(p, &s, "192.168.100.0");
	expect_next(p, &s, "192.168.100.1");
	expect_exhausted(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);

	/* /32: one address. */
	p = load(ONE("cidrpool/one", "\"cidr\":\"192.168.100.0/24\",\"prefix\":\"192.168.100.9/32\""),
		 &pools);
	assert_int_equal(free_count(p, &s), 1);
	expect_next(p, &s, "192.168.100.9");
	expect_exhausted(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);

	/* IPPool block of one address (10.10.10.10/32, block 1). */
	p = load(ONE("single", "\"subnet\":\"10.10.10.10/32\",\"startIP\":\"10.10.10.10\","
		     "\"endIP\":\"10.10.10.10\""), &pools);
	expect_next(p, &s, "10.10.10.10");
	expect_exhausted(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);

	/* IPv6 /127 and /128. */
	p = load(ONE("cidrpool/p6", "\"cidr\":\"fd00::/64\",\"prefix\":\"fd00::6/127\""), &pools);
	expect_next(p, &s, "fd00::6");
	expect_next(p, &s, "fd00::7");
	expect_exhausted(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);
	p = load(ONE("cidrpool/p6", "\"cidr\":\"fd00::/64\",\"prefix\":\"fd00::9/128\""), &pools);
	expect_next(p, &s, "fd00::9");
	expect_exhausted(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);
}

static void test_exclusions_skipped(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;
	struct fake_store s = { 0 };

	(void)state;
	p = load(ONE("net29", "\"subnet\":\"192.168.1.0/29\",\"startIP\":\"192.168.1.1\","
		     "\"endIP\":\"192.168.1.6\",\"exclusions\":["
		     "{\"startIP\":\"192.168.1.2\",\"endIP\":\"192.168.1.3\"},"
		     "{\"startIP\":\"192.168.1.5\",\"endIP\":\"192.168.1.5\"}]"), &pools);
	assert_int_equal(free_count(p, &s), 3);
	expect_next(p, &s, "192.168.1.1");
	expect_next(p, &s, "192.168.1.4");
	expect_next(p, &s, "192.168.1.6");
	expect_exhausted(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);

	/* Exclusions and the gateway together, wrapping past an excluded range end. */
	p = load(ONE("net29", "\"subnet\":\"192.168.1.0/29\",\"startIP\":\"192.168.1.1\","
		     "\"endIP\":\"192.168.1.6\",\"gateway\":\"192.168.1.1\",\"exclusions\":["
		     "{\"startIP\":\"192.168.1.5\",\"endIP\":\"192.168.1.6\"}],"
		     "\"perNodeExclusions\":[{\"startIndex\":1,\"endIndex\":1}]"), &pools);
	s.has_last = true;
	s.last = ip("192.168.1.4");
	expect_next(p, &s, "192.168.1.3");
	expect_next(p, &s, "192.168.1.4");
	expect_exhausted(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);
}

/*
 * A node's block that exclusions and the gateway cover whole (a status written before the
 * exclusions grew): round-robin says why nothing is free, a static IP is still granted.
 */
static void test_fully_excluded_block(void **state)
{
	static const char *const why =
		"no free addresses in the pool \"net29\", poolType \"ippool\": every address of "
		"this node's range 192.168.1.1-192.168.1.6 is excluded or the gateway (the "
		"controller gives such a node another block; until the pool's status changes "
		"only static IPs are handed out)";
	const struct nvipam_request next = { .kind = NVIPAM_REQ_NEXT };
	struct nvipam_request req = { .kind = NVIPAM_REQ_STATIC };
	struct nvipam_pools pools;
	const struct nvipam_pool *p;
	struct fake_store s = { 0 };

	(void)state;
	p = load(ONE("net29", "\"subnet\":\"192.168.1.0/29\",\"startIP\":\"192.168.1.1\","
		     "\"endIP\":\"192.168.1.6\",\"gateway\":\"192.168.1.1\",\"exclusions\":["
		     "{\"startIP\":\"192.168.1.2\",\"endIP\":\"192.168.1.4\"}],"
		     "\"perNodeExclusions\":[{\"startIndex\":4,\"endIndex\":5}]"), &pools);
	assert_int_equal(free_count(p, &s), 0);
	expect_err(p, &s, &next, -ENOSPC, CNI_ERR_NO_FREE_ADDRESS, why);
	req.ip = ip("192.168.1.3");
	expect_ok(p, &s, &req, "192.168.1.3");
	expect_err(p, &s, &next, -ENOSPC, CNI_ERR_NO_FREE_ADDRESS, why);
	store_free(&s);
	nvipam_pools_free(&pools);

	/* One address left, held: the plain message (the block is full, not excluded). */
	p = load(ONE("net29", "\"subnet\":\"192.168.1.0/29\",\"startIP\":\"192.168.1.1\","
		     "\"endIP\":\"192.168.1.6\",\"gateway\":\"192.168.1.1\",\"exclusions\":["
		     "{\"startIP\":\"192.168.1.2\",\"endIP\":\"192.168.1.5\"}]"), &pools);
	expect_next(p, &s, "192.168.1.6");
	expect_exhausted(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);
}

static void test_static(void **state)
{
	static const char golden_f[] =
		ONE("pool1", "\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.1\","
		    "\"endIP\":\"192.168.0.128\",\"gateway\":\"192.168.0.1\",\"exclusions\":["
		    "{\"startIP\":\"192.168.0.200\",\"endIP\":\"192.168.0.200\"}],"
		    "\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":9}]");
	struct nvipam_pools pools;
	const struct nvipam_pool *p = load(golden_f, &pools);
	struct fake_store s = { 0 };
	struct nvipam_request req = { .kind = NVIPAM_REQ_STATIC };

	(void)state;
	/* Golden F: excluded and outside the node's block, still granted. */
	req.ip = ip("192.168.0.200");
	expect_ok(p, &s, &req, "192.168.0.200");
	/* Inside a per-node exclusion, and the gateway itself. */
	req.ip = ip("192.168.0.5");
	expect_ok(p, &s, &req, "192.168.0.5");
	req.ip = ip("192.168.0.1");
	expect_ok(p, &s, &req, "192.168.0.1");
	/* Anywhere in the subnet, far from the block. */
	req.ip = ip("192.168.200.7");
	expect_ok(p, &s, &req, "192.168.200.7");
	/* Static picks do not move round-robin. */
	assert_false(s.has_last);
	expect_next(p, &s, "192.168.0.11");

	req.ip = ip("192.168.0.200");
	expect_err(p, &s, &req, -EEXIST, CNI_ERR_ADDRESS_TAKEN,
		   "requested IP is already reserved in the pool \"pool1\", poolType \"ippool\"");
	req.ip = ip("10.0.0.1");
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "requested IP 10.0.0.1 is outside the subnet 192.168.0.0/16 of the pool "
		   "\"pool1\", poolType \"ippool\"");
	req.ip = ip("fd00::1");
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "requested IP fd00::1 is outside the subnet 192.168.0.0/16 of the pool "
		   "\"pool1\", poolType \"ippool\"");
	store_free(&s);
	nvipam_pools_free(&pools);

	/* CIDRPool: the node's prefix, not the pool's cidr. */
	p = load(ONE("cidrpool/c", "\"cidr\":\"192.168.0.0/16\",\"prefix\":\"192.168.1.0/24\","
		     "\"gateway\":\"192.168.1.1\""), &pools);
	req.ip = ip("192.168.1.255");
	expect_ok(p, &s, &req, "192.168.1.255");
	req.ip = ip("192.168.2.5");
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "requested IP 192.168.2.5 is outside the subnet 192.168.1.0/24 of the pool "
		   "\"c\", poolType \"cidrpool\"");
	req.ip = ip("192.168.1.255");
	expect_err(p, &s, &req, -EEXIST, CNI_ERR_ADDRESS_TAKEN,
		   "requested IP is already reserved in the pool \"c\", poolType \"cidrpool\"");
	store_free(&s);
	nvipam_pools_free(&pools);
}

static void test_index(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;
	struct fake_store s = { 0 };
	struct nvipam_request req = { .kind = NVIPAM_REQ_INDEX };

	(void)state;
	p = load(ONE("pool1", "\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.1\","
		     "\"endIP\":\"192.168.0.24\",\"gateway\":\"192.168.0.1\",\"exclusions\":["
		     "{\"startIP\":\"192.168.0.10\",\"endIP\":\"192.168.0.10\"}]"), &pools);
	req.index = 0;
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "requested IP index \"0\" is the actual gateway, use allocate_default_gateway "
		   "feature instead");
	req.index = 1;
	expect_ok(p, &s, &req, "192.168.0.2");
	/* An excluded address can be asked for by index. */
	req.index = 9;
	expect_ok(p, &s, &req, "192.168.0.10");
	req.index = 23;
	expect_ok(p, &s, &req, "192.168.0.24");
	req.index = 24;
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "requested IP index \"24\" is outside of the given chunk");
	req.index = ULONG_MAX;
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "requested IP index \"18446744073709551615\" is outside of the given chunk");
	req.index = 1;
	expect_err(p, &s, &req, -EEXIST, CNI_ERR_ADDRESS_TAKEN,
		   "requested IP is already reserved in the pool \"pool1\", poolType \"ippool\"");
	/* Index picks do not move round-robin. */
	assert_false(s.has_last);
	expect_next(p, &s, "192.168.0.3");
	store_free(&s);
	nvipam_pools_free(&pools);

	/* Counted from this node's startIP. */
	p = load(ONE("pool1", "\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.25\","
		     "\"endIP\":\"192.168.0.48\",\"gateway\":\"192.168.0.1\""), &pools);
	req.index = 0;
	expect_ok(p, &s, &req, "192.168.0.25");
	store_free(&s);
	nvipam_pools_free(&pools);

	/* CIDRPool: from network+1, so index 0 is a gatewayIndex-1 gateway. */
	p = load(ONE("cidrpool/c", "\"cidr\":\"192.168.0.0/16\",\"prefix\":\"192.168.1.0/24\","
		     "\"gateway\":\"192.168.1.1\""), &pools);
	req.index = 0;
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "requested IP index \"0\" is the actual gateway, use allocate_default_gateway "
		   "feature instead");
	req.index = 1;
	expect_ok(p, &s, &req, "192.168.1.2");
	req.index = 253;
	expect_ok(p, &s, &req, "192.168.1.254");
	req.index = 254;
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "requested IP index \"254\" is outside of the given chunk");
	store_free(&s);
	nvipam_pools_free(&pools);

	/* /31: the range starts at the network address. */
	p = load(ONE("cidrpool/p2p", "\"cidr\":\"192.168.100.0/24\",\"prefix\":\"192.168.100.2/31\""),
		 &pools);
	req.index = 0;
	expect_ok(p, &s, &req, "192.168.100.2");
	req.index = 1;
	expect_ok(p, &s, &req, "192.168.100.3");
	req.index = 2;
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "requested IP index \"2\" is outside of the given chunk");
	store_free(&s);
	nvipam_pools_free(&pools);

	/* At the top of the IPv6 space the sum would overflow. */
	p = load(ONE("cidrpool/top", "\"cidr\":\"ffff::/16\",\"prefix\":\"ffff:ffff:ffff:ffff::/64\""),
		 &pools);
	req.index = ULONG_MAX - 1;
	expect_ok(p, &s, &req, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	req.index = ULONG_MAX;
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "requested IP index \"18446744073709551615\" is outside of the given chunk");
	store_free(&s);
	nvipam_pools_free(&pools);
}

static void test_gateway_request(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;
	struct fake_store s = { 0 };
	const struct nvipam_request req = { .kind = NVIPAM_REQ_GATEWAY };

	(void)state;
	/* The gateway lies outside this node's block and is still handed out. */
	p = load(ONE("pool1", "\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.25\","
		     "\"endIP\":\"192.168.0.48\",\"gateway\":\"192.168.0.1\""), &pools);
	expect_ok(p, &s, &req, "192.168.0.1");
	assert_false(s.has_last);
	expect_err(p, &s, &req, -EEXIST, CNI_ERR_ADDRESS_TAKEN,
		   "requested IP is already reserved in the pool \"pool1\", poolType \"ippool\"");
	store_free(&s);
	nvipam_pools_free(&pools);

	p = load(NET29, &pools);
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "pool without gateway can't be used with allocate_default_gateway feature, "
		   "pool \"net29\", poolType \"ippool\"");
	store_free(&s);
	nvipam_pools_free(&pools);

	p = load(ONE("cidrpool/c", "\"cidr\":\"10.0.0.0/16\",\"prefix\":\"10.0.3.0/24\""), &pools);
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "pool without gateway can't be used with allocate_default_gateway feature, "
		   "pool \"c\", poolType \"cidrpool\"");
	store_free(&s);
	nvipam_pools_free(&pools);
}

static void test_unknown_request(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p = load(NET29, &pools);
	struct fake_store s = { 0 };
	struct nvipam_request req = { .kind = NVIPAM_REQ_NEXT };

	(void)state;
	req.kind = (enum nvipam_request_kind)42;
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INTERNAL, "unknown allocation request 42");
	store_free(&s);
	nvipam_pools_free(&pools);
}

static void test_golden_examples(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;
	struct fake_store s = { 0 };

	(void)state;
	/* A: IPPool 192.168.0.0/16, block 24, gateway .1: host-a starts at .2, host-b at .25. */
	p = load(ONE("pool1", "\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.1\","
		     "\"endIP\":\"192.168.0.24\",\"gateway\":\"192.168.0.1\""), &pools);
	expect_next(p, &s, "192.168.0.2");
	assert_int_equal(p->subnet.len, 16);
	drain_matches_free_count(p, &s);
	assert_int_equal(s.n, 23);
	store_free(&s);
	nvipam_pools_free(&pools);
	p = load(ONE("pool1", "\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.25\","
		     "\"endIP\":\"192.168.0.48\",\"gateway\":\"192.168.0.1\""), &pools);
	assert_int_equal(free_count(p, &s), 24);
	expect_next(p, &s, "192.168.0.25");
	store_free(&s);
	nvipam_pools_free(&pools);

	/* C: CIDRPool host-b 192.168.1.0/24, gateway .1: first .2, last usable .254. */
	p = load(ONE("cidrpool/pool1", "\"cidr\":\"192.168.0.0/16\",\"prefix\":\"192.168.1.0/24\","
		     "\"gateway\":\"192.168.1.1\""), &pools);
	assert_int_equal(p->subnet.len, 24);
	assert_int_equal(free_count(p, &s), 253);
	expect_next(p, &s, "192.168.1.2");
	s.last = ip("192.168.1.253");
	expect_next(p, &s, "192.168.1.254");
	/* After .254 it wraps: never the broadcast .255, never the gateway. */
	expect_next(p, &s, "192.168.1.3");
	drain_matches_free_count(p, &s);
	assert_int_equal(s.n, 253);
	store_free(&s);
	nvipam_pools_free(&pools);
}

static void test_ipv6_pool(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;
	struct fake_store s = { 0 };
	struct nvipam_request req = { .kind = NVIPAM_REQ_STATIC };

	(void)state;
	/* Golden B's second pool. */
	p = load(ONE("pool6", "\"subnet\":\"fd52:2eb5:44::/48\",\"startIP\":\"fd52:2eb5:44::1\","
		     "\"endIP\":\"fd52:2eb5:44::8\",\"gateway\":\"fd52:2eb5:44::1\""), &pools);
	assert_int_equal(free_count(p, &s), 7);
	expect_next(p, &s, "fd52:2eb5:44::2");
	expect_next(p, &s, "fd52:2eb5:44::3");
	req.ip = ip("fd52:2eb5:44:ffff::9");
	expect_ok(p, &s, &req, "fd52:2eb5:44:ffff::9");
	req.ip = ip("192.168.0.2");
	expect_err(p, &s, &req, -EINVAL, CNI_ERR_INVALID_CONFIG,
		   "requested IP 192.168.0.2 is outside the subnet fd52:2eb5:44::/48 of the pool "
		   "\"pool6\", poolType \"ippool\"");
	/* An IPv4 address in the store does not count against an IPv6 pool. */
	hold(&s, ip("192.168.0.2"));
	drain_matches_free_count(p, &s);
	assert_string_equal(ip_addr_format(&s.last, (char[IP_PREFIX_STRLEN]){ 0 }, IP_PREFIX_STRLEN),
			    "fd52:2eb5:44::8");
	expect_exhausted(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);
}

static void test_huge_ipv6_prefix(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;
	struct fake_store s = { 0 };
	char want[IP_PREFIX_STRLEN];

	(void)state;
	/*
	 * A hang guard only: a walk over the range would take years, the search takes
	 * milliseconds (SIGALRM ends the test, failed).
	 */
	alarm(20);
	p = load(ONE("cidrpool/big", "\"cidr\":\"fd00:1::/32\",\"prefix\":\"fd00:1:0:7::/64\","
		     "\"gateway\":\"fd00:1:0:7::1\""), &pools);
	/* 2^64 - 1 addresses, less the gateway. */
	assert_true(free_count(p, &s) == ULONG_MAX - 1);
	/* 20000 taken right after the gateway, the last pick at the all-ones end. */
	for (unsigned int i = 0; i < 20000; i++) {
		struct ip_addr a = ip("fd00:1:0:7::");

		a.bytes[14] = (uint8_t)((i + 2) >> 8);
		a.bytes[15] = (uint8_t)(i + 2);
		hold(&s, a);
	}
	s.has_last = true;
	s.last = ip("fd00:1:0:7:ffff:ffff:ffff:ffff");
	expect_next(p, &s, "fd00:1:0:7::4e22");
	assert_true(free_count(p, &s) == ULONG_MAX - 1 - 20001);
	/* From the middle of the taken run. */
	s.last = ip("fd00:1:0:7::100");
	snprintf(want, sizeof(want), "fd00:1:0:7::4e23");
	expect_next(p, &s, want);
	store_free(&s);
	nvipam_pools_free(&pools);

	/* An exclusion over all but the last address: one step to the all-ones address. */
	p = load(ONE("cidrpool/big", "\"cidr\":\"fd00:1::/32\",\"prefix\":\"fd00:1:0:7::/64\","
		     "\"exclusions\":[{\"startIP\":\"fd00:1:0:7::\","
		     "\"endIP\":\"fd00:1:0:7:ffff:ffff:ffff:fffe\"}]"), &pools);
	assert_int_equal(free_count(p, &s), 1);
	expect_next(p, &s, "fd00:1:0:7:ffff:ffff:ffff:ffff");
	expect_exhausted(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);

	/* A range ending at the very last IPv6 address wraps to its start, not to "::". */
	p = load(ONE("cidrpool/top", "\"cidr\":\"ffff::/16\",\"prefix\":\"ffff:ffff:ffff:ffff::/64\""),
		 &pools);
	s.has_last = true;
	s.last = ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	expect_next(p, &s, "ffff:ffff:ffff:ffff::1");
	store_free(&s);
	nvipam_pools_free(&pools);

	/* Counts beyond an unsigned long are capped. */
	p = load(ONE("cidrpool/huge", "\"cidr\":\"fd00::/16\",\"prefix\":\"fd00:1::/32\""), &pools);
	assert_true(free_count(p, &s) == ULONG_MAX);
	expect_next(p, &s, "fd00:1::1");
	assert_true(free_count(p, &s) == ULONG_MAX);
	store_free(&s);
	nvipam_pools_free(&pools);
	p = load(ONE("all", "\"subnet\":\"::/0\",\"startIP\":\"::\","
		     "\"endIP\":\"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\""), &pools);
	assert_true(free_count(p, &s) == ULONG_MAX);
	s.has_last = true;
	s.last = ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	expect_next(p, &s, "::");
	store_free(&s);
	nvipam_pools_free(&pools);

	alarm(0);
}

static void test_free_count(void **state)
{
	struct nvipam_pools pools;
	const struct nvipam_pool *p;
	struct fake_store s = { 0 };

	(void)state;
	p = load(ONE("net29", "\"subnet\":\"192.168.1.0/29\",\"startIP\":\"192.168.1.1\","
		     "\"endIP\":\"192.168.1.6\",\"gateway\":\"192.168.1.1\",\"exclusions\":["
		     "{\"startIP\":\"192.168.1.3\",\"endIP\":\"192.168.1.4\"}]"), &pools);
	/* .2, .5, .6 */
	assert_int_equal(free_count(p, &s), 3);
	assert_int_equal(nvipam_pool_free_count(p, NULL), 3);
	hold(&s, ip("192.168.1.2"));
	assert_int_equal(free_count(p, &s), 2);
	/* Duplicates, the gateway, excluded, outside and other-family addresses take no slot. */
	hold(&s, ip("192.168.1.2"));
	hold(&s, ip("192.168.1.1"));
	hold(&s, ip("192.168.1.3"));
	hold(&s, ip("192.168.1.7"));
	hold(&s, ip("10.1.1.5"));
	hold(&s, ip("::c0a8:105"));
	assert_int_equal(free_count(p, &s), 2);
	hold(&s, ip("192.168.1.5"));
	assert_int_equal(free_count(p, &s), 1);
	expect_next(p, &s, "192.168.1.6");
	assert_int_equal(free_count(p, &s), 0);
	store_free(&s);
	nvipam_pools_free(&pools);

	/* IPPool exclusions are unclipped; only their part inside the block counts, and an
	 * excluded gateway is not counted twice. */
	p = load(ONE("p", "\"subnet\":\"192.168.1.0/24\",\"startIP\":\"192.168.1.1\","
		     "\"endIP\":\"192.168.1.6\",\"gateway\":\"192.168.1.1\",\"exclusions\":["
		     "{\"startIP\":\"192.168.1.0\",\"endIP\":\"192.168.1.1\"},"
		     "{\"startIP\":\"192.168.1.5\",\"endIP\":\"192.168.1.100\"}]"), &pools);
	assert_int_equal(free_count(p, &s), 3);
	drain_matches_free_count(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);

	/* Exclusions wholly outside the block take no slot either. */
	p = load(ONE("p", "\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.1\","
		     "\"endIP\":\"192.168.0.128\",\"exclusions\":["
		     "{\"startIP\":\"192.168.0.0\",\"endIP\":\"192.168.0.0\"},"
		     "{\"startIP\":\"192.168.0.200\",\"endIP\":\"192.168.0.210\"}]"), &pools);
	assert_int_equal(free_count(p, &s), 128);
	store_free(&s);
	nvipam_pools_free(&pools);

	/* A gateway outside the block takes no slot. */
	p = load(ONE("p", "\"subnet\":\"192.168.0.0/16\",\"startIP\":\"192.168.0.25\","
		     "\"endIP\":\"192.168.0.48\",\"gateway\":\"192.168.0.1\",\"perNodeExclusions\":["
		     "{\"startIndex\":0,\"endIndex\":3}]"), &pools);
	assert_int_equal(free_count(p, &s), 20);
	drain_matches_free_count(p, &s);
	store_free(&s);
	nvipam_pools_free(&pools);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gateway_skipped_broadcast_never),
		cmocka_unit_test(test_no_gateway_starts_at_first),
		cmocka_unit_test(test_round_robin_table),
		cmocka_unit_test(test_round_robin_with_releases),
		cmocka_unit_test(test_held_asked),
		cmocka_unit_test(test_point_to_point_and_single),
		cmocka_unit_test(test_exclusions_skipped),
		cmocka_unit_test(test_fully_excluded_block),
		cmocka_unit_test(test_static),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_gateway_request),
		cmocka_unit_test(test_unknown_request),
		cmocka_unit_test(test_golden_examples),
		cmocka_unit_test(test_ipv6_pool),
		cmocka_unit_test(test_huge_ipv6_prefix),
		cmocka_unit_test(test_free_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
