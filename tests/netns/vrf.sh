#!/usr/bin/env bash
# Real-kernel tests of the vrf meta plugin, run as a runtime runs it (CNI_*
# environment, config on stdin, prevResult of the plugin before it), beside
# the reference vrf of containernetworking/plugins v1.9.1 on the same inputs.
#
#   vrf.sh PLUGIN [REFERENCE_CNI_DIR]
#
# The interface the chain made is a veth end in the pod, with IPv4 and IPv6
# addresses, a default route and routes of its own. The reference vrf comes
# from ../shared (tests/netns/refplugins.sh; without it those comparisons are
# not run, the rest is). Whether the kernel can make a VRF is tried first:
# where it cannot (this host's kernel has no driver), ADD fails with code 100
# naming the driver and leaves the interface as it was, and DEL succeeds; where
# it can (the kernel matrix's guests), the interface, its addresses and routes
# moved into the VRF's table, several interfaces in one VRF, DEL removing the
# VRF only when it holds nothing, the table picked or given, a VRF name that is
# another link, a table the pod uses, an interface with a master already, and
# SIGKILL at each netlink send of ADD followed by DEL. Needs root; exits 77
# only when network namespaces cannot be created.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/refplugins.sh"

[ $# -ge 1 ] || { echo "usage: $0 PLUGIN [REFERENCE_CNI_DIR]"; exit 1; }
T_PLUGIN=$(realpath "$1")
OURS=$T_PLUGIN
[ -x "$T_PLUGIN" ] || { echo "FAIL: plugin $T_PLUGIN is not executable"; exit 1; }

t_init
GO=
shared_reference_plugins "$T_DIR/ref" vrf && GO=$T_DIR/ref/vrf
T_ENV_PATH=$T_DIR

lk_netns() { # VAR: a netns with this suite's prefix, deleted on cleanup
	local name
	t_name name lk
	ip netns add "$name" || { echo "FAIL: ip netns add $name"; exit 1; }
	t_defer "[ ! -e '/var/run/netns/$name' ] || ip netns del '$name'"
	printf -v "$1" '%s' "$name"
}

HOST_BEFORE=$(t_links)
lk_netns POD
P=/var/run/netns/$POD
T_ENV_NETNS=$P
T_ENV_IFNAME=lka
REF_NS=$POD
pod() { ip -n "$POD" "$@"; }

# iface NAME N: a veth end NAME in the pod (its peer NAME-p beside it) as the chain's
# interface plugin leaves it: 10.71.N.2/24 and fd71:N::2/64, a default route, a route of
# each family through a gateway. One ip for it all.
iface() {
	local n=$2
	[ ! -e "/var/run/netns/$POD" ] || pod link del "$1" 2>/dev/null
	pod -batch - <<EOF2
link add $1 type veth peer name $1-p
link set $1-p up
addr add 10.71.$n.2/24 dev $1
addr add fd71:$n::2/64 dev $1 nodad
link set $1 up
route add default via 10.71.$n.1 dev $1
route add 10.72.$n.0/24 via 10.71.$n.1 dev $1
route add fd72:$n::/64 via fd71:$n::1 dev $1
EOF2
}
# prev NAME N: the prevResult the interface plugin returned for it.
prev() {
	printf '{"cniVersion":"1.0.0","interfaces":[{"name":"%s","sandbox":"%s"}],"ips":[{"address":"10.71.%s.2/24","gateway":"10.71.%s.1","interface":0},{"address":"fd71:%s::2/64","interface":0}],"routes":[{"dst":"0.0.0.0/0"},{"dst":"10.72.%s.0/24","gw":"10.71.%s.1"}]}' \
		"$1" "$P" "$2" "$2" "$2" "$2" "$2"
}
# conf VERSION VRF NAME N [EXTRA]: a vrf config chained after NAME's plugin.
conf() {
	printf '{"cniVersion":"%s","name":"lknet","type":"vrf","vrfname":"%s"%s,"prevResult":%s}' \
		"$1" "$2" "${5:-}" "$(prev "$3" "$4" | sed "s/\"1.0.0\"/\"$1\"/")"
}
# vrfs: "name:table" of the pod's VRFs.
vrfs() { pod -d -j link show | jq -r '[.[] | select(.linkinfo.info_kind == "vrf") | "\(.ifname):\(.linkinfo.info_data.table)"] | join(" ")'; }
master() { t_link_json "$POD" "$1" | jq -r '.master // "-"'; }
# routes NAME [TABLE]: the interface's routes of a table ("main" by default).
routes() {
	{ pod -4 -j route show table "${2:-main}" dev "$1"; pod -6 -j route show table "${2:-main}" dev "$1"; } 2>/dev/null |
		jq -rs '[add[] | select((.dst | startswith("fe80") | not) and (.type // "unicast") == "unicast") | "\(.dst)\(if .gateway then " via " + .gateway else "" end)"] | sort | join(",")'
}
addrs() { pod -j addr show dev "$1" | jq -r '[.[0].addr_info[] | select(.scope == "global") | "\(.local)/\(.prefixlen)"] | sort | join(",")'; }

