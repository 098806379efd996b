#!/usr/bin/env bash
# Fetches and unpacks Debian's user-mode Linux kernel of a release, through
# apt lists of its own: nothing is added to the machine's apt sources or state.
#
#   fetch.sh RELEASE CACHE_DIR      (RELEASE: bullseye for 5.10, bookworm for 6.1)
#
# Prints the unpacked tree's directory (CACHE_DIR/RELEASE/root, holding
# usr/bin/linux.uml and usr/lib/uml/modules/<release>/). The .deb and the
# unpacked tree stay in CACHE_DIR: a later run with the same package version
# downloads nothing. Lists older than a day are fetched again.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 RELEASE CACHE_DIR" >&2; exit 2; }
rel=$1
dir=$2/$rel
case $rel in
bullseye | bookworm) ;;
*) echo "fetch.sh: unknown release $rel" >&2; exit 2 ;;
esac
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || { echo "fetch.sh: $keyring missing (debian-archive-keyring)" >&2; exit 1; }

mkdir -p "$dir/apt/lists/partial" "$dir/apt/archives/partial" "$dir/apt/etc/apt.conf.d" \
	"$dir/apt/etc/preferences.d" "$dir/apt/etc/sources.list.d" "$dir/debs"
printf 'deb [signed-by=%s] http://deb.debian.org/debian %s main\n' "$keyring" "$rel" \
	>"$dir/apt/etc/sources.list"
# Every directory apt reads or writes is this release's own; the machine's
# installed packages do not matter to a download.
apt_opts=(-o "Dir::Etc=$dir/apt/etc" -o "Dir::Etc::sourcelist=$dir/apt/etc/sources.list"
	-o "Dir::Etc::sourceparts=$dir/apt/etc/sources.list.d"
	-o "Dir::Etc::parts=$dir/apt/etc/apt.conf.d"
	-o "Dir::Etc::preferencesparts=$dir/apt/etc/preferences.d"
	-o "Dir::State=$dir/apt" -o "Dir::State::Lists=$dir/apt/lists"
	-o "Dir::State::status=/dev/null" -o "Dir::Cache=$dir/apt"
	-o "Dir::Cache::archives=$dir/apt/archives" -o "APT::Architecture=amd64"
	-o "APT::Sandbox::User=root" -qq)

if [ -z "$(find "$dir/apt/lists" -maxdepth 1 -name '*_Packages*' -mtime -1 2>/dev/null)" ]; then
	apt-get "${apt_opts[@]}" update >&2
fi
version=$(apt-cache "${apt_opts[@]}" show user-mode-linux | awk '/^Version:/ {print $2; exit}')
[ -n "$version" ] || { echo "fetch.sh: no user-mode-linux in $rel" >&2; exit 1; }
deb=$dir/debs/user-mode-linux_${version/:/%3a}_amd64.deb
if [ ! -s "$deb" ]; then
	(cd "$dir/debs" && apt-get "${apt_opts[@]}" download "user-mode-linux=$version" >&2)
	find "$dir/debs" -name '*.deb' ! -name "${deb##*/}" -delete
fi
[ -s "$deb" ] || { echo "fetch.sh: the download left no $deb" >&2; exit 1; }

# Unpacked once per version; a stamp names the version the tree holds.
if [ "$(cat "$dir/root.version" 2>/dev/null)" != "$version" ]; then
	rm -rf "$dir/root" "$dir/root.version"
	mkdir -p "$dir/root"
	dpkg-deb -x "$deb" "$dir/root"
	echo "$version" >"$dir/root.version"
fi
[ -x "$dir/root/usr/bin/linux.uml" ] || { echo "fetch.sh: no linux.uml in $deb" >&2; exit 1; }
echo "$dir/root"
