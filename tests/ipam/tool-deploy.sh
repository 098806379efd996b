#!/usr/bin/env bash
# The DaemonSet's entrypoint (conf-examples/nv-ipam/deploy/entrypoint.sh) without a
# cluster: a fake kubectl on PATH prints fixture JSON per kind and watches one kind at a
# time, as the real one does (printing an event on demand). Checks the atomic install
# (content, mode 0755, no temporary file, an identical binary left alone, a changed one
# replaced by rename); that the node pool file is written only when its content changes,
# once and in the watch loop; that a failing kubectl leaves the file as it was; that a
# watch event (with resync and retry periods far away) or a change between the listing
# and the watch reaches the file at once, one watcher per kind running; that a dead watch
# or watcher is restarted and SIGTERM stops every watcher; that an absent CIDRPool CRD
# counts as no CIDRPools, logged once; that the DaemonSet adds no capability and the
# entrypoint runs without any. The stale-allocation cleaner: this node's pods listed every
# CLEAN_SECONDS, a pod deleted from the fake API losing its address on the threshold's
# miss (not before), a failing listing or one that is not JSON releasing nothing and
# being retried, SIGTERM stopping it; RBAC granting it exactly "list pods" cluster-wide.
. "$(dirname "$0")/lib.sh"
TOOL=${2:?usage: $0 NV-IPAM NV-IPAM-TOOL ENTRYPOINT}
ENTRY=${3:?usage: $0 NV-IPAM NV-IPAM-TOOL ENTRYPOINT}
FIX=$(cd "$(dirname "$0")/fixtures" && pwd)

# Addresses for two pods, made first: lib.sh's node pool file ($work/pools.json) becomes
# the fake API's pool list below. The cleaner's tests use them, long after.
nvipam_pod ADD c-a default/a ua >/dev/null 2>&1
nvipam_pod ADD c-b default/b ub >/dev/null 2>&1
held() { store_json | jq -r '[.allocations[].containerID] | sort | join(" ")'; }
# pods_api NS/NAME/UID...: the pods of host-b in the fake API, beside the agent's own
# (always on its node: gc refuses a listing of no pod as a wrong node name).
pods_api() {
	printf '%s\n' nvidia-network-operator/nv-ipam-node-b/uagent "$@" | { grep . || true; } | jq -R 'split("/") | {kind: "Pod", metadata: {namespace: .[0], name: .[1], uid: .[2]},
		spec: {nodeName: "host-b"}}' | jq -s '{apiVersion: "v1", kind: "List", items: .}' >"$work/pods-api.new"
	mv -f "$work/pods-api.new" "$work/pods-api.json"
}
pods_api default/a/ua default/b/ub

mkdir -p "$work/image" "$work/host/opt/cni/bin" "$work/fakebin"
cp "$NVIPAM" "$work/image/nv-ipam"
cp "$TOOL" "$work/image/nv-ipam-tool"
cp "$FIX/pools.json" "$work/pools.json"
# A stale nv-ipam already on the host, and another plugin that must stay untouched.
printf 'old' >"$work/host/opt/cni/bin/nv-ipam"
chmod 0600 "$work/host/opt/cni/bin/nv-ipam"
printf 'macvlan' >"$work/host/opt/cni/bin/macvlan"

# The fake kubectl, "get pods ...": prints $work/pods-api.json (fails when $work/pods-fail
# exists) and records its caller's PID in $work/cleaner.pids.
# "get KINDS ...": KINDS is ippools, cidrpools or both comma-separated.
#  - "-o json" prints those items of $work/pools.json as a List (fails when
#    $work/kubectl-fails exists). After the listing, if $work/change-after-list exists,
#    $work/pools-next.json becomes the API's state (a change no watch reports).
#  - "--watch"/"-w"/"--watch-only" of several kinds fails as kubectl does ("you may only
#    specify a single resource type"). A watch records "PID KIND" in $work/watch.pids,
#    prints the names of the kind's objects first (not for --watch-only, nor when
#    $work/watch-quiet exists), then blocks; when $work/event-KIND appears it makes
#    $work/pools-next.json the API's state and prints an event.
#  - A kind listed in $work/absent fails with "the server doesn't have a resource type".
# Every call is logged.
cat >"$work/fakebin/kubectl" <<'SH'
#!/usr/bin/env bash
w=$FAKE_WORK
echo "$*" >>"$w/kubectl.log"
[ "$1" = get ] || { echo "fake kubectl: unexpected $*" >&2; exit 2; }
if [ "$2" = pods ]; then
	echo "$PPID" >>"$w/cleaner.pids"
	[ -e "$w/pods-fail" ] && { echo "error: the server is unreachable" >&2; exit 1; }
	cat "$w/pods-api.json"
	exit
