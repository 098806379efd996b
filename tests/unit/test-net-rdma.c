/* Unit tests: RDMA netlink requests and replies (common/net/rdma.c) against a fake RDMA kernel */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <rdma/rdma_netlink.h>

#include "common/net/rdma.h"
#include "tests/unit/fake-net-hostdev.h"

#define NLDEV(op) RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op)

static int setup(void **state)
{
	(void)state;
	fake_net_reset(NULL);
	fake_rdma_reset();
	return 0;
}

static const struct nlmsghdr *last(void)
{
	return (const struct nlmsghdr *)fake_rdma.last;
}

/* The value of a u32 attribute of the last request, -1 when absent. */
static int64_t last_u32(uint16_t type)
{
	const struct nlattr *a;
	int rem;

	nlmsg_for_each_attr(a, last(), 0, rem)
		if (nla_type(a) == type)
			return nla_get_u32(a);
	return -1;
}

static void test_mode(void **state)
{
	bool exclusive = true;

	(void)state;
	fake_rdma.mode_attr = 1;
	assert_int_equal(rdma_netns_exclusive(NULL, &exclusive), 0);
	assert_false(exclusive);
	assert_int_equal(fake_rdma.last_bus, 20 /* NETLINK_RDMA */);
	assert_int_equal(last()->nlmsg_type, NLDEV(RDMA_NLDEV_CMD_SYS_GET));
	assert_false(last()->nlmsg_flags & NLM_F_DUMP);
	assert_true(last()->nlmsg_flags & NLM_F_REQUEST);

	fake_rdma.mode_attr = 0;
	assert_int_equal(rdma_netns_exclusive(NULL, &exclusive), 0);
	assert_true(exclusive);

	/* A kernel before netns modes (5.2) has no SYS_GET: -EINVAL, which means shared. */
	fake_rdma.before_5_2 = true;
	exclusive = true;
	assert_int_equal(rdma_netns_exclusive(NULL, &exclusive), -EOPNOTSUPP);
	assert_true(exclusive); /* untouched on failure */
	assert_int_equal(last()->nlmsg_type, NLDEV(RDMA_NLDEV_CMD_SYS_GET));
	fake_rdma.before_5_2 = false;

	/* Other errors are passed on as they are. */
	fake_net.fail_at = fake_net.ops + 1;
	fake_net.fail_errno = ENOBUFS;
	assert_int_equal(rdma_netns_exclusive(NULL, &exclusive), -ENOBUFS);

	fake_rdma.absent = true;
	assert_int_equal(rdma_netns_exclusive(NULL, &exclusive), -EPROTONOSUPPORT);

	fake_rdma.absent = false;
	fake_rdma.mode_attr = 0;
	fake_net.fail_at = fake_net.ops + 1;
	fake_net.fail_errno = EPERM;
	assert_int_equal(rdma_netns_exclusive(NULL, &exclusive), -EPERM);
}

static void test_dev_of_netdev(void **state)
{
	struct net_link *eth = fake_net_add_link(0, "ens1f0", "", 1, 1500);
	struct net_link *other = fake_net_add_link(0, "ens2f0", "", 1, 1500);
	struct rdma_dev dev = { 0 };

	(void)state;
	fake_rdma_add(3, "mlx5_0", 0, 0); /* an IB port without a netdev */
	fake_rdma_add(7, "mlx5_1", 0, eth->ifindex);
	fake_rdma_add(9, "mlx5_2", 0, other->ifindex);

	assert_int_equal(rdma_dev_of_netdev(NULL, eth->ifindex, &dev), 0);
	assert_int_equal(dev.index, 7);
	assert_string_equal(dev.name, "mlx5_1");
	/* The port dump names its device: the kernel refuses one without. */
	assert_int_equal(last()->nlmsg_type, NLDEV(RDMA_NLDEV_CMD_PORT_GET));
	assert_true(last()->nlmsg_flags & NLM_F_DUMP);
	assert_int_equal(last_u32(RDMA_NLDEV_ATTR_DEV_INDEX), 7);
	/* device dump + port dumps of mlx5_0 and mlx5_1, then it stops */
	assert_int_equal(fake_rdma.requests, 3);

	assert_int_equal(rdma_dev_of_netdev(NULL, other->ifindex, &dev), 0);
	assert_string_equal(dev.name, "mlx5_2");
	assert_int_equal(rdma_dev_of_netdev(NULL, 99, &dev), -ENODEV);
	assert_int_equal(rdma_dev_of_netdev(NULL, 0, &dev), -EINVAL);
}

