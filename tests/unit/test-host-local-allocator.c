/* Unit tests: host-local's allocator against a store in memory
 *
 * Cases re-derived from what upstream's IPAllocator.Get() does (v1.9.1,
 * backend/allocator/allocator.go): the order addresses are handed out in, the last
 * reserved address, gateways, exhaustion, requested addresses, duplicates. The fake store
 * counts its calls: the walk asks the store about each candidate once.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/result.h"
#include "common/util/error.h"
#include "ipam/host-local/allocator.h"
#include "ipam/host-local/config.h"
#include "ipam/host-local/ip.h"
#include "ipam/host-local/range.h"

#define FAKE_MAX 300

struct fake_store {
	struct {
		struct ip_addr ip;
		char owner[64];
	} held[FAKE_MAX];
	size_t n;
	bool has_last[4];
	struct ip_addr last[4];
	unsigned int reserve_calls;
	int fail_reserve; /* negative errno the next reserve() returns */
};

static struct fake_store fake;

static int fake_reserve(void *store, const char *id, const char *ifname, const struct ip_addr *ip,
			size_t set, bool *ret_reserved, struct cni_err *err)
{
	struct fake_store *s = store;

	s->reserve_calls++;
	if (s->fail_reserve)
		return cni_err_set(err, CNI_ERR_IO, s->fail_reserve, "cannot write");
	*ret_reserved = false;
	for (size_t i = 0; i < s->n; i++)
		if (ip_addr_equal(&s->held[i].ip, ip))
			return 0;
	assert_true(s->n < FAKE_MAX);
	s->held[s->n].ip = *ip;
	snprintf(s->held[s->n].owner, sizeof(s->held[0].owner), "%s/%s", id, ifname);
	s->n++;
	s->has_last[set] = true;
	s->last[set] = *ip;
	*ret_reserved = true;
	return 0;
}

static bool fake_last(void *store, size_t set, struct ip_addr *ret)
{
	struct fake_store *s = store;

	if (s->has_last[set])
		*ret = s->last[set];
	return s->has_last[set];
}

static bool fake_owned(void *store, const char *id, const char *ifname,
		       const struct hl_range_set *set, struct ip_addr *ret)
{
	struct fake_store *s = store;
	char owner[64];

	snprintf(owner, sizeof(owner), "%s/%s", id, ifname);
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->held[i].owner, owner) == 0 && hl_range_set_find(set, &s->held[i].ip)) {
			*ret = s->held[i].ip;
			return true;
		}
	return false;
}

static const struct hl_store_ops ops = {
	.reserve = fake_reserve,
	.last_reserved = fake_last,
	.owned_in = fake_owned,
};

static struct cni_conf conf;
static struct hl_config cfg;

static void release(void)
{
	hl_config_free(&cfg);
	cni_conf_free(&conf);
}

static int setup(void **state)
{
	(void)state;
	fake = (struct fake_store){ 0 };
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	release();
	return 0;
}

static void config(const char *ipam)
{
	struct cni_args args = { 0 };
	struct cni_err err = { 0 };
	char json[2048];

	release();
	snprintf(json, sizeof(json), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"ipam\":{%s}}", ipam);
	assert_int_equal(cni_conf_parse(json, strlen(json), &conf, &err), 0);
	assert_int_equal(hl_config_load(&conf, &args, &cfg, &err), 0);
}

static struct ip_addr addr(const char *s)
{
	struct ip_addr a;

	assert_int_equal(hl_ip_parse(s, &a), 0);
	return a;
}

/* One ADD of set 0 for @id: "address/len gw" or "error <code>: <msg>". */
static const char *get(size_t set, const char *id, const char *requested)
{
	static char out[1200];
	char a[HL_IP_STRLEN], g[HL_IP_STRLEN];
	struct cni_err err = { 0 };
	struct ip_addr req;
	struct cni_ip ip;
	int r;

	if (requested)
		req = addr(requested);
	r = hl_alloc_get(&ops, &fake, &cfg.sets[set], set, id, "eth0", requested ? &req : NULL, &ip, &err);
	if (r < 0) {
		snprintf(out, sizeof(out), "error %d: %s", err.code, err.msg);
		return out;
	}
	assert_true(ip.has_gateway);
	snprintf(out, sizeof(out), "%s/%u %s", hl_ip_format(&ip.address.addr, a), ip.address.len,
		 hl_ip_format(&ip.gateway, g));
	return out;
}

/* A /29 handed out in order, the gateway skipped, then wrapping round to what was freed. */
static void test_in_order(void **state)
{
	(void)state;
	config("\"subnet\":\"10.0.0.0/29\"");
	assert_string_equal(get(0, "c1", NULL), "10.0.0.2/29 10.0.0.1");
	assert_string_equal(get(0, "c2", NULL), "10.0.0.3/29 10.0.0.1");
	assert_string_equal(get(0, "c3", NULL), "10.0.0.4/29 10.0.0.1");
	assert_string_equal(get(0, "c4", NULL), "10.0.0.5/29 10.0.0.1");
	assert_string_equal(get(0, "c5", NULL), "10.0.0.6/29 10.0.0.1");
	assert_string_equal(get(0, "c6", NULL),
			    "error 110: no IP addresses available in range set: 10.0.0.1-10.0.0.6");
	/* c2 leaves: the walk starts after .6, wraps and finds .3. */
	fake.held[1] = fake.held[--fake.n];
	assert_string_equal(get(0, "c7", NULL), "10.0.0.3/29 10.0.0.1");
}

