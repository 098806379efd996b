/* libFuzzer target: the ptp config loader (network config, prevResult included) */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "plugins/ptp/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A negative return must leave an error to print: the protocol has no "unknown error". */
static void expect_err(int r, const struct cni_err *err, const char *what)
{
	if (r < 0 && err->code == CNI_OK) {
		fprintf(stderr, "%s returned %d without recording an error\n", what, r);
		abort();
	}
}

/* What a loaded ptp config promises the kernel side. */
static void check(const struct ptp_conf *c, bool add)
{
	if (c->mtu > 65535 || (add && c->mtu != 0 && c->mtu < 68))
		abort();
	if (c->masq_backend != MASQ_DEFAULT && c->masq_backend != MASQ_IPTABLES &&
	    c->masq_backend != MASQ_NFTABLES)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_ctx ctx = { .netns_fd = -1 };
	struct cni_err err = { 0 };
	struct ptp_conf c;
	int r;

	r = cni_conf_parse((const char *)data, size, &ctx.conf, &err);
	expect_err(r, &err, "cni_conf_parse");
	if (r < 0)
		return 0;
	for (int add = 0; add < 2; add++) {
		err = (struct cni_err){ 0 };
		r = ptp_config_load(&ctx, add, &c, &err);
		expect_err(r, &err, "ptp_config_load");
		if (r >= 0)
			check(&c, add);
	}
	cni_conf_free(&ctx.conf);
	return 0;
}
