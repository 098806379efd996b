/* ipam-controller's command line: the reference ipam-controller's flags, as its Deployment passes them */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/cleanup.h"
#include "ipam/nv-ipam/daemon/flags.h"
#include "ipam/nv-ipam/controller/flags.h"

#define F(field, ctype) DAEMON_FIELD(struct controller_flags, field, ctype)

static const struct daemon_flag flags[] = {
	{ "leader-elect", DF_BOOL, F(leader_elect, bool), "false", "elect a leader among the replicas (a Lease): only the leader writes" },
	{ "leader-elect-namespace", DF_STR, F(leader_elect_namespace, const char *), "kube-system", "the Lease's namespace" },
	{ "leader-elect-lease-duration", DF_DURATION, F(lease_duration_ms, long), "15s", "how long the other replicas wait before taking a lease over" },
	{ "leader-elect-renew-deadline", DF_DURATION, F(renew_deadline_ms, long), "10s", "the leader stops writing when it could not renew for this long" },
	{ "leader-elect-retry-period", DF_DURATION, F(retry_period_ms, long), "2s", "how often the lease is renewed or tried" },
	{ "ippools-namespace", DF_STR, F(ippools_namespace, const char *), "kube-system", "the namespace of the IPPool and CIDRPool objects" },
	{ "webhook", DF_BOOL, F(webhook, bool), "false", "serve the validating webhook of IPPool and CIDRPool" },
	{ "webhook-bind-address", DF_STR, F(webhook_bind_address, const char *), ":9443", "where the webhook is served (TLS)" },
	{ "webhook-cert-dir", DF_STR, F(webhook_cert_dir, const char *), "/tmp/k8s-webhook-server/serving-certs", "the webhook's tls.crt and tls.key (re-read when they change)" },
	{ "reject-overlapping-pools", DF_BOOL, F(reject_overlapping_pools, bool), "false", "the webhook refuses a pool whose addresses overlap another's (else it warns)" },
	{ "metrics-bind-address", DF_STR, F(metrics_bind_address, const char *), ":8080", "where /metrics is served ([HOST]:PORT; 0: not at all)" },
	{ "health-probe-bind-address", DF_STR, F(health_probe_bind_address, const char *), ":8081", "where /healthz and /readyz are served ([HOST]:PORT; 0: not at all)" },
	{ "kubeconfig", DF_STR, F(kubeconfig, const char *), NULL, "a kubeconfig, outside a pod (else $KUBECONFIG, the pod's service account, ~/.kube/config)" },
	DAEMON_LOG_FLAGS(struct controller_flags),
	{ "feature-gates", DF_IGNORED, 0, NULL, "taken and ignored" },
	DAEMON_INFO_FLAGS(struct controller_flags),
};

static int check(const void *parsed, FILE *err)
{
	const struct controller_flags *nf = parsed;

	if (strcmp(nf->logging_format, "text") != 0 && strcmp(nf->logging_format, "json") != 0) {
		fprintf(err, "ipam-controller: invalid config: logging-format \"%s\": text or json\n",
			nf->logging_format);
		return -EINVAL;
	}
	/* client-go's checks: the leader must stop before the others may take over. */
	if (nf->lease_duration_ms <= nf->renew_deadline_ms || nf->renew_deadline_ms <= nf->retry_period_ms ||
	    nf->retry_period_ms < 1) {
		fprintf(err, "ipam-controller: invalid config: leader-elect timings must satisfy "
			"lease-duration > renew-deadline > retry-period > 0\n");
		return -EINVAL;
	}
	return 0;
}

static const struct daemon_cmdline cmdline = {
	.prog = "ipam-controller",
	DAEMON_CMDLINE_OF(struct controller_flags, flags),
	.name_width = 30,
	.usage_head = "Usage: ipam-controller [flags]\n"
		      "\n"
		      "nv-ipam's cluster program, as the NVIDIA Network Operator's nv-ipam-controller\n"
		      "Deployment runs it: gives each node a block of every IPPool and CIDRPool it\n"
		      "matches, written into the pools' status.allocations (nv-ipam-tool carve's\n"
		      "algorithm), with a leader elected among the replicas; with --webhook, validates\n"
		      "pools as they are created and changed. Serves /healthz, /readyz and /metrics.\n"
		      "Details: docs/ipam-controller.md.\n"
		      "\n"
		      "Flags (--name=value or --name value):\n",
	.usage_tail = "\nSIGTERM or SIGINT stops it at once; a leader first releases its lease so that\n"
		      "another replica takes over without waiting for it to expire. Exit\n"
		      "status: 0 when stopped, 1 on a failure at start (flags, the API connection, a\n"
		      "server that cannot listen, the webhook's certificate).\n",
	.check = check,
};

int controller_flags_parse(int argc, const char *const *argv, struct controller_flags *ret, FILE *err)
{
	*ret = (struct controller_flags){ 0 };
	return daemon_flags_parse(&cmdline, argc, argv, ret, err);
}
