/* libFuzzer target: bandwidth's network config, where its limits come from, and the tbf
 * parameters made of them */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/bandwidth/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A negative return must leave an error to print: the protocol has no "unknown error". */
static void expect_err(int r, const struct cni_err *err, const char *what)
{
	if (r < 0 && err->code == CNI_OK) {
		fprintf(stderr, "%s returned %d without recording an error\n", what, r);
		abort();
	}
}

/* What the loader took, ADD must be able to build: a tbf whose numbers fit. */
static void check_limit(const struct bandwidth_limit *l)
{
	struct cni_err err = { 0 };
	struct tc_tbf t;

	if ((l->rate == 0) != (l->burst == 0) || l->burst / 8 >= UINT32_MAX)
		abort();
	if (!bandwidth_limit_set(l))
		return;
	if (bandwidth_tbf(l, "fuzz", &t, &err) < 0 || t.rate != l->rate / 8 || t.buffer == 0 ||
	    t.limit < l->burst / 8)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_ctx ctx = { .netns_fd = -1 };
	struct cni_err err = { 0 };
	struct bandwidth_conf c;
	int r;

	r = cni_conf_parse((const char *)data, size, &ctx.conf, &err);
	expect_err(r, &err, "cni_conf_parse");
	if (r < 0)
		return 0;
	r = bandwidth_config_load(&ctx, &c, &err);
	expect_err(r, &err, "bandwidth_config_load");
	if (r >= 0) {
		check_limit(&c.ingress);
		check_limit(&c.egress);
	}
	cni_conf_free(&ctx.conf);
	return 0;
}
