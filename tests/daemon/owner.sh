#!/bin/bash
# One ipam-node per store (docs/ipam-node.md, "One owner"): two started within
# milliseconds, many times, some while a third process holds the owner lock for 200 ms.
# Once they settle exactly one owns the store (adopted, holding <store>.owner, the
# handover marker gone, nv-ipam ADD answering); the other waits and, stopped, hands
# nothing over (nv-ipam goes on answering); the owner's stop leaves the store in the
# reference daemon's format with the marker. A second ipam-node beside a running one,
# and one beside a reference daemon holding the store file's flock, exit 1 with a
# clear line and hand nothing over.
. "$(dirname "$0")/lib.sh"
. "$DAEMON_DIR/nodelib.sh"

ROUNDS=${OWNER_ROUNDS:-20}
MARKER=$STORE.handed-over
ADOPTED='store is ours|store taken back as handed over|store migrated from'

api_start
api_put /apis/nv-ipam.nvidia.com/v1alpha1/namespaces/kube-system/ippools '{"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "IPPool", "metadata": {"name": "pool1", "namespace": "kube-system"}, "spec": {"subnet": "10.78.0.0/16", "perNodeBlockSize": 256, "gateway": "10.78.0.1"}, "status": {"allocations": [{"nodeName": "node-a", "startIP": "10.78.0.1", "endIP": "10.78.0.255"}]}}'

# Exit 0 when another process holds the flock on $1.
lock_held() {
	python3 -c 'import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    sys.exit(0)
sys.exit(1)' "$1"
}

# Holds the flock on $1 for $2 seconds, in the background; returns once held.
hold_lock() {
	rm -f "$work/held"
	python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[3], "w").close()
time.sleep(float(sys.argv[2]))' "$1" "$2" "$work/held" &
	defer "kill $! 2>/dev/null"
	wait_for 20 test -e "$work/held" # a hang guard, as are the waits below
}

adopted() { grep -Eq "$ADOPTED" "$work/$1.log"; }
waiting() { grep -q "waiting for a lock" "$work/$1.log"; }
# One adopted and in sync (nv-ipam can allocate), the other waiting for the lock or gone.
settled() {
	if adopted a; then WIN=a LOSE=b; elif adopted b; then WIN=b LOSE=a; else return 1; fi
	local wp=${WIN}_PID lp=${LOSE}_PID
	grep -q "node pool file is in sync" "$work/$WIN.log" &&
		{ waiting "$LOSE" || ! node_alive "${!lp}"; } && node_alive "${!wp}"
}

bad_rounds=() two_owners=0 no_marker_gone=0 add_failed=0 loser_handover=0 loser_rc=0
add_after_loser=0 no_handover=0 no_marker=0 ref_missing=0 loser_gave_up=0
for ((i = 1; i <= ROUNDS; i++)); do
	# Every other round: a third process has the owner lock while both start.
	((i % 2)) || hold_lock "$STORE.owner" 0.2
	node_start a
	node_start b
	if ! wait_for 30 settled; then
		bad_rounds+=("$i: did not settle")
		kill -9 "$a_PID" "$b_PID" 2>/dev/null
		continue
	fi
	wp=${WIN}_PID lp=${LOSE}_PID
	{ adopted a && adopted b; } && two_owners=$((two_owners + 1))
	[ ! -e "$MARKER" ] || no_marker_gone=$((no_marker_gone + 1))
	lock_held "$STORE.owner" || bad_rounds+=("$i: owner lock not held")
	node_add "c$i" >"$work/add.out" 2>&1 && grep -q '"10\.78\.0\.' "$work/add.out" ||
		{ add_failed=$((add_failed + 1)); cat "$work/add.out"; }
	# The loser's stop: nothing handed over, nv-ipam goes on.
	kill -TERM "${!lp}" 2>/dev/null || true
	wait_for 30 node_gone "${!lp}" || bad_rounds+=("$i: the waiting one did not stop")
	# Status 0, stopped while it waited; or 1, its 3 s wait for the lock over before the
	# signal came (a loaded machine), saying so: either way nothing handed over.
	if [ "${NODE_RC:-1}" = 1 ] && grep -q "this ipam-node does not run" "$work/$LOSE.log"; then
		loser_gave_up=$((loser_gave_up + 1))
	elif [ "${NODE_RC:-1}" != 0 ]; then
		loser_rc=$((loser_rc + 1))
	fi
	! grep -q "handed over" "$work/$LOSE.log" || loser_handover=$((loser_handover + 1))
	node_add "d$i" >"$work/add.out" 2>&1 || { add_after_loser=$((add_after_loser + 1)); cat "$work/add.out"; }
	# The owner's stop hands over.
	kill -TERM "${!wp}"
	wait_for 30 node_gone "${!wp}" || bad_rounds+=("$i: the owner did not stop")
	[ "${NODE_RC:-1}" = 0 ] || bad_rounds+=("$i: the owner's stop: status $NODE_RC")
	grep -q "store handed over in the reference daemon's format" "$work/$WIN.log" ||
		no_handover=$((no_handover + 1))
	[ -e "$MARKER" ] || no_marker=$((no_marker + 1))
	ref_entries >"$work/ref.out" 2>&1 && grep -q " c$i net1$" "$work/ref.out" &&
		grep -q " d$i net1$" "$work/ref.out" || ref_missing=$((ref_missing + 1))
