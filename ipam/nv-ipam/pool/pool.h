/* Node pool file: this node's blocks of each IPPool/CIDRPool, and their address ranges */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"

/* Where the node pool file is unless nv-ipam.conf says otherwise. */
#define NVIPAM_DEFAULT_POOL_FILE "/etc/cni/net.d/nv-ipam.d/node-pools.json"

struct cni_err;

/* A pool's name: a Kubernetes object's, at most 253 bytes (a DNS subdomain). */
#define NVIPAM_POOL_NAME_MAX 253
#define NVIPAM_POOL_KEY_MAX 320 /* "cidrpool/" + a name, and its NUL */

enum nvipam_pool_type {
	NVIPAM_POOL_IPPOOL,
	NVIPAM_POOL_CIDRPOOL,
};

struct nvipam_ip_range {
	struct ip_addr start; /* inclusive */
	struct ip_addr end;   /* inclusive */
};

/* One pool as this node sees it, with the node-side range already computed. */
struct nvipam_pool {
	char key[NVIPAM_POOL_KEY_MAX];     /* "<name>" or "cidrpool/<name>" */
	char name[NVIPAM_POOL_KEY_MAX];
	enum nvipam_pool_type type;
	struct ip_prefix subnet;           /* IPPool: spec.subnet; CIDRPool: the node's prefix */
	struct nvipam_ip_range range;      /* where round-robin allocation happens */
	bool has_gateway;
	struct ip_addr gateway;
	struct nvipam_ip_range *exclusions; /* merged, sorted, clipped as the reference does */
	size_t n_exclusions;
	struct ip_prefix *routes;          /* spec.routes destinations */
	size_t n_routes;
	bool default_gateway;
};

struct nvipam_pools {
	struct nvipam_pool *pools;
	size_t n;
	/*
	 * Every pool of the file, loaded or not, for a message naming what the node has:
	 * "a" (ippool), "b" (cidrpool), ... ("and N more" past the room), "" for none.
	 */
	char names[400];
};

/**
 * nvipam_pools_load() - read and validate a node pool file
 * @path: JSON file (format in docs/nv-ipam.md)
 * @confined: @path comes from a network config: it must lie in the node's config
 *            directories and is opened beneath them (common/cni/trust.h)
 * @ret: pools, written only on success; release with nvipam_pools_free()
 * @err: code 7 naming the file and the pool on any invalid entry (or a path a
 *       network config may not name), 5 when unreadable
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_pools_load(const char *path, bool confined, struct nvipam_pools *ret,
		      struct cni_err *err);

/**
 * nvipam_pools_load_some() - nvipam_pools_load() of some pools only: the file's other
 *                            entries are not read, so a bad one fails no ADD of another
 *                            pool's network
 * @path: JSON file
 * @confined: as nvipam_pools_load()
 * @keys: the pool keys wanted
 * @n_keys: their number
 * @ret: those of them the file has, written only on success
 * @err: as nvipam_pools_load(), for the wanted entries
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_pools_load_some(const char *path, bool confined, const char *const *keys,
			   size_t n_keys, struct nvipam_pools *ret, struct cni_err *err);

/**
 * nvipam_pools_parse() - nvipam_pools_load() on text (for tests and the operator tool)
 * @json: file contents
 * @len: length
 * @origin: file name used in messages
 * @ret: pools, written only on success
 * @err: code 7 (or 6 for malformed JSON) naming @origin and the pool
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_pools_parse(const char *json, size_t len, const char *origin,
		       struct nvipam_pools *ret, struct cni_err *err);

/**
 * nvipam_pools_parse_some() - nvipam_pools_load_some() on text
 * @json: file contents
 * @len: length
 * @origin: file name used in messages
 * @keys: the pool keys wanted
 * @n_keys: their number
 * @ret: pools, written only on success
 * @err: as nvipam_pools_parse()
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_pools_parse_some(const char *json, size_t len, const char *origin,
			    const char *const *keys, size_t n_keys, struct nvipam_pools *ret,
			    struct cni_err *err);

/**
 * nvipam_pool_type_name() - a pool type as the config and messages name it
 * @t: the type
 *
 * Return: "ippool" or "cidrpool".
 */
const char *nvipam_pool_type_name(enum nvipam_pool_type t);

/**
 * nvipam_pool_name_valid() - whether a pool name is one: at most NVIPAM_POOL_NAME_MAX bytes
 *                            and a CNI network name (^[a-zA-Z0-9][a-zA-Z0-9_.-]*$)
 * @name: the name
 *
 * Return: true when it is.
 */
bool nvipam_pool_name_valid(const char *name);

/**
 * nvipam_pools_find() - a pool by key
 * @pools: loaded pools
 * @key: "<name>" or "cidrpool/<name>"
 *
 * Return: the pool, NULL when absent.
 */
const struct nvipam_pool *nvipam_pools_find(const struct nvipam_pools *pools, const char *key);

/**
 * nvipam_pools_free() - release loaded pools and zero them
 * @pools: pools
 */
void nvipam_pools_free(struct nvipam_pools *pools);
