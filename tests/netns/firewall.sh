#!/usr/bin/env bash
# Real-kernel tests of the firewall meta plugin beside the reference (containernetworking/
# plugins v1.9.1, ../shared/reference/cni-plugins): its iptables backend on twin nodes
# (namespaces standing for the host), and its firewalld backend against a real firewalld
# (Debian's, unpacked by tests/firewalld-kit.sh) running in a node namespace of its own on a
# D-Bus daemon of its own, which the plugins reach through DBUS_SYSTEM_BUS_ADDRESS: the
# machine's firewall and system bus are never touched.
#
#   firewall.sh PLUGIN
#
# Needs root, iptables, strace, dbus-daemon, dbus-send, /usr/bin/python3 with python3-dbus and
# python3-gi (tests/install-deps.sh test); FIREWALLD_KIT names the unpacked firewalld (default
# /var/cache/cni-rdma-plugins/firewalld). NOT RUN without the reference plugins; exits 77 only
# when namespaces cannot be made.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/../shared.sh"

[ $# -ge 1 ] || { echo "usage: $0 PLUGIN"; exit 1; }
OURS=$(realpath "$1")
t_init
REFDIR=$T_DIR/ref
shared_reference_plugins "$REFDIR" firewall || exit 77
KIT=${FIREWALLD_KIT:-/var/cache/cni-rdma-plugins/firewalld}
for tool in iptables-save ip6tables-save strace dbus-daemon dbus-send; do
	command -v $tool >/dev/null || { echo "FAIL: $tool not found (tests/install-deps.sh test)"; exit 1; }
done
# Debian's python, where python3-dbus and python3-gi are (not another one first in PATH).
PY=/usr/bin/python3
$PY -c 'import gi, dbus' 2>/dev/null ||
	{ echo "FAIL: $PY cannot import gi and dbus (tests/install-deps.sh test)"; exit 1; }
[ -x "$KIT/root/usr/sbin/firewalld" ] ||
	{ echo "FAIL: no firewalld at $KIT (tests/install-deps.sh test runs tests/firewalld-kit.sh)"; exit 1; }
REF=$REFDIR/firewall
# The reference speaks 0.4.0 and later.
VERSIONS=${NETNS_CNI_VERSIONS:-0.4.0 1.0.0 1.1.0}
T_ENV_IFNAME=eth0
T_ENV_PATH=$REFDIR
RECORDS=/run/cni-rdma-plugins/firewall
NET=nffw$T_TOK NET2=nffw2$T_TOK
# A run cut short leaves no record of its networks behind.
t_defer "rm -f '$RECORDS'/*:'$NET' '$RECORDS'/*:'$NET2'"
# No bus unless a test says so: the plugins' automatic choice is then iptables.
BUS=unix:path=$T_DIR/nobus

declare -A POD_OF
node() {
	local n p
	t_name n nfn
	t_name p nfp
	n=$n-$$ p=$p-$$
	ip netns add "$n" || { echo "FAIL: ip netns add $n"; exit 1; }
	t_defer "ip netns del '$n'"
	ip netns add "$p" || { echo "FAIL: ip netns add $p"; exit 1; }
	t_defer "ip netns del '$p'"
	ip -n "$n" link set lo up
	POD_OF[$n]=$p
	printf -v "$1" '%s' "$n"
}

state() {
	{
		ip netns exec "$1" iptables-save -t filter
		ip netns exec "$1" ip6tables-save -t filter
	} 2>&1 | grep -v '^#' | sed 's/ \[[0-9]*:[0-9]*\]//'
}

on() {
	local node=$1 plugin=$2
	shift 2
	T_PLUGIN=$plugin
	T_WRAP=(ip netns exec "$node" env "DBUS_SYSTEM_BUS_ADDRESS=$BUS")
	local wrap=("${T_BASE_WRAP[@]}")
	[ "$plugin" = "$OURS" ] || T_BASE_WRAP=()
	t_cni "$1" "$2" CNI_NETNS="/var/run/netns/${POD_OF[$node]}" "${@:3}"
	T_BASE_WRAP=("${wrap[@]}")
	T_WRAP=()
}

# conf VERSION MEMBERS [IPS]: a firewall config after a bridge's result (nfbr0, the pod's eth0).
conf() {
	local v=$1 m=$2 ips=${3:-'[{"address":"10.3.0.5/24","interface":1},{"address":"fd00:3::5/64","interface":1}]'}
	[ "$v" != 0.4.0 ] || ips=$(jq -c 'map(.version = (if (.address | contains(":")) then "6" else "4" end))' <<<"$ips")
	printf '{"cniVersion":"%s","name":"%s","type":"firewall"%s,"prevResult":{"cniVersion":"%s","interfaces":[{"name":"nfbr0"},{"name":"eth0","sandbox":"/x"}],"ips":%s}}' \
		"$v" "$NET" "${m:+,$m}" "$v" "$ips"
}

twin() { # DESC CONF [CID]
	local desc=$1 c=$2 cid=${3:-nfc1} ours_out
	on "$A" "$OURS" ADD "$c" CNI_CONTAINERID="$cid"
	t_ok "$desc: ADD"
	t_eq "$desc: nothing on stderr" "" "$T_ERR"
	ours_out=$T_OUT
	on "$B" "$REF" ADD "$c" CNI_CONTAINERID="$cid"
	[ "$T_RC" = 0 ] || t_fail "$desc: the reference's ADD" "$(t_last_run)"
	t_eq "$desc: the result is the reference's" "$(jq -cS . <<<"$T_OUT")" "$(jq -cS . <<<"$ours_out" 2>&1)"
	t_eq "$desc: the rules are the reference's" "$(state "$B")" "$(state "$A")"
	on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID="$cid"
	t_ok "$desc: CHECK"
	on "$A" "$OURS" DEL "$c" CNI_CONTAINERID="$cid"
	t_ok "$desc: DEL"
	on "$B" "$REF" DEL "$c" CNI_CONTAINERID="$cid"
	t_eq "$desc: after DEL the rules are the reference's" "$(state "$B")" "$(state "$A")"
	on "$A" "$OURS" DEL "$c" CNI_CONTAINERID="$cid"
	t_ok "$desc: DEL again"
}

node A
node B

# --- the iptables backend, every version the reference speaks, every key ----------
for v in $VERSIONS; do
	twin "[$v iptables]" "$(conf "$v" '"backend":"iptables"')"
done
twin "[no backend, no firewalld: iptables]" "$(conf 1.1.0 "")"
twin "[ingressPolicy open]" "$(conf 1.1.0 '"backend":"iptables","ingressPolicy":"open"')"
twin "[ingressPolicy same-bridge]" "$(conf 1.1.0 '"backend":"iptables","ingressPolicy":"same-bridge"')"
twin "[ingressPolicy isolated]" "$(conf 1.1.0 '"backend":"iptables","ingressPolicy":"isolated"')"
twin "[iptablesAdminChainName]" "$(conf 1.1.0 '"backend":"iptables","iptablesAdminChainName":"NF-ADMIN"')"
twin "[IPv4 only]" "$(conf 1.1.0 '"backend":"iptables"' '[{"address":"10.3.0.6/24","interface":1}]')"
twin "[an unknown backend is the automatic choice]" "$(conf 1.1.0 '"backend":"nftables"')"
for i in 1 2 3; do
	on "$A" "$OURS" ADD "$(conf 1.1.0 '"backend":"iptables"')" CNI_CONTAINERID=nfrep
done
t_eq "ADD three times: the rules once" 1 "$(ip netns exec "$A" iptables -S CNI-FORWARD | grep -c -- '-s 10.3.0.5/32')"
on "$A" "$OURS" DEL "$(conf 1.1.0 '"backend":"iptables"')" CNI_CONTAINERID=nfrep

# --- moving a node between the reference and ours, pods live ----------------------
c=$(conf 1.1.0 '"backend":"iptables","ingressPolicy":"isolated"')
base=$(state "$A")
on "$A" "$REF" ADD "$c" CNI_CONTAINERID=nfmv1
on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID=nfmv1
t_ok "ours CHECKs what the reference added"
on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nfmv1
t_ok "ours DELs what the reference added"
t_eq "... its addresses' rules are gone" "" "$(state "$A" | grep 10.3.0.5)"
on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfmv2
on "$A" "$REF" CHECK "$c" CNI_CONTAINERID=nfmv2
[ "$T_RC" = 0 ] && t_pass "the reference CHECKs what ours added" || t_fail "the reference CHECKs what ours added" "$(t_last_run)"
on "$A" "$REF" DEL "$c" CNI_CONTAINERID=nfmv2
t_eq "the reference DELs what ours added" "$base" "$(state "$A")"

# --- CHECK finds what is missing -------------------------------------------------
on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfck
ip netns exec "$A" iptables -D CNI-FORWARD -s 10.3.0.5/32 -j ACCEPT
on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID=nfck
t_err "CHECK: an address's rule deleted by hand" 103 "-s 10.3.0.5/32 -j ACCEPT"
on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nfck
t_ok "DEL of what is half there"
t_eq "... nothing of the address left" "" "$(state "$A" | grep 10.3.0.5)"
on "$A" "$OURS" CHECK "$(jq -c 'del(.prevResult)' <<<"$c")"
t_err "CHECK without prevResult" 7 "missing prevResult from earlier plugin"
# DEL without prevResult: the record says which addresses.
on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfnp
on "$A" "$OURS" DEL "$(jq -c 'del(.prevResult)' <<<"$c")" CNI_CONTAINERID=nfnp
t_ok "DEL without prevResult"
t_eq "... takes the addresses ADD let through (its record)" "" "$(state "$A" | grep 10.3.0.5)"

# --- hostile input and collisions: a clear error, the node as before ---------------
ip netns exec "$A" iptables -A CNI-FORWARD -s 192.0.2.99/32 -j DROP
base=$(state "$A")
bad() { # DESC CODE MSG CONF
	on "$A" "$OURS" ADD "$4" CNI_CONTAINERID=nfbad
	t_err "$1" "$2" "$3"
	t_eq "$1: the node's rules as before" "$base" "$(state "$A")"
}
bad "an unknown ingress policy" 7 'unknown ingress policy: "closed"' "$(conf 1.1.0 '"backend":"iptables","ingressPolicy":"closed"')"
bad "an admin chain name with a blank" 7 "not an iptables chain name" "$(conf 1.1.0 '"backend":"iptables","iptablesAdminChainName":"A B"')"
bad "an admin chain name of 29 characters" 7 "not an iptables chain name" "$(conf 1.1.0 '"backend":"iptables","iptablesAdminChainName":"ABCDEFGHIJKLMNOPQRSTUVWXYZ123"')"
bad "an admin chain named like a target" 100 "iptables-restore" "$(conf 1.1.0 '"backend":"iptables","iptablesAdminChainName":"ACCEPT"')"
bad "a zone with a newline" 7 "firewalldZone" "$(conf 1.1.0 '"firewalldZone":"a\nb"')"
bad "ingressPolicy without interfaces" 7 "interface needs to be set for ingress policy" \
	"$(jq -c '.prevResult.interfaces = []' <<<"$(conf 1.1.0 '"backend":"iptables","ingressPolicy":"isolated"')")"
bad "a bridge name that is no interface name" 7 "is no interface name" \
	"$(jq -c '.prevResult.interfaces[0].name = "a b\"; -j ACCEPT"' <<<"$(conf 1.1.0 '"backend":"iptables","ingressPolicy":"isolated"')")"
bad "no prevResult" 7 "missing prevResult from earlier plugin" "$(jq -c 'del(.prevResult)' <<<"$(conf 1.1.0 '"backend":"iptables"')")"
bad "backend firewalld without a bus" 100 "D-Bus" "$(conf 1.1.0 '"backend":"firewalld"')"
on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfown
t_ok "the node's own rule in CNI-FORWARD: ADD"
on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nfown
t_contains "... DEL leaves it" "-A CNI-FORWARD -s 192.0.2.99/32 -j DROP" "$(state "$A")"
ip netns exec "$A" iptables -D CNI-FORWARD -s 192.0.2.99/32 -j DROP

# --- GC --------------------------------------------------------------------------
gcconf() { printf '{"cniVersion":"1.1.0","name":"%s","type":"firewall","cni.dev/valid-attachments":[%s]}' "$1" "$2"; }
ip4() { conf 1.1.0 '"backend":"iptables"' "[{\"address\":\"$1/24\",\"interface\":1}]"; }
on "$A" "$OURS" ADD "$(ip4 10.3.1.1)" CNI_CONTAINERID=nfg1
on "$A" "$OURS" ADD "$(ip4 10.3.1.2)" CNI_CONTAINERID=nfg2
on "$A" "$OURS" ADD "$(ip4 10.3.1.3)" CNI_CONTAINERID=nfg3
# A gone container's address reused by a live one: its rules stay.
on "$A" "$OURS" ADD "$(ip4 10.3.1.3)" CNI_CONTAINERID=nfg4
on "$A" "$OURS" ADD "$(jq -c --arg n "$NET2" '.name = $n' <<<"$(ip4 10.3.1.5)")" CNI_CONTAINERID=nfg5
on "$A" "$OURS" GC "$(gcconf "$NET" '{"containerID":"nfg1","ifname":"eth0"},{"containerID":"nfg4","ifname":"eth0"}')"
t_ok "GC keeping nfg1 and nfg4"
t_eq "... 10.3.1.2 (nfg2, gone) goes; 10.3.1.1, 10.3.1.3 (nfg4 holds it) and 10.3.1.5 (another network) stay" \
	"10.3.1.1 10.3.1.3 10.3.1.5" "$(ip netns exec "$A" iptables -S CNI-FORWARD | grep -o -- '-s 10\.3\.1\.[0-9]*' | cut -c4- | sort | paste -sd' ')"
on "$A" "$OURS" GC "$(gcconf "$NET" '')"
on "$A" "$OURS" GC "$(gcconf "$NET2" '')"
t_eq "GC with none valid: none left" "" "$(ip netns exec "$A" iptables -S CNI-FORWARD | grep -- '-s 10\.3\.1\.')"
t_eq "... nor records" "" "$(ls "$RECORDS" 2>/dev/null | grep -E ":($NET|$NET2)\$")"
on "$A" "$OURS" STATUS "$(printf '{"cniVersion":"1.1.0","name":"%s","type":"firewall","backend":"iptables"}' "$NET")"
t_ok "STATUS (iptables)"
on "$A" "$OURS" STATUS "$(printf '{"cniVersion":"1.1.0","name":"%s","type":"firewall","backend":"firewalld"}' "$NET")"
t_err "STATUS (firewalld, no bus)" 50 "firewall cannot write rules"

# --- SIGKILL at every process start and write of ADD, then DEL --------------------
if [ -z "${PLUGIN_WRAPPER:-}" ]; then
	kc=$(conf 1.1.0 '"backend":"iptables","ingressPolicy":"isolated"')
	on "$A" "$OURS" ADD "$kc" CNI_CONTAINERID=nfk0
	on "$A" "$OURS" DEL "$kc" CNI_CONTAINERID=nfk0
	killbase=$(state "$A")
	kills=0
	for sys in clone3 write; do
		for ((n = 1; n < 40; n++)); do
			T_WRAP=(ip netns exec "$A" env "DBUS_SYSTEM_BUS_ADDRESS=$BUS" strace -qq -o /dev/null -e trace="$sys" -e inject="$sys":signal=SIGKILL:when=$n)
			T_PLUGIN=$OURS
			t_cni ADD "$kc" CNI_NETNS="/var/run/netns/${POD_OF[$A]}" CNI_CONTAINERID=nfkill
			rc=$T_RC
			T_WRAP=()
			[ "$rc" = 137 ] && kills=$((kills + 1))
			on "$A" "$OURS" DEL "$kc" CNI_CONTAINERID=nfkill
			t_ok "DEL after ADD killed at $sys #$n"
			t_eq "... the node as before" "$killbase" "$(state "$A")"
			[ "$rc" = 137 ] || break
		done
	done
	t_ne "ADD was killed at some point" 0 "$kills"
	t_eq "no record left by the killed ADDs" "" "$(ls "$RECORDS" 2>/dev/null | grep "^nfkill:$NET\$")"
else
	echo "# SIGKILL section left to the runs without PLUGIN_WRAPPER"
fi

# --- the firewalld backend against a real firewalld -----------------------------
# A D-Bus daemon of this run's own (its socket in T_DIR), firewalld in node F on it.
node F
mkdir -p "$T_DIR/fw-etc"
cat >"$T_DIR/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$T_DIR/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
  </policy>
</busconfig>
EOF
dbus-daemon --config-file="$T_DIR/bus.conf" --nofork >"$T_DIR/bus.log" 2>&1 &
t_defer "kill $!"
BUS=unix:path=$T_DIR/bus
ip netns exec "$F" env DBUS_SYSTEM_BUS_ADDRESS="$BUS" PYTHONPATH="$KIT/root/usr/lib/python3/dist-packages" \
	$PY "$KIT/root/usr/sbin/firewalld" --nofork --nopid --system-config "$T_DIR/fw-etc" \
	--default-config "$KIT/root/usr/lib/firewalld" --log-target console >"$T_DIR/firewalld.log" 2>&1 &
t_defer "kill $!"
zone_sources() {
	DBUS_SYSTEM_BUS_ADDRESS=$BUS dbus-send --system --print-reply --dest=org.fedoraproject.FirewallD1 \
		/org/fedoraproject/FirewallD1 org.fedoraproject.FirewallD1.zone.getSources "string:$1" 2>&1 |
		sed -n 's/^ *string "\(.*\)"$/\1/p' | sort | paste -sd' '
}
# Up within a minute (a hang guard: firewalld starts in a second or two). It takes its name
# on the bus before its ruleset is in: its state says RUNNING once it is.
for ((i = 0; i < 120; i++)); do
	DBUS_SYSTEM_BUS_ADDRESS=$BUS dbus-send --system --print-reply --dest=org.fedoraproject.FirewallD1 \
		/org/fedoraproject/FirewallD1 org.freedesktop.DBus.Properties.Get \
		string:org.fedoraproject.FirewallD1 string:state 2>/dev/null | grep -q '"RUNNING"' && break
	sleep 0.5
done
t_eq "firewalld runs in its own netns on its own bus" yes "$([ $i -lt 120 ] && echo yes)"
t_contains "... its table is in that netns" "table inet firewalld" "$(ip netns exec "$F" nft list tables)"
FW_IPS='[{"address":"10.4.0.5/24","interface":1},{"address":"fd00:4::5/64","interface":1}]'
fwc() { conf 1.1.0 "$1" "${2:-$FW_IPS}"; }
for who in OURS REF; do
	for m in '"backend":"firewalld"' '' '"backend":"firewalld","firewalldZone":"internal"'; do
		zone=trusted
		[[ $m == *internal* ]] && zone=internal
		desc="[firewalld ${who,,} ${m:-(found on the bus)}]"
		on "$F" "${!who}" ADD "$(fwc "$m")" CNI_CONTAINERID=nffd
		t_ok "$desc ADD"
		t_eq "$desc: the addresses are sources of $zone" "10.4.0.5/32 fd00:4::5/128" "$(zone_sources $zone)"
		on "$F" "$OURS" CHECK "$(fwc "$m")" CNI_CONTAINERID=nffd
		t_ok "$desc: our CHECK"
		on "$F" "$REF" CHECK "$(fwc "$m")" CNI_CONTAINERID=nffd
		t_ok "$desc: the reference's CHECK"
		# Each DELs what the other (or itself) added.
		[ $who = OURS ] && on "$F" "$REF" DEL "$(fwc "$m")" CNI_CONTAINERID=nffd || on "$F" "$OURS" DEL "$(fwc "$m")" CNI_CONTAINERID=nffd
		t_ok "$desc: DEL by the other"
		t_eq "$desc: ... no source left" "" "$(zone_sources $zone)"
		on "$F" "$OURS" CHECK "$(fwc "$m")" CNI_CONTAINERID=nffd
		t_err "$desc: our CHECK after DEL" 103 "failed to find the address 10.4.0.5/32 in $zone zone"
	done
done
on "$F" "$OURS" ADD "$(fwc '"backend":"firewalld"')" CNI_CONTAINERID=nffd2
on "$F" "$OURS" ADD "$(fwc '"backend":"firewalld"')" CNI_CONTAINERID=nffd3
t_ok "an address already a source of the zone: no error (ZONE_ALREADY_SET), as upstream"
on "$F" "$OURS" ADD "$(fwc '"backend":"firewalld","firewalldZone":"public"')" CNI_CONTAINERID=nffd4
t_err "an address already a source of another zone" 100 "ZONE_CONFLICT"
t_eq "... the first zone keeps it" "10.4.0.5/32 fd00:4::5/128" "$(zone_sources trusted)"
on "$F" "$OURS" ADD "$(fwc '"backend":"firewalld","firewalldZone":"nfnozone"' '[{"address":"10.4.0.9/24","interface":1}]')" CNI_CONTAINERID=nffd5
t_err "a zone firewalld does not have" 100 "INVALID_ZONE"
on "$F" "$OURS" GC "$(gcconf "$NET" '')"
t_ok "GC (firewalld)"
t_eq "... the gone containers' sources are gone" "" "$(zone_sources trusted)"
on "$F" "$OURS" ADD "$(fwc '"backend":"firewalld","ingressPolicy":"isolated"')" CNI_CONTAINERID=nffd6
t_ok "firewalld with ingressPolicy isolated: ADD"
t_contains "... whose chains are iptables', as upstream" "-A CNI-ISOLATION-STAGE-2 -o nfbr0" "$(state "$F")"
on "$F" "$OURS" DEL "$(fwc '"backend":"firewalld","ingressPolicy":"isolated"')" CNI_CONTAINERID=nffd6
on "$F" "$OURS" STATUS "$(printf '{"cniVersion":"1.1.0","name":"%s","type":"firewall","backend":"firewalld"}' "$NET")"
t_ok "STATUS (firewalld running)"
t_eq "firewalld's table is in its netns only, not in the machine's" "" "$(nft list tables 2>/dev/null | grep -x 'table inet firewalld')"

t_summary
