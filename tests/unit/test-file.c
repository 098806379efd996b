/* Unit tests: bounded whole-file reads */
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
#include <unistd.h>

#include <cmocka.h>

#include "common/util/file.h"

static char dir[] = "/tmp/cni-file-test-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *path_of(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static void write_bytes(const char *name, size_t n)
{
	FILE *f = fopen(path_of(name), "w");

	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fputc('a' + (int)(i % 26), f);
	fclose(f);
}

static void test_sizes(void **state)
{
	char *buf = NULL;
	size_t len = 99;

	(void)state;
	write_bytes("empty", 0);
	assert_int_equal(file_read(path_of("empty"), 10, &buf, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	free(buf);

	/* Exactly at the bound is fine; one byte over is not. Sizes span several reads. */
	write_bytes("at", 100000);
	assert_int_equal(file_read(path_of("at"), 100000, &buf, &len), 0);
	assert_int_equal(len, 100000);
	assert_int_equal(buf[99999], 'a' + 99999 % 26);
	assert_int_equal(buf[100000], '\0');
	free(buf);
	write_bytes("over", 100001);
	buf = NULL;
	assert_int_equal(file_read(path_of("over"), 100000, &buf, &len), -EFBIG);
	assert_null(buf);
}

static void test_not_regular(void **state)
{
	char *buf = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(file_read(path_of("missing"), 10, &buf, &len), -ENOENT);
	assert_int_equal(file_read(dir, 10, &buf, &len), -EISDIR);
	/* A FIFO without a writer would block a plain open and read forever. */
	assert_int_equal(mkfifo(path_of("fifo"), 0600), 0);
	assert_int_equal(file_read(path_of("fifo"), 10, &buf, &len), -EINVAL);
	assert_int_equal(file_read("/dev/zero", 10, &buf, &len), -EINVAL);
	assert_null(buf);
}

static void test_fd_bound(void **state)
{
	int fds[2];
	char *buf = NULL;
	size_t len = 0;

	(void)state;
	/* A stream whose size is unknown in advance: the bound is enforced on what arrives. */
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "0123456789", 10), 10);
	close(fds[1]);
	assert_int_equal(file_read_fd(fds[0], 9, &buf, &len), -EFBIG);
	close(fds[0]);

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "0123456789", 10), 10);
	close(fds[1]);
	assert_int_equal(file_read_fd(fds[0], 10, &buf, &len), 0);
	close(fds[0]);
	assert_int_equal(len, 10);
	assert_string_equal(buf, "0123456789");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_fd_bound),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
