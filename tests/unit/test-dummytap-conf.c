/* Unit tests: dummy and tap config fields, precedence and refusals (no kernel involved) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/cni/plugin.h"
#include "common/net/tap.h"
#include "common/util/error.h"
#include "plugins/dummy/config.h"
#include "plugins/tap/config.h"

/* Strings in a loaded tap_conf point into the config: it lives until the next load. */
static struct cni_ctx loaded;

static void release_loaded(void)
{
	cni_args_free(&loaded.args);
	cni_conf_free(&loaded.conf);
}

static int teardown(void **state)
{
	(void)state;
	release_loaded();
	return 0;
}

static int parse(const char *json, const char *cni_args, struct cni_err *err)
{
	int r;

	release_loaded();
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	if (r < 0)
		return r;
	return cni_args_parse(cni_args, &loaded.args, err);
}

static int load_tap(const char *json, const char *cni_args, struct tap_conf *c, struct cni_err *err)
{
	int r = parse(json, cni_args, err);

	return r < 0 ? r : tap_config_load(&loaded, c, err);
}

static int load_dummy(const char *json, struct cni_err *err)
{
	int r = parse(json, "", err);

	return r < 0 ? r : dummy_config_load(&loaded, err);
}

static void check_err(int r, const struct cni_err *err, int code, const char *msg_part)
{
	assert_true(r < 0);
	assert_int_equal(err->code, code);
	if (!strstr(err->msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", err->msg, msg_part);
}

static void tap_refused(const char *json, const char *args, int code, const char *msg_part)
{
	struct tap_conf c;
	struct cni_err err = { 0 };

	check_err(load_tap(json, args, &c, &err), &err, code, msg_part);
}

#define V1 "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"tap\","

static void test_dummy_needs_ipam(void **state)
{
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load_dummy("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"dummy\","
				    "\"ipam\":{\"type\":\"host-local\"}}", &err), 0);
	check_err(load_dummy("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"dummy\"}", &err),
		  &err, CNI_ERR_INVALID_CONFIG, "requires an IPAM configuration");
	err = (struct cni_err){ 0 };
	check_err(load_dummy("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"ipam\":{}}", &err), &err,
		  CNI_ERR_INVALID_CONFIG, "requires an IPAM configuration");
	/* Old versions are fine: the result of a dummy always has addresses. */
	err = (struct cni_err){ 0 };
	assert_int_equal(load_dummy("{\"cniVersion\":\"0.1.0\",\"name\":\"n\","
				    "\"ipam\":{\"type\":\"static\"}}", &err), 0);
}

static void test_tap_defaults(void **state)
{
	struct tap_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load_tap(V1 "\"ipam\":{\"type\":\"host-local\"}}", "", &c, &err), 0);
	assert_false(c.multi_queue);
	assert_int_equal(c.mtu, 0);
	assert_false(c.has_mac);
	assert_int_equal(c.owner, NET_TAP_NOBODY);
	assert_int_equal(c.group, NET_TAP_NOBODY);
	assert_null(c.bridge);
	assert_true(c.has_ipam);
	/* L2 only: no IPAM at all, or an empty one. */
	assert_int_equal(load_tap(V1 "\"ipam\":{}}", "", &c, &err), 0);
	assert_false(c.has_ipam);
	assert_int_equal(load_tap(V1 "\"bridge\":\"\",\"selinuxContext\":\"\",\"mac\":\"\"}", "", &c,
				  &err), 0);
	assert_null(c.bridge);
	assert_false(c.has_mac);
}

static void test_tap_every_field(void **state)
{
	static const uint8_t mac[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee };
	struct tap_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load_tap(V1 "\"multiQueue\":true,\"mtu\":9000,\"mac\":\"02:AA:bb:cc:dd:ee\","
				  "\"owner\":0,\"group\":4294967294,\"bridge\":\"br0\"}", "", &c, &err), 0);
	assert_true(c.multi_queue);
	assert_int_equal(c.mtu, 9000);
	assert_true(c.has_mac);
	assert_memory_equal(c.mac, mac, 6);
	assert_int_equal(c.owner, 0);
	assert_int_equal(c.group, 4294967294U);
	assert_string_equal(c.bridge, "br0");
	assert_false(c.has_ipam);
	/* The range ends. */
	assert_int_equal(load_tap(V1 "\"mtu\":68,\"owner\":4294967294,\"group\":0}", "", &c, &err), 0);
	assert_int_equal(c.mtu, 68);
	assert_int_equal(c.owner, 4294967294U);
	assert_int_equal(c.group, 0);
	assert_int_equal(load_tap(V1 "\"mtu\":65535}", "", &c, &err), 0);
	assert_int_equal(c.mtu, 65535);
}

