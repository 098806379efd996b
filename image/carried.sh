#!/usr/bin/env bash
# The binaries the cniPlugins image carries unchanged from Debian's
# containernetworking-plugins package, for one architecture: those of the
# reference plugins image that this suite does not build itself. The
# package installed on this machine serves its own architecture; another
# architecture's package is fetched from Debian's archive (apt-get download,
# which needs that architecture in dpkg's list: tests/install-deps.sh arm64)
# and unpacked into a cache. Copies them into DIR and prints one line for the
# image's record: "containernetworking-plugins VERSION (Debian): NAME...".
# Usage: carried.sh ARCH DIR
# Environment: CARRIED_CACHE (default /var/cache/cni-rdma-plugins/carried).
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 ARCH DIR" >&2; exit 2; }
arch=$1 dir=$2
pkg=containernetworking-plugins
names=(bridge ipvlan vlan ptp portmap bandwidth firewall vrf dhcp)
cache=${CARRIED_CACHE:-/var/cache/cni-rdma-plugins/carried}

if [ "$arch" = "$(dpkg --print-architecture)" ] &&
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
	src=/usr/lib/cni
	version=$(dpkg-query -W -f='${Version}' "$pkg")
else
	mkdir -p "$cache"
	deb=$(find "$cache" -maxdepth 1 -name "${pkg}_*_$arch.deb" | sort -V | tail -1)
	if [ -z "$deb" ]; then
		(cd "$cache" && apt-get download -q -o APT::Sandbox::User=root "$pkg:$arch" >/dev/null) || {
			echo "error: cannot fetch $pkg:$arch from Debian's archive (is $arch in" \
				"'dpkg --print-foreign-architectures'? tests/install-deps.sh arm64 adds it)" >&2
			exit 1
		}
		deb=$(find "$cache" -maxdepth 1 -name "${pkg}_*_$arch.deb" | sort -V | tail -1)
	fi
	version=$(dpkg-deb -f "$deb" Version)
	src=$cache/$arch-$version
	if [ ! -d "$src" ]; then
		rm -rf "$src.tmp"
		dpkg-deb -x "$deb" "$src.tmp"
		mv "$src.tmp/usr/lib/cni" "$src"
		rm -rf "$src.tmp"
	fi
fi
mkdir -p "$dir"
for n in "${names[@]}"; do
	[ -x "$src/$n" ] || { echo "error: $src/$n missing from $pkg $version ($arch)" >&2; exit 1; }
	install -m 0755 "$src/$n" "$dir/$n"
done
echo "$pkg $version (Debian): ${names[*]}"
