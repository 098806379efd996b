#!/usr/bin/env bash
# nv-ipam ADD and DEL against the size of the store (issue 35, item 1): exec'd as a
# runtime does, with the pod arguments Multus passes (K8S_POD_NAMESPACE, K8S_POD_NAME,
# K8S_POD_UID; a container ID of 64 hex digits), in one pool holding 0, 1000, 5000 and
# 10000 live allocations spread over a /16, and on a node of 16 pools of 1000 each
# (the ADD in one of them, the DEL visiting them all). Each round runs every size once,
# interleaved (a shared machine's load drifts); the figures are the medians of the
# rounds' medians, beside their ratio to the empty pool: printed, never asserted (a
# loaded machine moves them).
#
# Usage: run-nvipam-scale.sh [NV_IPAM [BENCH [BENCH_STORE]]]
#   NV_IPAM      default build/ipam/nv-ipam/nv-ipam
#   BENCH        default build/tests/bench/bench
#   BENCH_STORE  default build/tests/bench/bench-store (writes the stores)
# Environment: SIZES (default "0 1000 5000 10000"), POOLS16 (default 1000: live
#   allocations in each of the 16 pools; 0: no such node), ITERATIONS (ADD/DEL pairs per
#   size and round, default 40), ROUNDS (default 5), MAX_READ (when set: one more ADD and
#   DEL in a pool of the largest size, exit 1 unless each checked at most MAX_READ blocks
#   of its snapshot and read at most MAX_READ of its allocations, as nv-ipam's debug log
#   says: a count that load does not move).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
ours=$(realpath "${1:-$top/build/ipam/nv-ipam/nv-ipam}")
bench=$(realpath "${2:-$top/build/tests/bench/bench}")
store_fill=$(realpath "${3:-$top/build/tests/bench/bench-store}")
sizes=${SIZES-0 1000 5000 10000}
pools16=${POOLS16:-1000}
iterations=${ITERATIONS:-40}
rounds=${ROUNDS:-5}
max_read=${MAX_READ:-}

tmp=$(mktemp -d /tmp/nvipam-scale.XXXXXX)
. "$(dirname "$0")/../node-settings.sh"
node_settings "$tmp/node-settings.json" "$tmp"
# CNI_NETNS must not be the caller's own netns (IPAM plugins never enter it): a named one,
# or without privileges one of a user namespace, held by a sleeping child.
ns=nvipam-scale-$$ holder=
trap 'rm -rf "$tmp"; ip netns del "$ns" 2>/dev/null || true; [ -z "$holder" ] || kill "$holder"' EXIT
if ip netns add "$ns" 2>/dev/null; then
	netns=/run/netns/$ns
else
	unshare -Urn sleep 3600 &
	holder=$!
	netns=/proc/$holder/ns/net
	for _ in $(seq 100); do
		[ "$(readlink "$netns")" = "$(readlink /proc/self/ns/net)" ] || break
		sleep 0.05
	done
	[ "$(readlink "$netns" 2>/dev/null)" != "$(readlink /proc/self/ns/net)" ] ||
		{ echo "SKIP: cannot create a network namespace" >&2; exit 77; }
fi

# Pool "bench" over 10.98.0.0/16, and pools p0 ... p15 over 10.100.0.0/16 ... 10.115.0.0/16.
{
	printf '{"pools": {"bench": {"subnet": "10.98.0.0/16", "startIP": "10.98.0.1", "endIP": "10.98.253.232", "gateway": "10.98.0.1"}'
	for k in $(seq 0 15); do
		printf ', "p%d": {"subnet": "10.%d.0.0/16", "startIP": "10.%d.0.1", "endIP": "10.%d.253.232", "gateway": "10.%d.0.1"}' \
			"$k" $((100 + k)) $((100 + k)) $((100 + k)) $((100 + k))
	done
	printf '}}\n'
} >"$tmp/pools.json"

# case_dir NAME POOL [MEMBERS]: a directory with its nv-ipam.conf and the network config
# of POOL (with MEMBERS in its ipam section, comma first).
case_dir() {
	mkdir -p "$tmp/$1"
	nvipam_node_conf "$tmp/$1" "$tmp/pools.json" "$tmp/$1/store"
	printf '{"cniVersion":"1.0.0","name":"bench","ipam":{"type":"nv-ipam","poolName":"%s","confDir":"%s"%s}}\n' \
		"$2" "$tmp/$1" "${3:-}" >"$tmp/$1.json"
}

