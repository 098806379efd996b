#!/usr/bin/env bash
# The DaemonSet's entrypoint (conf-examples/nv-ipam/deploy/entrypoint.sh) without a
# cluster: a fake kubectl on PATH prints fixture JSON (and a watch event on demand).
# Checks the atomic install (content, mode 0755, no temporary file, an identical binary
# left alone, a changed one replaced by rename), and that the node pool file is written
# only when its content changes, once and in the watch loop; a failing kubectl leaves
# the file as it was.
. "$(dirname "$0")/lib.sh"
TOOL=${2:?usage: $0 NV-IPAM NV-IPAM-TOOL ENTRYPOINT}
ENTRY=${3:?usage: $0 NV-IPAM NV-IPAM-TOOL ENTRYPOINT}
FIX=$(cd "$(dirname "$0")/fixtures" && pwd)

mkdir -p "$work/image" "$work/host/opt/cni/bin" "$work/fakebin"
cp "$NVIPAM" "$work/image/nv-ipam"
cp "$TOOL" "$work/image/nv-ipam-tool"
cp "$FIX/pools.json" "$work/pools.json"
# A stale nv-ipam already on the host, and another plugin that must stay untouched.
printf 'old' >"$work/host/opt/cni/bin/nv-ipam"
chmod 0600 "$work/host/opt/cni/bin/nv-ipam"
printf 'macvlan' >"$work/host/opt/cni/bin/macvlan"

# The fake kubectl: "get ... -o json" prints $work/pools.json (or fails when
# $work/kubectl-fails exists); "--watch-only" prints one event when $work/event exists,
# then blocks like a watch. Every call is logged.
cat >"$work/fakebin/kubectl" <<SH
#!/usr/bin/env bash
echo "\$*" >>"$work/kubectl.log"
case " \$* " in
*" --watch-only "*)
	if [ -e "$work/event" ]; then rm -f "$work/event"; echo ippool.nv-ipam.nvidia.com/pool1; fi
	echo \$\$ >>"$work/watch.pids"
	exec sleep 30 ;;
*" -o json "*)
	[ -e "$work/kubectl-fails" ] && { echo "error: the server is unreachable" >&2; exit 1; }
	cat "$work/pools.json" ;;
*) echo "fake kubectl: unexpected \$*" >&2; exit 2 ;;
esac
SH
chmod +x "$work/fakebin/kubectl"

pf=$work/host/etc/cni/net.d/nv-ipam.d/node-pools.json
run_entry() {
	env PATH="$work/fakebin:$PATH" NODE_NAME=host-b SRC_DIR="$work/image" \
		CNI_BIN_DIR="$work/host/opt/cni/bin" POOL_FILE="$pf" POOLS_NAMESPACE=kube-system \
		RETRY_SECONDS=0.2 "$@" bash "$ENTRY" 2>>"$work/entry.log"
}

check "entrypoint ONCE=1 succeeds" "run_entry ONCE=1"
bin=$work/host/opt/cni/bin
for b in nv-ipam nv-ipam-tool; do
	check "$b installed with the image's content" "cmp -s \"$work/image/$b\" \"$bin/$b\""
	check "$b is mode 0755" "[ \$(stat -c %a \"$bin/$b\") = 755 ]"
done
[ "$(id -u)" = 0 ] && check "installed files are owned by root" "[ \"\$(stat -c %u \"$bin/nv-ipam\")\" = 0 ]"
check "no temporary file left in the bin directory" "[ \"\$(ls -A \"$bin\" | sort | tr '\n' ' ')\" = 'macvlan nv-ipam nv-ipam-tool ' ]"
check "another plugin left alone" "[ \"\$(cat \"$bin/macvlan\")\" = macvlan ]"
check "kubectl asked for the pools of the namespace" "grep -qx 'get ippools,cidrpools -n kube-system -o json' \"$work/kubectl.log\""
check "the pool file is host-b's" "[ \"\$(cmp \"$pf\" <(\"$TOOL\" node-pools --node host-b --input \"$FIX/pools.json\" --stdout) && echo same)\" = same ]"
check "the pool file is mode 0644" "[ \$(stat -c %a \"$pf\") = 644 ]"
check "the sync is logged" "grep -q 'pool pool1: added (192.168.0.25-192.168.0.48)' \"$work/entry.log\""

