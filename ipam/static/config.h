/* static IPAM: the addresses, routes and DNS a config, CNI_ARGS and runtimeConfig give */
#pragma once

#include "common/cni/conf-keys.h"

struct cni_args;
struct cni_conf;
struct cni_err;
struct cni_result;

/**
 * static_config_load() - the result static hands back, from every input it reads
 * @conf: the network config (its "ipam" object, "args.cni.ips", "runtimeConfig.ips")
 * @args: CNI_ARGS (IP=, GATEWAY=, IgnoreUnknown=)
 * @ret: ips, routes and dns, written only on success (release with cni_result_free())
 * @err: code 7 for a config that is missing or wrong, 6 for a key of the wrong JSON type,
 *       4 for CNI_ARGS that are unknown or malformed
 *
 * The addresses are ipam.addresses followed by those of IP=; GATEWAY= sets the gateway
 * of the IP= addresses that contain it. A non-empty args.cni.ips replaces them all, and
 * a non-empty runtimeConfig.ips replaces those in turn. More than one address of a
 * family needs cniVersion 0.3.0 or later.
 *
 * Return: 0 on success, negative errno on failure.
 */
int static_config_load(const struct cni_conf *conf, const struct cni_args *args,
		       struct cni_result *ret, struct cni_err *err);

/* The keys the plugin reads, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys static_config_keys[];
