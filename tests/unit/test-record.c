/* Unit tests: common/record, the records plugins keep between ADD and DEL */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cni/conf.h"
#include "common/record/record.h"
#include "common/util/cleanup.h"
#include "common/util/file.h"

static char base[64], dir[128];

static int setup(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/rm-record.XXXXXX");
	if (!mkdtemp(base))
		return -1;
	/* Below a folder of its own, which the first save makes. */
	snprintf(dir, sizeof(dir), "%s/plugin", base);
	return 0;
}

static int teardown(void **state)
{
	char cmd[160];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void put_file(const char *name, const char *text, size_t len)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static bool exists(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void test_names(void **state)
{
	const char *two[] = { "0123abc", "net1" }, *one[] = { "ens1f0" };
	const char *colon[] = { "abc", "a:b" }, *slash[] = { "abc", "a/b" }, *empty[] = { "abc", "" };
	const char *dot[] = { ".." }, *four[] = { "a", "b", "c", "d" };
	char buf[300], big[300];

	(void)state;
	assert_int_equal(record_name(two, 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0123abc:net1");
	assert_int_equal(record_name(one, 1, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "ens1f0");
	assert_int_equal(record_name(colon, 2, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(record_name(slash, 2, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(record_name(empty, 2, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(record_name(dot, 1, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(record_name(four, 4, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(record_name(two, 2, buf, 8), -ENAMETOOLONG);
	memset(big, 'a', RECORD_NAME_MAX - 5);
	big[RECORD_NAME_MAX - 5] = '\0';
	{
		const char *fits[] = { big, "net1" }, *over[] = { big, "net12" };

		assert_int_equal(record_name(fits, 2, buf, sizeof(buf)), 0);
		assert_int_equal(strlen(buf), RECORD_NAME_MAX);
		assert_int_equal(record_name(over, 2, buf, sizeof(buf)), -ENAMETOOLONG);
	}
	/* A name that is not one record_name() gives is refused by every call. */
	assert_int_equal(record_save(dir, "a::tmp.1", "k", 1, ""), -EINVAL);
	assert_int_equal(record_remove(dir, "../x"), -EINVAL);
	{
		char *body;
		unsigned int v;

		assert_int_equal(record_load(dir, "a:b:c:d", "k", 1, 100, &body, &v), -EINVAL);
	}
}

static void test_save_load(void **state)
{
	char *body = NULL, *text = NULL, path[512];
	unsigned int version = 0;
	size_t len;
	struct stat st;

	(void)state;
	assert_int_equal(record_load(dir, "c1:net1", "kind", 1, 4096, &body, &version), -ENOENT);
	assert_int_equal(record_remove(dir, "c1:net1"), 0);
	assert_int_equal(record_save(dir, "c1:net1", "kind", 3, "a 1\nb \\n\n"), 0);
	snprintf(path, sizeof(path), "%s/c1:net1", dir);
	assert_int_equal(file_read(path, 4096, &text, &len), 0);
	assert_string_equal(text, "cni-rdma-plugins kind state 3\na 1\nb \\n\n");
	free(text);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);

	assert_int_equal(record_load(dir, "c1:net1", "kind", 3, 4096, &body, &version), 0);
	assert_string_equal(body, "a 1\nb \\n\n");
	assert_int_equal(version, 3);
	free(body);
	/* A version past what the reader knows, another kind, a file past the bound. */
	assert_int_equal(record_load(dir, "c1:net1", "kind", 2, 4096, &body, &version), -EBADMSG);
	assert_int_equal(record_load(dir, "c1:net1", "other", 3, 4096, &body, &version), -EBADMSG);
	assert_int_equal(record_load(dir, "c1:net1", "kin", 3, 4096, &body, &version), -EBADMSG);
	assert_int_equal(record_load(dir, "c1:net1", "kind", 3, 20, &body, &version), -EBADMSG);
	assert_int_equal(record_remove(dir, "c1:net1"), 0);
	assert_false(exists("c1:net1"));
	assert_int_equal(record_remove(dir, "c1:net1"), 0);
}

static void test_not_records(void **state)
{
	static const char *const bad[] = {
		"",
		"cni-rdma-plugins kind state 0\n",
		"cni-rdma-plugins kind state 01\n",
		"cni-rdma-plugins kind state\n",
		"cni-rdma-plugins kind state 1",
		"cni-rdma-plugins kind state 1x\n",
		"cni-rdma-plugins kind state -1\n",
		"cni-rdma-plugins kind state 99999999999\n",
		"cni-rdma-plugins kindx state 1\n",
		"CNI-rdma-plugins kind state 1\n",
	};
	char *body;
	unsigned int v;

	(void)state;
	assert_int_equal(record_save(dir, "x", "kind", 1, ""), 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		put_file("x", bad[i], strlen(bad[i]));
		if (record_load(dir, "x", "kind", 5, 4096, &body, &v) != -EBADMSG)
			fail_msg("taken: %s", bad[i]);
	}
	put_file("x", "cni-rdma-plugins kind state 1\na\0b\n", 33);
	assert_int_equal(record_load(dir, "x", "kind", 5, 4096, &body, &v), -EBADMSG);
}

/*
 * The bug the temporary names fix: "<name>.tmp.<pid>", the temporary file of
 * interface e's record, was the record of interface "e.tmp.<pid>". Now neither
 * a save nor its sweep of leftovers touches another record.
 */
static void test_temporary_names(void **state)
{
	char other[64], dead_tmp[64], live_tmp[64], peer_tmp[64], own_tmp[64], *body;
	unsigned int v;
	pid_t child = fork();

	(void)state;
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	/* The child's PID names a dead writer; PID 1 a live one. */
	snprintf(other, sizeof(other), "c1:e.tmp.%ld", (long)getpid());
	assert_int_equal(record_save(dir, other, "kind", 1, "other\n"), 0);
	snprintf(dead_tmp, sizeof(dead_tmp), "c1:f::tmp.%ld", (long)child);
	snprintf(live_tmp, sizeof(live_tmp), "c1:g::tmp.1");
	snprintf(peer_tmp, sizeof(peer_tmp), "c2:f::tmp.%ld", (long)child);
	snprintf(own_tmp, sizeof(own_tmp), "c1::tmp.%ld", (long)child);
	put_file(dead_tmp, "x", 1);
	put_file(live_tmp, "x", 1);
	put_file(peer_tmp, "x", 1);
	put_file(own_tmp, "x", 1);
	put_file("c10:f::tmp.1", "x", 1);

	assert_int_equal(record_save(dir, "c1:e", "kind", 1, "mine\n"), 0);
	assert_int_equal(record_load(dir, other, "kind", 1, 4096, &body, &v), 0);
	assert_string_equal(body, "other\n");
	free(body);
	assert_int_equal(record_load(dir, "c1:e", "kind", 1, 4096, &body, &v), 0);
	assert_string_equal(body, "mine\n");
	free(body);
	/* Of the same container and dead: gone. Alive, or another container's: kept. */
	assert_false(exists(dead_tmp));
	assert_false(exists(own_tmp));
	assert_true(exists(live_tmp));
	assert_true(exists(peer_tmp));
	assert_true(exists("c10:f::tmp.1"));
	{
		char tmp[64];

		snprintf(tmp, sizeof(tmp), "c1:e::tmp.%ld", (long)getpid());
		assert_false(exists(tmp));
	}
	/* A DEL (the remove of its last record) takes what a killed save left too. */
	put_file(dead_tmp, "x", 1);
	assert_int_equal(record_remove(dir, "c1:e"), 0);
	assert_false(exists(dead_tmp));
	assert_false(exists("c1:e"));
	assert_true(exists(live_tmp));
	assert_true(exists(other));
}

static void test_folder_rules(void **state)
{
	char link[160], *body;
	unsigned int v;

	(void)state;
	assert_int_equal(record_save(dir, "a", "kind", 1, ""), 0);
	assert_int_equal(chmod(dir, 0770), 0);
	assert_int_equal(record_save(dir, "a", "kind", 1, ""), -EPERM);
	assert_int_equal(record_load(dir, "a", "kind", 1, 100, &body, &v), -EPERM);
	assert_int_equal(chmod(dir, 0700), 0);
	snprintf(link, sizeof(link), "%s/link", base);
	assert_int_equal(symlink(dir, link), 0);
	assert_int_equal(record_save(link, "a", "kind", 1, ""), -ELOOP);
	assert_int_equal(record_load(link, "a", "kind", 1, 100, &body, &v), -ELOOP);
	assert_int_equal(record_save("relative/dir", "a", "kind", 1, ""), -EINVAL);
	assert_int_equal(record_save(dir, "a", "two words", 1, ""), -EINVAL);
	assert_int_equal(record_save(dir, "a", "kind", 0, ""), -EINVAL);
	/* A folder missing: nothing to read or remove. */
	snprintf(link, sizeof(link), "%s/none", base);
	assert_int_equal(record_load(link, "a", "kind", 1, 100, &body, &v), -ENOENT);
	assert_int_equal(record_remove(link, "a"), 0);
}

struct swept {
	char cids[8][32];
	bool elsewhere[8];
	size_t n;
	const char *fail; /* a container whose cleanup fails */
};

static int on_gone(const char *cid, bool elsewhere, void *data)
{
	struct swept *s = data;

	if (s->fail && strcmp(cid, s->fail) == 0)
		return -EIO;
	snprintf(s->cids[s->n], sizeof(s->cids[0]), "%s", cid);
	s->elsewhere[s->n++] = elsewhere;
	return 0;
}

static void test_sweep(void **state)
{
	char a[] = "a", e0[] = "eth0";
	struct cni_attachment valid[] = { { .container_id = a, .ifname = e0 } };
	struct swept s = { 0 };

	(void)state;
	/* No folder yet: nothing to sweep. */
	assert_int_equal(record_sweep(dir, "n1", valid, 1, on_gone, &s), 0);
	assert_int_equal(s.n, 0);
	for (size_t i = 0; i < 6; i++) {
		static const char *const names[] = { "a:n1", "b:n1", "c:n1", "c:n2", "d:n2", "f:n1" };

		/* Markers (empty) and records alike: only their names count. */
		if (i % 2)
			assert_int_equal(record_mark(dir, names[i]), 0);
		else
			assert_int_equal(record_save(dir, names[i], "kind", 1, ""), 0);
	}
	/* A marker made again is left as it is; a name that is no record's is refused. */
	assert_int_equal(record_mark(dir, "b:n1"), 0);
	assert_int_equal(record_mark(dir, "b:n1::tmp.1"), -EINVAL);
	assert_int_equal(record_mark(dir, "../x"), -EINVAL);
	{
		struct stat st;
		char path[512];

		snprintf(path, sizeof(path), "%s/b:n1", dir);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_size, 0);
		assert_int_equal(st.st_mode & 0777, 0600);
	}
	put_file("e:n1::tmp.1", "x", 1);
	s.fail = "f";
	assert_int_equal(record_sweep(dir, "n1", valid, 1, on_gone, &s), -EIO);
	/* Gone: b (only this network's) and c (another network's too); a is valid. */
	assert_int_equal(s.n, 2);
	assert_string_equal(s.cids[0], "b");
	assert_false(s.elsewhere[0]);
	assert_string_equal(s.cids[1], "c");
	assert_true(s.elsewhere[1]);
	assert_false(exists("b:n1"));
	assert_false(exists("c:n1"));
	assert_true(exists("a:n1"));
	assert_true(exists("c:n2"));
	assert_true(exists("d:n2"));
	/* Its cleanup failed: kept for the next GC, which takes it. */
	assert_true(exists("f:n1"));
	assert_true(exists("e:n1::tmp.1"));
	s = (struct swept){ 0 };
	assert_int_equal(record_sweep(dir, "n1", valid, 1, on_gone, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.cids[0], "f");
	assert_false(exists("f:n1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_temporary_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folder_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
