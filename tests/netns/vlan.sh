#!/usr/bin/env bash
# Real-kernel tests of the vlan plugin, run as a runtime runs it (CNI_*
# environment, config on stdin), beside the reference vlan of
# containernetworking/plugins v1.9.1 on the same inputs.
#
#   vlan.sh PLUGIN [REFERENCE_CNI_DIR]
#
# REFERENCE_CNI_DIR (default /usr/lib/cni, Debian's containernetworking-plugins)
# provides the host-local and static IPAM plugins; the reference vlan comes
# from ../shared (tests/netns/refplugins.sh; without it those comparisons are
# not run, the rest is). Whether the kernel can make a VLAN link is tried
# first: where it cannot (this host's kernel has no 8021q), ADD fails with code
# 100 naming the driver, leaves nothing, and DEL succeeds; where it can (the
# kernel matrix's guests), the result at every version, CHECK, DEL, MTU,
# linkInContainer, a master holding that id already, a master that is itself a
# VLAN, VLAN 0 on the node's master refused, failures after the link exists,
# and SIGKILL at each netlink send of ADD followed by DEL. Needs root; exits 77
# only when network namespaces cannot be created.
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
shared_reference_plugins "$T_DIR/ref" vlan && GO=$T_DIR/ref/vlan
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
t_mac MAC "$M"
lk_netns POD
T_ENV_NETNS=/var/run/netns/$POD
REF_NS=$POD
HOST_START=$(t_links)

# conf VERSION ID EXTRA: a vlan config on $M; EXTRA is JSON members, comma first.
conf() { printf '{"cniVersion":"%s","name":"lknet","type":"vlan","master":"%s","vlanId":%s%s}' "$1" "$M" "$2" "${3:-}"; }
static() { printf ',"ipam":{"type":"static","addresses":[{"address":"%s"}]%s}' "$1" "${2:-}"; }
HOSTLOCAL=',"ipam":{"type":"host-local","dataDir":"'$DATA'","subnet":"10.65.0.0/24","routes":[{"dst":"10.67.0.0/16"}]}'
with_prev() { printf '%s,"prevResult":%s}' "${1%\}}" "$2"; }

POD_BASE=lo
clean() {
	t_eq "$1: the pod holds what it held before" "$POD_BASE" "$(t_link_names "$POD")"
	t_eq "$1: host links as at start" "$HOST_START" "$(t_links)"
	t_eq "$1: nothing reserved" "" "$(t_store_ips "$STORE")"
}