fi
kinds=$2 watch= only=
case " $* " in *" --watch-only "*) watch=1 only=1 ;; *" --watch "* | *" -w "*) watch=1 ;; esac
if [ -n "$watch" ] && [[ $kinds == *,* ]]; then
	echo "error: you may only specify a single resource type" >&2
	exit 1
fi
filter=
for k in ${kinds//,/ }; do
	if grep -qx "$k" "$w/absent" 2>/dev/null; then
		echo "error: the server doesn't have a resource type \"$k\"" >&2
		exit 1
	fi
	case $k in
	ippools) filter+=${filter:+,}'"IPPool"' ;;
	cidrpools) filter+=${filter:+,}'"CIDRPool"' ;;
	*) echo "fake kubectl: unexpected kind $k" >&2; exit 2 ;;
	esac
done
# The API's state changes at once, never half-written under a concurrent listing.
next_state() { cp "$w/pools-next.json" "$w/pools.json.$$" && mv -f "$w/pools.json.$$" "$w/pools.json"; }
items() { jq -c --argjson k "[$filter]" '.items | map(select(.kind as $x | $k | index($x)))' "$w/pools.json"; }
if [ -n "$watch" ]; then
	echo "$$ $kinds" >>"$w/watch.pids"
	if [ -z "$only" ] && [ ! -e "$w/watch-quiet" ]; then
		items | jq -r '.[] | (.kind | ascii_downcase) + ".nv-ipam.nvidia.com/" + .metadata.name'
	fi
	while :; do
		if mv "$w/event-$kinds" "$w/event-$kinds.taken" 2>/dev/null; then
			next_state
			date +%s.%N >"$w/event-$kinds.time"
			echo "${kinds%s}.nv-ipam.nvidia.com/pool1"
		fi
		sleep 0.05
	done
fi
case " $* " in
*" -o json "*)
	[ -e "$w/kubectl-fails" ] && { echo "error: the server is unreachable" >&2; exit 1; }
	jq --argjson items "$(items)" '.items = $items' "$w/pools.json"
	if [[ $kinds == *ippools* ]] && mv "$w/change-after-list" "$w/change-after-list.taken" 2>/dev/null; then
		next_state
	fi ;;
*) echo "fake kubectl: unexpected $*" >&2; exit 2 ;;
esac
SH
chmod +x "$work/fakebin/kubectl"
# host-b's IPPool block moved, as the next state of the API.
jq '(.items[0].status.allocations[] | select(.nodeName == "host-b")) |= (.startIP = "192.168.0.97" | .endIP = "192.168.0.120")' \
	"$FIX/pools.json" >"$work/pools-next.json"

pf=$work/host/etc/cni/net.d/nv-ipam.d/node-pools.json
run_entry() {
	env PATH="$work/fakebin:$PATH" NODE_NAME=host-b SRC_DIR="$work/image" \
		CNI_BIN_DIR="$work/host/opt/cni/bin" POOL_FILE="$pf" POOLS_NAMESPACE=kube-system \
		STORE_FILE="$work/store" FAKE_WORK="$work" RETRY_SECONDS=0.2 "$@" bash "$ENTRY" 2>>"$work/entry.log"
}

# A period sleep would refuse, or a zero retry, is refused at once: never a busy loop.
for bad in CLEAN_SECONDS=one CLEAN_SECONDS=-5 RETRY_SECONDS=0.0 RESYNC_SECONDS=00; do
	check "entrypoint refuses $bad" "! run_entry ONCE=1 $bad && grep -q \"${bad%%=*} must be a number of seconds\" \"$work/entry.log\""
