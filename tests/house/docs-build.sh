#!/usr/bin/env bash
# The docs' build commands against what the build gives (README.md, docs/testing.md,
# conf-examples/README.md):
#   - a directory configured as tests/demo.sh configures build/ (the binaries only), then
#     turned on with the `meson configure build ...` line of docs/testing.md, lists the
#     unit suite of this build and knows every target `ninja -C build T` names in the
#     docs, and the binaries the docs run from build/;
#   - the static link's warnings are the ones README.md names.
# Nothing is compiled: meson setup and configure, ninja's target list, and one link of an
# existing binary's objects into the work directory.
# Usage: docs-build.sh SOURCE_ROOT BUILD_ROOT
set -uo pipefail

src=${1:?usage: $0 SOURCE_ROOT BUILD_ROOT}
build=${2:?usage: $0 SOURCE_ROOT BUILD_ROOT}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/docs-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
unit_tests() { meson test -C "$1" --no-rebuild --list --suite unit 2>/dev/null | grep -c ' / '; }
targets() { ninja -C "$1" -t targets all 2>/dev/null | sed 's/: .*//'; }

# 1. The demo's build/, then the docs' line.
read -ra demo <<<"$(sed -n 's/^demo_options=(\(.*\))$/\1/p' "$src/tests/demo.sh")"
check "tests/demo.sh names its meson options (demo_options=(...))" [ ${#demo[@]} -gt 0 ]
if ! meson setup "$tmp/build" "$src" "${demo[@]}" >"$tmp/setup.log" 2>&1; then
	not_ok "meson setup as the demo does"
	tail -20 "$tmp/setup.log"
	echo "1..$n"
	exit 1
fi
want=$(unit_tests "$build")
check "the demo's build lacks the unit suite ($(unit_tests "$tmp/build") of $want tests)" \
	[ "$(unit_tests "$tmp/build")" -lt "$want" ]
line=$(grep -m1 '^meson configure build ' "$src/docs/testing.md")
check "docs/testing.md says how to turn the suites on in the demo's build/" [ -n "$line" ]
read -ra cmd <<<"$line"
(cd "$tmp" && "${cmd[@]}") >"$tmp/configure.log" 2>&1
check "  ... and its line runs: ${line}" [ $? = 0 ]
# The next meson test regenerates the build files (no compile).
meson test -C "$tmp/build" --list >/dev/null 2>&1
got=$(unit_tests "$tmp/build")
check "  ... after which the unit suite is this build's: $got of $want tests" [ "$got" = "$want" ]

# 2. Every target the docs build, and every binary they run from build/.
targets "$build" | sort -u >"$tmp/main.targets"
targets "$tmp/build" | sort -u >"$tmp/docs.targets"
compared=0
for f in README.md docs/testing.md conf-examples/README.md conf-examples/nv-ipam/README.md; do
	# (a command may wrap onto the next line)
	for t in $({ tr '\n' ' ' <"$src/$f" | grep -oE 'ninja -C build +[A-Za-z0-9_./-]+' | awk '{print $4}'
		grep -oE '(^|[ "=:(])build/(plugins|ipam|tools|tests)/[A-Za-z0-9_./-]+' "$src/$f" |
			sed 's|.*build/||; s|[.]$||' | grep -v '/$'; } | sort -u); do
		if ! grep -qxF "$t" "$tmp/main.targets"; then
			echo "# $f: $t is no target of $build (a suite off here): not compared"
			continue
		fi
		compared=$((compared + 1))
		check "$f: $t is a target after the docs' commands" grep -qxF "$t" "$tmp/docs.targets"
	done
done
check "some of the docs' targets compared ($compared)" [ "$compared" -ge 5 ]

# 3. The static link's warnings, as README.md names them: one link of macvlan's objects.
if meson introspect --buildoptions "$build" 2>/dev/null |
	jq -e '.[] | select(.name == "static" or .name == "b_sanitize") | .value' | paste -sd' ' |
	grep -qx 'true "none"\|"none" true'; then
	link=$(ninja -C "$build" -t commands plugins/macvlan/macvlan | tail -1)
	link=${link/-o plugins\/macvlan\/macvlan /-o $tmp/macvlan }
	(cd "$build" && eval "$link") >"$tmp/link.log" 2>&1
	mapfile -t warned < <(sed -n "s/.*Using '\([a-z_]*\)' in statically linked.*/\1/p" "$tmp/link.log" | sort -u)
	sentence=$(tr '\n' ' ' <"$src/README.md" | grep -oE 'The link warns that [^:]*:')
	check "the static link warns (${warned[*]:-nothing})" [ ${#warned[@]} -gt 0 ]
	for w in "${warned[@]}"; do
		check "README.md names the link's warning about $w" grep -qF "\`$w\`" <<<"$sentence"
	done
	check "README.md names no other" [ "$(grep -oE '`[a-z_]+`' <<<"$sentence" | sort -u | wc -l)" = ${#warned[@]} ]
else
	echo "# $build links dynamically: no static link to compare README.md's warnings with"
fi

echo "1..$n"
[ "$failed" = 0 ]
