#!/usr/bin/env bash
# The kernel matrix: the netns suites (common/net, ipoib, macvlan,
# host-device, tuning, sbr, static, dummy, tap, ipvlan, vlan, vrf, bridge and the
# multi-rail chains; the hostile suite is left to the host run) under Debian's
# user-mode Linux kernels, 5.10 (bullseye) and 6.1 (bookworm), one after the
# other, each as one UML guest booted on the host's root (read-only, hostfs)
# that runs the plugins of BUILD_DIR.
#
#   run.sh BUILD_DIR [REFERENCE_CNI_DIR]
#
# Environment:
#   UML_CACHE    where the packages are kept between runs
#                (default /var/cache/cni-rdma-plugins/uml)
#   UML_KERNELS  Debian releases whose kernel runs (default "bullseye bookworm")
#   UML_SUITES   comma-separated (default common-net,ipoib,macvlan,host-device,
#                tuning,sbr,static,dummy,tap,ipvlan,vlan,vrf,bridge,multirail)
#   UML_SUITES_<release>
#                the suites of that kernel only, in place of UML_SUITES
#   UML_TIMEOUT  seconds a guest may take before it is stopped and its
#                unfinished suites fail (default 1800)
#   UML_VERSIONS the CNI versions of the macvlan and host-device suites' full
#                ADD/CHECK/DEL rounds (default 1.1.0: the kernel sees the same
#                requests at every version, the host run covers all seven)
#   UML_PRELOAD  the XSAVE preload (default BUILD_DIR/tests/kernel/uml-xstate.so on
#                x86-64; empty: none, to see whether this host needs it)
#   UML_BENCH    "ITERATIONS,WARMUP" of the bench-link suite (tests/bench/run-link.sh),
#                which prints figures, not checks: it passes when it exits 0
#   UML_OUT      results: <release>/{guest,console,<suite>}.log, summary.txt,
#                results ("<release> <suite> PASS|FAIL" lines)
#                (default BUILD_DIR/kernel-matrix)
#
# On x86-64 the guests run with BUILD_DIR/tests/kernel/uml-xstate.so preloaded,
# which lets them boot where the host's XSAVE area is larger than theirs (AMX
# CPUs; xstate.c says why).
#
# Exits 0 when every suite passed on every kernel; 1 when any check failed,
# a suite did not finish, a kernel could not be fetched, or a guest's init
# started but did not report; 77 with "NOT RUN: <reason>" on stdout when no
# guest could be booted on this host (its kernel panicked before running
# init: the console's reason is given) or the host cannot create a network
# namespace. Needs root, as the netns suite.
set -uo pipefail

