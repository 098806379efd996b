/*
 * libFuzzer target: every reader of the nv-ipam store: the store file (version 2, the
 * reference daemon's), the pool log's lines, the pool snapshot, a pool's released-address
 * file, the handover marker; and the round trips of a log line and of a snapshot made of
 * the input's strings
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util/error.h"
#include "common/util/rfc3339.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/format.h"
#include "ipam/nv-ipam/store/gate.h"
#include "ipam/nv-ipam/store/migrate.h"
#include "ipam/nv-ipam/store/private.h"
#include "ipam/nv-ipam/store/released.h"
#include "ipam/nv-ipam/store/snap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
	fprintf(stderr, "%s\n", what);
	abort();
}

/*
 * A DEL on a handed-over store: a file the reader accepts is edited, and what is written
 * is read again, as the daemon's, without the entries said gone.
 */
static void release_round_trip(const uint8_t *data, size_t size, const struct store_legacy *l)
{
	struct text_buf out = { 0 };
	struct store_legacy again;
	enum store_file_kind kind;
	struct cni_err why = { 0 };
	size_t n;
	int r = store_migrate_release((const char *)data, size, l->allocs[0].a.container_id,
				      l->allocs[0].a.ifname, &out, &n, &why);

	if (r == -ENOMEM)
		goto out;
	if (r < 0)
		fail("release refused a file the reader accepts");
	if (!n)
		goto out;
	r = store_migrate_read(out.data, out.len, &kind, &again, &why);
	if (r < 0 || kind != STORE_FILE_REFERENCE || again.n_allocs + n != l->n_allocs)
		fail("released file not read back without its entries");
	store_migrate_free(&again);
out:
	text_buf_free(&out);
}

/* A refusal always says why: the message reaches the operator. */
static void store_file(const uint8_t *data, size_t size)
{
	struct store_legacy l;
	enum store_file_kind kind;
	struct cni_err why = { 0 };
	int r = store_migrate_read((const char *)data, size, &kind, &l, &why);

	if (r < 0 && !why.msg[0])
		fail("store file refused without a reason");
	if (r < 0)
		return;
	for (size_t i = 0; i < l.n_allocs; i++)
		if (!l.allocs[i].a.pool || !*l.allocs[i].a.pool || !l.allocs[i].a.container_id ||
		    !l.allocs[i].a.ifname || !ip_addr_size(&l.allocs[i].a.ip))
			fail("an older store's allocation without pool, IDs or address");
	if (kind == STORE_FILE_REFERENCE && l.n_allocs)
		release_round_trip(data, size, &l);
	store_migrate_free(&l);
}

static void pool_log(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1);
	struct cni_err why = { 0 };
	struct store_reader rd;
	struct store_line l;
	const char *key;
	uint64_t id;
	int r;

	if (!copy)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	r = store_format_read_header(&rd, copy, size, &key, &id, &why);
	while (r >= 0 && key && (r = store_format_next(&rd, &l, &why)) > 0) {
		if (rd.pos > size)
			fail("reader went past the end");
		if (l.type == 'A' && (!l.alloc.container_id || !l.alloc.ifname || !l.alloc.pod_name ||
				      !ip_addr_size(&l.alloc.ip)))
			fail("A line without its strings or address");
	}
	free(copy);
}

static void count(size_t i, void *ctx)
{
	(*(size_t *)ctx) += i + 1;
}

/* Whatever the bytes, lookups stay inside them: a damaged block is an error, not a read. */
static void snapshot(const uint8_t *data, size_t size)
{
	/* Aligned as a mapping is. */
	char *copy = malloc(size + 1);
	struct store_snap snap;
	char pool[] = "p";

	if (!copy)
		abort();
	memcpy(copy, data, size);
	if (store_snap_parse(copy, size, &snap) == 0) {
		size_t seen = 0;

		for (size_t i = 0; i < snap.n_records && i < 4096; i++) {
			struct store_alloc r;
			long at;

			if (store_snap_record(&snap, i, pool, &r) < 0) {
				if (!snap.damaged)
					fail("a record refused without the snapshot damaged");
				continue;
			}
			(void)store_snap_find_ip(&snap, &r.a.ip, &at);
			(void)store_snap_find_attachment(&snap, r.a.container_id, r.a.ifname, count, &seen);
			(void)store_snap_find_key(&snap, r.a.container_id, r.a.ifname, count, &seen);
			(void)store_snap_find_pod(&snap, r.a.pod_uid, r.a.ifname, count, &seen);
		}
		(void)store_snap_find_attachment(&snap, "c", "e", count, &seen);
		store_snap_free(&snap);
	}
	free(copy);
}

