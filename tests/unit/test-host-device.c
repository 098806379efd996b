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

#include "common/cni/result.h"
#include "common/cni/trust.h"
#include "common/net/device.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "plugins/host-device/hostdev.h"
#include "plugins/host-device/state.h"
#include "tests/unit/fake-net-hostdev.h"
#include "tests/unit/fake-sysfs.h"

#define POD_PATH "/run/netns/pod"
#define IPAM_RESULT "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.1.0.5/24\"}]}"
#define CONF_DEVICE "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\"," \
		    "\"device\":\"ens1f0\",\"ipam\":{\"type\":\"fake\"}}"
#define CONF_MAC "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\"," \
		 "\"hwaddr\":\"02:11:22:33:44:55\"}"

static const uint8_t mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static int pod;
static int ifindex;
static size_t pod_own; /* links of the pod's own, which every outcome leaves there */

static struct cni_ctx ctx;
static struct cni_result result;
static struct cni_err err;

static void release(void)
{
	cni_conf_free(&ctx.conf);
	cni_result_free(&result);
	memset(&err, 0, sizeof(err));
}

/* The plugin keeps device states here, not in the node's directory. */
static char state_dir[64];

static void forget_states(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -f %s/*", state_dir);
	assert_int_equal(system(cmd), 0);
}

static bool state_kept(const char *orig)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", state_dir, orig);
	return access(path, F_OK) == 0;
}

/* Node settings whose deviceInfoDirs is its own, beside them. */
static char devinfo_base[64], devinfo_dir[128];

/*
 * The state directory, and the node settings: named before any plugin reads them (once
 * per process).
 */
static int states_setup(void **state)
{
	char settings[128];
	FILE *f;

	(void)state;
	snprintf(state_dir, sizeof(state_dir), "/tmp/hostdev-state.XXXXXX");
	snprintf(devinfo_base, sizeof(devinfo_base), "/tmp/hostdev-devinfo.XXXXXX");
	if (!mkdtemp(state_dir) || !mkdtemp(devinfo_base))
		return -1;
	hostdev_state_set_dir(state_dir);
	snprintf(devinfo_dir, sizeof(devinfo_dir), "%s/devinfo", devinfo_base);
	snprintf(settings, sizeof(settings), "%s/settings.json", devinfo_base);
	f = fopen(settings, "w");
	if (!f || mkdir(devinfo_dir, 0700) < 0)
		return -1;
	fprintf(f, "{\"deviceInfoDirs\": [\"%s\"]}\n", devinfo_dir);
	fclose(f);
	return setenv(TRUST_SETTINGS_ENV, settings, 1);
}

static int states_teardown(void **state)
{
	char cmd[192];

	(void)state;
	hostdev_state_set_dir(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", state_dir, devinfo_base);
	return system(cmd) == 0 ? 0 : -1;
}

/* The host: ens1f0, up, with an alias of its own, and mlx5_1 on it; an empty pod. */
static void world(int rdma_mode)
{
	struct net_link *l;

	release();
	forget_states();
	fake_net_reset(IPAM_RESULT);
	fake_rdma_reset();
	pod = fake_net_add_netns(POD_PATH);
	pod_own = 0;
	l = fake_net_add_link(0, "ens1f0", "", ARPHRD_ETHER, 1500);
	l->flags |= IFF_UP;
	memcpy(l->hwaddr, mac, sizeof(mac));
	l->hwaddr_len = sizeof(mac);
	snprintf(l->alias, sizeof(l->alias), "uplink-a");
	ifindex = l->ifindex;
	fake_rdma.mode_attr = rdma_mode;
	fake_rdma_add(7, "mlx5_1", 0, ifindex);
}

/*
 * The pod gets a link of its own named like the device in the host: a direct
 * move (ADD) or a rename to the original name in the pod (DEL) is refused,
 * and the device goes through a temporary netns.
 */
static void pod_has_link_named_ens1f0(void)
{
	fake_net_add_link(pod, "ens1f0", "veth", ARPHRD_ETHER, 1500);
	pod_own++;
}

static int run_in(enum cni_command cmd, const char *json, const char *netns)
{
	int r;

	release();
	r = cni_conf_parse(json, strlen(json), &ctx.conf, &err);
	assert_int_equal(r, 0);
	ctx.env = (struct cni_env){ .command = cmd, .command_name = cni_command_name(cmd),
				    .container_id = "ctr", .netns = netns, .ifname = "net1",
				    .args = "", .path = "/nonexistent" };
	/* As the dispatch does before every ADD, DEL and CHECK. */
	cni_plugin_open_netns(&ctx);
	if (cmd == CNI_CMD_ADD)
		return hostdev_plugin.add(&ctx, &result, &err);
	if (cmd == CNI_CMD_DEL)
		return hostdev_plugin.del(&ctx, &err);
	return hostdev_plugin.check(&ctx, &err);
}

static int run(enum cni_command cmd, const char *json)
{
	return run_in(cmd, json, POD_PATH);
}

/* The log line of the Nth operation (1-based), "" when there is none. */
static const char *op_line(unsigned int n, char *buf, size_t size)
{
	const char *p = fake_net_log_lines();

	while (--n > 0 && (p = strchr(p, '\n')))
		p++;
	snprintf(buf, size, "%.*s", p ? (int)strcspn(p, "\n") : 0, p ? p : "");
	return buf;
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
	assert_int_equal(fake_net_count(pod), pod_own);
	assert_int_equal(links_outside(0, pod), 0); /* nothing in a temporary netns */
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
	/* The direct way: no temporary netns; termination signals are not left blocked. */
	assert_int_equal(fake_net_tmp_netns(), 0);
	assert_false(fake_net_termination_held());
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
	assert_home(true, "uplink-a");
	assert_non_null(strstr(fake_net_log_lines(), "ns1: rdma move mlx5_1 to 0"));
	assert_int_equal(fake_net_tmp_netns(), 0);
	assert_false(fake_net_termination_held());
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_home(true, "uplink-a");
}

/*
 * The direct way, operation by operation: one netns move each, no temporary
 * netns; ADD moves with the alias in one request and renames in the pod
 * (nothing in the host changes before the move), DEL renames in the pod and
 * moves with the alias cleared in one request, then gives the device the
 * alias and up state ADD found (the MTU did not change); termination
 * signals are held back from the first change to the device until it is
 * whole where it goes.
 */
static void test_direct_sequences(void **state)
{
	static const char add[] =
		"host: open netns /run/netns/pod\n"
		"host: get ens1f0\n"
		"host: open current netns\n"
		"host: rdma sys get\n"
		"host: rdma dev dump\n"
		"host: rdma port dump mlx5_1\n"
		"host: get ens1f0 [blocked]\n"
		"host: move ens1f0 to ns1 alias \"ens1f0\" [blocked]\n"
		"ns1: get ens1f0 [blocked]\n"
		"ns1: rename ens1f0 to net1 [blocked]\n"
		"ns1: get net1\n"
		"host: rdma move mlx5_1 to 1\n"
		"host: ipam ADD fake\n"
		"ns1: configure net1 (1 ips, 0 routes)\n";
	static const char del[] =
		"host: open netns /run/netns/pod\n"
		"host: ipam DEL fake\n"
		"ns1: get net1\n"
		"host: get ens1f0\n"
		"host: open current netns\n"
		"ns1: rdma sys get\n"
		"ns1: rdma dev dump\n"
		"ns1: rdma port dump mlx5_1\n"
		"ns1: rdma move mlx5_1 to 0 [blocked]\n"
		"ns1: get net1 [blocked]\n"
		"ns1: down net1 [blocked]\n"
		"ns1: get net1 [blocked]\n"
		"ns1: rename net1 to ens1f0 [blocked]\n"
		"ns1: get ens1f0 [blocked]\n"
		"ns1: move ens1f0 to host alias \"\" [blocked]\n"
		"host: get ens1f0\n"
		"host: alias ens1f0 \"uplink-a\"\n"
		"host: up ens1f0\n";

	(void)state;
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	assert_string_equal(fake_net_log_lines(), add);
	assert_in_pod(true);
	fake_net.log_len = 0;
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_string_equal(fake_net_log_lines(), del);
	assert_home(true, "uplink-a");
	assert_int_equal(fake_net_tmp_netns(), 0);
}

/*
 * The pod has a link named like the device in the host: ADD's move is
 * refused (EEXIST), undone, and the device goes through a temporary netns,
 * made with termination signals blocked. So does DEL's rename to the
 * original name in the pod. The pod's link is left alone.
 */
static void test_fallback_through_temporary_netns(void **state)
{
	const char *log;

	(void)state;
	world(0);
	pod_has_link_named_ens1f0();
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	assert_in_pod(true);
	assert_string_equal(fake_net_find(pod, "ens1f0")->kind, "veth");
	log = fake_net_log_lines();
	/* The refused move changed nothing: there is nothing to undo before the detour. */
	assert_non_null(strstr(log, "host: move ens1f0 to ns1 alias \"ens1f0\" [blocked]\n"
				    "host: new netns [blocked]\n"
				    "host: get ens1f0 [blocked]\n"
				    "host: move ens1f0 to ns2 alias \"ens1f0\" [blocked]\n"));
	assert_non_null(strstr(log, "ns2: move net1 to ns1 [blocked]\n"));
	assert_int_equal(fake_net_tmp_netns(), 1);
	assert_false(fake_net_termination_held());

	fake_net.log_len = 0;
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_home(true, "uplink-a");
	assert_string_equal(fake_net_find(pod, "ens1f0")->kind, "veth");
	log = fake_net_log_lines();
	assert_non_null(strstr(log, "ns1: rename net1 to ens1f0 [blocked]\n"
				    "ns1: get net1 [blocked]\n"
				    "ns1: up net1 [blocked]\n"
				    "host: new netns [blocked]\n"));
	assert_non_null(strstr(log, "ns3: move ens1f0 to host alias \"\" [blocked]\n"));
	assert_int_equal(fake_net_tmp_netns(), 2);
	assert_false(fake_net_termination_held());

	/* Only DEL meets the pod's link: ADD is direct, DEL goes around. */
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	assert_int_equal(fake_net_tmp_netns(), 0);
	pod_has_link_named_ens1f0();
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_home(true, "uplink-a");
	assert_int_equal(fake_net_tmp_netns(), 1);
	assert_non_null(strstr(fake_net_log_lines(), "host: new netns [blocked]\n"));
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
	assert_home(true, "uplink-a");
	assert_null(strstr(fake_net_log_lines(), "rdma move"));
}

/*
 * No RDMA netlink (ib_core not loaded), and a kernel before 5.2, which
 * refuses RDMA_NLDEV_CMD_SYS_GET with -EINVAL: nothing but the netdev moves.
 */
static void test_no_rdma_subsystem(void **state)
{
	(void)state;
	for (int before_5_2 = 0; before_5_2 <= 1; before_5_2++) {
		world(0);
		fake_rdma.absent = !before_5_2;
		fake_rdma.before_5_2 = before_5_2;
		assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
		assert_in_pod(false);
		assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
		assert_home(true, "uplink-a");
	}
}

/* A world(0), with a pod link named like the device when @around: ADD and DEL go around it. */
static void world_around(bool around)
{
	world(0);
	if (around)
		pod_has_link_named_ens1f0();
}

/* The number (1-based) of the first operation logged as @line, 0 when there is none. */
static unsigned int op_number(const char *line)
{
	char buf[256];

	for (unsigned int n = 1; *op_line(n, buf, sizeof(buf)); n++)
		if (strcmp(buf, line) == 0)
			return n;
	return 0;
}

/* A failure at the Nth operation of ADD, for every N: ADD fails and nothing is left changed. */
static void add_fails_at_every_step(bool around)
{
	unsigned int total;

	world_around(around);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	assert_int_equal(fake_net_tmp_netns(), around ? 1 : 0);
	if (around) {
		unsigned int detour_from = op_number("host: move ens1f0 to ns1 alias \"ens1f0\" [blocked]");

		/* The refused move changed nothing: the way around follows at once. */
		assert_true(detour_from > 0);
		assert_int_equal(op_number("host: new netns [blocked]"), detour_from + 1);
	}
	total = fake_net.ops;
	assert_true(total > 10);
	for (unsigned int n = 1; n <= total; n++) {
		world_around(around);
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

/* The direct way, and the way around a pod link named like the device. */
static void test_add_fails_at_every_step(void **state)
{
	(void)state;
	add_fails_at_every_step(false);
	add_fails_at_every_step(true);
}

/* Where a pod link named like the device's original name is: none, made after ADD, or before. */
enum del_clash {
	DEL_CLASH_NONE,
	DEL_CLASH_AFTER_ADD,  /* ADD is direct, DEL goes around */
	DEL_CLASH_BEFORE_ADD, /* both go around */
};

static void add_for_del(enum del_clash clash)
{
	world_around(clash == DEL_CLASH_BEFORE_ADD);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	if (clash == DEL_CLASH_AFTER_ADD)
		pod_has_link_named_ens1f0();
}

/*
 * A failure at the Nth operation of DEL: either DEL fails and the attachment
 * is whole in the pod (device and RDMA device), or DEL succeeded; a retried
 * DEL then brings everything home.
 */
static void del_fails_at_every_step(enum del_clash clash)
{
	unsigned int base, total;

	add_for_del(clash);
	base = fake_net.ops;
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_int_equal(fake_net_tmp_netns(), clash == DEL_CLASH_NONE ? 0 :
					       clash == DEL_CLASH_AFTER_ADD ? 1 : 2);
	total = fake_net.ops - base;
	for (unsigned int n = 1; n <= total; n++) {
		add_for_del(clash);
		fake_net.fail_at = fake_net.ops + n;
		fake_net.fail_errno = EIO;
		if (run(CNI_CMD_DEL, CONF_DEVICE) < 0) {
			struct net_link *l = fake_net_find(pod, "net1");

			assert_non_null(l);
			assert_true(l->flags & IFF_UP);
			assert_string_equal(l->alias, "ens1f0");
			assert_int_equal(links_outside(pod, -1), 0);
			assert_int_equal(fake_rdma.devs[0].ns, pod);
		} else {
			/*
			 * DEL succeeded despite the failure: then the device is
			 * home, with its state given back unless the failure was in
			 * that (a warning), which the retried DEL below completes.
			 */
			struct net_link *l = fake_net_find(0, "ens1f0");
			char line[256];

			assert_non_null(l);
			assert_int_equal(fake_net_count(pod), pod_own);
			assert_int_equal(links_outside(0, pod), 0);
			/*
			 * Only an unreadable RDMA mode leaves the RDMA device behind,
			 * for the kernel to return with the netns.
			 */
			if (fake_rdma.devs[0].ns != 0) {
				assert_non_null(strstr(op_line(fake_net.fail_at, line, sizeof(line)),
						       "rdma sys get"));
				fake_rdma.devs[0].ns = 0;
			}
		}
		fake_net.fail_at = 0;
		assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
		assert_home(true, "uplink-a");
		assert_false(state_kept("ens1f0"));
	}
}

static void test_del_fails_at_every_step(void **state)
{
	(void)state;
	del_fails_at_every_step(DEL_CLASH_NONE);
	del_fails_at_every_step(DEL_CLASH_AFTER_ADD);
	del_fails_at_every_step(DEL_CLASH_BEFORE_ADD);
}

/* CNI_IFNAME taken in the pod: the same error from the in-pod rename and from the way around. */
static void test_pod_name_clash(void **state)
{
	(void)state;
	for (int around = 0; around <= 1; around++) {
		world_around(around);
		fake_net_add_link(pod, "net1", "veth", ARPHRD_ETHER, 1500);
		assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), -EEXIST);
		assert_int_equal(err.code, CNI_ERR_KERNEL);
		assert_string_equal(err.msg, "container already has an interface named \"net1\"");
		assert_non_null(fake_net_find(0, "ens1f0"));
		assert_string_equal(fake_net_find(0, "ens1f0")->alias, "uplink-a");
		assert_true(fake_net_find(0, "ens1f0")->flags & IFF_UP);
		assert_int_equal(fake_net_count(pod), 1 + pod_own);
		assert_int_equal(links_outside(0, pod), 0);
		assert_int_equal(fake_net_tmp_netns(), around ? 1 : 0);
		assert_int_equal(fake_rdma.devs[0].ns, 0);
		/* The runtime's DEL after it leaves the other net1 (no alias) alone. */
		assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
		assert_non_null(fake_net_find(pod, "net1"));
	}
}

/*
 * A kernel before 5.14 refuses a move onto a name the target netns has with
 * EINVAL, not EEXIST: the pod's link named like the device still sends ADD
 * and DEL around it, CNI_IFNAME taken in the pod is still the clash error,
 * and an EINVAL with no name taken (a device that cannot change netns) is
 * still a failed move.
 */
static void test_name_clash_before_5_14(void **state)
{
	(void)state;
	world_around(true);
	fake_net.move_clash_einval = true;
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	assert_in_pod(true);
	assert_int_equal(fake_net_tmp_netns(), 1);
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_home(true, "uplink-a");
	assert_int_equal(fake_net_tmp_netns(), 2);

	world_around(true);
	fake_net.move_clash_einval = true;
	fake_net_add_link(pod, "net1", "veth", ARPHRD_ETHER, 1500);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), -EEXIST);
	assert_int_equal(err.code, CNI_ERR_KERNEL);
	assert_string_equal(err.msg, "container already has an interface named \"net1\"");
	pod_own++;
	assert_home(true, "uplink-a");

	world(0);
	fake_net.move_clash_einval = true;
	fake_net.fail_at = fake_net.ops + 8; /* the move: see test_direct_sequences() */
	fake_net.fail_errno = EINVAL;
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_KERNEL);
	assert_string_equal(err.msg, "failed to move to the target netns \"ens1f0\": Invalid argument");
	assert_int_equal(fake_net_tmp_netns(), 0);
	assert_home(true, "uplink-a");
}

