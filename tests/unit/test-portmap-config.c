/* Unit tests: portmap's keys (every one, its type, default and refusals), prevResult's addresses,
 * the backend options, and the nftables conditions ours reads */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "common/cni/plugin.h"
#include "common/netfilter/nft-rule.h"
#include "common/util/error.h"
#include "plugins/portmap/conditions.h"
#include "plugins/portmap/config.h"

static struct cni_ctx loaded;
static struct portmap_conf conf;

static int teardown(void **state)
{
	(void)state;
	portmap_config_free(&conf);
	cni_conf_free(&loaded.conf);
	return 0;
}

static int load(const char *members, struct cni_err *err)
{
	static char json[1 << 20];
	int r;

	portmap_config_free(&conf);
	cni_conf_free(&loaded.conf);
	loaded.env.ifname = "eth0";
	snprintf(json, sizeof(json), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"portmap\"%s%s}",
		 *members ? "," : "", members);
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	if (r >= 0)
		r = portmap_config_load(&loaded, &conf, err);
	return r;
}

static void expect_refused(const char *members, int code, const char *msg_part)
{
	struct cni_err err = { 0 };

	if (load(members, &err) >= 0)
		fail_msg("%s: accepted", members);
	if (err.code != code)
		fail_msg("%s: code %d (%s), not %d", members, err.code, err.msg, code);
	if (!strstr(err.msg, msg_part))
		fail_msg("%s: message \"%s\" lacks \"%s\"", members, err.msg, msg_part);
	/* Every refusal reads as upstream's. */
	if (strncmp(err.msg, "failed to parse config: ", 24) != 0)
		fail_msg("%s: message \"%s\" lacks upstream's prefix", members, err.msg);
}

static void expect_loaded(const char *members)
{
	struct cni_err err = { 0 };

	if (load(members, &err) < 0)
		fail_msg("%s: refused: %s", members, err.msg);
}

static void test_defaults(void **state)
{
	(void)state;
	expect_loaded("");
	assert_false(conf.backend_given);
	assert_true(conf.snat);
	assert_false(conf.masq_all);
	assert_int_equal(conf.mark_bit, PORTMAP_DEFAULT_MARK_BIT);
	assert_null(conf.set_mark_chain);
	assert_null(conf.cond4.v);
	assert_null(conf.cond6.v);
	assert_int_equal(conf.n_maps, 0);
	assert_false(conf.has_ip4);
	assert_false(conf.has_ip6);
	/* null is absent, as Go's decoder leaves a pointer nil */
	expect_loaded("\"snat\":null,\"markMasqBit\":null,\"conditionsV4\":null,\"backend\":null,"
		      "\"runtimeConfig\":{\"portMappings\":null}");
	assert_true(conf.snat);
	assert_int_equal(conf.mark_bit, 13);
	assert_false(conf.backend_given);
	assert_int_equal(conf.n_maps, 0);
	expect_loaded("\"runtimeConfig\":{}");
	assert_int_equal(conf.n_maps, 0);
}

