/* Unit tests: the host-device flow against fake-net and a fake RDMA kernel, with a failure at every step */
#include <errno.h>
#include <limits.h>
#include <net/if_arp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cni/error.h"
#include "common/cni/result.h"
#include "common/net/device.h"
#include "plugins/host-device/hostdev.h"
#include "tests/unit/fake-net-hostdev.h"

#define POD_PATH "/run/netns/pod"
#define IPAM_RESULT "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.1.0.5/24\"}]}"
#define CONF_DEVICE "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\"," \
		    "\"device\":\"ens1f0\",\"ipam\":{\"type\":\"fake\"}}"

static const uint8_t mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static int pod;
static int ifindex;

static struct cni_ctx ctx;
static struct cni_result result;
static struct cni_err err;

static void release(void)
{
	cni_conf_free(&ctx.conf);
	cni_result_free(&result);
	memset(&err, 0, sizeof(err));
}

/* The host: ens1f0, up, with an alias of its own, and mlx5_1 on it; an empty pod. */
static void world(int rdma_mode)
{
	struct net_link *l;

	release();
	fake_net_reset(IPAM_RESULT);
	fake_rdma_reset();
	pod = fake_net_add_netns(POD_PATH);
	l = fake_net_add_link(0, "ens1f0", "", ARPHRD_ETHER, 1500);
	l->flags |= IFF_UP;
	memcpy(l->hwaddr, mac, sizeof(mac));
	l->hwaddr_len = sizeof(mac);
	snprintf(l->alias, sizeof(l->alias), "uplink-a");
	ifindex = l->ifindex;
	fake_rdma.mode_attr = rdma_mode;
	fake_rdma_add(7, "mlx5_1", 0, ifindex);
}

static int run(enum cni_command cmd, const char *json)
{
	int r;

	release();
	r = cni_conf_parse(json, strlen(json), &ctx.conf, &err);
	assert_int_equal(r, 0);
	ctx.env = (struct cni_env){ .command = cmd, .command_name = cni_command_name(cmd),
				    .container_id = "ctr", .netns = POD_PATH, .ifname = "net1",
				    .args = "", .path = "/nonexistent" };
	if (cmd == CNI_CMD_ADD)
		return hostdev_plugin.add(&ctx, &result, &err);
	if (cmd == CNI_CMD_DEL)
		return hostdev_plugin.del(&ctx, &err);
	return hostdev_plugin.check(&ctx, &err);
}

static size_t links_outside(int ns_a, int ns_b)
{
	size_t n = 0;

	for (int ns = 0; ns < FAKE_NET_MAX_NS; ns++)
		if (ns != ns_a && ns != ns_b)
			n += fake_net_count(ns);
	return n;
}

/* Everything as world() made it: the state after any failed ADD or a complete DEL. */
static void assert_home(bool up, const char *alias)
{
	struct net_link *l = fake_net_find(0, "ens1f0");

	assert_non_null(l);
	assert_int_equal(!!(l->flags & IFF_UP), up);
	assert_string_equal(l->alias, alias);
	assert_int_equal(fake_net_count(pod), 0);
	assert_int_equal(links_outside(0, -1), 0); /* nothing in the pod or a temporary netns */
	assert_int_equal(fake_rdma.devs[0].ns, 0);
	assert_int_equal(fake_net.ipam_allocated, 0);
}

/* The state after a successful ADD. */
static void assert_in_pod(bool rdma_moved)
{
	struct net_link *l = fake_net_find(pod, "net1");

	assert_non_null(l);
	assert_true(l->flags & IFF_UP);
	assert_string_equal(l->alias, "ens1f0");
	assert_null(fake_net_find(0, "ens1f0"));
	assert_int_equal(links_outside(pod, -1), 0);
	assert_int_equal(fake_rdma.devs[0].ns, rdma_moved ? pod : 0);
	assert_int_equal(fake_net.ipam_allocated, 1);
}

