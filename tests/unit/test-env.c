/* Unit tests: CNI environment variables per command */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/cni/env.h"
#include "common/util/error.h"

static int reset_env(void **state)
{
	(void)state;
	unsetenv("CNI_COMMAND");
	unsetenv("CNI_NETNS_OVERRIDE");
	setenv("CNI_CONTAINERID", "abc123", 1);
	setenv("CNI_NETNS", "/var/run/netns/x", 1);
	setenv("CNI_IFNAME", "net1", 1);
	setenv("CNI_PATH", "/opt/cni/bin", 1);
	setenv("CNI_ARGS", "", 1);
	return 0;
}

static int load(const char *cmd, struct cni_env *env, struct cni_err *err)
{
	setenv("CNI_COMMAND", cmd, 1);
	return cni_env_load(env, err);
}

static void test_all_commands_with_full_env(void **state)
{
	static const struct {
		const char *name;
		enum cni_command cmd;
	} cmds[] = {
		{ "ADD", CNI_CMD_ADD },       { "DEL", CNI_CMD_DEL },   { "CHECK", CNI_CMD_CHECK },
		{ "VERSION", CNI_CMD_VERSION }, { "STATUS", CNI_CMD_STATUS }, { "GC", CNI_CMD_GC },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct cni_env env;
		struct cni_err err = { 0 };

		assert_int_equal(load(cmds[i].name, &env, &err), 0);
		assert_int_equal(env.command, cmds[i].cmd);
		assert_string_equal(cni_command_name(env.command), cmds[i].name);
		assert_string_equal(env.ifname, "net1");
	}
}

static void test_missing_lists_every_variable(void **state)
{
	struct cni_env env;
	struct cni_err err = { 0 };

	(void)state;
	unsetenv("CNI_NETNS");
	unsetenv("CNI_PATH");
	assert_int_equal(load("ADD", &env, &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_ENV);
	assert_string_equal(err.msg, "required env variables [CNI_NETNS CNI_PATH] missing");
}

static void test_del_without_netns(void **state)
{
	struct cni_env env;
	struct cni_err err = { 0 };

	(void)state;
	unsetenv("CNI_NETNS");
	assert_int_equal(load("DEL", &env, &err), 0);
	assert_string_equal(env.netns, "");
	err = (struct cni_err){ 0 };
	assert_int_equal(load("CHECK", &env, &err), -EINVAL);
	assert_string_equal(err.msg, "required env variables [CNI_NETNS] missing");
}

static void test_gc_status_need_only_path(void **state)
{
	struct cni_env env;
	struct cni_err err = { 0 };

	(void)state;
	/* libcni sets these to empty strings for GC and STATUS. */
	setenv("CNI_CONTAINERID", "", 1);
	setenv("CNI_NETNS", "", 1);
	setenv("CNI_IFNAME", "", 1);
	assert_int_equal(load("GC", &env, &err), 0);
	assert_int_equal(load("STATUS", &env, &err), 0);
	unsetenv("CNI_PATH");
	assert_int_equal(load("STATUS", &env, &err), -EINVAL);
	assert_string_equal(err.msg, "required env variables [CNI_PATH] missing");
}

static void test_unknown_and_absent_command(void **state)
{
	struct cni_env env;
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load("ATTACH", &env, &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_INVALID_ENV);
	assert_string_equal(err.msg, "unknown CNI_COMMAND: ATTACH (one of ADD, DEL, CHECK, STATUS, GC, VERSION)");
	unsetenv("CNI_COMMAND");
	err = (struct cni_err){ 0 };
	assert_int_equal(cni_env_load(&env, &err), 0);
	assert_int_equal(env.command, CNI_CMD_NONE);
}

static void test_container_id(void **state)
{
	static const char *const good[] = { "a", "abc-DEF_1.2", "0123456789abcdef" };
	static const char *const bad[] = { "", "-abc", ".abc", "_a", "a b", "a/b", "a;b", "ä" };
	struct cni_env env;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct cni_err err = { 0 };

		setenv("CNI_CONTAINERID", good[i], 1);
		assert_int_equal(load("ADD", &env, &err), 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cni_err err = { 0 };

		setenv("CNI_CONTAINERID", bad[i], 1);
		assert_int_equal(load("ADD", &env, &err), -EINVAL);
		assert_int_equal(err.code, CNI_ERR_INVALID_ENV);
	}
}

static void test_ifname_rules(void **state)
{
	/* UTF-8 counts in bytes (15 at most); control characters pass, as in the kernel. */
	static const char *const good[] = { "eth0", "net1", "a", "123456789012345", "eth0.100", "a-b_c",
					    "n\xc3\xa9" "t1", "\xe7\xbd\x91\xe5\x8d\xa1", "a\x01" "b" };
	static const char *const bad[] = {
		"", ".", "..", "1234567890123456", "a/b", "a:b", "a b", "a\tb",
		/* Not UTF-8: its allocation would be kept under another name than DEL asks for. */
		"net\xff", "net\xc3", "\xed\xa0\x80" "x", "\xc0\xae" "x",
		/* Space to Go (NEL, NBSP, U+2003, U+3000), and byte 0xa0 to the kernel. */
		"a\xc2\x85" "b", "a\xc2\xa0" "b", "a\xe2\x80\x83" "b", "\xe3\x80\x80" "x", "\xe2\x82\xa0",
		/* 16 bytes in 8 characters. */
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct cni_err err = { 0 };

		assert_int_equal(cni_env_check_ifname(good[i], &err), 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cni_err err = { 0 };

		assert_int_equal(cni_env_check_ifname(bad[i], &err), -EINVAL);
		assert_int_equal(err.code, CNI_ERR_INVALID_ENV);
	}
}

static void test_netns_override(void **state)
{
	struct cni_env env;
	struct cni_err err = { 0 };

	(void)state;
	setenv("CNI_NETNS_OVERRIDE", "true", 1);
	assert_int_equal(load("ADD", &env, &err), 0);
	assert_true(env.netns_override);
	setenv("CNI_NETNS_OVERRIDE", "0", 1);
	assert_int_equal(load("ADD", &env, &err), 0);
	assert_false(env.netns_override);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_all_commands_with_full_env, reset_env),
		cmocka_unit_test_setup(test_missing_lists_every_variable, reset_env),
		cmocka_unit_test_setup(test_del_without_netns, reset_env),
		cmocka_unit_test_setup(test_gc_status_need_only_path, reset_env),
		cmocka_unit_test_setup(test_unknown_and_absent_command, reset_env),
		cmocka_unit_test_setup(test_container_id, reset_env),
		cmocka_unit_test_setup(test_ifname_rules, reset_env),
		cmocka_unit_test_setup(test_netns_override, reset_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
