#!/usr/bin/env bash
# Builds and runs every test suite: unit, netns, e2e, nvipam, daemon and kube; the image under
# podman; the unit and netns suites again under ASan+UBSan; the unit suite
# and the plugins under valgrind; the fuzzers for a bounded time; the netns
# suites under user-mode Linux 5.10 and 6.1. Needs root for the netns and e2e
# suites, the image and the kernels (CI runs as root).
set -euo pipefail

# Network namespaces need root: a user with sudo is asked for it.
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "run-all.sh needs root (network namespaces, the images, the kernels): run it as root or install sudo" >&2; exit 1; }
	exec sudo -E bash "$0" "$@"
fi

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
tests/install-deps.sh test

out=${TEST_BUILD_ROOT:-$top/build-tests}
fuzz_seconds=${FUZZ_SECONDS:-12}
passed=0 failed=0 skipped=0
status=0
. tests/results.sh

# section TITLE: a heading with the time spent so far, to see where the minutes go
section() { printf '\n===== %s ===== (at %dm%02ds)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

suites=(-Dunit_tests=enabled -Dnetns_tests=enabled -De2e_tests=enabled)

# bg_meson BUILD NAME ARGS...: a meson test run of its own (log testlog-NAME.json, output
# in $out/NAME.out, exit status in $out/NAME.rc), for a background lane: the suites' tests
# run one at a time (they time kills and lock waits), which leaves a CPU idle.
bg_meson() {
	local build=$1 name=$2 rc=0
	shift 2
	meson test -C "$build" --no-rebuild --print-errorlogs --logbase "testlog-$name" "$@" \
		>"$out/$name.out" 2>&1 || rc=$?
	echo "$rc" >"$out/$name.rc"
}
# bg_count BUILD NAME: what bg_meson BUILD NAME printed, its status and its results
# (once its lane ended).
bg_count() {
	cat "$out/$2.out"
	[ "$(cat "$out/$2.rc" 2>/dev/null)" = 0 ] || status=1
	count "$1" "testlog-$2.json"
}
# after PID: returns once PID (a lane started by this shell, not a child of the caller's
# subshell, which therefore cannot wait for it) has ended.
after() {
	while kill -0 "$1" 2>/dev/null; do sleep 2; done
}

# The kernels GPU nodes run are older than this one: every netns suite but
# the hostile one again under user-mode Linux 5.10 and 6.1 (docs/testing.md).
# Each kernel runs every suite but one of the two longest link suites: vrf under 5.10,
# bridge (its VLAN sections) under 6.1; the host run covers the rest of each.
# Its status in $out/kernel-matrix.rc, counted by km_count.
km_run() {
	local base=common-net,ipoib,macvlan,host-device,tuning,sbr,static,dummy,tap,ipvlan,vlan rc=0
	UML_SUITES_bullseye=$base,vrf,multirail UML_SUITES_bookworm=$base,bridge,multirail \
		UML_OUT=$out/kernel-matrix UML_TIMEOUT=1500 bash tests/kernel/run.sh "$out/main" \
		>"$out/kernel-matrix.log" 2>&1 || rc=$?
	echo "$rc" >"$out/kernel-matrix.rc"
}
# km_count: each suite on each kernel counted as one test.
km_count() {
	local km kfail
	km=$(cat "$out/kernel-matrix.rc" 2>/dev/null) || km=1
	tail -n 40 "$out/kernel-matrix.log"
	kcount() { local n; n=$(grep -c " $1\$" "$out/kernel-matrix/results" 2>/dev/null) || true; echo "${n:-0}"; }
	if [ "$km" -eq 77 ]; then
		# No guest boots on this host (its reason in the line), or no netns can be made.
		count_not_run "kernel matrix (tests/kernel/run.sh)" "$out/kernel-matrix.log" || skipped=$((skipped + 1))
	else
		kfail=$(kcount FAIL)
		# A run that failed before any suite (a kernel not fetched) still counts as one failure.
		[ "$km" -eq 0 ] || [ "$kfail" -gt 0 ] || kfail=1
		passed=$((passed + $(kcount PASS)))
		failed=$((failed + kfail))
		[ "$km" -eq 0 ] || status=1
	fi
}

section "build and run unit, netns, e2e beside nvipam"
rm -rf "$out"
mkdir -p "$out"
meson setup "$out/main" "${suites[@]}" >/dev/null
ninja -C "$out/main"
# The second lane: the nvipam suite, which shares nothing with the others but the CPUs,
# then the kernel matrix (a guest keeps most of one CPU busy), through the image, arm64
# and ASan sections if it must.
{ bg_meson "$out/main" nvipam --suite nvipam; km_run; } &
lane_nvipam_km=$!
meson test -C "$out/main" --no-rebuild --print-errorlogs --no-suite fuzz --no-suite nvipam \
	--no-suite kube || status=1
count "$out/main"

section "the image under podman (tests/image/image.sh)"
if bash tests/image/image.sh "$out/main" /usr/lib/cni >"$out/image.log" 2>&1; then
	passed=$((passed + 1))
	tail -1 "$out/image.log"
else
	failed=$((failed + 1)); status=1
	tail -40 "$out/image.log"
fi

# arm64: the cross build (Debian's toolchain and arm64 -dev packages, static
# like amd64) of the binaries and the unit suite only, the unit suite run
# under qemu-user by meson (the cross file's exe_wrapper; emulation slows the
# tests down, their timeouts stretch with it), then the multi-arch images
# built from both builds and read back.
section "arm64: cross build, unit suite under qemu-user, multi-arch images"
arm64_started=$SECONDS
meson setup "$out/arm64" --cross-file image/cross/arm64.ini -Dunit_tests=enabled \
	-Dnetns_tests=disabled -De2e_tests=disabled -Dbench=disabled >/dev/null
ninja -C "$out/arm64"
meson test -C "$out/arm64" --print-errorlogs --suite unit --timeout-multiplier 3 || status=1
count "$out/arm64"
if bash tests/image/multiarch.sh "$out/main" "$out/arm64" >"$out/multiarch.log" 2>&1; then
	passed=$((passed + 1))
	tail -1 "$out/multiarch.log"
else
	failed=$((failed + 1)); status=1
	tail -40 "$out/multiarch.log"
fi
arm64_took=$((SECONDS - arm64_started))
echo "arm64 section took $((arm64_took / 60))m$((arm64_took % 60))s"

section "unit, netns and daemon beside nvipam, under ASan+UBSan"
meson setup "$out/asan" "${suites[@]}" -Db_sanitize=address,undefined -Db_lundef=false \
	-Dbuildtype=debug >/dev/null
ninja -C "$out/asan"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Sanitizers and valgrind slow every test down several times: the timeouts stretch with them.
# The second lane, once the kernel matrix ended: this build's nvipam suite, then the kube
# suite (ipam-node, ipam-controller, the images' manifests against ../shared/k8s: its
# cluster mostly waits on timers) in the main build, beside the valgrind runs.
{
	after "$lane_nvipam_km"
	# The crash tests' kills are for the sanitizers here, not for the count of
	# interrupted states the main run already reached: fewer bursts, and the gc
	# crash test does not require a kill inside its narrowest window.
	BURSTS=30 MIN_KILLS=40 GC_CRASH_NEED_DUE=0 bg_meson "$out/asan" asan-nvipam --suite nvipam \
		--timeout-multiplier 3
	bg_meson "$out/main" kube --suite kube
} &
lane_asan_kube=$!
# The hostile suite's sections 1 to 6 run under valgrind below; here 7 and 8 (the
# kills and faults, which valgrind's wrapper would change).
# The daemon test whose phases are paced by the clock (daemon-paced) runs only above;
# so do the comparisons with the reference binaries (suite compare: the plugins' own
# scripts run the same code here) and run-all's own counting (suite runner).
HOSTILE_SECTIONS="7 8" meson test -C "$out/asan" --no-rebuild --print-errorlogs --suite unit --suite netns --suite daemon \
	--no-suite daemon-paced --no-suite compare --no-suite runner --timeout-multiplier 3 || status=1
count "$out/asan"
unset ASAN_OPTIONS UBSAN_OPTIONS

# The tests whose program is a shell script (suite shell) are left out: valgrind would
# watch bash, not the plugins they run (which the netns scripts below run under it).
section "unit under valgrind"
meson test -C "$out/main" --print-errorlogs --suite unit --no-suite shell --no-rebuild --timeout-multiplier 5 \
	--wrap='valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect --trace-children=no' \
	|| status=1
count "$out/main" testlog-valgrind.json

# valgrind cannot watch the allocator of a static binary: the plugins it runs
# are linked dynamically (same sources, -Dstatic=false).
section "plugins linked dynamically for valgrind"
meson setup "$out/dyn" -Dstatic=false -Dunit_tests=disabled -Dnetns_tests=disabled \
	-De2e_tests=disabled -Dbench=disabled >/dev/null
. image/plugins.sh
ninja -C "$out/dyn" "${plugin_built[@]}" \
	ipam/nv-ipam/nv-ipam ipam/nv-ipam/tool/nv-ipam-tool tests/store-sums
dyn=$out/dyn

# vg_start NAME SCRIPT ARGS...: a netns script (NAME: one word) with every plugin it runs
# under valgrind, in the background once fewer than two run (valgrind keeps one CPU
# busy). lax-ioctls: valgrind does not know NS_GET_NSTYPE and would warn of it.
vg_start() {
	local name=$1 script=$2 vglogs=$out/valgrind-$1
	shift 2
	mkdir -p "$vglogs"
	while [ "$(vg_running)" -ge 2 ]; do wait -n || true; done
	# The subshell inherits set -e: the script's status is kept, not let end it.
	(
		rc=0
		PLUGIN_WRAPPER="valgrind --quiet --sim-hints=lax-ioctls --leak-check=full --errors-for-leak-kinds=definite,indirect --log-file=$vglogs/vg.%p" \
			bash "$script" "$@" >"$out/valgrind-$name.log" 2>&1 || rc=$?
		echo "$rc" >"$out/valgrind-$name.rc"
	) &
	vg_pids+=($!)
}
# vg_running: how many of vg_start's runs have not ended (the second lane is no concern
# of theirs).
vg_pids=()
vg_running() {
	local p n=0
	for p in "${vg_pids[@]}"; do
		! kill -0 "$p" 2>/dev/null || n=$((n + 1))
	done
	echo "$n"
}
# vg_count NAME: counts what vg_start NAME ran (once every run ended).
vg_count() {
	local name=$1 vglogs=$out/valgrind-$1 rc
	rc=$(cat "$out/valgrind-$name.rc" 2>/dev/null) || rc="none (its status was not kept)"
	if [ "$rc" = 0 ]; then
		passed=$((passed + 1))
		echo "$name: $(tail -1 "$out/valgrind-$name.log")"
		count_not_run "$name (under valgrind)" "$out/valgrind-$name.log" || true
	elif [ "$rc" = 77 ] && count_not_run "$name (under valgrind)" "$out/valgrind-$name.log"; then
		echo "$name: not run ($(grep -m1 -o 'NOT RUN: .*' "$out/valgrind-$name.log"))"
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
section "the netns scripts with the plugins under valgrind, two at a time"
# Longest first. The hostile suite's sections 1 to 6 (7 runs its ADDs under strace
# and 8 injects faults: left to the other runs) in two runs, section 2 (every string
# key) being half of it.
# Every plugin the build made (FOLDER/NAME/NAME): hostile.sh wants each of its table.
hostile_args=()
for exe in "$dyn"/plugins/*/* "$dyn"/ipam/*/*; do
	name=${exe##*/}
	[ "$name" = "$(basename "$(dirname "$exe")")" ] && [ -f "$exe" ] && [ -x "$exe" ] &&
		hostile_args+=("$name=$exe")
done
hostile_args+=(/usr/lib/cni)
# Under valgrind, the plugins whose own scripts below hold no hostile input: the meta
# plugins', bridge's and host-local's do, and dummy, ipvlan, vlan and vrf stop at a
# driver this kernel lacks.
export HOSTILE_PLUGINS="macvlan ipoib host-device nv-ipam static tap tuning sbr loopback"
HOSTILE_SECTIONS="2" vg_start hostile-2 tests/netns/hostile.sh "${hostile_args[@]}"
HOSTILE_SECTIONS="1 3 4 5 6" vg_start hostile-1-3-6 tests/netns/hostile.sh "${hostile_args[@]}"
unset HOSTILE_PLUGINS
# Their full rounds at the version the operator renders and the newest: the
# other five differ in how the result is written, which the host run checks.
for p in host-device macvlan; do
	NETNS_CNI_VERSIONS="0.3.1 1.1.0" vg_start "$p" "tests/netns/$p.sh" "$dyn/plugins/$p/$p" /usr/lib/cni
done
vg_start ipoib tests/netns/ipoib.sh "$dyn/plugins/ipoib/ipoib" /usr/lib/cni
# The chain plugins, each after our macvlan (under valgrind too), and the chains whole,
# at the version the operator renders.
export MACVLAN_BIN=$dyn/plugins/macvlan/macvlan TUNING_BIN=$dyn/plugins/tuning/tuning \
	SBR_BIN=$dyn/plugins/sbr/sbr NVIPAM_BIN=$dyn/ipam/nv-ipam/nv-ipam \
	HOSTDEV_BIN=$dyn/plugins/host-device/host-device NVIPAM_TOOL=$dyn/ipam/nv-ipam/tool/nv-ipam-tool
vg_start multirail tests/netns/multirail.sh "$MACVLAN_BIN" /usr/lib/cni
vg_start static tests/netns/static.sh "$dyn/ipam/static/static" /usr/lib/cni
for p in tuning sbr tap dummy; do
	vg_start "$p" "tests/netns/$p.sh" "$dyn/plugins/$p/$p" /usr/lib/cni
done
vg_start loopback tests/netns/loopback.sh "$dyn/plugins/loopback/loopback"
# At the oldest version whose result has interfaces and the newest.
NETNS_CNI_VERSIONS="0.3.1 1.1.0" vg_start host-local tests/netns/host-local.sh "$dyn/ipam/host-local/host-local"
# The meta plugins beside the reference binaries (../shared; their SIGKILL sections run
# in the plain and sanitized runs), at 0.4.0 (the oldest the reference firewall speaks)
# and the newest.
for p in portmap bandwidth firewall; do
	NETNS_CNI_VERSIONS="0.4.0 1.1.0" vg_start "$p" "tests/netns/$p.sh" "$dyn/plugins/$p/$p"
done
# ipvlan, vlan and vrf: this kernel has none of their drivers, so the refusal (the
# kernel matrix's guests run the rest).
for p in ipvlan vlan vrf; do
	vg_start "$p" "tests/netns/$p.sh" "$dyn/plugins/$p/$p" /usr/lib/cni
done
# bridge: its own checks but the kills (strace) and the concurrent ADDs (not run through
# the wrapper).
BRIDGE_SECTIONS="3 5" vg_start bridge tests/netns/bridge.sh "$dyn/plugins/bridge/bridge" /usr/lib/cni
vg_start ptp tests/netns/ptp.sh "$dyn/plugins/ptp/ptp" /usr/lib/cni
# dhcp: the plugin and its daemon (one binary) under valgrind, against dnsmasq.
vg_start dhcp tests/netns/dhcp.sh "$dyn/ipam/dhcp/dhcp"
for p in "${vg_pids[@]}"; do wait "$p" || true; done
unset MACVLAN_BIN TUNING_BIN SBR_BIN NVIPAM_BIN HOSTDEV_BIN NVIPAM_TOOL
for name in hostile-2 hostile-1-3-6 host-device macvlan ipoib multirail static tuning sbr tap dummy \
	loopback host-local portmap bandwidth firewall ipvlan vlan vrf bridge ptp dhcp; do
	vg_count "$name"
done

section "fuzzers, ${fuzz_seconds}s each"
# A build that fails counts as a failure and the run goes on: an exit here
# (set -e) would leave the second lane running behind it.
if CC=clang meson setup "$out/fuzz" -Dfuzz=enabled -Dunit_tests=disabled -Dnetns_tests=disabled \
	-De2e_tests=disabled -Dbench=disabled -Db_sanitize=address,undefined -Db_lundef=false \
	-Dc_args=-fsanitize=fuzzer-no-link >/dev/null && ninja -C "$out/fuzz"; then
	FUZZ_SECONDS=$fuzz_seconds meson test -C "$out/fuzz" --print-errorlogs --suite fuzz \
		--timeout-multiplier 4 || status=1
	count "$out/fuzz"
else
	failed=$((failed + 1)); status=1
fi

section "the second lane: nvipam, then the kernel matrix, beside the main run"
wait "$lane_nvipam_km" || true
bg_count "$out/main" nvipam
km_count
section "the second lane: nvipam under ASan+UBSan, then kube"
wait "$lane_asan_kube" || true
bg_count "$out/asan" asan-nvipam
bg_count "$out/main" kube

section "summary"
echo "$passed passed, $failed failed, $skipped skipped in $((SECONDS / 60))m$((SECONDS % 60))s"
if [ ${#not_run[@]} -gt 0 ]; then
	echo "not run, each with what it needs (docs/testing.md):"
	printf '  %s\n' "${not_run[@]}"
fi
if [ "$(id -u)" -eq 0 ] && [ "$skipped" -gt 0 ]; then
	echo "tests were skipped although running as root" >&2
	status=1
fi
exit $status
