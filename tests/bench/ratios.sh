# Sourced by the benchmarks that run ours, upstream's binary ("go") and the noop (the
# exec floor) in one bench run: the ratios of their figures, a line per config.
#
# bench_ratios FIGURES CONFIG...: for each CONFIG (CONFIG.json in the run whose --json
# output is FIGURES), ours / go for the ADD and DEL medians, the same above the exec
# floor ((ours - noop) / (go - noop): what neither side can avoid taken out of both),
# the peak RSS's ratio and the floor itself.
bench_ratios() {
	local figures=$1
	shift
	echo "== ratios to go (below 1: faster or smaller than go); 'above floor': (ours - noop) / (go - noop)"
	jq -r --arg configs "$*" '
		def fig(c; l; cmd; f): first(.results[] | select(.config == c and .label == l and .command == cmd) | f);
		def ratio(a; b): if a == null or b == null or b == 0 then "-" else a / b end;
		def above(c; cmd): fig(c; "noop"; cmd; .median_us) as $f |
			ratio(fig(c; "ours"; cmd; .median_us) - $f; fig(c; "go"; cmd; .median_us) - $f);
		def peak(c; l): [fig(c; l; "ADD"; .peak_rss_kib), fig(c; l; "DEL"; .peak_rss_kib)] | max;
		. as $all | ($configs | split(" "))[] as $c | $all | ($c + ".json") as $f |
		[$c, ratio(fig($f; "ours"; "ADD"; .median_us); fig($f; "go"; "ADD"; .median_us)), above($f; "ADD"),
		 ratio(fig($f; "ours"; "DEL"; .median_us); fig($f; "go"; "DEL"; .median_us)), above($f; "DEL"),
		 ratio(peak($f; "ours"); peak($f; "go")), fig($f; "noop"; "ADD"; .median_us)] | @tsv
	' "$figures" | awk -F'\t' '
		function r(x) { return x == "-" ? "   -" : sprintf("%4.2f", x) }
		{ printf "%-9s median ADD %s (above floor %s)   median DEL %s (above floor %s)   peak RSS %s   floor %d us\n", $1, r($2), r($3), r($4), r($5), r($6), $7 }'
}
