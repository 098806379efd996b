#!/usr/bin/env bash
# nv-ipam node agent (the DaemonSet's container command):
#  1. installs nv-ipam and nv-ipam-tool into the host's CNI bin directory atomically
#     (temporary file in the same directory, fsync, rename, directory fsync), skipping
#     binaries that are already identical;
#  2. keeps this node's pool file in sync with the IPPool/CIDRPool status: a full
#     "kubectl get ippools,cidrpools -o json" piped into "nv-ipam-tool node-pools",
#     again on every change the API reports (a watch) and at least every
#     RESYNC_SECONDS. node-pools rewrites the file only when its bytes change.
#
# Environment (defaults in brackets):
#   NODE_NAME        this node (required; the DaemonSet sets it from spec.nodeName)
#   SRC_DIR          where the image keeps the binaries [/opt/nv-ipam/bin]
#   CNI_BIN_DIR      the host's CNI bin directory, mounted [/host/opt/cni/bin]
#   POOL_FILE        the node pool file on the host
#                    [/host/etc/cni/net.d/nv-ipam.d/node-pools.json]
#   POOLS_NAMESPACE  namespace of the pools [nvidia-network-operator]
#   RESYNC_SECONDS   full resync period [300]
#   RETRY_SECONDS    wait after a failed sync or a watch that ended early [5]
#   ONCE             1: install and sync once, then exit (status of the sync) [0]
#   SYNC_LOOPS       stop after this many watch rounds, 0 = never (tests) [0]
#   KUBECTL          kubectl binary [kubectl]
set -euo pipefail

: "${NODE_NAME:?NODE_NAME must be set}"
SRC_DIR=${SRC_DIR:-/opt/nv-ipam/bin}
CNI_BIN_DIR=${CNI_BIN_DIR:-/host/opt/cni/bin}
POOL_FILE=${POOL_FILE:-/host/etc/cni/net.d/nv-ipam.d/node-pools.json}
POOLS_NAMESPACE=${POOLS_NAMESPACE:-nvidia-network-operator}
RESYNC_SECONDS=${RESYNC_SECONDS:-300}
RETRY_SECONDS=${RETRY_SECONDS:-5}
ONCE=${ONCE:-0}
SYNC_LOOPS=${SYNC_LOOPS:-0}
KUBECTL=${KUBECTL:-kubectl}
BINARIES=(nv-ipam nv-ipam-tool)

log() { printf '%s nv-ipam-node: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >&2; }

tmp_file=
cleanup() { [ -z "$tmp_file" ] || rm -f "$tmp_file"; }
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

# One full sync: list the pools and let node-pools decide whether the file changes.
sync_pools() {
	local json
	if ! json=$("$KUBECTL" get ippools,cidrpools -n "$POOLS_NAMESPACE" -o json); then
		log "listing IPPools/CIDRPools failed"
		return 1
	fi
	printf '%s\n' "$json" |
		"$CNI_BIN_DIR/nv-ipam-tool" node-pools --node "$NODE_NAME" --output "$POOL_FILE" |
		while IFS= read -r line; do log "$line"; done
}

# Returns at the first change the API reports, or when the resync period ends.
wait_for_change() {
	local fd pid start=$SECONDS
	exec {fd}< <(exec timeout "$RESYNC_SECONDS" "$KUBECTL" get ippools,cidrpools \
		-n "$POOLS_NAMESPACE" --watch-only -o name 2>/dev/null)
	pid=$!
	if ! read -r -u "$fd" _; then
		# The watch ended without an event: the resync period, or kubectl failing fast.
		[ $((SECONDS - start)) -ge "$RESYNC_SECONDS" ] || sleep "$RETRY_SECONDS"
	fi
	exec {fd}<&-
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

mkdir -p "$CNI_BIN_DIR"
for b in "${BINARIES[@]}"; do
	install_binary "$b"
done

if [ "$ONCE" = 1 ]; then
	sync_pools
	exit
fi

rounds=0
while :; do
	sync_pools || sleep "$RETRY_SECONDS"
	rounds=$((rounds + 1))
	if [ "$SYNC_LOOPS" -gt 0 ] && [ "$rounds" -ge "$SYNC_LOOPS" ]; then
		exit 0
	fi
	wait_for_change
done
