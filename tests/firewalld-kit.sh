#!/usr/bin/env bash
# firewalld for the firewall plugin's test, unpacked and never installed: installing Debian's
# firewalld would start it on the machine (on a host whose init is systemd) and take over the
# machine's own firewall. The test runs it in a network namespace of its own, on a D-Bus
# daemon of its own (tests/netns/firewall.sh).
#
# Usage: firewalld-kit.sh [DIR]   (default: FIREWALLD_KIT, else /var/cache/cni-rdma-plugins/firewalld)
# Fetches firewalld, python3-firewall and python3-nftables with apt-get download and unpacks
# them into DIR/root; their own dependencies (python3-dbus, python3-gi, gir1.2-glib-2.0,
# libnftables1, dbus) come from tests/install-deps.sh. Prints DIR.
set -euo pipefail
dir=${1:-${FIREWALLD_KIT:-/var/cache/cni-rdma-plugins/firewalld}}
if [ -x "$dir/root/usr/sbin/firewalld" ]; then
	echo "$dir"
	exit 0
fi
mkdir -p "$dir/debs"
(cd "$dir/debs" && apt-get download firewalld python3-firewall python3-nftables >/dev/null)
rm -rf "$dir/root.new"
mkdir "$dir/root.new"
for d in "$dir"/debs/*.deb; do dpkg -x "$d" "$dir/root.new"; done
mv "$dir/root.new" "$dir/root"
echo "$dir"
