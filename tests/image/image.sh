#!/usr/bin/env bash
# The image as the Network Operator's DaemonSets run it, under podman (root):
# builds it offline (ninja image), runs its default command with a temporary
# directory at /host/opt/cni/bin, checks that every binary lands there static
# with mode 0755 and the build's bytes, that a second run leaves them
# untouched, that SIGTERM stops it at once with exit status 0, and that the
# installed macvlan and host-device do ADD/CHECK/DEL in a throwaway netns.
# Then the nv-ipam node agent's image (ninja image-agent): bash, kubectl and
# the static binaries are there, and its entrypoint, run once against a fake
# kubectl, installs nv-ipam and nv-ipam-tool and writes the node pool file
# nv-ipam-tool writes from the same pools.
# Usage: image.sh BUILD_DIR [REFERENCE_CNI_DIR]
# Environment: PODMAN_RUNTIME (default: crun if it can start a container
#   here, else runc).
set -uo pipefail

build=${1:?usage: $0 BUILD_DIR [REFERENCE_CNI_DIR]}
ref=${2:-/usr/lib/cni}
image=localhost/cni-rdma-plugins:latest
names=(macvlan ipoib host-device nv-ipam nv-ipam-tool)
declare -A built=([macvlan]=plugins/macvlan/macvlan [ipoib]=plugins/ipoib/ipoib
	[host-device]=plugins/host-device/host-device [nv-ipam]=ipam/nv-ipam/nv-ipam
	[nv-ipam-tool]=ipam/nv-ipam/tool/nv-ipam-tool)

