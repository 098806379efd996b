#!/usr/bin/env bash
# tests/results.sh's counting, on logs meson itself writes: a test whose kit is missing
# ("NOT RUN: ..." and exit 77, or a TAP plan "1..0 # SKIP NOT RUN: ...") is listed as not run and is not a skip; any
# other skip still is. And the suites that need ../shared say "NOT RUN:" without it.
# Usage: results-test.sh BUILD_DIR
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
work=$(mktemp -d /tmp/results-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() {
	local what=$1
	shift
	if "$@"; then pass=$((pass + 1)); echo "ok: $what"; else fail=$((fail + 1)); echo "FAIL: $what"; fi
}

# A throwaway meson project: one test of each kind.
mkdir -p "$work/p"
cat >"$work/p/meson.build" <<'MESON'
project('results', version: '0')
sh = find_program('sh')
test('kit-missing', sh, args: ['-c', 'echo "NOT RUN: no kit at /x (../shared/x beside the checkout)"; exit 77'])
test('kit-missing-tap', sh, args: ['-c', 'echo "1..0 # SKIP NOT RUN: no kit at /y (KIT_Y)"'], protocol: 'tap')
test('package-missing', sh, args: ['-c', 'echo "SKIP: jq missing"; exit 77'])
test('passes', sh, args: ['-c', 'exit 0'])
test('fails', sh, args: ['-c', 'exit 1'])
MESON
meson setup "$work/b" "$work/p" >/dev/null 2>&1 || { echo "FAIL: meson setup"; exit 1; }
meson test -C "$work/b" >/dev/null 2>&1

passed=0 failed=0 skipped=0
. "$top/tests/results.sh"
count "$work/b"
check "1 passed" [ "$passed" = 1 ]
check "1 failed" [ "$failed" = 1 ]
check "the skip for a missing package counts as skipped, the two missing kits do not" [ "$skipped" = 1 ]
check "the two are listed, each with what is missing" \
	[ "$(printf '%s\n' "${not_run[@]}")" = "kit-missing: no kit at /x (../shared/x beside the checkout)
kit-missing-tap: no kit at /y (KIT_Y)" ]

# This repository's tests that need ../shared, pointed where nothing is.
out=$(KUBE_KIT=$work/none bash "$top/tests/kube/run.sh" "$build" 2>&1)
rc=$?
check "the kube suite without its kit: a TAP plan of no test, NOT RUN, naming the kit" \
	eval '[ "$rc" = 0 ] && [[ "$out" == "1..0 # SKIP NOT RUN: no Kubernetes kit at $work/none"* ]]'
mkdir -p "$work/src"
out=$(bash "$top/tests/image/manifests.sh" "$work/src" "$work/kit" 2>&1)
rc=$?
check "the manifests test without the kit: 77, NOT RUN (got $rc)" \
	eval '[ "$rc" = 77 ] && [[ "$out" == "NOT RUN: "* ]]'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
