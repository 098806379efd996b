/* One pass of the cleaner: allocations judged against a pod listing, the due ones released */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct cni_err;
struct pods;

struct gc_params {
	const char *store;            /* the store file */
	const char *pool_file;        /* the node pool file; when missing, no pool record is dropped */
	unsigned int lock_timeout_ms; /* how long the store lock is waited for */
	unsigned long misses;         /* release on this many consecutive misses (>= 1) */
	time_t listed_at;             /* when the listing was started (date +%s, taken before) */
	/*
	 * This node: a listing holding none of its pods is refused while the store holds
	 * allocations it would count. NULL or "": the pool file's nodeName; when that is
	 * unknown too, only a listing of no pod at all is refused.
	 */
	const char *node;
	bool dry_run;                 /* judge and report, change nothing */
};

/* Allocations by what the pass made of them. */
struct gc_tally {
	size_t seen;     /* their pod is listed */
	size_t fresh;    /* newer than the listing: not counted */
	size_t no_pod;   /* without a pod name: skipped */
	size_t missed;   /* their pod is gone (released ones included) */
	size_t released;
	size_t held;     /* due, but sharing an interface with one whose pod is listed */
	size_t dropped;  /* pool records dropped */
};

/* One pool of the store after the pass. */
struct gc_pool_count {
	char *pool;       /* pool key */
	size_t allocated; /* allocations left */
	size_t missed;    /* of them, held by a pod that is gone (not yet due) */
	size_t released;  /* released by this pass */
};

struct gc_result {
	struct gc_tally tally;
	char *report;     /* a line per address missed, released or kept, and per pool dropped */
	char *warnings;   /* a line per trouble that did not stop the pass (the counts file
			     unreadable: counts start over), NULL when none */
	struct gc_pool_count *pools; /* sorted by key */
	size_t n_pools;
};

/**
 * gc_run() - one pass, under the store lock from start to end
 * @p: what to clean and how
 * @pods: the listing (pods_read(), pods_parse() or one read from the API)
 * @ret: what happened, written only on success; release with gc_result_free()
 * @err: code 7 for a listing that cannot be this node's (no pod at all, or none bound
 *       to @p->node, while the store holds allocations of pods listed before it): nothing
 *       is counted or released; the store's and the pool file's errors
 *
 * 1. each allocation is judged: without a pod name (skipped), newer than the listing
 *    (not counted), its pod listed (seen), or missed (its pod absent, or listed with
 *    another UID than the one recorded);
 * 2. the counts file ("<store>.gc") is replaced: a missed allocation's count goes up by one,
 *    every other one has none (a pod seen again starts over);
 * 3. the allocations whose count reached @p->misses are removed and the store committed;
 *    the record of a pool left without allocation and without a block is dropped.
 * The counts are written before the store, each file replaced by rename: a kill at any
 * instant leaves a release one pass late, never early.
 *
 * Return: 0 on success, negative errno on failure.
 */
int gc_run(const struct gc_params *p, const struct pods *pods, struct gc_result *ret,
	   struct cni_err *err);

/**
 * gc_result_free() - release a result and zero it
 * @r: result
 */
void gc_result_free(struct gc_result *r);
