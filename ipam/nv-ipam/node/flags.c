/* ipam-node's command line: the reference ipam-node's flags, as its DaemonSet passes them */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/nv-ipam/daemon/duration.h"
#include "ipam/nv-ipam/node/flags.h"

enum kind {
	F_STR,
	F_INT,
	F_BOOL,
	F_DURATION,
	F_IGNORED,      /* takes a value, means nothing here */
	F_IGNORED_BOOL, /* takes none */
};

struct flag {
	const char *name;
	enum kind kind;
	size_t off;       /* in struct node_flags */
	const char *def;  /* the default, as --help shows it */
	const char *help;
};

#define F(field) offsetof(struct node_flags, field)

static const struct flag flags[] = {
	{ "node-name", F_STR, F(node_name), NULL, "the node this runs on (required; the DaemonSet gives spec.nodeName)" },
	{ "ippools-namespace", F_STR, F(ippools_namespace), "kube-system", "the namespace of the IPPool and CIDRPool objects" },
	{ "store-file", F_STR, F(store_file), "/var/lib/cni/nv-ipam/store", "nv-ipam's allocation store on the node (written into nv-ipam.conf)" },
	{ "store-handover", F_BOOL, F(store_handover), "true", "on stop, write the store in the reference nv-ipam daemon's format for it to start on (nv-ipam answers code 11 until ipam-node starts again); false: the store stays ours, and the reference daemon starts only after nv-ipam-tool handover" },
	{ "kubeconfig", F_STR, F(kubeconfig), NULL, "a kubeconfig, outside a pod (else $KUBECONFIG, the pod's service account, ~/.kube/config)" },
	{ "metrics-bind-address", F_STR, F(metrics_bind_address), ":8080", "where /metrics is served ([HOST]:PORT; 0: not at all)" },
	{ "health-probe-bind-address", F_STR, F(health_probe_bind_address), ":8081", "where /healthz and /readyz are served ([HOST]:PORT; 0: not at all)" },
	{ "stale-ip-check-interval", F_DURATION, F(stale_check_interval_ms), "1m", "how often the cleaner lists this node's pods (0: no cleaner)" },
	{ "stale-ip-check-count-before-release", F_INT, F(stale_check_count), "3", "an address whose pod is gone is released once missed more than this many times in a row" },
	{ "cni-bin-dir", F_STR, F(cni_bin_dir), "/opt/cni/bin", "where nv-ipam and nv-ipam-tool are installed" },
	{ "cni-nv-ipam-bin-file", F_STR, F(cni_nv_ipam_bin_file), "/nv-ipam", "the nv-ipam binary to install (nv-ipam-tool is taken from beside it)" },
	{ "cni-skip-nv-ipam-binary-copy", F_BOOL, F(cni_skip_binary_copy), "false", "install no binary" },
	{ "cni-skip-nv-ipam-config-creation", F_BOOL, F(cni_skip_config_creation), "false", "write no nv-ipam.conf" },
	{ "cni-conf-dir", F_STR, F(cni_conf_dir), "/etc/cni/net.d/nv-ipam.d", "where nv-ipam.conf and the node pool file (node-pools.json) are written" },
	{ "cni-log-file", F_STR, F(cni_log_file), "/var/log/nv-ipam-cni.log", "nv-ipam.conf: nv-ipam's log file" },
	{ "cni-log-level", F_STR, F(cni_log_level), "info", "nv-ipam.conf: nv-ipam's log level" },
	{ "cni-force-pool-name", F_BOOL, F(cni_force_pool_name), "false", "nv-ipam.conf: a network config must name its pool" },
	{ "cni-daemon-socket", F_STR, F(cni_daemon_socket), "unix:///var/lib/cni/nv-ipam/daemon.sock", "nv-ipam.conf: kept for the reference's shim; nv-ipam has no daemon" },
	{ "cni-daemon-call-timeout", F_INT, F(cni_daemon_call_timeout), "5", "nv-ipam.conf: kept for the reference's shim" },
	{ "bind-address", F_IGNORED, 0, NULL, "the reference daemon's gRPC socket: nv-ipam has no daemon, taken and ignored" },
	{ "v", F_INT, F(v), "0", "log verbosity (-v too)" },
	{ "logging-format", F_STR, F(logging_format), "text", "log format: text (klog, on stderr) or json (on stdout)" },
	{ "vmodule", F_IGNORED, 0, NULL, "taken and ignored" },
	{ "log-flush-frequency", F_IGNORED, 0, NULL, "taken and ignored (every line is written at once)" },
	{ "log-json-info-buffer-size", F_IGNORED, 0, NULL, "taken and ignored" },
	{ "log-json-split-stream", F_IGNORED_BOOL, 0, NULL, "taken and ignored" },
	{ "feature-gates", F_IGNORED, 0, NULL, "taken and ignored" },
	{ "released-ip-cooldown", F_DURATION, F(released_ip_cooldown_ms), "0", "an address released less than this ago is handed out again only when no other is free (nv-ipam.conf: releasedIPCooldownSeconds, rounded up; at most 24h)" },
	{ "version", F_BOOL, F(version), "false", "print the version and exit" },
	{ "help", F_BOOL, F(help), "false", "this text" },
};

