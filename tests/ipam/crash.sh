#!/usr/bin/env bash
# nv-ipam processes killed with SIGKILL at random moments during bursts of ADD
# and DEL: afterwards the store loads, no address is held twice, and no ADD
# that completed (exit 0, not deleted since) is lost.
. "$(dirname "$0")/lib.sh"

bursts=${BURSTS:-120}
per_burst=${PER_BURST:-16}
kills=0

for b in $(seq "$bursts"); do
	pids=()
	for i in $(seq "$per_burst"); do
		id=k$b-$i
		(
			if out=$(nvipam ADD "$id" 2>/dev/null); then
				echo "ADD $id $(jq -r '.ips[0].address' <<<"$out")"
			fi
		) >>"$work/log.$b.$i" &
		pids+=($!)
	done
	# Kill the plugin processes (not the subshells that log) at random moments.
	sleep "0.00$((RANDOM % 9))"
	for p in $(pgrep -f "^$NVIPAM\$" || true); do
		if [ $((RANDOM % 2)) -eq 0 ] && kill -9 "$p" 2>/dev/null; then
			kills=$((kills + 1))
		fi
	done
	wait "${pids[@]}" || true
	# Release some of the survivors, also under fire.
	for f in "$work"/log."$b".*; do
		read -r _ id _ <"$f" 2>/dev/null || continue
		if [ $((RANDOM % 3)) -eq 0 ]; then
			# A DEL killed after its commit has released the address without
			# saying so: any DEL attempt takes the container out of the check.
			echo "DEL $id" >>"$f"
			( nvipam DEL "$id" >/dev/null 2>&1 ) &
		fi
	done
	sleep "0.00$((RANDOM % 5))"
	for p in $(pgrep -f "^$NVIPAM\$" || true); do
		if [ $((RANDOM % 4)) -eq 0 ] && kill -9 "$p" 2>/dev/null; then
			kills=$((kills + 1))
		fi
	done
	wait || true
done
cat "$work"/log.* >"$work/log" 2>/dev/null || : >"$work/log"
echo "# $bursts bursts of $per_burst ADDs: $kills processes killed with SIGKILL"

check "hundreds of kills happened (at least 200)" "[ $kills -ge 200 ]"
check "store loads: DEL of an unknown container succeeds" "nvipam DEL never-added >/dev/null"
check "store loads: every pool log reads back" "store_json >/dev/null"
store=$(store_json)
check "store is valid JSON" "jq -e . >/dev/null <<<\"\$store\""
check "no address held twice" "[ -z \"\$(jq -r '.allocations[].ip' <<<\"\$store\" | sort | uniq -d)\" ]"
live=$(live_from_log "$work/log")
lost=$(count_missing "$store" <<<"$live")
check "no completed ADD lost ($(grep -c . <<<"$live") completed and kept)" "[ $lost -eq 0 ]"
# The lock holders sweep what killed writers left: the store file's (the exclusive
# lock: the show above) and the pool logs' (each pool's lock).
check "no temporary file of a killed writer left" "[ \$(find \"$work\" -name '*.tmp.*' | wc -l) -eq 0 ]"

echo "$((7 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
