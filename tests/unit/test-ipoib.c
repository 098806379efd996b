/* Unit tests: the ipoib plugin's config, ADD, DEL and CHECK against a fake of common/net */
#include <errno.h>
#include <net/if_arp.h>
#include <linux/if_link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/attach/attach.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/text.h"
#include "plugins/ipoib/config.h"
#include "plugins/ipoib/ipoib.h"
#include "tests/unit/fake-net.h"
#include "tests/unit/fake-sysfs.h"

#define POD_NETNS "/var/run/netns/pod1"
#define CONTAINER "c0ffee"
#define ALIAS "cni-ipoib c0ffee net1"

/* The NADs the Network Operator renders from an IPoIBNetwork (reference doc, B1/B3). */
static const char nad_nvipam[] =
	"{ \"cniVersion\":\"0.3.1\", \"name\":\"example-ipoibnetwork\", \"type\":\"ipoib\", "
	"\"master\": \"ib0\", \"ipam\":{\"type\":\"nv-ipam\",\"poolName\":\"my-pool\"} }";
static const char nad_whereabouts[] =
	"{ \"cniVersion\":\"0.3.1\", \"name\":\"example-ipoibnetwork\", \"type\":\"ipoib\", "
	"\"master\": \"ib0\", \"ipam\":{\"type\":\"whereabouts\",\"range\":\"192.168.6.225/28\","
	"\"exclude\":[\"192.168.6.229/30\",\"192.168.6.236/32\"]} }";
static const char nad_l2[] =
	"{ \"cniVersion\":\"0.3.1\", \"name\":\"example-ipoibnetwork\", \"type\":\"ipoib\", "
	"\"master\": \"ib0\", \"ipam\":{} }";

static const char ipam_v4[] =
	"{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"192.168.0.5/24\",\"gateway\":\"192.168.0.1\"}],"
	"\"routes\":[{\"dst\":\"0.0.0.0/0\"}],\"dns\":{\"nameservers\":[\"10.0.0.53\"]}}";

static struct cni_ctx ctx;
static struct cni_err err;
static int pod;

/* The host has ib0 (an IPoIB master, pkey 0xffff, datagram) and a veth; the pod has lo. */
static void world(const char *ipam_result)
{
	static const uint8_t ib_addr[20] = { 0x80, 0x00, 0x00, 0x48, 0xfe, 0x80, 0, 0, 0, 0,
					     0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x0d, 0x7d, 0x11 };
	struct net_link *ib0;

	fake_net_reset(ipam_result);
	ib0 = fake_net_add_link(0, "ib0", "ipoib", ARPHRD_INFINIBAND, 2044);
	ib0->ipoib_pkey = 0xffff;
	ib0->ipoib_mode = IPOIB_MODE_DATAGRAM;
	ib0->ipoib_umcast = 1;
	memcpy(ib0->hwaddr, ib_addr, sizeof(ib_addr));
	ib0->hwaddr_len = sizeof(ib_addr);
	fake_net_add_link(0, "eth0", "veth", ARPHRD_ETHER, 1500);
	pod = fake_net_add_netns(POD_NETNS);
	fake_net_add_link(pod, "lo", "", ARPHRD_LOOPBACK, 65536);
}

/* Nothing of ours anywhere: the state world() made. */
static void assert_pristine(void)
{
	assert_int_equal(fake_net_count(0), 2);
	assert_non_null(fake_net_find(0, "ib0"));
	assert_non_null(fake_net_find(0, "eth0"));
	assert_int_equal(fake_net_count(pod), 1);
	assert_non_null(fake_net_find(pod, "lo"));
	assert_int_equal(fake_net.ipam_allocated, 0);
}

/* The config must outlive the context: conf.raw points into it. */
static char conf_buf[8192];

static int load(enum cni_command cmd, const char *json)
{
	cni_conf_free(&ctx.conf);
	memset(&err, 0, sizeof(err));
	snprintf(conf_buf, sizeof(conf_buf), "%s", json);
	ctx.env = (struct cni_env){
		.command = cmd,
		.command_name = cni_command_name(cmd),
		.container_id = CONTAINER,
		.netns = POD_NETNS,
		.ifname = "net1",
		.args = "",
		.path = "/opt/cni/bin",
	};
	/* As the dispatch does before every ADD, DEL and CHECK. */
	cni_plugin_open_netns(&ctx);
	return cni_conf_parse(conf_buf, strlen(conf_buf), &ctx.conf, &err);
}

static int teardown(void **state)
{
	(void)state;
	cni_conf_free(&ctx.conf);
	return 0;
}

static int run_add(const char *json, struct cni_result *res)
{
	assert_int_equal(load(CNI_CMD_ADD, json), 0);
	memset(res, 0, sizeof(*res));
	return ipoib_plugin.add(&ctx, res, &err);
}

