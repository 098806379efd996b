#!/usr/bin/env bash
# Benchmarks one rail of NVIDIA's multi-rail chain, run as a runtime runs the
# operator's conflist (macvlan with static IPAM, then tuning with the ARP
# profile, then sbr): ours against Debian's Go plugins, interleaved in one run,
# in a throwaway pod netns with a throwaway veth master. Figures are printed,
# not asserted.
#
# Usage: run-chain.sh MACVLAN TUNING SBR STATIC BENCH_CHAIN
# Environment: ITERATIONS (default 100), WARMUP (default 5), REFERENCE_CNI_DIR
#   (default /usr/lib/cni).
# Exit status: 0, 1 if a run failed, 2 on a harness error, 77 if not root or Debian's
# plugins are missing.
set -euo pipefail

[ $# -eq 5 ] || { echo "usage: $0 MACVLAN TUNING SBR STATIC BENCH_CHAIN" >&2; exit 2; }
macvlan=$(realpath "$1") tuning=$(realpath "$2") sbr=$(realpath "$3") static=$(realpath "$4")
bench=$(realpath "$5")
ref=${REFERENCE_CNI_DIR:-/usr/lib/cni}
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
for p in macvlan tuning sbr static; do
	[ -x "$ref/$p" ] || { echo "SKIP: $ref/$p missing (containernetworking-plugins)" >&2; exit 77; }
done

tag=$$$RANDOM
tag=${tag:0:9}
ns=cnichain-$tag master=bc$tag
tmp=$(mktemp -d /tmp/cni-bench-chain.XXXXXX)
cleanup() {
	ip netns del "$ns" 2>/dev/null || true
	ip link del "$master" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns"
ip link add "$master" type veth peer name "${master}p"
ip link set "$master" up
# Each build's IPAM from a directory of its own: ours beside nothing else.
mkdir "$tmp/ours-ipam"
ln -s "$static" "$tmp/ours-ipam/static"

printf '%s' '{"cniVersion":"0.3.1","name":"rail","type":"macvlan","master":"'"$master"'","mode":"bridge","mtu":1500,"ipam":{"type":"static","addresses":[{"address":"192.168.79.10/24","gateway":"192.168.79.1"}],"routes":[{"dst":"0.0.0.0/0"}]}}' >"$tmp/1.json"
printf '%s' '{"cniVersion":"0.3.1","name":"rail","type":"tuning","sysctl":{"net.ipv4.conf.all.arp_ignore":"1","net.ipv4.conf.all.arp_announce":"2","net.ipv4.conf.all.rp_filter":"0","net.ipv4.conf.IFNAME.arp_ignore":"1","net.ipv4.conf.IFNAME.arp_announce":"2","net.ipv4.conf.IFNAME.rp_filter":"0"}}' >"$tmp/2.json"
printf '%s' '{"cniVersion":"0.3.1","name":"rail","type":"sbr"}' >"$tmp/3.json"

echo "one rail: macvlan + static, tuning (NVIDIA's ARP profile), sbr; ADD in order, DEL in reverse"
"$bench" --config "$tmp/1.json" --config "$tmp/2.json" --config "$tmp/3.json" \
	--chain "ours=$macvlan,$tuning,$sbr@$tmp/ours-ipam" \
	--chain "go=$ref/macvlan,$ref/tuning,$ref/sbr@$ref" \
	--netns "/var/run/netns/$ns" --iterations "${ITERATIONS:-100}" --warmup "${WARMUP:-5}"
