#!/usr/bin/env bash
# Builds localhost/nv-ipam:<tag> from image/nv-ipam/Containerfile with podman, offline
# (FROM scratch: nothing is pulled): /ipam-node and /ipam-controller with the loader and the
# shared libraries ldd finds for them (copied from this machine), /nv-ipam and
# /nv-ipam-tool, which must be fully static (ipam-node copies them onto hosts: no program
# interpreter, no DT_NEEDED, image/check-static.sh).
# Usage: build.sh CONTAINERFILE CONTEXT_DIR VERSION IPAM_NODE NV_IPAM NV_IPAM_TOOL IPAM_CONTROLLER
# Environment: IMAGE (default localhost/nv-ipam), TAG (default latest), PODMAN (default podman),
#   ARCH (amd64 or arm64, default this machine's): the binaries' architecture. arm64 ones come
#   from the cross build on an amd64 machine; their libraries are the arm64 packages of this
#   machine (multiarch), found by the arm64 loader run under qemu-user (ldd cannot run them).
set -euo pipefail

[ $# -eq 7 ] || { echo "usage: $0 CONTAINERFILE CONTEXT_DIR VERSION IPAM_NODE NV_IPAM NV_IPAM_TOOL IPAM_CONTROLLER" >&2; exit 2; }
containerfile=$1 ctx=$2 version=$3 node=$4 nvipam=$5 tool=$6 controller=$7
image=${IMAGE:-localhost/nv-ipam}
tag=${TAG:-latest}
podman=${PODMAN:-podman}
native=$(case "$(uname -m)" in x86_64) echo amd64 ;; aarch64) echo arm64 ;; *) uname -m ;; esac)
arch=${ARCH:-$native}
declare -A machine=([amd64]="Advanced Micro Devices X86-64" [arm64]=AArch64)
declare -A strip=([amd64]=x86_64-linux-gnu-strip [arm64]=aarch64-linux-gnu-strip)
[ -n "${machine[$arch]:-}" ] || { echo "error: ARCH $arch: amd64 or arm64" >&2; exit 2; }
# list PROG: the loader and the libraries PROG needs, as ldd prints them.
if [ "$arch" = "$native" ]; then
	list() { LC_ALL=C ldd "$1"; }
elif [ "$arch" = arm64 ]; then
	list() { LC_ALL=C qemu-aarch64 -L / /lib/ld-linux-aarch64.so.1 --list "$1"; }
	command -v qemu-aarch64 >/dev/null || { echo "error: qemu-aarch64 not found (tests/install-deps.sh arm64)" >&2; exit 1; }
	[ -e /lib/ld-linux-aarch64.so.1 ] || { echo "error: the arm64 loader is missing (libc6:arm64)" >&2; exit 1; }
else
	echo "error: ARCH $arch on a $native machine: only arm64 on amd64" >&2
	exit 1
fi

[ "$(id -u)" -eq 0 ] || { echo "error: the image is built with root's podman (run as root or with sudo)" >&2; exit 1; }
for p in "$podman" ldd readelf "${strip[$arch]}"; do
	command -v "$p" >/dev/null || { echo "error: $p not found" >&2; exit 1; }
done
for f in "$node" "$controller" "$nvipam" "$tool"; do
	if [ "$(LC_ALL=C readelf -h "$f" | sed -n 's/^ *Machine: *//p')" != "${machine[$arch]}" ]; then
		echo "error: $f is not for $arch (${machine[$arch]})" >&2
		exit 1
	fi
done
for f in "$node" "$controller"; do
	if LC_ALL=C readelf -d "$f" | grep -q 'libasan\|libubsan'; then
		echo "error: $f is a sanitized build; build the image from a plain one" >&2
		exit 1
	fi
done

rm -rf "$ctx"
mkdir -p "$ctx/rootfs"
# The loader and every library of both programs, at the path the loader looks for them
# (ldd's left side for the loader, the right side for the rest), resolved from symbolic
# links; the two share most of them.
for prog in "$node" "$controller"; do
	while read -r line; do
		case $line in
		*'=> not found'*) echo "error: $prog: $line" >&2; exit 1 ;;
		*'=> /'*) path=${line#*=> }; path=${path%% (*} ;;
		/*) path=${line%% (*} ;;
		*) continue ;;
		esac
		mkdir -p "$ctx/rootfs$(dirname "$path")"
		[ -e "$ctx/rootfs$path" ] || cp -L "$path" "$ctx/rootfs$path"
	done < <(list "$prog")
done
libs=$(find "$ctx/rootfs" -type f | wc -l)
for b in ipam-node:"$node" ipam-controller:"$controller" nv-ipam:"$nvipam" nv-ipam-tool:"$tool"; do
	install -s --strip-program="${strip[$arch]}" -m 0755 "${b#*:}" "$ctx/${b%%:*}"
done
bash "$(dirname "$0")/../check-static.sh" "$ctx/nv-ipam" "$ctx/nv-ipam-tool" || {
	echo "error: not built: configure the build with -Dstatic=true" >&2
	exit 1
}
# No cache: podman 4.3 takes a cached FROM scratch layer for another platform.
"$podman" build --no-cache --network none --pull=never --platform "linux/$arch" \
	--build-arg "VERSION=$version" -f "$containerfile" -t "$image:$tag" "$ctx"
echo "built $image:$tag ($arch): /ipam-node, /ipam-controller, /nv-ipam, /nv-ipam-tool and $libs shared objects ($(du -sh "$ctx" | cut -f1))"
