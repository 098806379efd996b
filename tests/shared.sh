# What some tests need from ../shared (the Kubernetes kit, the reference binaries), and the
# one way a test says it is missing (sourced; tests/results.sh reads what it prints).
#
# A test that cannot run without it prints "NOT RUN: no <what> at <path> (<where it comes
# from>)" on stdout and ends as a skip (exit 77; a TAP test plans no test instead, since
# meson reads a TAP exit status 77 as an error). A test that runs without it but leaves
# part of its checks undone prints the same line and passes. tests/results.sh lists every
# such line as "not run" and counts none as a skip; any other skip as root fails the run.
#
# CNI_SHARED is where ../shared is (meson passes it to every test that needs it, which is
# how tests/results-test.sh finds them all; default: beside the source tree).
shared_dir=$(realpath -m "${CNI_SHARED:-$(dirname "${BASH_SOURCE[0]}")/../../shared}")

# shared_path REL: the path of ../shared/REL.
shared_path() { printf '%s/%s\n' "$shared_dir" "$1"; }

# shared_missing PATH REL WHAT: the line a test prints when PATH (../shared/REL, or what
# an environment variable named instead) is missing.
shared_missing() { printf 'NOT RUN: no %s at %s (../shared/%s beside the checkout)\n' "$3" "$1" "$2"; }

# shared_not_run PATH REL WHAT: the line, and the test ends as not run.
shared_not_run() {
	shared_missing "$@"
	exit 77
}

# shared_not_run_tap PATH REL WHAT: the same for a TAP test: a plan of no test.
shared_not_run_tap() {
	printf '1..0 # SKIP %s\n' "$(shared_missing "$@")"
	exit 0
}

# shared_reference_plugins DEST NAME...: containernetworking/plugins v1.9.1's static NAMEs
# (../shared/reference/cni-plugins, or REFERENCE_PLUGINS naming another copy) unpacked into
# DEST and checked against its SHA256SUMS; the test ends as not run when they are missing,
# and fails (exit 1) when one does not match.
shared_reference_plugins() {
	local dest=$1 dir=${REFERENCE_PLUGINS:-$(shared_path reference/cni-plugins)} p
	shift
	for p in "$@"; do
		[ -f "$dir/$p.xz" ] && [ -f "$dir/SHA256SUMS" ] ||
			shared_not_run "$dir" reference/cni-plugins "reference plugins (containernetworking/plugins v1.9.1)"
	done
	command -v xz >/dev/null || { echo "error: xz missing (tests/install-deps.sh test)" >&2; exit 1; }
	mkdir -p "$dest"
	for p in "$@"; do
		xz -dc "$dir/$p.xz" >"$dest/$p" && chmod +x "$dest/$p" &&
			grep " $p\$" "$dir/SHA256SUMS" | (cd "$dest" && sha256sum -c --quiet) ||
			{ echo "error: $dir/$p.xz does not match its SHA256SUMS" >&2; exit 1; }
	done
}
