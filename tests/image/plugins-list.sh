#!/usr/bin/env bash
# The plugin list of the image scripts (image/plugins.sh) against the build: meson's
# registry of plugins (every one but nv-ipam is an image's, at the path the list gives)
# and cni-install, which installs each image's plugins in the list's order and names
# them all in its --help.
# Usage: plugins-list.sh CNI_INSTALL NAME=PATH... (meson's registry, PATH relative to
#   the build directory)
# Environment: MESON_EXE_WRAPPER (meson sets it in a cross build) runs cni-install.
# Exit status: 0, 1 if a check failed, 2 on a usage error.
set -uo pipefail

[ $# -ge 2 ] || { echo "usage: $0 CNI_INSTALL NAME=PATH..." >&2; exit 2; }
read -ra run <<<"${MESON_EXE_WRAPPER:-}"
cni_install=("${run[@]}" "$1")
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/image/plugins.sh"
tmp=$(mktemp -d /tmp/cni-plugins-list.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
check() { # TITLE COMMAND...
	local title=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $title"; else echo "not ok $n - $title"; failed=$((failed + 1)); fi
}
sorted() { printf '%s\n' "$@" | sort | tr '\n' ' '; }

listed=()
for image in "${!image_plugins[@]}"; do
	read -r -a names <<<"${image_plugins[$image]}"
	listed+=("${names[@]}")
done
registry=()
for arg in "$@"; do
	name=${arg%%=*} path=${arg#*=}
	[ "$name" = nv-ipam ] && continue
	registry+=("$name")
	check "$name is built at ${plugin_built[$name]:-(not in image/plugins.sh)}" \
		[ "${plugin_built[$name]:-}" = "$path" ]
done
check "the images hold meson's plugins but nv-ipam: $(sorted "${listed[@]}")" \
	[ "$(sorted "${listed[@]}")" = "$(sorted "${registry[@]}")" ]
check "no plugin in two images" [ "$(printf '%s\n' "${listed[@]}" | sort | uniq -d)" = "" ]

# cni-install installs an image's plugins (empty files will do), named in the list's order.
for image in "${!image_plugins[@]}"; do
	mkdir -p "$tmp/$image/src" "$tmp/$image/dst"
	for name in ${image_plugins[$image]}; do : >"$tmp/$image/src/$name"; done
	"${cni_install[@]}" --no-sleep --src-dir "$tmp/$image/src" --cni-bin-dir "$tmp/$image/dst" \
		>"$tmp/$image.log" 2>&1
	check "cni-install installs $image's: ${image_plugins[$image]}" \
		grep -qF "installing ${image_plugins[$image]} (what $tmp/$image/src holds)" "$tmp/$image.log"
	check "  ... and nothing else" \
		[ "$(ls "$tmp/$image/dst" | tr '\n' ' ')" = "$(sorted ${image_plugins[$image]})" ]
done
help=$("${cni_install[@]}" --help | sed -n '/^BINARY: one of/,/\.$/p' | sed 's/^BINARY: one of//; s/\.$//')
read -r -a helped <<<"$(echo $help)"
check "cni-install --help names them all: ${helped[*]}" \
	[ "$(sorted "${helped[@]}")" = "$(sorted "${listed[@]}")" ]

echo "1..$n"
[ "$failed" -eq 0 ]