static int run_del(const char *json)
{
	assert_int_equal(load(CNI_CMD_DEL, json), 0);
	return ipoib_plugin.del(&ctx, &err);
}

/*
 * The log with the attachment's temporary name replaced by cniibXXXXXXXX: the
 * name FNV-1a of "<container id>\0<ifname>" gives (any other name stays and
 * fails the comparison).
 */
static const char *canonical_log(void)
{
	static char out[FAKE_NET_LOG_SIZE];
	const char *in = fake_net_log_lines();
	char tmp[IFNAMSIZ];
	size_t o = 0;

	snprintf(tmp, sizeof(tmp), "cniib%010llx",
		 (unsigned long long)(text_hash64(ctx.env.ifname, strlen(ctx.env.ifname),
						  text_hash64(ctx.env.container_id,
							      strlen(ctx.env.container_id) + 1,
							      TEXT_HASH64_INIT)) &
				      0xffffffffffULL));
	for (size_t i = 0; in[i] && o + 1 < sizeof(out);) {
		if (strncmp(in + i, tmp, strlen(tmp)) == 0) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "cniibXXXXXXXX");
			i += strlen(tmp);
		} else {
			out[o++] = in[i++];
		}
	}
	out[o] = '\0';
	return out;
}

static void assert_log(const char *want)
{
	const char *got = canonical_log();

	if (strcmp(got, want) != 0)
		fail_msg("operations:\n%s\nexpected:\n%s", got, want);
}

/* --- config ----------------------------------------------------------------------------- */

static int load_conf(const char *json, struct ipoib_conf *c)
{
	int r = load(CNI_CMD_ADD, json);

	return r < 0 ? r : ipoib_config_load(&ctx, c, &err);
}

static void expect_conf_refused(const char *json, int code, const char *msg_part)
{
	struct ipoib_conf c;

	assert_true(load_conf(json, &c) < 0);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg_part);
}

#define CONF(extra) \
	"{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"ipoib\",\"master\":\"ib0\"," extra \
	"\"ipam\":{\"type\":\"nv-ipam\"}}"

static void test_conf_defaults(void **state)
{
	struct ipoib_conf c;

	(void)state;
	assert_int_equal(load_conf(CONF(""), &c), 0);
	assert_string_equal(c.master, "ib0");
	assert_int_equal(c.mtu, 0);
	assert_false(c.has_pkey);
	assert_int_equal(c.mode, -1);
	assert_true(c.umcast);
	assert_true(c.has_ipam);
}

static void test_conf_pkey_forms(void **state)
{
	static const struct {
		const char *field;
		uint16_t pkey;
	} ok[] = {
		{ "\"pkey\":32769,", 0x0001 },   { "\"pkey\":\"0x8001\",", 0x0001 },
		{ "\"pkey\":\"0X7FFF\",", 0x7fff }, { "\"pkey\":\"32769\",", 0x0001 },
		{ "\"pkey\":1,", 0x0001 },       { "\"pkey\":\"0xffff\",", 0x7fff },
	};
	char json[512];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct ipoib_conf c;

		snprintf(json, sizeof(json), CONF("%s"), ok[i].field);
		if (load_conf(json, &c) < 0)
			fail_msg("%s refused: %s", ok[i].field, err.msg);
		assert_true(c.has_pkey);
		assert_int_equal(c.pkey, ok[i].pkey);
	}
}

static void test_conf_refusals(void **state)
{
	(void)state;
	expect_conf_refused(CONF("\"pkey\":0,"), CNI_ERR_INVALID_CONFIG, "partition key 0 is reserved");
	expect_conf_refused(CONF("\"pkey\":\"0x8000\","), CNI_ERR_INVALID_CONFIG,
			    "partition key 0 is reserved");
	expect_conf_refused(CONF("\"pkey\":65536,"), CNI_ERR_INVALID_CONFIG, "out of range");
	expect_conf_refused(CONF("\"pkey\":\"0x10000\","), CNI_ERR_INVALID_CONFIG, "out of range");
	expect_conf_refused(CONF("\"pkey\":-1,"), CNI_ERR_INVALID_CONFIG, "out of range");
	expect_conf_refused(CONF("\"pkey\":\"0x\","), CNI_ERR_INVALID_CONFIG, "0x-prefixed hex");
	expect_conf_refused(CONF("\"pkey\":\"8001h\","), CNI_ERR_INVALID_CONFIG, "0x-prefixed hex");
	expect_conf_refused(CONF("\"pkey\":true,"), CNI_ERR_DECODE, "\"pkey\": expected an integer or a string");
	expect_conf_refused(CONF("\"mode\":\"CM\","), CNI_ERR_INVALID_CONFIG, "unknown IPoIB mode \"CM\"");
	expect_conf_refused(CONF("\"mode\":1,"), CNI_ERR_DECODE, "\"mode\"");
	expect_conf_refused(CONF("\"umcast\":\"yes\","), CNI_ERR_DECODE, "\"umcast\"");
	expect_conf_refused(CONF("\"mtu\":-1,"), CNI_ERR_INVALID_CONFIG, "\"mtu\"");
	expect_conf_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"ipoib\"}",
			    CNI_ERR_INVALID_CONFIG, "host master interface is missing");
	expect_conf_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"ipoib\",\"master\":\"\"}",
			    CNI_ERR_INVALID_CONFIG, "host master interface is missing");
	expect_conf_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"ipoib\","
			    "\"master\":\"ib0123456789abcdef\"}", CNI_ERR_INVALID_CONFIG, "longer than 15");
	expect_conf_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"ipoib\",\"master\":\"ib0\","
			    "\"ipam\":{\"type\":\"dhcp\"}}", CNI_ERR_INVALID_CONFIG,
			    "ipam dhcp type is not supported");
	expect_conf_refused("{\"cniVersion\":\"0.2.0\",\"name\":\"ib\",\"type\":\"ipoib\",\"master\":\"ib0\","
			    "\"ipam\":{}}", CNI_ERR_INVALID_CONFIG, "no valid IP addresses");
}

