#!/usr/bin/env bash
# Fails unless every ELF file among PATHs (a directory: every regular file
# under it) is free of the host's libraries: no program interpreter
# (PT_INTERP) and no DT_NEEDED entry. What an image puts on a node's host
# must start there whatever the distribution and its glibc (RHEL 8 has
# 2.28) and in a root holding nothing else. Names each file that is not,
# with what it asks for, on stderr.
# Usage: check-static.sh PATH...
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 PATH..." >&2; exit 2; }
command -v readelf >/dev/null || { echo "error: readelf not found (binutils)" >&2; exit 1; }
for p in "$@"; do
	[ -e "$p" ] || { echo "error: $p: no such file or directory" >&2; exit 1; }
done
status=0
while IFS= read -r -d '' f; do
	[ "$(head -c 4 "$f")" = $'\x7fELF' ] || continue
	if ! phdrs=$(LC_ALL=C readelf -lW "$f" 2>&1) || ! dyn=$(LC_ALL=C readelf -dW "$f" 2>&1); then
		echo "error: $f: readelf cannot read it" >&2
		status=1
		continue
	fi
	interp=$(sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p' <<<"$phdrs")
	if [ -z "$interp" ] && awk '$1 == "INTERP" { found = 1 } END { exit !found }' <<<"$phdrs"; then
		interp="(unnamed)"
	fi
	needed=$(sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' <<<"$dyn" | paste -sd' ')
	if [ -n "$interp" ] || [ -n "$needed" ]; then
		echo "error: $f is dynamically linked (${interp:+program interpreter $interp}${interp:+${needed:+; }}${needed:+needs $needed}): a host without them cannot run it" >&2
		status=1
	fi
done < <(find -H "$@" -type f -print0)
exit $status