refused() { # DESC CODE MSG CONF [ENV...]
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
	refused "no master" 7 '"master" field is required' \
		'{"cniVersion":"1.0.0","name":"lknet","type":"vlan","vlanId":5'"$HOSTLOCAL"'}'
	refused "vlanId 4095" 7 "invalid VLAN ID 4095" "$(conf 1.0.0 4095 "$HOSTLOCAL")"
	refused "vlanId -1" 7 "invalid VLAN ID -1" "$(conf 1.0.0 -1 "$HOSTLOCAL")"
	refused "vlanId 65541 (4101 + 65536)" 7 "invalid VLAN ID 65541" "$(conf 1.0.0 65541 "$HOSTLOCAL")"
	refused "vlanId as a string" 6 '"vlanId"' "$(conf 1.0.0 '"5"' "$HOSTLOCAL")"
	refused "vlanId 5.5" 6 '"vlanId"' "$(conf 1.0.0 5.5 "$HOSTLOCAL")"
	refused "vlanId 1e300" 6 '"vlanId"' "$(conf 1.0.0 1e300 "$HOSTLOCAL")"
	ref_hostile_strings clean "$(conf 1.0.0 5 "$HOSTLOCAL")" master 7 7
	refused "no IPAM" 7 "no plugin name provided" "$(conf 1.0.0 5)"
	refused "MTU above the master's" 7 "must be [0, master MTU(1500)]" "$(conf 1.0.0 5 ',"mtu":1501'"$HOSTLOCAL")"
	refused "negative MTU" 7 "invalid MTU -2" "$(conf 1.0.0 5 ',"mtu":-2'"$HOSTLOCAL")"
	refused "a master that does not exist" 102 'failed to lookup master "lknone"' \
		"$(conf 1.0.0 5 "$HOSTLOCAL" | sed "s/\"$M\"/\"lknone\"/")"
	refused "lo as master" 7 "takes no VLAN (it is a loopback)" "$(conf 1.0.0 5 "$HOSTLOCAL" | sed "s/\"$M\"/\"lo\"/")"
	refused "VLAN 0 on the node's master" 7 "would take the master's priority-tagged frames" \
		"$(conf 1.0.0 0 "$HOSTLOCAL")"
	refused "no vlanId on the node's master" 7 "vlanId 0 (or none given)" \
		"$(conf 1.0.0 0 "$HOSTLOCAL" | sed 's/,"vlanId":0//')"
	if [ -n "$GO" ]; then
		ref_use_reference "$GO"
		for c in "$(conf 1.0.0 4095 "$HOSTLOCAL")" "$(conf 1.0.0 5 ',"mtu":1501'"$HOSTLOCAL")" \
			"$(conf 1.0.0 5 "$HOSTLOCAL" | sed "s/\"$M\"/\"lknone\"/")"; do
			t_cni ADD "$c"
			t_ne "the reference refuses it too: $c" 0 "$T_RC"
			t_cni DEL "$c"
		done
		ref_use_ours "$OURS"
		clean "after the reference's refusals"
	fi
fi

if ! ip -n "$POD" link add lkprobe type veth peer name lkprobe1 ||
	! ip -n "$POD" link add link lkprobe name lkprobe2 type vlan id 5 2>/dev/null; then
	ip -n "$POD" link del lkprobe 2>/dev/null
	echo "# the kernel has no 802.1Q driver: ADD must say so and leave nothing"
	t_cni ADD "$(conf 1.0.0 5 "$HOSTLOCAL")"
	t_err "ADD fails naming the missing 8021q driver" 100 'the kernel has no 802.1Q driver (CONFIG_VLAN_8021Q, module "8021q")'
	t_contains "the kernel's word in details" "Unknown device type" "$(jq -r .details <<<"$T_OUT")"
	clean "no driver"
	t_cni DEL "$(conf 1.0.0 5 "$HOSTLOCAL")"
	t_ok "DEL exits 0"
	t_cni DEL "$(conf 1.0.0 5 "$HOSTLOCAL")"
	t_ok "a second DEL exits 0"
	if [ -n "$GO" ]; then
		ref_use_reference "$GO"
		t_cni ADD "$(conf 1.0.0 5 "$HOSTLOCAL")"
		t_ne "the reference fails too" 0 "$T_RC"
		t_cni DEL "$(conf 1.0.0 5 "$HOSTLOCAL")"
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
	t_cni ADD "$(conf "$v" $((100 + i)) "$(static "10.66.$i.2/24")")" CNI_IFNAME="lv$i"
	t_ok "[$v] ADD"
	case $v in
	0.1.0 | 0.2.0)
		t_jq "[$v] result: ip4" "$T_OUT" '"\(.cniVersion) \(.ip4.ip) \(has("interfaces"))"' "$v 10.66.$i.2/24 false" ;;
	*)
		t_jq "[$v] result: the VLAN link, the master's MAC, its address" "$T_OUT" \
			'"\(.cniVersion) \(.interfaces | length) \(.interfaces[0].name) \(.interfaces[0].mac) \(.interfaces[0].sandbox) \(.ips[0].address) \(.ips[0].interface)"' \
			"$v 1 lv$i $MAC $T_ENV_NETNS 10.66.$i.2/24 0" ;;
	esac
	t_jq "[$v] a VLAN $((100 + i)) link of the master, up" "$(t_link_json "$POD" "lv$i")" \
		'"\(.linkinfo.info_kind) \(.linkinfo.info_data.id) \(.linkinfo.info_data.protocol) \((.flags // []) | index("UP") != null)"' \
		"vlan $((100 + i)) 802.1Q true"
	t_cni DEL "$(conf "$v" $((100 + i)) "$(static "10.66.$i.2/24")")" CNI_IFNAME="lv$i"
	t_ok "[$v] DEL"