# Again with nothing changed: binaries and pool file untouched (same inode and mtime).
state() { stat -c '%n %i %y' "$bin/nv-ipam" "$bin/nv-ipam-tool" "$pf"; }
before=$(state)
sleep 0.05
check "second run succeeds" "run_entry ONCE=1"
check "second run: nothing rewritten" "[ \"\$(state)\" = \"\$before\" ]"
check "second run: pool file reported unchanged" "grep -q 'node-pools.json unchanged' \"$work/entry.log\""

# A new image: nv-ipam replaced by rename (new inode), nv-ipam-tool untouched.
printf '\n# rebuilt\n' >>"$work/image/nv-ipam"
tool_before=$(stat -c '%i %y' "$bin/nv-ipam-tool"); ino=$(stat -c %i "$bin/nv-ipam")
check "upgrade run succeeds" "run_entry ONCE=1"
check "upgrade: nv-ipam replaced by a new file" "cmp -s \"$work/image/nv-ipam\" \"$bin/nv-ipam\" && [ \"\$(stat -c %i \"$bin/nv-ipam\")\" != \"$ino\" ]"
check "upgrade: nv-ipam-tool untouched" "[ \"\$(stat -c '%i %y' \"$bin/nv-ipam-tool\")\" = \"$tool_before\" ]"
check "upgrade: no temporary file left" "[ \"\$(ls -A \"$bin\" | wc -l)\" = 3 ]"

# kubectl failing: exit non-zero, pool file as it was.
touch "$work/kubectl-fails"
before=$(stat -c '%i %y' "$pf")
check "a failing kubectl fails the sync" "! run_entry ONCE=1"
check "and leaves the pool file alone" "[ \"\$(stat -c '%i %y' \"$pf\")\" = \"$before\" ]"
rm -f "$work/kubectl-fails"

# The watch loop: a change in the API (host-b's block moves) reaches the file.
jq '(.items[0].status.allocations[] | select(.nodeName == "host-b")) |= (.startIP = "192.168.0.97" | .endIP = "192.168.0.120")' \
	"$FIX/pools.json" >"$work/pools.json"
touch "$work/event"
start=$SECONDS
check "the loop runs two rounds and exits" "run_entry SYNC_LOOPS=2 RESYNC_SECONDS=20"
check "the watch event woke it before the resync period" "[ \$((SECONDS - start)) -lt 15 ]"
check "the moved block is in the pool file" "[ \"\$(jq -r '.pools.pool1.startIP + \"-\" + .pools.pool1.endIP' \"$pf\")\" = 192.168.0.97-192.168.0.120 ]"
check "the change was logged" "grep -q 'pool pool1: changed (192.168.0.25-192.168.0.48 -> 192.168.0.97-192.168.0.120)' \"$work/entry.log\""
check "the loop watched the pools" "grep -qx 'get ippools,cidrpools -n kube-system --watch-only -o name' \"$work/kubectl.log\""
# Without an event, the resync period ends the wait.
start=$SECONDS
check "resync without events" "run_entry SYNC_LOOPS=2 RESYNC_SECONDS=1"
check "resync took about the period" "[ \$((SECONDS - start)) -lt 10 ]"
sleep 0.2
alive() { local p n=0; while read -r p; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done <"$work/watch.pids"; echo "$n"; }
check "every watch was stopped" "[ -s \"$work/watch.pids\" ] && [ \"\$(alive)\" = 0 ]"

exit $((fails > 0))