done
eq "every round settled with one owner" "" "${bad_rounds[*]}"
eq "rounds where both adopted" 0 "$two_owners"
eq "rounds with the marker left while an owner ran" 0 "$no_marker_gone"
eq "rounds where nv-ipam ADD failed under the owner" 0 "$add_failed"
eq "rounds where the waiting one's stop was not status 0 (nor 1 after its wait)" 0 "$loser_rc"
echo "note: rounds where the waiting one's wait ended before its SIGTERM: $loser_gave_up"
eq "rounds where the waiting one handed over" 0 "$loser_handover"
eq "rounds where nv-ipam ADD failed after the waiting one stopped" 0 "$add_after_loser"
eq "rounds where the owner's stop did not hand over" 0 "$no_handover"
eq "rounds without the marker after the owner's stop" 0 "$no_marker"
eq "rounds whose addresses the reference store lacks" 0 "$ref_missing"
eq "reference store entries (two ADDs a round)" $((2 * ROUNDS)) "$(ref_entries | wc -l)"

# A second one beside a running owner: exit 1 once the wait for the lock is over.
node_start a
wait_for 30 grep -q "node pool file is in sync" "$work/a.log" || bad "the owner did not start"
t0=$(date +%s%N)
node_start b
wait_for 30 node_gone "$b_PID" || bad "the second one did not end"
ms=$((($(date +%s%N) - t0) / 1000000))
eq "the second one's status" 1 "$NODE_RC"
ge "ms until the second one ended: its wait for the lock (3 s) first" 3000 "$ms"
grep -q "another ipam-node holds the owner lock $STORE.owner" "$work/b.log" &&
	grep -q "this ipam-node does not run" "$work/b.log" && ok "the second one says why" ||
	{ bad "the second one says why"; cat "$work/b.log"; }
! grep -q "handed over" "$work/b.log" && ok "the second one hands nothing over" ||
	bad "the second one hands nothing over"
node_add e1 >/dev/null 2>&1 && ok "nv-ipam ADD under the owner after the second one ended" ||
	bad "nv-ipam ADD under the owner after the second one ended"
kill -TERM "$a_PID"
wait_for 30 node_gone "$a_PID"
[ -e "$MARKER" ] && ok "marker after the owner's stop" || bad "marker after the owner's stop"

# The reference daemon holds the store file's flock: ipam-node exits 1, changes nothing.
before=$(sha256sum "$STORE" "$MARKER")
python3 "$REFSTORE" hold "$STORE" "$work/hold.sock" >"$work/hold.out" 2>&1 &
defer "kill $! 2>/dev/null"
hold=$!
wait_for 20 grep -q held "$work/hold.out"
node_start c
wait_for 30 node_gone "$c_PID" || bad "ipam-node beside the reference daemon did not end"
eq "ipam-node beside the reference daemon: status" 1 "$NODE_RC"
grep -q "store lock is held by a different process" "$work/c.log" &&
	ok "ipam-node beside the reference daemon says why" ||
	{ bad "ipam-node beside the reference daemon says why"; cat "$work/c.log"; }
eq "store and marker unchanged beside the reference daemon" "$before" "$(sha256sum "$STORE" "$MARKER")"
kill "$hold"
summary
