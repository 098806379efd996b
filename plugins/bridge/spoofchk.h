/* macspoofchk: frames a pod sends with another source MAC dropped, as upstream's pkg/link */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct cni_attachment;
struct cni_err;

/*
 * Upstream (v1.9.1 pkg/link/spoofcheck.go, through nft's JSON) keeps table bridge
 * nat with base chain PREROUTING (filter, prerouting, priority -300, policy accept)
 * and per attachment "<container ID>-<ifname>": a rule 'iifname "<host veth>" jump
 * cni-br-iface-<ID>' in PREROUTING, chain cni-br-iface-<ID> jumping to
 * cni-br-iface-<ID>-mac, which returns for the pod's MAC and drops the rest; every
 * rule commented "macspoofchk-<ID>". The same names here, one batch.
 */

/**
 * bridge_spoofchk_setup() - the attachment's check, in one nftables batch
 * @container_id: CNI_CONTAINERID
 * @ifname: CNI_IFNAME
 * @host_veth: the pod's port on the bridge
 * @mac: the pod interface's MAC
 * @err: code 100 naming the change the kernel refused
 *
 * Return: 0 on success, negative errno on failure (nothing changed).
 */
int bridge_spoofchk_setup(const char *container_id, const char *ifname, const char *host_veth,
			  const uint8_t mac[6], struct cni_err *err);

/**
 * bridge_spoofchk_teardown() - the attachment's rules and chains removed, whoever made them
 * @container_id: CNI_CONTAINERID
 * @ifname: CNI_IFNAME
 * @err: code 100 naming what failed
 *
 * The table and its base chain stay, as upstream leaves them. Nothing to remove is
 * no error, nor a kernel without nftables.
 *
 * Return: 0 on success, negative errno on failure.
 */
int bridge_spoofchk_teardown(const char *container_id, const char *ifname, struct cni_err *err);

/**
 * bridge_spoofchk_gc() - the checks of attachments gone from a bridge, removed
 * @bridge: the network's bridge
 * @valid: the attachments to keep
 * @n: how many
 * @err: code 100 naming what failed
 *
 * An attachment's rules name no network: a check is this network's when its port
 * is on @bridge, and stale when its port is gone (its pod is); another bridge's
 * live checks are left alone.
 *
 * Return: 0 on success, negative errno on failure.
 */
int bridge_spoofchk_gc(const char *bridge, const struct cni_attachment *valid, size_t n,
		       struct cni_err *err);
