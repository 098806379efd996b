#!/usr/bin/env bash
# Benchmarks ipam-node as the Network Operator runs it: the nv-ipam-node DaemonSet of
# conf-examples/nv-ipam/deploy/ (our image) on a one-node cluster of ../shared/k8s. Its
# process's CPU time and memory (from /proc: utime+stime, VmRSS, VmHWM) are sampled every
# second, first at idle, then during a churn of pods through Multus (macvlan + nv-ipam,
# every pod's address from the pool the DaemonSet keeps in sync): PODS pods created at
# once, waited for, deleted, waited for. Figures are printed, not asserted (root).
#
# Usage: run-ipam-node.sh BUILD_DIR
# Environment: PODS (default 100), IDLE (seconds, default 60), KUBE_KIT, KUBE_DIR (as the
#   kube suite's), K8S_NICE (default 5).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
. "$top/tests/shared.sh"
KIT=${KUBE_KIT:-$(shared_path k8s)}
DIR=${KUBE_DIR:-$build/kube-kit}
NS=nvidia-network-operator
pods=${PODS:-100}
idle=${IDLE:-60}
export K8S_NICE=${K8S_NICE:-5}
probe=$build/tests/kube/api-probe
[ -x "$KIT/k8s" ] || shared_not_run "$KIT" k8s "Kubernetes kit"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root" >&2; exit 77; }

work=$(mktemp -d /tmp/ipam-node-bench.XXXXXX)
. "$top/tests/kube/lib.sh"
master=kbm$((RANDOM % 10000))
nvlog_existed=$([ -e /var/log/nv-ipam-cni.log ] && echo 1 || echo 0)
cleanup() {
	"$KIT/k8s" down "$DIR" >>"$work/kit.log" 2>&1
	ip link del "$master" 2>/dev/null
	[ "$nvlog_existed" = 1 ] || rm -f /var/log/nv-ipam-cni.log
	rm -rf "$work"
}
trap cleanup EXIT

echo "cluster up ..."
"$KIT/k8s" up-node "$DIR" >>"$work/kit.log" 2>&1 || { tail "$work/kit.log"; exit 1; }
kc apply -f "$top/tests/kube/crds.yaml" >/dev/null
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$NS" | kc apply -f - >/dev/null
wait_until 30 eval 'kc get ippools -n "$NS" >/dev/null 2>&1'
tag=bench-$$
TAG=$tag ninja -C "$build" image-nv-ipam >"$work/image.log" 2>&1 &&
	podman save -o "$work/img.tar" "localhost/nv-ipam:$tag" >/dev/null 2>&1 &&
	ctr --address "$DIR/node/run/containerd/containerd.sock" -n k8s.io images import "$work/img.tar" >/dev/null ||
	{ echo "image build or import failed"; tail "$work/image.log"; exit 1; }
podman rmi "localhost/nv-ipam:$tag" >/dev/null 2>&1
kc apply -f "$top/conf-examples/nv-ipam/deploy/nv-ipam-node-rbac.yaml" >/dev/null
sed "s|image: registry.example.com/cni-rdma/nv-ipam:0.1.0|image: localhost/nv-ipam:$tag|" \
	"$top/conf-examples/nv-ipam/deploy/nv-ipam-node-ds.yaml" | kc apply -f - >/dev/null
printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: bpool, namespace: %s}\nspec: {subnet: "192.168.184.0/22", perNodeBlockSize: 256, gateway: "192.168.184.1"}\n' "$NS" |
	kc apply -f - >/dev/null
pool_status IPPool bpool "{\"allocations\":[{\"nodeName\":\"${K8S_NODE:-node1}\",\"startIP\":\"192.168.184.1\",\"endIP\":\"192.168.185.0\"}]}"
ip link add "$master" type veth peer name "${master}p" && ip link set "$master" up && ip link set "${master}p" up
install -m 0755 "$build/plugins/macvlan/macvlan" "$DIR/node/opt/cni/bin/macvlan"
printf 'apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata: {name: bmacvlan, namespace: default}\nspec:\n  config: %s\n' \
	"'{\"cniVersion\":\"0.3.1\",\"name\":\"bmacvlan\",\"type\":\"macvlan\",\"master\":\"$master\",\"mode\":\"bridge\",\"ipam\":{\"type\":\"nv-ipam\",\"poolName\":\"bpool\"}}'" |
	kc apply -f - >/dev/null

