#!/usr/bin/env bash
# Real-kernel tests of the ipvlan plugin, run as a runtime runs it (CNI_*
# environment, config on stdin), beside the reference ipvlan of
# containernetworking/plugins v1.9.1 on the same inputs.
#
#   ipvlan.sh PLUGIN [REFERENCE_CNI_DIR]
#
# REFERENCE_CNI_DIR (default /usr/lib/cni, Debian's containernetworking-plugins)
# provides the host-local and static IPAM plugins; the reference ipvlan comes
# from ../shared (tests/netns/refplugins.sh; without it those comparisons are
# not run, the rest is). Whether the kernel can make an ipvlan is tried first:
# where it cannot (this host's kernel has no driver), ADD fails with code 100
# naming the driver, leaves nothing, and DEL succeeds; where it can (the kernel
# matrix's guests), every mode and flag, CHECK, DEL, linkInContainer, the
# default route's master, chaining after a plugin with addresses, the master's
# own address refused, failures after the link exists, and SIGKILL at each
# netlink send of ADD followed by DEL. Needs root; exits 77 only when network
# namespaces cannot be created.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/refplugins.sh"

[ $# -ge 1 ] || { echo "usage: $0 PLUGIN [REFERENCE_CNI_DIR]"; exit 1; }
T_PLUGIN=$(realpath "$1")
OURS=$T_PLUGIN
REF=${2:-/usr/lib/cni}
[ -x "$T_PLUGIN" ] || { echo "FAIL: plugin $T_PLUGIN is not executable"; exit 1; }
for p in host-local static; do
	[ -x "$REF/$p" ] || { echo "FAIL: $REF/$p not found (containernetworking-plugins)"; exit 1; }
done

t_init
VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
BIN=$T_DIR/bin
DATA=$T_DIR/ipam
mkdir -p "$BIN" "$DATA"
T_ENV_PATH=$BIN
t_ref_ipam "$BIN" "$REF" host-local static
GO=
shared_reference_plugins "$T_DIR/ref" ipvlan && GO=$T_DIR/ref/ipvlan
cat >"$BIN/failipam" <<'EOF2'
#!/bin/sh
[ "$CNI_COMMAND" != ADD ] && exit 0
printf '{"code":11,"msg":"pool busy"}'
exit 1
EOF2
chmod +x "$BIN/failipam"
STORE=$DATA/lknet

lk_netns() { # VAR: a netns with this suite's prefix, deleted on cleanup
	local name
	t_name name lk
	ip netns add "$name" || { echo "FAIL: ip netns add $name"; exit 1; }
	t_defer "[ ! -e '/var/run/netns/$name' ] || ip netns del '$name'"
	printf -v "$1" '%s' "$name"
}

HOST_BEFORE=$(t_links)
t_name M lkm
t_name MP lkp
t_veth "$M" "$MP"
ip addr add 10.66.0.1/24 dev "$M"
t_mac MAC "$M"
lk_netns POD
T_ENV_NETNS=/var/run/netns/$POD
REF_NS=$POD
HOST_START=$(t_links)

# conf VERSION EXTRA: an ipvlan config on $M; EXTRA is JSON members, comma first.
conf() { printf '{"cniVersion":"%s","name":"lknet","type":"ipvlan","master":"%s"%s}' "$1" "$M" "${2:-}"; }
static() { printf ',"ipam":{"type":"static","addresses":[{"address":"%s"}]%s}' "$1" "${2:-}"; }
HOSTLOCAL=',"ipam":{"type":"host-local","dataDir":"'$DATA'","subnet":"10.65.0.0/24","routes":[{"dst":"10.67.0.0/16"}]}'
with_prev() { printf '%s,"prevResult":%s}' "${1%\}}" "$2"; }

# clean DESC: the pod holds lo only, the host's links and the master's address as at start,
# host-local holds nothing.
POD_BASE=lo
clean() {
	t_eq "$1: the pod holds what it held before" "$POD_BASE" "$(t_link_names "$POD")"
	t_eq "$1: host links as at start" "$HOST_START" "$(t_links)"
	t_eq "$1: nothing reserved" "" "$(t_store_ips "$STORE")"
}

# refused DESC CODE MSG CONF [ENV...]: ADD refused with CODE, nothing made, DEL fine.
refused() {
	local desc=$1 code=$2 msg=$3 c=$4
	shift 4
	t_cni ADD "$c" "$@"
	t_err "$desc" "$code" "$msg"
	t_cni DEL "$c" "$@"
	t_ok "$desc: DEL"
	clean "$desc"
}

# What no kernel decides, the host run covers: the kernel matrix's guests
# (NETNS_KERNEL_ONLY, tests/kernel/guest-init.sh) go on to the kernel's part.
if [ -z "${NETNS_KERNEL_ONLY:-}" ]; then
	echo "# 1. refused before the kernel is asked"
	refused "unknown mode" 7 'unknown ipvlan mode: "l4"' "$(conf 1.0.0 ',"mode":"l4"'"$HOSTLOCAL")"
	refused "unknown flag" 7 'unknown ipvlan flag: "passthru"' "$(conf 1.0.0 ',"flag":"passthru"'"$HOSTLOCAL")"
	refused "mode of another type" 6 '"mode"' "$(conf 1.0.0 ',"mode":3'"$HOSTLOCAL")"
	refused "negative MTU" 7 "invalid MTU -1" "$(conf 1.0.0 ',"mtu":-1'"$HOSTLOCAL")"
	refused "MTU above the master's" 7 "must be [0, master MTU(1500)]" "$(conf 1.0.0 ',"mtu":9000'"$HOSTLOCAL")"
	refused "a master that does not exist" 102 'failed to lookup master "lknone"' \
		"$(conf 1.0.0 "$HOSTLOCAL" | sed "s/\"$M\"/\"lknone\"/")"
	refused "a master name too long" 7 "invalid master" "$(conf 1.0.0 "$HOSTLOCAL" | sed "s/\"$M\"/\"lk-0123456789abcdef\"/")"
	refused "lo as master" 7 "it is a loopback" "$(conf 1.0.0 "$HOSTLOCAL" | sed "s/\"$M\"/\"lo\"/")"
	refused "no IPAM and no prevResult" 7 "no plugin name provided" "$(conf 1.0.0)"
	refused "chained without master, prevResult of two interfaces" 7 "chained master failure" \
		"$(with_prev "$(conf 1.0.0 | sed "s/,\"master\":\"$M\"//")" \
			'{"cniVersion":"1.0.0","interfaces":[{"name":"a"},{"name":"b"}],"ips":[{"address":"10.66.0.9/24"}]}')"
	refused "MTU 1e300" 6 '"mtu"' "$(conf 1.0.0 ',"mtu":1e300'"$HOSTLOCAL")"
	for k in master mode flag; do
		ref_hostile_strings clean "$(conf 1.0.0 "$HOSTLOCAL")" "$k" 7 7
	done
	t_cni ADD "$(conf 1.0.0 "$HOSTLOCAL")" CNI_IFNAME=a/b
	t_err "CNI_IFNAME with a slash" 4 ""
	clean "CNI_IFNAME with a slash"
	if [ -n "$GO" ]; then
		ref_use_reference "$GO"
		for c in "$(conf 1.0.0 ',"mode":"l4"'"$HOSTLOCAL")" "$(conf 1.0.0 "$HOSTLOCAL" | sed "s/\"$M\"/\"lknone\"/")"; do
			t_cni ADD "$c"
			t_ne "the reference refuses it too: $c" 0 "$T_RC"
			t_cni DEL "$c"
		done
		ref_use_ours "$OURS"
		clean "after the reference's refusals"
	fi
