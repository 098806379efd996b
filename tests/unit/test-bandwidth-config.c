/* Unit tests: bandwidth's keys (where they are read from, their types and refusals) and the
 * tbf qdiscs made of them, upstream's numbers */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/bandwidth/config.h"

static struct cni_ctx loaded;
static struct bandwidth_conf conf;

static int teardown(void **state)
{
	(void)state;
	cni_conf_free(&loaded.conf);
	return 0;
}

static int load(const char *members, struct cni_err *err)
{
	char json[4096];
	int r;

	cni_conf_free(&loaded.conf);
	snprintf(json, sizeof(json), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bandwidth\"%s%s}",
		 *members ? "," : "", members);
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	if (r >= 0)
		r = bandwidth_config_load(&loaded, &conf, err);
	return r;
}

static void expect_loaded(const char *members)
{
	struct cni_err err = { 0 };

	if (load(members, &err) < 0)
		fail_msg("%s: refused: %s", members, err.msg);
}

static void expect_refused(const char *members, int code, const char *part)
{
	struct cni_err err = { 0 };

	if (load(members, &err) >= 0)
		fail_msg("%s: accepted", members);
	if (err.code != code || !strstr(err.msg, part))
		fail_msg("%s: code %d \"%s\", not %d \"%s\"", members, err.code, err.msg, code, part);
}

static void test_sources(void **state)
{
	(void)state;
	expect_loaded("");
	assert_false(bandwidth_limit_set(&conf.ingress));
	assert_false(bandwidth_limit_set(&conf.egress));
	expect_loaded("\"ingressRate\":8000,\"ingressBurst\":80,\"egressRate\":16000,\"egressBurst\":160");
	assert_false(conf.from_runtime);
	assert_int_equal(conf.ingress.rate, 8000);
	assert_int_equal(conf.ingress.burst, 80);
	assert_int_equal(conf.egress.rate, 16000);
	assert_int_equal(conf.egress.burst, 160);
	expect_loaded("\"runtimeConfig\":{\"bandwidth\":{\"ingressRate\":8000,\"ingressBurst\":80}}");
	assert_true(conf.from_runtime);
	assert_true(bandwidth_limit_set(&conf.ingress));
	assert_false(bandwidth_limit_set(&conf.egress));
	/* Any top-level key wins, as Go makes the embedded entry for it: even one alone, even null. */
	expect_loaded("\"egressRate\":0,\"runtimeConfig\":{\"bandwidth\":{\"ingressRate\":8000,\"ingressBurst\":80}}");
	assert_false(conf.from_runtime);
	assert_false(bandwidth_limit_set(&conf.ingress));
	expect_loaded("\"INGRESSBURST\":null,\"runtimeConfig\":{\"bandwidth\":{\"ingressRate\":8000,\"ingressBurst\":80}}");
	assert_false(conf.from_runtime);
	assert_false(bandwidth_limit_set(&conf.ingress));
	/* Keys in any case; a null bandwidth is none. */
	expect_loaded("\"runtimeconfig\":{\"Bandwidth\":{\"EGRESSRATE\":8000,\"egressburst\":80}}");
	assert_true(bandwidth_limit_set(&conf.egress));
	expect_loaded("\"runtimeConfig\":{\"bandwidth\":null}");
	assert_false(conf.from_runtime);
	/* v1.9.1 has no shapedSubnets or unshapedSubnets: ignored as any unknown key. */
	expect_loaded("\"egressRate\":8000,\"egressBurst\":80,\"shapedSubnets\":[\"10.0.0.0/8\"],"
		      "\"unshapedSubnets\":7");
	assert_true(bandwidth_limit_set(&conf.egress));
}

