/* host-device: recognising a device a killed plugin or a gone netns left, and bringing it home */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hostdev_conf;
struct net_link;
struct net_ns;

/**
 * hostdev_recover_returned_name() - whether a name is one the kernel gives a device it hands back
 * @name: the device's name
 * @ifname: CNI_IFNAME
 *
 * When a device's netns goes away (a pod's, or the temporary one of a move the
 * plugin did not live to finish), the kernel hands a physical device back to
 * the initial netns under its name there, CNI_IFNAME, or dev<N> when that is
 * taken (default_device_exit_net()).
 *
 * Return: true for CNI_IFNAME or dev<digits>.
 */
bool hostdev_recover_returned_name(const char *name, const char *ifname);

/**
 * hostdev_recover_alias_free() - whether a link's alias is an original name it can get back
 * @ns: the link's netns (its handle), NULL for the caller's
 * @link: the link
 *
 * Return: 0 when the alias is a valid interface name that differs from the
 * link's own and that no link of @ns has, -EEXIST when a link has it, -EINVAL
 * when the alias is no such name, another negative errno when the lookup failed.
 */
int hostdev_recover_alias_free(struct net_ns *ns, const struct net_link *link);

/**
 * hostdev_recover_in_host() - give a device the kernel handed back to the host its name again
 * @c: config (its selector finds the device; for "device", by its alias)
 * @ifname: CNI_IFNAME
 * @attachment: hostdev_state_attachment() of the DEL
 *
 * Only a device named CNI_IFNAME or devN whose alias is a free interface name
 * is renamed: a host link that merely has an alias is not one the plugin
 * moved. Then, or when the device is at home under its own name (an ADD or a
 * DEL of this attachment killed on the way), the state its ADD kept is given
 * back (hostdev_state_restore()). Failures are logged: DEL succeeds either way
 * and a later DEL retries.
 */
void hostdev_recover_in_host(const struct hostdev_conf *c, const char *ifname,
			     uint64_t attachment);

/**
 * hostdev_recover_is_device() - whether a link of the pod is the device the config names
 * @pod: the pod's netns
 * @c: config
 * @link: the pod's link
 * @why: when it is not, what tells (for the warning)
 * @size: size of @why
 *
 * As far as the selector lets the plugin tell, since a pod can create,
 * rename and alias links of its own: device: the original name (alias);
 * hwaddr: the permanent MAC, else the current one; PCI and auxiliary device
 * IDs: the bus device ethtool reports, which must be the ID; kernelpath: that
 * bus device, when the driver reports one, must be a component of the path.
 *
 * Return: 1 when it is, 0 when not, negative errno when ethtool fails.
 */
int hostdev_recover_is_device(struct net_ns *pod, const struct hostdev_conf *c,
			      const struct net_link *link, char *why, size_t size);

/**
 * hostdev_recover_find_left() - a device a killed plugin left in the pod on the direct way
 * @pod: the pod's netns
 * @ifname: CNI_IFNAME
 * @ret: the link, written only on success
 *
 * Between the move and the rename (ADD), or the rename and the move (DEL), it
 * has its original name as both name and alias (or a devN name, when ADD took
 * it from the host as such). Whether it is the configured device is for
 * hostdev_recover_is_device() to say.
 *
 * Return: 0 when found, -ENODEV when none, negative errno otherwise.
 */
int hostdev_recover_find_left(struct net_ns *pod, const char *ifname, struct net_link *ret);
