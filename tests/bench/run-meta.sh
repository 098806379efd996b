#!/usr/bin/env bash
# Benchmarks one of our chained meta plugins (portmap, bandwidth, firewall) against the
# reference binary of the same name (containernetworking/plugins v1.9.1, static, from
# ../shared/reference/cni-plugins), exec'd as a runtime does, interleaved in one run, with
# the bench-noop beside them (the exec floor). Each runs in a throwaway network namespace
# standing for the node (the plugins work in the node's own), behind which a pod's netns
# hangs off a veth pair; the previous plugin's result is given as prevResult. Figures are
# printed, not asserted.
#
# Usage: run-meta.sh PLUGIN OURS BENCH NOOP [FLOOR]
#   PLUGIN    portmap, bandwidth or firewall
#   FLOOR     the kernel's own cost, measured in the node and printed beside the figures:
#             tests/bench/nf-floor (portmap: an nftables change, a conntrack dump) or
#             tests/bench/tc-floor (bandwidth: the tc work of an ADD and of a DEL; also
#             exec'd in the run as the "floor" plugin, which does that work alone)
# The iptables backends' floor is the node's own tools: the script times, from bash, the
# listing and the iptables-restore our plugins exec (a rule added, then deleted).
# Environment: ITERATIONS (default 100), WARMUP (default 5).
# Exit status: 0, 1 if a plugin run failed, 2 on a harness error, 77 if not root or the
# reference plugins are missing (NOT RUN, tests/shared.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../shared.sh"
[ $# -ge 4 ] || { echo "usage: $0 portmap|bandwidth|firewall OURS BENCH NOOP [FLOOR]" >&2; exit 2; }
plugin=$1 ours=$(realpath "$2") bench=$(realpath "$3") noop=$(realpath "$4")
floor_exe=${5:+$(realpath "$5")}
case $plugin in portmap | bandwidth | firewall) ;; *) echo "unknown plugin $plugin" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
command -v jq >/dev/null || { echo "error: jq is needed for the ratios" >&2; exit 2; }

tag=$$$RANDOM
tag=${tag:0:8}
node=nfbn-$tag pod=nfbp-$tag
tmp=$(mktemp -d /tmp/cni-bench-meta.XXXXXX)
cleanup() {
	ip netns del "$node" 2>/dev/null || true
	ip netns del "$pod" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
shared_reference_plugins "$tmp/ref" "$plugin" || exit 77
ip netns add "$node"
ip netns add "$pod"
ip -n "$node" link set lo up
ip -n "$node" link add nfh0 type veth peer name eth0 netns "$pod"
ip -n "$node" addr add 10.1.0.1/24 dev nfh0
ip -n "$node" link set nfh0 up
ip -n "$pod" addr add 10.1.0.5/24 dev eth0
ip -n "$pod" link set eth0 up

prev='{"cniVersion":"1.0.0","interfaces":[{"name":"nfh0"},{"name":"eth0","sandbox":"/run/netns/'$pod'"}],"ips":[{"address":"10.1.0.5/24","gateway":"10.1.0.1","interface":1}]}'
configs=()
conf() { # NAME MEMBERS
	printf '{"cniVersion":"1.0.0","name":"nfbench","type":"%s",%s,"prevResult":%s}\n' \
		"$plugin" "$2" "$prev" >"$tmp/$1.json"
	configs+=(--config "$1.json")
}
case $plugin in
portmap)
	maps='"runtimeConfig":{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"},{"hostPort":5353,"containerPort":53,"protocol":"udp"}]}'
	conf iptables "\"backend\":\"iptables\",$maps"
	conf nftables "\"backend\":\"nftables\",$maps"
	;;
bandwidth)
	conf in-out '"ingressRate":8000000,"ingressBurst":80000,"egressRate":16000000,"egressBurst":160000'
	conf egress '"egressRate":16000000,"egressBurst":160000'
	;;
firewall)
	conf iptables '"backend":"iptables"'
	conf isolated '"backend":"iptables","ingressPolicy":"isolated"'
	;;
esac

mkdir "$tmp/bin"
cp "$ours" "$tmp/bin/ours-$plugin"
cp "$tmp/ref/$plugin" "$tmp/bin/ref-$plugin"
cp "$noop" "$tmp/bin/noop"
floor_row=()
if [ "$plugin" = bandwidth ] && [ -n "$floor_exe" ]; then
	# tc-floor as a plugin: the tc work alone, exec'd (the floor's row).
	cp "$floor_exe" "$tmp/bin/floor"
	floor_row=(--plugin "floor=$tmp/bin/floor")
fi
echo "ours: $ours"
echo "ref:  containernetworking/plugins v1.9.1 $plugin (static)"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
if [ "$plugin" != bandwidth ]; then
	echo "iptables: $(ip netns exec "$node" iptables --version)"
fi
status=0
# The reference's bandwidth leaves the veth's qdiscs to the veth's deletion, which a chain's
# first plugin does after it: the next ADD needs them gone (untimed).
after=()
[ "$plugin" != bandwidth ] ||
	after=(--after-del "tc qdisc del dev nfh0 root 2>/dev/null; tc qdisc del dev nfh0 ingress 2>/dev/null; true")
(cd "$tmp" && ip netns exec "$node" "$bench" --plugin "ours=$tmp/bin/ours-$plugin" \
	--plugin "ref=$tmp/bin/ref-$plugin" --plugin "noop=$tmp/bin/noop" "${floor_row[@]}" "${configs[@]}" "${after[@]}" \
	--netns "/run/netns/$pod" --ifname eth0 --cni-path "$tmp/ref" \
	--iterations "${ITERATIONS:-100}" --warmup "${WARMUP:-5}" --json="$tmp/figures.json") ||
	status=$?
