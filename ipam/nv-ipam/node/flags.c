/* ipam-node's command line: the reference ipam-node's flags, as its DaemonSet passes them */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/nv-ipam/daemon/flags.h"
#include "ipam/nv-ipam/node/flags.h"
#include "ipam/nv-ipam/plugin/config.h"
#include "ipam/nv-ipam/store/store.h"

#define F(field, ctype) DAEMON_FIELD(struct node_flags, field, ctype)

static const struct daemon_flag flags[] = {
	{ "node-name", DF_STR, F(node_name, const char *), NULL, "the node this runs on (required; the DaemonSet gives spec.nodeName)" },
	{ "ippools-namespace", DF_STR, F(ippools_namespace, const char *), "kube-system", "the namespace of the IPPool and CIDRPool objects" },
	{ "store-file", DF_STR, F(store_file, const char *), NVIPAM_DEFAULT_STORE_FILE, "nv-ipam's allocation store on the node (written into nv-ipam.conf)" },
	{ "store-handover", DF_BOOL, F(store_handover, bool), "true", "on stop, write the store in the reference nv-ipam daemon's format for it to start on (nv-ipam answers code 11 until ipam-node starts again); false: the store stays ours, and the reference daemon starts only after nv-ipam-tool handover" },
	{ "kubeconfig", DF_STR, F(kubeconfig, const char *), NULL, "a kubeconfig, outside a pod (else $KUBECONFIG, the pod's service account, ~/.kube/config)" },
	{ "metrics-bind-address", DF_STR, F(metrics_bind_address, const char *), ":8080", "where /metrics is served ([HOST]:PORT; 0: not at all)" },
	{ "health-probe-bind-address", DF_STR, F(health_probe_bind_address, const char *), ":8081", "where /healthz and /readyz are served ([HOST]:PORT; 0: not at all)" },
	{ "stale-ip-check-interval", DF_DURATION, F(stale_check_interval_ms, long), "1m", "how often the cleaner lists this node's pods (0: no cleaner)" },
	{ "stale-ip-check-count-before-release", DF_INT, F(stale_check_count, long), "3", "an address whose pod is gone is released once missed more than this many times in a row" },
	{ "cni-bin-dir", DF_STR, F(cni_bin_dir, const char *), "/opt/cni/bin", "where nv-ipam and nv-ipam-tool are installed" },
	{ "cni-nv-ipam-bin-file", DF_STR, F(cni_nv_ipam_bin_file, const char *), "/nv-ipam", "the nv-ipam binary to install (nv-ipam-tool is taken from beside it)" },
	{ "cni-skip-nv-ipam-binary-copy", DF_BOOL, F(cni_skip_binary_copy, bool), "false", "install no binary" },
	{ "cni-skip-nv-ipam-config-creation", DF_BOOL, F(cni_skip_config_creation, bool), "false", "write no nv-ipam.conf" },
	{ "cni-conf-dir", DF_STR, F(cni_conf_dir, const char *), NVIPAM_DEFAULT_CONF_DIR, "where nv-ipam.conf and the node pool file (node-pools.json) are written" },
	{ "cni-log-file", DF_STR, F(cni_log_file, const char *), "/var/log/nv-ipam-cni.log", "nv-ipam.conf: nv-ipam's log file" },
	{ "cni-log-level", DF_STR, F(cni_log_level, const char *), "info", "nv-ipam.conf: nv-ipam's log level" },
	{ "cni-force-pool-name", DF_BOOL, F(cni_force_pool_name, bool), "false", "nv-ipam.conf: a network config must name its pool" },
	{ "cni-daemon-socket", DF_STR, F(cni_daemon_socket, const char *), "unix:///var/lib/cni/nv-ipam/daemon.sock", "nv-ipam.conf: kept for the reference's shim; nv-ipam has no daemon" },
	{ "cni-daemon-call-timeout", DF_INT, F(cni_daemon_call_timeout, long), "5", "nv-ipam.conf: kept for the reference's shim" },
	{ "bind-address", DF_IGNORED, 0, NULL, "the reference daemon's gRPC socket: nv-ipam has no daemon, taken and ignored" },
	DAEMON_LOG_FLAGS(struct node_flags),
	{ "log-json-split-stream", DF_IGNORED_BOOL, 0, NULL, "taken and ignored" },
	{ "feature-gates", DF_IGNORED, 0, NULL, "taken and ignored" },
	{ "released-ip-cooldown", DF_DURATION, F(released_ip_cooldown_ms, long), "0", "an address released less than this ago is handed out again only when no other is free (nv-ipam.conf: releasedIPCooldownSeconds, rounded up; at most 24h)" },
	DAEMON_INFO_FLAGS(struct node_flags),
};

static const struct daemon_cmdline cmdline = {
	.usage_head = "Usage: ipam-node --node-name=NODE [flags]\n"
		      "\n"
		      "nv-ipam's node program, as the NVIDIA Network Operator's nv-ipam-node DaemonSet runs\n"
		      "it: installs nv-ipam and nv-ipam-tool into the CNI bin directory, writes\n"
		      "nv-ipam.conf, keeps the node pool file in sync with the IPPool and CIDRPool status\n"
		      "for this node, releases the addresses of pods that are gone, and serves /healthz,\n"
		      "/readyz and /metrics. nv-ipam allocates without it: nothing of a pod's start waits\n"
		      "for it. Details: docs/ipam-node.md.\n"
		      "\n"
		      "Flags (--name=value or --name value):\n",
	.usage_tail = "\nA start that fails changes nothing on the node: the flags, the install source, the\n"
		      "directories, the bind addresses and one answer of the API server are checked first.\n"
		      "SIGTERM or SIGINT stops it within 10 s, the store handed over. Exit status: 0 when\n"
		      "stopped, 1 on a failure at start (a check, the locks, the install, nv-ipam.conf) or\n"
		      "when the store could not be handed over at stop (the log names the nv-ipam-tool\n"
		      "handover command to run).\n",
	.prog = "ipam-node",
	DAEMON_CMDLINE_OF(struct node_flags, flags),
	.name_width = 36,
};

int node_flags_parse(int argc, const char *const *argv, struct node_flags *ret, FILE *err)
{
	*ret = (struct node_flags){ 0 };
	return daemon_flags_parse(&cmdline, argc, argv, ret, err);
}
