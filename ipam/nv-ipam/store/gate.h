/* Who may allocate from the store: the handover marker, the reference daemon's socket and lock, the takeover's record (private to store/) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util/rfc3339.h"
#include "ipam/nv-ipam/store/migrate.h"

struct cni_err;
struct nvipam_store;

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
 * store_handover_recorded() - whether a reference store file was taken over before
 * @s: store, its directory open
 *
 * Return: true when "<name>.adopted" is there.
 */
bool store_handover_recorded(const struct nvipam_store *s);

/**
 * store_handover_record() - record the reference store file being taken over
 * @s: store under the exclusive node lock; its @adopted, when set, is written as
 *     "<name>.adopted" (whole, by rename; the caller syncs the directory) and let go
 * @err: code 5 when it cannot be written
 *
 * Called before the store file is replaced by the one pointing at the pool logs.
 *
 * Return: 0 on success (nothing to record included), negative errno on failure.
 */
int store_handover_record(struct nvipam_store *s, struct cni_err *err);

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

/**
 * store_handover_marker_name() - the handover marker's file name, in the store's directory
 * @s: store
 * @buf: the name
 * @len: its size
 */
void store_handover_marker_name(const struct nvipam_store *s, char *buf, size_t len);

/**
 * store_handover_record_read() - the reference daemon's store file as recorded at the
 *                                last takeover; an empty one, with a warning logged, when
 *                                it cannot be read
 * @s: store, its directory open
 * @ret: what the record holds, to release with store_migrate_free()
 */
void store_handover_record_read(struct nvipam_store *s, struct store_legacy *ret);
