#!/usr/bin/env bash
# What a pool's status costs at cluster scale (issue 35, item 4): NODES nodes named as GPU
# nodes are (NAME_LEN bytes: 17 as "gpu-a07-r12-n7042", or more), three pools carved by
# nv-ipam-tool carve exactly as ipam-controller carves them (an IPv4 IPPool of 64 addresses
# a node, an IPv4 CIDRPool of a /24 a node, an IPv6 CIDRPool of a /64 a node), each written
# compactly as the API server sends it. Printed per pool: bytes per entry, the object, the
# object gzip'd; the node count at which its status passes etcd's default request limit
# (1.5 MiB); and what one change of it sends across NODES watching ipam-nodes, then what a
# node joining sends across POOLS_PER_NODE pools (16: 8 rails, both families).
#
# Usage: run-status-size.sh [NV_IPAM_TOOL]   (default build/ipam/nv-ipam/tool/nv-ipam-tool)
# Environment: NODES (10000), NAME_LEN (17, at least 17), POOLS_PER_NODE (16),
#   MAX_ENTRY_BYTES (when set: exit 1 unless every pool's entry is at most that many bytes
#   and every selected node has its one entry: the reduced form CI runs).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tool=$(realpath "${1:-$top/build/ipam/nv-ipam/tool/nv-ipam-tool}")
nodes=${NODES:-10000}
name_len=${NAME_LEN:-17}
per_node=${POOLS_PER_NODE:-16}
max_entry=${MAX_ENTRY_BYTES:-}
etcd_limit=1572864
for p in jq gzip awk; do command -v "$p" >/dev/null || { echo "error: $p missing" >&2; exit 2; }; done
[ "$name_len" -ge 17 ] || { echo "error: NAME_LEN must be at least 17" >&2; exit 2; }

tmp=$(mktemp -d /tmp/status-size.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Node names: "gpu-a07-r12-n7042", padded before the number to NAME_LEN bytes.
pad=$(printf '%*s' $((name_len - 17)) '' | tr ' ' x)
awk -v n="$nodes" -v pad="$pad" 'BEGIN {
	printf "["
	for (i = 0; i < n; i++)
		printf "%s{\"name\":\"gpu-a%02d-r%02d-%sn%04d\",\"labels\":{}}", i ? "," : "",
			i % 100, (i / 100) % 100, pad, i % 10000
	printf "]\n"
}' >"$tmp/nodes.json"

pool() { # KIND NAME SPEC
	printf '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"%s","metadata":{"name":"%s","namespace":"nvidia-network-operator"},"spec":%s}' "$1" "$2" "$3"
}
{
	printf '['
	pool IPPool rail-v4 '{"subnet":"10.0.0.0/12","perNodeBlockSize":64,"gateway":"10.0.0.1"}'
	printf ','
	pool CIDRPool rail-cidr-v4 '{"cidr":"10.64.0.0/10","perNodeNetworkPrefix":24,"gatewayIndex":1}'
	printf ','
	pool CIDRPool rail-cidr-v6 '{"cidr":"fd00:10:100::/48","perNodeNetworkPrefix":64,"gatewayIndex":1}'
	printf ']\n'
} >"$tmp/pools.json"

start=$(date +%s%N)
"$tool" carve --pools "$tmp/pools.json" --nodes "$tmp/nodes.json" >"$tmp/carved.json"
took=$((($(date +%s%N) - start) / 1000000))

echo "# $nodes nodes, names of $name_len bytes; nv-ipam-tool carve: $took ms for the 3 pools"
printf '%-14s %8s %9s %9s %9s %16s\n' pool entries "B/entry" object gzip "nodes to 1.5MiB"
fail=0
total=0
for i in 0 1 2; do
	jq -c ".items[$i]" "$tmp/carved.json" >"$tmp/obj.json"
	jq -c ".items[$i] | .status.allocations = []" "$tmp/carved.json" >"$tmp/empty.json"
	name=$(jq -r .metadata.name "$tmp/obj.json")
	entries=$(jq '.status.allocations | length' "$tmp/obj.json")
	distinct=$(jq '[.status.allocations[].nodeName] | unique | length' "$tmp/obj.json")
	size=$(($(wc -c <"$tmp/obj.json") - 1))
	base=$(($(wc -c <"$tmp/empty.json") - 1))
	gz=$(gzip -c "$tmp/obj.json" | wc -c)
	awk -v n="$name" -v e="$entries" -v s="$size" -v b="$base" -v g="$gz" -v lim="$etcd_limit" 'BEGIN {
		per = (s - b) / e
		printf "%-14s %8d %9.1f %9d %9d %16d\n", n, e, per, s, g, int((lim - b) / per)
	}'
	total=$((total + size))
	if [ -n "$max_entry" ]; then
		if [ "$entries" -ne "$nodes" ] || [ "$distinct" -ne "$nodes" ]; then
			echo "FAIL: $name: $entries entries for $distinct distinct nodes, not one for each of $nodes" >&2
			fail=1
		fi
		if [ $(((size - base) > max_entry * entries)) = 1 ]; then
			echo "FAIL: $name: $(((size - base) / entries)) bytes an entry, more than $max_entry" >&2
			fail=1
		fi
	fi
done
# The API server writes each watch event to every watcher, uncompressed.
awk -v t="$total" -v n="$nodes" -v k="$per_node" 'BEGIN {
	avg = t / 3
	printf "one change of one pool, sent to %d watching ipam-nodes: %.2f GB\n", n, avg * n / 1e9
	printf "a node joining %d pools: %.1f GB\n", k, avg * n * k / 1e9
}'
exit "$fail"
