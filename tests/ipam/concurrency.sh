#!/usr/bin/env bash
# Many nv-ipam processes doing ADD and DEL at once on one pool: no address is
# handed out twice, every successful ADD is in the store, every DEL is gone.
. "$(dirname "$0")/lib.sh"

workers=${WORKERS:-24}
rounds=${ROUNDS:-12}

worker() {
	local w=$1 i id
	for i in $(seq "$rounds"); do
		id=c$w-$i
		if out=$(nvipam ADD "$id" 2>/dev/null); then
			echo "ADD $id $(jq -r '.ips[0].address' <<<"$out")" >>"$work/log.$w"
		else
			echo "ADDFAIL $id" >>"$work/log.$w"
		fi
		# Every other container is deleted again straight away.
		if [ $((i % 2)) -eq 0 ]; then
			if nvipam DEL "$id" >/dev/null 2>&1; then
				echo "DEL $id" >>"$work/log.$w"
			else
				echo "DELFAIL $id" >>"$work/log.$w"
			fi
		fi
	done
}

start=$(date +%s.%N)
for w in $(seq "$workers"); do worker "$w" & done
wait
end=$(date +%s.%N)
cat "$work"/log.* >"$work/log"

adds=$(grep -c '^ADD ' "$work/log" || true)
addfails=$(grep -c '^ADDFAIL ' "$work/log" || true)
dels=$(grep -c '^DEL ' "$work/log" || true)
delfails=$(grep -c '^DELFAIL ' "$work/log" || true)
echo "# $workers workers x $rounds rounds in $(echo "$end - $start" | bc) s: $adds ADD ok, $addfails ADD failed, $dels DEL ok, $delfails DEL failed"

store=$(store_json)
held=$(jq -r '.allocations[] | .ip' <<<"$store" | sort)
check "every ADD succeeded" "[ $addfails -eq 0 ]"
check "every DEL succeeded" "[ $delfails -eq 0 ]"
check "no address held twice in the store" "[ -z \"\$(uniq -d <<<\"\$held\")\" ]"
# Among live containers, no two were ever given the same address.
live=$(live_from_log "$work/log")
check "no address given to two live containers" "[ -z \"\$(awk '{print \$2}' <<<\"\$live\" | sort | uniq -d)\" ]"
missing=$(count_missing "$store" <<<"$live")
check "every live ADD is in the store ($(wc -l <<<"$live") live)" "[ $missing -eq 0 ]"
gone=0
while read -r id; do
	jq -e --arg id "$id" 'any(.allocations[]; .containerID == $id)' <<<"$store" >/dev/null && gone=$((gone + 1))
done < <(awk '$1=="DEL"{print $2}' "$work/log")
check "every DEL is gone from the store" "[ $gone -eq 0 ]"
check "store holds exactly the live containers" "[ $(jq '.allocations | length' <<<"$store") -eq $(grep -c . <<<"$live") ]"
check "store files are mode 0600" "[ \"\$(stat -c %a \"$work/store\" \"$work/store.d/\"* | sort -u)\" = 600 ]"

echo "$((7 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
