#!/usr/bin/env bash
# Demo: attach a throwaway pod netns to a macvlan network with nv-ipam exactly as a container
# runtime would (environment + config on stdin), show the result and the pod's
# addresses, run CHECK and DEL, and leave nothing behind. Needs root.
set -euo pipefail

# Network namespaces need root: a user with sudo is asked for it.
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "demo.sh needs root (network namespaces): run it as root or install sudo" >&2; exit 1; }
	exec sudo -E bash "$0" "$@"
fi

top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tests/install-deps.sh" demo

build=${BUILD_DIR:-$top/build}
# The binaries only, the test suites off (docs/testing.md turns them on; tests/house/docs-build.sh
# reads this line).
demo_options=(-Dunit_tests=disabled -Dnetns_tests=disabled -De2e_tests=disabled -Dbench=disabled)
[ -d "$build" ] || meson setup "$build" "$top" "${demo_options[@]}" >/dev/null
ninja -C "$build" >/dev/null

id=$$
pod=cni-demo-$id
master=demo-m$id
peer=demo-p$id
state=$(mktemp -d)
# The network config names files in that private directory: this node's settings
# (named by the runtime's environment) let it, as /etc/cni/cni-rdma-plugins.json would.
. "$top/tests/node-settings.sh"
node_settings "$state/node-settings.json" "$state"
cleanup() {
	ip netns del "$pod" 2>/dev/null || true
	ip link del "$master" 2>/dev/null || true
	rm -rf "$state"
}
trap cleanup EXIT

if [ -t 1 ]; then
	step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	step() { printf '\n== %s\n' "$*"; }
fi

ip netns add "$pod"
ip link add "$master" type veth peer name "$peer"
ip link set "$master" up
ip link set "$peer" up

# This node's block of the default IPPool (subnet 192.168.5.0/24,
# perNodeBlockSize 50, gateway 192.168.5.1): the first node gets .1-.50.
# nv-ipam reads it from a node pool file; allocations go to a file-locked store.
mkdir -p "$state/nv-ipam.d"
cat >"$state/nv-ipam.d/node-pools.json" <<JSON
{
  "pools": {
    "pool1": {
      "subnet": "192.168.5.0/24",
      "startIP": "192.168.5.1",
      "endIP": "192.168.5.50",
      "gateway": "192.168.5.1",
      "defaultGateway": true
    }
  }
}
JSON
cat >"$state/nv-ipam.d/nv-ipam.conf" <<JSON
{ "poolFile": "$state/nv-ipam.d/node-pools.json", "storeFile": "$state/store" }
JSON

conf=$(cat <<JSON
{
  "cniVersion": "1.0.0",
  "name": "demo-macvlan",
  "type": "macvlan",
  "master": "$master",
  "mode": "bridge",
  "ipam": {
    "type": "nv-ipam",
    "poolName": "pool1",
    "confDir": "$state/nv-ipam.d"
  }
}
JSON
)

run() {
	CNI_COMMAND=$1 CNI_CONTAINERID=demo-$id CNI_NETNS=/var/run/netns/$pod CNI_IFNAME=net1 \
	CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=demo-pod" \
	CNI_PATH=$build/ipam/nv-ipam "$build/plugins/macvlan/macvlan"
}

step "This node's pool file (what the nv-ipam controller gave the node)"
cat "$state/nv-ipam.d/node-pools.json"
step "Network config (stdin)"
echo "$conf"
step "ADD: CNI_COMMAND=ADD CNI_NETNS=/var/run/netns/$pod CNI_IFNAME=net1 macvlan < config"
result=$(run ADD <<<"$conf")
echo "$result"
step "Inside the pod: ip addr; ip route"
ip -n "$pod" addr show net1
ip -n "$pod" route
step "nv-ipam store: the allocation, with the container it belongs to (nv-ipam-tool show)"
"$build/ipam/nv-ipam/tool/nv-ipam-tool" show --store "$state/store" --pool-file "$state/nv-ipam.d/node-pools.json"
step "CHECK (prevResult = the ADD result)"
jq --argjson prev "$result" '. + {prevResult: $prev}' <<<"$conf" | run CHECK && echo "CHECK passed"
step "DEL, then DEL again (idempotent)"
run DEL <<<"$conf" && run DEL <<<"$conf" && echo "DEL passed twice"
step "After DEL"
ip -n "$pod" -br link
left=$(ip -n "$pod" -o link | grep -cv ' lo:' || true)
reserved=$("$build/ipam/nv-ipam/tool/nv-ipam-tool" show --store "$state/store" --no-pool-file --json | jq '[.pools[].used] | add // 0')
echo "links left in the pod besides lo: $left; addresses still reserved: $reserved"
[ "$left" -eq 0 ] && [ "$reserved" -eq 0 ]
step "Done: the netns and the veth master are removed on exit"
