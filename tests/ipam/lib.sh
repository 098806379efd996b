# Shared by the nv-ipam process tests: a throwaway pool file and store, and a
# runner that execs nv-ipam as a runtime would.
set -euo pipefail

# Absolute: meson passes paths relative to the build directory, and a test that looks
# for its processes by command line must not match another worktree's.
NVIPAM=$(realpath "${1:?usage: $0 NV-IPAM NV-IPAM-TOOL}")
NVIPAM_TOOL=$(realpath "${2:?usage: $0 NV-IPAM NV-IPAM-TOOL}")
work=$(mktemp -d /tmp/nvipam-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../node-settings.sh"
node_settings "$work/node-settings.json" "$work"
nvipam_node_conf "$work" "$work/pools.json" "$work/store"

# One IPPool block of 1000 addresses (10.77.0.1 - 10.77.3.232), gateway .1:
# large enough that the tests never exhaust it.
cat >"$work/pools.json" <<JSON
{"pools": {"pool1": {"subnet": "10.77.0.0/22", "startIP": "10.77.0.1",
                      "endIP": "10.77.3.232", "gateway": "10.77.0.1"}}}
JSON
conf='{"cniVersion":"1.0.0","name":"net1","ipam":{"type":"nv-ipam","poolName":"pool1","confDir":"'$work'"}}'

# nvipam CMD CONTAINER-ID: prints the result on stdout, exit status passed through.
nvipam() {
	CNI_COMMAND=$1 CNI_CONTAINERID=$2 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 \
		CNI_IFNAME=net1 CNI_PATH=/nonexistent \
		"$NVIPAM" <<<"$conf"
}

# nvipam_pod CMD CONTAINER-ID NAMESPACE/NAME [UID]: nvipam for a pod, with the CNI_ARGS
# kubelet passes (the pod's namespace, name and UID are recorded with the allocation).
nvipam_pod() {
	CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=${3%%/*};K8S_POD_NAME=${3#*/}${4:+;K8S_POD_UID=$4}" \
		nvipam "$1" "$2"
}

# wait_older: until a pod listing started now (listed_at=$(date +%s)) is surely later than
# every allocation made so far (gc counts those made two whole seconds before it).
wait_older() {
	local s
	s=$(date +%s)
	while [ "$(date +%s)" -lt $((s + 2)) ]; do sleep 0.05; done
}

# "container address" lines of every ADD that succeeded and was not deleted since.
live_from_log() {
	awk '$1=="ADD"{ip[$2]=$3} $1=="DEL"{delete ip[$2]} END{for (c in ip) print c, ip[c]}' "$1" | sort
}

# How many "container address/len" lines of stdin have no matching allocation in store JSON $1.
count_missing() {
	local store=$1 id ip missing=0
	while read -r id ip; do
		[ -n "$id" ] || continue
		jq -e --arg id "$id" --arg ip "${ip%/*}" \
			'any(.allocations[]; .containerID == $id and .ip == $ip)' <<<"$store" >/dev/null ||
			missing=$((missing + 1))
	done
	echo "$missing"
}

# The store in the shape of the single-file store of version 1 ({"pools": {KEY:
# {"lastReservedIP"}}, "allocations": [{pool, ip, containerID, ifname, network, ...}]}),
# read under its lock by nv-ipam-tool: the store file only says where the pool logs are.
# store_json [STORE]: another store than the test's.
store_json() {
	"$NVIPAM_TOOL" show --store "${1:-$work/store}" --pool-file "$work/no-pool-file" --json |
		jq '{pools: ([.pools[] | {key: .pool, value: (if .lastReservedIP then
				{lastReservedIP} else {} end)}] | from_entries),
			allocations: [.pools[] | .pool as $p | .allocations[] | . + {pool: $p}]}'
}

# Hand edits go through a store file of version 1 (the single-file layout, migrated on
# first use): store_v1 JQ-FILTER writes the store as one, edited by the filter.
store_v1() {
	store_json | jq "{version: 1, pools, allocations: [.allocations[] |
		{pool, ip, containerID, ifname, network, podNamespace, podName, podUID, deviceID, created}]} | $1" \
		>"$work/store.new" && mv "$work/store.new" "$work/store"
}

# A digest of every file of the store (the store file, the pool logs and snapshots).
store_digest() {
	local files
	shopt -s nullglob
	files=("$work/store.d/"*.log "$work/store.d/"*.snap)
	shopt -u nullglob
	cat "$work/store" "${files[@]}" 2>/dev/null | sha256sum
}

fails=0
check() {
	if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; fails=$((fails + 1)); fi
}
