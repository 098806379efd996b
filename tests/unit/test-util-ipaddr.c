/* Unit tests: IP address parsing and arithmetic */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "common/util/ipaddr.h"

static void test_parse_format(void **state)
{
	static const char *const round[] = { "10.1.2.3/24", "0.0.0.0/0", "192.168.5.255/32",
					     "fd52:2eb5:44::2/48", "::/0", "::1/128" };
	char buf[IP_PREFIX_STRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(round) / sizeof(round[0]); i++) {
		struct ip_prefix p;

		assert_int_equal(ip_prefix_parse(round[i], &p), 0);
		assert_string_equal(ip_prefix_format(&p, buf, sizeof(buf)), round[i]);
	}
}

static void test_parse_rejects(void **state)
{
	static const char *const bad[] = { "10.1.2.3", "10.1.2.3/33", "10.1.2/24", "::1/129",
					   "10.1.2.3/-1", "10.1.2.3/ 8", "/24", "10.1.2.3/24x",
					   "10.1.2.3/0024", "" };
	struct ip_prefix p;
	struct ip_addr a;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ip_prefix_parse(bad[i], &p), -EINVAL);
	assert_int_equal(ip_addr_parse("256.1.1.1", &a), -EINVAL);
	assert_int_equal(ip_addr_parse("10.0.0.1/8", &a), -EINVAL);
}

static void test_network_contains(void **state)
{
	struct ip_prefix p, n;
	struct ip_addr in, out, v6;
	char buf[IP_PREFIX_STRLEN];

	(void)state;
	assert_int_equal(ip_prefix_parse("192.168.5.77/27", &p), 0);
	n = ip_prefix_network(&p);
	assert_string_equal(ip_prefix_format(&n, buf, sizeof(buf)), "192.168.5.64/27");
	assert_int_equal(ip_addr_parse("192.168.5.95", &in), 0);
	assert_int_equal(ip_addr_parse("192.168.5.96", &out), 0);
	assert_int_equal(ip_addr_parse("::1", &v6), 0);
	assert_true(ip_prefix_contains(&p, &in));
	assert_false(ip_prefix_contains(&p, &out));
	assert_false(ip_prefix_contains(&p, &v6));
	assert_int_equal(v6.family, AF_INET6);
	assert_false(ip_addr_equal(&in, &out));
}

/* IPv4 before IPv6, then by value: the order the allocator searches held addresses in. */
static void test_order(void **state)
{
	static const char *const sorted[] = { "0.0.0.0", "10.0.0.2", "10.0.0.10", "10.0.1.1",
					      "255.255.255.255", "::", "::1", "fd00::2", "fd00::10" };
	struct ip_addr a, b;

	(void)state;
	for (size_t i = 0; i < sizeof(sorted) / sizeof(sorted[0]); i++) {
		assert_int_equal(ip_addr_parse(sorted[i], &a), 0);
		assert_int_equal(ip_addr_cmp(&a, &a), 0);
		for (size_t k = i + 1; k < sizeof(sorted) / sizeof(sorted[0]); k++) {
			assert_int_equal(ip_addr_parse(sorted[k], &b), 0);
			assert_true(ip_addr_cmp(&a, &b) < 0);
			assert_true(ip_addr_cmp(&b, &a) > 0);
			assert_false(ip_addr_equal(&a, &b));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_network_contains),
		cmocka_unit_test(test_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
