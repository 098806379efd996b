/* The node's allocation store: one log per pool, each changed under its own lock */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/util/cleanup.h"
#include "common/util/ipaddr.h"
#include "common/util/rfc3339.h"
#include "ipam/nv-ipam/store/alloc.h"

/* Where the store is unless nv-ipam.conf says otherwise. */
#define NVIPAM_DEFAULT_STORE_FILE "/var/lib/cni/nv-ipam/store"
/* How long the store's locks are waited for (a plain number: --help prints it). */
#define NVIPAM_DEFAULT_LOCK_TIMEOUT_MS 10000

/* What --version says of the store formats: ipam-node installs nv-ipam only over a store it reads. */
#define NVIPAM_STORE_FORMATS                                                                      \
	"store formats: reads 2 (writes 2) and the reference nv-ipam node daemon's 1 "           \
	"(migrated; written back by nv-ipam-tool handover)"

struct cni_err;
/* Opaque: its pools, files and locks are the store's own (store/private.h). */
struct nvipam_pool_usage;
struct nvipam_store;

/*
 * Layout, beside the store file "<path>" (docs/nv-ipam.md, "The store"):
 *   <path>            {"version":2,"pools":"<name>.d"}: the store is of version 2, its
 *                     allocations in the pool logs of <path>.d (the member names that
 *                     directory for people; it is always <path>.d)
 *   <path>.lock       the node lock: shared by whoever works on some pools (ADD, DEL,
 *                     CHECK, STATUS), exclusive for the whole store (GC, the operator
 *                     tool, migrating an older store)
 *   <path>.d/<stem>.log   one pool's log, appended to under
 *   <path>.d/<stem>.lock  the pool's lock
 *   <path>.d/<stem>.snap  the pool's snapshot: a read cache of its log
 * A commit appends one line per change and syncs it: its cost does not follow the
 * number of allocations. A log is rewritten whole (compacted) under its lock once its
 * dead lines outnumber its live ones by 512.
 */

/* A pool the store holds a record of. */
struct nvipam_store_pool_info {
	const char *key;
	bool has_last;
	struct ip_addr last_reserved; /* the last round-robin pick */
};

