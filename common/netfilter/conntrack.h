/* Conntrack: deleting the connection-tracking entries a new mapping would otherwise lose to */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct cni_err;

/**
 * ct_delete_dports() - delete the conntrack entries of one protocol whose original
 *                      destination port is one of @ports
 * @family: AF_INET or AF_INET6
 * @l4proto: IPPROTO_UDP, IPPROTO_TCP or IPPROTO_SCTP
 * @ports: the destination ports of the connections' first packets
 * @n_ports: their number (none: nothing is asked)
 * @ret_deleted: how many were deleted, may be NULL
 * @err: code 100 when the kernel cannot be asked
 *
 * What upstream's portmap does after adding its UDP mappings, so that replies of a
 * stale entry (made before the mapping, to the host itself) do not keep the new
 * traffic from it: the table of the caller's netns is dumped once (upstream dumps it
 * once a port) and each entry that matches is deleted by its tuple and ID, so that
 * an entry made again meanwhile is left alone. An entry gone before its delete is
 * not counted.
 *
 * Return: 0 on success, -EINVAL for another family or protocol, negative errno otherwise.
 */
int ct_delete_dports(int family, uint8_t l4proto, const uint16_t *ports, size_t n_ports,
		     size_t *ret_deleted, struct cni_err *err);