static void test_every_key(void **state)
{
	(void)state;
	expect_loaded("\"backend\":\"nftables\",\"snat\":false,\"masqAll\":true,\"markMasqBit\":0,"
		      "\"conditionsV4\":[\"ip\",\"saddr\",\"10.0.0.0/8\"],\"conditionsV6\":[\"iifname eth0\"],"
		      "\"runtimeConfig\":{\"portMappings\":["
		      "{\"hostPort\":8080,\"containerPort\":80,\"protocol\":\"tcp\"},"
		      "{\"hostPort\":53,\"containerPort\":5353,\"protocol\":\"UDP\",\"hostIP\":\"192.0.2.1\"},"
		      "{\"hostPort\":9,\"containerPort\":9,\"protocol\":\"Sctp\",\"hostIP\":\"::\"},"
		      "{\"hostPort\":65535,\"containerPort\":1,\"protocol\":\"tcp\",\"hostIP\":\"::ffff:192.0.2.7\"},"
		      "{\"hostPort\":1,\"containerPort\":65535,\"protocol\":\"tcp\",\"hostIP\":\"\"}]}");
	assert_true(conf.backend_given);
	assert_int_equal(conf.backend, PORTMAP_NFTABLES);
	assert_false(conf.snat);
	assert_true(conf.masq_all);
	assert_int_equal(conf.mark_bit, 0);
	assert_int_equal(conf.cond4.n, 3);
	assert_string_equal(conf.cond4.v[2], "10.0.0.0/8");
	assert_int_equal(conf.cond6.n, 1);
	assert_int_equal(conf.n_maps, 5);
	assert_int_equal(conf.maps[0].host_port, 8080);
	assert_int_equal(conf.maps[0].container_port, 80);
	assert_int_equal(conf.maps[0].proto, IPPROTO_TCP);
	assert_false(conf.maps[0].has_host_ip);
	assert_false(conf.maps[0].host_ip_unspecified);
	assert_int_equal(conf.maps[1].proto, IPPROTO_UDP);
	assert_string_equal(conf.maps[1].proto_name, "udp");
	assert_true(conf.maps[1].has_host_ip);
	assert_int_equal(conf.maps[1].host_ip.family, AF_INET);
	assert_int_equal(conf.maps[2].proto, IPPROTO_SCTP);
	assert_string_equal(conf.maps[2].proto_name, "sctp");
	assert_false(conf.maps[2].has_host_ip);
	assert_true(conf.maps[2].host_ip_unspecified);
	assert_int_equal(conf.maps[2].host_ip.family, AF_INET6);
	/* An IPv4-mapped address is IPv4, as Go's To4() reads it. */
	assert_int_equal(conf.maps[3].host_ip.family, AF_INET);
	assert_int_equal(conf.maps[3].host_ip.bytes[3], 7);
	assert_false(conf.maps[4].has_host_ip);
	expect_loaded("\"backend\":\"iptables\",\"externalSetMarkChain\":\"KUBE-MARK-MASQ\","
		      "\"conditionsV4\":[\"-s\",\"10.0.0.0/8\"],\"conditionsV6\":[\"!\",\"-d\",\"::1\"]");
	assert_int_equal(conf.backend, PORTMAP_IPTABLES);
	assert_string_equal(conf.set_mark_chain, "KUBE-MARK-MASQ");
	expect_loaded("\"markMasqBit\":31");
	assert_int_equal(conf.mark_bit, 31);
	/* Keys are matched as Go matches them: any case. */
	expect_loaded("\"SNAT\":false,\"MarkMasqBit\":7,\"runtimeconfig\":{\"PORTMAPPINGS\":"
		      "[{\"hostport\":1,\"CONTAINERPORT\":2,\"Protocol\":\"tcp\"}]}");
	assert_false(conf.snat);
	assert_int_equal(conf.mark_bit, 7);
	assert_int_equal(conf.n_maps, 1);
	assert_int_equal(conf.maps[0].container_port, 2);
}

