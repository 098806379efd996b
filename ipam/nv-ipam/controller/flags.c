/* ipam-controller's command line: the reference ipam-controller's flags, as its Deployment passes them */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/cleanup.h"
#include "ipam/nv-ipam/controller/flags.h"
#include "ipam/nv-ipam/daemon/duration.h"

enum kind { F_STR, F_INT, F_BOOL, F_DURATION, F_IGNORED };

struct flag {
	const char *name;
	enum kind kind;
	size_t off;       /* in struct controller_flags */
	const char *def;  /* the default, as --help shows it */
	const char *help;
};

#define F(field) offsetof(struct controller_flags, field)

static const struct flag flags[] = {
	{ "leader-elect", F_BOOL, F(leader_elect), "false", "elect a leader among the replicas (a Lease): only the leader writes" },
	{ "leader-elect-namespace", F_STR, F(leader_elect_namespace), "kube-system", "the Lease's namespace" },
	{ "leader-elect-lease-duration", F_DURATION, F(lease_duration_ms), "15s", "how long the other replicas wait before taking a lease over" },
	{ "leader-elect-renew-deadline", F_DURATION, F(renew_deadline_ms), "10s", "the leader stops writing when it could not renew for this long" },
	{ "leader-elect-retry-period", F_DURATION, F(retry_period_ms), "2s", "how often the lease is renewed or tried" },
	{ "ippools-namespace", F_STR, F(ippools_namespace), "kube-system", "the namespace of the IPPool and CIDRPool objects" },
	{ "webhook", F_BOOL, F(webhook), "false", "serve the validating webhook of IPPool and CIDRPool" },
	{ "webhook-bind-address", F_STR, F(webhook_bind_address), ":9443", "where the webhook is served (TLS)" },
	{ "webhook-cert-dir", F_STR, F(webhook_cert_dir), "/tmp/k8s-webhook-server/serving-certs", "the webhook's tls.crt and tls.key (re-read when they change)" },
	{ "reject-overlapping-pools", F_BOOL, F(reject_overlapping_pools), "false", "the webhook refuses a pool whose addresses overlap another's (else it warns)" },
	{ "metrics-bind-address", F_STR, F(metrics_bind_address), ":8080", "where /metrics is served ([HOST]:PORT; 0: not at all)" },
	{ "health-probe-bind-address", F_STR, F(health_probe_bind_address), ":8081", "where /healthz and /readyz are served ([HOST]:PORT; 0: not at all)" },
	{ "kubeconfig", F_STR, F(kubeconfig), NULL, "a kubeconfig, outside a pod (else $KUBECONFIG, the pod's service account, ~/.kube/config)" },
	{ "v", F_INT, F(v), "0", "log verbosity (-v too)" },
	{ "logging-format", F_STR, F(logging_format), "text", "log format: text (klog, on stderr) or json (on stdout)" },
	{ "vmodule", F_IGNORED, 0, NULL, "taken and ignored" },
	{ "log-flush-frequency", F_IGNORED, 0, NULL, "taken and ignored (every line is written at once)" },
	{ "log-json-info-buffer-size", F_IGNORED, 0, NULL, "taken and ignored" },
	{ "feature-gates", F_IGNORED, 0, NULL, "taken and ignored" },
	{ "version", F_BOOL, F(version), "false", "print the version and exit" },
	{ "help", F_BOOL, F(help), "false", "this text" },
};

static int set(const struct flag *f, const char *val, struct controller_flags *cf, FILE *err)
{
	/* The field is reached by its offset; memcpy() stores it whatever the
	 * compiler knows of that address's alignment (clang's -Wcast-align). */
	char *field = (char *)cf + f->off;
	char *end;
	bool b;
	long n;

	switch (f->kind) {
	case F_STR:
		memcpy(field, &val, sizeof(val));
		return 0;
	case F_INT:
		errno = 0;
		n = strtol(val, &end, 10);
		if (!*val || *end || errno || n < 0 || n > INT_MAX)
			break;
		memcpy(field, &n, sizeof(n));
		return 0;
	case F_BOOL:
		if (strcmp(val, "true") != 0 && strcmp(val, "false") != 0)
			break;
		b = strcmp(val, "true") == 0;
		memcpy(field, &b, sizeof(b));
		return 0;
	case F_DURATION:
		if (go_duration_ms(val, &n) < 0)
			break;
		memcpy(field, &n, sizeof(n));
		return 0;
	case F_IGNORED:
		if (cf->n_ignored < (int)ARRAY_SIZE(cf->ignored))
			cf->ignored[cf->n_ignored++] = f->name;
		return 0;
	}
	fprintf(err, "ipam-controller: invalid argument \"%s\" for \"--%s\" flag: %s\n", val, f->name,
		f->kind == F_DURATION ? "a duration such as 30s, 1m or 1h30m"
		: f->kind == F_BOOL   ? "true or false"
				      : "a whole number from 0");
	return -EINVAL;
}

