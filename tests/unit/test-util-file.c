/* Unit tests: bounded whole-file reads, atomic replacement */
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

static void test_write_atomic(void **state)
{
	char path[256], tmp[320], sub[300];
	const char *step = NULL;
	char *data = NULL;
	size_t len = 0;
	struct stat st;
	mode_t old_umask;

	(void)state;
	snprintf(path, sizeof(path), "%s/a/b/pools.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());

	/* No directory yet: nothing is created, the step is named. */
	assert_int_equal(file_write_atomic(path, "x", 1, 0600, &step), -ENOENT);
	assert_string_equal(step, "create");
	assert_int_equal(file_make_parents(path, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	assert_int_equal(stat(sub, &st), 0);
	assert_true(S_ISDIR(st.st_mode));

	/* The mode is the one asked for whatever the umask; a stale temporary file is replaced. */
	{
		int fd = open(tmp, O_CREAT | O_WRONLY, 0644);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "old", 3), 3);
		close(fd);
	}
	old_umask = umask(0077);
	assert_int_equal(file_write_atomic(path, "{\"pools\":{}}\n", 13, 0644, &step), 0);
	umask(old_umask);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(file_read(path, 100, &data, &len), 0);
	assert_int_equal(len, 13);
	assert_string_equal(data, "{\"pools\":{}}\n");
	free(data);

	/* Replacing keeps readers of the old file on the old contents. */
	{
		int fd = open(path, O_RDONLY);
		char buf[16] = { 0 };

		assert_true(fd >= 0);
		assert_int_equal(file_write_atomic(path, "new", 3, 0600, &step), 0);
		assert_int_equal(read(fd, buf, sizeof(buf) - 1), 13);
		close(fd);
	}
	assert_int_equal(file_read(path, 100, &data, &len), 0);
	assert_string_equal(data, "new");
	free(data);

	/* A directory in the way of the rename: the file is left as it was, no temporary file. */
	snprintf(sub, sizeof(sub), "%s/a/dir", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/a/dir/x", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/a/dir", dir);
	assert_true(file_write_atomic(sub, "y", 1, 0600, &step) < 0);
	assert_string_equal(step, "rename");
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", sub, (long)getpid());
	assert_int_equal(access(tmp, F_OK), -1);
}

/* The same replacement, the directory left for the caller to sync. */
static void test_replace_at(void **state)
{
	char sub[300], tmp[320];
	const char *step = NULL;
	char *data = NULL;
	size_t len = 0;
	struct stat st;
	int dirfd;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/r", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	dirfd = open(sub, O_RDONLY | O_DIRECTORY);
	assert_true(dirfd >= 0);
	assert_int_equal(file_replace_at(dirfd, "rec", "one", 3, 0600, &step), 0);
	assert_int_equal(file_replace_at(dirfd, "rec", "second", 6, 0640, &step), 0);
	snprintf(sub, sizeof(sub), "%s/r/rec", dir);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_int_equal(file_read(sub, 100, &data, &len), 0);
	assert_string_equal(data, "second");
	free(data);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", sub, (long)getpid());
	assert_int_equal(access(tmp, F_OK), -1);
	/* A name that is a directory: the rename fails, nothing is left. */
	assert_int_equal(mkdirat(dirfd, "d", 0700), 0);
	assert_int_equal(mkdirat(dirfd, "d/x", 0700), 0);
	assert_true(file_replace_at(dirfd, "d", "y", 1, 0600, &step) < 0);
	assert_string_equal(step, "rename");
	assert_int_equal(faccessat(dirfd, "d", F_OK, 0), 0);
	snprintf(tmp, sizeof(tmp), "d.tmp.%ld", (long)getpid());
	assert_int_equal(faccessat(dirfd, tmp, F_OK, 0), -1);
	close(dirfd);
}

/*
 * Only "<name>.tmp.<digits>" goes: the file itself, its lock, longer names that share the
 * prefix and files of other names that hold ".tmp." (a pool may be named "gpu.tmp.a" or
 * "store.tmp.1") stay.
 */
static void test_sweep_temps(void **state)
{
	static const char *const keep[] = { "store", "store.lock", "store.gc", "store.gc.tmp.1",
					     "storex.tmp.1", "store.tmpx", "store.tmp.",
					     "store.tmp.1.log", "store.tmp.x1", "gpu.tmp.a.log",
					     "p.log.tmp.1.lock" };
	static const char *const gone[] = { "store.tmp.1", "store.tmp.99999" };
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	(void)state;
	assert_true(fd >= 0);
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		close(open(path_of(keep[i]), O_CREAT | O_WRONLY, 0600));
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
		close(open(path_of(gone[i]), O_CREAT | O_WRONLY, 0600));
	file_sweep_temps_at(fd, "store");
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		assert_int_equal(access(path_of(keep[i]), F_OK), 0);
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
		assert_int_equal(access(path_of(gone[i]), F_OK), -1);

	/* The counts file beside it has its own temporaries; a second sweep reads from the start. */
	close(open(path_of("store.tmp.2"), O_CREAT | O_WRONLY, 0600));
	file_sweep_temps_at(fd, "store.gc");
	assert_int_equal(access(path_of("store.gc.tmp.1"), F_OK), -1);
	assert_int_equal(access(path_of("store.gc"), F_OK), 0);
	assert_int_equal(access(path_of("store.tmp.2"), F_OK), 0);
	file_sweep_temps_at(fd, "store");
	assert_int_equal(access(path_of("store.tmp.2"), F_OK), -1);
	assert_int_equal(access(path_of("store"), F_OK), 0);

	/* NULL: every file's temporaries, a name without its file included; no other file. */
	close(open(path_of("p.log.tmp.7"), O_CREAT | O_WRONLY, 0600));
	close(open(path_of("p.snap.tmp.8"), O_CREAT | O_WRONLY, 0600));
	close(open(path_of(".tmp.9"), O_CREAT | O_WRONLY, 0600));
	file_sweep_temps_at(fd, NULL);
	assert_int_equal(access(path_of("p.log.tmp.7"), F_OK), -1);
	assert_int_equal(access(path_of("p.snap.tmp.8"), F_OK), -1);
	assert_int_equal(access(path_of("store.gc.tmp.1"), F_OK), -1);
	assert_int_equal(access(path_of("storex.tmp.1"), F_OK), -1);
	assert_int_equal(access(path_of(".tmp.9"), F_OK), 0);
	for (size_t i = 5; i < sizeof(keep) / sizeof(keep[0]); i++)
		assert_int_equal(access(path_of(keep[i]), F_OK), 0);
	assert_int_equal(access(path_of("store.tmpx"), F_OK), 0);
	assert_int_equal(access(path_of("store.gc"), F_OK), 0);
	close(fd);

	/* A descriptor that is not a directory is nothing to do. */
	file_sweep_temps_at(-1, "store");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_fd_bound),
		cmocka_unit_test(test_write_atomic),
		cmocka_unit_test(test_replace_at),
		cmocka_unit_test(test_sweep_temps),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
