# Sourced after lib.sh by owner.sh and stop.sh: ipam-node with every path in $work,
# nv-ipam run against what it writes, and the store's files.
#
#   node_start NAME [FLAG...]   start ipam-node in the background, its log in $work/NAME.log,
#                               its pid in $NAME_PID (NAME a shell word)
#   node_alive PID              whether it still runs
#   node_gone PID               whether it has ended (then $NODE_RC is its status)
#   node_add CID                nv-ipam ADD for container CID: the result on stdout
#   ref_entries                 the store as the reference daemon reads it (refstore.py),
#                               exit 1 when it would refuse it
#   hold_lock VAR FILE [SECONDS] another process holds an exclusive flock on FILE (created)
#                               for SECONDS (default 30); its pid in $VAR
#
# NVIPAM_BIN (meson sets it): nv-ipam; default beside the build's ipam-node.
NVIPAM_BIN=${NVIPAM_BIN:-$(dirname "$IPAM_NODE")/nv-ipam}
REFSTORE=$DAEMON_DIR/../ipam/refstore.py
STORE=$work/state/store
mkdir -p "$work/state" "$work/conf" "$work/bin"
chmod 0700 "$work/state"
. "$DAEMON_DIR/../node-settings.sh"
node_settings "$work/node-settings.json" "$work"

declare -A NODE_PIDS=()
node_start() {
	local name=$1 mport hport
	shift
	free_port mport
	free_port hport
	"$IPAM_NODE" --node-name=node-a --store-file="$STORE" --cni-bin-dir="$work/bin" \
		--cni-conf-dir="$work/conf" --cni-skip-nv-ipam-binary-copy \
		--cni-log-file="$work/nv-ipam-cni.log" \
		--metrics-bind-address="127.0.0.1:$mport" --health-probe-bind-address="127.0.0.1:$hport" \
		--kubeconfig="${NODE_KUBECONFIG:-$KUBECONFIG_FILE}" --stale-ip-check-interval=0 "$@" \
		>"$work/$name.log" 2>&1 &
	printf -v "${name}_PID" %s $!
	NODE_PIDS[$!]=1
	defer "kill -9 $! 2>/dev/null"
}
node_alive() { kill -0 "$1" 2>/dev/null; }
# Reaps it: $NODE_RC is its exit status.
node_gone() {
	node_alive "$1" && return 1
	NODE_RC=0
	wait "$1" 2>/dev/null || NODE_RC=$?
	return 0
}

node_add() {
	CNI_COMMAND=ADD CNI_CONTAINERID=$1 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 \
		CNI_IFNAME=net1 CNI_PATH=/nonexistent \
		"$NVIPAM_BIN" <<<'{"cniVersion":"1.0.0","name":"net1","ipam":{"type":"nv-ipam","poolName":"pool1","confDir":"'"$work/conf"'"}}'
}

ref_entries() { python3 "$REFSTORE" "$STORE"; }

hold_lock() {
	local -n _pid=$1
	python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(float(sys.argv[2]))' "$2" "${3:-30}" >"$work/hold.out" &
	_pid=$!
	defer "kill $_pid"
	wait_for 20 grep -qs locked "$work/hold.out" # a hang guard
	rm -f "$work/hold.out"
}
