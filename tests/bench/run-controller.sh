#!/usr/bin/env bash
# Benchmarks ipam-controller at cluster scale against a real kube-apiserver (../shared/k8s,
# up-api: no node needed, no root): NODES Node objects (each with a dozen labels, as a GPU
# node has), POSTed over JOBS connections at once, then POOLS pools (half IPPools, half
# CIDRPools; half of them select nodes by label), sized for the nodes, then the controller
# started with the operator's flags. Printed: the time from its start to every pool's status
# complete (each matching node placed), its peak and current resident memory, its CPU time,
# its requests (its own counters, the API server's by verb and resource) and the status
# writes of each pool; then the same after CHURN nodes join at once and after they leave,
# after one node joins and leaves alone (one write to each pool it matches, none to the
# others), and a leader failover: a standby started, the leader killed with SIGKILL, the time
# until the standby leads and until every status is complete again, and what it wrote.
# Every status is also read back from the API and checked: each node that a pool selects
# placed exactly once, no other node.
#
# Usage: run-controller.sh [IPAM_CONTROLLER]   (default build/ipam/nv-ipam/controller/ipam-controller)
# Environment: NODES (1000), POOLS (8, even), CHURN (100), JOBS (8 connections creating
#   nodes), KUBE_KIT (../shared/k8s), BENCH_DIR (a directory for the kit's cluster, kept
#   between runs for its unpacked binaries; default build/bench-kit), K8S_NICE (5),
#   TIMEOUT (seconds each step may take, 900), CHECK (1: a failed check is an error, exit
#   1; checked always: every status complete in time and as read back, one write per pool
#   at the start, one per changed pool when the single node joins or leaves, none for the
#   others at each step, at least one per changed pool after the churn (whose nodes may
#   reach the controller over more than one pass), none by the standby), LEASE_FLAGS (more flags for both replicas, e.g. shorter
#   --leader-elect-* timings; default none: the operator's 15 s lease).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
ctl=$(realpath "${1:-$top/build/ipam/nv-ipam/controller/ipam-controller}")
. "$top/tests/shared.sh"
kit=${KUBE_KIT:-$(shared_path k8s)}
dir=${BENCH_DIR:-$top/build/bench-kit}
nodes=${NODES:-1000}
pools=${POOLS:-8}
churn=${CHURN:-100}
jobs=${JOBS:-8}
timeout=${TIMEOUT:-900}
check=${CHECK:-0}
read -ra lease_flags <<<"${LEASE_FLAGS:-}"
ns=nvidia-network-operator
export K8S_NICE=${K8S_NICE:-5}
[ -x "$kit/k8s" ] || shared_not_run "$kit" k8s "Kubernetes kit"
for p in jq curl awk; do command -v "$p" >/dev/null || { echo "error: $p missing" >&2; exit 2; }; done
[ $((pools % 2)) = 0 ] && [ "$pools" -ge 2 ] || { echo "error: POOLS must be even" >&2; exit 2; }