[ -s "$tmp/figures.json" ] || exit "$status"

echo
echo "== ratios to the reference (below 1: faster or smaller)"
echo "   'above floor': (ours - noop) / (ref - noop), the work done after being exec'd"
jq -r '
	def fig(c; l; cmd; f): first(.results[] | select(.config == c and .label == l and .command == cmd) | f);
	def ratio(a; b): if a == null or b == null or b == 0 then "-" else a / b end;
	def above(c; cmd): ratio(fig(c; "ours"; cmd; .median_us) - fig(c; "noop"; cmd; .median_us);
				 fig(c; "ref"; cmd; .median_us) - fig(c; "noop"; cmd; .median_us));
	def peak(c; l): [fig(c; l; "ADD"; .peak_rss_kib), fig(c; l; "DEL"; .peak_rss_kib)] | max;
	([.results[].config] | unique)[] as $c |
	[$c, ratio(fig($c; "ours"; "ADD"; .median_us); fig($c; "ref"; "ADD"; .median_us)), above($c; "ADD"),
	 ratio(fig($c; "ours"; "DEL"; .median_us); fig($c; "ref"; "DEL"; .median_us)), above($c; "DEL"),
	 ratio(peak($c; "ours"); peak($c; "ref"))] | @tsv
' "$tmp/figures.json" | awk -F'\t' '
	function r(x) { return x == "-" ? "   -" : sprintf("%4.2f", x) }
	{ printf "%-16s median ADD %s (above floor %s)   median DEL %s (above floor %s)   peak RSS %s\n", $1, r($2), r($3), r($4), r($5), r($6) }'
# The floor under an ADD: being exec'd at all (the noop's median) and the work the kernel
# and the node's tools do for any plugin that builds the same thing, measured here.
declare -A work=()
case $plugin in
portmap)
	out=$(ip netns exec "$node" "$floor_exe" 40)
	head -1 <<<"$out"
	nft=$(tail -1 <<<"$out" | jq .nft_batch_us) ct=$(tail -1 <<<"$out" | jq .conntrack_dump_us)
	work[nftables.json]=$((nft + ct))
	;;
bandwidth)
	out=$(ip netns exec "$node" "$floor_exe" nfh0 40)
	head -1 <<<"$out"
	work[in-out.json]=$(tail -1 <<<"$out" | jq .add_both_us)
	work[egress.json]=$(tail -1 <<<"$out" | jq .add_egress_us)
	;;
esac
if [ "$plugin" != bandwidth ]; then
	# The iptables backends': the node's tools as ours execs them on ADD for a family, one
	# listing and one iptables-restore (here a rule added to a chain of the harness's, then
	# deleted: each commits a change, as the plugin's does). From bash, without a fork
	# for the clock.
	tools=$(ip netns exec "$node" bash -c '
		iptables -t filter -N NFFLOOR --wait
		for i in $(seq 20); do
			op=-A; [ $((i % 2)) = 0 ] && op=-D
			s=${EPOCHREALTIME/./}
			iptables -t filter -S --wait >/dev/null
			printf "*filter\n%s NFFLOOR -j ACCEPT\nCOMMIT\n" $op | iptables-restore --noflush --wait
			e=${EPOCHREALTIME/./}
			echo $((e - s))
		done' | sort -n | sed -n 10p)
	echo "the node's iptables: one listing and one iptables-restore, as ours execs them: ${tools} us (median of 20)"
	# portmap's UDP mapping costs a conntrack dump besides.
	work[iptables.json]=$((tools + ${ct:-0}))
	[ "$plugin" != firewall ] || work[isolated.json]=$tools
fi
floors=$(for c in "${!work[@]}"; do printf '{"config":"%s","us":%s}\n' "$c" "${work[$c]}"; done | jq -s .)
if [ ${#floor_row[@]} -gt 0 ]; then
	echo
	echo "== the ADD's floor measured in the run: tc-floor exec'd as a plugin (the tc work alone)"
	jq -r '
		def fig(c; l): first(.results[] | select(.config == c and .label == l and .command == "ADD") | .median_us);
		([.results[].config] | unique)[] as $c | select(fig($c; "floor") != null and fig($c; "ref") > 0) |
		"\($c): \(fig($c; "floor") | floor) us, \((fig($c; "floor") / fig($c; "ref") * 100 | round) / 100) of the reference'"'"'s median; ours \((fig($c; "ours") / fig($c; "ref") * 100 | round) / 100)"
	' "$tmp/figures.json"
fi
echo
echo "== the ADD's floor: the noop's median and the work above, against the reference's median"
jq -r --argjson floors "$floors" '
	def fig(c; l; f): first(.results[] | select(.config == c and .label == l and .command == "ADD") | f);
	$floors[] as $f | fig($f.config; "noop"; .median_us) as $noop | fig($f.config; "ref"; .median_us) as $ref |
	select($noop != null and $ref != null and $ref > 0) |
	"\($f.config): \($noop + $f.us | floor) us (noop \($noop | floor) + \($f.us)), \((($noop + $f.us) / $ref * 100 | round) / 100) of the reference'"'"'s; ours \((fig($f.config; "ours"; .median_us) / $ref * 100 | round) / 100)"
' "$tmp/figures.json"
exit "$status"
