#!/bin/bash
# ipam-node's stop (docs/ipam-node.md, "Stopping"): SIGTERM with a thread that cannot
# end (stuck in open() of a certificate-authority file that is a FIFO) still hands the
# store over, its threads given most of the Network Operator's 10 s grace period (at
# least 6 s; the time to the exit is printed, a loaded machine stretches it); a
# --store-file (or its owner lock) that is not a regular file ends the start with status
# 1, naming it, rather than hanging in open() with the stop signals blocked; SIGTERM while
# the start's check of the API is stuck in open() of such a CA file ends it with status 0
# and nothing changed. The waits are hang guards (30 s, the kubelet's default grace before
# SIGKILL).
. "$(dirname "$0")/lib.sh"
. "$DAEMON_DIR/nodelib.sh"

api_start

# A stuck thread: curl opens the CA file of the kubeconfig when it connects, and a FIFO
# nobody writes blocks that open() forever; every wait of ours is out of the picture.
# The start's own check of the API must get through: the CA is a link to the real one
# until the start waits for the owner lock (held here), then to the FIFO, before the
# threads connect.
mkfifo "$work/ca.fifo"
ca=$(sed -n 's|.*"certificate-authority": "\([^"]*\)".*|\1|p' "$KUBECONFIG_FILE")
ln -s "$ca" "$work/ca.link"
sed "s|\"certificate-authority\": \"[^\"]*\"|\"certificate-authority\": \"$work/ca.link\"|" \
	"$KUBECONFIG_FILE" >"$work/stuck.kubeconfig"
# The reflectors never list: the node pool file is written here, as a sync would.
cat >"$work/conf/node-pools.json" <<'JSON'
{"pools": {"pool1": {"subnet": "10.79.0.0/24", "startIP": "10.79.0.2", "endIP": "10.79.0.254", "gateway": "10.79.0.1"}}}
JSON
hold_lock holder "$STORE.owner"
NODE_KUBECONFIG=$work/stuck.kubeconfig node_start s
wait_for 30 grep -q "waiting for a lock" "$work/s.log" || { bad "ipam-node did not wait for the owner lock"; cat "$work/s.log"; }
ln -sfn "$work/ca.fifo" "$work/ca.link"
kill "$holder"
wait_for 30 grep -q "config for shim CNI written" "$work/s.log" || { bad "ipam-node did not adopt"; cat "$work/s.log"; }
node_add s1 >"$work/add.out" 2>&1 && grep -q '"10\.79\.0\.' "$work/add.out" && ok "nv-ipam ADD" ||
	{ bad "nv-ipam ADD"; cat "$work/add.out"; }
# A thread in open() of a FIFO waits in wait_for_partner: a reflector, once connected.
fifo_waiters() {
	local f n=0
	for f in /proc/"$s_PID"/task/*/wchan; do
		[ "$(cat "$f" 2>/dev/null)" != wait_for_partner ] || n=$((n + 1))
	done
	echo "$n"
}
stuck() { [ "$(fifo_waiters)" -ge 1 ]; }
wait_for 30 stuck && ok "threads stuck in open() of the CA" ||
	bad "threads stuck in open() of the CA: $(fifo_waiters)"
t0=$(date +%s%N)
kill -TERM "$s_PID"
wait_for 30 node_gone "$s_PID" || bad "ipam-node with a stuck thread did not end"
ms=$((($(date +%s%N) - t0) / 1000000))
echo "note: $ms ms from SIGTERM to the exit with a stuck thread (grace period 10 s)"
eq "status after SIGTERM with a stuck thread" 0 "$NODE_RC"
ge "ms the threads were given" 6000 "$ms"
grep -q "a thread did not end in time" "$work/s.log" && ok "the stuck thread is logged" ||
	{ bad "the stuck thread is logged"; cat "$work/s.log"; }
grep -q "store handed over in the reference daemon's format" "$work/s.log" &&
	ok "handed over with a stuck thread" || { bad "handed over with a stuck thread"; cat "$work/s.log"; }
[ -e "$STORE.handed-over" ] && ok "marker after the stop" || bad "marker after the stop"
ref_entries >"$work/ref.out" 2>&1 && grep -q "^pool1 10\.79\.0\.[0-9]* s1 net1$" "$work/ref.out" &&
	ok "the reference store holds the allocation" || { bad "the reference store holds the allocation"; cat "$work/ref.out"; }

# Not a regular file: status 1 at once, naming it.
not_regular() {
	local what=$1 path=$2 name=$3 t0 ms
	t0=$(date +%s%N)
	node_start "$name" --store-file="$path"
	local pid=${name}_PID
	wait_for 30 node_gone "${!pid}" || { bad "$what: ipam-node still runs"; return; }
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "note: $what: ended $ms ms after its start"
	eq "$what: status" 1 "$NODE_RC"
	grep -qF "$path" "$work/$name.log" && ok "$what: named" || { bad "$what: named"; cat "$work/$name.log"; }
}
mkfifo "$work/state/fifo"
not_regular "a FIFO store file" "$work/state/fifo" f1
mkdir "$work/state/dir"
not_regular "a directory store file" "$work/state/dir" f2
ln -s /dev/zero "$work/state/zero"
not_regular "a symbolic link to /dev/zero" "$work/state/zero" f3
mkfifo "$work/state/s2.owner"
not_regular "a FIFO owner lock" "$work/state/s2" f4

# SIGTERM while the start's check of the API blocks in open() of the kubeconfig's CA file
# (a FIFO from the first): it changed nothing, and the process ends with status 0, nothing
# on the node changed (issue 45: the signal was held, and it ran until killed).
mkdir -p "$work/fresh/state" "$work/fresh/conf"
chmod 0700 "$work/fresh/state"
sed "s|\"certificate-authority\": \"[^\"]*\"|\"certificate-authority\": \"$work/ca.fifo\"|" \
	"$KUBECONFIG_FILE" >"$work/fifo.kubeconfig"
tree() { find "$work/fresh" -printf '%p %y %m %s\n' | sort; }
before=$(tree)
NODE_KUBECONFIG=$work/fifo.kubeconfig node_start b --store-file="$work/fresh/state/store" \
	--cni-conf-dir="$work/fresh/conf"
blocked() {
	local f
	for f in /proc/"$b_PID"/task/*/wchan; do
		[ "$(cat "$f" 2>/dev/null)" != wait_for_partner ] || return 0
	done
	return 1
}
wait_for 30 blocked && ok "the start's check blocks in open() of the CA" ||
	{ bad "the start's check blocks in open() of the CA"; cat "$work/b.log"; }
kill -TERM "$b_PID"
if wait_for 30 node_gone "$b_PID"; then
	eq "SIGTERM during the blocked check: status" 0 "$NODE_RC"
else
	bad "SIGTERM during the blocked check: ipam-node still runs"
fi
grep -q "stopped before the start's checks ended: nothing changed on the node" "$work/b.log" &&
	ok "... logged" || { bad "... logged"; cat "$work/b.log"; }
eq "... nothing on the node changed" "$before" "$(tree)"
summary
