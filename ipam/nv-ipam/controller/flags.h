/* ipam-controller's command line: the reference ipam-controller's flags, as its Deployment passes them */
#pragma once

#include <stdbool.h>
#include <stdio.h>

struct controller_flags {
	bool leader_elect;                 /* --leader-elect */
	const char *leader_elect_namespace; /* --leader-elect-namespace */
	long lease_duration_ms;            /* --leader-elect-lease-duration */
	long renew_deadline_ms;            /* --leader-elect-renew-deadline */
	long retry_period_ms;              /* --leader-elect-retry-period */
	const char *ippools_namespace;     /* --ippools-namespace */
	bool webhook;                      /* --webhook */
	const char *webhook_bind_address;  /* --webhook-bind-address */
	const char *webhook_cert_dir;      /* --webhook-cert-dir (tls.crt, tls.key) */
	bool reject_overlapping_pools;     /* --reject-overlapping-pools */
	const char *metrics_bind_address;  /* --metrics-bind-address */
	const char *health_probe_bind_address; /* --health-probe-bind-address */
	const char *kubeconfig;            /* --kubeconfig */
	long v;                            /* --v, -v */
	const char *logging_format;        /* --logging-format: text, json */
	bool version;
	bool help;
	/* Taken for the reference's sake, meaning nothing here: logged once at start. */
	const char *ignored[8];
	int n_ignored;
};

/**
 * controller_flags_parse() - ipam-controller's command line, as daemon_flags_parse() reads
 *                            it, and the lease timings in order (duration > renew
 *                            deadline > retry period)
 * @argc: argument count
 * @argv: arguments
 * @ret: the flags set on the command line over the defaults
 * @err: where a usage error is told
 *
 * Return: 1 to go on, 0 after --help or --version, -EINVAL after telling.
 */
int controller_flags_parse(int argc, const char *const *argv, struct controller_flags *ret, FILE *err);
