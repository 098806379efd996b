/* The store on disk: its directory, the node and pool locks, reading and writing the files */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cni_err;
struct nvipam_store;
struct store_pool_disk;

/* A store file or pool log beyond this is refused as corrupt (a full /16 is ~20 MiB). */
#define STORE_DISK_MAX_BYTES (64u << 20)

/**
 * store_disk_set_deadline() - start the clock every lock of the store is waited for by
 * @s: store
 * @timeout_ms: how long from now
 */
void store_disk_set_deadline(struct nvipam_store *s, unsigned int timeout_ms);

/**
 * store_disk_open_dir() - open the store's directory and check that only root can change it
 * @s: store with @path set; @name and @dir_fd are written
 * @confined: the path comes from a network config (opened beneath the state directory,
 *            created when missing)
 * @err: as nvipam_store_open()
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_disk_open_dir(struct nvipam_store *s, bool confined, struct cni_err *err);

/**
 * store_disk_lock_node() - take "<path>.lock", shared or exclusive, before s->deadline_us
 * @s: store with its directory open; @lock_fd is opened the first time
 * @exclusive: the whole store
 * @err: code 11 when it is not free in time, 5 when the lock file cannot be used
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_disk_lock_node(struct nvipam_store *s, bool exclusive, struct cni_err *err);

/**
 * store_disk_unlock_node() - let go of the node lock (the file stays open)
 * @s: store
 */
void store_disk_unlock_node(struct nvipam_store *s);

/**
 * store_disk_unlock_pool() - let go of a pool's lock (the file stays open)
 * @d: the pool's files
 */
void store_disk_unlock_pool(struct store_pool_disk *d);

/**
 * store_disk_pool_dir() - open "<name>.d" (s->pool_dir_fd), creating it (0700) when asked
 * @s: store with its directory open
 * @create: create it when missing
 * @err: code 5 when it cannot be opened, created or trusted
 *
 * Return: 0 on success, -ENOENT (@err untouched) when missing and not created, another
 * negative errno on failure.
 */
int store_disk_pool_dir(struct nvipam_store *s, bool create, struct cni_err *err);

/**
 * store_disk_list() - the stems of every pool log, sorted (the order pools are locked in)
 * @s: store with its pool directory open
 * @ret: malloc'ed array of malloc'ed stems, written only on success
 * @ret_n: their number
 * @err: code 5 when the directory cannot be read
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_disk_list(struct nvipam_store *s, char ***ret, size_t *ret_n, struct cni_err *err);

/**
 * store_disk_lock_pool() - take a pool's lock exclusively, before s->deadline_us
 * @s: store with its pool directory open
 * @d: the pool's files (@stem set); @lock_fd is written
 * @err: code 11 when it is not free in time, 5 when the lock file cannot be used
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_disk_lock_pool(struct nvipam_store *s, struct store_pool_disk *d, struct cni_err *err);

/**
 * store_disk_open_log() - open a pool's log (its lock or the node's held) and learn its length
 * @s: store
 * @d: the pool's files; @log_fd and @file_len are written (-1 and 0 when there is no log)
 * @err: code 5 when it cannot be opened or is too large
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_disk_open_log(struct nvipam_store *s, struct store_pool_disk *d, struct cni_err *err);

/**
 * store_disk_read_log() - read part of an open pool's log
 * @s: store
 * @d: the pool's files, its log open
 * @off: where to start
 * @len: how much (the log must hold it)
 * @ret: malloc'ed bytes, NUL-terminated
 * @err: code 5 on failure
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_disk_read_log(struct nvipam_store *s, struct store_pool_disk *d, size_t off, size_t len,
			char **ret, struct cni_err *err);

/**
 * store_disk_map_snap() - map a pool's snapshot read-only (@snap and @snap_len are written)
 * @s: store
 * @d: the pool's files
 *
 * Return: 0 on success, -ENOENT when there is none, another negative errno when it
 * cannot be used (a snapshot is a cache: the caller reads the log instead).
 */
