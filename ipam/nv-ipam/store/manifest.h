/* The store file of version 2: the manifest that says the allocations are in the pool logs */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct text_buf;

/* The store file's version since the allocations moved to one log per pool. */
#define STORE_MANIFEST_VERSION 2

/**
 * store_manifest_render() - the store file of version 2
 * @b: buffer it is appended to
 * @pool_dir: the name of the directory of pool logs beside it ("store.d"), written for
 *            people: the store always looks in "<name>.d"
 */
void store_manifest_render(struct text_buf *b, const char *pool_dir);

/**
 * store_manifest_is_current() - whether a store file is the one this store writes
 * @data: its contents
 * @len: their length
 * @pool_dir: as store_manifest_render()
 *
 * The bytes are compared, not parsed: what an ADD reads on its way. A file that is not
 * these bytes (written by hand, or an older store) is for the migration module to read.
 *
 * Return: true when it is exactly what store_manifest_render() writes.
 */
bool store_manifest_is_current(const char *data, size_t len, const char *pool_dir);
