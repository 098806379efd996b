#!/usr/bin/env bash
# The binaries the cniPlugins image carries: those of the reference plugins
# image that this suite does not make (NAMES below), built here fully static
# from Debian's source package of containernetworking-plugins, for one
# architecture. Debian's own builds of them are linked against glibc 2.34 and
# newer; copied onto a RHEL 8 node (glibc 2.28), loopback could not start and
# no pod there would.
#
# The source is that of the containernetworking-plugins package installed
# here (Debian 12: golang-github-containernetworking-plugins 1.1.1+ds1-3),
# with Debian's patches. It is built as dh-golang builds it (GOPATH mode over
# the /usr/share/gocode trees of the golang-*-dev packages its Build-Depends
# names, and those they depend on) with Debian's Go, offline (GOPROXY=off),
# with CGO_ENABLED=0, -trimpath and -ldflags '-s -w'. The source and those
# packages are fetched once through apt lists of their own
# (image/debian-archive.sh) and the packages unpacked, not installed (one of
# them would bring libsystemd-dev and upgrade systemd). The binaries are kept
# per source version, Go version and architecture: a second image build
# compiles nothing.
#
# Usage: carried.sh names           the names, on one line
#        carried.sh dir ARCH         builds them unless kept, prints their directory
#        carried.sh install ARCH DIR copies them into DIR and prints the image's
#          record: "containernetworking-plugins VERSION (Debian source, built
#          static, GO_VERSION): NAME..."
#   ARCH: amd64 or arm64.
# Environment: CARRIED_CACHE (default /var/cache/cni-rdma-plugins/carried).
set -euo pipefail

# The reference plugins we carry; one that becomes ours leaves this list.
names=(dhcp)
pkg=containernetworking-plugins
import=github.com/containernetworking/plugins
go=/usr/bin/go

usage() { echo "usage: $0 names | dir ARCH | install ARCH DIR" >&2; exit 2; }
[ $# -ge 1 ] || usage
if [ "$1" = names ]; then
	[ $# -eq 1 ] || usage
	echo "${names[*]}"
	exit 0
fi
case "$1 $#" in
"dir 2" | "install 3") ;;
*) usage ;;
esac
what=$1 arch=$2
case $arch in
amd64 | arm64) ;;
*) echo "error: ARCH $arch: amd64 or arm64" >&2; exit 2 ;;
esac
cache=${CARRIED_CACHE:-/var/cache/cni-rdma-plugins/carried}
here=$(cd "$(dirname "$0")" && pwd)

read -r state src version < <(dpkg-query -W -f='${db:Status-Status} ${source:Package} ${source:Version}\n' \
	"$pkg" 2>/dev/null) && [ "$state" = installed ] || {
	echo "error: $pkg is not installed: the source of its version is the one built (tests/install-deps.sh)" >&2
	exit 1
}
[ -x "$go" ] || { echo "error: $go missing (golang-go; tests/install-deps.sh test)" >&2; exit 1; }
go_version=$("$go" env GOVERSION)
goenv=(CGO_ENABLED=0 GOOS=linux GOARCH="$arch" GO111MODULE=off)
# The plugins' build version is the Debian version they are built from.
ldflags="-s -w -X $import/pkg/utils/buildversion.BuildVersion=$version"
# What the build is, beside the key: a kept build made otherwise is made again.
recipe="${goenv[*]} go build -trimpath -ldflags '$ldflags'"
out=$cache/out/${version}_$go_version/$arch

# kept: out holds every name, built by this recipe.
kept() {
	[ "$(cat "$out/.recipe" 2>/dev/null)" = "$recipe" ] || return 1
	for n in "${names[@]}"; do
		[ -f "$out/$n" ] || return 1
	done
}

