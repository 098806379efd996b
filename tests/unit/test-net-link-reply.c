/* Unit test: what common/net reads from an RTM_NEWLINK for an IPoIB link (pkey, mode, umcast) */
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
#include "common/util/cleanup.h"

struct parsed {
	int r;
	struct net_link link;
};

/* An RTM_NEWLINK reply: header and ifinfomsg, attributes to follow. */
static struct nl_msg *reply_start(int ifindex, unsigned short type)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_type = type, .ifi_index = ifindex };
	struct nl_msg *msg = nlmsg_alloc_simple(RTM_NEWLINK, 0);

	assert_non_null(msg);
	assert_int_equal(nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
	return msg;
}

/*
 * A reply for an IPoIB child "ib0.8002" of ifindex 5: 20-byte hardware
 * address, and IFLA_INFO_DATA with the attributes the kernel reports; @extra
 * adds an attribute of a type the parser does not know.
 */
static struct nl_msg *build_reply(uint16_t pkey, uint16_t mode, uint16_t umcast, bool extra)
{
	static const uint8_t hw[20] = { 0x80, 0x00, 0x00, 0x4a, 0xfe, 0x80, 0, 0, 0, 0,
					0,    0,    0x00, 0x02, 0xc9, 0x03, 0x00, 0x0d, 0x7d, 0x11 };
	struct nl_msg *msg = reply_start(9, ARPHRD_INFINIBAND);
	struct nlattr *info, *data;

	assert_int_equal(nla_put_string(msg, IFLA_IFNAME, "ib0.8002"), 0);
	assert_int_equal(nla_put_u32(msg, IFLA_MTU, 2044), 0);
	assert_int_equal(nla_put_u32(msg, IFLA_LINK, 5), 0);
	assert_int_equal(nla_put(msg, IFLA_ADDRESS, sizeof(hw), hw), 0);
	info = nla_nest_start(msg, IFLA_LINKINFO);
	assert_int_equal(nla_put_string(msg, IFLA_INFO_KIND, "ipoib"), 0);
	data = nla_nest_start(msg, IFLA_INFO_DATA);
	assert_int_equal(nla_put_u16(msg, IFLA_IPOIB_PKEY, pkey), 0);
	assert_int_equal(nla_put_u16(msg, IFLA_IPOIB_MODE, mode), 0);
	assert_int_equal(nla_put_u16(msg, IFLA_IPOIB_UMCAST, umcast), 0);
	if (extra)
		assert_int_equal(nla_put_u32(msg, IFLA_IPOIB_UMCAST + 7, 0xdeadbeef), 0);
	nla_nest_end(msg, data);
	nla_nest_end(msg, info);
	return msg;
}

/* The parse the lookups use, fed the reply the kernel's ipoib_fill_info() builds. */
static void parse(struct nl_msg *msg, struct parsed *ret)
{
	const struct nlmsghdr *nlh = nlmsg_hdr(msg);

	memset(ret, 0, sizeof(*ret));
	ret->r = net_link_parse(nlh, nlh->nlmsg_len, &ret->link);
	nlmsg_free(msg);
	assert_int_equal(ret->r, 0);
}

/* What the ipoib plugin inherits from a master: its pkey (full-member bit and all) and mode. */
static void test_ipoib_reply(void **state)
{
	static const struct {
		uint16_t pkey, mode, umcast;
	} cases[] = {
		{ 0xffff, 0, 1 }, /* the default partition, datagram */
		{ 0x8002, 1, 0 }, /* a full-member pkey, connected, no umcast */
		{ 0x0003, 0, 1 }, /* a limited-member pkey */
	};
	struct parsed p;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		parse(build_reply(cases[i].pkey, cases[i].mode, cases[i].umcast, i == 1), &p);
		assert_string_equal(p.link.name, "ib0.8002");
		assert_string_equal(p.link.kind, "ipoib");
		assert_int_equal(p.link.ifindex, 9);
		assert_int_equal(p.link.link_ifindex, 5);
		assert_int_equal(p.link.mtu, 2044);
		assert_int_equal(p.link.type, ARPHRD_INFINIBAND);
		assert_int_equal(p.link.hwaddr_len, 20);
		assert_int_equal(p.link.hwaddr[19], 0x11);
		assert_int_equal(p.link.ipoib_pkey, cases[i].pkey);
		assert_int_equal(p.link.ipoib_mode, cases[i].mode);
		assert_int_equal(p.link.ipoib_umcast, cases[i].umcast);
	}
}

/* A malformed IFLA_INFO_DATA member (a u16 sent as u8) is skipped, not read past. */
static void test_ipoib_reply_malformed(void **state)
{
	struct nl_msg *msg = reply_start(4, 0);
	struct nlattr *info, *data;
	struct parsed p;

	(void)state;
	assert_int_equal(nla_put_string(msg, IFLA_IFNAME, "ib1"), 0);
	info = nla_nest_start(msg, IFLA_LINKINFO);
	assert_int_equal(nla_put_string(msg, IFLA_INFO_KIND, "ipoib"), 0);
	data = nla_nest_start(msg, IFLA_INFO_DATA);
	assert_int_equal(nla_put_u8(msg, IFLA_IPOIB_PKEY, 0x7f), 0);
	assert_int_equal(nla_put_u16(msg, IFLA_IPOIB_MODE, 1), 0);
	nla_nest_end(msg, data);
	nla_nest_end(msg, info);
	parse(msg, &p);
	assert_string_equal(p.link.kind, "ipoib");
	assert_int_equal(p.link.ipoib_pkey, 0);
	assert_int_equal(p.link.ipoib_mode, 1);
}

/* Anything but one whole RTM_NEWLINK is refused, never read past. */
static void test_not_a_link_reply(void **state)
{
	struct nl_msg *msg = build_reply(0xffff, 0, 1, false);
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct net_link link;

	(void)state;
	assert_int_equal(net_link_parse(nlh, nlh->nlmsg_len - 1, &link), -EBADMSG);
	assert_int_equal(net_link_parse(nlh, sizeof(*nlh) - 1, &link), -EBADMSG);
	nlh->nlmsg_type = RTM_NEWADDR;
	assert_int_equal(net_link_parse(nlh, nlh->nlmsg_len, &link), -EBADMSG);
	nlmsg_free(msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipoib_reply),
		cmocka_unit_test(test_ipoib_reply_malformed),
		cmocka_unit_test(test_not_a_link_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