/**
 * nvipam_store_open() - lock the whole store of the node and load every pool
 * @path: store file; a missing or empty file (and no "<path>.d") is an empty store
 * @confined: @path comes from a network config: it must lie in the node's state
 *            directory (common/cni/trust.h) and is opened beneath it, creating what
 *            is missing; otherwise (the operator's path) its directory must exist
 * @timeout_ms: how long to wait for the lock
 * @ret: the open store, written only on success; release with nvipam_store_close()
 * @err: code 11 when the lock is not free in time; code 5 naming the file when it is
 *       unreadable or corrupt (nothing is changed), or when the store's directory is
 *       not owned by root or is writable by group or others; code 7 for a path a
 *       network config may not name
 *
 * Takes "<path>.lock" exclusively: no other process works on any pool until close.
 * Every file is opened without following symbolic links and without blocking. The
 * reference nv-ipam node daemon's store is read and converted; the next commit writes
 * the pool logs and replaces it.
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_open(const char *path, bool confined, unsigned int timeout_ms,
		      struct nvipam_store **ret, struct cni_err *err);

/**
 * nvipam_store_open_inspect() - nvipam_store_open() for the operator tool: every log read
 *                               whole, snapshots aside, and an IP held twice in a pool
 *                               loaded rather than refused, so it can be reported and
 *                               released
 * @path: store file
 * @timeout_ms: how long to wait for the lock
 * @ret: the open store, written only on success; release with nvipam_store_close()
 * @err: as nvipam_store_open()
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_open_inspect(const char *path, unsigned int timeout_ms,
			      struct nvipam_store **ret, struct cni_err *err);

/**
 * nvipam_store_open_read() - nvipam_store_open_inspect() that writes nothing: the node
 *                            lock's file is not made (without it, no nv-ipam ever
 *                            opened the store, and it is read unlocked) and no
 *                            temporary file of a killed writer is removed
 * @path: store file
 * @timeout_ms: how long to wait for the lock
 * @ret: the open store, written only on success; release with nvipam_store_close()
 * @err: as nvipam_store_open()
 *
 * For the operator tool's show and check; what they read is never committed.
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_open_read(const char *path, unsigned int timeout_ms, struct nvipam_store **ret,
			   struct cni_err *err);

/**
 * nvipam_store_open_pools() - lock some pools of the store and load them
 * @path: store file, as for nvipam_store_open()
 * @confined: as for nvipam_store_open()
 * @timeout_ms: how long to wait for all the locks together
 * @keys: pool keys (duplicates allowed)
 * @n_keys: their number (at least 1)
 * @ret: the open store holding only these pools, written only on success
 * @err: as nvipam_store_open()
 *
 * Shares the node lock and takes each pool's lock exclusively, in file name order:
 * work on other pools goes on meanwhile. An older store is migrated first (under the
 * exclusive node lock), and a store file is written if there is none.
 * nvipam_store_add() takes only these pools.
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_open_pools(const char *path, bool confined, unsigned int timeout_ms,
			    const char *const *keys, size_t n_keys, struct nvipam_store **ret,
			    struct cni_err *err);

/**
 * nvipam_store_release() - DEL: release an attachment in every pool of the store
 * @path: store file, as for nvipam_store_open()
 * @confined: as for nvipam_store_open()
 * @timeout_ms: how long to wait for all the locks together
 * @container_id: container ID
 * @ifname: interface name
 * @cooldown_s: the node's released-address cooldown: when not 0, the addresses released
 *              are noted with the time, for nvipam_store_cooling()
 * @ret_n: the number of allocations released
 * @err: as nvipam_store_open(), and code 5 when a change cannot be written
 *
 * Shares the node lock and visits the pools one at a time, each under its lock; a
 * pool renamed or dropped from the configuration since ADD is released too. When
 * it fails part way, the pools visited are released: running it again finishes.
 * A store handed over to the reference daemon that no daemon has taken is released
 * in the daemon's file instead (store_handover_release(): no cooldown note, the
 * daemon keeps none of ours).
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_release(const char *path, bool confined, unsigned int timeout_ms,
			 const char *container_id, const char *ifname, unsigned int cooldown_s,
			 size_t *ret_n, struct cni_err *err);

/**
 * nvipam_store_commit() - write the changes: one line per change appended to each
 *                         pool's log and synced (or the log rewritten when compacted)
 * @s: open store
 * @err: code 5 on failure (what was not written stays as it was, and stays to write)
 *
 * An ADD that took addresses in two pools is all or nothing: the first pool's lines
 * are pending until the second pool's are written, and a reader that finds them
 * pending after a crash looks at the second pool (docs/nv-ipam.md).
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_commit(struct nvipam_store *s, struct cni_err *err);

/**
 * nvipam_store_commit_close() - commit, then close, letting go of the locks before
 *                               waiting for the disk
 * @s: open store (closed and freed on return, whatever happened)
 * @err: code 5 on failure
 *
 * The lines are written whole under the locks, and synced after: the next writer of a
 * pool need not wait for this one's sync (its own covers these lines too), which is
 * what makes a burst of ADDs on one pool more than one sync at a time. Returns once
 * the lines are on disk. An ADD in two pools syncs each pool before the next, under
 * the locks, as nvipam_store_commit() does.
 *
 * Return: 0 on success, negative errno on failure (lines written but not synced stay:
 * the runtime's DEL after a failed ADD releases them).
 */
int nvipam_store_commit_close(struct nvipam_store *s, struct cni_err *err);

/**
 * nvipam_store_close() - let go of the locks and free the store, without writing
 * @s: store, or NULL
 */
void nvipam_store_close(struct nvipam_store *s);

DEFINE_CLEANUP_FUNC(nvipam_store_closep, struct nvipam_store *, nvipam_store_close);

