/* libFuzzer target: the static IPAM plugin's config, CNI_ARGS and runtimeConfig reading */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/result.h"
#include "common/cni/version.h"
#include "common/util/error.h"
#include "ipam/static/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
	fprintf(stderr, "%s\n", what);
	abort();
}

static void check_result(const struct cni_conf *conf, const struct cni_result *res)
{
	size_t v4 = 0, v6 = 0;
	struct cni_err err = { 0 };
	char *out = NULL;

	for (size_t i = 0; i < res->n_ips; i++) {
		const struct cni_ip *ip = &res->ips[i];
		unsigned int bits = ip->address.addr.family == AF_INET ? 32 : 128;

		if (ip->address.addr.family != AF_INET && ip->address.addr.family != AF_INET6)
			fail("an address without a family");
		if (ip->address.len > bits)
			fail("a prefix longer than its address");
		if (ip->has_gateway && ip->gateway.family != ip->address.addr.family)
			fail("a gateway of another family than its address");
		if (ip->iface != -1)
			fail("an IPAM address names an interface");
		if (ip->address.addr.family == AF_INET)
			v4++;
		else
			v6++;
	}
	if ((v4 > 1 || v6 > 1) && cni_version_cmp(conf->cni_version, "0.3.0") < 0)
		fail("several addresses of a family accepted below 0.3.0");
	/* What the dispatch prints: only 0.1.0/0.2.0 may refuse (no address for ip4/ip6). */
	if (cni_result_to_json(res, conf->cni_version, &out, &err) < 0) {
		if (err.code == CNI_OK || cni_version_cmp(conf->cni_version, "0.3.0") >= 0)
			fail("a loaded result cannot be printed");
	}
	free(out);
}

/* Input: CNI_ARGS, a newline, the network config. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	struct cni_args args = { 0 };
	struct cni_conf conf = { 0 };
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };
	char *env;
	size_t env_len;
	int r;

	if (!nl)
		return 0;
	env_len = (size_t)(nl - data);
	env = strndup((const char *)data, env_len);
	if (!env || strlen(env) != env_len) {
		free(env);
		return 0;
	}
	r = cni_conf_parse((const char *)nl + 1, size - env_len - 1, &conf, &err);
	if (r >= 0)
		r = cni_args_parse(env, &args, &err);
	if (r >= 0) {
		r = static_config_load(&conf, &args, &res, &err);
		if (r >= 0)
			check_result(&conf, &res);
		else if (res.n_ips || res.n_routes || res.ips)
			fail("a refused load wrote its result");
	}
	if (r < 0 && err.code == CNI_OK)
		fail("a failure without an error");
	cni_result_free(&res);
	cni_args_free(&args);
	cni_conf_free(&conf);
	free(env);
	return 0;
}
