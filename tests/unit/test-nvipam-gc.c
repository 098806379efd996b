/*
 * Unit tests: nv-ipam-tool gc's inputs: the pod listing (validation, lookup, mirror pods),
 * the miss counts file (format, strict reading), escaping of API strings, and the store's
 * dropping of an unused pool record
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/gc/misses.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/pods.h"
#include "ipam/nv-ipam/store/store.h"

/* ---- the pod listing ---- */

#define POD(ns, name, uid) "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" \
	name "\",\"uid\":\"" uid "\"}}"

static void parse_ok(const char *json, struct pods *ret)
{
	struct cni_err err = { 0 };

	if (pods_parse(json, strlen(json), "pods.json", ret, &err) < 0)
		fail_msg("pods_parse: %s", err.msg);
}

static void parse_fails(const char *json, const char *part)
{
	struct pods p = { 0 };
	struct cni_err err = { 0 };

	assert_int_equal(pods_parse(json, strlen(json), "pods.json", &p, &err), -EINVAL);
	assert_int_equal(err.code, 6);
	if (!strstr(err.msg, part))
		fail_msg("\"%s\" does not contain \"%s\"", err.msg, part);
	assert_null(p.v);
}

static void test_pods_list_shapes(void **state)
{
	struct pods p = { 0 };

	(void)state;
	/* kubectl's List. */
	parse_ok("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[" POD("default", "a", "u1") ","
		 POD("team", "b.x-1", "u2") "],\"metadata\":{\"resourceVersion\":\"\"}}", &p);
	assert_int_equal(p.n, 2);
	assert_int_equal(pods_lookup(&p, "team", "b.x-1", "u2", NULL), PODS_PRESENT);
	pods_free(&p);
	/* The API's own PodList: items carry no kind. */
	parse_ok("{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"namespace\":\"n\",\"name\":\"p\","
		 "\"uid\":\"0f1e2d3c-aaaa-bbbb-cccc-123456789abc\"}}]}", &p);
	assert_int_equal(pods_lookup(&p, "n", "p", "0f1e2d3c-aaaa-bbbb-cccc-123456789abc", NULL),
			 PODS_PRESENT);
	pods_free(&p);
	/* An array of pods; an empty List is a node without pods. */
	parse_ok("[" POD("n", "p", "u") "]", &p);
	assert_int_equal(p.n, 1);
	pods_free(&p);
	parse_ok("{\"kind\":\"List\",\"items\":[]}", &p);
	assert_int_equal(p.n, 0);
	assert_int_equal(pods_lookup(&p, "n", "p", "", NULL), PODS_ABSENT);
	pods_free(&p);
}

static void test_pods_lookup(void **state)
{
	struct pods p = { 0 };
	const char *uid = NULL;

	(void)state;
	parse_ok("[" POD("b", "x", "u3") "," POD("a", "x", "u1") "," POD("a", "y", "u2") ","
		 "{\"metadata\":{\"namespace\":\"c\",\"name\":\"nouid\"}},"
		 POD("d", "twice", "old") "," POD("d", "twice", "new") "]", &p);
	assert_int_equal(pods_lookup(&p, "a", "x", "u1", NULL), PODS_PRESENT);
	assert_int_equal(pods_lookup(&p, "a", "y", "u2", NULL), PODS_PRESENT);
	assert_int_equal(pods_lookup(&p, "b", "x", "u3", NULL), PODS_PRESENT);
	/* Absent: another namespace, another name, a prefix. */
	assert_int_equal(pods_lookup(&p, "b", "y", "u2", NULL), PODS_ABSENT);
	assert_int_equal(pods_lookup(&p, "a", "z", "", NULL), PODS_ABSENT);
	assert_int_equal(pods_lookup(&p, "a", "", "", NULL), PODS_ABSENT);
	/* Another UID: a new pod of the same name; the listed UID is told. */
	assert_int_equal(pods_lookup(&p, "a", "x", "u9", &uid), PODS_OTHER_UID);
	assert_string_equal(uid, "u1");
	/* No UID recorded, or none listed: the name decides. */
	assert_int_equal(pods_lookup(&p, "a", "x", "", NULL), PODS_PRESENT);
	assert_int_equal(pods_lookup(&p, "c", "nouid", "anything", NULL), PODS_PRESENT);
	/* Listed twice: either UID matches. */
	assert_int_equal(pods_lookup(&p, "d", "twice", "old", NULL), PODS_PRESENT);
	assert_int_equal(pods_lookup(&p, "d", "twice", "new", NULL), PODS_PRESENT);
	assert_int_equal(pods_lookup(&p, "d", "twice", "other", NULL), PODS_OTHER_UID);
	pods_free(&p);
}

