#!/usr/bin/env bash
# The full crash-state exploration, FULL=1 bounds (wider tears, every subset of up to 8
# pending operations, pairs, larger scenarios), every program: nv-ipam's store, the
# handover, the syncs each state needs, ipam-node (when built), the plugins' records (as
# root). Prints each program's counts and a summary; exit 1 when anything failed.
#   full.sh BUILD-DIR       (ninja -C BUILD-DIR crash-full)
set -uo pipefail
build=$(cd "${1:?usage: $0 BUILD-DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export FULL=1
fails=()
start=$SECONDS
run() {
	local name=$1 t0=$SECONDS rc
	shift
	echo "=== $name"
	"$@"
	rc=$?
	echo "=== $name: exit $rc, $((SECONDS - t0)) s"
	[ "$rc" = 0 ] || [ "$rc" = 77 ] || fails+=("$name")
}
nv=$build/ipam/nv-ipam
run "nv-ipam store, handover, syncs" python3 "$here/nvipam.py" "$nv/nv-ipam" "$nv/tool/nv-ipam-tool"
if [ -x "$nv/ipam-node" ]; then
	run ipam-node python3 "$here/ipamnode.py" "$nv/ipam-node" "$nv/nv-ipam" "$nv/tool/nv-ipam-tool"
else
	echo "=== ipam-node: not built (-Dipam_node)"
fi
if [ "$(id -u)" = 0 ]; then
	run "plugin records" python3 "$here/plugins.py" "$build"
else
	echo "=== plugin records: not run (needs root)"
fi
echo "crash-full: $((SECONDS - start)) s${fails:+, failed: ${fails[*]}}"
[ ${#fails[@]} -eq 0 ]
