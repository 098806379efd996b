/* vrf network config: the VRF's name and routing table */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"

/* The keys vrf reads: a near miss of one is warned of (cni_conf_keys_warn()). */
extern const struct cni_conf_keys vrf_config_keys[];

struct cni_ctx;
struct cni_err;

struct vrf_conf {
	const char *name;       /* the VRF link's name in the pod */
	uint32_t table;         /* 0: the first one nothing in the pod uses */
};

/**
 * vrf_config_load() - read and validate the plugin's fields of the network config
 * @ctx: context
 * @ret: config, written only on success (strings point into @ctx's config)
 * @err: code 6 for a wrong type, 7 for a bad value
 *
 * Return: 0 on success, negative errno on failure.
 */
int vrf_config_load(const struct cni_ctx *ctx, struct vrf_conf *ret, struct cni_err *err);
