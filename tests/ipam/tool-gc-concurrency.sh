#!/usr/bin/env bash
# nv-ipam-tool gc running over and over while many nv-ipam processes do ADD and DEL on the
# same store: workers' containers belong to listed pods, a feeder keeps adding containers
# of pods that are gone. gc (a new listing time each run, --misses 1 or 2) must release
# only the gone pods' addresses, each once; no worker ADD or DEL fails, no address is
# held twice, no live container loses its address; a last run clears every gone pod.
. "$(dirname "$0")/lib.sh"
TOOL=${2:?usage: $0 NV-IPAM NV-IPAM-TOOL}

workers=${WORKERS:-12}
rounds=${ROUNDS:-12}
stale=${STALE:-60}

# The listing: every worker's pods, always there (a pod per container: a pod has one sandbox
# at a time, and a new one takes over what an earlier one of the pod holds).
for w in $(seq "$workers"); do for i in $(seq "$rounds"); do echo "live/w$w-$i/uw$w-$i"; done; done |
	jq -R 'split("/") | {kind: "Pod", metadata: {namespace: .[0], name: .[1], uid: .[2]}}' |
	jq -s '{kind: "List", items: .}' >"$work/pods.json"

worker() {
	local w=$1 i id out
	for i in $(seq "$rounds"); do
		id=c$w-$i
		if out=$(nvipam_pod ADD "$id" "live/w$w-$i" "uw$w-$i" 2>>"$work/nvipam.err"); then
			echo "ADD $id $(jq -r '.ips[0].address' <<<"$out")" >>"$work/log.$w"
		else
			echo "ADDFAIL $id" >>"$work/log.$w"
		fi
		if [ $((i % 2)) -eq 0 ]; then
			if nvipam_pod DEL "$id" "live/w$w-$i" "uw$w-$i" >/dev/null 2>>"$work/nvipam.err"; then
				echo "DEL $id" >>"$work/log.$w"
			else
				echo "DELFAIL $id" >>"$work/log.$w"
			fi
		fi
	done
}
# Containers of pods no longer in the API (their DEL never came).
feeder() {
	local i
	for i in $(seq "$stale"); do
		if nvipam_pod ADD "s$i" "gone/s$i" "us$i" >/dev/null 2>>"$work/nvipam.err"; then
			echo "STALE s$i" >>"$work/log.feeder"
		fi
		sleep 0.0$((RANDOM % 5))
	done
}
gc_loop() {
	local rc t
	while [ ! -e "$work/done" ]; do
		t=$(date +%s)
		rc=0
		"$TOOL" gc --store "$work/store" --pool-file "$work/pools.json" --pods "$work/pods.json" \
			--listed-at "$t" --misses $((RANDOM % 2 + 1)) >>"$work/gc.out" 2>>"$work/gc.err" || rc=$?
		echo "$rc" >>"$work/gc.rc"
	done
}

gc_loop &
gc_pid=$!
pids=()
for w in $(seq "$workers"); do worker "$w" & pids+=($!); done
feeder &
pids+=($!)
wait "${pids[@]}"
touch "$work/done"
wait "$gc_pid"
runs=$(grep -c . "$work/gc.rc")
released_during=$(grep -c '^released ' "$work/gc.out" || true)
# A last run, from a listing started after every ADD: whatever of the gone pods is left goes.
wait_older
"$TOOL" gc --store "$work/store" --pool-file "$work/pools.json" --pods "$work/pods.json" \
	--listed-at "$(date +%s)" --misses 1 >>"$work/gc.out" 2>>"$work/gc.err"
cat "$work"/log.* >"$work/log"
echo "# $workers workers x $rounds rounds, $(grep -c '^STALE' "$work/log") stale containers; gc ran $runs times alongside, releasing $released_during addresses then"

check "gc ran alongside the workers (at least 3 runs)" "[ $runs -ge 3 ]"
check "every gc run succeeded" "! grep -qv '^0$' \"$work/gc.rc\" && [ ! -s \"$work/gc.err\" ]"
check "gc released addresses while the workers ran" "[ $released_during -ge 1 ]"
check "every worker ADD and DEL succeeded" "! grep -q FAIL \"$work/log\""
grep -v ' info: ' "$work/nvipam.err" | head -3 | sed 's/^/# nv-ipam: /' || true
store=$(store_json)
check "no address held twice" "[ -z \"\$(jq -r '.allocations[].ip' <<<\"\$store\" | sort | uniq -d)\" ]"
live=$(grep -v '^STALE' "$work/log" | live_from_log /dev/stdin)
check "no live container lost its address ($(grep -c . <<<"$live") live)" "[ \$(count_missing \"\$store\" <<<\"\$live\") -eq 0 ]"
check "no listed pod's address was released" "! grep -q 'pod live/' \"$work/gc.out\""
check "the store holds exactly the live containers" "[ \$(jq '.allocations | length' <<<\"\$store\") -eq \$(grep -c . <<<\"\$live\") ]"
check "each gone pod's address was released exactly once" \
	"[ \"\$(grep '^released' \"$work/gc.out\" | grep -o 'container s[0-9]* ' | sort | uniq -d)\" = '' ] && [ \$(grep -c '^released .* pod gone/' \"$work/gc.out\") -eq \$(grep -c '^STALE' \"$work/log\") ]"
check "no count left behind" "[ \"\$(jq '.misses | length' \"$work/store.gc\")\" = 0 ]"

exit $((fails > 0))
