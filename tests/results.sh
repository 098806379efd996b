# Counting what meson test runs gave, for tests/run-all.sh (sourced; it sets passed,
# failed, skipped to 0 first) and for tests/results-test.sh.
#
# The one rule for what needs ../shared (tests/shared.sh): a test that found it missing
# prints a line "NOT RUN: <what is missing> (<what brings it>)" on stdout (or "# NOT RUN:
# ..." among TAP lines, "1..0 # SKIP NOT RUN: ..." as a TAP plan). Ended as a skip, the
# test is listed as not run and is not counted as skipped (a skip as root fails the run);
# passed with such a line, it is counted as passed and the part it could not run is listed.
not_run=()

# not_run_add LINE: LINE listed once, however many builds ran its test.
not_run_add() {
	local l
	for l in "${not_run[@]}"; do
		[ "$l" != "$1" ] || return 0
	done
	not_run+=("$1")
}

# count BUILD [LOG]: add a meson test run's results (LOG: testlog-<wrapper>.json for --wrap runs)
count() {
	local log=$1/meson-logs/${2:-testlog.json} line
	[ -f "$log" ] || return 0
	passed=$((passed + $(jq -s '[.[] | select(.result == "OK")] | length' "$log")))
	failed=$((failed + $(jq -s '[.[] | select(.result == "FAIL" or .result == "TIMEOUT" or .result == "ERROR")] | length' "$log")))
	skipped=$((skipped + $(jq -s '[.[] | select(.result == "SKIP" and ((.stdout // "") |
		test("(^|\n)(# |1\\.\\.0 # SKIP )?NOT RUN: ") | not))] | length' "$log")))
	while IFS= read -r line; do
		[ -z "$line" ] || not_run_add "$line"
	done < <(jq -r 'select(.result == "SKIP" or .result == "OK") | . as $t |
		(.stdout // "") | scan("(?:^|\n)(?:# |1\\.\\.0 # SKIP )?NOT RUN: ([^\n]*)")[0] |
		$t.name + ": " + . + (if $t.result == "OK" then " (the rest of the test ran)" else "" end)' "$log")
}

# count_not_run NAME OUTPUT_FILE: a run outside meson (the kernel matrix) that ended as
# not run: its NOT RUN line listed; 1 when OUTPUT_FILE has none (the caller counts a skip).
count_not_run() {
	local line
	line=$(grep -m1 -o 'NOT RUN: .*' "$2") || return 1
	not_run_add "$1: ${line#NOT RUN: }"
}
