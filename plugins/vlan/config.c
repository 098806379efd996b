/* vlan network config: master, vlanId, mtu, linkInContainer */
#include <errno.h>
#include <stdint.h>

#include "common/cni/conf.h"
#include "common/cni/env.h"
#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/vlan/config.h"

static const char *const top_keys[] = { "master", "vlanId", "mtu", "linkInContainer", NULL };

const struct cni_conf_keys vlan_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

/* 4095 is reserved by 802.1Q; the reference's message says 4095 but refuses it too. */
#define VLAN_ID_MAX 4094

int vlan_config_load(const struct cni_ctx *ctx, bool cmd_check, struct vlan_conf *ret,
		     struct cni_err *err)
{
	struct vlan_conf c = { 0 };
	const char *why;
	int64_t id = 0;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "master", &c.master, err)) < 0)
		return r;
	if (!c.master || !*c.master)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "\"master\" field is required. It specifies the host interface name "
				   "to create the VLAN for");
	if ((why = cni_env_ifname_invalid(c.master)))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "invalid master \"%.64s\": %s",
				   c.master, why);
	if ((r = cni_conf_get_int(&ctx->conf, "vlanId", INT64_MIN, INT64_MAX, &id, err)) < 0)
		return r;
	if (id < 0 || id > VLAN_ID_MAX)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid VLAN ID %lld (must be between 0 and 4095 inclusive)",
				   (long long)id);
	c.id = (uint16_t)id;
	if ((r = cni_conf_get_int(&ctx->conf, "mtu", INT32_MIN, INT32_MAX, &c.mtu, err)) < 0)
		return r;
	if (c.mtu < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MTU %lld, must be [0, master MTU]", (long long)c.mtu);
	if ((r = cni_conf_get_bool(&ctx->conf, "linkInContainer", &c.link_in_container, err)) < 0)
		return r;
	/*
	 * The reference creates the VLAN, then fails asking IPAM "" for
	 * addresses (and leaves the link): refused here, before anything exists.
	 */
	if (!cmd_check && !cni_conf_has_ipam(&ctx->conf))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "failed to execute IPAM delegate: no plugin name provided (a vlan "
				   "needs an \"ipam\" section)");
	*ret = c;
	return 0;
}
