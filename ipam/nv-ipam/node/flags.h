/* ipam-node's command line: the reference ipam-node's flags, as its DaemonSet passes them */
#pragma once

#include <stdbool.h>
#include <stdio.h>

struct node_flags {
	const char *node_name;            /* --node-name (required) */
	long v;                           /* --v, -v */
	const char *logging_format;       /* --logging-format: text, json */
	const char *store_file;           /* --store-file */
	bool store_handover;              /* --store-handover */
	const char *cni_bin_dir;          /* --cni-bin-dir */
	const char *cni_conf_dir;         /* --cni-conf-dir */
	const char *cni_nv_ipam_bin_file; /* --cni-nv-ipam-bin-file (nv-ipam-tool beside it) */
	bool cni_skip_binary_copy;        /* --cni-skip-nv-ipam-binary-copy */
	bool cni_skip_config_creation;    /* --cni-skip-nv-ipam-config-creation */
	const char *cni_daemon_socket;    /* --cni-daemon-socket: into nv-ipam.conf only */
	long cni_daemon_call_timeout;     /* --cni-daemon-call-timeout: into nv-ipam.conf only */
	const char *cni_log_file;         /* --cni-log-file */
	const char *cni_log_level;        /* --cni-log-level */
	bool cni_force_pool_name;         /* --cni-force-pool-name */
	const char *ippools_namespace;    /* --ippools-namespace */
	const char *kubeconfig;           /* --kubeconfig */
	const char *metrics_bind_address; /* --metrics-bind-address */
	const char *health_probe_bind_address; /* --health-probe-bind-address */
	long stale_check_interval_ms;     /* --stale-ip-check-interval (0: no cleaner) */
	long stale_check_count;           /* --stale-ip-check-count-before-release */
	long released_ip_cooldown_ms;     /* --released-ip-cooldown (0: none) */
	bool version;
	bool help;
	/* Taken for the reference's sake, meaning nothing here: logged once at start. */
	const char *ignored[16];
	int n_ignored;
};

/**
 * node_flags_parse() - ipam-node's command line, as daemon_flags_parse() reads it
 * @argc: argument count
 * @argv: arguments
 * @ret: flags, defaults where not given (strings point into @argv or are constants)
 * @err: where a usage error is told
 *
 * Return: 1 to go on, 0 after --help or --version, -EINVAL after telling.
 */
int node_flags_parse(int argc, const char *const *argv, struct node_flags *ret, FILE *err);