static void test_conf_mode_umcast(void **state)
{
	struct ipoib_conf c;

	(void)state;
	assert_int_equal(load_conf(CONF("\"mode\":\"connected\",\"umcast\":false,\"mtu\":2000,"), &c), 0);
	assert_int_equal(c.mode, IPOIB_MODE_CONNECTED);
	assert_false(c.umcast);
	assert_int_equal(c.mtu, 2000);
	assert_int_equal(load_conf(CONF("\"mode\":\"datagram\","), &c), 0);
	assert_int_equal(c.mode, IPOIB_MODE_DATAGRAM);
}

static void test_conf_operator_nads(void **state)
{
	struct ipoib_conf c;

	(void)state;
	assert_int_equal(load_conf(nad_nvipam, &c), 0);
	assert_true(c.has_ipam);
	assert_int_equal(load_conf(nad_whereabouts, &c), 0);
	assert_true(c.has_ipam);
	assert_int_equal(load_conf(nad_l2, &c), 0);
	assert_false(c.has_ipam);
	assert_string_equal(c.master, "ib0");
}

static void test_alias(void **state)
{
	char id[300], buf[IPOIB_ALIAS_MAX + 1], again[IPOIB_ALIAS_MAX + 1];

	(void)state;
	ipoib_config_alias(CONTAINER, "net1", buf, sizeof(buf));
	assert_string_equal(buf, ALIAS);
	memset(id, 'a', sizeof(id) - 1);
	id[sizeof(id) - 1] = '\0';
	ipoib_config_alias(id, "net1", buf, sizeof(buf));
	assert_true(strlen(buf) <= IPOIB_ALIAS_MAX);
	assert_int_equal(strncmp(buf, "cni-ipoib #", 11), 0);
	ipoib_config_alias(id, "net1", again, sizeof(again));
	assert_string_equal(buf, again);
	id[0] = 'b';
	ipoib_config_alias(id, "net1", again, sizeof(again));
	assert_string_not_equal(buf, again);
}

/* --- ADD -------------------------------------------------------------------------------- */

/*
 * Termination signals are held back from the create until the mark is set:
 * the lookup of the new child's ifindex in between is inside that window too.
 */
#define ADD_OPS_CREATE(create_args) \
	"host: open netns " POD_NETNS "\n" \
	"host: get ib0\n" \
	"host: create ipoib cniibXXXXXXXX link=ib0 " create_args " [blocked]\n" \
	"host: get cniibXXXXXXXX [blocked]\n" \
	"host: alias cniibXXXXXXXX \"" ALIAS "\" [blocked]\n" \
	"host: move cniibXXXXXXXX to ns1\n" \
	"ns1: get cniibXXXXXXXX\n" \
	"ns1: sysctl net/ipv4/conf/cniibXXXXXXXX/proxy_arp=1\n" \
	"ns1: rename cniibXXXXXXXX to net1\n"

static const char add_ops_nvipam[] =
	ADD_OPS_CREATE("pkey=0x7fff mode=0 umcast=1 mtu=0")
	"ns1: up net1\n"
	"ns1: get #4\n"
	"host: ipam ADD nv-ipam\n"
	"ns1: configure net1 (1 ips, 1 routes)\n";

