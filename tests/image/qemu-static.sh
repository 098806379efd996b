#!/usr/bin/env bash
# Prints the path of a statically linked qemu-aarch64 (Debian's
# qemu-user-static), which runs an arm64 binary inside a root holding
# nothing but the two. The package is fetched once through apt lists of
# their own (image/debian-archive.sh) and only that program taken from it:
# installing it would register binfmt_misc handlers for the whole machine.
# Usage: qemu-static.sh
# Environment: QEMU_STATIC_CACHE (default /var/cache/cni-rdma-plugins/qemu-user-static).
set -euo pipefail

cache=${QEMU_STATIC_CACHE:-/var/cache/cni-rdma-plugins/qemu-user-static}
top=$(cd "$(dirname "$0")/../.." && pwd)
prog=$cache/qemu-aarch64-static
mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9
if [ ! -x "$prog" ]; then
	tmp=$(mktemp -d "$cache/fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && bash "$top/image/debian-archive.sh" "$cache/apt" apt-get -qq download qemu-user-static >/dev/null)
	dpkg-deb --fsys-tarfile "$tmp"/qemu-user-static_*.deb | tar -x -C "$tmp" ./usr/bin/qemu-aarch64-static
	mv "$tmp/usr/bin/qemu-aarch64-static" "$prog"
fi
echo "$prog"
