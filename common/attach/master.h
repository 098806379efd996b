/* The master a child link hangs off: by name, or the link of the default route */
#pragma once

#include <stdbool.h>

struct attach;
struct cni_err;
struct net_link;

/**
 * attach_master() - look up the master of a child link (macvlan's, ipvlan's, a VLAN's)
 * @a: the attachment (attach_open() done)
 * @name: the master's name, NULL for the link of the first default route
 * @in_pod: look in the pod's netns (linkInContainer), else in the host's
 * @ret: the master, written only on success
 * @err: code 102 when there is no such link, or no default route
 *
 * Without a name the default route's link is taken, as the references do; the
 * log says so, with a warning when the config has a key spelt close to
 * "master" (which is ignored).
 *
 * Return: 0 on success, negative errno on failure.
 */
int attach_master(struct attach *a, const char *name, bool in_pod, struct net_link *ret,
		  struct cni_err *err);