/*
 * A software RDMA device (rxe) in exclusive mode: the kernel unregisters it
 * when its netdev leaves the host, and the RDMA move is refused with EINVAL.
 * ADD says what happened, and the netdev comes home as it was.
 */
static void test_software_rdma_device(void **state)
{
	(void)state;
	world(0);
	fake_rdma.devs[0].used = false;
	fake_rdma_add(8, "rxe0", 0, ifindex)->software = true;
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_KERNEL);
	assert_string_equal(err.msg, "RDMA device rxe0 was removed by the kernel when ens1f0 left "
				     "the host netns; software RDMA devices (rxe, siw) cannot "
				     "change netns");
	assert_home(true, "uplink-a");
	assert_false(fake_rdma.devs[1].used);
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_home(true, "uplink-a");

	/* A hardware device whose move fails keeps the kernel's word. */
	world(0);
	fake_net.fail_at = fake_net.ops + 12; /* the RDMA move: see test_direct_sequences() */
	fake_net.fail_errno = EPERM;
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), -EPERM);
	assert_string_equal(err.msg, "failed to move RDMA device into the container \"mlx5_1\": "
				     "Operation not permitted");
	assert_home(true, "uplink-a");
}

/* The device as DEL leaves it in the host: "name up alias mtu". */
static const char *host_state(const char *name, char *buf, size_t size)
{
	const struct net_link *l = fake_net_find(0, name);

	if (!l)
		return "";
	snprintf(buf, size, "%s %d %.64s %u", l->name, !!(l->flags & IFF_UP), l->alias, l->mtu);
	return buf;
}

