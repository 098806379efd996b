/*
 * Unit tests: the nv-ipam store's files: pool logs (torn, damaged, pending two-pool ADDs),
 * snapshots (used only when they match their log), the store file, and the reference node
 * daemon's store migrated on first use
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/migrate.h"
#include "ipam/nv-ipam/store/store.h"
#include "tests/unit/store-helpers.h"

#define V2 "{\"version\":2,\"pools\":\"store.d\"}\n"
#define HEADER(key) "nv-ipam-pool-log\t1\t" key "\t00000000000000aa"

/* A store of version 2 with one pool log made of @lines (each with its checksum added). */
static char *write_log(const char *pool_file, const char *const *lines, size_t n)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *dir = path_in("store.d");
	char *log = NULL;
	struct text {
		char *s;
		size_t len;
	} all = { 0 };
	FILE *f = open_memstream(&all.s, &all.len);

	assert_non_null(f);
	write_all(path, V2, strlen(V2));
	(void)mkdir(dir, 0700);
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *l = log_line(lines[i]);

		fputs(l, f);
	}
	assert_int_equal(fclose(f), 0);
	assert_true(asprintf(&log, "%s/%s", dir, pool_file) > 0);
	write_all(log, all.s, all.len);
	free(all.s);
	return log;
}

static void expect_pools_open_fails(const char *path, const char *key, int code, const char *part)
{
	struct nvipam_store *s = NULL;
	struct cni_err err = { 0 };

	if (nvipam_store_open_pools(path, false, 0, &key, 1, &s, &err) >= 0)
		fail_msg("pool %s opened, expected \"%s\"", key, part);
	if (err.code != code || !strstr(err.msg, part))
		fail_msg("want code %d with \"%s\", got %d \"%s\"", code, part, err.code, err.msg);
	assert_null(s);
}

/* ---- the store's own name ---- */

/* A store named as another store's file, or inside its pool directory, is no store: it would
 * replace a lock two processes then both hold, or plant what the other cannot read. */
static void test_store_path_of_another_store(void **state)
{
	static const char *const names[] = { "store.lock", "store.gc", "store.d", "x.log", "x.snap",
					     "store.owner", "store.tmp.12", "store.d/p.lock",
					     "store.d/p.log/x" };
	_cleanup_free_ char *store = path_in("store");
	_cleanup_free_ char *pool_dir = path_in("store.d");
	_cleanup_free_ char *lock = path_in("store.lock");
	const char *key = "p";
	int top, pools;

	(void)state;
	write_all(store, V2, strlen(V2));
	assert_int_equal(mkdir(pool_dir, 0700), 0);
	top = count_prefixed(helper_dir, "");
	pools = count_prefixed(pool_dir, "");
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		_cleanup_free_ char *path = path_in(names[i]);

		expect_pools_open_fails(path, key, CNI_ERR_INVALID_CONFIG, "store file");
	}
	/* Refused on the name: nothing was created, in the directory or the other's pool dir. */
	assert_int_equal(count_prefixed(helper_dir, ""), top);
	assert_int_equal(count_prefixed(pool_dir, ""), pools);
	/* Beside a lock only (a store not written yet) the directory is still the store's. */
	assert_int_equal(unlink(store), 0);
	write_all(lock, "", 0);
	{
		_cleanup_free_ char *path = path_in("store.d/other");

		expect_pools_open_fails(path, key, CNI_ERR_INVALID_CONFIG, "pool directory");
	}
}

/* ---- pool logs ---- */

static void test_torn_tail(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *log = path_in("store.d/pool1.log");
	const char *keys[] = { "pool1", NULL };
	const char torn[] = "A\tr\t\t\t10.0.0.9\tkilled\tnet1\tn\t\t\t\t\t2024-06";
	_cleanup_free_ char *text = NULL;
	struct nvipam_store *s;
	size_t len;
	FILE *f;

	(void)state;
	open_ok(path, &s);
	add_ok(s, "pool1", "10.0.0.1", "c1", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	/* A writer killed in the middle of its line left part of it, no newline. */
	f = fopen(log, "a");
	assert_non_null(f);
	fputs(torn, f);
	fclose(f);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 1);
	assert_ip(&pool_at(s, 0)->last_reserved, "10.0.0.1");
	nvipam_store_close(s);
	/* The next writer cuts it before its own line: what follows a line is a line. */
	open_pools_ok(path, keys, &s);
	assert_null(nvipam_store_find(s, "pool1", "killed", "net1"));
	add_ok(s, "pool1", "10.0.0.2", "c2", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	text = read_all(log, &len);
	assert_null(strstr(text, "killed"));
	assert_int_equal(text[len - 1], '\n');
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 2);
	nvipam_store_close(s);
}

/*
 * A power loss before the sync can leave a line unwritten (zeros) while a later unsynced
 * line landed (the file system wrote their blocks in another order): from the zeros on is
 * a torn tail, not damage, and the next writer cuts it.
 */
