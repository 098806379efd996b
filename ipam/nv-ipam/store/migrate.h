/* Older stores: the reference nv-ipam node daemon's store file, read and loaded to be written as pool logs */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/store/alloc.h"

struct cni_err;
struct nvipam_store;
struct text_buf;

enum store_file_kind {
	STORE_FILE_NONE,      /* missing or empty */
	STORE_FILE_CURRENT,   /* {"version":2,...}: the allocations are in the pool logs */
	STORE_FILE_REFERENCE, /* the reference nv-ipam node daemon's: every allocation in the file */
};

struct store_legacy_pool {
	char *key;
	bool has_last;
	struct ip_addr last_reserved;
};

/* An allocation of an older store, its strings in one block of their own. */
struct store_legacy_alloc {
	struct nvipam_alloc a;
	char *strings;
};

/* What an older store holds. */
struct store_legacy {
	struct store_legacy_alloc *allocs;
	size_t n_allocs;
	struct store_legacy_pool *pools;
	size_t n_pools;
	uint32_t checksum; /* the reference daemon's file: its checksum */
};

/**
 * store_migrate_read() - read a store file that is not the manifest this store writes
 * @data: its contents
 * @len: their length
 * @ret_kind: what it is
 * @ret: the allocations and pools of an older store (zeroed for the others); release
 *       with store_migrate_free()
 * @why: the reason (code 5, or 999 for out of memory), on failure
 *
 * The reference daemon's file (root {version, checksum, pools}, pools {name, entries,
 * last_pool_config, last_reserved_ip}) is recognised by its "checksum" or by pools
 * holding "entries" and verified as the daemon does: FNV-1a-32 of the document as Go's
 * encoding/json writes it with "checksum":0, a zero checksum refused; every entry is
 * kept, "released_at" ones included (they hold their IP until the daemon's cooldown),
 * with the network name unknown (""). Duplicates are not checked here. Any other JSON
 * object of "version" 2 is the current store file, written by hand.
 *
 * Return: 0 on success, -EPROTONOSUPPORT for another version, -ENOMSG for JSON without
 * a "version" (not a store), -EINVAL for a corrupt file, -ENOMEM.
 */
int store_migrate_read(const char *data, size_t len, enum store_file_kind *ret_kind,
		       struct store_legacy *ret, struct cni_err *why);

/**
 * store_migrate_free() - release what store_migrate_read() returned, and zero it
 * @l: the older store's contents
 */
void store_migrate_free(struct store_legacy *l);

/**
 * store_migrate_load() - an older store into the model of a store opened whole: every
 *                        pool and allocation, written by the next commit
 * @s: store, under the exclusive node lock, its model empty
 * @l: what store_migrate_read() returned (its allocations' strings pass to the store)
 * @allow_dups: load an IP held twice in a pool (the operator tool) rather than refuse it
 * @err: code 5 naming the file for an IP held twice in a pool, 999 for out of memory
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_migrate_load(struct nvipam_store *s, struct store_legacy *l, bool allow_dups,
		       struct cni_err *err);

/**
 * store_migrate_release() - the reference daemon's store file without an attachment's
 *                           entries
 * @data: the file's contents
 * @len: their length
 * @container_id: the attachment's container
 * @ifname: and interface
 * @out: the new file (appended to), written only when an entry went
 * @ret_n: how many entries went ("<container>_<ifname>" and its "..._<ip>" renamed ones)
 * @why: code 5 for a file the daemon would refuse, 999 for out of memory
 *
 * The file is checked as store_migrate_read() checks it; the rest of it, released_at and
 * pool configs included, is kept as it was, and the checksum recomputed the daemon's way.
 *
 * Return: 0 on success (@ret_n may be 0), -ENODATA (@why untouched) for a file that is
 * empty or not the daemon's, -EINVAL, -EPROTONOSUPPORT, -ENOMEM.
 */
int store_migrate_release(const char *data, size_t len, const char *container_id,
			  const char *ifname, struct text_buf *out, size_t *ret_n,
			  struct cni_err *why);