/**
 * nvipam_store_find() - the allocation of an attachment in a pool
 * @s: store
 * @pool: pool key
 * @container_id: container ID
 * @ifname: interface name
 *
 * A pool opened alone reads what it looks up of its snapshot into the store: a lookup
 * (this one, nvipam_store_find_pod(), _find_key(), _alloc_at()) is such a change.
 *
 * Return: the allocation (valid until the store changes), NULL when none.
 */
const struct nvipam_alloc *nvipam_store_find(struct nvipam_store *s, const char *pool,
					     const char *container_id, const char *ifname);

/**
 * nvipam_store_find_pod() - an allocation of the same pod and interface in a pool under
 *                           another container ID: the pod's previous sandbox's
 * @s: store
 * @pool: pool key
 * @pod_uid: the pod's UID (an empty one finds nothing)
 * @ifname: interface name
 * @container_id: the container ID that is not it (the new sandbox's)
 *
 * A pod has one sandbox at a time: what its previous one holds is its to take over.
 *
 * Return: the allocation, NULL when none.
 */
const struct nvipam_alloc *nvipam_store_find_pod(struct nvipam_store *s, const char *pool,
						 const char *pod_uid, const char *ifname,
						 const char *container_id);

/**
 * nvipam_store_find_key() - an allocation of another attachment in a pool that the
 *                           reference daemon's store would key as this one
 * @s: store
 * @pool: pool key
 * @container_id: container ID
 * @ifname: interface name
 *
 * The daemon keys an attachment "<container_id>_<ifname>": "a_b" with "c" and "a" with
 * "b_c" are one key to it. The same container ID is the same key only with the same
 * interface, which nvipam_store_find() finds.
 *
 * Return: the allocation, NULL when none.
 */
const struct nvipam_alloc *nvipam_store_find_key(struct nvipam_store *s, const char *pool,
						 const char *container_id, const char *ifname);

/**
 * nvipam_store_add() - record an allocation and the pool's last reserved IP
 * @s: store
 * @a: allocation to copy (strings duplicated; NULL strings become "")
 * @round_robin: whether it moves the pool's last reserved IP
 *
 * Return: 0 on success, -EEXIST when the IP is already held in the pool, -EINVAL for
 * an allocation without pool or IP or (open_pools) in a pool that is not open,
 * -E2BIG when its strings are too long to record, -ENOMEM.
 */
int nvipam_store_add(struct nvipam_store *s, const struct nvipam_alloc *a, bool round_robin);

/**
 * nvipam_store_remove() - drop every allocation of an attachment (all pools when @pool is NULL)
 * @s: store
 * @pool: pool key or NULL
 * @container_id: container ID
 * @ifname: interface name
 *
 * The arguments may point into an allocation being removed; its strings stay valid
 * until the store is closed. Allocations after a removed one move up.
 *
 * Return: the number removed.
 */
size_t nvipam_store_remove(struct nvipam_store *s, const char *pool, const char *container_id,
			   const char *ifname);

/**
 * nvipam_store_count() - how many allocations the store holds (of the pools it opened)
 * @s: store, or NULL (none)
 *
 * Return: the count.
 */
size_t nvipam_store_count(const struct nvipam_store *s);

/**
 * nvipam_store_alloc_at() - the allocations one by one, for listing them
 * @s: store, or NULL (none)
 * @i: index, from 0
 *
 * Listing past what a store opened for some pools has read reads the rest of their
 * snapshots (nvipam_store_find()).
 *
 * Return: the @i-th allocation (valid until the store changes), NULL past the last.
 */
const struct nvipam_alloc *nvipam_store_alloc_at(const struct nvipam_store *s, size_t i);

/**
 * nvipam_store_pool_count() - how many pools the store holds a record of
 * @s: store, or NULL (none)
 *
 * Return: the count.
 */
size_t nvipam_store_pool_count(const struct nvipam_store *s);

/**
 * nvipam_store_pool_at() - the pool records one by one, in lock (file name) order
 * @s: store, or NULL (none)
 * @i: index, from 0
 * @ret: the record (its key valid until the store changes), written only when there is one
 *
 * Return: true with a record, false past the last.
 */
