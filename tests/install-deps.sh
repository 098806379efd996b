#!/usr/bin/env bash
# Installs what building, the demo and the test suites need on Debian 12.
# Usage: tests/install-deps.sh [demo|test]
set -euo pipefail

what=${1:-test}
pkgs=(meson ninja-build gcc pkg-config libnl-3-dev libnl-route-3-dev libmnl-dev
      libjson-c-dev iproute2 jq containernetworking-plugins)
if [ "$what" = test ]; then
	pkgs+=(libcmocka-dev golang-go golang-github-appc-cni-dev valgrind clang
	       libclang-rt-14-dev)
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "installing: ${missing[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
