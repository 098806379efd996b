#!/usr/bin/env bash
# Benchmarks our ipvlan, vlan and vrf against the reference plugins of
# containernetworking/plugins v1.9.1, exec'd as a runtime does, interleaved in
# one run of the harness (tests/bench/bench.c): ipvlan and vlan on a veth
# master with static IPAM (both plugins run the same one: ours, in C, so that
# what differs is the plugins' own work), ipvlan also chained (prevResult's
# addresses, no IPAM at all), vrf chained after a veth end in the pod (IPv4: a
# restored IPv6 address would make both wait out DAD). Figures are printed, not
# asserted. It needs a kernel with the ipvlan, 8021q and vrf drivers: this
# host's has none, so `ninja -C build bench-link` runs it in the kernel
# matrix's 6.1 guest (run-link-uml.sh).
#
# Usage: run-link.sh BIN_DIR REF_DIR [IPAM_DIR]
#   BIN_DIR   ours: ipvlan, vlan, vrf, static, and the harness: bench, bench-noop
#   REF_DIR   the reference ipvlan, vlan, vrf
#   IPAM_DIR  where the static IPAM plugin both run is (default BIN_DIR: ours)
# Environment: ITERATIONS (default 40), WARMUP (default 4), BENCH_CONFIGS (default
#   "ipvlan ipvlan-chained vlan vrf").
# Exit status: 0, 1 if a plugin run failed, 2 on a harness error.
set -uo pipefail

[ $# -ge 2 ] || { echo "usage: $0 BIN_DIR REF_DIR [IPAM_DIR]" >&2; exit 2; }
bin=$1 ref=$2 ipam=${3:-$1}
iterations=${ITERATIONS:-40}
warmup=${WARMUP:-4}
for f in "$bin/bench" "$bin/bench-noop" "$ipam/static"; do
	[ -x "$f" ] || { echo "error: $f is not an executable" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "error: jq is needed for the ratios" >&2; exit 2; }

tag=$$
ns=lkbench$tag
master=lkbm$tag
tmp=$(mktemp -d /tmp/lk-bench.XXXXXX)
cleanup() {
	ip netns del "$ns" 2>/dev/null
	ip link del "$master" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns" || exit 2
ip link add "$master" type veth peer name "lkbp$tag" && ip link set "$master" up || exit 2
# vrf's interface: a veth end in the pod, addressed as an interface plugin leaves it.
ip -n "$ns" -batch - <<EOF2 || exit 2
link add lka type veth peer name lka-p
addr add 10.98.0.2/24 dev lka
link set lka up
route add 10.97.0.0/16 via 10.98.0.1 dev lka
EOF2
static='"ipam":{"type":"static","addresses":[{"address":"10.99.0.2/24"}]}'
printf '{"cniVersion":"1.0.0","name":"bench","type":"ipvlan","master":"%s",%s}\n' "$master" "$static" >"$tmp/ipvlan.json"
printf '{"cniVersion":"1.0.0","name":"bench","type":"ipvlan","master":"%s","prevResult":{"cniVersion":"1.0.0","ips":[{"address":"10.99.0.2/24"}]}}\n' "$master" >"$tmp/ipvlan-chained.json"
printf '{"cniVersion":"1.0.0","name":"bench","type":"vlan","master":"%s","vlanId":10,%s}\n' "$master" "$static" >"$tmp/vlan.json"
printf '{"cniVersion":"1.0.0","name":"bench","type":"vrf","vrfname":"lkbv","prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"lka","sandbox":"/run/netns/%s"}],"ips":[{"address":"10.98.0.2/24","interface":0}]}}\n' "$ns" >"$tmp/vrf.json"

echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, kernel $(uname -r)"
status=0
for c in ${BENCH_CONFIGS:-ipvlan ipvlan-chained vlan vrf}; do
	p=${c%%-*}
	ifname=net1
	[ "$p" = vrf ] && ifname=lka
	echo
	echo "== $c: ours $bin/$p, the reference $ref/$p"
	(cd "$tmp" && "$bin/bench" --plugin "ours=$bin/$p" --plugin "ref=$ref/$p" --plugin "noop=$bin/bench-noop" \
		--config "$c.json" --netns "/run/netns/$ns" --ifname "$ifname" --cni-path "$ipam" \
		--iterations "$iterations" --warmup "$warmup" --json="$tmp/$c-figures.json") || status=1
	[ -s "$tmp/$c-figures.json" ] || { status=2; continue; }
	jq -r --arg p "$c" '
		def fig(l; cmd): first(.results[] | select(.label == l and .command == cmd) | .median_us);
		"\($p): median ADD ours \(fig("ours"; "ADD")) us, reference \(fig("ref"; "ADD")) us, ratio \((fig("ours"; "ADD") / fig("ref"; "ADD")) * 100 | round / 100); " +
		"median DEL ours \(fig("ours"; "DEL")) us, reference \(fig("ref"; "DEL")) us, ratio \((fig("ours"; "DEL") / fig("ref"; "DEL")) * 100 | round / 100); " +
		"the exec floor (noop) \(fig("noop"; "ADD")) us"' "$tmp/$c-figures.json"
done
exit "$status"
