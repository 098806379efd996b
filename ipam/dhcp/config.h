/* dhcp's config: the daemon's socket and the request the plugin sends it */
#pragma once

#include <limits.h>

#include "common/cni/conf-keys.h"
#include "ipam/dhcp/wire.h"

struct cni_ctx;
struct cni_err;

/* Where upstream's daemon listens when the config names no socket. */
#define DHCP_SOCKET_DEFAULT "/run/cni/dhcp.sock"

/**
 * dhcp_config_load() - the daemon's socket and the request, from a config and CNI_ARGS
 * @ctx: the invocation
 * @op: what is asked
 * @ret: request, written only on success
 * @socket_path: ipam.daemonSocketPath or the default (a string of @ctx's config)
 * @err: code 6 for a key of the wrong JSON type, 7 for an option that is no option
 *
 * The client ID is upstream's: "<container ID>/<network name>/<ifname>" cut to 254 bytes.
 * Provided options: "value", then the CNI_ARGS value "fromArg" names, the later of one
 * code replacing the earlier; requested ones in order then, unless an entry says
 * "skipDefault", routers (3) and subnet-mask (1), each once.
 *
 * Return: 0 on success, negative errno on failure.
 */
int dhcp_config_load(const struct cni_ctx *ctx, enum dhcp_op op, struct dhcp_req *ret,
		     const char **socket_path, struct cni_err *err);

/**
 * dhcp_option_code() - an option's code from its name (dhcp-options(5)) or its number
 * @name: "routers", "host-name", ..., or "1" to "254"
 * @ret: code
 *
 * Return: 0, or -EINVAL.
 */
int dhcp_option_code(const char *name, uint8_t *ret);

/* The keys the plugin reads, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys dhcp_config_keys[];
