#!/usr/bin/env bash
# nv-ipam with many pools, as separate processes: a pool's lock held keeps only that
# pool's ADDs waiting (the node lock held keeps them all); eight pools ADDed and DELed
# at once hand out no address twice; two-pool ADDs killed with SIGKILL at random
# moments leave each attachment with both of its addresses or with neither.
. "$(dirname "$0")/lib.sh"

# Eight rails and a v4+v6 pair, 250 addresses each.
{
	printf '{"pools": {'
	for r in 0 1 2 3 4 5 6 7; do
		printf '"rail%d": {"subnet": "10.8%d.0.0/24", "startIP": "10.8%d.0.1", "endIP": "10.8%d.0.250"},' \
			"$r" "$r" "$r" "$r"
	done
	printf '"v4": {"subnet": "10.90.0.0/24", "startIP": "10.90.0.1", "endIP": "10.90.0.250"},'
	printf '"v6": {"subnet": "fd00:90::/64", "startIP": "fd00:90::1", "endIP": "fd00:90::fa"}}}\n'
} >"$work/pools.json"

# run CMD ID POOLS [TIMEOUT-MS]: stdout is the result or the error.
run() {
	local c='{"cniVersion":"1.0.0","name":"net-'${3//,/-}'","ipam":{"type":"nv-ipam","poolName":"'$3'","confDir":"'$work'","lockTimeoutMs":'${4:-10000}'}}'
	CNI_COMMAND=$1 CNI_CONTAINERID=$2 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 \
		CNI_IFNAME=net1 CNI_PATH=/nonexistent "$NVIPAM" <<<"$c" 2>/dev/null
}
code() { jq -r '.code // 0' <<<"$1"; }
ms() { echo $(($(date +%s%N) / 1000000)); }

# The pool locks: a held pool waits alone.
run ADD first rail0 >/dev/null && run ADD first rail1 >/dev/null
exec {lockfd}>"$work/store.d/rail0.lock"
flock "$lockfd"
t0=$(ms)
out=$(run ADD other rail1 300 || true)
t1=$(ms)
# Had it waited for rail0's lock it would have given up after 300 ms with code 11:
# its address is the proof, the time only for the log (a loaded machine is slow).
check "rail0's lock held: an ADD on rail1 goes on (in $((t1 - t0)) ms)" "[ \"\$(jq -r '.ips[0].address' <<<\"\$out\")\" = 10.81.0.2/24 ]"
out=$(run ADD other rail0 300 || true)
check "an ADD on rail0 waits, and gives up with 11" "[ \"\$(code \"\$out\")\" = 11 ] && grep -q 'store.d/rail0.log is locked' <<<\"\$out\""
# (store_json reads under the node lock alone: the pool lock held here is no process's.)
out=$(run DEL other rail1 300 || true)
check "a DEL of a container rail0's log does not name goes on" "[ -z \"\$out\" ] && [ -z \"\$(store_json | jq -r '.allocations[] | select(.containerID == \"other\")')\" ]"
out=$(run DEL first rail1 300 || true)
check "a DEL of one it names waits for it, and gives up with 11" "[ \"\$(code \"\$out\")\" = 11 ]"
flock -u "$lockfd"
exec {lockfd}>&-
exec {lockfd}>"$work/store.lock"
flock "$lockfd"
out=$(run ADD other2 rail1 300 || true)
check "the node lock held (the whole store, as by nv-ipam-tool): every ADD waits" "[ \"\$(code \"\$out\")\" = 11 ]"
flock -u "$lockfd"
exec {lockfd}>&-
run DEL first rail0 >/dev/null

# Eight pools at once, as eight rails of many pods: no address twice in a pool.
worker() {
	local w=$1 i r id out
	for i in $(seq 6); do
		id=p$w-$i
		for r in 0 1 2 3 4 5 6 7; do
			if out=$(run ADD "$id" "rail$r"); then
				echo "ADD $id rail$r $(jq -r '.ips[0].address' <<<"$out")"
			else
				echo "ADDFAIL $id rail$r"
			fi
		done
		if [ $((i % 3)) -eq 0 ]; then
			for r in 0 1 2 3 4 5 6 7; do
				run DEL "$id" "rail$r" >/dev/null && echo "DEL $id rail$r" || echo "DELFAIL $id rail$r"
			done
		fi
	done >"$work/rails.$w"
}
for w in $(seq 12); do worker "$w" & done
wait
cat "$work"/rails.* >"$work/rails"
store=$(store_json)
check "every ADD and DEL on eight pools at once succeeded ($(grep -c '^ADD ' "$work/rails") ADDs)" "! grep -q FAIL \"$work/rails\""
check "no address held twice in any pool" "[ -z \"\$(jq -r '.allocations[] | .pool + \" \" + .ip' <<<\"\$store\" | sort | uniq -d)\" ]"
live=$(awk '$1=="ADD"{a[$2" "$3]=$4} $1=="DEL"{delete a[$2" "$3]} END{for (k in a) print k, a[k]}' "$work/rails" | sort)
held=$(jq -r '.allocations[] | select(.pool | startswith("rail")) | .containerID + " " + .pool + " " + .ip + "/24"' <<<"$store" | sort)
check "the store holds exactly the live attachments of each pool ($(grep -c . <<<"$live"))" "[ \"\$live\" = \"\$held\" ]"

# Two pools in one ADD, killed at random moments: both addresses or neither.
: >"$work/kills"
dual() {
	local id=$1 p rc=0
	( CNI_COMMAND=ADD CNI_CONTAINERID=$id CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 CNI_IFNAME=net1 \
	  CNI_PATH=/nonexistent exec "$NVIPAM" >/dev/null 2>&1 \
	  <<<'{"cniVersion":"1.0.0","name":"dual","ipam":{"type":"nv-ipam","poolName":"v4,v6","confDir":"'$work'"}}' ) &
	p=$!
	( sleep "0.00$((RANDOM % 4))"; kill -9 "$p" 2>/dev/null ) &
	wait "$p" || rc=$?
	[ $rc -ne 137 ] || echo "$id" >>"$work/kills"
	wait
}
# How long an ADD takes depends on the machine and its load: bursts go on until
# ten were killed mid-run (at most 60 bursts), not for a fixed count.
b=0
while [ "$(grep -c . "$work/kills")" -lt 10 ] && [ $b -lt 60 ]; do
	b=$((b + 1))
	for i in $(seq 10); do dual "d$b-$i" & done
	wait
done
store=$(store_json)
v4=$(jq -r '.allocations[] | select(.pool == "v4") | .containerID' <<<"$store" | sort)
v6=$(jq -r '.allocations[] | select(.pool == "v6") | .containerID' <<<"$store" | sort)
check "two-pool ADDs were killed while they ran ($(grep -c . "$work/kills"))" "[ \$(grep -c . \"$work/kills\") -ge 10 ]"
check "every attachment holds both of its addresses or neither ($(grep -c . <<<"$v4") with both)" "[ \"\$v4\" = \"\$v6\" ]"
check "no address held twice in either pool" "[ -z \"\$(jq -r '.allocations[] | .pool + \" \" + .ip' <<<\"\$store\" | sort | uniq -d)\" ]"
# And what the killed ones left is settled: each gets both addresses when run again.
for id in $(cat "$work/kills"); do
	out=$(run ADD "$id" v4,v6) || echo "retry of $id failed: $out"
done >"$work/retries"
store=$(store_json)
check "an ADD run again after a kill gets both addresses" "[ ! -s \"$work/retries\" ] && [ \"\$(jq -r '.allocations[] | select(.pool == \"v4\") | .containerID' <<<\"\$store\" | sort)\" = \"\$(jq -r '.allocations[] | select(.pool == \"v6\") | .containerID' <<<\"\$store\" | sort)\" ]"

echo "$((12 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