static int set(const struct flag *f, const char *name, const char *val, struct node_flags *nf,
	       FILE *err)
{
	/* The field is reached by its offset; memcpy() stores it whatever the
	 * compiler knows of that address's alignment (clang's -Wcast-align). */
	char *field = (char *)nf + f->off;
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
	case F_IGNORED_BOOL:
		if (nf->n_ignored < (int)(sizeof(nf->ignored) / sizeof(nf->ignored[0])))
			nf->ignored[nf->n_ignored++] = f->name;
		return 0;
	}
	fprintf(err, "ipam-node: invalid argument \"%s\" for \"--%s\" flag: %s\n", val, name,
		f->kind == F_DURATION ? "a duration such as 30s, 1m or 1h30m"
		: f->kind == F_BOOL   ? "true or false"
				      : "a whole number from 0");
	return -EINVAL;
}

int node_flags_parse(int argc, const char *const *argv, struct node_flags *ret, FILE *err)
{
	struct node_flags nf = {
		.v = 0,
		.logging_format = "text",
		.store_file = "/var/lib/cni/nv-ipam/store",
		.store_handover = true,
		.cni_bin_dir = "/opt/cni/bin",
		.cni_conf_dir = "/etc/cni/net.d/nv-ipam.d",
		.cni_nv_ipam_bin_file = "/nv-ipam",
		.cni_daemon_socket = "unix:///var/lib/cni/nv-ipam/daemon.sock",
		.cni_daemon_call_timeout = 5,
		.cni_log_file = "/var/log/nv-ipam-cni.log",
		.cni_log_level = "info",
		.ippools_namespace = "kube-system",
		.metrics_bind_address = ":8080",
		.health_probe_bind_address = ":8081",
		.stale_check_interval_ms = 60000,
		.stale_check_count = 3,
	};

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *name, *eq, *val = NULL;
		const struct flag *f = NULL;
		char buf[64];
		size_t len;

		if (strncmp(arg, "--", 2) == 0 && arg[2])
			name = arg + 2;
		else if (arg[0] == '-' && arg[1] == 'v' && (!arg[2] || arg[2] == '='))
			name = arg + 1;
		else if (arg[0] == '-' && arg[1] == 'h' && !arg[2])
			name = "help";
		else {
			fprintf(err, "ipam-node: %s \"%s\"\n",
				arg[0] == '-' ? "unknown shorthand flag in" : "takes no arguments, got", arg);
			return -EINVAL;
		}
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		if (len < sizeof(buf)) {
			memcpy(buf, name, len);
			buf[len] = '\0';
			for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
				if (strcmp(flags[k].name, buf) == 0)
					f = &flags[k];
		}
		if (!f) {
			fprintf(err, "ipam-node: unknown flag: --%.*s\n", (int)len, name);
			return -EINVAL;
		}
		if (eq) {
			val = eq + 1;
		} else if (f->kind == F_BOOL || f->kind == F_IGNORED_BOOL) {
			val = "true";
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			fprintf(err, "ipam-node: flag needs an argument: --%s\n", f->name);
			return -EINVAL;
		}
		if (set(f, f->name, val, &nf, err) < 0)
			return -EINVAL;
	}
	*ret = nf;
	return 0;
}

void node_flags_usage(FILE *out)
{
	fputs("Usage: ipam-node --node-name=NODE [flags]\n"
	      "\n"
	      "nv-ipam's node program, as the NVIDIA Network Operator's nv-ipam-node DaemonSet runs\n"
	      "it: installs nv-ipam and nv-ipam-tool into the CNI bin directory, writes\n"
	      "nv-ipam.conf, keeps the node pool file in sync with the IPPool and CIDRPool status\n"
	      "for this node, releases the addresses of pods that are gone, and serves /healthz,\n"
	      "/readyz and /metrics. nv-ipam allocates without it: nothing of a pod's start waits\n"
	      "for it. Details: docs/ipam-node.md.\n"
	      "\n"
	      "Flags (--name=value or --name value):\n", out);
	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		const struct flag *f = &flags[k];

		fprintf(out, "  --%-36s %s", f->name, f->help);
		if (f->def && f->kind != F_BOOL)
			fprintf(out, " (default %s)", f->def);
		fputc('\n', out);
	}
	fputs("\nA start that fails changes nothing on the node: the flags, the install source, the\n"
	      "directories, the bind addresses and one answer of the API server are checked first.\n"
	      "SIGTERM or SIGINT stops it within 10 s, the store handed over. Exit status: 0 when\n"
	      "stopped, 1 on a failure at start (a check, the locks, the install, nv-ipam.conf) or\n"
	      "when the store could not be handed over at stop (the log names the nv-ipam-tool\n"
	      "handover command to run).\n",
	      out);
}
