/* host-device network config: the device's selector, checked before the kernel is touched */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/cni/conf-keys.h"
#include "common/cni/conf.h"
#include "common/cni/env.h"
#include "common/cni/plugin.h"
#include "common/cni/trust.h"
#include "common/net/device.h"
#include "common/net/link.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/guid.h"
#include "plugins/host-device/config.h"

static const char *const top_keys[] = {
	"device", "hwaddr", "kernelpath", "pciBusID", "deviceID", "guid", "ipv6Autoconf", NULL,
};
static const char *const args_keys[] = { "guid", NULL };

const struct cni_conf_keys hostdev_config_keys[] = {
	{ NULL, top_keys },
	{ "args.cni", args_keys },
	{ 0 },
};

/* A kernelpath longer than this cannot be looked up below a sysfs root (device.c). */
#define KERNELPATH_MAX (PATH_MAX - 64)

/* Whether one of the '/'-separated components of @path is @comp. */
bool hostdev_config_path_has(const char *path, const char *comp)
{
	size_t n = strlen(comp);

	for (const char *p = path; *p; p += strcspn(p, "/")) {
		p += strspn(p, "/");
		if (strncmp(p, comp, n) == 0 && (p[n] == '/' || p[n] == '\0'))
			return true;
	}
	return false;
}

/*
 * A device ID from the device plugin names a PCI function or an auxiliary
 * device (a Mellanox SF). runtimeConfig.deviceID (capability "deviceID") wins
 * over the top-level "deviceID" Multus writes, which wins over "pciBusID".
 * @lenient (DEL) accepts a device that is gone, with a NULL value: nothing in
 * a pod can then be it. A wrong JSON type is an error either way.
 */
static int conf_device_id(const struct cni_ctx *ctx, bool lenient, struct hostdev_conf *c,
			  bool *ret_found, struct cni_err *err)
{
	static const char *const fields[] = { "runtimeConfig.deviceID", "deviceID", "pciBusID" };
	const char *v;
	int r;

	*ret_found = false;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		v = NULL;
		if ((r = cni_conf_get_str(&ctx->conf, fields[i], &v, err)) < 0)
			return r;
		if (!v || !*v)
			continue;
		c->value = v;
		c->source = fields[i];
		*ret_found = true;
		if (device_pci_exists(v)) {
			c->sel = HOSTDEV_SEL_PCI;
			return 0;
		}
		if (device_aux_exists(v)) {
			c->sel = HOSTDEV_SEL_AUX;
			return 0;
		}
		if (lenient) {
			c->sel = HOSTDEV_SEL_PCI;
			c->value = NULL;
			return 0;
		}
		if (i == 0)
			return cni_err_set(err, CNI_ERR_NOT_FOUND, -ENODEV,
					   "runtime config DeviceID %.64s not found or unsupported", v);
		return cni_err_set(err, CNI_ERR_NOT_FOUND, -ENODEV,
				   "%s %.64s not found: neither a PCI nor an auxiliary-bus device",
				   fields[i], v);
	}
	return 0;
}

/*
 * The GUID an InfiniBand VF gets: the capability Multus fills from the pod's
 * annotation wins, as capabilities do, over CNI_ARGS in the config (where
 * ib-sriov-cni reads it) and the plain key. An empty value is none.
 */
static int conf_guid(const struct cni_ctx *ctx, struct hostdev_conf *c, struct cni_err *err)
{
	static const char *const fields[] = { "runtimeConfig.infinibandGUID", "args.cni.guid", "guid" };
	const char *v;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		v = NULL;
		if ((r = cni_conf_get_str(&ctx->conf, fields[i], &v, err)) < 0)
			return r;
		if (!v || !*v)
			continue;
		if (guid_parse(v, &c->guid) < 0 || c->guid == 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid %s \"%.64s\": an InfiniBand GUID is 8 hex octets "
					   "separated by ':', not all zero, e.g. 02:00:00:00:00:00:00:01",
					   fields[i], v);
		c->has_guid = true;
		c->guid_source = fields[i];
		return 0;
	}
	return 0;
}

/*
 * Everything that can be refused is refused here, before the kernel is
 * touched. @lenient (DEL) accepts a device that is gone: DEL only needs to know
 * whether it was a DPDK device.
 */