/* The kernel hands the device back from a destroyed pod: as net1, down, its alias kept. */
static void pod_destroyed(void)
{
	struct net_link *l = fake_net_find(pod, "net1");

	assert_non_null(l);
	fake_net_place(l, 0);
	l->flags &= ~IFF_UP;
}

/*
 * DEL gives the device back the up state, MTU and alias ADD found, whatever
 * happened to them in the pod, also when the kernel handed the device back
 * from a destroyed pod and when an interrupted ADD took it from there; a
 * device that was down comes back down; a state another attachment kept, or
 * a failed ADD's, is not applied.
 */
static void test_del_restores_state(void **state)
{
	struct hostdev_state s;
	char buf[160];

	(void)state;
	world(0);
	fake_net_find(0, "ens1f0")->mtu = 9000;
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	assert_true(state_kept("ens1f0"));
	fake_net_find(pod, "net1")->mtu = 1500;
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_string_equal(host_state("ens1f0", buf, sizeof(buf)), "ens1f0 1 uplink-a 9000");
	assert_false(state_kept("ens1f0"));
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_string_equal(host_state("ens1f0", buf, sizeof(buf)), "ens1f0 1 uplink-a 9000");

	/* Down and without alias before ADD: so after DEL. */
	world(0);
	fake_net_find(0, "ens1f0")->flags &= ~IFF_UP;
	fake_net_find(0, "ens1f0")->alias[0] = '\0';
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_string_equal(host_state("ens1f0", buf, sizeof(buf)), "ens1f0 0  1500");
	assert_false(state_kept("ens1f0"));

	/* The pod is gone: the DEL that renames the returned device gives it its state. */
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	pod_destroyed();
	assert_int_equal(run_in(CNI_CMD_DEL, CONF_DEVICE, ""), 0);
	assert_string_equal(host_state("ens1f0", buf, sizeof(buf)), "ens1f0 1 uplink-a 1500");
	assert_false(state_kept("ens1f0"));

	/* An ADD of the returned device keeps what the first ADD found. */
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	pod_destroyed();
	assert_int_equal(run(CNI_CMD_ADD, CONF_MAC), 0);
	assert_string_equal(fake_net_find(pod, "net1")->alias, "ens1f0");
	assert_int_equal(run(CNI_CMD_DEL, CONF_MAC), 0);
	assert_string_equal(host_state("ens1f0", buf, sizeof(buf)), "ens1f0 1 uplink-a 1500");

	/* Another attachment's state is left alone. */
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	assert_int_equal(hostdev_state_load("ens1f0", &s), 0);
	assert_true(s.up);
	assert_int_equal(s.mtu, 1500);
	assert_string_equal(s.alias, "uplink-a");
	s.attachment++;
	assert_int_equal(hostdev_state_save("ens1f0", &s), 0);
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_string_equal(host_state("ens1f0", buf, sizeof(buf)), "ens1f0 0  1500");
	assert_true(state_kept("ens1f0"));

	/* A failed ADD keeps nothing. */
	world(0);
	fake_net.ipam_result = "{\"cniVersion\":\"1.0.0\",\"ips\":[]}";
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), -EINVAL);
	assert_home(true, "uplink-a");
	assert_false(state_kept("ens1f0"));
}

