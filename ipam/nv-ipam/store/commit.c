/* Writing the model's changes: lines appended and synced, logs compacted, snapshots, two-pool ADDs, migration */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/base.h"
#include "ipam/nv-ipam/store/commit.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/gate.h"
#include "ipam/nv-ipam/store/manifest.h"
#include "ipam/nv-ipam/store/model.h"
#include "ipam/nv-ipam/store/private.h"
#include "ipam/nv-ipam/store/snap.h"

/* A log is compacted once its dead lines outnumber its live ones by this much. */
#define COMPACT_SLACK 512

/* A random number for transactions and log ids; never 0, which means "none". */
static uint64_t random_id(void)
{
	struct timespec ts;
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v)) {
		(void)clock_gettime(CLOCK_REALTIME, &ts);
		v = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) * 0x9e3779b97f4a7c15ULL ^
		    (uint64_t)getpid();
	}
	return v ? v : 1;
}

int store_commit_file(struct nvipam_store *s, struct cni_err *err)
{
	struct text_buf b = { 0 };
	char dir[4096];
	int r;

	/* What is taken over is recorded first: its later change is then seen as one. */
	r = store_handover_record(s, err);
	if (r < 0)
		return r;
	snprintf(dir, sizeof(dir), "%s.d", s->name);
	store_manifest_render(&b, dir);
	if (b.oom)
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	else
		r = store_disk_write_file(s, b.data, b.len, err);
	text_buf_free(&b);
	if (r >= 0)
		s->has_manifest = true;
	return r;
}

/* A pool could not be read again once its snapshot was found damaged: the reason, kept. */
static int commit_fault(struct nvipam_store *s, struct cni_err *err)
{
	return cni_err_set(err, s->fault_err.code ? s->fault_err.code : CNI_ERR_IO, s->fault, "%s",
			   s->fault_err.msg);
}

/* Pool @p's log as the model has it: header (a new log id), allocations, last reserved address. */
static int pool_compacted(const struct nvipam_store *s, const struct store_pool *p,
			  uint64_t log_id, struct text_buf *b)
{
	int r = 0;

	store_format_header(b, p->key, log_id);
	for (size_t i = 0; r >= 0 && i < s->n_allocs; i++) {
		const struct store_alloc *a = &s->allocs[i];
		struct store_line l = { .type = 'A', .txn = a->txn, .partner = "", .alloc = a->a };

		if (a->a.pool == p->key)
			r = store_format_line(b, &l);
	}
	if (p->has_last) {
		struct store_line l = { .type = 'L', .alloc = { .ip = p->last_reserved } };

		r = r < 0 ? r : store_format_line(b, &l);
	}
	return r;
}

/* Pool @p's queued lines, after a header when its log has none. */
static int pool_lines(const struct store_pool *p, struct text_buf *b)
{
	struct store_pool_disk *d = p->disk;
	int r = 0;

	if (!d->has_header) {
		d->log_id = random_id();
		store_format_header(b, p->key, d->log_id);
	}
	for (size_t i = 0; r >= 0 && i < d->n_queue; i++)
		r = store_format_line(b, &d->queue[i]);
	return r;
}

/*
 * Pool @p's snapshot at the end of its log, when the lines since the last one are many.
 * A cache: failing to write it only means the next reader reads more of the log.
 */
static void pool_snapshot(struct nvipam_store *s, struct store_pool *p)
{
	struct store_pool_disk *d = p->disk;
	struct store_snap_point at = {
		.log_id = d->log_id,
		.log_len = d->good_len,
		.log_tail_check = d->tail_check,
		.n_lines = d->n_lines,
		.has_last = p->has_last,
		.last_reserved = p->last_reserved,
	};
	struct text_buf b = { 0 };

	if (d->n_lines - d->snap_lines < STORE_SNAP_EVERY || store_base_pull_all(s, p) < 0)
		return;
	/*
	 * The lines it covers go to disk first. A snapshot on disk over lines a power loss
	 * took would be read in their place, and the log after the hole they left would no
	 * longer be read past it (format.c): what is appended later would be lost.
	 */
	if (fdatasync(d->log_fd) < 0)
		return;
	d->unsynced = false;
	store_snap_build(&b, p->key, &at, s->allocs, s->n_allocs);
	if (!b.oom && store_disk_write_snap(s, d, b.data, b.len) == 0)
		d->snap_lines = d->n_lines;
	text_buf_free(&b);
}

