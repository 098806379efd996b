#!/usr/bin/env bash
# End-to-end test of the host-device plugin through a real libcni client, side
# by side with Debian's Go host-device.
#
# Usage: e2e-host-device.sh <plugin-dir> <cniclient> [<reference-dir>]
#   plugin-dir     directory holding our `host-device` binary
#   cniclient      the libcni client built from tests/e2e/cniclient
#   reference-dir  Debian's containernetworking-plugins (default /usr/lib/cni):
#                  host-local, tuning and sbr, and the Go host-device
#
# Each case runs twice, "ours" and "ref", each with a fresh veth end as the
# host device, a fresh pod netns and a fresh host-local store: ADD, CHECK,
# DEL, DEL again. The ADD results (with the device's MAC and the netns path
# normalised), the pod's link after ADD (name, up, alias, addresses) and the
# host device's name after DEL must be the same. The expected differences
# are asserted as such: the repeated DEL succeeds with ours and fails with
# Debian's 1.1.1 (`failed to find "net1"`), Debian's DEL leaves the original
# name in the alias, and ours gives the device back the up state it had
# before ADD where Debian's leaves it down. (Debian's CHECK also fails on a
# route without "gw", so the routes here have one.)
#
# Needs root. Exits 77 (skip) only if a network namespace cannot be created.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 <plugin-dir> <cniclient> [<reference-dir>]" >&2
	exit 2
fi
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
plugin_dir=$(abspath "$1")
client=$(abspath "$2")
ref_dir=$(abspath "${3:-/usr/lib/cni}")

