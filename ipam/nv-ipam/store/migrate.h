/* The store file: version 2 points at the pool logs; older stores are read to be migrated */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/store/store.h"

struct cni_err;
struct text_buf;

/* The store file's version since the allocations moved to one log per pool. */
#define STORE_FILE_VERSION 2

enum store_file_kind {
	STORE_FILE_NONE,      /* missing or empty */
	STORE_FILE_CURRENT,   /* {"version":2,...}: the allocations are in the pool logs */
	STORE_FILE_V1,        /* ours until version 2: every allocation in the file */
	STORE_FILE_REFERENCE, /* the reference nv-ipam node daemon's */
};

struct store_legacy_pool {
	char *key;
	bool has_last;
	struct ip_addr last_reserved;
};

/* What an older store holds; every allocation owns one block of strings, at ->pool. */
struct store_legacy {
	struct nvipam_alloc *allocs;
	size_t n_allocs;
	struct store_legacy_pool *pools;
	size_t n_pools;
	uint32_t checksum; /* the reference daemon's file: its checksum */
};

/**
 * store_migrate_read() - read the store file
 * @data: its contents
 * @len: their length
 * @ret_kind: what it is
 * @ret: the allocations and pools of an older store (zeroed for the others); release
 *       with store_migrate_free()
 * @why: the reason (code 5, or 2 for out of memory), on failure
 *
 * Version 1 (ours): {"version":1, "pools":{"<key>":{"lastReservedIP":"<ip>"}},
 * "allocations":[{"pool","ip","containerID","ifname","network","podNamespace",
 * "podName","podUID","deviceID","created"}]}: pool, ip, containerID and ifname are
 * required, the other strings default to "", "created" (RFC 3339) to the epoch; null
 * counts as absent; other members are ignored. The reference daemon's file (root
 * {version, checksum, pools}, pools {name, entries, last_pool_config,
 * last_reserved_ip}) is recognised by its "checksum" or by pools holding "entries"
 * and verified as the daemon does: FNV-1a-32 of the document as Go's encoding/json
 * writes it with "checksum":0, a zero checksum refused; every entry is kept,
 * "released_at" ones included (they hold their IP until the daemon's cooldown),
 * with the network name unknown (""). Duplicates are not checked here.
 *
 * Return: 0 on success, -EPROTONOSUPPORT for another version, -EINVAL for a corrupt
 * file, -ENOMEM.
 */
int store_migrate_read(const char *data, size_t len, enum store_file_kind *ret_kind,
		       struct store_legacy *ret, struct cni_err *why);

/**
 * store_migrate_free() - release what store_migrate_read() returned, and zero it
 * @l: the older store's contents
 */
void store_migrate_free(struct store_legacy *l);

/**
 * store_migrate_file() - the store file of version 2
 * @b: buffer it is appended to
 * @pool_dir: the name of the directory of pool logs beside it ("store.d")
 */
void store_migrate_file(struct text_buf *b, const char *pool_dir);
