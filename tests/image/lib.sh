# shellcheck shell=bash
# Shared by image.sh and multiarch.sh: runs what an image puts on a host the way
# a host without any library would, in an empty root: a directory holding only
# that binary (and, for arm64 on an amd64 machine, the static qemu-aarch64 of
# qemu-static.sh, which runs it), entered with chroot, with an empty environment.
# Needs root (chroot), the caller's $tmp and check (check WHAT COMMAND...).
# shellcheck disable=SC2154 # tmp is the caller's

empty_root_native=$(case "$(uname -m)" in x86_64) echo amd64 ;; aarch64) echo arm64 ;; *) uname -m ;; esac)
empty_root_chroot=$(command -v chroot)

# empty_root_version ARCH FILE: FILE's answer to VERSION there on stdout (its
# errors on stderr), and its exit status. cni-install and nv-ipam-tool are
# asked with --version; a plugin as a runtime asks, with CNI_COMMAND=VERSION
# and a config on stdin.
empty_root_version() {
	local arch=$1 file=$2 name=${2##*/} root qemu=() rc
	root=$(mktemp -d "$tmp/empty-root.XXXXXX")
	cp "$file" "$root/$name"
	if [ "$arch" != "$empty_root_native" ]; then
		if [ "$arch-$empty_root_native" != arm64-amd64 ]; then
			echo "empty_root_version: $arch on $empty_root_native" >&2
			return 2
		fi
		cp "$(bash "$(dirname "${BASH_SOURCE[0]}")/qemu-static.sh")" "$root/qemu-aarch64-static" || return 2
		qemu=(/qemu-aarch64-static)
	fi
	case $name in
	cni-install | nv-ipam-tool)
		env -i "$empty_root_chroot" "$root" "${qemu[@]}" "/$name" --version </dev/null ;;
	*)
		env -i CNI_COMMAND=VERSION "$empty_root_chroot" "$root" "${qemu[@]}" "/$name" \
			<<<'{"cniVersion":"0.4.0"}' ;;
	esac
	rc=$?
	rm -rf "$root"
	return $rc
}

# version_answer NAME OUTPUT: OUTPUT is what NAME answers to VERSION: a plugin's
# JSON listing the versions it supports (0.4.0 among them), the version line of
# cni-install or nv-ipam-tool.
version_answer() {
	case $1 in
	cni-install | nv-ipam-tool) [[ $2 == "$1 (cni-rdma-plugins) "* ]] ;;
	*) jq -e '.supportedVersions | index("0.4.0")' <<<"$2" >/dev/null 2>&1 ;;
	esac
}

# is_elf FILE
is_elf() { [ "$(head -c 4 "$1")" = $'\x7fELF' ]; }

# alone ARCH FILE [WHAT]: a check that FILE (WHAT in its message) answers VERSION
# in an empty root.
alone() {
	local out
	out=$(empty_root_version "$1" "$2" 2>"$tmp/alone.err")
	check "${3:-$2} answers VERSION alone in an empty root: $({ [ -z "$out" ] || echo "$out"
		cat "$tmp/alone.err"; } | head -n 1 | cut -c 1-110)" version_answer "${2##*/}" "$out"
}