[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [REFERENCE_CNI_DIR]" >&2; exit 2; }
build=$(realpath "$1")
ref=${2:-/usr/lib/cni}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
cache=${UML_CACHE:-/var/cache/cni-rdma-plugins/uml}
kernels=${UML_KERNELS:-bullseye bookworm}
suites=${UML_SUITES:-common-net,ipoib,macvlan,host-device,tuning,sbr,static,dummy,tap,ipvlan,vlan,vrf,bridge,multirail}
limit=${UML_TIMEOUT:-1800}
versions=${UML_VERSIONS:-1.1.0}
out=${UML_OUT:-$build/kernel-matrix}

probe=umlprobe-$$
if ! ip netns add "$probe" 2>/dev/null; then
	echo "SKIP: network namespaces cannot be created here"
	exit 77
fi
ip netns del "$probe"

fail() { echo "FAIL: $*"; exit 1; }
bins=("$build/plugins/macvlan/macvlan" "$build/plugins/ipoib/ipoib"
	"$build/plugins/host-device/host-device" "$build/plugins/tuning/tuning" "$build/plugins/sbr/sbr"
	"$build/ipam/static/static" "$build/plugins/dummy/dummy" "$build/plugins/tap/tap"
	"$build/plugins/ipvlan/ipvlan" "$build/plugins/vlan/vlan" "$build/plugins/vrf/vrf"
	"$build/plugins/bridge/bridge"
	"$build/ipam/nv-ipam/nv-ipam" "$build/ipam/nv-ipam/tool/nv-ipam-tool" "$build/tests/netns/test-net")
preload=
if [ "$(uname -m)" = x86_64 ]; then
	preload=${UML_PRELOAD-$build/tests/kernel/uml-xstate.so}
	[ -z "$preload" ] || bins+=("$preload")
fi
for b in "${bins[@]}"; do
	[ -e "$b" ] || fail "$b is not built (a build with -Dnetns_tests=enabled)"
done
# The benchmark harness, for the bench-link suite, when the build has it (-Dbench).
for b in "$build/tests/bench/bench" "$build/tests/bench/bench-noop"; do
	[ ! -e "$b" ] || bins+=("$b")
done
for p in host-local static; do
	[ -x "$ref/$p" ] || fail "$ref/$p not found (containernetworking-plugins)"
done
command -v modprobe >/dev/null || fail "modprobe not found (kmod): the guests load their modules with it"
# The guest mounts its own tmpfs on /tmp and /run: what it reads there is not the host's.
for p in "$out" "$build" "$src"; do
	case $(realpath -m "$p")/ in
	/tmp/* | /run/* | /var/run/*) fail "the guests cannot reach $p (their /tmp and /run are their own): use another directory" ;;
	esac
done
# The guest learns its paths from the kernel command line, split at blanks.
# ../shared (the reference plugins the bridge suite compares with), when beside the checkout.
shared=$(realpath -m "${CNI_SHARED:-$src/../shared}")
[ -d "$shared" ] || shared=
for p in "$src" "$out" "$cache" "$ref" $shared; do
	[[ "$p" != *[[:space:]]* ]] || fail "a path with blanks cannot reach the guest: $p"
done

rm -rf "$out"
mkdir -p "$out"
# The guests run copies: a rebuild or an edit during the run cannot change
# what they test.
mkdir -p "$out/bin" "$out/src/tests/netns" "$out/src/tests/kernel" "$out/src/tests/bench"
cp "${bins[@]}" "$out/bin/"
[ -z "$preload" ] || preload=$out/bin/${preload##*/}
cp "$here/guest-init.sh" "$out/src/tests/kernel/"
cp "$src"/tests/netns/*.sh "$out/src/tests/netns/"
cp "$src/tests/bench/run-link.sh" "$out/src/tests/bench/"
cp "$src/tests/node-settings.sh" "$src/tests/shared.sh" "$out/src/tests/"
# The reference plugins the ipvlan, vlan, vrf and bridge suites run beside ours, unpacked
# here: the guests cannot write beside ../shared. Without them those suites say what they
# did not compare (tests/netns/refplugins.sh).
refcni=$out/refcni
. "$src/tests/shared.sh"
# Not in a subshell: a reference that does not match its sum ends the run.
shared_reference_plugins "$refcni" ipvlan vlan vrf bridge host-local portmap >"$out/refcni.note" || refcni=
refcni_missing=$(cat "$out/refcni.note")
cp -r "$src/conf-examples" "$out/src/"

declare -A root ksuites
for k in $kernels; do
	v=UML_SUITES_$k
	ksuites[$k]=${!v:-$suites}
	root[$k]=$(bash "$here/fetch.sh" "$k" "$cache") || fail "cannot fetch the user-mode Linux kernel of $k"
done

# boot RELEASE: one guest; its results land in $out/RELEASE.
boot() {
	local k=$1 r=${root[$1]} dir=$out/$1 mods
	mods=$(find "${root[$k]}/usr/lib/uml/modules" -mindepth 1 -maxdepth 1 -type d | head -1)
	mkdir -p "$dir/uml"
	# UML keeps its pid file and control socket in uml_dir. The host CPU
	# time it took is kept beside the wall time: on a busy machine the CPU
	# time tells how long it would take on an idle one.
	local TIMEFORMAT='%R %U %S'
	{ time LD_PRELOAD=$preload timeout -k 30 "$limit" "$r/usr/bin/linux.uml" mem=1G umid="cni-$k-$$" \
		uml_dir="$dir/uml" root=/dev/root rootfstype=hostfs rootflags=/ ro quiet \
		con=null con0=null,fd:1 init="$out/src/tests/kernel/guest-init.sh" \
		uml_src="$out/src" uml_bin="$out/bin" uml_ref="$ref" ${shared:+uml_shared="$shared"} uml_out="$dir" uml_mods="$mods" \
		uml_suites="${ksuites[$k]}" uml_timeout="$limit" uml_versions="${versions// /,}" \
		uml_refcni="$refcni" uml_bench="${UML_BENCH:-40,4}" \
		</dev/null >"$dir/console.log" 2>&1; echo $? >"$dir/uml.rc"; } 2>"$dir/time"
}

# One guest after the other. A guest's every process switch, fork and page
# fault is a round of ptrace stops and host page-table work; two guests at
# once on a 2-CPU VM each ran 2.4 to 2.8 times slower than one alone (the
# ipoib suite: 35 s alone, 80 to 97 s beside another guest), so in series
# they finish sooner.
start=$SECONDS
for k in $kernels; do
	mkdir -p "$out/$k"
	boot "$k"
done
elapsed=$((SECONDS - start))

# panic_reason RELEASE: why a guest's kernel stopped before its init ran, from its
# console ("" when init ran or the kernel did not panic): the line before the
# panic, which names what failed, and the panic itself.
panic_reason() {
	local dir=$out/$1
	[ ! -e "$dir/guest.log" ] && grep -q 'Kernel panic' "$dir/console.log" 2>/dev/null || return 0
	grep -v '^ *\[<\|^Stack:\|^Call Trace:\|^ *[0-9a-f]\{8,\}\( [0-9a-f]\{8,\}\)* *$' "$dir/console.log" |
		grep -B1 -m1 'Kernel panic' | sed 's/^ *//; s/ *$//' | paste -sd';' | sed 's/;/; /g'
}