static void test_power_loss_hole(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *log = path_in("store.d/pool1.log");
	_cleanup_free_ char *later = log_line("A\tr\t\t\t10.0.0.7\tlanded\tnet1\tn\t\t\t\t\t2024-06-14T10:00:00Z");
	const char *keys[] = { "pool1", NULL };
	struct nvipam_store *s;
	char zeros[40] = { 0 };
	char *text;
	size_t len;
	FILE *f;

	(void)state;
	for (int whole_line = 0; whole_line < 2; whole_line++) {
		(void)unlink(log);
		open_ok(path, &s);
		add_ok(s, "pool1", "10.0.0.1", "c1", "net1", true);
		commit_ok(s);
		nvipam_store_close(s);
		f = fopen(log, "a");
		assert_non_null(f);
		/* Zeros then a whole later line; or a line's start, zeros, and its newline. */
		if (whole_line) {
			fwrite(zeros, 1, sizeof(zeros), f);
			fputs(later, f);
		} else {
			fputs("D\tc1\t", f);
			fwrite(zeros, 1, sizeof(zeros), f);
			fputs("\n", f);
			fputs(later, f);
		}
		fclose(f);
		open_ok(path, &s);
		assert_int_equal(nvipam_store_count(s), 1);
		nvipam_store_close(s);
		open_pools_ok(path, keys, &s);
		assert_null(nvipam_store_find(s, "pool1", "landed", "net1"));
		assert_non_null(nvipam_store_find(s, "pool1", "c1", "net1"));
		add_ok(s, "pool1", "10.0.0.2", "c2", "net1", true);
		commit_ok(s);
		nvipam_store_close(s);
		text = read_all(log, &len);
		assert_int_equal(strlen(text), len);
		assert_null(strstr(text, "landed"));
		free(text);
		open_ok(path, &s);
		assert_int_equal(nvipam_store_count(s), 2);
		nvipam_store_close(s);
	}
	/* A log of zeros only: its header never landed, nothing was ever in it. */
	write_all(log, zeros, sizeof(zeros));
	open_pools_ok(path, keys, &s);
	assert_int_equal(nvipam_store_count(s), 0);
	add_ok(s, "pool1", "10.0.0.3", "c3", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 1);
	nvipam_store_close(s);
}

static void test_torn_header(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *dir = path_in("store.d");
	_cleanup_free_ char *log = path_in("store.d/pool1.log");
	const char *keys[] = { "pool1", NULL };
	struct nvipam_store *s;

	(void)state;
	/* Killed while creating the log: a header without its newline, nothing else. */
	write_all(path, V2, strlen(V2));
	assert_int_equal(mkdir(dir, 0700), 0);
	write_all(log, "nv-ipam-pool-log\t1\tpo", 21);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_pool_count(s), 0);
	nvipam_store_close(s);
	open_pools_ok(path, keys, &s);
	assert_int_equal(nvipam_store_count(s), 0);
	add_ok(s, "pool1", "10.0.0.1", "c1", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 1);
	nvipam_store_close(s);
}

static void test_damaged_logs_untouched(void **state)
{
	static const struct {
		const char *line; /* the line after the header, its checksum added */
		const char *why;
	} cases[] = {
		{ "Q\tx", "line 2: unknown kind of line" },
		{ "D\tc1", "line 2: wrong number of fields" },
		{ "A\tz\t\t\t10.0.0.1\tc\te\tn\t\t\t\t\t2024-06-14T10:00:00Z", "line 2: invalid flags" },
		{ "A\tr\t\t\t10.0.0.300\tc\te\tn\t\t\t\t\t2024-06-14T10:00:00Z", "line 2: invalid IP address" },
		{ "A\tr\t\t\t10.0.0.1\tc\\q\te\tn\t\t\t\t\t2024-06-14T10:00:00Z",
		  "line 2: invalid escape or character in a field" },
		{ "A\tr\t\t\t10.0.0.1\tc\x01\te\tn\t\t\t\t\t2024-06-14T10:00:00Z",
		  "line 2: invalid escape or character in a field" },
		{ "A\tp\t00000000000000ab\t\t10.0.0.1\tc\te\tn\t\t\t\t\t2024-06-14T10:00:00Z",
		  "line 2: invalid transaction" },
		{ "A\tr\t12\t\t10.0.0.1\tc\te\tn\t\t\t\t\t2024-06-14T10:00:00Z", "line 2: invalid transaction" },
		{ "A\t\t\tq\t10.0.0.1\tc\te\tn\t\t\t\t\t2024-06-14T10:00:00Z", "line 2: invalid transaction" },
		{ "A\tr\t\t\t10.0.0.1\tc\te\tn\t\t\t\t\t2024-02-30T10:00:00Z", "line 2: invalid creation time" },
		{ "C\t0000000000000000", "line 2: invalid transaction" },
		{ "L\tnope", "line 2: invalid IP address" },
	};
	_cleanup_free_ char *path = path_in("store");

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *lines[] = { HEADER("pool1"), cases[i].line };
		_cleanup_free_ char *log = write_log("pool1.log", lines, 2);
		_cleanup_free_ char *before = NULL, *after = NULL;
		size_t len, after_len;

		print_message("# case %zu: %s\n", i, cases[i].why);
		before = read_all(log, &len);
		expect_open_fails(path, CNI_ERR_IO, "is corrupt: ");
		expect_open_fails(path, CNI_ERR_IO, cases[i].why);
		expect_pools_open_fails(path, "pool1", CNI_ERR_IO, cases[i].why);
		after = read_all(log, &after_len);
		assert_int_equal(after_len, len);
		assert_memory_equal(after, before, len);
	}
}