/* The address after the last one reserved, even with lower ones free. */
static void test_last_reserved(void **state)
{
	(void)state;
	config("\"subnet\":\"10.0.0.0/24\"");
	fake.has_last[0] = true;
	fake.last[0] = addr("10.0.0.100");
	assert_string_equal(get(0, "c1", NULL), "10.0.0.101/24 10.0.0.1");
	/* The last one was the range's end: the next range's start (here the same range's). */
	fake.last[0] = addr("10.0.0.254");
	assert_string_equal(get(0, "c2", NULL), "10.0.0.2/24 10.0.0.1");
	/* Outside the set (the config changed): from the start. */
	fake.last[0] = addr("10.1.0.5");
	assert_string_equal(get(0, "c3", NULL), "10.0.0.3/24 10.0.0.1");
	/* Of another family. */
	fake.last[0] = addr("fd00::5");
	assert_string_equal(get(0, "c4", NULL), "10.0.0.4/24 10.0.0.1");
}

/* Across the ranges of a set, each with its own gateway and prefix. */
static void test_range_set(void **state)
{
	(void)state;
	config("\"ranges\":[[{\"subnet\":\"10.0.0.0/30\"},{\"subnet\":\"10.0.1.0/29\",\"rangeStart\":\"10.0.1.4\","
	       "\"gateway\":\"10.0.1.5\"}],[{\"subnet\":\"fd00::/126\"}]]");
	assert_string_equal(get(0, "c1", NULL), "10.0.0.2/30 10.0.0.1");
	assert_string_equal(get(0, "c2", NULL), "10.0.1.4/29 10.0.1.5");
	assert_string_equal(get(0, "c3", NULL), "10.0.1.6/29 10.0.1.5");
	assert_string_equal(get(0, "c4", NULL),
			    "error 110: no IP addresses available in range set: 10.0.0.1-10.0.0.2,10.0.1.4-10.0.1.6");
	assert_string_equal(get(1, "c1", NULL), "fd00::2/126 fd00::1");
	assert_string_equal(get(1, "c2", NULL), "fd00::3/126 fd00::1");
	assert_string_equal(get(1, "c3", NULL),
			    "error 110: no IP addresses available in range set: fd00::1-fd00::3");
}

/* A requested address: inside a set, not its gateway, free; no duplicate check. */
static void test_requested(void **state)
{
	(void)state;
	config("\"subnet\":\"10.0.0.0/24\",\"rangeStart\":\"10.0.0.10\",\"rangeEnd\":\"10.0.0.20\"");
	assert_string_equal(get(0, "c1", "10.0.0.15"), "10.0.0.15/24 10.0.0.1");
	assert_string_equal(get(0, "c2", "10.0.0.15"),
			    "error 111: requested IP address 10.0.0.15 is not available in range set "
			    "10.0.0.10-10.0.0.20");
	assert_string_equal(get(0, "c2", "10.0.0.9"),
			    "error 7: 10.0.0.9 not in range set 10.0.0.10-10.0.0.20");
	/* The next free one goes on from the requested address, the last one reserved. */
	assert_string_equal(get(0, "c3", NULL), "10.0.0.16/24 10.0.0.1");
	/* A requested address for an attachment that holds one: upstream takes it too. */
	assert_string_equal(get(0, "c1", "10.0.0.12"), "10.0.0.12/24 10.0.0.1");
	config("\"subnet\":\"10.0.0.0/24\"");
	assert_string_equal(get(0, "c4", "10.0.0.1"), "error 7: requested ip 10.0.0.1 is subnet's gateway");
}

/* An attachment that holds an address of the set gets no second one. */
static void test_duplicate(void **state)
{
	unsigned int calls;

	(void)state;
	config("\"subnet\":\"10.0.0.0/24\"");
	assert_string_equal(get(0, "c1", NULL), "10.0.0.2/24 10.0.0.1");
	calls = fake.reserve_calls;
	assert_string_equal(get(0, "c1", NULL),
			    "error 7: 10.0.0.2 has been allocated to c1, duplicate allocation is not allowed");
	assert_int_equal(fake.reserve_calls, calls);
}

/* Each candidate is asked once: a full /24 walked costs as many reserves as it holds. */
static void test_walk_cost(void **state)
{
	char id[16];

	(void)state;
	config("\"subnet\":\"10.0.0.0/24\"");
	for (int i = 0; i < 253; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		assert_null(strstr(get(0, id, NULL), "error"));
	}
	fake.reserve_calls = 0;
	assert_non_null(strstr(get(0, "cx", NULL), "error 110"));
	assert_int_equal(fake.reserve_calls, 253);
}

/* A store failure ends the walk with its error. */
static void test_store_failure(void **state)
{
	(void)state;
	config("\"subnet\":\"10.0.0.0/24\"");
	fake.fail_reserve = -EIO;
	assert_string_equal(get(0, "c1", NULL), "error 5: cannot write");
	assert_int_equal(fake.reserve_calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_reserved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_requested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_cost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_failure, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