static void write_state_file(const char *orig, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", state_dir, orig);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A small file's text, through stdio (file_read() is the fake sysfs's here). */
static void read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* The file tests/unit/golden/record/host-device.<orig> put in the state directory as <orig>. */
static void copy_golden_state(const char *orig)
{
	char path[512], text[4096];

	snprintf(path, sizeof(path), "%s/record/host-device.%s", getenv("GOLDEN_DIR"), orig);
	read_text(path, text, sizeof(text));
	write_state_file(orig, text);
}

/*
 * The states the build before common/record wrote (tests/unit/golden/record, made by
 * that build's hostdev_state_save()): a node rolled forward with pods live reads them.
 */
static void test_state_previous_build(void **state)
{
	struct hostdev_state got;

	(void)state;
	forget_states();
	copy_golden_state("ens1f0");
	copy_golden_state("ibs1f0v1");
	assert_int_equal(hostdev_state_load("ens1f0", &got), 0);
	assert_true(got.attachment == 0x0123456789abcdefULL);
	assert_true(got.up);
	assert_int_equal(got.mtu, 1500);
	assert_string_equal(got.alias, "rail 0 \"x\"\tend");
	assert_false(got.has_guid);
	assert_int_equal(hostdev_state_load("ibs1f0v1", &got), 0);
	assert_true(got.attachment == 0xfedcba9876543210ULL);
	assert_false(got.up);
	assert_int_equal(got.mtu, 4092);
	assert_string_equal(got.alias, "");
	assert_true(got.has_guid);
	assert_true(got.guid == 0x0002c90300a1b2c3ULL);
	/* Saved again by this build: the same bytes. */
	assert_int_equal(hostdev_state_save("ibs1f0v1", &got), 0);
	{
		char path[512], want[4096], have[4096];

		snprintf(path, sizeof(path), "%s/record/host-device.ibs1f0v1", getenv("GOLDEN_DIR"));
		read_text(path, want, sizeof(want));
		snprintf(path, sizeof(path), "%s/ibs1f0v1", state_dir);
		read_text(path, have, sizeof(have));
		assert_string_equal(have, want);
	}
	forget_states();
}

/*
 * The state file: an alias of any bytes survives it; a file this plugin did
 * not write is refused as a whole (and DEL then leaves the device down, as
 * without one); a directory others may write is not used.
 */
static void test_state_file(void **state)
{
	struct hostdev_state s = { .attachment = 0x0123456789abcdefULL, .up = true, .mtu = 9000 };
	struct hostdev_state got;
	static const char *const bad[] = {
		"",
		"cni-rdma-plugins host-device state 2\n0123456789abcdef\nup 1\nmtu 9000\nalias a\n",
		"cni-rdma-plugins host-device state 1\n0123456789abcdeg\nup 1\nmtu 9000\nalias a\n",
		"cni-rdma-plugins host-device state 1\n0123456789abcdef\nup 2\nmtu 9000\nalias a\n",
		"cni-rdma-plugins host-device state 1\n0123456789abcdef\nup 1\nmtu -1\nalias a\n",
		"cni-rdma-plugins host-device state 1\n0123456789abcdef\nup 1\nmtu 9000\nalias a",
		"cni-rdma-plugins host-device state 1\n0123456789abcdef\nup 1\nmtu 9000\nalias a\nx\n",
		"cni-rdma-plugins host-device state 1\n0123456789abcdef\nup 1\nmtu 9000\nalias \\x00\n",
	};
	char path[128];

	(void)state;
	forget_states();
	snprintf(s.alias, sizeof(s.alias), "a\nb\\c \xff\x01 port 12");
	assert_int_equal(hostdev_state_save("ens1f0", &s), 0);
	assert_int_equal(hostdev_state_load("ens1f0", &got), 0);
	assert_memory_equal(&got, &s, sizeof(s));
	assert_int_equal(hostdev_state_load("ens1f1", &got), -ENOENT);
	assert_int_equal(hostdev_state_load("../x", &got), -EINVAL);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		write_state_file("ens1f0", bad[i]);
		assert_int_equal(hostdev_state_load("ens1f0", &got), -EBADMSG);
	}

	/* A damaged file: DEL brings the device home as without one, and keeps the file. */
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	write_state_file("ens1f0", bad[3]);
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_home(false, "");
	assert_true(state_kept("ens1f0"));

	assert_int_equal(chmod(state_dir, 0770), 0);
	assert_int_equal(hostdev_state_save("ens1f0", &s), -EPERM);
	assert_int_equal(hostdev_state_load("ens1f0", &got), -EPERM);
	assert_int_equal(chmod(state_dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/ens1f0", state_dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(hostdev_state_remove("ens1f0"), 0);
}

static void test_host_name_clash_on_del(void **state)
{
	(void)state;
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	fake_net_add_link(0, "ens1f0", "veth", ARPHRD_ETHER, 1500);
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), -EEXIST);
	assert_int_equal(err.code, CNI_ERR_NAME_TAKEN);
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
	mkdirs("devices/pci0000:00/0000:01:00.0/net/ens1f0");
	fake_sysfs_set_root(root);
	return 0;
}

static int sysfs_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	fake_sysfs_set_root(NULL);
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
		"{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
		"\"kernelpath\":\"/sys/devices/pci0000:00/0000:01:00.0\",\"ipam\":{\"type\":\"fake\"}}",
	};
	/* What ethtool reports as the device's bus device, for DEL's check. */
	static const char *const bus[] = { "0000:01:00.0", "mlx5_core.sf.2", "mlx5_core.sf.2", "",
					   "0000:01:00.0" };

	(void)state;
	for (size_t i = 0; i < sizeof(confs) / sizeof(confs[0]); i++) {
		world(1);
		fake_ethtool_set(ifindex, NULL, 0, bus[i]);
		assert_int_equal(run(CNI_CMD_ADD, confs[i]), 0);
		assert_in_pod(false);
		assert_int_equal(run(CNI_CMD_DEL, confs[i]), 0);
		assert_home(true, "uplink-a");
	}
}

/*
 * DEL moves the pod's CNI_IFNAME to the host only when it is the configured
 * device as far as the selector tells: a pod with CAP_NET_ADMIN can rename
 * the device and make a link of its own with that name and an alias.
 */
static void forge_in_pod(const char *alias, const uint8_t *hw)
{
	struct net_link *real = fake_net_find(pod, "net1");
	struct net_link *fake;

	assert_non_null(real);
	snprintf(real->name, sizeof(real->name), "keep0");
	fake = fake_net_add_link(pod, "net1", "veth", ARPHRD_ETHER, 1500);
	fake->flags |= IFF_UP;
	snprintf(fake->alias, sizeof(fake->alias), "%s", alias);
	memcpy(fake->hwaddr, hw, sizeof(mac));
	fake->hwaddr_len = sizeof(mac);
}

static void assert_forgery_left(int del_result)
{
	assert_int_equal(del_result, 0);
	assert_non_null(fake_net_find(pod, "keep0"));
	assert_non_null(fake_net_find(pod, "net1"));
	assert_string_equal(fake_net_find(pod, "keep0")->alias, "ens1f0");
	assert_int_equal(fake_net_count(0), 0);
	assert_null(strstr(fake_net_log_lines(), "new netns"));
}

static void test_del_checks_the_pod_link(void **state)
{
	static const uint8_t other[6] = { 0x02, 0x99, 0x99, 0x99, 0x99, 0x99 };
	const char *by_mac = "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
			     "\"hwaddr\":\"02:11:22:33:44:55\"}";
	const char *by_pci = "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
			     "\"pciBusID\":\"0000:01:00.0\"}";
	const char *by_path = "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
			      "\"kernelpath\":\"/sys/devices/pci0000:00/0000:01:00.0\"}";
	struct net_link *l;

	(void)state;
	/* device: the alias must be the configured name. */
	world(1);
	assert_int_equal(run(CNI_CMD_ADD, CONF_DEVICE), 0);
	forge_in_pod("hdE", other);
	fake_net.log_len = 0;
	assert_forgery_left(run(CNI_CMD_DEL, CONF_DEVICE));

	/* hwaddr: another MAC. */
	world(1);
	assert_int_equal(run(CNI_CMD_ADD, by_mac), 0);
	forge_in_pod("hdE", other);
	fake_net.log_len = 0;
	assert_forgery_left(run(CNI_CMD_DEL, by_mac));

	/* hwaddr: the permanent MAC counts when there is one (the pod changed the current one). */
	world(1);
	fake_ethtool_set(ifindex, mac, sizeof(mac), "0000:01:00.0");
	assert_int_equal(run(CNI_CMD_ADD, by_mac), 0);
	fake_net_find(pod, "net1")->hwaddr[0] = 0x06;
	assert_int_equal(run(CNI_CMD_DEL, by_mac), 0);
	l = fake_net_find(0, "ens1f0");
	assert_non_null(l);
	assert_int_equal(l->hwaddr[0], 0x06);
	assert_int_equal(fake_net_count(pod), 0);
	/* ... and a current MAC equal to the config does not make up for another permanent one. */
	world(1);
	fake_ethtool_set(ifindex, other, sizeof(other), "");
	assert_int_equal(run(CNI_CMD_ADD, by_mac), 0);
	assert_int_equal(run(CNI_CMD_DEL, by_mac), 0);
	assert_non_null(fake_net_find(pod, "net1"));
	assert_int_equal(fake_net_count(0), 0);

	/* pciBusID: ethtool's bus device must be the PCI address. */
	world(1);
	fake_ethtool_set(ifindex, NULL, 0, "0000:01:00.0");
	assert_int_equal(run(CNI_CMD_ADD, by_pci), 0);
	forge_in_pod("ens1f0", mac);
	fake_net.log_len = 0;
	assert_forgery_left(run(CNI_CMD_DEL, by_pci));

	/* kernelpath: a bus device that is not on the path. */
	world(1);
	fake_ethtool_set(ifindex, NULL, 0, "0000:01:00.0");
	assert_int_equal(run(CNI_CMD_ADD, by_path), 0);
	forge_in_pod("ens1f0", mac);
	fake_ethtool_set(fake_net_find(pod, "net1")->ifindex, NULL, 0, "0000:09:00.0");
	fake_net.log_len = 0;
	assert_forgery_left(run(CNI_CMD_DEL, by_path));
}

