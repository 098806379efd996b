#!/usr/bin/env bash
# nv-ipam on the store it replaces, as separate processes: the reference nv-ipam node
# daemon's is migrated by the first ADD (of sixteen at once: one migrates, all succeed),
# its allocations kept (a repeated ADD gets its address, DEL releases it, round robin goes
# on from the last pick); a corrupt older store is refused (code 5) and left as it is.
. "$(dirname "$0")/lib.sh"
FIX=$(cd "$(dirname "$0")/../unit/golden" && pwd)

cat >"$work/pools.json" <<JSON
{"pools": {
  "pool1": {"subnet": "192.168.0.0/16", "startIP": "192.168.0.1", "endIP": "192.168.0.24", "gateway": "192.168.0.1"},
  "cidrpool/pc": {"cidr": "10.88.0.0/16", "prefix": "10.88.1.0/24", "gateway": "10.88.1.1"}
}}
JSON
# run CMD ID POOL [POOLTYPE]: stdout is the result or the error.
run() {
	local c='{"cniVersion":"1.0.0","name":"net","ipam":{"type":"nv-ipam","poolName":"'$3'","poolType":"'${4:-ippool}'","confDir":"'$work'"}}'
	CNI_COMMAND=$1 CNI_CONTAINERID=$2 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 \
		CNI_IFNAME=net1 CNI_PATH=/nonexistent "$NVIPAM" <<<"$c" 2>/dev/null
}
addr() { jq -r '.ips[0].address' <<<"$1"; }
held() { store_json | jq -r '[.allocations[] | .containerID + "=" + .ip] | sort | join(" ")'; }

# The daemon's: two pools, the last pick of pool1 in the middle of its block.
reference_store "$work/store" <<'JSON'
{"version":1,"pools":{"pool1":{"name":"pool1","last_reserved_ip":"192.168.0.5","entries":{
"old1_net1":{"container_id":"old1","interface_name":"net1","ip_address":"192.168.0.2","metadata":{"pod_namespace":"ns","pod_name":"p1","create_time":"2026-01-01T00:00:00Z"}},
"old2_net1":{"container_id":"old2","interface_name":"net1","ip_address":"192.168.0.6","metadata":{"pod_namespace":"ns","pod_name":"p2","create_time":"2026-01-01T00:00:00Z"}}}},
"cidrpool/pc":{"name":"pc","entries":{
"old3_net1":{"container_id":"old3","interface_name":"net1","ip_address":"10.88.1.2","metadata":{"pod_namespace":"ns","pod_name":"p3","create_time":"2026-01-01T00:00:00Z"}}}}}}
JSON
for i in $(seq 16); do
	( out=$(run ADD new$i pool1) && echo "new$i $(addr "$out")" >"$work/new.$i" ) &
done
wait
cat "$work"/new.* | sort >"$work/new"
check "sixteen first ADDs at once: all succeeded" "[ \$(grep -c . \"$work/new\") = 16 ]"
check "the store file says version 2" "[ \"\$(jq -c . \"$work/store\")\" = '{\"version\":2,\"pools\":\"store.d\"}' ]"
check "no address given twice, none of the old ones" \
	"[ -z \"\$(awk '{print \$2}' \"$work/new\" | sort | uniq -d)\" ] && ! grep -qE ' 192\\.168\\.0\\.(2|6)/' \"$work/new\""
check "round robin went on after the last pick: .7 to .22 (.6 held)" \
	"[ \"\$(awk '{print \$2}' \"$work/new\" | sort -t. -k4 -n | head -1)\" = 192.168.0.7/16 ] && [ \"\$(awk '{print \$2}' \"$work/new\" | sort -t. -k4 -n | tail -1)\" = 192.168.0.22/16 ]"
check "the old allocations are kept" "held | grep -q 'old1=192.168.0.2 old2=192.168.0.6 old3=10.88.1.2'"
check "a repeated ADD of an old attachment gets its address" "[ \"\$(addr \"\$(run ADD old2 pool1)\")\" = 192.168.0.6/16 ]"
check "an ADD in the CIDRPool skips the old address" "[ \"\$(addr \"\$(run ADD new-c pc cidrpool)\")\" = 10.88.1.3/24 ]"
run DEL old1 pool1 >/dev/null
check "DEL releases an old allocation" "! held | grep -q old1"
check "the pool logs are the node's alone" "[ \"\$(stat -c %a \"$work/store.d\")\" = 700 ] && [ \"\$(stat -c %a \"$work/store.d/\"*.log | sort -u)\" = 600 ]"

# The daemon's store as it writes it (its own formatting).
rm -rf "$work/store" "$work/store.d"
cp "$FIX/nvipam-store-reference.json" "$work/store"
out=$(run ADD fresh pool1)
check "the daemon's store: the first ADD gets the next address" "[ \"\$(addr \"\$out\")\" = 192.168.0.3/16 ]"
check "and its allocation is kept, with its pod" \
	"[ \"\$(store_json | jq -r '.allocations[] | select(.containerID == \"a1b2c3\") | .ip + \" \" + .podNamespace + \"/\" + .podName')\" = '192.168.0.2 default/test-pod' ]"
check "the store file says version 2" "[ \"\$(jq -r .version \"$work/store\")\" = 2 ]"
run DEL a1b2c3 pool1 >/dev/null
check "DEL releases the daemon's allocation" "! held | grep -q a1b2c3"

# A corrupt older store: refused, left as it is.
rm -rf "$work/store" "$work/store.d"
printf '{"version":1,"checksum":5,"pools":{"pool1":{"name":"pool1","entries":{' >"$work/store"
before=$(sha256sum <"$work/store")
out=$(run ADD x pool1 || true)
check "a corrupt older store is code 5 naming the file" "[ \"\$(jq -r .code <<<\"\$out\")\" = 5 ] && grep -q \"$work/store is corrupt\" <<<\"\$out\""
check "and is left as it is, nothing written beside it" "[ \"\$(sha256sum <\"$work/store\")\" = \"\$before\" ] && [ ! -e \"$work/store.d\" ]"

echo "$((15 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
