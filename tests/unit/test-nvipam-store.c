/*
 * Unit tests: the nv-ipam allocation store (file format, reference-daemon migration,
 * locking, atomic commit), each test in its own mkdtemp directory
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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
#include <json-c/json.h>

#include "common/cni/error.h"
#include "common/cni/json.h"
#include "common/cni/trust.h"
#include "ipam/nv-ipam/store.h"

/* 2024-06-14T10:00:00Z */
#define T_REF 1718359200

static char dir[64];

/* ---- helpers ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/nvipam-store-test-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

/* Confined stores may lie below /tmp/nvipam-store-test-*: the node says so (trust.h). */
static int group_setup(void **state)
{
	static char path[] = "/tmp/nvipam-store-settings-XXXXXX";
	int fd = mkstemp(path);
	const char *text = "{\"stateDirs\": [\"/tmp\"]}";

	(void)state;
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) < 0)
		return -1;
	return setenv(TRUST_SETTINGS_ENV, path, 1);
}

static int group_teardown(void **state)
{
	(void)state;
	return unlink(getenv(TRUST_SETTINGS_ENV));
}

static int teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *path_in(const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static char *read_all(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *data;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	data = malloc((size_t)n + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
	data[n] = '\0';
	fclose(f);
	if (ret_len)
		*ret_len = (size_t)n;
	return data;
}

static void write_all(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static char *golden(const char *name, size_t *ret_len)
{
	const char *d = getenv("GOLDEN_DIR");
	char *p, *data;

	assert_true(asprintf(&p, "%s/%s", d && *d ? d : "tests/unit/golden", name) > 0);
	data = read_all(p, ret_len);
	free(p);
	return data;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Number of entries of @d whose name starts with @prefix. */
static int count_prefixed(const char *d, const char *prefix)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	assert_non_null(dp);
	while ((e = readdir(dp)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(dp);
	return n;
}

static struct ip_addr ip(const char *s)
{
	struct ip_addr a;

	assert_int_equal(ip_addr_parse(s, &a), 0);
	return a;
}

static void assert_ip(const struct ip_addr *a, const char *want)
{
	char buf[IP_PREFIX_STRLEN];

	assert_string_equal(ip_addr_format(a, buf, sizeof(buf)), want);
}

static struct nvipam_alloc mk(const char *pool, const char *addr, const char *cid,
			      const char *ifname)
{
	return (struct nvipam_alloc){
		.pool = (char *)pool,
		.ip = ip(addr),
		.container_id = (char *)cid,
		.ifname = (char *)ifname,
		.network = (char *)"net-a",
		.pod_namespace = (char *)"default",
		.pod_name = (char *)"pod",
		.pod_uid = (char *)"uid",
		.device_id = (char *)"",
		.created = T_REF,
	};
}

/* As nv-ipam opens it: the path came from a network config. */
static void open_ok(const char *path, struct nvipam_store *s)
{
	struct cni_err err = { 0 };
	int r = nvipam_store_open(path, true, 1000, s, &err);

	if (r < 0)
		fail_msg("open %s: %d %s", path, err.code, err.msg);
}

static void commit_ok(struct nvipam_store *s)
{
	struct cni_err err = { 0 };
	int r = nvipam_store_commit(s, &err);

	if (r < 0)
		fail_msg("commit: %d %s", err.code, err.msg);
	assert_false(s->dirty);
}

static void add_ok(struct nvipam_store *s, const char *pool, const char *addr, const char *cid,
		   const char *ifname, bool rr)
{
	struct nvipam_alloc a = mk(pool, addr, cid, ifname);

	assert_int_equal(nvipam_store_add(s, &a, rr), 0);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ---- empty stores ---- */

static void test_missing_file_and_dirs(void **state)
{
	_cleanup_free_ char *path = path_in("a/b/store");
	_cleanup_free_ char *lock = path_in("a/b/store.lock");
	_cleanup_free_ char *sub = path_in("a/b");
	struct nvipam_store s;
	struct stat st;

	(void)state;
	open_ok(path, &s);
	assert_int_equal(s.n_allocs, 0);
	assert_int_equal(s.n_pools, 0);
	assert_false(s.dirty);
	assert_true(s.lock_fd >= 0);
	assert_int_equal(stat(sub, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(lock, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* Nothing changed: commit writes nothing, open created no store file. */
	commit_ok(&s);
	assert_false(exists(path));
	nvipam_store_close(&s);
	assert_int_equal(s.lock_fd, -1);
	assert_null(s.path);
}

static void test_empty_file(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	struct nvipam_store s;

	(void)state;
	write_all(path, "", 0);
	open_ok(path, &s);
	assert_int_equal(s.n_allocs, 0);
	assert_int_equal(s.n_pools, 0);
	assert_false(s.dirty);
	nvipam_store_close(&s);
}

static void test_close_zeroed_and_twice(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	struct nvipam_store s = { 0 };
	int fd0 = fcntl(0, F_GETFD);

	(void)state;
	/* A zeroed store has lock_fd 0: closing it must not close stdin. */
	nvipam_store_close(&s);
	assert_int_equal(fcntl(0, F_GETFD), fd0);
	open_ok(path, &s);
	nvipam_store_close(&s);
	nvipam_store_close(&s);
	assert_int_equal(fcntl(0, F_GETFD), fd0);
	nvipam_store_close(NULL);
}

/* ---- round trip ---- */

static void test_round_trip_all_fields(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *text = NULL;
	struct nvipam_alloc a = {
		.pool = (char *)"cidrpool/p6",
		.ip = ip("fd52:2eb5:44::2"),
		.container_id = (char *)"0123456789abcdef",
		.ifname = (char *)"net1",
		.network = (char *)"my \"net\"\\x",
		.pod_namespace = (char *)"kube-system",
		.pod_name = (char *)"p\xc3\xa9-\t<&>\x01",
		.pod_uid = (char *)"aaf0a0fc-9869-41ef-9214-48599f85b4fa",
		.device_id = (char *)"0000:3b:00.2",
		.created = T_REF + 3661,
	};
	struct nvipam_store s;
	struct nvipam_alloc *g;
	struct stat st;
	size_t len;

	(void)state;
	open_ok(path, &s);
	add_ok(&s, "pool1", "192.168.0.2", "c1", "net1", true);
	add_ok(&s, "pool1", "192.168.0.7", "c2", "net1", false);
	assert_int_equal(nvipam_store_add(&s, &a, false), 0);
	assert_true(s.dirty);
	commit_ok(&s);
	nvipam_store_close(&s);

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	text = read_all(path, &len);
	/* Compact: one line, newline-terminated. */
	assert_non_null(strchr(text, '\n'));
	assert_ptr_equal(strchr(text, '\n'), text + len - 1);
	assert_null(strstr(text, ": "));

	open_ok(path, &s);
	assert_false(s.dirty);
	assert_int_equal(s.n_allocs, 3);
	assert_int_equal(s.n_pools, 1);
	assert_string_equal(s.pools[0].key, "pool1");
	assert_true(s.pools[0].has_last);
	assert_ip(&s.pools[0].last_reserved, "192.168.0.2");

	assert_string_equal(s.allocs[0].container_id, "c1");
	assert_string_equal(s.allocs[1].container_id, "c2");
	assert_ip(&s.allocs[1].ip, "192.168.0.7");
	g = &s.allocs[2];
	assert_string_equal(g->pool, a.pool);
	assert_ip(&g->ip, "fd52:2eb5:44::2");
	assert_int_equal(g->ip.family, AF_INET6);
	assert_string_equal(g->container_id, a.container_id);
	assert_string_equal(g->ifname, a.ifname);
	assert_string_equal(g->network, a.network);
	assert_string_equal(g->pod_namespace, a.pod_namespace);
	assert_string_equal(g->pod_name, a.pod_name);
	assert_string_equal(g->pod_uid, a.pod_uid);
	assert_string_equal(g->device_id, a.device_id);
	assert_int_equal(g->created, T_REF + 3661);
	nvipam_store_close(&s);
}

static void test_exact_format(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *text = NULL;
	struct nvipam_store s;

	(void)state;
	open_ok(path, &s);
	add_ok(&s, "pool1", "192.168.0.2", "a1b2c3", "net1", true);
	commit_ok(&s);
	nvipam_store_close(&s);
	text = read_all(path, NULL);
	assert_string_equal(text,
			    "{\"version\":1,\"pools\":{\"pool1\":{\"lastReservedIP\":\"192.168.0.2\"}},"
			    "\"allocations\":[{\"pool\":\"pool1\",\"ip\":\"192.168.0.2\","
			    "\"containerID\":\"a1b2c3\",\"ifname\":\"net1\",\"network\":\"net-a\","
			    "\"podNamespace\":\"default\",\"podName\":\"pod\",\"podUID\":\"uid\","
			    "\"deviceID\":\"\",\"created\":\"2024-06-14T10:00:00Z\"}]}\n");
}

/* Bytes that are not UTF-8 come from CNI_ARGS; writing them raw would make the store unreadable. */
static void test_invalid_utf8_stays_readable(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	struct nvipam_alloc a = mk("pool1", "10.0.0.1", "c1", "net1");
	struct nvipam_store s;

	(void)state;
	a.pod_name = (char *)"x\xff\xc3(y\xed\xa0\x80z";
	open_ok(path, &s);
	assert_int_equal(nvipam_store_add(&s, &a, false), 0);
	commit_ok(&s);
	nvipam_store_close(&s);
	open_ok(path, &s);
	assert_int_equal(s.n_allocs, 1);
	assert_string_equal(s.allocs[0].pod_name,
			    "x\xef\xbf\xbd\xef\xbf\xbd(y\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz");
	nvipam_store_close(&s);
}

static void test_reads_rfc3339_variants(void **state)
{
	static const struct {
		const char *text;
		time_t want;
	} cases[] = {
		{ "2024-06-14T10:00:00Z", T_REF },
		{ "2024-06-14T10:00:00.123456789Z", T_REF },
		{ "2024-06-14T12:30:00+02:30", T_REF },
		{ "2024-06-14T07:00:00-03:00", T_REF },
		{ "2024-02-29T00:00:00Z", 1709164800 },
	};
	_cleanup_free_ char *path = path_in("store");

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char doc[400];
		struct nvipam_store s;

		snprintf(doc, sizeof(doc),
			 "{\"version\":1,\"allocations\":[{\"pool\":\"p\",\"ip\":\"10.0.0.1\","
			 "\"containerID\":\"c\",\"ifname\":\"e\",\"created\":\"%s\"}]}",
			 cases[i].text);
		write_all(path, doc, strlen(doc));
		open_ok(path, &s);
		assert_int_equal(s.n_allocs, 1);
		/* Optional members default to "". */
		assert_string_equal(s.allocs[0].network, "");
		assert_string_equal(s.allocs[0].pod_uid, "");
		if (s.allocs[0].created != cases[i].want)
			fail_msg("%s: got %lld", cases[i].text, (long long)s.allocs[0].created);
		nvipam_store_close(&s);
	}
}

static void expect_open_fails(const char *path, int code, const char *part)
{
	struct nvipam_store s = { .lock_fd = -1, .dir_fd = -1 };
	struct cni_err err = { 0 };
	int r;

	r = nvipam_store_open(path, false, 0, &s, &err);
	if (r >= 0)
		fail_msg("%s opened, expected \"%s\"", path, part);
	if (err.code != code || !strstr(err.msg, path) || !strstr(err.msg, part))
		fail_msg("want code %d with \"%s\" and the path, got %d \"%s\"", code, part, err.code,
			 err.msg);
	/* Not written on failure. */
	assert_int_equal(s.lock_fd, -1);
	assert_null(s.path);
}

/* Formatting is done by hand (no gmtime_r): check it against libc over a range of dates. */
static void test_created_times(void **state)
{
	static const long long times[] = {
		0, 59, 86399, 86400, 951782400 /* 2000-02-29 */, 951868800, T_REF,
		1709164800 /* 2024-02-29 */, 4107542400LL /* 2100-03-01 */, 4107456000LL,
		253402300799LL /* 9999-12-31T23:59:59Z */, 1234567890,
	};
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *text = NULL;
	struct nvipam_store s;
	char addr[32];
	const char *p;

	(void)state;
	open_ok(path, &s);
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		struct nvipam_alloc a;

		snprintf(addr, sizeof(addr), "10.0.0.%zu", i + 1);
		a = mk("p", addr, "c", "e");
		a.created = (time_t)times[i];
		assert_int_equal(nvipam_store_add(&s, &a, false), 0);
	}
	/* Out of RFC 3339's four-digit years: clamped, so the file stays readable. */
	add_ok(&s, "p", "10.0.1.1", "c", "e", false);
	s.allocs[s.n_allocs - 1].created = -5;
	add_ok(&s, "p", "10.0.1.2", "c", "e", false);
	s.allocs[s.n_allocs - 1].created = (time_t)253402300799LL + 1000;
	commit_ok(&s);
	nvipam_store_close(&s);

	text = read_all(path, NULL);
	p = text;
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]) + 2; i++) {
		char want[32];

		if (i < sizeof(times) / sizeof(times[0])) {
			time_t t = (time_t)times[i];
			struct tm tm;

			assert_non_null(gmtime_r(&t, &tm));
			strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%SZ", &tm);
		} else {
			snprintf(want, sizeof(want), "%s",
				 i == sizeof(times) / sizeof(times[0]) ? "1970-01-01T00:00:00Z"
								       : "9999-12-31T23:59:59Z");
		}
		p = strstr(p, "\"created\":\"");
		assert_non_null(p);
		p += strlen("\"created\":\"");
		if (strncmp(p, want, strlen(want)) != 0)
			fail_msg("time %zu: want %s, file has %.20s", i, want, p);
	}

	open_ok(path, &s);
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		assert_int_equal(s.allocs[i].created, (time_t)times[i]);
	assert_int_equal(s.allocs[s.n_allocs - 2].created, 0);
	assert_int_equal(s.allocs[s.n_allocs - 1].created, (time_t)253402300799LL);
	nvipam_store_close(&s);
}

/* What the reader must take: any member order, unknown members, nulls, escapes, whitespace. */
static void test_reader_accepts(void **state)
{
	static const char doc[] =
		"\n{\n  \"allocations\" : [\n    {\"created\": \"2024-06-14T10:00:00Z\", \"ip\": \"10.0.0.1\","
		" \"ifname\": \"net1\", \"containerID\": \"c1\", \"pool\": \"p\\u00e9\",\r\n"
		"     \"network\": null, \"podName\": \"\\u00e9\\ud83d\\ude00\\/\\n\\\"\\\\\\t\\b\\f\\r\xc3\xa9\","
		"     \"future\": {\"a\": [1, -1.5e+3, 0, 2E-7, true, false, null, \"x\", {}, [], {\"b\":[[]]}]}}\n"
		"  ],\n  \"extra\": [],\n"
		"  \"pools\": {\"p\\u00e9\": {\"lastReservedIP\": \"10.0.0.1\", \"other\": 1},"
		" \"q\": {\"lastReservedIP\": null}, \"r\": {}},\n"
		"  \"version\": 1\n}\n\t ";
	_cleanup_free_ char *path = path_in("store");
	struct nvipam_store s;

	(void)state;
	write_all(path, doc, strlen(doc));
	open_ok(path, &s);
	assert_int_equal(s.n_allocs, 1);
	assert_string_equal(s.allocs[0].pool, "p\xc3\xa9");
	assert_string_equal(s.allocs[0].network, "");
	assert_string_equal(s.allocs[0].pod_name,
			    "\xc3\xa9\xf0\x9f\x98\x80/\n\"\\\t\b\f\r\xc3\xa9");
	assert_string_equal(s.allocs[0].pod_namespace, "");
	assert_int_equal(s.allocs[0].created, T_REF);
	assert_int_equal(s.n_pools, 3);
	assert_string_equal(s.pools[0].key, "p\xc3\xa9");
	assert_true(s.pools[0].has_last);
	assert_string_equal(s.pools[1].key, "q");
	assert_false(s.pools[1].has_last);
	assert_false(s.pools[2].has_last);
	assert_false(s.dirty);
	/* Written back in our format, and read again the same. */
	s.dirty = true;
	commit_ok(&s);
	nvipam_store_close(&s);
	open_ok(path, &s);
	assert_int_equal(s.n_allocs, 1);
	assert_string_equal(s.allocs[0].pod_name,
			    "\xc3\xa9\xf0\x9f\x98\x80/\n\"\\\t\b\f\r\xc3\xa9");
	assert_int_equal(s.n_pools, 3);
	nvipam_store_close(&s);
}

/* "version" is read first even when the file does not put it first. */
static void test_version_checked_before_content(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	const char *v2 = "{\"allocations\":[{\"address\":\"10.0.0.1\"}],\"version\":2}";
	const char *ref = "{\"pools\":{},\"version\":1,\"checksum\":5}";

	(void)state;
	write_all(path, v2, strlen(v2));
	expect_open_fails(path, CNI_ERR_IO, "has an unsupported version 2 (this plugin reads version 1)");
	/* The daemon's layout is recognised by its checksum wherever it is. */
	write_all(path, ref, strlen(ref));
	expect_open_fails(path, CNI_ERR_IO, "is corrupt: checksum mismatch (recorded 5");
}

/* ---- corrupt files ---- */

static void test_corrupt_files_untouched(void **state)
{
	static const struct {
		const char *doc;
		const char *why;
	} cases[] = {
		{ "{\"version\":1,\"allocations\":[", "unexpected end" },
		{ "{\"version\":1,\"allocations\":[]}x", "at offset 30" },
		{ "{'version':1}", "expected a string at offset 1" },
		{ "{\"version\":1,}", "expected a string at offset 13" },
		{ "{\"version\":1,\"x\":[1,]}", "unexpected character at offset 20" },
		{ "{\"version\":1,\"x\":[,1]}", "unexpected character at offset 18" },
		{ "{\"version\":1 \"x\":1}", "expected ',' or '}' at offset 13" },
		{ "{\"version\":1,\"x\" 1}", "expected ':' at offset 17" },
		{ "{\"version\":1,\"x\":01}", "at offset 18" },
		{ "{\"version\":1,\"x\":-}", "unexpected character at offset 18" },
		{ "{\"version\":1,\"x\":1.}", "number expected at offset 19" },
		{ "{\"version\":1,\"x\":1e}", "number expected at offset 19" },
		{ "{\"version\":1,\"x\":NaN}", "unexpected character at offset 17" },
		{ "{\"version\":1,\"x\":tru}", "unexpected character at offset 17" },
		{ "{\"version\":1,\"x\":\"a\\qb\"}", "invalid escape at offset 20" },
		{ "{\"version\":1,\"x\":\"\\u12g4\"}", "invalid \\u escape" },
		{ "{\"version\":1,\"x\":\"\\ud800\"}", "unpaired surrogate" },
		{ "{\"version\":1,\"x\":\"\\udc00\\ud800\"}", "unpaired surrogate" },
		{ "{\"version\":1,\"x\":\"a\\u0000b\"}", "NUL character in string" },
		{ "{\"version\":1,\"x\":\"a\tb\"}", "control character in string at offset 19" },
		{ "{\"version\":1,\"x\":\"a\xff" "b\"}", "invalid UTF-8 at offset 19" },
		{ "{\"version\":1,\"x\":\"\xc0\xaf\"}", "invalid UTF-8" },
		{ "{\"version\":1,\"x\":\"\xed\xa0\x80\"}", "invalid UTF-8" },
		{ "{\"version\":1,\"x\":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}", "nesting too deep" },
		{ "{\"version\":1.0}", "field \"version\": expected an integer, got number" },
		{ "{\"version\":99999999999999999999}", "expected an integer" },
		{ " \n", "unexpected end" },
		{ "{\"version\":1,\"allocations\":[{\"pool\":\"p\",\"ip\":\"10.0.0.1\",\"containerID\":\"c\","
		  "\"ifname\":\"e\",\"ifname\":\"f\"}]}",
		  "allocations[0]: field \"ifname\" appears twice" },
		{ "{\"version\":1,\"allocations\":[{\"pool\":\"p\",\"ip\":\"\",\"containerID\":\"c\","
		  "\"ifname\":\"e\"}]}",
		  "allocations[0]: field \"ip\" is missing" },
		{ "{\"version\":1,\"allocations\":[{\"pool\":\"p\",\"ip\":\"10.0.0.1/24\",\"containerID\":\"c\","
		  "\"ifname\":\"e\"}]}",
		  "\"10.0.0.1/24\" is not an IP address" },
		{ "[]", "expected an object, got array" },
		{ "{\"allocations\":[]}", "\"version\" is missing" },
		{ "{\"version\":\"1\"}", "field \"version\": expected an integer, got string" },
		{ "{\"version\":1,\"allocations\":{}}", "\"allocations\"" },
		{ "{\"version\":1,\"pools\":[]}", "\"pools\"" },
		{ "{\"version\":1,\"pools\":{\"p\":{\"lastReservedIP\":\"10.0.0.300\"}}}",
		  "pools[\"p\"]: field \"lastReservedIP\": \"10.0.0.300\" is not an IP address" },
		{ "{\"version\":1,\"pools\":{\"p\":1}}", "pools[\"p\"]: expected an object" },
		{ "{\"version\":1,\"allocations\":[1]}", "allocations[0]: expected an object" },
		{ "{\"version\":1,\"allocations\":[{\"pool\":\"p\",\"ip\":7,\"containerID\":\"c\","
		  "\"ifname\":\"e\"}]}",
		  "allocations[0]: field \"ip\": expected a string, got number" },
		{ "{\"version\":1,\"allocations\":[{\"pool\":\"p\",\"ip\":\"nope\",\"containerID\":\"c\","
		  "\"ifname\":\"e\"}]}",
		  "\"nope\" is not an IP address" },
		{ "{\"version\":1,\"allocations\":[{\"pool\":\"p\",\"ip\":\"10.0.0.1\","
		  "\"ifname\":\"e\"}]}",
		  "allocations[0]: field \"containerID\" is missing" },
		{ "{\"version\":1,\"allocations\":[{\"pool\":\"\",\"ip\":\"10.0.0.1\",\"containerID\":\"c\","
		  "\"ifname\":\"e\"}]}",
		  "field \"pool\" is empty" },
		{ "{\"version\":1,\"allocations\":[{\"pool\":\"p\",\"ip\":\"10.0.0.1\",\"containerID\":\"c\","
		  "\"ifname\":\"e\",\"podName\":false}]}",
		  "field \"podName\": expected a string, got boolean" },
		{ "{\"version\":1,\"allocations\":[{\"pool\":\"p\",\"ip\":\"10.0.0.1\",\"containerID\":\"c\","
		  "\"ifname\":\"e\",\"created\":\"2024-02-30T00:00:00Z\"}]}",
		  "\"2024-02-30T00:00:00Z\" is not an RFC 3339 time" },
		{ "{\"version\":1,\"allocations\":[{\"pool\":\"p\",\"ip\":\"10.0.0.1\",\"containerID\":\"c\","
		  "\"ifname\":\"e\",\"created\":\"2024-06-14 10:00:00Z\"}]}",
		  "is not an RFC 3339 time" },
		{ "{\"version\":1,\"allocations\":["
		  "{\"pool\":\"p\",\"ip\":\"10.0.0.1\",\"containerID\":\"c1\",\"ifname\":\"e\"},"
		  "{\"pool\":\"q\",\"ip\":\"10.0.0.1\",\"containerID\":\"c2\",\"ifname\":\"e\"},"
		  "{\"pool\":\"p\",\"ip\":\"10.0.0.1\",\"containerID\":\"c3\",\"ifname\":\"e\"}]}",
		  "IP 10.0.0.1 is held twice in pool \"p\"" },
		{ "{\"version\":1,\"allocations\":[]}\n\0", "NUL byte" },
	};
	_cleanup_free_ char *path = path_in("store");

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].doc) + (strstr(cases[i].why, "NUL byte") ? 1 : 0);
		_cleanup_free_ char *after = NULL;
		size_t after_len;

		write_all(path, cases[i].doc, len);
		print_message("# case %zu: %s\n", i, cases[i].why);
		expect_open_fails(path, CNI_ERR_IO, "is corrupt: ");
		expect_open_fails(path, CNI_ERR_IO, cases[i].why);
		after = read_all(path, &after_len);
		assert_int_equal(after_len, len);
		assert_memory_equal(after, cases[i].doc, len);
	}
}

static void test_unsupported_version(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	const char *doc = "{\"version\":2,\"allocations\":[]}";
	_cleanup_free_ char *after = NULL;

	(void)state;
	write_all(path, doc, strlen(doc));
	expect_open_fails(path, CNI_ERR_IO, "unsupported version 2");
	after = read_all(path, NULL);
	assert_string_equal(after, doc);
}

static void test_unreadable(void **state)
{
	_cleanup_free_ char *path = path_in("store");

	(void)state;
	/* Root reads through file modes, so make it something that cannot be read as a file. */
	assert_int_equal(mkdir(path, 0700), 0);
	expect_open_fails(path, CNI_ERR_IO, "cannot read store file");
	expect_open_fails(path, CNI_ERR_IO, "not a regular file");
	assert_int_equal(rmdir(path), 0);
}

/* ---- the store's directory and files are not followed where root should not go ---- */

static void expect_confined_open_fails(const char *path, int code, const char *msg_part)
{
	struct nvipam_store s;
	struct cni_err err = { 0 };

	assert_true(nvipam_store_open(path, true, 100, &s, &err) < 0);
	if (err.code != code || !strstr(err.msg, msg_part))
		fail_msg("code %d \"%s\", expected %d with \"%s\"", err.code, err.msg, code, msg_part);
}

static void test_directory_must_be_private(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *lock = path_in("store.lock");
	struct nvipam_store s;

	(void)state;
	/* Anyone who may write there would decide what root reads, writes and removes. */
	assert_int_equal(chmod(dir, 0777), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "is not safe");
	assert_int_equal(chmod(dir, 0770), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "mode 0770");
	assert_int_equal(chmod(dir, 01733), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "writable by no one else");
	/* Refused before the lock file is made. */
	assert_false(exists(lock));
	/* The operator's tool refuses it as well. */
	{
		struct cni_err err = { 0 };

		assert_true(nvipam_store_open_inspect(path, 100, &s, &err) < 0);
		assert_int_equal(err.code, CNI_ERR_IO);
	}
	assert_int_equal(chmod(dir, 0755), 0);
	open_ok(path, &s);
	nvipam_store_close(&s);
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
	struct nvipam_store s;

	(void)state;
	/* The lock: root would create (and flock) a file wherever the link points. */
	assert_int_equal(symlink(victim, lock), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "symbolic link");
	assert_false(exists(victim));
	assert_int_equal(unlink(lock), 0);
	/* The store itself: read through a link, or replaced through one by the rename. */
	write_all(victim, "{\"version\":1,\"pools\":{},\"allocations\":[]}\n", 42);
	assert_int_equal(symlink(victim, path), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "not a regular file");
	assert_int_equal(unlink(path), 0);
	/* A FIFO is refused without waiting for a writer. */
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_confined_open_fails(path, CNI_ERR_IO, "not a regular file");
	assert_int_equal(unlink(path), 0);
	/* A link on the way below the node's state directory. */
	assert_int_equal(mkdir(real, 0700), 0);
	assert_int_equal(symlink(real, link), 0);
	expect_confined_open_fails(via_link, CNI_ERR_INVALID_CONFIG, "symbolic link");
	assert_false(exists(via_link));
	/* The operator names the path as it wants it followed. */
	{
		struct cni_err err = { 0 };

		assert_int_equal(nvipam_store_open_inspect(via_link, 100, &s, &err), 0);
		nvipam_store_close(&s);
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

/* ---- reference daemon's format ---- */

static void test_migration_from_reference(void **state)
{
	_cleanup_(json_object_putp) struct json_object *doc = NULL;
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *ref = NULL, *text = NULL;
	struct json_object *allocs, *a0, *v;
	struct nvipam_store s;
	size_t len;

	(void)state;
	ref = golden("nvipam-store-reference.json", &len);
	write_all(path, ref, len);
	for (int pass = 0; pass < 2; pass++) {
		open_ok(path, &s);
		/* Converted: dirty so that the next commit writes our format. */
		assert_int_equal(s.dirty, pass == 0);
		assert_int_equal(s.n_pools, 1);
		assert_string_equal(s.pools[0].key, "pool1");
		assert_true(s.pools[0].has_last);
		assert_ip(&s.pools[0].last_reserved, "192.168.0.2");
		assert_int_equal(s.n_allocs, 1);
		assert_string_equal(s.allocs[0].pool, "pool1");
		assert_ip(&s.allocs[0].ip, "192.168.0.2");
		assert_string_equal(s.allocs[0].container_id, "a1b2c3");
		assert_string_equal(s.allocs[0].ifname, "net1");
		assert_string_equal(s.allocs[0].network, "");
		assert_string_equal(s.allocs[0].pod_namespace, "default");
		assert_string_equal(s.allocs[0].pod_name, "test-pod");
		assert_string_equal(s.allocs[0].pod_uid, "aaf0a0fc-9869-41ef-9214-48599f85b4fa");
		assert_string_equal(s.allocs[0].device_id, "");
		assert_int_equal(s.allocs[0].created, T_REF);
		assert_non_null(nvipam_store_find(&s, "pool1", "a1b2c3", "net1"));
		if (pass == 0) {
			/* Before the commit the daemon's file is as it was. */
			text = read_all(path, NULL);
			assert_string_equal(text, ref);
			free(text);
			commit_ok(&s);
		}
		nvipam_store_close(&s);
	}

	text = read_all(path, &len);
	assert_null(strstr(text, "checksum"));
	assert_null(strstr(text, "entries"));
	doc = json_tokener_parse(text);
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "version", &v));
	assert_int_equal(json_object_get_int(v), 1);
	assert_true(json_object_object_get_ex(doc, "allocations", &allocs));
	assert_int_equal(json_object_array_length(allocs), 1);
	a0 = json_object_array_get_idx(allocs, 0);
	assert_true(json_object_object_get_ex(a0, "ip", &v));
	assert_string_equal(json_object_get_string(v), "192.168.0.2");
	assert_true(json_object_object_get_ex(a0, "created", &v));
	assert_string_equal(json_object_get_string(v), "2024-06-14T10:00:00Z");
	assert_true(json_object_object_get_ex(a0, "podName", &v));
	assert_string_equal(json_object_get_string(v), "test-pod");
}

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
}

