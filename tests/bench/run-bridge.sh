#!/usr/bin/env bash
# Benchmarks our bridge against upstream v1.9.1's (../shared/reference/cni-plugins), exec'd
# as a runtime does, interleaved in one run, in a netns standing for the node (each plugin
# on a bridge of its own) with one pod netns: L2, the gateway with host-local, ipMasq
# through iptables (upstream's default choice) and through nftables, macspoofchk; each
# side with its own host-local (ours with ours, upstream's with upstream's). Beside them
# the exec floor (a plugin that does nothing) and each host-local alone (the IPAM part of
# every L3 ADD); then the flannel-like chain: bridge + host-local, then portmap, ours
# against upstream's. Figures are printed, not asserted.
#
# Usage: run-bridge.sh BRIDGE HOST_LOCAL PORTMAP BENCH NOOP BENCH_CHAIN
# Environment: ITERATIONS (default 200), WARMUP (default 10), REFERENCE_PLUGINS (another
#   copy of the reference plugins).
# Exit status: 0, 1 if a plugin run failed, 2 on a harness error, 77 if not root, a netns
# cannot be made or ../shared is missing (NOT RUN).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../shared.sh"
. "$here/ratios.sh"
[ $# -eq 6 ] || { echo "usage: $0 BRIDGE HOST_LOCAL PORTMAP BENCH NOOP BENCH_CHAIN" >&2; exit 2; }
ours=$(realpath "$1") ours_hl=$(realpath "$2") ours_pm=$(realpath "$3")
bench=$(realpath "$4") noop=$(realpath "$5") chain=$(realpath "$6")
iterations=${ITERATIONS:-200} warmup=${WARMUP:-10}
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
command -v jq >/dev/null || { echo "error: jq is needed for the ratios" >&2; exit 2; }

tag=$$$RANDOM
tag=${tag:0:8}
host=brbh-$tag pod=brbp-$tag
tmp=$(mktemp -d /tmp/cni-bench-bridge.XXXXXX)
cleanup() {
	ip netns del "$host" 2>/dev/null || true
	ip netns del "$pod" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
shared_reference_plugins "$tmp/ref" bridge host-local portmap || exit 77
ip netns add "$host" 2>/dev/null || { echo "SKIP: cannot create a network namespace" >&2; exit 77; }
ip netns add "$pod"
ip -n "$host" link set lo up
# The nat tables a node with iptables has: upstream's first ADD would make them otherwise.
ip netns exec "$host" sh -c 'iptables -t nat -N brx && iptables -t nat -X brx' 2>/dev/null || true
# Snapshots, so that a rebuild during the run cannot swap or half-write a binary. Each
# side's IPAM by its label ("type": "host-local-%LABEL%"), and each chain's directory.
mkdir "$tmp/bin" "$tmp/ipam" "$tmp/ours"
cp "$ours" "$tmp/bin/ours-bridge"
cp "$noop" "$tmp/bin/noop"
cp "$ours_hl" "$tmp/ipam/host-local-ours"
cp "$tmp/ref/host-local" "$tmp/ipam/host-local-go"
cp "$ours_hl" "$tmp/ours/host-local"
cp "$ours_pm" "$tmp/ours/portmap"
# Our host-local keeps its leases below the node's state roots only: the run's directory.
printf '{"stateRoots": ["%s"]}\n' "$tmp" >"$tmp/settings.json"
chmod 0600 "$tmp/settings.json"
export CNI_RDMA_PLUGINS_CONF=$tmp/settings.json

# %LABEL%: each plugin's own bridge (one per config) and host-local store.
conf() { # NAME MEMBERS
	printf '{"cniVersion":"1.0.0","name":"bench","type":"bridge","bridge":"%s-%%LABEL%%"%s}\n' "${1:0:6}" "$2" >"$tmp/$1.json"
}
ipam=',"ipam":{"type":"host-local-%LABEL%","subnet":"10.99.0.0/16","dataDir":"'"$tmp"'/hl-%LABEL%"}'
conf L2 ''
conf GW ',"isGateway":true'"$ipam"
conf MASQ ',"isGateway":true,"ipMasq":true'"$ipam"
conf MASQNF ',"isGateway":true,"ipMasq":true,"ipMasqBackend":"nftables"'"$ipam"
conf SPOOF ',"isGateway":true,"macspoofchk":true'"$ipam"

echo "ours: $ours"
echo "go:   upstream v1.9.1 bridge ($(shared_path reference/cni-plugins))"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
status=0
(cd "$tmp" && ip netns exec "$host" "$bench" --plugin "ours=$tmp/bin/ours-bridge" \
	--plugin "go=$tmp/ref/bridge" --plugin "noop=$tmp/bin/noop" \
	--config L2.json --config GW.json --config MASQ.json --config MASQNF.json --config SPOOF.json \
	--netns "/run/netns/$pod" --ifname eth0 --cni-path "$tmp/ipam" \
	--iterations "$iterations" --warmup "$warmup" --json="$tmp/figures.json") || status=$?
[ -s "$tmp/figures.json" ] || exit "$status"

echo
echo "== the IPAM part: each host-local alone on the GW config"
(cd "$tmp" && ip netns exec "$host" "$bench" --plugin "ours=$tmp/ipam/host-local-ours" \
	--plugin "go=$tmp/ipam/host-local-go" --plugin "noop=$tmp/bin/noop" --config GW.json \
	--netns "/run/netns/$pod" --ifname eth0 --iterations "$iterations" --warmup "$warmup" \
	--json="$tmp/ipam.json") || status=$?

echo
bench_ratios "$tmp/figures.json" L2 GW MASQ MASQNF SPOOF
bench_ratios "$tmp/ipam.json" GW | tail -n +2 | sed "s/^GW       /IPAM     /"

echo
echo "== the flannel-like chain: bridge + host-local, then portmap (8080 -> 80)"
printf '%s' '{"cniVersion":"1.0.0","name":"chain","type":"bridge","bridge":"brbc","isGateway":true,"ipMasq":true,"ipam":{"type":"host-local","subnet":"10.98.0.0/16","dataDir":"'"$tmp"'/hl-chain"}}' >"$tmp/c1.json"
printf '%s' '{"cniVersion":"1.0.0","name":"chain","type":"portmap","capabilities":{"portMappings":true},"runtimeConfig":{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"}]}}' >"$tmp/c2.json"
ip netns exec "$host" "$chain" --config "$tmp/c1.json" --config "$tmp/c2.json" \
	--chain "ours=$tmp/bin/ours-bridge,$tmp/ours/portmap@$tmp/ours" \
	--chain "go=$tmp/ref/bridge,$tmp/ref/portmap@$tmp/ref" \
	--netns "/run/netns/$pod" --iterations "$((iterations / 2))" --warmup "$warmup" || status=$?
exit "$status"