fi

if ! ip -n "$POD" link add lkprobe type veth peer name lkprobe1 ||
	! ip -n "$POD" link add link lkprobe name lkprobe2 type ipvlan mode l2 2>/dev/null; then
	ip -n "$POD" link del lkprobe 2>/dev/null
	echo "# the kernel has no ipvlan driver: ADD must say so and leave nothing"
	t_cni ADD "$(conf 1.0.0 "$HOSTLOCAL")"
	t_err "ADD fails naming the missing ipvlan driver" 100 "the kernel has no ipvlan driver"
	t_contains "the kernel's word in details" "Unknown device type" "$(jq -r .details <<<"$T_OUT")"
	clean "no driver"
	t_cni DEL "$(conf 1.0.0 "$HOSTLOCAL")"
	t_ok "DEL exits 0"
	t_cni DEL "$(conf 1.0.0 "$HOSTLOCAL")"
	t_ok "a second DEL exits 0"
	if [ -n "$GO" ]; then
		ref_use_reference "$GO"
		t_cni ADD "$(conf 1.0.0 "$HOSTLOCAL")"
		t_ne "the reference fails too" 0 "$T_RC"
		t_cni DEL "$(conf 1.0.0 "$HOSTLOCAL")"
		ref_use_ours "$OURS"
		clean "the reference's failure"
	fi
	t_cleanup
	t_summary