/* The checksum is over Go's marshalling, not the file's bytes: a reformatted file passes. */
static void test_reference_reformatted_verifies(void **state)
{
	_cleanup_(json_object_putp) struct json_object *doc = NULL;
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *ref = golden("nvipam-store-reference.json", NULL);
	struct json_object *pools, *pool;
	struct nvipam_store s;
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
	assert_int_equal(s.n_allocs, 1);
	nvipam_store_close(&s);
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
	char sum[16];
	struct nvipam_store s;
	struct nvipam_alloc *a;
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
	open_ok(path, &s);
	assert_true(s.dirty);
	assert_int_equal(s.n_allocs, 3);
	assert_int_equal(s.n_pools, 2);

	a = nvipam_store_find(&s, "cidrpool/p6", "c9", "net2");
	assert_non_null(a);
	assert_ip(&a->ip, "fd52:2eb5:44::5");
	assert_string_equal(a->pod_name, "a<b&c");
	assert_string_equal(a->device_id, "0000:3b:00.2");
	assert_int_equal(a->created, T_REF);
	a = nvipam_store_find(&s, "pool1", "a", "net1");
	assert_non_null(a);
	assert_int_equal(a->created, 0);
	assert_non_null(nvipam_store_find(&s, "pool1", "b", "net1"));

	assert_int_equal(nvipam_store_usage(&s, "cidrpool/p6", &ips, &n, &has_last, &last), 0);
	assert_int_equal(n, 1);
	assert_false(has_last);
	free(ips);
	assert_int_equal(nvipam_store_usage(&s, "pool1", &ips, &n, &has_last, &last), 0);
	assert_int_equal(n, 2);
	assert_true(has_last);
	assert_ip(&last, "10.0.0.3");
	free(ips);
	nvipam_store_close(&s);

	/* The same text with one byte of a checksummed field changed is refused. */
	doc[strlen(doc) - 5] = '4';
	write_all(path, doc, strlen(doc));
	expect_open_fails(path, CNI_ERR_IO, "checksum mismatch");
}

