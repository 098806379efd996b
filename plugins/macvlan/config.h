/* macvlan network config: master, mode, mtu, mac and the rest, checked before the kernel */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"
#include "common/util/hwaddr.h"

struct cni_ctx;
struct cni_err;

struct macvlan_conf {
	const char *master;     /* NULL: the default-route interface */
	const char *mode_name;
	uint32_t mode;          /* MACVLAN_MODE_* */
	unsigned int mtu;       /* 0: inherit */
	bool has_mac;
	uint8_t mac[HWADDR_MAX];
	size_t mac_len;
	bool link_in_container;
	uint32_t bc_queue_len;
	bool has_ipam;
};

/**
 * macvlan_config_load() - read and validate the plugin's fields of the network config and CNI_ARGS
 * @ctx: context
 * @ret: config, written only on success (strings point into @ctx's config)
 * @err: code 6 for a wrong type, 7 for a bad value, 4 for unknown CNI_ARGS
 *
 * The MAC comes from the config's "mac", then CNI_ARGS MAC, then
 * runtimeConfig.mac, the last one given winning.
 *
 * Return: 0 on success, negative errno on failure.
 */
int macvlan_config_load(const struct cni_ctx *ctx, struct macvlan_conf *ret, struct cni_err *err);

/**
 * macvlan_config_mode_name() - "bridge", "private", "vepa" or "passthru"
 * @mode: MACVLAN_MODE_*
 *
 * Return: the name, "unknown" for anything else.
 */
const char *macvlan_config_mode_name(uint32_t mode);

/* The keys the plugin reads, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys macvlan_config_keys[];
