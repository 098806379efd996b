/* host-local's allocator: one address from a range set, as upstream's IPAllocator.Get() */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"

struct cni_err;
struct cni_ip;
struct hl_range_set;

/* What the allocator needs of a store; the disk store's, or a test's in memory. */
struct hl_store_ops {
	/* Take @ip for the attachment; *ret_reserved false when it is held already. */
	int (*reserve)(void *store, const char *id, const char *ifname, const struct ip_addr *ip,
		       size_t set, bool *ret_reserved, struct cni_err *err);
	/* The address reserved last for range set @set, when known. */
	bool (*last_reserved)(void *store, size_t set, struct ip_addr *ret);
	/* An address the attachment holds inside @range_set, when it holds one. */
	bool (*owned_in)(void *store, const char *id, const char *ifname,
			 const struct hl_range_set *range_set, struct ip_addr *ret);
};

/**
 * hl_alloc_get() - reserve one address of a range set for an attachment
 * @ops: the store's operations
 * @store: the store, locked
 * @set: the range set
 * @index: its index in the config (last_reserved_ip.<index>)
 * @id: container ID
 * @ifname: interface
 * @requested: the address asked for (IP=, ips), NULL for the next free one
 * @ret: address (with the subnet's prefix length) and gateway, written only on success
 * @err: code 7 for a requested address outside the set ("10.1.0.9 not in range set
 *       10.0.0.1-10.0.0.254") or that is the gateway; code 111 for one that is held;
 *       code 110 when every address is held; code 7 when the attachment holds an address
 *       of the set already ("... duplicate allocation is not allowed")
 *
 * Without a requested address the set is walked round-robin from the address after the
 * one reserved last (range.h, hl_iter).
 *
 * Return: 0 on success, negative errno on failure.
 */
int hl_alloc_get(const struct hl_store_ops *ops, void *store, const struct hl_range_set *set,
		 size_t index, const char *id, const char *ifname, const struct ip_addr *requested,
		 struct cni_ip *ret, struct cni_err *err);
