/* tuning: a sysctl key of the config, resolved to a file below /proc/sys/net */
#pragma once

#include <stddef.h>

struct cni_err;

/* Room for a key once resolved: /proc/sys/net paths are short. */
#define TUNING_SYSCTL_PATH_MAX 256

enum tuning_key_scope {
	TUNING_KEY_NETNS,      /* the whole netns: net.core.*, conf.all.*, conf.default.* */
	TUNING_KEY_OWN,        /* CNI_IFNAME's own entry: net.ipv4.conf.<ifname>.* */
	TUNING_KEY_OTHER,      /* another interface's entry (allowed, as upstream, and logged) */
};

/**
 * tuning_sysctl_key_resolve() - the file a sysctl key names, below /proc/sys/net
 * @key: as the config gives it: dots or slashes between components
 *       ("net.ipv4.conf.IFNAME.arp_ignore", "net/ipv6/conf/IFNAME/accept_ra");
 *       every '.' is a separator and the first "IFNAME" becomes @ifname, as upstream
 * @ifname: CNI_IFNAME (a valid interface name; its dots stay)
 * @buf: the path below /proc/sys/net ("ipv4/conf/net1/arp_ignore")
 * @size: size of @buf
 * @ret_scope: what the key is about, written only on success
 * @err: code 7 saying what is wrong with the key
 *
 * Besides upstream's rule (the file must be below /proc/sys/net/) no
 * component may be empty, "." or "..", and the key may hold no space or
 * control character: the key can only name what it spells.
 *
 * Return: 0 on success, negative errno on failure.
 */
int tuning_sysctl_key_resolve(const char *key, const char *ifname, char *buf, size_t size,
			      enum tuning_key_scope *ret_scope, struct cni_err *err);