struct found {
	struct store_snap *snap;
	const struct nvipam_alloc *want;
	bool hit;
};

static void same_record(size_t i, void *ctx)
{
	struct found *f = ctx;
	struct store_alloc r;

	if (store_snap_record(f->snap, i, "p", &r) == 0 && ip_addr_equal(&r.a.ip, &f->want->ip) &&
	    strcmp(r.a.container_id, f->want->container_id) == 0 &&
	    strcmp(r.a.ifname, f->want->ifname) == 0 && strcmp(r.a.pod_uid, f->want->pod_uid) == 0 &&
	    strcmp(r.a.device_id, f->want->device_id) == 0)
		f->hit = true;
}

/*
 * Allocations made of the input's strings (cut at its NUL bytes, seven to an allocation),
 * written as a snapshot and read back: each found by attachment, key, pod and address.
 */
static void snapshot_round_trip(const uint8_t *data, size_t size)
{
	char *strs = malloc(size + 1), *p = strs, *end;
	struct store_alloc allocs[16];
	struct store_snap_point at = { .log_id = 7, .log_len = 99, .n_lines = 3 };
	struct text_buf b = { 0 };
	struct store_snap snap;
	char key[] = "p";
	size_t n = 0;

	if (!strs)
		abort();
	memcpy(strs, data, size);
	strs[size] = '\0';
	end = strs + size;
	while (n < 16 && p < end) {
		const char *f[7] = { "", "", "", "", "", "", "" };

		for (int i = 0; i < 7 && p < end; i++) {
			f[i] = p;
			p += strlen(p) + 1;
		}
		allocs[n] = (struct store_alloc){ .txn = n, .a = { .pool = key, .container_id = f[0],
				 .ifname = f[1], .network = f[2], .pod_namespace = f[3], .pod_name = f[4],
				 .pod_uid = f[5], .device_id = f[6], .created = (time_t)n } };
		/* Distinct addresses: an address is held once in a pool. */
		allocs[n].a.ip.family = AF_INET6;
		allocs[n].a.ip.bytes[15] = (uint8_t)n;
		allocs[n].a.ip.bytes[0] = size ? data[0] : 0;
		n++;
	}
	store_snap_build(&b, key, &at, allocs, n);
	if (b.oom)
		goto out;
	if (store_snap_parse(b.data, b.len, &snap) != 0)
		fail("a snapshot written is not read back");
	if (snap.n_records != n || strcmp(snap.key, key) != 0 || snap.at.log_len != 99)
		fail("the snapshot's counts or header changed on the way");
	for (size_t i = 0; i < n; i++) {
		struct found f = { .snap = &snap, .want = &allocs[i].a };
		long idx;

		if (store_snap_find_attachment(&snap, f.want->container_id, f.want->ifname, same_record, &f) < 0 ||
		    !f.hit)
			fail("an allocation not found by its attachment");
		f.hit = false;
		if (store_snap_find_key(&snap, f.want->container_id, f.want->ifname, same_record, &f) < 0 ||
		    !f.hit)
			fail("an allocation not found by its key");
		f.hit = false;
		if (store_snap_find_pod(&snap, f.want->pod_uid, f.want->ifname, same_record, &f) < 0 ||
		    (*f.want->pod_uid && !f.hit))
			fail("an allocation not found by its pod");
		if (store_snap_find_ip(&snap, &f.want->ip, &idx) < 0 || idx < 0)
			fail("an allocation not found by its address");
		f.hit = false;
		same_record((size_t)idx, &f);
		if (!f.hit)
			fail("the record of an address is another allocation");
	}
	if (snap.damaged)
		fail("a snapshot written is damaged");
	store_snap_free(&snap);
out:
	text_buf_free(&b);
	free(strs);
}

