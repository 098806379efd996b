/* nv-ipam results: a pool's address, gateway and routes as the reference builds them */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/result.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/plugin/result.h"

static int cmp_route(const void *a, const void *b)
{
	const struct cni_route *x = a, *y = b;

	return memcmp(x->dst.addr.bytes, y->dst.addr.bytes, sizeof(x->dst.addr.bytes));
}

int nvipam_result_add_pool(const struct nvipam_pool *pool, const struct ip_addr *ip,
			   bool gateway_allocated, struct cni_result *res)
{
	struct cni_ip entry = { .address = { .addr = *ip, .len = pool->subnet.len }, .iface = -1 };
	struct cni_route *routes;
	size_t n = 0;
	int r;

	entry.has_gateway = pool->has_gateway && !gateway_allocated;
	entry.gateway = pool->gateway;
	r = cni_result_add_ip(res, &entry);
	if (r < 0 || !entry.has_gateway)
		return r;
	routes = calloc(pool->n_routes + 1, sizeof(*routes));
	if (!routes)
		return -ENOMEM;
	if (pool->default_gateway)
		routes[n++] = (struct cni_route){ .dst = { .addr = { .family = ip->family } },
						  .has_gw = true, .gw = pool->gateway, .scope = -1 };
	for (size_t i = 0; i < pool->n_routes; i++) {
		struct cni_route rt = { .dst = ip_prefix_network(&pool->routes[i]), .has_gw = true,
					.gw = pool->gateway, .scope = -1 };
		bool dup = false;

		for (size_t k = 0; k < n && !dup; k++)
			dup = ip_addr_equal(&routes[k].dst.addr, &rt.dst.addr) && routes[k].dst.len == rt.dst.len;
		if (!dup)
			routes[n++] = rt;
	}
	qsort(routes, n, sizeof(*routes), cmp_route);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = cni_result_add_route(res, &routes[i]);
	free(routes);
	return r;
}
