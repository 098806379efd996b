#!/usr/bin/env bash
# Benchmarks nv-ipam against Debian's Go host-local, both exec'd as a runtime
# does, with 0, 100, 1000 and 10000 live allocations already in the pool, then
# a burst of 200 concurrent ADDs (and their DELs) on one pool. Figures are printed,
# not asserted, with the ratios the targets are about. The sweep and the burst are run
# ROUNDS times (the load of a shared machine drifts between sizes): the ratios are
# the medians of the rounds' figures, each round's shown beside them.
#
# Usage: run-nvipam.sh [NV_IPAM [BENCH [MULTIRAIL [NOOP [BENCH_STORE]]]]]
#   NV_IPAM      default build/ipam/nv-ipam/nv-ipam
#   BENCH        default build/tests/bench/bench
#   MULTIRAIL    default build/tests/bench/multirail (runs the burst)
#   NOOP         default build/tests/bench/bench-noop: the exec floor, run in the sweep
#   BENCH_STORE  default build/tests/bench/bench-store (writes nv-ipam's stores)
# Environment: ITERATIONS (default 100), SIZES (default "0 100 1000 10000"; empty: no
#   sweep), BURST (default 200; 0: no burst), ROUNDS (default 3), HOST_LOCAL (default
#   /usr/lib/cni/host-local).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
ours=$(realpath "${1:-$top/build/ipam/nv-ipam/nv-ipam}")
bench=$(realpath "${2:-$top/build/tests/bench/bench}")
burster=$(realpath "${3:-$top/build/tests/bench/multirail}")
noop=$(realpath "${4:-$top/build/tests/bench/bench-noop}")
store_fill=$(realpath "${5:-$top/build/tests/bench/bench-store}")
hl=${HOST_LOCAL:-/usr/lib/cni/host-local}
iterations=${ITERATIONS:-100}
sizes=${SIZES-0 100 1000 10000}
burst=${BURST:-200}
rounds=${ROUNDS:-3}
[ -x "$hl" ] || { echo "SKIP: $hl missing (containernetworking-plugins)" >&2; exit 77; }

tmp=$(mktemp -d /tmp/nvipam-bench.XXXXXX)
. "$(dirname "$0")/../node-settings.sh"
node_settings "$tmp/node-settings.json" "$tmp"
# IPAM plugins never enter it, but CNI_NETNS must not be the caller's own netns.
ns=nvipam-bench-$$
trap 'rm -rf "$tmp"; ip netns del "$ns" 2>/dev/null || true' EXIT
ip netns add "$ns" 2>/dev/null || { echo "SKIP: cannot create a network namespace" >&2; exit 77; }

# One block of 65000 addresses for both: 10.98.0.1 - 10.98.253.232.
cat >"$tmp/pools.json" <<JSON
{"pools": {"bench": {"subnet": "10.98.0.0/16", "startIP": "10.98.0.1",
                     "endIP": "10.98.253.232", "gateway": "10.98.0.1"}}}
JSON

# N live allocations, 10.98.x.y from .2 on, in each plugin's own store: nv-ipam's written
# by bench-store through the store itself, host-local's files by hand.
populate() {
	local n=$1 dir=$2
	mkdir -p "$dir/hl/bench"
	[ "$n" -eq 0 ] || "$store_fill" --fill "$dir/store" bench 10.98.0.2 "$n"
	awk -v n="$n" -v dir="$dir" 'BEGIN {
		for (i = 0; i < n; i++) {
			a = i + 2; ip = sprintf("10.98.%d.%d", int(a / 256), a % 256)
			printf "live%d\r\nnet1", i > (dir "/hl/bench/" ip); close(dir "/hl/bench/" ip)
			last = ip
		}
		if (n) printf "%s", last > (dir "/hl/bench/last_reserved_ip.0")
	}'
}

# config DIR: the network config (one for both plugins: each reads its own keys); DIR's
# nv-ipam.conf names nv-ipam's pool file and store, as a node's does.
config() {
	nvipam_node_conf "$1" "$tmp/pools.json" "$1/store"
	printf '{"cniVersion":"1.0.0","name":"bench","ipam":{"type":"x","poolName":"bench","confDir":"%s","subnet":"10.98.0.0/16","rangeStart":"10.98.0.2","rangeEnd":"10.98.253.232","gateway":"10.98.0.1","dataDir":"%s/hl"}}' \
		"$1" "$1"
}

