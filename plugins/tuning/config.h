/* tuning network config: sysctl, mac, mtu, promisc, allmulti, txQLen, from upstream's sources */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"
#include "common/cni/result.h"
#include "common/util/hwaddr.h"
#include "plugins/tuning/sysctl-key.h"

struct cni_conf_pair;
struct cni_ctx;
struct cni_err;

/* More sysctls than any profile sets; bounds the state file. */
#define TUNING_MAX_SYSCTLS 128
/* A sysctl value is taken from one page; this leaves room for any real one. */
#define TUNING_SYSCTL_VALUE_MAX 1024

struct tuning_sysctl {
	const char *key;                   /* as the config gives it */
	const char *value;
	char path[TUNING_SYSCTL_PATH_MAX]; /* below /proc/sys/net */
	enum tuning_key_scope scope;
};

struct tuning_conf {
	struct cni_conf_pair *pairs;       /* owned: the merged sysctl map */
	size_t n_pairs;
	struct tuning_sysctl *sysctls;     /* owned, in the order given (args.cni after the config) */
	size_t n_sysctls;
	bool has_mac;
	uint8_t mac[HWADDR_MAX];
	size_t mac_len;
	char mac_text[CNI_MAC_STRLEN];     /* lower case, colons: what the kernel reports */
	bool promisc;                      /* false: left as it is (upstream's bool) */
	unsigned int mtu;                  /* 0: left as it is */
	bool has_allmulti;
	bool allmulti;
	bool has_txqlen;
	uint32_t txqlen;
};

/**
 * tuning_config_load() - read and validate the plugin's fields, CNI_ARGS and args.cni
 * @ctx: context (CNI_IFNAME resolves the IFNAME of sysctl keys)
 * @allowlist: the node's sysctl allowlist file (TUNING_ALLOWLIST_PATH)
 * @ret: config, written only on success; release with tuning_config_free()
 * @err: code 6 for a wrong type, 7 for a bad value or key, 4 for unknown CNI_ARGS
 *
 * The MAC is the last one given of: "mac", CNI_ARGS MAC, runtimeConfig.mac,
 * args.cni.mac; args.cni's sysctl entries replace or extend "sysctl", its
 * other keys replace the top-level ones. "dataDir" is read and ignored: the
 * node decides where state lives.
 *
 * Return: 0 on success, negative errno on failure.
 */
int tuning_config_load(const struct cni_ctx *ctx, const char *allowlist, struct tuning_conf *ret,
		       struct cni_err *err);

/**
 * tuning_config_free() - release what a loaded config owns and zero it
 * @c: config
 */
void tuning_config_free(struct tuning_conf *c);

/**
 * tuning_config_changes() - whether the config asks ADD to change anything
 * @c: config
 *
 * Return: true when a sysctl or a link attribute is to be set.
 */
bool tuning_config_changes(const struct tuning_conf *c);

/* The keys the plugin reads, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys tuning_config_keys[];