int controller_flags_parse(int argc, const char *const *argv, struct controller_flags *ret, FILE *err)
{
	struct controller_flags cf = {
		.leader_elect_namespace = "kube-system",
		.lease_duration_ms = 15000,
		.renew_deadline_ms = 10000,
		.retry_period_ms = 2000,
		.ippools_namespace = "kube-system",
		.webhook_bind_address = ":9443",
		.webhook_cert_dir = "/tmp/k8s-webhook-server/serving-certs",
		.metrics_bind_address = ":8080",
		.health_probe_bind_address = ":8081",
		.logging_format = "text",
	};

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *name, *eq, *val;
		const struct flag *f = NULL;
		size_t len;

		if (strncmp(arg, "--", 2) == 0 && arg[2])
			name = arg + 2;
		else if (arg[0] == '-' && arg[1] == 'v' && (!arg[2] || arg[2] == '='))
			name = arg + 1;
		else if (arg[0] == '-' && arg[1] == 'h' && !arg[2])
			name = "help";
		else {
			fprintf(err, "ipam-controller: %s \"%s\"\n",
				arg[0] == '-' ? "unknown shorthand flag in" : "takes no arguments, got", arg);
			return -EINVAL;
		}
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		for (size_t k = 0; k < ARRAY_SIZE(flags); k++)
			if (strlen(flags[k].name) == len && strncmp(flags[k].name, name, len) == 0)
				f = &flags[k];
		if (!f) {
			fprintf(err, "ipam-controller: unknown flag: --%.*s\n", (int)(len > 64 ? 64 : len), name);
			return -EINVAL;
		}
		if (eq)
			val = eq + 1;
		else if (f->kind == F_BOOL)
			val = "true";
		else if (i + 1 < argc)
			val = argv[++i];
		else {
			fprintf(err, "ipam-controller: flag needs an argument: --%s\n", f->name);
			return -EINVAL;
		}
		if (set(f, val, &cf, err) < 0)
			return -EINVAL;
	}
	if (strcmp(cf.logging_format, "text") != 0 && strcmp(cf.logging_format, "json") != 0) {
		fprintf(err, "ipam-controller: invalid config: logging-format \"%s\": text or json\n",
			cf.logging_format);
		return -EINVAL;
	}
	/* client-go's checks: the leader must stop before the others may take over. */
	if (cf.lease_duration_ms <= cf.renew_deadline_ms || cf.renew_deadline_ms <= cf.retry_period_ms ||
	    cf.retry_period_ms < 1) {
		fprintf(err, "ipam-controller: invalid config: leader-elect timings must satisfy "
			"lease-duration > renew-deadline > retry-period > 0\n");
		return -EINVAL;
	}
	*ret = cf;
	return 0;
}

void controller_flags_usage(FILE *out)
{
	fputs("Usage: ipam-controller [flags]\n"
	      "\n"
	      "nv-ipam's cluster program, as the NVIDIA Network Operator's nv-ipam-controller\n"
	      "Deployment runs it: gives each node a block of every IPPool and CIDRPool it\n"
	      "matches, written into the pools' status.allocations (nv-ipam-tool carve's\n"
	      "algorithm), with a leader elected among the replicas; with --webhook, validates\n"
	      "pools as they are created and changed. Serves /healthz, /readyz and /metrics.\n"
	      "Details: docs/ipam-controller.md.\n"
	      "\n"
	      "Flags (--name=value or --name value):\n", out);
	for (size_t k = 0; k < ARRAY_SIZE(flags); k++) {
		const struct flag *f = &flags[k];

		fprintf(out, "  --%-30s %s", f->name, f->help);
		if (f->def && f->kind != F_BOOL)
			fprintf(out, " (default %s)", f->def);
		fputc('\n', out);
	}
	fputs("\nSIGTERM or SIGINT stops it at once; a leader first releases its lease so that\n"
	      "another replica takes over without waiting for it to expire. Exit\n"
	      "status: 0 when stopped, 1 on a failure at start (flags, the API connection, a\n"
	      "server that cannot listen, the webhook's certificate).\n", out);
}