/* A device ID that vanished from sysfs: nothing in the pod can be it. */
static void test_del_device_id_gone(void **state)
{
	const char *conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
			   "\"pciBusID\":\"0000:01:00.0\"}";
	char path[PATH_MAX];

	(void)state;
	world(1);
	fake_ethtool_set(ifindex, NULL, 0, "0000:01:00.0");
	assert_int_equal(run(CNI_CMD_ADD, conf), 0);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:01:00.0/net/ens1f0", root);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:01:00.0/net", root);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:01:00.0", root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(run(CNI_CMD_DEL, conf), 0);
	assert_non_null(fake_net_find(pod, "net1"));
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
	assert_non_null(result.ifaces[0].pci_id);
	assert_string_equal(result.ifaces[0].pci_id, "0000:01:00.1");
	assert_int_equal(result.n_ips, 1);
	assert_int_equal(fake_net.ipam_allocated, 1);
	assert_null(strstr(fake_net_log_lines(), "move"));
	assert_int_equal(fake_net_count(pod), 0);
	assert_int_equal(run(CNI_CMD_DEL, conf), 0);
	assert_int_equal(fake_net.ipam_allocated, 0);
	assert_null(strstr(fake_net_log_lines(), "move"));
}

/* The file's contents, "" when it cannot be read. */
static const char *slurp(const char *path)
{
	static char buf[1024];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/*
 * The pod learns which PCI function it got: pciID in the result, and the device-info
 * file Multus asks for (runtimeConfig.CNIDeviceInfoFile) with the RDMA device; a path
 * outside the node's deviceInfoDirs is refused before anything moves.
 */
static void test_device_info(void **state)
{
	char conf[PATH_MAX + 512], file[PATH_MAX + 32], link[PATH_MAX + 32];

	(void)state;
	snprintf(file, sizeof(file), "%s/cni/hd-ctr-net1.json", devinfo_dir);
	snprintf(conf, sizeof(conf),
		 "{\"cniVersion\":\"1.1.0\",\"name\":\"hd\",\"type\":\"host-device\","
		 "\"pciBusID\":\"0000:01:00.0\",\"runtimeConfig\":{\"CNIDeviceInfoFile\":\"%s\"},"
		 "\"ipam\":{\"type\":\"fake\"}}", file);
	world(0);
	fake_ethtool_set(ifindex, NULL, 0, "0000:01:00.0");
	assert_int_equal(run(CNI_CMD_ADD, conf), 0);
	assert_int_equal(result.n_ifaces, 1);
	assert_non_null(result.ifaces[0].pci_id);
	assert_string_equal(result.ifaces[0].pci_id, "0000:01:00.0");
	assert_string_equal(slurp(file), "{\"type\":\"pci\",\"version\":\"1.1.0\",\"pci\":"
					 "{\"pci-address\":\"0000:01:00.0\",\"rdma-device\":\"mlx5_1\"}}");
	assert_int_equal(run(CNI_CMD_DEL, conf), 0);

	/* By name: its sysfs device link says which function it is. */
	mkdirs("class/net/ens1f0");
	snprintf(link, sizeof(link), "%s/class/net/ens1f0/device", root);
	assert_int_equal(symlink("../../../devices/pci0000:00/0000:01:00.0", link), 0);
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, "{\"cniVersion\":\"1.1.0\",\"name\":\"hd\","
					  "\"type\":\"host-device\",\"device\":\"ens1f0\","
					  "\"ipam\":{\"type\":\"fake\"}}"), 0);
	assert_non_null(result.ifaces[0].pci_id);
	assert_string_equal(result.ifaces[0].pci_id, "0000:01:00.0");

	/*
	 * A path the node does not let a config name (beside deviceInfoDirs, in the test's
	 * own directory): nothing moves, nothing is written there.
	 */
	snprintf(file, sizeof(file), "%s/outside.json", devinfo_base);
	snprintf(conf, sizeof(conf),
		 "{\"cniVersion\":\"1.1.0\",\"name\":\"hd\",\"type\":\"host-device\","
		 "\"device\":\"ens1f0\",\"runtimeConfig\":{\"CNIDeviceInfoFile\":\"%s\"},"
		 "\"ipam\":{\"type\":\"fake\"}}", file);
	world(0);
	assert_int_equal(run(CNI_CMD_ADD, conf), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(err.msg, "CNIDeviceInfoFile"));
	assert_int_equal(fake_net_count(pod), 0);
	assert_int_equal(fake_net.ipam_allocated, 0);
	assert_int_equal(access(file, F_OK), -1);
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
	assert_string_equal(err.msg, "specify either \"device\", \"hwaddr\", \"kernelpath\" or \"pciBusID\": "
				     "no device was given, and none by the device plugin (a HostDeviceNetwork "
				     "NAD names its resource in the annotation k8s.v1.cni.cncf.io/resourceName; "
				     "the pod must request that resource in its resources.limits, and Multus "
				     "passes the device allocated as deviceID)");
	assert_home(true, "uplink-a");
}

/* A host with a link that has the test's MAC (and a veth taken0), an empty pod. */
static struct net_link *host_only(const char *name, const char *alias, bool up)
{
	struct net_link *l;

	release();
	forget_states();
	fake_net_reset(IPAM_RESULT);
	fake_rdma_reset();
	pod = fake_net_add_netns(POD_PATH);
	fake_net_add_link(0, "taken0", "veth", ARPHRD_ETHER, 1500);
	l = fake_net_add_link(0, name, "", ARPHRD_ETHER, 1500);
	memcpy(l->hwaddr, mac, sizeof(mac));
	l->hwaddr_len = sizeof(mac);
	snprintf(l->alias, sizeof(l->alias), "%s", alias);
	if (up)
		l->flags |= IFF_UP;
	return l;
}

/* The one host link with the test's MAC is @name, with @alias and up state @up. */
static void assert_host_link(const char *name, const char *alias, bool up)
{
	struct net_link *l = fake_net_find(0, name);

	assert_non_null(l);
	assert_string_equal(l->alias, alias);
	assert_int_equal(!!(l->flags & IFF_UP), up);
}

/*
 * DEL without the pod (empty CNI_NETNS, a path gone or no netns any more)
 * renames a device back only when the kernel named it (CNI_IFNAME or devN)
 * and its alias is a free interface name; a live host link is never touched.
 */
static void test_recover_in_host(void **state)
{
	static const char *const netns[] = { "", "/run/netns/gone" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(netns); i++) {
		/* A host link that was never moved, with an alias that is a name. */
		host_only("eth7", "mgmt0", true);
		fake_net.log_len = 0;
		assert_int_equal(run_in(CNI_CMD_DEL, CONF_MAC, netns[i]), 0);
		assert_host_link("eth7", "mgmt0", true);
		assert_null(strstr(fake_net_log_lines(), "down"));
		assert_null(strstr(fake_net_log_lines(), "rename"));
		/* ... or with a free text as alias. */
		host_only("eth7", "uplink to tor switch port 12", true);
		assert_int_equal(run_in(CNI_CMD_DEL, CONF_MAC, netns[i]), 0);
		assert_host_link("eth7", "uplink to tor switch port 12", true);
		/* A returned device whose alias is no interface name. */
		host_only("net1", "uplink to tor switch port 12", true);
		fake_net.log_len = 0;
		assert_int_equal(run_in(CNI_CMD_DEL, CONF_MAC, netns[i]), 0);
		assert_host_link("net1", "uplink to tor switch port 12", true);
		assert_null(strstr(fake_net_log_lines(), "down"));
		/* Returned devices: net1 and devN get their names back. */
		host_only("net1", "ens1f0", false);
		assert_int_equal(run_in(CNI_CMD_DEL, CONF_MAC, netns[i]), 0);
		assert_host_link("ens1f0", "", false);
		host_only("dev12", "ens1f0", false);
		assert_int_equal(run_in(CNI_CMD_DEL, CONF_MAC, netns[i]), 0);
		assert_host_link("ens1f0", "", false);
		/* Its name taken: left as is. */
		host_only("dev12", "ens1f0", false);
		fake_net_add_link(0, "ens1f0", "veth", ARPHRD_ETHER, 1500);
		assert_int_equal(run_in(CNI_CMD_DEL, CONF_MAC, netns[i]), 0);
		assert_host_link("dev12", "ens1f0", false);
	}
	/* A path that is no netns (nsfd_open() -EINVAL) is a gone netns too. */
	host_only("net1", "ens1f0", false);
	fake_net.fail_at = fake_net.ops + 1;
	fake_net.fail_errno = EINVAL;
	assert_int_equal(run(CNI_CMD_DEL, CONF_MAC), 0);
	assert_host_link("ens1f0", "", false);
	/* By device name: the alias finds it. */
	host_only("net1", "ens1f0", false);
	assert_int_equal(run_in(CNI_CMD_DEL, CONF_DEVICE, ""), 0);
	assert_host_link("ens1f0", "", false);
}

