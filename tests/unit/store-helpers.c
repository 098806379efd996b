/* Helpers of the nv-ipam store tests: a private directory per test, files, allocations */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
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

#include "common/cni/trust.h"
#include "common/util/error.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/pool/allocator.h"
#include "tests/unit/store-helpers.h"

char helper_dir[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int helper_group_setup(void **state)
{
	static char path[] = "/tmp/nvipam-store-settings-XXXXXX";
	int fd = mkstemp(path);
	const char *text = "{\"stateDirs\": [\"/tmp\"]}";

	(void)state;
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) < 0)
		return -1;
	return setenv(TRUST_SETTINGS_ENV, path, 1);
}

int helper_group_teardown(void **state)
{
	(void)state;
	return unlink(getenv(TRUST_SETTINGS_ENV));
}

int helper_setup(void **state)
{
	(void)state;
	snprintf(helper_dir, sizeof(helper_dir), "/tmp/nvipam-store-test-XXXXXX");
	return mkdtemp(helper_dir) ? 0 : -1;
}

int helper_teardown(void **state)
{
	(void)state;
	(void)chmod(helper_dir, 0700);
	return nftw(helper_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

char *path_in(const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", helper_dir, name) > 0);
	return p;
}

char *read_all(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *data;
	long n;

	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	data = malloc((size_t)n + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
	data[n] = '\0';
	fclose(f);
	if (ret_len)
		*ret_len = (size_t)n;
	return data;
}

void write_all(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

char *golden(const char *name, size_t *ret_len)
{
	const char *d = getenv("GOLDEN_DIR");
	char *p, *data;

	assert_true(asprintf(&p, "%s/%s", d && *d ? d : "tests/unit/golden", name) > 0);
	data = read_all(p, ret_len);
	free(p);
	return data;
}

bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int count_prefixed(const char *d, const char *prefix)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	assert_non_null(dp);
	while ((e = readdir(dp)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(dp);
	return n;
}

struct ip_addr ip(const char *s)
{
	struct ip_addr a;

	assert_int_equal(ip_addr_parse(s, &a), 0);
	return a;
}

void assert_ip(const struct ip_addr *a, const char *want)
{
	char buf[IP_PREFIX_STRLEN];

	assert_string_equal(ip_addr_format(a, buf, sizeof(buf)), want);
}

struct nvipam_alloc mk(const char *pool, const char *addr, const char *cid, const char *ifname)
{
	return (struct nvipam_alloc){
		.pool = pool,
		.ip = ip(addr),
		.container_id = cid,
		.ifname = ifname,
		.network = "net-a",
		.pod_namespace = "default",
		.pod_name = "pod",
		.pod_uid = "uid",
		.device_id = "",
		.created = T_REF,
	};
}

void open_ok(const char *path, struct nvipam_store **s)
{
	struct cni_err err = { 0 };
	int r = nvipam_store_open(path, true, 1000, s, &err);

	if (r < 0)
		fail_msg("open %s: %d %s", path, err.code, err.msg);
}

void open_pools_ok(const char *path, const char *const *keys, struct nvipam_store **s)
{
	struct cni_err err = { 0 };
	size_t n = 0;
	int r;

	while (keys[n])
		n++;
	r = nvipam_store_open_pools(path, true, 1000, keys, n, s, &err);
	if (r < 0)
		fail_msg("open pools of %s: %d %s", path, err.code, err.msg);
}

void commit_ok(struct nvipam_store *s)
{
	struct cni_err err = { 0 };
	int r = nvipam_store_commit(s, &err);

	if (r < 0)
		fail_msg("commit: %d %s", err.code, err.msg);
	assert_false(nvipam_store_dirty(s));
}

const struct nvipam_store_pool_info *pool_at(const struct nvipam_store *s, size_t i)
{
	static struct nvipam_store_pool_info info;

	if (!nvipam_store_pool_at(s, i, &info))
		fail_msg("the store has no pool record %zu", i);
	return &info;
}

void add_ok(struct nvipam_store *s, const char *pool, const char *addr, const char *cid,
	    const char *ifname, bool rr)
{
	struct nvipam_alloc a = mk(pool, addr, cid, ifname);

	assert_int_equal(nvipam_store_add(s, &a, rr), 0);
}

void expect_open_fails(const char *path, int code, const char *part)
{
	struct nvipam_store *s = NULL;
	struct cni_err err = { 0 };
	int r;

	r = nvipam_store_open(path, false, 0, &s, &err);
	if (r >= 0)
		fail_msg("%s opened, expected \"%s\"", path, part);
	if (err.code != code || !strstr(err.msg, path) || !strstr(err.msg, part))
		fail_msg("want code %d with \"%s\" and the path, got %d \"%s\"", code, part, err.code,
			 err.msg);
	/* Not written on failure. */
	assert_null(s);
}

double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

char **lines_of(const char *path, size_t *ret_n)
{
	char *text = read_all(path, NULL), *save = NULL, **v = NULL;
	size_t n = 0;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		v = realloc(v, (n + 1) * sizeof(*v));
		assert_non_null(v);
		v[n] = strdup(l);
		assert_non_null(v[n++]);
	}
	free(text);
	*ret_n = n;
	return v;
}

void lines_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

char *log_line(const char *fields)
{
	char *line;

	assert_true(asprintf(&line, "%s\t%016" PRIx64 "\n", fields,
			     text_checksum64(fields, strlen(fields))) > 0);
	return line;
}

int usage_of(const struct nvipam_store *s, const char *pool, struct ip_addr **ret_ips,
	     size_t *ret_n, bool *ret_has_last, struct ip_addr *ret_last)
{
	struct nvipam_pool_usage u;
	int r = nvipam_store_usage(s, pool, &u);

	if (r < 0)
		return r;
	*ret_ips = (struct ip_addr *)u.reserved;
	*ret_n = u.n_reserved;
	*ret_has_last = u.has_last;
	*ret_last = u.last_reserved;
	return 0;
}
