#!/usr/bin/env bash
# Builds and runs every test suite: unit, netns, e2e, nvipam and kube; the image under
# podman; the unit and netns suites again under ASan+UBSan; the unit suite
# and the plugins under valgrind; the fuzzers for a bounded time. Needs root
# for the netns and e2e suites and the image (CI runs as root).
set -euo pipefail

# Network namespaces need root: a user with sudo is asked for it.
if [ "$(id -u)" -ne 0 ]; then
	exec sudo -E bash "$0" "$@"
fi

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
tests/install-deps.sh test

out=${TEST_BUILD_ROOT:-$top/build-tests}
fuzz_seconds=${FUZZ_SECONDS:-30}
passed=0 failed=0 skipped=0
status=0

# count BUILD [LOG]: add a meson test run's results (LOG: testlog-<wrapper>.json for --wrap runs)
count() {
	local log=$1/meson-logs/${2:-testlog.json}
	[ -f "$log" ] || return 0
	passed=$((passed + $(jq -s '[.[] | select(.result == "OK")] | length' "$log")))
	failed=$((failed + $(jq -s '[.[] | select(.result == "FAIL" or .result == "TIMEOUT" or .result == "ERROR")] | length' "$log")))
	skipped=$((skipped + $(jq -s '[.[] | select(.result == "SKIP")] | length' "$log")))
}

# section TITLE: a heading with the time spent so far, to see where the minutes go
section() { printf '\n===== %s ===== (at %dm%02ds)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

suites=(-Dunit_tests=enabled -Dnetns_tests=enabled -De2e_tests=enabled)

section "build and run unit, netns, e2e, nvipam"
rm -rf "$out"
mkdir -p "$out"
meson setup "$out/main" "${suites[@]}" >/dev/null
ninja -C "$out/main"
meson test -C "$out/main" --print-errorlogs --no-suite fuzz --no-suite kube || status=1
count "$out/main"

section "suite kube: ipam-node and its image against ../shared/k8s (one cluster for every case)"
meson test -C "$out/main" --print-errorlogs --suite kube || status=1
count "$out/main"

section "the image under podman (tests/image/image.sh)"
if bash tests/image/image.sh "$out/main" /usr/lib/cni >"$out/image.log" 2>&1; then
	passed=$((passed + 1))
	tail -1 "$out/image.log"
else
	failed=$((failed + 1)); status=1
	tail -40 "$out/image.log"
fi

section "unit and netns under ASan+UBSan"
meson setup "$out/asan" "${suites[@]}" -Db_sanitize=address,undefined -Db_lundef=false \
	-Dbuildtype=debug >/dev/null
ninja -C "$out/asan"
# Sanitizers and valgrind slow every test down several times: the timeouts stretch with them.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C "$out/asan" --print-errorlogs --suite unit --suite netns \
	--timeout-multiplier 3 || status=1
count "$out/asan"

section "nv-ipam and nv-ipam-tool as processes (suite nvipam) under ASan+UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C "$out/asan" --print-errorlogs --timeout-multiplier 3 --suite nvipam || status=1
count "$out/asan"

section "unit under valgrind"
meson test -C "$out/main" --print-errorlogs --suite unit --no-rebuild --timeout-multiplier 5 \
	--wrap='valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect --trace-children=no' \
	|| status=1
count "$out/main" testlog-valgrind.json

# valgrind cannot watch the allocator of a static binary: the plugins it runs
# are linked dynamically (same sources, -Dstatic=false).
section "plugins linked dynamically for valgrind"
meson setup "$out/dyn" -Dstatic=false -Dunit_tests=disabled -Dnetns_tests=disabled \
	-De2e_tests=disabled -Dbench=disabled >/dev/null
ninja -C "$out/dyn" plugins/macvlan/macvlan plugins/ipoib/ipoib plugins/host-device/host-device \
	ipam/nv-ipam/nv-ipam
dyn=$out/dyn

# under_valgrind NAME SCRIPT ARGS...: a netns script (NAME: one word) with every plugin it runs under
# valgrind. lax-ioctls: valgrind does not know NS_GET_NSTYPE and would warn of it.
under_valgrind() {
	local name=$1 script=$2 vglogs=$out/valgrind-$1
	shift 2
	section "$name netns script with the plugins under valgrind"
	mkdir -p "$vglogs"
	if PLUGIN_WRAPPER="valgrind --quiet --sim-hints=lax-ioctls --leak-check=full --errors-for-leak-kinds=definite,indirect --log-file=$vglogs/vg.%p" \
		bash "$script" "$@" >"$out/valgrind-$name.log" 2>&1; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1)); status=1
		tail -40 "$out/valgrind-$name.log"
	fi
	if find "$vglogs" -type f -size +0 | grep -q .; then
		echo "valgrind reported errors in $name runs:" >&2
		# head closes the pipe early: that must not end the script (pipefail).
		{ find "$vglogs" -type f -size +0 -exec cat {} + | head -80 >&2; } || true
		failed=$((failed + 1)); status=1
	else
		echo "valgrind: $(find "$vglogs" -type f | wc -l) $name runs, no errors"
	fi
}
for p in macvlan ipoib host-device; do
	under_valgrind "$p" "tests/netns/$p.sh" "$dyn/plugins/$p/$p" /usr/lib/cni
done
# Section 7 (SIGKILL under strace) runs its ADDs without a wrapper: left to the other runs.
HOSTILE_SECTIONS="1 2 3 4 5 6" under_valgrind hostile tests/netns/hostile.sh \
	"$dyn/plugins/macvlan/macvlan" "$dyn/plugins/ipoib/ipoib" \
	"$dyn/plugins/host-device/host-device" "$dyn/ipam/nv-ipam/nv-ipam" /usr/lib/cni

section "fuzzers, ${fuzz_seconds}s each"
CC=clang meson setup "$out/fuzz" -Dfuzz=enabled -Dunit_tests=disabled -Dnetns_tests=disabled \
	-De2e_tests=disabled -Dbench=disabled -Db_sanitize=address,undefined -Db_lundef=false \
	-Dc_args=-fsanitize=fuzzer-no-link >/dev/null
ninja -C "$out/fuzz"
FUZZ_SECONDS=$fuzz_seconds meson test -C "$out/fuzz" --print-errorlogs --suite fuzz \
	--timeout-multiplier 4 || status=1
count "$out/fuzz"

section "summary"
echo "$passed passed, $failed failed, $skipped skipped in $((SECONDS / 60))m$((SECONDS % 60))s"
if [ "$(id -u)" -eq 0 ] && [ "$skipped" -gt 0 ]; then
	echo "tests were skipped although running as root" >&2
	status=1
fi
exit $status