done
check "entrypoint ONCE=1 succeeds" "run_entry ONCE=1"
bin=$work/host/opt/cni/bin
for b in nv-ipam nv-ipam-tool; do
	check "$b installed with the image's content" "cmp -s \"$work/image/$b\" \"$bin/$b\""
	check "$b is mode 0755" "[ \$(stat -c %a \"$bin/$b\") = 755 ]"
done
[ "$(id -u)" = 0 ] && check "installed files are owned by root" "[ \"\$(stat -c %u \"$bin/nv-ipam\")\" = 0 ]"
check "no temporary file left in the bin directory" "[ \"\$(ls -A \"$bin\" | sort | tr '\n' ' ')\" = 'macvlan nv-ipam nv-ipam-tool ' ]"
check "another plugin left alone" "[ \"\$(cat \"$bin/macvlan\")\" = macvlan ]"
check "kubectl listed each kind in the namespace" "grep -qx 'get ippools -n kube-system -o json' \"$work/kubectl.log\" && grep -qx 'get cidrpools -n kube-system -o json' \"$work/kubectl.log\""
check "the pool file is host-b's" "[ \"\$(cmp \"$pf\" <(\"$TOOL\" node-pools --node host-b --input \"$FIX/pools.json\" --stdout) && echo same)\" = same ]"
check "the pool file is mode 0644" "[ \$(stat -c %a \"$pf\") = 644 ]"
check "the sync is logged" "grep -q 'pool pool1: added (192.168.0.25-192.168.0.48)' \"$work/entry.log\""

# Again with nothing changed: binaries and pool file untouched (same inode and mtime).
state() { stat -c '%n %i %y' "$bin/nv-ipam" "$bin/nv-ipam-tool" "$pf"; }
before=$(state)
sleep 0.05
check "second run succeeds" "run_entry ONCE=1"
check "second run: nothing rewritten" "[ \"\$(state)\" = \"\$before\" ]"
check "second run: pool file reported unchanged" "grep -q 'node-pools.json unchanged' \"$work/entry.log\""

# A new image: nv-ipam replaced by rename (new inode), nv-ipam-tool untouched.
printf '\n# rebuilt\n' >>"$work/image/nv-ipam"
tool_before=$(stat -c '%i %y' "$bin/nv-ipam-tool"); ino=$(stat -c %i "$bin/nv-ipam")
check "upgrade run succeeds" "run_entry ONCE=1"
check "upgrade: nv-ipam replaced by a new file" "cmp -s \"$work/image/nv-ipam\" \"$bin/nv-ipam\" && [ \"\$(stat -c %i \"$bin/nv-ipam\")\" != \"$ino\" ]"
check "upgrade: nv-ipam-tool untouched" "[ \"\$(stat -c '%i %y' \"$bin/nv-ipam-tool\")\" = \"$tool_before\" ]"
check "upgrade: no temporary file left" "[ \"\$(ls -A \"$bin\" | wc -l)\" = 3 ]"

# kubectl failing: exit non-zero, pool file as it was.
touch "$work/kubectl-fails"
before=$(stat -c '%i %y' "$pf")
check "a failing kubectl fails the sync" "! run_entry ONCE=1"
check "and leaves the pool file alone" "[ \"\$(stat -c '%i %y' \"$pf\")\" = \"$before\" ]"
rm -f "$work/kubectl-fails"

