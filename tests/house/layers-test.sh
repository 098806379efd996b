#!/usr/bin/env bash
# layers.py fails where it must: a tree of four files of which two call each other,
# one folder includes a later one, and one chain runs through a third file; a folder
# the code map does not list and one it lists that does not exist; two plugins that
# share a block of six lines; a folder that reads API objects including the Go-rule JSON
# header (the node pool file's folder may). Then the same tree mended passes.
set -euo pipefail
check=$(dirname "$0")/layers.py
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/docs" "$t/common/util" "$t/ipam/nv-ipam/pool" "$t/ipam/nv-ipam/store" \
	"$t/ipam/nv-ipam/gc" "$t/b" \
	"$t/plugins/p1" "$t/plugins/p2" "$t/plugins/p3"
map() {
	cat > "$t/docs/layout.md" <<MAP
## Code map
| folder | role |
|---|---|
| \`common/util/\` | low |
| \`ipam/nv-ipam/pool/\` | middle |
| \`ipam/nv-ipam/store/\` | high |
| \`ipam/nv-ipam/gc/\` | reads API objects |
| \`plugins/p1/\`, \`plugins/p2/\`$1 | the plugins |
## Next
MAP
}
map ', `plugins/gone/`'
printf '#include "ipam/nv-ipam/store/s.h"\nint b(void);\nint a(void) { return b(); }\n' > "$t/common/util/a.c"
printf '#include "common/util/json-go.h"\nint c(void);\nint b(void) { return c(); }\n' > "$t/ipam/nv-ipam/pool/b.c"
printf 'int a(void);\nint c(void) { return a(); }\n' > "$t/ipam/nv-ipam/store/c.c"
printf 'int d(void) { return 0; }\n' > "$t/ipam/nv-ipam/store/d.c"
printf '#include "common/util/json.h"\n#include "common/util/json-go.h"\nint g(void) { return 0; }\n' \
	> "$t/ipam/nv-ipam/gc/g.c"
# The same six statements in two plugins, among lines the check does not count.
block='	x = parse(a);
	if (r < 0)
		goto fail;
	y = parse(b);
	z = x + y;
	/* a comment */
	w = z * 2;
	v = w - x;
	u = v / y;'
printf 'int f1(int a, int b)\n{\n%s\n}\n' "$block" > "$t/plugins/p1/one.c"
printf 'int f2(int a, int b)\n{\n	int q = 0;\n%s\n}\n' "$block" > "$t/plugins/p2/two.c"
printf 'int p3(void) { return 3; }\n' > "$t/plugins/p3/three.c"
build() {
	local first=1
	printf '[' > "$t/b/compile_commands.json"
	for f in common/util/a.c ipam/nv-ipam/pool/b.c ipam/nv-ipam/store/c.c ipam/nv-ipam/store/d.c; do
		o=$(echo "$f" | tr / _).o
		cc -c -o "$t/b/$o" "$t/$f" -I"$t"
		[ $first = 1 ] || printf ',' >> "$t/b/compile_commands.json"
		first=0
		printf '{"directory":"%s","file":"../%s","output":"%s"}' "$t/b" "$f" "$o" >> "$t/b/compile_commands.json"
	done
	printf ']' >> "$t/b/compile_commands.json"
}
touch "$t/ipam/nv-ipam/store/s.h" "$t/common/util/json.h" "$t/common/util/json-go.h" \
	"$t/common/util/json-exact.h"
build
rc=0
out=$(python3 "$check" "$t" "$t/b") || rc=$?
printf '%s\n' "$out"
fail=0
[ "$rc" = 1 ] || { echo "FAIL: exit status $rc on a tree with a circle, want 1"; fail=1; }
grep -q '^circle of 3 files:' <<<"$out" || { echo "FAIL: the circle of a, b, c not found"; fail=1; }
grep -q 'ipam/nv-ipam/store/c.c -> common/util/a.c: a' <<<"$out" || { echo "FAIL: the arrow c -> a not named"; fail=1; }
grep -q 'common/util/a.c:1: includes ipam/nv-ipam/store/' <<<"$out" || { echo "FAIL: the upward include not found"; fail=1; }
grep -qF 'store/d.c' <<<"$out" && { echo "FAIL: d.c, in no circle, named"; fail=1; }
grep -q '^plugins/p3/: not in the code map' <<<"$out" || { echo "FAIL: the unlisted folder not found"; fail=1; }
grep -q '^plugins/gone/: the code map names it' <<<"$out" || { echo "FAIL: the missing folder not found"; fail=1; }
grep -q '^plugins/p2/two.c:4: 6 lines also in plugins/p1/one.c:3' <<<"$out" || { echo "FAIL: the repeated block not found"; fail=1; }
grep -q '^ipam/nv-ipam/gc/g.c:2: includes common/util/json-go.h' <<<"$out" || { echo "FAIL: the Go-rule include in gc/ not found"; fail=1; }
grep -qF 'pool/b.c:1: includes common/util/json-go.h' <<<"$out" && { echo "FAIL: pool/, which reads the node pool file, refused the Go rule"; fail=1; }
# Mended: c no longer calls a, a no longer includes store/, p3 listed, gone unlisted,
# p2 no longer repeats p1's block, gc/ reads by exact keys.
printf 'int b(void);\nint a(void) { return b(); }\n' > "$t/common/util/a.c"
printf 'int c(void) { return 0; }\n' > "$t/ipam/nv-ipam/store/c.c"
map ', `plugins/p3/`'
printf 'int f2(int a, int b)\n{\n	return a - b;\n}\n' > "$t/plugins/p2/two.c"
printf '#include "common/util/json.h"\n#include "common/util/json-exact.h"\nint g(void) { return 0; }\n' \
	> "$t/ipam/nv-ipam/gc/g.c"
build
rc=0
out=$(python3 "$check" "$t" "$t/b") || rc=$?
printf '%s\n' "$out"
[ "$rc" = 0 ] || { echo "FAIL: exit status $rc on a mended tree, want 0"; fail=1; }
exit $fail
