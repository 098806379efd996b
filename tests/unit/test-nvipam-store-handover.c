/* Unit tests: the store handed over to the reference daemon and taken back, exactly: names that are not UTF-8, late writes of the daemon */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/store.h"
#include "tests/unit/store-helpers.h"

/* The daemon's checksum of a document that is its own re-encoding: FNV-1a-32 with "checksum":0. */
static uint32_t doc_sum(const char *doc)
{
	const char *at = strstr(doc, "\"checksum\":");
	const char *end;
	uint32_t h;

	assert_non_null(at);
	at += strlen("\"checksum\":");
	end = at + strspn(at, "0123456789");
	h = text_hash32(doc, (size_t)(at - doc), TEXT_HASH32_INIT);
	h = text_hash32("0", 1, h);
	return text_hash32(end, strlen(end), h);
}

/* A reference store of one pool "p" holding @entries, its checksum filled in. */
static char *ref_doc(const char *entries, const char *last)
{
	char *doc = NULL, *out = NULL;

	assert_true(asprintf(&doc, "{\"version\":1,\"checksum\":0,\"pools\":{\"p\":{\"name\":\"p\","
				   "\"entries\":{%s},\"last_pool_config\":\"\",\"last_reserved_ip\":\"%s\"}}}",
			     entries, last) > 0);
	assert_true(asprintf(&out, "{\"version\":1,\"checksum\":%" PRIu32 "%s", doc_sum(doc),
			     strstr(doc, ",\"pools\"")) > 0);
	free(doc);
	return out;
}

/* One entry of ref_doc(), its pod named @pod (a JSON string's inside). */
static char *ref_entry(const char *cid, const char *addr, const char *pod)
{
	char *e = NULL;

	assert_true(asprintf(&e, "\"%s_net1\":{\"container_id\":\"%s\",\"interface_name\":\"net1\","
				 "\"ip_address\":\"%s\",\"metadata\":{\"create_time\":\"2024-06-14T10:00:00Z\","
				 "\"pod_uuid\":\"\",\"pod_name\":\"%s\",\"pod_namespace\":\"ns\","
				 "\"device_id\":\"\",\"pool_config_snapshot\":\"\"}}",
			     cid, cid, addr, pod) > 0);
	return e;
}

static void handover_ok(const char *path)
{
	struct cni_err err = { 0 };
	uint32_t sum = 0;
	size_t n = 0;

	if (nvipam_store_handover(path, 1000, &n, &sum, &err) < 0)
		fail_msg("handover: %d %s", err.code, err.msg);
}

static enum nvipam_store_adoption adopt_ok(const char *path)
{
	enum nvipam_store_adoption how = NVIPAM_STORE_OURS;
	struct cni_err err = { 0 };
	size_t n = 0;

	if (nvipam_store_adopt(path, 1000, &how, &n, &err) < 0)
		fail_msg("adopt: %d %s", err.code, err.msg);
	return how;
}

/* ---- names that are not UTF-8 (recorded by an older build) ---- */

/*
 * The daemon reads "\ufffd" as U+FFFD and checksums U+FFFD as it is: the handover writes
 * that form, so that the file is the daemon's own re-encoding and its checksum holds.
 */