/* The kernel reports a port's netdev only to its own netns; exclusive mode hides other devices. */
static void test_visibility(void **state)
{
	int pod = fake_net_add_netns("/run/netns/pod");
	struct net_link *eth = fake_net_add_link(pod, "net1", "", 1, 1500);
	struct rdma_dev dev;

	(void)state;
	fake_rdma_add(7, "mlx5_1", 0, eth->ifindex);
	fake_rdma.mode_attr = 1; /* shared: the device is seen, but the netdev is elsewhere */
	assert_int_equal(rdma_dev_of_netdev(NULL, eth->ifindex, &dev), -ENODEV);
	fake_net.current = pod;
	assert_int_equal(rdma_dev_of_netdev(NULL, eth->ifindex, &dev), 0);
	fake_rdma.mode_attr = 0; /* exclusive: the device is in the host, invisible from the pod */
	assert_int_equal(rdma_dev_of_netdev(NULL, eth->ifindex, &dev), -ENODEV);
	fake_net.current = 0;
}

/* An interrupted dump is retried from scratch: no device is listed twice. */
static void test_dump_retry(void **state)
{
	struct net_link *eth = fake_net_add_link(0, "ens1f0", "", 1, 1500);
	struct rdma_dev dev;

	(void)state;
	fake_rdma_add(3, "mlx5_0", 0, 0);
	fake_rdma_add(7, "mlx5_1", 0, eth->ifindex);
	fake_rdma.interrupt_dump = true;
	assert_int_equal(rdma_dev_of_netdev(NULL, eth->ifindex, &dev), 0);
	assert_string_equal(dev.name, "mlx5_1");
	/* one device dump (answered twice) and two port dumps, not four */
	assert_int_equal(fake_rdma.requests, 3);
}

/* A device is present by index and name, as the netns sees it; a software one goes with its netdev. */
static void test_present(void **state)
{
	int pod = fake_net_add_netns("/run/netns/pod");
	struct net_link *eth = fake_net_add_link(0, "vmhost0", "", 1, 1500);
	struct rdma_dev mlx = { .index = 7, .name = "mlx5_1" }, rxe = { .index = 8, .name = "rxe0" };
	struct rdma_dev other = { .index = 7, .name = "mlx5_9" };

	(void)state;
	fake_rdma.mode_attr = 0;
	fake_rdma_add(7, "mlx5_1", 0, 0);
	fake_rdma_add(8, "rxe0", 0, eth->ifindex)->software = true;
	assert_int_equal(rdma_dev_present(NULL, &mlx), 1);
	assert_int_equal(rdma_dev_present(NULL, &rxe), 1);
	assert_int_equal(last()->nlmsg_type, NLDEV(RDMA_NLDEV_CMD_GET));
	assert_true(last()->nlmsg_flags & NLM_F_DUMP);
	assert_int_equal(rdma_dev_present(NULL, &other), 0);
	/* Exclusive mode: the pod sees neither. */
	fake_net.current = pod;
	assert_int_equal(rdma_dev_present(NULL, &mlx), 0);
	fake_net.current = 0;
	/* Its netdev leaves the host: rxe0 is gone, mlx5_1 stays. */
	fake_net_place(eth, pod);
	assert_int_equal(rdma_dev_present(NULL, &rxe), 0);
	assert_int_equal(rdma_dev_present(NULL, &mlx), 1);
	fake_net.fail_at = fake_net.ops + 1;
	fake_net.fail_errno = ENOBUFS;
	assert_int_equal(rdma_dev_present(NULL, &mlx), -ENOBUFS);
}

static void test_set_netns(void **state)
{
	int pod = fake_net_add_netns("/run/netns/pod");
	struct fake_rdma_dev *d = fake_rdma_add(7, "mlx5_1", 0, 0);

	(void)state;
	fake_rdma.mode_attr = 0;
	assert_int_equal(rdma_dev_set_netns(NULL, 7, FAKE_NET_FD_BASE + pod), 0);
	assert_int_equal(last()->nlmsg_type, NLDEV(RDMA_NLDEV_CMD_SET));
	assert_int_equal(last_u32(RDMA_NLDEV_ATTR_DEV_INDEX), 7);
	assert_int_equal(last_u32(RDMA_NLDEV_NET_NS_FD), FAKE_NET_FD_BASE + pod);
	assert_int_equal(d->ns, pod);
	/* From the host it is now out of sight. */
	assert_int_equal(rdma_dev_set_netns(NULL, 7, FAKE_NET_FD_BASE), -EINVAL);
	fake_net.current = pod;
	assert_int_equal(rdma_dev_set_netns(NULL, 7, FAKE_NET_FD_BASE), 0);
	assert_int_equal(d->ns, 0);
	fake_net.current = 0;
	/* Shared mode: the kernel refuses. */
	fake_rdma.mode_attr = 1;
	assert_int_equal(rdma_dev_set_netns(NULL, 7, FAKE_NET_FD_BASE + pod), -EOPNOTSUPP);
	assert_int_equal(rdma_dev_set_netns(NULL, 7, -1), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_mode, setup),
		cmocka_unit_test_setup(test_dev_of_netdev, setup),
		cmocka_unit_test_setup(test_visibility, setup),
		cmocka_unit_test_setup(test_dump_retry, setup),
		cmocka_unit_test_setup(test_present, setup),
		cmocka_unit_test_setup(test_set_netns, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
