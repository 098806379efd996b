/* Unit tests: bridge config, every key of upstream v1.9.1's: types, defaults, errors (no kernel) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/if_bridge.h>

#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/bridge/config.h"

/* Strings in a loaded bridge_conf point into the config: it lives until the next load. */
static struct cni_ctx loaded;
static char *loaded_json; /* the config keeps the bytes it was parsed from */
static struct bridge_conf c;

static void release_loaded(void)
{
	cni_args_free(&loaded.args);
	cni_conf_free(&loaded.conf);
	free(loaded_json);
	loaded_json = NULL;
}

static int teardown(void **state)
{
	(void)state;
	release_loaded();
	return 0;
}

/* A config of the given version and members (comma first), loaded with CNI_ARGS @args. */
static int load_v(const char *version, const char *members, const char *args, struct cni_err *err)
{
	size_t size = strlen(members) + 128;
	int r;

	release_loaded();
	loaded_json = malloc(size);
	assert_non_null(loaded_json);
	snprintf(loaded_json, size, "{\"cniVersion\":\"%s\",\"name\":\"n\",\"type\":\"bridge\"%s}",
		 version, members);
	r = cni_conf_parse(loaded_json, strlen(loaded_json), &loaded.conf, err);
	if (r < 0)
		return r;
	r = cni_args_parse(args, &loaded.args, err);
	if (r >= 0)
		r = bridge_config_load(&loaded, &c, err);
	return r;
}

static void loads(const char *members, const char *args)
{
	struct cni_err err = { 0 };

	if (load_v("1.0.0", members, args, &err) < 0)
		fail_msg("%s refused: %s", members, err.msg);
}

static void refused_v(const char *version, const char *members, const char *args, int code,
		      const char *msg_part)
{
	struct cni_err err = { 0 };

	if (load_v(version, members, args, &err) >= 0)
		fail_msg("%s loaded", members);
	if (err.code != code || !strstr(err.msg, msg_part))
		fail_msg("%s: code %d \"%s\", expected %d with \"%s\"", members, err.code, err.msg,
			 code, msg_part);
}

static void refused(const char *members, int code, const char *msg_part)
{
	refused_v("1.0.0", members, "", code, msg_part);
}

#define IPAM ",\"ipam\":{\"type\":\"host-local\"}"

static void test_defaults(void **state)
{
	(void)state;
	loads(IPAM, "");
	assert_string_equal(c.bridge, "cni0");
	assert_false(c.is_gw || c.is_default_gw || c.force_address || c.ip_masq || c.hairpin ||
		     c.promisc || c.preserve_default_vlan || c.macspoofchk || c.enable_dad ||
		     c.no_container_iface || c.port_isolation || c.trunk_given || c.has_mac);
	assert_int_equal(c.masq_backend, MASQ_DEFAULT);
	assert_int_equal(c.mtu, 0);
	assert_int_equal(c.vlan, 0);
	assert_int_equal(c.n_trunk, 0);
	assert_true(c.has_ipam);
	loads("", "");
	assert_false(c.has_ipam);
	loads(",\"ipam\":{}", "");
	assert_false(c.has_ipam);
}

/* Every boolean key on its own, read by its name as Go's decoder matches it (any case). */
static void test_booleans(void **state)
{
	static const struct {
		const char *key;
		size_t offset;
	} keys[] = {
		{ "isGateway", offsetof(struct bridge_conf, is_gw) },
		{ "forceAddress", offsetof(struct bridge_conf, force_address) },
		{ "ipMasq", offsetof(struct bridge_conf, ip_masq) },
		{ "hairpinMode", offsetof(struct bridge_conf, hairpin) },
		{ "promiscMode", offsetof(struct bridge_conf, promisc) },
		{ "preserveDefaultVlan", offsetof(struct bridge_conf, preserve_default_vlan) },
		{ "macspoofchk", offsetof(struct bridge_conf, macspoofchk) },
		{ "enabledad", offsetof(struct bridge_conf, enable_dad) },
		{ "portIsolation", offsetof(struct bridge_conf, port_isolation) },
	};
	char m[128];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		snprintf(m, sizeof(m), ",\"%s\":true" IPAM, keys[i].key);
		loads(m, "");
		assert_true(*(bool *)((char *)&c + keys[i].offset));
		snprintf(m, sizeof(m), ",\"%s\":false" IPAM, keys[i].key);
		loads(m, "");
		assert_false(*(bool *)((char *)&c + keys[i].offset));
		snprintf(m, sizeof(m), ",\"%s\":\"true\"" IPAM, keys[i].key);
		refused(m, CNI_ERR_DECODE, keys[i].key);
		snprintf(m, sizeof(m), ",\"%s\":1" IPAM, keys[i].key);
		refused(m, CNI_ERR_DECODE, keys[i].key);
	}
	loads(",\"ISGATEWAY\":true" IPAM, "");
	assert_true(c.is_gw);
	/* isDefaultGateway makes the bridge the gateway too, as upstream's cmdAdd(). */
	loads(",\"isDefaultGateway\":true" IPAM, "");
	assert_true(c.is_default_gw && c.is_gw);
	loads(",\"disableContainerInterface\":true", "");
	assert_true(c.no_container_iface);
	refused(",\"isDefaultGateway\":null,\"isGateway\":[]" IPAM, CNI_ERR_DECODE, "isGateway");
}

