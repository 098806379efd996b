/* The pod's end of a veth pair at DEL: deleted, its addresses kept for the masquerade */
#pragma once

#include <stddef.h>

struct attach;
struct cni_ctx;
struct cni_err;
struct ip_prefix;

/**
 * attach_veth_delete() - delete CNI_IFNAME in the pod when it is a veth (the pair goes with it)
 * @a: the attachment (attach_open_del() returned 1)
 * @addrs: filled with the interface's global unicast addresses, as Go's
 *         IsGlobalUnicast() picks them (what upstream's DEL reads for ipMasq)
 * @max: room in @addrs
 * @n: how many were written
 * @err: code 100 with the kernel's text
 *
 * A link of another kind is another plugin's: logged and left in place. No such
 * link is no error, so that DEL succeeds when repeated.
 *
 * Return: 0 on success, negative errno on failure.
 */
int attach_veth_delete(struct attach *a, struct ip_prefix *addrs, size_t max, size_t *n,
		       struct cni_err *err);

/**
 * attach_veth_prev_addrs() - the addresses prevResult gives CNI_IFNAME (or no interface)
 * @ctx: context
 * @addrs: filled
 * @max: room in @addrs
 * @n: how many were written (added to what it holds)
 *
 * What a DEL without the pod still knows of the addresses its masquerade names.
 */
void attach_veth_prev_addrs(const struct cni_ctx *ctx, struct ip_prefix *addrs, size_t max,
			    size_t *n);