/* Every line taken is one of the input's, whole, and its address is a real one. */
static void released(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1);
	struct text_buf b = { 0 };
	struct ip_addr *ips = NULL;
	char at[RFC3339_STRLEN];
	size_t n = 0, lines = 1;

	if (!copy)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (store_released_parse(copy, 0, &ips, &n, &b) == 0) {
		if (n > lines)
			fail("more addresses than lines");
		for (size_t i = 0; i < n; i++)
			if (!ip_addr_size(&ips[i]))
				fail("a released line without an address");
		if (b.len > size + 1 ||
		    (n && b.data && !memmem(data, size, b.data, strcspn(b.data, "\n"))))
			fail("a line taken that the file does not hold");
		free(ips);
	}
	text_buf_free(&b);
	memcpy(copy, data, size);
	if (store_handover_marker_sum(copy) && !strstr(copy, "\nchecksum "))
		fail("a marker checksum without its line");
	store_handover_marker_at(copy, at);
	if (*at && (!strstr(copy, "\nat ") || strlen(at) != RFC3339_STRLEN - 1 || at[RFC3339_STRLEN - 2] != 'Z'))
		fail("a marker time without its line, or not written as RFC 3339");
	free(copy);
}

/* Up to seven strings cut from the input at its NUL bytes, then an address and a time. */
static void line_round_trip(const uint8_t *data, size_t size)
{
	char *strs = malloc(size + 1), *p = strs, *end, *buf;
	struct cni_err why = { 0 };
	const char *f[7] = { "", "", "", "", "", "", "" };
	struct text_buf b = { 0 };
	struct store_reader rd;
	struct store_line l = { .type = 'A', .partner = "" }, back;
	const char *key;
	uint64_t id;
	time_t created = 0;

	if (!strs)
		abort();
	memcpy(strs, data, size);
	strs[size] = '\0';
	end = strs + size;
	for (int i = 0; i < 7 && p < end; i++) {
		f[i] = p;
		p += strlen(p) + 1;
	}
	l.alloc.ip.family = size % 2 ? AF_INET6 : AF_INET;
	for (size_t i = 0; i < sizeof(l.alloc.ip.bytes) && i < size; i++)
		l.alloc.ip.bytes[i] = data[size - 1 - i];
	if (l.alloc.ip.family == AF_INET)
		memset(l.alloc.ip.bytes + 4, 0, 12);
	for (size_t i = 0; i < 8 && i < size; i++)
		created = (time_t)((uint64_t)created << 8 | data[i]);
	l.alloc.container_id = f[0];
	l.alloc.ifname = f[1];
	l.alloc.network = f[2];
	l.alloc.pod_namespace = f[3];
	l.alloc.pod_name = f[4];
	l.alloc.pod_uid = f[5];
	l.alloc.device_id = f[6];
	l.alloc.created = created;
	l.flags = STORE_ADD_ROUND_ROBIN;
	store_format_header(&b, "pool", 42);
	if (store_format_line(&b, &l) < 0 || b.oom) {
		text_buf_free(&b);
		free(strs);
		return;
	}
	buf = b.data;
	if (store_format_read_header(&rd, buf, b.len, &key, &id, &why) < 0 || !key ||
	    strcmp(key, "pool") != 0 || id != 42)
		fail("header not read back");
	if (store_format_next(&rd, &back, &why) != 1) {
		fprintf(stderr, "%s\n", why.msg);
		fail("a line written is not read back");
	}
	if (strcmp(back.alloc.container_id, f[0]) || strcmp(back.alloc.ifname, f[1]) ||
	    strcmp(back.alloc.network, f[2]) || strcmp(back.alloc.pod_namespace, f[3]) ||
	    strcmp(back.alloc.pod_name, f[4]) || strcmp(back.alloc.pod_uid, f[5]) ||
	    strcmp(back.alloc.device_id, f[6]))
		fail("a string changed on the way");
	if (back.alloc.ip.family != l.alloc.ip.family ||
	    memcmp(back.alloc.ip.bytes, l.alloc.ip.bytes, sizeof(l.alloc.ip.bytes)) != 0)
		fail("the address changed on the way");
	if (back.alloc.created != (created < 0 ? 0 : created > RFC3339_MAX ? RFC3339_MAX : created))
		fail("the time changed on the way");
	if (back.flags != STORE_ADD_ROUND_ROBIN || store_format_next(&rd, &back, &why) != 0)
		fail("more came back than was written");
	text_buf_free(&b);
	free(strs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	store_file(data, size);
	pool_log(data, size);
	snapshot(data, size);
	snapshot_round_trip(data, size);
	released(data, size);
	line_round_trip(data, size);
	return 0;
}
