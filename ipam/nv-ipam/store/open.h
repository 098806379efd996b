/* Opening the store for its owner, who hands it over and takes it back (private to store/) */
#pragma once

struct cni_err;
struct nvipam_store;

/**
 * store_open_owner() - open the whole store for its owner: the marker is no
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