/* ---- add, find, remove, usage ---- */

static void test_add_refuses_duplicate_ip(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	char cid[] = "c1";
	struct nvipam_alloc a = mk("pool1", "10.0.0.5", cid, "net1");
	struct nvipam_alloc nulls = { .pool = (char *)"pool2", .ip = ip("10.0.0.9") };
	struct nvipam_alloc bad = mk("", "10.0.0.6", "c", "e");
	struct nvipam_store s;

	(void)state;
	open_ok(path, &s);
	assert_int_equal(nvipam_store_add(&s, &a, false), 0);
	/* Copied, not borrowed. */
	cid[1] = '9';
	assert_string_equal(s.allocs[0].container_id, "c1");
	assert_int_equal(s.n_pools, 0);

	a = mk("pool1", "10.0.0.5", "other", "net1");
	assert_int_equal(nvipam_store_add(&s, &a, true), -EEXIST);
	assert_int_equal(s.n_allocs, 1);
	assert_int_equal(s.n_pools, 0);
	/* The same IP in another pool is another address space. */
	a = mk("pool2", "10.0.0.5", "other", "net1");
	assert_int_equal(nvipam_store_add(&s, &a, true), 0);
	assert_int_equal(nvipam_store_add(&s, &a, true), -EEXIST);
	assert_int_equal(s.n_allocs, 2);
	assert_int_equal(s.n_pools, 1);
	assert_string_equal(s.pools[0].key, "pool2");
	assert_ip(&s.pools[0].last_reserved, "10.0.0.5");

	assert_int_equal(nvipam_store_add(&s, &nulls, true), 0);
	assert_int_equal(s.n_pools, 1);
	assert_ip(&s.pools[0].last_reserved, "10.0.0.9");
	assert_string_equal(s.allocs[2].container_id, "");
	assert_string_equal(s.allocs[2].network, "");

	/* What the loader would refuse is refused here. */
	assert_int_equal(nvipam_store_add(&s, &bad, false), -EINVAL);
	bad = mk("pool1", "10.0.0.6", "c", "e");
	bad.ip = (struct ip_addr){ 0 };
	assert_int_equal(nvipam_store_add(&s, &bad, false), -EINVAL);
	assert_int_equal(s.n_allocs, 3);

	commit_ok(&s);
	nvipam_store_close(&s);
	open_ok(path, &s);
	assert_int_equal(s.n_allocs, 3);
	a = mk("pool2", "10.0.0.5", "x", "y");
	assert_int_equal(nvipam_store_add(&s, &a, false), -EEXIST);
	assert_false(s.dirty);
	nvipam_store_close(&s);
}