# fetch_source DEST: Debian's source package, unpacked (patches applied) in DEST/tree,
# and in DEST/gocode the /usr/share/gocode of the golang-*-dev packages it
# builds with (DEST/gocode.list: each name and version).
fetch_source() {
	local dest=$1 tmp dsc deps
	tmp=$dest.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp/debs"
	(cd "$tmp" && bash "$here/debian-archive.sh" "$cache/apt" apt-get -qq source "$src=$version" >/dev/null) || {
		echo "error: cannot fetch Debian's source $src $version" >&2
		return 1
	}
	dsc=$(find "$tmp" -maxdepth 1 -name '*.dsc')
	mv "$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name "$src-*")" "$tmp/tree"
	# Build-Depends is one field, folded over lines; golang-any is Go itself.
	deps=$(awk '/^Build-Depends:/ { f = 1; sub(/^Build-Depends:/, ""); print; next }
		f && /^[ \t]/ { print; next } { f = 0 }' "$dsc" |
		tr ',' '\n' | sed -n 's/^[ \t]*\(golang-[^ ]*-dev\).*/\1/p')
	[ -n "$deps" ] || { echo "error: no golang-*-dev in $dsc's Build-Depends" >&2; return 1; }
	# shellcheck disable=SC2086 # one package name a word
	deps=$(bash "$here/debian-archive.sh" "$cache/apt" apt-cache depends --recurse --no-recommends \
		--no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances $deps |
		grep -x 'golang-.*-dev' | sort -u)
	# shellcheck disable=SC2086
	(cd "$tmp/debs" && bash "$here/debian-archive.sh" "$cache/apt" apt-get -qq download $deps >/dev/null)
	for deb in "$tmp"/debs/*.deb; do
		dpkg-deb -x "$deb" "$tmp/root"
		dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb" >>"$tmp/gocode.list"
	done
	mv "$tmp/root/usr/share/gocode" "$tmp/gocode"
	rm -rf "$tmp/root" "$tmp/debs" "$dest"
	mv "$tmp" "$dest"
}

# build: the names for ARCH into out.
build() {
	local srcdir=$cache/src/$version work pkgs=() n d
	if [ ! -d "$srcdir/gocode" ]; then
		fetch_source "$srcdir"
	fi
	work=$(mktemp -d "$cache/build.XXXXXX")
	# shellcheck disable=SC2064 # work is fixed here
	trap "rm -rf '$work'" EXIT
	mkdir -p "$work/gopath/src/${import%/*}" "$work/out"
	cp -a "$srcdir/tree" "$work/gopath/src/$import"
	for n in "${names[@]}"; do
		d=$(cd "$work/gopath/src/$import" && find plugins -mindepth 2 -maxdepth 2 -type d -name "$n")
		[ -n "$d" ] && [ "$(wc -l <<<"$d")" -eq 1 ] ||
			{ echo "error: not one plugins/*/$n in $src $version: $d" >&2; return 1; }
		pkgs+=("$import/$d")
	done
	echo "carried.sh: building ${names[*]} from $src $version for $arch with $go_version" >&2
	(cd "$work/gopath/src/$import" &&
		env -i PATH=/usr/bin:/bin HOME="$work" GOENV=off GOTOOLCHAIN=local GOPROXY=off GOFLAGS= \
			GOPATH="$work/gopath:$srcdir/gocode" GOCACHE="$work/gocache" "${goenv[@]}" \
			"$go" build -trimpath -ldflags "$ldflags" -o "$work/out/" "${pkgs[@]}")
	cp "$srcdir/gocode.list" "$work/out/.gocode"
	echo "$recipe" >"$work/out/.recipe"
	rm -rf "$out"
	mkdir -p "${out%/*}"
	mv "$work/out" "$out"
}

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9
# (Not "kept || build": set -e would not apply inside build.)
if ! kept; then
	build
fi
if [ "$what" = dir ]; then
	echo "$out"
	exit 0
fi
dir=$3
mkdir -p "$dir"
for n in "${names[@]}"; do
	install -m 0755 "$out/$n" "$dir/$n"
done
echo "$pkg $version (Debian source, built static, $go_version): ${names[*]}"
