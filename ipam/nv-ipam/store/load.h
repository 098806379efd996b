/* Reading pools into the model: a pool's snapshot and its log's tail (or the whole log), pending ADDs settled */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct cni_err;
struct nvipam_store;

/**
 * store_load_pool() - read pool @pi into the model (its lock, or the node's, held)
 * @s: store with its pool directory open
 * @pi: the pool's index; a pool known by its stem takes its key from the log
 * @inspect: for the operator tool: load an address held twice in the pool rather than
 *           refuse it, and read the whole log whatever the snapshot (a damaged line the
 *           snapshot covers is found)
 * @err: code 5 naming the log when it is unreadable or corrupt
 *
 * A snapshot that matches the log is read with the log's lines after it; otherwise the
 * whole log. A store opened whole copies the snapshot's allocations into the model; one
 * opened for some pools keeps them in the snapshot, read as lookups find them
 * (store/base.c). A block of the snapshot found damaged while reading: the whole log. A log without its header line (never written past creation) is an empty
 * pool whose key stays unknown. Lines of a two-pool ADD still pending are queued as
 * aborted, with their partner, for store_load_settle().
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_load_pool(struct nvipam_store *s, size_t pi, bool inspect, struct cni_err *err);

/**
 * store_load_again() - read pool @pi again from its whole log, its snapshot found damaged
 *                      after it was opened, and apply again the changes queued since
 * @s: store, the pool's lock held
 * @pi: the pool's index
 * @err: as store_load_pool()
 *
 * Allocations of the pool the model held are replaced (their strings stay valid until
 * close); the pool's queued lines stay as they were, to be written.
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_load_again(struct nvipam_store *s, size_t pi, struct cni_err *err);

/**
 * store_load_settle() - settle pool @pi's pending lines: confirmed when the partner pool
 *                       holds their transaction, dropped from the model otherwise
 * @s: store
 * @pi: the pool's index
 * @err: as store_load_pool(), and code 11 when the partner's lock is not free in time
 *
 * The partner's lock comes after @pi's in the lock order: it is taken (unless the whole
 * store is open) for as long as its log is read. The verdicts are queued as C or X lines,
 * written with the next commit.
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_load_settle(struct nvipam_store *s, size_t pi, struct cni_err *err);

/**
 * store_load_mentions() - whether a pool's files name an attachment at all, read without
 *                         the pool's lock (a hint: false only when it surely does not)
 * @s: store with its pool directory open
 * @stem: the pool's stem
 * @container_id: container ID
 * @ifname: interface name
 *
 * Return: false when neither the snapshot nor the log after it names the attachment.
 */
bool store_load_mentions(struct nvipam_store *s, const char *stem, const char *container_id,
			 const char *ifname);
