/* The master a child link hangs off: by name, or the link of the default route */
#include <errno.h>
#include <string.h>

#include "common/attach/attach.h"
#include "common/attach/master.h"
#include "common/net/link.h"
#include "common/net/route.h"
#include "common/util/error.h"
#include "common/util/log.h"

int attach_master(struct attach *a, const char *name, bool in_pod, struct net_link *ret,
		  struct cni_err *err)
{
	struct net_ns *ns = in_pod ? a->pod : a->host;
	int ifindex;
	int r;

	if (name) {
		r = net_link_get_by_name(ns, name, ret);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_NOT_FOUND, r, "failed to lookup master \"%s\": %s",
					   name, strerror(-r));
		return 0;
	}
	r = net_default_route_ifindex(ns, &ifindex);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_NOT_FOUND, r, "no default route interface found");
	r = net_link_get_by_index(ns, ifindex, ret);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_NOT_FOUND, r,
				   "failed to lookup default route interface %d: %s", ifindex,
				   strerror(-r));
	log_info("no \"master\" given: %s, the link of the default route%s, is the master",
		 ret->name, in_pod ? " in the pod" : "");
	return 0;
}
