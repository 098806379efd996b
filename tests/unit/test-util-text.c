/* Unit tests: escaping and unescaping, JSON strings, checksums, RFC 3339 times */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/util/rfc3339.h"
#include "common/util/text.h"

/* Escaped by text_buf_put_escaped(), unescaped in place: the same bytes again. */
static void round_trip(const char *s, size_t n)
{
	struct text_buf b = { 0 };
	size_t len = 0;

	text_buf_put_escaped(&b, s, n);
	assert_false(b.oom);
	/* No tab or newline survives: a field never spills into the next. */
	assert_null(memchr(b.data, '\t', b.len));
	assert_null(memchr(b.data, '\n', b.len));
	assert_int_equal(text_unescape(b.data, b.len, &len), 0);
	assert_int_equal(len, n);
	assert_memory_equal(b.data, s, n);
	text_buf_free(&b);
}

static void test_escape_round_trip(void **state)
{
	static const char *const cases[] = {
		"",
		"plain-container_id.0123",
		"tab\there\nnewline\rreturn\\backslash",
		"\x01\x1f\x7f ctl",
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		"\xc2\x85 C1 \xc2\x9b CSI",
		"bad \xff\xfe \xc3( \xed\xa0\x80 \xf4\x90\x80\x80 end\xc3",
	};
	char all[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		round_trip(cases[i], strlen(cases[i]));
	/* Every byte but NUL, in one string. */
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	round_trip(all, 255);
}

static void test_unescape_refuses(void **state)
{
	static const char *const bad[] = {
		"\\", "a\\q", "\\x", "\\x0", "\\x00", "\\xg0", "\\u12", "\\u0000", "\\ud800",
		"raw\ttab", "raw\x01", "raw\x7f", "raw\xff", "\xc3",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[32];
		size_t len;

		snprintf(buf, sizeof(buf), "%s", bad[i]);
		if (text_unescape(buf, strlen(buf), &len) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
	}
}

static void test_unescape_forms(void **state)
{
	char s[] = "a\\u00e9\\x41\\u20ac\\\\";
	size_t len;

	(void)state;
	assert_int_equal(text_unescape(s, strlen(s), &len), 0);
	assert_int_equal(len, 8);
	assert_string_equal(s, "a\xc3\xa9" "A\xe2\x82\xac\\");
}

static void test_json_str(void **state)
{
	struct text_buf b = { 0 };

	(void)state;
	text_buf_put_json_str(&b, "a\"b\\c\n<&>\x01\xff\xe2\x80\xa8", TEXT_JSON_PLAIN);
	text_buf_putc(&b, ' ');
	text_buf_put_json_str(&b, "a\"b\\c\n<&>\x01\xff\xe2\x80\xa8", TEXT_JSON_GO);
	text_buf_putc(&b, '\0');
	assert_false(b.oom);
	assert_string_equal(b.data, "\"a\\\"b\\\\c\\n<&>\\u0001\\ufffd\xe2\x80\xa8\" "
				    "\"a\\\"b\\\\c\\n\\u003c\\u0026\\u003e\\u0001\\ufffd\\u2028\"");
	text_buf_free(&b);
}

static void test_hashes(void **state)
{
	const char *s = "The quick brown fox jumps over the lazy dog";
	char t[64];

	(void)state;
	/* The published FNV-1a values: the reference daemon's checksum is FNV-1a-32. */
	assert_int_equal(text_hash32("", 0, TEXT_HASH32_INIT), 0x811c9dc5u);
	assert_int_equal(text_hash32("a", 1, TEXT_HASH32_INIT), 0xe40c292cu);
	assert_int_equal(text_hash32("foobar", 6, TEXT_HASH32_INIT), 0xbf9cf968u);
	/* The checksum sees every byte and the length, wherever it is in a word. */
	snprintf(t, sizeof(t), "%s", s);
	for (size_t i = 0; i < strlen(s); i++) {
		uint64_t before = text_checksum64(t, strlen(s));

		t[i] ^= 0x10;
		assert_true(text_checksum64(t, strlen(s)) != before);
		t[i] ^= 0x10;
		assert_int_equal(text_checksum64(t, strlen(s)), before);
	}
	assert_true(text_checksum64(s, 8) != text_checksum64(s, 9));
	assert_true(text_checksum64("", 0) != text_checksum64("\0", 1));
}

static void test_rfc3339(void **state)
{
	static const struct {
		const char *text;
		time_t want;
	} ok[] = {
		{ "2024-06-14T10:00:00Z", 1718359200 },
		{ "2024-06-14T10:00:00.123456789Z", 1718359200 },
		{ "2024-06-14T12:30:00+02:30", 1718359200 },
		{ "2024-06-14T07:00:00-03:00", 1718359200 },
		{ "2024-02-29T00:00:00Z", 1709164800 },
		{ "1969-12-31T23:59:59Z", 0 },
	};
	static const char *const bad[] = {
		"2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2024-06-14 10:00:00Z",
		"2024-06-14T10:00:00", "2024-06-14T10:00:00.Z", "2024-06-14T24:00:00Z",
		"2024-06-14T10:00:00+24:00", "2024-06-14T10:00:00Zx", "",
	};
	static const long long times[] = {
		0, 59, 86399, 86400, 951782400, 951868800, 1718359200, 1709164800,
		4107542400LL, 4107456000LL, 253402300799LL, 1234567890,
	};
	char buf[RFC3339_STRLEN], want[32];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		time_t t = -1;

		assert_int_equal(rfc3339_parse(ok[i].text, &t), 0);
		if (t != ok[i].want)
			fail_msg("%s: got %lld", ok[i].text, (long long)t);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		time_t t;

		if (rfc3339_parse(bad[i], &t) == 0)
			fail_msg("accepted \"%s\"", bad[i]);
	}
	/* Written by hand: checked against libc over a range of dates, and read back. */
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		time_t t = (time_t)times[i], back;
		struct tm tm;

		assert_non_null(gmtime_r(&t, &tm));
		strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%SZ", &tm);
		assert_string_equal(rfc3339_format(t, buf), want);
		assert_int_equal(rfc3339_parse(buf, &back), 0);
		assert_int_equal(back, t);
	}
	/* Clamped to what four year digits can say. */
	assert_string_equal(rfc3339_format(-5, buf), "1970-01-01T00:00:00Z");
	assert_string_equal(rfc3339_format(RFC3339_MAX + 1000, buf), "9999-12-31T23:59:59Z");
}

