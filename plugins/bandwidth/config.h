/* bandwidth network config: ingress and egress rate and burst, from the config or the runtime */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"
#include "common/tc/tc.h"

/* The keys bandwidth reads: a near miss of one is warned of (cni_conf_keys_warn()). */
extern const struct cni_conf_keys bandwidth_config_keys[];

struct cni_ctx;
struct cni_err;

/* Upstream's queue: what the limit holds beyond the burst, 25 ms at the rate. */
#define BANDWIDTH_LATENCY_US 25000

struct bandwidth_limit {
	uint64_t rate;   /* bits per second, 0 for none */
	uint64_t burst;  /* bits */
};

struct bandwidth_conf {
	struct bandwidth_limit ingress, egress;
	bool from_runtime;  /* runtimeConfig.bandwidth, not the top-level keys */
};

/**
 * bandwidth_config_load() - the limits a config asks for, as upstream picks them
 * @ctx: context
 * @ret: config, written only on success
 * @err: code 6 for a wrong type (a negative, fractional or string number), 7 for a value
 *       refused
 *
 * The top-level ingressRate, ingressBurst, egressRate and egressBurst when any of them is
 * given (even as null, as Go's decoder then makes the entry), else runtimeConfig.bandwidth.
 * A rate without a burst or a burst without a rate is refused with upstream's message,
 * and so is a burst of 4 GiB or more; so is what upstream would overflow on (see
 * bandwidth_tbf()), each direction on its own.
 *
 * Return: 0 on success, negative errno on failure.
 */
int bandwidth_config_load(const struct cni_ctx *ctx, struct bandwidth_conf *ret,
			  struct cni_err *err);

/**
 * bandwidth_limit_set() - whether a direction is shaped (a rate and a burst)
 * @l: the direction's limit
 *
 * Return: true when it is.
 */
bool bandwidth_limit_set(const struct bandwidth_limit *l);

/**
 * bandwidth_tbf() - the tbf qdisc upstream makes of a rate and a burst
 * @l: the limit (bits per second, bits)
 * @what: "ingress" or "egress", for the error
 * @ret: the qdisc's parameters, written only on success
 * @err: code 7 where upstream's 32-bit arithmetic would wrap
 *
 * Bytes: rate / 8 and burst / 8; the bucket, burst / rate seconds in the kernel's ticks;
 * the limit, the rate's 25 ms plus the burst: upstream's formulas in its floating point.
 * A bucket past 32 bits of ticks, where upstream's conversion wraps, is tbf's largest
 * (a runtime's burst of 2^32 - 1 bits means no limit). Refused: a limit of 4 GiB or more
 * (it wraps too), a rate or burst of less than a byte (upstream divides by zero).
 *
 * Return: 0 on success, -ERANGE for those, negative errno when the scheduler's clock
 * (/proc/net/psched) cannot be read.
 */
int bandwidth_tbf(const struct bandwidth_limit *l, const char *what, struct tc_tbf *ret,
		  struct cni_err *err);
