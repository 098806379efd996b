/* Unit tests: common/dbus's messages, built and read (both byte orders, the malformed refused) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/dbus/dbus.h"

/* What godbus sent for the reference firewall's addSource (its header fields in its order). */
static const uint8_t godbus_add_source[] =
	"l\1\0\1\34\0\0\0\3\0\0\0\240\0\0\0"
	"\1\1o\0\35\0\0\0/org/fedoraproject/FirewallD1\0\0\0"
	"\6\1s\0\34\0\0\0org.fedoraproject.FirewallD1\0\0\0\0"
	"\3\1s\0\t\0\0\0addSource\0\0\0\0\0\0\0"
	"\2\1s\0!\0\0\0org.fedoraproject.FirewallD1.zone\0\0\0\0\0\0\0"
	"\10\1g\0\2ss\0"
	"\7\0\0\0trusted\0\v\0\0\00010.1.0.8/32\0";

static void test_build(void **state)
{
	const char *args[] = { "trusted", "10.1.0.8/32" };
	uint8_t buf[512];
	struct dbus_reply r;
	uint32_t reply_to;
	size_t len, total;
	int type;

	(void)state;
	assert_int_equal(dbus_message_build(3, "org.fedoraproject.FirewallD1",
					    "/org/fedoraproject/FirewallD1",
					    "org.fedoraproject.FirewallD1.zone", "addSource", args, 2,
					    buf, sizeof(buf), &len), 0);
	/* The same length, fixed header and body as godbus's (its fields come in another order). */
	assert_int_equal(len, sizeof(godbus_add_source) - 1);
	assert_memory_equal(buf, godbus_add_source, 16);
	assert_memory_equal(buf + len - 28, godbus_add_source + len - 28, 28);
	assert_int_equal(dbus_message_length(buf, &total), 0);
	assert_int_equal(total, len);
	/* Read back as a message: a call, no reply serial, the body's first string. */
	assert_int_equal(dbus_message_parse(buf, len, &type, &reply_to, &r), 0);
	assert_int_equal(type, 1);
	assert_int_equal(reply_to, 0);
	assert_string_equal(r.signature, "ss");
	assert_string_equal(r.text, "trusted");
	/* And godbus's own, read the same way. */
	assert_int_equal(dbus_message_parse(godbus_add_source, sizeof(godbus_add_source) - 1, &type,
					    &reply_to, &r), 0);
	assert_string_equal(r.text, "trusted");
	/* No arguments: no signature field, no body. */
	assert_int_equal(dbus_message_build(1, "org.freedesktop.DBus", "/org/freedesktop/DBus",
					    "org.freedesktop.DBus", "Hello", NULL, 0, buf, sizeof(buf),
					    &len), 0);
	assert_int_equal(buf[4] | buf[5] | buf[6] | buf[7], 0);
	assert_int_equal(len % 8, 0);
	/* Refused: serial 0, a relative path, invalid UTF-8, too many arguments, a short buffer. */
	assert_int_equal(dbus_message_build(0, "a.b", "/", "a.b", "m", NULL, 0, buf, sizeof(buf), &len),
			 -EINVAL);
	assert_int_equal(dbus_message_build(1, "a.b", "x", "a.b", "m", NULL, 0, buf, sizeof(buf), &len),
			 -EINVAL);
	{
		const char *bad[] = { "\xff\xfe" };
		const char *nine[9] = { "a", "a", "a", "a", "a", "a", "a", "a", "a" };

		assert_int_equal(dbus_message_build(1, "a.b", "/", "a.b", "m", bad, 1, buf, sizeof(buf),
						    &len), -EINVAL);
		assert_int_equal(dbus_message_build(1, "a.b", "/", "a.b", "m", nine, 9, buf, sizeof(buf),
						    &len), -EINVAL);
	}
	assert_int_equal(dbus_message_build(1, "a.b", "/", "a.b", "m", args, 2, buf, 40, &len), -E2BIG);
}

