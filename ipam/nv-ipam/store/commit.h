/* Writing the model's changes: lines appended and synced, logs compacted, snapshots, two-pool ADDs, migration */
#pragma once

struct cni_err;
struct nvipam_store;

#include <stdbool.h>

/**
 * store_commit_write() - write what changed in the model (nvipam_store_commit())
 * @s: open store, dirty
 * @defer_sync: leave the appended lines to store_commit_sync() (not with two pools in
 *              one ADD: there each pool's lines are synced before the next pool's)
 * @err: code 5 on failure
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_commit_write(struct nvipam_store *s, bool defer_sync, struct cni_err *err);

/**
 * store_commit_sync() - wait until the lines store_commit_write() left are on disk
 * @s: store (its locks may be let go already)
 * @err: code 5 on failure
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_commit_sync(struct nvipam_store *s, struct cni_err *err);

/**
 * store_commit_file() - write the store file of version 2 (under the exclusive node lock)
 * @s: store
 * @err: code 5 on failure
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_commit_file(struct nvipam_store *s, struct cni_err *err);