fi
ip -n "$POD" link del lkprobe

echo "# 2. the result at every version (static IPAM)"
i=0
for v in $VERSIONS; do
	i=$((i + 1))
	t_cni ADD "$(conf "$v" "$(static "10.66.$i.2/24")")" CNI_IFNAME="lv$i"
	t_ok "[$v] ADD"
	case $v in
	0.1.0 | 0.2.0)
		t_jq "[$v] result: ip4" "$T_OUT" '"\(.cniVersion) \(.ip4.ip) \(has("interfaces"))"' "$v 10.66.$i.2/24 false" ;;
	*)
		t_jq "[$v] result: the ipvlan, the master's MAC, its address" "$T_OUT" \
			'"\(.cniVersion) \(.interfaces | length) \(.interfaces[0].name) \(.interfaces[0].mac) \(.interfaces[0].sandbox) \(.ips[0].address) \(.ips[0].interface)"' \
			"$v 1 lv$i $MAC $T_ENV_NETNS 10.66.$i.2/24 0" ;;
	esac
	t_jq "[$v] an ipvlan l2 bridge of the master, up" "$(t_link_json "$POD" "lv$i")" \
		'"\(.linkinfo.info_kind) \(.linkinfo.info_data.mode) \((.flags // []) | index("UP") != null) \(.address)"' "ipvlan l2 true $MAC"
	t_cni DEL "$(conf "$v" "$(static "10.66.$i.2/24")")" CNI_IFNAME="lv$i"
	t_ok "[$v] DEL"
done
clean "every version"

echo "# 3. modes and flags, CHECK of each"
for mode in l2 l3 l3s; do
	for flag in bridge private vepa; do
		c=$(conf 1.0.0 ',"mode":"'$mode'","flag":"'$flag'"'"$(static 10.66.9.2/24)")
		t_cni ADD "$c"
		t_ok "[$mode $flag] ADD"
		res=$T_OUT
		t_jq "[$mode $flag] the kernel's mode and flag" "$(t_link_json "$POD" net1)" \
			'.linkinfo.info_data | "\(.mode) \(if .private then "private" elif .vepa then "vepa" else "bridge" end)"' \
			"$mode $flag"
		t_cni CHECK "$(with_prev "$c" "$res")"
		t_ok "[$mode $flag] CHECK"
		other=l3
		[ "$mode" = l3 ] && other=l2
		t_cni CHECK "$(with_prev "$(conf 1.0.0 ',"mode":"'$other'","flag":"'$flag'"'"$(static 10.66.9.2/24)")" "$res")"
		t_err "[$mode $flag] CHECK with another mode" 103 "does not match expected value: $other"
		t_cni DEL "$c"
		t_ok "[$mode $flag] DEL"
	done
done
clean "modes and flags"
if [ -n "$GO" ]; then
	for mode in l2 l3 l3s; do
		ref_compare "[$mode] beside the reference" "$OURS" "$GO" "$(conf 1.1.0 ',"mode":"'$mode'"'"$(static 10.66.9.2/24 ',"routes":[{"dst":"10.67.0.0/16"}]')")"
	done
	ref_compare "[mtu 1400] beside the reference" "$OURS" "$GO" "$(conf 1.0.0 ',"mtu":1400'"$(static 10.66.9.2/24)")"
	ref_compare "[0.3.1, IPv6] beside the reference" "$OURS" "$GO" "$(conf 0.3.1 "$(static fd66::2/64)")"
	clean "beside the reference"
fi

