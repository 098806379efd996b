/* A pool's snapshot read as the model goes: its records copied in as lookups find them */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"

struct nvipam_store;
struct store_pool;

/*
 * A pool opened alone (ADD, DEL, CHECK, STATUS) keeps its snapshot's allocations in the
 * mapping (struct store_base) rather than in the model: a lookup copies into the model
 * what it finds, so that the model's scans over @s->allocs see it, and the other
 * records are never read. A block found damaged on the way makes the pool read again
 * from its whole log (store_load_again()); should that fail, the store keeps the error
 * for its commit, and lookups answer from what the model holds.
 */

/**
 * store_base_pull_key() - copy into the model the records of pool @p that the reference
 *                         daemon would key as the attachment ("<container ID>_<interface>",
 *                         the attachment's own among them)
 * @s: store
 * @p: pool
 * @container_id: container ID
 * @ifname: interface name
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_base_pull_key(struct nvipam_store *s, struct store_pool *p, const char *container_id,
			const char *ifname);

/**
 * store_base_pull_pod() - copy into the model the records of a pod's interface in pool @p
 * @s: store
 * @p: pool
 * @pod_uid: pod UID (an empty one finds nothing)
 * @ifname: interface name
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_base_pull_pod(struct nvipam_store *s, struct store_pool *p, const char *pod_uid,
			const char *ifname);

/**
 * store_base_pull_all() - copy into the model every record of pool @p still in its snapshot
 * @s: store
 * @p: pool
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_base_pull_all(struct nvipam_store *s, struct store_pool *p);

/**
 * store_base_held() - whether pool @p holds an address: in the model or in its snapshot
 * @s: store
 * @p: pool
 * @ip: address
 *
 * Return: true when it does, or when that cannot be told (a snapshot damaged and the log
 * unreadable since): an address taken for held is never handed out twice.
 */
bool store_base_held(struct nvipam_store *s, struct store_pool *p, const struct ip_addr *ip);

/**
 * store_base_ips() - the addresses of pool @p's records still in its snapshot, in order
 * @s: store
 * @p: pool
 * @out: room for @p->disk->base->live addresses
 * @ret_n: how many were written
 *
 * Return: 0 on success; -ESTALE when the snapshot was found damaged and the pool read
 * again (the model now holds every allocation: nothing to add from the snapshot); another
 * negative errno when that failed.
 */
int store_base_ips(struct nvipam_store *s, struct store_pool *p, struct ip_addr *out, size_t *ret_n);
