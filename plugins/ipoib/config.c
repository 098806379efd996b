/* ipoib network config: master, mtu, pkey, mode, umcast, checked before the kernel is touched */
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "common/cni/conf-keys.h"
#include "common/cni/conf.h"
#include "common/cni/env.h"
#include "common/cni/plugin.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/text.h"
#include "plugins/ipoib/config.h"

static const char *const top_keys[] = {
	"master", "pkey", "mode", "umcast", "mtu", "ipv6Autoconf", NULL,
};

const struct cni_conf_keys ipoib_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

static const char *const mode_names[] = {
	[IPOIB_MODE_DATAGRAM] = "datagram",
	[IPOIB_MODE_CONNECTED] = "connected",
};

const char *ipoib_config_mode_name(int mode)
{
	if (mode < 0 || (size_t)mode >= ARRAY_SIZE(mode_names))
		return "unknown";
	return mode_names[mode];
}

int ipoib_config_load(const struct cni_ctx *ctx, struct ipoib_conf *ret, struct cni_err *err)
{
	struct ipoib_conf c = { .mode = -1, .umcast = true };
	const char *mode = NULL, *why;
	uint64_t pkey;
	int64_t mtu;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "master", &c.master, err)) < 0)
		return r;
	if (!c.master || !*c.master)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "host master interface is missing");
	if ((why = cni_env_ifname_invalid(c.master)))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "invalid master \"%.64s\": %s",
				   c.master, why);
	if ((r = cni_conf_get_int(&ctx->conf, "mtu", 0, INT32_MAX, &mtu, err)) < 0)
		return r;
	c.mtu = r ? (unsigned int)mtu : 0;

	if ((r = cni_conf_get_uint_text(&ctx->conf, "pkey", 0xffff, &pkey, err)) < 0)
		return r;
	if (r) {
		/* 0 and 0x8000 are the invalid partition key, with and without membership. */
		if (!(pkey & IPOIB_PKEY_MASK))
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "invalid pkey 0x%04x: the partition key 0 is reserved",
					   (unsigned int)pkey);
		c.has_pkey = true;
		c.pkey = (uint16_t)(pkey & IPOIB_PKEY_MASK);
	}

	if ((r = cni_conf_get_str(&ctx->conf, "mode", &mode, err)) < 0)
		return r;
	if (mode && *mode) {
		for (size_t i = 0; i < ARRAY_SIZE(mode_names) && c.mode < 0; i++)
			if (strcmp(mode, mode_names[i]) == 0)
				c.mode = (int)i;
		if (c.mode < 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "unknown IPoIB mode \"%.32s\": must be \"datagram\" or \"connected\"",
					   mode);
	}
	if ((r = cni_conf_get_bool(&ctx->conf, "umcast", &c.umcast, err)) < 0)
		return r;

	c.has_ipam = cni_conf_has_ipam(&ctx->conf);
	/* The dhcp daemon cannot serve an IPoIB link; the reference refuses it too. */
	if (c.has_ipam && strcmp(ctx->conf.ipam_type, "dhcp") == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "ipam dhcp type is not supported");
	if (!c.has_ipam && (r = cni_conf_check_l2_version(&ctx->conf, err)) < 0)
		return r;
	*ret = c;
	return 0;
}

void ipoib_config_alias(const char *container_id, const char *ifname, char *buf, unsigned long size)
{
	int n = snprintf(buf, size, "cni-ipoib %s %s", container_id, ifname);

	if (n < 0 || (unsigned long)n >= size || n > IPOIB_ALIAS_MAX)
		/* A stable stand-in for a container ID the alias cannot hold. */
		snprintf(buf, size, "cni-ipoib #%016llx %s",
			 (unsigned long long)text_hash64(container_id, strlen(container_id),
							 TEXT_HASH64_INIT),
			 ifname);
}
