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

/*
 * "<name>.adopted" beside the store file: the reference daemon's store file as it was
 * when it was last taken over (migrated, or resumed after a handover). A reference file
 * found after that is a daemon's write that landed later; what it changed since this
 * one is merged into the pool logs.
 */
#define STORE_ADOPTED_SUFFIX ".adopted"

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
 * store_handover_recorded() - whether a reference store file was taken over before
 * @s: store, its directory open
 *
 * Return: true when "<name>.adopted" is there.
 */
bool store_handover_recorded(const struct nvipam_store *s);

/**
 * store_handover_record() - record the reference store file being taken over
 * @s: store under the exclusive node lock; its @adopted, when set, is written as
 *     "<name>.adopted" (whole, by rename) and let go
 * @err: code 5 when it cannot be written
 *
 * Called before the store file is replaced by the one pointing at the pool logs.
 *
 * Return: 0 on success (nothing to record included), negative errno on failure.
 */
int store_handover_record(struct nvipam_store *s, struct cni_err *err);

/**
 * store_handover_merge() - merge into the pool logs what the reference daemon changed
 *                          in its store file after it was taken over
 * @s: store opened whole, its pool logs loaded, its @adopted the file found now
 * @late: what that file holds
 * @err: 999 for out of memory
 *
 * Compared with the file recorded at the takeover: an entry the daemon added is added
 * (unless nv-ipam gave its address, or the attachment another address, since: then
 * nv-ipam's stays and the clash is logged as an error); an entry it released is
 * released when nv-ipam still holds it as it was. What both files hold is left as the
 * pool logs have it (nv-ipam may have released it since). Without a readable record,
 * every entry of @late is taken as the daemon's addition. Logged as a warning with the
 * counts. The caller commits: the lines, then the record of @late, then the store file.
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_handover_merge(struct nvipam_store *s, const struct store_legacy *late,
			 struct cni_err *err);

/**
 * store_handover_marker_read() - read the handover marker, with when it was written
 * @s: store, its directory open
 * @ret_sum: the checksum it records (0 when the marker is missing or unreadable)
 * @ret_at: the time of its "at" line, as RFC 3339 ("" when missing or unreadable)
 *
 * Return: true when the marker exists.
 */
bool store_handover_marker_read(const struct nvipam_store *s, uint32_t *ret_sum,
				char ret_at[RFC3339_STRLEN]);

/**
 * store_handover_marker_at() - when a handover marker's text says it was written
 * @data: the marker's text, NUL-terminated
 * @ret_at: the time of its "at" line, written again as RFC 3339; "" when there is none
 *          or it does not parse
 */
void store_handover_marker_at(const char *data, char ret_at[RFC3339_STRLEN]);

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
