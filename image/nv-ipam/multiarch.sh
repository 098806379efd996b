#!/usr/bin/env bash
# `ninja image-nv-ipam-multiarch`: the nv-ipam image for linux/amd64 and linux/arm64 under
# one manifest list. The amd64 image is this (native) build's; the arm64 binaries come from
# the cross build (image/cross/arm64.ini, as image/multiarch.sh configures it), ipam-node and
# ipam-controller with the arm64 packages' shared libraries (image/nv-ipam/build.sh, ARCH).
# Each architecture's image is IMAGE:TAG-ARCH in podman's storage; the list is pushed, with
# its images, to PUSH_TO nv-ipam:TAG, by default the OCI image layout OUT_DIR/oci/nv-ipam.
# Usage: multiarch.sh SOURCE_ROOT BUILD_ROOT CONTAINERFILE OUT_DIR VERSION [OPTION...]
# Environment: ARM64_BUILD (default BUILD_ROOT/arm64), IMAGE (default localhost/nv-ipam),
#   TAG (default latest), PUSH_TO (default oci:OUT_DIR/oci/), PODMAN (default podman).
set -euo pipefail

[ $# -ge 5 ] || { echo "usage: $0 SOURCE_ROOT BUILD_ROOT CONTAINERFILE OUT_DIR VERSION [OPTION...]" >&2; exit 2; }
src=$1 build=$2 containerfile=$3 out=$4 version=$5
shift 5
arm64=${ARM64_BUILD:-$build/arm64}
image=${IMAGE:-localhost/nv-ipam}
tag=${TAG:-latest}
podman=${PODMAN:-podman}
push_to=${PUSH_TO:-oci:$out/oci/}

if [ "$(uname -m)" != x86_64 ]; then
	echo "error: image-nv-ipam-multiarch cross-builds arm64 on an amd64 machine; this one is $(uname -m)" >&2
	exit 1
fi
for pc in libnl-3.0 libcurl libmicrohttpd yaml-0.1; do
	if ! command -v aarch64-linux-gnu-gcc >/dev/null ||
		! [ -f "/usr/lib/aarch64-linux-gnu/pkgconfig/$pc.pc" ]; then
		echo "error: the arm64 cross toolchain or its -dev packages ($pc) are missing (tests/install-deps.sh arm64)" >&2
		exit 1
	fi
done

targets=(ipam/nv-ipam/ipam-node ipam/nv-ipam/controller/ipam-controller ipam/nv-ipam/nv-ipam
	ipam/nv-ipam/tool/nv-ipam-tool)
if [ ! -f "$arm64/build.ninja" ]; then
	meson setup "$arm64" "$src" --cross-file "$src/image/cross/arm64.ini" "$@" \
		-Dunit_tests=disabled -Dnetns_tests=disabled -De2e_tests=disabled -Dbench=disabled >/dev/null
fi
ninja -C "$arm64" "${targets[@]}"

list=$image:$tag-list
# A list left by a failed push would break `podman images`.
trap '"$podman" manifest rm "$list" >/dev/null 2>&1 || true' EXIT
refs=()
for arch in amd64 arm64; do
	dir=$build
	[ "$arch" = amd64 ] || dir=$arm64
	ARCH=$arch IMAGE=$image TAG=$tag-$arch PODMAN=$podman "$src/image/nv-ipam/build.sh" \
		"$containerfile" "$out/nv-ipam-$arch" "$version" "$dir/${targets[0]}" "$dir/${targets[2]}" \
		"$dir/${targets[3]}" "$dir/${targets[1]}" | tail -1
	refs+=("$image:$tag-$arch")
done
if "$podman" manifest exists "$list" 2>/dev/null; then
	"$podman" manifest rm "$list" >/dev/null
fi
if [ -z "${PUSH_TO:-}" ]; then
	rm -rf "$out/oci/nv-ipam"
	mkdir -p "$out/oci"
fi
"$podman" manifest create "$list" >/dev/null
for ref in "${refs[@]}"; do
	"$podman" manifest add "$list" "containers-storage:$ref" >/dev/null
done
"$podman" manifest push --quiet --all --rm "$list" "${push_to}nv-ipam:$tag"
echo "manifest list of amd64 arm64 pushed to ${push_to}nv-ipam:$tag"
