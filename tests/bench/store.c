/*
 * Benchmark of the nv-ipam store alone, in process: what an ADD costs the store with
 * 0, 100, 1000, 10000 live allocations in its pool (open the pool, find, usage, add,
 * commit), a pool opened from its snapshot or its whole log, and migrating the reference
 * daemon's store (json-c reading it). Figures are printed, not asserted.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util/error.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/pool/allocator.h"
#include "ipam/nv-ipam/store/migrate.h"
#include "ipam/nv-ipam/store/store.h"

#define RUNS 40

static const char pool[] = "cidrpool/bench";

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static void die(const char *what, const struct cni_err *err)
{
	fprintf(stderr, "bench-store: %s: %s\n", what, err ? err->msg : strerror(errno));
	exit(1);
}

static struct nvipam_alloc alloc_n(unsigned int i, char *cid, char *addr, char *pod)
{
	struct nvipam_alloc a = {
		.pool = pool,
		.container_id = cid,
		.ifname = "net1",
		.network = "rail0",
		.pod_namespace = "tenant-namespace",
		.pod_name = pod,
		.pod_uid = "aaf0a0fc-9869-41ef-9214-48599f85b4fa",
		.device_id = "0000:3b:00.2",
		.created = 1718359200 + (time_t)i,
	};

	snprintf(cid, 65, "%064x", i * 2654435761u);
	snprintf(addr, 32, "10.%u.%u.%u", i >> 16, (i >> 8) & 255, i & 255);
	snprintf(pod, 64, "workload-%u-7f9c8d6b5-x2x4z", i);
	if (ip_addr_parse(addr, &a.ip) < 0)
		die("address", NULL);
	return a;
}

/* A store with @n allocations in the pool, written in one commit. */
static void fill(const char *path, unsigned int n)
{
	struct nvipam_store *s;
	struct cni_err err = { 0 };

	if (nvipam_store_open(path, false, 1000, &s, &err) < 0)
		die("open", &err);
	for (unsigned int i = 0; i < n; i++) {
		char cid[65], addr[32], podname[64];
		struct nvipam_alloc a = alloc_n(i, cid, addr, podname);

		if (nvipam_store_add(s, &a, true) < 0)
			die("add", NULL);
	}
	/* An empty pool exists too. */
	if (!n) {
		char cid[65], addr[32], podname[64];
		struct nvipam_alloc a = alloc_n(0, cid, addr, podname);

		if (nvipam_store_add(s, &a, true) < 0 || nvipam_store_commit(s, &err) < 0)
			die("add", &err);
		(void)nvipam_store_remove(s, pool, cid, "net1");
	}
	if (nvipam_store_commit(s, &err) < 0)
		die("commit", &err);
	nvipam_store_close(s);
}

/* What an ADD asks of the store, and the same for its DEL; Return: ms of the ADD. */
static double add_and_del(const char *path, unsigned int i, double *open_ms)
{
	const char *keys[] = { pool };
	char cid[65], addr[32], podname[64];
	struct nvipam_alloc a = alloc_n(i, cid, addr, podname);
	struct nvipam_pool_usage usage;
	struct nvipam_store *s;
	struct cni_err err = { 0 };
	size_t n;
	double t0 = now_ms(), t1;

	if (nvipam_store_open_pools(path, false, 1000, keys, 1, &s, &err) < 0)
		die("open pools", &err);
	*open_ms = now_ms() - t0;
	if (nvipam_store_find(s, pool, cid, "net1") ||
	    nvipam_store_usage_lookup(s, pool, &usage) < 0)
		die("find", NULL);
	nvipam_store_usage_free(&usage);
	if (nvipam_store_add(s, &a, true) < 0 || nvipam_store_commit(s, &err) < 0)
		die("add", &err);
	nvipam_store_close(s);
	t1 = now_ms() - t0;
	if (nvipam_store_release(path, false, 1000, cid, "net1", 0, &n, &err) < 0 || n != 1)
		die("release", &err);
	return t1;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void sweep(void)
{
	static const unsigned int sizes[] = { 0, 100, 1000, 10000 };
	char dir[] = "/tmp/bench-store-XXXXXX", path[64], snap[96];

	printf("store work of an ADD (open the pool, find, usage, add, commit: one line appended and\n"
	       "synced), median of %d, with LIVE allocations in the pool; the same opening without\n"
	       "the pool's snapshot (the whole log read)\n\n", RUNS);
	printf("%7s %14s %14s %18s\n", "live", "ADD ms", "open ms", "open, no snap ms");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		double add[RUNS], open[RUNS], open_log[RUNS];

		if (!mkdtemp(dir))
			die("mkdtemp", NULL);
		snprintf(path, sizeof(path), "%s/store", dir);
		snprintf(snap, sizeof(snap), "%s/store.d/cidrpool%%2Fbench.snap", dir);
		fill(path, sizes[k]);
		for (int i = 0; i < RUNS; i++)
			add[i] = add_and_del(path, 100000 + (unsigned int)i, &open[i]);
		for (int i = 0; i < RUNS; i++) {
			(void)unlink(snap);
			(void)add_and_del(path, 200000 + (unsigned int)i, &open_log[i]);
		}
		printf("%7u %14.3f %14.3f %18.3f\n", sizes[k], median(add, RUNS), median(open, RUNS),
		       median(open_log, RUNS));
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		strcpy(dir, "/tmp/bench-store-XXXXXX");
	}
}

