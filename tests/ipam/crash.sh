#!/usr/bin/env bash
# nv-ipam processes killed with SIGKILL at random moments during bursts of ADD
# and DEL: afterwards the store loads, no address is held twice, and no ADD
# that completed (exit 0, not deleted since) is lost.
. "$(dirname "$0")/lib.sh"

bursts=${BURSTS:-60}
per_burst=${PER_BURST:-16}
# Whether a kill lands inside a process depends on how busy the machine is: bursts go
# on past $bursts (up to ten times as many: a count, not a time, so that a loaded
# machine, slower at each burst, gets as many) until at least $min_kills kills landed
# (MIN_KILLS, 30 by default: beside the netns suites a kill landed every four seconds).
min_kills=${MIN_KILLS:-30}
max_bursts=$((bursts * 10))
: >"$work/kills"

# run CMD ID OUT ODDS: runs nv-ipam (output in OUT) and, with odds 1 in ODDS, SIGKILLs
# it 0 to 3 ms after it started: an ADD takes only a few milliseconds. Returns its exit
# status; each run that died of the signal is a line in $work/kills.
run() {
	local p rc=0
	( CNI_COMMAND=$1 CNI_CONTAINERID=$2 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 \
		CNI_IFNAME=net1 CNI_PATH=/nonexistent exec "$NVIPAM" <<<"$conf" >"$3" 2>/dev/null ) &
	p=$!
	if [ $((RANDOM % $4)) -eq 0 ]; then
		( sleep "0.00$((RANDOM % 4))"; kill -9 "$p" 2>/dev/null ) &
	fi
	wait "$p" || rc=$?
	[ $rc -ne 137 ] || echo "$2" >>"$work/kills"
	return $rc
}

b=0
while [ "$b" -lt "$bursts" ] ||
	{ [ "$b" -lt "$max_bursts" ] &&
		[ "$(grep -c . "$work/kills")" -lt "$min_kills" ]; }; do
	b=$((b + 1))
	pids=()
	for i in $(seq "$per_burst"); do
		id=k$b-$i
		(
			if run ADD "$id" "$work/out.$b.$i" 2; then
				echo "ADD $id $(jq -r '.ips[0].address' "$work/out.$b.$i")"
			fi
			wait
		) >>"$work/log.$b.$i" &
		pids+=($!)
	done
	wait "${pids[@]}" || true
	# Release some of the survivors, also under fire.
	for f in "$work"/log."$b".*; do
		read -r _ id _ <"$f" 2>/dev/null || continue
		if [ $((RANDOM % 3)) -eq 0 ]; then
			# A DEL killed after its commit has released the address without
			# saying so: any DEL attempt takes the container out of the check.
			echo "DEL $id" >>"$f"
			( run DEL "$id" /dev/null 4 || true; wait ) &
		fi
	done
	wait || true
done
kills=$(grep -c . "$work/kills" || true)
cat "$work"/log.* >"$work/log" 2>/dev/null || : >"$work/log"
echo "# $b bursts of $per_burst ADDs: $kills processes killed with SIGKILL"

check "$kills kills happened (at least $min_kills)" "[ $kills -ge $min_kills ]"
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
