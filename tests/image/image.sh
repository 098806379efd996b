#!/usr/bin/env bash
# The plugin images as the Network Operator's DaemonSets run them, under
# podman (root): builds them offline (ninja image, a tag of this run's own),
# checks each holds its slot's binaries and cni-install and nothing else,
# runs each default command with a temporary directory at /host/opt/cni/bin
# and checks that exactly the image's binaries land there, static, mode 0755,
# the build's bytes, that what another image put there (nv-ipam's binaries,
# OpenShift's own macvlan and host-device in /var/lib/cni/bin) is left
# alone, that both slots' DaemonSets starting together on one directory each
# install their own, that a second run leaves them untouched, that SIGTERM
# stops it with exit status 0 (not the kubelet's SIGKILL), and that the installed macvlan and
# host-device do ADD/CHECK/DEL in a throwaway netns (macvlan then tuning and
# sbr, as a multi-rail profile chains them, with the installed static as IPAM).
# Every binary of the images is this build's (dhcp included: nothing is carried
# from elsewhere, no label but the one version). Every ELF of both images answers
# VERSION in an empty root (a directory holding only that binary, chroot), as on
# a host without any library; a dynamic binary does not (the nv-ipam image's
# ipam-node, the control); and a build into which Debian's dynamic dhcp is
# slipped (a copy of the build directory, image/build.sh run on it) fails,
# building nothing.
# Then the nv-ipam image (ninja image-nv-ipam): /ipam-node with its shared
# libraries and the static /nv-ipam and /nv-ipam-tool (each answers VERSION in
# an empty root), no shell; ipam-node run with the DaemonSet's mounts stops
# without an API server, touching nothing (the kube suite runs it as the
# operator's DaemonSet on a cluster).
# Usage: image.sh BUILD_DIR [REFERENCE_CNI_DIR]
#   REFERENCE_CNI_DIR: Debian's containernetworking-plugins (default
#   /usr/lib/cni): CNI_PATH beside the installed copies, and the dynamic dhcp
#   slipped into a build.
# Environment: PODMAN_RUNTIME (default: crun if it can start a container
#   here, else runc).
set -uo pipefail

build=${1:?usage: $0 BUILD_DIR [REFERENCE_CNI_DIR]}
ref=${2:-/usr/lib/cni}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/image/plugins.sh"
declare -n built=plugin_built
# The cniPlugins image's, in cni-install's order.
read -r -a ours <<<"${image_plugins[cni-rdma-plugins]}"
slot_set="${ours[*]}"
sorted() { printf '%s\n' "$@" | sort | tr '\n' ' '; }