/*
 * Write pool @p: its queued lines appended and synced (@defer_sync: synced later, by
 * store_commit_sync()), or its log rewritten whole when migrating or (@may_compact) when
 * its dead lines outnumber its live ones by COMPACT_SLACK.
 */
static int pool_write(struct nvipam_store *s, struct store_pool *p, bool may_compact,
		      bool defer_sync, struct cni_err *err)
{
	struct store_pool_disk *d = p->disk;
	struct text_buf b = { 0 };
	size_t live = store_model_live(s, p);
	bool compact = s->migrate || (may_compact && d->n_lines + d->n_queue > 2 * live + COMPACT_SLACK);
	uint64_t log_id = random_id();
	int r;

	/* Written whole: every allocation in the model first (read again, the count may differ). */
	if (compact && (r = store_base_pull_all(s, p)) < 0)
		return s->fault ? commit_fault(s, err) :
				  cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	live = store_model_live(s, p);
	r = compact ? pool_compacted(s, p, log_id, &b) : pool_lines(p, &b);

	if (r >= 0 && b.oom)
		r = -ENOMEM;
	if (r >= 0)
		r = compact ? store_disk_rewrite(s, d, b.data, b.len, err) :
			      store_disk_append(s, d, b.data, b.len, !defer_sync, err);
	else
		cni_err_set(err, CNI_ERR_INTERNAL, r, "pool log %s.d/%s.log: %s", s->path, d->stem,
			    r == -E2BIG ? "a line is too long" : "out of memory");
	if (r >= 0)
		(void)store_format_line_check(b.data, b.len, &d->tail_check);
	text_buf_free(&b);
	if (r < 0)
		return r;
	d->has_header = true;
	d->unsynced = !compact && defer_sync;
	if (compact) {
		d->log_id = log_id;
		d->n_lines = live + p->has_last;
		/* The old snapshot names the old log: it no longer counts. */
		d->snap_lines = 0;
	} else {
		d->n_lines += d->n_queue;
	}
	d->n_queue = 0;
	if (may_compact)
		pool_snapshot(s, p);
	return 0;
}

/*
 * An ADD that queued allocations in more than one pool: all but the last pool (in lock
 * order) get pending lines naming the last one, which holds the transaction; @pending
 * says which pools.
 * Return: the transaction, 0 when there is none.
 */
static uint64_t mark_transaction(struct nvipam_store *s, bool *pending)
{
	struct store_pool *last = NULL;
	size_t pools = 0;
	uint64_t txn;

	for (size_t i = 0; i < s->n_pools; i++) {
		const struct store_pool_disk *d = s->pools[i].disk;

		pending[i] = false;
		for (size_t k = 0; k < d->n_queue && !pending[i]; k++)
			pending[i] = d->queue[k].type == 'A';
		if (pending[i]) {
			last = &s->pools[i];
			pools++;
		}
	}
	if (pools < 2) {
		memset(pending, 0, s->n_pools * sizeof(*pending));
		return 0;
	}
	pending[last - s->pools] = false;
	txn = random_id();
	for (size_t i = 0; i < s->n_pools; i++) {
		struct store_pool *p = &s->pools[i];
		struct store_pool_disk *d = p->disk;

		for (size_t k = 0; k < d->n_queue; k++) {
			struct store_line *l = &d->queue[k];

			if (l->type != 'A')
				continue;
			l->txn = txn;
			if (pending[i]) {
				l->flags |= STORE_ADD_PENDING;
				l->partner = last->key;
			}
			/* The model keeps it too: compacting the last pool keeps the evidence. */
			for (size_t j = 0; j < s->n_allocs; j++)
				if (s->allocs[j].a.pool == p->key &&
				    ip_addr_equal(&s->allocs[j].a.ip, &l->alloc.ip))
					s->allocs[j].txn = txn;
		}
	}
	return txn;
}

