# Counting what meson test runs gave, for tests/run-all.sh (sourced; it sets passed,
# failed, skipped to 0 first) and for tests/results-test.sh.
#
# Tests that need a kit from outside this repository (../shared beside the checkout) and
# found none say "NOT RUN: <what is missing> (<what brings it>)" and exit 77: they are
# listed, and do not fail the run, which a skip as root does.
not_run=()

# count BUILD [LOG]: add a meson test run's results (LOG: testlog-<wrapper>.json for --wrap runs)
count() {
	local log=$1/meson-logs/${2:-testlog.json} line
	[ -f "$log" ] || return 0
	passed=$((passed + $(jq -s '[.[] | select(.result == "OK")] | length' "$log")))
	failed=$((failed + $(jq -s '[.[] | select(.result == "FAIL" or .result == "TIMEOUT" or .result == "ERROR")] | length' "$log")))
	skipped=$((skipped + $(jq -s '[.[] | select(.result == "SKIP" and ((.stdout // "") | test("NOT RUN:") | not))] | length' "$log")))
	while IFS= read -r line; do
		[ -z "$line" ] || not_run+=("$line")
	done < <(jq -r 'select(.result == "SKIP" and ((.stdout // "") | test("NOT RUN:"))) |
		.name + ": " + ((.stdout | capture("NOT RUN: (?<why>[^\n]*)").why))' "$log")
}
