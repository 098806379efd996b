/* sbr network config: table, gateways, addSourceHints; the interface's addresses in prevResult */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/conf-keys.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "plugins/sbr/config.h"

static const char *const top_keys[] = { "table", "gateways", "addSourceHints", NULL };

const struct cni_conf_keys sbr_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

/* As Go's net.ParseIP and To4(): an IPv4-mapped IPv6 address is an IPv4 one. */
static int parse_gateway(const char *text, struct ip_addr *ret)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct ip_addr a;

	if (ip_addr_parse(text, &a) < 0)
		return -EINVAL;
	if (a.family == AF_INET6 && memcmp(a.bytes, mapped, sizeof(mapped)) == 0) {
		memmove(a.bytes, a.bytes + 12, 4);
		memset(a.bytes + 4, 0, 12);
		a.family = AF_INET;
	}
	*ret = a;
	return 0;
}

static int load_gateways(const struct cni_ctx *ctx, struct sbr_conf *c, struct cni_err *err)
{
	char **gws = NULL;
	size_t n = 0;
	int r;

	r = cni_conf_get_str_array(&ctx->conf, "gateways", &gws, &n, err);
	if (r <= 0)
		return r;
	if (n > 2) {
		r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				"gateways list cannot contain more than 2 entries (one IPv4, one IPv6)");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char prev_text[IP_PREFIX_STRLEN];
		struct ip_addr gw;
		bool v4;

		if (parse_gateway(gws[i], &gw) < 0) {
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					"invalid static gateway IP address: %.64s", gws[i]);
			goto out;
		}
		v4 = gw.family == AF_INET;
		if (v4 ? c->has_gw4 : c->has_gw6) {
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					"gateways list contains multiple %s addresses: %s and %.64s",
					v4 ? "IPv4" : "IPv6",
					ip_addr_format(v4 ? &c->gw4 : &c->gw6, prev_text,
						       sizeof(prev_text)),
					gws[i]);
			goto out;
		}
		if (v4) {
			c->gw4 = gw;
			c->has_gw4 = true;
		} else {
			c->gw6 = gw;
			c->has_gw6 = true;
		}
	}
	r = 0;
out:
	cni_conf_strv_free(gws, n);
	return r;
}

int sbr_config_load(const struct cni_ctx *ctx, struct sbr_conf *ret, struct cni_err *err)
{
	struct sbr_conf c = { 0 };
	int64_t v;
	int r;

	/*
	 * 0 would let the kernel pick any empty table for IPv4 (and refuse IPv6);
	 * past 2^32-1 the reference truncates. 253-255 are accepted as there:
	 * "lookup main" for a source is a rule someone may want.
	 */
	r = cni_conf_get_int(&ctx->conf, "table", 1, UINT32_MAX, &v, err);
	if (r < 0)
		return r;
	if (r > 0) {
		c.has_table = true;
		c.table = (uint32_t)v;
	}
	if ((r = load_gateways(ctx, &c, err)) < 0)
		return r;
	if ((r = cni_conf_get_bool(&ctx->conf, "addSourceHints", &c.add_source_hints, err)) < 0)
		return r;
	*ret = c;
	return 0;
}

int sbr_config_addresses(const struct cni_result *prev, const char *ifname,
			 const struct cni_ip ***ret, size_t *ret_n, struct cni_err *err)
{
	_cleanup_free_ const struct cni_ip **v = NULL;
	size_t n = 0;

	if (!prev)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "This plugin must be called as chained plugin");
	if (prev->n_ips == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "No IP addresses supplied on interface: %s", ifname);
	v = calloc(prev->n_ips, sizeof(*v));
	if (!v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < prev->n_ips; i++) {
		const struct cni_ip *ip = &prev->ips[i];

		const char *name;

		if (ip->iface >= 0 && (size_t)ip->iface < prev->n_ifaces) {
			name = prev->ifaces[ip->iface].name;
			if (!name || strcmp(name, ifname) != 0)
				continue;
		}
		v[n++] = ip;
	}
	/* The reference goes on, and moves the link's routes out of the main table for no rule. */
	if (n == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "prevResult has no IP address of interface %s", ifname);
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}
