/* bridge network config: every key of upstream v1.9.1's, checked before the kernel */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/env.h"
#include "common/cni/mac.h"
#include "common/cni/plugin.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json-go.h"
#include "common/util/json.h"
#include "plugins/bridge/config.h"

static const char *const top_keys[] = {
	"bridge", "isGateway", "isDefaultGateway", "forceAddress", "ipMasq", "ipMasqBackend",
	"mtu", "hairpinMode", "promiscMode", "vlan", "vlanTrunk", "preserveDefaultVlan",
	"macspoofchk", "enabledad", "disableContainerInterface", "portIsolation",
	"ipv6Autoconf", NULL,
};
static const char *const args_cni_keys[] = { "mac", NULL };

const struct cni_conf_keys bridge_config_keys[] = {
	{ NULL, top_keys },
	{ "args.cni", args_cni_keys },
	{ 0 },
};

/* CNI_ARGS keys besides IgnoreUnknown. */
static const char *const known_args[] = { "MAC", NULL };

static const struct {
	const char *key;
	size_t offset;
} bools[] = {
	{ "isGateway", offsetof(struct bridge_conf, is_gw) },
	{ "isDefaultGateway", offsetof(struct bridge_conf, is_default_gw) },
	{ "forceAddress", offsetof(struct bridge_conf, force_address) },
	{ "ipMasq", offsetof(struct bridge_conf, ip_masq) },
	{ "hairpinMode", offsetof(struct bridge_conf, hairpin) },
	{ "promiscMode", offsetof(struct bridge_conf, promisc) },
	{ "preserveDefaultVlan", offsetof(struct bridge_conf, preserve_default_vlan) },
	{ "macspoofchk", offsetof(struct bridge_conf, macspoofchk) },
	{ "enabledad", offsetof(struct bridge_conf, enable_dad) },
	{ "disableContainerInterface", offsetof(struct bridge_conf, no_container_iface) },
	{ "portIsolation", offsetof(struct bridge_conf, port_isolation) },
};

/* A trunk entry's member: absent (0), or an integer upstream's decoder takes (1). */
static int trunk_int(struct json_object *item, size_t i, const char *key, int64_t *ret,
		     struct cni_err *err)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "vlanTrunk[%zu].%s", i, key);
	r = cjson_get_int(item, key, INT64_MIN, INT64_MAX, ret, err);
	if (r < 0)
		return cni_err_prefix(err, r, "%s", path);
	return r;
}

/* collectVlanTrunk(): each entry a minID-maxID range, an id, or both; upstream's messages. */
static int trunk_collect(struct json_object *arr, uint8_t vids[4095], struct cni_err *err)
{
	size_t n = json_object_array_length(arr);

	for (size_t i = 0; i < n; i++) {
		struct json_object *item = json_object_array_get_idx(arr, i);
		int64_t min = 0, max = 0, id = 0;
		int has_min, has_max, has_id;

		if (!json_object_is_type(item, json_type_object))
			return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					   "vlanTrunk[%zu]: expected an object, got %s", i,
					   cjson_type_name(item));
		if ((has_min = trunk_int(item, i, "minID", &min, err)) < 0 ||
		    (has_max = trunk_int(item, i, "maxID", &max, err)) < 0 ||
		    (has_id = trunk_int(item, i, "id", &id, err)) < 0)
			return -EINVAL;
		if (has_min && has_max) {
			if (min <= 0 || min > 4094)
				return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
						   "incorrect trunk minID parameter");
			if (max <= 0 || max > 4094)
				return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
						   "incorrect trunk maxID parameter");
			if (max < min)
				return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
						   "minID is greater than maxID in trunk parameter");
			memset(vids + min, 1, (size_t)(max - min + 1));
		} else if (has_max) {
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "minID and maxID should be configured simultaneously, minID is missing");
		} else if (has_min) {
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "minID and maxID should be configured simultaneously, maxID is missing");
		}
		if (has_id) {
			if (id <= 0 || id > 4094)
				return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
						   "incorrect trunk id parameter");
			vids[id] = 1;
		}
	}
	return 0;
}

static int load_trunk(const struct cni_ctx *ctx, struct bridge_conf *c, struct cni_err *err)
{
	struct json_object *arr = NULL;
	uint8_t vids[4095] = { 0 };
	int r;

	r = cjson_get_typed(ctx->conf.root, "vlanTrunk", json_type_array, &arr, err);
	if (r <= 0)
		return r;
	c->trunk_given = true;
	r = trunk_collect(arr, vids, err);
	if (r < 0)
		return r;
	for (unsigned int v = 1; v <= 4094; v++) {
		if (!vids[v])
			continue;
		if (c->n_trunk && c->trunk[c->n_trunk - 1].max == v - 1)
			c->trunk[c->n_trunk - 1].max = (uint16_t)v;
		else
			c->trunk[c->n_trunk++] = (struct net_bridge_vlans){ .min = (uint16_t)v,
									    .max = (uint16_t)v };
	}
	return 0;
}

