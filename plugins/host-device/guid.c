/* host-device: an InfiniBand VF's GUIDs, set through its PF before the move and given back on DEL */
#include <errno.h>
#include <net/if_arp.h>
#include <string.h>
#include <time.h>

#include "common/net/device.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/vf.h"
#include "common/util/error.h"
#include "common/util/guid.h"
#include "common/util/log.h"
#include "plugins/host-device/guid.h"

/* An IPoIB hardware address: 4 octets of flags and QPN, the port GID (prefix, port GUID). */
#define IPOIB_HWADDR_LEN 20
#define IPOIB_GUID_OFFSET 12

/*
 * How long the VF's netdev may take to come back after the bind: mlx5
 * registers it while the bind runs, so this covers only a slower driver.
 */
#define REBIND_WAIT_STEPS 50
#define REBIND_WAIT_NS 100000000L

static uint64_t hwaddr_guid(const struct net_link *dev)
{
	uint64_t g = 0;

	for (size_t i = IPOIB_GUID_OFFSET; i < IPOIB_HWADDR_LEN; i++)
		g = g << 8 | dev->hwaddr[i];
	return g;
}

static int vf_lookup(const struct net_link *dev, struct hostdev_guid_vf *ret, const char **why)
{
	struct hostdev_guid_vf v = { 0 };
	char pf[IFNAMSIZ];
	struct net_link pf_link;
	int r;

	*why = "it is not an InfiniBand device";
	if (dev->type != ARPHRD_INFINIBAND || dev->hwaddr_len != IPOIB_HWADDR_LEN)
		return -ENOTSUP;
	*why = "it is not an SR-IOV VF (no physfn in sysfs)";
	r = device_netdev_vf(dev->name, &v.vf);
	if (r < 0)
		return r == -ENOENT ? -ENOTSUP : r;
	*why = "its PF has no netdev in the host";
	r = device_pci_netdev(v.vf.pf_pci, pf);
	if (r >= 0)
		r = net_link_get_by_name(NULL, pf, &pf_link);
	if (r < 0)
		return r == -ENODEV || r == -ENOENT ? -ENOTSUP : r;
	v.pf_ifindex = pf_link.ifindex;
	v.found = hwaddr_guid(dev);
	*ret = v;
	return 0;
}

int hostdev_guid_vf(const struct net_link *dev, const char *source, struct hostdev_guid_vf *ret,
		    struct cni_err *err)
{
	const char *why;
	int r = vf_lookup(dev, ret, &why);

	if (r == -ENOTSUP)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s is set, but device %s cannot take a GUID: %s; remove %s from "
				   "the config or the pod's annotation, or select an InfiniBand VF",
				   source, dev->name, why, source);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot read the SR-IOV VF of %s in sysfs: %s",
				   dev->name, strerror(-r));
	return 0;
}

void hostdev_guid_warn_zero(const struct net_link *dev)
{
	if (dev->type == ARPHRD_INFINIBAND && dev->hwaddr_len == IPOIB_HWADDR_LEN &&
	    hwaddr_guid(dev) == 0)
		log_warning("%s has a zero GUID: the subnet manager gives its port no LID, so it stays "
			    "down in the pod; give it one with runtimeConfig.infinibandGUID (capability "
			    "infinibandGUID), args.cni.guid or guid", dev->name);
}

/* The VF's netdev after its driver bound again, named @name. */
static int netdev_back(const char *pci, const char *name, struct net_link *ret)
{
	const struct timespec step = { .tv_nsec = REBIND_WAIT_NS };
	char now[IFNAMSIZ];
	struct net_link link;
	int r = -ENODEV;

	for (int i = 0; i < REBIND_WAIT_STEPS; i++) {
		r = device_pci_netdev(pci, now);
		if (r >= 0)
			r = net_link_get_by_name(NULL, now, &link);
		if (r != -ENODEV)
			break;
		nanosleep(&step, NULL);
	}
	if (r < 0)
		return r;
	if (strcmp(now, name) != 0) {
		r = net_link_set_name(NULL, link.ifindex, name);
		if (r < 0)
			return r;
	}
	return net_link_get_by_name(NULL, name, ret);
}

int hostdev_guid_netdev(const struct hostdev_guid_vf *v, const char *name, struct net_link *ret)
{
	return netdev_back(v->vf.pci, name, ret);
}

int hostdev_guid_set(const struct hostdev_guid_vf *v, uint64_t guid, const char *name,
		     struct net_link *ret, bool *ret_changed)
{
	char text[GUID_TEXT_SIZE];
	int r;

	*ret_changed = false;
	guid_format(guid, text);
	/* Node GUID first, as ib-sriov-cni: when the kernel refuses it, nothing changed. */
	r = net_vf_set_ib_guid(NULL, v->pf_ifindex, v->vf.index, NET_VF_NODE_GUID, guid);
	if (r >= 0) {
		*ret_changed = true;
		r = net_vf_set_ib_guid(NULL, v->pf_ifindex, v->vf.index, NET_VF_PORT_GUID, guid);
	}
	if (r < 0) {
		log_error("cannot set %s GUID %s of VF %u (%s) on its PF %s: %s",
			  *ret_changed ? "port" : "node", text, v->vf.index, v->vf.pci, v->vf.pf_pci,
			  strerror(-r));
		return r;
	}
	r = device_pci_rebind(v->vf.pci);
	if (r < 0) {
		log_error("cannot bind VF %s to its driver again to apply GUID %s: %s", v->vf.pci,
			  text, strerror(-r));
		return r;
	}
	r = netdev_back(v->vf.pci, name, ret);
	if (r < 0) {
		log_error("VF %s has no netdev %s after its driver bound again: %s", v->vf.pci, name,
			  strerror(-r));
		return r;
	}
	log_debug("VF %s (%u on PF %s) has GUID %s as %s", v->vf.pci, v->vf.index, v->vf.pf_pci,
		  text, name);
	return 0;
}

int hostdev_guid_restore(const char *name, uint64_t guid, struct net_link *ret)
{
	struct hostdev_guid_vf v;
	struct net_link dev;
	const char *why;
	bool changed;
	int r;

	r = net_link_get_by_name(NULL, name, &dev);
	if (r >= 0)
		r = vf_lookup(&dev, &v, &why);
	if (r == -ENOTSUP) {
		log_error("cannot give %s its GUID back: %s", name, why);
		return r;
	}
	if (r < 0) {
		log_error("cannot find the SR-IOV VF of %s: %s", name, strerror(-r));
		return r;
	}
	return hostdev_guid_set(&v, guid, name, ret, &changed);
}