static void test_remove(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	struct nvipam_store s;
	size_t n;

	(void)state;
	open_ok(path, &s);
	add_ok(&s, "p4", "10.0.0.1", "c1", "net1", true);
	add_ok(&s, "p6", "fd00::1", "c1", "net1", true);
	add_ok(&s, "p4", "10.0.0.2", "c2", "net1", true);
	add_ok(&s, "p4", "10.0.0.3", "c1", "net2", true);
	add_ok(&s, "p6", "fd00::2", "c2", "net1", true);
	commit_ok(&s);

	assert_int_equal(nvipam_store_remove(&s, "p4", "nope", "net1"), 0);
	assert_false(s.dirty);
	/* One pool only. */
	assert_int_equal(nvipam_store_remove(&s, "p6", "c1", "net1"), 1);
	assert_true(s.dirty);
	assert_int_equal(s.n_allocs, 4);
	assert_non_null(nvipam_store_find(&s, "p4", "c1", "net1"));
	assert_null(nvipam_store_find(&s, "p6", "c1", "net1"));
	/* All pools; the arguments point into the allocation removed, as GC passes them. */
	{
		struct nvipam_alloc *a = nvipam_store_find(&s, "p4", "c2", "net1");

		assert_non_null(a);
		n = nvipam_store_remove(&s, NULL, a->container_id, a->ifname);
	}
	assert_int_equal(n, 2);
	assert_int_equal(s.n_allocs, 2);
	/* The others keep their order. */
	assert_string_equal(s.allocs[0].container_id, "c1");
	assert_string_equal(s.allocs[0].ifname, "net1");
	assert_string_equal(s.allocs[1].ifname, "net2");
	/* Last reserved IPs stay, as the reference's DEL leaves them. */
	assert_int_equal(s.n_pools, 2);
	commit_ok(&s);
	nvipam_store_close(&s);

	open_ok(path, &s);
	assert_int_equal(s.n_allocs, 2);
	assert_null(nvipam_store_find(&s, "p4", "c2", "net1"));
	assert_null(nvipam_store_find(&s, "p6", "c2", "net1"));
	assert_non_null(nvipam_store_find(&s, "p4", "c1", "net2"));
	assert_int_equal(s.n_pools, 2);
	assert_ip(&s.pools[1].last_reserved, "fd00::2");
	nvipam_store_close(&s);
}

