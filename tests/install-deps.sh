#!/usr/bin/env bash
# Installs what building, the demo and the test suites need on Debian 12.
# Usage: tests/install-deps.sh [demo|cniclient|arm64|test]
#   demo: the build and the demo; cniclient: those and the two Go packages the
#   bundled libcni client (tests/e2e/cniclient) builds from; arm64: the arm64
#   cross build (image/cross/arm64.ini) and qemu-user to run its tests; test:
#   every suite, the arm64 build included.
set -euo pipefail

what=${1:-test}
pkgs=(meson ninja-build gcc pkg-config libnl-3-dev libnl-route-3-dev
      libjson-c-dev iproute2 jq containernetworking-plugins
      libcurl4-openssl-dev libmicrohttpd-dev libyaml-dev)
if [ "$what" = cniclient ]; then
	pkgs+=(golang-go golang-github-appc-cni-dev)
fi
if [ "$what" = test ]; then
	# kmod and the archive keyring: the user-mode Linux guests of tests/kernel/
	# load their modules with modprobe; their packages are verified with the keyring.
	# nftables and iptables: the netns test of common/netfilter compares with nft and
	# reads back with iptables-save.
	# python3 and strace: the daemon suite's API server stand-in, the crash-state
	# explorer (tests/crash). iputils-ping: the bridge test's pods reach their gateway
	# (and isolated ones not each other).
	# busybox: the portmap test's web server in a pod, reached through the mappings.
	# dnsmasq-base: the DHCP server the dhcp test leases from (run by the test, no service).
	# dbus, python3-dbus, python3-gi, gir1.2-glib-2.0, libnftables1: what firewalld needs
	# to run (unpacked, not installed: tests/firewalld-kit.sh, below).
	pkgs+=(libcmocka-dev golang-go golang-github-appc-cni-dev valgrind clang strace nftables iptables python3
	       iputils-ping libclang-rt-14-dev podman runc binutils kmod debian-archive-keyring etcd-client
	       xz-utils curl openssl busybox dbus python3-dbus python3-gi gir1.2-glib-2.0
	       libnftables1 dnsmasq-base)
fi
# Debian's cross compiler links against the arm64 packages of the
# multiarch archive, which needs the architecture added to dpkg.
arm64=()
if [ "$what" = test ] || [ "$what" = arm64 ]; then
	arm64=(gcc-aarch64-linux-gnu libc6-dev:arm64 libnl-3-dev:arm64 libnl-route-3-dev:arm64
	       libjson-c-dev:arm64 libcmocka-dev:arm64
	       libcurl4-openssl-dev:arm64 libmicrohttpd-dev:arm64 libyaml-dev:arm64)
	pkgs+=("${arm64[@]}" qemu-user binutils)
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
# The firewall test's firewalld, unpacked into a cache, not installed (tests/firewalld-kit.sh).
firewalld_kit() {
	[ "$what" != test ] || "${sudo[@]}" bash "$(dirname "$0")/firewalld-kit.sh" >/dev/null
}
if [ ${#missing[@]} -eq 0 ]; then
	firewalld_kit
	exit 0
fi

# apt_get ARGS...: apt-get, waiting (up to 10 minutes) while another apt or
# dpkg (unattended-upgrades on a fresh machine) holds its locks.
apt_get() {
	local log tries=0
	log=$(mktemp)
	until DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 "$@" \
		>"$log" 2>&1; do
		if ! grep -q 'Could not get lock' "$log" || [ $((tries += 1)) -ge 120 ]; then
			cat "$log" >&2
			rm -f "$log"
			return 1
		fi
		[ "$tries" -eq 1 ] && echo "waiting for another package manager to finish" >&2
		sleep 5
	done
	rm -f "$log"
}

echo "installing: ${missing[*]}" >&2
if [ ${#arm64[@]} -gt 0 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	"${sudo[@]}" dpkg --add-architecture arm64
fi
apt_get update -qq
apt_get install -y -qq --no-install-recommends "${missing[@]}"
firewalld_kit
