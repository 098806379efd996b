/* Carving every pool's status.allocations from the mirrored Nodes and pools, written by the leader */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct api_client;
struct api_reflector;
struct election;
struct events;
struct json_object;

/* What a pass did, for the log (the reconciler logs nothing itself). */
enum reconcile_note_kind {
	RECONCILE_WRITTEN,      /* a status written: @rv is the pool's new resourceVersion */
	RECONCILE_CONFLICT,     /* the write met a newer pool (409): read again, carved again */
	RECONCILE_WRITE_FAILED, /* a write failed (@detail): tried again later */
	RECONCILE_NOT_LEADING,  /* leadership ended before the write: not written */
	RECONCILE_INVALID_SPEC, /* the spec is invalid (@detail): status [] */
	RECONCILE_NO_ROOM,      /* @node got no block */
	RECONCILE_EVENT_FAILED, /* an Event could not be written (@detail) */
	RECONCILE_OVERLAP,      /* the pool's addresses overlap another's (@detail names both) */
};

/* The reason of the Event on both pools of an overlapping pair. */
#define RECONCILE_OVERLAP_REASON "OverlappingPools"

struct reconcile_note {
	enum reconcile_note_kind kind;
	const char *pool_kind;  /* "IPPool", "CIDRPool" */
	const char *pool;
	const char *rv;         /* RECONCILE_WRITTEN */
	const char *node;       /* RECONCILE_NO_ROOM */
	const char *detail;
	size_t allocations;     /* RECONCILE_WRITTEN: how many */
	size_t kept;            /* RECONCILE_WRITTEN: how many stayed as they were */
};

struct reconcile_config {
	struct api_reflector *nodes;
	struct api_reflector *ippools;
	struct api_reflector *cidrpools;
	struct election *election;  /* NULL: this replica always writes (--leader-elect=false) */
	struct events *events;
	long quiet_ms;              /* a pass waits for this long without change (at most 10x) */
	void (*note)(void *ctx, const struct reconcile_note *n);
	void *ctx;
};

/* Counters, for metrics. */
struct reconcile_stats {
	unsigned long passes;         /* passes run as the leader */
	unsigned long carved;         /* pools carved */
	unsigned long writes;         /* statuses written */
	unsigned long conflicts;      /* writes that met a newer pool */
	unsigned long write_failures;
	unsigned long events;         /* Events written */
	unsigned long events_held;    /* Events held back by the burst limit */
	size_t nodes;                 /* in the last pass */
	size_t pools;
	double last_pass_ms;          /* how long the last pass took */
};

struct reconciler;

/**
 * reconcile_new() - a reconciler, not yet running
 * @cfg: settings (copied; what it names must outlive the reconciler)
 * @stop_fd: readable when the process stops
 * @ret: the reconciler; release with reconcile_free()
 *
 * Return: 0, or a negative errno.
 */
int reconcile_new(const struct reconcile_config *cfg, int stop_fd, struct reconciler **ret);

/**
 * reconcile_wake() - something changed: mirrored objects, or leadership (any thread)
 * @r: reconciler
 * @everything: carve every pool again (the nodes or the leadership changed)
 */
void reconcile_wake(struct reconciler *r, bool everything);

/**
 * reconcile_run() - passes until @stop_fd becomes readable
 * @r: reconciler
 * @c: a client for this thread only
 *
 * After a change (and a quiet moment, so that a burst of node events makes one pass), the
 * leader carves each pool whose object or node set changed with carve_pool(), as the
 * reference controller does: a spec the webhook's rules refuse gets status [] and an
 * InvalidSpec Event; a node left without a block a NoFreeRanges (IPPool) or NoFreePrefixes
 * (CIDRPool) Event; each pair of pools whose addresses overlap an OverlappingPools Event on
 * both, once (again when either's prefix changes). A status that differs is written through the status subresource as a
 * merge patch that carries the pool's resourceVersion: a 409 reads the pool again and carves
 * it again, so an allocation is never computed from a stale status. A failed write is tried
 * again after a backoff (1 s doubling to 30 s). Nothing is written while not leading.
 */
void reconcile_run(struct reconciler *r, struct api_client *c);

/**
 * reconcile_stats() - the counters now (any thread)
 * @r: reconciler
 * @ret: filled
 */
void reconcile_stats(struct reconciler *r, struct reconcile_stats *ret);

/**
 * reconcile_free() - release a reconciler (its run must have returned)
 * @r: reconciler (NULL does nothing)
 */
void reconcile_free(struct reconciler *r);

/**
 * reconcile_trim_node() - what the controller keeps of a Node: its name, labels and
 *                         resourceVersion (api_reflector_config.trim)
 * @ctx: unused
 * @node: the Node
 * @ret: a new object
 *
 * Return: 0, or -ENOMEM.
 */
int reconcile_trim_node(void *ctx, struct json_object *node, struct json_object **ret);
