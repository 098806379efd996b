#!/usr/bin/env bash
# ipam-node gone for good: the store handed over (nv-ipam-tool handover, what ipam-node
# does at SIGTERM) and no reference daemon ever starts. A DEL then releases in the
# reference daemon's file itself, under that daemon's flock, checksum recomputed: read by
# refstore.py (written from the format's description) and adopted back by nv-ipam-tool
# without the released addresses. ADD stays code 11; a daemon holding its flock or
# answering on its socket makes DEL code 11 again. SIGKILL at each step of a DEL (strace)
# leaves a file both readers read, nothing lost and nothing half-released.
. "$(dirname "$0")/lib.sh"
REF="python3 $(dirname "$0")/refstore.py"
REFDIR=$(cd "$(dirname "$0")" && pwd)
store=$work/store
sock=$work/daemon.sock

code() { jq -r '.code // "ok"' <<<"$1"; }
ours() { store_json "${1:-$store}" | jq -r '.allocations[] | "\(.pool) \(.ip) \(.containerID) \(.ifname)"' | sort; }
theirs() { $REF "$store"; }
sum() { sha256sum <"$store"; }

# A logFile: the DEL's last step below is the write of its line there (stderr gets none).
nvipam_node_conf "$work" "$work/pools.json" "$work/store" ", \"logFile\": \"$work/nv-ipam.log\""
for i in $(seq 12); do nvipam_pod ADD u$i ns/pod-u$i >/dev/null; done
for v in v1 v2; do nvipam_pod ADD $v ns/pod-$v >/dev/null; done
"$NVIPAM_TOOL" handover --store "$store" >/dev/null
theirs >"$work/t0"
check "handed over: 14 allocations in the daemon's file" '[ "$(grep -c . "$work/t0")" = 14 ]'

out=$(nvipam DEL u1 2>&1) && rc=0 || rc=$?
check "DEL with no daemon: succeeds and releases in the file, checksum right" \
	'[ "$rc" = 0 ] && theirs >"$work/t1" && ! grep -q " u1 net1$" "$work/t1" && [ "$(grep -c . "$work/t1")" = 13 ]'
check "the marker stays, its checksum the handover's" '[ -e "$store.handed-over" ]'
check "the rest of the file is kept: pod names, the pool" \
	'jq -e ".pools.pool1.entries.u2_net1.metadata.pod_name == \"pod-u2\" and .pools.pool1.last_reserved_ip != \"\"" "$store" >/dev/null'
before=$(sum)
check "DEL again, and DEL of what was never there: succeed, file untouched" \
	'nvipam DEL u1 >/dev/null && nvipam DEL nothere >/dev/null && [ "$(sum)" = "$before" ]'
out=$(nvipam ADD u13 2>/dev/null || true)
check "ADD is still code 11 naming the marker" \
	'[ "$(code "$out")" = 11 ] && grep -q "handed over to the reference nv-ipam node daemon" <<<"$out" && [ "$(sum)" = "$before" ]'

# A daemon just started: its flock on the store file, no socket yet.
coproc HOLD { exec python3 -c 'import fcntl,sys,time; f=open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); print("held", flush=True); time.sleep(60)' "$store"; }
read -r _ <&"${HOLD[0]}"
out=$(nvipam DEL u2 2>/dev/null || true)
kill "$HOLD_PID"; wait "$HOLD_PID" 2>/dev/null || true
check "a daemon holding the store file's flock: DEL is code 11, file untouched" \
	'[ "$(code "$out")" = 11 ] && grep -q "holds the lock on the reference store file" <<<"$out" && [ "$(sum)" = "$before" ]'
# A daemon answering on its socket (its lock not seen: the quirk of its renamed file).
coproc HOLD { exec python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); print("up", flush=True); time.sleep(60)' "$sock"; }
read -r _ <&"${HOLD[0]}"
out=$(nvipam DEL u2 2>/dev/null || true)
kill "$HOLD_PID"; wait "$HOLD_PID" 2>/dev/null || true
check "a daemon answering on daemon.sock: DEL is code 11, file untouched" \
	'[ "$(code "$out")" = 11 ] && grep -q "answers on $work/daemon.sock" <<<"$out" && [ "$(sum)" = "$before" ]'
