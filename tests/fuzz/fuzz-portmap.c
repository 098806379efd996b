/* libFuzzer target: portmap's network config, its port mappings, prevResult's addresses and
 * the nftables conditions read into rules */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/plugin.h"
#include "common/netfilter/nft-rule.h"
#include "common/util/error.h"
#include "plugins/portmap/conditions.h"
#include "plugins/portmap/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A negative return must leave an error to print: the protocol has no "unknown error". */
static void expect_err(int r, const struct cni_err *err, const char *what)
{
	if (r < 0 && err->code == CNI_OK) {
		fprintf(stderr, "%s returned %d without recording an error\n", what, r);
		abort();
	}
}

static void check_conf(const struct portmap_conf *c)
{
	if (c->mark_bit > 31 || c->n_maps > PORTMAP_MAX_MAPPINGS ||
	    (c->has_ip4 && c->ip4.addr.family != AF_INET) ||
	    (c->has_ip6 && c->ip6.addr.family != AF_INET6) ||
	    (c->set_mark_chain && (!*c->set_mark_chain || strlen(c->set_mark_chain) > 28)))
		abort();
	for (size_t i = 0; i < c->n_maps; i++) {
		const struct portmap_mapping *m = &c->maps[i];

		if (!m->host_port || !m->container_port || !m->proto_name ||
		    (m->has_host_ip && m->host_ip_unspecified))
			abort();
		/* Every mapping is forwarded for at least one family. */
		if (!portmap_mapping_in(m, false) && !portmap_mapping_in(m, true))
			abort();
	}
	for (int v6 = 0; v6 < 2; v6++) {
		const struct portmap_conditions *cond = v6 ? &c->cond6 : &c->cond4;

		for (size_t i = 0; cond->v && i < cond->n; i++)
			for (const char *p = cond->v[i]; *p; p++)
				if ((unsigned char)*p < ' ')
					abort();
	}
}

static void check_conditions(const struct portmap_conf *c)
{
	for (int v6 = 0; v6 < 2; v6++) {
		struct cni_err err = { 0 };
		struct nft_rule *r;
		int ret;

		if (nft_rule_new(v6 ? NFT_FAMILY_IP6 : NFT_FAMILY_IP, &r) < 0)
			return;
		ret = portmap_nft_conditions(r, v6 ? &c->cond6 : &c->cond4, "conditions", &err);
		expect_err(ret, &err, "portmap_nft_conditions");
		nft_rule_free(r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_ctx ctx = { .netns_fd = -1 };
	struct cni_err err = { 0 };
	struct portmap_conf c;
	int r;

	ctx.env.ifname = "eth0";
	r = cni_conf_parse((const char *)data, size, &ctx.conf, &err);
	expect_err(r, &err, "cni_conf_parse");
	if (r < 0)
		return 0;
	r = portmap_config_load(&ctx, &c, &err);
	expect_err(r, &err, "portmap_config_load");
	if (r >= 0) {
		check_conf(&c);
		check_conditions(&c);
		for (int b = PORTMAP_IPTABLES; b <= PORTMAP_NFTABLES; b++) {
			struct cni_err e = { 0 };

			c.backend = (enum portmap_backend)b;
			expect_err(portmap_config_check_backend(&c, &e), &e, "check_backend");
		}
		portmap_config_free(&c);
	}
	cni_conf_free(&ctx.conf);
	return 0;
}
