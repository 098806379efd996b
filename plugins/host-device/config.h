/* host-device network config: the device's selector, checked before the kernel is touched */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"
#include "common/util/hwaddr.h"

struct cni_ctx;
struct cni_err;
struct net_link;

enum hostdev_selector {
	HOSTDEV_SEL_DEVICE,
	HOSTDEV_SEL_HWADDR,
	HOSTDEV_SEL_KERNELPATH,
	HOSTDEV_SEL_PCI,
	HOSTDEV_SEL_AUX,
};

struct hostdev_conf {
	enum hostdev_selector sel;
	const char *value;  /* the selector's text; NULL: a device ID gone from sysfs (DEL) */
	const char *source; /* the field it came from, for messages */
	uint8_t mac[HWADDR_MAX];
	size_t mac_len;
	bool dpdk;          /* a PCI device bound to a userspace driver: nothing moves */
	bool has_ipam;
	const char *devinfo_file; /* runtimeConfig.CNIDeviceInfoFile (ADD), NULL when not asked */
	bool has_guid;            /* ADD gives an InfiniBand VF this node and port GUID */
	uint64_t guid;
	const char *guid_source;  /* the key it came from, for messages */
};

/**
 * hostdev_config_load() - the selector of the device, as the reference chooses it
 * @ctx: context
 * @lenient: DEL and CHECK: a device ID gone from sysfs is no error (its value is
 *           NULL then: nothing in a pod can be it), an unreadable driver neither
 * @ret: config, written only on success (strings point into @ctx's config)
 * @err: code 6 for a wrong type, 7 for a bad value or none, 102 for a device ID
 *       that names no device
 *
 * The first of "device", "hwaddr", "kernelpath", then the device IDs
 * (runtimeConfig.deviceID, deviceID, pciBusID). ADD reads the InfiniBand
 * GUID: runtimeConfig.infinibandGUID, else args.cni.guid, else "guid".
 *
 * Return: 0 on success, negative errno on failure.
 */
int hostdev_config_load(const struct cni_ctx *ctx, bool lenient, struct hostdev_conf *ret,
			struct cni_err *err);

/**
 * hostdev_config_find() - the device in the caller's netns (the host), as the selector names it
 * @c: config
 * @ret: the link, written only on success
 *
 * Return: 0 on success, -ENODEV when no link matches, negative errno otherwise.
 */
int hostdev_config_find(const struct hostdev_conf *c, struct net_link *ret);

/**
 * hostdev_config_path_has() - whether one of the '/'-separated components of a path is a name
 * @path: path
 * @comp: the component
 *
 * Return: true when it is.
 */
bool hostdev_config_path_has(const char *path, const char *comp);

/* The keys the plugin reads, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys hostdev_config_keys[];
