/* ipam-node's numbers, kept for /metrics and written in Prometheus' text format */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct gc_result;
struct nvipam_pools;
struct serve;

/* One pool of the node pool file, or one the store still holds allocations of. */
struct metrics_pool {
	char *key;                  /* "<name>" or "cidrpool/<name>" */
	bool in_file;               /* in the node pool file now */
	unsigned long long size;    /* addresses the node hands out (block minus exclusions, gateway) */
	unsigned long long allocated; /* as of the last clean pass */
	unsigned long long stale;   /* of them, held by a pod that is gone (not yet released) */
	unsigned long long released; /* by the cleaner since start */
	unsigned long long overlapping; /* other pools of the file whose block shares an address */
};

enum { METRICS_IPPOOLS, METRICS_CIDRPOOLS, METRICS_KINDS };

struct metrics {
	pthread_mutex_t lock;
	struct metrics_pool *pools; /* sorted by key */
	size_t n_pools;
	bool ready;                 /* the first pool file sync is written */
	unsigned long syncs;        /* pool file rewrites */
	unsigned long sync_errors;  /* syncs that could not write the file */
	time_t last_sync;           /* when the file last matched the API (0: never) */
	unsigned long watch_restarts[METRICS_KINDS];
	unsigned long relists[METRICS_KINDS];    /* lists forced by a 410 */
	unsigned long clean_runs;
	unsigned long clean_failures;
	time_t last_clean;          /* when a pass last completed (0: never) */
	time_t started;
	struct serve *servers[2];   /* the probe and metrics servers (NULL: none apart) */
};

/**
 * metrics_init() - empty numbers
 * @m: metrics
 *
 * Return: 0 on success, -ENOMEM.
 */
int metrics_init(struct metrics *m);

/**
 * metrics_free() - release the numbers
 * @m: metrics
 */
void metrics_free(struct metrics *m);

/**
 * metrics_set_pools() - the pools of the node pool file just written (their sizes, and
 *                       how many other pools each one's block overlaps)
 * @m: metrics (locks itself)
 * @pools: the file as nv-ipam loads it
 *
 * Return: 0 on success, -ENOMEM.
 */
int metrics_set_pools(struct metrics *m, const struct nvipam_pools *pools);

/**
 * metrics_set_usage() - what a clean pass found and did
 * @m: metrics (locks itself)
 * @res: the pass's result
 *
 * Return: 0 on success, -ENOMEM.
 */
int metrics_set_usage(struct metrics *m, const struct gc_result *res);

/**
 * metrics_set_servers() - the servers whose connection slots /metrics shows
 * @m: metrics (locks itself)
 * @probes: the probe server
 * @metrics_srv: the metrics server apart from it (NULL: /metrics is served with the probes)
 */
void metrics_set_servers(struct metrics *m, struct serve *probes, struct serve *metrics_srv);

/**
 * metrics_render() - /metrics: the numbers in Prometheus' text format (0.0.4), with the
 *                    process's own (CPU seconds, resident memory, start time)
 * @m: metrics (locks itself)
 * @ret: malloc'ed text, written only on success
 * @ret_len: its length
 *
 * Return: 0 on success, -ENOMEM.
 */
int metrics_render(struct metrics *m, char **ret, size_t *ret_len);

/**
 * metrics_pool_size() - how many addresses a node hands out from a pool of its file
 * @key: the pool
 * @pools: the node pool file
 *
 * The block (or the prefix's range) less its exclusions and the gateway when inside.
 *
 * Return: the count, 0 when the pool is not in the file.
 */
unsigned long long metrics_pool_size(const struct nvipam_pools *pools, const char *key);
