/* nv-ipam results: a pool's address, gateway and routes as the reference builds them */
#pragma once

#include <stdbool.h>

#include "common/util/ipaddr.h"

struct cni_result;
struct nvipam_pool;

/**
 * nvipam_result_add_pool() - add one pool's allocation to an IPAM result
 * @pool: the pool it came from
 * @ip: the address
 * @gateway_allocated: allocateDefaultGateway: the address is the gateway, which is
 *                     then not returned, and neither are routes
 * @res: result (entries appended)
 *
 * The address carries the pool's mask. Routes are only given with a gateway: the
 * default route first when the pool asks for it, then the pool's routes, without
 * duplicates, sorted by destination, each via the gateway.
 *
 * Return: 0 on success, -ENOMEM.
 */
int nvipam_result_add_pool(const struct nvipam_pool *pool, const struct ip_addr *ip,
			   bool gateway_allocated, struct cni_result *res);
