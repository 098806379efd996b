/* A deep copy of a result: what a chained plugin passes on from prevResult */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/result-copy.h"
#include "common/cni/result.h"

static int str_copy(const char *s, char **ret)
{
	*ret = NULL;
	if (s && !(*ret = strdup(s)))
		return -ENOMEM;
	return 0;
}

static int iface_copy(struct cni_result *dst, const struct cni_iface *i)
{
	struct cni_iface *d;
	int idx;

	idx = cni_result_add_iface(dst, i->name, i->mac, i->sandbox);
	if (idx < 0)
		return idx;
	d = &dst->ifaces[idx];
	d->mtu = i->mtu;
	if (str_copy(i->socket_path, &d->socket_path) < 0 || str_copy(i->pci_id, &d->pci_id) < 0)
		return -ENOMEM;
	return 0;
}

int cni_result_copy(const struct cni_result *src, struct cni_result *ret)
{
	struct cni_result c = { 0 };
	int r = 0;

	snprintf(c.cni_version, sizeof(c.cni_version), "%s", src->cni_version);
	for (size_t i = 0; i < src->n_ifaces && r >= 0; i++)
		r = iface_copy(&c, &src->ifaces[i]);
	for (size_t i = 0; i < src->n_ips && r >= 0; i++)
		r = cni_result_add_ip(&c, &src->ips[i]);
	for (size_t i = 0; i < src->n_routes && r >= 0; i++)
		r = cni_result_add_route(&c, &src->routes[i]);
	if (r >= 0)
		r = cni_result_set_dns(&c, &src->dns);
	if (r < 0) {
		cni_result_free(&c);
		return r;
	}
	*ret = c;
	return 0;
}