/* A static pod: the runtime saw kubelet's UID, which the mirror pod keeps in an annotation. */
static void test_pods_mirror(void **state)
{
	struct pods p = { 0 };

	(void)state;
	parse_ok("[{\"metadata\":{\"namespace\":\"kube-system\",\"name\":\"etcd-node1\",\"uid\":\"api-uid\","
		 "\"annotations\":{\"kubernetes.io/config.mirror\":\"6f1c0d8e2a\","
		 "\"kubernetes.io/config.hash\":\"6f1c0d8e2a\"}}},"
		 "{\"metadata\":{\"namespace\":\"n\",\"name\":\"bad\",\"uid\":\"u\","
		 "\"annotations\":{\"kubernetes.io/config.mirror\":\"not a uid\"}}},"
		 "{\"metadata\":{\"namespace\":\"n\",\"name\":\"typed\",\"uid\":\"u\","
		 "\"annotations\":{\"kubernetes.io/config.mirror\":5}}}]", &p);
	assert_int_equal(pods_lookup(&p, "kube-system", "etcd-node1", "6f1c0d8e2a", NULL), PODS_PRESENT);
	assert_int_equal(pods_lookup(&p, "kube-system", "etcd-node1", "api-uid", NULL), PODS_PRESENT);
	assert_int_equal(pods_lookup(&p, "kube-system", "etcd-node1", "other", NULL), PODS_OTHER_UID);
	/* Anyone may annotate: a bad value is no second UID, and no reason to refuse the list. */
	assert_int_equal(pods_lookup(&p, "n", "bad", "not a uid", NULL), PODS_OTHER_UID);
	assert_int_equal(pods_lookup(&p, "n", "typed", "5", NULL), PODS_OTHER_UID);
	pods_free(&p);
}

static void test_pods_not_a_list(void **state)
{
	(void)state;
	parse_fails("", "empty input");
	parse_fails("{\"kind\":\"List\",\"items\":[", "malformed JSON");
	parse_fails("nonsense", "malformed JSON");
	/* One pod is no listing of the node: every other allocation would look gone. */
	parse_fails(POD("n", "p", "u"), "not a pod list: one object of kind Pod");
	parse_fails("{}", "not a pod list: one object, expected");
	parse_fails("[" POD("n", "p", "u") "] []", "more than one JSON document");
	parse_fails("{\"kind\":\"IPPoolList\",\"items\":[]}", "not a pod list: a IPPoolList");
	parse_fails("{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}}]}",
		    "not a pod list: item 0 is a Node");
	parse_fails("{\"kind\":\"List\",\"items\":[{\"kind\":\"IPPool\",\"metadata\":{\"name\":\"p\","
		    "\"namespace\":\"kube-system\"},\"spec\":{\"subnet\":\"10.0.0.0/8\"}}]}",
		    "item 0 is a IPPool");
	/* A pool list without kinds is still told by its spec. */
	parse_fails("[{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"},\"spec\":{\"cidr\":\"10.0.0.0/8\"}}]",
		    "item 0 is a CIDRPool");
	parse_fails("{\"kind\":\"List\",\"items\":{}}", "expected a List, an array or an object");
	parse_fails("[1]", "item 0: expected an object");
	parse_fails("\"pods\"", "expected a List, an array or an object");
}