# The DaemonSet grants no capability, and the entrypoint needs none: as root with an
# empty capability set (bounding and inheritable sets cleared), it installs and syncs.
DS=$(dirname "$ENTRY")/daemonset.yaml
check "daemonset: every capability dropped, none added" "grep -q 'drop: \\[\"ALL\"\\]' \"$DS\" && ! grep -q '^ *add:' \"$DS\""
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# Runs its arguments only when no capability is in effect.
	printf '%s\n' '#!/bin/sh' '[ "$(grep ^CapEff: /proc/self/status | cut -f2)" = 0000000000000000 ] || exit 99' 'exec "$@"' >"$work/nocaps"
	chmod +x "$work/nocaps"
	rm -f "$pf" "$bin/nv-ipam-tool"
	check "as root without any capability: install and sync succeed" \
		"run_entry ONCE=1 setpriv --bounding-set -all --inh-caps -all -- \"$work/nocaps\" && cmp -s \"$work/image/nv-ipam-tool\" \"$bin/nv-ipam-tool\" && [ -s \"$pf\" ]"
	# The cleaner's gc on a store in a root-owned 0700 directory, as nv-ipam makes it.
	mkdir -m 0700 "$work/nc"
	cp -rp "$work/store" "$work/store.d" "$work/nc/"
	echo '{"kind":"List","items":[{"kind":"Pod","metadata":{"namespace":"nvidia-network-operator","name":"nv-ipam-node-x","uid":"uagent"}}]}' >"$work/nc/pods.json"
	wait_older
	check "as root without any capability: gc reads, locks and writes the store" \
		"setpriv --bounding-set -all --inh-caps -all -- \"$work/nocaps\" \"$TOOL\" gc --store \"$work/nc/store\" --pool-file \"$work/nc/none\" --pods \"$work/nc/pods.json\" --listed-at \$(date +%s) --misses 1 >/dev/null && [ \"\$(store_json \"$work/nc/store\" | jq '.allocations | length')\" = 0 ] && [ -s \"$work/nc/store.gc\" ]"
fi

# The fake refuses a watch of two kinds, as kubectl does.
check "fake kubectl: a watch of two kinds fails like kubectl's" \
	"! FAKE_WORK=\"$work\" \"$work/fakebin/kubectl\" get ippools,cidrpools --watch-only -o name 2>\"$work/err\" && grep -qx 'error: you may only specify a single resource type' \"$work/err\""

