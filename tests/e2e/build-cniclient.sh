#!/usr/bin/env bash
# Builds the e2e suite's libcni client (tests/e2e/cniclient) offline with
# Debian's Go against Debian's libcni sources (golang-github-appc-cni-dev).
# Usage: build-cniclient.sh <output-binary> [work-dir]
# The work dir (default: <output>.d next to the output) holds the Go build
# cache, an empty GOPATH and a copy of the sources, so the build writes
# nothing into the source tree, $HOME or the network.
# Both set-ups build with Debian 12's Go 1.19.8 and libcni 1.1.2 (libcni needs
# only the standard library and its own pkg/): module mode (go.mod's replace
# to the Debian sources, GOPROXY=off, GOFLAGS=-mod=mod) is used, and
# GO111MODULE=off with GOPATH=/usr/share/gocode is the fallback.
# CNI_GO_SRC overrides where the libcni sources are.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 <output-binary> [work-dir]" >&2
	exit 2
fi
src=$(cd "$(dirname "$0")/cniclient" && pwd)
out=$1
case $out in /*) ;; *) out=$PWD/$out ;; esac
work=${2:-$out.d}
case $work in /*) ;; *) work=$PWD/$work ;; esac
cni_src=${CNI_GO_SRC:-/usr/share/gocode/src/github.com/containernetworking/cni}

command -v go >/dev/null || { echo "$0: go not found (apt-get install golang-go)" >&2; exit 1; }
[ -f "$cni_src/libcni/api.go" ] ||
	{ echo "$0: libcni sources not found in $cni_src (apt-get install golang-github-appc-cni-dev)" >&2; exit 1; }

mkdir -p "$work/src" "$work/gopath" "$work/cache" "$(dirname "$out")"
rm -f "$work/src"/*
cp "$src/main.go" "$src/go.mod" "$work/src/"
[ -f "$src/go.sum" ] && cp "$src/go.sum" "$work/src/"
if [ "$cni_src" != /usr/share/gocode/src/github.com/containernetworking/cni ]; then
	sed -i "s|=> /usr/share/gocode/src/github.com/containernetworking/cni|=> $cni_src|" "$work/src/go.mod"
fi

export GOCACHE=$work/cache GOPATH=$work/gopath GOMODCACHE=$work/gopath/pkg/mod
export GOPROXY=off GOSUMDB=off GOFLAGS=-mod=mod GOWORK=off GOTOOLCHAIN=local
export GO111MODULE=on CGO_ENABLED=0
unset GOROOT_FINAL
cd "$work/src"
if ! go build -trimpath -o "$out.tmp" . 2>"$work/build.log"; then
	# Fallback: the classic GOPATH layout Debian installs libcni into.
	cat "$work/build.log" >&2
	echo "$0: module build failed, trying GO111MODULE=off GOPATH=$(dirname "$(dirname "$(dirname "$(dirname "$cni_src")")")")" >&2
	rm -f go.mod go.sum
	GO111MODULE=off GOFLAGS='' GOPATH=$(dirname "$(dirname "$(dirname "$(dirname "$cni_src")")")") \
		go build -o "$out.tmp" .
else
	cat "$work/build.log" >&2
fi
mv -f "$out.tmp" "$out"
