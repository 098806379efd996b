#!/bin/sh
# Runs one libFuzzer target for the meson test suite "fuzz".
#
# usage: run-fuzz.sh FUZZER WORK_DIR SEED_DIR [CRASH_DIR]
#
# FUZZ_SECONDS (default 60) bounds the run; FUZZ_SECONDS=0 only replays the
# seeds and saved reproducers once (a regression run). New inputs go to
# WORK_DIR/corpus: libFuzzer writes only to the first corpus directory, so the
# seed and crash directories in the source tree are never modified.
# Findings go to WORK_DIR/artifacts; the exit status is the fuzzer's.
set -u

if [ $# -lt 3 ]; then
	echo "usage: $0 FUZZER WORK_DIR SEED_DIR [CRASH_DIR]" >&2
	exit 2
fi
fuzzer=$1 work=$2 seed=$3 crashes=${4:-}
seconds=${FUZZ_SECONDS:-60}
case $seconds in
'' | *[!0-9]*)
	echo "FUZZ_SECONDS must be a whole number of seconds, not \"$seconds\"" >&2
	exit 2
	;;
esac

corpus=$work/corpus
artifacts=$work/artifacts
mkdir -p "$corpus" "$artifacts" || exit 2
marker=$work/.started
: >"$marker" || exit 2

set -- "$corpus" "$seed"
if [ -n "$crashes" ] && [ -d "$crashes" ]; then
	set -- "$@" "$crashes"
fi
if [ "$seconds" -eq 0 ]; then
	limit=-runs=0
else
	limit=-max_total_time=$seconds
fi

# Sanitizer reports end the process so libFuzzer keeps the input; options the
# caller exports come last and win.
asan=detect_leaks=1:abort_on_error=1:handle_abort=1:allocator_may_return_null=0
ubsan=halt_on_error=1:abort_on_error=1:print_stacktrace=1
ASAN_OPTIONS=$asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}
UBSAN_OPTIONS=$ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}
export ASAN_OPTIONS UBSAN_OPTIONS

set -- "$limit" -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$@"
echo "$fuzzer $*"
"$fuzzer" "$@"
rc=$?

if [ $rc -ne 0 ]; then
	found=$(find "$artifacts" -type f -newer "$marker" 2>/dev/null)
	if [ -n "$found" ]; then
		for f in $found; do
			echo "fuzz: reproducer saved: $f" >&2
			echo "fuzz: replay with: $fuzzer $f" >&2
		done
	else
		echo "fuzz: $fuzzer exited with status $rc and saved no input" >&2
	fi
fi
exit $rc
