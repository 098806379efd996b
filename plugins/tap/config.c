/* tap network config: owner, group, multiQueue, mac, mtu, bridge, checked before the kernel */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/cni/conf-keys.h"
#include "common/cni/conf.h"
#include "common/cni/env.h"
#include "common/cni/mac.h"
#include "common/cni/plugin.h"
#include "common/net/tap.h"
#include "common/util/error.h"
#include "common/util/text.h"
#include "plugins/tap/config.h"

static const char *const top_keys[] = {
	"owner", "group", "multiQueue", "mtu", "mac", "bridge", "selinuxContext",
	"ipv6Autoconf", NULL,
};

const struct cni_conf_keys tap_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

/* owner/group: a uid or gid; (uint32_t)-1 is the kernel's "none", which leaving the key out says. */
static int parse_id(const struct cni_ctx *ctx, const char *key, uint32_t *ret, struct cni_err *err)
{
	int64_t v;
	int r;

	*ret = NET_TAP_NOBODY;
	r = cni_conf_get_int(&ctx->conf, key, 0, (int64_t)NET_TAP_NOBODY - 1, &v, err);
	if (r > 0)
		*ret = (uint32_t)v;
	return r < 0 ? r : 0;
}

/* CNI_ARGS keys besides IgnoreUnknown. */
static const char *const known_args[] = { "MAC", NULL };

/* Everything that can be refused is refused here, before the kernel is touched. */
int tap_config_load(const struct cni_ctx *ctx, struct tap_conf *ret, struct cni_err *err)
{
	struct tap_conf c = { 0 };
	const char *label = NULL, *why;
	char esc[80];
	int64_t v;
	int r;

	if ((r = cni_conf_get_bool(&ctx->conf, "multiQueue", &c.multi_queue, err)) < 0)
		return r;
	if ((r = cni_conf_get_int(&ctx->conf, "mtu", 0, TAP_MTU_MAX, &v, err)) < 0)
		return r;
	c.mtu = r ? (unsigned int)v : 0;
	/* The tun driver's minimum, said before the kernel answers a bare EINVAL. */
	if (c.mtu && c.mtu < TAP_MTU_MIN)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MTU %u: a tap takes %d to %d (0: the default)", c.mtu,
				   TAP_MTU_MIN, TAP_MTU_MAX);
	if ((r = parse_id(ctx, "owner", &c.owner, err)) < 0 ||
	    (r = parse_id(ctx, "group", &c.group, err)) < 0)
		return r;
	if ((r = cni_conf_get_str(&ctx->conf, "bridge", &c.bridge, err)) < 0)
		return r;
	if (c.bridge && !*c.bridge)
		c.bridge = NULL;
	if (c.bridge && (why = cni_env_ifname_invalid(c.bridge))) {
		text_escape(c.bridge, strlen(c.bridge), esc, sizeof(esc));
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "invalid bridge \"%s\": %s",
				   esc, why);
	}
	/*
	 * The reference makes the tap from a helper process run under this SELinux
	 * label; this plugin creates it itself and cannot take another label.
	 * Refused rather than ignored: a tap under the wrong label is one the VM
	 * cannot open.
	 */
	if ((r = cni_conf_get_str(&ctx->conf, "selinuxContext", &label, err)) < 0)
		return r;
	if (label && *label) {
		text_escape(label, strlen(label), esc, sizeof(esc));
		return cni_err_set(err, CNI_ERR_UNSUPPORTED_FIELD, -EOPNOTSUPP,
				   "unsupported field \"selinuxContext\" (\"%s\"): this plugin cannot "
				   "create a tap under another SELinux label", esc);
	}

	if ((r = cni_args_check_known(&ctx->args, known_args, err)) < 0)
		return r;
	if ((r = cni_mac_get(ctx, c.mac, &c.has_mac, err)) < 0)
		return r;

	c.has_ipam = cni_conf_has_ipam(&ctx->conf);
	if (!c.has_ipam && (r = cni_conf_check_l2_version(&ctx->conf, err)) < 0)
		return r;
	*ret = c;
	return 0;
}
