/* Unit tests: a deep copy of a result renders as the original, at every version, and outlives it */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/cni/result-copy.h"
#include "common/cni/result.h"
#include "common/util/error.h"

static const char full[] =
	"{\"cniVersion\":\"1.1.0\","
	"\"interfaces\":[{\"name\":\"net1\",\"mac\":\"02:00:00:00:00:01\",\"mtu\":9000,"
	"\"sandbox\":\"/var/run/netns/p\",\"socketPath\":\"/run/s.sock\",\"pciID\":\"0000:3b:00.1\"},"
	"{\"name\":\"host0\"}],"
	"\"ips\":[{\"address\":\"10.0.0.2/24\",\"gateway\":\"10.0.0.1\",\"interface\":0},"
	"{\"address\":\"fd00::2/64\"}],"
	"\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"10.0.0.1\",\"mtu\":1400,\"advmss\":1360,"
	"\"priority\":10,\"table\":100,\"scope\":0}],"
	"\"dns\":{\"nameservers\":[\"10.0.0.53\"],\"domain\":\"example.org\",\"search\":[\"a\",\"b\"],"
	"\"options\":[\"ndots:2\"]}}";

static void test_copy_renders_the_same(void **state)
{
	static const char *const versions[] = { "0.2.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0" };
	struct cni_result orig, copy;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(cni_result_parse(full, strlen(full), "1.1.0", &orig, &err), 0);
	assert_int_equal(cni_result_copy(&orig, &copy), 0);
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		char *a = NULL, *b = NULL;

		assert_int_equal(cni_result_to_json(&orig, versions[i], &a, &err), 0);
		assert_int_equal(cni_result_to_json(&copy, versions[i], &b, &err), 0);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	/* Nothing shared: the copy outlives the original. */
	cni_result_free(&orig);
	assert_string_equal(copy.ifaces[0].socket_path, "/run/s.sock");
	assert_string_equal(copy.ifaces[0].pci_id, "0000:3b:00.1");
	assert_int_equal(copy.ifaces[0].mtu, 9000);
	assert_null(copy.ifaces[1].sandbox);
	assert_string_equal(copy.dns.search[1], "b");
	assert_int_equal(copy.routes[0].table, 100);
	cni_result_free(&copy);
}

static void test_copy_empty(void **state)
{
	struct cni_result orig = { .cni_version = "1.0.0" }, copy;

	(void)state;
	assert_int_equal(cni_result_copy(&orig, &copy), 0);
	assert_string_equal(copy.cni_version, "1.0.0");
	assert_int_equal(copy.n_ifaces + copy.n_ips + copy.n_routes + copy.dns.n_nameservers, 0);
	assert_null(copy.dns.domain);
	cni_result_free(&copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_renders_the_same),
		cmocka_unit_test(test_copy_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