echo "# 4. host-local: addresses, routes, CHECK, DEL"
C=$(conf 1.1.0 "$HOSTLOCAL")
t_cni ADD "$C"
t_ok "ADD"
RES=$T_OUT
IP=$(t_store_ips "$STORE")
t_match "host-local reserved one address" '^10\.65\.0\.[0-9]+$' "$IP"
S=$(ref_state "$POD" net1)
t_jq "the address, its route, arp_notify" "$S" '"\(.addrs | join(",")) \(.routes | map(select(startswith("10.67"))) | length) \(.arp_notify)"' "$IP/24 1 1"
t_cni CHECK "$(with_prev "$C" "$RES")"
t_ok "CHECK"
ip -n "$POD" link set net1 type ipvlan mode l3
t_cni CHECK "$(with_prev "$C" "$RES")"
t_err "CHECK of an ipvlan whose mode changed" 103 "Container IPVlan mode l3 does not match expected value: l2"
ip -n "$POD" link set net1 type ipvlan mode l2
ip -n "$POD" addr flush dev net1
t_cni CHECK "$(with_prev "$C" "$RES")"
t_err "CHECK of an ipvlan without its address" 103 ""
t_cni ADD "$(conf 1.1.0 "$(static 10.66.9.3/24)")"
t_err "ADD over an existing interface" 100 "already has an interface named"
t_cni DEL "$C"
t_ok "DEL"
t_cni DEL "$C"
t_ok "a second DEL"
clean "host-local"

echo "# 5. linkInContainer, and the default route's link as master"
t_name PM lkq
ip -n "$POD" link add "$PM" type veth peer name lkpeer
ip -n "$POD" link set "$PM" up
ip -n "$POD" addr add 10.68.0.1/24 dev "$PM"
ip -n "$POD" route add default via 10.68.0.254 dev "$PM"
PMAC=$(ip -n "$POD" -j link show dev "$PM" | jq -r '.[0].address')
POD_START=$(t_link_names "$POD")
POD_BASE=$POD_START
C=$(printf '{"cniVersion":"1.0.0","name":"lknet","type":"ipvlan","master":"%s","linkInContainer":true%s}' "$PM" "$(static 10.68.0.5/24)")
t_cni ADD "$C"
t_ok "ADD with the master in the pod"
t_jq "its master is the pod's link" "$T_OUT" '.interfaces[0].mac' "$PMAC"
t_cni CHECK "$(with_prev "$C" "$T_OUT")"
t_ok "CHECK"
t_cni DEL "$C"
t_ok "DEL"
t_eq "the pod as before" "$POD_START" "$(t_link_names "$POD")"
C=$(printf '{"cniVersion":"1.0.0","name":"lknet","type":"ipvlan","linkInContainer":true%s}' "$(static 10.68.0.5/24)")
t_cni ADD "$C"
t_ok "ADD without master: the pod's default route's link"
t_jq "its master is the pod's default route's link" "$T_OUT" '.interfaces[0].mac' "$PMAC"
t_cni DEL "$C"
if [ -n "$GO" ]; then
	ref_compare "[linkInContainer] beside the reference" "$OURS" "$GO" \
		"$(printf '{"cniVersion":"1.0.0","name":"lknet","type":"ipvlan","master":"%s","linkInContainer":true%s}' "$PM" "$(static 10.68.0.5/24)")"
	ref_compare "[the pod's default route] beside the reference" "$OURS" "$GO" "$C"
fi
t_eq "the pod as before" "$POD_START" "$(t_link_names "$POD")"

echo "# 6. chained: the master and the addresses from prevResult"
PREV='{"cniVersion":"1.0.0","interfaces":[{"name":"'$PM'","sandbox":"'$T_ENV_NETNS'"}],"ips":[{"address":"10.68.0.7/24","interface":0}],"routes":[{"dst":"10.69.0.0/16","gw":"10.68.0.254"}]}'
C=$(with_prev '{"cniVersion":"1.0.0","name":"lknet","type":"ipvlan","linkInContainer":true}' "$PREV")
t_cni ADD "$C"
t_ok "ADD chained"
t_jq "the result: the ipvlan holds prevResult's address" "$T_OUT" \
	'"\(.interfaces | length) \(.interfaces[0].name) \(.ips[0].address) \(.ips[0].interface) \(.routes[0].dst)"' "1 net1 10.68.0.7/24 0 10.69.0.0/16"
t_jq "the pod's ipvlan has it, and the route" "$(ref_state "$POD" net1)" \
	'"\(.addrs | join(",")) \(.routes | map(select(startswith("10.69"))) | length)"' "10.68.0.7/24 1"
t_cni DEL "$C"
t_ok "DEL chained"
[ -z "$GO" ] || ref_compare "[chained] beside the reference" "$OURS" "$GO" "$C"
t_eq "the pod as before" "$POD_START" "$(t_link_names "$POD")"

