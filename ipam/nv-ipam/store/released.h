/* Addresses released lately, per pool: what a cooldown keeps from being handed out again (private to store/) */
#pragma once

#include <stddef.h>
#include <time.h>

#include "common/util/ipaddr.h"

struct nvipam_store;
struct store_pool_disk;

/**
 * store_released_note() - record that addresses of a pool were released now
 * @s: store, the pool's lock held
 * @d: the pool
 * @ips: the addresses
 * @n: their number
 * @cooldown_s: the node's cooldown: lines older than it are dropped when the file is rewritten
 *
 * "<stem>.released" beside the pool's log: one "<address> <seconds since the epoch>" line
 * per release, appended without a sync (a cooldown lost in a crash only hands an address
 * out sooner). Rewritten without the expired lines once past 16 KiB.
 */
void store_released_note(struct nvipam_store *s, const struct store_pool_disk *d,
			 const struct ip_addr *ips, size_t n, unsigned int cooldown_s);

/**
 * store_released_since() - the addresses of a pool released at or after a time
 * @s: store, the pool's lock held
 * @d: the pool
 * @since: the time
 * @ret: malloc'ed array, written only on success
 * @ret_n: its length
 *
 * A missing file or a line that does not parse counts as nothing released.
 *
 * Return: 0, -ENOMEM.
 */
int store_released_since(const struct nvipam_store *s, const struct store_pool_disk *d, time_t since,
			 struct ip_addr **ret, size_t *ret_n);
