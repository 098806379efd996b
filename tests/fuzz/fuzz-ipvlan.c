/* libFuzzer target: the ipvlan config loader (network config, prevResult included) */
#include <linux/if_link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/ipvlan/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A negative return must leave an error to print: the protocol has no "unknown error". */
static void expect_err(int r, const struct cni_err *err, const char *what)
{
	if (r < 0 && err->code == CNI_OK) {
		fprintf(stderr, "%s returned %d without recording an error\n", what, r);
		abort();
	}
}

/* What a loaded ipvlan config promises the kernel side. */
static void check(const struct ipvlan_conf *c)
{
	if (c->mode > IPVLAN_MODE_L3S || (c->flags != 0 && c->flags != IPVLAN_F_PRIVATE && c->flags != IPVLAN_F_VEPA))
		abort();
	if (c->mtu < 0 || c->mtu > INT32_MAX)
		abort();
	if (c->master && (!*c->master || strlen(c->master) > 15 || strchr(c->master, '/')))
		abort();
	if (!c->has_ipam && !c->use_prev_ips)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_ctx ctx = { .netns_fd = -1 };
	struct cni_err err = { 0 };
	struct ipvlan_conf c;
	int r;

	r = cni_conf_parse((const char *)data, size, &ctx.conf, &err);
	expect_err(r, &err, "cni_conf_parse");
	if (r < 0)
		return 0;
	err = (struct cni_err){ 0 };
	r = ipvlan_config_load(&ctx, false, &c, &err);
	expect_err(r, &err, "ipvlan_config_load");
	if (r >= 0)
		check(&c);
	cni_conf_free(&ctx.conf);
	return 0;
}
