#!/usr/bin/env bash
# Connection slots no set of clients can take from the probes (issue 45): 1, 4, 8 and 64
# source addresses (127.1.I.1, each of its own /24) each open 128 connections to a server
# and keep alive every one they get (a request every 2 s), reopening at once what the
# server closes; two servers at a time (ipam-node's probes and the webhook, then ipam-node's
# metrics and the controller's probes). Meanwhile every /healthz, /readyz, /metrics and
# AdmissionReview from the prober's address (127.0.0.1) is answered: none refused or
# dropped (a server that gives its slots first come, first served, as libmicrohttpd does,
# never frees one of these, and every probe then fails). Once 512 connections are held the
# server is full: from 4 addresses on, its /metrics shows connections evicted for newcomers.
# How many probes were answered within kubelet's 1 s, and the slowest, are printed: a loaded
# machine moves them. Waits are hang guards.
. "$(dirname "$0")/lib.sh"

SECONDS_PER_PHASE=10
PER_ADDRESS=128
# The servers' slots (serve/http.c).
CONNECTIONS=512
# A probe's hang guard: the API server's 10 s for a review, ten times kubelet's 1 s.
PROBE_HANG=10

api_start
mkdir -p "$work/node/bin" "$work/node/conf" "$work/node/store"
make_cert "$work/certs"
free_port node_health
free_port node_metrics
free_port ctl_health
free_port ctl_metrics
free_port hook

"$IPAM_NODE" --node-name=node-a --kubeconfig "$KUBECONFIG_FILE" \
	--store-file="$work/node/store/store" --cni-bin-dir="$work/node/bin" \
	--cni-conf-dir="$work/node/conf" --cni-skip-nv-ipam-binary-copy \
	--cni-log-file="$work/node/cni.log" --stale-ip-check-interval=0 \
	--health-probe-bind-address="127.0.0.1:$node_health" \
	--metrics-bind-address="127.0.0.1:$node_metrics" 2>"$work/node.log" &
node_pid=$!
defer "kill $node_pid; wait $node_pid"
"$IPAM_CONTROLLER" --kubeconfig "$KUBECONFIG_FILE" --webhook=true \
	--webhook-bind-address="127.0.0.1:$hook" --webhook-cert-dir="$work/certs" \
	--health-probe-bind-address="127.0.0.1:$ctl_health" \
	--metrics-bind-address="127.0.0.1:$ctl_metrics" 2>"$work/ctl.log" &
ctl_pid=$!
defer "kill $ctl_pid; wait $ctl_pid"

ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "127.0.0.1:$1/readyz")" = 200 ]; }
if wait_for 30 ready "$node_health" && wait_for 30 ready "$ctl_health"; then
	ok "ipam-node and ipam-controller are ready"
else
	bad "ipam-node and ipam-controller are ready"
	tail -n 5 "$work/node.log" "$work/ctl.log"
	summary
fi

review='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"slots-1",'
review+='"kind":{"group":"nv-ipam.nvidia.com","version":"v1alpha1","kind":"IPPool"},'
review+='"resource":{"group":"nv-ipam.nvidia.com","version":"v1alpha1","resource":"ippools"},'
review+='"name":"p1","namespace":"kube-system","operation":"CREATE","object":{"apiVersion":'
review+='"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool","metadata":{"name":"p1","namespace":'
review+='"kube-system"},"spec":{"subnet":"10.9.0.0/16","perNodeBlockSize":16,"gateway":"10.9.0.1"}}}}'
probes=$(printf '[
 {"name": "node-healthz", "port": %d, "tls": false, "method": "GET", "path": "/healthz", "expect": 200},
 {"name": "node-readyz", "port": %d, "tls": false, "method": "GET", "path": "/readyz", "expect": 200},
 {"name": "node-metrics", "port": %d, "tls": false, "method": "GET", "path": "/metrics", "expect": 200},
 {"name": "ctl-healthz", "port": %d, "tls": false, "method": "GET", "path": "/healthz", "expect": 200},
 {"name": "ctl-readyz", "port": %d, "tls": false, "method": "GET", "path": "/readyz", "expect": 200},
 {"name": "webhook", "port": %d, "tls": true, "method": "POST", "expect": 200, "allowed": true,
  "path": "/validate-nv-ipam-nvidia-com-v1alpha1-ippool", "body": %s}]' \
	"$node_health" "$node_health" "$node_metrics" "$ctl_health" "$ctl_health" "$hook" \
	"$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$review")")

