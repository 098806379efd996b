#!/usr/bin/env bash
# nv-ipam-tool gc killed with SIGKILL at random moments, run after run, on a store the
# nv-ipam binary made for 240 pods: 80 always listed, 80 never listed, 80 listed or not at
# random. The test keeps its own count of consecutive listings each pod was missing from,
# over the runs gc observed (those that finished or replaced the counts file; a run killed
# before that saw nothing, as if it had not run). After every run: the store and the
# counts file load, no listed pod lost its address, nothing was released before its pod
# was missing from N observed listings in a row, and every existing allocation's recorded
# count is exactly that number. Uninterrupted runs at the end release every pod that is
# gone and leave no count and no temporary file.
. "$(dirname "$0")/lib.sh"
TOOL=${2:?usage: $0 NV-IPAM NV-IPAM-TOOL}

runs=${RUNS:-120}
misses=3
per_group=80

for g in keep gone flap; do
	for i in $(seq "$per_group"); do
		nvipam_pod ADD "$g-$i" "$g/p$i" "u-$g-$i" >/dev/null 2>&1 || echo "ADD $g-$i failed" >&2
	done
done
check "the store holds the $((3 * per_group)) allocations" "[ \$(store_json | jq '.allocations | length') = $((3 * per_group)) ]"
# Made before the listing time: every allocation counts.
wait_older
t=$(date +%s)

