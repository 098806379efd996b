#!/usr/bin/env bash
# Builds localhost/nv-ipam:<tag> from image/nv-ipam/Containerfile with podman, offline
# (FROM scratch: nothing is pulled): /ipam-node and /ipam-controller with the loader and the
# shared libraries ldd finds for them (copied from this machine), /nv-ipam and
# /nv-ipam-tool, which must be fully static (they are copied onto hosts).
# Usage: build.sh CONTAINERFILE CONTEXT_DIR VERSION IPAM_NODE NV_IPAM NV_IPAM_TOOL IPAM_CONTROLLER
# Environment: IMAGE (default localhost/nv-ipam), TAG (default latest), PODMAN (default podman).
set -euo pipefail

[ $# -eq 7 ] || { echo "usage: $0 CONTAINERFILE CONTEXT_DIR VERSION IPAM_NODE NV_IPAM NV_IPAM_TOOL IPAM_CONTROLLER" >&2; exit 2; }
containerfile=$1 ctx=$2 version=$3 node=$4 nvipam=$5 tool=$6 controller=$7
image=${IMAGE:-localhost/nv-ipam}
tag=${TAG:-latest}
podman=${PODMAN:-podman}

[ "$(id -u)" -eq 0 ] || { echo "error: the image is built with root's podman (run as root or with sudo)" >&2; exit 1; }
for p in "$podman" ldd readelf strip; do
	command -v "$p" >/dev/null || { echo "error: $p not found" >&2; exit 1; }
done
for f in "$nvipam" "$tool"; do
	if LC_ALL=C readelf -lW "$f" | grep -q 'INTERP\|DYNAMIC'; then
		echo "error: $f is not fully static; configure the build with -Dstatic=true" >&2
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
	done < <(LC_ALL=C ldd "$prog")
done
libs=$(find "$ctx/rootfs" -type f | wc -l)
install -s -m 0755 "$node" "$ctx/ipam-node"
install -s -m 0755 "$controller" "$ctx/ipam-controller"
install -s -m 0755 "$nvipam" "$ctx/nv-ipam"
install -s -m 0755 "$tool" "$ctx/nv-ipam-tool"
"$podman" build --network none --pull=never --build-arg "VERSION=$version" \
	-f "$containerfile" -t "$image:$tag" "$ctx"
echo "built $image:$tag: /ipam-node, /ipam-controller, /nv-ipam, /nv-ipam-tool and $libs shared objects ($(du -sh "$ctx" | cut -f1))"