static void test_damaged_headers_and_checksums(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	char *log, *text;
	size_t len;

	(void)state;
	{
		const char *lines[] = { HEADER("other") };

		log = write_log("pool1.log", lines, 1);
		expect_open_fails(path, CNI_ERR_IO, "pool1.log is corrupt: its header names another pool");
		expect_pools_open_fails(path, "pool1", CNI_ERR_IO, "its header names another pool");
		free(log);
	}
	{
		const char *lines[] = { "nv-ipam-pool-log\t2\tpool1\t00000000000000aa" };

		log = write_log("pool1.log", lines, 1);
		expect_open_fails(path, CNI_ERR_IO, "pool1.log has an unsupported pool log version 2");
		free(log);
	}
	{
		const char *lines[] = { "hello\t1\tpool1\t00000000000000aa" };

		log = write_log("pool1.log", lines, 1);
		expect_open_fails(path, CNI_ERR_IO, "line 1: not an nv-ipam pool log");
		free(log);
	}
	{
		const char *lines[] = { HEADER("pool1"), "D\tc1\tnet1", "D\tc2\tnet1" };

		/* One byte of a line changed: its checksum says so. */
		log = write_log("pool1.log", lines, 3);
		text = read_all(log, &len);
		*strstr(text, "c2") = 'x';
		write_all(log, text, len);
		free(text);
		expect_open_fails(path, CNI_ERR_IO, "line 3: checksum mismatch");
		/* A line without a checksum at all. */
		write_all(log, "D\tc1\tnet1\n", 10);
		expect_open_fails(path, CNI_ERR_IO, "line 1: no checksum");
		free(log);
	}
}

static void test_duplicate_address(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	const char *lines[] = {
		HEADER("pool1"),
		"A\tr\t\t\t10.0.0.1\tc1\tnet1\tn\t\t\t\t\t2024-06-14T10:00:00Z",
		"A\tr\t\t\t10.0.0.1\tc2\tnet1\tn\t\t\t\t\t2024-06-14T10:00:00Z",
	};
	_cleanup_free_ char *log = write_log("pool1.log", lines, 3);
	struct nvipam_store *s;
	struct cni_err err = { 0 };

	(void)state;
	assert_non_null(log);
	expect_open_fails(path, CNI_ERR_IO, "IP 10.0.0.1 is held twice in pool \"pool1\"");
	expect_pools_open_fails(path, "pool1", CNI_ERR_IO, "held twice");
	/* The tool loads it, to report it and release one holder. */
	assert_int_equal(nvipam_store_open_inspect(path, 100, &s, &err), 0);
	assert_int_equal(nvipam_store_count(s), 2);
	assert_int_equal(nvipam_store_remove(s, "pool1", "c2", "net1"), 1);
	commit_ok(s);
	nvipam_store_close(s);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 1);
	nvipam_store_close(s);
}

/* D releases every address of the attachment; L sets the last pick; C and X settle pending lines. */
static void test_replayed_lines(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	const char *lines[] = {
		HEADER("a"),
		"A\tr\t\t\t10.0.0.1\tc1\tnet1\tn\t\t\t\t\t2024-06-14T10:00:00Z",
		"A\t\t\t\t10.0.0.9\tc1\tnet1\tn\t\t\t\t\t2024-06-14T10:00:00Z",
		"A\tr\t\t\t10.0.0.2\tc2\tnet1\tn\t\t\t\t\t2024-06-14T10:00:00Z",
		"D\tc1\tnet1",
		"L\t10.0.0.7",
		"A\tp\t0000000000000011\tz\t10.0.0.3\tc3\tnet1\tn\t\t\t\t\t2024-06-14T10:00:00Z",
		"A\tp\t0000000000000012\tz\t10.0.0.4\tc4\tnet1\tn\t\t\t\t\t2024-06-14T10:00:00Z",
		"A\tp\t0000000000000013\tz\t10.0.0.5\tc5\tnet1\tn\t\t\t\t\t2024-06-14T10:00:00Z",
		"C\t0000000000000011",
		"X\t0000000000000012",
	};
	_cleanup_free_ char *log = write_log("a.log", lines, sizeof(lines) / sizeof(lines[0]));
	struct nvipam_store *s;

	(void)state;
	assert_non_null(log);
	/* Pool z does not exist: the pending line of transaction 13 did not happen. */
	open_ok(path, &s);
	assert_null(nvipam_store_find(s, "a", "c1", "net1"));
	assert_non_null(nvipam_store_find(s, "a", "c2", "net1"));
	assert_non_null(nvipam_store_find(s, "a", "c3", "net1"));
	assert_null(nvipam_store_find(s, "a", "c4", "net1"));
	assert_null(nvipam_store_find(s, "a", "c5", "net1"));
	assert_int_equal(nvipam_store_count(s), 2);
	assert_ip(&pool_at(s, 0)->last_reserved, "10.0.0.7");
	nvipam_store_close(s);
}

/* ---- snapshots ---- */

static void fill(const char *path, const char *pool, int from, int n)
{
	const char *keys[] = { pool, NULL };
	struct nvipam_store *s;

	open_pools_ok(path, keys, &s);
	for (int i = from; i < from + n; i++) {
		char addr[32], cid[32];

		snprintf(addr, sizeof(addr), "10.2.%d.%d", i / 250, i % 250 + 1);
		snprintf(cid, sizeof(cid), "c%d", i);
		add_ok(s, pool, addr, cid, "net1", true);
	}
	/* And some released, so that the log has D lines after the snapshot too. */
	for (int i = from; i < from + n; i += 7) {
		char cid[32];

		snprintf(cid, sizeof(cid), "c%d", i);
		assert_int_equal(nvipam_store_remove(s, pool, cid, "net1"), 1);
	}
	commit_ok(s);
	nvipam_store_close(s);
}

/* The pool as nv-ipam sees it with some pools open, checked against what fill() made. */
static void expect_filled(const char *path, const char *pool, int n)
{
	const char *keys[] = { pool, NULL };
	struct nvipam_store *s;
	struct ip_addr *ips;
	struct ip_addr last;
	bool has_last;
	size_t count;

	open_pools_ok(path, keys, &s);
	for (int i = 0; i < n; i++) {
		char cid[32];

		snprintf(cid, sizeof(cid), "c%d", i);
		if ((i % 150) % 7 == 0)
			assert_null(nvipam_store_find(s, pool, cid, "net1"));
		else
			assert_non_null(nvipam_store_find(s, pool, cid, "net1"));
	}
	assert_int_equal(usage_of(s, pool, &ips, &count, &has_last, &last), 0);
	free(ips);
	assert_int_equal(count, (size_t)n - (size_t)(n / 150) * 22);
	nvipam_store_close(s);
}

