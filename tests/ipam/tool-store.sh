#!/usr/bin/env bash
# nv-ipam-tool show, release and check on stores the nv-ipam binary made: the
# allocations shown per pool with their pod, container, interface and age; release by
# container (one interface or all) and by pod, the store re-read after each; check on a
# clean store, with two pools' blocks overlapping, after the node's block moved, for a pool gone from the node, on a store
# holding an address twice and on one where an interface holds two addresses in a pool
# (release reports every address it drops); the store lock respected; a release whose
# commit fails prints nothing as released.
. "$(dirname "$0")/lib.sh"
TOOL=${2:?usage: $0 NV-IPAM NV-IPAM-TOOL}

cat >"$work/pools.json" <<JSON
{"pools": {
  "pool1": {"subnet": "10.77.0.0/16", "startIP": "10.77.0.1", "endIP": "10.77.0.24", "gateway": "10.77.0.1"},
  "cidrpool/pc": {"cidr": "10.88.0.0/16", "prefix": "10.88.1.0/24", "gateway": "10.88.1.1"}
}}
JSON
# add ID IFNAME POOLTYPE POOL POD [IP]
add() {
	local c='{"cniVersion":"1.0.0","name":"net-'$4'","ipam":{"type":"nv-ipam","poolName":"'$4'","poolType":"'$3'","confDir":"'$work'"}}'
	CNI_COMMAND=ADD CNI_CONTAINERID=$1 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 CNI_IFNAME=$2 \
		CNI_PATH=/nonexistent CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=${5%/*};K8S_POD_NAME=${5#*/};K8S_POD_UID=uid-$1${6:+;IP=$6}" \
		"$NVIPAM" <<<"$c" >/dev/null 2>&1
}
T() { "$TOOL" "$@" --store "$work/store"; }
held() { store_json | jq -r '[.allocations[] | .containerID + "/" + .ifname + "=" + .ip] | sort | join(" ")'; }

add c1 net1 ippool pool1 default/pod-a
add c1 net2 ippool pool1 default/pod-a
add c2 net1 ippool pool1 team/pod-b
add c3 net1 cidrpool pc team/pod-c
add c4 net1 cidrpool pc team/pod-b
check "the nv-ipam binary made the store" "[ \"\$(held)\" = 'c1/net1=10.77.0.2 c1/net2=10.77.0.3 c2/net1=10.77.0.4 c3/net1=10.88.1.2 c4/net1=10.88.1.3' ]"

# show --json: per pool, block, counts, allocations with pod and age.
T show --pool-file "$work/pools.json" --json >"$work/show.json"
check "show lists both pools" "[ \"\$(jq -r '[.pools[].pool] | join(\" \")' \"$work/show.json\")\" = 'cidrpool/pc pool1' ]"
check "show: pool1's block, used and free" \
	"[ \"\$(jq -c '.pools[1] | [.type, .startIP, .endIP, .gateway, .used, .free]' \"$work/show.json\")\" = '[\"ippool\",\"10.77.0.1\",\"10.77.0.24\",\"10.77.0.1\",3,20]' ]"
check "show: the CIDRPool's prefix range and free count" \
	"[ \"\$(jq -c '.pools[0] | [.type, .subnet, .startIP, .endIP, .used, .free]' \"$work/show.json\")\" = '[\"cidrpool\",\"10.88.1.0/24\",\"10.88.1.1\",\"10.88.1.254\",2,251]' ]"
check "show: each allocation with pod, container, ifname, network" \
	"[ \"\$(jq -c '.pools[1].allocations[0] | [.ip, .podNamespace, .podName, .podUID, .containerID, .ifname, .network]' \"$work/show.json\")\" = '[\"10.77.0.2\",\"default\",\"pod-a\",\"uid-c1\",\"c1\",\"net1\",\"net-pool1\"]' ]"
check "show: age and creation time" \
	"jq -e '.pools[1].allocations[0] | (.ageSeconds >= 0 and .ageSeconds < 120 and (.created | test(\"^20[0-9-]+T[0-9:]+Z$\")))' \"$work/show.json\" >/dev/null"
