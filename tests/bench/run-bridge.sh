#!/usr/bin/env bash
# Benchmarks our bridge against upstream v1.9.1's (../shared/reference/cni-plugins), exec'd
# as a runtime does, interleaved in one run, in a netns standing for the node (each plugin
# on a bridge of its own) with one pod netns: L2, the gateway with host-local, ipMasq
# through iptables (upstream's default choice) and through nftables, macspoofchk. Beside
# them the exec floor (a plugin that does nothing) and, alone, host-local's own ADD and DEL
# (the IPAM floor every L3 ADD includes); then the flannel-like chain: bridge + host-local,
# then upstream's portmap. Figures are printed, not asserted.
#
# Usage: run-bridge.sh BRIDGE BENCH NOOP BENCH_CHAIN
# Environment: ITERATIONS (default 200), WARMUP (default 10), REFERENCE_PLUGINS (another
#   copy of the reference plugins).
# Exit status: 0, 1 if a plugin run failed, 2 on a harness error, 77 if not root, a netns
# cannot be made or ../shared is missing (NOT RUN).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../shared.sh"
[ $# -eq 4 ] || { echo "usage: $0 BRIDGE BENCH NOOP BENCH_CHAIN" >&2; exit 2; }
ours=$(realpath "$1") bench=$(realpath "$2") noop=$(realpath "$3") chain=$(realpath "$4")
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
# Snapshots, so that a rebuild during the run cannot swap or half-write a binary.
mkdir "$tmp/bin"
cp "$ours" "$tmp/bin/ours-bridge"
cp "$noop" "$tmp/bin/noop"

# %LABEL%: each plugin's own bridge (one per config) and host-local store.
conf() { # NAME MEMBERS
	printf '{"cniVersion":"1.0.0","name":"bench","type":"bridge","bridge":"%s-%%LABEL%%"%s}\n' "${1:0:6}" "$2" >"$tmp/$1.json"
}
ipam=',"ipam":{"type":"host-local","subnet":"10.99.0.0/16","dataDir":"'"$tmp"'/hl-%LABEL%"}'
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
	--netns "/run/netns/$pod" --ifname eth0 --cni-path "$tmp/ref" \
	--iterations "$iterations" --warmup "$warmup" --json="$tmp/figures.json") || status=$?
[ -s "$tmp/figures.json" ] || exit "$status"

echo
echo "== the IPAM floor: host-local alone on the GW config (what every L3 ADD and DEL above run)"
(cd "$tmp" && ip netns exec "$host" "$bench" --plugin "host-local=$tmp/ref/host-local" \
	--config GW.json --netns "/run/netns/$pod" --ifname eth0 --cni-path "$tmp/ref" \
	--iterations "$iterations" --warmup "$warmup" --json="$tmp/floor.json") || status=$?

echo
echo "== ratios to go (below 1: faster or smaller than go)"
echo "   'above floor': (ours - floor) / (go - floor), the floor being noop's exec and, for an"
echo "   L3 config, host-local's own run; 'x noop': ours / noop"
jq -r --slurpfile floor "$tmp/floor.json" '
	def fig(c; l; cmd; f): first(.results[] | select(.config == c and .label == l and .command == cmd) | f);
	def hl(cmd): first($floor[0].results[] | select(.command == cmd) | .median_us);
	def ratio(a; b): if a == null or b == null or b == 0 then "-" else a / b end;
	def floor(c; cmd): fig(c; "noop"; cmd; .median_us) + (if c == "L2.json" then 0 else hl(cmd) end);
	def above(c; cmd): ratio(fig(c; "ours"; cmd; .median_us) - floor(c; cmd);
				 fig(c; "go"; cmd; .median_us) - floor(c; cmd));
	def peak(c; l): [fig(c; l; "ADD"; .peak_rss_kib), fig(c; l; "DEL"; .peak_rss_kib)] | max;
	. as $all | ["L2", "GW", "MASQ", "MASQNF", "SPOOF"][] as $c | $all | ($c + ".json") as $f |
	[$c, ratio(fig($f; "ours"; "ADD"; .median_us); fig($f; "go"; "ADD"; .median_us)), above($f; "ADD"),
	 ratio(fig($f; "ours"; "DEL"; .median_us); fig($f; "go"; "DEL"; .median_us)), above($f; "DEL"),
	 ratio(peak($f; "ours"); peak($f; "go")), floor($f; "ADD")] | @tsv
' "$tmp/figures.json" | awk -F'\t' '
	function r(x) { return x == "-" ? "   -" : sprintf("%4.2f", x) }
	{ printf "%-9s median ADD %s (above floor %s)   median DEL %s (above floor %s)   peak RSS %s   ADD floor %d us\n", $1, r($2), r($3), r($4), r($5), r($6), $7 }'

echo
echo "== the flannel-like chain: bridge + host-local, then upstream's portmap (8080 -> 80)"
printf '%s' '{"cniVersion":"1.0.0","name":"chain","type":"bridge","bridge":"brbc","isGateway":true,"ipMasq":true,"ipam":{"type":"host-local","subnet":"10.98.0.0/16","dataDir":"'"$tmp"'/hl-chain"}}' >"$tmp/c1.json"
printf '%s' '{"cniVersion":"1.0.0","name":"chain","type":"portmap","capabilities":{"portMappings":true},"runtimeConfig":{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"}]}}' >"$tmp/c2.json"
ip netns exec "$host" "$chain" --config "$tmp/c1.json" --config "$tmp/c2.json" \
	--chain "ours=$tmp/bin/ours-bridge,$tmp/ref/portmap@$tmp/ref" \
	--chain "go=$tmp/ref/bridge,$tmp/ref/portmap@$tmp/ref" \
	--netns "/run/netns/$pod" --iterations "$((iterations / 2))" --warmup "$warmup" || status=$?
exit "$status"