tmp=$(mktemp -d /tmp/ctl-bench.XXXXXX)
cpid= spid= failed=0
cleanup() {
	{ [ -z "$cpid" ] || { kill -KILL "$cpid" && wait "$cpid"; }; } 2>/dev/null || true
	{ [ -z "$spid" ] || { kill -KILL "$spid" && wait "$spid"; }; } 2>/dev/null || true
	"$kit/k8s" down "$dir" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; failed=1; }
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$kit/k8s" up-api "$dir" >"$tmp/kit.log" 2>&1 || { tail -5 "$tmp/kit.log"; exit 1; }
port=$(sed -n 's/^apiserver=//p' "$dir/state/ports")
api=https://127.0.0.1:$port
kc() { "$dir/bin/kubectl" --kubeconfig "$dir/admin.kubeconfig" "$@"; }
acurl() { curl -sS --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" "$@"; }
kc apply -f "$top/tests/kube/crds.yaml" >/dev/null
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$ns" | kc apply -f - >/dev/null
until kc get ippools,cidrpools -n "$ns" >/dev/null 2>&1; do sleep 0.2; done

# Node i's labels: nodes 1..NODES are tier a when even, the churn's are tier b (so that the
# pools selecting tier a do not change when they come and go), node "single" (NODES+CHURN+1)
# is tier a in rack r0 (it joins the pools of every node and of tier a, not those of racks
# r2..r9). Rack: i % 10.
single=$((nodes + churn + 1))
# curl_all CFG...: each file's requests on one connection, the files at once.
curl_all() {
	local f pids=()
	for f in "$@"; do acurl -K "$f" & pids+=($!); done
	for f in "${pids[@]}"; do wait "$f" || return 1; done
}
# nodes_cfg VERB FROM TO: JOBS curl config files ($tmp/req.N) creating or deleting n-FROM..n-TO.
nodes_cfg() {
	rm -f "$tmp"/req.*
	awk -v verb="$1" -v from="$2" -v to="$3" -v n="$nodes" -v single="$single" -v jobs="$jobs" \
	    -v api="$api" -v tmp="$tmp" -v ca="$dir/pki/ca.crt" -v cert="$dir/pki/admin.crt" -v key="$dir/pki/admin.key" 'BEGIN {
		for (i = from; i <= to; i++) {
			f = sprintf("%s/req.%d", tmp, i % jobs)
			name = sprintf("n-%04d", i)
			if (seen[f]++) print "next" > f
			printf "cacert = \"%s\"\ncert = \"%s\"\nkey = \"%s\"\noutput = \"/dev/null\"\nfail-with-body\n", ca, cert, key > f
			if (verb == "DELETE") { printf "url = \"%s/api/v1/nodes/%s\"\nrequest = \"DELETE\"\n", api, name > f; continue }
			tier = (i <= n && i % 2 == 0) || i == single ? "a" : "b"
			rack = i == single ? 0 : i % 10
			printf "url = \"%s/api/v1/nodes\"\nheader = \"Content-Type: application/json\"\n", api > f
			printf "data = \"{\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":\\\"Node\\\",\\\"metadata\\\":{\\\"name\\\":\\\"%s\\\",\\\"labels\\\":{\\\"kubernetes.io/hostname\\\":\\\"%s\\\",\\\"kubernetes.io/os\\\":\\\"linux\\\",\\\"kubernetes.io/arch\\\":\\\"amd64\\\",\\\"node.kubernetes.io/instance-type\\\":\\\"dgx-h100\\\",\\\"topology.kubernetes.io/zone\\\":\\\"z%d\\\",\\\"rack\\\":\\\"r%d\\\",\\\"nvidia.com/gpu.present\\\":\\\"true\\\",\\\"nvidia.com/gpu.count\\\":\\\"8\\\",\\\"nvidia.com/gpu.product\\\":\\\"H100-SXM5-80GB\\\",\\\"network.nvidia.com/rails\\\":\\\"8\\\",\\\"feature.node.kubernetes.io/rdma.capable\\\":\\\"true\\\",\\\"tier\\\":\\\"%s\\\"}}}\"\n", name, name, i % 4, rack, tier > f
		}
	}'
}
nodes_do() { # VERB FROM TO
	nodes_cfg "$@"
	curl_all "$tmp"/req.* || { echo "error: a node request failed" >&2; exit 1; }
}
t0=$(date +%s%N)
nodes_do POST 1 "$nodes"
echo "# $nodes nodes created in $((($(date +%s%N) - t0) / 1000000)) ms ($jobs connections)"