# No guest booted at all: the host cannot run this matrix (not a failure of the
# tree); said first, with the kernel's own words.
unbootable=()
for k in $kernels; do
	why=$(panic_reason "$k")
	[ -z "$why" ] || unbootable+=("$k: $why")
done
if [ ${#unbootable[@]} -eq "$(wc -w <<<"$kernels")" ]; then
	{
		echo "NOT RUN: no user-mode Linux guest boots on this host ($(printf '%s\n' "${unbootable[@]}" | paste -sd'|' | sed 's/|/ | /g'))"
		echo "(docs/testing.md, \"Kernels\": which hosts run the matrix; each console: $out/<release>/console.log)"
	} | tee "$out/summary.txt"
	exit 77
fi

# The results: a line per kernel and suite; a suite that left no exit status
# or no count of its checks failed.
status=0 total_pass=0 total_fail=0
{
	echo "CNI versions of the full rounds: $versions"
	[ -z "$refcni_missing" ] || echo "$refcni_missing"
	for k in $kernels; do
		dir=$out/$k
		echo "$k: suites ${ksuites[$k]}"
		# Its last line: bash reports a guest that aborted on the lines before.
		read -r wall user sys < <(tail -n 1 "$dir/time") || true
		echo "$k: the guest ran ${wall:-?}s and took ${user:-?}s user + ${sys:-?}s system CPU of the host"
		release=$(sed -n 's/^guest: \([^,]*\),.*/\1/p' "$dir/guest.log" 2>/dev/null)
		if [ -z "$release" ]; then
			why=$(panic_reason "$k")
			echo "$k: the guest did not start (uml exit $(cat "$dir/uml.rc")): ${why:-its init did not report; the console ends:}"
			[ -n "$why" ] || tail -20 "$dir/console.log" | sed 's/^/  /'
			echo "$k boot FAIL" >>"$out/results"
			status=1
			continue
		fi
		IFS=, read -r -a list <<<"${ksuites[$k]}"
		for s in "${list[@]}"; do
			rc=$(cat "$dir/$s.rc" 2>/dev/null)
			counts=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$dir/$s.log" 2>/dev/null | tail -1)
			p=${counts%% passed*}
			f=${counts#*, }
			f=${f%% failed}
			secs=$(cat "$dir/$s.seconds" 2>/dev/null || echo "?")
			if [ -z "$rc" ]; then
				echo "$k ($release) $s: did not finish within ${limit}s (uml exit $(cat "$dir/uml.rc"))"
				echo "$k $s FAIL" >>"$out/results"
				status=1
				total_fail=$((total_fail + 1))
				continue
			fi
			# A benchmark prints figures, not checks.
			if [ -z "$counts" ] && [[ $s == bench-* ]] && [ "$rc" = 0 ]; then
				echo "$k ($release) $s: figures in $dir/$s.log (${secs}s)"
				echo "$k $s PASS" >>"$out/results"
				continue
			fi
			if [ -z "$counts" ]; then
				echo "$k ($release) $s: exit $rc without a count of its checks"
				echo "$k $s FAIL" >>"$out/results"
				status=1
				total_fail=$((total_fail + 1))
				continue
			fi
			total_pass=$((total_pass + p))
			total_fail=$((total_fail + f))
			if [ "$rc" != 0 ] || [ "$f" != 0 ]; then
				status=1
				echo "$k ($release) $s: FAILED, exit $rc, $p passed, $f failed in ${secs}s:"
				grep -A8 '^not ok' "$dir/$s.log" | head -60 | sed 's/^/  /'
				echo "$k $s FAIL" >>"$out/results"
			else
				echo "$k ($release) $s: $p passed, $f failed in ${secs}s"
				echo "$k $s PASS" >>"$out/results"
			fi
		done
	done
	echo "kernel matrix: $total_pass passed, $total_fail failed in ${elapsed}s"
} >"$out/summary.txt"
cat "$out/summary.txt"
exit $status
