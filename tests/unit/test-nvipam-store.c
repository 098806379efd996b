/*
 * Unit tests: the nv-ipam store's interface: the layout on disk, the model, some pools
 * open at once, DEL pool by pool, two-pool ADDs, compaction, locking, commit failures,
 * files that are not followed; each test in its own mkdtemp directory
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/format.h"
#include "ipam/nv-ipam/store/store.h"
#include "tests/unit/store-helpers.h"

/* ---- empty stores ---- */

static void test_missing_file_and_dirs(void **state)
{
	_cleanup_free_ char *path = path_in("a/b/store");
	_cleanup_free_ char *lock = path_in("a/b/store.lock");
	_cleanup_free_ char *pools = path_in("a/b/store.d");
	_cleanup_free_ char *sub = path_in("a/b");
	struct nvipam_store *s;
	struct stat st;

	(void)state;
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 0);
	assert_int_equal(nvipam_store_pool_count(s), 0);
	assert_false(nvipam_store_dirty(s));
	assert_non_null(s);
	assert_int_equal(stat(sub, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(lock, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* Nothing changed: commit writes nothing, open created no store file. */
	commit_ok(s);
	assert_false(exists(path));
	assert_false(exists(pools));
	nvipam_store_close(s);
}

static void test_empty_file(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	const char *keys[] = { "pool1", NULL };
	struct nvipam_store *s;

	(void)state;
	write_all(path, "", 0);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 0);
	assert_int_equal(nvipam_store_pool_count(s), 0);
	assert_false(nvipam_store_dirty(s));
	nvipam_store_close(s);
	/* Some pools open: the store file of version 2 is written (once, under the node lock). */
	open_pools_ok(path, keys, &s);
	nvipam_store_close(s);
	_cleanup_free_ char *text = read_all(path, NULL);
	assert_string_equal(text, "{\"version\":2,\"pools\":\"store.d\"}\n");
}

static void test_close_none(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	struct nvipam_store *s = NULL;
	int fd0 = fcntl(0, F_GETFD);

	(void)state;
	/* No store: closing it must not close stdin. */
	nvipam_store_close(s);
	assert_int_equal(fcntl(0, F_GETFD), fd0);
	open_ok(path, &s);
	nvipam_store_close(s);
	assert_int_equal(fcntl(0, F_GETFD), fd0);
	nvipam_store_close(NULL);
}

/* ---- what is written ---- */

static void test_round_trip_all_fields(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *log4 = path_in("store.d/pool1.log");
	_cleanup_free_ char *log6 = path_in("store.d/cidrpool%2Fp6.log");
	_cleanup_free_ char *pools = path_in("store.d");
	_cleanup_free_ char *text = NULL;
	struct nvipam_alloc a = {
		.pool = "cidrpool/p6",
		.ip = ip("fd52:2eb5:44::2"),
		.container_id = "0123456789abcdef",
		.ifname = "net1",
		.network = "my \"net\"\\x\ttab\nnewline",
		.pod_namespace = "kube-system",
		.pod_name = "p\xc3\xa9-\t<&>\x01 \xff\xfe\xc2\x85",
		.pod_uid = "aaf0a0fc-9869-41ef-9214-48599f85b4fa",
		.device_id = "0000:3b:00.2",
		.created = T_REF + 3661,
	};
	struct nvipam_store *s;
	const struct nvipam_alloc *g;
	struct stat st;

	(void)state;
	open_ok(path, &s);
	add_ok(s, "pool1", "192.168.0.2", "c1", "net1", true);
	add_ok(s, "pool1", "192.168.0.7", "c2", "net1", false);
	assert_int_equal(nvipam_store_add(s, &a, false), 0);
	assert_true(nvipam_store_dirty(s));
	commit_ok(s);
	nvipam_store_close(s);

	/* The store file points at the pool logs; everything is the node's alone. */
	text = read_all(path, NULL);
	assert_string_equal(text, "{\"version\":2,\"pools\":\"store.d\"}\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(pools, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(log4, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(log6, &st), 0);

	open_ok(path, &s);
	assert_false(nvipam_store_dirty(s));
	assert_int_equal(nvipam_store_count(s), 3);
	/* Pools in lock order: by file name ("cidrpool%2Fp6" before "pool1"). */
	assert_int_equal(nvipam_store_pool_count(s), 2);
	assert_string_equal(pool_at(s, 0)->key, "cidrpool/p6");
	assert_false(pool_at(s, 0)->has_last);
	assert_string_equal(pool_at(s, 1)->key, "pool1");
	assert_true(pool_at(s, 1)->has_last);
	assert_ip(&pool_at(s, 1)->last_reserved, "192.168.0.2");

	g = nvipam_store_find(s, "cidrpool/p6", "0123456789abcdef", "net1");
	assert_non_null(g);
	assert_string_equal(g->pool, a.pool);
	assert_ip(&g->ip, "fd52:2eb5:44::2");
	assert_int_equal(g->ip.family, AF_INET6);
	/* Every byte comes back, tabs, newlines and bytes that are not UTF-8 included. */
	assert_string_equal(g->network, a.network);
	assert_string_equal(g->pod_namespace, a.pod_namespace);
	assert_string_equal(g->pod_name, a.pod_name);
	assert_string_equal(g->pod_uid, a.pod_uid);
	assert_string_equal(g->device_id, a.device_id);
	assert_int_equal(g->created, T_REF + 3661);
	assert_ip(&nvipam_store_find(s, "pool1", "c2", "net1")->ip, "192.168.0.7");
	nvipam_store_close(s);
}

static void test_exact_format(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *log = path_in("store.d/pool1.log");
	_cleanup_free_ char *want_a = log_line("A\tr\t\t\t192.168.0.2\ta1b2c3\tnet1\tnet-a\tdefault\tpod\tuid"
					       "\t\t2024-06-14T10:00:00Z");
	_cleanup_free_ char *want_d = log_line("D\ta1b2c3\tnet1");
	char **lines;
	size_t n;
	struct nvipam_store *s;

	(void)state;
	open_ok(path, &s);
	add_ok(s, "pool1", "192.168.0.2", "a1b2c3", "net1", true);
	commit_ok(s);
	assert_int_equal(nvipam_store_remove(s, NULL, "a1b2c3", "net1"), 1);
	commit_ok(s);
	nvipam_store_close(s);
	lines = lines_of(log, &n);
	assert_int_equal(n, 3);
	/* The header: magic, version, pool key, the log's random id, checksum. */
	assert_int_equal(strncmp(lines[0], "nv-ipam-pool-log\t1\tpool1\t", 25), 0);
	assert_int_equal(strlen(lines[0]), 25 + 16 + 1 + 16);
	assert_int_equal(strncmp(lines[1], want_a, strlen(want_a) - 1), 0);
	assert_int_equal(strncmp(lines[2], want_d, strlen(want_d) - 1), 0);
	lines_free(lines, n);
}

/* Formatting is done by hand (no gmtime_r): clamped to what RFC 3339 can say, read back. */
static void test_created_times(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	struct nvipam_store *s;
	struct nvipam_alloc a;

	(void)state;
	open_ok(path, &s);
	a = mk("p", "10.0.1.1", "c1", "e");
	a.created = -5;
	assert_int_equal(nvipam_store_add(s, &a, false), 0);
	a = mk("p", "10.0.1.2", "c2", "e");
	a.created = (time_t)253402300799LL + 1000;
	assert_int_equal(nvipam_store_add(s, &a, false), 0);
	a = mk("p", "10.0.1.3", "c3", "e");
	a.created = 951782400; /* 2000-02-29 */
	assert_int_equal(nvipam_store_add(s, &a, false), 0);
	commit_ok(s);
	nvipam_store_close(s);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_find(s, "p", "c1", "e")->created, 0);
	assert_int_equal(nvipam_store_find(s, "p", "c2", "e")->created, (time_t)253402300799LL);
	assert_int_equal(nvipam_store_find(s, "p", "c3", "e")->created, 951782400);
	nvipam_store_close(s);
}

/* The reference daemon's store @go (Go's marshalling, "checksum":0) with its checksum set. */
static char *reference_checksummed(const char *go)
{
	const char *at = strstr(go, "\"checksum\":0,");
	char *doc;

	assert_non_null(at);
	at += strlen("\"checksum\":");
	assert_true(asprintf(&doc, "%.*s%" PRIu32 "%s", (int)(at - go), go,
			     text_hash32(go, strlen(go), TEXT_HASH32_INIT), at + 1) > 0);
	return doc;
}

/*
 * An ADD whose line would pass STORE_FORMAT_ADD_LINE_MAX is refused, never written: a
 * network config's long strings cannot grow a shared pool's log past what is read. A
 * longer line an older store held is migrated and read back whole.
 */
static void test_add_too_long(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *old_path = path_in("old");
	_cleanup_free_ char *huge = malloc(600 * 1024), *doc = NULL, *with_sum = NULL;
	struct nvipam_store *s;
	struct nvipam_alloc a = mk("p", "10.0.0.1", "c", "e");

	(void)state;
	memset(huge, 'x', 600 * 1024 - 1);
	huge[600 * 1024 - 1] = '\0';
	a.network = huge;
	open_ok(path, &s);
	assert_int_equal(nvipam_store_add(s, &a, true), -E2BIG);
	huge[STORE_FORMAT_ADD_LINE_MAX] = '\0';
	assert_int_equal(nvipam_store_add(s, &a, true), -E2BIG);
	assert_int_equal(nvipam_store_count(s), 0);
	assert_false(nvipam_store_dirty(s));
	/* A long name that fits is kept whole. */
	huge[STORE_FORMAT_ADD_LINE_MAX - 200] = '\0';
	assert_int_equal(nvipam_store_add(s, &a, true), 0);
	commit_ok(s);
	nvipam_store_close(s);
	open_ok(path, &s);
	assert_int_equal(strlen(nvipam_store_find(s, "p", "c", "e")->network),
			 STORE_FORMAT_ADD_LINE_MAX - 200);
	nvipam_store_close(s);

	/* The reference daemon's store, its pod name of 100 KiB: checksummed as the daemon does. */
	memset(huge, 'x', 100 * 1024);
	huge[100 * 1024] = '\0';
	assert_true(asprintf(&doc, "{\"version\":1,\"checksum\":0,\"pools\":{\"p\":{\"name\":\"p\","
			     "\"entries\":{\"c_e\":{\"container_id\":\"c\",\"interface_name\":\"e\","
			     "\"ip_address\":\"10.0.0.1\",\"metadata\":{\"create_time\":\"\",\"pod_uuid\":\"\","
			     "\"pod_name\":\"%s\",\"pod_namespace\":\"\",\"device_id\":\"\","
			     "\"pool_config_snapshot\":\"\"}}},\"last_pool_config\":\"\",\"last_reserved_ip\":\"\"}}}",
			     huge) > 0);
	with_sum = reference_checksummed(doc);
	write_all(old_path, with_sum, strlen(with_sum));
	open_ok(old_path, &s);
	assert_int_equal(strlen(nvipam_store_find(s, "p", "c", "e")->pod_name), 100 * 1024);
	nvipam_store_close(s);
	open_ok(old_path, &s);
	assert_int_equal(strlen(nvipam_store_find(s, "p", "c", "e")->pod_name), 100 * 1024);
	nvipam_store_close(s);
}

/* ---- the model ---- */

static void test_add_refuses_duplicate_ip(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	char cid[] = "c1";
	struct nvipam_alloc a = mk("pool1", "10.0.0.5", cid, "net1");
	struct nvipam_alloc nulls = { .pool = "pool2", .ip = ip("10.0.0.9") };
	struct nvipam_alloc bad = mk("", "10.0.0.6", "c", "e");
	struct nvipam_store *s;

	(void)state;
	open_ok(path, &s);
	assert_int_equal(nvipam_store_add(s, &a, false), 0);
	/* Copied, not borrowed. */
	cid[1] = '9';
	assert_string_equal(nvipam_store_alloc_at(s, 0)->container_id, "c1");
	assert_int_equal(nvipam_store_pool_count(s), 1);
	assert_false(pool_at(s, 0)->has_last);

	a = mk("pool1", "10.0.0.5", "other", "net1");
	assert_int_equal(nvipam_store_add(s, &a, true), -EEXIST);
	assert_int_equal(nvipam_store_count(s), 1);
	/* The same IP in another pool is another address space. */
	a = mk("pool2", "10.0.0.5", "other", "net1");
	assert_int_equal(nvipam_store_add(s, &a, true), 0);
	assert_int_equal(nvipam_store_add(s, &a, true), -EEXIST);
	assert_int_equal(nvipam_store_count(s), 2);
	assert_int_equal(nvipam_store_pool_count(s), 2);
	assert_string_equal(pool_at(s, 1)->key, "pool2");
	assert_ip(&pool_at(s, 1)->last_reserved, "10.0.0.5");

	assert_int_equal(nvipam_store_add(s, &nulls, true), 0);
	assert_ip(&pool_at(s, 1)->last_reserved, "10.0.0.9");
	assert_string_equal(nvipam_store_alloc_at(s, 2)->container_id, "");
	assert_string_equal(nvipam_store_alloc_at(s, 2)->network, "");

	/* What the loader would refuse is refused here. */
	assert_int_equal(nvipam_store_add(s, &bad, false), -EINVAL);
	bad = mk("pool1", "10.0.0.6", "c", "e");
	bad.ip = (struct ip_addr){ 0 };
	assert_int_equal(nvipam_store_add(s, &bad, false), -EINVAL);
	assert_int_equal(nvipam_store_count(s), 3);

	commit_ok(s);
	nvipam_store_close(s);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 3);
	a = mk("pool2", "10.0.0.5", "x", "y");
	assert_int_equal(nvipam_store_add(s, &a, false), -EEXIST);
	assert_false(nvipam_store_dirty(s));
	nvipam_store_close(s);
}

