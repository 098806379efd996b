#!/usr/bin/env bash
# The multi-arch plugin images (ninja image-multiarch) and the arm64 build:
# every installed binary of the arm64 cross build is fully static and for
# AArch64; the images are built offline with a tag of this run's own and
# their manifest lists pushed to an OCI image layout, which is read back
# from its blobs: each list names exactly linux/amd64 and linux/arm64, each
# platform's image has that architecture in its config, cni-install as its
# entrypoint, its slot's binaries and nothing else, each the build's binary
# stripped, static and for that machine (dhcp too: nothing carried); every ELF of each
# platform's image answers VERSION in an empty root (a directory holding only
# that binary, chroot; the arm64 ones beside a static qemu-aarch64,
# qemu-static.sh); and the arm64 image's cni-install,
# run under qemu-user on the image's own files, installs exactly its set. Then the nv-ipam
# image (ninja image-nv-ipam-multiarch) the same way: a list of both platforms, each with the
# build's four binaries (nv-ipam and nv-ipam-tool static, answering VERSION in an empty
# root, where the dynamic ipam-node does not start), ipam-node and ipam-controller
# starting from the image's own loader and libraries (the arm64 ones under qemu-user).
# Usage: multiarch.sh NATIVE_BUILD_DIR ARM64_BUILD_DIR
# Needs root (podman, chroot), jq, readelf, qemu-aarch64 (package qemu-user).
# Environment: QEMU_STATIC_CACHE (qemu-static.sh).
set -uo pipefail

