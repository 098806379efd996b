/* tuning network config: sysctl, mac, mtu, promisc, allmulti, txQLen, from upstream's sources */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/conf-keys.h"
#include "common/cni/conf-map.h"
#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/tuning/allowlist.h"
#include "plugins/tuning/config.h"

static const char *const top_keys[] = {
	"sysctl", "mac", "mtu", "promisc", "allmulti", "txQLen", "dataDir", NULL,
};
static const char *const args_keys[] = {
	"sysctl", "mac", "mtu", "promisc", "allmulti", "txQLen", NULL,
};

const struct cni_conf_keys tuning_config_keys[] = {
	{ NULL, top_keys },
	{ "args.cni", args_keys },
	{ 0 },
};

void tuning_config_free(struct tuning_conf *c)
{
	cni_conf_pairs_free(c->pairs, c->n_pairs);
	free(c->sysctls);
	*c = (struct tuning_conf){ 0 };
}

bool tuning_config_changes(const struct tuning_conf *c)
{
	return c->n_sysctls || c->has_mac || c->promisc || c->mtu || c->has_allmulti ||
	       c->has_txqlen;
}

/* args.cni.sysctl over "sysctl": a key given again takes the new value in its place. */
static int merge_sysctls(const struct cni_ctx *ctx, struct tuning_conf *c, struct cni_err *err)
{
	struct cni_conf_pair *extra = NULL, *all;
	size_t n_extra = 0;
	int r;

	r = cni_conf_get_str_map(&ctx->conf, "sysctl", &c->pairs, &c->n_pairs, err);
	if (r < 0)
		return r;
	r = cni_conf_get_str_map(&ctx->conf, "args.cni.sysctl", &extra, &n_extra, err);
	if (r <= 0)
		return r;
	all = realloc(c->pairs, (c->n_pairs + n_extra + 1) * sizeof(*all));
	if (!all) {
		cni_conf_pairs_free(extra, n_extra);
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	c->pairs = all;
	for (size_t i = 0; i < n_extra; i++) {
		size_t j = 0;

		while (j < c->n_pairs && strcmp(all[j].key, extra[i].key) != 0)
			j++;
		if (j == c->n_pairs) {
			all[c->n_pairs++] = extra[i];
			continue;
		}
		free(all[j].value);
		free(extra[i].key);
		all[j].value = extra[i].value;
	}
	free(extra);
	return 0;
}

static int resolve_sysctls(const struct cni_ctx *ctx, struct tuning_conf *c, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	int r;

	if (c->n_pairs > TUNING_MAX_SYSCTLS)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -E2BIG,
				   "too many sysctls: %zu, at most %d", c->n_pairs, TUNING_MAX_SYSCTLS);
	c->sysctls = calloc(c->n_pairs + 1, sizeof(*c->sysctls));
	if (!c->sysctls)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < c->n_pairs; i++) {
		struct tuning_sysctl *s = &c->sysctls[i];

		s->key = c->pairs[i].key;
		s->value = c->pairs[i].value;
		r = tuning_sysctl_key_resolve(s->key, ifname, s->path, sizeof(s->path), &s->scope, err);
		if (r < 0)
			return r;
		if (strlen(s->value) >= TUNING_SYSCTL_VALUE_MAX)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "sysctl %.128s: value longer than %d bytes", s->key,
					   TUNING_SYSCTL_VALUE_MAX - 1);
		/* Two spellings of one file would leave which value wins to the order. */
		for (size_t j = 0; j < i; j++)
			if (strcmp(c->sysctls[j].path, s->path) == 0)
				return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
						   "sysctl keys \"%.128s\" and \"%.128s\" name the same "
						   "file; give it once", c->sysctls[j].key, s->key);
		c->n_sysctls++;
	}
	return 0;
}

static int parse_mac(const char *text, const char *source, struct tuning_conf *c,
		     struct cni_err *err)
{
	size_t len = 0;