# running PID: the process exists and is not a zombie (nothing may reap orphans here).
running() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${st#Z}" = "$st" ]
}
live_watchers() {
	local p k
	while read -r p k; do running "$p" && echo "$k"; done <"$work/watch.pids" | sort | tr '\n' ' '
}
# wait_for CMD: true once CMD succeeds, false after 10 s.
wait_for() {
	local _
	for _ in $(seq 100); do eval "$1" && return 0; sleep 0.1; done
	return 1
}
moved() { [ "$(jq -r '.pools.pool1.startIP + "-" + .pools.pool1.endIP' "$pf" 2>/dev/null)" = 192.168.0.97-192.168.0.120 ]; }
# start_loop [VAR=VALUE...]: the loop in the background, $loop the entrypoint's PID.
start_loop() {
	: >"$work/watch.pids"
	env PATH="$work/fakebin:$PATH" NODE_NAME=host-b SRC_DIR="$work/image" \
		CNI_BIN_DIR="$work/host/opt/cni/bin" POOL_FILE="$pf" POOLS_NAMESPACE=kube-system \
		STORE_FILE="$work/store" FAKE_WORK="$work" RESYNC_SECONDS=600 RETRY_SECONDS=300 "$@" \
		bash "$ENTRY" 2>>"$work/entry.log" &
	loop=$!
}
# stop_loop: SIGTERM, then the loop must be gone within 5 s, its watchers too.
stop_loop() {
	kill -TERM "$loop"
	wait_for '! running $loop' && wait "$loop"
}
# The watch loop, run in the background with resync and retry periods far away: the
# change (host-b's block moving) happens only once the loop runs, when the ippools
# watch prints its event, and must reach the file at once.
: >"$work/kubectl.log"
start_loop
check "loop: one watcher per kind running" "wait_for '[ \"\$(live_watchers)\" = \"cidrpools ippools \" ]'"
check "loop: the first sync wrote the old block" "wait_for '[ \"\$(jq -r .pools.pool1.startIP \"$pf\")\" = 192.168.0.25 ]'"
sleep 0.5
t0=$(date +%s.%N)
touch "$work/event-ippools"
check "loop: the watch event moved the block in the pool file" "wait_for moved"
t1=$(date +%s.%N)
check "loop: within 3 s of the event (resync 600 s, retry 300 s)" "[ -e \"$work/event-ippools.time\" ] && awk -v a=$t0 -v b=$t1 'BEGIN { exit !(b - a < 3) }'"
check "loop: the change was logged" "wait_for \"grep -q 'pool pool1: changed (192.168.0.25-192.168.0.48 -> 192.168.0.97-192.168.0.120)' '$work/entry.log'\""
check "loop: both watchers still running" "[ \"\$(live_watchers)\" = \"cidrpools ippools \" ]"
check "loop: each kind watched on its own, never two at once" "grep -qx 'get ippools -n kube-system --watch -o name' \"$work/kubectl.log\" && grep -qx 'get cidrpools -n kube-system --watch -o name' \"$work/kubectl.log\" && ! grep -q 'ippools,cidrpools' \"$work/kubectl.log\""
check "loop: no watch failed" "! grep -q 'watch of .* ended' \"$work/entry.log\""
# A watch that dies is started again (RETRY_SECONDS later: short here); with a resync
# period of 600 s, the loop checks its watchers every 5 s.
stop_loop
cp "$FIX/pools.json" "$work/pools.json"
start_loop RETRY_SECONDS=0.2
check "restart: watchers up" "wait_for '[ \"\$(live_watchers)\" = \"cidrpools ippools \" ]'"
# The change lands while the watch is down, and the new watch prints no listing
# (watch-quiet): the restart alone makes the loop list again.
wait_for '[ "$(jq -r .pools.pool1.startIP "$pf")" = 192.168.0.25 ]'
sleep 0.3
touch "$work/watch-quiet"
read -r dead _ < <(grep ' cidrpools$' "$work/watch.pids")
kill "$dead"
cp "$work/pools-next.json" "$work/pools.json.new" && mv -f "$work/pools.json.new" "$work/pools.json"
check "restart: the dead watch is logged" "wait_for 'grep -q \"watch of cidrpools ended\" \"$work/entry.log\"'"
check "restart: cidrpools watched again" "wait_for '[ \"\$(grep -c \" cidrpools\$\" \"$work/watch.pids\")\" = 2 ] && [ \"\$(live_watchers)\" = \"cidrpools ippools \" ]'"
check "restart: the change made while it was down reaches the file" "wait_for moved"
rm -f "$work/watch-quiet"
# A watcher killed outright (its kubectl orphaned) is noticed within WATCHER_CHECK (5 s)
# and started again, the orphaned watch stopped.
read -r orphan _ < <(grep ' ippools$' "$work/watch.pids")
kill -KILL "$(ps -o ppid= -p "$orphan")"
check "restart: a killed watcher is started again" "wait_for '[ \"\$(grep -c \" ippools\$\" \"$work/watch.pids\")\" = 2 ] && [ \"\$(live_watchers)\" = \"cidrpools ippools \" ]' && grep -q 'the watcher of ippools has died' \"$work/entry.log\""
check "restart: the killed watcher's kubectl is stopped" "wait_for '! running $orphan'"
pids_before_term=$(cut -d' ' -f1 "$work/watch.pids")
check "SIGTERM ends the loop" "stop_loop"
alive() { local p n=0; for p in $pids_before_term; do running "$p" && n=$((n + 1)); done; echo "$n"; }
check "SIGTERM stopped every watch" "wait_for '[ \"\$(alive)\" = 0 ]'"

# A change right after the first listing, before the watch runs and with no event: the
# watch's own listing lines make the loop list again.
cp "$FIX/pools.json" "$work/pools.json"
rm -f "$pf"
: >"$work/entry.log"
touch "$work/change-after-list"
start_loop
check "change between listing and watch: reaches the file without an event" "wait_for moved"
check "it was that change (the first listing still had the old block)" "[ -e \"$work/change-after-list.taken\" ] && wait_for \"grep -q 'pool pool1: changed (192.168.0.25-192.168.0.48 -> 192.168.0.97-192.168.0.120)' '$work/entry.log'\""
stop_loop

