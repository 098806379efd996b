/* ipvlan network config: master, mode, flag, mtu, where the addresses come from */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"

/* The keys ipvlan reads: a near miss of one is warned of (cni_conf_keys_warn()). */
extern const struct cni_conf_keys ipvlan_config_keys[];

struct cni_ctx;
struct cni_err;

struct ipvlan_conf {
	/*
	 * NULL: the link of the default route (in the pod with linkInContainer).
	 * Chained without "master", the one interface prevResult names.
	 */
	const char *master;
	bool master_from_prev;  /* taken from prevResult */
	uint16_t mode;          /* IPVLAN_MODE_* */
	uint16_t flags;         /* IPVLAN_F_*: 0 is "bridge" */
	int64_t mtu;            /* 0: inherit; checked against the master's once it is found */
	bool link_in_container;
	bool has_ipam;
	bool use_prev_ips;      /* no IPAM: prevResult's addresses are the ipvlan's */
};

/**
 * ipvlan_config_load() - read and validate the plugin's fields of the network config
 * @ctx: context
 * @cmd_check: for CHECK, whose prevResult is the attachment's own result: "master" is
 *             not derived from it
 * @ret: config, written only on success (strings point into @ctx's config)
 * @err: code 6 for a wrong type, 7 for a bad value
 *
 * Return: 0 on success, negative errno on failure.
 */
int ipvlan_config_load(const struct cni_ctx *ctx, bool cmd_check, struct ipvlan_conf *ret,
		       struct cni_err *err);

/**
 * ipvlan_config_mode_name() - "l2", "l3" or "l3s"
 * @mode: IPVLAN_MODE_*
 *
 * Return: the name, "unknown" for anything else.
 */
const char *ipvlan_config_mode_name(uint16_t mode);

/**
 * ipvlan_config_flag_name() - "bridge", "private" or "vepa"
 * @flags: IPVLAN_F_*
 *
 * Return: the name, "unknown" for anything else.
 */
const char *ipvlan_config_flag_name(uint16_t flags);
