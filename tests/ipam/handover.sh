#!/usr/bin/env bash
# Cutover from the reference nv-ipam node daemon and rollback to it, as separate
# processes. A stand-in daemon (refstore.py hold: its flock on the store file, its
# socket) keeps nv-ipam from allocating (code 11, the store file untouched); once it is
# gone nv-ipam migrates. Then an ADD/DEL history with kills, handed over (nv-ipam-tool
# handover, what ipam-node does when it stops; itself killed at random moments first):
# the file the reference daemon would start on, read by refstore.py (written from the
# format's description, not from our code), holds exactly the live allocations with a
# valid checksum, and nv-ipam's ADD answers code 11 until the store is adopted back, unchanged
# (resumed from the logs) or changed by the daemon (migrated, its changes kept).
. "$(dirname "$0")/lib.sh"
REF="python3 $(dirname "$0")/refstore.py"
FIX=$(cd "$(dirname "$0")/../unit/golden" && pwd)
store=$work/store
sock=$work/daemon.sock

code() { jq -r '.code // "ok"' <<<"$1"; }
# ours: "<pool> <ip> <container> <ifname>" of every allocation, as our tool reads the store.
ours() { store_json | jq -r '.allocations[] | "\(.pool) \(.ip) \(.containerID) \(.ifname)"' | sort; }
# theirs: the same lines as the reference daemon would read them from the store file.
theirs() { $REF "$store"; }
add_ip() { nvipam ADD "$1" 2>/dev/null | jq -r '.ips[0].address // empty'; }
hold_start() {
	coproc HOLD { exec $REF hold "$store" "$sock"; }
	read -r _ <&"${HOLD[0]}"
}
hold_stop() { kill "$HOLD_PID"; wait "$HOLD_PID" 2>/dev/null || true; }

# ---- Cutover: the daemon runs on its store. ----
cp "$FIX/nvipam-store-reference.json" "$store"
hold_start
# Its first write replaces the file: its flock stays on the old one (the daemon's quirk).
$REF edit "$store" add pool1 10.77.0.9 dmn1 net1
before=$(sha256sum <"$store")
out=$(nvipam ADD c0 2>/dev/null || true)
check "daemon running: ADD is code 11 naming its socket" \
	'[ "$(code "$out")" = 11 ] && grep -q "reference nv-ipam node daemon answers on $work/daemon.sock" <<<"$out"'
check "and its store file is untouched, nothing written beside it" \
	'[ "$(sha256sum <"$store")" = "$before" ] && [ ! -e "$store.d" ]'
hold_stop
# A daemon just started: its flock on the file, no socket yet (the last one's file is left).
coproc HOLD { exec python3 -c 'import fcntl,sys,time; f=open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); print("held", flush=True); time.sleep(60)' "$store"; }
read -r _ <&"${HOLD[0]}"
out=$(nvipam ADD c0 2>/dev/null || true)
check "daemon starting (its flock, no socket yet): ADD is code 11 naming the lock" \
	'[ "$(code "$out")" = 11 ] && grep -q "holds the lock on the reference store file $store" <<<"$out" && [ "$(sha256sum <"$store")" = "$before" ]'
hold_stop
check "daemon gone (its socket file left behind): the first ADD migrates and allocates" \
	'[ -S "$sock" ] && [ -n "$(add_ip c0)" ] && [ "$(jq -r .version "$store")" = 2 ]'
check "the daemon's allocations are kept" \
	'ours | grep -q "^pool1 10.77.0.9 dmn1 net1$" && ours | grep -q " a1b2c3 net1$"'

# ---- A history with kills, then handover killed at random moments. ----
: >"$work/log"
for round in $(seq 6); do
	for i in $(seq 10); do
		id=h$round-$i
		( CNI_COMMAND=ADD CNI_CONTAINERID=$id CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 \
			CNI_IFNAME=net1 CNI_PATH=/nonexistent exec "$NVIPAM" <<<"$conf" >"$work/out.$id" 2>/dev/null ) &
		p=$!
		[ $((RANDOM % 3)) -ne 0 ] || ( sleep "0.00$((RANDOM % 4))"; kill -9 "$p" 2>/dev/null ) &
		if wait "$p"; then echo "ADD $id $(jq -r '.ips[0].address' "$work/out.$id")" >>"$work/log"; fi
		if [ $((RANDOM % 3)) -eq 0 ]; then
			echo "DEL $id" >>"$work/log"
			nvipam DEL "$id" >/dev/null 2>&1 || true
		fi
	done