/* The logs of pools dropped (nvipam_store_drop_pool()) removed, each gone or not. */
static int commit_dropped(struct nvipam_store *s, struct cni_err *err)
{
	int r = 0;

	while (r >= 0 && s->n_dropped) {
		r = store_disk_remove_log(s, s->dropped[s->n_dropped - 1], err);
		if (r >= 0)
			free(s->dropped[--s->n_dropped]);
	}
	return r;
}

/* Migration: every pool's log written whole, logs of pools the older store lacks removed. */
static int commit_migration(struct nvipam_store *s, struct cni_err *err)
{
	char **stems = NULL;
	size_t n = 0;
	int r;

	r = store_disk_pool_dir(s, true, err);
	if (r >= 0)
		r = store_disk_list(s, &stems, &n, err);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		bool kept = false;

		for (size_t k = 0; k < s->n_pools && !kept; k++)
			kept = strcmp(s->pools[k].disk->stem, stems[i]) == 0;
		if (!kept)
			r = store_disk_remove_log(s, stems[i], err);
	}
	for (size_t i = 0; i < n; i++)
		free(stems[i]);
	free(stems);
	for (size_t i = 0; r >= 0 && i < s->n_pools; i++)
		r = pool_write(s, &s->pools[i], true, false, err);
	/* Last: until the store file says version 2, the older store is the truth. */
	if (r >= 0)
		r = store_commit_file(s, err);
	if (r >= 0)
		s->migrate = false;
	/* Those the older store had were not written; a log from before the migration may be. */
	return r < 0 ? r : commit_dropped(s, err);
}

int store_commit_write(struct nvipam_store *s, bool defer_sync, struct cni_err *err)
{
	_cleanup_free_ bool *pending = NULL;
	uint64_t txn;
	int r = 0;

	/* What was decided on a pool read only in part is not written. */
	if (s->fault)
		return commit_fault(s, err);

	if (s->migrate)
		return commit_migration(s, err);
	/* A merge's lines go first: until the store file says version 2, they are redone. */
	if (!s->has_manifest && !s->merge)
		r = store_commit_file(s, err);
	if (r >= 0)
		r = store_disk_pool_dir(s, true, err);
	if (r < 0)
		return r;
	pending = calloc(s->n_pools + 1, sizeof(*pending));
	if (!pending)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	txn = mark_transaction(s, pending);
	/* Two pools: each pool's lines on disk before the next pool's are written. */
	defer_sync = defer_sync && !txn;
	for (size_t i = 0; i < s->n_pools; i++) {
		/* Pending lines are appended, and stay pending until confirmed: no compaction. */
		if (s->pools[i].disk->n_queue &&
		    (r = pool_write(s, &s->pools[i], !pending[i], defer_sync, err)) < 0)
			return r;
	}
	/* Every pool holds its lines: the pending ones are confirmed (a hint, not synced). */
	for (size_t i = 0; txn && i < s->n_pools; i++) {
		struct store_line c = { .type = 'C', .txn = txn };
		struct store_pool_disk *d = s->pools[i].disk;
		struct cni_err ignored = { 0 };
		struct text_buf b = { 0 };

		if (pending[i] && store_format_line(&b, &c) == 0 && !b.oom &&
		    store_disk_append(s, d, b.data, b.len, false, &ignored) == 0) {
			d->n_lines++;
			(void)store_format_line_check(b.data, b.len, &d->tail_check);
			/*
			 * Every pool of the ADD synced its lines: the transaction stands, and the
			 * snapshot pool_write() left out may record it as done.
			 */
			pool_snapshot(s, &s->pools[i]);
		}
		text_buf_free(&b);
	}
	if (!s->has_manifest && (r = store_commit_file(s, err)) < 0)
		return r;
	return commit_dropped(s, err);
}

int store_commit_sync(struct nvipam_store *s, struct cni_err *err)
{
	int r = 0;

	for (size_t i = 0; i < s->n_pools; i++) {
		struct store_pool_disk *d = s->pools[i].disk;

		if (!d->unsynced)
			continue;
		if (fdatasync(d->log_fd) < 0 && r == 0)
			r = cni_err_set(err, CNI_ERR_IO, -errno, "cannot write pool log %s.d/%s.log: sync: %s",
					s->path, d->stem, strerror(errno));
		d->unsynced = false;
	}
	return r;
}
