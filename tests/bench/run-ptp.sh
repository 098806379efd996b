#!/usr/bin/env bash
# Benchmarks our ptp against upstream v1.9.1's (../shared/reference/cni-plugins), exec'd as
# a runtime does, interleaved in one run, in a netns standing for the node with one pod
# netns: the veth pair with host-local's address, then with ipMasq through iptables
# (upstream's default) and through nftables; each side with its own host-local (ours with
# ours, upstream's with upstream's), beside the exec floor (a plugin that does nothing).
# Figures are printed, not asserted.
#
# Usage: run-ptp.sh PTP HOST_LOCAL BENCH NOOP
# Environment: ITERATIONS (default 200), WARMUP (default 10).
# Exit status: 0, 1 if a plugin run failed, 2 on a harness error, 77 if not root, a netns
# cannot be made or ../shared is missing (NOT RUN).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../shared.sh"
. "$here/ratios.sh"
[ $# -eq 4 ] || { echo "usage: $0 PTP HOST_LOCAL BENCH NOOP" >&2; exit 2; }
ours=$(realpath "$1") ours_hl=$(realpath "$2") bench=$(realpath "$3") noop=$(realpath "$4")
iterations=${ITERATIONS:-200} warmup=${WARMUP:-10}
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
command -v jq >/dev/null || { echo "error: jq is needed for the ratios" >&2; exit 2; }

tag=$$$RANDOM
tag=${tag:0:8}
host=p6bh-$tag pod=p6bp-$tag
tmp=$(mktemp -d /tmp/cni-bench-ptp.XXXXXX)
cleanup() {
	ip netns del "$host" 2>/dev/null || true
	ip netns del "$pod" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
shared_reference_plugins "$tmp/ref" ptp host-local || exit 77
ip netns add "$host" 2>/dev/null || { echo "SKIP: cannot create a network namespace" >&2; exit 77; }
ip netns add "$pod"
ip -n "$host" link set lo up
# The nat tables a node with iptables has: upstream's first ADD would make them otherwise.
ip netns exec "$host" sh -c 'iptables -t nat -N p6x && iptables -t nat -X p6x' 2>/dev/null || true
# Snapshots, so that a rebuild during the run cannot swap or half-write a binary; each
# side's IPAM by its label ("type": "host-local-%LABEL%").
mkdir "$tmp/bin" "$tmp/ipam"
cp "$ours" "$tmp/bin/ours-ptp"
cp "$noop" "$tmp/bin/noop"
cp "$ours_hl" "$tmp/ipam/host-local-ours"
cp "$tmp/ref/host-local" "$tmp/ipam/host-local-go"
# Our host-local keeps its leases below the node's state roots only: the run's directory.
printf '{"stateRoots": ["%s"]}\n' "$tmp" >"$tmp/settings.json"
chmod 0600 "$tmp/settings.json"
export CNI_RDMA_PLUGINS_CONF=$tmp/settings.json

# One config runs at a time (ADD then DEL), so both sides share its subnet; each its store.
conf() { # NAME MEMBERS SUBNET
	printf '{"cniVersion":"1.0.0","name":"bench-%s","type":"ptp"%s,"ipam":{"type":"host-local-%%LABEL%%","subnet":"%s","dataDir":"%s/hl-%%LABEL%%"}}\n' \
		"$1" "$2" "$3" "$tmp" >"$tmp/$1.json"
}
conf BASIC '' 10.97.0.0/24
conf MASQ ',"ipMasq":true' 10.96.0.0/24
conf MASQNF ',"ipMasq":true,"ipMasqBackend":"nftables"' 10.95.0.0/24

echo "ours: $ours"
echo "go:   upstream v1.9.1 ptp ($(shared_path reference/cni-plugins))"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
status=0
(cd "$tmp" && ip netns exec "$host" "$bench" --plugin "ours=$tmp/bin/ours-ptp" \
	--plugin "go=$tmp/ref/ptp" --plugin "noop=$tmp/bin/noop" \
	--config BASIC.json --config MASQ.json --config MASQNF.json \
	--netns "/run/netns/$pod" --ifname eth0 --cni-path "$tmp/ipam" \
	--iterations "$iterations" --warmup "$warmup" --json="$tmp/figures.json") || status=$?
[ -s "$tmp/figures.json" ] || exit "$status"

echo
echo "== the IPAM part: each host-local alone on the BASIC config"
(cd "$tmp" && ip netns exec "$host" "$bench" --plugin "ours=$tmp/ipam/host-local-ours" \
	--plugin "go=$tmp/ipam/host-local-go" --plugin "noop=$tmp/bin/noop" --config BASIC.json \
	--netns "/run/netns/$pod" --ifname eth0 --iterations "$iterations" --warmup "$warmup" \
	--json="$tmp/ipam.json") || status=$?

echo
bench_ratios "$tmp/figures.json" BASIC MASQ MASQNF
bench_ratios "$tmp/ipam.json" BASIC | tail -n +2 | sed "s/^BASIC    /IPAM     /"
exit "$status"