static void test_find_and_usage(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	struct nvipam_store s;
	struct ip_addr *ips = NULL;
	struct ip_addr last;
	bool has_last = true;
	size_t n = 99;

	(void)state;
	open_ok(path, &s);
	assert_int_equal(nvipam_store_usage(&s, "p", &ips, &n, &has_last, &last), 0);
	assert_int_equal(n, 0);
	assert_false(has_last);
	free(ips);

	add_ok(&s, "p", "10.0.0.4", "c1", "net1", false);
	add_ok(&s, "q", "10.0.0.5", "c1", "net1", true);
	add_ok(&s, "p", "10.0.0.6", "c2", "net1", true);
	add_ok(&s, "p", "10.0.0.2", "c3", "net1", false);

	assert_null(nvipam_store_find(&s, "q", "c2", "net1"));
	assert_null(nvipam_store_find(&s, "p", "c1", "net2"));
	assert_ip(&nvipam_store_find(&s, "q", "c1", "net1")->ip, "10.0.0.5");
	assert_ip(&nvipam_store_find(&s, "p", "c1", "net1")->ip, "10.0.0.4");

	assert_int_equal(nvipam_store_usage(&s, "p", &ips, &n, &has_last, &last), 0);
	assert_int_equal(n, 3);
	assert_ip(&ips[0], "10.0.0.4");
	assert_ip(&ips[1], "10.0.0.6");
	assert_ip(&ips[2], "10.0.0.2");
	assert_true(has_last);
	assert_ip(&last, "10.0.0.6");
	free(ips);
	nvipam_store_close(&s);
}