cases=()
for n in $sizes; do
	case_dir "one-$n" bench
	[ "$n" -eq 0 ] || "$store_fill" --fill-pods "$tmp/one-$n/store" bench 10.98.0.0 "$n"
	cases+=("one-$n")
done
if [ "$pools16" -gt 0 ]; then
	case_dir "16x$pools16" p7
	for k in $(seq 0 15); do
		"$store_fill" --fill-pods "$tmp/16x$pools16/store" "p$k" "10.$((100 + k)).0.0" "$pools16"
	done
	cases+=("16x$pools16")
fi

cid=$(printf '%064x' $$)
args="IgnoreUnknown=1;K8S_POD_NAMESPACE=tenant-namespace;K8S_POD_NAME=bench-7f9c8d6b5-q8w2e;K8S_POD_INFRA_CONTAINER_ID=$cid;K8S_POD_UID=0b4f6e1c-2a8d-4c3e-9f71-5d2e8a6b9c10"
echo "nv-ipam: $ours"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
for round in $(seq "$rounds"); do
	for c in "${cases[@]}"; do
		"$bench" --plugin "ours=$ours" --config "$tmp/$c.json" --netns "$netns" \
			--ifname net1 --cni-path /nonexistent --cni-args "$args" --container-id "$cid" \
			--iterations "$iterations" --warmup 3 |
			awk -v c="$c" '$1 == "ours" { print c, $2, $6, $8 }' >>"$tmp/figures"
	done
done

echo
echo "== median of $rounds rounds of $iterations ADD/DEL pairs each (us; ratio to the empty pool)"
printf '%-14s %10s %7s %10s %7s %13s\n' store "ADD us" ratio "DEL us" ratio "peak RSS KiB"
awk -v order="${cases[*]}" '
	function median(v, k,   i, j, t) { for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
	{ m[$1, $2, ++k[$1, $2]] = $3; if ($4 > rss[$1]) rss[$1] = $4 }
	END {
		n = split(order, c, " ")
		for (i = 1; i <= n; i++) for (cmd = 1; cmd <= 2; cmd++) {
			name = cmd == 1 ? "ADD" : "DEL"; kk = k[c[i], name]
			for (j = 1; j <= kk; j++) v[j] = m[c[i], name, j]
			med[i, cmd] = median(v, kk)
		}
		for (i = 1; i <= n; i++) {
			label = c[i]; sub(/^one-/, "", label); if (label !~ /x/) label = label " in 1"
			printf "%-14s %10.0f %6.2fx %10.0f %6.2fx %13d\n", label, med[i, 1], med[i, 1] / med[1, 1],
				med[i, 2], med[i, 2] / med[1, 2], rss[c[i]]
		}
	}' "$tmp/figures"
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"

[ -n "$max_read" ] || exit 0
# A fresh pool (its snapshot at the log's end, as the fill wrote it): one ADD and its DEL.
largest=0
for n in $sizes; do [ "$n" -gt "$largest" ] && largest=$n; done
case_dir read bench ',"logFile":"'"$tmp"'/read.log","logLevel":"debug"'
"$store_fill" --fill-pods "$tmp/read/store" bench 10.98.0.0 "$largest"
"$bench" --plugin "ours=$ours" --config "$tmp/read.json" --netns "$netns" --ifname net1 \
	--cni-path /nonexistent --cni-args "$args" --container-id "$cid" --iterations 1 --warmup 0 >/dev/null
echo
echo "== what an ADD and its DEL read of a pool of $largest (at most $max_read each)"
grep -o '[0-9]* of its snapshot.s [0-9]* blocks checked, [0-9]* of its [0-9]* allocations read' \
	"$tmp/read.log" | awk -v max="$max_read" -v n="$largest" '
	{ print; seen++; if ($1 > max || $8 > max || $11 != n + (seen == 1)) bad = 1 }
	END { if (seen != 2 || bad) { print "FAIL: not two reads of at most " max; exit 1 } }'