/* A reply as firewalld's bus sends one: REPLY_SERIAL, SIGNATURE, an ERROR_NAME for an error. */
static size_t reply(uint8_t *b, bool big, int type, const char *sig, const char *error_name,
		    const uint8_t *body, size_t body_len)
{
	size_t n = 16, fields;

#define U32(at, v)                                                                                 \
	do {                                                                                       \
		uint32_t x_ = (v);                                                                 \
		for (int k_ = 0; k_ < 4; k_++)                                                     \
			b[(at) + k_] = (uint8_t)(x_ >> (big ? 24 - 8 * k_ : 8 * k_));               \
	} while (0)
	memset(b, 0, 512);
	b[0] = big ? 'B' : 'l';
	b[1] = (uint8_t)type;
	b[3] = 1;
	U32(8, 7);
	/* REPLY_SERIAL = 2 */
	b[n] = 5, b[n + 1] = 1, b[n + 2] = 'u', n += 4;
	U32(n, 2);
	n += 4;
	if (error_name) {
		n += (8 - n % 8) % 8;
		b[n] = 4, b[n + 1] = 1, b[n + 2] = 's', n += 4;
		U32(n, (uint32_t)strlen(error_name));
		n += 4;
		memcpy(b + n, error_name, strlen(error_name) + 1);
		n += strlen(error_name) + 1;
	}
	if (sig) {
		n += (8 - n % 8) % 8;
		b[n] = 8, b[n + 1] = 1, b[n + 2] = 'g', b[n + 4] = (uint8_t)strlen(sig);
		memcpy(b + n + 5, sig, strlen(sig) + 1);
		n += 5 + strlen(sig) + 1;
	}
	fields = n - 16;
	U32(12, (uint32_t)fields);
	n += (8 - n % 8) % 8;
	memcpy(b + n, body, body_len);
	U32(4, (uint32_t)body_len);
#undef U32
	return n + body_len;
}

static void test_replies(void **state)
{
	static const uint8_t str_le[] = "\7\0\0\0trusted", str_be[] = "\0\0\0\7trusted",
			     yes_le[] = "\1\0\0\0", msg_le[] = "\x3a\0\0\0ZONE_ALREADY_SET: '10.9.0.5/32' already bound to 'trusted'";
	uint8_t b[512];
	struct dbus_reply r;
	uint32_t reply_to;
	size_t len;
	int type;

	(void)state;
	len = reply(b, false, 2, "s", NULL, str_le, sizeof(str_le));
	assert_int_equal(dbus_message_parse(b, len, &type, &reply_to, &r), 0);
	assert_int_equal(type, 2);
	assert_int_equal(reply_to, 2);
	assert_false(r.is_error);
	assert_string_equal(r.text, "trusted");
	len = reply(b, true, 2, "s", NULL, str_be, sizeof(str_be));
	assert_int_equal(dbus_message_parse(b, len, &type, &reply_to, &r), 0);
	assert_string_equal(r.text, "trusted");
	assert_int_equal(reply_to, 2);
	len = reply(b, false, 2, "b", NULL, yes_le, 4);
	assert_int_equal(dbus_message_parse(b, len, &type, &reply_to, &r), 0);
	assert_true(r.boolean);
	len = reply(b, false, 3, "s", "org.fedoraproject.FirewallD1.Exception", msg_le, sizeof(msg_le));
	assert_int_equal(dbus_message_parse(b, len, &type, &reply_to, &r), 0);
	assert_true(r.is_error);
	assert_string_equal(r.error_name, "org.fedoraproject.FirewallD1.Exception");
	assert_non_null(strstr(r.text, "ZONE_ALREADY_SET"));
	/* Malformed: a boolean of 2, a string past the body, no NUL, a cut message, lengths. */
	len = reply(b, false, 2, "b", NULL, (const uint8_t *)"\2\0\0\0", 4);
	assert_int_equal(dbus_message_parse(b, len, &type, &reply_to, &r), -EBADMSG);
	len = reply(b, false, 2, "s", NULL, (const uint8_t *)"\xff\0\0\0ab", 7);
	assert_int_equal(dbus_message_parse(b, len, &type, &reply_to, &r), -EBADMSG);
	len = reply(b, false, 2, "s", NULL, (const uint8_t *)"\2\0\0\0abc", 7);
	assert_int_equal(dbus_message_parse(b, len, &type, &reply_to, &r), -EBADMSG);
	len = reply(b, false, 2, "s", NULL, str_le, sizeof(str_le));
	assert_int_equal(dbus_message_parse(b, len - 1, &type, &reply_to, &r), -EBADMSG);
	b[0] = 'x';
	assert_int_equal(dbus_message_length(b, &len), -EBADMSG);
	b[0] = 'l';
	b[4] = 0xff, b[5] = 0xff, b[6] = 0xff, b[7] = 0x7f;
	assert_int_equal(dbus_message_length(b, &len), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_replies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
