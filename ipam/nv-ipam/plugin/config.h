/* nv-ipam network configuration: stdin ipam section over nv-ipam.conf, requests from args */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/cni/conf-keys.h"
#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/store/store.h"

struct cni_ctx;
struct cni_err;

#define NVIPAM_DEFAULT_CONF_DIR "/etc/cni/net.d/nv-ipam.d"
#define NVIPAM_MAX_POOLS 2
/* The longest released-address cooldown nv-ipam.conf may set: a day. */
#define NVIPAM_COOLDOWN_MAX_S 86400

struct nvipam_config {
	char pool_names[NVIPAM_MAX_POOLS][NVIPAM_POOL_KEY_MAX]; /* names as given */
	char pool_keys[NVIPAM_MAX_POOLS][NVIPAM_POOL_KEY_MAX];  /* "<name>" or "cidrpool/<name>" */
	size_t n_pools;
	bool pool_from_name;   /* no poolName: the pool is the network's name, the reference's fallback */
	enum nvipam_pool_type pool_type;
	char pool_file[4096];
	char store_file[4096];
	char log_file[4096];   /* "" when none */
	bool log_file_node;    /* set by nv-ipam.conf, the node's file, not the network config */
	char log_level[16];
	unsigned int lock_timeout_ms;
	unsigned int released_ip_cooldown_s; /* nv-ipam.conf's releasedIPCooldownSeconds, 0: none */
	/* Requests, after the reference's priorities and conflict checks. */
	struct ip_addr static_ips[8];
	size_t n_static_ips;
	bool allocate_default_gateway;
	bool has_index;
	unsigned long index;
	/* Recorded with the allocation. */
	char pod_namespace[256];
	char pod_name[256];
	char pod_uid[128];
	char device_id[256];
};

enum nvipam_config_scope {
	NVIPAM_CONFIG_FULL,  /* ADD, CHECK, STATUS: pools and requests too */
	NVIPAM_CONFIG_STORE, /* DEL, GC: only where the store and the log are */
};

/**
 * nvipam_config_load() - the effective nv-ipam config of one invocation
 * @ctx: parsed environment, network config and CNI_ARGS
 * @ret: malloc'ed config (some 14 KiB: kept off the stack), written only on success
 * @err: code 7 with the reference's messages ("pool field can't contain more then two
 *       entries", "unsupported poolType X, supported values: ippool, cidrpool",
 *       "no pool provided", conflicts between static IPs, gateway and index), 6 for wrong types
 *
 * Precedence: the stdin "ipam" section, then <confDir>/nv-ipam.conf (a missing file is
 * fine, an unparsable one is an error), then defaults; args.cni overrides poolNames and
 * poolType; static IPs from runtimeConfig.ips > args.cni.ips > CNI_ARGS IP. storeFile and
 * poolFile are the node's: only nv-ipam.conf sets them, a network config naming either
 * is code 7 for every command.
 *
 * @scope says how much is resolved: DEL and GC neither read nor check pools and
 * requests, so a config that could not ADD can still be deleted.
 *
 * Return: 0 on success, negative errno on failure.
 */
int nvipam_config_load(const struct cni_ctx *ctx, enum nvipam_config_scope scope,
		       struct nvipam_config **ret, struct cni_err *err);

/* The keys nv-ipam reads from a network config, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys nvipam_config_keys[];