static void test_pods_invalid_items(void **state)
{
	char big[400];

	(void)state;
	parse_fails("[{\"kind\":\"Pod\"}]", "item 0: no metadata object");
	parse_fails("[{\"metadata\":[]}]", "item 0: no metadata object");
	parse_fails("[" POD("n", "p", "u") ",{\"metadata\":{\"name\":\"p\"}}]",
		    "item 1: metadata.namespace is missing");
	parse_fails("[{\"metadata\":{\"namespace\":\"n\"}}]", "item 0: metadata.name is missing");
	parse_fails("[{\"metadata\":{\"namespace\":7,\"name\":\"p\"}}]", "metadata.namespace is not a string");
	parse_fails("[{\"metadata\":{\"namespace\":\"n\",\"name\":true}}]", "metadata.name is not a string");
	parse_fails("[{\"metadata\":{\"namespace\":\"n.s\",\"name\":\"p\"}}]", "not a valid namespace");
	parse_fails("[{\"metadata\":{\"namespace\":\"N\",\"name\":\"p\"}}]", "not a valid namespace");
	parse_fails("[{\"metadata\":{\"namespace\":\"-n\",\"name\":\"p\"}}]", "not a valid namespace");
	parse_fails("[{\"metadata\":{\"namespace\":\"n\",\"name\":\"p-\"}}]", "not a valid pod name: p-");
	parse_fails("[{\"metadata\":{\"namespace\":\"n\",\"name\":\"\"}}]", "not a valid pod name");
	parse_fails("[{\"metadata\":{\"namespace\":\"n\",\"name\":\"a\\u0000b\"}}]", "not a string");
	/* What fails validation is quoted escaped and cut short, never raw. */
	parse_fails("[{\"metadata\":{\"namespace\":\"n\",\"name\":\"x\\ny z\\u001b[31m\"}}]",
		    "not a valid pod name: x\\ny z\\x1b[31m");
	snprintf(big, sizeof(big), "[{\"metadata\":{\"namespace\":\"n\",\"name\":\"%0300d\"}}]", 0);
	parse_fails(big, "not a valid pod name: 0000000000000000000000000000000000000000...");
	parse_fails("[{\"metadata\":{\"namespace\":\"n\",\"name\":\"p\",\"uid\":\"u u\"}}]",
		    "item 0 (pod n/p): metadata.uid is not a valid UID");
	parse_fails("[{\"metadata\":{\"namespace\":\"n\",\"name\":\"p\",\"uid\":5}}]", "metadata.uid");
}

/* nv-ipam's time() may lag date(1) by a tick: a second of margin before the listing. */
static void test_pods_newer_than_listing(void **state)
{
	(void)state;
	assert_true(pods_may_be_unlisted(1000, 1000));
	assert_true(pods_may_be_unlisted(1001, 1000));
	assert_true(pods_may_be_unlisted(999, 1000));
	assert_false(pods_may_be_unlisted(998, 1000));
	assert_false(pods_may_be_unlisted(0, 1000));
	assert_true(pods_may_be_unlisted(0, 0));
}

/* ---- escaping ---- */

static void test_escape(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	k8s_fput_escaped(f, "ok-1.2/x");
	fputc('|', f);
	k8s_fput_escaped(f, "a b\\c\n\x7f\xc3\xa9\xff\xc2\x9b");
	fclose(f);
	/* Valid UTF-8 stays; a byte that is not, a control (C0, DEL, C1) does not. */
	assert_string_equal(buf, "ok-1.2/x|a b\\\\c\\n\\x7f\xc3\xa9\\xff\\u009b");
	free(buf);
}

/* ---- the miss counts file ---- */

static struct nvipam_alloc mk(const char *pool, const char *addr, const char *cid, time_t created)
{
	struct nvipam_alloc a = { .pool = pool, .container_id = cid, .ifname = "net1",
				  .pod_namespace = "n", .pod_name = "p", .pod_uid = "", .network = "",
				  .device_id = "", .created = created };

	assert_int_equal(ip_addr_parse(addr, &a.ip), 0);
	return a;
}

