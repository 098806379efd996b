/* ipam-controller's numbers in Prometheus' text format, for /metrics */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "ipam/nv-ipam/api/reflector.h"
#include "ipam/nv-ipam/controller/reconcile.h"
#include "ipam/nv-ipam/controller/request.h"
#include "ipam/nv-ipam/daemon/prom.h"

enum { CM_NODES, CM_IPPOOLS, CM_CIDRPOOLS, CM_MIRRORS };
enum { CM_IPPOOL, CM_CIDRPOOL, CM_KINDS };

/* Everything /metrics shows, gathered from the threads that keep it. */
struct controller_numbers {
	bool leading;
	unsigned long leader_transitions;
	unsigned long election_failures;
	struct reconcile_stats reconcile;
	unsigned long requests[REQUEST_VERBS];       /* the controller's own requests */
	struct api_reflector_stats mirrors[CM_MIRRORS]; /* lists and watches of the mirrors */
	unsigned long webhook_allowed[CM_KINDS];
	unsigned long webhook_denied[CM_KINDS];
	unsigned long webhook_bad;                   /* bodies that were no review */
	struct prom_server servers[3];               /* probes, metrics, webhook */
	time_t started;
};

/**
 * controller_metrics_render() - /metrics: the numbers, then the process's own (CPU seconds,
 *                               resident memory, start time)
 * @n: numbers
 * @ret: malloc'ed text (0.0.4), written only on success
 * @ret_len: its length
 *
 * Return: 0 on success, -ENOMEM.
 */
int controller_metrics_render(const struct controller_numbers *n, char **ret, size_t *ret_len);