static void test_snapshots_must_match(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *snap = path_in("store.d/p.snap");
	_cleanup_free_ char *other = path_in("store.d/q.snap");
	_cleanup_free_ char *saved = NULL, *current = NULL, *text = NULL;
	size_t saved_len, current_len, len;

	(void)state;
	fill(path, "p", 0, 150);
	fill(path, "q", 0, 150);
	assert_true(exists(snap));
	expect_filled(path, "p", 150);
	saved = read_all(snap, &saved_len);
	fill(path, "p", 150, 150);
	expect_filled(path, "p", 300);
	current = read_all(snap, &current_len);
	/* An older snapshot of the same log: more of the log is read after it. */
	write_all(snap, saved, saved_len);
	expect_filled(path, "p", 300);
	/* Another pool's snapshot. */
	text = read_all(other, &len);
	write_all(snap, text, len);
	expect_filled(path, "p", 300);
	/* Garbage, nothing, half a snapshot. */
	write_all(snap, "not a snapshot", 14);
	expect_filled(path, "p", 300);
	write_all(snap, "", 0);
	expect_filled(path, "p", 300);
	write_all(snap, saved, saved_len / 2);
	expect_filled(path, "p", 300);
	/*
	 * Damaged records, addresses and tables: the body's checksum refuses them and the
	 * log is read, so no held address hides from the allocator.
	 */
	for (size_t i = 200; i + 8 < saved_len; i += 37)
		saved[i] ^= 0x5a;
	write_all(snap, saved, saved_len);
	expect_filled(path, "p", 300);
	/* One bit of an otherwise current snapshot is enough. */
	current[current_len / 2] ^= 0x01;
	write_all(snap, current, current_len);
	expect_filled(path, "p", 300);
}

/*
 * A snapshot damaged after the pool was opened (its blocks are checked as lookups read
 * them): the pool is read again from its log, and what the command changed before is
 * applied again, then written.
 */
static void test_snapshot_damaged_after_open(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *snap = path_in("store.d/p.snap");
	const char *keys[] = { "p", NULL };
	struct ip_addr *ips;
	struct ip_addr last;
	struct nvipam_store *s;
	struct stat st;
	bool has_last;
	size_t count;
	int fd;

	(void)state;
	fill(path, "p", 0, 300);
	assert_true(exists(snap));
	open_pools_ok(path, keys, &s);
	add_ok(s, "p", "10.2.9.9", "added", "net1", true);
	assert_int_equal(nvipam_store_remove(s, "p", "c1", "net1"), 1);
	/* In place: the mapping sees what it has not read yet. */
	fd = open(snap, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	for (off_t at = st.st_size / 4; at < st.st_size * 3 / 4; at += 512)
		assert_int_equal(pwrite(fd, "\xa5", 1, at), 1);
	close(fd);
	for (int i = 0; i < 300; i++) {
		char cid[32];

		snprintf(cid, sizeof(cid), "c%d", i);
		if (i % 7 == 0 || i == 1)
			assert_null(nvipam_store_find(s, "p", cid, "net1"));
		else
			assert_non_null(nvipam_store_find(s, "p", cid, "net1"));
	}
	assert_non_null(nvipam_store_find(s, "p", "added", "net1"));
	assert_int_equal(usage_of(s, "p", &ips, &count, &has_last, &last), 0);
	free(ips);
	assert_int_equal(count, 300 - 43 - 1 + 1);
	assert_true(has_last);
	assert_ip(&last, "10.2.9.9");
	commit_ok(s);
	nvipam_store_close(s);
	/* Written as changed: read again, the damaged snapshot or the next one aside. */
	assert_int_equal(unlink(snap), 0);
	open_pools_ok(path, keys, &s);
	assert_null(nvipam_store_find(s, "p", "c1", "net1"));
	assert_non_null(nvipam_store_find(s, "p", "added", "net1"));
	assert_non_null(nvipam_store_find(s, "p", "c2", "net1"));
	nvipam_store_close(s);
}

/* ---- the store file ---- */

/* A store file that is neither the manifest nor an older store: refused, left as it is. */
static void test_store_file_corrupt_untouched(void **state)
{
	static const struct {
		const char *doc;
		const char *why;
	} cases[] = {
		{ "{\"version\":2,\"pools\":", "unexpected end of JSON input" },
		{ "{\"version\":2,\"pools\":\"store.d\"}x", "at offset 31" },
		{ "{\"version\":2,\"x\":[1,]}", "is corrupt: " },
		{ "{\"version\":2,\"x\":\"a\xff" "b\"}", "is corrupt: " },
		{ "{\"version\":2,\"x\":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}", "is corrupt: " },
		{ "{\"version\":2.0}", "field \"version\"" },
		{ "{\"version\":\"2\"}", "field \"version\"" },
		{ " \n", "unexpected end" },
		{ "[]", "expected an object, got array" },
		{ "{\"pools\":\"store.d\"}", "field \"version\" is missing" },
		{ "{\"version\":2,\"pools\":\"store.d\"}\n\0", "NUL byte" },
		{ "{\"version\":3,\"pools\":\"store.d\"}", "has an unsupported version 3 (this plugin reads "
		  "version 2 and the nv-ipam node daemon's store)" },
		/* Our first store format, written by development builds only, is not read. */
		{ "{\"version\":1,\"pools\":{},\"allocations\":[]}", "unsupported version 1" },
		/* "version" is looked at before anything else is trusted. */
		{ "{\"allocations\":[{\"address\":\"10.0.0.1\"}],\"version\":7}", "unsupported version 7" },
	};
	_cleanup_free_ char *path = path_in("store");

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].doc) + (strstr(cases[i].why, "NUL byte") ? 1 : 0);
		_cleanup_free_ char *after = NULL;
		size_t after_len;

		write_all(path, cases[i].doc, len);
		print_message("# case %zu: %s\n", i, cases[i].why);
		expect_open_fails(path, CNI_ERR_IO, cases[i].why);
		expect_pools_open_fails(path, "p", CNI_ERR_IO, cases[i].why);
		after = read_all(path, &after_len);
		assert_int_equal(after_len, len);
		assert_memory_equal(after, cases[i].doc, len);
	}
}

