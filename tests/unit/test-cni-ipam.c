/* Unit tests: IPAM delegation against fake IPAM plugins (scripts in a temp dir) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cni/conf.h"
#include "common/cni/ipam-internal.h"
#include "common/cni/ipam.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/util/error.h"

static char dir[] = "/tmp/cni-ipam-test-XXXXXX";

static void write_plugin(const char *name, const char *body)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

static int setup(void **state)
{
	char body[512];

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(body, sizeof(body),
		 "cat > %s/stdin.seen; echo \"$CNI_COMMAND $CNI_CONTAINERID\" > %s/env.seen\n"
		 "echo '{\"cniVersion\":\"0.4.0\",\"ips\":[{\"version\":\"4\",\"address\":\"10.9.0.7/24\","
		 "\"gateway\":\"10.9.0.1\"}],\"routes\":[{\"dst\":\"0.0.0.0/0\"}],\"dns\":{}}'",
		 dir, dir);
	write_plugin("goodipam", body);
	write_plugin("failipam", "echo '{\"code\":11,\"msg\":\"pool busy\",\"details\":\"retry\"}'; exit 1");
	write_plugin("crashipam", "echo 'panic: oops'; exit 2");
	snprintf(body, sizeof(body),
		 "echo \"$CNI_COMMAND\" >> %s/garbage.log; [ \"$CNI_COMMAND\" = DEL ] || echo 'not json'",
		 dir);
	write_plugin("garbageipam", body);
	write_plugin("earlyexit", "exit 0");
	/* More than the 1 MiB an IPAM answer may be; DEL is recorded. */
	snprintf(body, sizeof(body),
		 "echo \"$CNI_COMMAND\" >> %s/big.log; [ \"$CNI_COMMAND\" = DEL ] && exit 0\n"
		 "head -c 2000000 /dev/zero | tr '\\\\0' x; echo finished >> %s/big.log",
		 dir, dir);
	write_plugin("bigipam", body);
	write_plugin("endless", "[ \"$CNI_COMMAND\" = DEL ] && exit 0; exec yes");
	/* Records its pid, then would commit long after its parent is gone. */
	snprintf(body, sizeof(body),
		 "[ \"$CNI_COMMAND\" = DEL ] && exit 0; echo $$ > %s/slow.pid.tmp\n"
		 "mv %s/slow.pid.tmp %s/slow.pid; for i in $(seq 10); do sleep 0.1; done\n"
		 "echo committed > %s/slow.log",
		 dir, dir, dir, dir);
	write_plugin("slowipam", body);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int run(const char *type, enum cni_command cmd, struct cni_result *res, struct cni_err *err)
{
	char json[256];
	struct cni_ctx ctx = { .env = { .container_id = "ctr1", .path = dir } };
	int r;

	setenv("CNI_COMMAND", "ADD", 1);
	setenv("CNI_CONTAINERID", "ctr1", 1);
	snprintf(json, sizeof(json), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"ipam\":{\"type\":\"%s\"}}",
		 type);
	r = cni_conf_parse(json, strlen(json), &ctx.conf, err);
	assert_int_equal(r, 0);
	r = cni_ipam_run(&ctx, cmd, res, err);
	cni_conf_free(&ctx.conf);
	return r;
}

/* What a fake plugin wrote into a file of the temp dir. */
static const char *read_seen(const char *name, char *buf, size_t size)
{
	char path[256];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void test_add_result_and_stdin(void **state)
{
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };
	char seen[256];

	(void)state;
	assert_int_equal(run("goodipam", CNI_CMD_ADD, &res, &err), 0);
	assert_int_equal(res.n_ips, 1);
	assert_int_equal(res.n_routes, 1);
	assert_true(res.ips[0].has_gateway);
	assert_string_equal(res.cni_version, "0.4.0");
	cni_result_free(&res);

	assert_string_equal(read_seen("stdin.seen", seen, sizeof(seen)),
			    "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"ipam\":{\"type\":\"goodipam\"}}");

	assert_int_equal(run("goodipam", CNI_CMD_DEL, NULL, &err), 0);
	assert_string_equal(read_seen("env.seen", seen, sizeof(seen)), "DEL ctr1\n");
}

static void test_error_passed_through(void **state)
{
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };

	(void)state;
	assert_true(run("failipam", CNI_CMD_ADD, &res, &err) < 0);
	assert_int_equal(err.code, 11);
	assert_string_equal(err.msg, "pool busy");
	assert_string_equal(err.details, "retry");
}