static void test_misses_round_trip(void **state)
{
	struct nvipam_alloc a[] = {
		mk("pool1", "10.0.0.9", "c2", 1700000000),
		mk("cidrpool/p", "fd00::1", "c1", 1700000001),
		mk("pool1", "10.0.0.2", "c1", 1700000002),
	};
	const struct nvipam_alloc *ptrs[] = { &a[0], &a[1], &a[2] };
	const unsigned long counts[] = { 3, 1, 2 };
	struct nvipam_alloc other;
	struct misses m = { 0 };
	struct cni_err err = { 0 };
	_cleanup_free_ char *text = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(misses_format(ptrs, counts, 3, &text, &len), 0);
	/* Sorted by key, one line, the creation time in seconds. */
	assert_string_equal(text,
		"{\"version\":1,\"misses\":["
		"{\"pool\":\"cidrpool/p\",\"ip\":\"fd00::1\",\"containerID\":\"c1\",\"ifname\":\"net1\",\"created\":1700000001,\"count\":1},"
		"{\"pool\":\"pool1\",\"ip\":\"10.0.0.2\",\"containerID\":\"c1\",\"ifname\":\"net1\",\"created\":1700000002,\"count\":2},"
		"{\"pool\":\"pool1\",\"ip\":\"10.0.0.9\",\"containerID\":\"c2\",\"ifname\":\"net1\",\"created\":1700000000,\"count\":3}]}\n");
	assert_int_equal(len, strlen(text));
	assert_int_equal(misses_parse(text, len, "store.gc", &m, &err), 0);
	assert_int_equal(m.n, 3);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(misses_get(&m, &a[i]), counts[i]);
	/* The count belongs to that allocation only: another time, address or container has none. */
	other = mk("pool1", "10.0.0.9", "c2", 1700000060);
	assert_int_equal(misses_get(&m, &other), 0);
	other = mk("pool1", "10.0.0.8", "c2", 1700000000);
	assert_int_equal(misses_get(&m, &other), 0);
	other = mk("pool1", "10.0.0.9", "c3", 1700000000);
	assert_int_equal(misses_get(&m, &other), 0);
	other = mk("pool2", "10.0.0.9", "c2", 1700000000);
	assert_int_equal(misses_get(&m, &other), 0);
	misses_free(&m);

	/* Nothing missed. */
	free(text);
	text = NULL;
	assert_int_equal(misses_format(NULL, NULL, 0, &text, &len), 0);
	assert_string_equal(text, "{\"version\":1,\"misses\":[]}\n");
}

static void misses_fail(const char *text, const char *part)
{
	struct misses m = { 0 };
	struct cni_err err = { 0 };

	assert_true(misses_parse(text, strlen(text), "store.gc", &m, &err) < 0);
	if (!strstr(err.msg, part))
		fail_msg("\"%s\" does not contain \"%s\"", err.msg, part);
	assert_null(m.v);
}

#define ENTRY(x) "{\"version\":1,\"misses\":[{\"pool\":\"p\",\"ip\":\"10.0.0.1\",\"containerID\":\"c\"," \
	"\"ifname\":\"i\",\"created\":1" x "}]}"

static void test_misses_strict(void **state)
{
	struct misses m = { 0 };
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(misses_parse(ENTRY(",\"count\":2"), strlen(ENTRY(",\"count\":2")), "f", &m, &err), 0);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.v[0].count, 2);
	misses_free(&m);
	misses_fail("", "empty input");
	misses_fail("{\"version\":1,\"misses\":[", "unexpected end");
	misses_fail("[]", "expected {\"version\":1");
	misses_fail("{\"misses\":[]}", "expected {\"version\":1");
	misses_fail("{\"version\":2,\"misses\":[]}", "version 2, this tool reads 1");
	misses_fail("{\"version\":1,\"misses\":{}}", "expected {\"version\":1");
	misses_fail("{\"version\":1,\"misses\":[5]}", "misses[0]: not an object");
	misses_fail(ENTRY(""), "misses[0]: a member is missing");
	misses_fail(ENTRY(",\"count\":0"), "misses[0]: field \"count\": 0 out of range");
	misses_fail(ENTRY(",\"count\":-1"), "out of range");
	misses_fail(ENTRY(",\"count\":\"2\""), "expected an integer");
	misses_fail(ENTRY(",\"count\":1000001"), "out of range");
	misses_fail("{\"version\":1,\"misses\":[{\"pool\":\"p\",\"ip\":\"10.0.0.300\",\"containerID\":\"c\","
		    "\"ifname\":\"i\",\"created\":1,\"count\":1}]}", "invalid \"ip\"");
	misses_fail("{\"version\":1,\"misses\":[{\"pool\":\"p\",\"ip\":\"10.0.0.1\",\"containerID\":\"c\","
		    "\"ifname\":\"i\",\"created\":-5,\"count\":1}]}", "out of range");
}