/*
 * An ADD killed while the device was in the temporary netns leaves it in the
 * host as CNI_IFNAME or devN with its original name as alias: DEL with the pod
 * there (CNI_IFNAME missing in it) renames it back, and an ADD keeps the alias
 * as the original name.
 */
static void test_interrupted_move(void **state)
{
	static const char *const names[] = { "net1", "dev3" };
	struct net_link *l;

	(void)state;
	host_only("net1", "ens1f0", false);
	assert_int_equal(run(CNI_CMD_DEL, CONF_MAC), 0);
	assert_host_link("ens1f0", "", false);
	host_only("net1", "ens1f0", false);
	assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
	assert_host_link("ens1f0", "", false);

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		host_only(names[i], "ens1f0", false);
		assert_int_equal(run(CNI_CMD_ADD, CONF_MAC), 0);
		l = fake_net_find(pod, "net1");
		assert_non_null(l);
		assert_string_equal(l->alias, "ens1f0");
		assert_int_equal(run(CNI_CMD_DEL, CONF_MAC), 0);
		assert_host_link("ens1f0", "", false);
	}
	/* Not a returned name, or an alias that is taken or no name: the name is the original. */
	host_only("eth7", "mgmt0", true);
	assert_int_equal(run(CNI_CMD_ADD, CONF_MAC), 0);
	assert_string_equal(fake_net_find(pod, "net1")->alias, "eth7");
	host_only("net1", "taken0", true);
	assert_int_equal(run(CNI_CMD_ADD, CONF_MAC), 0);
	assert_string_equal(fake_net_find(pod, "net1")->alias, "net1");
	host_only("dev3", "a b", true);
	assert_int_equal(run(CNI_CMD_ADD, CONF_MAC), 0);
	assert_string_equal(fake_net_find(pod, "net1")->alias, "dev3");
}

/*
 * A plugin killed on the direct way (SIGKILL; other signals wait) leaves the
 * device in the pod under its original name, which it also has as alias: ADD
 * between the move and the rename, DEL between the rename and the move; or
 * as devN when ADD took a returned device. DEL (the runtime's retry, or the
 * next one) finds it by that mark, checks it is the configured device, and
 * brings it home. A pod link with the same marks that is not the device, or
 * without them, stays.
 */
static void test_del_finds_device_left_mid_move(void **state)
{
	static const char *const left_as[] = { "ens1f0", "dev5" };
	struct net_link *l;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(left_as); i++) {
		world(0);
		l = fake_net_find(0, "ens1f0");
		fake_net_place(l, pod);
		l->flags &= ~IFF_UP;
		snprintf(l->name, sizeof(l->name), "%s", left_as[i]);
		snprintf(l->alias, sizeof(l->alias), "ens1f0");
		fake_net.log_len = 0;
		assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
		assert_non_null(strstr(fake_net_log_lines(), "ns1: get net1\nns1: find\n"));
		assert_home(false, "");
		/* Nothing is left for the next DEL. */
		assert_int_equal(run(CNI_CMD_DEL, CONF_DEVICE), 0);
		assert_home(false, "");
	}
	for (size_t i = 0; i < 2; i++) {
		host_only("ens1f0", "ens1f0", false);
		l = fake_net_find(0, "ens1f0");
		fake_net_place(l, pod);
		if (i == 0) /* another MAC: not the configured device */
			l->hwaddr[5] ^= 0xff;
		else        /* an alias that is not its name: not left by a move */
			snprintf(l->alias, sizeof(l->alias), "uplink-a");
		assert_int_equal(run(CNI_CMD_DEL, CONF_MAC), 0);
		assert_non_null(fake_net_find(pod, "ens1f0"));
		assert_null(fake_net_find(0, "ens1f0"));
	}
	/*
	 * A pod link with those marks that is not the device does not stop DEL from
	 * renaming back the device the kernel handed to the host as net1.
	 */
	host_only("net1", "ens1f0", false);
	l = fake_net_add_link(pod, "ens1f0", "veth", ARPHRD_ETHER, 1500);
	snprintf(l->alias, sizeof(l->alias), "ens1f0");
	assert_int_equal(run(CNI_CMD_DEL, CONF_MAC), 0);
	assert_host_link("ens1f0", "", false);
	assert_string_equal(fake_net_find(pod, "ens1f0")->kind, "veth");
	/* Its original name taken in the host: code 104, the device stays in the pod. */
	host_only("ens1f0", "ens1f0", false);
	fake_net_place(fake_net_find(0, "ens1f0"), pod);
	fake_net_add_link(0, "ens1f0", "veth", ARPHRD_ETHER, 1500);
	assert_int_equal(run(CNI_CMD_DEL, CONF_MAC), -EEXIST);
	assert_int_equal(err.code, CNI_ERR_NAME_TAKEN);
	assert_string_equal(fake_net_find(pod, "ens1f0")->alias, "ens1f0");
}