static void test_refusals(void **state)
{
	(void)state;
	expect_refused("\"ingressRate\":8000", 7, "if rate is set, burst must also be set");
	expect_refused("\"egressBurst\":80", 7, "if burst is set, rate must also be set");
	expect_refused("\"runtimeConfig\":{\"bandwidth\":{\"egressRate\":8000}}", 7,
		       "if rate is set, burst must also be set");
	expect_refused("\"egressRate\":8000,\"egressBurst\":34359738360", 7, "burst cannot be more than 4GB");
	/* Under upstream's bound, but the queue's limit wraps there. */
	expect_refused("\"egressRate\":8000,\"egressBurst\":34359738352", 7, "4 GiB or more");
	expect_refused("\"ingressRate\":7,\"ingressBurst\":8000", 7, "less than 8 bits");
	expect_refused("\"ingressRate\":8000,\"ingressBurst\":7", 7, "less than 8 bits");
	expect_refused("\"egressRate\":18446744073709551615,\"egressBurst\":8000", 7, "4 GiB or more");
	/* 10 bytes at 1.25 GB/s: 8 ns, a bucket of no tick (upstream's ADD meets the kernel's EINVAL). */
	expect_refused("\"egressRate\":10000000000,\"egressBurst\":80", 7, "less than a byte");
	/* 1 byte at 1 MB/s: 1 us, 15 ticks of 64 ns, 0.96 bytes. */
	expect_refused("\"ingressRate\":8000000,\"ingressBurst\":8", 7, "less than a byte");
	expect_refused("\"ingressRate\":-1,\"ingressBurst\":8", 6, "field \"ingressRate\"");
	expect_refused("\"ingressRate\":1.5,\"ingressBurst\":8", 6, "field \"ingressRate\"");
	expect_refused("\"ingressRate\":\"8000\",\"ingressBurst\":8", 6, "field \"ingressRate\"");
	expect_refused("\"runtimeConfig\":{\"bandwidth\":{\"egressRate\":true,\"egressBurst\":8}}", 6,
		       "runtimeConfig.bandwidth.egressRate");
	expect_refused("\"runtimeConfig\":{\"bandwidth\":7}", 6, "bandwidth");
	expect_refused("\"runtimeConfig\":7", 6, "runtimeConfig");
}

static void test_tbf(void **state)
{
	struct bandwidth_limit l = { .rate = 8000000, .burst = 80000 };
	struct cni_err err = { 0 };
	struct tc_tbf t;

	(void)state;
	/* 1 MB/s, a 10 KB bucket: 10 ms, 156250 ticks of 64 ns; 25 ms of queue plus the bucket. */
	assert_int_equal(bandwidth_tbf(&l, "ingress", &t, &err), 0);
	assert_int_equal(t.rate, 1000000);
	assert_int_equal(t.buffer, 156250);
	assert_int_equal(t.limit, 25000 + 10000);
	/* A rate past 32 bits: 100 Gbit/s. */
	l = (struct bandwidth_limit){ .rate = 100000000000ULL, .burst = 80000000 };
	assert_int_equal(bandwidth_tbf(&l, "egress", &t, &err), 0);
	assert_int_equal(t.rate, 12500000000ULL);
	assert_int_equal(t.limit, 312500000 + 10000000);
	/* containerd's burst of 2^32 - 1 bits at 1 Mbit/s: tbf's largest bucket. */
	l = (struct bandwidth_limit){ .rate = 1000000, .burst = 4294967295ULL };
	assert_int_equal(bandwidth_tbf(&l, "egress", &t, &err), 0);
	assert_int_equal(t.buffer, UINT32_MAX);
	assert_int_equal(t.limit, 3125 + 536870911);
	/* Upstream truncates its float64s: 7 bytes at 3 bytes/s is 2333333(.3) us, 36458328 ticks. */
	l = (struct bandwidth_limit){ .rate = 24, .burst = 56 };
	assert_int_equal(bandwidth_tbf(&l, "egress", &t, &err), 0);
	assert_int_equal(t.buffer, 36458328);
	assert_int_equal(t.limit, 0 + 7);
	l = (struct bandwidth_limit){ .rate = 8, .burst = 4 };
	assert_int_equal(bandwidth_tbf(&l, "egress", &t, &err), -ERANGE);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	/*
	 * The bucket must hold a byte once cut to whole microseconds and ticks: 2 bytes at
	 * 1 MB/s (2 us, 31 ticks, 1.98 bytes) do; 1 byte (15 ticks, 0.96 bytes) does not, nor
	 * 1 byte at 2 MB/s (0.5 us, no tick).
	 */
	l = (struct bandwidth_limit){ .rate = 8000000, .burst = 16 };
	assert_int_equal(bandwidth_tbf(&l, "egress", &t, &err), 0);
	assert_int_equal(t.buffer, 31);
	l = (struct bandwidth_limit){ .rate = 8000000, .burst = 8 };
	assert_int_equal(bandwidth_tbf(&l, "egress", &t, &err), -ERANGE);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	err = (struct cni_err){ 0 };
	l = (struct bandwidth_limit){ .rate = 16000000, .burst = 8 };
	assert_int_equal(bandwidth_tbf(&l, "egress", &t, &err), -ERANGE);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sources, teardown),
		cmocka_unit_test_teardown(test_refusals, teardown),
		cmocka_unit_test(test_tbf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
