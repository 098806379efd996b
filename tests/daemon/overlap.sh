#!/usr/bin/env bash
# Overlapping pools (issue 31): ipam-controller records an OverlappingPools Event on both
# pools of a pair, once (not at every pass), and again when a prefix changes; ipam-node's
# nv_ipam_node_pool_overlapping gauge counts, per pool, the others whose block on the node
# shares addresses, and follows the pools as they change.
. "$(dirname "$0")/lib.sh"

NS=kube-system
IPPOOLS=/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$NS/ippools
EVENTS=/api/v1/namespaces/$NS/events
ippool() { api_put "$IPPOOLS" '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool","metadata":{"name":"'$1'","namespace":"'$NS'","uid":"uid-'$1'"},"spec":{"subnet":"'$2'","perNodeBlockSize":16}}'; }
objects() { api_curl "https://127.0.0.1:$API_PORT/_test/objects?path=$1"; }
# The OverlappingPools Events as "POOL: MESSAGE" lines, sorted.
overlap_events() { objects "$EVENTS" | jq -r '.items[] | select(.reason == "OverlappingPools") | .involvedObject.name + ": " + .message' | sort; }
n_overlap_events() { overlap_events | grep -c . || true; }
# Predicates for wait_for (which runs its command again, not an expansion made once).
events_at_least() { [ "$(n_overlap_events)" -ge "$1" ]; }
gauge_is() { [ "$(gauge "$1")" = "$2" ]; }
blocks_of() { [ "$(objects "$IPPOOLS" | jq -r --arg p "$1" '.items[] | select(.metadata.name == $p) | .status.allocations | length')" = "$2" ]; }

api_start
api_put /api/v1/nodes '{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a","labels":{"kubernetes.io/hostname":"node-a"}}}'
ippool wide 192.168.96.0/24
ippool half 192.168.96.0/25
ippool away 10.9.0.0/24

controller_start

wait_for 30 events_at_least 2 || true
eq "an OverlappingPools Event on both pools, each naming the other" \
	"half: IPPool \"half\" 192.168.96.0/25 overlaps IPPool \"wide\" 192.168.96.0/24: a node given blocks of both may hand out one address twice
wide: IPPool \"wide\" 192.168.96.0/24 overlaps IPPool \"half\" 192.168.96.0/25: a node given blocks of both may hand out one address twice" \
	"$(overlap_events)"
eq "the Events are Warnings from the pools' controller" "Warning IPPoolController" \
	"$(objects "$EVENTS" | jq -r '[.items[] | select(.reason == "OverlappingPools") | .type + " " + .source.component] | unique | join(",")')"
ge "the controller logs the pair" 2 "$(grep -c 'pools overlap.*kind="IPPool"' "$work/controller.log" || true)"

# More passes (a new node, a changed pool elsewhere): no new Event, no repeat PATCHed.
since=$(api_now)
api_put /api/v1/nodes '{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-b"}}'
ippool away 10.9.1.0/24
wait_for 30 blocks_of away 2 || true
sleep 1
eq "passes after: still two Events" 2 "$(n_overlap_events)"
eq "passes after: no Event written again" 0 "$(api_count "^(POST|PATCH) $EVENTS" "$since")"

# ipam-node on node-a: both blocks start at 192.168.96.1.
mkdir -p "$work/conf" "$work/bin"
free_port n_metrics
free_port n_probe
"$IPAM_NODE" --node-name node-a --kubeconfig "$KUBECONFIG_FILE" --ippools-namespace "$NS" \
	--store-file "$work/store" --cni-bin-dir "$work/bin" --cni-conf-dir "$work/conf" \
	--cni-skip-nv-ipam-binary-copy --metrics-bind-address "127.0.0.1:$n_metrics" \
	--health-probe-bind-address "127.0.0.1:$n_probe" 2>"$work/node.log" &
defer "kill $!; wait $!"
gauge() { curl -s "http://127.0.0.1:$n_metrics/metrics" | awk -v p="nv_ipam_node_pool_overlapping{pool=\"$1\",type=\"ippool\"}" '$1 == p { print $2 }'; }
wait_for 30 gauge_is half 1 || true
eq "gauge: half overlaps one pool on the node" 1 "$(gauge half)"
eq "gauge: wide too" 1 "$(gauge wide)"
eq "gauge: away none" 0 "$(gauge away)"
ge "ipam-node logs the pair" 1 "$(grep -c "the node's blocks of two pools overlap.*pool=\"half\".*other=\"wide\"\|the node's blocks of two pools overlap.*pool=\"wide\".*other=\"half\"" "$work/node.log" || true)"

# half moves away: the gauge drops; it comes back on another prefix: a new pair, told again.
ippool half 192.168.98.0/25
wait_for 30 gauge_is half 0 || true
eq "gauge after the move: half 0" 0 "$(gauge half)"
eq "gauge after the move: wide 0" 0 "$(gauge wide)"
ippool half 192.168.96.0/26
wait_for 30 events_at_least 4 || true
eq "a changed prefix that overlaps again: two new Events" 4 "$(n_overlap_events)"
wait_for 30 gauge_is half 1 || true
eq "gauge: overlapping again" 1 "$(gauge half)"
summary