static void test_add_sequence(void **state)
{
	struct cni_result res;
	struct net_link *child;
	_cleanup_free_ char *json = NULL;

	(void)state;
	world(ipam_v4);
	assert_int_equal(run_add(nad_nvipam, &res), 0);
	assert_log(add_ops_nvipam);
	assert_false(fake_net_termination_held());

	child = fake_net_find(pod, "net1");
	assert_non_null(child);
	assert_string_equal(child->kind, "ipoib");
	assert_string_equal(child->alias, ALIAS);
	assert_true(child->flags & IFF_UP);
	assert_int_equal(child->ipoib_pkey, 0xffff);
	assert_int_equal(fake_net_count(0), 2);
	/* proxy_arp was set in the pod, under the temporary name, before the rename. */
	assert_int_equal(fake_net.n_sysctls, 1);
	assert_int_equal(fake_net.sysctls[0].ns, pod);
	assert_int_equal(strncmp(fake_net.sysctls[0].path, "net/ipv4/conf/cniib", 19), 0);
	assert_string_equal(fake_net.sysctls[0].value, "1");
	assert_int_equal(fake_net.ipam_allocated, 1);

	/* One interface with its 20-byte address and the sandbox; IPAM's address points at it. */
	assert_int_equal(res.n_ifaces, 1);
	assert_string_equal(res.ifaces[0].name, "net1");
	assert_string_equal(res.ifaces[0].mac,
			    "80:00:00:04:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0d:7d:11");
	assert_string_equal(res.ifaces[0].sandbox, POD_NETNS);
	assert_int_equal(res.n_ips, 1);
	assert_int_equal(res.ips[0].iface, 0);
	assert_int_equal(res.n_routes, 1);
	assert_int_equal(res.dns.n_nameservers, 1);
	assert_int_equal(cni_result_to_json(&res, "0.3.1", &json, &err), 0);
	assert_non_null(strstr(json, "\"version\""));
	cni_result_free(&res);
}

static void test_add_fields_reach_the_kernel(void **state)
{
	struct cni_result res;
	struct net_link *child;

	(void)state;
	world(ipam_v4);
	assert_int_equal(run_add(CONF("\"pkey\":\"0x8001\",\"mode\":\"connected\",\"umcast\":false,"
				      "\"mtu\":2000,"), &res), 0);
	/* The MTU is set after the rename and before the link comes up. */
	assert_log(ADD_OPS_CREATE("pkey=0x0001 mode=1 umcast=0 mtu=0")
		   "ns1: mtu net1 2000\n"
		   "ns1: up net1\n"
		   "ns1: get #4\n"
		   "host: ipam ADD nv-ipam\n"
		   "ns1: configure net1 (1 ips, 1 routes)\n");
	child = fake_net_find(pod, "net1");
	assert_non_null(child);
	assert_int_equal(child->ipoib_pkey, 0x8001);
	assert_int_equal(child->ipoib_mode, IPOIB_MODE_CONNECTED);
	assert_int_equal(child->ipoib_umcast, 0);
	assert_int_equal(child->mtu, 2000);
	cni_result_free(&res);
}

static void test_add_l2(void **state)
{
	struct cni_result res;
	_cleanup_free_ char *json = NULL;

	(void)state;
	world(NULL);
	assert_int_equal(run_add(nad_l2, &res), 0);
	/* No IPAM and nothing to configure: the link came up right after the rename. */
	assert_log(ADD_OPS_CREATE("pkey=0x7fff mode=0 umcast=1 mtu=0")
		   "ns1: up net1\n"
		   "ns1: get #4\n");
	assert_true(fake_net_find(pod, "net1")->flags & IFF_UP);
	assert_int_equal(res.n_ifaces, 1);
	assert_int_equal(res.n_ips, 0);
	assert_int_equal(cni_result_to_json(&res, "0.3.1", &json, &err), 0);
	cni_result_free(&res);
}

/* Refused before anything changes: only lookups in the log, nothing created. */
static void expect_add_refused(const char *json, int code, const char *msg_part)
{
	struct cni_result res;

	assert_true(run_add(json, &res) < 0);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg_part);
	assert_null(strstr(fake_net_log_lines(), "create"));
	assert_pristine();
}

static void test_add_refusals(void **state)
{
	struct net_link *child;

	(void)state;
	world(ipam_v4);
	expect_add_refused(CONF("\"mtu\":4000,"), CNI_ERR_INVALID_CONFIG,
			   "invalid MTU 4000, must be [0, master MTU(2044)]");
	world(ipam_v4);
	expect_add_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"ipoib\",\"master\":\"ib9\"}",
			   CNI_ERR_NOT_FOUND, "failed to lookup master \"ib9\"");
	world(ipam_v4);
	expect_add_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"ipoib\",\"master\":\"eth0\"}",
			   CNI_ERR_INVALID_CONFIG, "master device eth0 is not of type ipoib (its link kind: veth)");
	world(ipam_v4);
	child = fake_net_add_link(0, "ib0.8001", "ipoib", ARPHRD_INFINIBAND, 2044);
	child->link_ifindex = fake_net_find(0, "ib0")->ifindex;
	assert_true(run_add("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"ipoib\",\"master\":\"ib0.8001\"}",
			    &(struct cni_result){ 0 }) < 0);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(err.msg, "is itself an IPoIB child"));
	assert_int_equal(fake_net_count(0), 3);
}