static void test_remove(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	struct nvipam_store *s;
	size_t n;

	(void)state;
	open_ok(path, &s);
	add_ok(s, "p4", "10.0.0.1", "c1", "net1", true);
	add_ok(s, "p6", "fd00::1", "c1", "net1", true);
	add_ok(s, "p4", "10.0.0.2", "c2", "net1", true);
	add_ok(s, "p4", "10.0.0.3", "c1", "net2", true);
	add_ok(s, "p6", "fd00::2", "c2", "net1", true);
	commit_ok(s);

	assert_int_equal(nvipam_store_remove(s, "p4", "nope", "net1"), 0);
	assert_false(nvipam_store_dirty(s));
	/* One pool only. */
	assert_int_equal(nvipam_store_remove(s, "p6", "c1", "net1"), 1);
	assert_true(nvipam_store_dirty(s));
	assert_int_equal(nvipam_store_count(s), 4);
	assert_non_null(nvipam_store_find(s, "p4", "c1", "net1"));
	assert_null(nvipam_store_find(s, "p6", "c1", "net1"));
	/* All pools; the arguments point into the allocation removed, as GC passes them. */
	{
		const struct nvipam_alloc *a = nvipam_store_find(s, "p4", "c2", "net1");

		assert_non_null(a);
		n = nvipam_store_remove(s, NULL, a->container_id, a->ifname);
	}
	assert_int_equal(n, 2);
	assert_int_equal(nvipam_store_count(s), 2);
	/* The others keep their order. */
	assert_string_equal(nvipam_store_alloc_at(s, 0)->container_id, "c1");
	assert_string_equal(nvipam_store_alloc_at(s, 0)->ifname, "net1");
	assert_string_equal(nvipam_store_alloc_at(s, 1)->ifname, "net2");
	/* Last reserved IPs stay, as the reference's DEL leaves them. */
	assert_int_equal(nvipam_store_pool_count(s), 2);
	commit_ok(s);
	nvipam_store_close(s);

	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 2);
	assert_null(nvipam_store_find(s, "p4", "c2", "net1"));
	assert_null(nvipam_store_find(s, "p6", "c2", "net1"));
	assert_non_null(nvipam_store_find(s, "p4", "c1", "net2"));
	assert_int_equal(nvipam_store_pool_count(s), 2);
	assert_ip(&pool_at(s, 1)->last_reserved, "fd00::2");
	nvipam_store_close(s);
}