done
wait
ours >"$work/ours0"
kills=0
tries=0
# Until five kills landed (a handover takes a few ms), at most 200 runs: each one that
# finished is adopted back, each killed one leaves what it left.
while [ "$kills" -lt 5 ] && [ "$tries" -lt 200 ]; do
	tries=$((tries + 1))
	( exec "$NVIPAM_TOOL" handover --store "$store" >/dev/null 2>&1 ) &
	p=$!
	( sleep "0.00$((RANDOM % 4))"; kill -9 "$p" 2>/dev/null ) &
	rc=0
	{ wait "$p"; } 2>/dev/null || rc=$?
	[ "$rc" -ne 137 ] || kills=$((kills + 1))
	# Whatever a kill left: while the marker is there nothing allocates, and adopt reads it.
	if [ -e "$store.handed-over" ]; then
		out=$(nvipam ADD probe 2>/dev/null || true)
		[ "$(code "$out")" = 11 ] || echo "ADD allocated after a killed handover: $out" >>"$work/bad"
	fi
	"$NVIPAM_TOOL" adopt --store "$store" >/dev/null 2>>"$work/bad" || echo "adopt failed" >>"$work/bad"
	[ "$(ours)" = "$(cat "$work/ours0")" ] || echo "run $tries: the allocations changed" >>"$work/bad"
done
wait
echo "# $kills of $tries handover runs killed"
check "killed handovers: nothing allocates while marked, adopt gets every allocation back" '[ ! -s "$work/bad" ] || { cat "$work/bad" >&2; false; }'
ours >"$work/ours"
check "handover writes the store file and its marker" \
	'"$NVIPAM_TOOL" handover --store "$store" >"$work/said" && grep -q "handed over: $store holds $(grep -c . "$work/ours") allocations" "$work/said" && [ -e "$store.handed-over" ]'
check "the reference daemon reads it: valid checksum, exactly our allocations" \
	'theirs >"$work/theirs" && diff "$work/ours" "$work/theirs" >&2'
check "every ADD that succeeded and was not deleted is in it, with its address" \
	'[ "$(live_from_log "$work/log" | while read -r id ip; do grep -q " ${ip%/*} $id net1$" "$work/theirs" || echo "$id"; done)" = "" ]'
check "no address held twice in it" '[ -z "$(awk "{print \$1, \$2}" "$work/theirs" | sort | uniq -d)" ]'
check "the pods' names went with them (the daemon's cleaner keys on them)" \
	'jq -e ".pools.pool1.entries.a1b2c3_net1.metadata.pod_name == \"test-pod\"" "$store" >/dev/null'
# files: every file of the store with its inode and checksum (a file replaced by rename
# is a new inode, even with the same bytes).
files() { find "$work" -path "$store*" -type f -printf '%P %i\n' | sort | while read -r f i; do echo "$f $i $(sha256sum <"$work/$f")"; done; }
# shown: the entries show --json lists, as theirs prints them.
shown() { jq -r '.pools[] | .pool as $p | .allocations[] | "\($p) \(.ip) \(.containerID) \(.ifname)"' | LC_ALL=C sort; }
files >"$work/files0"
"$NVIPAM_TOOL" handover --store "$store" >"$work/said" && rc=0 || rc=$?
check "a second handover says so, exit 0, and writes nothing" \
	'[ $rc = 0 ] && grep -Eq "^already handed over at 20[0-9-]+T[0-9:]+Z; nothing written: $store holds $(grep -c . "$work/ours") allocations in the reference daemon.s format$" "$work/said" && files | diff "$work/files0" - >&2'
# Shown while a process holds the daemon's flock on the store file: show does not take it.
coproc FLOCK { exec python3 -c 'import fcntl,sys,time; f=open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); print("held", flush=True); time.sleep(60)' "$store"; }
read -r _ <&"${FLOCK[0]}"
"$NVIPAM_TOOL" show --store "$store" --pool-file "$work/pools.json" --lock-timeout-ms 200 >"$work/show.txt" 2>&1 && rc=0 || rc=$?
"$NVIPAM_TOOL" show --store "$store" --pool-file "$work/pools.json" --lock-timeout-ms 200 --json >"$work/show.json" 2>&1 && rc2=0 || rc2=$?
kill "$FLOCK_PID"; wait "$FLOCK_PID" 2>/dev/null || true
check "show of a handed-over store: a first line saying so and naming the way back" \
	'[ $rc = 0 ] && head -1 "$work/show.txt" | grep -Eq "^store $store is handed over to the reference nv-ipam node daemon at 20[0-9-]+T[0-9:]+Z: shown as that daemon reads it .*ipam-node.s start or \`nv-ipam-tool adopt\` takes it back$" && grep -q "^pool pool1  block 10.77.0.1-10.77.3.232 " "$work/show.txt"'
