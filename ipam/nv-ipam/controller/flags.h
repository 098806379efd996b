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
 * controller_flags_parse() - read the command line
 * @argc: argument count
 * @argv: arguments
 * @ret: flags, defaults where not given (strings point into @argv or are constants)
 * @err: where a usage error is told
 *
 * --name=value or --name value (pflag's way; -v too); booleans take --name, --name=true or
 * --name=false; durations Go's ("15s", "1m30s"). An unknown flag, a positional argument or
 * lease timings out of order (duration > renew deadline > retry period) are errors.
 *
 * --help and --version are answered here, on stdout.
 *
 * Return: 1 to go on, 0 after --help or --version (exit 0), -EINVAL after writing the
 * error and the pointer to --help to @err.
 */
int controller_flags_parse(int argc, const char *const *argv, struct controller_flags *ret, FILE *err);

/**
 * controller_flags_usage() - the --help text
 * @out: where to write it
 */
void controller_flags_usage(FILE *out);