# Without events, the resync period ends the wait.
cp "$FIX/pools.json" "$work/pools.json"
touch "$work/watch-quiet"
start=$SECONDS
check "resync without events" "run_entry SYNC_LOOPS=2 RESYNC_SECONDS=1 RETRY_SECONDS=300"
check "resync took about the period" "[ \$((SECONDS - start)) -lt 10 ]"
rm -f "$work/watch-quiet"

# An IPPool-only install: no CIDRPool CRD. Listed as none (one log line), the IPPool
# block still written; the loop logs it once, not every sync.
echo cidrpools >"$work/absent"
rm -f "$pf"
: >"$work/entry.log"
check "no CIDRPool CRD: the sync succeeds" "run_entry ONCE=1"
check "no CIDRPool CRD: the IPPool block is written, no CIDRPool" "[ \"\$(jq -r '[.pools | keys[]] | join(\" \")' \"$pf\")\" = pool1 ]"
check "no CIDRPool CRD: logged" "[ \"\$(grep -c 'no resource type cidrpools' \"$work/entry.log\")\" = 1 ]"
: >"$work/entry.log"
touch "$work/watch-quiet"
check "no CIDRPool CRD: three syncs in the loop" "run_entry SYNC_LOOPS=3 RESYNC_SECONDS=0.3 RETRY_SECONDS=300"
check "no CIDRPool CRD: logged once in the loop" "[ \"\$(grep -c 'no resource type cidrpools' \"$work/entry.log\")\" = 1 ] && ! grep -q 'watch of cidrpools ended' \"$work/entry.log\""
rm -f "$work/absent" "$work/watch-quiet"
sleep 0.2
alive() { local p k n=0; while read -r p k; do running "$p" && n=$((n + 1)); done <"$work/watch.pids"; echo "$n"; }
check "every watch was stopped" "[ -s \"$work/watch.pids\" ] && [ \"\$(alive)\" = 0 ]"

# The cleaner, every 0.3 s, releasing on the third consecutive miss. Both pods listed:
# nothing missed, the unchanged summary logged once.
cp "$FIX/pools.json" "$work/pools.json"
: >"$work/entry.log"
: >"$work/kubectl.log"
: >"$work/cleaner.pids"
listings() { grep -c '^get pods' "$work/kubectl.log" || true; }
start_loop CLEAN_SECONDS=0.3 CLEAN_MISSES=3 RETRY_SECONDS=0.3
check "clean: this node's pods listed in every namespace" \
	"wait_for 'grep -qx \"get pods -A --field-selector spec.nodeName=host-b -o json --request-timeout=60s\" \"$work/kubectl.log\"'"
check "clean: repeated every CLEAN_SECONDS" "wait_for '[ \$(listings) -ge 4 ]'"
check "clean: both pods listed, nothing released, the summary logged once" \
	"[ \"\$(held)\" = 'c-a c-b' ] && [ \$(grep -c 'gc: 2 allocations: 2 with their pod listed, 0 newer than the listing, 0 without a pod (skipped), 0 missed, 0 released' \"$work/entry.log\") = 1 ]"
# b deleted from the API: missed twice, released on the third listing without it.
pods_api default/a/ua
check "clean: a pod deleted from the API loses its address" "wait_for '[ \"\$(held)\" = c-a ]'"
check "clean: only on the third miss" \
	"grep -q 'gc: missed 10.77.0.3 in pool pool1: container c-b interface net1 pod default/b: not in the pod list (miss 1 of 3)$' \"$work/entry.log\" &&
	 grep -q 'gc: missed 10.77.0.3 .*(miss 2 of 3)$' \"$work/entry.log\" &&
	 grep -q 'gc: released 10.77.0.3 in pool pool1: container c-b interface net1 pod default/b: not in the pod list (miss 3 of 3)$' \"$work/entry.log\""