[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (podman, netns)"; exit 77; }
for p in podman readelf ip jq; do
	command -v "$p" >/dev/null || { echo "error: $p missing (tests/install-deps.sh test)" >&2; exit 2; }
done

tag=$$$RANDOM
tag=${tag:0:8}
tmp=$(mktemp -d /tmp/cni-image-test.XXXXXX)
ns=cniimg-$tag
master=im$tag
containers=()
cleanup() {
	for c in "${containers[@]}"; do podman rm -f "$c" >/dev/null 2>&1; done
	ip netns del "$ns" 2>/dev/null
	ip link del "$master" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
finish() { echo "$((n - failed)) passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

echo "# build the image offline"
if ninja -C "$build" image >"$tmp/build.log" 2>&1; then
	ok "ninja image"
else
	not_ok "ninja image"; tail -20 "$tmp/build.log"; finish
fi
check "tagged $image" podman image exists "$image"

# Limits podman would raise past the hard limits cannot be set without
# CAP_SYS_RESOURCE: the container gets modest ones.
run_args=(--network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
runtime=${PODMAN_RUNTIME:-}
if [ -z "$runtime" ]; then
	for rt in crun runc; do
		command -v "$rt" >/dev/null || continue
		if out=$(podman run --rm --runtime "$rt" "${run_args[@]}" "$image" --version 2>&1); then
			runtime=$rt
			break
		fi
		echo "# $rt cannot start a container here: $out"
	done
fi
[ -n "$runtime" ] || { not_ok "no OCI runtime can start a container here"; finish; }
run_args+=(--runtime "$runtime")
echo "# runtime: $runtime"
# files_in IMAGE: the regular files of its filesystem, sorted.
files_in() {
	local c
	c=$(podman create "${run_args[@]}" "$1") || return 1
	podman export "$c" | tar -t | grep -v '/$' | sort
	podman rm "$c" >/dev/null
}
want=$(printf '%s\n' opt/cni-rdma-plugins/bin/{host-device,ipoib,macvlan,nv-ipam,nv-ipam-tool} usr/bin/cni-install)
check "FROM scratch: the five binaries and cni-install, nothing else (no shell, no library)" \
	bash -c '[ "$(cat)" = "$1" ]' _ "$want" < <(files_in "$image")
check "the default command is cni-install" \
	bash -c '[[ $(podman run --rm "${@:2}" "$1" --version) == "cni-install "* ]]' _ "$image" "${run_args[@]}"

hostdir=$tmp/host-bin
mkdir "$hostdir"
# start NAME: the image's default command with the host directory mounted, as the DaemonSets run it.
start() {
	containers+=("$1")
	podman run -d --name "$1" "${run_args[@]}" -v "$hostdir:/host/opt/cni/bin" "$image" >/dev/null
}
# waiting NAME: its log says it waits for SIGTERM (within 30 s).
waiting() {
	for _ in $(seq 300); do
		podman logs "$1" 2>&1 | grep -q 'waiting for SIGTERM' && return 0
		[ "$(podman inspect -f '{{.State.Running}}' "$1")" = true ] || return 1
		sleep 0.1
	done
	return 1
}
# stop_term NAME: SIGTERM, then its exit status and how long it took.
stop_term() {
	local t0
	t0=$(date +%s%N)
	podman kill --signal TERM "$1" >/dev/null
	rc=$(podman wait "$1")
	ms=$((($(date +%s%N) - t0) / 1000000))
}
static() { ! LC_ALL=C readelf -lW "$1" | grep -q 'INTERP\|DYNAMIC'; }

echo "# first run: every binary lands"
start "cni-image-a-$tag"
check "installed, then waits for SIGTERM" waiting "cni-image-a-$tag"
for name in "${names[@]}"; do
	f=$hostdir/$name
	check "$name: a regular file with mode 0755" \
		bash -c '[ -f "$1" ] && [ ! -L "$1" ] && [ "$(stat -c %a "$1")" = 755 ]' _ "$f"
	check "$name: fully static" static "$f"
	check "$name: the build's binary, stripped" \
		bash -c 'strip -o "$3" "$1" && cmp -s "$3" "$2"' _ "$build/${built[$name]}" "$f" "$tmp/stripped"
done
check "nothing else in the directory" [ "$(ls -A "$hostdir" | wc -l)" -eq 5 ]
stop_term "cni-image-a-$tag"
check "SIGTERM: exit status $rc (want 0)" [ "$rc" = 0 ]
check "SIGTERM: stopped in $ms ms (want < 2000)" [ "$ms" -lt 2000 ]

echo "# second run: identical binaries are left alone"
before=$(stat -c '%n %i %Y' "$hostdir"/*)
start "cni-image-b-$tag"
check "second container waits for SIGTERM" waiting "cni-image-b-$tag"
check "same inodes and mtimes as after the first run" [ "$before" = "$(stat -c '%n %i %Y' "$hostdir"/*)" ]
check "its log says each was left alone" \
	bash -c '[ "$(podman logs "$1" 2>&1 | grep -c "left alone")" -eq 5 ]' _ "cni-image-b-$tag"
t0=$(date +%s%N)
podman stop -t 30 "cni-image-b-$tag" >/dev/null
ms=$((($(date +%s%N) - t0) / 1000000))
rc=$(podman inspect -f '{{.State.ExitCode}}' "cni-image-b-$tag")
check "podman stop (SIGTERM, 30 s grace): exit status $rc in $ms ms" \
	bash -c '[ "$1" = 0 ] && [ "$2" -lt 2000 ]' _ "$rc" "$ms"

echo "# --no-sleep, as an init container"
containers+=("cni-image-c-$tag")
podman run --name "cni-image-c-$tag" "${run_args[@]}" -v "$hostdir:/host/opt/cni/bin" "$image" --no-sleep >/dev/null 2>&1
check "--no-sleep exits 0 at once" [ "$(podman inspect -f '{{.State.ExitCode}}' "cni-image-c-$tag")" = 0 ]

echo "# the installed plugins in a netns"
if ! ip netns add "$ns" 2>/dev/null || ! ip link add "$master" type veth peer name "${master}p" 2>/dev/null; then
	echo "SKIP: cannot create a netns or a veth pair"; finish
fi
ip link set "$master" up
# cni NAME COMMAND CONFIG: run an installed plugin as a runtime does.
cni() {
	CNI_COMMAND=$2 CNI_CONTAINERID=img$tag CNI_NETNS=/run/netns/$ns CNI_IFNAME=net1 \
		CNI_PATH=$hostdir:$ref "$hostdir/$1" <<<"$3"
}
for plugin in macvlan host-device; do
	if [ "$plugin" = macvlan ]; then
		conf='{"cniVersion":"1.0.0","name":"img","type":"macvlan","master":"'$master'","ipam":{"type":"static","addresses":[{"address":"10.77.0.2/24"}]}}'
	else
		conf='{"cniVersion":"1.0.0","name":"img","type":"host-device","device":"'$master'p","ipam":{"type":"static","addresses":[{"address":"10.77.0.2/24"}]}}'
	fi
	res=$(cni "$plugin" ADD "$conf")
	check "$plugin ADD from the installed copy" [ $? -eq 0 ]
	check "$plugin: net1 in the pod with 10.77.0.2/24" \
		bash -c 'ip -n "$1" -o addr show dev net1 2>/dev/null | grep -q "inet 10.77.0.2/24"' _ "$ns"
	check_conf=$(jq -c --argjson prev "${res:-null}" '. + {prevResult: $prev}' <<<"$conf")
	cni "$plugin" CHECK "$check_conf" >/dev/null
	check "$plugin CHECK" [ $? -eq 0 ]
	cni "$plugin" DEL "$check_conf" >/dev/null
	check "$plugin DEL" [ $? -eq 0 ]
	check "$plugin: net1 gone from the pod" bash -c '! ip -n "$1" link show net1 >/dev/null 2>&1' _ "$ns"
done
check "host-device: the device is back in the host" bash -c 'ip link show "$1" >/dev/null' _ "${master}p"

echo "# the nv-ipam node agent's image"
agent=localhost/nv-ipam-node:latest
if ninja -C "$build" image-agent >"$tmp/agent-build.log" 2>&1; then
	ok "ninja image-agent"
else
	not_ok "ninja image-agent"; tail -20 "$tmp/agent-build.log"; finish
fi
out=$(podman run --rm "${run_args[@]}" "$agent" bash -c \
	'kubectl version --client && /opt/nv-ipam/bin/nv-ipam-tool --version && command -v cmp mkfifo grep' 2>&1)
check "bash, kubectl (Debian's kubernetes-client), nv-ipam-tool, cmp, mkfifo, grep: $(echo $out)" \
	bash -c '[[ $1 == *"Client Version"* && $1 == *"nv-ipam-tool "* && $1 == *mkfifo* ]]' _ "$out"
# A fake kubectl in the container: the fixture's IPPools, no CIDRPool.
fixtures=$(cd "$(dirname "$0")/../ipam/fixtures" && pwd)
mkdir -p "$tmp/fake" "$tmp/agent-bin" "$tmp/agent-conf"
jq '.items |= map(select(.kind == "IPPool"))' "$fixtures/pools.json" >"$tmp/fake/ippools.json"
jq '.items = []' "$fixtures/pools.json" >"$tmp/fake/cidrpools.json"
cat >"$tmp/fake/kubectl" <<'SH'
#!/bin/bash
[ "$1 $3 $4 $5 $6" = "get -n kube-system -o json" ] || { echo "fake kubectl: unexpected $*" >&2; exit 2; }
cat "/fake/$2.json"
SH
chmod +x "$tmp/fake/kubectl"
containers+=("cni-agent-$tag")
podman run --name "cni-agent-$tag" "${run_args[@]}" -v "$tmp/fake:/fake:ro" \
	-v "$tmp/agent-bin:/host/opt/cni/bin" -v "$tmp/agent-conf:/host/etc/cni/net.d/nv-ipam.d" \
	-e ONCE=1 -e NODE_NAME=host-b -e POOLS_NAMESPACE=kube-system -e KUBECTL=/fake/kubectl \
	"$agent" >"$tmp/agent.log" 2>&1
rc=$(podman inspect -f '{{.State.ExitCode}}' "cni-agent-$tag")
check "agent entrypoint ONCE=1: exit status $rc" [ "$rc" = 0 ]
for name in nv-ipam nv-ipam-tool; do
	check "agent installed $name, static, mode 0755" \
		bash -c '[ "$(stat -c %a "$1")" = 755 ] && ! LC_ALL=C readelf -lW "$1" | grep -q INTERP' _ "$tmp/agent-bin/$name"
done
"$build/ipam/nv-ipam/tool/nv-ipam-tool" node-pools --node host-b --input "$tmp/fake/ippools.json" \
	--stdout >"$tmp/want-pools.json" 2>/dev/null
check "agent wrote the node pool file nv-ipam-tool writes from the same pools" \
	bash -c '[ -s "$1" ] && cmp -s "$1" "$2"' _ "$tmp/agent-conf/node-pools.json" "$tmp/want-pools.json"
finish
