/* gc's miss counts: "<store>.gc", beside the store, read and replaced under the store lock */
#pragma once

#include <stddef.h>
#include <time.h>

#include "common/util/ipaddr.h"

struct cni_err;
struct nvipam_alloc;

/* An allocation (pool, address, container, interface, creation time) and its misses. */
struct misses_entry {
	char *pool;
	struct ip_addr ip;
	char *container_id;
	char *ifname;
	time_t created;
	unsigned long count;
};

struct misses {
	struct misses_entry *v; /* sorted by misses_alloc_cmp()'s key */
	size_t n;
	char *text; /* the file as read, NULL when there was none */
	size_t len;
};

/* Counts above this are refused on reading: no threshold is that high. */
#define MISSES_COUNT_MAX 1000000ul

/**
 * misses_path() - the counts file of a store
 * @store: store file (a path, or its name in its directory)
 *
 * Return: "<store>.gc", malloc'ed; NULL when out of memory.
 */
char *misses_path(const char *store);

/**
 * misses_load() - read a counts file in the store's directory (no symbolic link followed)
 * @dirfd: the store's directory
 * @name: the file's name in it
 * @path: the file's path, for messages
 * @ret: counts, written only on success; release with misses_free()
 * @err: code 5 when unreadable, 6 naming the file when it does not parse or holds anything
 *       invalid
 *
 * A missing file holds no counts.
 *
 * Return: 0 on success, negative errno on failure.
 */
int misses_load(int dirfd, const char *name, const char *path, struct misses *ret,
		struct cni_err *err);

/**
 * misses_parse() - misses_load() on text
 * @text: file contents
 * @len: length
 * @origin: file name for messages
 * @ret: counts, written only on success (@ret->text is left NULL)
 * @err: code 6 naming @origin
 *
 * Return: 0 on success, negative errno on failure.
 */
int misses_parse(const char *text, size_t len, const char *origin, struct misses *ret,
		 struct cni_err *err);

/**
 * misses_get() - the recorded misses of an allocation
 * @m: counts
 * @a: allocation
 *
 * Return: the count, 0 when none is recorded.
 */
unsigned long misses_get(const struct misses *m, const struct nvipam_alloc *a);

/**
 * misses_format() - the text of a counts file
 * @allocs: the allocations with a count, in any order
 * @counts: their counts (each >= 1)
 * @n: how many
 * @ret: malloc'ed text, written only on success
 * @ret_len: its length
 *
 * Return: 0 on success, -ENOMEM.
 */
int misses_format(const struct nvipam_alloc *const *allocs, const unsigned long *counts, size_t n,
		  char **ret, size_t *ret_len);

/**
 * misses_save() - replace a counts file atomically (file_write_atomic_at(), mode 0600),
 *                 unless it already holds exactly @text
 * @dirfd: the store's directory
 * @name: the file's name in it
 * @path: the file's path, for messages
 * @old: the counts as loaded from it
 * @text: new contents, from misses_format()
 * @len: their length
 * @err: code 5 on failure (the old file stays as it was)
 *
 * Return: 1 when written, 0 when unchanged, negative errno on failure.
 */
int misses_save(int dirfd, const char *name, const char *path, const struct misses *old,
		const char *text, size_t len, struct cni_err *err);

/**
 * misses_free() - release counts and zero them
 * @m: counts
 */
void misses_free(struct misses *m);

/**
 * misses_alloc_cmp() - qsort() order of allocation pointers by what identifies one for the
 *                      counts: pool, container, interface, address, creation time (so one
 *                      attachment's allocations are adjacent)
 * @a: a const struct nvipam_alloc *const *
 * @b: another
 *
 * Return: negative, 0 or positive.
 */
int misses_alloc_cmp(const void *a, const void *b);
