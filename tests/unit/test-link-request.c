/* Unit test: the ipvlan, vlan and vrf RTM_NEWLINK against iproute2's, captured with strace */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <netlink/msg.h>

#include "common/net/link-internal.h"
#include "common/net/link.h"
#include "tests/unit/newlink-capture.h"

/*
 * Each fixture and the child that must give the same request. The captures'
 * master is lo, ifindex 1 in the fresh netns they were made in
 * (fixtures/capture-lk-newlink.sh).
 */
static const struct {
	const char *fixture;
	const char *command;
	struct net_child child;
} cases[] = {
	{ "ipvlan-newlink-l2.txt", "link lo name net1 type ipvlan mode l2 bridge",
	  { .kind = NET_CHILD_IPVLAN, .name = "net1", .master_ifindex = 1, .netns_fd = -1,
	    .ipvlan = { .mode = IPVLAN_MODE_L2, .flags = 0 } } },
	{ "ipvlan-newlink-l3-private.txt", "link lo name cniipvl0 mtu 1400 type ipvlan mode l3 private",
	  { .kind = NET_CHILD_IPVLAN, .name = "cniipvl0", .master_ifindex = 1, .netns_fd = -1,
	    .mtu = 1400, .ipvlan = { .mode = IPVLAN_MODE_L3, .flags = IPVLAN_F_PRIVATE } } },
	{ "ipvlan-newlink-l3s-vepa.txt", "link lo name net2 type ipvlan mode l3s vepa",
	  { .kind = NET_CHILD_IPVLAN, .name = "net2", .master_ifindex = 1, .netns_fd = -1,
	    .ipvlan = { .mode = IPVLAN_MODE_L3S, .flags = IPVLAN_F_VEPA } } },
	{ "vlan-newlink-5.txt", "link lo name net1 type vlan id 5",
	  { .kind = NET_CHILD_VLAN, .name = "net1", .master_ifindex = 1, .netns_fd = -1,
	    .vlan = { .id = 5 } } },
	{ "vlan-newlink-4094-mtu.txt", "link lo name vlan4094 mtu 9000 type vlan id 4094",
	  { .kind = NET_CHILD_VLAN, .name = "vlan4094", .master_ifindex = 1, .netns_fd = -1,
	    .mtu = 9000, .vlan = { .id = 4094 } } },
	{ "vrf-newlink-1.txt", "name vrf1 type vrf table 1",
	  { .kind = NET_CHILD_VRF, .name = "vrf1", .netns_fd = -1, .vrf = { .table = 1 } } },
	{ "vrf-newlink-big.txt", "name vrf-blue type vrf table 4000000000",
	  { .kind = NET_CHILD_VRF, .name = "vrf-blue", .netns_fd = -1,
	    .vrf = { .table = 4000000000U } } },
};

static void test_same_as_iproute2(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct newlink_capture cap;
		struct net_link_buf ours;
		char why[256];

		newlink_capture_load(cases[i].fixture, &cap);
		if (!strstr(cap.command, cases[i].command))
			fail_msg("%s was captured with \"%s\"", cases[i].fixture, cap.command);
		assert_true(net_link_build_create(&cases[i].child, ours.data, sizeof(ours.data)) > 0);
		if (!newlink_equal(&cap.msg.align_, &ours.align_, why, sizeof(why)))
			fail_msg("%s: %s", cap.command, why);
	}
}

/* The comparison sees what differs: another VLAN id, another ipvlan flag, another table. */
static void test_detects_difference(void **state)
{
	static const struct {
		size_t i;
		struct net_child child;
	} wrong[] = {
		{ 3, { .kind = NET_CHILD_VLAN, .name = "net1", .master_ifindex = 1, .netns_fd = -1,
		       .vlan = { .id = 6 } } },
		{ 1, { .kind = NET_CHILD_IPVLAN, .name = "cniipvl0", .master_ifindex = 1, .netns_fd = -1,
		       .mtu = 1400, .ipvlan = { .mode = IPVLAN_MODE_L3, .flags = IPVLAN_F_VEPA } } },
		{ 5, { .kind = NET_CHILD_VRF, .name = "vrf1", .netns_fd = -1, .vrf = { .table = 2 } } },
		{ 5, { .kind = NET_CHILD_VRF, .name = "vrf1", .netns_fd = -1, .up = true,
		       .vrf = { .table = 1 } } },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(wrong) / sizeof(wrong[0]); k++) {
		struct newlink_capture cap;
		struct net_link_buf ours;
		char why[256] = "";

		newlink_capture_load(cases[wrong[k].i].fixture, &cap);
		assert_true(net_link_build_create(&wrong[k].child, ours.data, sizeof(ours.data)) > 0);
		assert_false(newlink_equal(&cap.msg.align_, &ours.align_, why, sizeof(why)));
		assert_true(why[0] != '\0');
	}
}

/* A VRF made up differs from `ip link add` only in IFF_UP, as `ip link add ... up` sends it. */
static void test_vrf_up(void **state)
{
	struct net_child child = cases[5].child;
	struct net_link_buf down, up;
	struct ifinfomsg *ifi;
	char why[256];
	int len;

	(void)state;
	assert_true(net_link_build_create(&child, down.data, sizeof(down.data)) > 0);
	child.up = true;
	len = net_link_build_create(&child, up.data, sizeof(up.data));
	assert_true(len > 0);
	ifi = nlmsg_data(&up.align_);
	assert_int_equal(ifi->ifi_flags, IFF_UP);
	assert_int_equal(ifi->ifi_change, IFF_UP);
	ifi->ifi_flags = ifi->ifi_change = 0;
	assert_true(newlink_equal(&down.align_, &up.align_, why, sizeof(why)));
}

/* What the kernel would refuse with a bare EINVAL, refused before it is sent. */
static void test_refused(void **state)
{
	static const struct net_child bad[] = {
		{ .kind = NET_CHILD_VLAN, .name = "v", .master_ifindex = 1, .netns_fd = -1,
		  .vlan = { .id = 4095 } },
		{ .kind = NET_CHILD_VRF, .name = "v", .netns_fd = -1, .vrf = { .table = 0 } },
		{ .kind = NET_CHILD_VRF, .name = "v", .master_ifindex = 2, .netns_fd = -1,
		  .vrf = { .table = 5 } },
		{ .kind = NET_CHILD_IPVLAN, .name = "v", .netns_fd = -1 },
		{ .kind = NET_CHILD_IPVLAN, .name = "v", .master_ifindex = 1, .netns_fd = -1,
		  .ipvlan = { .mode = IPVLAN_MODE_MAX } },
		{ .kind = NET_CHILD_VLAN, .name = "name-of-16-bytes", .master_ifindex = 1,
		  .netns_fd = -1, .vlan = { .id = 1 } },
	};
	struct net_link_buf buf;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(net_link_build_create(&bad[i], buf.data, sizeof(buf.data)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_iproute2),
		cmocka_unit_test(test_detects_difference),
		cmocka_unit_test(test_vrf_up),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests_name("ipvlan, vlan and vrf RTM_NEWLINK vs iproute2", tests, NULL,
					   NULL);
}