/* The manifest written by hand (other spacing, member order) is read all the same. */
static void test_store_file_by_hand(void **state)
{
	static const char doc[] = "{ \"pools\": \"elsewhere\",\n  \"version\": 2 }\n";
	_cleanup_free_ char *path = path_in("store");
	const char *keys[] = { "p", NULL };
	struct nvipam_store *s;

	(void)state;
	write_all(path, doc, strlen(doc));
	open_pools_ok(path, keys, &s);
	add_ok(s, "p", "10.0.0.1", "c1", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	open_ok(path, &s);
	assert_non_null(nvipam_store_find(s, "p", "c1", "net1"));
	nvipam_store_close(s);
	_cleanup_free_ char *text = read_all(path, NULL);
	assert_string_equal(text, doc);
}

/* ---- the reference daemon's store ---- */

/* Replace the first "checksum":<digits> of @doc with @value. */
static char *with_checksum(const char *doc, const char *value)
{
	const char *p = strstr(doc, "\"checksum\":");
	const char *end;
	char *out;

	assert_non_null(p);
	p += strlen("\"checksum\":");
	end = p + strspn(p, "0123456789");
	assert_true(asprintf(&out, "%.*s%s%s", (int)(p - doc), doc, value, end) > 0);
	return out;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

/*
 * The reference daemon's file of @entries (the "entries" of pool "p", Go's marshalling
 * of them) and pool "q" holding one entry of its own, with the daemon's checksum.
 */
static char *reference_doc(const char *entries)
{
	char *go = NULL, sum[16], *doc;

	assert_true(asprintf(&go, "{\"version\":1,\"checksum\":0,\"pools\":{"
			     "\"p\":{\"name\":\"p\",\"entries\":{%s},\"last_pool_config\":\"\","
			     "\"last_reserved_ip\":\"10.0.0.2\"},"
			     "\"q\":{\"name\":\"q\",\"entries\":{\"c3_net1\":{\"container_id\":\"c3\","
			     "\"interface_name\":\"net1\",\"ip_address\":\"10.1.0.1\",\"metadata\":{"
			     "\"create_time\":\"\",\"pod_uuid\":\"\",\"pod_name\":\"\",\"pod_namespace\":\"\","
			     "\"device_id\":\"\",\"pool_config_snapshot\":\"\"}}},\"last_pool_config\":\"\","
			     "\"last_reserved_ip\":\"\"}}}", entries) > 0);
	snprintf(sum, sizeof(sum), "%" PRIu32, fnv1a(go));
	doc = with_checksum(go, sum);
	free(go);
	return doc;
}

/* One entry of pool "p" as Go marshals it. */
static char *reference_entry(const char *cid, const char *ip, const char *pod_name)
{
	char *e = NULL;

	assert_true(asprintf(&e, "\"%s_net1\":{\"container_id\":\"%s\",\"interface_name\":\"net1\","
			     "\"ip_address\":\"%s\",\"metadata\":{\"create_time\":\"\",\"pod_uuid\":\"\","
			     "\"pod_name\":\"%s\",\"pod_namespace\":\"ns\",\"device_id\":\"\","
			     "\"pool_config_snapshot\":\"\"}}", cid, cid, ip, pod_name) > 0);
	return e;
}

static void test_reference_migrated_by_add(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *dir = path_in("store.d");
	_cleanup_free_ char *stale = path_in("store.d/gone.log");
	_cleanup_free_ char *e = reference_entry("c1", "10.0.0.2", "pod");
	_cleanup_free_ char *doc = reference_doc(e);
	_cleanup_free_ char *text = NULL;
	const char *keys[] = { "p", NULL };
	struct nvipam_store *s;

	(void)state;
	/* A pool log the older store does not know (a rollback, then a roll forward): dropped. */
	assert_int_equal(mkdir(dir, 0700), 0);
	write_all(stale, "x\n", 2);
	write_all(path, doc, strlen(doc));
	open_pools_ok(path, keys, &s);
	assert_non_null(nvipam_store_find(s, "p", "c1", "net1"));
	assert_ip(&pool_at(s, 0)->last_reserved, "10.0.0.2");
	nvipam_store_close(s);
	/* Migrated on first use, whether or not anything was written after. */
	text = read_all(path, NULL);
	assert_string_equal(text, V2);
	assert_false(exists(stale));
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 2);
	assert_false(nvipam_store_dirty(s));
	nvipam_store_close(s);
}

/* A record too long for a pool log line keeps its address; the other pools migrate. */
static void test_reference_oversized_record_kept(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *big = malloc(600 * 1024 + 1);
	_cleanup_free_ char *e1 = NULL, *e2 = NULL, *entries = NULL, *doc = NULL;
	const struct nvipam_alloc *a;
	struct nvipam_store *s;
	const char *const q[] = { "q", NULL };

	(void)state;
	assert_non_null(big);
	memset(big, 'x', 600 * 1024);
	big[600 * 1024] = '\0';
	e1 = reference_entry("c1", "10.0.0.1", big);
	e2 = reference_entry(big, "10.0.0.2", "");
	/* Go sorts the keys: "c1_net1" before "xxx..._net1". */
	assert_true(asprintf(&entries, "%s,%s", e1, e2) > 0);
	doc = reference_doc(entries);
	write_all(path, doc, strlen(doc));
	/* An ADD's open of another pool migrates the whole store and goes on. */
	open_pools_ok(path, q, &s);
	commit_ok(s);
	nvipam_store_close(s);
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 3);
	a = nvipam_store_find(s, "p", "c1", "net1");
	assert_non_null(a);
	assert_string_equal(a->network, "");
	assert_string_equal(a->pod_name, "");
	assert_ip(&a->ip, "10.0.0.1");
	a = nvipam_store_find(s, "p", "oversized-10.0.0.2", "net0");
	assert_non_null(a);
	assert_ip(&a->ip, "10.0.0.2");
	assert_non_null(nvipam_store_find(s, "q", "c3", "net1"));
	nvipam_store_close(s);
}