tag=$$
tmp=
cleanups=()
cleanup() {
	local rc=$? i
	trap - EXIT
	for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do eval "${cleanups[i]}" >/dev/null 2>&1 || true; done
	if [ -n "$tmp" ] && [ "${E2E_KEEP_TMP:-0}" != 1 ]; then rm -rf "$tmp"; elif [ -n "$tmp" ]; then echo "kept $tmp"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! err=$(ip netns add "e2ehd$tag-probe" 2>&1); then
	echo "SKIP: cannot create a network namespace: $err"
	exit 77
fi
ip netns del "e2ehd$tag-probe"
missing=()
command -v jq >/dev/null || missing+=(jq)
[ -x "$client" ] || missing+=("$client")
[ -x "$plugin_dir/host-device" ] || missing+=("$plugin_dir/host-device")
for p in host-device host-local tuning sbr; do [ -x "$ref_dir/$p" ] || missing+=("$ref_dir/$p"); done
if [ ${#missing[@]} -gt 0 ]; then
	echo "FAIL: missing: ${missing[*]}" >&2
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/e2e-host-device.XXXXXX")
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok $((pass + fail)) - $*"; }
bad() {
	fail=$((fail + 1))
	echo "not ok $((pass + fail)) - $1"
	shift
	printf '#   %s\n' "$@"
}
same() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "ours: $2" "ref:  $3"; fi; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "expected: $2" "got:      $3"; fi; }

# run_impl CASE IMPL CONFLIST_JQ: one full cycle; leaves facts in $tmp/CASE.IMPL.*
run_impl() {
	local case=$1 impl=$2 filter=$3 n=0 rc
	local dev=hd$tag${case:0:1}$impl dir=$tmp/$case.$impl ns=e2ehd$tag-$case-$impl
	local nspath=/var/run/netns/$ns mac path
	mkdir -p "$dir/conf" "$dir/bin"
	ip link add "$dev" type veth peer name "${dev}p"
	cleanups+=("ip link del '$dev'" "ip link del '${dev}p'")
	ip link set "$dev" up
	ip netns add "$ns"
	cleanups+=("ip netns del '$ns'")
	mac=$(ip -j link show dev "$dev" | jq -r '.[0].address')
	# Ours shadows Debian's host-device by coming first in CNI_PATH.
	if [ "$impl" = ours ]; then path=$plugin_dir:$ref_dir; else path=$ref_dir; fi
	jq -n --arg dev "$dev" --arg data "$dir/data" "$filter" >"$dir/conf/net.conflist"
	local net
	net=$(jq -r .name "$dir/conf/net.conflist")
	cni() {
		env NETCONFPATH="$dir/conf" CNI_PATH="$path" CNI_IFNAME=net1 \
			"$client" --cache-dir "$dir/cache" "$1" "$net" "$nspath" >"$dir/$1.$n.out" 2>"$dir/$1.$n.err"
	}
	rc=0; cni add || rc=$?
	echo "$rc" >"$dir/add.rc"
	jq -S --arg mac "$mac" --arg ns "$nspath" '
		walk(if type == "string" then (if . == $mac then "<mac>" elif . == $ns then "<netns>" else . end) else . end)
		| if (.dns // {}) == {} then del(.dns) else . end' "$dir/add.0.out" >"$dir/result" 2>/dev/null || cp "$dir/add.0.out" "$dir/result"
	# The alias is the original name, which differs between the runs: compared as "is the device's name".
	jq -nc --arg mac "$mac" --arg dev "$dev" --argjson l "$(ip -n "$ns" -d -j link show dev net1 2>/dev/null || echo '[{}]')" \
		--argjson a "$(ip -n "$ns" -j addr show dev net1 2>/dev/null || echo '[{}]')" '
		{ifname: $l[0].ifname, up: (($l[0].flags // []) | index("UP") != null),
		 alias_is_orig_name: ($l[0].ifalias == $dev), mac: ($l[0].address == $mac),
		 addrs: [$a[0].addr_info[]? | select(.family == "inet") | "\(.local)/\(.prefixlen)"]}' >"$dir/pod"
	n=1; rc=0; cni check || rc=$?
	echo "$rc" >"$dir/check.rc"
	n=2; rc=0; cni del || rc=$?
	echo "$rc" >"$dir/del.rc"
	ip -j link show dev "$dev" 2>/dev/null | jq -c '.[0] | {ifname, up: ((.flags // []) | index("UP") != null), alias: (.ifalias // "")}' >"$dir/host" || echo gone >"$dir/host"
	ip -n "$ns" -j link show | jq -r '[.[].ifname] | join(" ")' >"$dir/pod-after"
	n=3; rc=0; cni del || rc=$?
	echo "$rc" >"$dir/del2.rc"
	cat "$dir/del.3.err" >"$dir/del2.err"
}

# compare CASE: CHECK is run only from 0.4.0 on (libcni refuses it below).
compare() {
	local c=$1 o=$tmp/$1.ours r=$tmp/$1.ref
	eq "[$c] ours: ADD exits 0" 0 "$(cat "$o/add.rc")"
	eq "[$c] ref: ADD exits 0" 0 "$(cat "$r/add.rc")"
	same "[$c] same ADD result" "$(cat "$o/result")" "$(cat "$r/result")"
	same "[$c] same pod interface after ADD" "$(cat "$o/pod")" "$(cat "$r/pod")"
	eq "[$c] ours: net1 up, alias = original name, same MAC" true \
		"$(jq '.up and .alias_is_orig_name and .mac' "$o/pod")"
	same "[$c] same CHECK outcome" "$(cat "$o/check.rc")" "$(cat "$r/check.rc")"
	eq "[$c] ours: DEL exits 0" 0 "$(cat "$o/del.rc")"
	eq "[$c] ref: DEL exits 0" 0 "$(cat "$r/del.rc")"
	# Expected difference: ours gives back the up state and alias the device
	# had before ADD (up, none); Debian's leaves it down.
	eq "[$c] ours: device back under its name, up as before ADD, no alias" \
		"{\"ifname\":\"hd${tag}${c:0:1}ours\",\"up\":true,\"alias\":\"\"}" "$(cat "$o/host")"
	# Expected difference: Debian's 1.1.1 leaves the alias set (the reference revision clears it).
	eq "[$c] ref: back under its name, down, alias left set (expected difference)" \
		"{\"ifname\":\"hd${tag}${c:0:1}ref\",\"up\":false,\"alias\":\"hd${tag}${c:0:1}ref\"}" "$(cat "$r/host")"
	same "[$c] same pod after DEL" "$(cat "$o/pod-after")" "$(cat "$r/pod-after")"
	# Expected difference: the reference host-device is not idempotent. In the
	# chain, Debian's sbr fails a repeated DEL for both (the link is gone).
	if [ "$c" = chain ]; then
		eq "[$c] second DEL: only sbr fails with ours" 1 "$(grep -c 'plugin type="sbr"' "$o/del2.err")"
		return
	fi
	eq "[$c] ours: second DEL exits 0" 0 "$(cat "$o/del2.rc")"
	eq "[$c] ref: second DEL fails (expected difference)" 1 "$(cat "$r/del2.rc")"
	if grep -q 'failed to find "net1"' "$r/del2.err"; then ok "[$c] ref: its message names net1"; else
		bad "[$c] ref: its message names net1" "$(cat "$r/del2.err")"; fi
}

plain='{cniVersion: "1.0.0", name: "hd-plain", plugins: [
	{type: "host-device", device: $dev,
	 ipam: {type: "host-local", dataDir: $data, subnet: "10.61.0.0/24", routes: [{dst: "10.62.0.0/16", gw: "10.61.0.1"}]}}]}'
# The Network Operator's metaPlugins chain at 0.3.1 (the NAD config with a device).
chain='{cniVersion: "0.3.1", name: "hd-chain", plugins: [
	{type: "host-device", device: $dev, ipam: {type: "host-local", dataDir: $data, subnet: "10.63.0.0/24"}},
	{type: "tuning", sysctl: {"net.ipv4.conf.IFNAME.arp_ignore": "1", "net.ipv4.conf.IFNAME.rp_filter": "0"}},
	{type: "sbr"}]}'

for c in plain chain; do
	run_impl "$c" ours "${!c}"
	run_impl "$c" ref "${!c}"
	compare "$c"
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
