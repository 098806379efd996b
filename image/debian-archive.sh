#!/usr/bin/env bash
# Runs apt-get or apt-cache against Debian's archive for this machine's
# release and architecture through a configuration, lists and state of their
# own under DIR: nothing of the machine's apt sources, lists or installed
# state is read or changed, so that a source package (no deb-src line is
# needed on the machine) or a package that must not be installed here can be
# fetched. The lists cover the release, its -updates and -security suites,
# binary and source, and are fetched again when older than a day. One run at
# a time per DIR.
# Usage: debian-archive.sh DIR apt-get|apt-cache ARG...
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: $0 DIR apt-get|apt-cache ARG..." >&2; exit 2; }
dir=$1 tool=$2
shift 2
case $tool in
apt-get | apt-cache) ;;
*) echo "$0: $tool: apt-get or apt-cache" >&2; exit 2 ;;
esac
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || { echo "$0: $keyring missing (debian-archive-keyring)" >&2; exit 1; }
release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$release" ] || { echo "$0: no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }
arch=$(dpkg --print-architecture)

mkdir -p "$dir/lists/partial" "$dir/archives/partial" "$dir/etc/apt.conf.d" \
	"$dir/etc/preferences.d" "$dir/etc/sources.list.d"
exec 9>"$dir/lock"
flock 9
for type in deb deb-src; do
	for suite in "$release main" "$release-updates main"; do
		printf '%s [signed-by=%s] http://deb.debian.org/debian %s\n' "$type" "$keyring" "$suite"
	done
	printf '%s [signed-by=%s] http://deb.debian.org/debian-security %s-security main\n' \
		"$type" "$keyring" "$release"
done >"$dir/etc/sources.list"
opts=(-o "Dir::Etc=$dir/etc" -o "Dir::Etc::sourcelist=$dir/etc/sources.list"
	-o "Dir::Etc::sourceparts=$dir/etc/sources.list.d" -o "Dir::Etc::parts=$dir/etc/apt.conf.d"
	-o "Dir::Etc::preferencesparts=$dir/etc/preferences.d"
	-o "Dir::State=$dir" -o "Dir::State::Lists=$dir/lists" -o "Dir::State::status=/dev/null"
	-o "Dir::Cache=$dir" -o "Dir::Cache::archives=$dir/archives"
	-o "APT::Architecture=$arch" -o "APT::Architectures=$arch" -o "APT::Sandbox::User=root")

if [ -z "$(find "$dir/lists" -maxdepth 1 -name '*_Sources*' -mtime -1 2>/dev/null)" ]; then
	apt-get "${opts[@]}" -qq update >&2
fi
"$tool" "${opts[@]}" "$@"
