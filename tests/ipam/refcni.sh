#!/usr/bin/env bash
# nv-ipam against the reference's code: refcni (../shared/reference/nvipam-refcni, the
# reference nv-ipam's own allocator and store in one CNI binary) and nv-ipam take turns on
# one store. A store the reference wrote is adopted with every address it held; what we
# hand over (after ADDs on two pools, DELs, and DELs on the handed-over store) is read by
# the reference: its CHECK and DEL of each live attachment succeed, and its ADD takes an
# address none of ours holds.
# REFCNI_DIR: the directory of refcni.xz and SHA256SUMS (default ../shared's, tests/shared.sh).
. "$(dirname "$0")/lib.sh"
REF="python3 $(dirname "$0")/refstore.py"
. "$(dirname "$0")/../shared.sh"
REFCNI_DIR=${REFCNI_DIR:-$(shared_path reference/nvipam-refcni)}
store=$work/store
[ -r "$REFCNI_DIR/refcni.xz" ] && [ -r "$REFCNI_DIR/SHA256SUMS" ] ||
	shared_not_run "$REFCNI_DIR" reference/nvipam-refcni "reference nv-ipam code"
REFCNI_DIR=$(cd "$REFCNI_DIR" && pwd)
command -v xz >/dev/null || { echo "SKIP: xz missing (tests/install-deps.sh test installs xz-utils)"; exit 77; }
mkdir "$work/ref"
xz -dc "$REFCNI_DIR/refcni.xz" >"$work/ref/refcni"
# Bail out on a binary that is not the one described: its word would not be the reference's.
(cd "$work/ref" && sha256sum --quiet -c "$REFCNI_DIR/SHA256SUMS") || { echo "refcni does not match SHA256SUMS" >&2; exit 1; }
chmod +x "$work/ref/refcni"

# Two pools, the same blocks for both: ours as the node's pool file, theirs as IPPools.
cat >"$work/pools.json" <<JSON
{"pools": {"pool1": {"subnet": "10.77.0.0/22", "startIP": "10.77.0.1", "endIP": "10.77.3.232", "gateway": "10.77.0.1"},
           "pool2": {"subnet": "10.88.0.0/24", "startIP": "10.88.0.1", "endIP": "10.88.0.100", "gateway": "10.88.0.1"}}}
JSON
jq '{apiVersion: "v1", kind: "List", items: [.pools | to_entries[] | {apiVersion:
	"nv-ipam.nvidia.com/v1alpha1", kind: "IPPool", metadata: {name: .key, namespace:
	"nvidia-network-operator"}, spec: {subnet: .value.subnet, perNodeBlockSize: 1000,
	gateway: .value.gateway}, status: {allocations: [{nodeName: "host-a", startIP:
	.value.startIP, endIP: .value.endIP}]}}]}' "$work/pools.json" >"$work/ref/pools.json"
jq -e '.items[1].spec.perNodeBlockSize = 100' "$work/ref/pools.json" >"$work/ref/p" && mv "$work/ref/p" "$work/ref/pools.json"
conf='{"cniVersion":"1.0.0","name":"net1","ipam":{"type":"nv-ipam","poolName":"pool1,pool2","confDir":"'$work'"}}'

# refcni CMD CONTAINER: the reference on our store; stdout its answer, its exit status.
refcni() {
	CNI_COMMAND=$1 CNI_CONTAINERID=$2 CNI_IFNAME=net1 CNI_NETNS=/nonexistent CNI_PATH=/nonexistent \
		CNI_ARGS="K8S_POD_NAMESPACE=ns;K8S_POD_NAME=pod-$2;K8S_POD_UID=uid-$2" \
		REF_POOLS=$work/ref/pools.json REF_NODE=host-a REF_STORE=$store \
		"$work/ref/refcni" <<<"$conf" 2>>"$work/ref/log"
}
ips() { jq -r '.ips[].address | sub("/.*"; "")'; }
ours() { store_json | jq -r '.allocations[] | "\(.pool) \(.ip) \(.containerID) \(.ifname)"' | sort; }

# ---- The reference's store, taken over. ----
: >"$work/theirs-ips"
for c in q1 q2 q3 q4; do refcni ADD $c | ips >>"$work/theirs-ips"; done
refcni DEL q2 >/dev/null
check "refcni: four ADDs on two pools, one DEL" '[ "$(sort -u "$work/theirs-ips" | grep -c .)" = 8 ] && [ "$($REF "$store" | grep -c .)" = 6 ]'
$REF "$store" >"$work/theirs"
check "nv-ipam-tool adopt migrates the reference's store" \
	'"$NVIPAM_TOOL" adopt --store "$store" | grep -q migrated && [ "$(jq -r .version "$store")" = 2 ]'
check "every address the reference held is ours, to the same attachment" 'diff "$work/theirs" <(ours) >&2'

# ---- Ours: ADDs and DELs, handed over, DELs on the handed-over store. ----
for c in o1 o2 o3 o4 o5 o6; do nvipam_pod ADD $c ns/pod-$c uid-$c >/dev/null; done
nvipam DEL o2 >/dev/null
nvipam DEL o5 >/dev/null
check "nv-ipam: ADDs on two pools beside the reference's, two DELs" '[ "$(ours | grep -c .)" = 14 ] && [ -z "$(ours | cut -d" " -f1,2 | uniq -d)" ]'
"$NVIPAM_TOOL" handover --store "$store" >/dev/null
nvipam DEL o3 >/dev/null
nvipam DEL q3 >/dev/null
$REF "$store" >"$work/handed"
check "handed over, then two DELs in the file: 10 allocations left" '[ "$(grep -c . "$work/handed")" = 10 ]'
: >"$work/bad"
for c in q1 q4 o1 o4 o6; do refcni CHECK $c >/dev/null || echo "CHECK $c refused" >>"$work/bad"; done
check "refcni CHECK of every live attachment succeeds" '[ ! -s "$work/bad" ] || { cat "$work/bad" >&2; false; }'
check "refcni CHECK of the ones released after the handover fails" '! refcni CHECK o3 >/dev/null && ! refcni CHECK q3 >/dev/null'
new=$(refcni ADD r1 | ips)
check "refcni ADD gets an address in each pool, none of ours" \
	'[ "$(grep -c . <<<"$new")" = 2 ] && ! grep -qwFf <(cut -d" " -f2 "$work/handed") <<<"$new"'
for c in q1 q4 o1 o4 o6; do refcni DEL $c >/dev/null || echo "DEL $c refused" >>"$work/bad"; done
check "refcni DEL of every live attachment succeeds and empties the store but its own" \
	'[ ! -s "$work/bad" ] && [ "$($REF "$store" | cut -d" " -f3 | sort -u)" = r1 ]'

echo "$((9 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