check "its socket left behind, nothing answering: DEL releases" \
	'[ -S "$sock" ] && nvipam DEL u2 >/dev/null && ! theirs | grep -q " u2 net1$"'

# A second address of one attachment, renamed as the handover names it.
python3 - "$store" "$REFDIR" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[2])
import refstore
root = json.load(open(sys.argv[1]))
e = dict(root['pools']['pool1']['entries']['u3_net1'])
e['ip_address'] = '10.77.3.100'
root['pools']['pool1']['entries']['u3_net1_10.77.3.100'] = e
root['checksum'] = refstore.checksum(root)
json.dump(root, open(sys.argv[1] + '.tmp', 'w'), separators=(',', ':'))
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
PY
check "DEL releases the attachment's renamed entry too" \
	'nvipam DEL u3 >/dev/null && jq -e "[.pools[].entries | keys[] | select(startswith(\"u3_\"))] == []" "$store" >/dev/null && theirs >/dev/null'

# An entry under a key of another form (a hand's, a tool's): found by its container and
# interface, as the daemon's cleaner finds entries (issue 45).
python3 - "$store" "$REFDIR" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[2])
import refstore
root = json.load(open(sys.argv[1]))
entries = root['pools']['pool1']['entries']
entries['moved-by-hand'] = entries.pop('v1_net1')
root['checksum'] = refstore.checksum(root)
json.dump(root, open(sys.argv[1] + '.tmp', 'w'), separators=(',', ':'))
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
PY
check "DEL releases the attachment's entry under a key of another form" \
	'nvipam DEL v1 >/dev/null && jq -e "[.pools[].entries[] | select(.container_id == \"v1\")] == []" "$store" >/dev/null && theirs >/dev/null'

# Raw bytes that are not UTF-8 in a name (a hand's edit, an older tool's write), with the
# checksum the daemon computes over what it reads (each such byte as U+FFFD): the daemon
# reads the file, so does DEL, which writes it back valid UTF-8 (issue 45).
python3 - "$store" "$REFDIR" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[2])
import refstore
root = json.load(open(sys.argv[1]))
for e in ('v2_net1', 'u12_net1'):
    root['pools']['pool1']['entries'][e]['metadata']['pod_name'] = 'p\udcffq'
root['checksum'] = refstore.checksum(json.loads(json.dumps(root).replace('\\udcff', '\\ufffd')))
text = json.dumps(root, separators=(',', ':'), ensure_ascii=False)
open(sys.argv[1] + '.tmp', 'wb').write(text.encode('utf-8', 'surrogateescape'))
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
PY
check "the file holds raw bytes that are not UTF-8" '! iconv -f UTF-8 -t UTF-8 "$store" >/dev/null 2>&1'
out=$(nvipam DEL v2 2>&1) && rc=0 || rc=$?
check "DEL in such a file: succeeds and releases, the file written back UTF-8 and read" \
	'[ "$rc" = 0 ] && jq -e "[.pools[].entries[] | select(.container_id == \"v2\")] == []" "$store" >/dev/null && iconv -f UTF-8 -t UTF-8 "$store" >/dev/null && theirs >/dev/null'
check "... another name's byte kept as the daemon reads it (U+FFFD)" \
	'jq -e ".pools.pool1.entries.u12_net1.metadata.pod_name == \"p\\ufffdq\"" "$store" >/dev/null'

