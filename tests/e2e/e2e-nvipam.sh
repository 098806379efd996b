#!/usr/bin/env bash
# macvlan + nv-ipam through the project's libcni client: the NAD a
# MacvlanNetwork renders to (cniVersion 0.3.1, nv-ipam poolName), and a
# dual-stack 1.0.0 conflist; ADD, CHECK, DEL, and the store in between.
#
# Usage: e2e-nvipam.sh <macvlan> <nv-ipam> <cniclient> <nv-ipam-tool>
# Needs root. Exits 77 (skip) only if a network namespace cannot be created.
set -euo pipefail

[ $# -eq 4 ] || { echo "usage: $0 <macvlan> <nv-ipam> <cniclient> <nv-ipam-tool>" >&2; exit 2; }
macvlan=$(realpath "$1")
nvipam=$(realpath "$2")
client=$(realpath "$3")
tool=$(realpath "$4")

tag=$$
master=e2nM$tag
peer=e2nP$tag
pod=e2n$tag
tmp=$(mktemp -d /tmp/e2e-nvipam.XXXXXX)
. "$(dirname "$0")/../node-settings.sh"
node_settings "$tmp/node-settings.json" "$tmp"
cleanup() {
	ip netns del "$pod" 2>/dev/null || true
	ip link del "$master" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! ip netns add "$pod" 2>/dev/null; then
	echo "SKIP: cannot create a network namespace" >&2
	exit 77
fi
ip link add "$master" type veth peer name "$peer"
ip link set "$master" up

mkdir -p "$tmp/bin" "$tmp/net.d" "$tmp/nv-ipam.d"
ln -s "$macvlan" "$tmp/bin/macvlan"
ln -s "$nvipam" "$tmp/bin/nv-ipam"

# This node's blocks: the IPPool of the Network Operator example (192.168.0.0/24,
# block 100, gateway .1) and an IPv6 IPPool with a default route.
cat >"$tmp/nv-ipam.d/node-pools.json" <<JSON
{"pools": {
  "my-pool": {"subnet": "192.168.0.0/24", "startIP": "192.168.0.1", "endIP": "192.168.0.100",
              "gateway": "192.168.0.1"},
  "pool6": {"subnet": "fd52:2eb5:44::/48", "startIP": "fd52:2eb5:44::1", "endIP": "fd52:2eb5:44::64",
            "gateway": "fd52:2eb5:44::1", "defaultGateway": true, "routes": [{"dst": "fd99::/64"}]}
}}
JSON
# The directory nv-ipam.conf lives in supplies our keys, as a node would.
cat >"$tmp/nv-ipam.d/nv-ipam.conf" <<JSON
{"poolFile": "$tmp/nv-ipam.d/node-pools.json", "storeFile": "$tmp/store", "logLevel": "debug",
 "logFile": "$tmp/nv-ipam.log"}
JSON

# The operator's rendering, unchanged but for master and confDir.
cat >"$tmp/net.d/10-nad.conflist" <<JSON
{"cniVersion":"0.3.1","name":"example-macvlannetwork","plugins":[
 {"type":"macvlan","master":"$master","mode":"bridge","mtu":1500,
  "ipam":{"type":"nv-ipam","poolName":"my-pool","confDir":"$tmp/nv-ipam.d"}}]}
JSON
cat >"$tmp/net.d/20-dual.conflist" <<JSON
{"cniVersion":"1.0.0","name":"dual","plugins":[
 {"type":"macvlan","master":"$master",
  "ipam":{"type":"nv-ipam","poolName":"my-pool,pool6","confDir":"$tmp/nv-ipam.d"}}]}
JSON

fails=0 passes=0
check() {
	if eval "$2"; then echo "ok - $1"; passes=$((passes + 1)); else echo "not ok - $1"; fails=$((fails + 1)); fi
}
cni() {
	NETCONFPATH=$tmp/net.d CNI_PATH=$tmp/bin CNI_IFNAME=net1 \
		CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=pod-$2" \
		"$client" --cache-dir "$tmp/cache" "$1" "$2" "/var/run/netns/$pod"
}
# The store's allocations, read by nv-ipam-tool (the store file only says where the pool logs are).
allocations() { "$tool" show --store "$tmp/store" --pool-file "$tmp/nv-ipam.d/node-pools.json" --json | jq '[.pools[].allocations[]]'; }
held() { allocations | jq -r --arg n "$1" '[.[] | select(.network == $n) | .ip] | join(",")'; }

# 1. The operator NAD.
out=$(cni add example-macvlannetwork)
check "ADD result address" "[ \"\$(jq -r '.ips[0].address' <<<\"\$out\")\" = 192.168.0.2/24 ]"
check "ADD result gateway" "[ \"\$(jq -r '.ips[0].gateway' <<<\"\$out\")\" = 192.168.0.1 ]"
check "ADD result version key (0.3.1)" "[ \"\$(jq -r '.ips[0].version' <<<\"\$out\")\" = 4 ]"
check "address on net1 in the pod" "ip -n $pod -4 -o addr show net1 | grep -q ' 192.168.0.2/24 '"
check "store holds it with the pod" "[ \"\$(allocations | jq -r '.[0] | .ip + \" \" + .podName + \" \" + .network')\" = '192.168.0.2 pod-example-macvlannetwork example-macvlannetwork' ]"
check "CHECK at 0.3.1 is refused by libcni, not run" "! cni check example-macvlannetwork 2>/dev/null"
cni del example-macvlannetwork
check "DEL released the address" "[ -z \"\$(held example-macvlannetwork)\" ]"
check "DEL removed the link" "! ip -n $pod link show net1 2>/dev/null"
check "DEL again succeeds" "cni del example-macvlannetwork"

# 2. Dual stack at 1.0.0: both addresses or none, routes with the v6 gateway.
out=$(cni add dual)
check "dual ADD: IPv4 next in round-robin" "[ \"\$(jq -r '.ips[0].address' <<<\"\$out\")\" = 192.168.0.3/24 ]"
check "dual ADD: IPv6 address" "[ \"\$(jq -r '.ips[1].address' <<<\"\$out\")\" = fd52:2eb5:44::2/48 ]"
check "dual ADD: default route first, then the pool route" "[ \"\$(jq -c '[.routes[].dst]' <<<\"\$out\")\" = '[\"::/0\",\"fd99::/64\"]' ]"
check "dual: IPv6 default route in the pod" "ip -n $pod -6 route show default | grep -q 'via fd52:2eb5:44::1 dev net1'"
check "dual CHECK passes" "cni check dual"
check "dual store: two allocations" "[ \"\$(held dual)\" = '192.168.0.3,fd52:2eb5:44::2' ]"
cni del dual
check "dual DEL releases both" "[ -z \"\$(held dual)\" ]"
check "log file written" "grep -q 'ADD ' \"$tmp/nv-ipam.log\""

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
