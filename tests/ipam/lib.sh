# Shared by the nv-ipam process tests: a throwaway pool file and store, and a
# runner that execs nv-ipam as a runtime would.
set -euo pipefail

NVIPAM=${1:?usage: $0 NV-IPAM NV-IPAM-TOOL}
NVIPAM_TOOL=${2:?usage: $0 NV-IPAM NV-IPAM-TOOL}
work=$(mktemp -d /tmp/nvipam-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../node-settings.sh"
node_settings "$work/node-settings.json" "$work"

# One IPPool block of 1000 addresses (10.77.0.1 - 10.77.3.232), gateway .1:
# large enough that the tests never exhaust it.
cat >"$work/pools.json" <<JSON
{"pools": {"pool1": {"subnet": "10.77.0.0/22", "startIP": "10.77.0.1",
                      "endIP": "10.77.3.232", "gateway": "10.77.0.1"}}}
JSON
conf='{"cniVersion":"1.0.0","name":"net1","ipam":{"type":"nv-ipam","poolName":"pool1","poolFile":"'$work'/pools.json","storeFile":"'$work'/store","confDir":"'$work'"}}'

# nvipam CMD CONTAINER-ID: prints the result on stdout, exit status passed through.
nvipam() {
	CNI_COMMAND=$1 CNI_CONTAINERID=$2 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 \
		CNI_IFNAME=net1 CNI_PATH=/nonexistent \
		"$NVIPAM" <<<"$conf"
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

# The store as {"allocations": [{pool, ip, containerID, ifname, network, ...}]}, read
# under its lock by nv-ipam-tool: the store file only says where the pool logs are.
store_json() {
	"$NVIPAM_TOOL" show --store "$work/store" --pool-file "$work/no-pool-file" --json |
		jq '{allocations: [.pools[] | .pool as $p | .allocations[] | . + {pool: $p}]}'
}

# A digest of every file of the store (the store file and the pool logs).
store_digest() {
	cat "$work/store" "$work/store.d/"*.log 2>/dev/null | sha256sum
}

fails=0
check() {
	if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; fails=$((fails + 1)); fi
}
