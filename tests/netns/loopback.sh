#!/usr/bin/env bash
# Real-kernel tests of the loopback plugin, run as a runtime runs it.
#
#   loopback.sh PLUGIN
#
# 1. ours at every CNI version: lo up with 127.0.0.1/8 and ::1/128, the result,
#    CHECK, DEL setting lo down (as upstream), DEL repeated and with the netns
#    gone, prevResult handed on, a pod whose lo holds another address, IPv6 off,
#    STATUS, GC, VERSION; nothing on stderr on success.
# 2. beside the reference loopback of containernetworking/plugins v1.9.1
#    (../shared/reference/cni-plugins, or REFERENCE_PLUGINS): the same inputs in
#    namespaces of their own, the results, the pod's lo after ADD, CHECK and DEL,
#    and the errors compared. What must differ is normalized, each case with its
#    reason below (docs/loopback.md lists them too):
#    - upstream labels its 1.0.0-shaped result with the config's version: at
#      0.3.0 to 0.4.0 its ips carry no "version" (and no "dns": {}), at 0.1.0 and
#      0.2.0 it prints "interfaces" and "ips", which a reader of those versions
#      does not know (they have "ip4" and "ip6"): ours follows each version's
#      shape, and the comparison maps upstream's to it;
#    - codes: upstream answers 999 for every failure; ours 4 (a netns that cannot
#      be opened), 103 (CHECK of a lo that is down); the messages of the failures
#      both have are compared as they are; ours adds "cniVersion" to an error.
# Without the reference, section 2 prints NOT RUN and the script exits 77 once
# section 1 has passed. Needs root; exits 77 only when network namespaces cannot
# be created.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if [ $# -lt 1 ]; then
	echo "usage: $0 PLUGIN"
	exit 1
fi
OURS=$(realpath "$1")
[ -x "$OURS" ] || { echo "FAIL: $OURS is not executable"; exit 1; }

t_init

VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
T_PLUGIN=$OURS
T_ENV_IFNAME=eth0
T_ENV_CONTAINERID=hl-lo
# Required by the protocol; loopback runs nothing from it.
T_ENV_PATH=/nonexistent

conf() { printf '{"cniVersion":"%s","name":"hl-lo"%s}' "$1" "${2:-}"; }

# lo_state NS: "UP|DOWN addr addr..." of the pod's lo (flags and its addresses, sorted).
lo_state() {
	ip -n "$1" -j addr show dev lo | jq -r '.[0] |
		"\(if (.flags | index("UP")) then "UP" else "DOWN" end) " +
		([.addr_info[] | "\(.local)/\(.prefixlen)"] | sort | join(" "))'
}

at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

# =============================================================================
echo "# 1. ours at every version"
for v in $VERSIONS; do
	t_netns pod
	t_eq "[$v] a new pod's lo is down without addresses" "DOWN " "$(lo_state "$pod")"
	t_cni ADD "$(conf "$v")" CNI_NETNS="$pod_path"
	t_ok "[$v] ADD exits 0"
	t_eq "[$v] ADD prints nothing on stderr" "" "$T_ERR"
	t_eq "[$v] lo is up with 127.0.0.1/8 and ::1/128" "UP 127.0.0.1/8 ::1/128" "$(lo_state "$pod")"
	if at_least "$v" 0.3.0; then
		t_jq "[$v] the result: lo, its MAC, the sandbox" "$T_OUT" \
			'"\(.cniVersion) \(.interfaces | length) \(.interfaces[0].name) \(.interfaces[0].mac) \(.interfaces[0].sandbox)"' \
			"$v 1 lo 00:00:00:00:00:00 $pod_path"
		t_jq "[$v] the result: both addresses on interface 0" "$T_OUT" \
			'[.ips[] | "\(.address) \(.interface)"] | join(",")' "127.0.0.1/8 0,::1/128 0"
	else
		t_jq "[$v] the result: ip4 and ip6" "$T_OUT" '"\(.cniVersion) \(.ip4.ip) \(.ip6.ip)"' \
			"$v 127.0.0.1/8 ::1/128"
	fi
	t_cni ADD "$(conf "$v")" CNI_NETNS="$pod_path"
	t_ok "[$v] a second ADD exits 0 (lo already up)"
	if at_least "$v" 0.4.0; then
		t_cni CHECK "$(conf "$v")" CNI_NETNS="$pod_path"
		t_ok "[$v] CHECK exits 0"
	else
		t_cni CHECK "$(conf "$v")" CNI_NETNS="$pod_path"
		t_err "[$v] CHECK is refused below 0.4.0" 1 "does not allow CHECK"
	fi
	t_cni DEL "$(conf "$v")" CNI_NETNS="$pod_path"
	t_ok "[$v] DEL exits 0"
	t_eq "[$v] DEL prints nothing" "" "$T_OUT$T_ERR"
	t_eq "[$v] DEL set lo down (the kernel keeps 127.0.0.1, drops ::1)" "DOWN 127.0.0.1/8" \
		"$(lo_state "$pod")"
	t_cni DEL "$(conf "$v")" CNI_NETNS="$pod_path"
	t_ok "[$v] DEL again exits 0"
	if at_least "$v" 0.4.0; then
		t_cni CHECK "$(conf "$v")" CNI_NETNS="$pod_path"
		t_err "[$v] CHECK of a lo that is down fails" 103 "loopback interface is down"
	fi
	ip netns del "$pod"
	t_cni DEL "$(conf "$v")" CNI_NETNS="$pod_path"
	t_ok "[$v] DEL with the netns gone exits 0"