# The pools, sized for every node with room: pool j of each kind has shape (j-1)%4: 0 every
# node, 1 tier a, 2 racks r2..r9, 3 every node with exclusions. CIDRPools first (the larger),
# then IPPools, packed upwards from 10.0.0.0, each aligned to its size.
shape() { echo $(((${1#??} - 1) % 4)); }
bits() { local b=0; while [ $((1 << b)) -lt "$1" ]; do b=$((b + 1)); done; echo "$b"; }
ip4() { echo "$(($1 >> 24 & 255)).$(($1 >> 16 & 255)).$(($1 >> 8 & 255)).$(($1 & 255))"; }
room=$((nodes + churn + 64))
pnp=24; [ $room -le 4000 ] || pnp=26
cbits=$(bits $((room << (32 - pnp)))); [ "$cbits" -ge 20 ] || cbits=20
ibits=$(bits $((room * 32))); [ "$ibits" -ge 16 ] || ibits=16
sel_a='nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: tier, operator: In, values: [a]}]}]}'
sel_r='nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: NotIn, values: [r0, r1]}]}]}'
names=()
cur=$((10 << 24))
{
	for j in $(seq 1 $((pools / 2))); do
		names+=("cp$j")
		case $(shape "cp$j") in
		0) extra= ;; 1) extra=", $sel_a" ;; 2) extra=", $sel_r" ;;
		3) extra=", perNodeExclusions: [{startIndex: $((3 << (30 - pnp))), endIndex: $(((1 << (32 - pnp)) - 2))}]" ;;
		esac
		printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: CIDRPool\nmetadata: {name: cp%d, namespace: %s}\nspec: {cidr: "%s/%d", perNodeNetworkPrefix: %d, gatewayIndex: 1%s}\n---\n' \
			"$j" "$ns" "$(ip4 $cur)" $((32 - cbits)) "$pnp" "$extra"
		cur=$((cur + (1 << cbits)))
	done
	for j in $(seq 1 $((pools / 2))); do
		names+=("ip$j")
		case $(shape "ip$j") in
		0) extra= ;; 1) extra=", $sel_a" ;; 2) extra=", $sel_r" ;;
		3) extra=", exclusions: [{startIP: $(ip4 $((cur + 1))), endIP: $(ip4 $((cur + 1023)))}]" ;;
		esac
		printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: ip%d, namespace: %s}\nspec: {subnet: "%s/%d", perNodeBlockSize: 32, gateway: "%s"%s}\n---\n' \
			"$j" "$ns" "$(ip4 $cur)" $((32 - ibits)) "$(ip4 $((cur + 1)))" "$extra"
		cur=$((cur + (1 << ibits)))
	done
} >"$tmp/pools.yaml"
kc apply -f "$tmp/pools.yaml" >/dev/null
echo "# $pools pools: CIDRPools /$((32 - cbits)) with a /$pnp per node, IPPools /$((32 - ibits)) with 32 addresses per node"

# want CHURN_IN SINGLE_IN: "pool=N ..." sorted, the nodes each pool must place.
want() {
	local top_=$((nodes + $1)) all a r p
	all=$((top_ + $2)) a=$((nodes / 2 + $2)) r=$((top_ - top_ / 10 - (top_ + 9) / 10))
	for p in "${names[@]}"; do
		case $(shape "$p") in 1) echo "$p=$a" ;; 2) echo "$p=$r" ;; *) echo "$p=$all" ;; esac
	done | sort | tr '\n' ' ' | sed 's/ $//'
}
# The statuses' sizes, from the log lines of the controller(s) (no polling of the API).
have() { sed -n 's/.*"pool status updated" kind="[A-Za-z]*" pool="\([a-z0-9]*\)".* allocations="\([0-9]*\)".*/\1=\2/p' "$tmp"/ctl*.log |
	awk -F= '{ last[$1] = $2 } END { for (p in last) print p "=" last[p] }' | sort | tr '\n' ' ' | sed 's/ $//'; }
