/* libFuzzer target: the dhcp daemon's readers of a server's reply and of the plugin's request */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/error.h"
#include "ipam/dhcp/packet.h"
#include "ipam/dhcp/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a read reply promises the lease and the result built from it. */
static void check_reply(const struct dhcp_reply *r)
{
	struct dhcp_times t;

	if (r->n_classless > DHCP_ROUTES_MAX || r->n_static > DHCP_ROUTES_MAX ||
	    (r->has_mask && r->prefix_len > 32) || (r->bad_classless && r->n_classless))
		abort();
	for (size_t i = 0; i < r->n_classless; i++)
		if (r->classless[i].len > 32)
			abort();
	for (size_t i = 0; i < r->n_static; i++)
		if (r->statics[i].len == 0 || r->statics[i].len > 24)
			abort();
	dhcp_lease_times(r, &t);
	if (t.lease_s < DHCP_LEASE_MIN_S || t.lease_s > DHCP_LEASE_MAX_S || t.t1_s < DHCP_RENEW_MIN_S ||
	    t.t1_s > t.t2_s || t.t2_s > t.lease_s)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dhcp_reply reply;
	static struct dhcp_req req;
	struct cni_err err = { 0 };
	char *text;
	int r;

	if (dhcp_msg_parse(data, size, &reply) == 0)
		check_reply(&reply);

	/* The same bytes as the request a plugin sends the daemon. */
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	r = dhcp_wire_req_decode(text, size, &req, &err);
	if (r < 0 && err.code == CNI_OK) {
		fprintf(stderr, "request decode returned %d without an error\n", r);
		abort();
	}
	if (r == 0 && (req.n_opts > DHCP_PROVIDE_MAX || req.n_params > sizeof(req.params)))
		abort();
	free(text);
	return 0;
}