static void test_handover_not_utf8(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *doc = NULL;
	struct nvipam_alloc a = mk("p", "10.0.0.2", "c1", "net1");
	struct nvipam_store *s;
	const struct nvipam_alloc *got;

	(void)state;
	a.pod_name = "p\xffq";
	a.pod_namespace = "n\xc3";
	a.device_id = "\xed\xa0\x80";
	open_ok(path, &s);
	assert_int_equal(nvipam_store_add(s, &a, true), 0);
	commit_ok(s);
	nvipam_store_close(s);

	handover_ok(path);
	doc = read_all(path, NULL);
	assert_non_null(strstr(doc, "\"pod_name\":\"p\xef\xbf\xbdq\""));
	assert_non_null(strstr(doc, "\"pod_namespace\":\"n\xef\xbf\xbd\""));
	assert_non_null(strstr(doc, "\"device_id\":\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""));
	assert_null(strstr(doc, "\\ufffd"));
	assert_true(text_utf8_valid(doc, strlen(doc)));
	assert_int_equal(strtoull(strstr(doc, "\"checksum\":") + 11, NULL, 10), doc_sum(doc));

	/* Taken back unchanged: resumed from the logs, which keep the bytes as they were. */
	assert_int_equal(adopt_ok(path), NVIPAM_STORE_RESUMED);
	open_ok(path, &s);
	got = nvipam_store_find(s, "p", "c1", "net1");
	assert_non_null(got);
	assert_string_equal(got->pod_name, "p\xffq");
	nvipam_store_close(s);
}

/* The file an older build handed over ("\ufffd", checksummed so) is still read, not code 5. */
static void test_older_handover_readable(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *e = ref_entry("c1", "10.0.0.2", "p\\ufffdq");
	_cleanup_free_ char *doc = ref_doc(e, "10.0.0.2");
	struct nvipam_store *s;
	const struct nvipam_alloc *got;

	(void)state;
	write_all(path, doc, strlen(doc));
	open_ok(path, &s);
	got = nvipam_store_find(s, "p", "c1", "net1");
	assert_non_null(got);
	assert_string_equal(got->pod_name, "p\xef\xbf\xbdq");
	nvipam_store_close(s);

	/* Any other mismatch is still one. */
	doc[strlen(doc) - 5] = '3';
	write_all(path, doc, strlen(doc));
	expect_open_fails(path, CNI_ERR_IO, "checksum mismatch");
}

/* ---- a reference file written after the takeover ---- */

static char *ref_doc3(const char *a, const char *b, const char *c)
{
	char *all = NULL, *doc;

	assert_true(asprintf(&all, "%s%s%s%s%s", a, *b ? "," : "", b, *c ? "," : "", c) > 0);
	doc = ref_doc(all, "10.0.0.9");
	free(all);
	return doc;
}

static void assert_held(struct nvipam_store *s, const char *cid, const char *addr)
{
	const struct nvipam_alloc *a = nvipam_store_find(s, "p", cid, "net1");

	if (!addr) {
		if (a)
			fail_msg("%s still holds an address", cid);
		return;
	}
	if (!a)
		fail_msg("%s holds nothing, expected %s", cid, addr);
	assert_ip(&a->ip, addr);
}

/*
 * The daemon's write lands after the store was taken over: what it added and released
 * since is merged, what nv-ipam did since is kept, and nothing is given twice.
 */
static void test_late_write_merged(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *rec = path_in("store.adopted");
	_cleanup_free_ char *c1 = ref_entry("c1", "10.0.0.2", "pod1");
	_cleanup_free_ char *c2 = ref_entry("c2", "10.0.0.3", "pod2");
	_cleanup_free_ char *d1 = ref_entry("d1", "10.0.0.5", "dpod1");
	_cleanup_free_ char *d2 = ref_entry("d2", "10.0.0.4", "dpod2");
	_cleanup_free_ char *base = ref_doc3(c1, c2, "");
	_cleanup_free_ char *late = NULL, *text = NULL, *recorded = NULL;
	const char *keys[] = { "p", NULL };
	struct nvipam_store *s;

	(void)state;
	/* Taken over by the first ADD's open: recorded as read. */
	write_all(path, base, strlen(base));
	open_pools_ok(path, keys, &s);
	nvipam_store_close(s);
	recorded = read_all(rec, NULL);
	assert_string_equal(recorded, base);

	/* nv-ipam's own work since: c3 added, c2 released. */
	open_ok(path, &s);
	add_ok(s, "p", "10.0.0.4", "c3", "net1", true);
	assert_int_equal(nvipam_store_remove(s, "p", "c2", "net1"), 1);
	commit_ok(s);
	nvipam_store_close(s);

	/* The daemon's late write: it released c1, added d1, and d2 on the address nv-ipam gave c3. */
	late = ref_doc3(c2, d1, d2);
	write_all(path, late, strlen(late));
	open_pools_ok(path, keys, &s);
	nvipam_store_close(s);
	open_ok(path, &s);
	assert_held(s, "c1", NULL);
	assert_held(s, "c2", NULL);
	assert_held(s, "c3", "10.0.0.4");
	assert_held(s, "d1", "10.0.0.5");
	assert_held(s, "d2", NULL);
	assert_int_equal(nvipam_store_count(s), 2);
	nvipam_store_close(s);
	text = read_all(path, NULL);
	assert_non_null(strstr(text, "\"version\":2"));
	free(recorded);
	recorded = read_all(rec, NULL);
	assert_string_equal(recorded, late);

	/* Written again unchanged (the same late file): nothing moves. */
	write_all(path, late, strlen(late));
	assert_int_equal(adopt_ok(path), NVIPAM_STORE_MERGED);
	open_ok(path, &s);
	assert_false(nvipam_store_dirty(s));
	assert_int_equal(nvipam_store_count(s), 2);
	assert_held(s, "d1", "10.0.0.5");
	nvipam_store_close(s);
}

/* Handed over, changed and taken back, then its late write: merged against what was taken. */
static void test_late_write_after_handover(void **state)
{
	_cleanup_free_ char *path = path_in("store");
	_cleanup_free_ char *rec = path_in("store.adopted");
	_cleanup_free_ char *d1 = ref_entry("d1", "10.0.0.5", "dpod1");
	_cleanup_free_ char *doc = NULL, *late = NULL, *recorded = NULL, *cut = NULL, *both = NULL;
	const char *entries;
	struct nvipam_store *s;

	(void)state;
	open_ok(path, &s);
	add_ok(s, "p", "10.0.0.2", "c1", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	handover_ok(path);
	doc = read_all(path, NULL);
	assert_int_equal(adopt_ok(path), NVIPAM_STORE_RESUMED);
	recorded = read_all(rec, NULL);
	assert_string_equal(recorded, doc);

	/* nv-ipam allocates, then the daemon's late write adds d1 to what was handed over. */
	open_ok(path, &s);
	add_ok(s, "p", "10.0.0.3", "c2", "net1", true);
	commit_ok(s);
	nvipam_store_close(s);
	/* The handed-over entries, and d1. */
	entries = strstr(doc, "\"entries\":{") + strlen("\"entries\":{");
	cut = strndup(entries, (size_t)(strstr(entries, "},\"last_pool_config\"") - entries));
	assert_true(asprintf(&both, "%s,%s", cut, d1) > 0);
	late = ref_doc(both, "10.0.0.2");
	write_all(path, late, strlen(late));
	open_ok(path, &s);
	assert_held(s, "c1", "10.0.0.2");
	assert_held(s, "c2", "10.0.0.3");
	assert_held(s, "d1", "10.0.0.5");
	nvipam_store_close(s);

	/* Nothing looked before ipam-node stopped: the handover writes the merge first. */
	handover_ok(path);
	assert_int_equal(adopt_ok(path), NVIPAM_STORE_RESUMED);
	open_ok(path, &s);
	assert_held(s, "d1", "10.0.0.5");
	assert_held(s, "c2", "10.0.0.3");
	assert_int_equal(nvipam_store_count(s), 3);
	nvipam_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_handover_not_utf8, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_older_handover_readable, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_late_write_merged, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_late_write_after_handover, helper_setup,
						helper_teardown),
	};

	return cmocka_run_group_tests(tests, helper_group_setup, helper_group_teardown);
}
