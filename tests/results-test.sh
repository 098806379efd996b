#!/usr/bin/env bash
# tests/results.sh's counting, on logs meson itself writes: a test whose kit is missing
# ("NOT RUN: ..." and exit 77, or a TAP plan "1..0 # SKIP NOT RUN: ...") is listed as not
# run and is not a skip; a test that passed without part of its kit is counted as passed
# and its missing part listed; a line two builds print is listed once; any other skip
# still is one. Then every test of BUILD_DIR that meson gives CNI_SHARED (tests/shared.sh:
# all that need ../shared) is run with ../shared pointed where nothing is, and must say
# "NOT RUN:" naming what it needs; and no test script reaches ../shared another way.
# Usage: results-test.sh BUILD_DIR native|cross   (cross: the tests are listed, not run)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR native|cross}" && pwd)
kind=${2:-native}
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
test('kit-part-missing', sh, args: ['-c', 'echo "ok 1"; echo "NOT RUN: no kit at /z (../shared/z beside the checkout)"'])
test('package-missing', sh, args: ['-c', 'echo "SKIP: jq missing"; exit 77'])
test('passes', sh, args: ['-c', 'echo "ok: it says \\"NOT RUN: x\\" of something"; exit 0'])
test('fails', sh, args: ['-c', 'exit 1'])
MESON
meson setup "$work/b" "$work/p" >/dev/null 2>&1 || { echo "FAIL: meson setup"; exit 1; }
meson test -C "$work/b" >/dev/null 2>&1

passed=0 failed=0 skipped=0
. "$top/tests/results.sh"
count "$work/b"
count "$work/b"
check "2 passed (each of two builds: the one that passes, the one that ran without part of its kit)" [ "$passed" = 4 ]
check "1 failed in each" [ "$failed" = 2 ]
check "the skip for a missing package counts as skipped, the missing kits do not" [ "$skipped" = 2 ]
# In any order: meson lists its tests as they end, and they run at once.
check "the three are listed once, each with what is missing" \
	[ "$(printf '%s\n' "${not_run[@]}" | LC_ALL=C sort)" = "$(LC_ALL=C sort <<'LIST'
kit-missing: no kit at /x (../shared/x beside the checkout)
kit-missing-tap: no kit at /y (KIT_Y)
kit-part-missing: no kit at /z (../shared/z beside the checkout) (the rest of the test ran)
LIST
)" ]
printf 'kernel matrix\nNOT RUN: no guest boots here (a reason)\n' >"$work/km.log"
check "a run outside meson that says NOT RUN is listed" \
	eval 'count_not_run km "$work/km.log" && [ "${not_run[-1]}" = "km: no guest boots here (a reason)" ]'
echo "SKIP: no netns" >"$work/km2.log"
check "one that does not say NOT RUN is not" eval '! count_not_run km2 "$work/km2.log"'

# This build's tests that need ../shared: meson gives them CNI_SHARED.
meson introspect --tests "$build" >"$work/tests.json" || { echo "FAIL: meson introspect"; exit 1; }
jq -c '.[] | select(.env.CNI_SHARED != null)' "$work/tests.json" >"$work/shared.jsonl"
names=$(jq -r .name "$work/shared.jsonl" | sort | paste -sd, -)
echo "# tests given CNI_SHARED: $names"
# The ones there must be (those whose options are on in every build run-all.sh makes).
for want in "nv-ipam against the reference's code" "nv-ipam handover exact"; do
	check "$want is among them" grep -qxF "$want" < <(jq -r .name "$work/shared.jsonl")
done
if [ "$kind" = native ]; then
	while IFS= read -r t; do
		name=$(jq -r .name <<<"$t")
		# A netns test needs root before it gets to ../shared (the unit suite needs none).
		if [ "$(id -u)" -ne 0 ] && jq -e '.suite | index("cni-rdma-plugins:netns")' <<<"$t" >/dev/null; then
			echo "# $name: a netns test, not run without root"
			continue
		fi
		proto=$(jq -r .protocol <<<"$t")
		mapfile -t cmd < <(jq -r '.cmd[]' <<<"$t")
		mapfile -t env < <(jq -r '.env | to_entries[] | "\(.key)=\(.value)"' <<<"$t")
		wd=$(jq -r '.workdir // empty' <<<"$t")
		out=$(cd "${wd:-$build}" && env "${env[@]}" CNI_SHARED="$work/none" timeout 600 "${cmd[@]}" 2>"$work/stderr")
		rc=$?
		line=$(grep -m1 'NOT RUN: ' <<<"$out")
		if [ "$proto" = tap ]; then
			ok_end='[ "$rc" = 0 ] && [[ "$out" == "1..0 # SKIP NOT RUN: "* ]]'
		else
			# 77: none of it ran; 0: the rest ran and passed.
			ok_end='[ "$rc" = 77 ] || [ "$rc" = 0 ]'
		fi
		check "$name without ../shared: exit $rc, says \"${line:-nothing}\"" \
			eval "$ok_end"' && [[ "$line" == *"at $work/none/"*"(../shared/"*" beside the checkout)"* ]]'
	done <"$work/shared.jsonl"
fi

# No test script finds ../shared but through tests/shared.sh (comments aside).
strays=$(cd "$top" && grep -rnE 'shared/(k8s|reference/(cni-plugins|nvipam-refcni))' tests --include='*.sh' --include='*.py' \
	--include='*.c' --include=meson.build | grep -vE '^[^:]+:[0-9]+:\s*(#|\*|/\*)' |
	grep -v '^tests/shared.sh:' | grep -v '^tests/meson.build:' | grep -v '^tests/results-test.sh:')
check "no test reaches ../shared but through tests/shared.sh${strays:+: $strays}" [ -z "$strays" ]

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
