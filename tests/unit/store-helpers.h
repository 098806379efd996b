/* Helpers of the nv-ipam store tests: a private directory per test, files, allocations */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/store/store.h"

/* 2024-06-14T10:00:00Z */
#define T_REF 1718359200

/* The test's directory, made by helper_setup() below /tmp (which the node settings allow). */
extern char helper_dir[64];

/**
 * helper_group_setup() - node settings that let configs name /tmp (cmocka group setup)
 * @state: unused
 *
 * Return: 0, -1 on failure.
 */
int helper_group_setup(void **state);

/**
 * helper_group_teardown() - remove the node settings
 * @state: unused
 *
 * Return: 0, -1 on failure.
 */
int helper_group_teardown(void **state);

/**
 * helper_setup() - a new private directory (cmocka setup)
 * @state: unused
 *
 * Return: 0, -1 on failure.
 */
int helper_setup(void **state);

/**
 * helper_teardown() - remove the directory and what is in it
 * @state: unused
 *
 * Return: 0, -1 on failure.
 */
int helper_teardown(void **state);

/**
 * path_in() - a path in the test's directory
 * @name: relative name
 *
 * Return: malloc'ed path.
 */
char *path_in(const char *name);

/**
 * read_all() - a file's contents
 * @path: file
 * @ret_len: its length (may be NULL)
 *
 * Return: malloc'ed, NUL-terminated contents (fails the test when unreadable).
 */
char *read_all(const char *path, size_t *ret_len);

/**
 * write_all() - replace a file's contents
 * @path: file
 * @data: bytes
 * @len: their number
 */
void write_all(const char *path, const char *data, size_t len);

/**
 * golden() - a file of tests/unit/golden
 * @name: its name
 * @ret_len: its length (may be NULL)
 *
 * Return: malloc'ed contents.
 */
char *golden(const char *name, size_t *ret_len);

/**
 * exists() - whether a path exists (links not followed)
 * @path: path
 *
 * Return: true when it does.
 */
bool exists(const char *path);

/**
 * count_prefixed() - entries of a directory whose name starts with a prefix
 * @dir: directory
 * @prefix: prefix
 *
 * Return: the count.
 */
int count_prefixed(const char *dir, const char *prefix);

/**
 * ip() - an address from text (fails the test when invalid)
 * @s: text
 *
 * Return: the address.
 */
struct ip_addr ip(const char *s);

/**
 * assert_ip() - check an address against text
 * @a: address
 * @want: text
 */
void assert_ip(const struct ip_addr *a, const char *want);

/**
 * mk() - an allocation with fixed pod data
 * @pool: pool key
 * @addr: address
 * @cid: container ID
 * @ifname: interface name
 *
 * Return: the allocation (strings borrowed).
 */
struct nvipam_alloc mk(const char *pool, const char *addr, const char *cid, const char *ifname);

/**
 * open_ok() - open the whole store as nv-ipam does (confined), or fail the test
 * @path: store file
 * @s: the open store
 */
void open_ok(const char *path, struct nvipam_store **s);

/**
 * open_pools_ok() - open some pools as nv-ipam's ADD does, or fail the test
 * @path: store file
 * @keys: pool keys, NULL-terminated
 * @s: the open store
 */
void open_pools_ok(const char *path, const char *const *keys, struct nvipam_store **s);

/**
 * pool_at() - a pool record of the store, or fail the test
 * @s: store
 * @i: its index
 *
 * Return: the record (until the next call).
 */
const struct nvipam_store_pool_info *pool_at(const struct nvipam_store *s, size_t i);

/**
 * commit_ok() - commit, or fail the test
 * @s: store
 */
void commit_ok(struct nvipam_store *s);

/**
 * add_ok() - add an allocation (mk()), or fail the test
 * @s: store
 * @pool: pool key
 * @addr: address
 * @cid: container ID
 * @ifname: interface name
 * @rr: round robin
 */
void add_ok(struct nvipam_store *s, const char *pool, const char *addr, const char *cid,
	    const char *ifname, bool rr);

/**
 * expect_open_fails() - the whole store cannot be opened, with a code and a message part
 * @path: store file
 * @code: CNI error code
 * @part: text the message holds (with @path)
 */
void expect_open_fails(const char *path, int code, const char *part);

/**
 * ms_since() - milliseconds since a time
 * @t0: CLOCK_MONOTONIC time
 *
 * Return: the milliseconds.
 */
double ms_since(const struct timespec *t0);

/**
 * lines_of() - the lines of a text file
 * @path: file
 * @ret_n: their number
 *
 * Return: malloc'ed array of malloc'ed lines (without newlines); free with lines_free().
 */
char **lines_of(const char *path, size_t *ret_n);

/**
 * lines_free() - free lines_of()'s result
 * @v: lines
 * @n: their number
 */
void lines_free(char **v, size_t n);

/**
 * log_line() - a pool log line with its checksum, as the store writes it
 * @fields: the fields before the checksum, tab-separated
 *
 * Return: malloc'ed line with its newline.
 */
char *log_line(const char *fields);

/**
 * usage_of() - nvipam_store_usage(), its fields apart
 * @s: store
 * @pool: pool key
 * @ret_ips: malloc'ed reserved IPs in order (free())
 * @ret_n: their number
 * @ret_has_last: whether a last pick is known
 * @ret_last: the last round-robin pick
 *
 * Return: what nvipam_store_usage() returned.
 */
int usage_of(const struct nvipam_store *s, const char *pool, struct ip_addr **ret_ips,
	     size_t *ret_n, bool *ret_has_last, struct ip_addr *ret_last);
