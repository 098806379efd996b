/* One DHCP lease the daemon holds: acquired, renewed and released by a thread of its own */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/util/error.h"
#include "ipam/dhcp/wire.h"

struct cni_result;

/* The daemon's flags that shape every exchange, in milliseconds. */
struct dhcp_timing {
	int64_t timeout_ms;        /* -timeout: one message's wait for its answer */
	int64_t resend_max_ms;     /* -resendmax: the longest delay between tries */
	int64_t resend_timeout_ms; /* -resendtimeout: no more tries after this */
	bool broadcast;            /* -broadcast: the BOOTP broadcast flag set */
};

struct dhcp_lease;

/**
 * dhcp_lease_start() - start acquiring a lease in a netns (the descriptor passes here)
 * @req: the plugin's request (client ID, interface, options)
 * @netns_fd: the container's netns
 * @timing: the daemon's flags (kept by reference)
 * @ret: the lease, with one reference for the caller
 *
 * Return: 0, or negative errno.
 */
int dhcp_lease_start(const struct dhcp_req *req, int netns_fd, const struct dhcp_timing *timing,
		     struct dhcp_lease **ret);

/**
 * dhcp_lease_wait() - wait until the lease is acquired or its acquiring failed
 * @l: lease
 * @err: why it failed
 *
 * Return: 0 when bound, negative errno otherwise.
 */
int dhcp_lease_wait(struct dhcp_lease *l, struct cni_err *err);

/**
 * dhcp_lease_usable() - whether a lease in the table still stands for its attachment
 * @l: lease
 *
 * Return: false when its acquiring failed or its thread ended (the link gone, expired).
 */
bool dhcp_lease_usable(struct dhcp_lease *l);

/**
 * dhcp_lease_result() - the CNI result of a bound lease, as upstream's daemon gives it
 * @l: lease
 * @priority: the config's route metric, 0 for none
 * @ret: one address with its gateway, routes (option 121, else 33 and a default route)
 * @err: code 999 when out of memory
 *
 * Return: 0, or negative errno.
 */
int dhcp_lease_result(struct dhcp_lease *l, int priority, struct cni_result *ret,
		      struct cni_err *err);

/* dhcp_lease_poke() - wake the lease's thread to look at its link (CHECK). */
void dhcp_lease_poke(struct dhcp_lease *l);

/* dhcp_lease_stop() - end the lease's thread, releasing a bound lease, and wait until it has. */
void dhcp_lease_stop(struct dhcp_lease *l);

/* dhcp_lease_client_id() - the key the daemon's table holds the lease by. */
const char *dhcp_lease_client_id(const struct dhcp_lease *l);

struct dhcp_lease *dhcp_lease_ref(struct dhcp_lease *l);
void dhcp_lease_unref(struct dhcp_lease *l);