bool nvipam_store_pool_at(const struct nvipam_store *s, size_t i,
			  struct nvipam_store_pool_info *ret);

/**
 * nvipam_store_usage() - the reserved IPs and last pick of a pool, as the allocator takes them
 * @s: store, or NULL (none)
 * @pool: pool key
 * @ret: its reserved IPs (malloc'ed, in ip_addr_cmp() order: release with
 *       nvipam_store_usage_free()), their count and the last round-robin pick; written
 *       only on success
 *
 * Return: 0 on success, -ENOMEM, or the failure to read the pool's log again when its
 * snapshot turns out damaged.
 */
int nvipam_store_usage(const struct nvipam_store *s, const char *pool, struct nvipam_pool_usage *ret);

/**
 * nvipam_store_usage_lookup() - a pool's usage for allocating: the held addresses asked
 *                               one at a time (the allocator's ->held), not listed
 * @s: store (outliving the usage)
 * @pool: pool key
 * @ret: the usage, its last round-robin pick; written only on success, released with
 *       nvipam_store_usage_free()
 *
 * What an ADD costs then follows the addresses it looks at, not those the pool holds;
 * nvipam_pool_free_count() needs nvipam_store_usage()'s list instead.
 *
 * Return: 0 on success, -ENOMEM.
 */
int nvipam_store_usage_lookup(struct nvipam_store *s, const char *pool,
			      struct nvipam_pool_usage *ret);

/**
 * nvipam_store_usage_free() - release what nvipam_store_usage() filled in
 * @u: usage (its reserved IPs; NULL is fine)
 */
void nvipam_store_usage_free(struct nvipam_pool_usage *u);

/**
 * nvipam_store_dirty() - whether changes wait for a commit
 * @s: store, or NULL (none)
 *
 * Return: true when they do.
 */
bool nvipam_store_dirty(const struct nvipam_store *s);

/**
 * nvipam_store_cooling() - the addresses of a pool released less than a cooldown ago
 * @s: store, the pool open (its lock held)
 * @pool: pool key
 * @cooldown_s: the cooldown (0: none, nothing returned)
 * @ret: malloc'ed array in ip_addr_cmp() order (NULL when empty), written on success
 * @ret_n: its length
 *
 * Return: 0, -ENOMEM.
 */
int nvipam_store_cooling(const struct nvipam_store *s, const char *pool, unsigned int cooldown_s,
			 struct ip_addr **ret, size_t *ret_n);

/**
 * nvipam_store_headerless() - the pool logs a whole open found without their header line
 * @s: store opened whole, or NULL (none)
 * @ret_n: their number
 *
 * A log is created with its header; one without (empty, or torn at creation) holds
 * nothing and is read as no pool at all: the tool reports it.
 *
 * Return: their file names without ".log".
 */
const char *const *nvipam_store_headerless(const struct nvipam_store *s, size_t *ret_n);

/**
 * nvipam_store_drop_pool() - forget a pool's record (its last reserved IP) when the pool
 *                            holds no allocation
 * @s: store opened whole (nvipam_store_open(), _open_inspect())
 * @pool: pool key (may point into the record)
 *
 * The pool's record goes at once; its log and snapshot are removed at commit (its lock
 * file stays: a process may hold it open).
 *
 * Return: true when a record was dropped; false when there is none, it holds an
 * allocation, the store was opened for some pools only, or memory ran out.
 */
bool nvipam_store_drop_pool(struct nvipam_store *s, const char *pool);

/**
 * nvipam_store_path() - the store file's path
 * @s: open store
 *
 * Return: the path, as given to open.
 */
const char *nvipam_store_path(const struct nvipam_store *s);

/**
 * nvipam_store_dir_fd() - the store's directory, for a file kept beside the store and
 *                         changed only under its exclusive lock (gc's miss counts)
 * @s: open store
 *
 * Return: the directory's descriptor (the store's: not to be closed).
 */
int nvipam_store_dir_fd(const struct nvipam_store *s);

