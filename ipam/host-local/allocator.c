/* host-local's allocator: one address from a range set, as upstream's IPAllocator.Get() */
#include <errno.h>

#include "common/cni/result.h"
#include "common/util/error.h"
#include "ipam/host-local/allocator.h"
#include "ipam/host-local/ip.h"
#include "ipam/host-local/range.h"

/* Upstream names the set in its messages; a long one is cut. */
#define SET_TEXT_MAX 512

static void fill(struct cni_ip *ret, const struct ip_addr *ip, const struct hl_range *r)
{
	*ret = (struct cni_ip){ .address = { .addr = *ip, .len = r->prefix_len },
				.has_gateway = true, .gateway = r->gateway, .iface = -1 };
}

static int get_requested(const struct hl_store_ops *ops, void *store,
			 const struct hl_range_set *set, size_t index, const char *id,
			 const char *ifname, const struct ip_addr *ip, struct cni_ip *ret,
			 struct cni_err *err)
{
	char text[HL_IP_STRLEN], set_text[SET_TEXT_MAX];
	const struct hl_range *r = hl_range_set_find(set, ip);
	bool reserved;
	int rc;

	if (!r)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%s not in range set %s",
				   hl_ip_format(ip, text),
				   hl_range_set_format(set, set_text, sizeof(set_text)));
	if (ip_addr_equal(ip, &r->gateway))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "requested ip %s is subnet's gateway", hl_ip_format(ip, text));
	rc = ops->reserve(store, id, ifname, ip, index, &reserved, err);
	if (rc < 0)
		return rc;
	if (!reserved)
		return cni_err_set(err, CNI_ERR_ADDRESS_TAKEN, -EADDRINUSE,
				   "requested IP address %s is not available in range set %s",
				   hl_ip_format(ip, text),
				   hl_range_set_format(set, set_text, sizeof(set_text)));
	fill(ret, ip, r);
	return 0;
}

int hl_alloc_get(const struct hl_store_ops *ops, void *store, const struct hl_range_set *set,
		 size_t index, const char *id, const char *ifname, const struct ip_addr *requested,
		 struct cni_ip *ret, struct cni_err *err)
{
	char text[HL_IP_STRLEN], set_text[SET_TEXT_MAX];
	const struct hl_range *r;
	struct ip_addr ip, last;
	struct hl_iter it;
	bool has_last, reserved;
	int rc;

	if (requested)
		return get_requested(ops, store, set, index, id, ifname, requested, ret, err);
	/* The spec forbids a second address of a set for one attachment. */
	if (ops->owned_in(store, id, ifname, set, &ip))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EEXIST,
				   "%s has been allocated to %s, duplicate allocation is not allowed",
				   hl_ip_format(&ip, text), id);
	has_last = ops->last_reserved(store, index, &last);
	hl_iter_init(&it, set, has_last ? &last : NULL);
	while (hl_iter_next(&it, &ip, &r)) {
		rc = ops->reserve(store, id, ifname, &ip, index, &reserved, err);
		if (rc < 0)
			return rc;
		if (reserved) {
			fill(ret, &ip, r);
			return 0;
		}
	}
	return cni_err_set(err, CNI_ERR_NO_FREE_ADDRESS, -ENOSPC,
			   "no IP addresses available in range set: %s",
			   hl_range_set_format(set, set_text, sizeof(set_text)));
}