static void test_refusals(void **state)
{
	char many[PORTMAP_MAX_MAPPINGS * 60 + 200];
	size_t len;

	(void)state;
	expect_refused("\"backend\":\"ebpf\"", 7, "unrecognized backend \"ebpf\"");
	expect_refused("\"backend\":1", 6, "backend");
	expect_refused("\"snat\":\"yes\"", 6, "snat");
	expect_refused("\"masqAll\":1", 6, "masqAll");
	expect_refused("\"markMasqBit\":32", 7, "MasqMarkBit must be between 0 and 31");
	expect_refused("\"markMasqBit\":-1", 7, "MasqMarkBit must be between 0 and 31");
	expect_refused("\"markMasqBit\":1.5", 6, "markMasqBit");
	expect_refused("\"markMasqBit\":\"13\"", 6, "markMasqBit");
	expect_refused("\"markMasqBit\":1,\"externalSetMarkChain\":\"X\"", 7,
		       "Cannot specify externalSetMarkChain and markMasqBit");
	expect_refused("\"externalSetMarkChain\":\"\"", 7, "not an iptables chain name");
	expect_refused("\"externalSetMarkChain\":\"A B\"", 7, "not an iptables chain name");
	expect_refused("\"externalSetMarkChain\":\"-A\"", 7, "not an iptables chain name");
	expect_refused("\"externalSetMarkChain\":\"ABCDEFGHIJKLMNOPQRSTUVWXYZ123\"", 7,
		       "not an iptables chain name");
	expect_refused("\"externalSetMarkChain\":\"A\\\"B\"", 7, "not an iptables chain name");
	expect_refused("\"externalSetMarkChain\":7", 6, "externalSetMarkChain");
	expect_refused("\"conditionsV4\":\"-s 1.2.3.4\"", 6, "conditionsV4");
	expect_refused("\"conditionsV4\":[1]", 6, "conditionsV4");
	expect_refused("\"conditionsV6\":[\"a\\nb\"]", 7, "control character");
	expect_refused("\"conditionsV6\":[\"a\\tb\"]", 7, "control character");
	expect_refused("\"conditionsV4\":[\"a\\u007fb\"]", 7, "control character");
	expect_refused("\"runtimeConfig\":[]", 6, "runtimeConfig");
	expect_refused("\"runtimeConfig\":{\"portMappings\":{}}", 6, "portMappings");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[7]}", 6, "portMappings[0]");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":0,\"containerPort\":1,"
		       "\"protocol\":\"tcp\"}]}", 7, "Invalid host port number: 0");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":65536,\"containerPort\":1,"
		       "\"protocol\":\"tcp\"}]}", 7, "Invalid host port number: 65536");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":1,\"containerPort\":0,"
		       "\"protocol\":\"tcp\"}]}", 7, "Invalid container port number: 0");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":1,\"protocol\":\"tcp\"}]}",
		       7, "Invalid container port number: 0");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":1,\"containerPort\":"
		       "9223372036854775807,\"protocol\":\"tcp\"}]}", 7, "Invalid container port number");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":\"80\",\"containerPort\":1,"
		       "\"protocol\":\"tcp\"}]}", 6, "hostPort");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":1,\"containerPort\":1,"
		       "\"protocol\":\"icmp\"}]}", 7, "protocol \"icmp\": tcp, udp or sctp");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":1,\"containerPort\":1}]}", 7,
		       "protocol \"\"");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":1,\"containerPort\":1,"
		       "\"protocol\":6}]}", 6, "protocol");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":1,\"containerPort\":1,"
		       "\"protocol\":\"tcp\",\"hostIP\":\"localhost\"}]}", 7,
		       "hostIP \"localhost\" is not an IP address");
	expect_refused("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":1,\"containerPort\":1,"
		       "\"protocol\":\"tcp\",\"hostIP\":\"10.0.0.0/8\"}]}", 7, "is not an IP address");
	/* Options of the other backend, as upstream names them. */
	expect_refused("\"backend\":\"nftables\",\"externalSetMarkChain\":\"X\"", 7,
		       "nftables backend was requested but configuration contains iptables-specific "
		       "options [externalSetMarkChain]");
	expect_refused("\"backend\":\"iptables\",\"conditionsV4\":[\"ip\"],\"conditionsV6\":[\"ip6\"]",
		       7, "iptables backend was requested but configuration contains nftables-specific "
		       "options [conditionsV4 conditionsV6]");
	expect_refused("\"backend\":\"nftables\",\"conditionsV6\":[\"!\",\"-d\",\"::1\"]", 7,
		       "iptables-specific options [conditionsV6]");
	/* One mapping past the bound. */
	len = (size_t)snprintf(many, sizeof(many), "\"runtimeConfig\":{\"portMappings\":[");
	for (int i = 0; i <= PORTMAP_MAX_MAPPINGS; i++)
		len += (size_t)snprintf(many + len, sizeof(many) - len,
					"%s{\"hostPort\":%d,\"containerPort\":80,\"protocol\":\"tcp\"}",
					i ? "," : "", 1 + i);
	snprintf(many + len, sizeof(many) - len, "]}");
	expect_refused(many, 7, "4097 mappings, at most 4096");
}

static void test_backend_options(void **state)
{
	struct portmap_conditions c = { 0 };
	static char e0[] = "", e1[] = "-s", e2[] = "!", e3[] = "ip", e4[] = "iifname";
	char *v[] = { e0, e1, e2, e3, e4 };
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(portmap_conditions_backend(&c), -1);
	c.v = v;
	c.n = 1;
	assert_int_equal(portmap_conditions_backend(&c), -1);
	c.v = v + 1;
	assert_int_equal(portmap_conditions_backend(&c), PORTMAP_IPTABLES);
	c.v = v + 2;
	assert_int_equal(portmap_conditions_backend(&c), PORTMAP_IPTABLES);
	c.v = v + 3;
	assert_int_equal(portmap_conditions_backend(&c), PORTMAP_NFTABLES);
	/* Without a backend named, its options are checked against the one the node gives. */
	expect_loaded("\"conditionsV4\":[\"ip\",\"saddr\",\"10.0.0.1\"]");
	conf.backend = PORTMAP_NFTABLES;
	assert_int_equal(portmap_config_check_backend(&conf, &err), 0);
	conf.backend = PORTMAP_IPTABLES;
	assert_int_equal(portmap_config_check_backend(&conf, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "iptables backend was requested but configuration contains "
				       "nftables-specific options [conditionsV4]"));
}

