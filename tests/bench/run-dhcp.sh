#!/usr/bin/env bash
# Benchmarks our dhcp plugin and daemon against upstream v1.9.1's pair
# (../shared/reference/cni-plugins), exec'd as a runtime does, interleaved in one run: each
# plugin talks to its own daemon (ours to ours, upstream's to upstream's), both leasing from
# one dnsmasq in a netns of the run's own over the same pod interface, ADD (DISCOVER to
# ACK) and DEL (RELEASE) per iteration. Beside them the exec floor (a plugin that does
# nothing). The daemons' resident memory after the run is printed too. Figures are
# printed, not asserted.
#
# Usage: run-dhcp.sh DHCP BENCH NOOP
# Environment: ITERATIONS (default 200), WARMUP (default 10), REFERENCE_PLUGINS (another
#   copy of the reference plugins).
# Exit status: 0, 1 if a plugin run failed, 2 on a harness error, 77 if not root, a netns
# cannot be made, dnsmasq or ../shared is missing (NOT RUN).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../shared.sh"
. "$here/ratios.sh"
[ $# -eq 3 ] || { echo "usage: $0 DHCP BENCH NOOP" >&2; exit 2; }
ours=$(realpath "$1") bench=$(realpath "$2") noop=$(realpath "$3")
iterations=${ITERATIONS:-200} warmup=${WARMUP:-10}
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
command -v dnsmasq >/dev/null || { echo "error: dnsmasq is needed (tests/install-deps.sh test)" >&2; exit 2; }
command -v jq >/dev/null || { echo "error: jq is needed for the ratios" >&2; exit 2; }

tag=$$$RANDOM
tag=${tag:0:8}
srv=hdbs-$tag pod=hdbp-$tag
tmp=$(mktemp -d /tmp/cni-bench-dhcp.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ ! -s "$tmp/dnsmasq.pid" ] || kill "$(cat "$tmp/dnsmasq.pid")" 2>/dev/null || true
	ip netns del "$srv" 2>/dev/null || true
	ip netns del "$pod" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
shared_reference_plugins "$tmp/ref" dhcp || exit 77
ip netns add "$srv" 2>/dev/null || { echo "SKIP: cannot create a network namespace" >&2; exit 77; }
ip netns add "$pod"
ip -n "$srv" link add hdbr type bridge
ip -n "$srv" addr add 10.97.0.1/16 dev hdbr
ip -n "$srv" link set hdbr up
ip -n "$pod" link add eth0 type veth peer name "hdb$tag" netns "$srv"
ip -n "$srv" link set "hdb$tag" master hdbr up
ip -n "$pod" link set eth0 up
ip netns exec "$srv" dnsmasq --conf-file=/dev/null --port=0 --user=root --interface=hdbr \
	--bind-interfaces --dhcp-range=10.97.0.10,10.97.255.250,255.255.0.0,1h --no-ping \
	--dhcp-option=option:router,10.97.0.1 --dhcp-authoritative \
	--dhcp-leasefile="$tmp/leases" --pid-file="$tmp/dnsmasq.pid"
# Snapshots, so that a rebuild during the run cannot swap or half-write a binary.
mkdir "$tmp/bin" "$tmp/sock"
cp "$ours" "$tmp/bin/ours-dhcp"
cp "$noop" "$tmp/bin/noop"
printf '{"socketDirs": ["%s"]}\n' "$tmp/sock" >"$tmp/node-settings.json"
chmod 0600 "$tmp/node-settings.json"
export CNI_RDMA_PLUGINS_CONF=$tmp/node-settings.json
"$tmp/bin/ours-dhcp" daemon -socketpath "$tmp/sock/ours.sock" >"$tmp/ours-daemon.log" 2>&1 &
pids+=($!)
ours_pid=$!
"$tmp/ref/dhcp" daemon -socketpath "$tmp/sock/go.sock" >"$tmp/go-daemon.log" 2>&1 &
pids+=($!)
go_pid=$!
# Hang guard: both sockets appear at once.
for _ in $(seq 100); do [ -S "$tmp/sock/ours.sock" ] && [ -S "$tmp/sock/go.sock" ] && break; sleep 0.1; done
printf '{"cniVersion":"1.0.0","name":"bench","type":"dhcp","ipam":{"type":"dhcp","daemonSocketPath":"%s/sock/%%LABEL%%.sock"}}\n' \
	"$tmp" >"$tmp/DHCP.json"

echo "ours: $ours (its daemon beside it)"
echo "go:   upstream v1.9.1 dhcp and its daemon ($(shared_path reference/cni-plugins))"
echo "server: dnsmasq $(dnsmasq --version | head -1 | awk '{print $3}') in a netns, over a veth and a bridge"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
status=0
(cd "$tmp" && "$bench" --plugin "ours=$tmp/bin/ours-dhcp" --plugin "go=$tmp/ref/dhcp" \
	--plugin "noop=$tmp/bin/noop" --config DHCP.json --netns "/run/netns/$pod" --ifname eth0 \
	--iterations "$iterations" --warmup "$warmup" --json="$tmp/figures.json") || status=$?
[ -s "$tmp/figures.json" ] || exit "$status"

echo
bench_ratios "$tmp/figures.json" DHCP
echo "== the daemons' resident memory after the run"
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
echo "daemons   ours $(rss "$ours_pid") KiB, go $(rss "$go_pid") KiB"
exit "$status"
