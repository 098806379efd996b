/* Unit tests: ipam-controller's election rounds (client-go's rules) and its Lease record */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/util/text.h"
#include "ipam/nv-ipam/controller/election.h"

#define ME "ctrl-a_1111"
#define OTHER "ctrl-b_2222"
#define T0 "2026-11-25T10:00:00.000000Z"
#define T1 "2026-11-25T10:00:20.500000Z"

static struct lease_record held(const char *holder, const char *renew, long transitions)
{
	struct lease_record r = { .duration_s = 15, .transitions = transitions };

	snprintf(r.holder, sizeof(r.holder), "%s", holder);
	snprintf(r.acquire_time, sizeof(r.acquire_time), "%s", T0);
	snprintf(r.renew_time, sizeof(r.renew_time), "%s", renew);
	snprintf(r.resource_version, sizeof(r.resource_version), "4711");
	return r;
}

/* No lease: create it, holding it from now. */
static void test_create(void **state)
{
	struct election_seen seen = { 0 };
	struct lease_record next;

	(void)state;
	assert_int_equal(election_decide(NULL, &seen, ME, 15, 1000, T1, &next), ELECTION_CREATE);
	assert_string_equal(next.holder, ME);
	assert_int_equal(next.duration_s, 15);
	assert_string_equal(next.acquire_time, T1);
	assert_string_equal(next.renew_time, T1);
	assert_int_equal(next.transitions, 0);
	assert_string_equal(next.resource_version, "");
}

/*
 * Another's lease is valid for its duration from when we saw it change, on our clock: a
 * renewal starts the wait again; one that stops is taken over after 15 s, never before.
 */
static void test_take_over_only_after_expiry(void **state)
{
	struct election_seen seen = { 0 };
	struct lease_record other = held(OTHER, T0, 3), next;

	(void)state;
	assert_int_equal(election_decide(&other, &seen, ME, 15, 100000, T1, &next), ELECTION_WAIT);
	assert_int_equal(election_decide(&other, &seen, ME, 15, 114998, T1, &next), ELECTION_WAIT);
	/* Seen renewed at 114.999 s: valid until 129.999 s. */
	snprintf(other.renew_time, sizeof(other.renew_time), "2026-11-25T10:00:14.000000Z");
	assert_int_equal(election_decide(&other, &seen, ME, 15, 114999, T1, &next), ELECTION_WAIT);
	assert_int_equal(election_decide(&other, &seen, ME, 15, 129998, T1, &next), ELECTION_WAIT);
	assert_int_equal(election_decide(&other, &seen, ME, 15, 129999, T1, &next), ELECTION_UPDATE);
	assert_string_equal(next.holder, ME);
	assert_int_equal(next.transitions, 4);
	assert_string_equal(next.acquire_time, T1);
	assert_string_equal(next.resource_version, "4711");
}

/* Our own lease is renewed: acquireTime and transitions kept, renewTime now. */
static void test_renew(void **state)
{
	struct election_seen seen = { 0 };
	struct lease_record mine = held(ME, T0, 7), next;

	(void)state;
	assert_int_equal(election_decide(&mine, &seen, ME, 15, 5000, T1, &next), ELECTION_UPDATE);
	assert_string_equal(next.acquire_time, T0);
	assert_string_equal(next.renew_time, T1);
	assert_int_equal(next.transitions, 7);
	assert_string_equal(next.resource_version, "4711");
}

/* A released lease (no holder) is taken at once; a lease of another's duration counts. */
static void test_released_and_short(void **state)
{
	struct election_seen seen = { 0 };
	struct lease_record released = held("", T0, 2), shorter = held(OTHER, T0, 2), next;

	(void)state;
	assert_int_equal(election_decide(&released, &seen, ME, 15, 1, T1, &next), ELECTION_UPDATE);
	assert_int_equal(next.transitions, 3);
	memset(&seen, 0, sizeof(seen));
	shorter.duration_s = 1;
	assert_int_equal(election_decide(&shorter, &seen, ME, 15, 50000, T1, &next), ELECTION_WAIT);
	assert_int_equal(election_decide(&shorter, &seen, ME, 15, 51000, T1, &next), ELECTION_UPDATE);
	assert_int_equal(next.duration_s, 15);
}

