#!/usr/bin/env bash
# Real-kernel tests of the tuning meta plugin, chained as a runtime chains it:
# our macvlan (MACVLAN_BIN) makes the pod's interface off a veth master, tuning
# gets its result as prevResult.
#
#   tuning.sh PLUGIN [REFERENCE_CNI_DIR]
#
# PLUGIN is the tuning binary under test. REFERENCE_CNI_DIR (default
# /usr/lib/cni, Debian's containernetworking-plugins) provides static (IPAM),
# macvlan (the Go one, as a first plugin) and tuning (side by side). The
# state files are the plugin's own (/run/cni-rdma-plugins/tuning), named by
# this run's container IDs; only those are looked at. Needs root; exits 77
# only when network namespaces cannot be created.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if [ $# -lt 1 ]; then
	echo "usage: $0 PLUGIN [REFERENCE_CNI_DIR]"
	exit 1
fi
T_PLUGIN=$(realpath "$1")
REF=${2:-/usr/lib/cni}
TUNING=$T_PLUGIN
MACVLAN=${MACVLAN_BIN:-$(dirname "$1")/macvlan}
[ -x "$MACVLAN" ] || MACVLAN=$(dirname "$1")/../macvlan/macvlan
for p in "$TUNING" "$MACVLAN" "$REF/static" "$REF/macvlan" "$REF/tuning"; do
	[ -x "$p" ] || { echo "FAIL: $p is not executable"; exit 1; }
done

t_init

VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
STATE=/run/cni-rdma-plugins/tuning
BIN=$T_DIR/bin
mkdir -p "$BIN"
T_ENV_PATH=$BIN
t_ref_ipam "$BIN" "$REF" static

t_name MASTER "tum"
t_name MPEER "tup"
t_veth "$MASTER" "$MPEER"
t_netns POD
T_ENV_NETNS=$POD_path
T_ENV_IFNAME=net1
t_name CID "tu"
T_ENV_CONTAINERID=$CID

# NVIDIA's multi-rail profile, as the Network Operator renders it.
PROFILE='{"net.ipv4.conf.all.arp_ignore":"1","net.ipv4.conf.all.arp_announce":"2","net.ipv4.conf.all.rp_filter":"0",
 "net.ipv4.conf.IFNAME.arp_ignore":"1","net.ipv4.conf.IFNAME.arp_announce":"2","net.ipv4.conf.IFNAME.rp_filter":"0"}'
SYSCTL_FILES="all/arp_ignore all/arp_announce all/rp_filter net1/arp_ignore net1/arp_announce net1/rp_filter"
MAC=c2:7a:00:00:00:01

