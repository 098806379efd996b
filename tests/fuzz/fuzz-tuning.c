/* libFuzzer target: the tuning plugin's readers: its network config and its state file */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/plugin.h"
#include "common/record/record.h"
#include "common/util/error.h"
#include "plugins/tuning/config.h"
#include "plugins/tuning/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
	fprintf(stderr, "%s\n", what);
	abort();
}

/* Whatever a key was, what it resolved to stays below /proc/sys/net. */
static void check_conf(const struct tuning_conf *c)
{
	for (size_t i = 0; i < c->n_sysctls; i++) {
		const char *p = c->sysctls[i].path;

		if (!*p || p[0] == '/' || strstr(p, "//") || strstr(p, "/../") || strncmp(p, "../", 3) == 0 ||
		    strchr(p, ' '))
			fail("a sysctl path escapes /proc/sys/net");
	}
	if (c->n_sysctls > TUNING_MAX_SYSCTLS)
		fail("more sysctls than allowed");
}

static void config(const char *text, size_t len)
{
	struct cni_ctx ctx = { .netns_fd = -1 };
	struct tuning_conf c = { 0 };
	struct cni_err err = { 0 };
	int r;

	ctx.env.ifname = "net1";
	r = cni_conf_parse(text, len, &ctx.conf, &err);
	if (r >= 0) {
		r = cni_args_parse("IgnoreUnknown=1;MAC=02:00:00:00:00:01", &ctx.args, &err);
		if (r >= 0)
			r = tuning_config_load(&ctx, "/nonexistent/tuning-allowlist.conf", &c, &err);
		if (r >= 0)
			check_conf(&c);
		else if (err.code == CNI_OK || !err.msg[0])
			fail("a refusal that does not say why");
	}
	tuning_config_free(&c);
	cni_args_free(&ctx.args);
	cni_conf_free(&ctx.conf);
}

/*
 * A record (common/record's first line, then the body): what parses formats back to
 * text that parses to the same.
 */
static void state(const char *data, size_t len)
{
	char *text = strndup(data, len), *again = NULL, *third = NULL;
	struct tuning_state s, s2;
	unsigned int version;

	if (!text)
		return;
	if (record_parse(text, "tuning", 1, &version) == 0 && version == 1 &&
	    tuning_state_parse(text, &s) == 0) {
		if (tuning_state_format(&s, &again) < 0)
			fail("format failed");
		third = strdup(again);
		if (!third || tuning_state_parse(third, &s2) != 0)
			fail("a formatted state does not parse");
		free(third);
		third = NULL;
		if (tuning_state_format(&s2, &third) < 0 || strcmp(again, third) != 0)
			fail("a state does not survive format and parse");
		tuning_state_free(&s2);
		tuning_state_free(&s);
	}
	free(third);
	free(again);
	free(text);
}

/* The first byte picks the reader: 'S' the state file, anything else the config. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 0 && data[0] == 'S')
		state((const char *)data + 1, size - 1);
	else
		config((const char *)data, size);
	return 0;
}
