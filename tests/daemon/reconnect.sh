#!/usr/bin/env bash
# Paced reconnects and the last good state: ipam-node and ipam-controller against an API
# server that ends every watch at once (an empty 200, a bookmark then the end), answers
# every watch with a 410 or a line that is not JSON, answers 500 to everything, or 404 to
# a pool list for a while. Each misbehaviour gets its own ipam-node (its own pool
# namespace, all at once). The pacing is checked in what load cannot move: the server's
# log shows each collection's requests spaced by at least the backoff's schedule (0.5 s
# doubling; loopback without it makes thousands), a failure's log line says the wait it
# chose, and the requests do come (a hang guard only bounds the wait for them). A 404
# keeps the node pool file's pools; a watch that delivered a change resets the backoff, one
# whose event the node refused (a NUL in a name) or that repeated what it held does not;
# another node's status entry past the parser's depth leaves the pools readable;
# the cleaner's pod listing restarts when a later page's continue token expired (410) and
# the pass releases the address of a pod that is gone while keeping one on the second page.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../node-settings.sh"
NVIPAM=$(realpath "${NVIPAM_BIN:-$(dirname "$IPAM_NODE")/nv-ipam}")

API=/apis/nv-ipam.nvidia.com/v1alpha1/namespaces
# Hang guard of the waits for requests that come within seconds.
HANG=60

# count_between ERE SINCE UNTIL: requests whose "METHOD PATH" matches ERE, logged in
# [SINCE, UNTIL) of the server's clock.
count_between() {
	awk -v since="$2" -v until="$3" -v re="$1" \
		'$1 >= since && $1 < until && ($2 " " $3) ~ re { n++ } END { print n + 0 }' \
		"$work/api/requests.log"
}
at_least() { [ "$(count_between "$2" "$3" 99999)" -ge "$1" ]; }
# gaps ERE SINCE N: whether the first N requests matching ERE at or after SINCE came spaced
# by the backoff's schedule at least: 0.5, 1, 2 ... s (to the log's millisecond). Each
# failure waits its backoff after the answer, so the server logs the next request at least
# that much later, however slow the machine; a reset of the backoff in the run fails it.
# Prints the gaps.
gaps() {
	awk -v since="$2" -v re="$1" '$1 >= since && ($2 " " $3) ~ re { print $1 }' "$work/api/requests.log" |
		head -n "$3" | awk 'NR > 1 { want = 0.5 * 2 ^ (NR - 2); if (want > 16) want = 16
			printf("%s%.3f", (NR > 2 ? " " : ""), $1 - prev); if ($1 - prev < want - 0.002) bad = 1 }
			{ prev = $1 } END { print ""; exit bad }'
}
# paced DESC ERE [SINCE]: four requests come (a hang guard), spaced by 0.5, 1 and 2 s at least.
paced() {
	local g
	wait_for "$HANG" at_least 4 "$2" "${3:-0}" || { bad "$1: fewer than 4 requests in $HANG s"; return; }
	if g=$(gaps "$2" "${3:-0}" 4); then ok "$1: 4 requests, gaps $g s (at least 0.5 1 2)"; else bad "$1: gaps $g s, want at least 0.5 1 2"; fi
}
# The reflectors' lists (limit=500), not the start's check of the API (limit=1).
lists() { echo "^GET $API/$1/$2[?]limit=([02-9]|1[0-9])"; }
watches() { echo "^GET $API/$1/$2[?]watch=1"; }
# The lists of ns-404's pools answered 404, as its node logs them.
lists_refused() { grep -c 'keeping the 1 listed before until a list succeeds' "$work/ns-404/log" || true; }
api_close() { api_curl -X POST "https://127.0.0.1:$API_PORT/_test/close?path=$1" >/dev/null; }

# pool NS NAME OCTET: an IPPool with a block for node-a.
pool() {
	printf '{"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "IPPool",
	  "metadata": {"name": "%s", "namespace": "%s"},
	  "spec": {"subnet": "10.%s.0.0/16", "perNodeBlockSize": 16, "gateway": "10.%s.0.1"},
	  "status": {"allocations": [{"nodeName": "node-a", "startIP": "10.%s.0.1", "endIP": "10.%s.0.16"}]}}' \
		"$2" "$1" "$3" "$3" "$3" "$3"
}
pod() {
	printf '{"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default", "name": "%s", "uid": "u-%s"},
	  "spec": {"nodeName": "node-a"}, "status": {"phase": "Running"}}' "$1" "$1"
}

