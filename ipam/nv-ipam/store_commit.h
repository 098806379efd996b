/* Writing the model's changes: lines appended and synced, logs compacted, snapshots, two-pool ADDs, migration */
#pragma once

struct cni_err;
struct nvipam_store;

/**
 * store_commit_write() - write what changed in the model (nvipam_store_commit())
 * @s: open store, dirty
 * @err: code 5 on failure
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_commit_write(struct nvipam_store *s, struct cni_err *err);

/**
 * store_commit_file() - write the store file of version 2 (under the exclusive node lock)
 * @s: store
 * @err: code 5 on failure
 *
 * Return: 0 on success, negative errno on failure.
 */
int store_commit_file(struct nvipam_store *s, struct cni_err *err);