echo "# 7. hostile: the master's own address"
refused "an address the master holds" 7 "is master \"$M\"'s own" "$(conf 1.0.0 "$(static 10.66.0.1/24)")"
t_eq "the master keeps its address" "10.66.0.1/24" \
	"$(ip -j addr show dev "$M" | jq -r '[.[0].addr_info[] | select(.family == "inet") | "\(.local)/\(.prefixlen)"] | join(",")')"
refused "an address the pod's master holds" 7 "is master \"$PM\"'s own" \
	"$(printf '{"cniVersion":"1.0.0","name":"lknet","type":"ipvlan","master":"%s","linkInContainer":true%s}' "$PM" "$(static 10.68.0.1/24)")"
t_eq "the pod as before" "$POD_START" "$(t_link_names "$POD")"
ip -n "$POD" link del "$PM"
POD_BASE=lo

echo "# 8. failures after the ipvlan exists leave nothing"
refused "IPAM fails: its error passed through" 11 "pool busy" "$(conf 1.0.0 ',"ipam":{"type":"failipam"}')"
refused "a route IPAM gave cannot be added" 100 "" \
	"$(conf 1.0.0 ',"ipam":{"type":"host-local","dataDir":"'$DATA'","subnet":"10.65.0.0/24","routes":[{"dst":"10.70.0.0/16","gw":"10.99.0.1"}]}')"

echo "# 9. SIGKILL at every netlink send of ADD, then DEL"
C=$(conf 1.0.0 "$HOSTLOCAL")
kills=0
for sys in sendto sendmsg; do
	for ((n = 1; n < 100; n++)); do
		# (a subshell: the shell's "Killed" notice goes nowhere)
		(printf '%s' "$C" | env CNI_COMMAND=ADD CNI_CONTAINERID=kill$n CNI_NETNS="$T_ENV_NETNS" CNI_IFNAME=net1 \
			CNI_PATH="$BIN" strace -f -qq -o /dev/null -e trace=sendto,sendmsg \
			-e inject="$sys":signal=SIGKILL:when=$n "$OURS" >/dev/null 2>&1) 2>/dev/null
		rc=$?
		[ "$rc" = 137 ] && kills=$((kills + 1))
		t_cni DEL "$C" CNI_CONTAINERID=kill$n
		t_ok "DEL after ADD killed at $sys #$n"
		t_cni DEL "$C" CNI_CONTAINERID=kill$n
		t_ok "DEL again after ADD killed at $sys #$n"
		clean "killed at $sys #$n"
		[ "$rc" = 137 ] || break
	done
	t_eq "the last $sys pass ran to its end" yes "$([ "$rc" != 137 ] && echo yes)"
done
t_ne "ADD was killed at some send" 0 "$kills"

echo "# 10. a failure at every netlink send of ADD: the ADD undone"
# strace makes the Nth sendmsg fail (EIO) and lets the others through: each step's
# failure, and its undo, in turn. Past the last send ADD succeeds and DEL follows.
for ((n = 1; n < 100; n++)); do
	(printf '%s' "$C" | env CNI_COMMAND=ADD CNI_CONTAINERID=fail$n CNI_NETNS="$T_ENV_NETNS" CNI_IFNAME=net1 \
		CNI_PATH="$BIN" strace -f -qq -o /dev/null -e trace=sendmsg -e inject=sendmsg:error=EIO:when=$n \
		"$OURS" >"$T_DIR/fail.out" 2>/dev/null) 2>/dev/null
	rc=$?
	if [ "$rc" = 0 ]; then
		t_cni DEL "$C" CNI_CONTAINERID=fail$n
		t_ok "past the last send (#$n) ADD succeeds, and DEL"
		clean "after the last send"
		break
	fi
	t_jq "send #$n failed: a CNI error" "$(cat "$T_DIR/fail.out")" '(.code | type) == "number" and .code > 0' true
	clean "send #$n failed"
done
t_ne "ADD failed at some send" 1 "$n"

echo "# 11. DEL where there is nothing of ours"
t_cni DEL "$(conf 1.0.0 "$HOSTLOCAL")" CNI_IFNAME=lo
t_ok "DEL of a link that is no ipvlan"
t_eq "it is left in place" lo "$(t_link_names "$POD")"
ip netns del "$POD"
t_cni DEL "$(conf 1.0.0 "$HOSTLOCAL")"
t_ok "DEL with the netns gone"

t_cleanup
t_eq "the host's links as before the suite" "$HOST_BEFORE" "$(t_links)"
t_summary
