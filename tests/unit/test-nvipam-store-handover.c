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

#include "common/cni/error.h"
#include "common/util/cleanup.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_handover_not_utf8, helper_setup, helper_teardown),
		cmocka_unit_test_setup_teardown(test_older_handover_readable, helper_setup, helper_teardown),
	};

	return cmocka_run_group_tests(tests, helper_group_setup, helper_group_teardown);
}