/* A failure injected at every operation of ADD: each leaves nothing behind. */
static void test_add_failure_at_every_step(void **state)
{
	/* The last sets every field, the MTU (which the master allows) among them. */
	static const char *const configs[] = {
		nad_nvipam, nad_l2,
		CONF("\"pkey\":\"0x8001\",\"mode\":\"connected\",\"umcast\":false,\"mtu\":2000,"),
	};

	(void)state;
	for (size_t k = 0; k < sizeof(configs) / sizeof(configs[0]); k++) {
		struct cni_result res;
		unsigned int total;

		world(ipam_v4);
		assert_int_equal(run_add(configs[k], &res), 0);
		cni_result_free(&res);
		total = fake_net.ops;
		assert_true(total >= 10);
		if (k == 2)
			assert_non_null(strstr(canonical_log(), "ns1: mtu net1 2000\n"));
		for (unsigned int n = 1; n <= total; n++) {
			world(ipam_v4);
			fake_net.fail_at = n;
			fake_net.fail_errno = EIO;
			if (run_add(configs[k], &res) == 0)
				fail_msg("config %zu: ADD succeeded although operation %u failed:\n%s", k, n,
					 canonical_log());
			if (err.code == CNI_OK)
				fail_msg("config %zu: no error for a failure at operation %u", k, n);
			if (fake_net_termination_held())
				fail_msg("config %zu: signals still held back after a failure at "
					 "operation %u", k, n);
			if (fake_net_count(0) != 2 || fake_net_count(pod) != 1 || fake_net.ipam_allocated)
				fail_msg("config %zu: failure at operation %u left %zu host links, %zu pod "
					 "links, %d addresses:\n%s", k, n, fake_net_count(0),
					 fake_net_count(pod), fake_net.ipam_allocated, canonical_log());
		}
	}
}

static void test_add_undo_order(void **state)
{
	struct cni_result res;

	(void)state;
	/* configure fails: IPAM is released, then the child deleted, in that order. */
	world(ipam_v4);
	fake_net.fail_at = 13;
	fake_net.fail_errno = EADDRNOTAVAIL;
	assert_true(run_add(nad_nvipam, &res) < 0);
	assert_int_equal(err.code, CNI_ERR_KERNEL);
	assert_non_null(strstr(canonical_log(), "ns1: configure net1 (1 ips, 1 routes)\n"
						"host: ipam DEL nv-ipam\n"
						"ns1: delete net1\n"));
	assert_pristine();

	/* The move fails: the child is deleted in the host. */
	world(ipam_v4);
	fake_net.fail_at = 6;
	fake_net.fail_errno = EINVAL;
	assert_true(run_add(nad_nvipam, &res) < 0);
	assert_non_null(strstr(err.msg, "failed to move interface cniib"));
	assert_non_null(strstr(err.details, "fake: operation 6 fails"));
	assert_non_null(strstr(canonical_log(), "host: move cniibXXXXXXXX to ns1\n"
						"host: delete cniibXXXXXXXX\n"));
	assert_pristine();

	/* IPAM returns no address: code 101, IPAM released, child deleted. */
	world("{\"cniVersion\":\"1.0.0\"}");
	assert_true(run_add(nad_nvipam, &res) < 0);
	assert_int_equal(err.code, CNI_ERR_IPAM);
	assert_string_equal(err.msg, "IPAM plugin returned missing IP config");
	assert_pristine();

	/* The IPAM plugin's own error code comes through. */
	world(ipam_v4);
	fake_net.fail_at = 12;
	fake_net.fail_errno = EAGAIN;
	assert_true(run_add(nad_nvipam, &res) < 0);
	assert_int_equal(err.code, CNI_ERR_TRY_AGAIN);
	assert_pristine();
}

/* --- DEL -------------------------------------------------------------------------------- */

static void add_ok(const char *json)
{
	struct cni_result res;

	if (run_add(json, &res) < 0)
		fail_msg("ADD failed: %s", err.msg);
	cni_result_free(&res);
	fake_net.log_len = 0;
	fake_net.log[0] = '\0';
	fake_net.ops = 0;
}

static void test_del(void **state)
{
	(void)state;
	world(ipam_v4);
	add_ok(nad_nvipam);
	assert_int_equal(run_del(nad_nvipam), 0);
	assert_log("host: open netns " POD_NETNS "\n"
		   "host: ipam DEL nv-ipam\n"
		   "ns1: get net1\n"
		   "ns1: delete net1\n"
		   "ns1: find\n"
		   "host: find\n"
		   "host: get cniibXXXXXXXX\n");
	assert_pristine();

	/* Again: nothing left to do, still success. */
	assert_int_equal(run_del(nad_nvipam), 0);
	assert_pristine();
}

