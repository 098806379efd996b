/* Picking addresses in a pool: round-robin, static, gateway, index (no I/O) */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"

struct cni_err;
struct nvipam_pool;

/* What the store knows about one pool, as the allocator needs it. */
struct nvipam_pool_usage {
	const struct ip_addr *reserved; /* every IP currently held in the pool, in ip_addr_cmp()
	                                   order (as nvipam_store_usage() gives them) */
	size_t n_reserved;
	bool has_last;
	struct ip_addr last_reserved;   /* the store's last round-robin pick */
	/*
	 * More held addresses, asked one at a time (nvipam_store_usage_lookup(): a pool's
	 * snapshot), or NULL when @reserved lists them all.
	 */
	bool (*held)(void *ctx, const struct ip_addr *ip);
	void *held_ctx;
};

enum nvipam_request_kind {
	NVIPAM_REQ_NEXT,     /* round-robin */
	NVIPAM_REQ_STATIC,   /* a requested IP anywhere in the subnet */
	NVIPAM_REQ_GATEWAY,  /* allocateDefaultGateway */
	NVIPAM_REQ_INDEX,    /* allocateIPWithIndex */
};

struct nvipam_request {
	enum nvipam_request_kind kind;
	struct ip_addr ip;   /* NVIPAM_REQ_STATIC */
	unsigned long index; /* NVIPAM_REQ_INDEX */
};

/**
 * nvipam_allocate() - choose an address
 * @pool: the pool with its node range, gateway and exclusions
 * @usage: addresses held now and the last round-robin pick
 * @req: what is asked for
 * @ret: chosen address, written only on success
 * @err: the reference's messages: exhaustion ("no free addresses in the pool ..."),
 *       static conflict ("requested IP is already reserved in the pool ..."),
 *       index outside the chunk / on the gateway, gateway missing
 *
 * Return: 0 on success, -ENOSPC when exhausted, -EEXIST when taken, -EINVAL for a
 * request the pool cannot serve.
 */
int nvipam_allocate(const struct nvipam_pool *pool, const struct nvipam_pool_usage *usage,
		    const struct nvipam_request *req, struct ip_addr *ret, struct cni_err *err);

/**
 * nvipam_pool_free_count() - addresses round-robin could still hand out
 * @pool: pool
 * @usage: current usage, listing every held address (no ->held)
 *
 * Return: the count (capped at ULONG_MAX for huge IPv6 ranges).
 */
unsigned long nvipam_pool_free_count(const struct nvipam_pool *pool,
				     const struct nvipam_pool_usage *usage);