iface lka 1
BEFORE_ROUTES=$(routes lka)
BEFORE_ADDRS=$(addrs lka)
t_eq "the interface's routes before" "10.71.1.0/24,10.72.1.0/24 via 10.71.1.1,default via 10.71.1.1,fd71:1::/64,fd72:1::/64 via fd71:1::1" "$BEFORE_ROUTES"

# untouched DESC: no VRF, the interface free, with its addresses and routes (one jq
# over the four dumps: under user-mode Linux every process counts).
untouched() {
	local s
	s=$({ pod -d -j link show; pod -j addr show dev lka; pod -4 -j route show table main dev lka
		pod -6 -j route show table main dev lka; } 2>/dev/null | jq -rs '
		([.[0][] | select(.linkinfo.info_kind == "vrf") | "\(.ifname):\(.linkinfo.info_data.table)"] | join(" ")),
		(.[0][] | select(.ifname == "lka") | .master // "-"),
		([.[1][0].addr_info[] | select(.scope == "global") | "\(.local)/\(.prefixlen)"] | sort | join(",")),
		([(.[2] + .[3])[] | select((.dst | startswith("fe80") | not) and (.type // "unicast") == "unicast")
		  | "\(.dst)\(if .gateway then " via " + .gateway else "" end)"] | sort | join(","))' | paste -sd'|')
	t_eq "$1: no VRF, the interface free, its addresses and routes as before" \
		"|-|$BEFORE_ADDRS|$BEFORE_ROUTES" "$s"
}

# refused DESC CODE MSG CONF [ENV...]: ADD refused, the pod untouched; DEL succeeds, but
# for a field of the wrong JSON type (code 6), which fails it as it fails ADD.
refused() {
	local desc=$1 code=$2 msg=$3 c=$4
	shift 4
	t_cni ADD "$c" "$@"
	t_err "$desc" "$code" "$msg"
	untouched "$desc"
	t_cni DEL "$c" "$@"
	if [ "$code" = 6 ]; then t_err "$desc: DEL" 6 "$msg"; else t_ok "$desc: DEL"; fi
}

# What no kernel decides, the host run covers: the kernel matrix's guests
# (NETNS_KERNEL_ONLY, tests/kernel/guest-init.sh) go on to the kernel's part.
if [ -z "${NETNS_KERNEL_ONLY:-}" ]; then
	echo "# 1. refused before the kernel is asked"
	refused "no vrfname" 7 "configuration is expected to have a valid vrf name" "$(conf 1.0.0 "" lka 1)"
	refused "a vrfname with a slash" 7 "invalid vrfname" "$(conf 1.0.0 a/b lka 1)"
	refused "a vrfname too long" 7 "invalid vrfname" "$(conf 1.0.0 lk-0123456789abcdef lka 1)"
	refused "table 254" 7 "the kernel's main table" "$(conf 1.0.0 lkv lka 1 ',"table":254')"
	refused "table 255" 7 "the kernel's local table" "$(conf 1.0.0 lkv lka 1 ',"table":255')"
	refused "table -1" 7 '"table"' "$(conf 1.0.0 lkv lka 1 ',"table":-1')"
	refused "table 2^32" 7 '"table"' "$(conf 1.0.0 lkv lka 1 ',"table":4294967296')"
	refused "table as a string" 6 '"table"' "$(conf 1.0.0 lkv lka 1 ',"table":"10"')"
	refused "table 1e300" 6 '"table"' "$(conf 1.0.0 lkv lka 1 ',"table":1e300')"
	ref_hostile_strings untouched "$(conf 1.0.0 lkv lka 1)" vrfname 7 7
	refused "no prevResult" 7 "missing prevResult from earlier plugin" \
		'{"cniVersion":"1.0.0","name":"lknet","type":"vrf","vrfname":"lkv"}'
	refused "an interface the pod does not have" 7 "could not get link by name lknone" \
		"$(conf 1.0.0 lkv lka 1)" CNI_IFNAME=lknone
	refused "a vrfname that is another link (lo)" 7 "Netlink lo is not a VRF" "$(conf 1.0.0 lo lka 1)"
	t_jq "lo is as it was" "$(t_link_json "$POD" lo)" '"\(.linkinfo.info_kind // "-") \(.master // "-")"' "- -"
	if [ -n "$GO" ]; then
		ref_use_reference "$GO"
		t_cni ADD "$(conf 1.0.0 lo lka 1)"
		t_ne "the reference refuses a vrfname that is another link too" 0 "$T_RC"
		ref_use_ours "$OURS"
	fi
fi

if ! pod link add lkprobe type vrf table 99 2>/dev/null; then
	echo "# the kernel has no VRF driver: ADD must say so and leave the interface as it was"
	t_cni ADD "$(conf 1.0.0 lkv lka 1)"
	t_err "ADD fails naming the missing VRF driver" 100 'the kernel has no VRF driver (CONFIG_NET_VRF, module "vrf")'
	t_contains "the kernel's word in details" "Unknown device type" "$(jq -r .details <<<"$T_OUT")"
	untouched "no driver"
	t_cni DEL "$(conf 1.0.0 lkv lka 1)"
	t_ok "DEL exits 0"
	t_cni DEL "$(conf 1.0.0 lkv lka 1)"
	t_ok "a second DEL exits 0"
	if [ -n "$GO" ]; then
		ref_use_reference "$GO"
		t_cni ADD "$(conf 1.0.0 lkv lka 1)"
		t_ne "the reference fails too" 0 "$T_RC"
		ref_use_ours "$OURS"
		untouched "the reference's failure"
	fi
	t_cleanup
	t_eq "the host's links as before the suite" "$HOST_BEFORE" "$(t_links)"
	t_summary
fi
pod link del lkprobe

echo "# 2. ADD: the interface, its addresses and routes in the VRF"
C=$(conf 1.1.0 lkv lka 1)
t_cni ADD "$C"
t_ok "ADD"
RES=$T_OUT
t_eq "the result is prevResult, passed through" "$(prev lka 1 | sed 's/"1.0.0"/"1.1.0"/' | jq -cS .)" "$(jq -cS . <<<"$RES")"
t_eq "a VRF lkv of table 1 (the first free one)" "lkv:1" "$(vrfs)"
t_jq "it is up" "$(t_link_json "$POD" lkv)" '(.flags // []) | index("UP") != null' true
t_eq "the interface is in it" lkv "$(master lka)"
t_eq "its addresses, IPv6 restored" "$BEFORE_ADDRS" "$(addrs lka)"
t_eq "its routes, in table 1" "$BEFORE_ROUTES" "$(routes lka 1)"
t_eq "none left in main" "" "$(routes lka)"
t_cni CHECK "$(conf 1.1.0 lkv lka 1 | jq -c --argjson r "$RES" '.prevResult = $r')"
t_ok "CHECK"
t_cni CHECK "$(conf 1.1.0 lkv lka 1 ',"table":7')"
t_err "CHECK with another table" 103 "has routing table 1, the config 7"
t_cni ADD "$C"
t_err "ADD again: the interface has its master" 7 "interface lka has already a master set: lkv"

echo "# 3. a second interface in the same VRF; DEL deletes the VRF with the last one"
iface lkb 2
t_cni ADD "$(conf 1.1.0 lkv lkb 2)" CNI_IFNAME=lkb
t_ok "ADD of the second interface"
t_eq "still one VRF, of table 1" "lkv:1" "$(vrfs)"
t_eq "the second interface is in it" lkv "$(master lkb)"
t_eq "its routes in table 1" "10.71.2.0/24,10.72.2.0/24 via 10.71.2.1,default via 10.71.2.1,fd71:2::/64,fd72:2::/64 via fd71:2::1" "$(routes lkb 1)"
t_cni CHECK "$(conf 1.1.0 lkv lkb 1)" CNI_IFNAME=lkb
t_ok "CHECK of the second"
t_cni ADD "$(conf 1.1.0 lkv lkb 2 ',"table":5')" CNI_IFNAME=lkb
t_err "a VRF of that name with another table" 7 "VRF lkv already exist with different routing table 1"
t_cni DEL "$C"
t_ok "DEL of the first"
t_eq "the VRF stays for the second" "lkv:1" "$(vrfs)"
t_eq "the first is free" - "$(master lka)"
t_eq "the second stays in it" lkv "$(master lkb)"
t_cni DEL "$C"
t_ok "DEL of the first again"
t_cni DEL "$(conf 1.1.0 lkv lkb 2)" CNI_IFNAME=lkb
t_ok "DEL of the second"
t_eq "the VRF is gone with the last interface" "" "$(vrfs)"
t_eq "the second is free" - "$(master lkb)"
t_cni DEL "$(conf 1.1.0 lkv lkb 2)" CNI_IFNAME=lkb
t_ok "DEL again, the VRF gone"
pod link del lkb

echo "# 4. the table: given, picked around the tables the pod uses"
iface lka 1
C=$(conf 1.0.0 lkv lka 1 ',"table":4000000000')
t_cni ADD "$C"
t_ok "ADD with table 4000000000"
t_eq "the VRF has it" "lkv:4000000000" "$(vrfs)"
t_eq "the routes are there" "$BEFORE_ROUTES" "$(routes lka 4000000000)"
t_cni DEL "$C"
t_eq "DEL: no VRF" "" "$(vrfs)"
iface lka 1
pod route add 10.80.0.0/16 dev lka-p table 1
pod rule add from 10.81.0.1 lookup 2
refused "a table that holds a route" 7 "table 1 is in use in the pod" "$(conf 1.0.0 lkv lka 1 ',"table":1')"
refused "a table a rule points at" 7 "table 2 is in use in the pod" "$(conf 1.0.0 lkv lka 1 ',"table":2')"
C=$(conf 1.0.0 lkv lka 1)
t_cni ADD "$C"
t_ok "ADD without table"
t_eq "table 3: 1 holds a route, a rule points at 2" "lkv:3" "$(vrfs)"
t_eq "table 1's route untouched" "10.80.0.0/16" "$(routes lka-p 1)"
t_cni DEL "$C"
pod rule del from 10.81.0.1 lookup 2
pod route del 10.80.0.0/16 dev lka-p table 1

echo "# 5. an interface with a master already"
iface lka 1
pod link add lkbr type bridge
pod link set lka master lkbr
BEFORE_ROUTES_BR=$(routes lka)
t_cni ADD "$(conf 1.0.0 lkv lka 1)"
t_err "an interface in a bridge" 7 "interface lka has already a master set: lkbr"
t_eq "no VRF made" "" "$(vrfs)"
t_eq "the interface stays in the bridge" lkbr "$(master lka)"
t_cni DEL "$(conf 1.0.0 lkv lka 1)"
t_ok "DEL"
t_eq "DEL leaves it in the bridge" lkbr "$(master lka)"
pod link del lkbr

echo "# 6. versions, and beside the reference"
for v in ${NETNS_CNI_VERSIONS:-0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}; do
	case $v in 0.1.0 | 0.2.0) continue ;; esac
	iface lka 1
	t_cni ADD "$(conf "$v" lkv lka 1)"
	t_ok "[$v] ADD"
	t_jq "[$v] the result in that version" "$T_OUT" '.cniVersion' "$v"
	t_eq "[$v] in the VRF" lkv "$(master lka)"
	t_cni DEL "$(conf "$v" lkv lka 1)"
	t_ok "[$v] DEL"
	t_eq "[$v] no VRF after" "" "$(vrfs)"
done
if [ -n "$GO" ]; then
	# The reference's DEL leaves the interface without its routes as ours does: made again each time.
	for c in "$(conf 1.1.0 lkv lka 1)" "$(conf 0.4.0 lkv lka 1 ',"table":100')" "$(conf 1.0.0 lkv lka 1 ',"table":4000000000')"; do
		iface lka 1
		ref_use_ours "$OURS"
		t_cni ADD "$c"
		o_rc=$T_RC o_out=$T_OUT o_state="$(ref_state "$POD" lka) $(vrfs)"
		t_cni DEL "$c"
		o_del="$(vrfs) $(master lka)"
		iface lka 1
		ref_use_reference "$GO"
		t_cni ADD "$c"
		g_rc=$T_RC g_out=$T_OUT g_state="$(ref_state "$POD" lka) $(vrfs)"
		t_cni DEL "$c"
		g_del="$(vrfs) $(master lka)"
		ref_use_ours "$OURS"
		d=$(jq -r '"\(.cniVersion) table \(.table // "none")"' <<<"$c")
		t_eq "[$d] ours and the reference both succeed" "0 0" "$o_rc $g_rc"
		t_eq "[$d] the same result" "$(ref_result "$g_out")" "$(ref_result "$o_out")"
		t_eq "[$d] the same interface, addresses, routes and VRF" "$g_state" "$o_state"
		t_eq "[$d] the same after DEL" "$g_del" "$o_del"
	done
	# The reference picks table 1 though a route is there; ours goes around it.
	iface lka 1
	pod route add 10.80.0.0/16 dev lka-p table 1
	ref_use_reference "$GO"
	t_cni ADD "$(conf 1.0.0 lkv lka 1)"
	t_eq "the reference puts the VRF on table 1, where a route is" "lkv:1" "$(vrfs)"
	t_cni DEL "$(conf 1.0.0 lkv lka 1)"
	ref_use_ours "$OURS"
	pod route del 10.80.0.0/16 dev lka-p table 1
	# The reference makes the VRF before looking for the interface, and leaves it.
	ref_use_reference "$GO"
	t_cni ADD "$(conf 1.0.0 lkv lka 1)" CNI_IFNAME=lknone
	t_eq "the reference leaves a VRF when the interface is missing" "lkv:1" "$(vrfs)"
	t_cni DEL "$(conf 1.0.0 lkv lka 1)" CNI_IFNAME=lknone
	ref_use_ours "$OURS"
	pod link del lkv 2>/dev/null
fi

echo "# 7. SIGKILL at every netlink send of ADD, then DEL"
C=$(conf 1.0.0 lkv lka 1)
kills=0
for sys in sendto sendmsg; do
	for ((n = 1; n < 100; n++)); do
		iface lka 1
		(printf '%s' "$C" | env CNI_COMMAND=ADD CNI_CONTAINERID=kill$n CNI_NETNS="$P" CNI_IFNAME=lka CNI_PATH="$T_DIR" \
			strace -f -qq -o /dev/null -e trace=sendto,sendmsg \
			-e inject="$sys":signal=SIGKILL:when=$n "$OURS" >/dev/null 2>&1) 2>/dev/null
		rc=$?
		[ "$rc" = 137 ] && kills=$((kills + 1))
		t_cni DEL "$C" CNI_CONTAINERID=kill$n
		t_ok "DEL after ADD killed at $sys #$n"
		t_cni DEL "$C" CNI_CONTAINERID=kill$n
		t_ok "DEL again after ADD killed at $sys #$n"
		t_eq "killed at $sys #$n: no VRF" "" "$(vrfs)"
		t_eq "killed at $sys #$n: the interface free" - "$(master lka)"
		[ "$rc" = 137 ] || break
	done
	t_eq "the last $sys pass ran to its end" yes "$([ "$rc" != 137 ] && echo yes)"
done
t_ne "ADD was killed at some send" 0 "$kills"

echo "# 8. a failure at every netlink send of ADD: the ADD undone"
# strace makes the Nth sendmsg fail (EIO) and lets the others through: each step's
# failure, and its undo, in turn. Past the last send ADD succeeds and DEL follows.
for ((n = 1; n < 100; n++)); do
	iface lka 1
	(printf '%s' "$C" | env CNI_COMMAND=ADD CNI_CONTAINERID=fail$n CNI_NETNS="$P" CNI_IFNAME=lka \
		CNI_PATH="$T_DIR" strace -f -qq -o /dev/null -e trace=sendmsg -e inject=sendmsg:error=EIO:when=$n \
		"$OURS" >"$T_DIR/fail.out" 2>/dev/null) 2>/dev/null
	rc=$?
	if [ "$rc" = 0 ]; then
		t_cni DEL "$C" CNI_CONTAINERID=fail$n
		t_ok "past the last send (#$n) ADD succeeds, and DEL"
		t_eq "after the last send: no VRF" "" "$(vrfs)"
		break
	fi
	t_jq "send #$n failed: a CNI error" "$(cat "$T_DIR/fail.out")" '(.code | type) == "number" and .code > 0' true
	untouched "send #$n failed"
done
t_ne "ADD failed at some send" 1 "$n"

echo "# 9. DEL where there is nothing of ours"
iface lka 1
t_cni DEL "$(conf 1.0.0 lo lka 1)"
t_ok "DEL with a vrfname that is another link"
t_jq "lo is as it was" "$(t_link_json "$POD" lo)" '"\(.linkinfo.info_kind // "-") \(.master // "-")"' "- -"
t_cni DEL "$(conf 1.0.0 "" lka 1)"
t_ok "DEL with a config ADD refuses"
pod link add lkv type vrf table 50
pod link set lka master lkv
pod link add lkc type veth peer name lkc-p
pod link set lkc master lkv
t_cni DEL "$(conf 1.0.0 lkv lka 1)" CNI_IFNAME=lkc-p
t_ok "DEL of an interface not in the VRF"
t_eq "the VRF and its interfaces stay" "lkv lkv" "$(master lka) $(master lkc)"
ip netns del "$POD"
t_cni DEL "$(conf 1.0.0 lkv lka 1)"
t_ok "DEL with the netns gone"

t_cleanup
t_eq "the host's links as before the suite" "$HOST_BEFORE" "$(t_links)"
t_summary
