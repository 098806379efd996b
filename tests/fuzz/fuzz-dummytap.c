/* libFuzzer target: the dummy and tap config loaders (network config plus CNI_ARGS) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/plugin.h"
#include "common/net/tap.h"
#include "common/util/error.h"
#include "plugins/dummy/config.h"
#include "plugins/tap/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A negative return must leave an error to print: the protocol has no "unknown error". */
static void expect_err(int r, const struct cni_err *err, const char *what)
{
	if (r < 0 && err->code == CNI_OK) {
		fprintf(stderr, "%s returned %d without recording an error\n", what, r);
		abort();
	}
}

/* What a loaded tap config promises the kernel side. */
static void check_tap(const struct tap_conf *c)
{
	if (c->mtu && (c->mtu < TAP_MTU_MIN || c->mtu > TAP_MTU_MAX))
		abort();
	if (c->has_mac && ((c->mac[0] & 1) ||
			   !(c->mac[0] | c->mac[1] | c->mac[2] | c->mac[3] | c->mac[4] | c->mac[5])))
		abort();
	if (c->bridge && (!*c->bridge || strlen(c->bridge) > 15 || strchr(c->bridge, '/')))
		abort();
}

/* Input: CNI_ARGS up to the first newline, then the network config. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	size_t args_len = nl ? (size_t)(nl - (const char *)data) : 0;
	const char *json = nl ? nl + 1 : (const char *)data;
	size_t json_len = nl ? size - args_len - 1 : size;
	struct cni_ctx ctx = { .netns_fd = -1 };
	struct cni_err err = { 0 };
	struct tap_conf c;
	char args[256];
	int r;

	if (args_len >= sizeof(args) || memchr(data, '\0', args_len))
		return 0;
	memcpy(args, data, args_len);
	args[args_len] = '\0';
	r = cni_conf_parse(json, json_len, &ctx.conf, &err);
	expect_err(r, &err, "cni_conf_parse");
	if (r < 0)
		return 0;
	err = (struct cni_err){ 0 };
	r = cni_args_parse(args, &ctx.args, &err);
	expect_err(r, &err, "cni_args_parse");
	if (r >= 0) {
		err = (struct cni_err){ 0 };
		r = dummy_config_load(&ctx, &err);
		expect_err(r, &err, "dummy_config_load");
		err = (struct cni_err){ 0 };
		r = tap_config_load(&ctx, &c, &err);
		expect_err(r, &err, "tap_config_load");
		if (r >= 0)
			check_tap(&c);
	}
	cni_args_free(&ctx.args);
	cni_conf_free(&ctx.conf);
	return 0;
}
