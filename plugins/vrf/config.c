/* vrf network config: the VRF's name and routing table */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <stdint.h>

#include "common/cni/conf.h"
#include "common/cni/env.h"
#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/vrf/config.h"

static const char *const top_keys[] = { "vrfname", "table", NULL };

const struct cni_conf_keys vrf_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

int vrf_config_load(const struct cni_ctx *ctx, struct vrf_conf *ret, struct cni_err *err)
{
	struct vrf_conf c = { 0 };
	const char *why;
	int64_t table = 0;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "vrfname", &c.name, err)) < 0)
		return r;
	if (!c.name || !*c.name)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "configuration is expected to have a valid vrf name");
	if ((why = cni_env_ifname_invalid(c.name)))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "invalid vrfname \"%.64s\": %s",
				   c.name, why);
	/* A uint32 in the reference: 0, or absent, lets the plugin pick. */
	if ((r = cni_conf_get_int(&ctx->conf, "table", 0, UINT32_MAX, &table, err)) < 0)
		return r;
	/* The kernel's own tables: a VRF there would take the pod's main or local routes. */
	if (table == RT_TABLE_DEFAULT || table == RT_TABLE_MAIN || table == RT_TABLE_LOCAL)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "field \"table\": %lld is the kernel's %s table, not one for a VRF",
				   (long long)table,
				   table == RT_TABLE_MAIN ? "main" : table == RT_TABLE_LOCAL ? "local" : "default");
	c.table = (uint32_t)table;
	*ret = c;
	return 0;
}