static void test_tap_mac_precedence(void **state)
{
	struct tap_conf c;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load_tap(V1 "\"mac\":\"02:00:00:00:00:01\"}", "MAC=02:00:00:00:00:02", &c,
				  &err), 0);
	assert_int_equal(c.mac[5], 2);
	assert_int_equal(load_tap(V1 "\"mac\":\"02:00:00:00:00:01\",\"runtimeConfig\":"
				  "{\"mac\":\"02:00:00:00:00:03\"}}", "MAC=02:00:00:00:00:02", &c, &err), 0);
	assert_int_equal(c.mac[5], 3);
	assert_int_equal(load_tap(V1 "\"mac\":\"02:00:00:00:00:01\"}", "IgnoreUnknown=1;X=y", &c,
				  &err), 0);
	assert_int_equal(c.mac[5], 1);
	/* A bad config mac is refused even when a later source would win. */
	tap_refused(V1 "\"mac\":\"bad\"}", "MAC=02:00:00:00:00:02", CNI_ERR_INVALID_CONFIG,
		    "from config \"mac\"");
}

static void test_tap_refusals(void **state)
{
	(void)state;
	/* Types: code 6 naming the key. */
	tap_refused(V1 "\"multiQueue\":\"yes\"}", "", CNI_ERR_DECODE, "multiQueue");
	tap_refused(V1 "\"mtu\":\"1500\"}", "", CNI_ERR_DECODE, "mtu");
	tap_refused(V1 "\"owner\":\"root\"}", "", CNI_ERR_DECODE, "owner");
	tap_refused(V1 "\"group\":1.5}", "", CNI_ERR_DECODE, "group");
	tap_refused(V1 "\"bridge\":[\"br0\"]}", "", CNI_ERR_DECODE, "bridge");
	tap_refused(V1 "\"mac\":1}", "", CNI_ERR_DECODE, "mac");
	tap_refused(V1 "\"selinuxContext\":{}}", "", CNI_ERR_DECODE, "selinuxContext");
	/* Ranges: code 7. */
	tap_refused(V1 "\"mtu\":-1}", "", CNI_ERR_INVALID_CONFIG, "mtu");
	tap_refused(V1 "\"mtu\":65536}", "", CNI_ERR_INVALID_CONFIG, "mtu");
	tap_refused(V1 "\"mtu\":67}", "", CNI_ERR_INVALID_CONFIG, "invalid MTU 67");
	tap_refused(V1 "\"owner\":-1}", "", CNI_ERR_INVALID_CONFIG, "owner");
	tap_refused(V1 "\"owner\":4294967295}", "", CNI_ERR_INVALID_CONFIG, "owner");
	tap_refused(V1 "\"group\":4294967296}", "", CNI_ERR_INVALID_CONFIG, "group");
	tap_refused(V1 "\"group\":-4294967296}", "", CNI_ERR_INVALID_CONFIG, "group");
	/* Names and MACs. */
	tap_refused(V1 "\"bridge\":\"abcdefghijklmnop\"}", "", CNI_ERR_INVALID_CONFIG,
		    "invalid bridge \"abcdefghijklmnop\"");
	tap_refused(V1 "\"bridge\":\"../x\"}", "", CNI_ERR_INVALID_CONFIG, "invalid bridge");
	tap_refused(V1 "\"bridge\":\"a\\nb\"}", "", CNI_ERR_INVALID_CONFIG, "invalid bridge \"a\\nb\"");
	tap_refused(V1 "\"mac\":\"zz:00:00:00:00:01\"}", "", CNI_ERR_INVALID_CONFIG, "invalid MAC");
	tap_refused(V1 "\"mac\":\"01:00:5e:00:00:01\"}", "", CNI_ERR_INVALID_CONFIG, "multicast");
	tap_refused(V1 "\"mac\":\"00:00:00:00:00:00\"}", "", CNI_ERR_INVALID_CONFIG, "all zero");
	tap_refused(V1 "\"runtimeConfig\":{\"mac\":\"nope\"}}", "", CNI_ERR_INVALID_CONFIG,
		    "runtimeConfig.mac");
	tap_refused(V1 "\"ipam\":{}}", "MAC=02:00:00:00:00", CNI_ERR_INVALID_CONFIG, "CNI_ARGS MAC");
	tap_refused(V1 "\"ipam\":{}}", "K8S_POD_NAME=p", CNI_ERR_INVALID_ENV, "K8S_POD_NAME");
	/* What this plugin cannot do is said, not ignored. */
	tap_refused(V1 "\"selinuxContext\":\"system_u:system_r:container_t:s0\"}", "",
		    CNI_ERR_UNSUPPORTED_FIELD, "selinuxContext");
	/* L2 at versions whose results hold only addresses. */
	tap_refused("{\"cniVersion\":\"0.2.0\",\"name\":\"n\",\"ipam\":{}}", "", CNI_ERR_INVALID_CONFIG,
		    "no valid IP addresses");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dummy_needs_ipam),
		cmocka_unit_test(test_tap_defaults),
		cmocka_unit_test(test_tap_every_field),
		cmocka_unit_test(test_tap_mac_precedence),
		cmocka_unit_test(test_tap_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
