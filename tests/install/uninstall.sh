#!/usr/bin/env bash
# meson install and ninja uninstall as README.md ("Install") says: uninstall removes what
# install wrote and the directories install made, once empty again; a directory that was
# there before (a node's /opt/cni/bin with the reference plugins) stays with what else it
# holds. Into a DESTDIR, from a copy of the build's install plan, so that neither the
# machine nor the build's own install log is touched; the uninstall is what the
# uninstall target runs (meson --internal uninstall, reading meson-logs/install-log.txt).
# Usage: uninstall.sh BUILD_ROOT CNI_BIN_DIR
set -uo pipefail

build=$(cd "${1:?usage: $0 BUILD_ROOT CNI_BIN_DIR}" && pwd)
bindir=${2:?usage: $0 BUILD_ROOT CNI_BIN_DIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uninstall-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

log_before=$(stat -c '%Y %s' "$build/meson-logs/install-log.txt" 2>/dev/null || echo none)
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }

# shadow DIR: a build directory of its own (its install log goes there) whose plan and
# built files are the build's.
shadow() {
	mkdir -p "$1/meson-logs"
	cp -r "$build/meson-private" "$1/"
	for e in "$build"/*; do
		case ${e##*/} in meson-private | meson-logs) ;; *) ln -s "$e" "$1/${e##*/}" ;; esac
	done
}
# run CASE: install into $tmp/CASE/root, then uninstall from the log it wrote.
run() {
	shadow "$tmp/$1/b"
	meson install -C "$tmp/$1/b" --no-rebuild --destdir "$tmp/$1/root" >"$tmp/$1/install.log" 2>&1 ||
		{ not_ok "$1: meson install"; tail -5 "$tmp/$1/install.log"; return 1; }
	find "$tmp/$1/root" | sort >"$tmp/$1/installed"
	(cd "$tmp/$1/b" && meson --internal uninstall) >"$tmp/$1/uninstall.log" 2>&1
	check "$1: uninstall reports no failure" grep -q '^Failed: 0$' "$tmp/$1/uninstall.log"
}

echo "# a node whose $bindir holds the reference plugins"
mkdir -p "$tmp/node/root$bindir"
# flannel: a plugin the suite does not build (bridge, once the example, is ours now).
echo reference >"$tmp/node/root$bindir/flannel"
if run node; then
	check "node: install wrote the plugins into $bindir" grep -qx "$tmp/node/root$bindir/macvlan" "$tmp/node/installed"
	check "node: $bindir stays, the reference's plugin in it untouched" \
		[ "$(cat "$tmp/node/root$bindir/flannel" 2>&1)" = reference ]
	check "node: nothing of ours left in it" [ "$(ls -A "$tmp/node/root$bindir")" = flannel ]
	check "node: the directories install made are gone (all but $bindir's)" \
		[ "$(cd "$tmp/node/root" && find . -mindepth 1 | sort | tr '\n' ' ')" = "$(
			d=$bindir; out=""; while [ "$d" != / ]; do out=".$d $out"; d=$(dirname "$d"); done
			tr ' ' '\n' <<<"$out ./${bindir#/}/flannel" | grep . | sort | tr '\n' ' ')" ]
fi

echo "# a machine without $bindir"
mkdir -p "$tmp/bare/root"
if run bare; then
	check "bare: install made $bindir" grep -qx "$tmp/bare/root$bindir" "$tmp/bare/installed"
	check "bare: uninstall leaves the root as it was, empty" [ -z "$(ls -A "$tmp/bare/root")" ]
fi
check "the build's own install log untouched" \
	[ "$(stat -c '%Y %s' "$build/meson-logs/install-log.txt" 2>/dev/null || echo none)" = "$log_before" ]

echo "1..$n"
[ "$failed" = 0 ]
