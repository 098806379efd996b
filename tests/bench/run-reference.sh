#!/usr/bin/env bash
# Benchmarks our loopback or host-local against the reference plugin of the same name of
# containernetworking/plugins v1.9.1 (../shared/reference/cni-plugins, static Go builds:
# what the Network Operator's cniPlugins slot installs), exec'd as a runtime does,
# interleaved in one run, beside the exec floor (bench-noop). Figures are printed, not
# asserted.
#
#   loopback    in a throwaway pod netns: ADD sets lo up (three netlink requests), DEL
#               sets it down.
#   host-local  run directly, as an interface plugin runs it, each build on a store of its
#               own below a private state root: a store holding only the attachment
#               (empty.json), and one holding 200 other pods' addresses (full.json, the
#               200 made by ours before the run: the stores are the same format).
#
# Usage: run-reference.sh loopback|host-local [OURS [BENCH [NOOP]]]
# Environment: ITERATIONS (default 300), WARMUP (default 10), REFERENCE_PLUGINS (the directory of
#   the reference's .xz files and SHA256SUMS).
# Exit status: 0, 1 if a plugin run failed, 2 on a harness error, 77 if not root, a netns
# cannot be created, or the reference is missing.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
plugin=${1:-}
case $plugin in
loopback) def=plugins/loopback/loopback ;;
host-local) def=ipam/host-local/host-local ;;
*) echo "usage: $0 loopback|host-local [OURS [BENCH [NOOP]]]" >&2; exit 2 ;;
esac
ours=${2:-$top/build/$def}
bench=${3:-$top/build/tests/bench/bench}
noop=${4:-$top/build/tests/bench/bench-noop}
. "$top/tests/shared.sh"
src=${REFERENCE_PLUGINS:-$(shared_path reference/cni-plugins)}
iterations=${ITERATIONS:-300}
warmup=${WARMUP:-10}

skip() { echo "SKIP: $*" >&2; exit 77; }
die() { echo "error: $*" >&2; exit 2; }

[ "$(id -u)" -eq 0 ] || skip "needs root to create a network namespace"
[ -f "$src/$plugin.xz" ] || shared_not_run "$src" reference/cni-plugins "reference plugins (containernetworking/plugins v1.9.1)"
for b in "$ours" "$bench" "$noop"; do [ -x "$b" ] || die "$b is not an executable; build it first"; done
command -v jq >/dev/null || die "jq is needed for the ratios"

tag=$$$RANDOM
tag=${tag:0:8}
ns=hlbench-$tag
tmp=
cleanup() {
	ip netns del "$ns" 2>/dev/null || true
	[ -z "$tmp" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace"
tmp=$(mktemp -d /tmp/hl-bench.XXXXXX)
mkdir "$tmp/bin"
# Snapshots, so that a rebuild during the run cannot swap or half-write a binary.
cp "$ours" "$tmp/bin/ours"
cp "$noop" "$tmp/bin/noop"
xz -dc "$src/$plugin.xz" >"$tmp/bin/go"
chmod 0755 "$tmp/bin/go"
sum=$(awk -v n="$plugin" '$2 == n { print $1 }' "$src/SHA256SUMS")
[ "$(sha256sum <"$tmp/bin/go" | cut -d' ' -f1)" = "$sum" ] || die "$src/$plugin.xz does not match SHA256SUMS"

echo "ours: $(realpath "$ours")"
echo "go:   containernetworking/plugins v1.9.1 $plugin (static, $src)"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"

if [ "$plugin" = loopback ]; then
	printf '{"cniVersion":"1.0.0","name":"lo","type":"loopback"}\n' >"$tmp/lo.json"
	configs=(--config lo.json)
else
	root=$tmp/state
	mkdir -p "$root"
	printf '{"stateRoots": ["%s"]}\n' "$root" >"$tmp/settings.json"
	chmod 0600 "$tmp/settings.json"
	export CNI_RDMA_PLUGINS_CONF=$tmp/settings.json
	for c in empty full; do
		printf '{"cniVersion":"1.0.0","name":"bench","type":"macvlan","ipam":{"type":"host-local","subnet":"10.99.0.0/24","dataDir":"%s/%s-%%LABEL%%","routes":[{"dst":"0.0.0.0/0"}]}}\n' \
			"$root" "$c" >"$tmp/$c.json"
	done
	# 200 other pods in the full stores, made by ours for both: one format.
	for label in ours go noop; do
		conf=$(sed "s/%LABEL%/$label/" "$tmp/full.json")
		for i in $(seq 1 200); do
			printf '%s' "$conf" | CNI_COMMAND=ADD CNI_CONTAINERID=fill$i CNI_NETNS=/x CNI_IFNAME=eth0 \
				CNI_PATH=/x "$tmp/bin/ours" >/dev/null 2>&1 || die "filling the store failed"
		done
	done
	configs=(--config empty.json --config full.json)
fi

status=0
(cd "$tmp" && "$bench" --plugin "ours=$tmp/bin/ours" --plugin "go=$tmp/bin/go" --plugin "noop=$tmp/bin/noop" \
	"${configs[@]}" --netns "/run/netns/$ns" --ifname eth0 --cni-path /nonexistent \
	--iterations "$iterations" --warmup "$warmup" --json="$tmp/figures.json") || status=$?
[ -s "$tmp/figures.json" ] || exit "$status"

echo
echo "== ratios to go (below 1: faster or smaller than go)"
echo "   'above floor': (ours - noop) / (go - noop), the work done after being exec'd"
jq -r '
	def fig(c; l; cmd; f): first(.results[] | select(.config == c and .label == l and .command == cmd) | f);
	def ratio(a; b): if a == null or b == null or b == 0 then "-" else a / b end;
	def above(c; l; cmd): ratio(fig(c; l; cmd; .median_us) - fig(c; "noop"; cmd; .median_us);
				    fig(c; "go"; cmd; .median_us) - fig(c; "noop"; cmd; .median_us));
	def peak(c; l): [fig(c; l; "ADD"; .peak_rss_kib), fig(c; l; "DEL"; .peak_rss_kib)] | max;
	. as $all | ([.results[].config] | unique)[] as $c | "ours" as $l |
	[$c, $l, ratio(fig($c; $l; "ADD"; .median_us); fig($c; "go"; "ADD"; .median_us)),
	 above($c; $l; "ADD"),
	 ratio(fig($c; $l; "DEL"; .median_us); fig($c; "go"; "DEL"; .median_us)),
	 ratio(peak($c; $l); peak($c; "go"))] | @tsv
' "$tmp/figures.json" | awk -F'\t' '
	function r(x) { return x == "-" ? "   -" : sprintf("%4.2f", x) }
	{ printf "%-11s %-5s median ADD %s (above floor %s)   median DEL %s   peak RSS %s\n", $1, $2, r($3), r($4), r($5), r($6) }'
exit "$status"