# The API failing: a gone from it too, but nothing is released while listings fail.
touch "$work/pods-fail"
pods_api
n0=$(listings)
check "clean: a failing listing is retried every RETRY_SECONDS" "wait_for '[ \$(listings) -ge $((n0 + 5)) ]'"
check "clean: a failing listing releases nothing and counts nothing" "[ \"\$(held)\" = c-a ] && ! grep -q '\"c-a\"' \"$work/store.gc\""
check "clean: the failure is logged" "grep -q 'listing pods: error: the server is unreachable' \"$work/entry.log\" && grep -q 'listing this node.s pods failed (status 1): nothing released, retrying in 0.3s' \"$work/entry.log\""
# A listing that is not JSON (kubectl exit 0): gc refuses it, nothing released.
printf 'Unable to connect to the server' >"$work/pods-api.json"
rm -f "$work/pods-fail"
n0=$(listings)
check "clean: a listing that is not JSON: gc fails, logged, retried" \
	"wait_for '[ \$(listings) -ge $((n0 + 4)) ]' && grep -q 'gc: nv-ipam-tool: .*pods.json: malformed JSON' \"$work/entry.log\" && grep -q 'gc failed (status 1), retrying in 0.3s' \"$work/entry.log\""
check "clean: and releases nothing" "[ \"\$(held)\" = c-a ] && ! grep -q '\"c-a\"' \"$work/store.gc\""
# The API back, a still gone: released after the threshold.
pods_api
check "clean: once the API answers, the gone pod's address goes" "wait_for '[ \"\$(held)\" = \"\" ]' && grep -q 'gc: released 10.77.0.2 .*pod default/a: not in the pod list (miss 3 of 3)$' \"$work/entry.log\""
cleaner_pids=$(sort -u "$work/cleaner.pids")
check "SIGTERM ends the loop with the cleaner" "stop_loop"
alive_cleaners() { local p n=0; for p in $cleaner_pids; do running "$p" && n=$((n + 1)); done; echo "$n"; }
check "SIGTERM stopped the cleaner" "wait_for '[ \"\$(alive_cleaners)\" = 0 ]'"
check "ONCE=1 runs no cleaner" ": >\"$work/cleaner.pids\" && run_entry ONCE=1 && [ ! -s \"$work/cleaner.pids\" ]"

# RBAC: the Role on the pools as before, and a ClusterRole with exactly "list pods" (pods
# are in every namespace; a field selector cannot narrow what RBAC grants) bound to the
# agent's ServiceAccount.
RBAC=$(dirname "$ENTRY")/rbac.yaml
# doc KIND: the YAML document of that kind, comments and blank lines left out.
doc() { awk -v k="kind: $1" '/^---/ { if (hit) exit; buf = ""; next } /^ *#/ || /^ *$/ { next } { buf = buf $0 "\n" } $0 == k { hit = 1 } END { if (hit) printf "%s", buf }' "$RBAC"; }
check "rbac: the ClusterRole grants list on pods, nothing else" \
	"[ \"\$(doc ClusterRole | sed -n '/^rules:/,\$p')\" = 'rules:
  - apiGroups: [\"\"]
    resources: [\"pods\"]
    verbs: [\"list\"]' ]"
check "rbac: the ClusterRoleBinding binds it to the agent's ServiceAccount" \
	"doc ClusterRoleBinding | grep -qx '  kind: ClusterRole' && doc ClusterRoleBinding | grep -qx '  name: nv-ipam-node' && doc ClusterRoleBinding | grep -qx '  - kind: ServiceAccount' && doc ClusterRoleBinding | grep -qx '    namespace: nvidia-network-operator'"
check "rbac: the pools' Role is unchanged" \
	"[ \"\$(doc Role | sed -n '/^rules:/,\$p')\" = 'rules:
  - apiGroups: [\"nv-ipam.nvidia.com\"]
    resources: [\"ippools\", \"cidrpools\"]
    verbs: [\"get\", \"list\", \"watch\"]' ]"
check "daemonset: the store's directory mounted, the cleaner's settings given" \
	"grep -q 'path: /var/lib/cni/nv-ipam\$' \"$DS\" && grep -q 'mountPath: /host/var/lib/cni/nv-ipam\$' \"$DS\" && grep -A1 'name: CLEAN_SECONDS' \"$DS\" | grep -q 'value: \"60\"'"

exit $((fails > 0))