done
clean "every version"
if [ -n "$GO" ]; then
	# Ours sets arp_notify (and ndisc_notify) as ipvlan and macvlan do; the reference vlan does not.
	REF_STATE_IGNORE=arp_notify
	ref_compare "[vlan 5] beside the reference" "$OURS" "$GO" "$(conf 1.1.0 5 "$(static 10.66.9.2/24 ',"routes":[{"dst":"10.67.0.0/16"}]')")"
	ref_compare "[vlan 4094, MTU 1400] beside the reference" "$OURS" "$GO" "$(conf 1.0.0 4094 ',"mtu":1400'"$(static 10.66.9.2/24)")"
	ref_compare "[0.3.1, IPv6] beside the reference" "$OURS" "$GO" "$(conf 0.3.1 7 "$(static fd66::2/64)")"
	clean "beside the reference"
fi

echo "# 3. host-local: addresses, routes, CHECK, DEL"
C=$(conf 1.1.0 5 ',"mtu":1400'"$HOSTLOCAL")
t_cni ADD "$C"
t_ok "ADD"
RES=$T_OUT
IP=$(t_store_ips "$STORE")
t_match "host-local reserved one address" '^10\.65\.0\.[0-9]+$' "$IP"
t_jq "the address, its route, the MTU" "$(ref_state "$POD" net1)" \
	'"\(.addrs | join(",")) \(.routes | map(select(startswith("10.67"))) | length) \(.mtu) \(.data.id)"' "$IP/24 1 1400 5"
t_cni CHECK "$(with_prev "$C" "$RES")"
t_ok "CHECK"
t_cni CHECK "$(with_prev "$(conf 1.1.0 6 ',"mtu":1400'"$HOSTLOCAL")" "$RES")"
t_err "CHECK with another vlanId" 103 "has VLAN id 5, the config 6"
t_cni CHECK "$(with_prev "$(conf 1.1.0 5 ',"mtu":1300'"$HOSTLOCAL")" "$RES")"
t_err "CHECK with another MTU" 103 "has MTU 1400, the config 1300"
t_cni ADD "$(conf 1.1.0 6 "$(static 10.66.9.3/24)")"
t_err "ADD over an existing interface" 100 "already has an interface named"
t_cni DEL "$C"
t_ok "DEL"
t_cni DEL "$C"
t_ok "a second DEL"
clean "host-local"

echo "# 4. the master has that VLAN already, the master is a VLAN"
t_name HV lkh
ip link add link "$M" name "$HV" type vlan id 9
ip link set "$HV" up
HOST_SAVED=$HOST_START
HOST_START=$(t_links)
refused "vlanId the master has a link of" 100 "has a VLAN 9 link already" "$(conf 1.0.0 9 "$HOSTLOCAL")"
t_jq "the node's VLAN 9 link is untouched" "$(t_link_json "" "$HV")" '"\(.linkinfo.info_data.id) \(.link)"' "9 $M"
C=$(conf 1.0.0 8 "$(static 10.66.8.2/24)" | sed "s/\"$M\"/\"$HV\"/")
t_cni ADD "$C"
t_ok "a VLAN 8 on the VLAN 9 link (802.1Q in 802.1Q: the kernel takes it)"
t_jq "stacked on it" "$(t_link_json "$POD" net1)" '"\(.linkinfo.info_data.id) \(.link_index)"' \
	"8 $(ip -j link show dev "$HV" | jq -r '.[0].ifindex')"