static void test_bridge_name(void **state)
{
	(void)state;
	loads(",\"bridge\":\"brt0\"" IPAM, "");
	assert_string_equal(c.bridge, "brt0");
	loads(",\"bridge\":\"br-abcdefghijkl\"" IPAM, "");
	assert_string_equal(c.bridge, "br-abcdefghijkl");
	refused(",\"bridge\":\"br-abcdefghijklm\"" IPAM, CNI_ERR_INVALID_CONFIG, "invalid bridge name");
	refused(",\"bridge\":\"\"" IPAM, CNI_ERR_INVALID_CONFIG, "invalid bridge name");
	refused(",\"bridge\":\"a/b\"" IPAM, CNI_ERR_INVALID_CONFIG, "invalid bridge name");
	refused(",\"bridge\":\"a b\"" IPAM, CNI_ERR_INVALID_CONFIG, "invalid bridge name");
	refused(",\"bridge\":\"..\"" IPAM, CNI_ERR_INVALID_CONFIG, "invalid bridge name");
	refused(",\"bridge\":7" IPAM, CNI_ERR_DECODE, "bridge");
}

static void test_mtu_and_vlan(void **state)
{
	char ifname[32];

	(void)state;
	loads(",\"mtu\":9000" IPAM, "");
	assert_int_equal(c.mtu, 9000);
	loads(",\"mtu\":68" IPAM, "");
	assert_int_equal(c.mtu, 68);
	loads(",\"mtu\":65535" IPAM, "");
	assert_int_equal(c.mtu, 65535);
	loads(",\"mtu\":0" IPAM, "");
	assert_int_equal(c.mtu, 0);
	refused(",\"mtu\":67" IPAM, CNI_ERR_INVALID_CONFIG, "invalid MTU 67");
	refused(",\"mtu\":65536" IPAM, CNI_ERR_INVALID_CONFIG, "invalid MTU 65536");
	refused(",\"mtu\":-1" IPAM, CNI_ERR_INVALID_CONFIG, "invalid MTU -1");
	refused(",\"mtu\":1500.5" IPAM, CNI_ERR_DECODE, "mtu");
	refused(",\"mtu\":\"1500\"" IPAM, CNI_ERR_DECODE, "mtu");
	loads(",\"vlan\":4094" IPAM, "");
	assert_int_equal(c.vlan, 4094);
	loads(",\"vlan\":0" IPAM, "");
	assert_int_equal(c.vlan, 0);
	refused(",\"vlan\":4095" IPAM, CNI_ERR_INVALID_CONFIG,
		"invalid VLAN ID 4095 (must be between 0 and 4094)");
	refused(",\"vlan\":-1" IPAM, CNI_ERR_INVALID_CONFIG, "invalid VLAN ID -1");
	refused(",\"vlan\":99999999999" IPAM, CNI_ERR_INVALID_CONFIG, "invalid VLAN ID");
	refused(",\"vlan\":true" IPAM, CNI_ERR_DECODE, "vlan");
	/* The gateway of a VLAN goes on "<bridge>.<vlan>", which must be an interface name. */
	loads(",\"bridge\":\"br34567890\",\"vlan\":4094,\"isGateway\":true" IPAM, "");
	assert_int_equal(bridge_config_vlan_ifname(&c, ifname, sizeof(ifname)), 0);
	assert_string_equal(ifname, "br34567890.4094");
	refused(",\"bridge\":\"br345678901\",\"vlan\":4094,\"isGateway\":true" IPAM,
		CNI_ERR_INVALID_CONFIG, "would be longer than 15 bytes");
	/* Without a gateway that name is never made. */
	loads(",\"bridge\":\"br345678901\",\"vlan\":4094" IPAM, "");
}