done

t_netns pod
t_cni DEL "$(conf 1.0.0)" CNI_NETNS=
t_ok "DEL without CNI_NETNS exits 0"
t_cni ADD "$(conf 1.0.0)" -CNI_NETNS
t_err "ADD without CNI_NETNS is refused" 4
t_cni ADD "$(conf 1.0.0)" CNI_NETNS=/var/run/netns/hl-none-$$
t_err "ADD with a netns that does not exist" 4 "failed to open netns"
t_cni ADD "$(conf 1.0.0)" CNI_NETNS=/proc/self/ns/net
t_err "ADD in the plugin's own netns is refused" 8 "should not be the same"

# A chained loopback hands on what the plugins before it reported, in the config's version.
prev='{"cniVersion":"1.0.0","interfaces":[{"name":"net1","sandbox":"/x","mac":"0a:00:00:00:00:01"}],"ips":[{"address":"10.71.0.2/24","interface":0,"gateway":"10.71.0.1"}],"routes":[{"dst":"0.0.0.0/0"}],"dns":{"nameservers":["10.71.0.53"]}}'
t_cni ADD "$(conf 1.0.0 ",\"prevResult\":$prev")" CNI_NETNS="$pod_path"
t_ok "ADD with a prevResult exits 0"
t_eq "the prevResult is the result" "$(jq -cS . <<<"$prev")" "$(jq -cS . <<<"$T_OUT")"
t_eq "lo is up all the same" "UP 127.0.0.1/8 ::1/128" "$(lo_state "$pod")"
prev031='{"cniVersion":"0.3.1","interfaces":[{"name":"net1","sandbox":"/x"}],"ips":[{"version":"4","address":"10.71.0.2/24","interface":0}],"dns":{}}'
t_cni ADD "$(conf 0.3.1 ",\"prevResult\":$prev031")" CNI_NETNS="$pod_path"
t_eq "a 0.3.1 prevResult is the 0.3.1 result" "$(jq -cS . <<<"$prev031")" "$(jq -cS . <<<"$T_OUT")"
t_cni ADD "$(conf 1.0.0 ',"prevResult":{"ips":"x"}')" CNI_NETNS="$pod_path"
t_err "a prevResult that is no result is refused" 6
t_cni DEL "$(conf 1.0.0)" CNI_NETNS="$pod_path"

# A pod whose lo holds an address that is not a loopback one: refused, lo as it was.
ip -n "$pod" addr add 10.72.0.1/8 dev lo
before=$(lo_state "$pod")
t_cni ADD "$(conf 1.0.0)" CNI_NETNS="$pod_path"
t_err "a lo holding 10.72.0.1 is refused" "" 'loopback interface found with non-loopback address "10.72.0.1"'
t_eq "the refused ADD left lo as it was (down)" "$before" "$(lo_state "$pod")"
ip netns del "$pod"

# IPv6 off in the pod: no ::1, the result has IPv4 only.
t_netns pod
ip netns exec "$pod" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
	net.ipv6.conf.lo.disable_ipv6=1