# streak[ns/name]: consecutive observed runs whose listing missed the pod.
echo '{}' >"$work/streak.json"
listing() {
	local i names=()
	for i in $(seq "$per_group"); do
		names+=("keep/p$i")
		if [ $((RANDOM % 2)) = 0 ]; then names+=("flap/p$i"); fi
	done
	printf '%s\n' "${names[@]}" | jq -R 'split("/") | {kind: "Pod", metadata: {namespace: .[0], name: .[1], uid: ("u-" + .[0] + "-" + .[1][1:])}}' |
		jq -s '{kind: "List", items: .}'
}
# After each run: every violation of the invariants, one line each (none expected).
violations() {
	jq -rn --slurpfile before "$work/before.json" --slurpfile after "$work/after.json" \
		--slurpfile counts "$work/counts.json" --slurpfile streak "$work/streak.json" --argjson n "$misses" '
		($after[0].allocations | map({key: .containerID, value: (.podNamespace + "/" + .podName)}) | from_entries) as $now
		| ($counts[0].misses | map({key: .containerID, value: .count}) | from_entries) as $count
		| ($before[0].allocations[] | select($now[.containerID] == null)
		   | (.podNamespace + "/" + .podName) as $p
		   | select(($streak[0][$p] // 0) < $n)
		   | "released early: \(.containerID) (pod \($p) missing from \($streak[0][$p] // 0) listings)"),
		  ($after[0].allocations[] | (.podNamespace + "/" + .podName) as $p
		   | select(($count[.containerID] // 0) != ($streak[0][$p] // 0))
		   | "count \($count[.containerID] // 0) for \(.containerID), its pod missing from \($streak[0][$p] // 0) listings"),
		  ($before[0].allocations[] | select(.podNamespace == "keep" and $now[.containerID] == null)
		   | "a listed pod lost its address: \(.containerID)")'
}
# Two lines: the store (its file and pool logs; snapshots are caches), the counts file.
fingerprint() {
	cat "$work/store" "$work/store.d/"*.log 2>/dev/null | sha256sum
	sha256sum "$work/store.gc" 2>/dev/null || echo none
}

# usec: the time in microseconds. The kills land anywhere in a run, and often where it
# writes, however fast this machine is (a sanitizer build spends most of a run starting):
# the delay before the kill is drawn from [lo, hi) (from [0, hi) every third run). hi
# starts at the length of a run measured on a copy of the store and shrinks after a run
# that finished; lo rises after a kill that came before any write. Both settle around the
# writes.
usec() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }
exec {never}<> <(:)
mkdir "$work/calib"
echo '{"kind":"List","items":[{"kind":"Pod","metadata":{"namespace":"nvidia-network-operator","name":"nv-ipam-node-x","uid":"uagent"}}]}' >"$work/calib/pods.json"
hi=
for i in 1 2 3 4 5; do
	rm -rf "$work/calib/store" "$work/calib/store.d" "$work/calib/store.gc"
	cp -r "$work/store" "$work/store.d" "$work/calib/"
	start=$(usec)
	"$TOOL" gc --store "$work/calib/store" --pods "$work/calib/pods.json" --listed-at "$t" --misses 100 >/dev/null
	d=$(( $(usec) - start ))
	[ -n "$hi" ] && [ "$d" -ge "$hi" ] || hi=$d
done
lo=0
kills=0 finished=0 unchanged=0 counts_only=0 late=0 bad=0
# A kill that leaves an allocation due needs the run's counts to reach the limit and the
# kill to land before the store commit: when $runs runs had none, more follow (at
# most three times as many; not where GC_CRASH_NEED_DUE=0, below).
r=0
need_due=${GC_CRASH_NEED_DUE:-1}
while [ "$r" -lt "$runs" ] || { [ "$need_due" != 0 ] && [ "$late" -eq 0 ] && [ "$r" -lt $((runs * 3)) ]; }; do
	r=$((r + 1))
	listing >"$work/pods.json"
	# If gc observes this listing, a pod absent from it has one more missing listing.
	jq --slurpfile l "$work/pods.json" --argjson g "$per_group" '
		($l[0].items | map({key: (.metadata.namespace + "/" + .metadata.name), value: true}) | from_entries) as $in
		| reduce (["keep", "gone", "flap"][] as $ns | range(1; $g + 1) | "\($ns)/p\(.)") as $p
		    (.; .[$p] = (if $in[$p] then 0 else (.[$p] // 0) + 1 end))' \
		"$work/streak.json" >"$work/streak.new"
	store_json >"$work/before.json"
	fp=$(fingerprint)
	from=$lo
	[ $((r % 3)) != 0 ] || from=0
	delay=$(( from + (RANDOM * 32768 + RANDOM) % (hi - from) ))
	secs=$((delay / 1000000)).$(printf '%06d' $((delay % 1000000)))
	"$TOOL" gc --store "$work/store" --pool-file "$work/pools.json" --pods "$work/pods.json" \
		--listed-at "$t" --misses "$misses" >/dev/null 2>&1 &
	pid=$!
	# A builtin wait (no exec) of $delay microseconds, then the kill.
	read -r -t "$secs" -u "$never" _ || true
	kill -9 "$pid" 2>/dev/null || true
	rc=0
	{ wait "$pid"; } 2>/dev/null || rc=$?
	now=$(fingerprint)
	if [ "$rc" != 137 ]; then
		finished=$((finished + 1))
		hi=$((hi * 9 / 10 + 2))
		[ "$lo" -lt "$((hi / 2))" ] || lo=$((hi / 2))
	else
		kills=$((kills + 1))
		if [ "$now" = "$fp" ]; then
			unchanged=$((unchanged + 1))
			[ "$delay" -le "$lo" ] || lo=$(( (lo * 3 + delay) / 4 ))
			hi=$((hi * 21 / 20 + 1))
		elif [ "$(sed -n 1p <<<"$now")" = "$(sed -n 1p <<<"$fp")" ]; then
			counts_only=$((counts_only + 1))
		fi
	fi
	[ "$rc" = 0 ] || [ "$rc" = 137 ] || { echo "run $r: gc failed (exit $rc)"; bad=$((bad + 1)); }
	if [ "$rc" = 0 ] || [ "$(sed -n 2p <<<"$now")" != "$(sed -n 2p <<<"$fp")" ]; then
		mv "$work/streak.new" "$work/streak.json"
	fi
	if ! store_json >"$work/after.json" 2>/dev/null; then
		echo "run $r: the store does not load"; bad=$((bad + 1)); continue
	fi
	if [ -e "$work/store.gc" ]; then
		jq -e '.version == 1' "$work/store.gc" >/dev/null 2>&1 || { echo "run $r: the counts file does not parse"; bad=$((bad + 1)); continue; }
		cp "$work/store.gc" "$work/counts.json"
	else
		echo '{"misses":[]}' >"$work/counts.json"
	fi
	v=$(violations)
	if [ -n "$v" ]; then echo "run $r: $v"; bad=$((bad + 1)); fi
	# Due but not released: a kill between the counts and the store commit.
	if [ "$rc" = 137 ]; then
		jq -e --slurpfile s "$work/after.json" --argjson n "$misses" \
			'($s[0].allocations | map(.containerID)) as $ids | any(.misses[]; .count >= $n and (.containerID as $c | $ids | index($c)))' \
			"$work/counts.json" >/dev/null && late=$((late + 1))
	fi
done
echo "# kills drawn at last from $((lo / 1000)) to $((hi / 1000)) ms after the launch; $r runs: $kills killed ($unchanged before writing anything, $counts_only after the counts and before the store, $late leaving an allocation due and not yet released), $finished finished"
check "most runs killed (at least a third)" "[ $kills -ge $((r / 3)) ]"
# That a kill left an allocation due tells the runs reached the window that matters; under a
# sanitizer the kills land mostly before the first write (a run spends its time starting),
# and run-all's sanitizer run, which is there for memory errors, only reports it
# (GC_CRASH_NEED_DUE=0); the plain run asserts it.
if [ "$need_due" = 0 ]; then
	echo "# kills that left an allocation due: $late (not required here)"
else
	check "kills landed between the counts and the store commit, leaving allocations due" "[ $counts_only -ge 1 ] && [ $late -ge 1 ]"
fi
check "after every run: both files load, nothing released early, every count exact, no listed pod's address lost" "[ $bad = 0 ]"

# Uninterrupted runs with the same listing ever after: the gone pods go, the listed stay.
for r in 1 2 3; do
	pods=$(printf 'keep/p%s\n' $(seq "$per_group") | jq -R 'split("/") | {kind: "Pod", metadata: {namespace: .[0], name: .[1], uid: ("u-" + .[0] + "-" + .[1][1:])}}' | jq -s '{kind: "List", items: .}')
	"$TOOL" gc --store "$work/store" --pool-file "$work/pools.json" --pods - --listed-at "$t" --misses "$misses" <<<"$pods" >"$work/final.$r" || echo "final run $r failed" >&2
done
store_json >"$work/after.json"
check "finally every gone pod is released" "[ \"\$(jq '[.allocations[] | select(.podNamespace != \"keep\")] | length' \"$work/after.json\")\" = 0 ]"
check "every listed pod keeps its address" "[ \"\$(jq '[.allocations[] | select(.podNamespace == \"keep\")] | length' \"$work/after.json\")\" = $per_group ]"
check "no address held twice" "[ -z \"\$(jq -r '.allocations[].ip' \"$work/after.json\" | sort | uniq -d)\" ]"
check "the counts name only existing allocations (none left to count)" "[ \"\$(jq '.misses | length' \"$work/store.gc\")\" = 0 ]"
check "no temporary file of a killed writer left" "[ -z \"\$(find \"$work\" -name '*.tmp.*')\" ]"
check "nv-ipam still reads the store" "nvipam DEL keep-1 >/dev/null && nvipam_pod ADD again default/again | jq -e '.ips[0].address' >/dev/null"

exit $((fails > 0))