echo "nv-ipam:    $ours"
echo "host-local: $hl"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
# The stores are filled once: every iteration DELs what it ADDs.
for n in $sizes; do
	for label in ours go; do
		populate "$n" "$tmp/$label-$n"
		config "$tmp/$label-$n" >"$tmp/$label-$n.json"
	done
done
for round in $(seq "$rounds"); do
	for n in $sizes; do
		echo
		echo "== $n live allocations (round $round, load average $(cut -d' ' -f1 /proc/loadavg))"
		printf '%-10s %-7s %6s %8s %10s %10s %10s %12s\n' label command runs failures "min us" \
			"median us" "p90 us" "peak RSS KiB"
		for label in ours go noop; do
			case $label in ours) bin=$ours ;; go) bin=$hl ;; noop) bin=$noop ;; esac
			# The noop reads any config: ours.
			"$bench" --plugin "$label=$bin" --config "$tmp/${label/noop/ours}-$n.json" --netns "/run/netns/$ns" \
				--ifname net1 --cni-path /nonexistent --iterations "$iterations" --warmup 5 |
				awk -v l="$label" '$1 == l' | tee -a "$tmp/sweep-$n"
		done
	done
done

if [ "$burst" -gt 0 ]; then
	echo
	echo "== burst: $burst concurrent ADDs on one empty pool, then their DELs"
	for round in $(seq "$rounds"); do
		for label in ours go; do
			bin=$ours; [ $label = go ] && bin=$hl
			rm -rf "$tmp/burst-$label"
			populate 0 "$tmp/burst-$label"
			config "$tmp/burst-$label" >"$tmp/burst-$label.json"
			"$burster" --label "$label" --plugin "$bin" --config "$tmp/burst-$label.json" \
				--netns "/run/netns/$ns" --cni-path /nonexistent --rails 1 --pods "$burst" \
				--parallel "$burst" | tee -a "$tmp/burst" || true
		done
	done
fi

# Medians over the rounds: ADD against ours with none live, the burst's wall time against Go's.
echo
echo "== ratios (medians of $rounds rounds; each round's in brackets)"
median='function median(v, k,   i, j, t) { for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
		t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }'
first=
for n in $sizes; do
	awk "$median"' $2 == "ADD" { m[$1, ++k[$1]] = $6 / 1000; l[$1] = l[$1] sprintf(" %.2f", $6 / 1000) }
		END { for (i = 1; i <= k["ours"]; i++) o[i] = m["ours", i]
		      for (i = 1; i <= k["go"]; i++) g[i] = m["go", i]
		      for (i = 1; i <= k["noop"]; i++) f[i] = m["noop", i]
		      mo = median(o, k["ours"]); mg = median(g, k["go"]); mf = median(f, k["noop"])
		      if (base == "") base = mo
		      printf "ADD median with %5s live: ours %5.2f ms [%s ] = %.2fx ours at %s; go %7.2f ms; ours/go %.2f; noop %.2f ms, ours/noop %.2f\n",
			n, mo, l["ours"], mo / base, first, mg, mo / mg, mf, mo / mf
		      print mo > basefile }' n="$n" first="${first:-$n}" base="$(cat "$tmp/base" 2>/dev/null)" \
		basefile="$tmp/base.new" "$tmp/sweep-$n"
	[ -n "$first" ] || { first=$n; mv "$tmp/base.new" "$tmp/base"; }
done
# The medians of the rounds' ratios, not of each side's: a round's ratio pairs two runs side by side.
[ "$burst" -gt 0 ] && awk "$median"' $2 == "ADD" { w[$1, ++k[$1]] = $12 }
	END { for (i = 1; i <= k["go"] && i <= k["ours"]; i++) {
		r[i] = w["ours", i] / w["go", i]; l = l sprintf(" %d/%d", w["ours", i], w["go", i]) }
	      if (i > 1) printf "burst ADD wall ours/go: %.2f (ms:%s)\n", median(r, i - 1), l }' "$tmp/burst"
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