t_cni ADD "$(conf 1.1.0)" CNI_NETNS="$pod_path"
t_ok "ADD with IPv6 off exits 0"
t_jq "IPv6 off: only 127.0.0.1/8" "$T_OUT" '[.ips[].address] | join(",")' "127.0.0.1/8"
t_cni ADD "$(conf 0.2.0)" CNI_NETNS="$pod_path"
t_jq "IPv6 off at 0.2.0: ip4 only" "$T_OUT" '"\(.ip4.ip) \(.ip6)"' "127.0.0.1/8 null"
ip netns del "$pod"

# STATUS, GC: nothing to look at, never a delegation to an IPAM plugin a config names.
for cmd in STATUS GC; do
	t_cni "$cmd" "$(conf 1.1.0 ',"ipam":{"type":"hl-no-such-plugin"}')" -CNI_NETNS -CNI_IFNAME -CNI_CONTAINERID
	t_ok "$cmd at 1.1.0 exits 0, whatever IPAM the config names"
	t_eq "$cmd prints nothing" "" "$T_OUT$T_ERR"
	t_cni "$cmd" "$(conf 1.0.0)" -CNI_NETNS -CNI_IFNAME -CNI_CONTAINERID
	t_err "$cmd at 1.0.0 is refused" 1 "does not allow $cmd"
done
t_cni VERSION "$(conf 1.1.0)"
t_jq "VERSION lists 0.1.0 to 1.1.0" "$T_OUT" '.supportedVersions | join(" ")' \
	"0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0"

# =============================================================================
echo "# 2. beside the reference loopback of v1.9.1"
REFBIN=$T_DIR/ref
# Without the reference, section 1 stands alone: the run lists section 2 as not run.
t_ref191 "$REFBIN" loopback || t_summary
REF=$REFBIN/loopback
# ref ARGS...: t_cni with the reference, outside PLUGIN_WRAPPER's checker (Go's runtime is
# not what it checks).
ref() {
	local -a wrap=("${T_BASE_WRAP[@]}")
	T_BASE_WRAP=()
	T_PLUGIN=$REF t_cni "$@"
	T_BASE_WRAP=("${wrap[@]}")
	T_PLUGIN=$OURS
}

