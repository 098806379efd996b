/* The allocation: one address an attachment holds in a pool, and the order they are listed in */
#pragma once

#include <time.h>

#include "common/util/ipaddr.h"

/* One address held by an attachment (a container's interface) in a pool. */
struct nvipam_alloc {
	const char *pool;          /* pool key */
	struct ip_addr ip;
	const char *container_id;
	const char *ifname;
	const char *network;       /* the CNI network name: GC never touches another network's */
	const char *pod_namespace; /* "" when unknown */
	const char *pod_name;
	const char *pod_uid;
	const char *device_id;
	time_t created;
};

/**
 * nvipam_alloc_ptr_cmp() - qsort() order of allocation pointers: by pool key, then by address
 * @a: a const struct nvipam_alloc *const *
 * @b: another
 *
 * Return: negative, 0 or positive.
 */
int nvipam_alloc_ptr_cmp(const void *a, const void *b);
