#!/usr/bin/env bash
# nv-ipam node agent (the DaemonSet's container command):
#  1. installs nv-ipam and nv-ipam-tool into the host's CNI bin directory atomically
#     (temporary file in the same directory, fsync, rename, directory fsync), skipping
#     binaries that are already identical;
#  2. keeps this node's pool file in sync with the IPPool/CIDRPool status: each kind
#     listed ("kubectl get ippools -o json", then cidrpools) and the two lists piped into
#     "nv-ipam-tool node-pools", again on every change the API reports and at least
#     every RESYNC_SECONDS. node-pools rewrites the file only when its bytes change;
#  3. cleans stale allocations every CLEAN_SECONDS (the reference daemon's cleaner: Multus
#     never forwards CNI GC to a secondary network, so a lost DEL would hold its address
#     forever): this node's pods listed ("kubectl get pods -A --field-selector
#     spec.nodeName=NODE_NAME -o json") and the listing given to "nv-ipam-tool gc" with
#     the time taken just before kubectl started (an allocation made after it is never
#     counted: its pod may be missing from the listing). An allocation whose pod is gone
#     is released on its CLEAN_MISSES-th consecutive miss. A listing or a gc that fails
#     releases nothing and is tried again after RETRY_SECONDS. The cleaner runs in the
#     background, independent of the pool sync; it is stopped with the watchers, and
#     started again if it dies.
#
# Watching: kubectl watches one resource type at a time, so each kind has its own
# background watcher ("kubectl get KIND --watch -o name", restarted when it ends); both
# write their lines into one FIFO the main loop reads. The watchers start before the
# first listing, and "--watch" (not "--watch-only") first prints the objects it listed
# and then watches from that list's resourceVersion: a change made after the watch's list
# is an event, one made before it is followed by the watch's own listing lines, and every
# line makes the loop list again, so no change is lost between a listing and the watch
# (a restarted watch also wakes the loop itself, for the changes made while none ran).
# One narrow case remains: a kind with no objects left when
# its watch lists prints no line, so deleting its last pool in the instant between a
# listing and that watch's own is seen at the next resync. A kind whose CRD is not installed (an IPPool-only
# install) lists as empty, logged once, and its watcher tries again every
# RESYNC_SECONDS. Watchers are stopped on exit and SIGTERM, and started again when one
# has died.
#
# Environment (defaults in brackets):
#   NODE_NAME        this node (required; the DaemonSet sets it from spec.nodeName)
#   SRC_DIR          where the image keeps the binaries [/opt/nv-ipam/bin]
#   CNI_BIN_DIR      the host's CNI bin directory, mounted [/host/opt/cni/bin]
#   POOL_FILE        the node pool file on the host
#                    [/host/etc/cni/net.d/nv-ipam.d/node-pools.json]
#   POOLS_NAMESPACE  namespace of the pools [nvidia-network-operator]
#   RESYNC_SECONDS   full resync period [300]
#   RETRY_SECONDS    wait after a failed sync or clean, and before restarting a watch that
#                    ended [5]
#   STORE_FILE       the nv-ipam store on the host [/host/var/lib/cni/nv-ipam/store]
#   CLEAN_SECONDS    period of the stale-allocation cleaner, 0 = no cleaner [60]
#   CLEAN_MISSES     consecutive misses that release an allocation [4]
#   ONCE             1: install and sync once, then exit (status of the sync; no clean) [0]
#   SYNC_LOOPS       stop after this many syncs, 0 = never (tests) [0]
#   KUBECTL          kubectl binary [kubectl]
set -euo pipefail

: "${NODE_NAME:?NODE_NAME must be set}"
SRC_DIR=${SRC_DIR:-/opt/nv-ipam/bin}
CNI_BIN_DIR=${CNI_BIN_DIR:-/host/opt/cni/bin}
POOL_FILE=${POOL_FILE:-/host/etc/cni/net.d/nv-ipam.d/node-pools.json}
POOLS_NAMESPACE=${POOLS_NAMESPACE:-nvidia-network-operator}
RESYNC_SECONDS=${RESYNC_SECONDS:-300}
RETRY_SECONDS=${RETRY_SECONDS:-5}
STORE_FILE=${STORE_FILE:-/host/var/lib/cni/nv-ipam/store}
CLEAN_SECONDS=${CLEAN_SECONDS:-60}
CLEAN_MISSES=${CLEAN_MISSES:-4}
ONCE=${ONCE:-0}
SYNC_LOOPS=${SYNC_LOOPS:-0}
KUBECTL=${KUBECTL:-kubectl}
BINARIES=(nv-ipam nv-ipam-tool)
KINDS=(ippools cidrpools)
ABSENT="the server doesn't have a resource type"