# norm VERSION JSON WHO: the result in the shape of VERSION (see the header), sorted keys.
norm() {
	jq -cS --arg v "$1" --arg who "$3" '
		def vless($a): ($a | split(".") | map(tonumber)) as $x |
			($v | split(".") | map(tonumber)) < $x;
		if $who == "ref" and (.ips != null) and vless("0.3.0") then
			{cniVersion, ip4: ({ip: first(.ips[] | select(.address | contains(".")) | .address)} // null),
			 ip6: ({ip: first(.ips[] | select(.address | contains(":")) | .address)} // null)}
			| with_entries(select(.value != null))
		elif $who == "ours" then
			(if .dns == {} then del(.dns) else . end) |
			(if .ips then .ips |= map(del(.version)) else . end)
		else . end' <<<"$2"
}

for v in "" $VERSIONS; do
	t_netns pod_o
	t_netns pod_r
	c=$(conf "$v")
	[ -n "$v" ] || c='{"name":"hl-lo"}'
	label=${v:-no cniVersion}
	t_cni ADD "$c" CNI_NETNS="$pod_o_path"
	ours=$T_OUT ours_rc=$T_RC
	ref ADD "$c" CNI_NETNS="$pod_r_path"
	t_eq "[$label] ADD: both exit 0" "0 0" "$ours_rc $T_RC"
	o=$(norm "${v:-0.1.0}" "$ours" ours | sed "s|$pod_o_path|POD|g")
	r=$(norm "${v:-0.1.0}" "$T_OUT" ref | sed "s|$pod_r_path|POD|g")
	if [ -z "$v" ]; then
		# Without cniVersion both read 0.1.0 and print its shape, "dns": {} included.
		o=$(jq -cS . <<<"$ours") r=$(jq -cS . <<<"$T_OUT")
	fi
	t_eq "[$label] ADD: the same result" "$r" "$o"
	t_eq "[$label] ADD: the same lo" "$(lo_state "$pod_r")" "$(lo_state "$pod_o")"
	if [ -n "$v" ] && at_least "$v" 0.4.0; then
		t_cni CHECK "$c" CNI_NETNS="$pod_o_path"
		ours_rc=$T_RC
		ref CHECK "$c" CNI_NETNS="$pod_r_path"
		t_eq "[$label] CHECK: both exit 0" "0 0" "$ours_rc $T_RC"
	fi
	t_cni DEL "$c" CNI_NETNS="$pod_o_path"
	ours_rc=$T_RC
	ref DEL "$c" CNI_NETNS="$pod_r_path"
	t_eq "[$label] DEL: both exit 0" "0 0" "$ours_rc $T_RC"
	t_eq "[$label] DEL: the same lo" "$(lo_state "$pod_r")" "$(lo_state "$pod_o")"
	if [ -n "$v" ] && at_least "$v" 0.4.0; then
		t_cni CHECK "$c" CNI_NETNS="$pod_o_path"
		ours_msg=$(jq -r .msg <<<"$T_OUT")
		ref CHECK "$c" CNI_NETNS="$pod_r_path"
		t_eq "[$label] CHECK after DEL: the same message" "$(jq -r .msg <<<"$T_OUT")" "$ours_msg"
	fi
	ip netns del "$pod_o"
	ip netns del "$pod_r"
done

t_netns pod_o
t_netns pod_r
for p in "$pod_o" "$pod_r"; do ip -n "$p" addr add 10.72.0.1/8 dev lo; done
t_cni ADD "$(conf 1.0.0)" CNI_NETNS="$pod_o_path"
ours_msg=$(jq -r .msg <<<"$T_OUT") ours_rc=$T_RC
ref ADD "$(conf 1.0.0)" CNI_NETNS="$pod_r_path"
t_eq "a lo with 10.72.0.1: both fail with the same message" "$T_RC $(jq -r .msg <<<"$T_OUT")" \
	"$ours_rc $ours_msg"
# Expected difference: upstream leaves lo up after its failed ADD, ours undoes what it did.
t_eq "a lo with 10.72.0.1: upstream's failed ADD left lo up" "UP 10.72.0.1/8 127.0.0.1/8 ::1/128" \
	"$(lo_state "$pod_r")"
# Down again: the kernel keeps the 127.0.0.1/8 it added at up, as after any DEL.
t_eq "a lo with 10.72.0.1: ours set it down again" "DOWN 10.72.0.1/8 127.0.0.1/8" "$(lo_state "$pod_o")"
for v in 0.4.0 1.0.0; do
	p=$(jq -c --arg v "$v" '.cniVersion = $v' <<<"$prev")
	[ "$v" = 0.4.0 ] && p=$(jq -c '.ips |= map(. + {version: "4"})' <<<"$p")
	t_cni ADD "$(conf "$v" ",\"prevResult\":$p")" CNI_NETNS="$pod_o_path"
	t_err "[$v prevResult] ours refuses the lo with 10.72.0.1 too" "" "non-loopback address"
done
ip netns del "$pod_o"
ip netns del "$pod_r"

t_netns pod_o
t_netns pod_r
for v in 0.4.0 1.0.0 1.1.0; do
	p=$(jq -c --arg v "$v" '.cniVersion = $v' <<<"$prev")
	[ "$v" = 0.4.0 ] && p=$(jq -c '.ips |= map(. + {version: "4"}) | del(.routes[0].mtu)' <<<"$p")
	t_cni ADD "$(conf "$v" ",\"prevResult\":$p")" CNI_NETNS="$pod_o_path"
	ours=$T_OUT
	ref ADD "$(conf "$v" ",\"prevResult\":$p")" CNI_NETNS="$pod_r_path"
	t_eq "[$v] prevResult handed on: the same result" "$(jq -cS . <<<"$T_OUT")" "$(jq -cS . <<<"$ours")"
done
ip netns del "$pod_o"
ip netns del "$pod_r"

for cmd in STATUS GC; do
	for v in 1.0.0 1.1.0; do
		t_cni "$cmd" "$(conf "$v")" -CNI_NETNS -CNI_IFNAME -CNI_CONTAINERID
		ours="$T_RC $(jq -r '.msg // ""' <<<"${T_OUT:-{\}}")"
		ref "$cmd" "$(conf "$v")" -CNI_NETNS -CNI_IFNAME -CNI_CONTAINERID
		# Ours says which version the command needs after upstream's message.
		t_match "[$v] $cmd: the same exit status and message" \
			"^$T_RC $(jq -r '.msg // ""' <<<"${T_OUT:-{\}}")" "$ours"
	done
done
t_cni VERSION "$(conf 1.1.0)"
ours=$T_OUT
ref VERSION "$(conf 1.1.0)"
t_eq "VERSION: the same answer" "$(jq -cS . <<<"$T_OUT")" "$(jq -cS . <<<"$ours")"

t_summary