/* A trunk's VLANs, as upstream's collectVlanTrunk() gathers them: ranges, sorted, merged. */
static void test_trunk(void **state)
{
	(void)state;
	loads(",\"vlanTrunk\":null" IPAM, "");
	assert_false(c.trunk_given);
	loads(",\"vlanTrunk\":[]" IPAM, "");
	assert_true(c.trunk_given);
	assert_int_equal(c.n_trunk, 0);
	loads(",\"vlanTrunk\":[{\"id\":300},{\"minID\":200,\"maxID\":210},{\"id\":211},{\"id\":205},{}]" IPAM, "");
	assert_int_equal(c.n_trunk, 2);
	assert_int_equal(c.trunk[0].min, 200);
	assert_int_equal(c.trunk[0].max, 211);
	assert_int_equal(c.trunk[1].min, 300);
	assert_int_equal(c.trunk[1].max, 300);
	assert_int_equal(c.trunk[0].flags | c.trunk[1].flags, 0);
	/* An entry with a range and an id holds both. */
	loads(",\"vlanTrunk\":[{\"minID\":1,\"maxID\":2,\"id\":4094}]" IPAM, "");
	assert_int_equal(c.n_trunk, 2);
	assert_int_equal(c.trunk[1].min, 4094);
	loads(",\"vlanTrunk\":[{\"minID\":1,\"maxID\":4094}]" IPAM, "");
	assert_int_equal(c.n_trunk, 1);
	assert_int_equal(c.trunk[0].max, 4094);
	/* Every other VLAN: the most ranges there can be. */
	{
		char *m = malloc(2047 * 12 + 64);
		size_t n = 0;

		assert_non_null(m);
		n += (size_t)sprintf(m, ",\"vlanTrunk\":[");
		for (int v = 1; v <= 4094; v += 2)
			n += (size_t)sprintf(m + n, "%s{\"id\":%d}", v > 1 ? "," : "", v);
		sprintf(m + n, "]" IPAM);
		loads(m, "");
		free(m);
		assert_int_equal(c.n_trunk, BRIDGE_TRUNK_MAX);
		assert_int_equal(c.trunk[BRIDGE_TRUNK_MAX - 1].min, 4093);
	}
	refused(",\"vlanTrunk\":[{\"id\":0}]" IPAM, CNI_ERR_INVALID_CONFIG, "incorrect trunk id parameter");
	refused(",\"vlanTrunk\":[{\"id\":4095}]" IPAM, CNI_ERR_INVALID_CONFIG, "incorrect trunk id parameter");
	refused(",\"vlanTrunk\":[{\"minID\":0,\"maxID\":5}]" IPAM, CNI_ERR_INVALID_CONFIG,
		"incorrect trunk minID parameter");
	refused(",\"vlanTrunk\":[{\"minID\":5,\"maxID\":4095}]" IPAM, CNI_ERR_INVALID_CONFIG,
		"incorrect trunk maxID parameter");
	refused(",\"vlanTrunk\":[{\"minID\":6,\"maxID\":5}]" IPAM, CNI_ERR_INVALID_CONFIG,
		"minID is greater than maxID in trunk parameter");
	refused(",\"vlanTrunk\":[{\"maxID\":5}]" IPAM, CNI_ERR_INVALID_CONFIG,
		"minID and maxID should be configured simultaneously, minID is missing");
	refused(",\"vlanTrunk\":[{\"minID\":5}]" IPAM, CNI_ERR_INVALID_CONFIG,
		"minID and maxID should be configured simultaneously, maxID is missing");
	refused(",\"vlanTrunk\":[{\"id\":\"5\"}]" IPAM, CNI_ERR_DECODE, "vlanTrunk[0].id");
	refused(",\"vlanTrunk\":[{\"id\":1},{\"minID\":1.5,\"maxID\":2}]" IPAM, CNI_ERR_DECODE,
		"vlanTrunk[1].minID");
	refused(",\"vlanTrunk\":[null]" IPAM, CNI_ERR_DECODE, "vlanTrunk[0]: expected an object");
	refused(",\"vlanTrunk\":[5]" IPAM, CNI_ERR_DECODE, "vlanTrunk[0]: expected an object");
	refused(",\"vlanTrunk\":{\"id\":5}" IPAM, CNI_ERR_DECODE, "vlanTrunk");
}