log() { printf '%s nv-ipam-node: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >&2; }

# A period sleep takes (seconds, a fraction allowed); one it refused would turn a loop
# into a busy one, listing the node's pods and locking the store without pause.
zero_seconds() { [[ $1 =~ ^0+(\.0*)?$ ]]; }
for var in RESYNC_SECONDS RETRY_SECONDS CLEAN_SECONDS; do
	if ! [[ ${!var} =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
		{ [ "$var" != CLEAN_SECONDS ] && zero_seconds "${!var}"; }; then
		log "$var must be a number of seconds above 0 (CLEAN_SECONDS may be 0), not \"${!var}\""
		exit 1
	fi
done

tmp_file=
state_dir=
events=
cleaner=
declare -A watcher=() absent=()

stop_watchers() {
	local pid
	for pid in "${watcher[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${watcher[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	watcher=()
}

cleanup() {
	stop_watchers
	if [ -n "$cleaner" ]; then
		kill "$cleaner" 2>/dev/null || true
		wait "$cleaner" 2>/dev/null || true
	fi
	[ -z "$tmp_file" ] || rm -f "$tmp_file"
	[ -z "$state_dir" ] || rm -rf "$state_dir"
}
trap cleanup EXIT
trap 'exit 0' TERM INT

# install_binary NAME: $SRC_DIR/NAME -> $CNI_BIN_DIR/NAME, replaced by rename so a
# runtime exec'ing it at that moment gets the old or the new file, never half of one.
install_binary() {
	local src=$SRC_DIR/$1 dst=$CNI_BIN_DIR/$1
	[ -f "$src" ] || { log "missing $src"; return 1; }
	if [ -f "$dst" ] && [ ! -L "$dst" ] && cmp -s "$src" "$dst" &&
		[ "$(stat -c %a "$dst")" = 755 ]; then
		return 0
	fi
	tmp_file=$(mktemp "$CNI_BIN_DIR/.$1.XXXXXX")
	cp "$src" "$tmp_file"
	chmod 0755 "$tmp_file"
	sync "$tmp_file"
	mv -f "$tmp_file" "$dst"
	tmp_file=
	sync "$CNI_BIN_DIR"
	log "installed $dst"
}

# log_file PREFIX FILE: one log line per line of FILE.
log_file() {
	local line
	while IFS= read -r line; do
		[ -z "$line" ] || log "$1$line"
	done <"$2"
}

# list_kind KIND: the kind's List on stdout. A kind the API does not serve (its CRD is
# not installed) is an empty List, logged when that starts.
list_kind() {
	local kind=$1 err=$state_dir/list.err
	if "$KUBECTL" get "$kind" -n "$POOLS_NAMESPACE" -o json 2>"$err"; then
		log_file "listing $kind: " "$err"
		absent[$kind]=0
		return 0
	fi
	if grep -qF "$ABSENT" "$err"; then
		[ "${absent[$kind]:-0}" = 1 ] ||
			log "the API has no resource type $kind (CRD not installed?): taken as none"
		absent[$kind]=1
		printf '{"apiVersion":"v1","kind":"List","items":[]}\n'
		return 0
	fi
	log_file "listing $kind: " "$err"
	return 1
}

# One full sync: list the pools and let node-pools decide whether the file changes.
sync_pools() {
	local kind list=$state_dir/pools.json
	: >"$list"
	for kind in "${KINDS[@]}"; do
		if ! list_kind "$kind" >>"$list"; then
			log "listing $kind failed"
			return 1
		fi
	done
	# The agent's own copy: the plugin image installs a tool of its own version there too.
	"$SRC_DIR/nv-ipam-tool" node-pools --node "$NODE_NAME" --input "$list" \
		--output "$POOL_FILE" |
		while IFS= read -r line; do log "$line"; done
}

# watch_kind KIND (in the background): "kubectl get KIND --watch -o name" into the event
# FIFO, run again whenever it ends; its stderr is logged. SIGTERM stops the watch too.
watch_kind() {
	local kind=$1 child="" rc err=$state_dir/watch-$1.err restarted=""
	trap '[ -z "$child" ] || kill "$child" 2>/dev/null; exit 0' TERM
	while :; do
		"$KUBECTL" get "$kind" -n "$POOLS_NAMESPACE" --watch -o name 1>&"$events" 2>"$err" &
		child=$!
		echo "$child" >"$state_dir/watch-$kind.pid"
		# Changes while no watch ran: the loop lists again (the new watch is running).
		[ -z "$restarted" ] || echo "restarted $kind" >&"$events"
		restarted=""
		rc=0
		wait "$child" || rc=$?
		if grep -qF "$ABSENT" "$err"; then
			# Not served (CRD not installed, the listing says so): look again later.
			sleep "$RESYNC_SECONDS" &
		else
			log_file "watch of $kind: " "$err"
			log "watch of $kind ended (status $rc), restarting in ${RETRY_SECONDS}s"
			restarted=1
			sleep "$RETRY_SECONDS" &
		fi
		child=$!
		wait "$child" || true
	done
}

# Starts the watchers not running (all at first, then any that died).
start_watchers() {
	local kind pid
	for kind in "${KINDS[@]}"; do
		pid=${watcher[$kind]:-}
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
			continue
		fi
		if [ -n "$pid" ]; then
			log "the watcher of $kind has died, starting it again"
			# Its kubectl, if it outlived it, would feed the FIFO twice.
			kill "$(cat "$state_dir/watch-$kind.pid" 2>/dev/null)" 2>/dev/null || true
		fi
		watch_kind "$kind" &
		watcher[$kind]=$!
	done
}

# clean_once (in the cleaner): one pass of the stale-allocation cleaner. Each line gc
# prints is logged, its summary only when it differs from the last one. Fails (to be
# retried sooner) when the listing or gc fails; a failed listing runs no gc at all.
clean_once() {
	local list=$state_dir/pods.json err=$state_dir/pods.err out=$state_dir/gc.out
	local started rc=0 line
	started=$(date +%s)
	"$KUBECTL" get pods -A --field-selector "spec.nodeName=$NODE_NAME" -o json \
		--request-timeout=60s >"$list" 2>"$err" &
	child=$!
	wait "$child" || rc=$?
	log_file "listing pods: " "$err"
	if [ "$rc" != 0 ]; then
		log "listing this node's pods failed (status $rc): nothing released, retrying in ${RETRY_SECONDS}s"
		return 1
	fi
	"$SRC_DIR/nv-ipam-tool" gc --pods "$list" --listed-at "$started" --store "$STORE_FILE" \
		--pool-file "$POOL_FILE" --misses "$CLEAN_MISSES" >"$out" 2>&1 &
	child=$!
	wait "$child" || rc=$?
	while IFS= read -r line; do
		if [ "$rc" = 0 ] && [[ $line =~ ^[0-9]+\ allocations:\  ]]; then
			[ "$line" != "$last_summary" ] || continue
			last_summary=$line
		fi
		log "gc: $line"
	done <"$out"
	if [ "$rc" != 0 ]; then
		log "gc failed (status $rc), retrying in ${RETRY_SECONDS}s"
		return 1
	fi
}

# clean_loop (in the background): clean_once every CLEAN_SECONDS. SIGTERM stops it, and
# the listing or gc under way (gc is safe to stop at any point).
clean_loop() {
	local child="" last_summary="" wait
	trap '[ -z "$child" ] || kill "$child" 2>/dev/null; exit 0' TERM
	while :; do
		wait=$CLEAN_SECONDS
		clean_once || wait=$RETRY_SECONDS
		sleep "$wait" &
		child=$!
		wait "$child" || true
	done
}

# Starts the cleaner when it is not running (it is off with CLEAN_SECONDS=0).
start_cleaner() {
	! zero_seconds "$CLEAN_SECONDS" || return 0
	if [ -n "$cleaner" ]; then
		kill -0 "$cleaner" 2>/dev/null && return 0
		log "the cleaner has died, starting it again"
	fi
	clean_loop &
	cleaner=$!
}

# wait_for_change SECONDS: returns at the first line a watch prints (after the lines
# arriving with it, so a burst is one sync) or after SECONDS. A watcher or the cleaner that
# died is started again at least every WATCHER_CHECK seconds meanwhile.
WATCHER_CHECK=5
wait_for_change() {
	local left=$1 woke="" n=0
	if [[ $left =~ ^[0-9]+$ ]]; then
		while [ -z "$woke" ] && [ "$left" -gt "$WATCHER_CHECK" ]; do
			start_watchers
			start_cleaner
			read -r -t "$WATCHER_CHECK" -u "$events" _ && woke=1
			left=$((left - WATCHER_CHECK))
		done
	fi
	if [ -z "$woke" ]; then
		start_watchers
		start_cleaner
		read -r -t "$left" -u "$events" _ || return 0
	fi
	while [ "$n" -lt 1000 ] && read -r -t 0.1 -u "$events" _; do
		n=$((n + 1))
	done
}

mkdir -p "$CNI_BIN_DIR"
for b in "${BINARIES[@]}"; do
	install_binary "$b"
done

state_dir=$(mktemp -d "${TMPDIR:-/tmp}/nv-ipam-node.XXXXXX")
if [ "$ONCE" = 1 ]; then
	rc=0
	sync_pools || rc=$?
	exit "$rc"
fi

mkfifo "$state_dir/events"
exec {events}<>"$state_dir/events"
start_watchers
start_cleaner
syncs=0
while :; do
	wait=$RESYNC_SECONDS
	sync_pools || wait=$RETRY_SECONDS
	syncs=$((syncs + 1))
	if [ "$SYNC_LOOPS" -gt 0 ] && [ "$syncs" -ge "$SYNC_LOOPS" ]; then
		exit 0
	fi
	wait_for_change "$wait"
done