T show --pool-file "$work/pools.json" >"$work/show.txt"
check "show (text): the pool line" "grep -q '^pool pool1  block 10.77.0.1-10.77.0.24  gateway 10.77.0.1  used 3  free 20$' \"$work/show.txt\""
check "show (text): an allocation line" "grep -Eq '^  10\.77\.0\.4 +team/pod-b +net-pool1 +net1 +[0-9]+s +c2$' \"$work/show.txt\""
T show --pool-file "$work/pools.json" --pool pool1 >"$work/show1.txt"
check "show --pool: that pool alone" "grep -q '^pool pool1 ' \"$work/show1.txt\" && ! grep -q '^pool cidrpool/pc' \"$work/show1.txt\""
rc=0
T show --pool-file "$work/pools.json" --pool nosuch >"$work/show2.txt" 2>"$work/err" || rc=$?
check "show --pool of no pool: says so, exits 1, prints nothing" \
	"[ $rc = 1 ] && grep -q 'no pool \"nosuch\" in' \"$work/err\" && [ ! -s \"$work/show2.txt\" ]"
check "show --pool filters" "[ \"\$(T show --pool-file \"$work/pools.json\" --pool cidrpool/pc --json | jq -r '[.pools[].pool] | join(\" \")')\" = cidrpool/pc ]"
check "show of a missing store says so, exits 1 and creates nothing" "! \"$TOOL\" show --store \"$work/none/store\" --pool-file \"$work/pools.json\" --json >\"$work/out\" 2>\"$work/err\" && grep -q \"no store at $work/none/store\" \"$work/err\" && [ ! -s \"$work/out\" ] && [ ! -e \"$work/none\" ]"
# show writes nothing and reads what it is told: a --pool-file that is not there, a file
# that is no store, a store whose lock file was never made (nothing of it created), and a
# user who is not root told to be.
rc=0
T show --pool-file "$work/pools.jsn" >"$work/out" 2>"$work/err" || rc=$?
check "show --pool-file of no file: exits 1 naming it, prints nothing" \
	"[ $rc = 1 ] && grep -qF 'no node pool file at $work/pools.jsn (--no-pool-file shows the store alone)' \"$work/err\" && [ ! -s \"$work/out\" ]"
mkdir -m 700 "$work/other"
cp "$work/pools.json" "$work/other/pools.json"
for cmd in show check; do
	rc=0
	"$TOOL" "$cmd" --store "$work/other/pools.json" --pool-file "$work/pools.json" >"$work/out" 2>&1 || rc=$?
	check "$cmd --store of a file that is no store: exits 1, calls it that, makes no lock" \
		"[ $rc = 1 ] && grep -qF '$work/other/pools.json is not a store (field \"version\" is missing): the store is the file nv-ipam.conf'\"'\"'s storeFile names' \"$work/out\" && [ \"\$(ls -A \"$work/other\")\" = pools.json ]"
done
cp -a "$work/store" "$work/store.d" "$work/other/"
touch "$work/other/store.tmp.x1"
before=$(cd "$work/other" && find . -printf '%p %s %T@\n' | sort)
"$TOOL" show --store "$work/other/store" --pool-file "$work/pools.json" --json >"$work/out" 2>"$work/err" || true
check "show of a store without its lock file: read, and nothing made or removed" \
	"[ \"\$(jq '[.pools[].used] | add' \"$work/out\")\" = 5 ] && [ \"\$(cd \"$work/other\" && find . -printf '%p %s %T@\\n' | sort)\" = \"\$before\" ]"
"$TOOL" check --store "$work/other/store" --pool-file "$work/pools.json" >"$work/out" 2>&1 || true
check "check of it too" "grep -q '^5 allocations, 0 errors' \"$work/out\" && [ \"\$(cd \"$work/other\" && find . -printf '%p %s %T@\\n' | sort)\" = \"\$before\" ]"
"$TOOL" show --store "$work/other/store" --no-pool-file --json >"$work/out" 2>"$work/err" || true
check "show --no-pool-file: the store alone, no note" \
	"[ \"\$(jq '[.pools[].used] | add' \"$work/out\")\" = 5 ] && [ ! -s \"$work/err\" ]"
rm -r "$work/other"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
else
	nobody=()
