/* The store's model: its pools in lock order, their allocations, the strings they point to, the changes to write */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "ipam/nv-ipam/store/private.h"

/**
 * store_model_pool() - a pool of the model by key
 * @s: store
 * @key: pool key
 *
 * Return: the pool, NULL when the model has none of that key.
 */
struct store_pool *store_model_pool(const struct nvipam_store *s, const char *key);

/**
 * store_model_add_pool() - add a pool to the model, in lock (file name stem) order
 * @s: store
 * @key: pool key, or NULL for a pool known by its stem until its log is read
 * @stem: the stem when @key is NULL
 *
 * Indexes of pools after it move up by one.
 *
 * Return: its index, or -ENOMEM.
 */
int store_model_add_pool(struct nvipam_store *s, const char *key, const char *stem);

/**
 * store_model_drop_pool() - remove a pool (without allocations) from the model
 * @s: store
 * @i: its index
 */
void store_model_drop_pool(struct nvipam_store *s, size_t i);

/**
 * store_model_keep() - hand a malloc'ed block of strings to the store, freed at close
 * @s: store
 * @block: the block (freed here on failure)
 *
 * Return: 0 on success, -ENOMEM.
 */
int store_model_keep(struct nvipam_store *s, void *block);

/**
 * store_model_copy() - copy strings into one block kept by the store
 * @s: store
 * @in: strings (NULL is "")
 * @out: where each copy's address goes
 * @n: their number
 *
 * Return: 0 on success, -ENOMEM.
 */
int store_model_copy(struct nvipam_store *s, const char *const *in, const char **const *out,
		     size_t n);

/**
 * store_model_reserve() - make room for more allocations
 * @s: store
 * @more: how many
 *
 * Return: 0 on success, -ENOMEM.
 */
int store_model_reserve(struct nvipam_store *s, size_t more);

/**
 * store_model_queue() - queue a change line of a pool, written at commit
 * @p: pool
 * @l: the line (its strings must live until commit: the store's or the log's)
 *
 * Return: 0 on success, -ENOMEM.
 */
int store_model_queue(struct store_pool *p, const struct store_line *l);

/**
 * store_model_live() - how many allocations a pool has (those of its snapshot included)
 * @s: store
 * @p: pool
 *
 * Return: the count.
 */
size_t store_model_live(const struct nvipam_store *s, const struct store_pool *p);

/**
 * store_model_reset() - forget the model: pools (closing their files), allocations,
 *                       strings; the store's directory and node lock stay
 * @s: store
 */
void store_model_reset(struct nvipam_store *s);
