/* ipoib network config: master, mtu, pkey, mode, umcast, checked before the kernel is touched */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"

struct cni_ctx;
struct cni_err;

/* The partition key is 15 bits; bit 15 is the full-membership bit. */
#define IPOIB_PKEY_MASK 0x7fff

/* Longest IFLA_IFALIAS the kernel keeps (IFALIASZ - 1). */
#define IPOIB_ALIAS_MAX 255

struct ipoib_conf {
	const char *master;
	unsigned int mtu;       /* 0: what the kernel gives the child */
	bool has_pkey;
	uint16_t pkey;          /* 15 bits, when has_pkey; the master's otherwise */
	int mode;               /* IPOIB_MODE_DATAGRAM/_CONNECTED, -1: the master's */
	bool umcast;
	bool has_ipam;
};

/**
 * ipoib_config_load() - read and validate the plugin's fields of the network config
 * @ctx: context
 * @ret: config, written only on success
 * @err: code 6 for a wrong type, 7 for a bad value
 *
 * Return: 0 on success, negative errno on failure.
 */
int ipoib_config_load(const struct cni_ctx *ctx, struct ipoib_conf *ret, struct cni_err *err);

/**
 * ipoib_config_mode_name() - "datagram" or "connected"
 * @mode: IPOIB_MODE_*
 *
 * Return: the name, "unknown" for anything else.
 */
const char *ipoib_config_mode_name(int mode);

/**
 * ipoib_config_alias() - the mark a child carries so that DEL finds it wherever it ended up
 * @container_id: CNI_CONTAINERID
 * @ifname: CNI_IFNAME
 * @buf: output, at least IPOIB_ALIAS_MAX + 1 bytes
 * @size: size of @buf
 *
 * "cni-ipoib <container id> <ifname>"; a container ID too long for the alias
 * is replaced by a 64-bit hash of it.
 */
void ipoib_config_alias(const char *container_id, const char *ifname, char *buf, unsigned long size);

/* The keys the plugin reads, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys ipoib_config_keys[];