/* gc's dropping of a pool record: files removed at commit, only from the whole store. */
static void test_drop_pool(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *dir = path_in("store.d");
	_cleanup_free_ char *log = path_in("store.d/p6.log");
	const char *keys[] = { "p6", NULL };
	struct nvipam_store *s;

	(void)state;
	open_ok(path, &s);
	add_ok(s, "p4", "10.0.0.1", "c1", "net1", true);
	add_ok(s, "p6", "fd00::1", "c1", "net1", true);
	commit_ok(s);
	assert_false(nvipam_store_drop_pool(s, "p6"));
	assert_int_equal(nvipam_store_remove(s, "p6", "c1", "net1"), 1);
	/* Its release is queued and goes with it: the log is removed, not appended to. */
	assert_true(nvipam_store_drop_pool(s, "p6"));
	assert_int_equal(nvipam_store_pool_count(s), 1);
	assert_int_equal(access(log, F_OK), 0);
	nvipam_store_close(s);
	/* Not committed (gc's dry run): nothing changed. */
	open_ok(path, &s);
	assert_int_equal(nvipam_store_pool_count(s), 2);
	assert_non_null(nvipam_store_find(s, "p6", "c1", "net1"));
	assert_int_equal(nvipam_store_remove(s, "p6", "c1", "net1"), 1);
	assert_true(nvipam_store_drop_pool(s, "p6"));
	commit_ok(s);
	nvipam_store_close(s);
	assert_int_equal(access(log, F_OK), -1);
	assert_int_equal(count_prefixed(dir, "p6.snap"), 0);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_pool_count(s), 1);
	assert_string_equal(pool_at(s, 0)->key, "p4");
	assert_int_equal(nvipam_store_count(s), 1);
	nvipam_store_close(s);
	/* Some pools open: never (a pool's files are removed only under the whole store's lock). */
	open_pools_ok(path, keys, &s);
	add_ok(s, "p6", "fd00::1", "c1", "net1", true);
	commit_ok(s);
	assert_int_equal(nvipam_store_remove(s, "p6", "c1", "net1"), 1);
	commit_ok(s);
	assert_false(nvipam_store_drop_pool(s, "p6"));
	nvipam_store_close(s);
}

static void test_find_and_usage(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	struct nvipam_store *s;
	struct ip_addr *ips = NULL;
	struct ip_addr last;
	bool has_last = true;
	size_t n = 99;

	(void)state;
	open_ok(path, &s);
	assert_int_equal(usage_of(s, "p", &ips, &n, &has_last, &last), 0);
	assert_int_equal(n, 0);
	assert_false(has_last);
	free(ips);

	add_ok(s, "p", "10.0.0.4", "c1", "net1", false);
	add_ok(s, "q", "10.0.0.5", "c1", "net1", true);
	add_ok(s, "p", "fd00::1", "c4", "net1", false);
	add_ok(s, "p", "10.0.0.6", "c2", "net1", true);
	add_ok(s, "p", "10.0.0.2", "c3", "net1", false);

	assert_null(nvipam_store_find(s, "q", "c2", "net1"));
	assert_null(nvipam_store_find(s, "p", "c1", "net2"));
	assert_null(nvipam_store_find(s, "nope", "c1", "net1"));
	assert_ip(&nvipam_store_find(s, "q", "c1", "net1")->ip, "10.0.0.5");
	assert_ip(&nvipam_store_find(s, "p", "c1", "net1")->ip, "10.0.0.4");

	/* In address order, IPv4 first, as allocation takes them. */
	assert_int_equal(usage_of(s, "p", &ips, &n, &has_last, &last), 0);
	assert_int_equal(n, 4);
	assert_ip(&ips[0], "10.0.0.2");
	assert_ip(&ips[1], "10.0.0.4");
	assert_ip(&ips[2], "10.0.0.6");
	assert_ip(&ips[3], "fd00::1");
	assert_true(has_last);
	assert_ip(&last, "10.0.0.6");
	free(ips);
	nvipam_store_close(s);
}