/* The Lease object written and read back; what is no Lease refused. */
static void test_lease_json(void **state)
{
	struct lease_record rec = held(ME, T1, 5), back;
	struct json_object *o = NULL, *v, *spec;

	(void)state;
	assert_int_equal(election_lease_json(&rec, "nvidia-network-operator", ELECTION_LEASE_NAME, &o), 0);
	assert_true(json_object_object_get_ex(o, "kind", &v));
	assert_string_equal(json_object_get_string(v), "Lease");
	assert_true(json_object_object_get_ex(o, "apiVersion", &v));
	assert_string_equal(json_object_get_string(v), "coordination.k8s.io/v1");
	assert_true(json_object_object_get_ex(o, "spec", &spec));
	assert_true(json_object_object_get_ex(spec, "leaseDurationSeconds", &v));
	assert_int_equal(json_object_get_int(v), 15);
	assert_int_equal(election_lease_parse(o, &back), 0);
	assert_string_equal(back.holder, ME);
	assert_string_equal(back.acquire_time, T0);
	assert_string_equal(back.renew_time, T1);
	assert_int_equal(back.transitions, 5);
	assert_string_equal(back.resource_version, "4711");
	json_object_put(o);
	o = json_tokener_parse("{\"spec\":[]}");
	assert_int_equal(election_lease_parse(o, &back), -EINVAL);
	json_object_put(o);
	o = json_tokener_parse("{\"spec\":{\"holderIdentity\":7}}");
	assert_int_equal(election_lease_parse(o, &back), -EINVAL);
	json_object_put(o);
}

static void test_identity(void **state)
{
	char a[256], b[256];

	(void)state;
	assert_int_equal(election_identity(a, sizeof(a)), 0);
	assert_int_equal(election_identity(b, sizeof(b)), 0);
	assert_string_not_equal(a, b);
	/* hostname_xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx */
	assert_non_null(strchr(a, '_'));
	assert_int_equal(strlen(strrchr(a, '_') + 1), 36);
	assert_int_equal(strrchr(a, '_')[15], '4');
}

/*
 * A host name that is not UTF-8 (a UTS namespace allows any bytes): each invalid byte and
 * control character is one '_', always the same; what is valid, multibyte too, is kept.
 */
static void test_identity_host_bytes(void **state)
{
	static const unsigned char u[16] = { 0xde, 0xad, 0xbe, 0xef, 0, 1, 0xff, 3,
					     0xff, 5, 6, 7, 8, 9, 10, 11 };
	static const char uuid[] = "_deadbeef-0001-4f03-bf05-060708090a0b";
	static const struct { const char *host, *want; } cases[] = {
		{ "ctrl-7d9f", "ctrl-7d9f" },
		{ "", "" },
		{ "a\xff\xfe" "b", "a__b" },
		{ "\xff\xfe", "__" },
		{ "tab\there\x7f", "tab_here_" },
		{ "c1\xc2\x85", "c1_" },               /* U+0085, a C1 control */
		{ "gr\xc3\xbc\xc3\x9f" "e", "gr\xc3\xbc\xc3\x9f" "e" },
		{ "cut\xe2\x82", "cut__" },            /* a sequence cut short */
		{ "over\xc0\xaf", "over__" },          /* an overlong '/' */
		{ "sur\xed\xa0\x80", "sur___" },       /* a surrogate */
	};
	char a[ELECTION_IDENTITY_MAX + 1], b[ELECTION_IDENTITY_MAX + 1], want[ELECTION_IDENTITY_MAX + 1];
	char host[300];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(want, sizeof(want), "%s%s", cases[i].want, uuid);
		assert_int_equal(election_identity_make(cases[i].host, u, a, sizeof(a)), 0);
		assert_string_equal(a, want);
		assert_true(text_utf8_valid(a, strlen(a)));
		assert_int_equal(election_identity_make(cases[i].host, u, b, sizeof(b)), 0);
		assert_string_equal(a, b);
	}
	/* Bounded: 64 bytes of the host at most, so within an Event's reportingInstance. */
	memset(host, 'h', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	assert_int_equal(election_identity_make(host, u, a, sizeof(a)), 0);
	assert_int_equal(strlen(a), ELECTION_IDENTITY_MAX);
	assert_true(ELECTION_IDENTITY_MAX <= 128);
	assert_int_equal(strspn(a, "h"), ELECTION_IDENTITY_HOST_MAX);
	assert_string_equal(a + ELECTION_IDENTITY_HOST_MAX, uuid);
	/* A two-byte character across the bound: its first byte alone is invalid. */
	host[ELECTION_IDENTITY_HOST_MAX - 1] = '\xc3';
	host[ELECTION_IDENTITY_HOST_MAX] = '\xbc';
	assert_int_equal(election_identity_make(host, u, a, sizeof(a)), 0);
	assert_int_equal(a[ELECTION_IDENTITY_HOST_MAX - 1], '_');
	assert_true(text_utf8_valid(a, strlen(a)));
	assert_int_equal(election_identity_make("h", u, a, ELECTION_IDENTITY_MAX), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_take_over_only_after_expiry),
		cmocka_unit_test(test_renew),
		cmocka_unit_test(test_released_and_short),
		cmocka_unit_test(test_lease_json),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_identity_host_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