# run BIN CMD CONF [ENV...]: t_cni with another binary; a reference Go one
# runs without PLUGIN_WRAPPER (valgrind has nothing to say about Go).
run() {
	local bin=$1 save=$T_PLUGIN wrap=("${T_BASE_WRAP[@]}")
	shift
	T_PLUGIN=$bin
	[[ $bin != "$REF"/* ]] || T_BASE_WRAP=()
	t_cni "$@"
	T_PLUGIN=$save
	T_BASE_WRAP=("${wrap[@]}")
}

# sysctls VAR NS: the profile's six values of a pod, space separated (one ip, one cat).
sysctls() {
	local f files=()
	for f in $SYSCTL_FILES; do files+=("/proc/sys/net/ipv4/conf/$f"); done
	# Each value is one word: split and joined by the shell, no more processes.
	# shellcheck disable=SC2046
	printf -v "$1" '%s ' $(ip netns exec "$2" cat "${files[@]}")
}

# fields FROM TO TEXT: words FROM to TO (1-based) of TEXT, without a process.
fields() {
	local -a w
	read -r -a w <<<"$3"
	echo "${w[*]:$(($1 - 1)):$(($2 - $1 + 1))}"
}

# linkattrs VAR NS IFNAME: "mtu mac txqlen promisc allmulti" of a pod's link.
linkattrs() {
	printf -v "$1" '%s' "$(ip -n "$2" -j link show dev "$3" | jq -r '.[0] |
		"\(.mtu) \(.address) \(.txqlen) \(.flags | index("PROMISC") != null) \(.flags | index("ALLMULTI") != null)"')"
}

# no_state DESC CID IFNAME: tuning keeps no state for the attachment.
no_state() {
	if [ -e "$STATE/$2:$3" ]; then t_fail "$1" "state file $STATE/$2:$3 left"; else t_pass "$1"; fi
}

# macvlan_conf VERSION: a macvlan on $MASTER with a static address.
macvlan_conf() {
	printf '{"cniVersion":"%s","name":"tun","type":"macvlan","master":"%s","ipam":{"type":"static","addresses":[{"address":"10.9.0.2/24"}]}}' \
		"$1" "$MASTER"
}

# tuning_conf VERSION PREV EXTRA: a tuning config with prevResult PREV, EXTRA merged in.
tuning_conf() {
	printf '{"cniVersion":"%s","name":"tun","type":"tuning","prevResult":%s%s}' "$1" "$2" "${3:+,$3}"
}

# --- our macvlan -> tuning: ADD, result, kernel state, CHECK, DEL ----------
run "$MACVLAN" ADD "$(macvlan_conf 1.0.0)"
t_ok "macvlan ADD (first of the chain)"
PREV=$T_OUT
sysctls S_BEFORE "$POD"
linkattrs L_BEFORE "$POD" net1
FULL="\"sysctl\":$PROFILE,\"mac\":\"$MAC\",\"mtu\":1400,\"promisc\":true,\"allmulti\":true,\"txQLen\":2000"
CONF=$(tuning_conf 1.0.0 "$PREV" "$FULL")
t_cni ADD "$CONF"
t_ok "tuning ADD: profile sysctls, mac, mtu, promisc, allmulti, txQLen"
RESULT=$T_OUT
t_eq "result: prevResult passed on, the interface's mac updated" \
	"$(jq -cS --arg m "$MAC" '(.interfaces[] | select(.name == "net1")).mac = $m' <<<"$PREV")" \
	"$(jq -cS . <<<"$RESULT")"
sysctls S_AFTER "$POD"
t_eq "the profile's sysctls (all and IFNAME) are set in the pod" "1 2 0 1 2 0 " "$S_AFTER"
linkattrs L_AFTER "$POD" net1
t_eq "mtu, mac, txqlen, promisc, allmulti are set" "1400 $MAC 2000 true true" "$L_AFTER"
if [ -f "$STATE/$CID:net1" ]; then t_pass "state file kept"; else t_fail "state file kept" "no $STATE/$CID:net1"; fi

CHECKCONF=$(tuning_conf 1.0.0 "$RESULT" "$FULL")
t_cni CHECK "$CHECKCONF"
t_ok "CHECK after ADD"
ip netns exec "$POD" sh -c 'echo 0 >/proc/sys/net/ipv4/conf/net1/arp_ignore'
t_cni CHECK "$CHECKCONF"
t_err "CHECK sees a sysctl drift" 103 "configured value of /proc/sys/net/ipv4/conf/net1/arp_ignore is 1, current value is 0"
ip netns exec "$POD" sh -c 'echo 1 >/proc/sys/net/ipv4/conf/net1/arp_ignore; ip link set net1 mtu 1300'
t_cni CHECK "$CHECKCONF"
t_err "CHECK sees an MTU drift" 103 "MTU of net1 is 1400, current value is 1300"

t_cni DEL "$CONF"
t_ok "tuning DEL"
linkattrs L_DEL "$POD" net1
t_eq "DEL restores mtu, mac, txqlen, promisc, allmulti" "$L_BEFORE" "$L_DEL"
sysctls S_DEL "$POD"
# The interface's own sysctls go back; the netns-wide ones are shared by every
# attachment of the pod and stay as set.
t_eq "DEL restores the interface's sysctls, leaves the netns-wide ones" \
	"1 2 0 $(fields 4 6 "$S_BEFORE") " "$S_DEL"
no_state "DEL removes the state file" "$CID" net1
t_cni DEL "$CONF"
t_ok "tuning DEL again"

# An ADD again without a DEL between (a retry after one killed halfway): the
# originals the first found are what DEL restores.
t_cni ADD "$(tuning_conf 1.0.0 "$PREV" '"sysctl":{"net.ipv4.conf.IFNAME.arp_announce":"1"},"mtu":1400')"
t_cni ADD "$(tuning_conf 1.0.0 "$PREV" '"mtu":70000')"
t_err "a failing ADD again" 7 "invalid MTU 70000"
if [ -f "$STATE/$CID:net1" ]; then t_pass "... puts the first ADD's state back"; else t_fail "... puts the first ADD's state back" "no state file"; fi
t_cni ADD "$(tuning_conf 1.0.0 "$PREV" '"mtu":1300,"txQLen":77')"
t_ok "ADD again without DEL"
t_cni DEL "$(tuning_conf 1.0.0 "$PREV" '"mtu":1300,"txQLen":77')"
linkattrs L_AGAIN "$POD" net1
sysctls S_AGAIN "$POD"
t_eq "DEL after two ADDs restores what the first found" "$L_BEFORE $S_DEL" "$L_AGAIN $S_AGAIN"
no_state "DEL after two ADDs removes the state" "$CID" net1

# --- undo: a sysctl set, then an MTU the kernel refuses --------------------
t_cni ADD "$(tuning_conf 1.0.0 "$PREV" '"sysctl":{"net.ipv4.conf.IFNAME.arp_ignore":"2"},"mtu":70000')"
t_err "ADD with an MTU beyond the link's maximum" 7 "invalid MTU 70000 for net1"
sysctls S_UNDO "$POD"
t_eq "the sysctl set before the MTU is put back" "$S_DEL" "$S_UNDO"
no_state "no state file after the failed ADD" "$CID" net1

# --- hostile input: the right code, nothing changed, no state --------------
linkattrs L_HOST "$POD" net1
hostile() {
	local desc=$1 code=$2 msg=$3 extra=$4
	shift 4
	t_cni ADD "$(tuning_conf 1.0.0 "$PREV" "$extra")" "$@"
	t_err "$desc" "$code" "$msg"
}
hostile "a key with .." 7 'an empty component ("..", or' '"sysctl":{"net/ipv4/../../kernel/hostname":"x"}'
hostile "a key with an empty component" 7 "an empty component" '"sysctl":{"net.ipv4.conf..all.arp_ignore":"1"}'
hostile "a path as key" 7 "an empty component" '"sysctl":{"/proc/sys/net/ipv4/ip_forward":"1"}'
hostile "a key outside net" 7 "not below net" '"sysctl":{"kernel.hostname":"x"}'
hostile "a sysctl table of non-strings" 6 'expected a string, got number' \
	'"sysctl":{"net.ipv4.conf.IFNAME.arp_ignore":"1","net.ipv4.conf.all.arp_ignore":1}'
hostile "a multicast MAC" 7 "multicast" '"sysctl":{"net.ipv4.conf.IFNAME.arp_ignore":"1"},"mac":"01:00:5e:00:00:01"'
hostile "a negative MTU" 7 "mtu" '"sysctl":{"net.ipv4.conf.IFNAME.arp_ignore":"1"},"mtu":-1'
hostile "a sysctl that does not exist" 7 "no /proc/sys/net/ipv4/conf/net1/no_such" \
	'"sysctl":{"net.ipv4.conf.all.arp_ignore":"2","net.ipv4.conf.IFNAME.no_such":"1"}'
# A NUL in a key: json-c would cut the key there and set net1's arp_ignore (issue 45).
hostile "a key holding a NUL (\\u0000)" 7 "a key holds a NUL character" \
	'"sysctl":{"net.ipv4.conf.IFNAME.arp_ignore\u0000.evil":"2"}'
hostile "a key naming a directory" 7 "/proc/sys/net/ipv4/conf/all is a directory, not a sysctl" \
	'"sysctl":{"net.ipv4.conf.all":"1"}'
# The kernel keeps the first 6 octets of a 20-octet address on an Ethernet link.
hostile "a 20-octet MAC on an Ethernet link" 7 "its addresses are 6 octets, not 20" \
	'"mac":"00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33"'
# The kernel takes the "1" of "1\n5" and answers the write short: put back all the same.
hostile "a value the kernel takes a part of" 7 'took only a part of the value "2' \
	'"sysctl":{"net.ipv4.conf.IFNAME.arp_announce":"1","net.ipv4.conf.IFNAME.arp_ignore":"2\n5"}'
PREV9=${PREV//\"net1\"/\"net9\"}
t_cni ADD "$(tuning_conf 1.0.0 "$PREV9" '"sysctl":{"net.ipv4.conf.all.arp_ignore":"2"},"mtu":1400')" CNI_IFNAME=net9
t_err "a prevResult naming an interface that is not there" 102 "Cannot find container link net9"
t_cni ADD '{"cniVersion":"1.0.0","name":"tun","type":"tuning","sysctl":{"net.ipv4.conf.all.arp_ignore":"2"}}'
t_err "a chain with no prevResult" 7 "Required prevResult missing"
sysctls S_HOST "$POD"
t_eq "hostile input changed no sysctl" "$S_DEL" "$S_HOST"
linkattrs L_HOST2 "$POD" net1
t_eq "hostile input changed no link attribute" "$L_HOST" "$L_HOST2"
no_state "hostile input left no state file" "$CID" net1
no_state "hostile input left no state file (net9)" "$CID" net9

# Another interface's key is allowed, as upstream allows it, and logged (info: in logFile
# only, stderr stays empty).
t_cni ADD "$(tuning_conf 1.0.0 "$PREV" '"sysctl":{"net.ipv4.conf.lo.arp_ignore":"1"},"dataDir":"/tmp/elsewhere","logFile":"'"$T_DIR/tuning.log"'"')"
t_ok "a key of another interface of the pod is allowed"
t_contains "... and logged" "names an interface other than net1" "$(cat "$T_DIR/tuning.log" 2>&1)"
t_contains "dataDir is ignored, with a log line" 'dataDir "/tmp/elsewhere" ignored' "$(cat "$T_DIR/tuning.log" 2>&1)"
t_eq "... neither on stderr" "" "$T_ERR"
[ ! -e /tmp/elsewhere ] && t_pass "dataDir chose nothing" || t_fail "dataDir chose nothing" "/tmp/elsewhere exists"

# --- sysctls the kernel lets one write but not read ------------------------
# As the reference: written; no original to keep, so nothing put back (docs/tuning.md).
ip netns exec "$POD" sh -c 'cat /proc/sys/net/ipv4/route/flush' >/dev/null 2>&1 &&
	t_fail "route.flush cannot be read" "it can" || t_pass "route.flush cannot be read (mode 0200)"
WO='"sysctl":{"net.ipv4.route.flush":"1","net.ipv6.conf.IFNAME.stable_secret":"fd00::1","net.ipv4.conf.IFNAME.arp_ignore":"2"}'
t_cni ADD "$(tuning_conf 1.0.0 "$PREV" "$WO")"
t_ok "ADD of write-only sysctls (route.flush, an unset stable_secret) beside another"
t_eq "the stable_secret is set" "fd00:0000:0000:0000:0000:0000:0000:0001" "$(ip netns exec "$POD" cat /proc/sys/net/ipv6/conf/net1/stable_secret 2>&1)"
t_cni CHECK "$(tuning_conf 1.0.0 "$PREV" "$WO")"
t_err "CHECK of a sysctl that cannot be read fails, as the reference's" 100 \
	"cannot read /proc/sys/net/ipv4/route/flush: Permission denied (the kernel lets this sysctl be written, not read"
t_cni DEL "$(tuning_conf 1.0.0 "$PREV" "$WO")"
t_ok "DEL after write-only sysctls"
sysctls S_WO "$POD"
t_eq "DEL restores the readable one" "$S_DEL" "$S_WO"
no_state "... and removes the state" "$CID" net1

# --- the records: names no interface can have, killed saves' leftovers ------
# A dead writer's PID: none of the node's processes has it.
DEAD=$(($(cat /proc/sys/kernel/pid_max) - 1))
while kill -0 "$DEAD" 2>/dev/null; do DEAD=$((DEAD - 1)); done
t_name OTHER "tu"
mkdir -p "$STATE"
t_defer rm -f "$STATE/$CID::tmp.$DEAD" "$STATE/$OTHER::tmp.$DEAD" "$STATE/$CID:net1.tmp.$DEAD"
record_of() { printf 'cni-rdma-plugins tuning state 1\nmtu 1500\n'; }
# The record of an interface named like the old temporary name of net1's ("<if>.tmp.<pid>").
record_of >"$STATE/$CID:net1.tmp.$DEAD"
record_of >"$STATE/$CID::tmp.$DEAD"
record_of >"$STATE/$OTHER::tmp.$DEAD"
t_cni DEL "$(tuning_conf 1.0.0 "$PREV" '"mtu":1400')"
t_ok "DEL with no record of the attachment"
[ ! -e "$STATE/$CID::tmp.$DEAD" ] && t_pass "... removes what a killed save of its container left" ||
	t_fail "... removes what a killed save of its container left" "$STATE/$CID::tmp.$DEAD is there"
[ -e "$STATE/$OTHER::tmp.$DEAD" ] && t_pass "... leaves another container's" ||
	t_fail "... leaves another container's" "removed"
record_of >"$STATE/$CID::tmp.$DEAD"
t_cni ADD "$(tuning_conf 1.0.0 "$PREV" '"sysctl":{"net.ipv4.conf.all.arp_announce":"1"}')"
t_ok "ADD that keeps no record"
[ ! -e "$STATE/$CID::tmp.$DEAD" ] && t_pass "... removes what a killed save of its container left" ||
	t_fail "... removes what a killed save of its container left" "$STATE/$CID::tmp.$DEAD is there"
record_of >"$STATE/$CID::tmp.$DEAD"
t_cni ADD "$(tuning_conf 1.0.0 "$PREV" '"mtu":1400')"
t_ok "ADD that keeps a record"
[ ! -e "$STATE/$CID::tmp.$DEAD" ] && t_pass "... removes what a killed save of its container left" ||
	t_fail "... removes what a killed save of its container left" "$STATE/$CID::tmp.$DEAD is there"
t_cni DEL "$(tuning_conf 1.0.0 "$PREV" '"mtu":1400')"
t_ok "its DEL"
[ -e "$STATE/$CID:net1.tmp.$DEAD" ] && t_pass "the record of interface net1.tmp.$DEAD outlived net1's ADD and DEL" ||
	t_fail "the record of interface net1.tmp.$DEAD outlived net1's ADD and DEL" "removed"
[ -e "$STATE/$OTHER::tmp.$DEAD" ] && t_pass "another container's leftover outlived them" ||
	t_fail "another container's leftover outlived them" "removed"
linkattrs L_REC "$POD" net1
t_eq "the link as before" "$L_BEFORE" "$L_REC"

# --- the result's shape at every version -----------------------------------
for v in $VERSIONS; do
	case $v in
	0.1.0 | 0.2.0) prev="{\"cniVersion\":\"$v\",\"ip4\":{\"ip\":\"10.9.0.2/24\"}}" ;;
	*) prev=$(jq -c --arg v "$v" '.cniVersion = $v' <<<"$PREV") ;;
	esac
	t_cni ADD "$(tuning_conf "$v" "$prev" '"sysctl":{"net.ipv4.conf.all.arp_announce":"1"}')"
	t_jq "result at $v" "$T_OUT" '"\(.cniVersion) \(.ips[0].address // .ip4.ip) \(.interfaces[0].name // "-")"' \
		"$v 10.9.0.2/24 $(case $v in 0.1.0 | 0.2.0) echo - ;; *) echo net1 ;; esac)"
done

run "$MACVLAN" DEL "$(macvlan_conf 1.0.0)"
t_ok "macvlan DEL"

# --- after Debian's Go macvlan ---------------------------------------------
run "$REF/macvlan" ADD "$(macvlan_conf 1.0.0)"
t_ok "Go macvlan ADD"
PREV=$T_OUT
linkattrs L_BEFORE "$POD" net1
CONF=$(tuning_conf 1.0.0 "$PREV" "\"sysctl\":$PROFILE,\"mac\":\"$MAC\",\"mtu\":1450")
t_cni ADD "$CONF"
t_ok "tuning ADD after Go macvlan"
t_jq "result after Go macvlan: mac updated, address kept" "$T_OUT" \
	'"\(.interfaces[0].mac) \(.ips[0].address)"' "$MAC 10.9.0.2/24"
linkattrs L_AFTER "$POD" net1
t_eq "after Go macvlan: mtu and mac set" "1450 $MAC" "$(fields 1 2 "$L_AFTER")"
t_cni CHECK "$(tuning_conf 1.0.0 "$T_OUT" "\"sysctl\":$PROFILE,\"mac\":\"$MAC\",\"mtu\":1450")"
t_ok "CHECK after Go macvlan"
t_cni DEL "$CONF"
t_ok "tuning DEL after Go macvlan"
linkattrs L_DEL "$POD" net1
t_eq "after Go macvlan: DEL restores" "$L_BEFORE" "$L_DEL"
no_state "after Go macvlan: no state file" "$CID" net1
t_cni DEL "$CONF"
t_ok "tuning DEL again after Go macvlan"
run "$REF/macvlan" DEL "$(macvlan_conf 1.0.0)"

# --- side by side with Debian's Go tuning ----------------------------------
# Two pods, each with our macvlan on its own master; Debian's tuning (1.1.1,
# no txQLen) in one, ours in the other, one config.
t_name MASTER2 "tum"
t_name MPEER2 "tup"
t_veth "$MASTER2" "$MPEER2"
t_netns POD2
SIDE="\"sysctl\":$PROFILE,\"mac\":\"$MAC\",\"mtu\":1420,\"promisc\":true,\"allmulti\":true,\"dataDir\":\"$T_DIR/go-tuning\""
run "$MACVLAN" ADD "$(macvlan_conf 1.0.0)"
PREV1=$T_OUT
run "$MACVLAN" ADD "$(macvlan_conf 1.0.0 | sed "s/$MASTER/$MASTER2/")" CNI_NETNS="$POD2_path"
PREV2=$T_OUT
run "$REF/tuning" ADD "$(tuning_conf 1.0.0 "$PREV1" "$SIDE")"
t_ok "Go tuning ADD"
GO_RESULT=$T_OUT
t_cni ADD "$(tuning_conf 1.0.0 "$PREV2" "$SIDE")" CNI_NETNS="$POD2_path"
t_ok "our tuning ADD, same config"
# The suite leaves out an empty "dns" that Go prints as {}.
t_eq "same result JSON (but the sandbox, and an empty dns)" \
	"$(jq -cS 'del(.interfaces[].sandbox) | del(.dns | select(. == {}))' <<<"$GO_RESULT")" \
	"$(jq -cS 'del(.interfaces[].sandbox)' <<<"$T_OUT")"
sysctls S_GO "$POD"
sysctls S_OURS "$POD2"
t_eq "same sysctl values" "$S_GO" "$S_OURS"
linkattrs L_GO "$POD" net1
linkattrs L_OURS "$POD2" net1
t_eq "same link attributes" "$L_GO" "$L_OURS"
run "$REF/tuning" DEL "$(tuning_conf 1.0.0 "$PREV1" "$SIDE")"
t_cni DEL "$(tuning_conf 1.0.0 "$PREV2" "$SIDE")" CNI_NETNS="$POD2_path"
linkattrs L_GO "$POD" net1
linkattrs L_OURS "$POD2" net1
t_eq "same link attributes after DEL (but the mac the kernel chose)" \
	"${L_GO%% *} $(fields 3 5 "$L_GO")" "${L_OURS%% *} $(fields 3 5 "$L_OURS")"


# --- DEL with the link gone, with the netns gone, with a corrupt state ------
t_cni ADD "$(tuning_conf 1.0.0 "$PREV1" '"mtu":1300')"
t_ok "ADD before the link goes"
ip -n "$POD" link del net1
t_cni DEL "$(tuning_conf 1.0.0 "$PREV1" '"mtu":1300')"
t_ok "DEL with the link gone"
no_state "DEL with the link gone removes the state" "$CID" net1
t_cni ADD "$(tuning_conf 1.0.0 "$PREV2" '"mtu":1300')" CNI_NETNS="$POD2_path"
t_ok "ADD before the netns goes"
ip netns del "$POD2"
t_cni DEL "$(tuning_conf 1.0.0 "$PREV2" '"mtu":1300')" CNI_NETNS="$POD2_path"
t_ok "DEL with the netns gone"
no_state "DEL with the netns gone removes the state" "$CID" net1
printf 'cni-rdma-plugins tuning state 1\nmtu 1300\nsysctl ../../kernel/hostname x\n' >"$STATE/$CID:net1"
t_defer rm -f "$STATE/$CID:net1"
t_cni DEL "$(tuning_conf 1.0.0 "$PREV2" '"mtu":1300')" CNI_NETNS="$POD2_path"
t_ok "DEL with a corrupt state succeeds"
t_contains "... reports it" "is not one tuning wrote; nothing restored from it" "$T_ERR"
[ -e "$STATE/$CID:net1" ] && t_pass "... and leaves it for inspection" || t_fail "... and leaves it for inspection" "removed"
rm -f "$STATE/$CID:net1"

t_summary