[ $# -eq 2 ] || { echo "usage: $0 NATIVE_BUILD_DIR ARM64_BUILD_DIR" >&2; exit 2; }
# Absolute: ninja runs the image targets from inside the native build.
native=$(cd "$1" && pwd) arm64=$(cd "$2" && pwd) || exit 2
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/image/plugins.sh"
declare -n built=plugin_built slot=image_plugins
built+=([nv-ipam]=ipam/nv-ipam/nv-ipam [nv-ipam-tool]=ipam/nv-ipam/tool/nv-ipam-tool)
declare -A machine=([amd64]="Advanced Micro Devices X86-64" [arm64]=AArch64)
declare -A strip=([amd64]=x86_64-linux-gnu-strip [arm64]=aarch64-linux-gnu-strip)
declare -A dir=([amd64]=$native [arm64]=$arm64)

[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (podman)"; exit 77; }
for p in podman jq readelf qemu-aarch64 aarch64-linux-gnu-strip chroot; do
	command -v "$p" >/dev/null || { echo "error: $p missing (tests/install-deps.sh test)" >&2; exit 2; }
done
# shellcheck source=tests/image/lib.sh
. "$top/tests/image/lib.sh"

tag=test-$$$RANDOM
tmp=$(mktemp -d /tmp/cni-multiarch-test.XXXXXX)
cleanup() {
	for name in "${!slot[@]}" nv-ipam; do
		podman rmi "localhost/$name:$tag-amd64" "localhost/$name:$tag-arm64" >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
finish() { echo "$((n - failed)) passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

# elf FILE: "static" or "dynamic", then readelf's machine.
elf() {
	local link=static
	LC_ALL=C readelf -lW "$1" | grep -q 'INTERP\|DYNAMIC' && link=dynamic
	echo "$link $(LC_ALL=C readelf -h "$1" | sed -n 's/^ *Machine: *//p')"
}

echo "# the arm64 build's binaries"
for b in "${!built[@]}"; do
	f=$arm64/${built[$b]}
	check "$b: $(elf "$f") (want static AArch64)" [ "$(elf "$f")" = "static AArch64" ]
done

echo "# ninja image-multiarch"
mkdir "$tmp/oci"
if TAG=$tag PUSH_TO=oci:$tmp/oci/ ARM64_BUILD=$arm64 ninja -C "$native" image-multiarch \
	>"$tmp/build.log" 2>&1; then
	ok "ninja image-multiarch"
else
	not_ok "ninja image-multiarch"; tail -20 "$tmp/build.log"; finish
fi
# While a list is in podman's storage, podman 4.3 fails every `podman images`.
for name in "${!slot[@]}"; do
	check "$name: no manifest list left in podman's storage" \
		bash -c '! podman manifest exists "$1" 2>/dev/null && ! podman image exists "$1"' _ "localhost/$name:$tag-list"
done

# blob LAYOUT DIGEST: the path of a blob of an OCI image layout.
blob() { echo "$1/blobs/${2%%:*}/${2#*:}"; }
for name in cni-rdma-plugins cni-rdma-ipoib; do
	layout=$tmp/oci/$name
	list=$(jq -r --arg t "$tag" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' \
		"$layout/index.json" 2>/dev/null)
	check "$name: the layout holds $tag" [ -n "$list" ]
	[ -n "$list" ] || continue
	platforms=$(jq -r '[.manifests[].platform | "\(.os)/\(.architecture)"] | sort | join(" ")' "$(blob "$layout" "$list")")
	check "$name: a manifest list of $platforms (want linux/amd64 linux/arm64)" \
		[ "$platforms" = "linux/amd64 linux/arm64" ]
	for arch in amd64 arm64; do
		m=$(jq -r --arg a "$arch" '.manifests[] | select(.platform.architecture == $a) | .digest' "$(blob "$layout" "$list")")
		[ -n "$m" ] || continue
		cfg=$(blob "$layout" "$(jq -r .config.digest "$(blob "$layout" "$m")")")
		got=$(jq -c '[.os, .architecture, .config.Entrypoint, .config.Cmd]' "$cfg")
		check "$name $arch: config $got" [ "$got" = "[\"linux\",\"$arch\",[\"/usr/bin/cni-install\"],null]" ]
		root=$tmp/root-$name-$arch
		mkdir "$root"
		for layer in $(jq -r '.layers[].digest' "$(blob "$layout" "$m")"); do
			tar -xf "$(blob "$layout" "$layer")" -C "$root"
		done
		files=$(cd "$root" && find . -type f | sort | tr '\n' ' ')
		want=$({ for b in ${slot[$name]}; do echo "./opt/cni-rdma-plugins/bin/$b"; done
			echo ./usr/bin/cni-install; } | sort | tr '\n' ' ')
		check "$name $arch: $files(nothing else)" [ "$files" = "$want" ]
		for b in ${slot[$name]} cni-install; do
			f=$root/opt/cni-rdma-plugins/bin/$b
			[ "$b" = cni-install ] && f=$root/usr/bin/cni-install
			"${strip[$arch]}" -o "$tmp/stripped" "${dir[$arch]}/${built[$b]}"
			check "$name $arch: $b is the build's, stripped, $(elf "$f")" \
				bash -c '[ "$(cat)" = "static $2" ] && cmp -s "$1" "$3"' _ "$f" "${machine[$arch]}" \
				"$tmp/stripped" < <(elf "$f")
		done
		elves=0
		while IFS= read -r -d '' f; do
			is_elf "$f" || continue
			elves=$((elves + 1))
			alone "$arch" "$f" "$name $arch ${f#"$root"}"
		done < <(find "$root" -type f -print0 | sort -z)
		check "$name $arch: $elves ELF files run (want $(($(wc -w <<<"${slot[$name]}") + 1)))" \
			[ "$elves" = $(($(wc -w <<<"${slot[$name]}") + 1)) ]
		[ "$arch" = arm64 ] || continue
		host=$tmp/host-$name
		mkdir "$host"
		printf 'nv-ipam of the nv-ipam image\n' >"$host/nv-ipam"
		log=$(qemu-aarch64 "$root/usr/bin/cni-install" --src-dir "$root/opt/cni-rdma-plugins/bin" \
			--cni-bin-dir "$host" --no-sleep 2>&1)
		check "$name arm64: its cni-install under qemu-user exits 0" [ $? -eq 0 ]
		check "  ... installs ${slot[$name]} and nothing else: $(ls "$host" | tr '\n' ' ')" \
			[ "$(ls "$host" | tr '\n' ' ')" = "$(echo ${slot[$name]} nv-ipam | tr ' ' '\n' | sort | tr '\n' ' ')" ]
		for b in ${slot[$name]}; do
			check "  ... $b is the image's" cmp -s "$root/opt/cni-rdma-plugins/bin/$b" "$host/$b"
		done
	done
done

echo "# ninja image-nv-ipam-multiarch"
if TAG=$tag PUSH_TO=oci:$tmp/oci/ ARM64_BUILD=$arm64 ninja -C "$native" image-nv-ipam-multiarch \
	>"$tmp/nvi-build.log" 2>&1; then
	ok "ninja image-nv-ipam-multiarch"
else
	not_ok "ninja image-nv-ipam-multiarch"; tail -20 "$tmp/nvi-build.log"; finish
fi
check "nv-ipam: no manifest list left in podman's storage" \
	bash -c '! podman manifest exists "$1" 2>/dev/null && ! podman image exists "$1"' _ "localhost/nv-ipam:$tag-list"
layout=$tmp/oci/nv-ipam
list=$(jq -r --arg t "$tag" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' \
	"$layout/index.json" 2>/dev/null)
check "nv-ipam: the layout holds $tag" [ -n "$list" ]
[ -n "$list" ] || finish
platforms=$(jq -r '[.manifests[].platform | "\(.os)/\(.architecture)"] | sort | join(" ")' "$(blob "$layout" "$list")")
check "nv-ipam: a manifest list of $platforms (want linux/amd64 linux/arm64)" \
	[ "$platforms" = "linux/amd64 linux/arm64" ]
declare -A nvi_built=([ipam-node]=ipam/nv-ipam/ipam-node [ipam-controller]=ipam/nv-ipam/controller/ipam-controller
	[nv-ipam]=ipam/nv-ipam/nv-ipam [nv-ipam-tool]=ipam/nv-ipam/tool/nv-ipam-tool)
for arch in amd64 arm64; do
	m=$(jq -r --arg a "$arch" '.manifests[] | select(.platform.architecture == $a) | .digest' "$(blob "$layout" "$list")")
	[ -n "$m" ] || continue
	cfg=$(blob "$layout" "$(jq -r .config.digest "$(blob "$layout" "$m")")")
	got=$(jq -c '[.os, .architecture, .config.Cmd]' "$cfg")
	check "nv-ipam $arch: config $got" [ "$got" = "[\"linux\",\"$arch\",[\"/ipam-node\"]]" ]
	root=$tmp/root-nv-ipam-$arch
	mkdir "$root"
	for layer in $(jq -r '.layers[].digest' "$(blob "$layout" "$m")"); do
		tar -xf "$(blob "$layout" "$layer")" -C "$root"
	done
	for b in "${!nvi_built[@]}"; do
		"${strip[$arch]}" -o "$tmp/stripped" "${dir[$arch]}/${nvi_built[$b]}"
		check "nv-ipam $arch: /$b is the build's, stripped, for ${machine[$arch]}" \
			bash -c 'cmp -s "$1" "$2" && LC_ALL=C readelf -h "$1" | grep -q "Machine: *$3"' _ \
			"$root/$b" "$tmp/stripped" "${machine[$arch]}"
	done
	for b in nv-ipam nv-ipam-tool; do
		check "nv-ipam $arch: /$b is $(elf "$root/$b") (ipam-node copies it onto hosts)" \
			[ "$(elf "$root/$b")" = "static ${machine[$arch]}" ]
		alone "$arch" "$root/$b" "nv-ipam $arch /$b"
	done
	out=$(empty_root_version "$arch" "$root/ipam-node" 2>&1)
	rc=$?
	check "nv-ipam $arch: ipam-node, dynamic, does not start in an empty root (the control): exit status $rc, $out" \
		bash -c '[ "$1" -ne 0 ] && [[ $2 != *"{"* ]]' _ "$rc" "$out"
	# ipam-node and ipam-controller start from the image's own loader and libraries.
	run=()
	[ "$arch" = amd64 ] || run=(qemu-aarch64 -L "$root")
	[ "$arch" = arm64 ] || run=("$root/lib64/ld-linux-x86-64.so.2" --library-path "$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu")
	for b in ipam-node ipam-controller; do
		out=$("${run[@]}" "$root/$b" --version 2>&1)
		check "nv-ipam $arch: /$b --version from the image's libraries: $out" \
			bash -c '[[ $1 == "$2 "* ]]' _ "$out" "$b"
	done
done
finish