/* The pod netns went first: the kernel handed the child back as dev<N>; DEL finds it. */
static void test_del_after_netns_gone(void **state)
{
	(void)state;
	world(ipam_v4);
	add_ok(nad_nvipam);
	fake_net_destroy_netns(pod);
	assert_non_null(fake_net_find(0, "dev4"));
	assert_int_equal(run_del(nad_nvipam), 0);
	assert_log("host: open netns " POD_NETNS "\n"
		   "host: ipam DEL nv-ipam\n"
		   "host: find\n"
		   "host: delete dev4\n"
		   "host: find\n"
		   "host: get cniibXXXXXXXX\n");
	assert_null(fake_net_find(0, "dev4"));
	assert_int_equal(fake_net_count(0), 2);
	assert_int_equal(fake_net.ipam_allocated, 0);
	assert_int_equal(run_del(nad_nvipam), 0);
}

/* An ADD killed between create and mark leaves an unmarked child under its temporary name. */
static void test_del_after_add_killed_before_mark(void **state)
{
	char tmp[IFNAMSIZ];

	(void)state;
	world(NULL);
	assert_int_equal(load(CNI_CMD_DEL, nad_l2), 0);
	attach_tmp_name(&ctx, "cniib", tmp, sizeof(tmp));
	fake_net_add_link(0, tmp, "ipoib", ARPHRD_INFINIBAND, 2044);
	/* Another attachment's unmarked child, and a foreign link of our name kind, stay. */
	fake_net_add_link(0, "cniib0000000001", "ipoib", ARPHRD_INFINIBAND, 2044);
	assert_int_equal(run_del(nad_l2), 0);
	assert_null(fake_net_find(0, tmp));
	assert_non_null(fake_net_find(0, "cniib0000000001"));
	/* An ADD run again after such a kill replaces the leftover. */
	fake_net_add_link(0, tmp, "ipoib", ARPHRD_INFINIBAND, 2044);
	{
		struct cni_result res;

		assert_int_equal(run_add(nad_l2, &res), 0);
		cni_result_free(&res);
	}
	assert_null(fake_net_find(0, tmp));
	assert_non_null(fake_net_find(pod, "net1"));
}

/* An ADD killed before the move leaves the child in the host, marked: DEL removes it. */
static void test_del_after_killed_add(void **state)
{
	struct net_link *left;

	(void)state;
	world(NULL);
	left = fake_net_add_link(0, "cniib0badf00d", "ipoib", ARPHRD_INFINIBAND, 2044);
	snprintf(left->alias, sizeof(left->alias), "%s", ALIAS);
	/* Another attachment's child is not touched. */
	left = fake_net_add_link(0, "dev9", "ipoib", ARPHRD_INFINIBAND, 2044);
	snprintf(left->alias, sizeof(left->alias), "cni-ipoib otherpod net1");
	assert_int_equal(run_del(nad_l2), 0);
	assert_null(fake_net_find(0, "cniib0badf00d"));
	assert_non_null(fake_net_find(0, "dev9"));
	assert_int_equal(fake_net_count(0), 3);
}

/* A child in the pod under its temporary name (rename and undo both failed): DEL finds it. */
static void test_del_stranded_in_pod(void **state)
{
	struct net_link *left;

	(void)state;
	world(NULL);
	left = fake_net_add_link(pod, "cniib12345678", "ipoib", ARPHRD_INFINIBAND, 2044);
	snprintf(left->alias, sizeof(left->alias), "%s", ALIAS);
	assert_int_equal(run_del(nad_l2), 0);
	assert_int_equal(fake_net_count(pod), 1);
	assert_pristine();
}

static void test_del_leaves_foreign_links(void **state)
{
	struct net_link *veth;

	(void)state;
	world(ipam_v4);
	fake_net_add_link(pod, "net1", "veth", ARPHRD_ETHER, 1500);
	veth = fake_net_add_link(0, "vethfoo", "veth", ARPHRD_ETHER, 1500);
	snprintf(veth->alias, sizeof(veth->alias), "%s", ALIAS);
	assert_int_equal(run_del(nad_nvipam), 0);
	assert_non_null(fake_net_find(pod, "net1"));
	assert_non_null(fake_net_find(0, "vethfoo"));
}

/* A foreign link carrying our alias ahead of our child in the dump does not hide the child. */
static void test_del_skips_foreign_alias(void **state)
{
	struct net_link *link;

	(void)state;
	world(NULL);
	link = fake_net_add_link(0, "vethfoo", "veth", ARPHRD_ETHER, 1500);
	snprintf(link->alias, sizeof(link->alias), "%s", ALIAS);
	link = fake_net_add_link(0, "dev7", "ipoib", ARPHRD_INFINIBAND, 2044);
	snprintf(link->alias, sizeof(link->alias), "%s", ALIAS);
	assert_int_equal(run_del(nad_l2), 0);
	assert_log("host: open netns " POD_NETNS "\n"
		   "ns1: get net1\n"
		   "ns1: find\n"
		   "host: find\n"
		   "host: delete dev7\n"
		   "host: find\n"
		   "host: get cniibXXXXXXXX\n");
	assert_null(fake_net_find(0, "dev7"));
	assert_non_null(fake_net_find(0, "vethfoo"));
	assert_int_equal(fake_net_count(0), 3);
}

