/* Unit test: the RTM_NEWLINK of a dummy link, as `ip link add NAME type dummy` sends it */
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
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/link-internal.h"
#include "common/net/link.h"

static void test_dummy_attributes(void **state)
{
	struct net_link_buf buf;
	struct nlattr *tb[IFLA_MAX + 1], *info[IFLA_INFO_MAX + 1];
	const struct ifinfomsg *ifi;
	struct nlmsghdr *nlh = &buf.align_;
	int len;

	(void)state;
	len = net_link_build_create(&(struct net_child){ .kind = NET_CHILD_DUMMY, .name = "d0",
							 .netns_fd = -1, .up = true },
				    buf.data, sizeof(buf.data));
	assert_true(len > 0);
	assert_int_equal(nlh->nlmsg_type, RTM_NEWLINK);
	assert_int_equal(nlh->nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL), NLM_F_CREATE | NLM_F_EXCL);
	ifi = nlmsg_data(nlh);
	assert_int_equal(ifi->ifi_flags & IFF_UP, IFF_UP);
	assert_int_equal(nlmsg_parse(nlh, sizeof(*ifi), tb, IFLA_MAX, NULL), 0);
	assert_non_null(tb[IFLA_IFNAME]);
	assert_string_equal(nla_data(tb[IFLA_IFNAME]), "d0");
	/* No master, no netns, no MTU or address unless asked. */
	assert_null(tb[IFLA_LINK]);
	assert_null(tb[IFLA_NET_NS_FD]);
	assert_null(tb[IFLA_MTU]);
	assert_null(tb[IFLA_ADDRESS]);
	assert_non_null(tb[IFLA_LINKINFO]);
	assert_int_equal(nla_parse_nested(info, IFLA_INFO_MAX, tb[IFLA_LINKINFO], NULL), 0);
	assert_int_equal(nla_len(info[IFLA_INFO_KIND]), 5);
	assert_memory_equal(nla_data(info[IFLA_INFO_KIND]), "dummy", 5);
	assert_null(info[IFLA_INFO_DATA]);
}

static void test_master_rules(void **state)
{
	struct net_link_buf buf;

	(void)state;
	/* A dummy has no master; every other kind needs one. */
	assert_int_equal(net_link_build_create(&(struct net_child){ .kind = NET_CHILD_DUMMY,
								    .name = "d0", .master_ifindex = 2,
								    .netns_fd = -1 },
					       buf.data, sizeof(buf.data)), -EINVAL);
	assert_int_equal(net_link_build_create(&(struct net_child){ .kind = NET_CHILD_MACVLAN,
								    .name = "m0", .netns_fd = -1 },
					       buf.data, sizeof(buf.data)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dummy_attributes),
		cmocka_unit_test(test_master_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
