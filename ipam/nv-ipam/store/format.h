/* The pool log: one text file per pool, a header line and one line per change */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/store/alloc.h"

struct cni_err;
struct text_buf;

/*
 * Format (docs/nv-ipam.md, "The store"): lines of tab-separated fields, each
 * string written with text_escape() (so no tab or newline inside a field), the
 * last field the text_checksum64() of everything before it, as 16 hex digits.
 *
 *   nv-ipam-pool-log  1  <pool key>  <log id>  <check>              header, first line
 *   A  <flags>  <txn>  <partner>  <ip>  <containerID>  <ifname>  <network>
 *      <podNamespace>  <podName>  <podUID>  <deviceID>  <created>  <check>
 *   D  <containerID>  <ifname>  <check>                              release an attachment
 *   L  <ip>  <check>                                                 last reserved address
 *   C  <txn>  <check>                                                a two-pool ADD completed
 *   X  <txn>  <check>                                                one that did not
 *
 * A line that does not end in a newline is the torn tail of a killed writer:
 * never a change that happened. Every complete line must be valid.
 */
#define STORE_FORMAT_VERSION 1
/*
 * The longest line read or rewritten: room for what older stores may hold (an
 * environment string is at most 128 KiB, a network name had no bound), migrated whole.
 */
#define STORE_FORMAT_LINE_MAX (512u * 1024u)
/*
 * The longest line an ADD appends: a pool's log, shared by every network of the pool,
 * holds at most twice its live lines and 512 more, and must stay below the size read
 * (STORE_DISK_MAX_BYTES) whatever a network config names. Real strings (a NAD name of
 * 253 bytes, a pod's names and IDs) need well under 1 KiB, escaped.
 */
#define STORE_FORMAT_ADD_LINE_MAX (8u * 1024u)
/* A file name stem: room left for ".log.tmp.<pid>" within NAME_MAX. */
#define STORE_FORMAT_STEM_MAX 201

/* How every line ends: a tab, the checksum's 16 hex digits, a newline. */
#define STORE_FORMAT_LINE_END 18

/* Flags of an A line. */
#define STORE_ADD_ROUND_ROBIN 1u /* "r": the pool's last reserved address moves to it */
#define STORE_ADD_PENDING 2u     /* "p": part of a two-pool ADD, valid once <partner> holds <txn> */

struct store_line {
	char type;                  /* 'A', 'D', 'L', 'C' or 'X' */
	unsigned int flags;         /* A */
	uint64_t txn;               /* A (0 when none), C, X */
	const char *partner;        /* A: "" or the pool key a pending line waits for */
	struct nvipam_alloc alloc;  /* A: ip and strings (pool unset); D: container_id, ifname; L: ip */
	const char *fields;         /* A queued by an ADD: alloc's fields as rendered, or NULL */
	size_t fields_len;
};

/**
 * store_format_stem() - the file name stem of a pool's log and lock
 * @key: pool key
 * @buf: output, at least STORE_FORMAT_STEM_MAX bytes
 *
 * Letters, digits, '_', '-' and (but first) '.' stand for themselves, every other
 * byte is %XX ("cidrpool/a" is "cidrpool%2Fa"), so two keys never share a stem;
 * a stem that would be longer than STORE_FORMAT_STEM_MAX - 1 is cut and ends in
 * "~" and a hash of the key (the header line says which pool the file is).
 */
void store_format_stem(const char *key, char *buf);

/**
 * store_format_header() - append the header line of a pool's log
 * @b: buffer
 * @key: pool key
 * @log_id: a random number, new whenever the log is written whole (snapshots name it)
 */
void store_format_header(struct text_buf *b, const char *key, uint64_t log_id);

/**
 * store_format_add_fields() - an A line's fields from its address on, rendered once: what
 *                             store_format_line() writes after the partner
 * @b: buffer
 * @a: the allocation
 *
 * Return: 0, or -E2BIG when they alone pass STORE_FORMAT_LINE_MAX (nothing is appended).
 */
int store_format_add_fields(struct text_buf *b, const struct nvipam_alloc *a);

/**
 * store_format_add_head_len() - how long an A line is without its fields
 * @line: the line (flags, txn, partner)
 *
 * Return: the length of its start, its checksum field and newline included.
 */
size_t store_format_add_head_len(const struct store_line *line);

/**
 * store_format_line() - append one change line
 * @b: buffer
 * @line: the change (for an A line: flags, txn, partner, and alloc or its rendered fields)
 *
 * Return: 0, or -E2BIG when the line would be longer than STORE_FORMAT_LINE_MAX
 * (nothing is appended then).
 */
int store_format_line(struct text_buf *b, const struct store_line *line);

/* Reading a log: the header, then its lines one by one; strings are decoded in place. */
struct store_reader {
	char *data;
	size_t len;
	size_t pos;          /* start of the next line */
	size_t line_no;      /* of the last line read, 1 being the header */
	uint64_t last_check; /* the checksum field of the last line read */
	bool torn;           /* the data ends in a line without its newline */
};

/**
 * store_format_read_header() - start reading a log
 * @r: reader, set up here
 * @data: the file's contents (modified: fields are NUL-terminated and decoded in place)
 * @len: their length
 * @ret_key: the pool key of the header (points into @data); NULL when the file holds
 *           no complete header line (empty, or torn while it was being created)
 * @ret_log_id: the log's id
 * @err: code 5 with the reason ("line 1: ..." or the version), on failure; the caller
 *       adds the file
 *
 * Return: 0 on success, -EINVAL for a header that is not ours, -EPROTONOSUPPORT for
 * another version.
 */
int store_format_read_header(struct store_reader *r, char *data, size_t len, const char **ret_key,
			     uint64_t *ret_log_id, struct cni_err *err);

/**
 * store_format_read_tail() - read lines from the middle of a log
 * @r: reader, set up here
 * @data: the log's bytes from the start of a line on (modified as by store_format_next())
 * @len: their length
 * @line_no: the number of the line before them, for messages
 */
void store_format_read_tail(struct store_reader *r, char *data, size_t len, size_t line_no);

/**
 * store_format_line_check() - the checksum field of the line that ends a block of lines
 * @data: complete lines
 * @len: their length (at least one line)
 * @ret: the checksum
 *
 * Return: 0, or -EINVAL when @data does not end in a line with a checksum.
 */
int store_format_line_check(const char *data, size_t len, uint64_t *ret);

/**
 * store_format_next() - the next change line
 * @r: reader
 * @ret: the line (strings point into the data)
 * @err: code 5 with the reason ("line N: ..."), on failure; the caller adds the file
 *
 * A torn last line ends the log (r->torn is set) without an error.
 *
 * Return: 1 with a line, 0 at the end, -EINVAL for a damaged or invalid line.
 */
int store_format_next(struct store_reader *r, struct store_line *ret, struct cni_err *err);