/* ---- locking ---- */

/*
 * Child: open the store, report on @ready, wait for a byte on @go (or @hold_ms), close.
 * @go_w is the parent's end of @go. Returns only in the parent, with the child's pid.
 */
static pid_t hold_in_child(const char *path, int ready, int go, int go_w, int hold_ms)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct nvipam_store s;
		struct cni_err err = { 0 };
		char c = 'x';

		/* Only the parent writes to us: EOF reaches us if it dies. */
		if (go_w >= 0)
			(void)close(go_w);
		if (nvipam_store_open(path, false, 1000, &s, &err) < 0)
			_exit(2);
		if (write(ready, &c, 1) != 1)
			_exit(3);
		if (hold_ms > 0) {
			struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };

			nanosleep(&ts, NULL);
		} else if (read(go, &c, 1) != 1) {
			_exit(4);
		}
		nvipam_store_close(&s);
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

static void test_lock_contention(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	int ready[2], go[2];
	struct nvipam_store s = { .lock_fd = -1, .dir_fd = -1 };
	struct cni_err err = { 0 };
	struct timespec t0;
	double waited;
	char c;
	pid_t pid;
	int r;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid = hold_in_child(path, ready[1], go[0], go[1], 0);
	assert_int_equal(read(ready[0], &c, 1), 1);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = nvipam_store_open(path, false, 100, &s, &err);
	waited = ms_since(&t0);
	assert_int_equal(r, -EAGAIN);
	assert_int_equal(err.code, CNI_ERR_TRY_AGAIN);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "is locked by another process (waited 100 ms)"));
	assert_null(s.path);
	/* It did wait, polling, for the whole timeout. */
	assert_true(waited >= 100.0);
	fprintf(stderr, "# lock timeout of 100 ms returned after %.1f ms\n", waited);

	assert_int_equal(write(go[1], "x", 1), 1);
	wait_child(pid);
	open_ok(path, &s);
	nvipam_store_close(&s);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

