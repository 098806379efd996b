/* libFuzzer target: the bridge plugin's network config and CNI_ARGS, and the names it derives */
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/env.h"
#include "common/cni/plugin.h"
#include "common/netfilter/chainname.h"
#include "common/util/error.h"
#include "plugins/bridge/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A negative return must leave an error to print: the protocol has no "unknown error". */
static void expect_err(int r, const struct cni_err *err, const char *what)
{
	if (r < 0 && err->code == CNI_OK) {
		fprintf(stderr, "%s returned %d without recording an error\n", what, r);
		abort();
	}
}

/* What the rest of the plugin counts on once a config is accepted. */
static void check_conf(const struct bridge_conf *c)
{
	char ifname[IFNAMSIZ];

	if (cni_env_ifname_invalid(c->bridge) || c->vlan > 4094 ||
	    (c->mtu && (c->mtu < 68 || c->mtu > 65535)) || (c->is_default_gw && !c->is_gw) ||
	    (c->hairpin && c->promisc) || (c->has_ipam && c->no_container_iface) ||
	    c->n_trunk > BRIDGE_TRUNK_MAX || (c->n_trunk && !c->trunk_given))
		abort();
	if (c->has_ipam && c->is_gw && c->vlan && bridge_config_vlan_ifname(c, ifname, sizeof(ifname)) < 0)
		abort();
	/* Ranges ascending, none touching the next, all within 1-4094, none flagged. */
	for (size_t i = 0; i < c->n_trunk; i++)
		if (c->trunk[i].min < 1 || c->trunk[i].max > 4094 || c->trunk[i].min > c->trunk[i].max ||
		    c->trunk[i].flags || (i && c->trunk[i].min <= c->trunk[i - 1].max + 1))
			abort();
	if (c->has_mac && (c->mac[0] & 1))
		abort();
}

/* The names upstream's rules get for this network and any container ID. */
static void check_names(const char *network, const uint8_t *data, size_t size)
{
	char id[128], chain[CHAINNAME_IPT_LEN + 1], comment[1024];
	size_t n = size < sizeof(id) - 1 ? size : sizeof(id) - 1;

	memcpy(id, data, n);
	id[n] = '\0';
	if (chainname_ipt(network, id, "", chain) < 0 || strlen(chain) != CHAINNAME_IPT_LEN ||
	    strncmp(chain, "CNI-", 4) != 0)
		abort();
	/* Go's %q never lets a quote through unescaped: the comment is one word to iptables. */
	if (chainname_comment(network, id, comment, sizeof(comment)) == 0) {
		int quotes = 0;

		for (const char *p = comment; *p; p++) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				quotes++;
		}
		if (quotes != 4)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_ctx ctx = { .netns_fd = -1 };
	struct cni_err err = { 0 };
	struct bridge_conf *c = malloc(sizeof(*c));
	const uint8_t *nl = memchr(data, '\n', size);
	char args[256] = "";
	int r;

	/* An optional first line is CNI_ARGS, the rest the config. */
	if (nl && (size_t)(nl - data) < sizeof(args)) {
		memcpy(args, data, (size_t)(nl - data));
		args[nl - data] = '\0';
		size -= (size_t)(nl - data) + 1;
		data = nl + 1;
	}
	if (!c)
		return 0;
	r = cni_conf_parse((const char *)data, size, &ctx.conf, &err);
	expect_err(r, &err, "cni_conf_parse");
	if (r >= 0) {
		r = cni_args_parse(args, &ctx.args, &err);
		expect_err(r, &err, "cni_args_parse");
	}
	if (r >= 0) {
		r = bridge_config_load(&ctx, c, &err);
		expect_err(r, &err, "bridge_config_load");
		if (r >= 0)
			check_conf(c);
		check_names(ctx.conf.name, data, size);
	}
	cni_args_free(&ctx.args);
	cni_conf_free(&ctx.conf);
	free(c);
	return 0;
}
