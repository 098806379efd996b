/* firewall network config: backend, iptables admin chain, firewalld zone, ingress policy */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/cni/conf-keys.h"
#include "common/util/ipaddr.h"

/* The keys firewall reads: a near miss of one is warned of (cni_conf_keys_warn()). */
extern const struct cni_conf_keys firewall_config_keys[];

struct cni_ctx;
struct cni_err;
struct cni_result;

enum firewall_backend {
	FIREWALL_AUTO,      /* firewalld when it runs on the system bus, else iptables */
	FIREWALL_IPTABLES,
	FIREWALL_FIREWALLD,
};

enum firewall_policy {
	FIREWALL_OPEN,
	FIREWALL_SAME_BRIDGE,
	FIREWALL_ISOLATED,
};

/* iptables' longest chain name and firewalld's zone names, with their NUL. */
#define FIREWALL_CHAIN_MAX 29
#define FIREWALL_ZONE_MAX 256

struct firewall_conf {
	enum firewall_backend backend;
	char admin_chain[FIREWALL_CHAIN_MAX]; /* "iptablesAdminChainName", default CNI-ADMIN */
	char zone[FIREWALL_ZONE_MAX];         /* "firewalldZone", default trusted */
	enum firewall_policy policy;
	bool policy_known;                    /* false: a policy ADD refuses (DEL goes on) */
	char bridge[16];                      /* prevResult's first interface, for a policy */
	/* prevResult's addresses, as "-d"/"-s" and firewalld sources take them: A/32, A/128. */
	struct ip_prefix *ips;
	size_t n_ips;
	bool has_prev;
};

/**
 * firewall_config_load() - read and validate the plugin's keys and prevResult's addresses
 * @ctx: context
 * @ret: config, written only on success (also when only the policy is refused, which
 *       @err then holds and the return says); release with firewall_config_free()
 * @err: code 6 for a wrong type, 7 for a value refused
 *
 * As upstream: a backend other than "iptables" or "firewalld" is the automatic choice;
 * an empty zone is "trusted"; the ingress policy "", "open", "same-bridge" or
 * "isolated" (another: code 7 `unknown ingress policy`); for the last two the bridge is
 * prevResult's first interface (none: code 7).
 *
 * Return: 0 on success, -EBADR when all but the policy was read (@ret written), negative
 * errno otherwise.
 */
int firewall_config_load(const struct cni_ctx *ctx, struct firewall_conf *ret,
			 struct cni_err *err);

/**
 * firewall_config_free() - release what a loaded config owns and zero it
 * @c: config
 */
void firewall_config_free(struct firewall_conf *c);