int store_disk_map_snap(struct nvipam_store *s, struct store_pool_disk *d);

/**
 * store_disk_unmap_snap() - let go of a pool's mapped snapshot
 * @d: the pool's files
 */
void store_disk_unmap_snap(struct store_pool_disk *d);

/**
 * store_disk_write_snap() - replace a pool's snapshot: temporary file, rename
 * @s: store
 * @d: the pool's files
 * @data: the snapshot
 * @len: its length
 *
 * Neither the file nor the directory is synced: a snapshot is a cache checked by its
 * sums. A power loss leaves the older one (a rename lost; it still matches an earlier
 * point of the same log) or a new one torn or empty, which fails its sums and is not
 * used: the log is read instead until the next snapshot (the crash-state explorer,
 * tests/crash, finds no state that loses anything without the sync). The lines it
 * covers must be on disk before it is written.
 *
 * Return: 0 on success, negative errno on failure (the old snapshot stays).
 */
int store_disk_write_snap(struct nvipam_store *s, struct store_pool_disk *d, const char *data,
			  size_t len);

/**
 * store_disk_append() - write lines at the end of a pool's log, over any torn tail
 * @s: store
 * @d: the pool's files
 * @data: the lines (with the header first when the log has none)
 * @len: their length
 * @sync: wait until they are on disk (fdatasync)
 * @err: code 5 on failure (the log is cut back to where it ended)
 *
 * Creates the log when missing (and syncs the directory that holds it).
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_disk_append(struct nvipam_store *s, struct store_pool_disk *d, const char *data,
		      size_t len, bool sync, struct cni_err *err);

/**
 * store_disk_rewrite() - replace a pool's log whole (temporary file, sync, rename, sync
 *                        the directory), and reopen it
 * @s: store
 * @d: the pool's files
 * @data: the new log
 * @len: its length
 * @err: code 5 on failure (the old log stays)
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_disk_rewrite(struct nvipam_store *s, struct store_pool_disk *d, const char *data,
		       size_t len, struct cni_err *err);

/**
 * store_disk_remove_log() - remove a pool's log and snapshot (migration drops what the
 *                           older store did not hold)
 * @s: store, under the exclusive node lock
 * @stem: the pool's stem
 * @err: code 5 on failure
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_disk_remove_log(struct nvipam_store *s, const char *stem, struct cni_err *err);

/**
 * store_disk_read_file() - read the store file ("<path>")
 * @s: store
 * @ret: malloc'ed contents, NULL when missing
 * @ret_len: their length, 0 when missing
 * @err: code 5 when unreadable or too large
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_disk_read_file(struct nvipam_store *s, char **ret, size_t *ret_len, struct cni_err *err);

/**
 * store_disk_write_file() - replace the store file atomically (under the exclusive node lock)
 * @s: store
 * @data: the new contents
 * @len: their length
 * @err: code 5 on failure (the old file stays)
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_disk_write_file(struct nvipam_store *s, const char *data, size_t len,
			  struct cni_err *err);

/**
 * store_disk_sweep() - remove the temporary files killed writers left (exclusive node lock)
 * @s: store
 */
void store_disk_sweep(struct nvipam_store *s);

/**
 * store_disk_sweep_pool() - remove the temporary files of a pool's log and snapshot that
 *                           killed writers left
 * @s: store
 * @d: the pool's files, its lock held (only its holder compacts it)
 */
void store_disk_sweep_pool(struct nvipam_store *s, const struct store_pool_disk *d);

/**
 * store_disk_drop_base() - forget what a pool's model had still to read from its
 *                          snapshot (the mapping stays, its strings pointed to)
 * @d: the pool's files
 */
void store_disk_drop_base(struct store_pool_disk *d);

/**
 * store_disk_close() - close a pool's files (releasing its lock) and free what was read
 * @d: the pool's files (may be NULL)
 */
void store_disk_close(struct store_pool_disk *d);