static int cmp_cid(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The reference daemon's store of 10000 allocations as it writes it: Go's marshalling
 * (map keys sorted) with the checksum of itself with "checksum":0.
 */
static char *reference_store(size_t *ret_len)
{
	static char cids[10000][65];
	char *sorted[10000], sum[16], *doc, *at;
	struct text_buf b = { 0 };

	for (unsigned int i = 0; i < 10000; i++) {
		char addr[32], podname[64];

		(void)alloc_n(i, cids[i], addr, podname);
		sorted[i] = cids[i];
	}
	qsort(sorted, 10000, sizeof(*sorted), cmp_cid);
	text_buf_puts(&b, "{\"version\":1,\"checksum\":0,\"pools\":{\"cidrpool/bench\":{\"name\":\"bench\","
			  "\"entries\":{");
	for (unsigned int k = 0; k < 10000; k++) {
		unsigned int i = (unsigned int)(((char (*)[65])sorted[k]) - cids);
		char cid[65], addr[32], podname[64], line[640];

		(void)alloc_n(i, cid, addr, podname);
		snprintf(line, sizeof(line), "%s\"%s_net1\":{\"container_id\":\"%s\",\"interface_name\":"
			 "\"net1\",\"ip_address\":\"%s\",\"metadata\":{\"create_time\":\"2024-06-14T10:00:00Z\","
			 "\"pod_uuid\":\"aaf0a0fc-9869-41ef-9214-48599f85b4fa\",\"pod_name\":\"%s\","
			 "\"pod_namespace\":\"tenant-namespace\",\"device_id\":\"0000:3b:00.2\","
			 "\"pool_config_snapshot\":\"\"}}", k ? "," : "", cid, cid, addr, podname);
		text_buf_puts(&b, line);
	}
	text_buf_puts(&b, "},\"last_pool_config\":\"\",\"last_reserved_ip\":\"10.0.39.15\"}}}");
	if (b.oom)
		die("out of memory", NULL);
	snprintf(sum, sizeof(sum), "%u", (unsigned int)text_hash32(b.data, b.len, TEXT_HASH32_INIT));
	at = strstr(b.data, "\"checksum\":0,") + strlen("\"checksum\":");
	if (asprintf(&doc, "%.*s%s%s", (int)(at - b.data), b.data, sum, at + 1) < 0)
		die("out of memory", NULL);
	*ret_len = strlen(doc);
	text_buf_free(&b);
	return doc;
}

/* Migration: json-c reads the daemon's store once; what that costs at 10000 allocations. */
static void migration(void)
{
	struct store_legacy l;
	enum store_file_kind kind;
	struct cni_err why = { 0 };
	double t[RUNS / 4], t0;
	char dir[] = "/tmp/bench-store-XXXXXX", path[64];
	struct nvipam_store *s;
	size_t len;
	char *doc = reference_store(&len);
	FILE *f;

	for (int i = 0; i < RUNS / 4; i++) {
		t0 = now_ms();
		if (store_migrate_read(doc, len, &kind, &l, &why) < 0)
			die("read", &why);
		t[i] = now_ms() - t0;
		store_migrate_free(&l);
	}
	printf("\nmigrating the reference daemon's store of 10000 allocations (%zu bytes): json-c "
	       "reads and checks it in %.2f ms (median of %d); ", len, median(t, RUNS / 4), RUNS / 4);
	if (!mkdtemp(dir))
		die("mkdtemp", NULL);
	snprintf(path, sizeof(path), "%s/store", dir);
	f = fopen(path, "w");
	if (!f || fwrite(doc, 1, len, f) != len || fclose(f) != 0)
		die("write", NULL);
	t0 = now_ms();
	if (nvipam_store_open(path, false, 1000, &s, &why) < 0 || nvipam_store_commit(s, &why) < 0)
		die("migrate", &why);
	nvipam_store_close(s);
	printf("the whole migration (read, write the pool log and its snapshot, synced) %.1f ms, once\n",
	       now_ms() - t0);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(doc);
}

/*
 * The store bench-nvipam starts from (tests/bench/run-nvipam.sh): @n allocations in pool
 * @pool_key, their addresses from @first on, round-robin picks (the last is the pool's last).
 */
static int fill_store(const char *path, const char *pool_key, const char *first, unsigned long n)
{
	struct nvipam_store *s;
	struct cni_err err = { 0 };
	struct ip_addr ip;

	if (ip_addr_parse(first, &ip) < 0 || ip.family != AF_INET) {
		fprintf(stderr, "bench-store: --fill: %s is not an IPv4 address\n", first);
		return 2;
	}
	if (nvipam_store_open(path, false, 10000, &s, &err) < 0)
		die("open", &err);
	for (unsigned long i = 0; i < n; i++) {
		char cid[32];
		struct nvipam_alloc a = {
			.pool = pool_key, .ip = ip, .container_id = cid, .ifname = "net1",
			.network = "bench", .created = 1767225600,
		};

		snprintf(cid, sizeof(cid), "live%lu", i);
		if (nvipam_store_add(s, &a, true) < 0)
			die("add", NULL);
		for (int k = 3; k >= 0 && ++ip.bytes[k] == 0; k--)
			;
	}
	if (nvipam_store_commit(s, &err) < 0)
		die("commit", &err);
	nvipam_store_close(s);
	return 0;
}

/*
 * The stores bench-nvipam-scale starts from (tests/bench/run-nvipam-scale.sh): @n pods'
 * allocations in pool @pool_key as Multus's arguments make them (a container ID of 64 hex
 * digits, the pod's namespace, name and UID), their addresses spread over the /16 of
 * @first's first two bytes (offsets 2 to 65000, a stride that visits each once), the last
 * one the pool's last round-robin pick.
 */
static int fill_pods(const char *path, const char *pool_key, const char *first, unsigned long n)
{
	struct nvipam_store *s;
	struct cni_err err = { 0 };
	struct ip_addr base;

	if (ip_addr_parse(first, &base) < 0 || base.family != AF_INET || n > 64999) {
		fprintf(stderr, "bench-store: --fill-pods: %s is not an IPv4 address, or %lu > 64999\n",
			first, n);
		return 2;
	}
	if (nvipam_store_open(path, false, 10000, &s, &err) < 0)
		die("open", &err);
	for (unsigned long i = 0; i < n; i++) {
		unsigned long off = 2 + (i * 7919) % 64999;
		char cid[65], pod[64], uid[40];
		struct nvipam_alloc a = {
			.pool = pool_key, .ip = base, .container_id = cid, .ifname = "net1",
			.network = "bench", .pod_namespace = "tenant-namespace", .pod_name = pod,
			.pod_uid = uid, .created = 1767225600 + (time_t)i,
		};

		a.ip.bytes[2] = (uint8_t)(off >> 8);
		a.ip.bytes[3] = (uint8_t)off;
		snprintf(cid, sizeof(cid), "%016lx%016lx%016lx%016lx", i * 0x9e3779b97f4a7c15ul,
			 i ^ 0xc2b2ae3d27d4eb4ful, (i + 1) * 0x165667b19e3779f9ul, i);
		snprintf(pod, sizeof(pod), "workload-%lu-7f9c8d6b5-x2x4z", i);
		snprintf(uid, sizeof(uid), "%08lx-9869-41ef-9214-%012lx", i * 2654435761ul & 0xffffffff, i);
		if (nvipam_store_add(s, &a, true) < 0)
			die("add", NULL);
	}
	if (nvipam_store_commit(s, &err) < 0)
		die("commit", &err);
	nvipam_store_close(s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "--fill") == 0)
		return fill_store(argv[2], argv[3], argv[4], strtoul(argv[5], NULL, 10));
	if (argc == 6 && strcmp(argv[1], "--fill-pods") == 0)
		return fill_pods(argv[2], argv[3], argv[4], strtoul(argv[5], NULL, 10));
	if (argc != 1) {
		fprintf(stderr, "usage: bench-store\n       bench-store --fill STORE POOL FIRST-IP N\n"
				"       bench-store --fill-pods STORE POOL FIRST-IP N\n");
		return 2;
	}
	printf("load average before: ");
	fflush(stdout);
	if (system("cut -d' ' -f1-3 /proc/loadavg") != 0)
		printf("?\n");
	sweep();
	migration();
	return 0;
}