/* A DEL that fails at any operation leaves a state that the next DEL clears. */
static void test_del_failure_then_repeat(void **state)
{
	unsigned int total;

	(void)state;
	world(ipam_v4);
	add_ok(nad_nvipam);
	assert_int_equal(run_del(nad_nvipam), 0);
	total = fake_net.ops;
	for (unsigned int n = 1; n <= total; n++) {
		world(ipam_v4);
		add_ok(nad_nvipam);
		fake_net.fail_at = n;
		fake_net.fail_errno = EIO;
		if (run_del(nad_nvipam) == 0)
			fail_msg("DEL succeeded although operation %u failed:\n%s", n, canonical_log());
		fake_net.fail_at = 0;
		assert_int_equal(run_del(nad_nvipam), 0);
		assert_pristine();
	}
}

/* dhcp was never allocated by ADD (refused): DEL still removes the child. */
static void test_del_dhcp(void **state)
{
	(void)state;
	world(NULL);
	add_ok(nad_l2);
	assert_int_equal(run_del("{\"cniVersion\":\"0.3.1\",\"name\":\"x\",\"type\":\"ipoib\","
				 "\"master\":\"ib0\",\"ipam\":{\"type\":\"dhcp\"}}"), 0);
	assert_null(strstr(fake_net_log_lines(), "ipam"));
	assert_int_equal(fake_net_count(pod), 1);
}

/* --- CHECK ------------------------------------------------------------------------------ */

/* Runs CHECK with @base (ending in '}') extended by the prevResult ADD returned. */
static int run_check(const char *base, const struct cni_result *prev)
{
	_cleanup_free_ char *prev_json = NULL;
	char json[8192];

	assert_int_equal(cni_result_to_json(prev, "1.0.0", &prev_json, &err), 0);
	snprintf(json, sizeof(json), "%.*s,\"prevResult\":%s}", (int)(strlen(base) - 1), base,
		 prev_json);
	assert_int_equal(load(CNI_CMD_CHECK, json), 0);
	return ipoib_plugin.check(&ctx, &err);
}

/* A sysfs tree where ib0 runs on mlx5_0 port 1, whose pkey table holds 0xffff and 0x8001. */
static char sysfs[64];

static void fake_sysfs(void)
{
	char cmd[512], path[256];
	FILE *f;

	snprintf(sysfs, sizeof(sysfs), "/tmp/ipoib-sysfs.XXXXXX");
	assert_non_null(mkdtemp(sysfs));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/class/net/ib0/device/infiniband/mlx5_0 "
		 "%s/class/infiniband/mlx5_0/ports/1/pkeys", sysfs, sysfs);
	assert_int_equal(system(cmd), 0);
	static const char *const files[][2] = {
		{ "class/net/ib0/dev_port", "0\n" },
		{ "class/infiniband/mlx5_0/ports/1/pkeys/0", "0xffff\n" },
		{ "class/infiniband/mlx5_0/ports/1/pkeys/1", "0x8001\n" },
		{ "class/infiniband/mlx5_0/ports/1/pkeys/2", "0x0000\n" },
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", sysfs, files[i][0]);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(files[i][1], f);
		fclose(f);
	}
	fake_sysfs_set_root(sysfs);
}

static int sysfs_teardown(void **state)
{
	char cmd[128];

	fake_sysfs_set_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", sysfs);
	assert_int_equal(system(cmd), 0);
	return teardown(state);
}

/*
 * A pkey the port is not a member of: the kernel would make a child that stays down with
 * no error; refused before anything, naming the table. One the table has, in either
 * membership, goes through.
 */
