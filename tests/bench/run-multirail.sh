#!/usr/bin/env bash
# The multi-rail benchmark: a GPU node's eight rails (eight veth masters, eight pools),
# PODS pods with one attachment per rail, each pod's eight ADDs one after another as
# Multus makes them, PARALLEL pods at once; then every pod's DELs. Ours (macvlan +
# nv-ipam) against Debian's Go macvlan + host-local, in the same run, each with its own
# pods. Prints wall times, per-pod p50/p99, failures, addresses given twice, and what
# is left after the DELs (links in the pods, addresses in the stores); figures are
# printed, not asserted.
#
# Usage: run-multirail.sh [MACVLAN [NV_IPAM [NV_IPAM_TOOL [MULTIRAIL [NOOP]]]]]
#   defaults: the build/ binaries; NOOP (bench-noop) runs first as the exec floor: the
#   same pods and attachments with a plugin that does nothing
# Environment: PODS (default 100), PARALLEL (default 16), RAILS (default 8),
#   ROUNDS (default 1: ours then Go; 2: then Go then ours again), REFERENCE_CNI_DIR
#   (default /usr/lib/cni: Debian's macvlan and host-local).
# Exit status: 0, 1 when a run failed or left something behind, 2 on a harness error,
# 77 when not root or a netns cannot be made.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
macvlan=$(realpath "${1:-$top/build/plugins/macvlan/macvlan}")
nvipam=$(realpath "${2:-$top/build/ipam/nv-ipam/nv-ipam}")
tool=$(realpath "${3:-$top/build/ipam/nv-ipam/tool/nv-ipam-tool}")
driver=$(realpath "${4:-$top/build/tests/bench/multirail}")
noop=$(realpath "${5:-$top/build/tests/bench/bench-noop}")
ref=${REFERENCE_CNI_DIR:-/usr/lib/cni}
pods=${PODS:-100}
parallel=${PARALLEL:-16}
rails=${RAILS:-8}
rounds=${ROUNDS:-1}