	/* Colon-separated, Ethernet's 6 octets or IPoIB's 20. */
	if (hwaddr_parse(text, c->mac, &len) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MAC address \"%.64s\" from %s", text, source);
	if (len == 6 && (c->mac[0] & 1))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MAC address \"%.64s\" from %s: multicast; the first octet "
				   "must be even", text, source);
	if (len == 6 && !(c->mac[0] | c->mac[1] | c->mac[2] | c->mac[3] | c->mac[4] | c->mac[5]))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid MAC address \"%.64s\" from %s: all zero", text, source);
	c->has_mac = true;
	c->mac_len = len;
	hwaddr_format(c->mac, len, c->mac_text, sizeof(c->mac_text));
	return 0;
}

/* CNI_ARGS keys besides IgnoreUnknown. */
static const char *const known_args[] = { "MAC", NULL };

/* A source given, and not empty, replaces the one before (upstream's order). */
static void mac_pick(const char **mac, const char **source, const char *v, const char *name)
{
	if (v && *v) {
		*mac = v;
		*source = name;
	}
}

static int load_mac(const struct cni_ctx *ctx, struct tuning_conf *c, struct cni_err *err)
{
	const char *mac = NULL, *source = NULL, *v = NULL;
	int r;

	if ((r = cni_args_check_known(&ctx->args, known_args, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "mac", &v, err)) < 0)
		return r;
	mac_pick(&mac, &source, v, "config \"mac\"");
	mac_pick(&mac, &source, cni_args_get(&ctx->args, "MAC"), "CNI_ARGS MAC");
	v = NULL;
	if ((r = cni_conf_get_str(&ctx->conf, "runtimeConfig.mac", &v, err)) < 0)
		return r;
	mac_pick(&mac, &source, v, "runtimeConfig.mac");
	v = NULL;
	if ((r = cni_conf_get_str(&ctx->conf, "args.cni.mac", &v, err)) < 0)
		return r;
	mac_pick(&mac, &source, v, "args.cni.mac");
	return mac ? parse_mac(mac, source, c, err) : 0;
}

/* A top-level key, then its args.cni twin, the later given winning. */
static int load_int(const struct cni_ctx *ctx, const char *key, int64_t min, int64_t max,
		    int64_t *ret, struct cni_err *err)
{
	char path[64];
	int r, r2;

	r = cni_conf_get_int(&ctx->conf, key, min, max, ret, err);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "args.cni.%s", key);
	r2 = cni_conf_get_int(&ctx->conf, path, min, max, ret, err);
	return r2 < 0 ? r2 : r || r2;
}

static int load_bool(const struct cni_ctx *ctx, const char *key, bool *ret, struct cni_err *err)
{
	char path[64];
	int r, r2;

	r = cni_conf_get_bool(&ctx->conf, key, ret, err);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "args.cni.%s", key);
	r2 = cni_conf_get_bool(&ctx->conf, path, ret, err);
	return r2 < 0 ? r2 : r || r2;
}

int tuning_config_load(const struct cni_ctx *ctx, const char *allowlist, struct tuning_conf *ret,
		       struct cni_err *err)
{
	struct tuning_conf c = { 0 };
	const char *data_dir = NULL;
	int64_t v = 0;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "dataDir", &data_dir, err)) < 0)
		goto fail;
	if (data_dir && *data_dir)
		log_info("dataDir \"%s\" ignored: the node keeps tuning's state in its own directory",
			 data_dir);
	if ((r = load_mac(ctx, &c, err)) < 0 ||
	    (r = load_bool(ctx, "promisc", &c.promisc, err)) < 0)
		goto fail;
	/* The kernel's own ceiling for any link is far below; a negative MTU is a typo. */
	if ((r = load_int(ctx, "mtu", 0, INT32_MAX, &v, err)) < 0)
		goto fail;
	c.mtu = r ? (unsigned int)v : 0;
	if ((r = load_bool(ctx, "allmulti", &c.allmulti, err)) < 0)
		goto fail;
	c.has_allmulti = r;
	if ((r = load_int(ctx, "txQLen", 0, INT32_MAX, &v, err)) < 0)
		goto fail;
	c.has_txqlen = r;
	c.txqlen = r ? (uint32_t)v : 0;
	if ((r = merge_sysctls(ctx, &c, err)) < 0 || (r = resolve_sysctls(ctx, &c, err)) < 0 ||
	    (r = tuning_allowlist_check(allowlist, c.pairs, c.n_pairs, err)) < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	tuning_config_free(&c);
	return r;
}
