#!/usr/bin/env bash
# Builds the image localhost/cni-rdma-plugins:<tag> from image/Containerfile
# with podman, offline (FROM scratch: nothing is pulled). Every binary must be
# fully static: the image has no loader and no library.
# Usage: build.sh CONTAINERFILE CONTEXT_DIR VERSION CNI_INSTALL BINARY...
# Environment: IMAGE (default localhost/cni-rdma-plugins), TAG (default latest),
#   PODMAN (default podman).
set -euo pipefail

[ $# -ge 5 ] || { echo "usage: $0 CONTAINERFILE CONTEXT_DIR VERSION CNI_INSTALL BINARY..." >&2; exit 2; }
containerfile=$1 ctx=$2 version=$3 installer=$4
shift 4
image=${IMAGE:-localhost/cni-rdma-plugins}
tag=${TAG:-latest}
podman=${PODMAN:-podman}

command -v "$podman" >/dev/null || { echo "error: $podman not found (apt-get install podman)" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
	echo "error: the image is built with root's podman (run as root or with sudo)" >&2
	exit 1
fi

# static FILE: no program interpreter, no dynamic section.
static() {
	! LC_ALL=C readelf -lW "$1" | grep -q 'INTERP\|DYNAMIC'
}

rm -rf "$ctx"
mkdir -p "$ctx/bin"
for f in "$installer" "$@"; do
	if ! static "$f"; then
		echo "error: $f is not fully static; configure the build with -Dstatic=true" >&2
		exit 1
	fi
done
# Stripped: debug sections are never loaded, but every node pulls them.
install -s -m 0755 "$installer" "$ctx/cni-install"
for f in "$@"; do
	install -s -m 0755 "$f" "$ctx/bin/$(basename "$f")"
done
"$podman" build --network none --pull=never --build-arg "VERSION=$version" \
	-f "$containerfile" -t "$image:$tag" "$ctx"
echo "built $image:$tag:"
ls -l "$ctx/bin" "$ctx/cni-install"
