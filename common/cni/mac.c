/* The pod interface's MAC address as a runtime and a config give it */
#include <errno.h>
#include <string.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/ctx.h"
#include "common/cni/mac.h"
#include "common/util/error.h"
#include "common/util/hwaddr.h"

int cni_mac_parse(const char *text, const char *source, uint8_t ret[6], bool *ret_set,
		  struct cni_err *err)
{
	uint8_t mac[HWADDR_MAX];
	size_t len = 0;

	if (hwaddr_parse(text, mac, &len) < 0 || len != 6)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MAC address \"%.64s\" from %s", text, source);
	/* The kernel refuses these with EADDRNOTAVAIL; say why before creating anything. */
	if (mac[0] & 1)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MAC address \"%.64s\" from %s: multicast", text, source);
	if (!(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MAC address \"%.64s\" from %s: all zero", text, source);
	memcpy(ret, mac, 6);
	*ret_set = true;
	return 0;
}

int cni_mac_get(const struct cni_ctx *ctx, uint8_t ret[6], bool *ret_set, struct cni_err *err)
{
	const char *mac = NULL;
	int r;

	*ret_set = false;
	if ((r = cni_conf_get_str(&ctx->conf, "mac", &mac, err)) < 0)
		return r;
	if (mac && *mac && (r = cni_mac_parse(mac, "config \"mac\"", ret, ret_set, err)) < 0)
		return r;
	mac = cni_args_get(&ctx->args, "MAC");
	if (mac && *mac && (r = cni_mac_parse(mac, "CNI_ARGS MAC", ret, ret_set, err)) < 0)
		return r;
	mac = NULL;
	if ((r = cni_conf_get_str(&ctx->conf, "runtimeConfig.mac", &mac, err)) < 0)
		return r;
	if (mac && *mac && (r = cni_mac_parse(mac, "runtimeConfig.mac", ret, ret_set, err)) < 0)
		return r;
	return 0;
}
