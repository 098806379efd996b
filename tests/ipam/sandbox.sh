#!/usr/bin/env bash
# A pod whose sandbox was replaced without a DEL for the old one (a runtime that lost its
# state, a teardown killed half way): the new sandbox's ADD, with the same pod UID and
# interface, takes over the old one's address (round robin: the same address; a static
# IP: granted, not code 111), logged; the old container's DEL then releases nothing.
# Never across pod UIDs, never without one. And with the old sandbox's DEL killed at
# random moments before the new ADD: the pod holds exactly one address afterwards.
. "$(dirname "$0")/lib.sh"
conf_log='{"cniVersion":"1.0.0","name":"net1","ipam":{"type":"nv-ipam","poolName":"pool1","confDir":"'$work'","logFile":"'$work'/nv-ipam.log","logLevel":"info"}}'
uid=7c1d1f0e-0000-4000-8000-00000000000a
addr() { jq -r '.ips[0].address // .code' <<<"$1"; }
# pod_ip CONTAINER UID [STATIC]: ADD for pod default/p with that UID; prints the address or the code.
pod_ip() {
	local c=$conf_log
	[ -z "${3:-}" ] || c=$(jq -c --arg ip "$3" '.runtimeConfig = {ips: [$ip]} | .capabilities = {ips: true}' <<<"$c")
	addr "$(CNI_COMMAND=ADD CNI_CONTAINERID=$1 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 \
		CNI_IFNAME=net1 CNI_PATH=/nonexistent \
		CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=p${2:+;K8S_POD_UID=$2}" \
		"$NVIPAM" <<<"$c" 2>/dev/null)"
}
holders() { store_json | jq -r '[.allocations[] | .containerID + "=" + .ip] | sort | join(" ")'; }

first=$(pod_ip s1 "$uid")
second=$(pod_ip s2 "$uid")
check "the new sandbox of the pod gets the old one's address" '[ "$second" = "$first" ] && [[ $first == 10.77.* ]]'
check "and holds it alone: the old sandbox's allocation is gone" '[ "$(holders)" = "s2=${first%/*}" ]'
check "the takeover is logged, naming the old container and the pod" \
	'grep -q "ADD s2/net1: pod default/p (uid $uid) had ${first%/*} in pool pool1 under container s1, a sandbox replaced without a DEL: taken over" "$work/nv-ipam.log"'
nvipam DEL s1 >/dev/null 2>&1
check "the old container's DEL releases nothing" '[ "$(holders)" = "s2=${first%/*}" ]'
check "CHECK keys on the new container" 'CNI_COMMAND=CHECK CNI_CONTAINERID=s2 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 CNI_IFNAME=net1 CNI_PATH=/nonexistent "$NVIPAM" <<<"$(jq -c ".prevResult = {cniVersion: \"1.0.0\", ips: [{address: \"$first\"}]}" <<<"$conf_log")" >/dev/null'
nvipam DEL s2 >/dev/null 2>&1
check "its DEL releases it" '[ -z "$(holders)" ]'

a=$(pod_ip u1 "$uid")
b=$(pod_ip u2 7c1d1f0e-0000-4000-8000-00000000000b)
c=$(pod_ip u3 "")
d=$(pod_ip u4 "")
check "another pod UID, or none, takes nothing over" \
	'[ "$(printf "%s\n" "$a" "$b" "$c" "$d" | sort -u | grep -c .)" = 4 ] && [ "$(holders | wc -w)" = 4 ]'
for id in u1 u2 u3 u4; do nvipam DEL "$id" >/dev/null 2>&1; done

s1=$(pod_ip t1 "$uid" 10.77.2.50)
s2=$(pod_ip t2 "$uid" 10.77.2.50)
check "a static IP: the new sandbox gets it (not code 111)" '[ "$s1" = 10.77.2.50/22 ] && [ "$s2" = 10.77.2.50/22 ] && [ "$(holders)" = "t2=10.77.2.50" ]'
other=$(pod_ip t3 7c1d1f0e-0000-4000-8000-00000000000b 10.77.2.50)
check "another pod asking for it is still refused (code 111)" '[ "$other" = 111 ]'
nvipam DEL t2 >/dev/null 2>&1

# A store from before (the reference daemon's, migrated) holding two earlier sandboxes of
# the pod: check names the older, and the pod's next ADD takes the latest one's address,
# both gone.
rm -rf "$work/store" "$work/store.d"
reference_store "$work/store" <<JSON
{"version":1,"pools":{"pool1":{"name":"pool1","entries":{
"o1_net1":{"container_id":"o1","interface_name":"net1","ip_address":"10.77.1.10","metadata":{"pod_namespace":"default","pod_name":"p","pod_uuid":"$uid","create_time":"2026-11-01T00:00:00Z"}},
"o2_net1":{"container_id":"o2","interface_name":"net1","ip_address":"10.77.1.20","metadata":{"pod_namespace":"default","pod_name":"p","pod_uuid":"$uid","create_time":"2026-11-02T00:00:00Z"}}}}}}
JSON
out=$("$NVIPAM_TOOL" check --store "$work/store" --pool-file "$work/pools.json" || true)
check "check names the older sandbox's address as replaced" \
	'grep -q "^warning: pool pool1: 10.77.1.10 (container o1 interface net1 pod default/p): a replaced sandbox of pod UID $uid: container o2 holds" <<<"$out" && ! grep -q "10.77.1.20 (container o2" <<<"$out"'
check "the pod's next ADD takes the latest sandbox's address; neither old one stays" \
	'[ "$(pod_ip o3 "$uid")" = 10.77.1.20/22 ] && [ "$(holders)" = "o3=10.77.1.20" ]'
nvipam DEL o3 >/dev/null 2>&1

# The old sandbox's teardown killed at random moments, then the new sandbox's ADD.
bad=0 kills=0
for round in $(seq 40); do
	old=k$round-old new=k$round-new
	pod_ip "$old" "$uid" >/dev/null
	( CNI_COMMAND=DEL CNI_CONTAINERID=$old CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 \
		CNI_IFNAME=net1 CNI_PATH=/nonexistent exec "$NVIPAM" <<<"$conf" >/dev/null 2>&1 ) &
	p=$!
	( sleep "0.00$((RANDOM % 4))"; kill -9 "$p" 2>/dev/null ) &
	rc=0
	{ wait "$p"; } 2>/dev/null || rc=$?
	[ "$rc" -ne 137 ] || kills=$((kills + 1))
	wait
	ip=$(pod_ip "$new" "$uid")
	[ "$(holders)" = "$new=${ip%/*}" ] || { bad=$((bad + 1)); echo "# round $round: $(holders)"; }
	nvipam DEL "$new" >/dev/null 2>&1
done
echo "# $kills of 40 old-sandbox DELs killed"
check "after each, the pod holds exactly one address, the new sandbox's" '[ "$bad" = 0 ]'

echo "$((12 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
