#!/usr/bin/env bash
# Builds localhost/nv-ipam-node:<tag> from image/agent/Containerfile with
# podman: a root filesystem unpacked from Debian 12 packages with apt-get
# download and dpkg-deb (no registry, no base image), the static nv-ipam and
# nv-ipam-tool, and conf-examples/nv-ipam/deploy/entrypoint.sh.
# Usage: build.sh CONTAINERFILE CONTEXT_DIR VERSION ENTRYPOINT NV_IPAM NV_IPAM_TOOL
# Environment: IMAGE (default localhost/nv-ipam-node), TAG (default latest),
#   PODMAN (default podman).
set -euo pipefail

[ $# -eq 6 ] || { echo "usage: $0 CONTAINERFILE CONTEXT_DIR VERSION ENTRYPOINT NV_IPAM NV_IPAM_TOOL" >&2; exit 2; }
containerfile=$1 ctx=$2 version=$3 entrypoint=$4 nvipam=$5 tool=$6
image=${IMAGE:-localhost/nv-ipam-node}
tag=${TAG:-latest}
podman=${PODMAN:-podman}
# What the entrypoint runs: bash, date/mktemp/cp/chmod/sync/mv/stat/mkfifo/cat/rm/sleep
# (coreutils), cmp (diffutils), grep, kubectl (kubernetes-client).
packages=(bash coreutils diffutils grep kubernetes-client)

[ "$(id -u)" -eq 0 ] || { echo "error: the image is built with root's podman (run as root or with sudo)" >&2; exit 1; }
for p in "$podman" apt-get apt-cache dpkg-deb readelf; do
	command -v "$p" >/dev/null || { echo "error: $p not found" >&2; exit 1; }
done
for f in "$nvipam" "$tool"; do
	if LC_ALL=C readelf -lW "$f" | grep -q 'INTERP\|DYNAMIC'; then
		echo "error: $f is not fully static; configure the build with -Dstatic=true" >&2
		exit 1
	fi
done

rm -rf "$ctx"
mkdir -p "$ctx/debs" "$ctx/rootfs/tmp" "$ctx/bin"
chmod 1777 "$ctx/rootfs/tmp"
# The packages and everything they depend on (Depends and Pre-Depends only).
mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances "${packages[@]}" | grep '^[a-z0-9]' | sort -u)
(cd "$ctx/debs" && apt-get download -q "${closure[@]}" >/dev/null 2>&1) || {
	echo "error: apt-get download failed (run apt-get update?)" >&2
	exit 1
}
for deb in "$ctx"/debs/*.deb; do
	dpkg-deb -x "$deb" "$ctx/rootfs"
done
# Documentation, manuals and locales are not run.
rm -rf "$ctx/rootfs/usr/share/doc" "$ctx/rootfs/usr/share/man" "$ctx/rootfs/usr/share/info" \
	"$ctx/rootfs/usr/share/locale"
install -s -m 0755 "$nvipam" "$ctx/bin/nv-ipam"
install -s -m 0755 "$tool" "$ctx/bin/nv-ipam-tool"
install -m 0755 "$entrypoint" "$ctx/entrypoint.sh"
"$podman" build --network none --pull=never --build-arg "VERSION=$version" \
	-f "$containerfile" -t "$image:$tag" "$ctx"
echo "built $image:$tag from ${#closure[@]} Debian packages: ${closure[*]}"
