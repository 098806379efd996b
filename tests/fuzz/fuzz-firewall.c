/* libFuzzer target: firewall's network config and prevResult's addresses, and the D-Bus
 * messages common/dbus reads (the fuzzed input taken as a reply from the bus too) */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/plugin.h"
#include "common/dbus/dbus.h"
#include "common/util/error.h"
#include "plugins/firewall/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect_err(int r, const struct cni_err *err, const char *what)
{
	if (r < 0 && err->code == CNI_OK) {
		fprintf(stderr, "%s returned %d without recording an error\n", what, r);
		abort();
	}
}

static void check_conf(const struct firewall_conf *c)
{
	if (!c->admin_chain[0] || !c->zone[0] || (c->policy != FIREWALL_OPEN && c->has_prev &&
						  c->policy_known && !c->bridge[0]))
		abort();
	for (size_t i = 0; i < c->n_ips; i++)
		if (c->ips[i].len != (c->ips[i].addr.family == AF_INET ? 32u : 128u))
			abort();
}

/* A message read from the bus: whatever it says, the reader stays inside it. */
static void check_message(const uint8_t *data, size_t size)
{
	struct dbus_reply r;
	uint32_t reply_to;
	size_t total;
	int type;

	if (size < 16 || dbus_message_length(data, &total) < 0)
		return;
	if (dbus_message_parse(data, size, &type, &reply_to, &r) == 0 &&
	    (total != size || strlen(r.text) >= sizeof(r.text) ||
	     strlen(r.error_name) >= sizeof(r.error_name)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_ctx ctx = { .netns_fd = -1 };
	struct cni_err err = { 0 };
	struct firewall_conf c;
	int r;

	check_message(data, size);
	r = cni_conf_parse((const char *)data, size, &ctx.conf, &err);
	expect_err(r, &err, "cni_conf_parse");
	if (r < 0)
		return 0;
	r = firewall_config_load(&ctx, &c, &err);
	expect_err(r, &err, "firewall_config_load");
	if (r >= 0 || r == -EBADR) {
		check_conf(&c);
		firewall_config_free(&c);
	}
	cni_conf_free(&ctx.conf);
	return 0;
}