t_cni DEL "$C"
[ -z "$GO" ] || ref_compare "[on a VLAN master] beside the reference" "$OURS" "$GO" "$C"
ip link del "$HV"
HOST_START=$HOST_SAVED
clean "VLAN masters"

echo "# 5. linkInContainer"
t_name PM lkq
ip -n "$POD" link add "$PM" type veth peer name lkpeer
ip -n "$POD" link set "$PM" up
POD_START=$(t_link_names "$POD")
POD_BASE=$POD_START
for id in 7 0; do
	C=$(printf '{"cniVersion":"1.0.0","name":"lknet","type":"vlan","master":"%s","vlanId":%s,"linkInContainer":true%s}' "$PM" "$id" "$(static 10.68.0.5/24)")
	t_cni ADD "$C"
	t_ok "[id $id] ADD with the master in the pod"
	t_jq "[id $id] a VLAN link of the pod's master" "$(t_link_json "$POD" net1)" '"\(.linkinfo.info_data.id) \(.link)"' "$id $PM"
	t_cni CHECK "$(with_prev "$C" "$T_OUT")"
	t_ok "[id $id] CHECK"
	t_cni DEL "$C"
	t_ok "[id $id] DEL"
	[ -z "$GO" ] || ref_compare "[linkInContainer, id $id] beside the reference" "$OURS" "$GO" "$C"
	t_eq "[id $id] the pod as before" "$POD_START" "$(t_link_names "$POD")"
done
ip -n "$POD" link del "$PM"
POD_BASE=lo

echo "# 6. VLAN 0 on the node's master: the reference makes it, ours refuses"
if [ -n "$GO" ]; then
	ref_use_reference "$GO"
	t_cni ADD "$(conf 1.0.0 0 "$(static 10.66.9.2/24)")"
	t_ok "the reference makes a VLAN 0 link of the node's master"
	t_jq "its VLAN 0 link" "$(t_link_json "$POD" net1)" '.linkinfo.info_data.id' 0
	t_cni DEL "$(conf 1.0.0 0 "$(static 10.66.9.2/24)")"
	ref_use_ours "$OURS"
fi
refused "ours: VLAN 0 on the node's master" 7 "priority-tagged" "$(conf 1.0.0 0 "$(static 10.66.9.2/24)")"

echo "# 7. failures after the VLAN link exists leave nothing"
refused "IPAM fails: its error passed through" 11 "pool busy" "$(conf 1.0.0 5 ',"ipam":{"type":"failipam"}')"
refused "a route IPAM gave cannot be added" 100 "" \
	"$(conf 1.0.0 5 ',"ipam":{"type":"host-local","dataDir":"'$DATA'","subnet":"10.65.0.0/24","routes":[{"dst":"10.70.0.0/16","gw":"10.99.0.1"}]}')"

echo "# 8. SIGKILL at every netlink send of ADD, then DEL"
C=$(conf 1.0.0 5 "$HOSTLOCAL")
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

echo "# 9. a failure at every netlink send of ADD: the ADD undone"
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

echo "# 10. DEL where there is nothing of ours"
t_cni DEL "$(conf 1.0.0 5 "$HOSTLOCAL")" CNI_IFNAME=lo
t_ok "DEL of a link that is no VLAN"
t_eq "it is left in place" lo "$(t_link_names "$POD")"
t_cni DEL "$(conf 1.0.0 5 "$HOSTLOCAL" | sed "s/\"$M\"/\"lknone\"/")"
t_ok "DEL with the master gone (the reference fails it)"
ip netns del "$POD"
t_cni DEL "$(conf 1.0.0 5 "$HOSTLOCAL")"
t_ok "DEL with the netns gone"

t_cleanup
t_eq "the host's links as before the suite" "$HOST_BEFORE" "$(t_links)"
t_summary