/* ---- some pools open ---- */

static void test_open_pools(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	const char *keys[] = { "b", "a", "b", NULL };
	struct nvipam_alloc a = mk("c", "10.0.0.9", "x", "e");
	struct nvipam_store *s;

	(void)state;
	open_ok(path, &s);
	add_ok(s, "a", "10.0.0.1", "c1", "net1", true);
	add_ok(s, "b", "10.0.1.1", "c1", "net1", true);
	add_ok(s, "c", "10.0.2.1", "c1", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);

	/* Named twice, opened once; in lock order; only these. */
	open_pools_ok(path, keys, &s);
	assert_int_equal(nvipam_store_pool_count(s), 2);
	assert_string_equal(pool_at(s, 0)->key, "a");
	assert_string_equal(pool_at(s, 1)->key, "b");
	assert_non_null(nvipam_store_find(s, "a", "c1", "net1"));
	assert_null(nvipam_store_find(s, "c", "c1", "net1"));
	/* Only the pools it holds locks of take allocations. */
	assert_int_equal(nvipam_store_add(s, &a, true), -EINVAL);
	add_ok(s, "b", "10.0.1.2", "c2", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);

	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 4);
	assert_ip(&nvipam_store_find(s, "b", "c2", "net1")->ip, "10.0.1.2");
	assert_ip(&pool_at(s, 1)->last_reserved, "10.0.1.2");
	nvipam_store_close(s);
}

/*
 * Child: open the store (@key: that pool; NULL: the whole store), report on @ready, wait
 * for a byte on @go (or @hold_ms), close. @go_w is the parent's end of @go. After @hold_ms,
 * the monotonic time in ns from just before the close follows on @ready: whoever took the
 * lock after the close did so later.
 */
static pid_t hold_in_child(const char *path, const char *key, int ready, int go, int go_w, int hold_ms)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct nvipam_store *s;
		struct cni_err err = { 0 };
		char c = 'x';
		int r;

		/* Only the parent writes to us: EOF reaches us if it dies. */
		if (go_w >= 0)
			(void)close(go_w);
		r = key ? nvipam_store_open_pools(path, false, 1000, &key, 1, &s, &err) :
			  nvipam_store_open(path, false, 1000, &s, &err);
		if (r < 0)
			_exit(2);
		if (write(ready, &c, 1) != 1)
			_exit(3);
		if (hold_ms > 0) {
			struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };
			int64_t before_close;

			nanosleep(&ts, NULL);
			before_close = clock_mono_ns();
			nvipam_store_close(s);
			_exit(write(ready, &before_close, sizeof(before_close)) == sizeof(before_close) ? 0 : 5);
		}
		if (read(go, &c, 1) != 1)
			_exit(4);
		nvipam_store_close(s);
		_exit(0);
	}
	return pid;
}