/* Misspellings of a key: a letter dropped, changed, added, two swapped; case aside. */
static void test_near(void **state)
{
	(void)state;
	assert_true(text_near("mastr", "master", 2));
	assert_true(text_near("poolNmae", "poolName", 1));
	assert_true(text_near("poolname", "poolName", 0));
	assert_true(text_near("masterr", "master", 1));
	assert_true(text_near("mester", "master", 1));
	assert_false(text_near("mode", "master", 2));
	assert_false(text_near("poolType", "poolName", 2));
	assert_false(text_near("", "master", 2));
	assert_false(text_near("ab", "ba", 0));
	assert_true(text_near("ab", "ba", 1));
	assert_false(text_near("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
			       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 2));
}

/* The distance itself, each kind of edit counted once, and the bound. */
static void test_distance(void **state)
{
	(void)state;
	assert_int_equal(text_distance("sysctl", "sysctl", 2), 0);
	assert_int_equal(text_distance("SYSCTL", "sysctl", 2), 0);
	assert_int_equal(text_distance("sysctls", "sysctl", 2), 1);     /* added */
	assert_int_equal(text_distance("poolTyp", "poolType", 2), 1);   /* dropped */
	assert_int_equal(text_distance("tabel", "table", 2), 1);        /* swapped */
	assert_int_equal(text_distance("gatewys", "gateways", 2), 1);
	assert_int_equal(text_distance("mester", "master", 2), 1);      /* changed */
	assert_int_equal(text_distance("addSourceHint", "addSourceHints", 2), 1);
	assert_int_equal(text_distance("mstr", "master", 2), 2);
	assert_int_equal(text_distance("mtu", "mac", 2), 2);
	assert_int_equal(text_distance("ca", "abc", 3), 3);             /* a swap is not edited again */
	/* Beyond the bound: bound + 1, whatever the distance. */
	assert_int_equal(text_distance("mode", "master", 2), 3);
	assert_int_equal(text_distance("x", "abcdef", 2), 3);
	assert_int_equal(text_distance("mtu", "mac", 1), 2);
	assert_int_equal(text_distance("", "", 0), 0);
	assert_int_equal(text_distance("", "ab", 2), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_round_trip),
		cmocka_unit_test(test_unescape_refuses),
		cmocka_unit_test(test_unescape_forms),
		cmocka_unit_test(test_json_str),
		cmocka_unit_test(test_hashes),
		cmocka_unit_test(test_rfc3339),
		cmocka_unit_test(test_near),
		cmocka_unit_test(test_distance),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