/* The MAC of the pod's end: CNI_ARGS MAC, then args.cni.mac, then runtimeConfig.mac. */
static int load_mac(const struct cni_ctx *ctx, struct bridge_conf *c, struct cni_err *err)
{
	static const char *const paths[] = { "args.cni.mac", "runtimeConfig.mac" };
	const char *mac = cni_args_get(&ctx->args, "MAC");
	int r;

	if (mac && *mac && (r = cni_mac_parse(mac, "CNI_ARGS MAC", c->mac, &c->has_mac, err)) < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		mac = NULL;
		if ((r = cni_conf_get_str(&ctx->conf, paths[i], &mac, err)) < 0)
			return r;
		if (mac && *mac && (r = cni_mac_parse(mac, paths[i], c->mac, &c->has_mac, err)) < 0)
			return r;
	}
	return 0;
}

static int load_backend(const struct cni_ctx *ctx, struct bridge_conf *c, struct cni_err *err)
{
	const char *name = NULL;
	int r = cni_conf_get_str(&ctx->conf, "ipMasqBackend", &name, err);

	if (r < 0)
		return r;
	/* Upstream looks at it only when it masquerades, and so do we. */
	if (masq_backend_parse(name, &c->masq_backend) < 0) {
		if (c->ip_masq && c->has_ipam)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "unknown ipmasq backend \"%.32s\"", name);
		c->masq_backend = MASQ_DEFAULT;
	}
	return 0;
}

int bridge_config_vlan_ifname(const struct bridge_conf *c, char *buf, size_t size)
{
	char name[IFNAMSIZ + 8];
	int n = snprintf(name, sizeof(name), "%s.%u", c->bridge, c->vlan);

	if (n < 0 || (size_t)n >= IFNAMSIZ || (size_t)n >= size)
		return -ENAMETOOLONG;
	memcpy(buf, name, (size_t)n + 1);
	return 0;
}

/* The combinations upstream refuses, and the names the kernel would. */
static int check(const struct cni_ctx *ctx, const struct bridge_conf *c, struct cni_err *err)
{
	char vlan_if[IFNAMSIZ];
	const char *why;

	if ((why = cni_env_ifname_invalid(c->bridge)))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "invalid bridge name \"%.64s\": %s",
				   c->bridge, why);
	if (c->has_ipam && c->no_container_iface)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "cannot use IPAM when DisableContainerInterface flag is set");
	if (c->hairpin && c->promisc)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "cannot set hairpin mode and promiscuous mode at the same time");
	if (c->has_ipam && c->is_gw && c->vlan && bridge_config_vlan_ifname(c, vlan_if, sizeof(vlan_if)) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "bridge name \"%s\" with vlan %u: the gateway's interface \"%s.%u\" "
				   "would be longer than 15 bytes", c->bridge, c->vlan, c->bridge, c->vlan);
	if (!c->has_ipam)
		return cni_conf_check_l2_version(&ctx->conf, err);
	return 0;
}

int bridge_config_load(const struct cni_ctx *ctx, struct bridge_conf *ret, struct cni_err *err)
{
	_cleanup_free_ struct bridge_conf *c = calloc(1, sizeof(*c));
	int64_t v;
	int r;

	if (!c)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	c->bridge = BRIDGE_DEFAULT_NAME;
	if ((r = cni_conf_get_str(&ctx->conf, "bridge", &c->bridge, err)) < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(bools); i++)
		if ((r = cni_conf_get_bool(&ctx->conf, bools[i].key,
					   (bool *)((char *)c + bools[i].offset), err)) < 0)
			return r;
	c->is_gw = c->is_gw || c->is_default_gw;
	c->has_ipam = cni_conf_has_ipam(&ctx->conf);
	if ((r = load_backend(ctx, c, err)) < 0)
		return r;
	/* 0: none; below IPv4's 68 and above 65535 neither a veth nor a bridge takes. */
	if ((r = cni_conf_get_int(&ctx->conf, "mtu", INT64_MIN, INT64_MAX, &v, err)) < 0)
		return r;
	if (r && v != 0 && (v < 68 || v > 65535))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MTU %lld: must be 0 (the kernel's) or 68 to 65535",
				   (long long)v);
	c->mtu = r ? (unsigned int)v : 0;
	if ((r = cni_conf_get_int(&ctx->conf, "vlan", INT64_MIN, INT64_MAX, &v, err)) < 0)
		return r;
	if (r && (v < 0 || v > 4094))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid VLAN ID %lld (must be between 0 and 4094)", (long long)v);
	c->vlan = r ? (uint16_t)v : 0;
	if ((r = load_trunk(ctx, c, err)) < 0)
		return r;
	if ((r = cni_args_check_known(&ctx->args, known_args, err)) < 0)
		return r;
	if ((r = load_mac(ctx, c, err)) < 0)
		return r;
	if ((r = check(ctx, c, err)) < 0)
		return r;
	*ret = *c;
	return 0;
}
