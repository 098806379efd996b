/* Unit tests: the macvlan plugin's ADD on masters the kernel refuses, against a fake of common/net */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/util/error.h"
#include "plugins/macvlan/macvlan.h"
#include "tests/unit/fake-net.h"

#define POD_NETNS "/var/run/netns/pod1"

static const char ipam_v4[] =
	"{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"192.168.0.5/24\"}]}";

static struct cni_ctx ctx;
static struct cni_err err;
static int pod;
static char conf_buf[4096];

/* The host has ib0 (IPoIB), lo and eth0; the pod has lo. */
static void world(void)
{
	struct net_link *lo;

	fake_net_reset(ipam_v4);
	fake_net_add_link(0, "ib0", "ipoib", ARPHRD_INFINIBAND, 2044);
	lo = fake_net_add_link(0, "lo", "", ARPHRD_LOOPBACK, 65536);
	lo->flags |= IFF_LOOPBACK;
	fake_net_add_link(0, "eth0", "veth", ARPHRD_ETHER, 1500);
	pod = fake_net_add_netns(POD_NETNS);
	fake_net_add_link(pod, "lo", "", ARPHRD_LOOPBACK, 65536);
}

static int run_add(const char *master)
{
	struct cni_result res = { 0 };
	int r;

	cni_conf_free(&ctx.conf);
	memset(&err, 0, sizeof(err));
	snprintf(conf_buf, sizeof(conf_buf),
		 "{\"cniVersion\":\"1.0.0\",\"name\":\"mv\",\"type\":\"macvlan\",\"master\":\"%s\","
		 "\"ipam\":{\"type\":\"fakeipam\"}}", master);
	ctx.env = (struct cni_env){
		.command = CNI_CMD_ADD,
		.command_name = cni_command_name(CNI_CMD_ADD),
		.container_id = "c0ffee",
		.netns = POD_NETNS,
		.ifname = "net1",
		.args = "",
		.path = "/opt/cni/bin",
	};
	/* As the dispatch does before every ADD, DEL and CHECK. */
	cni_plugin_open_netns(&ctx);
	assert_int_equal(cni_conf_parse(conf_buf, strlen(conf_buf), &ctx.conf, &err), 0);
	r = macvlan_plugin.add(&ctx, &res, &err);
	cni_result_free(&res);
	return r;
}

/* Nothing created anywhere, IPAM never asked. */
static void assert_pristine(void)
{
	assert_int_equal(fake_net_count(0), 3);
	assert_int_equal(fake_net_count(pod), 1);
	assert_int_equal(fake_net.ipam_allocated, 0);
}

static void test_ipoib_master(void **state)
{
	(void)state;
	world();
	assert_int_equal(run_add("ib0"), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_string_equal(err.msg, "master \"ib0\" is not an Ethernet link (it is InfiniBand): "
				     "macvlan needs an Ethernet or RoCE master; an IPoIB network uses "
				     "the ipoib plugin (an IPoIBNetwork, not a MacvlanNetwork)");
	assert_pristine();
}

static void test_loopback_master(void **state)
{
	(void)state;
	world();
	assert_int_equal(run_add("lo"), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_string_equal(err.msg, "master \"lo\" is not an Ethernet link (it is a loopback): "
				     "macvlan needs an Ethernet or RoCE master");
	assert_pristine();
}

static int teardown(void **state)
{
	(void)state;
	cni_conf_free(&ctx.conf);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_ipoib_master, teardown),
		cmocka_unit_test_teardown(test_loopback_master, teardown),
	};

	return cmocka_run_group_tests_name("macvlan (fake netlink)", tests, NULL, NULL);
}