# node NS [FLAGS...]: an ipam-node for the pools of NS, in $work/NS.
node() {
	local ns=$1 d=$work/$1
	shift
	mkdir -p "$d/bin" "$d/conf" "$d/store"
	"$IPAM_NODE" --node-name=node-a --ippools-namespace="$ns" --kubeconfig "$KUBECONFIG_FILE" \
		--store-file="$d/store/store" --cni-bin-dir="$d/bin" --cni-conf-dir="$d/conf" \
		--cni-skip-nv-ipam-binary-copy --cni-log-file="$d/cni.log" \
		--metrics-bind-address=0 --health-probe-bind-address=0 "$@" 2>"$d/log" &
	defer "kill $!"
	PIDS+=("$!:$d/log")
}
PIDS=()
has_pool() { grep -q "\"$2\"" "$work/$1/conf/node-pools.json" 2>/dev/null; }

api_start
for ns in ns-empty ns-bookmark ns-gone ns-garbage ns-storm ns-404 ns-reset ns-clean ns-nul ns-replay ns-deep; do
	api_put "$API/$ns/ippools" "$(pool "$ns" pool-a 10)"
done
# Another node's status entry nested past the parser's depth (64): its pools' list is read
# (issue 45: it was unreadable, and a fresh ipam-node never ready).
deep=$(printf '%.0s[' $(seq 200))1$(printf '%.0s]' $(seq 200))
api_put "$API/ns-deep/ippools" "$(pool ns-deep pool-b 13 | jq -c --argjson d "$deep" \
	'.status.allocations += [{nodeName: "node-z", startIP: "10.13.0.17", endIP: "10.13.0.32", x: $d}]')"
# A watch event the node refuses (a name holding a NUL), and one repeating what the node
# holds, each followed by the watch's end: neither is a change that starts the backoff
# over (issue 45: 181 watches in 8 s).
nul_event='{"type":"ADDED","object":{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool","metadata":{"name":"pool-\u0000x","namespace":"ns-nul","resourceVersion":"999"},"spec":{"subnet":"10.14.0.0/16","perNodeBlockSize":16}}}'
replay_event=$(api_curl "https://127.0.0.1:$API_PORT/_test/objects?path=$API/ns-replay/ippools" |
	jq -c '{type: "ADDED", object: .items[0]}')
for p in p1 p2 p3 gone; do api_put /api/v1/pods "$(pod $p)"; done

RULES_A='{"path": "'$API'/ns-empty/ippools[?]", "watch": true, "action": "empty"},
  {"path": "'$API'/ns-bookmark/ippools[?]", "watch": true, "action": "bookmark"},
  {"path": "'$API'/ns-gone/ippools[?]", "watch": true, "action": "status", "code": 410},
  {"path": "'$API'/ns-garbage/ippools[?]", "watch": true, "action": "garbage"},
  {"path": "/api/v1/nodes[?]", "watch": true, "action": "empty"},
  {"path": "'$API'/ns-ctl/cidrpools[?]", "watch": true, "action": "status", "code": 410},
  {"path": "/api/v1/pods[?]", "action": "page", "size": 2},
  '"$(jq -cn --arg l "$nul_event" --arg p "$API/ns-nul/ippools[?]" '{path: $p, watch: true, action: "event", line: $l}')"',
  '"$(jq -cn --arg l "$replay_event" --arg p "$API/ns-replay/ippools[?]" '{path: $p, watch: true, action: "event", line: $l}')"
RULES_STORM='{"path": "'$API'/ns-storm/ippools[?]", "action": "status", "code": 500}'
api_rules "[$RULES_A]"
T0=$(api_now)
for ns in ns-empty ns-bookmark ns-gone ns-garbage ns-storm ns-404 ns-reset ns-nul ns-replay ns-deep; do
	node $ns --stale-ip-check-interval=0
done
node ns-clean --stale-ip-check-interval=3s --stale-ip-check-count-before-release=0
"$IPAM_CONTROLLER" --ippools-namespace=ns-ctl --kubeconfig "$KUBECONFIG_FILE" \
	--metrics-bind-address=0 --health-probe-bind-address=0 2>"$work/controller.log" &
defer "kill $!"
PIDS+=("$!:$work/controller.log")
for ns in ns-storm ns-404 ns-reset ns-clean; do
	wait_for 60 has_pool $ns pool-a || bad "$ns: the node pool file was written"
