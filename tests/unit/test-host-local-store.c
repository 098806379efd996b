/* Unit tests: host-local's store on disk, in a directory of the test's own
 *
 * The layout is upstream's (v1.9.1, backend/disk/backend.go and lock.go): the bytes and
 * modes of each file, the lock another process holds, the lookups and releases of files
 * written the way upstream and older upstreams write them.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/util/error.h"
#include "ipam/host-local/config.h"
#include "ipam/host-local/ip.h"
#include "ipam/host-local/range.h"
#include "ipam/host-local/store.h"

static char dir[] = "/tmp/hl-store-test-XXXXXX";
static char root[64];   /* the state root the settings allow */
static char data[128];  /* a dataDir below it */
static char net[192];   /* the network's store: data/net1 */

static const char *at(const char *rel)
{
	static char bufs[4][512];
	static unsigned int next;
	char *p = bufs[next++ % 4];

	snprintf(p, sizeof(bufs[0]), "%s/%s", net, rel);
	return p;
}

static void put(const char *name, const char *content)
{
	FILE *f = fopen(at(name), "w");

	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

/* The file's bytes, or "(none)". */
static const char *get(const char *name)
{
	static char buf[4][256];
	static unsigned int next;
	char *b = buf[next++ % 4];
	FILE *f = fopen(at(name), "r");
	size_t n;

	if (!f)
		return "(none)";
	n = fread(b, 1, sizeof(buf[0]) - 1, f);
	b[n] = '\0';
	fclose(f);
	return b;
}

static unsigned int mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

static int group_setup(void **state)
{
	char settings[512], json[1024];
	FILE *f;

	(void)state;
	umask(022);
	if (!mkdtemp(dir))
		return -1;
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(data, sizeof(data), "%s/networks", root);
	snprintf(net, sizeof(net), "%s/net1", data);
	snprintf(settings, sizeof(settings), "%s/settings.json", dir);
	snprintf(json, sizeof(json), "{\"stateRoots\": [\"%s\"], \"stateDirs\": [\"%s/nvipam\"]}", root, root);
	f = fopen(settings, "w");
	if (!f)
		return -1;
	fputs(json, f);
	fclose(f);
	chmod(settings, 0600);
	/* Read once per process: every test below sees these settings. */
	setenv("CNI_RDMA_PLUGINS_CONF", settings, 1);
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int clean(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : -1;
}

static struct hl_store *open_store(bool create)
{
	struct cni_err err = { 0 };
	struct hl_store *s = NULL;

	if (hl_store_open(data, "net1", create, &s, &err) < 0)
		fail_msg("open: %s", err.msg);
	return s;
}

static struct ip_addr addr(const char *s)
{
	struct ip_addr a;

	assert_int_equal(hl_ip_parse(s, &a), 0);
	return a;
}

static bool reserve(struct hl_store *s, const char *id, const char *ip, size_t set)
{
	struct cni_err err = { 0 };
	struct ip_addr a = addr(ip);
	bool ok = false;

	assert_int_equal(hl_store_reserve(s, id, "eth0", &a, set, &ok, &err), 0);
	return ok;
}

/* A range set of one range, for the lookups that take one. */
static struct hl_range_set *set_of(const char *subnet)
{
	static struct hl_range ranges[4];
	static struct hl_range_set sets[4];
	static unsigned int next;
	struct hl_range_spec spec = { 0 };
	struct cni_err err = { 0 };
	unsigned int i = next++ % 4;

	assert_int_equal(hl_cidr_parse(subnet, &spec.subnet), 0);
	assert_int_equal(hl_range_canonicalize(&spec, &ranges[i], &err), 0);
	sets[i] = (struct hl_range_set){ .ranges = &ranges[i], .n = 1 };
	return &sets[i];
}

/* What a missing store becomes: upstream's directories and lock, nothing else. */
static void test_layout(void **state)
{
	struct hl_store *s;
	struct stat st;

	(void)state;
	s = open_store(false);
	assert_null(s);
	assert_int_not_equal(stat(root, &st), 0);
	s = open_store(true);
	assert_non_null(s);
	assert_int_equal(mode_of(root), 0755);
	assert_int_equal(mode_of(data), 0755);
	assert_int_equal(mode_of(net), 0755);
	assert_int_equal(mode_of(at("lock")), 0750);
	assert_true(reserve(s, "c1", "10.1.0.2", 0));
	assert_true(reserve(s, "c2", "fd00::a:2", 1));
	hl_store_close(s);
	assert_string_equal(get("10.1.0.2"), "c1\r\neth0");
	assert_int_equal(mode_of(at("10.1.0.2")), 0600);
	assert_string_equal(get("last_reserved_ip.0"), "10.1.0.2");
	assert_int_equal(mode_of(at("last_reserved_ip.0")), 0600);
	assert_string_equal(get("fd00::a:2"), "c2\r\neth0");
	assert_string_equal(get("last_reserved_ip.1"), "fd00::a:2");
}

/* A held address is never taken twice: known at open, or made by another since. */
static void test_reserve_taken(void **state)
{
	struct hl_store *s;

	(void)state;
	s = open_store(true);
	assert_true(reserve(s, "c1", "10.1.0.2", 0));
	assert_false(reserve(s, "c2", "10.1.0.2", 0));
	hl_store_close(s);
	s = open_store(true);
	assert_false(reserve(s, "c2", "10.1.0.2", 0));
	/* Behind this store's back (upstream takes no lock of ours between its own). */
	put("10.1.0.3", "other\r\neth0");
	assert_false(reserve(s, "c2", "10.1.0.3", 0));
	assert_string_equal(get("10.1.0.3"), "other\r\neth0");
	assert_string_equal(get("last_reserved_ip.0"), "10.1.0.2");
	hl_store_close(s);
}

/* last_reserved_ip.N as upstream reads it: exactly an address, no trimming. */
static void test_last_reserved(void **state)
{
	struct hl_store *s;
	struct ip_addr a;

	(void)state;
	hl_store_close(open_store(true));
	s = open_store(false);
	assert_false(hl_store_last_reserved(s, 0, &a));
	put("last_reserved_ip.0", "10.1.0.9");
	assert_true(hl_store_last_reserved(s, 0, &a));
	assert_string_equal(hl_ip_format(&a, (char[HL_IP_STRLEN]){ 0 }), "10.1.0.9");
	put("last_reserved_ip.0", "10.1.0.9\n");
	assert_false(hl_store_last_reserved(s, 0, &a));
	put("last_reserved_ip.1", "garbage");
	assert_false(hl_store_last_reserved(s, 1, &a));
	hl_store_close(s);
}

/* Lookups of files as upstream and older upstreams write them, white space and all. */
static void test_lookups(void **state)
{
	struct hl_range_set *set;
	struct hl_store *s;
	struct ip_addr a;

	(void)state;
	hl_store_close(open_store(true));
	put("10.1.0.7", "c1\r\neth0");
	put("10.1.0.5", "c1\r\neth0\n");
	put("10.2.0.5", "\xe2\x80\x83 c1\r\neth1\t");
	put("10.3.0.5", "c9");
	put("notes", "c8\r\neth0");
	s = open_store(false);
	set = set_of("10.1.0.0/24");
	/* The first by name: 10.1.0.5 before 10.1.0.7. */
	assert_true(hl_store_owned_in(s, "c1", "eth0", set, &a));
	assert_string_equal(hl_ip_format(&a, (char[HL_IP_STRLEN]){ 0 }), "10.1.0.5");
	assert_false(hl_store_owned_in(s, "c1", "eth1", set, &a));
	assert_true(hl_store_owned_in(s, "c1", "eth1", set_of("10.2.0.0/24"), &a));
	/* The container ID alone (older upstream) is owned by each of its interfaces. */
	assert_true(hl_store_owned_in(s, "c9", "eth7", set_of("10.3.0.0/24"), &a));
	/* A file not named as an address holds no address, but CHECK finds it as upstream's. */
	assert_false(hl_store_owned_in(s, "c8", "eth0", set, &a));
	assert_true(hl_store_find(s, "c8", "eth0"));
	assert_true(hl_store_find(s, "c9", "eth0"));
	assert_false(hl_store_find(s, "c", "eth0"));
	assert_false(hl_store_find(s, "c1\r", "eth0"));
	assert_int_equal(hl_store_count_in(s, set), 2);
	hl_store_close(s);
}

/* DEL as upstream: the attachment's files, or without any those of the ID alone; from a
 * second range set on, both. */
static void test_release(void **state)
{
	struct cni_err err = { 0 };
	struct hl_store *s;
	size_t n;

	(void)state;
	hl_store_close(open_store(true));
	put("10.1.0.2", "c1\r\neth0");
	put("10.1.0.3", "c1");
	put("10.1.0.4", "c1\r\neth1");
	put("last_reserved_ip.0", "10.1.0.4");
	s = open_store(false);
	assert_int_equal(hl_store_release(s, "c1", "eth0", 1, &n, &err), 0);
	assert_int_equal(n, 1);
	hl_store_close(s);
	assert_string_equal(get("10.1.0.2"), "(none)");
	assert_string_equal(get("10.1.0.3"), "c1");
	s = open_store(false);
	assert_int_equal(hl_store_release(s, "c1", "eth0", 1, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(hl_store_release(s, "c1", "eth0", 1, &n, &err), 0);
	assert_int_equal(n, 0);
	hl_store_close(s);
	assert_string_equal(get("10.1.0.3"), "(none)");
	assert_string_equal(get("10.1.0.4"), "c1\r\neth1");
	assert_string_equal(get("last_reserved_ip.0"), "10.1.0.4");
	put("10.1.0.2", "c1\r\neth0");
	put("10.1.0.3", "c1");
	s = open_store(false);
	assert_int_equal(hl_store_release(s, "c1", "eth0", 2, &n, &err), 0);
	assert_int_equal(n, 2);
	hl_store_close(s);
	assert_string_equal(get("10.1.0.2"), "(none)");
	assert_string_equal(get("10.1.0.3"), "(none)");
	/* A store that was never made: nothing to release. */
	assert_int_equal(hl_store_release(NULL, "c1", "eth0", 1, &n, &err), 0);
	assert_int_equal(n, 0);
}

static void test_gc(void **state)
{
	char c1[] = "c1", old[] = "old", eth0[] = "eth0", eth5[] = "eth5";
	const struct cni_attachment valid[] = {
		{ .container_id = c1, .ifname = eth0 },
		{ .container_id = old, .ifname = eth5 },
	};
	struct cni_err err = { 0 };
	struct hl_store *s;
	size_t n;

	(void)state;
	hl_store_close(open_store(true));
	put("10.1.0.2", "c1\r\neth0");
	put("10.1.0.3", "c1\r\neth1");
	put("10.1.0.4", "c2\r\neth0");
	put("10.1.0.5", "old");
	put("10.1.0.6", "gone");
	put("10.1.0.7", "");
	put("10.1.0.8", "two\nlines");
	put("10.1.0.9", "c3\r\nbad/name");
	put("last_reserved_ip.0", "10.1.0.4");
	s = open_store(false);
	assert_int_equal(hl_store_gc(s, valid, 2, &n, &err), 0);
	assert_int_equal(n, 4);
	hl_store_close(s);
	assert_string_equal(get("10.1.0.2"), "c1\r\neth0");
	assert_string_equal(get("10.1.0.3"), "(none)");
	assert_string_equal(get("10.1.0.4"), "(none)");
	assert_string_equal(get("10.1.0.5"), "old");
	assert_string_equal(get("10.1.0.6"), "(none)");
	assert_string_equal(get("10.1.0.7"), "(none)");
	assert_string_equal(get("10.1.0.8"), "two\nlines");
	assert_string_equal(get("10.1.0.9"), "c3\r\nbad/name");
	assert_string_equal(get("last_reserved_ip.0"), "10.1.0.4");
	assert_string_equal(get("lock"), "");
}

/* A failed ADD takes back its files and puts each last_reserved_ip.N as it was. */
static void test_undo(void **state)
{
	struct hl_store *s;

	(void)state;
	hl_store_close(open_store(true));
	put("last_reserved_ip.0", "10.1.0.9");
	s = open_store(false);
	assert_true(reserve(s, "c1", "10.1.0.10", 0));
	assert_true(reserve(s, "c1", "10.1.0.11", 0));
	assert_true(reserve(s, "c1", "fd00::2", 1));
	assert_string_equal(get("last_reserved_ip.0"), "10.1.0.11");
	hl_store_undo(s);
	hl_store_close(s);
	assert_string_equal(get("10.1.0.10"), "(none)");
	assert_string_equal(get("10.1.0.11"), "(none)");
	assert_string_equal(get("fd00::2"), "(none)");
	assert_string_equal(get("last_reserved_ip.0"), "10.1.0.9");
	assert_string_equal(get("last_reserved_ip.1"), "(none)");
}

/* What the directory holds besides files: never followed, never opened, never removed. */
static void test_odd_entries(void **state)
{
	struct cni_err err = { 0 };
	struct hl_store *s;
	size_t n;

	(void)state;
	hl_store_close(open_store(true));
	assert_int_equal(mkdir(at("10.1.0.2"), 0700), 0);
	assert_int_equal(symlink("/etc/hostname", at("10.1.0.3")), 0);
	assert_int_equal(mkfifo(at("10.1.0.4"), 0600), 0);
	put("10.1.0.2/10.1.0.9", "c1\r\neth0");
	s = open_store(false);
	assert_false(reserve(s, "c1", "10.1.0.3", 0));
	assert_false(reserve(s, "c1", "10.1.0.4", 0));
	assert_int_equal(hl_store_release(s, "c1", "eth0", 2, &n, &err), 0);
	assert_int_equal(n, 0);
	hl_store_close(s);
	assert_string_equal(get("10.1.0.2/10.1.0.9"), "c1\r\neth0");
}

static int open_err(const char *data_dir, const char *network, struct cni_err *err)
{
	struct hl_store *s = NULL;
	int r = hl_store_open(data_dir, network, true, &s, err);

	hl_store_close(s);
	return r;
}

static void test_refused(void **state)
{
	char path[512];
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(open_err("/tmp", "net1", &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(err.msg, "is outside the directories"));
	/* nv-ipam's state directory (the settings' stateDirs), however it is reached. */
	err = (struct cni_err){ 0 };
	assert_int_equal(open_err(root, "nvipam", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "would lie in the state of the suite's own plugins"));
	err = (struct cni_err){ 0 };
	snprintf(path, sizeof(path), "%s//", root);
	assert_int_equal(open_err(path, "nvipam", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "own plugins"));
	/* A link as the network's directory, then as the lock. */
	err = (struct cni_err){ 0 };
	assert_int_equal(mkdir(root, 0755), 0);
	assert_int_equal(mkdir(data, 0755), 0);
	assert_int_equal(symlink(dir, net), 0);
	assert_true(open_err(data, "net1", &err) < 0);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(err.msg, "not a directory"));
	assert_int_equal(unlink(net), 0);
	assert_int_equal(mkdir(net, 0755), 0);
	snprintf(path, sizeof(path), "%s/planted", dir);
	assert_int_equal(symlink(path, at("lock")), 0);
	err = (struct cni_err){ 0 };
	assert_true(open_err(data, "net1", &err) < 0);
	assert_int_equal(err.code, CNI_ERR_IO);
	assert_non_null(strstr(err.msg, "lock"));
	assert_int_not_equal(access(path, F_OK), 0);
}

/* The lock another process holds (upstream's flock on <store>/lock) keeps this one waiting. */
static void test_lock_held(void **state)
{
	int ready[2], done[2];
	struct hl_store *s;
	char c;
	pid_t pid;

	(void)state;
	hl_store_close(open_store(true));
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(at("lock"), O_RDONLY);

		if (fd < 0 || flock(fd, LOCK_EX) < 0 || write(ready[1], "L", 1) != 1)
			_exit(1);
		usleep(200 * 1000);
		/* Said before the lock goes: the parent must not have it yet. */
		if (write(done[1], "U", 1) != 1)
			_exit(1);
		_exit(0);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(fcntl(done[0], F_SETFL, O_NONBLOCK), 0);
	s = open_store(false);
	/* Without waiting, this read would come while the child sleeps, before its "U". */
	assert_int_equal(read(done[0], &c, 1), 1);
	assert_int_equal(c, 'U');
	hl_store_close(s);
	assert_int_equal(waitpid(pid, &(int){ 0 }, 0), pid);
	close(ready[0]);
	close(ready[1]);
	close(done[0]);
	close(done[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_layout, clean),
		cmocka_unit_test_setup(test_reserve_taken, clean),
		cmocka_unit_test_setup(test_last_reserved, clean),
		cmocka_unit_test_setup(test_lookups, clean),
		cmocka_unit_test_setup(test_release, clean),
		cmocka_unit_test_setup(test_gc, clean),
		cmocka_unit_test_setup(test_undo, clean),
		cmocka_unit_test_setup(test_odd_entries, clean),
		cmocka_unit_test_setup(test_refused, clean),
		cmocka_unit_test_setup(test_lock_held, clean),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
