/* libFuzzer target: the nv-ipam node pool file, and allocation from what it accepts */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/error.h"
#include "ipam/nv-ipam/pool/allocator.h"
#include "ipam/nv-ipam/pool/ipmath.h"
#include "ipam/nv-ipam/pool/pool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *key)
{
	fprintf(stderr, "pool %s: %s\n", key, what);
	abort();
}

/* What round robin hands out lies in the node's range, and is not the gateway. */
static void allocate(const struct nvipam_pool *p)
{
	struct nvipam_request next = { .kind = NVIPAM_REQ_NEXT };
	struct nvipam_request gw = { .kind = NVIPAM_REQ_GATEWAY };
	struct nvipam_request idx = { .kind = NVIPAM_REQ_INDEX, .index = 3 };
	struct ip_addr held[2], got;
	struct nvipam_pool_usage u = { .reserved = held };
	struct cni_err err = { 0 };
	ipmath_u128 x;

	(void)nvipam_pool_free_count(p, &u);
	for (int i = 0; i < 3; i++) {
		err = (struct cni_err){ 0 };
		if (nvipam_allocate(p, &u, &next, &got, &err) < 0) {
			if (!err.msg[0])
				fail("allocation failed without a reason", p->key);
			break;
		}
		x = ipmath_from_addr(&got);
		if (got.family != p->range.start.family || x < ipmath_from_addr(&p->range.start) ||
		    x > ipmath_from_addr(&p->range.end))
			fail("round robin gave an address outside the range", p->key);
		if (p->has_gateway && ip_addr_equal(&got, &p->gateway))
			fail("round robin gave the gateway", p->key);
		/* Held addresses reach the allocator in order, as the store gives them. */
		if (u.n_reserved < 2)
			held[u.n_reserved++] = got;
		if (u.n_reserved == 2 && ip_addr_cmp(&held[0], &held[1]) > 0) {
			held[1] = held[0];
			held[0] = got;
		}
		u.has_last = true;
		u.last_reserved = got;
	}
	err = (struct cni_err){ 0 };
	(void)nvipam_allocate(p, &u, &gw, &got, &err);
	err = (struct cni_err){ 0 };
	(void)nvipam_allocate(p, &u, &idx, &got, &err);
	(void)nvipam_pool_free_count(p, &u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvipam_pools pools = { 0 };
	struct cni_err err = { 0 };

	if (nvipam_pools_parse((const char *)data, size, "fuzz", &pools, &err) < 0) {
		if (!err.msg[0] || err.code == CNI_OK)
			fail("refused without a reason", "-");
		return 0;
	}
	for (size_t i = 0; i < pools.n && i < 64; i++) {
		if (nvipam_pools_find(&pools, pools.pools[i].key) != &pools.pools[i])
			fail("not found by its own key", pools.pools[i].key);
		allocate(&pools.pools[i]);
	}
	nvipam_pools_free(&pools);
	return 0;
}
