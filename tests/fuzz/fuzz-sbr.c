/* libFuzzer target: sbr's network config and prevResult's addresses, and its record reader */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/record/record.h"
#include "common/util/error.h"
#include "plugins/sbr/config.h"
#include "plugins/sbr/state.h"
#include "plugins/sbr/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A negative return must leave an error to print: the protocol has no "unknown error". */
static void expect_err(int r, const struct cni_err *err, const char *what)
{
	if (r < 0 && err->code == CNI_OK) {
		fprintf(stderr, "%s returned %d without recording an error\n", what, r);
		abort();
	}
}

static void check_conf(const struct sbr_conf *c)
{
	if ((c->has_table && c->table == 0) || (c->has_gw4 && c->gw4.family != AF_INET) ||
	    (c->has_gw6 && c->gw6.family != AF_INET6))
		abort();
	/* The table a config names is taken once a rule points at it. */
	if (c->has_table && sbr_table_next(&c->table, 1, c->table) == c->table)
		abort();
}

static void check_addresses(const struct cni_result *prev)
{
	const struct cni_ip **ips = NULL;
	struct cni_err err = { 0 };
	size_t n = 0;
	int r;

	r = sbr_config_addresses(prev, "net1", &ips, &n, &err);
	expect_err(r, &err, "sbr_config_addresses");
	if (r < 0)
		return;
	if (n == 0 || n > prev->n_ips)
		abort();
	for (size_t i = 0; i < n; i++)
		if (ips[i] < prev->ips || ips[i] >= prev->ips + prev->n_ips)
			abort();
	free(ips);
}

/* A record (common/record's first line, then the body): what parses formats back to text that
 * parses to the same. */
static void state(const char *data, size_t len)
{
	char *text = strndup(data, len), *again = NULL, *third = NULL;
	struct sbr_state_rule *v = NULL, *v2 = NULL;
	unsigned int version;
	size_t n = 0, n2 = 0;

	if (!text)
		return;
	if (record_parse(text, "sbr", 1, &version) == 0 && sbr_state_parse(text, &v, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			if ((v[i].src.family != AF_INET && v[i].src.family != AF_INET6) || !v[i].table)
				abort();
		if (sbr_state_format(v, n, &again) < 0)
			abort();
		third = strdup(again);
		if (!third || sbr_state_parse(third, &v2, &n2) != 0 || n2 != n)
			abort();
		free(third);
		third = NULL;
		if (sbr_state_format(v2, n2, &third) < 0 || strcmp(again, third) != 0)
			abort();
	}
	free(v2);
	free(v);
	free(third);
	free(again);
	free(text);
}

/* The first byte picks the reader: 'S' the record, anything else the config. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_ctx ctx = { .netns_fd = -1 };
	struct cni_err err = { 0 };
	struct sbr_conf c;
	int r;

	if (size > 0 && data[0] == 'S') {
		state((const char *)data + 1, size - 1);
		return 0;
	}
	r = cni_conf_parse((const char *)data, size, &ctx.conf, &err);
	expect_err(r, &err, "cni_conf_parse");
	if (r < 0)
		return 0;
	r = sbr_config_load(&ctx, &c, &err);
	expect_err(r, &err, "sbr_config_load");
	if (r >= 0)
		check_conf(&c);
	check_addresses(ctx.conf.prev_result);
	cni_conf_free(&ctx.conf);
	return 0;
}
