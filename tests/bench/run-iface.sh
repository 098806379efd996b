#!/usr/bin/env bash
# Benchmarks one of our interface plugins (macvlan or host-device) against
# Debian's Go plugin of the same name, exec'd as a runtime does, with no IPAM
# (L2) and with host-local (IPAM), in a throwaway pod netns with a throwaway
# veth pair: macvlan hangs off one end, host-device moves the other end into
# the pod and back. Figures are printed, not asserted.
#
# Usage: run-iface.sh PLUGIN [OURS [BENCH [NOOP]]]
#   PLUGIN  macvlan or host-device
#   OURS    default build/plugins/PLUGIN/PLUGIN
#   BENCH   default build/tests/bench/bench
#   NOOP    default build/tests/bench/bench-noop: a plugin that does
#           nothing (linked as the plugins are), run alongside to show the
#           exec floor
# Environment: ITERATIONS (default 200), WARMUP (default 10),
#   GO_PLUGIN (default /usr/lib/cni/PLUGIN), REFERENCE_CNI_DIR (default /usr/lib/cni,
#   used as CNI_PATH so both plugins delegate to the same host-local),
#   EXTRA_PLUGINS: more "LABEL=PATH" words, run interleaved with the others and
#   compared with go like ours (bench-static: the dynamically linked build, a
#   dynamic noop).
# Exit status: 0, 1 if a plugin run failed, 2 on a harness error, 77 if not root or
# a netns or veth cannot be created.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
plugin=${1:-}
case $plugin in
macvlan | host-device) ;;
*) echo "usage: $0 macvlan|host-device [OURS [BENCH [NOOP]]]" >&2; exit 2 ;;
esac
ours=${2:-$top/build/plugins/$plugin/$plugin}
bench=${3:-$top/build/tests/bench/bench}
noop=${4:-$top/build/tests/bench/bench-noop}
ref_dir=${REFERENCE_CNI_DIR:-/usr/lib/cni}
go=${GO_PLUGIN:-$ref_dir/$plugin}
iterations=${ITERATIONS:-200}
warmup=${WARMUP:-10}

skip() { echo "SKIP: $*" >&2; exit 77; }
die() { echo "error: $*" >&2; exit 2; }

[ "$(id -u)" -eq 0 ] || skip "needs root to create a network namespace"
[ -x "$go" ] || skip "$go missing (package containernetworking-plugins)"
[ -x "$ref_dir/host-local" ] || skip "$ref_dir/host-local missing (package containernetworking-plugins)"
[ -x "$ours" ] || die "$ours is not an executable; build it first"
[ -x "$bench" ] || die "$bench is not an executable; build it first"
[ -x "$noop" ] || die "$noop is not an executable; build it first"
command -v jq >/dev/null || die "jq is needed for the ratios"
ours=$(realpath "$ours")
bench=$(realpath "$bench")

# Unique per run so parallel runs and leftovers of a killed run do not collide.
tag=$$$RANDOM
tag=${tag:0:9}
ns=cnibench-$tag
master=bm$tag
peer=bp$tag
tmp=

cleanup() {
	ip netns del "$ns" 2>/dev/null || true
	ip link del "$master" 2>/dev/null || true
	[ -z "$tmp" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace"
ip link add "$master" type veth peer name "$peer" 2>/dev/null || skip "cannot create a veth pair"
ip link set "$master" up
ip link set "$peer" up
tmp=$(mktemp -d /tmp/cni-bench.XXXXXX)

# What the plugin works on: the master a macvlan hangs off, or the device host-device moves.
if [ "$plugin" = macvlan ]; then
	field=$(printf '"master":"%s"' "$master")
else
	field=$(printf '"device":"%s"' "$peer")
fi
# The harness replaces %LABEL% so each plugin gets its own host-local store.
printf '{"cniVersion":"1.0.0","name":"bench","type":"%s",%s,"ipam":{}}\n' \
	"$plugin" "$field" >"$tmp/L2.json"
printf '{"cniVersion":"1.0.0","name":"bench","type":"%s",%s,"ipam":{"type":"host-local","subnet":"10.99.0.0/16","dataDir":"%s/host-local-%%LABEL%%"}}\n' \
	"$plugin" "$field" "$tmp" >"$tmp/IPAM.json"

echo "ours: $ours"
echo "go:   $go"
if cmp -s "$ours" "$go"; then
	echo "note: ours is the same binary as go (stand-in run)"
fi
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
# Snapshots, so that a rebuild during the run cannot swap or half-write a binary.
mkdir "$tmp/bin"
cp "$ours" "$tmp/bin/ours-$plugin"
cp "$go" "$tmp/bin/go-$plugin"
cp "$noop" "$tmp/bin/noop"
extra=()
for e in ${EXTRA_PLUGINS:-}; do
	label=${e%%=*}
	path=${e#*=}
	[ -x "$path" ] || die "$path ($label) is not an executable"
	echo "$label: $(realpath "$path")"
	cp "$path" "$tmp/bin/$label-$plugin"
	extra+=(--plugin "$label=$tmp/bin/$label-$plugin")
done

status=0
(cd "$tmp" && "$bench" --plugin "ours=$tmp/bin/ours-$plugin" --plugin "go=$tmp/bin/go-$plugin" \
	--plugin "noop=$tmp/bin/noop" "${extra[@]}" \
	--config L2.json --config IPAM.json --netns "/run/netns/$ns" --ifname eth0 \
	--cni-path "$ref_dir" --iterations "$iterations" --warmup "$warmup" \
	--json="$tmp/figures.json") || status=$?
[ -s "$tmp/figures.json" ] || exit "$status"

echo
echo "== ratios to go (below 1: faster or smaller than go)"
echo "   'above floor': (label - noop) / (go - noop), the work done after being exec'd;"
echo "   'x noop': label / noop, against the exec floor itself"
# ru_maxrss from wait4 covers reaped descendants too: with IPAM it is max(plugin, host-local).
jq -r '
	def fig(c; l; cmd; f): first(.results[] | select(.config == c and .label == l and .command == cmd) | f);
	def ratio(a; b): if a == null or b == null or b == 0 then "-" else a / b end;
	def above(c; l; cmd): ratio(fig(c; l; cmd; .median_us) - fig(c; "noop"; cmd; .median_us);
				    fig(c; "go"; cmd; .median_us) - fig(c; "noop"; cmd; .median_us));
	def peak(c; l): [fig(c; l; "ADD"; .peak_rss_kib), fig(c; l; "DEL"; .peak_rss_kib)] | max;
	. as $all | ([.results[].label] | unique | map(select(. != "go" and (startswith("noop") | not)))) as $labels |
	["L2", "IPAM"][] as $c | $labels[] as $l | $all | ($c + ".json") as $f |
	[$c, $l, ratio(fig($f; $l; "ADD"; .median_us); fig($f; "go"; "ADD"; .median_us)),
	 above($f; $l; "ADD"),
	 ratio(fig($f; $l; "ADD"; .median_us); fig($f; "noop"; "ADD"; .median_us)),
	 ratio(fig($f; $l; "DEL"; .median_us); fig($f; "go"; "DEL"; .median_us)),
	 ratio(peak($f; $l); peak($f; "go"))] | @tsv
' "$tmp/figures.json" | awk -F'\t' '
	function r(x) { return x == "-" ? "   -" : sprintf("%4.2f", x) }
	{ printf "%-5s %-8s median ADD %s (above floor %s, x noop %s)   median DEL %s   peak RSS %s\n", $1, $2, r($3), r($4), r($5), r($6), r($7) }'
exit "$status"