static void test_lock_released_while_waiting(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	int ready[2];
	struct nvipam_store s;
	struct cni_err err = { 0 };
	struct timespec t0;
	double waited;
	char c;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	pid = hold_in_child(path, ready[1], -1, -1, 150);
	assert_int_equal(read(ready[0], &c, 1), 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(nvipam_store_open(path, false, 5000, &s, &err), 0);
	waited = ms_since(&t0);
	/* Taken once the child let go, well before the timeout. */
	assert_true(waited >= 50.0);
	assert_true(waited < 4000.0);
	fprintf(stderr, "# lock taken %.1f ms after asking (holder kept it ~150 ms)\n", waited);
	nvipam_store_close(&s);
	wait_child(pid);
	close(ready[0]);
	close(ready[1]);
}

/* ---- commit failures ---- */

/* A store with one committed allocation, open, with a second one added (dirty). */
static char *prepare_dirty(struct nvipam_store *s, const char *path, size_t *ret_len)
{
	open_ok(path, s);
	add_ok(s, "pool1", "10.0.0.1", "c1", "net1", true);
	commit_ok(s);
	add_ok(s, "pool1", "10.0.0.2", "c2", "net1", true);
	assert_true(s->dirty);
	return read_all(path, ret_len);
}

static void assert_commit_fails(struct nvipam_store *s, const char *part)
{
	struct cni_err err = { 0 };
	int r = nvipam_store_commit(s, &err);

	assert_true(r < 0);
	assert_int_equal(err.code, CNI_ERR_IO);
	if (!strstr(err.msg, s->path) || !strstr(err.msg, part))
		fail_msg("want \"%s\" and the path, got \"%s\"", part, err.msg);
	/* Still to be written. */
	assert_true(s->dirty);
}

static void test_commit_write_fails(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *before = NULL, *after = NULL;
	struct rlimit old, small;
	struct nvipam_store s;
	size_t len, after_len;
	struct cni_err err = { 0 };
	int r;

	(void)state;
	before = prepare_dirty(&s, path, &len);
	/* The file size limit applies to root too: the temp file's write fails with EFBIG. */
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = 64;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	r = nvipam_store_commit(&s, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_true(r < 0);
	assert_int_equal(err.code, CNI_ERR_IO);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "File too large"));
	assert_true(s.dirty);

	after = read_all(path, &after_len);
	assert_int_equal(after_len, len);
	assert_memory_equal(after, before, len);
	assert_int_equal(count_prefixed(dir, "store.tmp"), 0);

	/* Nothing was lost: it can still be written. */
	commit_ok(&s);
	nvipam_store_close(&s);
	open_ok(path, &s);
	assert_int_equal(s.n_allocs, 2);
	nvipam_store_close(&s);
}

