#!/usr/bin/env bash
# The kube suite: ipam-node, its API client and its image against a real kube-apiserver
# (RBAC on) and a one-node cluster, both from ../shared/k8s, brought up once for every
# case and taken down at the end. TAP on stdout.
#
# Usage: run.sh BUILD_DIR [CASE...]     (cases: the tests/kube/case-*.sh names; default all,
#                                         daemonset-end only after daemonset-start,
#                                         podnet not between daemonset-start and -end,
#                                         sandbox-lost, multirail and uninstall after
#                                         controller-deploy)
# Environment:
#   KUBE_KIT     the kit (default: ../shared/k8s beside the source tree)
#   KUBE_DIR     the kit's directory (default: BUILD_DIR/kube-kit; its bin/ is kept by
#                "k8s down", so the next run skips unpacking)
#   K8S_NICE     nice level of the cluster's components (default 5)
#   KUBE_KEEP    1: leave the cluster up at the end (to run cases again while developing)
# Without the kit, or not as root (the node needs root), it plans no test ("1..0 # SKIP",
# the kit's absence as "NOT RUN: ..." for tests/run-all.sh) and exits 0: meson reads a TAP
# test's exit status 77 as an error, not a skip.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [CASE...]}" && pwd)
shift
. "$top/tests/shared.sh"
KIT=${KUBE_KIT:-$(shared_path k8s)}
DIR=${KUBE_DIR:-$build/kube-kit}
NS=nvidia-network-operator
export K8S_NICE=${K8S_NICE:-5}
probe=$build/tests/kube/api-probe

[ -x "$KIT/k8s" ] || shared_not_run_tap "$KIT" k8s "Kubernetes kit"
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP the kube suite needs root (a node of the kit)"
	exit 0
fi
for p in jq etcdctl unshare; do
	command -v "$p" >/dev/null || { echo "Bail out! $p missing (tests/install-deps.sh test)"; exit 1; }
done

# daemonset-start leaves a pod's DEL lost and daemonset-end waits for the cleaner to free
# its address (4 minutes with the operator's settings): the other cases run meanwhile.
# controller-deploy and podnet need the kubelet daemonset-end starts again (podnet puts the
# node's bin dir and cluster network back as they were at its end); sandbox-lost,
# multirail and uninstall, the DaemonSet controller-deploy leaves running (uninstall
# removes it: last).
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(daemonset-start api-client node controller-election controller-churn
	controller-webhook daemonset-end podnet controller-deploy sandbox-lost multirail uninstall)

work=$(mktemp -d /tmp/kube-suite.XXXXXX)
# The DaemonSet's nv-ipam.conf sends nv-ipam's log to /var/log/nv-ipam-cni.log, the
# machine's (the kit's node shares /var/log): removed at the end when the suite made it.
nvlog=/var/log/nv-ipam-cni.log
nvlog_existed=$([ -e "$nvlog" ] && echo 1 || echo 0)
started=$SECONDS
. "$top/tests/kube/lib.sh"

down() {
	local rc=$?
	if [ "${KUBE_KEEP:-0}" = 1 ]; then
		note "the cluster stays up (KUBE_KEEP=1): $KIT/k8s down $DIR"
	else
		note "taking the cluster down"
		"$KIT/k8s" down "$DIR" >>"$work/kit.log" 2>&1 ||
			{ echo "# k8s down failed:"; tail -5 "$work/kit.log" | sed 's/^/# /'; }
	fi
	# The cases' logs, for a post-mortem (CI keeps DIR/logs).
	rm -rf "$DIR/logs/kube-suite"
	mkdir -p "$DIR/logs/kube-suite"
	find "$work" -maxdepth 2 -name '*.log' -exec cp {} "$DIR/logs/kube-suite/" \; 2>/dev/null
	rm -rf "$work"
	[ "$nvlog_existed" = 1 ] || rm -f "$nvlog"
	note "suite time: $((SECONDS - started)) s"
	exit $rc
}
trap down EXIT
trap 'exit 130' INT TERM

note "bringing the cluster up in $DIR"
if ! "$KIT/k8s" up-node "$DIR" >>"$work/kit.log" 2>&1; then
	echo "Bail out! k8s up-node failed:"
	tail -20 "$work/kit.log" | sed 's/^/# /'
	exit 1
fi
note "cluster up after $((SECONDS - started)) s"
kc apply -f "$top/tests/kube/crds.yaml" >/dev/null &&
	printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$NS" | kc apply -f - >/dev/null &&
	wait_until 30 eval 'kc get ippools,cidrpools -n "$NS" >/dev/null 2>&1' ||
	{ echo "Bail out! the CRDs are not served"; exit 1; }

# Clients outside a pod that use a service account's token files (api-probe
# --in-cluster, ipam-node under in_pod) find the API here, as a pod's do in its variables.
export KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT
KUBERNETES_SERVICE_PORT=$(api_port)
for c in "${cases[@]}"; do
	case_started=$SECONDS
	note "case $c"
	. "$top/tests/kube/case-$c.sh"
	note "case $c: $((SECONDS - case_started)) s"
done
echo "1..$t_n"
[ "$t_failed" -eq 0 ]
