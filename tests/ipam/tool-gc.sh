#!/usr/bin/env bash
# nv-ipam-tool gc on stores the nv-ipam binary made for pods (CNI_ARGS as kubelet passes
# them), against pod listings shaped as kubectl prints them: an absent pod and a UID
# mismatch released on the N-th consecutive run, not before; the counts kept in
# <store>.gc between runs; a pod listed again starting over; allocations without a pod
# skipped and counted; one newer than the listing kept; --misses 1; --dry-run changing
# no byte; broken or wrong-kind listings (exit 1) releasing nothing; the store lock; a
# store commit that fails after the counts were written (released one run late, never
# early); a corrupt counts file and a killed gc's temporary file; pool records dropped
# only without allocations and without a block; names from the store escaped; a damaged
# store's interface holding a listed pod's address kept whole; and
# check --pods.
. "$(dirname "$0")/lib.sh"
TOOL=${2:?usage: $0 NV-IPAM NV-IPAM-TOOL}
FIX=$(cd "$(dirname "$0")/fixtures" && pwd)

cat >"$work/pools.json" <<JSON
{"pools": {"pool1": {"subnet": "10.77.0.0/22", "startIP": "10.77.0.1", "endIP": "10.77.3.232", "gateway": "10.77.0.1"},
           "pool2": {"subnet": "10.78.0.0/24", "startIP": "10.78.0.1", "endIP": "10.78.0.100"}}}