static void test_broken_plugins(void **state)
{
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };
	char seen[64];

	(void)state;
	assert_true(run("crashipam", CNI_CMD_ADD, &res, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_IPAM);
	assert_non_null(strstr(err.msg, "exit status 2"));
	assert_non_null(strstr(err.details, "panic: oops"));

	err = (struct cni_err){ 0 };
	assert_true(run("garbageipam", CNI_CMD_ADD, &res, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_IPAM);
	assert_non_null(strstr(err.msg, "unusable result"));
	/* It exited 0, so it may hold an address: ADD is followed by a DEL. */
	assert_string_equal(read_seen("garbage.log", seen, sizeof(seen)), "ADD\nDEL\n");

	err = (struct cni_err){ 0 };
	assert_true(run("earlyexit", CNI_CMD_ADD, &res, &err) < 0);
	assert_int_equal(err.code, CNI_ERR_IPAM);
	err = (struct cni_err){ 0 };
	assert_int_equal(run("earlyexit", CNI_CMD_DEL, NULL, &err), 0);
}

static void expect_no_child_left(void)
{
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void test_oversized_reply(void **state)
{
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };
	char seen[64];

	(void)state;
	/* A hang here is the bug: the alarm turns it into a failure. */
	alarm(20);
	assert_int_equal(run("bigipam", CNI_CMD_ADD, &res, &err), -EFBIG);
	assert_int_equal(err.code, CNI_ERR_IPAM);
	assert_non_null(strstr(err.msg, "printed more than 1048576 bytes"));
	/* Stopped before it finished, then released with DEL. */
	assert_string_equal(read_seen("big.log", seen, sizeof(seen)), "ADD\nDEL\n");
	expect_no_child_left();

	err = (struct cni_err){ 0 };
	assert_int_equal(run("endless", CNI_CMD_ADD, &res, &err), -EFBIG);
	assert_int_equal(err.code, CNI_ERR_IPAM);
	expect_no_child_left();
	alarm(0);
}

static bool file_exists(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void test_child_dies_with_parent(void **state)
{
	char seen[32];
	pid_t plugin, ipam;
	int status;

	(void)state;
	plugin = fork();
	assert_true(plugin >= 0);
	if (plugin == 0) {
		struct cni_result res = { 0 };
		struct cni_err err = { 0 };

		(void)run("slowipam", CNI_CMD_ADD, &res, &err);
		_exit(0);
	}
	/* Hang guards, the waits below: 20 s for what takes milliseconds. */
	for (int i = 0; i < 2000 && !file_exists("slow.pid"); i++)
		usleep(10000);
	ipam = (pid_t)atoi(read_seen("slow.pid", seen, sizeof(seen)));
	assert_true(ipam > 0);
	/* The runtime's timeout kills the plugin: its IPAM plugin goes with it. */
	assert_int_equal(kill(plugin, SIGKILL), 0);
	assert_int_equal(waitpid(plugin, &status, 0), plugin);
	for (int i = 0; i < 2000 && kill(ipam, 0) == 0; i++)
		usleep(10000);
	assert_int_equal(kill(ipam, 0), -1);
	assert_int_equal(errno, ESRCH);
	/* Its loop would have ended by now. */
	sleep(2);
	assert_false(file_exists("slow.log"));
}

static void test_find(void **state)
{
	struct cni_err err = { 0 };
	char *path = NULL;
	char list[300];

	(void)state;
	snprintf(list, sizeof(list), "/nonexistent::%s", dir);
	assert_int_equal(cni_ipam_find("goodipam", list, &path, &err), 0);
	assert_non_null(strstr(path, "/goodipam"));
	free(path);
	assert_int_equal(cni_ipam_find("missing", list, &path, &err), -ENOENT);
	assert_int_equal(err.code, CNI_ERR_IPAM);
	assert_non_null(strstr(err.msg, "failed to find plugin \"missing\""));
	static const char *const bad[] = { "../goodipam", "a/b", "..", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = (struct cni_err){ 0 };
		assert_int_equal(cni_ipam_find(bad[i], list, &path, &err), -EINVAL);
		assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	}
	/* A directory of that name is not a plugin. */
	err = (struct cni_err){ 0 };
	assert_int_equal(cni_ipam_find("tmp", "/", &path, &err), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_result_and_stdin),
		cmocka_unit_test(test_error_passed_through),
		cmocka_unit_test(test_broken_plugins),
		cmocka_unit_test(test_oversized_reply),
		cmocka_unit_test(test_child_dies_with_parent),
		cmocka_unit_test(test_find),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
