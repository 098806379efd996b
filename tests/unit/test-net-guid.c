/* Unit test: InfiniBand GUID text, and the RTM_SETLINK that gives a PF's VF its GUIDs, byte by byte */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/nlsock.h"
#include "common/net/vf.h"
#include "common/util/guid.h"

static void test_parse(void **state)
{
	static const struct {
		const char *text;
		uint64_t guid;
	} ok[] = {
		{ "02:00:00:00:00:00:00:01", 0x0200000000000001ULL },
		{ "00:11:22:33:44:55:66:77", 0x0011223344556677ULL },
		{ "FF:ff:Fe:dC:ba:98:76:54", 0xfffffedcba987654ULL },
		{ "00:00:00:00:00:00:00:00", 0 }, /* the text is valid; the config refuses zero */
	};
	char buf[GUID_TEXT_SIZE];
	uint64_t g;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		g = 1;
		assert_int_equal(guid_parse(ok[i].text, &g), 0);
		assert_true(g == ok[i].guid);
		assert_int_equal(guid_parse(guid_format(g, buf), &g), 0);
		assert_true(g == ok[i].guid);
	}
	assert_string_equal(guid_format(0x0a1b2c3d4e5f6071ULL, buf), "0a:1b:2c:3d:4e:5f:60:71");
	assert_string_equal(guid_format(UINT64_MAX, buf), "ff:ff:ff:ff:ff:ff:ff:ff");
}

static void test_parse_refuses(void **state)
{
	static const char *const bad[] = {
		"", "02", "02:00:00:00:00:00:00", "02:00:00:00:00:00:00:01:02",
		"02:00:00:00:00:00:00:01:", "2:00:00:00:00:00:00:01", "002:00:00:00:00:00:00:01",
		"02-00-00-00-00-00-00-01", "02:00:00:00:00:00:00:0g", " 02:00:00:00:00:00:00:01",
		"02:00:00:00:00:00:00:01 ", "02:00:00:00:00:00:00:01\n", "+2:00:00:00:00:00:00:01",
		"0x:00:00:00:00:00:00:01", "02:00:00:00:00:00:01", "0200000000000001",
		"02:00:00:00:00:00:00:1", "02::00:00:00:00:00:00:01",
	};
	uint64_t g = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(guid_parse(bad[i], &g), -EINVAL);
		assert_true(g == 42);
	}
	assert_int_equal(guid_parse(NULL, &g), -EINVAL);
}

/* One attribute header at @p: its length and type (the nested flag dropped). */
static void attr_at(const uint8_t *p, uint16_t len, uint16_t type)
{
	struct nlattr a;

	memcpy(&a, p, sizeof(a));
	assert_int_equal(a.nla_len, len);
	assert_int_equal(a.nla_type & NLA_TYPE_MASK, type);
}

/* RTM_SETLINK on the PF: VFINFO_LIST > VF_INFO > one GUID, the struct's padding zeroed. */
static void check_request(enum net_vf_guid which, uint16_t type, uint64_t guid)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	const struct nlmsghdr *nlh;
	const struct ifinfomsg *ifi;
	const uint8_t *p;
	struct ifla_vf_guid got;
	static const uint8_t zero[4];

	assert_int_equal(sizeof(struct ifla_vf_guid), 16);
	assert_int_equal(net_vf_ib_guid_msg(7, 3, which, guid, &msg), 0);
	nlh = nlmsg_hdr(msg);
	assert_int_equal(nlh->nlmsg_type, RTM_SETLINK);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
	/* header 16, ifinfomsg 16, list 4 + info 4 + GUID 4 + 16 */
	assert_int_equal(nlh->nlmsg_len, 16 + 16 + 28);
	ifi = nlmsg_data(nlh);
	assert_int_equal(ifi->ifi_family, AF_UNSPEC);
	assert_int_equal(ifi->ifi_index, 7);
	assert_int_equal(ifi->ifi_flags, 0);
	assert_int_equal(ifi->ifi_change, 0);
	p = (const uint8_t *)nlh + 32;
	attr_at(p, 28, IFLA_VFINFO_LIST);
	attr_at(p + 4, 24, IFLA_VF_INFO);
	attr_at(p + 8, 20, type);
	memcpy(&got, p + 12, sizeof(got));
	assert_int_equal(got.vf, 3);
	assert_true(got.guid == guid);
	assert_memory_equal(p + 16, zero, 4); /* no stack bytes to the kernel */
	/* The GUID as a host-order u64, first octet most significant (iproute2, vishvananda/netlink). */
	assert_true(got.guid >> 56 == guid >> 56);
}

static void test_request_bytes(void **state)
{
	(void)state;
	check_request(NET_VF_NODE_GUID, IFLA_VF_IB_NODE_GUID, 0x1122334455667788ULL);
	check_request(NET_VF_PORT_GUID, IFLA_VF_IB_PORT_GUID, 0x99aabbccddeeff00ULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_request_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