static void wait_child(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Pools lock independently: one held does not stop another; the whole store waits for both. */
static void test_pools_lock_independently(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	const char *b[] = { "b", NULL };
	int ready[2], go[2];
	struct nvipam_store *s = NULL;
	struct cni_err err = { 0 };
	const char *a = "a";
	char c;
	pid_t pid;
	int r;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid = hold_in_child(path, "a", ready[1], go[0], go[1], 0);
	assert_int_equal(read(ready[0], &c, 1), 1);

	/* Pool b does not wait for pool a: the child holds a until told below, so a wait fails. */
	open_pools_ok(path, b, &s);
	add_ok(s, "b", "10.0.0.1", "c1", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);

	s = NULL;
	r = nvipam_store_open_pools(path, false, 100, &a, 1, &s, &err);
	assert_int_equal(r, -EAGAIN);
	assert_int_equal(err.code, CNI_ERR_TRY_AGAIN);
	assert_non_null(strstr(err.msg, "store.d/a.log is locked by another process (waited 100 ms)"));
	err = (struct cni_err){ 0 };
	r = nvipam_store_open(path, false, 100, &s, &err);
	assert_int_equal(r, -EAGAIN);
	assert_non_null(strstr(err.msg, "is locked by another process (waited 100 ms)"));
	assert_null(s);

	assert_int_equal(write(go[1], "x", 1), 1);
	wait_child(pid);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 1);
	nvipam_store_close(s);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

/* The whole store is exclusive: no pool opens while it is held. */
static void test_whole_store_excludes_pools(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	int ready[2], go[2];
	struct nvipam_store *s = NULL;
	struct cni_err err = { 0 };
	const char *a = "a";
	char c;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid = hold_in_child(path, NULL, ready[1], go[0], go[1], 0);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(nvipam_store_open_pools(path, false, 100, &a, 1, &s, &err), -EAGAIN);
	assert_int_equal(err.code, CNI_ERR_TRY_AGAIN);
	err = (struct cni_err){ 0 };
	assert_int_equal(nvipam_store_release(path, false, 100, "c", "e", 0, &(size_t){ 0 }, &err), -EAGAIN);
	assert_int_equal(err.code, CNI_ERR_TRY_AGAIN);
	assert_int_equal(write(go[1], "x", 1), 1);
	wait_child(pid);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

static void test_release(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *fresh = path_in("fresh/store");
	_cleanup_free_ char *fresh_dir = path_in("fresh");
	struct cni_err err = { 0 };
	struct nvipam_store *s;
	size_t n = 99;

	(void)state;
	/* A store never written: nothing to release, nothing created but the lock. */
	assert_int_equal(mkdir(fresh_dir, 0700), 0);
	assert_int_equal(nvipam_store_release(fresh, false, 1000, "c1", "net1", 0, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_false(exists(fresh));
	assert_int_equal(count_prefixed(fresh_dir, "store.d"), 0);

	open_ok(path, &s);
	add_ok(s, "p4", "10.0.0.1", "c1", "net1", true);
	add_ok(s, "p6", "fd00::1", "c1", "net1", true);
	add_ok(s, "p4", "10.0.0.2", "c2", "net1", true);
	add_ok(s, "old", "10.9.0.2", "c1", "net1", true);
	add_ok(s, "p4", "10.0.0.3", "c1", "net2", true);
	commit_ok(s);
	nvipam_store_close(s);

	/* Every pool, one at a time; a pool no config names any more too. */
	assert_int_equal(nvipam_store_release(path, true, 1000, "c1", "net1", 0, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(nvipam_store_release(path, true, 1000, "c1", "net1", 0, &n, &err), 0);
	assert_int_equal(n, 0);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 2);
	assert_non_null(nvipam_store_find(s, "p4", "c2", "net1"));
	assert_non_null(nvipam_store_find(s, "p4", "c1", "net2"));
	nvipam_store_close(s);
}

/*
 * The addresses a cooldown keeps are given in address order, whatever order their DELs
 * came in: the allocator takes its held addresses sorted, these among them.
 */
static void test_cooling_in_address_order(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ struct ip_addr *ips = NULL;
	static const char *const ids[] = { "c1", "c2", "c3" };
	const char *key = "p4";
	struct cni_err err = { 0 };
	struct nvipam_store *s;
	char buf[IP_PREFIX_STRLEN];
	size_t n = 0;

	(void)state;
	open_ok(path, &s);
	add_ok(s, "p4", "10.0.0.9", "c1", "net1", true);
	add_ok(s, "p4", "10.0.0.3", "c2", "net1", true);
	add_ok(s, "p4", "10.0.0.5", "c3", "net1", true);
	add_ok(s, "p4", "10.0.0.4", "c4", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
		assert_int_equal(nvipam_store_release(path, true, 1000, ids[i], "net1", 60, &n, &err), 0);
		assert_int_equal(n, 1);
	}
	/* Without a cooldown, nothing is noted. */
	assert_int_equal(nvipam_store_release(path, true, 1000, "c4", "net1", 0, &n, &err), 0);

	assert_int_equal(nvipam_store_open_pools(path, true, 1000, &key, 1, &s, &err), 0);
	assert_int_equal(nvipam_store_cooling(s, "p4", 60, &ips, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(ip_addr_format(&ips[0], buf, sizeof(buf)), "10.0.0.3");
	assert_string_equal(ip_addr_format(&ips[1], buf, sizeof(buf)), "10.0.0.5");
	assert_string_equal(ip_addr_format(&ips[2], buf, sizeof(buf)), "10.0.0.9");
	free(ips);
	ips = NULL;
	assert_int_equal(nvipam_store_cooling(s, "p4", 0, &ips, &n), 0);
	assert_int_equal(n, 0);
	assert_null(ips);
	nvipam_store_close(s);
}

/* ---- two pools in one ADD: all or nothing ---- */

/* @n allocations in @pool: its log grows past a few KiB. */
static void grow_pool(const char *path, const char *pool, int n)
{
	struct nvipam_store *s;

	open_ok(path, &s);
	for (int i = 0; i < n; i++) {
		char addr[32], cid[32];

		snprintf(addr, sizeof(addr), "10.1.%d.%d", i / 200, i % 200 + 1);
		snprintf(cid, sizeof(cid), "filler%d", i);
		add_ok(s, pool, addr, cid, "net1", true);
	}
	commit_ok(s);
	nvipam_store_close(s);
}

/*
 * A pool that is the first of two-pool ADDs gets its snapshot too (once the ADD stands):
 * without one, each ADD would read its whole log.
 */
static void test_two_pools_snapshot(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *snap_a = path_in("store.d/a.snap");
	const char *keys[] = { "a", "b", NULL };
	struct nvipam_store *s;

	(void)state;
	for (int i = 0; i < 100; i++) {
		char addr4[32], addr6[32], cid[32];

		snprintf(addr4, sizeof(addr4), "10.0.0.%d", i + 1);
		snprintf(addr6, sizeof(addr6), "fd00::%x", i + 1);
		snprintf(cid, sizeof(cid), "c%d", i);
		open_pools_ok(path, keys, &s);
		add_ok(s, "a", addr4, cid, "net1", true);
		add_ok(s, "b", addr6, cid, "net1", true);
		commit_ok(s);
		nvipam_store_close(s);
	}
	assert_true(exists(snap_a));
	open_pools_ok(path, keys, &s);
	for (int i = 0; i < 100; i++) {
		char cid[32];

		snprintf(cid, sizeof(cid), "c%d", i);
		assert_non_null(nvipam_store_find(s, "a", cid, "net1"));
		assert_non_null(nvipam_store_find(s, "b", cid, "net1"));
	}
	nvipam_store_close(s);
}

static void test_two_pools_all_or_nothing(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *log_a = path_in("store.d/a.log");
	const char *keys[] = { "a", "b", NULL };
	struct rlimit old, small;
	struct cni_err err = { 0 };
	struct nvipam_store *s;
	char *text, *c_line;
	int r;

	(void)state;
	grow_pool(path, "b", 40);
	/* The ADD: pool a's line pending, pool b's holds the transaction, then a's confirmed. */
	open_pools_ok(path, keys, &s);
	add_ok(s, "a", "10.0.0.1", "c1", "net1", true);
	add_ok(s, "b", "10.0.9.1", "c1", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	text = read_all(log_a, NULL);
	assert_non_null(strstr(text, "\nA\trp\t"));
	assert_non_null(strstr(text, "\tb\t10.0.0.1\tc1\t"));
	c_line = strstr(text, "\nC\t");
	assert_non_null(c_line);
	/* The confirmation lost (killed before it was written): the partner still says yes. */
	write_all(log_a, text, (size_t)(c_line - text) + 1);
	free(text);
	open_pools_ok(path, keys, &s);
	assert_non_null(nvipam_store_find(s, "a", "c1", "net1"));
	assert_non_null(nvipam_store_find(s, "b", "c1", "net1"));
	nvipam_store_close(s);

	/* Pool b cannot be written (its log is past the file size limit): the ADD fails... */
	open_pools_ok(path, keys, &s);
	add_ok(s, "a", "10.0.0.2", "c2", "net1", true);
	add_ok(s, "b", "10.0.9.2", "c2", "net1", true);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = 2048;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	r = nvipam_store_commit(s, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_true(r < 0);
	assert_non_null(strstr(err.msg, "store.d/b.log"));
	nvipam_store_close(s);
	/* ...pool a got its pending line, which counts for nothing: the old state. */
	text = read_all(log_a, NULL);
	assert_non_null(strstr(text, "\t10.0.0.2\tc2\t"));
	free(text);
	open_ok(path, &s);
	assert_null(nvipam_store_find(s, "a", "c2", "net1"));
	assert_null(nvipam_store_find(s, "b", "c2", "net1"));
	assert_non_null(nvipam_store_find(s, "a", "c1", "net1"));
	/* The verdict is written with the next commit: a line that settles it for good. */
	add_ok(s, "a", "10.0.0.3", "c3", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	text = read_all(log_a, NULL);
	assert_non_null(strstr(text, "\nX\t"));
	free(text);
	/* Its address is free again. */
	open_ok(path, &s);
	add_ok(s, "a", "10.0.0.2", "c4", "net1", true);
	nvipam_store_close(s);
}

/* An ADD's commit: written, the locks let go, synced, closed. */
static void test_commit_close(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *log_a = path_in("store.d/a.log");
	_cleanup_free_ char *text = NULL;
	const char *one[] = { "a", NULL }, *two[] = { "a", "b", NULL };
	struct cni_err err = { 0 };
	struct nvipam_store *s, *t;

	(void)state;
	open_pools_ok(path, one, &s);
	add_ok(s, "a", "10.0.0.1", "c1", "net1", true);
	assert_int_equal(nvipam_store_commit_close(s, &err), 0);
	/* Nothing is held: the whole store opens at once. */
	assert_int_equal(nvipam_store_open(path, false, 0, &t, &err), 0);
	assert_non_null(nvipam_store_find(t, "a", "c1", "net1"));
	nvipam_store_close(t);
	/* Two pools: each synced before the next, the first one's line confirmed. */
	open_pools_ok(path, two, &s);
	add_ok(s, "a", "10.0.0.2", "c2", "net1", true);
	add_ok(s, "b", "10.0.1.2", "c2", "net1", true);
	assert_int_equal(nvipam_store_commit_close(s, &err), 0);
	text = read_all(log_a, NULL);
	assert_non_null(strstr(text, "\nA\trp\t"));
	assert_non_null(strstr(text, "\nC\t"));
	open_ok(path, &t);
	assert_non_null(nvipam_store_find(t, "a", "c2", "net1"));
	assert_non_null(nvipam_store_find(t, "b", "c2", "net1"));
	nvipam_store_close(t);
	/* Nothing to write: closed all the same. */
	open_pools_ok(path, one, &s);
	assert_int_equal(nvipam_store_commit_close(s, &err), 0);
	/* Nothing is held then either. */
	assert_int_equal(nvipam_store_open(path, false, 0, &t, &err), 0);
	nvipam_store_close(t);
}

/* ---- compaction and snapshots ---- */

static size_t line_count(const char *path)
{
	char **v;
	size_t n;

	v = lines_of(path, &n);
	lines_free(v, n);
	return n;
}

static void test_compaction(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *log = path_in("store.d/p.log");
	const char *keys[] = { "p", NULL };
	char **before_v, **after_v;
	struct nvipam_store *s;
	size_t before, after;

	(void)state;
	open_ok(path, &s);
	add_ok(s, "p", "10.0.0.1", "keep", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	before_v = lines_of(log, &before);
	/* ADD and DEL of one container, over and over, each in its own session. */
	for (int i = 0; i < 300; i++) {
		char addr[32];

		snprintf(addr, sizeof(addr), "10.0.%d.%d", 1 + i / 250, i % 250 + 1);
		open_pools_ok(path, keys, &s);
		add_ok(s, "p", addr, "churn", "net1", true);
		commit_ok(s);
		assert_int_equal(nvipam_store_remove(s, "p", "churn", "net1"), 1);
		commit_ok(s);
		nvipam_store_close(s);
	}
	/* Dead lines beyond live ones + 512 made it compact: far fewer lines than 2 + 600. */
	assert_true(line_count(log) < 200);
	after_v = lines_of(log, &after);
	/* A new log, a new id: a snapshot of the old one no longer counts. */
	assert_int_equal(strncmp(before_v[0], after_v[0], 21), 0);
	assert_true(strcmp(before_v[0], after_v[0]) != 0);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 1);
	assert_non_null(nvipam_store_find(s, "p", "keep", "net1"));
	assert_ip(&pool_at(s, 0)->last_reserved, "10.0.2.50");
	nvipam_store_close(s);
	assert_int_equal(count_prefixed(helper_dir, "store.tmp"), 0);
	lines_free(before_v, before);
	lines_free(after_v, after);
}

static void test_many_allocations(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *snap = path_in("store.d/cidrpool%2Fbig-pool.snap");
	const char *keys[] = { "cidrpool/big-pool", NULL };
	struct nvipam_store *s;
	struct ip_addr *ips;
	struct ip_addr last;
	bool has_last;
	size_t n;

	(void)state;
	open_ok(path, &s);
	for (int i = 0; i < 10000; i++) {
		char cid[65], addr[32], pod[64], uid[40];
		struct nvipam_alloc a;

		snprintf(cid, sizeof(cid), "%064x", (unsigned)i * 2654435761u);
		snprintf(addr, sizeof(addr), "10.%d.%d.%d", i >> 16, (i >> 8) & 255, i & 255);
		snprintf(pod, sizeof(pod), "workload-%d-7f9c8d6b5-x2x4z", i);
		snprintf(uid, sizeof(uid), "aaf0a0fc-9869-41ef-9214-%012d", i);
		a = mk("cidrpool/big-pool", addr, cid, "net1");
		a.pod_name = pod;
		a.pod_uid = uid;
		a.pod_namespace = "tenant-namespace";
		a.device_id = "0000:3b:00.2";
		a.created = T_REF + i;
		assert_int_equal(nvipam_store_add(s, &a, true), 0);
	}
	commit_ok(s);
	nvipam_store_close(s);

	/* Some pools open: the snapshot of the next commit is read, not the log. */
	open_pools_ok(path, keys, &s);
	add_ok(s, "cidrpool/big-pool", "10.1.0.0", "one-more", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	assert_true(exists(snap));
	open_pools_ok(path, keys, &s);
	assert_int_equal(usage_of(s, "cidrpool/big-pool", &ips, &n, &has_last, &last), 0);
	assert_int_equal(n, 10001);
	for (size_t i = 1; i < n; i++)
		assert_true(memcmp(ips[i - 1].bytes, ips[i].bytes, 4) < 0);
	free(ips);
	assert_ip(&last, "10.1.0.0");
	{
		char cid[65];
		const struct nvipam_alloc *a;

		snprintf(cid, sizeof(cid), "%064x", 9999u * 2654435761u);
		a = nvipam_store_find(s, "cidrpool/big-pool", cid, "net1");
		assert_non_null(a);
		assert_string_equal(a->pod_name, "workload-9999-7f9c8d6b5-x2x4z");
		assert_int_equal(a->created, T_REF + 9999);
		assert_int_equal(nvipam_store_remove(s, NULL, cid, "net1"), 1);
	}
	commit_ok(s);
	nvipam_store_close(s);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 10000);
	nvipam_store_close(s);
}

/* ---- locking ---- */

static void test_lock_contention(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	int ready[2], go[2];
	struct nvipam_store *s = NULL;
	struct cni_err err = { 0 };
	struct timespec t0;
	double waited;
	char c;
	pid_t pid;
	int r;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid = hold_in_child(path, NULL, ready[1], go[0], go[1], 0);
	assert_int_equal(read(ready[0], &c, 1), 1);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = nvipam_store_open(path, false, 100, &s, &err);
	waited = ms_since(&t0);
	assert_int_equal(r, -EAGAIN);
	assert_int_equal(err.code, CNI_ERR_TRY_AGAIN);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "is locked by another process (waited 100 ms)"));
	assert_null(s);
	/* It did wait, polling, for the whole timeout. */
	assert_true(waited >= 100.0);

	assert_int_equal(write(go[1], "x", 1), 1);
	wait_child(pid);
	open_ok(path, &s);
	nvipam_store_close(s);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

/*
 * A lock released while it is waited for is taken: the open returns after the holder's
 * close, with the lock. The wait's end is an order (after the close, whatever the load);
 * the open's long timeout is a hang guard only, the child holds the lock 150 ms.
 */
static void test_lock_released_while_waiting(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	int ready[2];
	struct nvipam_store *s;
	struct cni_err err = { 0 };
	int64_t before_close, opened;
	char c;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	pid = hold_in_child(path, NULL, ready[1], -1, -1, 150);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(nvipam_store_open(path, false, 60000, &s, &err), 0);
	opened = clock_mono_ns();
	assert_int_equal(read(ready[0], &before_close, sizeof(before_close)), sizeof(before_close));
	assert_true(opened > before_close);
	nvipam_store_close(s);
	wait_child(pid);
	close(ready[0]);
	close(ready[1]);
}

/* ---- commit failures ---- */

static void test_commit_write_fails(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *log = path_in("store.d/pool1.log");
	_cleanup_free_ char *before = NULL, *after = NULL;
	struct rlimit old, small;
	struct nvipam_store *s;
	size_t len, after_len;
	struct cni_err err = { 0 };
	int r;

	(void)state;
	open_ok(path, &s);
	add_ok(s, "pool1", "10.0.0.1", "c1", "net1", true);
	commit_ok(s);
	add_ok(s, "pool1", "10.0.0.2", "c2", "net1", true);
	before = read_all(log, &len);
	/* The file size limit applies to root too: the line's write fails with EFBIG. */
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = len + 10;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	r = nvipam_store_commit(s, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_true(r < 0);
	assert_int_equal(err.code, CNI_ERR_IO);
	assert_non_null(strstr(err.msg, log));
	assert_non_null(strstr(err.msg, "File too large"));
	assert_true(nvipam_store_dirty(s));

	/* Cut back to where it was: not a byte of the line is left. */
	after = read_all(log, &after_len);
	assert_int_equal(after_len, len);
	assert_memory_equal(after, before, len);

	/* Nothing was lost: it can still be written. */
	commit_ok(s);
	nvipam_store_close(s);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 2);
	nvipam_store_close(s);
}

static void test_commit_rename_fails(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *inside = path_in("store/keep");
	struct nvipam_store *s;
	struct cni_err err = { 0 };

	(void)state;
	open_ok(path, &s);
	add_ok(s, "pool1", "10.0.0.1", "c1", "net1", true);
	/* Something that is not a file took the store's name: the store file cannot be written. */
	assert_int_equal(mkdir(path, 0700), 0);
	write_all(inside, "k", 1);
	assert_true(nvipam_store_commit(s, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_IO);
	assert_non_null(strstr(err.msg, "rename"));
	assert_true(nvipam_store_dirty(s));
	assert_int_equal(count_prefixed(helper_dir, "store.tmp"), 0);
	assert_true(exists(inside));
	nvipam_store_close(s);
}

static void test_commit_directory_gone(void **state)
{
	_cleanup_free_ char *sub = path_in("sub");
	_cleanup_free_ char *moved = path_in("moved");
	_cleanup_free_ char *path = path_in("sub/store");
	_cleanup_free_ char *old_log = path_in("moved/store.d/pool1.log");
	_cleanup_free_ char *after = NULL;
	struct nvipam_store *s;
	struct cni_err err = { 0 };
	size_t len;

	(void)state;
	open_ok(path, &s);
	add_ok(s, "pool1", "10.0.0.1", "c1", "net1", true);
	commit_ok(s);
	add_ok(s, "pool1", "10.0.0.2", "c2", "net1", true);
	/*
	 * The directory was renamed and its name taken by a file: the commit goes
	 * where the store was opened and locked, never through the name again.
	 */
	assert_int_equal(rename(sub, moved), 0);
	write_all(sub, "x", 1);
	commit_ok(s);
	after = read_all(old_log, NULL);
	assert_non_null(strstr(after, "10.0.0.2"));
	free(after);
	after = read_all(sub, &len);
	assert_int_equal(len, 1);
	/* The pool directory removed from under the open store: nothing is written elsewhere. */
	add_ok(s, "pool1", "10.0.0.3", "c3", "net1", true);
	{
		_cleanup_free_ char *cmd = NULL;

		assert_true(asprintf(&cmd, "rm -rf '%s/store.d'", moved) > 0);
		assert_int_equal(system(cmd), 0);
	}
	(void)nvipam_store_commit(s, &err);
	nvipam_store_close(s);
	free(after);
	after = read_all(sub, &len);
	assert_int_equal(len, 1);
	assert_int_equal(count_prefixed(helper_dir, "sub"), 1);
	assert_int_equal(count_prefixed(moved, "store.d"), 0);
}

/* ---- what root must not follow ---- */

/* Opening fails (@whole_too: the whole store's too, else only some pools'). */
static void expect_refused(const char *path, bool whole_too, int code, const char *msg_part)
{
	struct nvipam_store *s;
	struct cni_err err = { 0 };
	const char *key = "pool1";

	if (whole_too) {
		assert_true(nvipam_store_open(path, true, 100, &s, &err) < 0);
		if (err.code != code || !strstr(err.msg, msg_part))
			fail_msg("code %d \"%s\", expected %d with \"%s\"", err.code, err.msg, code,
				 msg_part);
		err = (struct cni_err){ 0 };
	}
	assert_true(nvipam_store_open_pools(path, true, 100, &key, 1, &s, &err) < 0);
	if (err.code != code || !strstr(err.msg, msg_part))
		fail_msg("pools: code %d \"%s\", expected %d with \"%s\"", err.code, err.msg, code,
			 msg_part);
}

static void expect_confined_open_fails(const char *path, int code, const char *msg_part)
{
	expect_refused(path, true, code, msg_part);
}

static void test_directory_must_be_private(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *lock = path_in("store.lock");
	_cleanup_free_ char *pools = path_in("store.d");
	struct nvipam_store *s;

	(void)state;
	/* Anyone who may write there would decide what root reads, writes and removes. */
	assert_int_equal(chmod(helper_dir, 0777), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "is not safe");
	assert_int_equal(chmod(helper_dir, 0770), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "mode 0770");
	assert_int_equal(chmod(helper_dir, 01733), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "writable by no one else");
	/* Refused before the lock file is made. */
	assert_false(exists(lock));
	/* The operator's tool refuses it as well. */
	{
		struct cni_err err = { 0 };

		assert_true(nvipam_store_open_inspect(path, 100, &s, &err) < 0);
		assert_int_equal(err.code, CNI_ERR_IO);
	}
	assert_int_equal(chmod(helper_dir, 0755), 0);
	/* The pool directory too. */
	assert_int_equal(mkdir(pools, 0777), 0);
	assert_int_equal(chmod(pools, 0777), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "store.d is not safe");
	assert_int_equal(chmod(pools, 0700), 0);
	open_ok(path, &s);
	nvipam_store_close(s);
	assert_true(exists(lock));
}

static void test_planted_links_not_followed(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *lock = path_in("store.lock");
	_cleanup_free_ char *victim = path_in("victim");
	_cleanup_free_ char *real = path_in("real");
	_cleanup_free_ char *link = path_in("link");
	_cleanup_free_ char *via_link = path_in("link/store");
	_cleanup_free_ char *pools = path_in("store.d");
	_cleanup_free_ char *pool_lock = path_in("store.d/pool1.lock");
	_cleanup_free_ char *pool_log = path_in("store.d/pool1.log");
	_cleanup_free_ char *pool_snap = path_in("store.d/pool1.snap");
	struct nvipam_store *s;

	(void)state;
	/* The lock: root would create (and flock) a file wherever the link points. */
	assert_int_equal(symlink(victim, lock), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "symbolic link");
	assert_false(exists(victim));
	assert_int_equal(unlink(lock), 0);
	/* The store file itself: read through a link, or replaced through one by the rename. */
	write_all(victim, "{\"version\":2}\n", 14);
	assert_int_equal(symlink(victim, path), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "not a regular file");
	assert_int_equal(unlink(path), 0);
	/* A FIFO is refused without waiting for a writer. */
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "not a regular file");
	assert_int_equal(unlink(path), 0);
	/* The pool directory, its locks, logs and snapshots. */
	assert_int_equal(mkdir(real, 0700), 0);
	assert_int_equal(symlink(real, pools), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "store.d: it is a symbolic link");
	assert_int_equal(unlink(pools), 0);
	assert_int_equal(mkdir(pools, 0700), 0);
	/* Pool locks are taken with some pools open (the whole store has the node's). */
	assert_int_equal(symlink(victim, pool_lock), 0);
	expect_refused(path, false, CNI_ERR_IO, "pool1.lock: it is a symbolic link");
	assert_int_equal(unlink(pool_lock), 0);
	assert_int_equal(symlink(victim, pool_log), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "pool1.log: not a regular file");
	assert_int_equal(unlink(pool_log), 0);
	assert_int_equal(mkfifo(pool_log, 0600), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "pool1.log: not a regular file");
	assert_int_equal(unlink(pool_log), 0);
	/* A snapshot is a cache: one that is a link (or a FIFO) is not read, the log is. */
	{
		const char *keys[] = { "pool1", NULL };

		open_pools_ok(path, keys, &s);
		add_ok(s, "pool1", "10.0.0.1", "c1", "net1", true);
		commit_ok(s);
		nvipam_store_close(s);
		assert_int_equal(symlink(victim, pool_snap), 0);
		open_pools_ok(path, keys, &s);
		assert_non_null(nvipam_store_find(s, "pool1", "c1", "net1"));
		nvipam_store_close(s);
		assert_int_equal(unlink(pool_snap), 0);
		assert_int_equal(mkfifo(pool_snap, 0600), 0);
		open_pools_ok(path, keys, &s);
		assert_non_null(nvipam_store_find(s, "pool1", "c1", "net1"));
		nvipam_store_close(s);
	}
	/* A link on the way below the node's state directory. */
	assert_int_equal(symlink(real, link), 0);
	expect_confined_open_fails(via_link, CNI_ERR_INVALID_CONFIG, "symbolic link");
	assert_false(exists(via_link));
	/* The operator names the path as it wants it followed. */
	{
		struct cni_err err = { 0 };

		assert_int_equal(nvipam_store_open_inspect(via_link, 100, &s, &err), 0);
		nvipam_store_close(s);
	}
}

static void test_outside_state_directories(void **state)
{
	(void)state;
	/* The node settings allow /tmp only. */
	expect_confined_open_fails("/etc/nvipam-store-test/store", CNI_ERR_INVALID_CONFIG,
				   "is outside the directories");
	assert_false(exists("/etc/nvipam-store-test"));
	expect_confined_open_fails("/tmp/../etc/store", CNI_ERR_INVALID_CONFIG, "\"..\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_missing_file_and_dirs, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_empty_file, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_close_none, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_all_fields, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_exact_format, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_created_times, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_add_too_long, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_add_refuses_duplicate_ip, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_remove, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_drop_pool, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_find_and_usage, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_open_pools, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_pools_lock_independently, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_whole_store_excludes_pools, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_release, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_cooling_in_address_order, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_two_pools_all_or_nothing, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_two_pools_snapshot, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_commit_close, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_compaction, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_many_allocations, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_lock_contention, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_lock_released_while_waiting, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_commit_write_fails, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_commit_rename_fails, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_commit_directory_gone, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_directory_must_be_private, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_planted_links_not_followed, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_outside_state_directories, helper_setup, helper_teardown),
	};

	return cmocka_run_group_tests(tests, helper_group_setup, helper_group_teardown);
}
