/* libFuzzer target: the vrf config loader (network config, prevResult included) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/vrf/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A negative return must leave an error to print: the protocol has no "unknown error". */
static void expect_err(int r, const struct cni_err *err, const char *what)
{
	if (r < 0 && err->code == CNI_OK) {
		fprintf(stderr, "%s returned %d without recording an error\n", what, r);
		abort();
	}
}

/* What a loaded vrf config promises the kernel side. */
static void check(const struct vrf_conf *c)
{
	if (c->table == 253 || c->table == 254 || c->table == 255)
		abort();
	if (!c->name || !*c->name || strlen(c->name) > 15 || strchr(c->name, '/'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_ctx ctx = { .netns_fd = -1 };
	struct cni_err err = { 0 };
	struct vrf_conf c;
	int r;

	r = cni_conf_parse((const char *)data, size, &ctx.conf, &err);
	expect_err(r, &err, "cni_conf_parse");
	if (r < 0)
		return 0;
	err = (struct cni_err){ 0 };
	r = vrf_config_load(&ctx, &c, &err);
	expect_err(r, &err, "vrf_config_load");
	if (r >= 0)
		check(&c);
	cni_conf_free(&ctx.conf);
	return 0;
}