# The DaemonSet's ipam-node: its container's first process.
node_pid() {
	local id
	id=$(kc get pods -n "$NS" -l name=nv-ipam-node -o 'jsonpath={.items[0].status.containerStatuses[0].containerID}' 2>/dev/null)
	id=${id#containerd://}
	[ -n "$id" ] && cat "$DIR/node/run/containerd/io.containerd.runtime.v2.task/k8s.io/$id/init.pid" 2>/dev/null
}
wait_until 120 eval '[ -n "$(node_pid)" ]' || { echo "the DaemonSet's pod did not start"; exit 1; }
pid=$(node_pid)
wait_until 30 eval 'grep -q "ready: the node pool file is in sync" "$DIR"/logs/pods/"$NS"_nv-ipam-node-*/nv-ipam-node/*.log'
tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }

# sample SECONDS-or-CMD: RSS every second while a phase runs; prints "cpu_s max_rss_kb avg_rss_kb secs".
phase() {
	local t0 c0 max=0 sum=0 n=0 r
	t0=$(date +%s%N)
	c0=$(cpu_ticks "$pid")
	"$@" &
	local job=$!
	while kill -0 "$job" 2>/dev/null; do
		r=$(rss_kb "$pid")
		[ "$r" -gt "$max" ] && max=$r
		sum=$((sum + r)); n=$((n + 1))
		sleep 1
	done
	wait "$job"
	echo "$(awk -v t="$(($(cpu_ticks "$pid") - c0))" -v k="$tck" 'BEGIN {printf "%.2f", t / k}') $max $((sum / (n ? n : 1))) $((($(date +%s%N) - t0) / 1000000000))"
}

churn() {
	local i
	{
		for i in $(seq "$pods"); do
			printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: bench-%d\n  namespace: default\n  annotations: {k8s.v1.cni.cncf.io/networks: bmacvlan}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers: [{name: c, image: "busybox:local", command: [sleep, "3600"]}]\n' "$i"
		done
	} | kc apply -f - >/dev/null
	wait_until 900 eval '[ "$(kc get pods -n default -o name 2>/dev/null | grep -c bench-)" = "$pods" ] && ! kc get pods -n default --no-headers 2>/dev/null | grep bench- | grep -qv " Running "'
	kc delete pods --all -n default --wait=true >/dev/null
}

echo "idle, ${idle} s ..."
read -r idle_cpu idle_max idle_avg idle_s < <(phase sleep "$idle")
echo "churn of $pods pods ..."
read -r churn_cpu churn_max churn_avg churn_s < <(phase churn)
writes=$("$KIT/k8s" netns "$DIR" "$NS" "$(kc get pods -n "$NS" -l name=nv-ipam-node -o 'jsonpath={.items[0].metadata.name}')" \
	curl -s 127.0.0.1:8080/metrics | awk '$1 == "nv_ipam_node_pool_sync_writes_total" {print $2}')
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
printf '\nipam-node (the DaemonSet of conf-examples/nv-ipam/deploy/, our image), %s, load %s\n' "$(date -u +%F)" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-30s %8s %14s %14s %8s\n' phase "CPU s" "RSS avg (MiB)" "RSS max (MiB)" seconds
printf '%-30s %8s %14s %14s %8s\n' idle "$idle_cpu" "$(mib "$idle_avg")" "$(mib "$idle_max")" "$idle_s"
printf '%-30s %8s %14s %14s %8s\n' "churn: $pods pods up and down" "$churn_cpu" "$(mib "$churn_avg")" \
	"$(mib "$churn_max")" "$churn_s"
printf 'peak resident (VmHWM): %s MiB; CPU during the churn: %s%% of a core; pool file writes: %s\n' \
	"$(mib "$(hwm_kb "$pid")")" "$(awk -v c="$churn_cpu" -v s="$churn_s" 'BEGIN {printf "%.2f", 100 * c / s}')" \
	"${writes:-?}"
