#!/usr/bin/env bash
# Builds the plugin images, one per Network Operator slot, with podman,
# offline (FROM scratch: nothing is pulled), from the static binaries of one
# build directory per architecture:
#
#   image             slot                          binaries (image/plugins.sh)
#   cni-rdma-plugins  secondaryNetwork.cniPlugins   every plugin of the suite but
#                                                   ipoib and nv-ipam
#   cni-rdma-ipoib    secondaryNetwork.ipoib        ipoib
#
# each with cni-install as its default command, which installs what the
# image holds. nv-ipam and nv-ipam-tool are the nv-ipam image's, not in these.
# Every binary of an image is this suite's, of the one version in its labels:
# the cniPlugins image holds every binary the reference plugins image put on a
# node.
#
# Every file of an image lands on a node's host: before podman sees them,
# every ELF among them must be free of the host's libraries (no program
# interpreter, no DT_NEEDED: image/check-static.sh) and for the image's
# architecture, or nothing is built.
#
# With one architecture an image is REPOSITORY/NAME:TAG in podman's storage.
# With several, each architecture's image is REPOSITORY/NAME:TAG-ARCH there,
# and a manifest list of them (podman manifest) is pushed, with its images,
# to PUSH_TO<NAME>:TAG, by default an OCI image layout OUT_DIR/oci/NAME
# (podman manifest push --all; skopeo copy --all oci:... docker://... takes
# it to a registry); PUSH_TO=docker://registry.example.com/cni-rdma/ pushes
# to a registry directly. The list is removed from podman's storage once
# pushed: while one is there, podman 4.3 fails every `podman images`
# (podman#19757). A name already in use is taken over.
# Usage: build.sh CONTAINERFILE OUT_DIR VERSION BUILD_DIR=ARCH...
#   ARCH: amd64 or arm64; every binary must be fully static and for ARCH.
# Environment: REPOSITORY (default localhost), TAG (default latest),
#   PUSH_TO (default oci:OUT_DIR/oci/), PODMAN (default podman).
set -euo pipefail