static void test_exclusive_moves_rdma(void **state)
{
	char *json = NULL;

	(void)state;
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	assert_in_pod(true);
	assert_int_equal(result.n_ifaces, 1);
	assert_string_equal(result.ifaces[0].name, "net1");
	assert_string_equal(result.ifaces[0].mac, "02:11:22:33:44:55");
	assert_string_equal(result.ifaces[0].sandbox, POD_PATH);
	assert_int_equal(result.n_ips, 1);
	assert_int_equal(result.ips[0].iface, 0);
	assert_non_null(strstr(fake_net_log_lines(), "host: rdma move mlx5_1"));

	/* CHECK with the ADD's result as prevResult. */
	assert_int_equal(cni_result_to_json(&result, "1.0.0", &json, &err), 0);
	{
		char conf[2048];

		snprintf(conf, sizeof(conf),
			 "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
			 "\"device\":\"ens1f0\",\"ipam\":{\"type\":\"fake\"},\"prevResult\":%s}", json);
		free(json);
		assert_int_equal(run(CNI_CMD_CHECK, conf), 0);
		fake_net_find(pod, "net1")->hwaddr[5] = 0x56;
		assert_int_equal(run(CNI_CMD_CHECK, conf), -EINVAL);
		assert_int_equal(err.code, CNI_ERR_CHECK_FAILED);
		fake_net_find(pod, "net1")->hwaddr[5] = 0x55;
	}

	/* DEL finds the RDMA device from inside the pod and brings both home. */
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_home(false, "");
	assert_non_null(strstr(fake_net_log_lines(), "ns1: rdma move mlx5_1 to 0"));
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_home(false, "");
}

static void test_shared_moves_nothing(void **state)
{
	(void)state;
	world(1);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	assert_in_pod(false);
	assert_null(strstr(fake_net_log_lines(), "rdma move"));
	assert_null(strstr(fake_net_log_lines(), "rdma dev dump")); /* the mode decides first */
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_home(false, "");
	assert_null(strstr(fake_net_log_lines(), "rdma move"));
}

static void test_no_rdma_subsystem(void **state)
{
	(void)state;
	world(0);
	fake_rdma.absent = true;
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	assert_in_pod(false);
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_home(false, "");
}

/* A failure at the Nth operation of ADD, for every N: ADD fails and nothing is left changed. */
static void test_add_fails_at_every_step(void **state)
{
	unsigned int total;

	(void)state;
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	total = fake_net.ops;
	assert_true(total > 10);
	for (unsigned int n = 1; n <= total; n++) {
		world(0);
		fake_net.fail_at = n;
		fake_net.fail_errno = EIO;
		assert_int_not_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
		assert_int_not_equal(err.code, 0);
		assert_home(true, "uplink-a");
		/* The device works again: a plain ADD succeeds. */
		fake_net.fail_at = 0;
		assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
		assert_in_pod(true);
	}
}

/*
 * A failure at the Nth operation of DEL: either DEL fails and the attachment
 * is whole in the pod (device and RDMA device), or DEL succeeded; a retried
 * DEL then brings everything home.
 */
static void test_del_fails_at_every_step(void **state)
{
	unsigned int base, total;

	(void)state;
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	base = fake_net.ops;
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	total = fake_net.ops - base;
	for (unsigned int n = 1; n <= total; n++) {
		world(0);
		assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
		fake_net.fail_at = fake_net.ops + n;
		fake_net.fail_errno = EIO;
		if (run(CNI_CMD_DEL, CONF_DEVICE) < 0) {
			struct net_link *l = fake_net_find(pod, "net1");

			assert_non_null(l);
			assert_true(l->flags & IFF_UP);
			assert_string_equal(l->alias, "ens1f0");
			assert_int_equal(links_outside(pod, -1), 0);
			assert_int_equal(fake_rdma.devs[0].ns, pod);
		}
		fake_net.fail_at = 0;
		assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
		assert_home(false, "");
	}
}

static void test_pod_name_clash(void **state)
{
	(void)state;
	world(0);
	fake_net_add_link(pod, "net1", "veth", ARPHRD_ETHER, 1500);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), -EEXIST);
	assert_non_null(strstr(err.msg, "container already has an interface named \"net1\""));
	assert_non_null(fake_net_find(0, "ens1f0"));
	assert_string_equal(fake_net_find(0, "ens1f0")->alias, "uplink-a");
	assert_true(fake_net_find(0, "ens1f0")->flags & IFF_UP);
	assert_int_equal(fake_net_count(pod), 1);
	assert_int_equal(fake_rdma.devs[0].ns, 0);
	/* The runtime's DEL after it leaves the other net1 (no alias) alone. */
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_non_null(fake_net_find(pod, "net1"));
}

static void test_host_name_clash_on_del(void **state)
{
	(void)state;
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	fake_net_add_link(0, "ens1f0", "veth", ARPHRD_ETHER, 1500);
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), -EEXIST);
	assert_int_equal(err.code, HOSTDEV_ERR_NAME_TAKEN);
	assert_non_null(fake_net_find(pod, "net1"));
	assert_int_equal(fake_rdma.devs[0].ns, pod);
}

