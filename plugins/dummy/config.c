/* dummy network config: nothing of its own but a required IPAM section */
#include <errno.h>

#include "common/cni/conf-keys.h"
#include "common/cni/conf.h"
#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/dummy/config.h"

static const char *const top_keys[] = { "ipv6Autoconf", NULL };

const struct cni_conf_keys dummy_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

int dummy_config_load(const struct cni_ctx *ctx, struct cni_err *err)
{
	if (!cni_conf_has_ipam(&ctx->conf))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "dummy interface requires an IPAM configuration");
	return 0;
}