/* An older store is read with what it holds hidden: a message reaches the pod's events. */
static void test_reference_corrupt_untouched(void **state)
{
	static const struct {
		const char *doc;
		const char *why;
	} cases[] = {
		{ "{\"version\":1,\"checksum\":5,\"pools\":[]}", "pools" },
		{ "{\"version\":1,\"checksum\":5,\"pools\":{\"p\":1}}", "pools member 0: expected an object" },
		{ "{\"version\":1,\"checksum\":5,\"pools\":{\"p\":{\"last_reserved_ip\":\"10.0.0.300\"}}}",
		  "pools member 0: field \"last_reserved_ip\" is not an IP address" },
		{ "{\"version\":1,\"checksum\":5,\"pools\":{\"p\":{\"entries\":{\"a\":1}}}}",
		  "pools member 0: entries member 0: expected an object" },
		{ "{\"version\":1,\"checksum\":5,\"pools\":{\"p\":{\"entries\":{\"a\":{\"ip_address\":\"nope\"}}}}}",
		  "field \"ip_address\" is not an IP address" },
		{ "{\"version\":1,\"checksum\":5,\"pools\":{\"p\":{\"entries\":{\"a\":{\"ip_address\":\"\"}}}}}",
		  "entries member 0: field \"ip_address\" is missing" },
		{ "{\"version\":1,\"checksum\":5,\"pools\":{\"p\":{\"entries\":{\"a\":{\"ip_address\":\"10.0.0.1\","
		  "\"metadata\":{\"create_time\":\"2024-02-30T00:00:00Z\"}}}}}}", "is not an RFC 3339 time" },
		{ "{\"version\":1,\"checksum\":5,\"pools\":{\"p\":{\"entries\":{\"a\":{\"ip_address\":\"10.0.0.1\","
		  "\"metadata\":{\"pod_name\":false}}}}}}", "entries member 0" },
	};
	_cleanup_free_ char *path = path_in("store");

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *after = NULL;
		struct nvipam_store *st = NULL;
		struct cni_err err = { 0 };

		write_all(path, cases[i].doc, strlen(cases[i].doc));
		print_message("# case %zu: %s\n", i, cases[i].why);
		expect_open_fails(path, CNI_ERR_IO, cases[i].why);
		expect_pools_open_fails(path, "p", CNI_ERR_IO, cases[i].why);
		assert_true(nvipam_store_open(path, false, 0, &st, &err) < 0);
		assert_null(strstr(err.msg, "10.0.0.300"));
		assert_null(strstr(err.msg, "nope"));
		after = read_all(path, NULL);
		assert_string_equal(after, cases[i].doc);
	}
}

static void test_migration_from_reference(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *log = path_in("store.d/pool1.log");
	_cleanup_free_ char *ref = NULL, *text = NULL;
	struct nvipam_store *s;
	const struct nvipam_alloc *a;
	size_t len;

	(void)state;
	ref = golden("nvipam-store-reference.json", &len);
	write_all(path, ref, len);
	for (int pass = 0; pass < 2; pass++) {
		open_ok(path, &s);
		assert_int_equal(nvipam_store_dirty(s), pass == 0);
		assert_int_equal(nvipam_store_pool_count(s), 1);
		assert_string_equal(pool_at(s, 0)->key, "pool1");
		assert_true(pool_at(s, 0)->has_last);
		assert_ip(&pool_at(s, 0)->last_reserved, "192.168.0.2");
		assert_int_equal(nvipam_store_count(s), 1);
		a = nvipam_store_find(s, "pool1", "a1b2c3", "net1");
		assert_non_null(a);
		assert_ip(&a->ip, "192.168.0.2");
		assert_string_equal(a->network, "");
		assert_string_equal(a->pod_namespace, "default");
		assert_string_equal(a->pod_name, "test-pod");
		assert_string_equal(a->pod_uid, "aaf0a0fc-9869-41ef-9214-48599f85b4fa");
		assert_string_equal(a->device_id, "");
		assert_int_equal(a->created, T_REF);
		if (pass == 0) {
			/* Before the commit the daemon's file is as it was. */
			text = read_all(path, NULL);
			assert_string_equal(text, ref);
			free(text);
			commit_ok(s);
		}
		nvipam_store_close(s);
	}
	text = read_all(path, NULL);
	assert_string_equal(text, V2);
	free(text);
	text = read_all(log, NULL);
	assert_non_null(strstr(text, "\t192.168.0.2\ta1b2c3\tnet1\t\tdefault\ttest-pod\t"
				     "aaf0a0fc-9869-41ef-9214-48599f85b4fa\t\t2024-06-14T10:00:00Z\t"));
	assert_non_null(strstr(text, "\nL\t192.168.0.2\t"));
}

