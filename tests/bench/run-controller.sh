#!/usr/bin/env bash
# Benchmarks ipam-controller at cluster scale against a real kube-apiserver (../shared/k8s,
# up-api: no node needed, no root): NODES Node objects (each with a dozen labels, as a GPU
# node has), then 8 pools (4 IPPools, 4 CIDRPools; half select nodes by label), then the
# controller started with the operator's flags. Printed: the time from its start to every
# pool's status complete (each matching node placed), its peak and final resident memory,
# its CPU time, the API requests it made (its own counters, and the API server's by verb and
# resource, before and after); then the same after CHURN nodes are added at once and after
# they are deleted. Figures are printed, not asserted.
#
# Usage: run-controller.sh [IPAM_CONTROLLER]   (default build/ipam/nv-ipam/controller/ipam-controller)
# Environment: NODES (1000), CHURN (100), KUBE_KIT (../shared/k8s), BENCH_DIR (a directory
#   for the kit's cluster, kept between runs for its unpacked binaries; default
#   build/bench-kit), K8S_NICE (5).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
ctl=$(realpath "${1:-$top/build/ipam/nv-ipam/controller/ipam-controller}")
kit=${KUBE_KIT:-$top/../shared/k8s}
dir=${BENCH_DIR:-$top/build/bench-kit}
nodes=${NODES:-1000}
churn=${CHURN:-100}
ns=nvidia-network-operator
export K8S_NICE=${K8S_NICE:-5}
[ -x "$kit/k8s" ] || { echo "SKIP: no Kubernetes kit at $kit" >&2; exit 77; }
for p in jq curl awk; do command -v "$p" >/dev/null || { echo "error: $p missing" >&2; exit 2; }; done