/**
 * nvipam_store_name() - the store file's name in its directory
 * @s: open store
 *
 * Return: the name (the last component of nvipam_store_path()).
 */
const char *nvipam_store_name(const struct nvipam_store *s);

/* What nvipam_store_adopt() found. */
enum nvipam_store_adoption {
	NVIPAM_STORE_OURS,     /* the store was ours already (or there was none) */
	NVIPAM_STORE_RESUMED,  /* handed over, and unchanged since: our logs are the truth again */
	NVIPAM_STORE_MIGRATED, /* the reference daemon's store (changed since a handover, or
				* never ours), migrated into pool logs */
	NVIPAM_STORE_MERGED,   /* the reference daemon's store file written again after it was
				* taken over: its changes since merged into the pool logs */
};

/**
 * nvipam_store_adopt() - take the store over on a node where the reference nv-ipam node
 *                        daemon may have run: what ipam-node does when it starts
 * @path: store file (the operator's)
 * @timeout_ms: how long to wait for the node lock
 * @ret: what was found
 * @ret_n: the allocations the store holds
 * @err: code 11 when the reference daemon answers on its socket; as nvipam_store_open()
 *       otherwise (code 5 with -EPROTONOSUPPORT for a store format this build cannot read)
 *
 * The caller holds the daemon's flock on @path (as the daemon takes it), so the daemon
 * cannot start meanwhile. Under the exclusive node lock, a reference store file is
 * migrated unless it is what nvipam_store_handover() wrote (its checksum is the
 * marker's), in which case the store file points at the pool logs again; the marker
 * goes last.
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_adopt(const char *path, unsigned int timeout_ms, enum nvipam_store_adoption *ret,
		       size_t *ret_n, struct cni_err *err);

/**
 * nvipam_store_handover() - write the store in the reference daemon's format, for it to
 *                           start on: what ipam-node does when it stops
 * @path: store file (the operator's)
 * @timeout_ms: how long to wait for the node lock
 * @ret_n: the allocations written
 * @ret_sum: the file's checksum
 * @err: as nvipam_store_open(); code 5 when a file cannot be written
 *
 * Under the exclusive node lock (ADDs and DELs under way finish first), the marker
 * "<path>.handed-over" is written, then the store file, each whole by rename: from the
 * marker on, nv-ipam answers code 11 until nvipam_store_adopt() removes it. The pool
 * logs stay, for nvipam_store_adopt() to resume from when the daemon changed nothing.
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_handover(const char *path, unsigned int timeout_ms, size_t *ret_n,
			  uint32_t *ret_sum, struct cni_err *err);

/* What nvipam_store_open_handed_over() found beside the store file. */
struct nvipam_store_handover_info {
	bool marked;      /* "<path>.handed-over" is there */
	bool handed_over; /* and the store file is in the reference daemon's format */
	bool changed;     /* that file is not the one handed over: the daemon wrote it since */
	char at[RFC3339_STRLEN]; /* when it was handed over, from the marker ("" when unknown) */
};

/**
 * nvipam_store_open_handed_over() - the store as the reference nv-ipam node daemon reads
 *                                   it, when it was handed over to that daemon
 * @path: store file (the operator's), known to exist
 * @timeout_ms: how long to wait for the node lock
 * @ret: a read-only store holding the reference file's pools and allocations (network
 *       names unknown: ""), written only on success: NULL when the store is not handed
 *       over (no marker, or a handover that did not get to write the file); release with
 *       nvipam_store_close(), never commit
 * @info: what was found, written on success
 * @err: code 11 when the node lock is not free in time; code 5 naming the file when it
 *       cannot be read or is corrupt
 *
 * Writes and creates nothing, and takes only the node lock, shared (and only when its
 * file is there): never the daemon's flock on the store file, which would keep the
 * daemon from starting. Under that lock an owner handing the store over or taking it
 * back (nvipam_store_handover(), nvipam_store_adopt()) is done or not begun.
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_store_open_handed_over(const char *path, unsigned int timeout_ms,
				  struct nvipam_store **ret,
				  struct nvipam_store_handover_info *info, struct cni_err *err);
