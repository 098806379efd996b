/* The store's boundary with the reference nv-ipam node daemon (private to store/) */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ipam/nv-ipam/store/migrate.h"

struct cni_err;
struct nvipam_store;
struct text_buf;

/*
 * "<name>.handed-over" beside the store file: ipam-node wrote the store file in the
 * reference daemon's format when it stopped, with this checksum. While it exists,
 * nothing but its owner (ipam-node, nv-ipam-tool adopt) allocates: the reference
 * daemon may be reading that file.
 */
#define STORE_HANDOVER_SUFFIX ".handed-over"

/* The reference daemon's socket, where the Network Operator puts it: beside the store file. */
#define STORE_HANDOVER_DAEMON_SOCKET "daemon.sock"

/**
 * store_handover_gate() - refuse to work on a store another owner may be using
 * @s: store, its directory open, the node lock held
 * @kind: what the store file holds
 * @err: code 11 naming who has the store
 *
 * Refused: a store handed over (its marker is there); a reference store whose daemon
 * answers on its socket or, under the exclusive node lock, whose file another process
 * holds the daemon's flock on. That file then stays locked, by @s, until close: the
 * daemon cannot start on it while it is migrated.
 *
 * Return: 0 to go on, -EBUSY (with @err set), other negative errno.
 */
int store_handover_gate(struct nvipam_store *s, enum store_file_kind kind, struct cni_err *err);

/**
 * store_handover_daemon() - whether the reference daemon answers on its socket
 * @s: store, its directory open
 * @err: code 11 naming the socket when it answers
 *
 * Return: 0 when nothing answers, -EBUSY when the daemon does.
 */
int store_handover_daemon(const struct nvipam_store *s, struct cni_err *err);

/**
 * store_handover_marker_sum() - the checksum a handover marker's text records
 * @data: the marker's text, NUL-terminated
 *
 * Return: the checksum of its "checksum N" line, 0 when there is none or it does not parse.
 */
uint32_t store_handover_marker_sum(const char *data);

/**
 * store_handover_marker() - read the handover marker
 * @s: store, its directory open
 * @ret_sum: the checksum it records (0 when the marker is missing or unreadable)
 *
 * Return: true when the marker exists.
 */
bool store_handover_marker(const struct nvipam_store *s, uint32_t *ret_sum);

/**
 * store_handover_render() - the whole store as the reference daemon's store file
 * @s: store opened whole
 * @b: buffer it is appended to
 * @ret_sum: the file's checksum
 *
 * Return: 0, -ENOMEM.
 */
int store_handover_render(const struct nvipam_store *s, struct text_buf *b, uint32_t *ret_sum);

/**
 * store_open_owner() - open the whole store for its owner (store.c): the marker is no
 *                      refusal, and a reference store file whose checksum is the marker's
 *                      (what the owner handed over) is taken as unchanged: the pool logs
 *                      are read, not the file
 * @path: store file
 * @timeout_ms: how long to wait for the node lock
 * @ret: the open store, written only on success
 * @err: as nvipam_store_open()
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_open_owner(const char *path, unsigned int timeout_ms, struct nvipam_store **ret,
		     struct cni_err *err);

/**
 * store_handover_release() - DEL in a store handed over to the reference daemon that no
 *                            daemon has taken: the attachment's entries leave its file
 * @s: store, its directory open, the node lock (shared) held
 * @container_id: the attachment's container
 * @ifname: and interface
 * @ret_n: how many entries were released (0: none was there)
 * @err: code 11 when the daemon answers on its socket, holds the store file's lock, or
 *       the store is not (or no longer) handed over; 5 for a file the daemon would refuse
 *
 * Under the exclusive node lock and the daemon's flock on the store file, both held until
 * @s is closed; the file is replaced atomically.
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_handover_release(struct nvipam_store *s, const char *container_id, const char *ifname,
			   size_t *ret_n, struct cni_err *err);
