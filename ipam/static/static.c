/* static IPAM plugin: fixed addresses, routes and DNS, nothing allocated or stored */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "common/util/log.h"
#include "ipam/static/config.h"
#include "ipam/static/static.h"

/* An IPAM plugin logs where its own section says: the top-level logFile is the interface plugin's. */
static int setup_logging(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *file = NULL, *level = NULL;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "ipam.logFile", &file, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "ipam.logLevel", &level, err)) < 0)
		return r;
	return cni_plugin_setup_logging("static", file, false, level, ctx->env.command, err);
}

static int static_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	int r;

	if ((r = setup_logging(ctx, err)) < 0 ||
	    (r = static_config_load(&ctx->conf, &ctx->args, ret, err)) < 0)
		return r;
	log_info("ADD %s/%s: %zu address(es), %zu route(s)", ctx->env.container_id, ctx->env.ifname,
		 ret->n_ips, ret->n_routes);
	return 0;
}

/* Nothing was reserved, so there is nothing to release: DEL does not even read the config. */
static int static_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	(void)ctx;
	(void)err;
	return 0;
}

/*
 * What the reference checks: a configured address that prevResult holds must carry the
 * configured gateway, if one is configured. An address prevResult lacks is no failure.
 */
static int static_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	const struct cni_result *prev = ctx->conf.prev_result;
	struct cni_result want = { 0 };
	char buf[IP_PREFIX_STRLEN];
	int r;

	if ((r = setup_logging(ctx, err)) < 0 ||
	    (r = static_config_load(&ctx->conf, &ctx->args, &want, err)) < 0)
		return r;
	if (!prev)
		r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "required prevResult missing");
	for (size_t i = 0; r >= 0 && i < want.n_ips; i++) {
		const struct cni_ip *w = &want.ips[i];

		for (size_t k = 0; k < prev->n_ips; k++) {
			const struct cni_ip *p = &prev->ips[k];

			if (!ip_addr_equal(&w->address.addr, &p->address.addr))
				continue;
			if (w->has_gateway && (!p->has_gateway || !ip_addr_equal(&w->gateway, &p->gateway)))
				r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
						"static: Failed to match addr %s on interface %s",
						ip_addr_format(&p->address.addr, buf, sizeof(buf)),
						ctx->env.ifname);
			break;
		}
	}
	cni_result_free(&want);
	return r;
}

const struct cni_plugin static_plugin = {
	.name = "static",
	.summary = "static: the addresses, routes and DNS the config or the runtime names",
	.keys = static_config_keys,
	.ipam = true,
	.add = static_add,
	.del = static_del,
	.check = static_check,
	/* STATUS and GC: an IPAM plugin without callbacks succeeds, as upstream's does. */
};
