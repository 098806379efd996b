#!/usr/bin/env bash
# nv-ipam commands beyond the reference: repeated ADD, DEL of nothing, CHECK
# against prevResult, GC per network, STATUS, logging once, a bad entry for another pool,
# the store lock and a corrupt store, and dual stack all or nothing.
. "$(dirname "$0")/lib.sh"

# A small second pool (3 usable addresses) and an IPv6 pool.
cat >"$work/pools.json" <<JSON
{"pools": {
  "pool1": {"subnet": "10.77.0.0/22", "startIP": "10.77.0.1", "endIP": "10.77.3.232", "gateway": "10.77.0.1"},
  "tiny": {"subnet": "10.78.0.0/29", "startIP": "10.78.0.1", "endIP": "10.78.0.4", "gateway": "10.78.0.1"},
  "pool6": {"subnet": "fd52:2eb5:44::/48", "startIP": "fd52:2eb5:44::1", "endIP": "fd52:2eb5:44::ff"}
}}
JSON

# run CMD ID NETWORK POOLS [EXTRA-IPAM-JSON [CNI_ARGS [PREV]]]: stdout is the result or error.
run() {
	local extra=${5:-} prev=${7:-}
	local c='{"cniVersion":"1.1.0","name":"'$3'","ipam":{"type":"nv-ipam","poolName":"'$4'","confDir":"'$work'","lockTimeoutMs":300'$extra'}'
	[ -n "$prev" ] && c+=',"prevResult":'$prev
	[ "$1" = GC ] && [ -n "${8:-}" ] && c+=',"cni.dev/valid-attachments":'$8
	c+='}'
	CNI_COMMAND=$1 CNI_CONTAINERID=$2 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 \
		CNI_IFNAME=net1 CNI_PATH=/nonexistent CNI_ARGS=${6:-} "$NVIPAM" <<<"$c" 2>/dev/null
}
code() { jq -r '.code // 0' <<<"$1"; }
# A store that cannot be read shows as such, never as empty (the checks compare the text).
ips() { store_json | jq -r --arg n "$1" '[.allocations[] | select(.network == $n) | .containerID + "=" + .ip] | sort | join(" ")' || echo "store unreadable"; }

# Repeated ADD returns the first allocation.
a1=$(run ADD c1 net1 pool1)
a2=$(run ADD c1 net1 pool1)
check "ADD again returns the same address" "[ \"\$(jq -r '.ips[0].address' <<<\"\$a1\")\" = \"\$(jq -r '.ips[0].address' <<<\"\$a2\")\" ]"
check "ADD again adds nothing to the store" "[ \"\$(ips net1)\" = 'c1=10.77.0.2' ]"

# CHECK: the reservation and prevResult.
check "CHECK with prevResult passes" "run CHECK c1 net1 pool1 '' '' \"\$a1\" >/dev/null"
bad=$(jq -c '.ips[0].address = "10.77.0.99/22"' <<<"$a1")
out=$(run CHECK c1 net1 pool1 '' '' "$bad" || true)
check "CHECK with another address in prevResult fails (103)" "[ \"\$(code \"\$out\")\" = 103 ]"
out=$(run CHECK nobody net1 pool1 || true)
check "CHECK without an allocation fails (103)" "[ \"\$(code \"\$out\")\" = 103 ]"

# Static IP from CNI_ARGS, anywhere in the subnet.
out=$(run ADD c2 net1 pool1 '' 'IgnoreUnknown=1;K8S_POD_NAME=p2;IP=10.77.3.250')
check "static IP from CNI_ARGS IP" "[ \"\$(jq -r '.ips[0].address' <<<\"\$out\")\" = 10.77.3.250/22 ]"
check "pod name recorded" "[ \"\$(store_json | jq -r '.allocations[] | select(.containerID == \"c2\") | .podName')\" = p2 ]"
out=$(run ADD c3 net1 pool1 '' 'IP=10.77.3.250' || true)
check "the same static IP again is refused (111)" "[ \"\$(code \"\$out\")\" = 111 ]"

# GC: only this network's allocations outside the valid list go.
run ADD c4 net2 pool1 >/dev/null
check "GC without a valid list releases nothing" "run GC '' net1 pool1 && [ \"\$(ips net1)\" = 'c1=10.77.0.2 c2=10.77.3.250' ]"
run GC '' net1 pool1 '' '' '' '[{"containerID":"c1","ifname":"net1"}]'
check "GC released c2 of net1 and kept c1" "[ \"\$(ips net1)\" = 'c1=10.77.0.2' ]"
check "GC kept net2's allocation in the shared pool" "[ \"\$(ips net2)\" = 'c4=10.77.0.3' ]"

# STATUS.
check "STATUS with free addresses succeeds" "run STATUS '' net1 pool1 >/dev/null"
out=$(run STATUS '' net1 missing || true)
check "STATUS for a pool without a block on this node is 50" "[ \"\$(code \"\$out\")\" = 50 ]"
# A pool this node has no block of: 112, naming the pools it has (the fix is one of them).
out=$(run ADD m1 net1 missing || true)
want="configuration for pool \"missing\", poolType \"ippool\" not found in $work/pools.json; this node's pools: \"pool1\" (ippool), \"tiny\" (ippool), \"pool6\" (ippool)"
check "ADD of a pool the node lacks is 112, listing the node's pools" \
	'[ "$(code "$out")" = 112 ] && [ "$(jq -r .msg <<<"$out")" = "$want" ]'
