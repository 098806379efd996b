/* Unit test: what common/net reads from an RTM_NEWLINK of an ipvlan, a VLAN, a VRF and its slave */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if_arp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/link-internal.h"
#include "common/net/link.h"

/* A reply as the kernel's rtnl_fill_ifinfo() builds it; @put adds IFLA_INFO_DATA's members. */
static struct nl_msg *reply(const char *name, const char *kind, int master,
			    void (*put)(struct nl_msg *msg, const void *arg), const void *arg)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_type = ARPHRD_ETHER, .ifi_index = 7 };
	struct nl_msg *msg = nlmsg_alloc_simple(RTM_NEWLINK, 0);
	struct nlattr *info, *data;

	assert_non_null(msg);
	assert_int_equal(nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
	assert_int_equal(nla_put_string(msg, IFLA_IFNAME, name), 0);
	assert_int_equal(nla_put_u32(msg, IFLA_MTU, 1500), 0);
	if (master)
		assert_int_equal(nla_put_u32(msg, IFLA_MASTER, (uint32_t)master), 0);
	info = nla_nest_start(msg, IFLA_LINKINFO);
	assert_int_equal(nla_put_string(msg, IFLA_INFO_KIND, kind), 0);
	if (put) {
		data = nla_nest_start(msg, IFLA_INFO_DATA);
		put(msg, arg);
		nla_nest_end(msg, data);
	}
	nla_nest_end(msg, info);
	return msg;
}

static void parse(struct nl_msg *msg, struct net_link *ret)
{
	const struct nlmsghdr *nlh = nlmsg_hdr(msg);

	memset(ret, 0, sizeof(*ret));
	assert_int_equal(net_link_parse(nlh, nlh->nlmsg_len, ret), 0);
	nlmsg_free(msg);
}

static void put_ipvlan(struct nl_msg *msg, const void *arg)
{
	const uint16_t *v = arg;

	assert_int_equal(nla_put_u16(msg, IFLA_IPVLAN_MODE, v[0]), 0);
	assert_int_equal(nla_put_u16(msg, IFLA_IPVLAN_FLAGS, v[1]), 0);
}

static void put_vlan(struct nl_msg *msg, const void *arg)
{
	assert_int_equal(nla_put_u16(msg, IFLA_VLAN_ID, *(const uint16_t *)arg), 0);
	/* What the kernel also reports: the protocol, and flags the parser does not need. */
	assert_int_equal(nla_put_u16(msg, IFLA_VLAN_PROTOCOL, htons(0x8100)), 0);
}

static void put_vrf(struct nl_msg *msg, const void *arg)
{
	assert_int_equal(nla_put_u32(msg, IFLA_VRF_TABLE, *(const uint32_t *)arg), 0);
}

/* A u16 sent as a u32: skipped, never read as its first bytes. */
static void put_wrong_size(struct nl_msg *msg, const void *arg)
{
	(void)arg;
	assert_int_equal(nla_put_u32(msg, IFLA_IPVLAN_MODE, IPVLAN_MODE_L3S), 0);
	assert_int_equal(nla_put_u32(msg, IFLA_VLAN_ID, 77), 0);
}

static void test_ipvlan(void **state)
{
	static const uint16_t cases[][2] = {
		{ IPVLAN_MODE_L2, 0 },
		{ IPVLAN_MODE_L3, IPVLAN_F_PRIVATE },
		{ IPVLAN_MODE_L3S, IPVLAN_F_VEPA },
	};
	struct net_link l;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parse(reply("net1", "ipvlan", 0, put_ipvlan, cases[i]), &l);
		assert_string_equal(l.kind, "ipvlan");
		assert_int_equal(l.ipvlan_mode, cases[i][0]);
		assert_int_equal(l.ipvlan_flags, cases[i][1]);
		assert_int_equal(l.vlan_id, 0);
		assert_int_equal(l.master_ifindex, 0);
	}
}

static void test_vlan(void **state)
{
	static const uint16_t ids[] = { 1, 5, 4094 };
	struct net_link l;

	(void)state;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		parse(reply("net1", "vlan", 0, put_vlan, &ids[i]), &l);
		assert_string_equal(l.kind, "vlan");
		assert_int_equal(l.vlan_id, ids[i]);
		assert_int_equal(l.ipvlan_mode, 0);
	}
}

/* The VRF's table, and a slave's master (IFLA_MASTER). */
static void test_vrf_and_slave(void **state)
{
	static const uint32_t table = 4000000000U;
	struct net_link l;

	(void)state;
	parse(reply("blue", "vrf", 0, put_vrf, &table), &l);
	assert_string_equal(l.kind, "vrf");
	assert_int_equal(l.vrf_table, table);
	parse(reply("net1", "veth", 12, NULL, NULL), &l);
	assert_string_equal(l.kind, "veth");
	assert_int_equal(l.master_ifindex, 12);
	assert_int_equal(l.vrf_table, 0);
}

/* Members of another kind's data, or of the wrong size, are not read. */
static void test_foreign_members(void **state)
{
	static const uint32_t table = 10;
	struct net_link l;

	(void)state;
	parse(reply("net1", "ipvlan", 0, put_wrong_size, NULL), &l);
	assert_int_equal(l.ipvlan_mode, 0);
	assert_int_equal(l.vlan_id, 0);
	parse(reply("net1", "vlan", 0, put_wrong_size, NULL), &l);
	assert_int_equal(l.vlan_id, 0);
	/* IFLA_VRF_TABLE is type 1, as IFLA_VLAN_ID and IFLA_IPVLAN_MODE: the kind decides. */
	parse(reply("net1", "macvtap", 0, put_vrf, &table), &l);
	assert_int_equal(l.vrf_table, 0);
	assert_int_equal(l.vlan_id, 0);
	assert_int_equal(l.ipvlan_mode, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipvlan),
		cmocka_unit_test(test_vlan),
		cmocka_unit_test(test_vrf_and_slave),
		cmocka_unit_test(test_foreign_members),
	};

	return cmocka_run_group_tests_name("net link replies (ipvlan, vlan, vrf)", tests, NULL, NULL);
}
