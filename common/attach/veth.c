/* The pod's end of a veth pair at DEL: deleted, its addresses kept for the masquerade */
#include <errno.h>
#include <string.h>

#include "common/attach/attach.h"
#include "common/attach/veth.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/net/addr.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/util/cleanup.h"
#include "common/util/log.h"

/* Go's IsGlobalUnicast(). */
static bool global_unicast(const struct ip_addr *a)
{
	const uint8_t *b = a->bytes;

	if (a->family == AF_INET)
		return !(b[0] == 0 || b[0] == 127 || b[0] >= 224 || (b[0] == 169 && b[1] == 254));
	return !(b[0] == 0xff || (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) ||
		 (memcmp(b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 15) == 0 && b[15] <= 1));
}

int attach_veth_delete(struct attach *a, struct ip_prefix *addrs, size_t max, size_t *n,
		       struct cni_err *err)
{
	_cleanup_free_ struct net_addr *list = NULL;
	const char *ifname = a->ctx->env.ifname;
	struct net_link l;
	size_t k = 0;
	int r;

	r = net_link_get_by_name(a->pod, ifname, &l);
	if (r == -ENODEV)
		return 0;
	if (r < 0)
		return net_err_op(err, r, "failed to lookup", ifname);
	if (strcmp(l.kind, "veth") != 0) {
		log_warning("%s is a %s link, not a veth; left in place", ifname,
			    l.kind[0] ? l.kind : "non-virtual");
		return 0;
	}
	if (net_addr_list(a->pod, l.ifindex, AF_UNSPEC, &list, &k) == 0)
		for (size_t i = 0; i < k && *n < max; i++)
			if (global_unicast(&list[i].prefix.addr))
				addrs[(*n)++] = list[i].prefix;
	log_info("deleting veth %s", ifname);
	r = net_link_delete(a->pod, l.ifindex);
	if (r < 0 && r != -ENODEV)
		return net_err_op(err, r, "failed to delete", ifname);
	return 0;
}

void attach_veth_prev_addrs(const struct cni_ctx *ctx, struct ip_prefix *addrs, size_t max,
			    size_t *n)
{
	const struct cni_result *prev = ctx->conf.prev_result;

	for (size_t i = 0; prev && i < prev->n_ips && *n < max; i++) {
		int f = prev->ips[i].iface;

		if (f < 0 || ((size_t)f < prev->n_ifaces &&
			      strcmp(prev->ifaces[f].name, ctx->env.ifname) == 0))
			addrs[(*n)++] = prev->ips[i].address;
	}
}