static void test_reference_zero_checksum(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *ref = golden("nvipam-store-reference.json", NULL);
	_cleanup_free_ char *doc = with_checksum(ref, "0");
	_cleanup_free_ char *after = NULL;

	(void)state;
	assert_non_null(strstr(doc, "\"checksum\":0,"));
	write_all(path, doc, strlen(doc));
	expect_open_fails(path, CNI_ERR_IO, "is corrupt: checksum not set in store file");
	expect_pools_open_fails(path, "pool1", CNI_ERR_IO, "checksum not set");
	after = read_all(path, NULL);
	assert_string_equal(after, doc);
}

static void test_reference_checksum_mismatch(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *ref = golden("nvipam-store-reference.json", NULL);
	_cleanup_free_ char *after = NULL;
	char *p = strstr(ref, "\"ip_address\":\"192.168.0.2\"");

	(void)state;
	assert_non_null(p);
	p[strlen("\"ip_address\":\"192.168.0.")] = '3';
	write_all(path, ref, strlen(ref));
	expect_open_fails(path, CNI_ERR_IO, "checksum mismatch (recorded 1786989456");
	after = read_all(path, NULL);
	assert_string_equal(after, ref);
	/* "version" is checked here too. */
	write_all(path, "{\"version\":2,\"checksum\":5,\"pools\":{}}",
		  strlen("{\"version\":2,\"checksum\":5,\"pools\":{}}"));
	expect_open_fails(path, CNI_ERR_IO, "unsupported nv-ipam daemon store version 2");
}

/* The checksum is over Go's marshalling, not the file's bytes: a reformatted file passes. */
static void test_reference_reformatted_verifies(void **state)
{
	_cleanup_(json_object_putp) struct json_object *doc = NULL;
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *ref = golden("nvipam-store-reference.json", NULL);
	struct json_object *pools, *pool;
	struct nvipam_store *s;
	const char *text;

	(void)state;
	doc = json_tokener_parse(ref);
	assert_non_null(doc);
	/* Members the daemon does not know are dropped by Go before it checksums. */
	json_object_object_add(doc, "extra", json_object_new_string("x"));
	assert_true(json_object_object_get_ex(doc, "pools", &pools));
	assert_true(json_object_object_get_ex(pools, "pool1", &pool));
	json_object_object_add(pool, "unknown", json_object_new_int(5));
	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY);
	write_all(path, text, strlen(text));
	open_ok(path, &s);
	assert_int_equal(nvipam_store_count(s), 1);
	nvipam_store_close(s);
}

/* DEL on a handed-over store: the daemon's file edited in place, read back as the daemon's. */
static void test_reference_release(void **state)
{
	_cleanup_free_ char *ref = golden("nvipam-store-reference.json", NULL);
	struct text_buf out = { 0 };
	struct store_legacy l;
	enum store_file_kind kind;
	struct cni_err why = { 0 };
	size_t n = 9;

	(void)state;
	/* Another attachment, and one whose interface the key only begins with: nothing. */
	assert_int_equal(store_migrate_release(ref, strlen(ref), "zz", "net1", &out, &n, &why), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_migrate_release(ref, strlen(ref), "a1b2c3", "net", &out, &n, &why), 0);
	assert_int_equal(n, 0);
	assert_int_equal(out.len, 0);
	assert_int_equal(store_migrate_release(ref, strlen(ref), "a1b2c3", "net1", &out, &n, &why), 0);
	assert_int_equal(n, 1);
	assert_non_null(out.data);
	assert_int_equal(store_migrate_read(out.data, out.len, &kind, &l, &why), 0);
	assert_int_equal(kind, STORE_FILE_REFERENCE);
	assert_int_equal(l.n_allocs, 0);
	assert_int_not_equal(l.checksum, 1786989456u);
	store_migrate_free(&l);
	/* What only the daemon reads stays: the pool's config and last reserved address. */
	assert_non_null(strstr(out.data, "\"last_pool_config\":\"{\\\"subnet\\\":\\\"192.168.0.0/16"));
	assert_non_null(strstr(out.data, "\"last_reserved_ip\":\"192.168.0.2\""));
	text_buf_free(&out);
	/* Our own store file is not edited; a file the daemon would refuse is not either. */
	assert_int_equal(store_migrate_release("{\"version\":2,\"pools\":\"store.d\"}", 31, "a1b2c3",
					       "net1", &out, &n, &why), -ENODATA);
	ref[strstr(ref, "\"ip_address\":\"192.168.0.2\"") - ref + strlen("\"ip_address\":\"192.168.0.")] = '3';
	assert_int_equal(store_migrate_release(ref, strlen(ref), "a1b2c3", "net1", &out, &n, &why),
			 -EINVAL);
	assert_non_null(strstr(why.msg, "checksum mismatch"));
	assert_int_equal(out.len, 0);
}

/*
 * A daemon file with two pools (Go writes map keys sorted, so this text is what it marshals
 * with "checksum":0), an entry kept for release cooldown, IPv6 and escaped characters.
 */