[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (podman, netns)"; exit 77; }
for p in podman readelf ip jq chroot; do
	command -v "$p" >/dev/null || { echo "error: $p missing (tests/install-deps.sh test)" >&2; exit 2; }
done
# shellcheck source=tests/image/lib.sh
. "$top/tests/image/lib.sh"

tag=$$$RANDOM
tag=${tag:0:8}
# The images under a tag of this run: other runs on the machine keep theirs.
plugins=localhost/cni-rdma-plugins:test-$tag
ipoib=localhost/cni-rdma-ipoib:test-$tag
tmp=$(mktemp -d /tmp/cni-image-test.XXXXXX)
ns=cniimg-$tag
master=im$tag
containers=()
cleanup() {
	for c in "${containers[@]}"; do podman rm -f "$c" >/dev/null 2>&1; done
	podman rmi "$plugins" "$ipoib" "localhost/nv-ipam:test-$tag" \
		"localhost/cni-rdma-plugins:slip-$tag" "localhost/cni-rdma-ipoib:slip-$tag" >/dev/null 2>&1
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

echo "# build the images offline"
if TAG=test-$tag ninja -C "$build" image >"$tmp/build.log" 2>&1; then
	ok "ninja image"
else
	not_ok "ninja image"; tail -20 "$tmp/build.log"; finish
fi
check "tagged $plugins and $ipoib" bash -c 'podman image exists "$1" && podman image exists "$2"' _ "$plugins" "$ipoib"

# Limits podman would raise past the hard limits cannot be set without
# CAP_SYS_RESOURCE: the container gets modest ones.
run_args=(--network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
runtime=${PODMAN_RUNTIME:-}
if [ -z "$runtime" ]; then
	for rt in crun runc; do
		command -v "$rt" >/dev/null || continue
		if out=$(podman run --rm --runtime "$rt" "${run_args[@]}" "$plugins" --version 2>&1); then
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
arch=$(podman info -f '{{.Host.Arch}}')
# config IMAGE: its entrypoint, command, architecture and title, on one line.
config() {
	podman image inspect -f '{{json .Config.Entrypoint}} {{json .Config.Cmd}} {{.Os}}/{{.Architecture}} {{index .Labels "org.opencontainers.image.title"}}' "$1"
}
for img in "$plugins" "$ipoib"; do
	if [ "$img" = "$plugins" ]; then
		slot=cniPlugins want=$({ printf 'opt/cni-rdma-plugins/bin/%s\n' $slot_set
			echo usr/bin/cni-install; } | sort)
	else
		slot=ipoib want=$(printf '%s\n' opt/cni-rdma-plugins/bin/ipoib usr/bin/cni-install)
	fi
	title=${img#localhost/}
	check "$title ($slot slot), FROM scratch: $(echo $want), nothing else (no shell, no library, no nv-ipam)" \
		bash -c '[ "$(cat)" = "$1" ]' _ "$want" < <(files_in "$img")
	check "$title: entrypoint cni-install, no command, linux/$arch: $(config "$img")" \
		[ "$(config "$img")" = "[\"/usr/bin/cni-install\"] null linux/$arch ${title%:*}" ]
done
check "the default command is cni-install" \
	bash -c '[[ $(podman run --rm "${@:2}" "$1" --version) == "cni-install "* ]]' _ "$plugins" "${run_args[@]}"
check "cni-install --version names nothing carried" \
	bash -c '[ "$(podman run --rm "${@:2}" "$1" --version | grep -c "^carried")" = 0 ]' _ "$plugins" "${run_args[@]}"
check "no label of ours but the OCI ones, one version: $(podman image inspect -f '{{json .Labels}}' "$plugins")" \
	[ "$(podman image inspect -f '{{json .Labels}}' "$plugins" |
		jq -r '[keys[] | select(. != "io.buildah.version")] | join(" ")')" = \
	"org.opencontainers.image.description org.opencontainers.image.licenses org.opencontainers.image.title org.opencontainers.image.version" ]

# exported IMAGE DIR: the image's files, unpacked into DIR.
exported() {
	local c
	mkdir -p "$2"
	c=$(podman create "${run_args[@]}" "$1") || return 1
	podman export "$c" | tar -x -C "$2"
	podman rm "$c" >/dev/null
}
echo "# every file the plugin images put on a host, run in an empty root"
for img in "$plugins" "$ipoib"; do
	title=${img#localhost/}
	title=${title%:*}
	# Its binaries and cni-install.
	want=2
	[ "$img" = "$ipoib" ] || want=$((${#ours[@]} + 1))
	root=$tmp/root-$title
	exported "$img" "$root"
	elves=0
	while IFS= read -r -d '' f; do
		is_elf "$f" || continue
		elves=$((elves + 1))
		alone "$arch" "$f" "$title ${f#"$root"}"
	done < <(find "$root" -type f -print0 | sort -z)
	check "$title: $elves ELF files run (want $want)" [ "$elves" = "$want" ]
done

echo "# Debian's dynamic dhcp slipped into a build: the build fails and builds nothing"
# A copy of the build's binaries where image/build.sh looks for them, Debian's dhcp in
# place of ours.
for b in "${!built[@]}"; do
	f=${built[$b]}
	mkdir -p "$tmp/slip-build/${f%/*}"
	cp "$build/$f" "$tmp/slip-build/$f"
done
cp "$ref/dhcp" "$tmp/slip-build/${built[dhcp]}"
if TAG=slip-$tag bash "$top/image/build.sh" "$top/image/Containerfile" "$tmp/slip-out" 0 \
	"$tmp/slip-build=$arch" >"$tmp/slip.log" 2>&1; then
	not_ok "image/build.sh with a dynamic dhcp fails"
else
	ok "image/build.sh with a dynamic dhcp fails"
fi
check "  ... naming dhcp and what it needs: $(grep -m1 'dynamically linked' "$tmp/slip.log")" \
	grep -q "/dhcp is dynamically linked (program interpreter .*; needs .*libc\.so" "$tmp/slip.log"
check "  ... and no other file" [ "$(grep -c 'dynamically linked' "$tmp/slip.log")" = 1 ]
check "  ... no image built" bash -c '! podman image exists "$1" && ! podman image exists "$2"' _ \
	"localhost/cni-rdma-plugins:slip-$tag" "localhost/cni-rdma-ipoib:slip-$tag"

# start NAME IMAGE HOSTDIR: the image's default command with HOSTDIR at
# /host/opt/cni/bin, as the DaemonSets run it.
start() {
	containers+=("$1")
	podman run -d --name "$1" "${run_args[@]}" -v "$3:/host/opt/cni/bin" "$2" >/dev/null
}
# waiting NAME: its log says it waits for SIGTERM (a hang guard of 30 s: it starts in a few).
waiting() {
	for _ in $(seq 300); do
		podman logs "$1" 2>&1 | grep -q 'waiting for SIGTERM' && return 0
		[ "$(podman inspect -f '{{.State.Running}}' "$1")" = true ] || return 1
		sleep 0.1
	done
	return 1
}
# stop_term NAME: SIGTERM, then its exit status and how long it took (podman kill sends no
# SIGKILL after it: the wait's timeout, the kubelet's 30 s grace doubled, is a hang guard).
stop_term() {
	local t0
	t0=$(date +%s%N)
	podman kill --signal TERM "$1" >/dev/null
	rc=$(timeout 60 podman wait "$1") || rc="still running"
	ms=$((($(date +%s%N) - t0) / 1000000))
}
static() { ! LC_ALL=C readelf -lW "$1" | grep -q 'INTERP\|DYNAMIC'; }
# installed NAME DIR: DIR/NAME is the build's NAME, stripped, static, a regular file of mode 0755.
installed() {
	local f=$2/$1
	[ -f "$f" ] && [ ! -L "$f" ] && [ "$(stat -c %a "$f")" = 755 ] && static "$f" &&
		strip -o "$tmp/stripped" "$build/${built[$1]}" && cmp -s "$tmp/stripped" "$f"
}
# theirs DIR NAME...: files another image put there (a marker each), and their state.
theirs() {
	local dir=$1
	shift
	for f in "$@"; do
		printf '#!/bin/sh\necho "%s of another image"\n' "$f" >"$dir/$f"
		chmod 0755 "$dir/$f"
	done
}
state() { (cd "$1" && stat -c '%n %i %Y %s' "${@:2}"); }

echo "# the cniPlugins image on a Kubernetes node where the nv-ipam image installed its binaries"
hostdir=$tmp/opt/cni/bin
mkdir -p "$hostdir"
theirs "$hostdir" nv-ipam nv-ipam-tool
nvipam_before=$(state "$hostdir" nv-ipam nv-ipam-tool)
start "cni-image-a-$tag" "$plugins" "$hostdir"
check "installed, then waits for SIGTERM" waiting "cni-image-a-$tag"
for name in "${ours[@]}"; do
	check "$name: the build's binary, stripped, static, a regular file of mode 0755" installed "$name" "$hostdir"
done
check "the log names the image's set" \
	bash -c 'podman logs "$1" 2>&1 | grep -q "installing $2 (what /opt/cni-rdma-plugins/bin holds) into /host/opt/cni/bin"' _ "cni-image-a-$tag" "$slot_set"
check "nv-ipam and nv-ipam-tool of the nv-ipam image left alone" \
	[ "$nvipam_before" = "$(state "$hostdir" nv-ipam nv-ipam-tool)" ]
check "no ipoib, nothing else in the directory: $(ls -A "$hostdir" | tr '\n' ' ')" \
	[ "$(ls -A "$hostdir" | sort | tr '\n' ' ')" = "$(sorted $slot_set nv-ipam nv-ipam-tool)" ]
# The kubelet sends SIGKILL 30 s after SIGTERM (podman stop below too): exit status
# 0, not 137, means SIGTERM ended it, however long a loaded machine took (printed;
# podman's own start-up takes most of it, up to 3.5 s measured with the machine's 2
# CPUs busy).
stop_term "cni-image-a-$tag"
check "SIGTERM: exit status $rc (want 0)" [ "$rc" = 0 ]
echo "# SIGTERM: stopped in $ms ms"

echo "# second run: identical binaries are left alone"
before=$(stat -c '%n %i %Y' "$hostdir"/*)
start "cni-image-b-$tag" "$plugins" "$hostdir"
check "second container waits for SIGTERM" waiting "cni-image-b-$tag"
check "same inodes and mtimes as after the first run" [ "$before" = "$(stat -c '%n %i %Y' "$hostdir"/*)" ]
check "its log says each was left alone" \
	bash -c '[ "$(podman logs "$1" 2>&1 | grep -c "left alone")" -eq "$2" ]' _ "cni-image-b-$tag" \
	"$(wc -w <<<"$slot_set")"
t0=$(date +%s%N)
podman stop -t 30 "cni-image-b-$tag" >/dev/null
ms=$((($(date +%s%N) - t0) / 1000000))
rc=$(podman inspect -f '{{.State.ExitCode}}' "cni-image-b-$tag")
check "podman stop (SIGTERM, 30 s grace, then SIGKILL: 137): exit status $rc (want 0)" [ "$rc" = 0 ]
echo "# podman stop: $ms ms"

echo "# --no-sleep, as an init container"
containers+=("cni-image-c-$tag")
podman run --name "cni-image-c-$tag" "${run_args[@]}" -v "$hostdir:/host/opt/cni/bin" "$plugins" --no-sleep >/dev/null 2>&1
check "--no-sleep exits 0 at once" [ "$(podman inspect -f '{{.State.ExitCode}}' "cni-image-c-$tag")" = 0 ]

echo "# the ipoib image on OpenShift: /var/lib/cni/bin, where the cluster network operator put its macvlan and host-device"
ocpdir=$tmp/var/lib/cni/bin
mkdir -p "$ocpdir"
theirs "$ocpdir" macvlan host-device bridge
ocp_before=$(state "$ocpdir" macvlan host-device bridge)
start "cni-image-d-$tag" "$ipoib" "$ocpdir"
check "installed, then waits for SIGTERM" waiting "cni-image-d-$tag"
check "ipoib: the build's binary, stripped, static, a regular file of mode 0755" installed ipoib "$ocpdir"
check "OpenShift's macvlan, host-device and bridge left alone" \
	[ "$ocp_before" = "$(state "$ocpdir" macvlan host-device bridge)" ]
check "nothing else in the directory: $(ls -A "$ocpdir" | tr '\n' ' ')" \
	[ "$(ls -A "$ocpdir" | sort | tr '\n' ' ')" = "bridge host-device ipoib macvlan " ]
out=$(CNI_COMMAND=VERSION "$ocpdir/ipoib" </dev/null)
check "the installed ipoib answers VERSION: $out" \
	bash -c 'jq -e ".supportedVersions | index(\"1.1.0\")" <<<"$1" >/dev/null' _ "$out"
stop_term "cni-image-d-$tag"
check "SIGTERM: exit status $rc (want 0)" [ "$rc" = 0 ]

echo "# both slots' DaemonSets starting at once on one node"
bothdir=$tmp/both
mkdir "$bothdir"
start "cni-image-e-$tag" "$plugins" "$bothdir"
start "cni-image-f-$tag" "$ipoib" "$bothdir"
check "both install, then wait for SIGTERM" \
	bash -c 'waiting() { for _ in $(seq 300); do podman logs "$1" 2>&1 | grep -q "waiting for SIGTERM" && return 0; sleep 0.1; done; return 1; }; waiting "$1" && waiting "$2"' \
	_ "cni-image-e-$tag" "cni-image-f-$tag"
for name in "${ours[@]}" ipoib; do
	check "$name in place" installed "$name" "$bothdir"
done
check "the two images' sets and nothing else: $(ls -A "$bothdir" | tr '\n' ' ')" \
	[ "$(ls -A "$bothdir" | sort | tr '\n' ' ')" = "$(sorted $slot_set ipoib)" ]
check "the ipoib image installed only ipoib" \
	bash -c '[ "$(podman logs "$1" 2>&1 | grep -c " installed \|left alone")" -eq 1 ] &&
		podman logs "$1" 2>&1 | grep -q "installing ipoib (what"' _ "cni-image-f-$tag"
stop_term "cni-image-e-$tag"
stop_term "cni-image-f-$tag"

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
	if [ "$plugin" = macvlan ]; then
		# The rail as NVIDIA's multi-rail profile renders it: then tuning, then sbr.
		tconf=$(jq -c --argjson prev "$res" '{cniVersion, name, type: "tuning", prevResult: $prev,
			sysctl: {"net.ipv4.conf.net1.arp_ignore": "1"}}' <<<"$conf")
		tres=$(cni tuning ADD "$tconf")
		check "tuning ADD after it, from the installed copy" [ $? -eq 0 ]
		check "tuning: arp_ignore 1 on net1" \
			[ "$(ip netns exec "$ns" cat /proc/sys/net/ipv4/conf/net1/arp_ignore)" = 1 ]
		sconf=$(jq -c --argjson prev "${tres:-null}" '{cniVersion, name, type: "sbr", prevResult: $prev}' <<<"$conf")
		cni sbr ADD "$sconf" >/dev/null
		check "sbr ADD after tuning, from the installed copy" [ $? -eq 0 ]
		check "sbr: a rule from 10.77.0.2 into table 100" \
			bash -c 'ip -n "$1" rule show | grep -q "from 10.77.0.2 lookup 100"' _ "$ns"
		cni sbr DEL "$sconf" >/dev/null && cni tuning DEL "$tconf" >/dev/null
		check "sbr and tuning DEL" [ $? -eq 0 ]
		check "no rule into table 100 left" bash -c '! ip -n "$1" rule show | grep -q "lookup 100"' _ "$ns"
	fi
	cni "$plugin" DEL "$check_conf" >/dev/null
	check "$plugin DEL" [ $? -eq 0 ]
	check "$plugin: net1 gone from the pod" bash -c '! ip -n "$1" link show net1 >/dev/null 2>&1' _ "$ns"
done
check "host-device: the device is back in the host" bash -c 'ip link show "$1" >/dev/null' _ "${master}p"

echo "# the nv-ipam image (the operator's nvIpam): ipam-controller, ipam-node, nv-ipam, nv-ipam-tool"
nvi=localhost/nv-ipam:test-$tag
if TAG=test-$tag ninja -C "$build" image-nv-ipam >"$tmp/nvi-build.log" 2>&1; then
	ok "ninja image-nv-ipam"
else
	not_ok "ninja image-nv-ipam"; tail -20 "$tmp/nvi-build.log"; finish
fi
files_in "$nvi" >"$tmp/nvi-files"
check "/ipam-controller, /ipam-node, /nv-ipam and /nv-ipam-tool at the root, beside shared libraries only" \
	bash -c 'grep -qx ipam-controller "$1" && grep -qx ipam-node "$1" && grep -qx nv-ipam "$1" &&
		 grep -qx nv-ipam-tool "$1" && ! grep -v -e "^ipam-controller$" -e "^ipam-node$" -e "^nv-ipam$" \
		 -e "^nv-ipam-tool$" -e "\.so[.0-9]*$" "$1"' _ "$tmp/nvi-files"
check "no shell in it" bash -c '! grep -q "bin/sh$\|bin/bash$" "$1"' _ "$tmp/nvi-files"
exported "$nvi" "$tmp/root-nv-ipam"
for b in nv-ipam nv-ipam-tool; do
	alone "$arch" "$tmp/root-nv-ipam/$b" "nv-ipam /$b (ipam-node copies it onto hosts)"
done
out=$(empty_root_version "$arch" "$tmp/root-nv-ipam/ipam-node" 2>&1)
rc=$?
check "ipam-node, dynamic, does not start in an empty root (the control): exit status $rc, $out" \
	bash -c '[ "$1" -ne 0 ] && [[ $2 != *"{"* ]]' _ "$rc" "$out"
check "ipam-node starts from the image's libraries (--version)" \
	bash -c '[[ $(podman run --rm "${@:2}" "$1" /ipam-node --version) == "ipam-node "* ]]' _ "$nvi" "${run_args[@]}"
check "ipam-controller starts from the image's libraries (--version)" \
	bash -c '[[ $(podman run --rm "${@:2}" "$1" /ipam-controller --version) == "ipam-controller "* ]]' _ "$nvi" "${run_args[@]}"
# The DaemonSet's mounts, no API: it stops at the API before touching the node (the kube
# suite's daemonset-start checks what it installs and writes from this image).
mkdir -p "$tmp/nvi-bin" "$tmp/nvi-conf" "$tmp/nvi-state"
containers+=("cni-nvi-$tag")
podman run --name "cni-nvi-$tag" "${run_args[@]}" -v "$tmp/nvi-bin:/opt/cni/bin" \
	-v "$tmp/nvi-conf:/etc/cni/net.d/nv-ipam.d" -v "$tmp/nvi-state:/var/lib/cni/nv-ipam" \
	"$nvi" /ipam-node --node-name=host-b --logging-format=json >"$tmp/nvi.log" 2>&1
rc=$(podman inspect -f '{{.State.ExitCode}}' "cni-nvi-$tag")
check "without an API server: exit status 1, saying so" \
	bash -c '[ "$1" = 1 ] && grep -q "failed to read config for k8s client" "$2"' _ "$rc" "$tmp/nvi.log"
check "the failed start left the node's bin, conf and state directories empty" \
	bash -c '[ -z "$(find "$@" -mindepth 1 -print -quit)" ]' _ "$tmp/nvi-bin" "$tmp/nvi-conf" "$tmp/nvi-state"
finish
