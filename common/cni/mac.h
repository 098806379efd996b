/* The pod interface's MAC address as a runtime and a config give it */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct cni_ctx;
struct cni_err;

/**
 * cni_mac_get() - the MAC an interface plugin gives the link it creates
 * @ctx: context; the caller checks CNI_ARGS for unknown keys (MAC among its known ones)
 * @ret: the address (6 bytes), written only when one is given
 * @ret_set: set to whether one is given
 * @err: code 7 for an address that is not a 6-byte unicast, nonzero MAC, naming its source
 *
 * The config's "mac", then CNI_ARGS MAC, then runtimeConfig.mac: the last one
 * given wins, and every one given must be valid. The kernel would refuse a
 * multicast or zero address with EADDRNOTAVAIL; this says why before anything
 * is created.
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_mac_get(const struct cni_ctx *ctx, uint8_t ret[6], bool *ret_set, struct cni_err *err);

/**
 * cni_mac_parse() - one source's MAC, checked as cni_mac_get() checks it
 * @text: the address's text
 * @source: where it came from, for the error ("args.cni.mac")
 * @ret: the address (6 bytes), written only on success
 * @ret_set: set to true on success
 * @err: code 7 for an address that is not a 6-byte unicast, nonzero MAC, naming @source
 *
 * For a plugin whose reference reads its MAC from other keys than cni_mac_get()'s.
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_mac_parse(const char *text, const char *source, uint8_t ret[6], bool *ret_set,
		  struct cni_err *err);
