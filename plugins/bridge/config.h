/* bridge network config: every key of upstream v1.9.1's, checked before the kernel */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"
#include "common/net/bridge.h"
#include "common/netfilter/masq.h"

struct cni_ctx;
struct cni_err;

/* The bridge upstream makes when the config names none. */
#define BRIDGE_DEFAULT_NAME "cni0"

/* VLANs 1-4094 as ranges: the most a trunk can need is every other one. */
#define BRIDGE_TRUNK_MAX 2047

struct bridge_conf {
	const char *bridge;              /* "bridge", default "cni0" */
	bool is_gw;                      /* "isGateway" (set by "isDefaultGateway" too) */
	bool is_default_gw;              /* "isDefaultGateway" */
	bool force_address;              /* "forceAddress" */
	bool ip_masq;                    /* "ipMasq" */
	enum masq_backend masq_backend;  /* "ipMasqBackend" */
	unsigned int mtu;                /* "mtu", 0: the kernel's */
	bool hairpin;                    /* "hairpinMode" */
	bool promisc;                    /* "promiscMode" */
	uint16_t vlan;                   /* "vlan", 0 for none */
	bool trunk_given;                /* "vlanTrunk" present and not null, even empty */
	struct net_bridge_vlans trunk[BRIDGE_TRUNK_MAX];
	size_t n_trunk;                  /* ranges, ascending, none adjacent */
	bool preserve_default_vlan;      /* "preserveDefaultVlan" */
	bool macspoofchk;                /* "macspoofchk" */
	bool enable_dad;                 /* "enabledad" */
	bool no_container_iface;         /* "disableContainerInterface" */
	bool port_isolation;             /* "portIsolation" */
	bool has_mac;                    /* CNI_ARGS MAC, args.cni.mac, runtimeConfig.mac */
	uint8_t mac[6];
	bool has_ipam;
};

/**
 * bridge_config_load() - read and validate the plugin's keys of the network config and CNI_ARGS
 * @ctx: context
 * @ret: config, written only on success (strings point into @ctx's config)
 * @err: code 6 for a wrong type, 7 for a bad value or a combination upstream refuses,
 *       4 for unknown CNI_ARGS
 *
 * Return: 0 on success, negative errno on failure.
 */
int bridge_config_load(const struct cni_ctx *ctx, struct bridge_conf *ret, struct cni_err *err);

/* The keys the plugin reads, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys bridge_config_keys[];

/**
 * bridge_config_vlan_ifname() - the host interface a VLAN's gateway address goes on:
 *                               "<bridge>.<vlan>", as upstream names it
 * @c: config
 * @buf: output
 * @size: its size
 *
 * Return: 0 on success, -ENAMETOOLONG when it does not fit an interface name.
 */
int bridge_config_vlan_ifname(const struct bridge_conf *c, char *buf, size_t size);