JSON
# pods NS/NAME/UID...: a pod listing as "kubectl get pods -A -o json" prints it (no UID: "").
pods() {
	printf '%s\n' "$@" | jq -R 'split("/") | {apiVersion: "v1", kind: "Pod",
		metadata: ({namespace: .[0], name: .[1]} + (if (.[2] // "") != "" then {uid: .[2]} else {} end)),
		spec: {nodeName: "host-a"}, status: {phase: "Running"}}' |
		jq -s '{apiVersion: "v1", kind: "List", items: ., metadata: {resourceVersion: ""}}'
}
G() { "$TOOL" gc --store "$work/store" --pool-file "$work/pools.json" "$@"; }
held() { store_json | jq -r '[.allocations[] | .containerID + "=" + .ip] | sort | join(" ")'; }
counts() { jq -r '[.misses[] | .containerID + ":" + (.count | tostring)] | sort | join(" ")' "$work/store.gc"; }
# Every file of the store and the counts (the store file, the pool logs, snapshots, locks).
fingerprint() {
	{ stat -c '%n %i %s %Y' "$work/store" "$work/store.gc" "$work/store.d/"*
	  sha256sum "$work/store" "$work/store.gc" "$work/store.d/"*; } 2>/dev/null || true
}

nvipam_pod ADD c1 default/a u1 >/dev/null
nvipam_pod ADD c2 default/b u2 >/dev/null
nvipam_pod ADD c3 team/c u3 >/dev/null
nvipam ADD c4 >/dev/null
nvipam_pod ADD c5 team/flap u5 >/dev/null
nvipam_pod ADD c6 default/nouid >/dev/null
check "the nv-ipam binary recorded the pods" \
	"[ \"\$(store_json | jq -c '[.allocations[] | [.containerID, .podNamespace, .podName, .podUID]]')\" = '[[\"c1\",\"default\",\"a\",\"u1\"],[\"c2\",\"default\",\"b\",\"u2\"],[\"c3\",\"team\",\"c\",\"u3\"],[\"c4\",\"\",\"\",\"\"],[\"c5\",\"team\",\"flap\",\"u5\"],[\"c6\",\"default\",\"nouid\",\"\"]]' ]"
wait_older
t=$(date +%s)
pods default/a/u1 team/c/u9 default/nouid/u6 team/flap/u5 >"$work/all.json"
pods default/a/u1 team/c/u9 default/nouid/u6 >"$work/noflap.json"

# Usage: exit 2, nothing read or written.
err_of() { "$@" 2>"$work/err" >"$work/out"; echo $?; }
check "gc --help" "\"$TOOL\" gc --help | grep -q '^Usage: nv-ipam-tool gc --pods FILE --listed-at SECONDS'"
check "gc without --pods" "[ \$(err_of G --listed-at $t) = 2 ] && grep -q -- '--pods is required' \"$work/err\""
check "gc without --listed-at" "[ \$(err_of G --pods \"$work/all.json\") = 2 ] && grep -q -- '--listed-at is required' \"$work/err\""
check "gc with a --listed-at in the future" "[ \$(err_of G --pods \"$work/all.json\" --listed-at \$((\$(date +%s) + 100))) = 2 ] && grep -q 'in the future' \"$work/err\""
check "gc --misses 0" "[ \$(err_of G --pods \"$work/all.json\" --listed-at $t --misses 0) = 2 ]"
check "gc --listed-at not a number" "[ \$(err_of G --pods \"$work/all.json\" --listed-at yesterday) = 2 ]"
check "usage errors wrote no counts file" "[ ! -e \"$work/store.gc\" ]"

# A listing of no pod at all (a wrong node name in the field selector) is refused:
# taken at its word, it would release every live pod's address.
echo '{"apiVersion": "v1", "kind": "List", "items": []}' >"$work/nopods.json"
before=$(fingerprint)
check "gc refuses a listing of no pod while pods hold addresses" \
	"[ \$(err_of G --pods \"$work/nopods.json\" --listed-at $t --misses 1) = 1 ] && grep -q 'node name' \"$work/err\" && [ \"\$(fingerprint)\" = \"\$before\" ] && [ ! -e \"$work/store.gc\" ]"

# A listing whose pods are all bound to another node (a wrong node in the field selector,
# or another node's listing) is refused as well: pods carry spec.nodeName. The node is
# --node, or the node pool file's nodeName.
pods default/a/u1 team/c/u3 team/flap/u5 | jq '.items[].spec.nodeName = "host-b"' >"$work/other-node.json"
before=$(fingerprint)
check "gc --node refuses a listing of another node's pods" \
	"[ \$(err_of G --pods \"$work/other-node.json\" --listed-at $t --misses 1 --node host-a) = 1 ] && grep -q 'no pod bound to node host-a' \"$work/err\" && [ \"\$(fingerprint)\" = \"\$before\" ] && [ ! -e \"$work/store.gc\" ]"
jq '. + {nodeName: "host-a"}' "$work/pools.json" >"$work/pools-named.json"
check "the pool file's nodeName is the node when --node is not given" \
	"[ \$(err_of \"$TOOL\" gc --store \"$work/store\" --pool-file \"$work/pools-named.json\" --pods \"$work/other-node.json\" --listed-at $t --misses 1) = 1 ] && grep -q 'no pod bound to node host-a' \"$work/err\" && [ \"\$(fingerprint)\" = \"\$before\" ]"
check "a dry run refuses it too" \
	"[ \$(err_of G --pods \"$work/other-node.json\" --listed-at $t --misses 1 --node host-a --dry-run) = 1 ]"
check "this node's pods among them make it this node's listing" \
	"pods default/a/u1 >\"$work/mixed.json\" && jq -s '.[0].items += .[1].items | .[0]' \"$work/mixed.json\" \"$work/other-node.json\" >\"$work/mixed2.json\" && G --pods \"$work/mixed2.json\" --listed-at $t --misses 3 --node host-a --dry-run >/dev/null"

# A listing of tens of MB (pods with long specs, as a big node's are) is read a pod at a
# time: gc runs within a memory limit below the listing's own size (it used to need ten
# times the listing).
awk 'BEGIN {
	pad = sprintf("%4000s", ""); gsub(/ /, "x", pad)
	printf "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
	for (i = 0; i < 6000; i++)
		printf "%s{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"bulk\",\"name\":\"p%d\",\"uid\":\"u%d\",\"annotations\":{\"note\":\"%s\"}},\"spec\":{\"nodeName\":\"host-a\",\"containers\":[{\"name\":\"c\",\"image\":\"%s\"}]},\"status\":{\"phase\":\"Running\"}}", (i ? "," : ""), i, i, pad, pad
	printf "]}"
}' >"$work/big.json"
jq -s '.[0].items += .[1].items | .[0]' "$work/all.json" "$work/big.json" >"$work/big-all.json"
size_kb=$(( $(stat -c %s "$work/big-all.json") / 1024 ))
# A sanitized build reserves terabytes of address space for its shadow memory: the bound
# is checked by the plain build's run of this suite.
if LC_ALL=C readelf -d "$TOOL" 2>/dev/null | grep -q 'libasan'; then
	echo "ok - gc reads a big listing within a bound # SKIP the sanitizer's address space"
else
	check "gc reads an $((size_kb / 1024)) MB listing within a 40 MB address space" \
		"( ulimit -v 40960; G --pods \"$work/big-all.json\" --listed-at $t --misses 3 --dry-run >\"$work/big.out\" 2>\"$work/big.err\" ) && grep -q '^6 allocations' \"$work/big.out\""
fi
rm -f "$work/big.json" "$work/big-all.json" "$work/mixed.json" "$work/mixed2.json"

# Run 1 of 3: b absent, c listed with another UID: one miss each.
out=$(G --pods "$work/all.json" --listed-at "$t" --misses 3)
check "run 1: the absent pod is missed" "grep -qx 'missed 10.77.0.3 in pool pool1: container c2 interface net1 pod default/b: not in the pod list (miss 1 of 3)' <<<\"\$out\""
check "run 1: the UID mismatch is missed" "grep -qx 'missed 10.77.0.4 in pool pool1: container c3 interface net1 pod team/c: the listed pod has UID u9, not u3 (miss 1 of 3)' <<<\"\$out\""
check "run 1: summary (no UID recorded: the name decides; no pod: skipped)" \
	"[ \"\$(tail -n1 <<<\"\$out\")\" = '6 allocations: 3 with their pod listed, 0 newer than the listing, 1 without a pod (skipped), 2 missed, 0 released' ]"
check "run 1: nothing released" "[ \"\$(held)\" = 'c1=10.77.0.2 c2=10.77.0.3 c3=10.77.0.4 c4=10.77.0.5 c5=10.77.0.6 c6=10.77.0.7' ]"
check "run 1: the counts are kept beside the store (mode 0600)" "[ \"\$(counts)\" = 'c2:1 c3:1' ] && [ \$(stat -c %a \"$work/store.gc\") = 600 ]"
# Run 2: flap absent too.
out=$(G --pods "$work/noflap.json" --listed-at "$t" --misses 3)
check "run 2: counts carried over from run 1" "[ \"\$(counts)\" = 'c2:2 c3:2 c5:1' ] && grep -q 'pod team/flap: not in the pod list (miss 1 of 3)' <<<\"\$out\""
check "run 2: nothing released" "[ \$(store_json | jq '.allocations | length') = 6 ]"
# Run 3: the third consecutive miss releases; flap is listed again and starts over.
out=$(G --pods "$work/all.json" --listed-at "$t" --misses 3)
check "run 3: released on the third miss" \
	"[ \"\$(grep '^released' <<<\"\$out\")\" = 'released 10.77.0.3 in pool pool1: container c2 interface net1 pod default/b: not in the pod list (miss 3 of 3)
released 10.77.0.4 in pool pool1: container c3 interface net1 pod team/c: the listed pod has UID u9, not u3 (miss 3 of 3)' ]"
check "run 3: summary" "grep -qx '6 allocations: 3 with their pod listed, 0 newer than the listing, 1 without a pod (skipped), 2 missed, 2 released' <<<\"\$out\""
check "run 3: exactly those left the store" "[ \"\$(held)\" = 'c1=10.77.0.2 c4=10.77.0.5 c5=10.77.0.6 c6=10.77.0.7' ]"
check "run 3: no count left (released ones dropped, flap seen)" "[ \"\$(counts)\" = '' ]"
check "nv-ipam reads the store gc wrote" "nvipam_pod ADD c7 default/new u7 | jq -e '.ips[0].address == \"10.77.0.8/22\"' >/dev/null"
# flap gone for two runs: its count started over, so two misses do not release it.
G --pods "$work/noflap.json" --listed-at "$t" --misses 3 >/dev/null
out=$(G --pods "$work/noflap.json" --listed-at "$t" --misses 3)
check "reappearance started the count over: 2 misses kept it" "grep -q 'team/flap: not in the pod list (miss 2 of 3)' <<<\"\$out\" && [ \"\$(counts)\" = 'c5:2' ]"

# c7 was made after the listing started ($t): never missed, even with --misses 1.
out=$(G --pods "$work/noflap.json" --listed-at "$t" --misses 1 --dry-run)
check "newer than the listing: not counted, the rest would go" \
	"grep -qx '5 allocations: 2 with their pod listed, 1 newer than the listing, 1 without a pod (skipped), 1 missed, 1 would be released (dry run: nothing changed)' <<<\"\$out\" && ! grep -q c7 <<<\"\$out\""
# --dry-run changes no byte of the store or the counts.
before=$(fingerprint)
check "dry run: says what would go" "grep -qx 'would release 10.77.0.6 in pool pool1: container c5 interface net1 pod team/flap: not in the pod list (miss 3; 1 is enough to release)' <<<\"\$out\""
check "dry run: store and counts untouched" "[ \"\$(fingerprint)\" = \"\$before\" ]"

# Broken or wrong-kind listings: exit 1, a clear error, no byte changed, nothing printed.
printf '{"apiVersion":"v1","kind":"List","items":[' >"$work/trunc.json"
: >"$work/empty.json"
jq '.items[0]' "$work/all.json" >"$work/one-pod.json"
cat "$work/all.json" "$work/all.json" >"$work/two.json"
printf '{"apiVersion":"v1","kind":"List","items":[{"kind":"Pod","metadata":{"namespace":"default","name":"Bad_Name"}}]}' >"$work/badname.json"
bad_input() {
	local file=$1 msg=$2 rc
	before=$(fingerprint)
	G --pods "$file" --listed-at "$t" --misses 1 >"$work/out" 2>"$work/err" && rc=0 || rc=$?
	[ "$rc" = 1 ] && grep -q "$msg" "$work/err" && [ ! -s "$work/out" ] && [ "$(fingerprint)" = "$before" ]
}
check "truncated listing: exit 1, nothing released" "bad_input \"$work/trunc.json\" 'trunc.json: malformed JSON'"
check "empty listing (kubectl printed nothing): exit 1" "bad_input \"$work/empty.json\" 'empty input'"
check "a missing file: exit 1" "bad_input \"$work/nope.json\" 'No such file'"
check "one pod is not a listing: exit 1" "bad_input \"$work/one-pod.json\" 'not a pod list: one object of kind Pod'"
check "two documents: exit 1" "bad_input \"$work/two.json\" 'more than one JSON document'"
check "a pool list: exit 1" "bad_input \"$FIX/pools.json\" 'not a pod list: item 0 is a IPPool'"
check "a node list: exit 1" "bad_input \"$FIX/nodes.json\" 'not a pod list: item 0 is a Node'"
check "an invalid pod name: exit 1" "bad_input \"$work/badname.json\" 'not a valid pod name: Bad_Name'"
check "after all that, the store is as it was" "[ \$(store_json | jq '.allocations | length') = 5 ] && [ \"\$(counts)\" = 'c5:2' ]"

# The lock held elsewhere: gc waits, gives up (exit 1), changes nothing.
exec {lockfd}>"$work/store.lock"
flock "$lockfd"
before=$(fingerprint)
check "gc respects the store lock" "[ \$(err_of G --pods \"$work/noflap.json\" --listed-at $t --misses 1 --lock-timeout-ms 200) = 1 ] && grep -q 'locked by another process' \"$work/err\" && [ \"\$(fingerprint)\" = \"\$before\" ]"
exec {lockfd}>&-

# The counts are written before the store. A store commit that fails after them (no file
# may grow past 1 KiB: the counts fit, the pool's log does not) is the state a kill between
# the two leaves: nothing released or reported released, the count recorded; the next run
# releases it, one run late and never early.
nvipam_pod ADD c8 "default/big-pod-name-to-make-the-log-larger-than-one-kib-$(printf '%0200d' 0)" "u8-$(printf '%060d' 0)" >/dev/null
check "the pool log is larger than 1 KiB (the test needs it)" "[ \$(stat -c %s \"$work/store.d/pool1.log\") -gt 1024 ]"
out=$( (trap '' XFSZ; ulimit -f 1; G --pods "$work/noflap.json" --listed-at "$t" --misses 3) 2>&1) && rc=0 || rc=$?
check "failed commit: exit 1 naming the store" "[ $rc = 1 ] && grep -q 'cannot write pool log .*/store.d/pool1.log' <<<\"\$out\" && ! grep -q released <<<\"\$out\""
check "failed commit: the count was recorded, the allocation kept" "[ \"\$(counts)\" = 'c5:3' ] && store_json | grep -q '\"c5\"'"
out=$(G --pods "$work/noflap.json" --listed-at "$t" --misses 3)
check "the next run releases it" "grep -qx 'released 10.77.0.6 in pool pool1: container c5 interface net1 pod team/flap: not in the pod list (miss 4; 3 is enough to release)' <<<\"\$out\" && ! store_json | grep -q '\"c5\"' && [ \"\$(counts)\" = '' ]"

# A corrupt counts file: a warning, the counts start over (a delay, never early), rewritten.
printf '{"version":1,"misses":[' >"$work/store.gc"
G --pods "$work/noflap.json" --listed-at "$t" --misses 3 >"$work/out" 2>"$work/err"
check "corrupt counts: warned, started over, rewritten" "grep -q 'warning: .*store.gc.*the miss counts start over' \"$work/err\" && jq -e '.version == 1' \"$work/store.gc\" >/dev/null"
# A killed gc's temporary counts file is removed by the next run (which holds the lock).
echo junk >"$work/store.gc.tmp.99999"
G --pods "$work/noflap.json" --listed-at "$t" --misses 3 >/dev/null
check "a killed gc's temporary counts file is swept" "[ ! -e \"$work/store.gc.tmp.99999\" ]"

# Pool records: pool2's record (its last reserved address) stays while it holds an
# allocation or has a block here; with neither, it is dropped.
conf=${conf/\"pool1\"/\"pool2\"} nvipam_pod ADD c9 gone/p9 u9 >/dev/null
check "pool2 has a record" "store_json | jq -e '.pools.pool2.lastReservedIP == \"10.78.0.1\"' >/dev/null"
jq 'del(.pools.pool2)' "$work/pools.json" >"$work/pools-no2.json"
wait_older
t2=$(date +%s)
out=$("$TOOL" gc --store "$work/store" --pool-file "$work/pools.json" --pods "$work/all.json" --listed-at "$t2" --misses 1)
check "released from pool2, whose block is still here: record kept" \
	"grep -q '^released 10.78.0.1 in pool pool2' <<<\"\$out\" && ! grep -q dropped <<<\"\$out\" && store_json | jq -e '.pools.pool2' >/dev/null"
out=$("$TOOL" gc --store "$work/store" --pool-file "$work/nope.json" --pods "$work/all.json" --listed-at "$t2" --misses 1)
check "no pool file: no record dropped" "! grep -q dropped <<<\"\$out\" && store_json | jq -e '.pools.pool2' >/dev/null"
out=$("$TOOL" gc --store "$work/store" --pool-file "$work/pools-no2.json" --pods "$work/all.json" --listed-at "$t2" --misses 1)
check "no allocation, no block: record dropped" \
	"grep -qx 'dropped the record of pool pool2: no allocation, no block on this node' <<<\"\$out\" && ! store_json | jq -e '.pools.pool2' >/dev/null && store_json | jq -e '.pools.pool1.lastReservedIP' >/dev/null && [ ! -e \"$work/store.d/pool2.log\" ]"
out=$("$TOOL" gc --store "$work/store" --pool-file "$work/pools-no2.json" --pods "$work/all.json" --listed-at "$t2" --misses 1)
check "pool1 (in the file) kept, nothing more to drop" "! grep -q dropped <<<\"\$out\""

# Names from the store are printed escaped (a store an older build wrote may hold control
# bytes from CNI_ARGS, which ADD now refuses: written into the log, escaped as it keeps them);
# stdin as the listing.
nvipam_pod ADD c10 "default/evil" u10 >/dev/null
store_edit '(.allocations[] | select(.containerID == "c10") | .podName) = "evil pod\\x1b[31m"'
wait_older
t3=$(date +%s)
out=$(pods default/a/u1 | G --pods - --listed-at "$t3" --misses 1)
check "names escaped in the output" "grep -q 'pod default/evil pod\\\\x1b\\[31m: not in the pod list' <<<\"\$out\" && ! grep -q \$'\\033' <<<\"\$out\""
check "an array of pods is a listing too" "jq '.items' \"$work/all.json\" | G --pods - --listed-at $t3 --misses 5 | grep -q '^[0-9]* allocations: '"

# A damaged store (hand-edited): c1's interface also holds an address recorded for a pod
# that is gone. Releasing goes by interface, as DEL: the listed pod's address keeps both.
store_edit '.allocations += [.allocations[] | select(.containerID == "c1") | .ip = "10.77.0.200" | .podName = "ghost"]'
out=$(pods default/a/u1 | G --pods - --listed-at "$t3" --misses 1)
check "damaged store: the due address is kept with the reason" \
	"grep -qx 'kept 10.77.0.200 in pool pool1: container c1 interface net1 pod default/ghost: not in the pod list (miss 1 of 1): its interface holds another address in the pool whose pod is listed (a damaged store: see nv-ipam-tool check)' <<<\"\$out\" && grep -q ', 0 released, 1 kept (damaged store)$' <<<\"\$out\""
check "damaged store: both addresses of the interface stay" "[ \"\$(store_json | jq '[.allocations[] | select(.containerID == \"c1\")] | length')\" = 2 ]"
store_edit '.allocations |= map(select(.podName != "ghost"))'

# check --pods: what gc would release, as warnings (exit 0, 1 with --strict).
nvipam_pod ADD c11 default/gone u11 >/dev/null
nvipam_pod ADD c12 team/c u12 >/dev/null
T() { "$TOOL" check --store "$work/store" --pool-file "$work/pools.json" "$@"; }
T --pods "$work/all.json" >"$work/out" && rc=0 || rc=$?
check "check --pods: exit 0 (warnings)" "[ $rc = 0 ]"
check "check --pods: the absent pod" "grep -q '^warning: pool pool1: 10.77.0.[0-9]* (container c11 interface net1 pod default/gone): the pod is not in the pod list (gc releases it)$' \"$work/out\""
check "check --pods: the UID mismatch" "grep -q '^warning: pool pool1: 10.77.0.[0-9]* (container c12 interface net1 pod team/c): the listed pod has UID u9, not the one recorded (gc releases it)$' \"$work/out\""
check "check --pods: listed pods and no-pod allocations are fine" "! grep -Eq 'container c(1|4|6) ' \"$work/out\" && grep -q ', 0 errors, 2 warnings$' \"$work/out\""
check "check --pods --strict: exit 1" "! T --pods \"$work/all.json\" --strict >/dev/null"
check "check --pods --listed-at: newer allocations not reported" "T --pods \"$work/all.json\" --listed-at $t3 | grep -q ', 0 errors, 0 warnings$'"
check "check --pods with a broken listing: exit 1" "! T --pods \"$work/trunc.json\" >\"$work/out\" && grep -q '^error: .*trunc.json: malformed JSON' \"$work/out\""
check "check --listed-at without --pods: usage" "[ \$(err_of T --listed-at 1) = 2 ]"

exit $((fails > 0))
