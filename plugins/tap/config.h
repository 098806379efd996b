/* tap network config: owner, group, multiQueue, mac, mtu, bridge, checked before the kernel */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"

struct cni_ctx;
struct cni_err;

/* The MTU range of a tap device (the tun driver's own). */
#define TAP_MTU_MIN 68
#define TAP_MTU_MAX 65535

struct tap_conf {
	bool multi_queue;
	unsigned int mtu;       /* 0: the kernel's default */
	bool has_mac;
	uint8_t mac[6];
	uint32_t owner;         /* NET_TAP_NOBODY when not given */
	uint32_t group;         /* NET_TAP_NOBODY when not given */
	const char *bridge;     /* NULL: none; a master in the pod's netns */
	bool has_ipam;
};

/**
 * tap_config_load() - read and validate the plugin's fields of the network config and CNI_ARGS
 * @ctx: context
 * @ret: config, written only on success (strings point into @ctx's config)
 * @err: code 6 for a wrong type, 7 for a bad value, 2 for selinuxContext,
 *       4 for unknown CNI_ARGS
 *
 * The MAC comes from the config's "mac", then CNI_ARGS MAC, then
 * runtimeConfig.mac, the last one given winning.
 *
 * Return: 0 on success, negative errno on failure.
 */
int tap_config_load(const struct cni_ctx *ctx, struct tap_conf *ret, struct cni_err *err);

/* The keys the plugin reads, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys tap_config_keys[];
