/* host-local's network config: ranges, requested addresses, routes and where its state lives */
#pragma once

#include <stddef.h>

#include "common/cni/conf-keys.h"
#include "common/util/ipaddr.h"
#include "ipam/host-local/range.h"

struct cni_args;
struct cni_conf;
struct cni_err;
struct cni_route;

/* The keys host-local reads: a near miss of one is warned of (cni_conf_keys_warn()). */
extern const struct cni_conf_keys host_local_config_keys[];

/* Upstream's default: a directory per network below it. */
#define HL_DEFAULT_DATA_DIR "/var/lib/cni/networks"

struct hl_config {
	const char *name;          /* the network's name: its store's directory (owned by the conf) */
	const char *data_dir;      /* HL_DEFAULT_DATA_DIR when the config has none */
	const char *resolv_conf;   /* NULL when none (owned by the conf) */
	struct cni_route *routes;  /* ipam.routes, handed back as they are */
	size_t n_routes;
	struct hl_range_set *sets; /* runtimeConfig.ipRanges, the single range, ipam.ranges */
	size_t n_sets;
	struct ip_addr *requested; /* IP=, args.cni.ips, runtimeConfig.ips, without repeats */
	size_t n_requested;
};

/**
 * hl_config_load() - read and validate host-local's config as upstream's LoadIPAMConfig()
 * @conf: the network config
 * @args: CNI_ARGS (IP=, IgnoreUnknown=)
 * @ret: the config, written only on success (release with hl_config_free())
 * @err: code 7 with upstream's message for a missing or invalid value ("IPAM config
 *       missing 'ipam' key", "no IP ranges specified", "invalid range set 0: ...",
 *       "range set 0 overlaps with 1", ...), code 6 for a key of the wrong JSON type,
 *       code 4 for CNI_ARGS upstream refuses
 *
 * Return: 0 on success, negative errno on failure.
 */
int hl_config_load(const struct cni_conf *conf, const struct cni_args *args,
		   struct hl_config *ret, struct cni_err *err);

/**
 * hl_config_free() - release what hl_config_load() allocated and zero @c
 * @c: config
 */
void hl_config_free(struct hl_config *c);
