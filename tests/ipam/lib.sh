# Shared by the nv-ipam process tests: a throwaway pool file and store, and a
# runner that execs nv-ipam as a runtime would.
set -euo pipefail

# Absolute: meson passes paths relative to the build directory, and a test that looks
# for its processes by command line must not match another worktree's.
NVIPAM=$(realpath "${1:?usage: $0 NV-IPAM NV-IPAM-TOOL}")
NVIPAM_TOOL=$(realpath "${2:?usage: $0 NV-IPAM NV-IPAM-TOOL}")
# STORE_SUMS (meson sets it): tests/store-sums, the checksums of a store's files, for the
# stores the tests write by hand.
STORE_SUMS=${STORE_SUMS:-$(dirname "$NVIPAM")/../../tests/store-sums}
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

# The store as JSON ({"pools": {KEY: {"lastReservedIP"}}, "allocations": [{pool, ip,
# containerID, ifname, network, ...}]}), read under its lock by nv-ipam-tool.
# store_json [STORE]: another store than the test's.
store_json() {
	"$NVIPAM_TOOL" show --store "${1:-$work/store}" --no-pool-file --json |
		jq '{pools: ([.pools[] | {key: .pool, value: (if .lastReservedIP then
				{lastReservedIP} else {} end)}] | from_entries),
			allocations: [.pools[] | .pool as $p | .allocations[] | . + {pool: $p}]}'
}

# The jq definition of a pool log's file name stem: the key, every byte but letters,
# digits, "_", "-" and a "." past the first written %XX ("cidrpool/p" is cidrpool%2Fp).
JQ_STEM='def stem: explode | to_entries | map(.key as $i | .value as $c |
	if ($c >= 97 and $c <= 122) or ($c >= 65 and $c <= 90) or ($c >= 48 and $c <= 57) or
	   $c == 95 or $c == 45 or ($c == 46 and $i > 0) then [$c] | implode
	else "%" + ("0123456789ABCDEF" | .[($c / 16 | floor):($c / 16 | floor) + 1] + .[$c % 16:$c % 16 + 1])
	end) | join("");'

# Hand edits, for stores the plugin never writes (an address held twice, an interface with
# two addresses): store_edit JQ-FILTER writes the store anew as pool logs holding what
# store_json gives, edited by the filter; the snapshots go. Strings must need no escape.
store_edit() {
	local json stem
	json=$(store_json | jq "$1")
	rm -rf "$work/store.d" "$work/store.edit"
	mkdir -m 0700 "$work/store.d" "$work/store.edit"
	jq -r "$JQ_STEM"'
		(.pools | keys[]) as $k | [$k | stem, "nv-ipam-pool-log", "1", $k, "1111111111111111"] | join("\t")' \
		<<<"$json" | while IFS=$'\t' read -r stem line; do echo "$line" >"$work/store.edit/$stem"; done
	jq -r "$JQ_STEM"'
		(.allocations[] | [(.pool | stem), "A", "", "", "", .ip, .containerID, .ifname, .network,
			.podNamespace, .podName, .podUID, .deviceID, .created]),
		(.pools | to_entries[] | select(.value.lastReservedIP) | [(.key | stem), "L", .value.lastReservedIP])
		| join("\t")' <<<"$json" |
		while IFS=$'\t' read -r stem line; do echo "$line" >>"$work/store.edit/$stem"; done
	for f in "$work/store.edit/"*; do
		[ -e "$f" ] || continue
		stem=${f##*/}
		"$STORE_SUMS" lines <"$f" >"$work/store.d/$stem.log"
	done
	chmod 0600 "$work/store.d/"*.log 2>/dev/null || true
	printf '{"version":2,"pools":"store.d"}\n' >"$work/store"
	rm -rf "$work/store.edit"
}

# reference_store FILE: the reference nv-ipam node daemon's store of the document on stdin
# ({version, pools: {KEY: {name, entries: {ID: {container_id, interface_name, ip_address,
# metadata: {create_time, pod_uuid, pod_name, pod_namespace, device_id}}}, last_reserved_ip}}})
# written to FILE with the checksum the daemon gives it: FNV-1a-32 of the document as Go
# marshals it with "checksum":0 (members in the daemon's order, map keys sorted).
reference_store() {
	local go sum
	go=$(jq -c 'def m: to_entries | sort_by(.key) | from_entries;
		{version, checksum: 0, pools: (.pools | map_values({name: (.name // ""),
			entries: ((.entries // {}) | map_values({container_id: (.container_id // ""),
				interface_name: (.interface_name // ""), ip_address: (.ip_address // ""),
				metadata: {create_time: (.metadata.create_time // ""),
					pod_uuid: (.metadata.pod_uuid // ""), pod_name: (.metadata.pod_name // ""),
					pod_namespace: (.metadata.pod_namespace // ""),
					device_id: (.metadata.device_id // ""),
					pool_config_snapshot: (.metadata.pool_config_snapshot // "")}}) | m),
			last_pool_config: (.last_pool_config // ""),
			last_reserved_ip: (.last_reserved_ip // "")}) | m)}')
	sum=$(printf '%s' "$go" | "$STORE_SUMS" fnv32)
	printf '%s\n' "${go/\"checksum\":0,/\"checksum\":$sum,}" >"$1"
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
