#!/bin/bash
# ipam-node's start (docs/ipam-node.md, "Start"): every check comes before the node is
# touched. A start that fails (no API server, a bad or busy bind address, a bin file
# without nv-ipam-tool beside it, a conf dir that cannot be made, credentials refused, no
# kubeconfig) exits 1 naming the cause and leaves the store, conf and bin directories
# byte for byte as they were; an address in use that is freed within 3 s is waited for. A 403 on the pools is an answer: the start goes on. The
# "serving" line names the ports bound. At stop, a node lock held past the 10 s budget:
# status 1, a line naming nv-ipam-tool handover, no marker; released within it: handed over.
. "$(dirname "$0")/lib.sh"
. "$DAEMON_DIR/nodelib.sh"

api_start
POOLS="/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/kube-system/ippools"
mkdir -p "$work/src" "$work/lone"
cp "$NVIPAM_BIN" "$work/src/nv-ipam"
cp "$NVIPAM_BIN" "$work/src/nv-ipam-tool"
cp "$NVIPAM_BIN" "$work/lone/nv-ipam"
# What was on the node before: an old conf and binary, another file beside the store.
echo '{"old": true}' >"$work/conf/nv-ipam.conf"
echo old >"$work/bin/nv-ipam"
echo other >"$work/state/other"

snap() {
	(cd "$work" && find state conf bin -printf '%p %y %m %s %T@\n' | sort &&
		find state conf bin -type f -exec sha256sum {} + | sort)
}
run() {
	local name=$1 mport hport
	shift
	free_port mport
	free_port hport
	NODE_RC=0
	timeout 20 "$IPAM_NODE" --node-name=node-a --store-file="$STORE" --cni-bin-dir="$work/bin" \
		--cni-conf-dir="$work/conf" --cni-nv-ipam-bin-file="$work/src/nv-ipam" \
		--cni-log-file="$work/nv-ipam-cni.log" \
		--metrics-bind-address="127.0.0.1:$mport" --health-probe-bind-address="127.0.0.1:$hport" \
		--kubeconfig="$KUBECONFIG_FILE" --stale-ip-check-interval=0 "$@" >"$work/$name.log" 2>&1 ||
		NODE_RC=$?
}
fails() {
	local what=$1 cause=$2 before after
	shift 2
	before=$(snap)
	run f "$@"
	after=$(snap)
	eq "$what: status" 1 "$NODE_RC"
	eq "$what: the node unchanged" "$before" "$after"
	grep -qF -- "$cause" "$work/f.log" && ok "$what: named" || { bad "$what: named"; cat "$work/f.log"; }
}

free_port closed
sed "s|https://127.0.0.1:$API_PORT|https://127.0.0.1:$closed|" "$KUBECONFIG_FILE" >"$work/closed.kubeconfig"
fails "no API server" "failed to reach the API server" --kubeconfig="$work/closed.kubeconfig"
fails "no kubeconfig" "failed to read config for k8s client" --kubeconfig="$work/none"
fails "an invalid metrics address" "unable to start the probe and metrics servers" \
	--metrics-bind-address=nowhere
python3 -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(60)' >"$work/busy" &
busy_pid=$!
defer "kill $busy_pid"
wait_for 20 test -s "$work/busy" # hang guards, this one and the waits below
busy=$(cat "$work/busy")
fails "a probe address in use" "unable to start the probe and metrics servers" \
	--health-probe-bind-address="127.0.0.1:$busy"
# Freed within 3 s (a predecessor that exits): the start goes on.
node_start p --health-probe-bind-address="127.0.0.1:$busy"
wait_for 20 grep -q "waiting for a bind address" "$work/p.log" || bad "waits for an address in use"
kill "$busy_pid"
wait_for 30 grep -q "config for shim CNI" "$work/p.log" && ok "an address freed within 3 s: started" ||
	{ bad "an address freed within 3 s: started"; cat "$work/p.log"; }
kill -TERM "$p_PID"
wait_for 30 node_gone "$p_PID" && eq "an address freed within 3 s: status at stop" 0 "$NODE_RC" ||
	bad "an address freed within 3 s: ended"
fails "no nv-ipam-tool beside the bin file" "nv-ipam-tool" --cni-nv-ipam-bin-file="$work/lone/nv-ipam"
fails "a directory as the bin file" \
	"cni-nv-ipam-bin-file $work/src is a directory: it names the nv-ipam binary itself, with nv-ipam-tool beside it ($work/src/nv-ipam)" \
	--cni-nv-ipam-bin-file="$work/src"
