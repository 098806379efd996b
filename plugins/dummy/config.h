/* dummy network config: nothing of its own but a required IPAM section */
#pragma once

#include "common/cni/conf-keys.h"

struct cni_ctx;
struct cni_err;

/**
 * dummy_config_load() - check the network config of a dummy attachment
 * @ctx: context
 * @err: code 7 when the config names no IPAM plugin
 *
 * A dummy link carries nothing but its addresses: without IPAM it would be useless.
 *
 * Return: 0 on success, negative errno on failure.
 */
int dummy_config_load(const struct cni_ctx *ctx, struct cni_err *err);

/* The keys the plugin reads, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys dummy_config_keys[];