for i in 1 2 3; do run ADD t$i tnet tiny >/dev/null; done
out=$(run STATUS '' tnet tiny || true)
check "STATUS of an exhausted pool is 50" "[ \"\$(code \"\$out\")\" = 50 ]"
out=$(run ADD t4 tnet tiny || true)
check "ADD on an exhausted pool is 110" "[ \"\$(code \"\$out\")\" = 110 ]"

# Dual stack is all or nothing: pool6 then the exhausted tiny pool.
out=$(run ADD d1 dnet pool6,tiny || true)
check "dual stack with one pool exhausted fails" "[ \"\$(code \"\$out\")\" = 110 ]"
check "and keeps nothing from the other pool" "[ -z \"\$(ips dnet)\" ]"

# DEL of nothing, DEL twice.
check "DEL of a never-added container succeeds" "run DEL ghost net1 pool1 >/dev/null"
check "DEL succeeds" "run DEL c1 net1 pool1 >/dev/null && [ -z \"\$(ips net1)\" ]"
check "DEL again succeeds" "run DEL c1 net1 pool1 >/dev/null"

# The lock: held elsewhere, ADD gives up after lockTimeoutMs with 11.
exec {lockfd}>"$work/store.lock"
flock "$lockfd"
out=$(run ADD c5 net1 pool1 || true)
check "ADD while the store is locked is 11 (try again)" "[ \"\$(code \"\$out\")\" = 11 ]"
flock -u "$lockfd"
check "and works once the lock is free" "run ADD c5 net1 pool1 >/dev/null"

# A bad entry in the node pool file fails only its own pool's networks.
cp "$work/pools.json" "$work/pools.good"
jq '.pools.broken = {"subnet": "10.1.0.0/24", "startIP": "10.1.0.1", "endIP": "10.1.0.8", "gateway": "10.2.0.1"}' \
	"$work/pools.good" >"$work/pools.json"
check "a bad entry for another pool fails no ADD of this one" "run ADD c7 net1 pool1 >/dev/null"
out=$(run ADD c8 net1 broken || true)
check "the bad pool's own ADD is code 7 naming it" "[ \"\$(code \"\$out\")\" = 7 ] && [ \"\$(jq -r .msg <<<\"\$out\")\" = 'node pool file $work/pools.json: pool \"broken\": \"gateway\" 10.2.0.1 is outside subnet 10.1.0.0/24' ]"
mv "$work/pools.good" "$work/pools.json"

# CNI_NETNS naming the plugin's own netns is refused before anything is done.
before=$(store_digest)
out=$(CNI_COMMAND=ADD CNI_CONTAINERID=own CNI_NETNS=/proc/self/ns/net CNI_IFNAME=net1 CNI_PATH=/nonexistent \
	"$NVIPAM" <<<'{"cniVersion":"1.0.0","name":"net1","ipam":{"type":"nv-ipam","poolName":"pool1","confDir":"'$work'"}}' 2>/dev/null || true)
check "CNI_NETNS equal to the plugin's own netns is code 8" "[ \"\$(code \"\$out\")\" = 8 ]"
check "and the store is unchanged" "[ \"\$(store_digest)\" = \"\$before\" ]"

# nv-ipam logs where its ipam section says, once: never to the interface plugin's
# top-level logFile, which the network config it is given also holds.
c='{"cniVersion":"1.0.0","name":"netlog","logFile":"'$work'/iface.log","ipam":{"type":"nv-ipam","poolName":"pool1","confDir":"'$work'","logFile":"'$work'/ipam.log"}}'
CNI_COMMAND=ADD CNI_CONTAINERID=clog CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 CNI_IFNAME=net1 \
	CNI_PATH=/nonexistent "$NVIPAM" <<<"$c" >/dev/null 2>&1
check "nv-ipam logs to its own logFile" "grep -q 'ADD clog/net1: ' \"$work/ipam.log\""
check "and never opens the interface plugin's" "[ ! -e \"$work/iface.log\" ]"
run DEL clog netlog pool1 >/dev/null

# A bad entry for another pool of the node's pool file fails only that pool's ADDs.
cp "$work/pools.json" "$work/pools.good"
jq '.pools.broken = {"subnet": "10.79.0.0/24", "startIP": "10.79.1.1", "endIP": "10.79.0.9"}' \
	"$work/pools.good" >"$work/pools.json"
out=$(run ADD c9 net7 pool1)
check "an ADD in pool1 succeeds beside another pool's bad entry" "[ \"\$(code \"\$out\")\" = 0 ] && jq -e '.ips[0].address' <<<\"\$out\" >/dev/null"
check "STATUS of pool1 too" "run STATUS '' net7 pool1 >/dev/null"
out=$(run ADD c10 net8 broken || true)
check "an ADD in the bad pool is code 7 naming it" "[ \"\$(code \"\$out\")\" = 7 ] && jq -r .msg <<<\"\$out\" | grep -q 'pool \"broken\"'"
run DEL c9 net7 pool1 >/dev/null
mv "$work/pools.good" "$work/pools.json"

# A corrupt store is reported with its path and left as it is.
printf '{"version":1,"pools":{},"allocations":[{"pool":' >"$work/store"
before=$(store_digest)
out=$(run ADD c6 net1 pool1 || true)
check "corrupt store is code 5 naming the file" "[ \"\$(code \"\$out\")\" = 5 ] && grep -q \"$work/store\" <<<\"\$out\""
check "corrupt store left untouched" "[ \"\$(store_digest)\" = \"\$before\" ]"

echo "$((33 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