tmp=$(mktemp -d /tmp/ctl-bench.XXXXXX)
cpid=
cleanup() {
	[ -z "$cpid" ] || kill -TERM "$cpid" 2>/dev/null || true
	"$kit/k8s" down "$dir" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$kit/k8s" up-api "$dir" >"$tmp/kit.log" 2>&1 || { tail -5 "$tmp/kit.log"; exit 1; }
port=$(sed -n 's/^apiserver=//p' "$dir/state/ports")
api=https://127.0.0.1:$port
kc() { "$dir/bin/kubectl" --kubeconfig "$dir/admin.kubeconfig" "$@"; }
# curl as the cluster's admin; -K FILE sends many requests on one connection (each
# request of the file names the credentials again: "next" starts afresh).
acurl() { curl -sS --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" "$@"; }
creds() { printf 'cacert = "%s"\ncert = "%s"\nkey = "%s"\n' "$dir/pki/ca.crt" "$dir/pki/admin.crt" "$dir/pki/admin.key"; }
kc apply -f "$top/tests/kube/crds.yaml" >/dev/null
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$ns" | kc apply -f - >/dev/null
until kc get ippools,cidrpools -n "$ns" >/dev/null 2>&1; do sleep 0.2; done

# make_nodes FROM TO: Node objects n-FROM..n-TO, a dozen labels each, one connection.
make_nodes() {
	local i
	: >"$tmp/nodes.cfg"
	for i in $(seq "$1" "$2"); do
		printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n-%04d","labels":{"kubernetes.io/hostname":"n-%04d","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","node.kubernetes.io/instance-type":"dgx-h100","topology.kubernetes.io/zone":"z%d","rack":"r%d","nvidia.com/gpu.present":"true","nvidia.com/gpu.count":"8","nvidia.com/gpu.product":"H100-SXM5-80GB","network.nvidia.com/rails":"8","feature.node.kubernetes.io/rdma.capable":"true","tier":"%s"}}}\n' \
			"$i" "$i" $((i % 4)) $((i % 10)) "$([ $((i % 2)) = 0 ] && echo a || echo b)" >"$tmp/node-$i.json"
		[ "$i" = "$1" ] || echo next >>"$tmp/nodes.cfg"
		creds >>"$tmp/nodes.cfg"
		printf 'url = "%s/api/v1/nodes"\ndata = "@%s"\nheader = "Content-Type: application/json"\noutput = "/dev/null"\n' \
			"$api" "$tmp/node-$i.json" >>"$tmp/nodes.cfg"
	done
	acurl -K "$tmp/nodes.cfg"
	rm -f "$tmp"/node-*.json
}
# delete_nodes FROM TO
delete_nodes() {
	local i
	: >"$tmp/del.cfg"
	for i in $(seq "$1" "$2"); do
		[ "$i" = "$1" ] || echo next >>"$tmp/del.cfg"
		creds >>"$tmp/del.cfg"
		printf 'url = "%s/api/v1/nodes/n-%04d"\nrequest = "DELETE"\noutput = "/dev/null"\n' "$api" "$i" >>"$tmp/del.cfg"
	done
	acurl -K "$tmp/del.cfg"
}
t0=$(date +%s%N)
make_nodes 1 "$nodes"
echo "# $nodes nodes created in $((($(date +%s%N) - t0) / 1000000)) ms"
sel_a='nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: tier, operator: In, values: [a]}]}]}'
sel_r='nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: NotIn, values: [r0, r1]}]}]}'
{
	printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: ip%d, namespace: %s}\nspec: {subnet: "10.%d.0.0/16", perNodeBlockSize: 32, gateway: "10.%d.0.1"%s}\n---\n' \
		1 "$ns" 101 101 "" 2 "$ns" 102 102 ", $sel_a" 3 "$ns" 103 103 ", $sel_r" 4 "$ns" 104 104 ", exclusions: [{startIP: 10.104.0.1, endIP: 10.104.3.255}]"
	printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: CIDRPool\nmetadata: {name: cp%d, namespace: %s}\nspec: {cidr: "10.%d.0.0/12", perNodeNetworkPrefix: 24, gatewayIndex: 1%s}\n---\n' \
		1 "$ns" 112 "" 2 "$ns" 128 ", $sel_a" 3 "$ns" 144 ", $sel_r" 4 "$ns" 160 ", perNodeExclusions: [{startIndex: 200, endIndex: 254}]"
} | kc apply -f - >/dev/null
# How many nodes each pool must place: all, tier a (half), racks r2..r9 (80 %).
want() { # NODE_COUNT: "ip1=N ip2=N ..." sorted
	local n=$1 a=0 r=0 i
	for i in $(seq 1 "$n"); do
		[ $((i % 2)) = 0 ] && a=$((a + 1))
		[ $((i % 10)) -ge 2 ] && r=$((r + 1))
	done
	echo "cp1=$n cp2=$a cp3=$r cp4=$n ip1=$n ip2=$a ip3=$r ip4=$n"
}
# The statuses' sizes, from the controller's own log lines (no polling of the API).
have() { sed -n 's/.*"pool status updated" kind="[A-Za-z]*" pool="\([a-z0-9]*\)".* allocations="\([0-9]*\)".*/\1=\2/p' "$tmp/ctl.log" |
	awk -F= '{ last[$1] = $2 } END { for (p in last) print p "=" last[p] }' | sort | tr '\n' ' ' | sed 's/ $//'; }
wait_for() { # WANT: until the last written sizes are WANT; prints the milliseconds from $1
	local start=$1 w=$2
	until [ "$(have)" = "$w" ]; do sleep 0.05; done
	echo $((($(date +%s%N) - start) / 1000000))
}
metrics() { curl -s "127.0.0.1:$mport/metrics"; }
server_counts() { # verb resource count, the API server's requests so far
	acurl "$api/metrics" | awk -F'[{},]' '/^apiserver_request_total\{/ {
		verb = ""; res = ""; sub_ = ""
		for (i = 2; i < NF; i++) { split($i, kv, "="); gsub(/"/, "", kv[2])
			if (kv[1] == "verb") verb = kv[2]; if (kv[1] == "resource") res = kv[2]; if (kv[1] == "subresource") sub_ = kv[2] }
		n[verb " " res (sub_ ? "/" sub_ : "")] += $NF } END { for (k in n) print k, n[k] }' | sort
}
server_diff() { # BEFORE AFTER: the requests between two counts, for the controller's resources
	join -a 2 -e 0 -o 0,1.2,2.2 <(awk '{print $1 "_" $2, $3}' "$1" | sort) <(awk '{print $1 "_" $2, $3}' "$2" | sort) |
		awk '{ d = $3 - $2; split($1, k, "_"); if (d > 0 && k[2] ~ /^(nodes|ippools|cidrpools|events|leases)/) printf "    %-8s %-22s %d\n", k[1], k[2], d }'
}
report() { # TITLE MS
	local m
	m=$(metrics)
	echo "$1: $2 ms"
	echo "  controller: peak RSS $(awk '/^VmHWM/ {print $2, $3}' "/proc/$cpid/status"), RSS now $(awk '/^VmRSS/ {print $2, $3}' "/proc/$cpid/status"), CPU $(awk '$1 == "process_cpu_seconds_total" {print $2}' <<<"$m") s"
	echo "  its requests: $(awk '$1 ~ /^nv_ipam_controller_api_requests_total/ && $2 > 0 { sub(/.*verb="/, "", $1); sub(/".*/, "", $1); printf "%s %s, ", $1, $2 }' <<<"$m")lists $(awk '$1 ~ /^nv_ipam_controller_lists_total/ {s += $2} END {print s}' <<<"$m"), watch events $(awk '$1 ~ /^nv_ipam_controller_watch_events_total/ {s += $2} END {print s}' <<<"$m")"
	echo "  passes $(awk '$1 == "nv_ipam_controller_reconcile_passes_total" {print $2}' <<<"$m"), pools carved $(awk '$1 == "nv_ipam_controller_pools_carved_total" {print $2}' <<<"$m"), status writes $(awk '$1 == "nv_ipam_controller_status_writes_total" {print $2}' <<<"$m"), conflicts $(awk '$1 == "nv_ipam_controller_status_conflicts_total" {print $2}' <<<"$m"), last pass $(awk '$1 == "nv_ipam_controller_last_pass_seconds" {printf "%.1f", $2 * 1000}' <<<"$m") ms"
}

server_counts >"$tmp/s0"
pport=$((20000 + RANDOM % 20000)) mport=$((pport + 1))
t0=$(date +%s%N)
"$ctl" --kubeconfig "$dir/admin.kubeconfig" --leader-elect=true --leader-elect-namespace="$ns" \
	--ippools-namespace="$ns" --health-probe-bind-address=127.0.0.1:$pport \
	--metrics-bind-address=127.0.0.1:$mport >"$tmp/ctl.log" 2>&1 &
cpid=$!
ms=$(wait_for "$t0" "$(want "$nodes")")
server_counts >"$tmp/s1"
report "$nodes nodes x 8 pools: from the controller's start to every status complete" "$ms"
echo "  the API server's count of requests meanwhile (leases include the API server's own):"
server_diff "$tmp/s0" "$tmp/s1"

t0=$(date +%s%N)
make_nodes $((nodes + 1)) $((nodes + churn))
ms=$(wait_for "$t0" "$(want $((nodes + churn)))")
server_counts >"$tmp/s2"
report "$churn nodes more (created at once): to every status complete" "$ms"
server_diff "$tmp/s1" "$tmp/s2"

t0=$(date +%s%N)
delete_nodes $((nodes + 1)) $((nodes + churn))
ms=$(wait_for "$t0" "$(want "$nodes")")
server_counts >"$tmp/s3"
report "the $churn nodes deleted: to every status without them" "$ms"
server_diff "$tmp/s2" "$tmp/s3"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