int hostdev_config_load(const struct cni_ctx *ctx, bool lenient, struct hostdev_conf *ret,
			struct cni_err *err)
{
	struct hostdev_conf c = { 0 };
	const char *device = NULL, *hwaddr = NULL, *kpath = NULL;
	bool found = false;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "device", &device, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "hwaddr", &hwaddr, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "kernelpath", &kpath, err)) < 0)
		return r;
	c.has_ipam = cni_conf_has_ipam(&ctx->conf);

	/*
	 * A malformed hwaddr is a mistake even where "device" wins over it: ADD refuses it.
	 * DEL does not, for the attachments an older build made with it.
	 */
	if (!lenient && device && *device && hwaddr && *hwaddr) {
		uint8_t mac[sizeof(c.mac)];
		size_t mac_len;

		if (hwaddr_parse(hwaddr, mac, &mac_len) < 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid hwaddr \"%.64s\" (beside \"device\", which it would not override)",
					   hwaddr);
	}
	/* The first selector given wins, in the reference's order. */
	if (device && *device) {
		const char *why = cni_env_ifname_invalid(device);

		if (why)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid device \"%.64s\": %s", device, why);
		c.sel = HOSTDEV_SEL_DEVICE;
		c.value = device;
		c.source = "device";
	} else if (hwaddr && *hwaddr) {
		if (hwaddr_parse(hwaddr, c.mac, &c.mac_len) < 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid hwaddr \"%.64s\"", hwaddr);
		c.sel = HOSTDEV_SEL_HWADDR;
		c.value = hwaddr;
		c.source = "hwaddr";
	} else if (kpath && *kpath) {
		if (strncmp(kpath, "/sys/devices/", strlen("/sys/devices/")) != 0 ||
		    hostdev_config_path_has(kpath, ".."))
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid kernelpath \"%.64s\": not under /sys/devices/ or "
					   "with a \"..\" component",
					   kpath);
		if (strlen(kpath) >= KERNELPATH_MAX)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid kernelpath: longer than %d bytes",
					   KERNELPATH_MAX - 1);
		c.sel = HOSTDEV_SEL_KERNELPATH;
		c.value = kpath;
		c.source = "kernelpath";
	} else {
		r = conf_device_id(ctx, lenient, &c, &found, err);
		if (r < 0)
			return r;
		if (!found)
			/* Most often a pod that did not ask for the network's device: say so. */
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "specify either \"device\", \"hwaddr\", \"kernelpath\" or "
					   "\"pciBusID\": no device was given, and none by the device "
					   "plugin (a HostDeviceNetwork NAD names its resource in the "
					   "annotation k8s.v1.cni.cncf.io/resourceName; the pod must "
					   "request that resource in its resources.limits, and Multus "
					   "passes the device allocated as deviceID)");
	}
	if (c.sel == HOSTDEV_SEL_PCI && c.value) {
		r = device_pci_driver_is_dpdk(c.value);
		if (r < 0 && !lenient)
			return cni_err_set(err, CNI_ERR_NOT_FOUND, r, "cannot read the driver of %s: %s",
					   c.value, strerror(-r));
		c.dpdk = r > 0;
	}
	if (!c.has_ipam && !lenient && (r = cni_conf_check_l2_version(&ctx->conf, err)) < 0)
		return r;
	if (!lenient && (r = conf_guid(ctx, &c, err)) < 0)
		return r;
	if (c.has_guid && c.dpdk)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s is set, but %s is bound to a userspace driver: host-device "
				   "sets GUIDs only on an InfiniBand VF's netdev; remove %s",
				   c.guid_source, c.value, c.guid_source);
	/* Where Multus wants the device described: a path the config may name, or none. */
	if (!lenient &&
	    ((r = cni_conf_get_str(&ctx->conf, "runtimeConfig.CNIDeviceInfoFile", &c.devinfo_file,
				   err)) < 0 ||
	     (c.devinfo_file && *c.devinfo_file &&
	      (r = trust_path_check(TRUST_DEVINFO, "runtimeConfig.CNIDeviceInfoFile",
				    c.devinfo_file, err)) < 0)))
		return r;
	if (c.devinfo_file && !*c.devinfo_file)
		c.devinfo_file = NULL;
	*ret = c;
	return 0;
}

int hostdev_config_find(const struct hostdev_conf *c, struct net_link *ret)
{
	char name[IFNAMSIZ];
	int r;

	switch (c->sel) {
	case HOSTDEV_SEL_DEVICE:
		return net_link_get_by_name(NULL, c->value, ret);
	case HOSTDEV_SEL_HWADDR:
		return net_link_get_by_hwaddr(NULL, c->mac, c->mac_len, ret);
	case HOSTDEV_SEL_KERNELPATH:
		r = device_kernelpath_netdev(c->value, name);
		break;
	case HOSTDEV_SEL_PCI:
		r = device_pci_netdev(c->value, name);
		break;
	case HOSTDEV_SEL_AUX:
		r = device_aux_netdev(c->value, name);
		break;
	default:
		return -EINVAL;
	}
	return r < 0 ? r : net_link_get_by_name(NULL, name, ret);
}
