/* Unit tests: host-device sysfs lookups (PCI, virtio, auxiliary bus, kernel path, DPDK) in a fake tree */
#include <errno.h>
#include <limits.h>
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

#include "common/net/device.h"
#include "tests/unit/fake-net-hostdev.h"
#include "tests/unit/fake-sysfs.h"

static char root[256];

static void mkdirs(const char *rel)
{
	assert_int_equal(fake_sysfs_mkdirs(root, rel), 0);
}

static void symlink_at(const char *rel, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

/* A PCI function as the kernel lays it out: the device, its driver link, its netdevs. */
static void pci_dev(const char *addr, const char *driver, const char *const *netdevs)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s", addr);
	mkdirs(rel);
	if (driver) {
		char target[512];

		snprintf(rel, sizeof(rel), "bus/pci/drivers/%s", driver);
		mkdirs(rel);
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/driver", addr);
		snprintf(target, sizeof(target), "../../../bus/pci/drivers/%s", driver);
		symlink_at(rel, target);
	}
	for (size_t i = 0; netdevs && netdevs[i]; i++) {
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/net/%s", addr, netdevs[i]);
		mkdirs(rel);
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "%s/hostdev-sysfs.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(root));
	pci_dev("0000:01:00.0", "mlx5_core", (const char *const[]){ "ens1f0", NULL });
	pci_dev("0000:01:00.1", "vfio-pci", NULL);
	pci_dev("0000:01:00.2", "igb_uio", NULL);
	pci_dev("0000:01:00.3", "uio_pci_generic", NULL);
	pci_dev("0000:01:00.4", NULL, NULL);
	pci_dev("0000:01:00.5", "mlx5_core", (const char *const[]){ "zeta", "alpha", "mid", NULL });
	pci_dev("0000:01:00.6", "mlx5_core", NULL);
	pci_dev("0000:02:00.0", "virtio-pci", NULL);
	mkdirs("bus/pci/devices/0000:02:00.0/virtio3/net/eth7");
	mkdirs("bus/pci/devices/0000:02:00.0/virtio9/net/eth9");
	mkdirs("bus/auxiliary/devices/mlx5_core.sf.4/net/enp1s0f0s4");
	mkdirs("bus/auxiliary/devices/mlx5_core.rdma.0");
	mkdirs("devices/pci0000:00/0000:00:03.0/net/eth3");
	mkdirs("devices/virtual/nonet");
	/* Names no real /sys can have: not hexadecimal, no such driver. */
	mkdirs("bus/auxiliary/devices/cni-unit-test.sf.4/net/ut0");
	mkdirs("bus/pci/devices/zzzz:zz:zz.z/net/ut1");
	fake_sysfs_set_root(root);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	fake_sysfs_set_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void test_pci_netdev(void **state)
{
	char name[IFNAMSIZ] = "";

	(void)state;
	assert_int_equal(device_pci_netdev("0000:01:00.0", name), 0);
	assert_string_equal(name, "ens1f0");
	/* Several interfaces: the first in name order, as Go's sorted ReadDir. */
	assert_int_equal(device_pci_netdev("0000:01:00.5", name), 0);
	assert_string_equal(name, "alpha");
	/* virtio-net: below the first virtio<N> device. */
	assert_int_equal(device_pci_netdev("0000:02:00.0", name), 0);
	assert_string_equal(name, "eth7");
	strcpy(name, "untouched");
	assert_int_equal(device_pci_netdev("0000:01:00.6", name), -ENODEV);
	assert_int_equal(device_pci_netdev("0000:01:00.1", name), -ENODEV);
	assert_int_equal(device_pci_netdev("0000:09:00.0", name), -ENOENT);
	assert_string_equal(name, "untouched");
}

static void test_exists(void **state)
{
	(void)state;
	assert_true(device_pci_exists("0000:01:00.0"));
	assert_false(device_pci_exists("0000:09:00.0"));
	assert_false(device_pci_exists("mlx5_core.sf.4"));
	assert_true(device_aux_exists("mlx5_core.sf.4"));
	assert_false(device_aux_exists("0000:01:00.0"));
	/* Names that would leave the directory are never looked up. */
	assert_false(device_pci_exists(".."));
	assert_false(device_pci_exists("../devices/0000:01:00.0"));
	assert_false(device_pci_exists(""));
	assert_false(device_aux_exists(NULL));
}

static void test_aux_netdev(void **state)
{
	char name[IFNAMSIZ];

	(void)state;
	assert_int_equal(device_aux_netdev("mlx5_core.sf.4", name), 0);
	assert_string_equal(name, "enp1s0f0s4");
	assert_int_equal(device_aux_netdev("mlx5_core.rdma.0", name), -ENODEV);
	assert_int_equal(device_aux_netdev("mlx5_core.sf.99", name), -ENOENT);
	assert_int_equal(device_aux_netdev("a/b", name), -EINVAL);
}

static void test_dpdk(void **state)
{
	(void)state;
	assert_int_equal(device_pci_driver_is_dpdk("0000:01:00.0"), 0);
	assert_int_equal(device_pci_driver_is_dpdk("0000:01:00.1"), 1);
	assert_int_equal(device_pci_driver_is_dpdk("0000:01:00.2"), 1);
	assert_int_equal(device_pci_driver_is_dpdk("0000:01:00.3"), 1);
	assert_int_equal(device_pci_driver_is_dpdk("0000:01:00.4"), 0); /* no driver bound */
	assert_int_equal(device_pci_driver_is_dpdk("0000:02:00.0"), 0);
	assert_int_equal(device_pci_driver_is_dpdk("0000:09:00.0"), -ENOENT);
	assert_int_equal(device_pci_driver_is_dpdk("../x"), -EINVAL);
}

static void test_kernelpath(void **state)
{
	char name[IFNAMSIZ];

	(void)state;
	assert_int_equal(device_kernelpath_netdev("/sys/devices/pci0000:00/0000:00:03.0", name), 0);
	assert_string_equal(name, "eth3");
	assert_int_equal(device_kernelpath_netdev("/sys/devices/virtual/nonet", name), -ENODEV);
	assert_int_equal(device_kernelpath_netdev("/sys/devices/nothere", name), -ENOENT);
	assert_int_equal(device_kernelpath_netdev("/sys/class/net/eth3", name), -EINVAL);
	assert_int_equal(device_kernelpath_netdev("/sys/devices/../class", name), -EINVAL);
	assert_int_equal(device_kernelpath_netdev("/sys/devices/x/..", name), -EINVAL);
	assert_int_equal(device_kernelpath_netdev("relative/path", name), -EINVAL);
}

/* The root is a test seam only: without the setter, lookups read the real /sys. */
/* An SR-IOV VF: its PF by physfn, its index by the PF's virtfnN link that points back. */
static void test_netdev_vf(void **state)
{
	struct device_vf vf;

	(void)state;
	pci_dev("0000:05:00.0", "mlx5_core", (const char *const[]){ "ib0", NULL });
	for (int i = 1; i <= 4; i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "0000:05:00.%d", i);
		pci_dev(rel, "mlx5_core", NULL);
		snprintf(rel, sizeof(rel), "bus/pci/devices/0000:05:00.%d/physfn", i);
		symlink_at(rel, "../0000:05:00.0");
	}
	symlink_at("bus/pci/devices/0000:05:00.0/virtfn0", "../0000:05:00.1");
	symlink_at("bus/pci/devices/0000:05:00.0/virtfn1", "../0000:05:00.2");
	symlink_at("bus/pci/devices/0000:05:00.0/virtfn10", "../0000:05:00.3");
	symlink_at("bus/pci/devices/0000:05:00.0/virtfnx", "../0000:05:00.4");
	mkdirs("class/net/ibv3");
	symlink_at("class/net/ibv3/device", "../../../bus/pci/devices/0000:05:00.3");
	mkdirs("class/net/ibv1");
	symlink_at("class/net/ibv1/device", "../../../bus/pci/devices/0000:05:00.2");
	mkdirs("class/net/ib0");
	symlink_at("class/net/ib0/device", "../../../bus/pci/devices/0000:05:00.0");
	mkdirs("class/net/orphan");
	symlink_at("class/net/orphan/device", "../../../bus/pci/devices/0000:05:00.4");

	assert_int_equal(device_netdev_vf("ibv3", &vf), 0);
	assert_string_equal(vf.pci, "0000:05:00.3");
	assert_string_equal(vf.pf_pci, "0000:05:00.0");
	assert_int_equal(vf.index, 10);
	assert_int_equal(device_netdev_vf("ibv1", &vf), 0);
	assert_int_equal(vf.index, 1);
	/* A PF has no physfn; a VF its PF does not list (virtfnx is no index). */
	assert_int_equal(device_netdev_vf("ib0", &vf), -ENOENT);
	assert_int_equal(device_netdev_vf("orphan", &vf), -ENOENT);
	assert_int_equal(device_netdev_vf("nosuch", &vf), -ENOENT);
	assert_int_equal(device_netdev_vf("../ibv3", &vf), -EINVAL);
}

static void test_root_reset(void **state)
{
	char name[IFNAMSIZ];

	(void)state;
	fake_sysfs_set_root(NULL);
	assert_false(device_aux_exists("cni-unit-test.sf.4"));
	assert_int_equal(device_pci_netdev("zzzz:zz:zz.z", name), -ENOENT);
	fake_sysfs_set_root(root);
	assert_true(device_aux_exists("cni-unit-test.sf.4"));
	assert_int_equal(device_pci_netdev("zzzz:zz:zz.z", name), 0);
	assert_string_equal(name, "ut1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pci_netdev),
		cmocka_unit_test(test_exists),
		cmocka_unit_test(test_aux_netdev),
		cmocka_unit_test(test_dpdk),
		cmocka_unit_test(test_kernelpath),
		cmocka_unit_test(test_netdev_vf),
		cmocka_unit_test(test_root_reset),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
