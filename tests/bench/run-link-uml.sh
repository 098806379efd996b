#!/usr/bin/env bash
# `ninja -C build bench-link`: run-link.sh in the kernel matrix's 6.1 guest (this host's
# kernel has no ipvlan, 8021q or vrf driver), the build's plugins beside the reference
# ones (../shared, unpacked by tests/kernel/run.sh), then its figures.
#
# Usage: run-link-uml.sh BUILD_DIR
# Environment: UML_KERNELS (default bookworm), ITERATIONS, WARMUP (run-link.sh's; passed
#   into the guest on its command line), and tests/kernel/run.sh's.
set -uo pipefail

build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
out=$build/bench-link
UML_KERNELS=${UML_KERNELS:-bookworm} UML_SUITES=bench-link UML_OUT=$out \
	UML_BENCH="${ITERATIONS:-40},${WARMUP:-4}" bash "$here/../kernel/run.sh" "$build"
rc=$?
for f in "$out"/*/bench-link.log; do
	[ -e "$f" ] || continue
	echo "== $f"
	cat "$f"
done
exit "$rc"
