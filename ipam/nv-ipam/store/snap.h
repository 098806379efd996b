/* The pool snapshot: a pool's allocations at a point of its log, read instead of the log's head */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util/ipaddr.h"

struct store_alloc;
struct text_buf;

/*
 * A read cache of the pool log, never the truth: binary (native byte order, checked),
 * written whole by the pool's lock holder every STORE_SNAP_EVERY lines (synced, then
 * renamed over the old one), and used only when it names the log it was made from (the
 * random id in the log's header) and the line it stops at is still there. Anything else
 * and the whole log is read. It holds every live allocation of the pool, and two hash
 * tables: by attachment (for the DELs of the log's tail) and by address (to refuse an
 * address held twice), so that opening a pool costs no parsing but of the tail. Its
 * allocations are loaded into the model like the log's; the tables serve only while the
 * tail is replayed.
 */
#define STORE_SNAP_EVERY 128

/* Where a snapshot stops in its log, and what the pool is there. */
struct store_snap_point {
	uint64_t log_id;         /* from the log's header */
	uint64_t log_len;        /* the lines before this byte are in the snapshot */
	uint64_t log_tail_check; /* the checksum field of the line that ends there */
	uint64_t n_lines;        /* change lines of the log up to there */
	bool has_last;
	struct ip_addr last_reserved;
};

/* A snapshot as read: pointers into its bytes, which must outlive it. */
struct store_snap {
	struct store_snap_point at;
	const char *key;
	size_t n_records;
	const void *records;
	const struct ip_addr *ips;     /* the records' addresses, in order (address order) */
	const uint32_t *by_attachment; /* slot: record index + 1, 0 when free */
	const uint32_t *by_ip;
	size_t mask;                   /* slots - 1 */
	const char *strings;
	size_t strings_len;
};

/**
 * store_snap_build() - a snapshot of a pool
 * @b: buffer it is appended to
 * @key: the pool key
 * @at: where in the log it stops, and the pool's last reserved address
 * @allocs: allocations, those whose pool pointer is @key taken
 * @n: their number
 */
void store_snap_build(struct text_buf *b, const char *key, const struct store_snap_point *at,
		      const struct store_alloc *allocs, size_t n);

/**
 * store_snap_parse() - check a snapshot's structure
 * @data: its bytes (aligned as malloc() or mmap() returns them)
 * @len: their number
 * @ret: the snapshot, written only on success
 *
 * Counts, sizes and every record's strings are checked against @len here, the hash
 * tables as they are read: whatever the bytes, reading the result stays inside them.
 *
 * Return: 0 on success, -EINVAL when it is not a snapshot this build writes.
 */
int store_snap_parse(const char *data, size_t len, struct store_snap *ret);

/**
 * store_snap_record() - one allocation of a snapshot (they are in address order)
 * @s: snapshot
 * @i: index, below @s->n_records
 * @pool: the pool key its ->pool is set to
 * @ret: the allocation (strings point into the snapshot)
 */
void store_snap_record(const struct store_snap *s, size_t i, const char *pool,
		       struct store_alloc *ret);

/**
 * store_snap_find_attachment() - the records of an attachment
 * @s: snapshot
 * @container_id: container ID
 * @ifname: interface name
 * @cb: called with each record index
 * @ctx: passed to @cb
 */
void store_snap_find_attachment(const struct store_snap *s, const char *container_id,
				const char *ifname, void (*cb)(size_t i, void *ctx), void *ctx);

/**
 * store_snap_find_ip() - the record holding an address
 * @s: snapshot
 * @ip: address
 *
 * Return: its index, or -1.
 */
long store_snap_find_ip(const struct store_snap *s, const struct ip_addr *ip);

/**
 * store_snap_attachment_hash() - the hash attachments are found by
 * @container_id: container ID
 * @ifname: interface name
 *
 * Return: the hash.
 */
uint64_t store_snap_attachment_hash(const char *container_id, const char *ifname);
