/* ptp network config: ipMasq, ipMasqBackend, mtu, checked before the kernel */
#include <errno.h>
#include <stdint.h>

#include "common/cni/conf.h"
#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/ptp/config.h"

static const char *const top_keys[] = { "ipMasq", "ipMasqBackend", "mtu", "ipv6Autoconf", NULL };

const struct cni_conf_keys ptp_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

int ptp_config_load(const struct cni_ctx *ctx, bool add, struct ptp_conf *ret,
		    struct cni_err *err)
{
	struct ptp_conf c = { .masq_backend = MASQ_DEFAULT };
	const char *name = NULL;
	int64_t mtu = 0;
	int r;

	if ((r = cni_conf_get_bool(&ctx->conf, "ipMasq", &c.ip_masq, err)) < 0)
		return r;
	if ((r = cni_conf_get_str(&ctx->conf, "ipMasqBackend", &name, err)) < 0)
		return r;
	/* Upstream reads the backend only when it masquerades, and so do we. */
	if (masq_backend_parse(name, &c.masq_backend) < 0) {
		if (c.ip_masq && add)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "unknown ipmasq backend \"%.32s\"", name);
		c.masq_backend = MASQ_DEFAULT;
	}
	/* 0: the kernel's; outside 68 to 65535 no veth takes it. */
	if ((r = cni_conf_get_int(&ctx->conf, "mtu", INT64_MIN, INT64_MAX, &mtu, err)) < 0)
		return r;
	if (add && mtu != 0 && (mtu < 68 || mtu > 65535))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MTU %lld: must be 0 (the kernel's) or 68 to 65535",
				   (long long)mtu);
	c.mtu = mtu < 0 || mtu > 65535 ? 0 : (unsigned int)mtu;
	/*
	 * The reference asks IPAM "" for addresses and fails: refused here, before
	 * anything exists.
	 */
	if (add && !cni_conf_has_ipam(&ctx->conf))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "failed to execute IPAM delegate: no plugin name provided (ptp "
				   "needs an \"ipam\" section)");
	*ret = c;
	return 0;
}
