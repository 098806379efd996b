/* macvlan network config: master, mode, mtu, mac and the rest, checked before the kernel */
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <string.h>

#include "common/cni/conf-keys.h"
#include "common/cni/conf.h"
#include "common/cni/env.h"
#include "common/cni/mac.h"
#include "common/cni/plugin.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "plugins/macvlan/config.h"

static const char *const top_keys[] = {
	"master", "mode", "mtu", "mac", "linkInContainer", "bcqueuelen", "ipv6Autoconf", NULL,
};

const struct cni_conf_keys macvlan_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

static const struct {
	const char *name;
	uint32_t mode;
} modes[] = {
	{ "", MACVLAN_MODE_BRIDGE },
	{ "bridge", MACVLAN_MODE_BRIDGE },
	{ "private", MACVLAN_MODE_PRIVATE },
	{ "vepa", MACVLAN_MODE_VEPA },
	{ "passthru", MACVLAN_MODE_PASSTHRU },
};

const char *macvlan_config_mode_name(uint32_t mode)
{
	for (size_t i = 1; i < ARRAY_SIZE(modes); i++)
		if (modes[i].mode == mode)
			return modes[i].name;
	return "unknown";
}

/* CNI_ARGS keys besides IgnoreUnknown. */
static const char *const known_args[] = { "MAC", NULL };

/* Everything that can be refused is refused here, before the kernel is touched. */
int macvlan_config_load(const struct cni_ctx *ctx, struct macvlan_conf *ret, struct cni_err *err)
{
	struct macvlan_conf c = { .mode_name = "" };
	const char *why;
	int64_t v;
	bool found = false;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "master", &c.master, err)) < 0)
		return r;
	if (c.master && !*c.master)
		c.master = NULL;
	if (c.master && (why = cni_env_ifname_invalid(c.master)))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "invalid master \"%.64s\": %s",
				   c.master, why);
	if ((r = cni_conf_get_str(&ctx->conf, "mode", &c.mode_name, err)) < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(modes) && !found; i++) {
		if (strcmp(c.mode_name, modes[i].name) == 0) {
			c.mode = modes[i].mode;
			found = true;
		}
	}
	if (!found) {
		char list[64] = "";

		for (size_t i = 1; i < ARRAY_SIZE(modes); i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i > 1 ? ", " : "", modes[i].name);
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "unknown macvlan mode: \"%.32s\" (one of %s)", c.mode_name, list);
	}
	if ((r = cni_conf_get_int(&ctx->conf, "mtu", 0, INT32_MAX, &v, err)) < 0)
		return r;
	c.mtu = r ? (unsigned int)v : 0;
	if ((r = cni_conf_get_bool(&ctx->conf, "linkInContainer", &c.link_in_container, err)) < 0)
		return r;
	if ((r = cni_conf_get_int(&ctx->conf, "bcqueuelen", 0, UINT32_MAX, &v, err)) < 0)
		return r;
	c.bc_queue_len = r ? (uint32_t)v : 0;

	if ((r = cni_args_check_known(&ctx->args, known_args, err)) < 0)
		return r;
	if ((r = cni_mac_get(ctx, c.mac, &c.has_mac, err)) < 0)
		return r;
	c.mac_len = c.has_mac ? 6 : 0;

	c.has_ipam = cni_conf_has_ipam(&ctx->conf);
	if (!c.has_ipam && (r = cni_conf_check_l2_version(&ctx->conf, err)) < 0)
		return r;
	*ret = c;
	return 0;
}
