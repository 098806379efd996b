/* vlan network config: master, vlanId, mtu, linkInContainer */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"

/* The keys vlan reads: a near miss of one is warned of (cni_conf_keys_warn()). */
extern const struct cni_conf_keys vlan_config_keys[];

struct cni_ctx;
struct cni_err;

struct vlan_conf {
	const char *master;
	uint16_t id;            /* 0-4094 */
	int64_t mtu;            /* 0: inherit; checked against the master's once it is found */
	bool link_in_container;
};

/**
 * vlan_config_load() - read and validate the plugin's fields of the network config
 * @ctx: context
 * @cmd_check: for CHECK, which needs no IPAM section of its own
 * @ret: config, written only on success (strings point into @ctx's config)
 * @err: code 6 for a wrong type, 7 for a bad value
 *
 * Return: 0 on success, negative errno on failure.
 */
int vlan_config_load(const struct cni_ctx *ctx, bool cmd_check, struct vlan_conf *ret,
		     struct cni_err *err);
