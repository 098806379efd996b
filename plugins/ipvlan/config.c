/* ipvlan network config: master, mode, flag, mtu, where the addresses come from */
#include <errno.h>
#include <linux/if_link.h>
#include <string.h>

#include "common/cni/conf.h"
#include "common/cni/env.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/util/error.h"
#include "plugins/ipvlan/config.h"

static const char *const top_keys[] = { "master", "mode", "flag", "mtu", "linkInContainer", NULL };

const struct cni_conf_keys ipvlan_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

struct named {
	const char *name;
	uint16_t value;
};

/* "" is the reference's default, l2. */
static const struct named modes[] = {
	{ "", IPVLAN_MODE_L2 },
	{ "l2", IPVLAN_MODE_L2 },
	{ "l3", IPVLAN_MODE_L3 },
	{ "l3s", IPVLAN_MODE_L3S },
};

/* The kernel's and iproute2's names; bridge (no flag) is the kernel's default. */
static const struct named flags[] = {
	{ "", 0 },
	{ "bridge", 0 },
	{ "private", IPVLAN_F_PRIVATE },
	{ "vepa", IPVLAN_F_VEPA },
};

static const char *value_name(const struct named *v, size_t n, uint16_t value)
{
	for (size_t i = 1; i < n; i++)
		if (v[i].value == value)
			return v[i].name;
	return "unknown";
}

const char *ipvlan_config_mode_name(uint16_t mode)
{
	return value_name(modes, ARRAY_SIZE(modes), mode);
}

const char *ipvlan_config_flag_name(uint16_t f)
{
	return value_name(flags, ARRAY_SIZE(flags), f);
}

/* A name of @v; absent is "". Upstream's message for an unknown mode, kept. */
static int read_named(const struct cni_ctx *ctx, const char *key, const struct named *v, size_t n,
		      uint16_t *ret, struct cni_err *err)
{
	const char *s = "";
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, key, &s, err)) < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(s, v[i].name) == 0) {
			*ret = v[i].value;
			return 0;
		}
	}
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "unknown ipvlan %s: \"%.32s\"", key, s);
}

/*
 * Chained without "master" (after a plugin that made the interface the
 * ipvlan hangs off), the master is the one interface prevResult names.
 */
static int master_from_prev(const struct cni_result *prev, const char **ret, struct cni_err *err)
{
	if (prev->n_ifaces != 1 || !prev->ifaces[0].name || !*prev->ifaces[0].name)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "chained master failure. PrevResult lacks a single named interface");
	*ret = prev->ifaces[0].name;
	return 0;
}

int ipvlan_config_load(const struct cni_ctx *ctx, bool cmd_check, struct ipvlan_conf *ret,
		       struct cni_err *err)
{
	const struct cni_result *prev = ctx->conf.prev_result;
	struct ipvlan_conf c = { 0 };
	const char *why;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "master", &c.master, err)) < 0)
		return r;
	if (c.master && !*c.master)
		c.master = NULL;
	if (!c.master && prev && !cmd_check) {
		if ((r = master_from_prev(prev, &c.master, err)) < 0)
			return r;
		c.master_from_prev = true;
	}
	if (c.master && (why = cni_env_ifname_invalid(c.master)))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "invalid master \"%.64s\": %s",
				   c.master, why);
	if ((r = read_named(ctx, "mode", modes, ARRAY_SIZE(modes), &c.mode, err)) < 0 ||
	    (r = read_named(ctx, "flag", flags, ARRAY_SIZE(flags), &c.flags, err)) < 0)
		return r;
	if ((r = cni_conf_get_int(&ctx->conf, "mtu", INT32_MIN, INT32_MAX, &c.mtu, err)) < 0)
		return r;
	if (c.mtu < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MTU %lld, must be [0, master MTU]", (long long)c.mtu);
	if ((r = cni_conf_get_bool(&ctx->conf, "linkInContainer", &c.link_in_container, err)) < 0)
		return r;

	c.has_ipam = cni_conf_has_ipam(&ctx->conf);
	c.use_prev_ips = !c.has_ipam && prev && prev->n_ips > 0;
	/*
	 * The reference creates the link, then fails asking IPAM "" for
	 * addresses (and leaves the link): refused here, before anything exists.
	 */
	if (!c.has_ipam && !c.use_prev_ips && !cmd_check)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "no plugin name provided: an ipvlan needs addresses, from an \"ipam\" "
				   "section or from a prevResult that has some");
	*ret = c;
	return 0;
}
