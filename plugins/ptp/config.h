/* ptp network config: ipMasq, ipMasqBackend, mtu, checked before the kernel */
#pragma once

#include <stdbool.h>

#include "common/cni/conf-keys.h"
#include "common/netfilter/masq.h"

struct cni_ctx;
struct cni_err;

struct ptp_conf {
	bool ip_masq;                    /* "ipMasq" */
	enum masq_backend masq_backend;  /* "ipMasqBackend", MASQ_DEFAULT when absent */
	unsigned int mtu;                /* "mtu", 0: the kernel's */
};

/**
 * ptp_config_load() - read and validate the plugin's keys of the network config
 * @ctx: context
 * @add: ADD: the values are checked and an "ipam" section is required; DEL, CHECK
 *       and GC check the keys' types only, as upstream's decoder does, so that the
 *       DEL of a config ADD refused succeeds
 * @ret: config, written only on success
 * @err: code 6 for a wrong type, 7 for a bad value or a missing "ipam"
 *
 * Return: 0 on success, negative errno on failure.
 */
int ptp_config_load(const struct cni_ctx *ctx, bool add, struct ptp_conf *ret,
		    struct cni_err *err);

/* The keys the plugin reads, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys ptp_config_keys[];