static void test_migration_two_pools(void **state)
{
	static const char go[] =
		"{\"version\":1,\"checksum\":0,\"pools\":{"
		"\"cidrpool/p6\":{\"name\":\"p6\",\"entries\":{"
		"\"c9_net2\":{\"container_id\":\"c9\",\"interface_name\":\"net2\","
		"\"ip_address\":\"fd52:2eb5:44::5\",\"metadata\":{\"create_time\":\"2024-06-14T12:00:00+02:00\","
		"\"pod_uuid\":\"u9\",\"pod_name\":\"a\\u003cb\\u0026c\",\"pod_namespace\":\"ns\","
		"\"device_id\":\"0000:3b:00.2\",\"pool_config_snapshot\":\"\"}}},"
		"\"last_pool_config\":\"\",\"last_reserved_ip\":\"\"},"
		"\"pool1\":{\"name\":\"pool1\",\"entries\":{"
		"\"a_net1\":{\"container_id\":\"a\",\"interface_name\":\"net1\",\"ip_address\":\"10.0.0.2\","
		"\"metadata\":{\"create_time\":\"\",\"pod_uuid\":\"\",\"pod_name\":\"\",\"pod_namespace\":\"\","
		"\"device_id\":\"\",\"pool_config_snapshot\":\"{\\\"subnet\\\":\\\"10.0.0.0/24\\\"}\"}},"
		"\"b_net1\":{\"container_id\":\"b\",\"interface_name\":\"net1\",\"ip_address\":\"10.0.0.3\","
		"\"metadata\":{\"create_time\":\"2024-06-14T10:00:00Z\",\"pod_uuid\":\"\",\"pod_name\":\"p\","
		"\"pod_namespace\":\"d\",\"device_id\":\"\",\"pool_config_snapshot\":\"\"}}},"
		"\"last_pool_config\":\"\",\"last_reserved_ip\":\"10.0.0.3\"}}}";
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *doc = NULL, *with_released = NULL;
	const char *keys[] = { "pool1", "cidrpool/p6", NULL };
	char sum[16];
	struct nvipam_store *s;
	const struct nvipam_alloc *a;
	struct ip_addr *ips = NULL;
	struct ip_addr last;
	bool has_last;
	size_t n;

	(void)state;
	snprintf(sum, sizeof(sum), "%" PRIu32, fnv1a(go));
	doc = with_checksum(go, sum);
	/* released_at is left out of the daemon's checksum; the entry still holds its IP. */
	{
		const char *at = strstr(doc, "\"metadata\":{\"create_time\":\"2024-06-14T10:00:00Z\"");

		assert_non_null(at);
		assert_true(asprintf(&with_released, "%.*s\"released_at\":\"2024-06-15T00:00:00Z\",%s",
				     (int)(at - doc), doc, at) > 0);
	}
	write_all(path, with_released, strlen(with_released));
	/* Migrated by the first ADD (some pools open). */
	open_pools_ok(path, keys, &s);
	assert_false(nvipam_store_dirty(s));
	assert_int_equal(nvipam_store_pool_count(s), 2);

	a = nvipam_store_find(s, "cidrpool/p6", "c9", "net2");
	assert_non_null(a);
	assert_ip(&a->ip, "fd52:2eb5:44::5");
	assert_string_equal(a->pod_name, "a<b&c");
	assert_string_equal(a->device_id, "0000:3b:00.2");
	assert_int_equal(a->created, T_REF);
	a = nvipam_store_find(s, "pool1", "a", "net1");
	assert_non_null(a);
	assert_int_equal(a->created, 0);
	assert_non_null(nvipam_store_find(s, "pool1", "b", "net1"));

	assert_int_equal(usage_of(s, "cidrpool/p6", &ips, &n, &has_last, &last), 0);
	assert_int_equal(n, 1);
	assert_false(has_last);
	free(ips);
	assert_int_equal(usage_of(s, "pool1", &ips, &n, &has_last, &last), 0);
	assert_int_equal(n, 2);
	assert_true(has_last);
	assert_ip(&last, "10.0.0.3");
	free(ips);
	nvipam_store_close(s);

	/* The same text with one byte of a checksummed field changed is refused. */
	doc[strlen(doc) - 5] = '4';
	write_all(path, doc, strlen(doc));
	expect_open_fails(path, CNI_ERR_IO, "checksum mismatch");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_store_path_of_another_store, helper_setup,
						helper_teardown),
		cmocka_unit_test_setup_teardown(test_torn_tail, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_power_loss_hole, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_torn_header, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_damaged_logs_untouched, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_damaged_headers_and_checksums, helper_setup,
						helper_teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_address, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_replayed_lines, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_snapshots_must_match, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_damaged_after_open, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_store_file_corrupt_untouched, helper_setup,
						helper_teardown),
		cmocka_unit_test_setup_teardown(test_store_file_by_hand, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_migration_from_reference, helper_setup, helper_teardown),
		cmocka_unit_test(test_reference_release),
		cmocka_unit_test_setup_teardown(test_reference_migrated_by_add, helper_setup,
						helper_teardown),
		cmocka_unit_test_setup_teardown(test_reference_oversized_record_kept, helper_setup,
						helper_teardown),
		cmocka_unit_test_setup_teardown(test_reference_corrupt_untouched, helper_setup,
						helper_teardown),
		cmocka_unit_test_setup_teardown(test_reference_zero_checksum, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_reference_checksum_mismatch, helper_setup,
						helper_teardown),
		cmocka_unit_test_setup_teardown(test_reference_reformatted_verifies, helper_setup,
						helper_teardown),
		cmocka_unit_test_setup_teardown(test_migration_two_pools, helper_setup, helper_teardown),
	};

	return cmocka_run_group_tests(tests, helper_group_setup, helper_group_teardown);
}