/* The pod's MAC: CNI_ARGS MAC, then args.cni.mac, then runtimeConfig.mac, the last given wins. */
static void test_mac(void **state)
{
	(void)state;
	loads(IPAM, "IgnoreUnknown=1;MAC=02:00:00:00:00:01");
	assert_true(c.has_mac);
	assert_int_equal(c.mac[5], 1);
	loads(",\"args\":{\"cni\":{\"mac\":\"02:00:00:00:00:02\"}}" IPAM, "MAC=02:00:00:00:00:01");
	assert_int_equal(c.mac[5], 2);
	loads(",\"args\":{\"cni\":{\"mac\":\"02:00:00:00:00:02\"}},\"runtimeConfig\":{\"mac\":\"02:00:00:00:00:03\"}" IPAM,
	      "MAC=02:00:00:00:00:01");
	assert_int_equal(c.mac[5], 3);
	/* Upstream's bridge has no top-level "mac": it is not one of its keys. */
	loads(",\"mac\":\"02:00:00:00:00:04\"" IPAM, "");
	assert_false(c.has_mac);
	loads(",\"runtimeConfig\":{\"mac\":\"\"}" IPAM, "");
	assert_false(c.has_mac);
	refused_v("1.0.0", IPAM, "MAC=01:00:5e:00:00:01", CNI_ERR_INVALID_CONFIG, "multicast");
	refused(",\"args\":{\"cni\":{\"mac\":\"00:00:00:00:00:00\"}}" IPAM, CNI_ERR_INVALID_CONFIG,
		"args.cni.mac: all zero");
	refused(",\"runtimeConfig\":{\"mac\":\"02:00:00:00:00\"}" IPAM, CNI_ERR_INVALID_CONFIG,
		"invalid MAC address");
	refused(",\"runtimeConfig\":{\"mac\":7}" IPAM, CNI_ERR_DECODE, "runtimeConfig.mac");
	refused(",\"args\":{\"cni\":\"x\"}" IPAM, CNI_ERR_DECODE, "args.cni");
	refused_v("1.0.0", IPAM, "FOO=bar", CNI_ERR_INVALID_ENV, "FOO");
	loads(IPAM, "IgnoreUnknown=true;FOO=bar");
}

static void test_masq_backend(void **state)
{
	(void)state;
	loads(",\"ipMasq\":true,\"ipMasqBackend\":\"iptables\"" IPAM, "");
	assert_int_equal(c.masq_backend, MASQ_IPTABLES);
	loads(",\"ipMasq\":true,\"ipMasqBackend\":\"nftables\"" IPAM, "");
	assert_int_equal(c.masq_backend, MASQ_NFTABLES);
	loads(",\"ipMasq\":true" IPAM, "");
	assert_int_equal(c.masq_backend, MASQ_DEFAULT);
	refused(",\"ipMasq\":true,\"ipMasqBackend\":\"ebtables\"" IPAM, CNI_ERR_INVALID_CONFIG,
		"unknown ipmasq backend \"ebtables\"");
	refused(",\"ipMasq\":true,\"ipMasqBackend\":\"IPTABLES\"" IPAM, CNI_ERR_INVALID_CONFIG,
		"unknown ipmasq backend");
	/* Looked at only when masquerading, as upstream does. */
	loads(",\"ipMasqBackend\":\"ebtables\"" IPAM, "");
	assert_int_equal(c.masq_backend, MASQ_DEFAULT);
	loads(",\"ipMasq\":true,\"ipMasqBackend\":\"ebtables\"", "");
	refused(",\"ipMasqBackend\":5" IPAM, CNI_ERR_DECODE, "ipMasqBackend");
}

/* The combinations upstream refuses, and what no result of the version can say. */
static void test_combinations(void **state)
{
	(void)state;
	refused(",\"hairpinMode\":true,\"promiscMode\":true" IPAM, CNI_ERR_INVALID_CONFIG,
		"cannot set hairpin mode and promiscuous mode at the same time");
	refused(",\"disableContainerInterface\":true" IPAM, CNI_ERR_INVALID_CONFIG,
		"cannot use IPAM when DisableContainerInterface flag is set");
	refused_v("0.2.0", "", "", CNI_ERR_INVALID_CONFIG, "");
	refused_v("0.1.0", "", "", CNI_ERR_INVALID_CONFIG, "");
	loads(",\"hairpinMode\":true" IPAM, "");
	assert_int_equal(load_v("0.2.0", IPAM, "", &(struct cni_err){ 0 }), 0);
	assert_int_equal(load_v("0.3.0", "", "", &(struct cni_err){ 0 }), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_defaults, teardown),
		cmocka_unit_test_teardown(test_booleans, teardown),
		cmocka_unit_test_teardown(test_bridge_name, teardown),
		cmocka_unit_test_teardown(test_mtu_and_vlan, teardown),
		cmocka_unit_test_teardown(test_trunk, teardown),
		cmocka_unit_test_teardown(test_mac, teardown),
		cmocka_unit_test_teardown(test_masq_backend, teardown),
		cmocka_unit_test_teardown(test_combinations, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
