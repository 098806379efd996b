/* The node's allocation store: one JSON file changed under an exclusive flock */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/util/ipaddr.h"

struct cni_err;

struct nvipam_alloc {
	char *pool;          /* pool key */
	struct ip_addr ip;
	char *container_id;
	char *ifname;
	char *network;       /* the CNI network name: GC never touches another network's */
	char *pod_namespace; /* "" when unknown */
	char *pod_name;
	char *pod_uid;
	char *device_id;
	time_t created;
};

struct nvipam_store_pool {
	char *key;
	bool has_last;
	struct ip_addr last_reserved;
};

struct nvipam_store {
	int lock_fd;                   /* held while the store is open */
	int dir_fd;                    /* the store's directory; files are opened relative to it */
	char *path;
	const char *name;              /* the file's name in its directory (points into @path) */
	struct nvipam_alloc *allocs;
	size_t n_allocs;
	size_t cap_allocs;             /* room in @allocs */
	struct nvipam_store_pool *pools;
	size_t n_pools;
	bool dirty;
};

/**
 * nvipam_store_open() - lock "<path>.lock" (bounded wait) and load "<path>"
 * @path: store file; a missing or empty file is an empty store
 * @confined: @path comes from a network config: it must lie in the node's state
 *            directory (common/cni/trust.h) and is opened beneath it, creating what
 *            is missing; otherwise (the operator's path) its directory must exist
 * @timeout_ms: how long to wait for the lock
 * @ret: the open store, written only on success
 * @err: code 11 when the lock is not free in time; code 5 naming the file when it is
 *       unreadable or corrupt (the file is left untouched), or when the store's
 *       directory is not owned by root or is writable by group or others; code 7
 *       for a path a network config may not name
 *
 * The lock file and the store are opened without following symbolic links.
 * A store written by the reference nv-ipam node daemon (its "entries" and
 * "checksum" layout) is read and converted; it is rewritten in our format on
 * the next commit.
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_open(const char *path, bool confined, unsigned int timeout_ms,
		      struct nvipam_store *ret, struct cni_err *err);

/**
 * nvipam_store_open_inspect() - nvipam_store_open() for the operator tool: an IP held
 *                               twice in a pool is loaded rather than refused, so it
 *                               can be reported and released
 * @path: store file
 * @timeout_ms: how long to wait for the lock
 * @ret: the open store, written only on success
 * @err: as nvipam_store_open()
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_open_inspect(const char *path, unsigned int timeout_ms, struct nvipam_store *ret,
			      struct cni_err *err);

/**
 * nvipam_store_commit() - write the store if changed: temp file (0600), fsync,
 *                         rename over, fsync the directory
 * @s: open store
 * @err: code 5 on failure (the old file stays as it was)
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_commit(struct nvipam_store *s, struct cni_err *err);

/**
 * nvipam_store_close() - release memory and the lock, without writing
 * @s: store (may be zeroed or already closed)
 */
void nvipam_store_close(struct nvipam_store *s);

/**
 * nvipam_store_find() - the allocation of an attachment in a pool
 * @s: store
 * @pool: pool key
 * @container_id: container ID
 * @ifname: interface name
 *
 * Return: the allocation, NULL when none.
 */
struct nvipam_alloc *nvipam_store_find(struct nvipam_store *s, const char *pool,
				       const char *container_id, const char *ifname);

/**
 * nvipam_store_add() - record an allocation and the pool's last reserved IP
 * @s: store
 * @a: allocation to copy (strings duplicated; NULL strings become "")
 * @round_robin: whether it moves the pool's last reserved IP
 *
 * Return: 0 on success, -EEXIST when the IP is already held in the pool, -ENOMEM.
 */
int nvipam_store_add(struct nvipam_store *s, const struct nvipam_alloc *a, bool round_robin);

/**
 * nvipam_store_remove() - drop every allocation of an attachment (all pools when @pool is NULL)
 * @s: store
 * @pool: pool key or NULL
 * @container_id: container ID
 * @ifname: interface name
 *
 * Return: the number removed.
 */
size_t nvipam_store_remove(struct nvipam_store *s, const char *pool, const char *container_id,
			   const char *ifname);

/**
 * nvipam_alloc_ptr_cmp() - qsort() order of allocation pointers: by pool key, then by address
 * @a: a const struct nvipam_alloc *const *
 * @b: another
 *
 * Return: negative, 0 or positive.
 */
int nvipam_alloc_ptr_cmp(const void *a, const void *b);

/**
 * nvipam_store_usage() - the reserved IPs and last pick of a pool
 * @s: store
 * @pool: pool key
 * @ret_ips: malloc'ed array of held IPs, written only on success
 * @ret_n: number of entries
 * @ret_has_last: whether a last reserved IP is known
 * @ret_last: the last reserved IP
 *
 * Return: 0 on success, -ENOMEM.
 */
int nvipam_store_usage(const struct nvipam_store *s, const char *pool, struct ip_addr **ret_ips,
		       size_t *ret_n, bool *ret_has_last, struct ip_addr *ret_last);

/**
 * nvipam_store_drop_pool() - forget a pool's record (its last reserved IP) when the pool
 *                            holds no allocation
 * @s: store
 * @pool: pool key (may point into the record)
 *
 * Return: true when a record was dropped.
 */
bool nvipam_store_drop_pool(struct nvipam_store *s, const char *pool);