static void test_pkey_not_in_table(void **state)
{
	struct cni_result res;

	(void)state;
	fake_sysfs();
	world(ipam_v4);
	assert_int_equal(run_add("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"ipoib\","
				 "\"master\":\"ib0\",\"pkey\":\"0x8005\",\"ipam\":{\"type\":\"fake\"}}",
				 &res), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_string_equal(err.msg, "pkey 0x0005 is not in the pkey table of mlx5_0 port 1 (master "
				     "ib0): 0xffff, 0x8001; the child would stay down: the subnet "
				     "manager must make the port a member of that partition");
	assert_pristine();
	cni_result_free(&res);

	assert_int_equal(run_add("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"ipoib\","
				 "\"master\":\"ib0\",\"pkey\":\"0x0001\",\"ipam\":{\"type\":\"fake\"}}",
				 &res), 0);
	cni_result_free(&res);
	assert_int_equal(run_del("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"ipoib\","
				 "\"master\":\"ib0\",\"pkey\":\"0x0001\",\"ipam\":{\"type\":\"fake\"}}"), 0);
	assert_pristine();
}

static void test_check(void **state)
{
	const char *conf = CONF("\"mtu\":2000,");
	struct cni_result res;
	struct net_link *child;

	(void)state;
	world(ipam_v4);
	assert_int_equal(run_add(conf, &res), 0);
	fake_net.log_len = 0;
	fake_net.log[0] = '\0';
	assert_int_equal(run_check(conf, &res), 0);
	assert_log("host: open netns " POD_NETNS "\n"
		   "host: ipam CHECK nv-ipam\n"
		   "host: get ib0\n"
		   "ns1: get net1\n"
		   "ns1: check net1 (1 ips, 1 routes)\n");

	child = fake_net_find(pod, "net1");
	child->ipoib_pkey = 0x8002;
	assert_true(run_check(conf, &res) < 0);
	assert_int_equal(err.code, CNI_ERR_CHECK_FAILED);
	assert_string_equal(err.msg, "container interface net1 pkey 0x0002 does not match expected 0x7fff");
	child->ipoib_pkey = 0xffff;

	child->ipoib_mode = IPOIB_MODE_CONNECTED;
	assert_true(run_check(conf, &res) < 0);
	assert_string_equal(err.msg, "container interface net1 mode connected does not match expected datagram");
	child->ipoib_mode = IPOIB_MODE_DATAGRAM;

	child->mtu = 2044;
	assert_true(run_check(conf, &res) < 0);
	assert_string_equal(err.msg, "container interface net1 MTU 2044 does not match expected 2000");
	child->mtu = 2000;

	child->hwaddr[19] ^= 1;
	assert_true(run_check(conf, &res) < 0);
	assert_non_null(strstr(err.msg, "doesn't match container Mac"));
	child->hwaddr[19] ^= 1;

	snprintf(child->kind, sizeof(child->kind), "macvlan");
	assert_true(run_check(conf, &res) < 0);
	assert_string_equal(err.msg, "container interface net1 not of type ipoib");
	snprintf(child->kind, sizeof(child->kind), "ipoib");

	snprintf(child->name, sizeof(child->name), "net2");
	assert_true(run_check(conf, &res) < 0);
	assert_string_equal(err.msg, "container Interface name in prevResult: net1 not found");
	snprintf(child->name, sizeof(child->name), "net1");

	assert_int_equal(run_check(conf, &res), 0);

	/* The master is looked up again, with ADD's errors. */
	snprintf(fake_net_find(0, "ib0")->name, IFNAMSIZ, "ib9");
	assert_true(run_check(conf, &res) < 0);
	assert_int_equal(err.code, CNI_ERR_NOT_FOUND);
	assert_non_null(strstr(err.msg, "failed to lookup master \"ib0\""));
	cni_result_free(&res);

	assert_int_equal(load(CNI_CMD_CHECK, conf), 0);
	assert_true(ipoib_plugin.check(&ctx, &err) < 0);
	assert_string_equal(err.msg, "required prevResult missing");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_conf_defaults, teardown),
		cmocka_unit_test_teardown(test_conf_pkey_forms, teardown),
		cmocka_unit_test_teardown(test_conf_refusals, teardown),
		cmocka_unit_test_teardown(test_conf_mode_umcast, teardown),
		cmocka_unit_test_teardown(test_conf_operator_nads, teardown),
		cmocka_unit_test(test_alias),
		cmocka_unit_test_teardown(test_add_sequence, teardown),
		cmocka_unit_test_teardown(test_add_fields_reach_the_kernel, teardown),
		cmocka_unit_test_teardown(test_add_l2, teardown),
		cmocka_unit_test_teardown(test_add_refusals, teardown),
		cmocka_unit_test_teardown(test_add_failure_at_every_step, teardown),
		cmocka_unit_test_teardown(test_add_undo_order, teardown),
		cmocka_unit_test_teardown(test_del, teardown),
		cmocka_unit_test_teardown(test_del_after_netns_gone, teardown),
		cmocka_unit_test_teardown(test_del_after_add_killed_before_mark, teardown),
		cmocka_unit_test_teardown(test_del_after_killed_add, teardown),
		cmocka_unit_test_teardown(test_del_stranded_in_pod, teardown),
		cmocka_unit_test_teardown(test_del_leaves_foreign_links, teardown),
		cmocka_unit_test_teardown(test_del_skips_foreign_alias, teardown),
		cmocka_unit_test_teardown(test_del_failure_then_repeat, teardown),
		cmocka_unit_test_teardown(test_del_dhcp, teardown),
		cmocka_unit_test_teardown(test_check, teardown),
		cmocka_unit_test_teardown(test_pkey_not_in_table, sysfs_teardown),
	};

	return cmocka_run_group_tests_name("ipoib (fake netlink)", tests, NULL, NULL);
}
