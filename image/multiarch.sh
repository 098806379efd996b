#!/usr/bin/env bash
# `ninja image-multiarch`: the plugin images for linux/amd64 and linux/arm64
# as manifest lists. The amd64 binaries are this (native) build's; the arm64
# ones come from a cross build with Debian's cross toolchain
# (image/cross/arm64.ini), configured here on first use with the options the
# binaries depend on taken from this build (OPTION...: -Dname=value), and
# built only as far as the images need. Then image/build.sh builds both
# architectures.
# Usage: multiarch.sh SOURCE_ROOT BUILD_ROOT CONTAINERFILE OUT_DIR VERSION [OPTION...]
# Environment: ARM64_BUILD (default BUILD_ROOT/arm64): the cross build
#   directory, used as it is when already configured; REPOSITORY, TAG,
#   PUSH_TO, PODMAN as for build.sh.
set -euo pipefail

[ $# -ge 5 ] || { echo "usage: $0 SOURCE_ROOT BUILD_ROOT CONTAINERFILE OUT_DIR VERSION [OPTION...]" >&2; exit 2; }
src=$1 build=$2 containerfile=$3 out=$4 version=$5
shift 5
arm64=${ARM64_BUILD:-$build/arm64}

if [ "$(uname -m)" != x86_64 ]; then
	echo "error: image-multiarch cross-builds arm64 on an amd64 machine; this one is $(uname -m)" >&2
	exit 1
fi
if ! command -v aarch64-linux-gnu-gcc >/dev/null ||
	! [ -f /usr/lib/aarch64-linux-gnu/pkgconfig/libnl-3.0.pc ]; then
	echo "error: the arm64 cross toolchain or its -dev packages are missing (tests/install-deps.sh arm64)" >&2
	exit 1
fi

. "$src/image/plugins.sh"
if [ ! -f "$arm64/build.ninja" ]; then
	meson setup "$arm64" "$src" --cross-file "$src/image/cross/arm64.ini" "$@" \
		-Dunit_tests=disabled -Dnetns_tests=disabled -De2e_tests=disabled -Dbench=disabled >/dev/null
fi
ninja -C "$arm64" "${plugin_built[@]}"
exec "$src/image/build.sh" "$containerfile" "$out" "$version" "$build=amd64" "$arm64=arm64"