usage() { echo "usage: $0 CONTAINERFILE OUT_DIR VERSION BUILD_DIR=ARCH..." >&2; exit 2; }
[ $# -ge 4 ] || usage
containerfile=$1 out=$2 version=$3
shift 3
repository=${REPOSITORY:-localhost}
tag=${TAG:-latest}
push_to=${PUSH_TO:-oci:$out/oci/}
podman=${PODMAN:-podman}

images=(cni-rdma-plugins cni-rdma-ipoib)
here=$(dirname "$0")
. "$here/plugins.sh"
declare -A slot=([cni-rdma-plugins]=secondaryNetwork.cniPlugins [cni-rdma-ipoib]=secondaryNetwork.ipoib)
# Per architecture: readelf's name of the machine, the binutils that strip it.
declare -A machine=([amd64]="Advanced Micro Devices X86-64" [arm64]=AArch64)
declare -A strip=([amd64]=x86_64-linux-gnu-strip [arm64]=aarch64-linux-gnu-strip)

for p in "$podman" readelf; do
	command -v "$p" >/dev/null || { echo "error: $p not found (tests/install-deps.sh test)" >&2; exit 1; }
done
if [ "$(id -u)" -ne 0 ]; then
	echo "error: the images are built with root's podman (run as root or with sudo)" >&2
	exit 1
fi

# machine FILE ARCH: FILE is for ARCH.
machine() {
	local m
	m=$(LC_ALL=C readelf -h "$1" | sed -n 's/^ *Machine: *//p')
	if [ "$m" != "${machine[$2]}" ]; then
		echo "error: $1 is for \"$m\", not $2 (\"${machine[$2]}\")" >&2
		return 1
	fi
}
# check FILE ARCH: a binary of a build directory is fully static and for ARCH.
check() {
	bash "$here/check-static.sh" "$1" ||
		{ echo "error: configure the build with -Dstatic=true" >&2; return 1; }
	machine "$1" "$2"
}

dirs=() archs=()
for spec in "$@"; do
	dir=${spec%=*} arch=${spec##*=}
	[ "$dir" != "$spec" ] && [ -n "${machine[$arch]:-}" ] || {
		echo "error: \"$spec\" is not BUILD_DIR=amd64 or BUILD_DIR=arm64" >&2
		exit 2
	}
	command -v "${strip[$arch]}" >/dev/null ||
		{ echo "error: ${strip[$arch]} not found (tests/install-deps.sh)" >&2; exit 1; }
	for b in "${plugin_built[@]}"; do
		check "$dir/$b" "$arch" || exit 1
	done
	dirs+=("$dir") archs+=("$arch")
done

# forget REF: REF names nothing afterwards (a list is removed, an image untagged).
forget() {
	if "$podman" manifest exists "$1" 2>/dev/null; then
		"$podman" manifest rm "$1" >/dev/null
	elif "$podman" image exists "$1"; then
		"$podman" untag "$1" "$1"
	fi
}

list=
# A list left by a failed push would break `podman images`.
trap '[ -z "$list" ] || "$podman" manifest rm "$list" >/dev/null 2>&1' EXIT
rm -rf "$out/context"
if [ -z "${PUSH_TO:-}" ] && [ ${#dirs[@]} -gt 1 ]; then
	rm -rf "$out/oci"
	mkdir -p "$out/oci"
fi
for name in "${images[@]}"; do
	refs=()
	for i in "${!dirs[@]}"; do
		dir=${dirs[$i]} arch=${archs[$i]}
		c=$out/context/$name-$arch
		mkdir -p "$c/opt/bin"
		# Stripped: debug sections are never loaded, but every node pulls them.
		install -s --strip-program="${strip[$arch]}" -m 0755 "$dir/${plugin_built[cni-install]}" "$c/cni-install"
		for b in ${image_plugins[$name]}; do
			install -s --strip-program="${strip[$arch]}" -m 0755 "$dir/${plugin_built[$b]}" "$c/opt/bin/$b"
		done
		# What the image puts on hosts, as podman will see it.
		bash "$here/check-static.sh" "$c" || {
			echo "error: $name ($arch) not built: a file of it would need the host's libraries" >&2
			exit 1
		}
		while IFS= read -r -d '' f; do
			[ "$(head -c 4 "$f")" != $'\x7fELF' ] || machine "$f" "$arch" || exit 1
		done < <(find "$c" -type f -print0)
		ref=$repository/$name:$tag
		[ ${#dirs[@]} -eq 1 ] || ref+=-$arch
		forget "$ref"
		# No cache: podman 4.3 takes a cached FROM scratch layer for another platform.
		"$podman" build --no-cache --network none --pull=never --platform "linux/$arch" \
			--build-arg "VERSION=$version" --build-arg "TITLE=$name" \
			--build-arg "DESCRIPTION=${slot[$name]} slot: ${image_plugins[$name]} (static) with cni-install" \
			-f "$containerfile" -t "$ref" "$c" >/dev/null
		refs+=("$ref")
		echo "built $ref ($arch, ${slot[$name]}): $(cd "$c" && du -b cni-install opt/bin/* | awk '{printf "%s%s %d", s, $2, $1; s=", "}')"
	done
	if [ ${#dirs[@]} -gt 1 ]; then
		list=$repository/$name:$tag-list
		forget "$list"
		"$podman" manifest create "$list" >/dev/null
		for ref in "${refs[@]}"; do
			"$podman" manifest add "$list" "containers-storage:$ref" >/dev/null
		done
		"$podman" manifest push --quiet --all --rm "$list" "$push_to$name:$tag"
		list=
		echo "manifest list of ${archs[*]} pushed to $push_to$name:$tag"
	fi
done