fi
if [ "$(id -u)" != 0 ] || [ ${#nobody[@]} -gt 0 ]; then
	"${nobody[@]}" "$TOOL" show --store "$work/store" --pool-file "$work/pools.json" >"$work/out" 2>&1 || true
	check "show by a user who is not root: told to run it as root" \
		"grep -q 'Permission denied (not root: run it as root, the store and the node.s pool file are root.s)' \"$work/out\""
else
	echo "# root without setpriv: the non-root message not checked"
fi

# handover and adopt of no store: refused, nothing created (no store, lock or directory),
# neither in a directory that exists nor in one that does not.
mkdir -m 700 "$work/empty"
for cmd in handover adopt; do
	rc=0; rc2=0
	"$TOOL" $cmd --store "$work/empty/store" >"$work/out" 2>"$work/err" || rc=$?
	"$TOOL" $cmd --store "$work/none/store" >>"$work/out" 2>>"$work/err" || rc2=$?
	check "$cmd of no store: exit 1, 'no store at', nothing created" \
		"[ $rc = 1 ] && [ $rc2 = 1 ] && [ \"\$(grep -c '^nv-ipam-tool: no store at $work/\(empty\|none\)/store: nothing to ' \"$work/err\")\" = 2 ] && [ ! -s \"$work/out\" ] && [ -z \"\$(ls -A \"$work/empty\")\" ] && [ ! -e \"$work/none\" ]"
done

# check on a clean store.
check "check: clean store passes" "T check --pool-file \"$work/pools.json\" >\"$work/out\" && grep -q '^5 allocations, 0 errors, 0 warnings$' \"$work/out\""
# Two pools whose blocks on this node overlap (IPPool 10.77.0.0/16 and a /24 inside it):
# an error naming both, whatever the store holds.
jq '.pools["pool2"] = {"subnet": "10.77.0.0/24", "startIP": "10.77.0.20", "endIP": "10.77.0.30"}' \
	"$work/pools.json" >"$work/pools-overlap.json"
T check --pool-file "$work/pools-overlap.json" >"$work/out" && rc=0 || rc=$?
check "check: overlapping blocks are an error naming both pools" \
	"[ $rc = 1 ] && grep -qx 'error: overlapping pools: IPPool \"pool1\" 10.77.0.1-10.77.0.24 overlaps IPPool \"pool2\" 10.77.0.20-10.77.0.30 (this node may hand out one address twice)' \"$work/out\" && grep -q '^5 allocations, 1 errors, 0 warnings$' \"$work/out\""

# release by container and interface, by container, by pod.
out=$(T release --container-id c1 --ifname net2)
check "release c1/net2: reported" "grep -q '^released 10.77.0.3 in pool pool1: container c1 interface net2 pod default/pod-a$' <<<\"\$out\""
check "release c1/net2: only it is gone" "[ \"\$(held)\" = 'c1/net1=10.77.0.2 c2/net1=10.77.0.4 c3/net1=10.88.1.2 c4/net1=10.88.1.3' ]"
check "release --dry-run changes nothing" "T release --pod team/pod-b --dry-run | grep -c 'would release' | grep -qx 2 && [ \"\$(held)\" = 'c1/net1=10.77.0.2 c2/net1=10.77.0.4 c3/net1=10.88.1.2 c4/net1=10.88.1.3' ]"
check "release by pod in one pool" "T release --pod team/pod-b --pool cidrpool/pc >/dev/null && [ \"\$(held)\" = 'c1/net1=10.77.0.2 c2/net1=10.77.0.4 c3/net1=10.88.1.2' ]"
check "release by pod" "T release --pod team/pod-b >/dev/null && [ \"\$(held)\" = 'c1/net1=10.77.0.2 c3/net1=10.88.1.2' ]"
check "release by container (every interface)" "T release --container-id c3 >/dev/null && [ \"\$(held)\" = 'c1/net1=10.77.0.2' ]"
# A commit that fails (no byte may be written to a file: RLIMIT_FSIZE 0, SIGXFSZ ignored
# so write() fails with EFBIG; stdout and stderr are a pipe): an error, nothing printed as
# released, the store as it was.
out=$( (trap '' XFSZ; ulimit -f 0; T release --container-id c1) 2>&1) && rc=0 || rc=$?
check "release whose commit fails: exit 1 with the error" "[ $rc = 1 ] && grep -q '^nv-ipam-tool: .*store' <<<\"\$out\""
check "release whose commit fails: nothing reported released" "! grep -q 'released' <<<\"\$out\""
check "release whose commit fails: the store is unchanged" "[ \"\$(held)\" = 'c1/net1=10.77.0.2' ]"
check "release of nothing: exit 1 and a message" "! T release --container-id ghost 2>\"$work/err\" && grep -q 'no allocation matches' \"$work/err\""
check "the last reserved address survives a release" "[ \"\$(T show --json | jq -r '.pools[] | select(.pool == \"pool1\") | .lastReservedIP')\" = 10.77.0.4 ]"
check "no temporary file left" "[ -z \"\$(find \"$work\" -name '*.tmp.*')\" ]"

# The lock: held elsewhere, release gives up with a message and changes nothing.
exec {lockfd}>"$work/store.lock"
flock "$lockfd"
T release --container-id c1 --lock-timeout-ms 200 2>"$work/err" && rc=0 || rc=$?
exec {lockfd}>&-
# Read once the lock is free: reading takes it too.
check "release waits for the lock and gives up" "[ $rc = 1 ] && grep -q 'locked by another process' \"$work/err\" && [ \"\$(held)\" = 'c1/net1=10.77.0.2' ]"

# After a pool change: the node's block moved, a static IP outside it, a pool dropped.
add c5 net1 ippool pool1 default/pod-s 10.77.9.9
add c6 net1 cidrpool pc default/pod-q
cat >"$work/pools2.json" <<JSON
{"pools": {"pool1": {"subnet": "10.77.0.0/16", "startIP": "10.77.0.25", "endIP": "10.77.0.48", "gateway": "10.77.0.1"}}}
JSON
T check --pool-file "$work/pools2.json" >"$work/out" && rc=0 || rc=$?
check "check after the change fails (exit 1)" "[ $rc = 1 ]"
check "check: outside the node's block is a warning" "grep -q '^warning: pool pool1: 10.77.0.2 (container c1 interface net1 pod default/pod-a): outside the node.s block 10.77.0.25-10.77.0.48' \"$work/out\""
check "check: the static IP is a warning too" "grep -q '^warning: pool pool1: 10.77.9.9 ' \"$work/out\""
check "check: a pool without a block on this node is an error" "grep -q '^error: pool cidrpool/pc: 10.88.1.[0-9]* (container c6 .*this node has no block of the pool' \"$work/out\""
check "check: the summary" "grep -q '^3 allocations, 1 errors, 2 warnings$' \"$work/out\""
T release --container-id c6 >/dev/null
check "warnings alone pass" "T check --pool-file \"$work/pools2.json\" >/dev/null"
check "--strict fails on warnings" "! T check --pool-file \"$work/pools2.json\" --strict >/dev/null"

# An address held twice (a hand-edited store): nv-ipam refuses the store, check names
# both holders, release repairs it.
store_edit '.allocations += [.allocations[0] | .containerID = "dup1"]'
out=$(CNI_COMMAND=ADD CNI_CONTAINERID=c7 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 CNI_IFNAME=net1 CNI_PATH=/nonexistent \
	"$NVIPAM" <<<'{"cniVersion":"1.0.0","name":"n","ipam":{"type":"nv-ipam","poolName":"pool1","confDir":"'$work'"}}' 2>/dev/null || true)
check "nv-ipam refuses a store with an address held twice" "jq -r .msg <<<\"\$out\" | grep -q 'held twice'"
T check --pool-file "$work/pools.json" >"$work/out" && rc=0 || rc=$?
check "check: the duplicate is an error naming both containers" \
	"[ $rc = 1 ] && grep -Eq '^error: pool pool1: 10.77.0.2 \\(container (dup1|c1) .*held twice in the pool, also by container (c1|dup1)$' \"$work/out\""
check "show still reads it" "[ \"\$(T show --pool-file \"$work/pools.json\" --json | jq '.pools[] | select(.pool == \"pool1\") | .used')\" = 3 ]"
T release --container-id dup1 >/dev/null
check "after releasing one holder, check passes" "T check --pool-file \"$work/pools.json\" >/dev/null"

# One interface holding two addresses in a pool (a hand-edited store, the second entry
# naming another pod): check reports it; release reports both addresses, as both go.
# The gateway (allocateDefaultGateway) and a static IP are one address per interface: fine.
c='{"cniVersion":"1.0.0","name":"net-pool1","ipam":{"type":"nv-ipam","poolName":"pool1","confDir":"'$work'"},"args":{"cni":{"allocateDefaultGateway":true}}}'
CNI_COMMAND=ADD CNI_CONTAINERID=c8 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 CNI_IFNAME=net1 CNI_PATH=/nonexistent \
	CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=pod-g" "$NVIPAM" <<<"$c" >/dev/null 2>&1
check "the gateway and a static IP held: check passes" \
	"[ \"\$(held)\" = 'c1/net1=10.77.0.2 c5/net1=10.77.9.9 c8/net1=10.77.0.1' ] && T check --pool-file \"$work/pools.json\" >/dev/null"
store_edit '.allocations += [.allocations[] | select(.containerID == "c1") | .ip = "10.77.0.9" | .podName = "pod-x"]'
T check --pool-file "$work/pools.json" >"$work/out" && rc=0 || rc=$?
check "check: an interface with two addresses in a pool is an error" \
	"[ $rc = 1 ] && grep -q '^error: pool pool1: 10.77.0.9 (container c1 interface net1 pod default/pod-x): the interface holds another address in the pool, 10.77.0.2 (DEL releases both)$' \"$work/out\" && grep -q '^4 allocations, 1 errors, 1 warnings$' \"$work/out\""
out=$(T release --pod default/pod-a --dry-run)
check "release --dry-run by pod: both addresses of the interface, the other pod's too" \
	"[ \"\$out\" = \"would release 10.77.0.2 in pool pool1: container c1 interface net1 pod default/pod-a
would release 10.77.0.9 in pool pool1: container c1 interface net1 pod default/pod-x\" ]"
out=$(T release --container-id c1 --ifname net1)
check "release: both addresses reported, each once" \
	"[ \"\$out\" = \"released 10.77.0.2 in pool pool1: container c1 interface net1 pod default/pod-a
released 10.77.0.9 in pool pool1: container c1 interface net1 pod default/pod-x\" ]"
check "release: exactly those are gone" "[ \"\$(held)\" = 'c5/net1=10.77.9.9 c8/net1=10.77.0.1' ]"

# A corrupt store: reported, left as it is.
printf '{"version":1,"pools":{' >"$work/store"
T check --pool-file "$work/pools.json" >"$work/out" && rc=0 || rc=$?
check "check: a corrupt store is an error" "[ $rc = 1 ] && grep -q '^error: store file .* is corrupt' \"$work/out\""
check "show: a corrupt store fails on stderr" "! T show --pool-file \"$work/pools.json\" 2>\"$work/err\" >/dev/null && grep -q 'corrupt' \"$work/err\""
check "the corrupt store is untouched" "[ \"\$(cat \"$work/store\")\" = '{\"version\":1,\"pools\":{' ]"

# Pools whose names hold ".tmp." keep their files when temporary files are swept (by
# the tool, which opens the whole store, and by an ADD in a pool whose temporaries'
# names they start like): an address is never handed out twice because a log went.
cat >"$work/pools.json" <<JSON
{"pools": {
  "gpu.tmp.7": {"subnet": "10.66.0.0/24", "startIP": "10.66.0.2", "endIP": "10.66.0.9", "gateway": "10.66.0.1"},
  "p": {"subnet": "10.67.0.0/24", "startIP": "10.67.0.2", "endIP": "10.67.0.9", "gateway": "10.67.0.1"},
  "p.log.tmp.1": {"subnet": "10.68.0.0/24", "startIP": "10.68.0.2", "endIP": "10.68.0.9", "gateway": "10.68.0.1"}
}}
JSON
rm -rf "$work/store" "$work/store.d"
add t1 net1 ippool gpu.tmp.7 ns/pod-t1
add t2 net1 ippool p.log.tmp.1 ns/pod-t2
T show --pool-file "$work/pools.json" >/dev/null
add t3 net1 ippool p ns/pod-t3
add t4 net1 ippool gpu.tmp.7 ns/pod-t4
add t5 net1 ippool p.log.tmp.1 ns/pod-t5
check "pools named like temporary files keep their allocations" \
	"[ \"\$(held)\" = 't1/net1=10.66.0.2 t2/net1=10.68.0.2 t3/net1=10.67.0.2 t4/net1=10.66.0.3 t5/net1=10.68.0.3' ]"

exit $((fails > 0))