/* sysfs selectors in a fake tree: PCI, auxiliary device, DPDK. */
static char root[256];

static void mkdirs(const char *rel)
{
	assert_int_equal(fake_sysfs_mkdirs(root, rel), 0);
}

static int sysfs_setup(void **state)
{
	char path[PATH_MAX];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/hostdev-plugin.XXXXXX");
	assert_non_null(mkdtemp(root));
	mkdirs("bus/pci/devices/0000:01:00.0/net/ens1f0");
	mkdirs("bus/pci/devices/0000:01:00.1");
	mkdirs("bus/pci/drivers/vfio-pci");
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:01:00.1/driver", root);
	assert_int_equal(symlink("../../../bus/pci/drivers/vfio-pci", path), 0);
	mkdirs("bus/auxiliary/devices/mlx5_core.sf.2/net/ens1f0");
	device_sysfs_set_root(root);
	return 0;
}

static int sysfs_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	device_sysfs_set_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	release();
	return 0;
}

static void test_selectors(void **state)
{
	static const char *const confs[] = {
		"{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
		"\"pciBusID\":\"0000:01:00.0\",\"ipam\":{\"type\":\"fake\"}}",
		/* Multus: top-level deviceID and pciBusID, here an SF on the auxiliary bus */
		"{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
		"\"deviceID\":\"mlx5_core.sf.2\",\"pciBusID\":\"mlx5_core.sf.2\",\"ipam\":{\"type\":\"fake\"}}",
		"{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
		"\"pciBusID\":\"0000:09:00.0\",\"runtimeConfig\":{\"deviceID\":\"mlx5_core.sf.2\"},"
		"\"ipam\":{\"type\":\"fake\"}}",
		"{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
		"\"hwaddr\":\"02:11:22:33:44:55\",\"ipam\":{\"type\":\"fake\"}}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(confs) / sizeof(confs[0]); i++) {
		world(1);
		assert_int_equal(run(CNI_CMD_ADD, confs[i]), 0);
		assert_in_pod(false);
		assert_int_equal(run(CNI_CMD_DEL, confs[i]), 0);
		assert_home(false, "");
	}
}

static void test_dpdk(void **state)
{
	const char *conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
			   "\"runtimeConfig\":{\"deviceID\":\"0000:01:00.1\"},\"ipam\":{\"type\":\"fake\"}}";

	(void)state;
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, conf), 0);
	assert_int_equal(result.n_ifaces, 1);
	assert_string_equal(result.ifaces[0].name, "net1");
	assert_string_equal(result.ifaces[0].mac, ""); /* no mac for DPDK */
	assert_string_equal(result.ifaces[0].sandbox, POD_PATH);
	assert_int_equal(result.n_ips, 1);
	assert_int_equal(fake_net.ipam_allocated, 1);
	assert_null(strstr(fake_net_log_lines(), "move"));
	assert_int_equal(fake_net_count(pod), 0);
	assert_int_equal(run(CNI_CMD_DEL, conf), 0);
	assert_int_equal(fake_net.ipam_allocated, 0);
	assert_null(strstr(fake_net_log_lines(), "move"));
}

static void test_not_found(void **state)
{
	(void)state;
	world(0);
	assert_int_equal(run(CNI_CMD_ADD,
			     "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
			     "\"runtimeConfig\":{\"deviceID\":\"0000:05:00.0\"}}"), -ENODEV);
	assert_int_equal(err.code, CNI_ERR_NOT_FOUND);
	assert_string_equal(err.msg, "runtime config DeviceID 0000:05:00.0 not found or unsupported");
	assert_int_equal(run(CNI_CMD_ADD, "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\"}"),
			 -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_string_equal(err.msg, "specify either \"device\", \"hwaddr\", \"kernelpath\" or \"pciBusID\"");
	assert_home(true, "uplink-a");
}

static int teardown(void **state)
{
	(void)state;
	release();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_exclusive_moves_rdma, teardown),
		cmocka_unit_test_teardown(test_shared_moves_nothing, teardown),
		cmocka_unit_test_teardown(test_no_rdma_subsystem, teardown),
		cmocka_unit_test_teardown(test_add_fails_at_every_step, teardown),
		cmocka_unit_test_teardown(test_del_fails_at_every_step, teardown),
		cmocka_unit_test_teardown(test_pod_name_clash, teardown),
		cmocka_unit_test_teardown(test_host_name_clash_on_del, teardown),
		cmocka_unit_test_setup_teardown(test_selectors, sysfs_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_dpdk, sysfs_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_not_found, sysfs_setup, sysfs_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