static void test_commit_rename_fails(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *inside = path_in("store/keep");
	struct nvipam_store s;

	(void)state;
	open_ok(path, &s);
	add_ok(&s, "pool1", "10.0.0.1", "c1", "net1", true);
	/* Something that is not a file took the store's name: rename() over it fails. */
	assert_int_equal(mkdir(path, 0700), 0);
	write_all(inside, "k", 1);
	assert_commit_fails(&s, "rename");
	assert_int_equal(count_prefixed(dir, "store.tmp"), 0);
	assert_true(exists(inside));
	nvipam_store_close(&s);
}

static void test_commit_directory_gone(void **state)
{
	_cleanup_free_ char *sub = path_in("sub");
	_cleanup_free_ char *moved = path_in("moved");
	_cleanup_free_ char *path = path_in("sub/store");
	_cleanup_free_ char *old_path = path_in("moved/store");
	_cleanup_free_ char *old_lock = path_in("moved/store.lock");
	_cleanup_free_ char *before = NULL, *after = NULL;
	struct nvipam_store s;
	size_t len, after_len;

	(void)state;
	before = prepare_dirty(&s, path, &len);
	/*
	 * The directory was renamed and its name taken by a file: the commit goes
	 * where the store was opened and locked, never through the name again.
	 */
	assert_int_equal(rename(sub, moved), 0);
	write_all(sub, "x", 1);
	commit_ok(&s);
	after = read_all(old_path, &after_len);
	assert_true(after_len > len);
	assert_non_null(strstr(after, "10.0.0.2"));
	free(after);
	after = read_all(sub, &after_len);
	assert_int_equal(after_len, 1);
	/* The directory removed from under the open store: the temp file cannot be created. */
	add_ok(&s, "pool1", "10.0.0.3", "c3", "net1", true);
	assert_int_equal(unlink(old_path), 0);
	assert_int_equal(unlink(old_lock), 0);
	assert_int_equal(rmdir(moved), 0);
	assert_commit_fails(&s, "create");
	assert_false(exists(moved));
	nvipam_store_close(&s);
}

/* ---- size ---- */

static void test_10000_allocations_timing(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	struct nvipam_store s;
	struct timespec t0;
	double save_ms, load_ms, close_ms;
	struct stat st;

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
		a.pod_namespace = (char *)"tenant-namespace";
		a.device_id = (char *)"0000:3b:00.2";
		a.created = T_REF + i;
		assert_int_equal(nvipam_store_add(&s, &a, true), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	commit_ok(&s);
	save_ms = ms_since(&t0);
	nvipam_store_close(&s);
	assert_int_equal(stat(path, &st), 0);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	open_ok(path, &s);
	load_ms = ms_since(&t0);
	assert_int_equal(s.n_allocs, 10000);
	assert_string_equal(s.allocs[9999].pod_name, "workload-9999-7f9c8d6b5-x2x4z");
	assert_int_equal(s.allocs[9999].created, T_REF + 9999);
	assert_ip(&s.pools[0].last_reserved, "10.0.39.15");
	/* A DEL: remove one and write it back, as an invocation does. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(nvipam_store_remove(&s, NULL, s.allocs[5000].container_id, "net1"), 1);
	commit_ok(&s);
	nvipam_store_close(&s);
	close_ms = ms_since(&t0);
	fprintf(stderr,
		"# 10000 allocations (%lld bytes): save %.2f ms, load %.2f ms, "
		"remove+save+close %.2f ms\n",
		(long long)st.st_size, save_ms, load_ms, close_ms);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_missing_file_and_dirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_zeroed_and_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_all_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exact_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_utf8_stays_readable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reads_rfc3339_variants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_created_times, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_accepts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_checked_before_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_files_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsupported_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory_must_be_private, setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted_links_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outside_state_directories, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_from_reference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reference_zero_checksum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reference_checksum_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reference_reformatted_verifies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_two_pools, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_refuses_duplicate_ip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_and_usage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_contention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_released_while_waiting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_write_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_rename_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_directory_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_10000_allocations_timing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