skip() { echo "SKIP: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
[ -x "$ref/macvlan" ] && [ -x "$ref/host-local" ] || skip "$ref/macvlan or host-local missing (containernetworking-plugins)"
for b in "$macvlan" "$nvipam" "$tool" "$driver" "$noop"; do
	[ -x "$b" ] || { echo "error: $b is not an executable; build it first" >&2; exit 2; }
done

tag=mr$$
host=$tag-host
tmp=$(mktemp -d /tmp/multirail.XXXXXX)
cleanup() {
	for i in $(seq 0 $((pods - 1))); do
		ip netns del "$tag-ours-$i" 2>/dev/null || true
		ip netns del "$tag-go-$i" 2>/dev/null || true
		ip netns del "$tag-noop-$i" 2>/dev/null || true
	done
	ip netns del "$host" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../node-settings.sh"
node_settings "$tmp/node-settings.json" "$tmp"

# The node: a netns of its own with the rails' masters (veth: no InfiniBand here).
ip netns add "$host" || skip "cannot create a network namespace"
ip -n "$host" link set lo up
for r in $(seq 0 $((rails - 1))); do
	ip -n "$host" link add "rail$r" type veth peer name "rail${r}p"
	ip -n "$host" link set "rail$r" up
	ip -n "$host" link set "rail${r}p" up
done
for i in $(seq 0 $((pods - 1))); do
	ip netns add "$tag-ours-$i"
	ip netns add "$tag-go-$i"
	ip netns add "$tag-noop-$i"
done

# The same addresses for both: rail r is 10.20r.0.0/16, the node's block .0.1-.3.232.
{
	printf '{"pools": {'
	for r in $(seq 0 $((rails - 1))); do
		[ "$r" -eq 0 ] || printf ','
		printf '"rail%d": {"subnet": "10.%d.0.0/16", "startIP": "10.%d.0.1", "endIP": "10.%d.3.232", "gateway": "10.%d.0.1"}' \
			"$r" $((200 + r)) $((200 + r)) $((200 + r)) $((200 + r))
	done
	printf '}}\n'
} >"$tmp/pools.json"
mkdir -p "$tmp/bin-ours"
ln -s "$macvlan" "$tmp/bin-ours/macvlan"
ln -s "$nvipam" "$tmp/bin-ours/nv-ipam"
cat >"$tmp/ours.json" <<JSON
{"cniVersion":"0.3.1","name":"rail%RAIL%","type":"macvlan","master":"rail%RAIL%","mode":"bridge",
 "ipam":{"type":"nv-ipam","poolName":"rail%RAIL%","confDir":"$tmp"}}
JSON
nvipam_node_conf "$tmp" "$tmp/pools.json" "$tmp/store"
cat >"$tmp/go.json" <<JSON
{"cniVersion":"0.3.1","name":"rail%RAIL%","type":"macvlan","master":"rail%RAIL%","mode":"bridge",
 "ipam":{"type":"host-local","dataDir":"$tmp/host-local","ranges":[[{"subnet":"10.20%RAIL%.0.0/16",
 "rangeStart":"10.20%RAIL%.0.2","rangeEnd":"10.20%RAIL%.3.232","gateway":"10.20%RAIL%.0.1"}]]}}
JSON

# Links left in a label's pods (lo aside), after their DELs.
links_left() {
	local n=0 i
	for i in $(seq 0 $((pods - 1))); do
		n=$((n + $(ip -n "$tag-$1-$i" -o link show | grep -vc ': lo:' || true)))
	done
	echo "$n"
}

status=0
run() {
	local label=$1 plugin=$2 path=$3 conf=$4 left addrs
	ip netns exec "$host" "$driver" --label "$label" --plugin "$plugin" --cni-path "$path" \
		--config "$conf" --netns-prefix "/run/netns/$tag-$label-" --rails "$rails" --pods "$pods" \
		--parallel "$parallel" | tee -a "$tmp/out" || status=1
	left=$(links_left "$label")
	if [ "$label" = noop ]; then
		addrs=0
	elif [ "$label" = ours ]; then
		addrs=$("$tool" show --store "$tmp/store" --pool-file "$tmp/pools.json" --json | jq '[.pools[].used] | add // 0')
	else
		addrs=$(find "$tmp/host-local" -type f ! -name lock ! -name 'last_reserved_ip*' 2>/dev/null | wc -l)
	fi
	printf '%-6s left after the DELs: %d links in the pods, %d addresses in the store\n' "$label" "$left" "$addrs"
	[ "$left" -eq 0 ] && [ "$addrs" -eq 0 ] || status=1
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
echo "ours: $macvlan + $nvipam; go: $ref/macvlan + $ref/host-local; noop: $noop"
mkdir -p "$tmp/bin-noop"
ln -s "$noop" "$tmp/bin-noop/noop"
run noop "$noop" "$tmp/bin-noop" "$tmp/ours.json"
for round in $(seq "$rounds"); do
	if [ $((round % 2)) -eq 1 ]; then
		run ours "$macvlan" "$tmp/bin-ours" "$tmp/ours.json"
		run go "$ref/macvlan" "$ref" "$tmp/go.json"
	else
		run go "$ref/macvlan" "$ref" "$tmp/go.json"
		run ours "$macvlan" "$tmp/bin-ours" "$tmp/ours.json"
	fi
done
# Each round's runs against each other: wall times (ADD, DEL) and the per-pod ADD p50;
# the noop's (one run, first) is the floor under both.
awk '$2 == "ADD" || $2 == "DEL" { k = ++n[$1, $2]; wall[$1, $2, k] = $12
		if ($2 == "ADD") p50[$1, k] = $17 }
	END { if (n["noop", "ADD"])
		printf "noop (exec floor) ADD wall %d ms, DEL wall %d ms, per-pod ADD p50 %.1f ms\n",
			wall["noop", "ADD", 1], wall["noop", "DEL", 1], p50["noop", 1]
	      for (k = 1; k <= n["go", "ADD"] && k <= n["ours", "ADD"]; k++) {
		for (c = 1; c <= 2; c++) { cmd = c == 1 ? "ADD" : "DEL"
			if (wall["go", cmd, k] > 0)
				printf "round %d %s wall: ours %d ms, go %d ms: ours/go %.2f\n", k, cmd,
					wall["ours", cmd, k], wall["go", cmd, k],
					wall["ours", cmd, k] / wall["go", cmd, k] }
		if (p50["go", k] > 0)
			printf "round %d ADD per-pod p50: ours %.1f ms, go %.1f ms: ours/go %.2f\n", k,
				p50["ours", k], p50["go", k], p50["ours", k] / p50["go", k] } }' "$tmp/out"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