static void test_addresses(void **state)
{
	char buf[IP_PREFIX_STRLEN];

	(void)state;
	/* The first of each family whose interface is CNI_IFNAME in a sandbox. */
	expect_loaded("\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"veth1\"},"
		      "{\"name\":\"eth0\",\"sandbox\":\"/run/netns/p\"},{\"name\":\"net1\",\"sandbox\":\"/x\"}],"
		      "\"ips\":[{\"address\":\"10.0.0.1/24\",\"interface\":0},"
		      "{\"address\":\"10.0.1.1/24\",\"interface\":2},"
		      "{\"address\":\"10.0.2.1/16\",\"interface\":1},"
		      "{\"address\":\"10.0.3.1/24\",\"interface\":1},"
		      "{\"address\":\"fd00::1/64\",\"interface\":1}]}");
	assert_true(conf.has_ip4);
	assert_string_equal(ip_prefix_format(&conf.ip4, buf, sizeof(buf)), "10.0.2.1/16");
	assert_true(conf.has_ip6);
	assert_string_equal(ip_prefix_format(&conf.ip6, buf, sizeof(buf)), "fd00::1/64");
	/* An address naming no interface counts; a host-side one does not. */
	expect_loaded("\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\"}],"
		      "\"ips\":[{\"address\":\"10.0.0.1/24\",\"interface\":0},{\"address\":\"10.0.9.9/24\"}]}");
	assert_true(conf.has_ip4);
	assert_string_equal(ip_prefix_format(&conf.ip4, buf, sizeof(buf)), "10.0.9.9/24");
	assert_false(conf.has_ip6);
	/* A 0.2.0 result (no interfaces). */
	expect_loaded("\"prevResult\":{\"cniVersion\":\"0.2.0\",\"ip4\":{\"ip\":\"10.1.0.5/24\"}}");
	assert_true(conf.has_ip4);
	expect_loaded("\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth1\","
		      "\"sandbox\":\"/x\"}],\"ips\":[{\"address\":\"10.0.0.1/24\",\"interface\":0}]}");
	assert_false(conf.has_ip4);
}

static void test_mapping_families(void **state)
{
	(void)state;
	expect_loaded("\"runtimeConfig\":{\"portMappings\":["
		      "{\"hostPort\":1,\"containerPort\":1,\"protocol\":\"tcp\"},"
		      "{\"hostPort\":2,\"containerPort\":1,\"protocol\":\"tcp\",\"hostIP\":\"192.0.2.1\"},"
		      "{\"hostPort\":3,\"containerPort\":1,\"protocol\":\"tcp\",\"hostIP\":\"0.0.0.0\"},"
		      "{\"hostPort\":4,\"containerPort\":1,\"protocol\":\"tcp\",\"hostIP\":\"2001:db8::1\"},"
		      "{\"hostPort\":5,\"containerPort\":1,\"protocol\":\"tcp\",\"hostIP\":\"::\"}]}");
	assert_true(portmap_mapping_in(&conf.maps[0], false));
	assert_true(portmap_mapping_in(&conf.maps[0], true));
	assert_true(portmap_mapping_in(&conf.maps[1], false));
	assert_false(portmap_mapping_in(&conf.maps[1], true));
	/* "0.0.0.0" is every IPv4 address, and only those. */
	assert_true(portmap_mapping_in(&conf.maps[2], false));
	assert_false(portmap_mapping_in(&conf.maps[2], true));
	assert_false(portmap_mapping_in(&conf.maps[3], false));
	assert_true(portmap_mapping_in(&conf.maps[3], true));
	assert_false(portmap_mapping_in(&conf.maps[4], false));
	assert_true(portmap_mapping_in(&conf.maps[4], true));
}

/* conditions WORDS... into a rule of @family: 0, or the refusal's code and message. */
static int condition(enum nft_family family, const char *const *words, size_t n,
		     struct cni_err *err)
{
	struct portmap_conditions c = { .v = (char **)words, .n = n };
	struct nft_rule *r;
	int ret;

	assert_int_equal(nft_rule_new(family, &r), 0);
	ret = portmap_nft_conditions(r, &c, family == NFT_FAMILY_IP6 ? "conditionsV6" : "conditionsV4",
				     err);
	nft_rule_free(r);
	return ret;
}

#define ACCEPTED(fam, ...)                                                                    \
	do {                                                                                   \
		const char *const w[] = { __VA_ARGS__ };                                       \
		struct cni_err e = { 0 };                                                      \
		if (condition(fam, w, ARRAY_SIZE(w), &e) < 0)                                  \
			fail_msg("%s: refused: %s", w[0], e.msg);                              \
	} while (0)

