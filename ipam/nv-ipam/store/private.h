/* The store's own types, shared by its modules only: the handle, its pools and their files, its allocations */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/store/alloc.h"
#include "ipam/nv-ipam/store/format.h"
#include "ipam/nv-ipam/store/snap.h"

struct store_strings;

/* An allocation as the model holds it. */
struct store_alloc {
	struct nvipam_alloc a; /* a.pool points at its pool's key: pools are told apart by pointer */
	uint64_t txn;          /* the two-pool ADD that made it, 0 when none */
};

/* Whether @a is the attachment's: one container's interface. */
static inline bool store_is_attachment(const struct nvipam_alloc *a, const char *container_id,
				       const char *ifname)
{
	return strcmp(a->container_id, container_id) == 0 && strcmp(a->ifname, ifname) == 0;
}

/*
 * A pool's snapshot that its model reads as it goes (a pool opened alone: ADD, DEL, CHECK,
 * STATUS), so that a command costs what it looks up: a record is copied into the model
 * when a lookup finds it (store/base.c); the others stay in the mapping.
 */
struct store_base {
	struct store_snap snap;
	uint8_t *gone; /* a bit per record: released by the log after the snapshot, or in the model */
	size_t live;   /* records not gone */
};

static inline bool store_base_gone(const struct store_base *b, size_t i)
{
	return b->gone[i / 8] & (1u << (i % 8));
}

/* Record @i is gone from the snapshot's share of the pool (released, or read into the model). */
static inline void store_base_take(struct store_base *b, size_t i)
{
	if (!store_base_gone(b, i)) {
		b->gone[i / 8] |= (uint8_t)(1u << (i % 8));
		b->live--;
	}
}

/* One pool's files as its holder sees them. */
struct store_pool_disk {
	char stem[STORE_FORMAT_STEM_MAX];
	int lock_fd;        /* the pool's lock, -1 when the node lock is held exclusively */
	int log_fd;         /* the log, open for reading and writing; -1 while it does not exist */
	char *data;         /* what was read of the log (strings decoded in place, pointed to) */
	char *old_data;     /* @data before the log was read again (still pointed to) */
	const char *snap;   /* the snapshot, mapped (its strings pointed to), NULL when none is used */
	size_t snap_len;
	struct store_base *base; /* NULL when the model holds every allocation of the pool */
	bool snap_bad;      /* the snapshot was found damaged: the log is read whole */
	size_t good_len;    /* end of the last complete line: where the next line goes */
	size_t file_len;    /* the log's length (beyond @good_len: a killed writer's torn line) */
	bool loaded;        /* read into the model */
	bool has_header;    /* the log has its header line */
	bool unsynced;      /* lines were appended and not yet synced */
	uint64_t log_id;    /* from the header: snapshots name the log they were made from */
	uint64_t tail_check; /* the checksum field of the last complete line */
	size_t n_lines;     /* change lines in the log */
	size_t snap_lines;  /* of which are in the snapshot on disk (0: none usable) */
	struct store_line *queue; /* changes to write at commit (strings owned by the store) */
	size_t n_queue;
};

/* A pool of the model. */
struct store_pool {
	char *key;                    /* NULL for a pool known by its stem until its log is read */
	bool has_last;
	struct ip_addr last_reserved; /* the last round-robin pick */
	struct store_pool_disk *disk; /* its log and lock (apart: it stays put as pools move) */
};

struct nvipam_store {
	int lock_fd;                   /* the node lock, held while the store is open */
	int dir_fd;                    /* the store's directory; files are opened relative to it */
	int pool_dir_fd;               /* "<name>.d", -1 while it does not exist */
	char *path;
	const char *name;              /* the file's name in its directory (points into @path) */
	/* Every allocation of the pools open: with the whole store open, of every pool. */
	struct store_alloc *allocs;
	size_t n_allocs;
	size_t cap_allocs;             /* room in @allocs */
	struct store_pool *pools;      /* sorted by file name stem: the order pools are locked in */
	size_t n_pools;
	bool whole;                    /* every pool of the node is open (exclusive node lock) */
	bool migrate;                  /* read from an older store: commit writes all */
	bool has_manifest;             /* "<path>" says version 2 */
	unsigned int timeout_ms;       /* how long the locks were waited for at most */
	int64_t deadline_us;           /* when waiting for them gives up (CLOCK_MONOTONIC) */
	struct store_strings *strings; /* where added allocations' strings live */
	char **dropped;                /* stems of pools dropped, whose logs go at commit */
	size_t n_dropped;
	char **headerless;             /* stems of logs without a header, read as empty (whole opens) */
	size_t n_headerless;
	int file_lock_fd;              /* the reference daemon's flock on a reference store file */
	bool owner;                    /* ipam-node or the tool taking or handing over the store */
	uint32_t resume_sum;           /* owner: the checksum handed over (0: none) */
	bool marked;                   /* owner: the handover's marker is there */
	char *adopted;                 /* the reference store file being taken over, as read: */
	size_t adopted_len;            /* recorded as "<name>.adopted" before the store file */
	bool merge;                    /* a reference file written after an adoption, merged */
	bool dirty;
	int fault;                     /* a pool could not be read again (a damaged snapshot's log): */
	struct cni_err fault_err;      /* why; commit fails with it */
};

/* A store that was never opened. */
#define STORE_INIT { .lock_fd = -1, .dir_fd = -1, .pool_dir_fd = -1, .file_lock_fd = -1 }
