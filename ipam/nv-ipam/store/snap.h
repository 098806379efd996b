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
 * and the whole log is read. It holds every live allocation of the pool (in address
 * order) and three hash tables: by the reference daemon's key of the attachment
 * ("<container ID>_<interface>", which finds the attachment too), by pod UID and
 * interface, by address.
 *
 * Reading one costs what is looked up, not what it holds: the header, the pool key and
 * the table of block checksums (one page at 1000 allocations) are checked when it is
 * parsed; each 1 KiB block of the body is checked
 * the first time a lookup reads it. A block that does not match makes the lookup fail
 * with -EIO and the snapshot damaged: its reader reads the log instead.
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

/* A snapshot as read: pointers into its bytes, which must outlive it; store_snap_free(). */
struct store_snap {
	struct store_snap_point at;
	const char *key;
	size_t n_records;
	const char *body;           /* records, addresses, tables, strings */
	size_t body_len;
	const uint32_t *block_checks;
	size_t n_blocks;
	uint8_t *checked;           /* per block: 0 not yet, 1 matches, 2 does not */
	size_t n_checked;           /* blocks checked so far: what reading it has cost */
	size_t ips_at;              /* offsets in the body */
	size_t slots_at;
	size_t strings_at;
	size_t strings_len;
	size_t mask;                /* slots of each table - 1 */
	bool damaged;               /* a block did not match its checksum */
};

/**
 * store_snap_build() - a snapshot of a pool
 * @b: buffer it is appended to (at an offset that is a multiple of 8)
 * @key: the pool key
 * @at: where in the log it stops, and the pool's last reserved address
 * @allocs: allocations, those whose pool pointer is @key taken
 * @n: their number
 */
void store_snap_build(struct text_buf *b, const char *key, const struct store_snap_point *at,
		      const struct store_alloc *allocs, size_t n);

/**
 * store_snap_parse() - check a snapshot's header and block checksums
 * @data: its bytes (aligned as malloc() or mmap() returns them)
 * @len: their number
 * @ret: the snapshot, written only on success; release with store_snap_free()
 *
 * Counts and sizes are checked against @len, the pool key and the block checksums
 * against the header's checksum of them: whatever the bytes, every lookup stays inside
 * them (a record's strings are read within their run, checked to end in a NUL).
 *
 * Return: 0 on success, -EINVAL when it is not a snapshot this build writes (or is
 * damaged), -ENOMEM.
 */
int store_snap_parse(const char *data, size_t len, struct store_snap *ret);

/**
 * store_snap_free() - release what store_snap_parse() allocated (not the bytes)
 * @s: snapshot, parsed or zeroed
 */
void store_snap_free(struct store_snap *s);

/**
 * store_snap_record() - one allocation of a snapshot (they are in address order)
 * @s: snapshot
 * @i: index, below @s->n_records
 * @pool: the pool key its ->pool is set to
 * @ret: the allocation (strings point into the snapshot)
 *
 * Return: 0, or -EIO when its blocks are damaged.
 */
int store_snap_record(struct store_snap *s, size_t i, const char *pool, struct store_alloc *ret);

/**
 * store_snap_ip() - the address of one allocation of a snapshot
 * @s: snapshot
 * @i: index, below @s->n_records
 * @ret: the address
 *
 * Return: 0, or -EIO when its block is damaged.
 */
int store_snap_ip(struct store_snap *s, size_t i, struct ip_addr *ret);

/**
 * store_snap_find_key() - the records the reference daemon would key as an attachment:
 *                         "<container ID>_<interface>" (the attachment's own among them)
 * @s: snapshot
 * @container_id: container ID
 * @ifname: interface name
 * @cb: called with each record index
 * @ctx: passed to @cb
 *
 * Return: 0, or -EIO when a block read is damaged (@cb may have been called).
 */
int store_snap_find_key(struct store_snap *s, const char *container_id, const char *ifname,
			void (*cb)(size_t i, void *ctx), void *ctx);

/**
 * store_snap_find_attachment() - the records of an attachment
 * @s: snapshot
 * @container_id: container ID
 * @ifname: interface name
 * @cb: called with each record index
 * @ctx: passed to @cb
 *
 * Return: 0, or -EIO when a block read is damaged (@cb may have been called).
 */
int store_snap_find_attachment(struct store_snap *s, const char *container_id, const char *ifname,
			       void (*cb)(size_t i, void *ctx), void *ctx);

/**
 * store_snap_find_pod() - the records of a pod's interface (a pod UID that is not empty)
 * @s: snapshot
 * @pod_uid: pod UID
 * @ifname: interface name
 * @cb: called with each record index
 * @ctx: passed to @cb
 *
 * Return: 0, or -EIO when a block read is damaged (@cb may have been called).
 */
int store_snap_find_pod(struct store_snap *s, const char *pod_uid, const char *ifname,
			void (*cb)(size_t i, void *ctx), void *ctx);

/**
 * store_snap_find_ip() - the record holding an address
 * @s: snapshot
 * @ip: address
 * @ret: its index, or -1 when none holds it
 *
 * Return: 0, or -EIO when a block read is damaged.
 */
int store_snap_find_ip(struct store_snap *s, const struct ip_addr *ip, long *ret);

/**
 * store_snap_key_hash() - the hash attachments are found by: of the reference daemon's
 *                         key, "<container ID>_<interface>"
 * @container_id: container ID
 * @ifname: interface name
 *
 * Return: the hash.
 */
uint64_t store_snap_key_hash(const char *container_id, const char *ifname);
