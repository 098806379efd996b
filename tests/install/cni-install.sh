#!/usr/bin/env bash
# cni-install without a container: flags, the copy, identical binaries left
# alone, the set an image brings (and nothing it does not), SIGTERM, and
# SIGKILL at random points of an install (never a partial binary under a
# plugin's name). No privileges needed.
# Usage: cni-install.sh CNI_INSTALL
# Environment: MESON_EXE_WRAPPER (meson test sets it in a cross build, e.g.
#   qemu-aarch64) runs CNI_INSTALL.
set -uo pipefail

bin=${1:?usage: $0 CNI_INSTALL}
read -ra run <<<"${MESON_EXE_WRAPPER:-}"
run+=("$bin")
names=(macvlan ipoib host-device)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cni-install-test.XXXXXX")
pid=
cleanup() {
	[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }

# make_sources DIR SEED MIB: one file per binary, distinct per name and seed, mode 0755.
make_sources() {
	mkdir -p "$1"
	for name in "${names[@]}"; do
		{ printf '%s %s\n' "$name" "$2"; head -c "$(($3 * 1024 * 1024))" /dev/urandom; } >"$1/$name"
		chmod 0755 "$1/$name"
	done
}

# same_as DIR TARGET: every binary in TARGET is the one in DIR, mode 0755.
same_as() {
	for name in "${names[@]}"; do
		cmp -s "$1/$name" "$2/$name" || return 1
		[ "$(stat -c %a "$2/$name")" = 755 ] || return 1
	done
}

src_a=$tmp/a src_b=$tmp/b dst=$tmp/dst
make_sources "$src_a" a 1
make_sources "$src_b" b 1
mkdir "$dst"

echo "# flags"
out=$("${run[@]}" --help)
check "--help exits 0" [ $? -eq 0 ]
check "  ... and names --cni-bin-dir and --no-sleep" \
	bash -c '[[ $1 == *--cni-bin-dir=DIR* && $1 == *--no-sleep* ]]' _ "$out"
check "--version" bash -c '[[ $("$@" --version) == "cni-install "* ]]' _ "${run[@]}"
mkdir -p "$tmp/img/bin"
# An image's old record of carried binaries beside its binaries is no longer read: one version.
echo "containernetworking-plugins 9.9 (Debian source, built static, go9.9): dhcp" >"$tmp/img/carried"
check "--version is one line, whatever lies beside --src-dir" \
	bash -c '[ "$("$@" --version --src-dir "$0/img/bin" | wc -l)" = 1 ]' "$tmp" "${run[@]}"
"${run[@]}" --bogus >/dev/null 2>&1
check "an unknown option exits 1" [ $? -eq 1 ]
"${run[@]}" --src-dir "$src_a" --cni-bin-dir "$dst" --no-sleep nope >/dev/null 2>&1
check "an unknown binary exits 1" [ $? -eq 1 ]
"${run[@]}" --src-dir "$src_a" --cni-bin-dir relative/dir --no-sleep >/dev/null 2>&1
check "a relative --cni-bin-dir exits 1" [ $? -eq 1 ]
err=$("${run[@]}" --src-dir "$src_a" --cni-bin-dir "$dst/missing" --no-sleep 2>&1)
check "a missing --cni-bin-dir exits 1" [ $? -eq 1 ]
check "  ... and says so: $err" bash -c '[[ $1 == *"No such file or directory"* ]]' _ "$err"
check "nothing installed by the failed runs" [ -z "$(ls -A "$dst")" ]

echo "# install, then again"
log=$("${run[@]}" --src-dir "$src_a" --cni-bin-dir "$dst" --no-sleep 2>&1)
check "install exits 0" [ $? -eq 0 ]
check "all binaries installed with mode 0755" same_as "$src_a" "$dst"
check "one 'installed' line per binary" [ "$(grep -c ' installed ' <<<"$log")" -eq 3 ]
before=$(stat -c '%n %i %Y' "$dst"/*)
log=$("${run[@]}" -src-dir="$src_a" -cni-bin-dir="$dst" -no-sleep 2>&1)
check "second run (Go-style flags) exits 0" [ $? -eq 0 ]
check "identical binaries untouched (same inodes)" [ "$before" = "$(stat -c '%n %i %Y' "$dst"/*)" ]
check "one 'left alone' line per binary" [ "$(grep -c 'left alone' <<<"$log")" -eq 3 ]
chmod 0700 "$dst/macvlan"
ln -sf "$src_b/ipoib" "$dst/ipoib"
"${run[@]}" --src-dir "$src_a" --cni-bin-dir "$dst" --no-sleep 2>/dev/null
check "a wrong mode and a symlink are replaced" same_as "$src_a" "$dst"
check "  ... the symlink's target is untouched" cmp -s "$src_b/ipoib" "$tmp/b/ipoib"
"${run[@]}" --src-dir "$src_b" --cni-bin-dir "$dst" --no-sleep macvlan 2>/dev/null
check "naming one binary installs only that one" \
	bash -c 'cmp -s "$1/b/macvlan" "$1/dst/macvlan" && cmp -s "$1/a/ipoib" "$1/dst/ipoib"' _ "$tmp"
cp "$src_b/macvlan" "$tmp/other-ipoib"
"${run[@]}" --src-dir "$src_a" --cni-bin-dir "$dst" --no-sleep --ipoib-bin-file "$tmp/other-ipoib" ipoib 2>/dev/null
check "--ipoib-bin-file is the ipoib source (ipoib-cni's flag)" cmp -s "$tmp/other-ipoib" "$dst/ipoib"

echo "# the set an image brings, and nothing it does not"
# An image of the cniPlugins slot (macvlan, host-device) whose source
# directory also holds nv-ipam and nv-ipam-tool, run over a host directory
# where another image put ipoib, nv-ipam and nv-ipam-tool.
slot=$tmp/slot host=$tmp/host
mkdir -p "$slot" "$host"
cp -p "$src_b/macvlan" "$src_b/host-device" "$slot/"
for other in ipoib nv-ipam nv-ipam-tool; do
	printf 'theirs %s\n' "$other" >"$host/$other"
	chmod 0755 "$host/$other"
	cp -p "$src_b/macvlan" "$slot/$other"
done
rm "$slot/ipoib"
theirs=$(stat -c '%n %i %Y' "$host"/*)
log=$("${run[@]}" --src-dir "$slot" --cni-bin-dir "$host" --no-sleep 2>&1)
check "no argument: exit 0" [ $? -eq 0 ]
check "  ... installs what the image holds, macvlan and host-device" \
	bash -c 'cmp -s "$1/macvlan" "$2/macvlan" && cmp -s "$1/host-device" "$2/host-device"' _ "$slot" "$host"
check "  ... and says so: $(grep -o 'installing.*holds)' <<<"$log")" \
	grep -q "installing macvlan host-device (what $slot holds)" <<<"$log"
check "  ... leaves ipoib, nv-ipam and nv-ipam-tool of another image alone" \
	[ "$theirs" = "$(stat -c '%n %i %Y' "$host"/ipoib "$host"/nv-ipam "$host"/nv-ipam-tool)" ]
before=$(stat -c '%n %i %Y' "$host"/*)
err=$("${run[@]}" --src-dir "$slot" --cni-bin-dir "$host" --no-sleep macvlan ipoib 2>&1)
check "naming a binary the image does not bring: exit 1" [ $? -eq 1 ]
check "  ... says so: $err" bash -c '[[ $1 == *"ipoib is not in this image"* ]]' _ "$err"
err=$("${run[@]}" --src-dir "$slot" --cni-bin-dir "$host" --no-sleep nv-ipam 2>&1)
check "naming nv-ipam: exit 1" [ $? -eq 1 ]
check "  ... the nv-ipam image installs it: $err" \
	bash -c '[[ $1 == *"installed by the nv-ipam image"* ]]' _ "$err"
"${run[@]}" --src-dir "$slot" --cni-bin-dir "$host" --no-sleep nv-ipam-tool >/dev/null 2>&1
check "naming nv-ipam-tool: exit 1" [ $? -eq 1 ]
err=$("${run[@]}" --src-dir "$slot" --cni-bin-dir "$host" --no-sleep --ipoib-bin-file "$tmp/none" 2>&1)
check "an --ipoib-bin-file that is not there: exit 1 ($err)" \
	bash -c '[ "$1" -eq 1 ] && [[ $2 == *"ipoib is not in this image (no "* ]]' _ $? "$err"
mkdir "$tmp/empty"
err=$("${run[@]}" --src-dir "$tmp/empty" --cni-bin-dir "$host" --no-sleep 2>&1)
check "an image that brings none: exit 1 ($err)" \
	bash -c '[ "$1" -eq 1 ] && [[ $2 == *"nothing to install"* ]]' _ $? "$err"
check "  ... none of these runs touched the host directory" [ "$before" = "$(stat -c '%n %i %Y' "$host"/*)" ]

# ended PID: whether PID ends within 30 s (a hang guard: the kubelet's grace before its
# SIGKILL; an installer ends at once); KILLed if not. Its status in $rc.
ended() {
	local i
	for i in $(seq 600); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$1" 2>/dev/null && { kill -KILL "$1"; wait "$1"; rc=timeout; return 1; }
	rc=0
	wait "$1" || rc=$?
}

echo "# waits for SIGTERM"
"${run[@]}" --src-dir "$src_a" --cni-bin-dir "$dst" 2>"$tmp/wait.log" &
pid=$!
# Waits here and below: hang guards of 30 s for what takes milliseconds.
for _ in $(seq 600); do grep -q 'waiting for SIGTERM' "$tmp/wait.log" && break; sleep 0.05; done
sleep 0.2
check "still running after installing" kill -0 "$pid"
start=$(date +%s%N)
kill -TERM "$pid"
ended "$pid"
pid=
ms=$((($(date +%s%N) - start) / 1000000))
check "SIGTERM: exit status $rc (want 0)" [ "$rc" = 0 ]
echo "# SIGTERM: ended after $ms ms"
check "logs the signal" grep -q 'received SIGTERM' "$tmp/wait.log"

echo "# a planted directory, a lock held by another installer"
rm -f "$dst/ipoib"
mkdir -p "$dst/ipoib/sub"
log=$("${run[@]}" --src-dir "$src_b" --cni-bin-dir "$dst" --no-sleep 2>&1)
check "a directory in a binary's place: exit 1" [ $? -eq 1 ]
check "  ... says what blocks it" grep -q "ipoib.*a directory is in its place" <<<"$log"
check "  ... and installs the others" \
	bash -c 'for n in macvlan host-device; do cmp -s "$1/b/$n" "$1/dst/$n" || exit 1; done' _ "$tmp"
rm -rf "$dst/ipoib"
# flock(1) from util-linux holds the installers' lock, as another installer would: in the
# process that then becomes the sleep, so that killing it releases the lock (longer than
# any wait below: an installer that took it after the holder would show).
( exec 9<"$dst" && flock 9 && exec sleep 120 ) &
holder=$!
for _ in $(seq 600); do flock -n "$dst" true || break; sleep 0.05; done
"${run[@]}" --src-dir "$src_a" --cni-bin-dir "$dst" 2>"$tmp/lock.log" &
pid=$!
for _ in $(seq 600); do grep -q 'another installer holds it' "$tmp/lock.log" && break; sleep 0.05; done
check "waiting for the lock: says so" grep -q 'another installer holds it' "$tmp/lock.log"
start=$(date +%s%N)
kill -TERM "$pid"
ended "$pid"
pid=
ms=$((($(date +%s%N) - start) / 1000000))
check "SIGTERM while waiting for the lock: exit $rc (want 0)" [ "$rc" = 0 ]
echo "# SIGTERM while waiting for the lock: ended after $ms ms"
check "  ... nothing installed while another held the lock" \
	bash -c 'cmp -s "$1/b/macvlan" "$1/dst/macvlan" && [ ! -e "$1/dst/ipoib" ]' _ "$tmp"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

echo "# SIGKILL at random points of an install"
# Big enough sources that an install takes a while; most kills land at a
# random time within one install's duration, counted from its first log line
# (the start-up before it is long under an emulator, and no file is touched
# then), every fourth as a temporary file appears.
rm -rf "$src_a" "$src_b" "$dst"
make_sources "$src_a" a 8
make_sources "$src_b" b 8
mkdir "$dst"
# The shortest of three runs (from either source: each replaces the other's
# binaries), so that a busy moment does not push kills past the end.
lead= span=
for src in "$src_a" "$src_b" "$src_a"; do
	start=$(date +%s%N)
	"${run[@]}" --src-dir "$src" --cni-bin-dir "$dst" --no-sleep 2>"$tmp/calibrate.log"
	end=$(date +%s%N)
	first=$(date -d "$(head -1 "$tmp/calibrate.log" | cut -d' ' -f1)" +%s%N)
	l=$(((first - start) / 1000)) s=$(((end - first) / 1000 + 1))
	[ "$l" -ge 0 ] || l=0
	[ -n "$lead" ] && [ "$lead" -le "$l" ] || lead=$l
	[ -n "$span" ] && [ "$span" -le "$s" ] || span=$s
done
echo "# one install takes ${span} us after ${lead} us of start-up"
# seconds US: US microseconds as sleep(1) takes them.
seconds() { printf '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000)); }
# Under an emulator (a cross build's tests) an iteration takes several times
# as long; the native run makes the full count.
iterations=${KILL_ITERATIONS:-$([ ${#run[@]} -eq 1 ] && echo 60 || echo 24)}
partial=0 mid=0 leftovers=0
for i in $(seq "$iterations"); do
	src=$src_a
	[ $((i % 2)) -eq 0 ] || src=$src_b
	aim=
	if [ $((i % 4)) -eq 0 ]; then
		# Aimed: killed the moment one binary's temporary file is seen, each
		# binary in turn (from the source it does not hold), so that kills
		# land mid-copy however an install's time splits.
		aim=${names[$((i / 4 % ${#names[@]}))]}
		src=$src_a
		! cmp -s "$src_a/$aim" "$dst/$aim" || src=$src_b
	fi
	"${run[@]}" --src-dir "$src" --cni-bin-dir "$dst" --no-sleep 2>/dev/null &
	pid=$!
	if [ -n "$aim" ]; then
		while [ ! -e "$dst/$aim.tmp.$pid" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.002; done
	else
		sleep "$(seconds $((lead + (RANDOM * 32768 + RANDOM) % span)))"
	fi
	kill -0 "$pid" 2>/dev/null && mid=$((mid + 1))
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
	for name in "${names[@]}"; do
		[ -e "$dst/$name" ] || continue
		cmp -s "$src_a/$name" "$dst/$name" || cmp -s "$src_b/$name" "$dst/$name" ||
			{ partial=$((partial + 1)); echo "# partial $name after kill $i"; }
	done
	ls -A "$dst" | grep -q -- '\.tmp\.' && leftovers=$((leftovers + 1))
done
echo "# $mid of $iterations kills hit a running install, $leftovers left a temporary file"
check "no partial binary under a plugin's name after $iterations kills" [ "$partial" -eq 0 ]
check "kills hit installs mid-way ($mid running, $leftovers mid-copy)" \
	bash -c '[ "$1" -gt 0 ] && [ "$2" -gt 0 ]' _ "$mid" "$leftovers"
log=$("${run[@]}" --src-dir "$src_b" --cni-bin-dir "$dst" --no-sleep 2>&1)
check "a run after the kills completes" same_as "$src_b" "$dst"
check "  ... and removes the temporary files they left" [ -z "$(ls -A "$dst" | grep -- '\.tmp\.')" ]

echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