static void test_misses_files(void **state)
{
	char dir[] = "/tmp/nvipam-gc-test-XXXXXX", path[128], cmd[160];
	_cleanup_free_ char *p = NULL;
	struct nvipam_alloc a = mk("pool1", "10.0.0.2", "c1", 1700000000);
	const struct nvipam_alloc *ptrs[] = { &a };
	const unsigned long one = 1;
	struct misses m = { 0 };
	struct cni_err err = { 0 };
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	struct stat st;
	int dfd;
	FILE *f;

	(void)state;
	p = misses_path("/var/lib/cni/nv-ipam/store");
	assert_string_equal(p, "/var/lib/cni/nv-ipam/store.gc");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/store.gc", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	/* Missing: no counts, nothing read. */
	assert_int_equal(misses_load(dfd, "store.gc", path, &m, &err), 0);
	assert_int_equal(m.n, 0);
	assert_null(m.text);
	/* Written (0600), then the same text again is no write. */
	assert_int_equal(misses_format(ptrs, &one, 1, &text, &len), 0);
	assert_int_equal(misses_save(dfd, "store.gc", path, &m, text, len, &err), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(misses_load(dfd, "store.gc", path, &m, &err), 0);
	assert_int_equal(misses_get(&m, &a), 1);
	assert_int_equal(misses_save(dfd, "store.gc", path, &m, text, len, &err), 0);
	misses_free(&m);
	/* Corrupt: named, and left for the caller to replace. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"version\":1,", f);
	fclose(f);
	assert_true(misses_load(dfd, "store.gc", path, &m, &err) < 0);
	assert_non_null(strstr(err.msg, path));
	/* A directory in its place is unreadable, not a crash. */
	err = (struct cni_err){ 0 };
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_true(misses_load(dfd, "store.gc", path, &m, &err) < 0);
	assert_int_equal(err.code, 5);
	/* A symbolic link in its place is not followed. */
	err = (struct cni_err){ 0 };
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	assert_true(misses_load(dfd, "store.gc", path, &m, &err) < 0);
	assert_non_null(strstr(err.msg, "a symbolic link"));
	close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- the store: a pool record without allocations ---- */

static void test_store_drop_pool(void **state)
{
	char dir[] = "/tmp/nvipam-gc-test-XXXXXX", path[128], cmd[160];
	struct nvipam_store *s = NULL;
	struct nvipam_store_pool_info p;
	struct nvipam_alloc a = mk("pool1", "10.0.0.2", "c1", 1700000000);
	struct nvipam_alloc b = mk("pool2", "10.0.1.2", "c1", 1700000000);
	struct nvipam_alloc c = mk("pool3", "10.0.2.2", "c1", 1700000000);
	struct cni_err err = { 0 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/store", dir);
	assert_int_equal(nvipam_store_open(path, false, 1000, &s, &err), 0);
	assert_int_equal(nvipam_store_add(s, &a, true), 0);
	assert_int_equal(nvipam_store_add(s, &b, true), 0);
	assert_int_equal(nvipam_store_add(s, &c, true), 0);
	assert_int_equal(nvipam_store_commit(s, &err), 0);
	assert_int_equal(nvipam_store_pool_count(s), 3);
	/* In use, or unknown: kept, nothing to write. */
	assert_false(nvipam_store_drop_pool(s, "pool2"));
	assert_false(nvipam_store_drop_pool(s, "nope"));
	assert_false(nvipam_store_dirty(s));
	assert_int_equal(nvipam_store_remove(s, "pool2", "c1", "net1"), 1);
	assert_int_equal(nvipam_store_commit(s, &err), 0);
	/* The key may be the record's own string. */
	assert_true(nvipam_store_pool_at(s, 1, &p));
	assert_true(nvipam_store_drop_pool(s, p.key));
	assert_true(nvipam_store_dirty(s));
	assert_int_equal(nvipam_store_pool_count(s), 2);
	assert_true(nvipam_store_pool_at(s, 0, &p));
	assert_string_equal(p.key, "pool1");
	assert_true(nvipam_store_pool_at(s, 1, &p));
	assert_string_equal(p.key, "pool3");
	assert_int_equal(nvipam_store_commit(s, &err), 0);
	nvipam_store_close(s);
	/* Gone from the file; the others keep their last reserved address. */
	assert_int_equal(nvipam_store_open(path, false, 1000, &s, &err), 0);
	assert_int_equal(nvipam_store_pool_count(s), 2);
	assert_true(nvipam_store_pool_at(s, 1, &p));
	assert_string_equal(p.key, "pool3");
	assert_true(p.has_last);
	nvipam_store_close(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pods_list_shapes),
		cmocka_unit_test(test_pods_lookup),
		cmocka_unit_test(test_pods_mirror),
		cmocka_unit_test(test_pods_not_a_list),
		cmocka_unit_test(test_pods_invalid_items),
		cmocka_unit_test(test_pods_newer_than_listing),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_misses_round_trip),
		cmocka_unit_test(test_misses_strict),
		cmocka_unit_test(test_misses_files),
		cmocka_unit_test(test_store_drop_pool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
