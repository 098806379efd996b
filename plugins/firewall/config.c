/* firewall network config: backend, iptables admin chain, firewalld zone, ingress policy */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/env.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/netfilter/ipt-batch.h"
#include "common/util/error.h"
#include "common/util/text.h"
#include "plugins/firewall/config.h"

static const char *const top_keys[] = { "backend", "firewalldZone", "ingressPolicy", "iptablesAdminChainName", NULL };

const struct cni_conf_keys firewall_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

void firewall_config_free(struct firewall_conf *c)
{
	free(c->ips);
	*c = (struct firewall_conf){ 0 };
}

static int load_policy(const struct cni_ctx *ctx, struct firewall_conf *c, struct cni_err *err)
{
	const struct cni_result *prev = ctx->conf.prev_result;
	const char *p = NULL;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "ingressPolicy", &p, err)) < 0)
		return r;
	if (!p || !*p || strcmp(p, "open") == 0)
		c->policy = FIREWALL_OPEN;
	else if (strcmp(p, "same-bridge") == 0)
		c->policy = FIREWALL_SAME_BRIDGE;
	else if (strcmp(p, "isolated") == 0)
		c->policy = FIREWALL_ISOLATED;
	else
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EBADR, "unknown ingress policy: \"%.32s\"", p);
	c->policy_known = true;
	if (c->policy == FIREWALL_OPEN || !prev)
		return 0;
	if (prev->n_ifaces == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "interface needs to be set for ingress policy \"%s\", make sure to "
				   "chain \"firewall\" plugin with \"bridge\"", p);
	if (!prev->ifaces[0].name || !*prev->ifaces[0].name)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "got empty bridge name");
	/* Written in iptables' "-i" and "-o": a name the kernel takes, or none of them. */
	if (cni_env_ifname_invalid(prev->ifaces[0].name))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "prevResult's first interface \"%.32s\" is no interface name: %s",
				   prev->ifaces[0].name, cni_env_ifname_invalid(prev->ifaces[0].name));
	snprintf(c->bridge, sizeof(c->bridge), "%s", prev->ifaces[0].name);
	return 0;
}

int firewall_config_load(const struct cni_ctx *ctx, struct firewall_conf *ret,
			 struct cni_err *err)
{
	const struct cni_result *prev = ctx->conf.prev_result;
	struct firewall_conf c = { 0 };
	const char *backend = NULL, *admin = NULL, *zone = NULL;
	int r, policy;

	if ((r = cni_conf_get_str(&ctx->conf, "backend", &backend, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "iptablesAdminChainName", &admin, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "firewalldZone", &zone, err)) < 0)
		return r;
	/* Upstream's switch: any other value (or none) looks for firewalld. */
	c.backend = !backend ? FIREWALL_AUTO : strcmp(backend, "iptables") == 0 ? FIREWALL_IPTABLES :
		    strcmp(backend, "firewalld") == 0 ? FIREWALL_FIREWALLD : FIREWALL_AUTO;
	if (admin && *admin && !ipt_chain_name_valid(admin))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "iptablesAdminChainName \"%.64s\": not an iptables chain name (1 to 28 "
				   "printable characters, no blank or quote)", admin);
	snprintf(c.admin_chain, sizeof(c.admin_chain), "%s", admin && *admin ? admin : "CNI-ADMIN");
	if (zone && *zone) {
		size_t n = strlen(zone);

		if (n >= sizeof(c.zone) || !text_utf8_valid(zone, n) || strpbrk(zone, "\n\r\t"))
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "firewalldZone: at most 255 bytes of UTF-8, no control character");
	}
	snprintf(c.zone, sizeof(c.zone), "%s", zone && *zone ? zone : "trusted");
	c.has_prev = prev != NULL;
	c.ips = calloc((prev ? prev->n_ips : 0) + 1, sizeof(*c.ips));
	if (!c.ips)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; prev && i < prev->n_ips; i++) {
		c.ips[c.n_ips].addr = prev->ips[i].address.addr;
		c.ips[c.n_ips++].len = prev->ips[i].address.addr.family == AF_INET ? 32 : 128;
	}
	policy = load_policy(ctx, &c, err);
	if (policy < 0 && policy != -EBADR) {
		firewall_config_free(&c);
		return policy;
	}
	*ret = c;
	return policy;
}
