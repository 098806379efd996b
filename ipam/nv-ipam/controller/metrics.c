/* ipam-controller's numbers in Prometheus' text format, for /metrics */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/cleanup.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/daemon/prom.h"
#include "ipam/nv-ipam/controller/metrics.h"

static void one(struct text_buf *b, const char *name, const char *type, const char *help, double v)
{
	prom_family(b, name, type, help);
	prom_sample(b, name, "", v);
}

int controller_metrics_render(const struct controller_numbers *n, char **ret, size_t *ret_len)
{
	static const char *const mirrors[CM_MIRRORS] = { "nodes", "ippools", "cidrpools" };
	static const char *const kinds[CM_KINDS] = { "IPPool", "CIDRPool" };
	const struct reconcile_stats *r = &n->reconcile;
	struct text_buf b = { 0 };
	char labels[96];

	one(&b, "nv_ipam_controller_leader", "gauge", "1 while this replica is the leader and may write.",
	    n->leading);
	one(&b, "nv_ipam_controller_leader_transitions_total", "counter",
	    "Times this replica became the leader.", (double)n->leader_transitions);
	one(&b, "nv_ipam_controller_election_failures_total", "counter",
	    "Election rounds that failed (the API unreachable or refusing).", (double)n->election_failures);
	one(&b, "nv_ipam_controller_reconcile_passes_total", "counter",
	    "Passes over the pools run as the leader.", (double)r->passes);
	one(&b, "nv_ipam_controller_pools_carved_total", "counter", "Pools carved.", (double)r->carved);
	one(&b, "nv_ipam_controller_status_writes_total", "counter", "Pool statuses written.",
	    (double)r->writes);
	one(&b, "nv_ipam_controller_status_conflicts_total", "counter",
	    "Status writes that met a newer pool (409) and were carved again.", (double)r->conflicts);
	one(&b, "nv_ipam_controller_status_write_failures_total", "counter",
	    "Status writes that failed and were tried again later.", (double)r->write_failures);
	one(&b, "nv_ipam_controller_events_total", "counter", "Events written.", (double)r->events);
	one(&b, "nv_ipam_controller_events_held_total", "counter",
	    "Events held back by the burst limit (25 per pool, then one per 5 minutes).",
	    (double)r->events_held);
	one(&b, "nv_ipam_controller_nodes", "gauge", "Nodes in the last pass.", (double)r->nodes);
	one(&b, "nv_ipam_controller_pools", "gauge", "Pools in the last pass.", (double)r->pools);
	one(&b, "nv_ipam_controller_last_pass_seconds", "gauge", "How long the last pass took.",
	    r->last_pass_ms / 1000.0);
	prom_family(&b, "nv_ipam_controller_api_requests_total", "counter",
	            "Requests the controller sent, besides its lists and watches, by verb.");
	for (int i = 0; i < REQUEST_VERBS; i++) {
		snprintf(labels, sizeof(labels), "{verb=\"%s\"}", request_verb_name((enum request_verb)i));
		prom_sample(&b, "nv_ipam_controller_api_requests_total", labels, (double)n->requests[i]);
	}
	prom_family(&b, "nv_ipam_controller_lists_total", "counter", "Lists of a mirrored collection that completed.");
	for (int i = 0; i < CM_MIRRORS; i++) {
		snprintf(labels, sizeof(labels), "{resource=\"%s\"}", mirrors[i]);
		prom_sample(&b, "nv_ipam_controller_lists_total", labels, (double)n->mirrors[i].lists);
	}
	prom_family(&b, "nv_ipam_controller_watch_restarts_total", "counter",
	            "Watches of a mirrored collection that broke off or failed to start.");
	for (int i = 0; i < CM_MIRRORS; i++) {
		snprintf(labels, sizeof(labels), "{resource=\"%s\"}", mirrors[i]);
		prom_sample(&b, "nv_ipam_controller_watch_restarts_total", labels, (double)n->mirrors[i].restarts);
	}
	prom_family(&b, "nv_ipam_controller_watch_events_total", "counter", "Watch events applied to a mirror.");
	for (int i = 0; i < CM_MIRRORS; i++) {
		snprintf(labels, sizeof(labels), "{resource=\"%s\"}", mirrors[i]);
		prom_sample(&b, "nv_ipam_controller_watch_events_total", labels, (double)n->mirrors[i].events);
	}
	prom_family(&b, "nv_ipam_controller_webhook_reviews_total", "counter",
	            "AdmissionReviews answered, by kind and verdict.");
	for (int i = 0; i < CM_KINDS; i++) {
		snprintf(labels, sizeof(labels), "{kind=\"%s\",allowed=\"true\"}", kinds[i]);
		prom_sample(&b, "nv_ipam_controller_webhook_reviews_total", labels, (double)n->webhook_allowed[i]);
		snprintf(labels, sizeof(labels), "{kind=\"%s\",allowed=\"false\"}", kinds[i]);
		prom_sample(&b, "nv_ipam_controller_webhook_reviews_total", labels, (double)n->webhook_denied[i]);
	}
	one(&b, "nv_ipam_controller_webhook_bad_requests_total", "counter",
	    "Webhook requests whose body was no AdmissionReview.", (double)n->webhook_bad);
	prom_connections(&b, "nv_ipam_controller", n->servers, 3);
	prom_process(&b, n->started);
	if (b.oom) {
		text_buf_free(&b);
		return -ENOMEM;
	}
	*ret = b.data;
	*ret_len = b.len;
	return 0;
}