static void test_config_errors(void **state)
{
	(void)state;
	world(1);
	assert_int_equal(run(CNI_CMD_ADD, "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
				     "\"kernelpath\":\"/sys/devices/../etc\"}"), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_int_equal(run(CNI_CMD_ADD, "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\",\"type\":\"host-device\","
				     "\"kernelpath\":\"/sys/devices/x/..\"}"), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	/* DEL is lenient about a device that is gone, not about a wrong type. */
	assert_int_not_equal(run(CNI_CMD_DEL, "{\"cniVersion\":\"1.0.0\",\"name\":\"hd\","
					     "\"type\":\"host-device\",\"deviceID\":5}"), 0);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	assert_non_null(strstr(err.msg, "deviceID"));
	assert_home(true, "uplink-a");
}

/*
 * InfiniBand VF GUIDs. The host: PF ib0 (0000:3b:00.0) with VFs 0000:3b:00.2
 * (virtfn0) and 0000:3b:00.3 (virtfn1, netdev ibvf1, up, with an alias, no
 * GUID yet), ens1f0 (Ethernet) beside them. A bind of the VF's driver gives
 * its netdev the kernel's name ib7 and a new index.
 */
#define VF_PCI "0000:3b:00.3"
#define CONF_GUID(keys) "{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"host-device\"," \
			"\"device\":\"ibvf1\"," keys ",\"ipam\":{\"type\":\"fake\"}}"
#define CONF_RUNTIME_GUID CONF_GUID("\"runtimeConfig\":{\"infinibandGUID\":\"02:00:00:00:00:00:00:01\"}")

static const uint64_t guid_pod = 0x0200000000000001ULL;
static struct fake_vf *ib_vf;

static void sysfs_link(const char *rel, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

static int ib_setup(void **state)
{
	sysfs_setup(state);
	mkdirs("bus/pci/devices/0000:3b:00.0/net/ib0");
	mkdirs("bus/pci/devices/0000:3b:00.2/net/ibvf0");
	mkdirs("bus/pci/devices/" VF_PCI "/net/ibvf1");
	sysfs_link("bus/pci/devices/0000:3b:00.0/virtfn0", "../0000:3b:00.2");
	sysfs_link("bus/pci/devices/0000:3b:00.0/virtfn1", "../" VF_PCI);
	sysfs_link("bus/pci/devices/0000:3b:00.2/physfn", "../0000:3b:00.0");
	sysfs_link("bus/pci/devices/" VF_PCI "/physfn", "../0000:3b:00.0");
	mkdirs("class/net/ibvf1");
	mkdirs("class/net/ens1f0");
	sysfs_link("class/net/ibvf1/device", "../../../bus/pci/devices/" VF_PCI);
	sysfs_link("class/net/ens1f0/device", "../../../bus/pci/devices/0000:01:00.0");
	return 0;
}

static void ib_world(void)
{
	struct net_link *pf, *l;

	world(1);
	fake_vf_reset();
	pf = fake_net_add_link(0, "ib0", "", ARPHRD_INFINIBAND, 2044);
	pf->hwaddr_len = 20;
	l = fake_net_add_link(0, "ibvf1", "", ARPHRD_INFINIBAND, 2044);
	l->hwaddr_len = 20;
	l->flags |= IFF_UP;
	snprintf(l->alias, sizeof(l->alias), "vf-a");
	ib_vf = fake_vf_add(VF_PCI, pf->ifindex, 1, l->ifindex);
	ib_vf->rebind_name = "ib7";
}

/* The GUID in an IPoIB netdev's hardware address (its port GUID). */
static uint64_t hw_guid(const struct net_link *l)
{
	uint64_t g = 0;

	assert_int_equal(l->hwaddr_len, 20);
	for (int i = 12; i < 20; i++)
		g = g << 8 | l->hwaddr[i];
	return g;
}

/* The index in the log of the first operation that has @what, 0 for none. */
static unsigned int op_index(const char *what)
{
	char line[256];

	for (unsigned int n = 1; n <= fake_net.ops; n++)
		if (strstr(op_line(n, line, sizeof(line)), what))
			return n;
	return 0;
}

static void assert_ib_home(uint64_t guid)
{
	struct net_link *l = fake_net_find(0, "ibvf1");

	assert_non_null(l);
	assert_true(l->flags & IFF_UP);
	assert_string_equal(l->alias, "vf-a");
	assert_int_equal(fake_net_count(pod), pod_own);
	assert_int_equal(links_outside(0, pod), 0);
	assert_true(ib_vf->node_guid == guid && ib_vf->port_guid == guid);
	assert_true(hw_guid(l) == guid);
	assert_int_equal(fake_net.ipam_allocated, 0);
	assert_false(state_kept("ibvf1"));
}

static void test_guid_add_del(void **state)
{
	struct hostdev_state s;
	struct net_link *l;
	char line[256];

	(void)state;
	ib_world();
	assert_int_equal(run(CNI_CMD_ADD, CONF_RUNTIME_GUID), 0);
	/* Set on the PF for virtfn1, applied by a bind, all before the move. */
	assert_int_not_equal(op_index("set vf 1 node guid on ib0 to 0200000000000001"), 0);
	assert_true(op_index("set vf 1 node guid") < op_index("set vf 1 port guid on ib0 to "
								"0200000000000001"));
	assert_true(op_index("set vf 1 port guid") < op_index("rebind " VF_PCI));
	assert_true(op_index("rebind " VF_PCI) < op_index("rename ib7 to ibvf1"));
	assert_true(op_index("rename ib7 to ibvf1") < op_index("move"));
	/* No kill between the bind and the rename: the device would have a name no DEL knows. */
	for (unsigned int n = op_index("set vf 1"); n <= op_index("rename ib7 to ibvf1"); n++)
		assert_non_null(strstr(op_line(n, line, sizeof(line)), "[blocked]"));
	l = fake_net_find(pod, "net1");
	assert_non_null(l);
	assert_true(hw_guid(l) == guid_pod);
	assert_string_equal(l->alias, "ibvf1");
	assert_true(l->flags & IFF_UP);
	/* Found without a GUID: DEL gives it ib-sriov-cni's default back, not zero. */
	assert_int_equal(hostdev_state_load("ibvf1", &s), 0);
	assert_true(s.has_guid && s.guid == UINT64_MAX);
	assert_true(s.up);
	assert_string_equal(s.alias, "vf-a");

	fake_net.ops = 0;
	fake_net.log_len = 0;
	fake_net.log[0] = '\0';
	assert_int_equal(run(CNI_CMD_DEL, CONF_RUNTIME_GUID), 0);
	assert_ib_home(UINT64_MAX);
	assert_int_equal(fake_vfs.rebinds, 2);
	assert_true(op_index("move") < op_index("set vf 1 node guid on ib0 to ffffffffffffffff"));
	for (unsigned int n = op_index("set vf 1"); n <= op_index("rename ib7 to ibvf1"); n++)
		assert_non_null(strstr(op_line(n, line, sizeof(line)), "[blocked]"));
	/* A second DEL: nothing left to give back. */
	assert_int_equal(run(CNI_CMD_DEL, CONF_RUNTIME_GUID), 0);
	assert_int_equal(fake_vfs.rebinds, 2);
}

/* A VF that had a GUID gets that one back; the driver keeps the name (no rename). */
static void test_guid_restores_previous(void **state)
{
	struct net_link *l;

	(void)state;
	ib_world();
	ib_vf->rebind_name = NULL;
	l = fake_net_find(0, "ibvf1");
	for (int i = 12; i < 20; i++)
		l->hwaddr[i] = (uint8_t)(0xa0 + i);
	assert_int_equal(run(CNI_CMD_ADD, CONF_RUNTIME_GUID), 0);
	assert_int_equal(op_index(" to ibvf1"), 0);
	assert_true(hw_guid(fake_net_find(pod, "net1")) == guid_pod);
	assert_int_equal(run(CNI_CMD_DEL, CONF_RUNTIME_GUID), 0);
	assert_ib_home(0xacadaeafb0b1b2b3ULL);
}

/* runtimeConfig.infinibandGUID wins over args.cni.guid, which wins over "guid". */
static void test_guid_keys(void **state)
{
	static const struct {
		const char *conf;
		const char *set;
	} cases[] = {
		{ CONF_GUID("\"guid\":\"00:00:00:00:00:00:00:0c\""), "node guid on ib0 to 000000000000000c" },
		{ CONF_GUID("\"guid\":\"00:00:00:00:00:00:00:0c\",\"args\":{\"cni\":{\"guid\":"
			    "\"00:00:00:00:00:00:00:0b\"}}"), "node guid on ib0 to 000000000000000b" },
		{ CONF_GUID("\"guid\":\"00:00:00:00:00:00:00:0c\",\"args\":{\"cni\":{\"guid\":"
			    "\"00:00:00:00:00:00:00:0b\"}},\"runtimeConfig\":{\"infinibandGUID\":"
			    "\"00:00:00:00:00:00:00:0A\"}"), "node guid on ib0 to 000000000000000a" },
		/* An empty capability is none: the next key is taken. */
		{ CONF_GUID("\"guid\":\"00:00:00:00:00:00:00:0c\",\"runtimeConfig\":{\"infinibandGUID\":"
			    "\"\"}"), "node guid on ib0 to 000000000000000c" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		ib_world();
		assert_int_equal(run(CNI_CMD_ADD, cases[i].conf), 0);
		assert_int_not_equal(op_index(cases[i].set), 0);
		assert_int_equal(run(CNI_CMD_DEL, cases[i].conf), 0);
		assert_ib_home(UINT64_MAX);
	}
	/* Without a GUID nothing of the kind happens. */
	ib_world();
	assert_int_equal(run(CNI_CMD_ADD, CONF_GUID("\"mtu\":2044")), 0);
	assert_int_equal(op_index(" guid on "), 0);
	assert_int_equal(op_index("rebind"), 0);
	assert_int_equal(run(CNI_CMD_DEL, CONF_GUID("\"mtu\":2044")), 0);
	assert_int_equal(fake_vfs.rebinds, 0);
}

/* Refused before anything changes: no kernel operation but lookups, no state. */
static void assert_refused(const char *conf, const char *msg_part)
{
	char line[256];

	assert_int_equal(run(CNI_CMD_ADD, conf), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	if (!strstr(err.msg, msg_part))
		fail_msg("\"%s\" not in \"%s\"", msg_part, err.msg);
	for (unsigned int n = 1; n <= fake_net.ops; n++) {
		op_line(n, line, sizeof(line));
		if (!strstr(line, "get ") && !strstr(line, ": open "))
			fail_msg("operation %u changed something: %s", n, line);
	}
	assert_false(state_kept("ibvf1"));
	assert_false(state_kept("ens1f0"));
	assert_int_equal(fake_vfs.rebinds, 0);
	assert_false(ib_vf->node_set || ib_vf->port_set);
}

static void test_guid_refused(void **state)
{
	static const char *const malformed[] = {
		"02:00:00:00:00:00:01", "02:00:00:00:00:00:00:01:02", "02-00-00-00-00-00-00-01",
		"2:00:00:00:00:00:00:01", "02:00:00:00:00:00:00:0x", "00:00:00:00:00:00:00:00",
		"02:00:00:00:00:00:00:01 ",
	};
	char conf[512];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(malformed); i++) {
		ib_world();
		snprintf(conf, sizeof(conf), CONF_GUID("\"runtimeConfig\":{\"infinibandGUID\":\"%s\"}"),
			 malformed[i]);
		assert_refused(conf, "invalid runtimeConfig.infinibandGUID");
		assert_non_null(strstr(err.msg, "8 hex octets separated by ':'"));
		ib_world();
		snprintf(conf, sizeof(conf), CONF_GUID("\"guid\":\"%s\""), malformed[i]);
		assert_refused(conf, "invalid guid");
	}
	ib_world();
	assert_int_equal(run(CNI_CMD_ADD, CONF_GUID("\"guid\":7")), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_DECODE);

	/* Not an InfiniBand device. */
	ib_world();
	assert_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"host-device\","
		       "\"device\":\"ens1f0\",\"guid\":\"02:00:00:00:00:00:00:01\"}",
		       "not an InfiniBand device");
	assert_non_null(fake_net_find(0, "ens1f0"));
	/* An InfiniBand netdev that is no VF (a PF): no physfn. */
	ib_world();
	assert_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"ib\",\"type\":\"host-device\","
		       "\"device\":\"ib0\",\"guid\":\"02:00:00:00:00:00:00:01\"}",
		       "not an SR-IOV VF");
}

/*
 * A failure at every operation after the GUID was set: the device is home
 * with the GUID, alias and up state it had, and no state is left.
 */
static void test_guid_add_fails_after_set(void **state)
{
	unsigned int set, total;

	(void)state;
	ib_world();
	assert_int_equal(run(CNI_CMD_ADD, CONF_RUNTIME_GUID), 0);
	set = op_index("set vf 1 node guid");
	total = fake_net.ops;
	assert_int_not_equal(set, 0);
	for (unsigned int n = set; n <= total; n++) {
		ib_world();
		fake_net.fail_at = n;
		fake_net.fail_errno = EIO;
		assert_int_not_equal(run(CNI_CMD_ADD, CONF_RUNTIME_GUID), 0);
		fake_net.fail_at = 0;
		if (n == set) {
			/* The kernel refused the node GUID: nothing to give back. */
			assert_false(ib_vf->node_set || ib_vf->port_set);
			assert_int_equal(fake_vfs.rebinds, 0);
			assert_int_equal(err.code, CNI_ERR_KERNEL);
			assert_non_null(strstr(err.msg, "GUID 02:00:00:00:00:00:00:01"));
			assert_false(state_kept("ibvf1"));
			continue;
		}
		assert_ib_home(UINT64_MAX);
	}
}

/* DEL after the pod's netns is gone: the state gives the GUID back when the device is home. */
static void test_guid_del_without_netns(void **state)
{
	struct net_link *l;

	(void)state;
	ib_world();
	assert_int_equal(run(CNI_CMD_ADD, CONF_RUNTIME_GUID), 0);
	/* The kernel hands the device back as net1 (its name in the pod). */
	l = fake_net_find(pod, "net1");
	fake_net_place(l, 0);
	fake_net_destroy_netns(pod);
	assert_int_equal(run(CNI_CMD_DEL, CONF_RUNTIME_GUID), 0);
	l = fake_net_find(0, "ibvf1");
	assert_non_null(l);
	assert_true(ib_vf->port_guid == UINT64_MAX);
	assert_true(hw_guid(l) == UINT64_MAX);
	assert_false(state_kept("ibvf1"));
}

static void test_guid_state_file(void **state)
{
	struct hostdev_state s = { .attachment = 1, .up = true, .mtu = 2044, .has_guid = true,
				   .guid = 0x0011223344556677ULL };
	struct hostdev_state got;

	(void)state;
	forget_states();
	assert_int_equal(hostdev_state_save("ibvf1", &s), 0);
	assert_int_equal(hostdev_state_load("ibvf1", &got), 0);
	assert_memory_equal(&got, &s, sizeof(s));
	/* A file of a plugin before GUIDs still reads; one without the GUID line does not. */
	write_state_file("ibvf1", "cni-rdma-plugins host-device state 1\n0000000000000001\nup 1\n"
				  "mtu 2044\nalias \n");
	assert_int_equal(hostdev_state_load("ibvf1", &got), 0);
	assert_false(got.has_guid);
	write_state_file("ibvf1", "cni-rdma-plugins host-device state 2\n0000000000000001\nup 1\n"
				  "mtu 2044\nalias \nguid 00112233445566\n");
	assert_int_equal(hostdev_state_load("ibvf1", &got), -EBADMSG);
	write_state_file("ibvf1", "cni-rdma-plugins host-device state 2\n0000000000000001\nup 1\n"
				  "mtu 2044\nalias \nguid 00112233445566AA\n");
	assert_int_equal(hostdev_state_load("ibvf1", &got), -EBADMSG);
	write_state_file("ibvf1", "cni-rdma-plugins host-device state 3\n0000000000000001\nup 1\n"
				  "mtu 2044\nalias \n");
	assert_int_equal(hostdev_state_load("ibvf1", &got), -EBADMSG);
	forget_states();
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
		cmocka_unit_test_teardown(test_direct_sequences, teardown),
		cmocka_unit_test_teardown(test_fallback_through_temporary_netns, teardown),
		cmocka_unit_test_teardown(test_shared_moves_nothing, teardown),
		cmocka_unit_test_teardown(test_no_rdma_subsystem, teardown),
		cmocka_unit_test_teardown(test_add_fails_at_every_step, teardown),
		cmocka_unit_test_teardown(test_del_fails_at_every_step, teardown),
		cmocka_unit_test_teardown(test_pod_name_clash, teardown),
		cmocka_unit_test_teardown(test_name_clash_before_5_14, teardown),
		cmocka_unit_test_teardown(test_software_rdma_device, teardown),
		cmocka_unit_test_teardown(test_del_restores_state, teardown),
		cmocka_unit_test_teardown(test_state_file, teardown),
		cmocka_unit_test_teardown(test_state_previous_build, teardown),
		cmocka_unit_test_teardown(test_host_name_clash_on_del, teardown),
		cmocka_unit_test_teardown(test_recover_in_host, teardown),
		cmocka_unit_test_teardown(test_interrupted_move, teardown),
		cmocka_unit_test_teardown(test_del_finds_device_left_mid_move, teardown),
		cmocka_unit_test_teardown(test_config_errors, teardown),
		cmocka_unit_test_setup_teardown(test_selectors, sysfs_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_del_checks_the_pod_link, sysfs_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_del_device_id_gone, sysfs_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_dpdk, sysfs_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_not_found, sysfs_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_device_info, sysfs_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_guid_add_del, ib_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_guid_restores_previous, ib_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_guid_keys, ib_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_guid_refused, ib_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_guid_add_fails_after_set, ib_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_guid_del_without_netns, ib_setup, sysfs_teardown),
		cmocka_unit_test_setup_teardown(test_guid_state_file, ib_setup, sysfs_teardown),
	};

	return cmocka_run_group_tests(tests, states_setup, states_teardown);
}