check "show --json of it: handedOver, and exactly the entries the reference daemon reads" \
	'[ $rc2 = 0 ] && jq -e ".handedOver == true and .changedSinceHandover == false and (.handedOverAt | test(\"Z$\"))" "$work/show.json" >/dev/null && shown <"$work/show.json" | diff <(theirs | LC_ALL=C sort) - >&2'
check "show took no lock the daemon needs and wrote nothing" 'files | diff "$work/files0" - >&2'
before=$(sha256sum <"$store")
out=$(nvipam ADD late 2>/dev/null || true)
check "handed over: ADD is code 11 naming the marker and the way back, the file untouched (DEL: uninstall.sh)" \
	'[ "$(code "$out")" = 11 ] && grep -q "handed over to the reference nv-ipam node daemon ($store.handed-over is there, written by ipam-node at its stop or by nv-ipam-tool handover): ipam-node.s start or \`nv-ipam-tool adopt\` takes it back" <<<"$out" && [ "$(sha256sum <"$store")" = "$before" ]'

# ---- Adopted back unchanged: resumed from our logs. ----
check "adopt of an unchanged handover resumes" \
	'"$NVIPAM_TOOL" adopt --store "$store" | grep -q "as handed over: resumed" && [ ! -e "$store.handed-over" ] && [ "$(jq -r .version "$store")" = 2 ]'
check "with every allocation and its network name" \
	'[ "$(ours)" = "$(cat "$work/ours")" ] && store_json | jq -e "[.allocations[] | select(.containerID | startswith(\"h\")) | .network] | all(. == \"net1\")" >/dev/null'

# ---- Handed over, changed by the daemon, adopted: its changes are kept. ----
"$NVIPAM_TOOL" handover --store "$store" >/dev/null
victim=$(awk '$3 ~ /^h/ {print $3; exit}' "$work/theirs")
hold_start
$REF edit "$store" add pool1 10.77.3.200 dmn2 net1
$REF edit "$store" del "$victim" net1
out=$(nvipam ADD late 2>/dev/null || true)
check "the daemon running on it: ADD is code 11" '[ "$(code "$out")" = 11 ]'
out=$("$NVIPAM_TOOL" adopt --store "$store" 2>&1 || true)
check "adopt refuses while the daemon holds or answers" 'grep -qE "holds the store lock|answers on" <<<"$out" && [ -e "$store.handed-over" ]'
hold_stop
files >"$work/files0"
"$NVIPAM_TOOL" handover --store "$store" >"$work/said" && rc=0 || rc=$?
check "a handover over the daemon's changes: already handed over, its file kept as it is" \
	'[ $rc = 0 ] && grep -q "^already handed over at .*; nothing written: .*, written by that daemon since$" "$work/said" && files | diff "$work/files0" - >&2'
check "show reads the daemon's changes, as the daemon does" \
	'"$NVIPAM_TOOL" show --store "$store" --json >"$work/show.json" && jq -e ".changedSinceHandover" "$work/show.json" >/dev/null && shown <"$work/show.json" | diff <(theirs | LC_ALL=C sort) - >&2 && grep -q "^pool1 10.77.3.200 dmn2 net1$" <(shown <"$work/show.json")'
check "adopt after the daemon stopped migrates its changes" \
	'"$NVIPAM_TOOL" adopt --store "$store" | grep -q "migrated" && ours | grep -q "^pool1 10.77.3.200 dmn2 net1$" && ! ours | grep -q " $victim net1$"'
ip=$(add_ip late)
check "ADD works again and skips the daemon's address" '[ -n "$ip" ] && [ "${ip%/*}" != 10.77.3.200 ]'

# ---- A store of a format this build cannot read: refused, left alone. ----
printf '{"version":3,"pools":"store.d"}\n' >"$store"
rm -f "$store.handed-over"
out=$("$NVIPAM_TOOL" adopt --store "$store" 2>&1 || true)
check "a newer store format is refused, naming the versions this build reads" \
	'grep -q "unsupported version 3" <<<"$out" && [ "$(jq -r .version "$store")" = 3 ]'

echo "$((25 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