wait_for() { # START WANT: until the last written sizes are WANT; prints the milliseconds from START
	local start=$1 w=$2
	until [ "$(have)" = "$w" ]; do
		[ $(($(date +%s%N) - start)) -lt $((timeout * 1000000000)) ] || { echo "timeout"; return; }
		[ -z "$cpid" ] || kill -0 "$cpid" 2>/dev/null || { echo "died"; return; }
		sleep 0.05
	done
	echo $((($(date +%s%N) - start) / 1000000))
}
# verify CHURN_IN SINGLE_IN: reads every status from the API; each node a pool selects placed
# exactly once, no other; prints what is wrong.
verify() {
	local shapes p
	shapes=$(for p in "${names[@]}"; do printf '%s=%s ' "$p" "$(shape "$p")"; done)
	{ acurl "$api/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$ns/ippools"; acurl "$api/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$ns/cidrpools"; } |
		jq -r '.items[] | .metadata.name as $p | "pool \($p)", (.status.allocations // [] | .[] | "\($p) \(.nodeName)")' |
		awk -v shapes="$shapes" -v n="$nodes" -v c="$1" -v s="$2" -v single="$single" '
		function sel(sh, i,   tier, rack) {
			if (i < 1 || (i > n + c && !(s && i == single))) return 0
			tier = (i <= n && i % 2 == 0) || i == single ? "a" : "b"; rack = i == single ? 0 : i % 10
			return sh == 1 ? tier == "a" : sh == 2 ? rack >= 2 : 1 }
		BEGIN { k = split(shapes, a, " "); for (j = 1; j <= k; j++) { split(a[j], kv, "="); sh[kv[1]] = kv[2] } }
		$1 == "pool" { got[$2] = 1; next }
		{ i = substr($2, 3) + 0; if (++cnt[$1, i] == 2) { print $1 ": " $2 " placed twice"; bad++ }
		  if (!sel(sh[$1], i)) { print $1 ": " $2 " placed but not selected"; bad++ } }
		END { for (p in sh) { if (!got[p]) { print p ": not in the API"; bad++; continue }
			for (i = 1; i <= single; i++) if (sel(sh[p], i) && !cnt[p, i]) { miss[p]++; bad++ } 
			if (miss[p]) print p ": " miss[p] " selected nodes missing" }
		      exit bad > 0 }' | head -20
}
check_step() { # CHURN_IN SINGLE_IN MS: the step's end checked against the API
	local v
	case $3 in
	died) fail "the controller died"; tail -5 "$tmp/ctl.log"; [ "$check" != 1 ] || exit 1 ;;
	timeout) fail "not complete within ${timeout} s"; [ "$check" != 1 ] || exit 1 ;;
	esac
	v=$(verify "$1" "$2") || true
	[ -z "$v" ] || { fail "the statuses read back:"; echo "$v"; }
	[ -n "$v" ] || echo "  read back from the API: every node each pool selects placed once, no other"
}
metrics() { curl -s "127.0.0.1:$1/metrics" || true; }
metric() { awk -v k="$2" '$1 == k {print $2}' <<<"$1"; }
server_counts() { # verb resource count, the API server's requests so far; "latency" lines:
	# the seconds it spent on status patches (sum, count), to tell its share of a step
	acurl "$api/metrics" | awk -F'[{},]' '/^apiserver_request_total\{/ {
		verb = ""; res = ""; sub_ = ""
		for (i = 2; i < NF; i++) { split($i, kv, "="); gsub(/"/, "", kv[2])
			if (kv[1] == "verb") verb = kv[2]; if (kv[1] == "resource") res = kv[2]; if (kv[1] == "subresource") sub_ = kv[2] }
		n[verb " " res (sub_ ? "/" sub_ : "")] += $NF }
		/^apiserver_request_duration_seconds_(sum|count)\{.*verb="PATCH"/ && /subresource="status"/ && /resource="(ippools|cidrpools)"/ {
			k = $1 ~ /_sum$/ ? "latency sum" : "latency count"; n[k] += $NF }
		END { for (k in n) print k, n[k] }' | sort
}
patch_time() { # BEFORE AFTER: "N status patches, the API server's mean per patch"
	awk '$1 == "latency" { v[FILENAME == ARGV[1], $2] = $3 }
	     END { c = v[0, "count"] - v[1, "count"]; s = v[0, "sum"] - v[1, "sum"]
		   if (c > 0) printf "  the API server: %d status patches, %.0f ms each on average, %.1f s in all\n", c, s * 1000 / c, s }' "$1" "$2"
}
server_diff() { # BEFORE AFTER: the requests between two counts, for the controller's resources
	join -a 2 -e 0 -o 0,1.2,2.2 <(awk '{print $1 "_" $2, $3}' "$1" | sort) <(awk '{print $1 "_" $2, $3}' "$2" | sort) |
		awk '{ d = $3 - $2; split($1, k, "_"); if (d > 0 && k[1] != "latency" && k[2] ~ /^(nodes|ippools|cidrpools|events|leases)/) printf "    %-8s %-22s %d\n", k[1], k[2], d }'
}
# writes FROM_LINE LOG: "pool=N ..." status writes logged after line FROM_LINE, every pool named
writes() {
	tail -n +$(($1 + 1)) "$2" | sed -n 's/.*"pool status updated" kind="[A-Za-z]*" pool="\([a-z0-9]*\)".*/\1/p' |
		awk -v names="${names[*]}" 'BEGIN { k = split(names, a, " ") } { w[$1]++ } END { for (j = 1; j <= k; j++) printf "%s=%d ", a[j], w[a[j]] }' | sed 's/ $//'
}
lines() { wc -l <"$1"; }
report() { # TITLE MS PID MPORT
	local m
	m=$(metrics "$4")
	echo "$1: $2 ms"
	echo "  controller: peak RSS $(awk '/^VmHWM/ {print $2, $3}' "/proc/$3/status" 2>/dev/null), RSS now $(awk '/^VmRSS/ {print $2, $3}' "/proc/$3/status" 2>/dev/null), CPU $(metric "$m" process_cpu_seconds_total) s"
	echo "  its requests: $(awk '$1 ~ /^nv_ipam_controller_api_requests_total/ && $2 > 0 { sub(/.*verb="/, "", $1); sub(/".*/, "", $1); printf "%s %s, ", $1, $2 }' <<<"$m")lists $(awk '$1 ~ /^nv_ipam_controller_lists_total/ {s += $2} END {print s}' <<<"$m"), watch events $(awk '$1 ~ /^nv_ipam_controller_watch_events_total/ {s += $2} END {print s}' <<<"$m")"
	echo "  passes $(metric "$m" nv_ipam_controller_reconcile_passes_total), pools carved $(metric "$m" nv_ipam_controller_pools_carved_total), status writes $(metric "$m" nv_ipam_controller_status_writes_total), conflicts $(metric "$m" nv_ipam_controller_status_conflicts_total), last pass $(awk '$1 == "nv_ipam_controller_last_pass_seconds" {printf "%.1f", $2 * 1000}' <<<"$m") ms"
}
start_ctl() { # LOG PPORT: the operator's flags
	"$ctl" --kubeconfig "$dir/admin.kubeconfig" --leader-elect=true --leader-elect-namespace="$ns" \
		--ippools-namespace="$ns" --health-probe-bind-address=127.0.0.1:$2 \
		--metrics-bind-address=127.0.0.1:$(($2 + 1)) "${lease_flags[@]}" >"$1" 2>&1 &
}
# expect_writes GOT BEFORE AFTER STRICT: each pool's writes: none when its count did not change
# from BEFORE to AFTER, else one (STRICT 1) or at least one.
expect_writes() {
	local got=$1 before=$2 after=$3 strict=$4 p g b a
	for p in "${names[@]}"; do
		g=$(tr ' ' '\n' <<<"$got" | sed -n "s/^$p=//p")
		b=$(tr ' ' '\n' <<<"$before" | sed -n "s/^$p=//p")
		a=$(tr ' ' '\n' <<<"$after" | sed -n "s/^$p=//p")
		if [ "$a" = "$b" ]; then [ "$g" = 0 ] || fail "$p did not change but was written $g times"
		elif [ "$strict" = 1 ]; then [ "$g" = 1 ] || fail "$p changed and was written $g times, not once"
		else [ "$g" -ge 1 ] || fail "$p changed and was not written"; fi
	done
}

server_counts >"$tmp/s0"
# Four ports from PPORT on (the replicas' probes and metrics), none listened on now.
busy() { local p; for p in "$@"; do (: <"/dev/tcp/127.0.0.1/$p") 2>/dev/null && return 0; done; return 1; }
pport=$((20000 + RANDOM % 20000))
while busy $pport $((pport + 1)) $((pport + 2)) $((pport + 3)); do pport=$((20000 + RANDOM % 20000)); done
mport=$((pport + 1))
t0=$(date +%s%N)
start_ctl "$tmp/ctl.log" $pport
cpid=$!
w0=$(want 0 0)
ms=$(wait_for "$t0" "$w0")
server_counts >"$tmp/s1"
report "$nodes nodes x $pools pools: from the controller's start to every status complete" "$ms" $cpid $mport
echo "  status writes per pool: $(writes 0 "$tmp/ctl.log")"
echo "  the API server's count of requests meanwhile (leases include the API server's own):"
server_diff "$tmp/s0" "$tmp/s1"
patch_time "$tmp/s0" "$tmp/s1"
check_step 0 0 "$ms"
# Every pool starts without a status: one write each, from every node (none before the
# Nodes are listed).
expect_writes "$(writes 0 "$tmp/ctl.log")" "" "$w0" 1

step() { # TITLE VERB FROM TO CHURN_IN SINGLE_IN BEFORE STRICT
	local l w ms t0
	l=$(lines "$tmp/ctl.log")
	server_counts >"$tmp/sa"
	t0=$(date +%s%N)
	nodes_do "$2" "$3" "$4"
	w=$(want "$5" "$6")
	ms=$(wait_for "$t0" "$w")
	sleep 1 # a write that should not come would come now
	server_counts >"$tmp/sb"
	report "$1" "$ms" $cpid $mport
	echo "  status writes per pool: $(writes "$l" "$tmp/ctl.log")"
	server_diff "$tmp/sa" "$tmp/sb"
	patch_time "$tmp/sa" "$tmp/sb"
	check_step "$5" "$6" "$ms"
	expect_writes "$(writes "$l" "$tmp/ctl.log")" "$7" "$w" "$8"
}
step "$churn nodes join (created at once): to every status complete" POST $((nodes + 1)) $((nodes + churn)) "$churn" 0 "$w0" 0
step "the $churn nodes leave (deleted at once): to every status without them" DELETE $((nodes + 1)) $((nodes + churn)) 0 0 "$(want "$churn" 0)" 0
step "one node joins (tier a, rack r0)" POST "$single" "$single" 0 1 "$w0" 1
step "that node leaves" DELETE "$single" "$single" 0 0 "$(want 0 1)" 1

# Failover: a standby with the same flags, warm (its mirrors listed), then the leader killed.
sport=$((pport + 2)) smport=$((pport + 3))
start_ctl "$tmp/ctl-standby.log" $sport
spid=$!
t0=$(date +%s%N)
until [ "$(awk '$1 ~ /^nv_ipam_controller_lists_total/ {s += $2} END {print s + 0}' <<<"$(metrics $smport)")" -ge 3 ]; do
	[ $(($(date +%s%N) - t0)) -lt $((timeout * 1000000000)) ] || { fail "the standby did not list within ${timeout} s"; tail -5 "$tmp/ctl-standby.log"; exit 1; }
	sleep 0.1
done
sleep 1
m=$(metrics $smport)
[ "$(metric "$m" nv_ipam_controller_leader)" = 0 ] || fail "the standby leads while the leader lives"
echo "standby warm: peak RSS $(awk '/^VmHWM/ {print $2, $3}' "/proc/$spid/status"), CPU $(metric "$m" process_cpu_seconds_total) s, status writes $(metric "$m" nv_ipam_controller_status_writes_total)"
server_counts >"$tmp/sa"
t0=$(date +%s%N)
{ kill -KILL $cpid && wait $cpid; } 2>/dev/null || true
cpid=
lead=timeout
while [ $(($(date +%s%N) - t0)) -lt $((timeout * 1000000000)) ]; do
	[ "$(metric "$(metrics $smport)" nv_ipam_controller_leader)" != 1 ] || { lead=$((($(date +%s%N) - t0) / 1000000)); break; }
	sleep 0.05
done
done_ms=timeout
while [ $(($(date +%s%N) - t0)) -lt $((timeout * 1000000000)) ]; do
	m=$(metrics $smport)
	[ "$(metric "$m" nv_ipam_controller_reconcile_passes_total)" ] || continue
	[ "$(metric "$m" nv_ipam_controller_reconcile_passes_total)" -lt 1 ] || { done_ms=$((($(date +%s%N) - t0) / 1000000)); break; }
	sleep 0.05
done
sleep 1
server_counts >"$tmp/sb"
echo "failover: the leader killed (SIGKILL); the standby leads after $lead ms, its first pass done after $done_ms ms"
report "  the standby after its first pass" "$done_ms" $spid $smport
echo "  status writes per pool: $(writes 0 "$tmp/ctl-standby.log")"
server_diff "$tmp/sa" "$tmp/sb"
[ "$lead" != timeout ] || fail "the standby did not take over"
check_step 0 0 "$done_ms"
expect_writes "$(writes 0 "$tmp/ctl-standby.log")" "$w0" "$w0" 1
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$check" != 1 ] || [ "$failed" = 0 ] || exit 1
[ "$failed" = 0 ] && echo "# every check passed" || echo "# some check failed"