fails "a conf dir that cannot be made" "cni-conf-dir" --cni-conf-dir="$work/conf/nv-ipam.conf/d"
api_rules '[{"path": "'"$POOLS"'", "action": "status", "code": 401}]'
fails "credentials refused" "refused the credentials"
api_rules '[{"path": "'"$POOLS"'", "action": "status", "code": 503}]'
fails "an API server answering 503" "HTTP 503"

# A 403 on the pools is an answer: the node is changed, the reflectors retry. Port 0: the
# kernel's choice, logged.
api_rules '[{"path": "'"$POOLS"'", "action": "status", "code": 403}]'
node_start a --health-probe-bind-address=127.0.0.1:0 --metrics-bind-address=127.0.0.1:0
wait_for 30 grep -q "config for shim CNI" "$work/a.log" && ok "started with pools forbidden" ||
	{ bad "started with pools forbidden"; cat "$work/a.log"; }
grep -q "the pools cannot be listed yet" "$work/a.log" && ok "the 403 is logged" || bad "the 403 is logged"
hport=$(sed -n 's/.*"serving" probes="127\.0\.0\.1:\([0-9]*\)".*/\1/p' "$work/a.log")
mport=$(sed -n 's/.*"serving" .*metrics="127\.0\.0\.1:\([0-9]*\)".*/\1/p' "$work/a.log")
[ -n "$hport" ] && [ "$hport" != 0 ] && [ -n "$mport" ] && [ "$mport" != 0 ] &&
	ok "the serving line names the bound ports ($hport, $mport)" || { bad "the serving line"; grep serving "$work/a.log"; }
eq "/healthz on the port logged" ok "$(curl -s --max-time 5 "http://127.0.0.1:$hport/healthz")"
curl -s --max-time 5 "http://127.0.0.1:$mport/metrics" | grep -q '^# ' && ok "/metrics on the port logged" ||
	bad "/metrics on the port logged"
api_rules '[]'

# The stop with the node lock held past the budget (an ADD that does not end).
hold_lock holder "$STORE.lock" 30
t0=$(date +%s%N)
kill -TERM "$a_PID"
wait_for 30 node_gone "$a_PID" || bad "ipam-node did not end"
ms=$((($(date +%s%N) - t0) / 1000000))
echo "note: node lock held: $ms ms from SIGTERM to the exit (grace period 10 s)"
eq "node lock held: status" 1 "$NODE_RC"
ge "node lock held: ms the lock was waited for" 8500 "$ms"
grep -qF "nv-ipam-tool handover --store $STORE" "$work/a.log" && ok "node lock held: what to run is logged" ||
	{ bad "node lock held: what to run is logged"; cat "$work/a.log"; }
[ ! -e "$STORE.handed-over" ] && ok "node lock held: no marker" || bad "node lock held: no marker"
kill "$holder"

# Released within the budget: handed over.
node_start b
wait_for 30 grep -q "config for shim CNI" "$work/b.log" || { bad "second start"; cat "$work/b.log"; }
hold_lock holder "$STORE.lock" 3
kill -TERM "$b_PID"
wait_for 30 node_gone "$b_PID" || bad "ipam-node did not end"
eq "node lock released in time: status" 0 "$NODE_RC"
grep -q "store handed over in the reference daemon's format" "$work/b.log" &&
	ok "node lock released in time: handed over" || { bad "node lock released in time: handed over"; cat "$work/b.log"; }
[ -e "$STORE.handed-over" ] && ok "node lock released in time: marker" || bad "node lock released in time: marker"
# ipam-controller on port 0 too: its serving line names the ports bound, and they answer.
"$IPAM_CONTROLLER" --kubeconfig "$KUBECONFIG_FILE" --ippools-namespace kube-system \
	--metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0 2>"$work/ctl.log" &
ctl=$!
defer "kill $ctl; wait $ctl"
wait_for 10 grep -q '"serving"' "$work/ctl.log" || { bad "ipam-controller serving"; cat "$work/ctl.log"; }
hport=$(sed -n 's/.*"serving" probes="127\.0\.0\.1:\([0-9]*\)".*/\1/p' "$work/ctl.log")
mport=$(sed -n 's/.*"serving" .*metrics="127\.0\.0\.1:\([0-9]*\)".*/\1/p' "$work/ctl.log")
[ -n "$hport" ] && [ "$hport" != 0 ] && [ -n "$mport" ] && [ "$mport" != 0 ] &&
	ok "ipam-controller's serving line names the bound ports ($hport, $mport)" ||
	{ bad "ipam-controller's serving line"; grep serving "$work/ctl.log"; }
eq "ipam-controller: /healthz on the port logged" ok "$(curl -s --max-time 5 "http://127.0.0.1:$hport/healthz")"
summary