# ---- SIGKILL at each step of the DEL path: strace injects it at a system call (at
# random moments without strace). One attachment per step, then a DEL that finishes. The
# last, write:when=1, is the line the DEL logs after the release (in logFile). ----
steps="flock:when=3 flock:when=4 fchmod pwrite64 fsync:when=1 renameat fsync:when=2 write:when=1"
del_killed() {
	local env=(CNI_COMMAND=DEL CNI_CONTAINERID=$1 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1
		CNI_IFNAME=net1 CNI_PATH=/nonexistent)
	if [ "$HAVE_STRACE" ]; then
		( env "${env[@]}" strace -f -qq -o /dev/null -e inject="$2":signal=KILL "$NVIPAM" <<<"$conf" >/dev/null 2>&1 ) 2>/dev/null
	else
		( env "${env[@]}" "$NVIPAM" <<<"$conf" >/dev/null 2>&1 ) &
		local p=$!
		( sleep "0.00$((RANDOM % 3))"; kill -9 "$p" 2>/dev/null ) &
		wait "$p"
	fi
}
HAVE_STRACE=$(strace -qq -o /dev/null true 2>/dev/null && echo 1 || true)
[ "$HAVE_STRACE" ] || echo "# strace cannot run: SIGKILL at random moments instead"
# after_del ID WHAT: the file read by refstore.py and, in a copy, adopted by nv-ipam-tool:
# every line it held before but ID's, nothing new; a copy adopted back holds the same.
after_del() {
	if ! theirs >"$work/now" 2>>"$work/bad"; then
		echo "$1 $2: refstore refuses the file" >>"$work/bad"
	elif [ -n "$(grep -v " $1 net1$" "$work/before" | comm -23 - "$work/now")" ] ||
		[ -n "$(comm -13 "$work/before" "$work/now")" ]; then
		echo "$1 $2: allocations lost or added" >>"$work/bad"
	fi
	rm -rf "$work/copy" && mkdir "$work/copy" && cp -a "$store" "$store.handed-over" "$store.d" "$work/copy/"
	if ! "$NVIPAM_TOOL" adopt --store "$work/copy/store" >/dev/null 2>>"$work/bad"; then
		echo "$1 $2: adopt failed" >>"$work/bad"
	elif [ "$(ours "$work/copy/store")" != "$(cat "$work/now")" ]; then
		echo "$1 $2: adopted store differs from the file" >>"$work/bad"
	fi
	cp "$work/now" "$work/before"
}
theirs >"$work/before"
: >"$work/bad"
kills=0
i=4
for step in $steps; do
	id=u$i
	i=$((i + 1))
	rc=0
	{ del_killed "$id" "$step"; } 2>/dev/null || rc=$?
	[ "$rc" -ne 137 ] || kills=$((kills + 1))
	after_del "$id" "killed at $step"
	nvipam DEL "$id" >/dev/null 2>&1 || echo "$id: DEL after the kill failed" >>"$work/bad"
	after_del "$id" "DEL after the kill"
	! grep -q " $id net1$" "$work/now" || echo "$id: still held after a DEL that succeeded" >>"$work/bad"
done
wait
echo "# $kills of $(wc -w <<<"$steps") DELs killed"
check "killed DELs: the file always read, nothing lost, nothing half-released, adopt agrees" \
	'[ ! -s "$work/bad" ] || { cat "$work/bad" >&2; false; }'
check "every step was reached (strace: each DEL killed)" '[ -z "$HAVE_STRACE" ] || [ "$kills" = 8 ]'
check "no temporary file left beside the store" '[ -z "$(ls "$work" | grep "^store\.tmp")" ]'

# ---- ipam-node back: the changed file is migrated, no released address comes back. ----
theirs >"$work/final"
check "adopt migrates the changed file (the pool logs still held the released ones)" \
	'"$NVIPAM_TOOL" adopt --store "$store" | grep -q "migrated" && [ "$(ours)" = "$(cat "$work/final")" ] && [ "$(grep -c . "$work/final")" = 1 ]'
ip=$(nvipam ADD u14 2>/dev/null | jq -r '.ips[0].address // empty')
check "ADD works again" '[ -n "$ip" ]'

echo "$((19 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
