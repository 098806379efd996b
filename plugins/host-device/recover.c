/* host-device: recognising a device a killed plugin or a gone netns left, and bringing it home */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/cni/env.h"
#include "common/net/ethtool.h"
#include "common/net/link.h"
#include "common/util/hwaddr.h"
#include "common/util/log.h"
#include "plugins/host-device/config.h"
#include "plugins/host-device/recover.h"
#include "plugins/host-device/state.h"

bool hostdev_recover_returned_name(const char *name, const char *ifname)
{
	size_t digits;

	if (strcmp(name, ifname) == 0)
		return true;
	if (strncmp(name, "dev", 3) != 0)
		return false;
	digits = strspn(name + 3, "0123456789");
	return digits > 0 && name[3 + digits] == '\0';
}

int hostdev_recover_alias_free(struct net_ns *ns, const struct net_link *link)
{
	struct net_link other;
	int r;

	if (cni_env_ifname_invalid(link->alias) || strcmp(link->alias, link->name) == 0)
		return -EINVAL;
	r = net_link_get_by_name(ns, link->alias, &other);
	if (r == 0)
		return -EEXIST;
	return r == -ENODEV ? 0 : r;
}

void hostdev_recover_in_host(const struct hostdev_conf *c, const char *ifname,
			     uint64_t attachment)
{
	struct net_link link;
	bool was_up;
	int r;

	if (!c->value)
		return;
	r = c->sel == HOSTDEV_SEL_DEVICE ? net_link_get_by_alias(NULL, c->value, &link) :
					   hostdev_config_find(c, &link);
	if (r < 0 || !hostdev_recover_returned_name(link.name, ifname)) {
		/* Home under its own name, maybe without what its ADD kept. */
		if (c->sel == HOSTDEV_SEL_DEVICE)
			hostdev_state_restore(c->value, attachment);
		else if (r >= 0)
			hostdev_state_restore(link.name, attachment);
		return;
	}
	r = hostdev_recover_alias_free(NULL, &link);
	if (r == -EEXIST)
		log_warning("DEL: %s came back to the host; its original name %s is taken, left as is",
			    link.name, link.alias);
	if (r < 0)
		return;
	/* Renaming needs the link down; its up state is restored when the rename fails. */
	was_up = link.flags & IFF_UP;
	r = was_up ? net_link_set_up(NULL, link.ifindex, false) : 0;
	if (r >= 0) {
		r = net_link_set_name(NULL, link.ifindex, link.alias);
		if (r < 0 && was_up)
			(void)net_link_set_up(NULL, link.ifindex, true);
	}
	if (r >= 0)
		r = net_link_set_alias(NULL, link.ifindex, "");
	if (r < 0) {
		log_warning("DEL: cannot rename %s back to %s: %s", link.name, link.alias, strerror(-r));
		return;
	}
	log_info("DEL: %s, returned to the host by the kernel, is %s again", link.name, link.alias);
	hostdev_state_restore(link.alias, attachment);
}

int hostdev_recover_is_device(struct net_ns *pod, const struct hostdev_conf *c,
			      const struct net_link *link, char *why, size_t size)
{
	uint8_t hw[HWADDR_MAX];
	char text[3 * HWADDR_MAX], bus[64];
	size_t hw_len = 0;
	int r;

	if (!c->value) {
		snprintf(why, size, "the configured device is gone from sysfs");
		return 0;
	}
	switch (c->sel) {
	case HOSTDEV_SEL_DEVICE:
		snprintf(why, size, "its original name is not %s", c->value);
		return strcmp(link->alias, c->value) == 0;
	case HOSTDEV_SEL_HWADDR:
		r = net_ethtool_perm_hwaddr(pod, link->name, hw, &hw_len);
		if (r == -ENODATA || r == -EOPNOTSUPP) {
			hw_len = link->hwaddr_len;
			memcpy(hw, link->hwaddr, hw_len);
		} else if (r < 0) {
			return r;
		}
		snprintf(why, size, "its %sMAC is %s", r == 0 ? "permanent " : "",
			 hwaddr_format(hw, hw_len, text, sizeof(text)));
		return hw_len == c->mac_len && memcmp(hw, c->mac, hw_len) == 0;
	case HOSTDEV_SEL_KERNELPATH:
	case HOSTDEV_SEL_PCI:
	case HOSTDEV_SEL_AUX:
		r = net_ethtool_bus_info(pod, link->name, bus, sizeof(bus));
		if (r == -EOPNOTSUPP)
			bus[0] = '\0';
		else if (r < 0)
			return r;
		snprintf(why, size, "its bus device is \"%s\"", bus);
		if (c->sel == HOSTDEV_SEL_KERNELPATH)
			return !bus[0] || hostdev_config_path_has(c->value, bus);
		return strcmp(bus, c->value) == 0;
	}
	return -EINVAL;
}

static bool left_mid_move(const struct net_link *link, void *data)
{
	const char *ifname = data;

	return !cni_env_ifname_invalid(link->alias) &&
	       (strcmp(link->alias, link->name) == 0 ||
		hostdev_recover_returned_name(link->name, ifname));
}

int hostdev_recover_find_left(struct net_ns *pod, const char *ifname, struct net_link *ret)
{
	return net_link_find(pod, left_mid_move, (void *)ifname, ret);
}