# field FILE KIND NAME KEY: a number of slots.py's output.
field() { awk -v k="$2" -v n="$3" -v f="$4" '$1 == k && $2 == n { for (i = 3; i < NF; i += 2) if ($i == f) print $(i + 1) }' "$1"; }
# evicted PORT PREFIX SERVER: the server's evicted connections, from its daemon's /metrics.
evicted() {
	curl -s --max-time 10 "127.0.0.1:$1/metrics" |
		awk -v m="$2_http_connections_evicted_total{server=\"$3\"}" '$1 == m { print $2 }'
}
counters() {
	echo "$(evicted "$node_metrics" nv_ipam_node probes) $(evicted "$node_metrics" nv_ipam_node metrics)" \
		"$(evicted "$ctl_metrics" nv_ipam_controller probes) $(evicted "$ctl_metrics" nv_ipam_controller webhook)"
}

# phase N TARGETS: N addresses attack TARGETS ("name:port:tls:counter-index ..."), probes meanwhile.
phase() {
	local n=$1 name port tls idx targets="" before after what sent okd within max held
	shift
	for t in "$@"; do
		IFS=: read -r name port tls idx <<<"$t"
		targets+="${targets:+,}{\"name\": \"$name\", \"port\": $port, \"tls\": $tls}"
	done
	read -ra before <<<"$(counters)"
	python3 "$DAEMON_DIR/slots.py" "{\"seconds\": $SECONDS_PER_PHASE, \"timeout\": $PROBE_HANG,
		\"interval\": 0.02, \"addresses\": $n, \"per_address\": $PER_ADDRESS,
		\"targets\": [$targets], \"probes\": $probes}" >"$work/p$n.out"
	read -ra after <<<"$(counters)"
	what="$n address(es) x $PER_ADDRESS connections to $(for t in "$@"; do printf '%s ' "${t%%:*}"; done)"
	for name in node-healthz node-readyz node-metrics ctl-healthz ctl-readyz webhook; do
		sent=$(field "$work/p$n.out" probe "$name" sent)
		okd=$(field "$work/p$n.out" probe "$name" ok)
		within=$(field "$work/p$n.out" probe "$name" within_1s)
		max=$(field "$work/p$n.out" probe "$name" max_ms)
		ge "$what: $name probes sent" 1 "${sent:-0}"
		eq "$what: $name: every probe answered" "${sent:-0}" "${okd:--}"
		echo "note: $what: $name: ${within:-0} of ${sent:-0} answered within 1 s, the slowest in ${max:-?} ms"
	done
	for t in "$@"; do
		IFS=: read -r name port tls idx <<<"$t"
		held=$(field "$work/p$n.out" attack "$name" held_max)
		echo "note: $what: $name: the attack had up to ${held:-?} connections open at once (the kernel's backlog included), $(field "$work/p$n.out" attack "$name" refused) closed before an answer; its server evicted $((${after[idx]:-0} - ${before[idx]:-0}))"
		# Full from 4 addresses on: a probe's slot is one the server took from the attack.
		[ $((n * PER_ADDRESS)) -lt "$CONNECTIONS" ] ||
			ge "$what: $name: the server, full, evicted connections for newcomers" 1 "$((${after[idx]:-0} - ${before[idx]:-0}))"
	done
}

for n in 1 4 8 64; do
	phase "$n" "node-health:$node_health:false:0" "webhook:$hook:true:3"
	phase "$n" "node-metrics:$node_metrics:false:1" "ctl-health:$ctl_health:false:2"
done

kill -0 "$node_pid" 2>/dev/null && kill -0 "$ctl_pid" 2>/dev/null && ok "the daemons ran throughout" ||
	bad "the daemons ran throughout"
for d in node:$node_pid ctl:$ctl_pid; do
	kill "${d#*:}"
	rc=0
	wait "${d#*:}" || rc=$?
	eq "${d%%:*} exits 0 on SIGTERM" 0 "$rc"
	[ "$rc" = 0 ] || tail -20 "$work/${d%%:*}.log"
done
summary