#define REFUSED(fam, part, ...)                                                               \
	do {                                                                                   \
		const char *const w[] = { __VA_ARGS__ };                                       \
		struct cni_err e = { 0 };                                                      \
		if (condition(fam, w, ARRAY_SIZE(w), &e) >= 0)                                 \
			fail_msg("%s: accepted", w[0]);                                         \
		assert_int_equal(e.code, CNI_ERR_INVALID_CONFIG);                              \
		if (!strstr(e.msg, part))                                                      \
			fail_msg("%s: message \"%s\" lacks \"%s\"", w[0], e.msg, part);         \
	} while (0)

static void test_nft_conditions(void **state)
{
	(void)state;
	ACCEPTED(NFT_FAMILY_IP, "ip", "saddr", "10.0.0.1");
	ACCEPTED(NFT_FAMILY_IP, "ip saddr != 10.0.0.0/8", "ip daddr == 192.0.2.0/24");
	ACCEPTED(NFT_FAMILY_IP, "iifname", "eth0", "oifname", "!=", "\"eth1\"");
	ACCEPTED(NFT_FAMILY_IP, "meta iifname eth0");
	ACCEPTED(NFT_FAMILY_IP, "tcp dport 80", "udp sport == 53", "sctp dport 9");
	ACCEPTED(NFT_FAMILY_IP6, "ip6", "daddr", "2001:db8::/32", "ip6 saddr fd00::1");
	/* Blanks are separators wherever they are. */
	ACCEPTED(NFT_FAMILY_IP, "  ip    saddr", "   10.0.0.1   ");
	ACCEPTED(NFT_FAMILY_IP, "");
	REFUSED(NFT_FAMILY_IP, "not a condition ours reads", "ct", "state", "new");
	REFUSED(NFT_FAMILY_IP, "not a condition ours reads", "ip6", "saddr", "::1");
	REFUSED(NFT_FAMILY_IP6, "not a condition ours reads", "ip", "saddr", "10.0.0.1");
	REFUSED(NFT_FAMILY_IP, "an IPv4 address or prefix expected", "ip", "saddr", "fd00::1");
	REFUSED(NFT_FAMILY_IP6, "an IPv6 address or prefix expected", "ip6", "saddr", "10.0.0.1");
	REFUSED(NFT_FAMILY_IP, "an IPv4 address or prefix expected", "ip saddr 10.0.0.0/0");
	REFUSED(NFT_FAMILY_IP, "an IPv4 address or prefix expected", "ip saddr 10.0.0.0/33");
	REFUSED(NFT_FAMILY_IP, "saddr or daddr expected", "ip", "protocol", "tcp");
	REFUSED(NFT_FAMILY_IP, "an address expected", "ip", "saddr");
	REFUSED(NFT_FAMILY_IP, "an address expected", "ip saddr !=");
	REFUSED(NFT_FAMILY_IP, "no wildcard", "iifname", "eth*");
	REFUSED(NFT_FAMILY_IP, "no wildcard", "iifname", "abcdefghijklmnop");
	REFUSED(NFT_FAMILY_IP, "no wildcard", "iifname", "\"\"");
	REFUSED(NFT_FAMILY_IP, "an interface name expected", "oifname");
	REFUSED(NFT_FAMILY_IP, "a port from 1 to 65535 expected", "tcp dport 0");
	REFUSED(NFT_FAMILY_IP, "a port from 1 to 65535 expected", "tcp dport 65536");
	REFUSED(NFT_FAMILY_IP, "a port from 1 to 65535 expected", "tcp dport http");
	REFUSED(NFT_FAMILY_IP, "a port from 1 to 65535 expected", "tcp dport -1");
	REFUSED(NFT_FAMILY_IP, "sport or dport expected", "tcp flags syn");
	REFUSED(NFT_FAMILY_IP, "a port expected", "udp dport");
	REFUSED(NFT_FAMILY_IP, "not a condition ours reads", "meta", "mark", "0x1");
	REFUSED(NFT_FAMILY_IP, "(word 4)", "ip saddr 10.0.0.1", "drop");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_defaults, teardown),
		cmocka_unit_test_teardown(test_every_key, teardown),
		cmocka_unit_test_teardown(test_refusals, teardown),
		cmocka_unit_test_teardown(test_backend_options, teardown),
		cmocka_unit_test_teardown(test_addresses, teardown),
		cmocka_unit_test_teardown(test_mapping_families, teardown),
		cmocka_unit_test(test_nft_conditions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
