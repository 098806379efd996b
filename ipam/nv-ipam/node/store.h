/* ipam-node's hold on the store: its lock, adopting it at start, handing it over at stop */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct node;

/**
 * node_store_lock() - take (or check) the store lock: a non-blocking flock on --store-file,
 *                     created when missing, as the reference node daemon takes it
 * @n: node
 * @ret_msg: why it failed
 * @len: its size
 *
 * nv-ipam writes the store file by rename when it first makes one: the lock is then on the
 * old inode, and is taken again on the new one.
 *
 * Return: 0 when held, -EWOULDBLOCK when another process holds it, -EINVAL when it is
 * not a regular file, other negative errno.
 */
int node_store_lock(struct node *n, char *ret_msg, size_t len);

/**
 * node_store_adopt() - make the store ours, under the daemon's lock (so that the reference
 *                      daemon cannot start): taken back after a handover, migrated from the
 *                      reference daemon's, merged with its late write; the store lock then
 *                      taken again on the store file as it now is
 * @n: node (store_adopted set when the store may be ours, so that a stop hands over)
 *
 * A store this build cannot read is left alone, and so is the nv-ipam binary (an older one
 * must not replace a newer): logged, and the rest runs.
 *
 * Return: 0, or the exit status (1) after logging why.
 */
int node_store_adopt(struct node *n);

/**
 * node_store_handover() - at stop, the store in the reference daemon's format, for a
 *                         rollback to find
 * @n: node
 * @deadline_ms: until when (clock_mono_ms()) the node lock is waited for: an ADD under
 *               way holds it
 *
 * Return: false when the store was ours and is not handed over (the exit status is 1),
 * the command that does it logged.
 */
bool node_store_handover(const struct node *n, int64_t deadline_ms);