done
if wait_for 60 has_pool ns-deep pool-b; then ok "another node's entry past the depth limit: the pools are read"; else bad "another node's entry past the depth limit: the pools are read"; fi

# The cleaner's node: addresses for pods p1 (first page), p3 (second page) and gone.
node_settings "$work/settings.json" "$work/ns-clean"
conf='{"cniVersion": "1.0.0", "name": "net1", "ipam": {"type": "nv-ipam", "poolName": "pool-a", "confDir": "'$work/ns-clean/conf'"}}'
for p in p1 p3 gone; do
	CNI_COMMAND=ADD CNI_CONTAINERID=c-$p CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 \
		CNI_IFNAME=net1 CNI_PATH=/nonexistent \
		CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=$p;K8S_POD_UID=u-$p" \
		"$NVIPAM" <<<"$conf" >"$work/add-$p.json" 2>>"$work/nv-ipam.log" || bad "nv-ipam ADD for pod $p"
done
# The watches to be ended below are older than a second: not taken for short ones.
sleep 1

# 404 on a pool list until it was tried again, 500 to everything: a watch ended to meet them.
T1=$(api_now)
api_rules "[$RULES_A, $RULES_STORM,
  {\"path\": \"$API/ns-404/ippools[?]\", \"action\": \"status\", \"code\": 404}]"
api_close "$API/ns-(404|storm)/"
# The watch's 404, then two lists refused: the file looked at meanwhile (a hang guard only).
kept=0 samples=0 deadline=$((SECONDS + HANG))
until at_least 3 "^GET $API/ns-404/ippools[?]" "$T1" && [ "$(lists_refused)" -ge 2 ] ||
	[ "$SECONDS" -ge "$deadline" ]; do
	samples=$((samples + 1))
	has_pool ns-404 pool-a && kept=$((kept + 1))
	sleep 0.25
done
api_rules "[$RULES_A, $RULES_STORM]"
eq "404 on the pool list: the node pool file kept the pool in every look ($samples)" "$samples" "$kept"
ge "404 on the pool list: lists were tried again (logged)" 2 "$(lists_refused)"
if g=$(gaps "^GET $API/ns-404/ippools[?]" "$T1" 3); then ok "404 on the pool list: paced, gaps $g s"; else bad "404 on the pool list: gaps $g s, want at least 0.5 1"; fi
check_log() { if grep -q "$2" "$work/$1/log"; then ok "$3"; else bad "$3"; sed 's/^/  /' "$work/$1/log" | tail -20; fi; }
check_log ns-404 'keeping the 1 listed before until a list succeeds' "404: the node logs that it keeps the pools"
api_put "$API/ns-404/ippools" "$(pool ns-404 pool-b 11)"
if wait_for "$HANG" has_pool ns-404 pool-b; then ok "after the 404: a new pool reaches the node pool file"; else bad "after the 404: a new pool reaches the node pool file"; fi
if has_pool ns-404 pool-a; then ok "after the 404: the old pool stays"; else bad "after the 404: the old pool stays"; fi

# A watch that delivered a change resets the backoff: 4 failures (the next wait 8 s),
# a working watch, a change; then every watch ends at once again.
T2=$(api_now)
api_rules "[$RULES_A, $RULES_STORM,
  {\"path\": \"$API/ns-reset/ippools[?]\", \"watch\": true, \"times\": 4, \"action\": \"empty\"}]"
api_close "$API/ns-reset/"
wait_for "$HANG" at_least 5 "$(watches ns-reset ippools)" "$T2" || bad "ns-reset: a watch after 4 failures"
sleep 0.3
T_PUT=$(api_now)
api_put "$API/ns-reset/ippools" "$(pool ns-reset pool-b 12)"
if wait_for "$HANG" has_pool ns-reset pool-b; then ok "ns-reset: the change reached the node pool file"; else bad "ns-reset: the change reached the node pool file"; fi
eq "ns-reset: it came by the watch (no list since the change)" 0 "$(count_between "$(lists ns-reset ippools)" "$T_PUT" "$(api_now)")"
mark=$(wc -l <"$work/ns-reset/log")
T3=$(api_now)
api_rules "[$RULES_A, $RULES_STORM, {\"path\": \"$API/ns-reset/ippools[?]\", \"watch\": true, \"action\": \"empty\"}]"
api_close "$API/ns-reset/"
# The waits the node chose after its next two failures, as it logs them.
next_tries() {
	tail -n +"$((mark + 1))" "$work/ns-reset/log" | grep '"watch ended, starting it again" resource="ippools"' |
		grep -o 'next try in [0-9]* ms' | head -n 2 | awk '{ printf("%s%s", (NR > 1 ? " " : ""), $4) }'
}
two_tries() { [ "$(next_tries | wc -w)" = 2 ]; }
wait_for "$HANG" two_tries || true
eq "after a change: the backoff starts over at 0.5 s (the waits logged, ms)" "500 1000" "$(next_tries)"
paced "after a change: watches" "$(watches ns-reset ippools)" "$T3"

# Each misbehaviour from its collection's first request (a daemon under valgrind takes
# seconds to start).
paced "empty 200 watch: watches" "$(watches ns-empty ippools)"
le "empty 200 watch: no relist" 1 "$(count_between "$(lists ns-empty ippools)" "$T0" 99999)"
le "empty 200 watch: the other kind's watch stays open" 1 "$(count_between "$(watches ns-empty cidrpools)" "$T0" 99999)"
paced "bookmark then close: watches" "$(watches ns-bookmark ippools)"
paced "410 on watch: lists" "$(lists ns-gone ippools)"
paced "410 on watch: watches" "$(watches ns-gone ippools)"
paced "garbage event: lists" "$(lists ns-garbage ippools)"
paced "garbage event: watches" "$(watches ns-garbage ippools)"
paced "an event with a NUL in its name, then the end: watches" "$(watches ns-nul ippools)"
paced "an event with a NUL in its name, then the end: lists" "$(lists ns-nul ippools)"
check_log ns-nul 'metadata.name (or one holding a NUL)' "an event with a NUL in its name: the node says why it lists again"
paced "an event repeating the pool held, then the end: watches" "$(watches ns-replay ippools)"
if has_pool ns-nul pool-a && ! grep -q 'pool-x' "$work/ns-nul/conf/node-pools.json"; then
	ok "the NUL event: the node pool file keeps its pool, nothing of the refused one"
else
	bad "the NUL event: the node pool file keeps its pool, nothing of the refused one"
fi
paced "controller, empty 200 node watch: watches" "^GET /api/v1/nodes[?]watch=1"
paced "controller, 410 on its CIDRPool watch: lists" "$(lists ns-ctl cidrpools)"
paced "500 storm: requests" "^GET $API/ns-storm/ippools[?]" "$T1"
if has_pool ns-storm pool-a; then ok "500 storm: the node pool file keeps the pool"; else bad "500 storm: the node pool file keeps the pool"; fi
check_log ns-empty 'ended after [0-9]* ms with no change' "empty 200 watch: the node says why it waits"

# The cleaner: pages of 2 pods ([p1 p2] [p3 gone]); pod gone deleted, the next continued
# page answered 410: the listing starts over and the pass releases gone's address only.
api_rules "[{\"path\": \"/api/v1/pods[?].*continue=\", \"times\": 1, \"action\": \"status\", \"code\": 410},
  $RULES_A, $RULES_STORM]"
api_curl -X DELETE "https://127.0.0.1:$API_PORT/api/v1/pods/gone" >/dev/null
if wait_for "$HANG" grep -q ' 1 released' "$work/ns-clean/log"; then ok "cleaner: a pass released an address"; else bad "cleaner: a pass released an address"; fi
check_log ns-clean "continue token expired, listing again from the start" "cleaner: a 410 on a continued page restarts the listing"
check_log ns-clean 'allocations="2 listed, 1 missed, 1 released' "cleaner: a pass saw the pods of both pages (p1, p3), released gone"
ip=$(jq -r '.ips[0].address' "$work/add-gone.json")
check_log ns-clean "released ${ip%/*} in pool pool-a: container c-gone .* pod default/gone" "cleaner: gone's ${ip%/*} released"

# Every daemon stops on SIGTERM with status 0, nothing reported by a sanitizer.
stopped=0
for p in "${PIDS[@]}"; do kill -TERM "${p%%:*}"; done
for p in "${PIDS[@]}"; do
	rc=0
	wait "${p%%:*}" || rc=$?
	if [ "$rc" -eq 0 ] && ! grep -q -E 'Sanitizer|runtime error' "${p#*:}"; then
		stopped=$((stopped + 1))
	else
		echo "${p#*:}: status $rc" && grep -A20 -E 'Sanitizer|runtime error' "${p#*:}" | head -40
	fi
done
eq "every daemon stopped cleanly" "${#PIDS[@]}" "$stopped"
summary
