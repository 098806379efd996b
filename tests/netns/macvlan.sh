#!/usr/bin/env bash
# Real-kernel tests of the macvlan plugin, run as a runtime runs it: CNI_*
# environment, config on stdin, result or error JSON on stdout.
#
#   macvlan.sh PLUGIN [REFERENCE_CNI_DIR]
#
# PLUGIN is the macvlan binary under test. REFERENCE_CNI_DIR (default
# /usr/lib/cni, Debian's containernetworking-plugins) provides the host-local
# and static IPAM plugins. Every master is a veth end made here, every pod is a
# fresh `ip netns add` netns, host-local's store is a temp dir, and the test
# checks results, kernel state and the IPAM store. Needs root; exits 77 only
# when network namespaces cannot be created.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if [ $# -lt 1 ]; then
	echo "usage: $0 PLUGIN [REFERENCE_CNI_DIR]"
	exit 1
fi
T_PLUGIN=$(realpath "$1")
REF=${2:-/usr/lib/cni}
[ -x "$T_PLUGIN" ] || { echo "FAIL: plugin $T_PLUGIN is not executable"; exit 1; }
for p in host-local static; do
	[ -x "$REF/$p" ] || { echo "FAIL: $REF/$p not found (containernetworking-plugins)"; exit 1; }
done

t_init

# The kernel matrix narrows the versions (NETNS_CNI_VERSIONS, tests/kernel/run.sh).
VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
MAC_RE='^([0-9a-f]{2}:){5}[0-9a-f]{2}$'
HOST_START=$(t_links)

# --- CNI_PATH: the reference IPAM plugins and fake ones --------------------
BIN=$T_DIR/bin
DATA=$T_DIR/ipam
IPAMLOG=$T_DIR/ipam.log
mkdir -p "$BIN" "$DATA"
T_ENV_PATH=$BIN

t_ref_ipam "$BIN" "$REF" host-local static

# failipam: ADD fails with a CNI error; every call is logged.
cat >"$BIN/failipam" <<EOF
#!/bin/sh
cat >/dev/null
echo "failipam \$CNI_COMMAND \$CNI_CONTAINERID" >>"$IPAMLOG"
if [ "\$CNI_COMMAND" = ADD ]; then
	printf '{"code":11,"msg":"pool busy"}'
	exit 1
fi
exit 0
EOF
# emptyipam: ADD succeeds with no IPs; every call is logged.
cat >"$BIN/emptyipam" <<EOF
#!/bin/sh
cat >/dev/null
echo "emptyipam \$CNI_COMMAND \$CNI_CONTAINERID" >>"$IPAMLOG"
if [ "\$CNI_COMMAND" = ADD ]; then
	printf '{"cniVersion":"1.0.0","ips":[]}'
fi
exit 0
EOF
chmod +x "$BIN/failipam" "$BIN/emptyipam"
: >"$IPAMLOG"

# --- the master: one end of a veth pair in the root netns ------------------
t_name MASTER "mvm"
t_name MPEER "mvp"
t_veth "$MASTER" "$MPEER"
MASTER_IDX=$(ip -j link show dev "$MASTER" | jq -r '.[0].ifindex')
MASTER_MTU=$(ip -j link show dev "$MASTER" | jq -r '.[0].mtu')

# --- helpers ----------------------------------------------------------------
# ver_ge A B: A >= B
ver_ge() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" == "$2" ]; }

# mkconf VERSION NAME EXTRA: a macvlan config on $MASTER, EXTRA merged in.
mkconf() {
	local x=${3:-}
	[ -n "$x" ] || x='{}'
	jq -cn --arg v "$1" --arg n "$2" --arg m "$MASTER" --argjson x "$x" \
		'{cniVersion: $v, name: $n, type: "macvlan", master: $m} + $x'
}

# hostlocal SUBNET [EXTRA]: a host-local IPAM object storing under $DATA.
hostlocal() {
	local x=${2:-}
	[ -n "$x" ] || x='{}'
	jq -cn --arg d "$DATA" --arg s "$1" --argjson x "$x" \
		'{type: "host-local", dataDir: $d, subnet: $s} + $x'
}

with_prev() { jq -c --argjson r "$2" '. + {prevResult: $r}' <<<"$1"; }

# pod_addrs NS IF: the IPv4 CIDRs on a link.
pod_addrs() {
	ip -n "$1" -j addr show dev "$2" 2>/dev/null |
		jq -r '[.[0].addr_info[]? | select(.family == "inet") | "\(.local)/\(.prefixlen)"] | join(" ")'
}

# expect_clean DESC NS POD_BEFORE HOST_BEFORE [STORE_DIR STORE_BEFORE]
expect_clean() {
	t_eq "$1: host links unchanged" "$4" "$(t_links)"
	t_eq "$1: pod links unchanged" "$3" "$(t_links "$2")"
	if [ $# -ge 5 ]; then
		t_eq "$1: IPAM store unchanged" "$6" "$(t_store_ips "$5")"
	fi
}

# link_field NS IF JQ: a field of the link's `ip -d -j link` object.
link_field() { jq -r "$3" <<<"$(t_link_json "$1" "$2")"; }

link_is_up() { link_field "$1" "$2" '(.flags // []) | index("UP") != null'; }

# =============================================================================
echo "# 1-2. ADD/CHECK/DEL with host-local at every version"
i=0
for v in $VERSIONS; do
	i=$((i + 1))
	t_netns pod
	net="hl-${v//./}"
	store=$DATA/$net
	id="ctr-hl-$v"
	conf=$(mkconf "$v" "$net" "{\"ipam\": $(hostlocal "10.88.$i.0/24")}")
	host_before=$(t_links)

	t_cni ADD "$conf" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
	t_ok "[$v] ADD exits 0"
	res=$T_OUT
	t_jq "[$v] result cniVersion" "$res" '.cniVersion' "$v"
	ips=$(t_store_ips "$store")
	t_match "[$v] host-local store holds exactly one IP file" '^10\.88\.'"$i"'\.[0-9]+$' "$ips"
	t_eq "[$v] store file holds the container ID" "$id" \
		"$(head -n1 "$store/$ips" 2>/dev/null | tr -d '\r')"
	case $v in
	0.1.0 | 0.2.0)
		t_jq "[$v] ip4.ip is the allocated CIDR" "$res" '.ip4.ip' "$ips/24"
		t_jq "[$v] ip4.gateway" "$res" '.ip4.gateway' "10.88.$i.1"
		t_jq "[$v] no interfaces key" "$res" 'has("interfaces")' false
		t_jq "[$v] no ips key" "$res" 'has("ips")' false
		;;
	*)
		t_jq "[$v] one interface" "$res" '.interfaces | length' 1
		t_jq "[$v] interfaces[0].name" "$res" '.interfaces[0].name' net1
		t_jq "[$v] interfaces[0].sandbox is CNI_NETNS" "$res" '.interfaces[0].sandbox' "$pod_path"
		t_match "[$v] interfaces[0].mac is a MAC" "$MAC_RE" "$(jq -r '.interfaces[0].mac' <<<"$res")"
		t_jq "[$v] one IP" "$res" '.ips | length' 1
		t_jq "[$v] ips[0].address is the allocated CIDR" "$res" '.ips[0].address' "$ips/24"
		t_jq "[$v] ips[0].gateway" "$res" '.ips[0].gateway' "10.88.$i.1"
		t_jq "[$v] ips[0].interface is 0" "$res" '.ips[0].interface' 0
		if ver_ge "$v" 1.0.0; then
			t_jq "[$v] ips[0] has no version key" "$res" '.ips[0] | has("version")' false
		else
			t_jq "[$v] ips[0].version is \"4\"" "$res" '.ips[0].version' 4
		fi
		;;
	esac
	link=$(t_link_json "$pod" net1)
	t_ne "[$v] net1 exists in the pod" "" "$link"
	t_jq "[$v] net1 is a macvlan" "$link" '.linkinfo.info_kind' macvlan
	t_jq "[$v] macvlan mode bridge by default" "$link" '.linkinfo.info_data.mode' bridge
	t_jq "[$v] net1's parent is the master" "$link" '.link_index' "$MASTER_IDX"
	t_jq "[$v] net1 is UP" "$link" '(.flags // []) | index("UP") != null' true
	t_jq "[$v] net1 MTU inherited from the master" "$link" '.mtu' "$MASTER_MTU"
	t_eq "[$v] the address is on net1" "$ips/24" "$(pod_addrs "$pod" net1)"
	if ver_ge "$v" 0.3.0; then
		t_jq "[$v] result mac equals net1's" "$link" '.address' "$(jq -r '.interfaces[0].mac' <<<"$res")"
	fi
	t_eq "[$v] ADD created nothing in the host" "$host_before" "$(t_links)"

	if ver_ge "$v" 0.4.0; then
		t_cni CHECK "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
		t_ok "[$v] CHECK exits 0"
		bad=$(jq -c '.interfaces[0].mac = "c2:00:00:00:00:01"' <<<"$res")
		t_cni CHECK "$(with_prev "$conf" "$bad")" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
		t_err "[$v] CHECK with a wrong mac in prevResult fails" ""
		delconf=$(with_prev "$conf" "$res")
	else
		t_cni CHECK "$conf" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
		t_err "[$v] CHECK below 0.4.0 is code 1" 1
		delconf=$conf
	fi

	t_cni DEL "$delconf" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
	t_ok "[$v] DEL exits 0"
	t_eq "[$v] DEL removed net1" "" "$(t_link_json "$pod" net1)"
	t_eq "[$v] DEL released the IP" "" "$(t_store_ips "$store")"
	t_cni DEL "$delconf" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
	t_ok "[$v] second DEL exits 0"
	t_eq "[$v] pod holds only lo" "lo" "$(t_link_names "$pod")"
	t_eq "[$v] host links as before" "$host_before" "$(t_links)"
	ip netns del "$pod"
done

# =============================================================================
echo "# 3. static IPAM"
for v in 0.4.0 1.0.0; do
	t_netns pod
	id="ctr-st-$v"
	ipam='{"type":"static","addresses":[{"address":"10.77.0.5/24","gateway":"10.77.0.1"}],"routes":[{"dst":"0.0.0.0/0"}]}'
	conf=$(mkconf "$v" "st-${v//./}" "{\"ipam\": $ipam}")
	t_cni ADD "$conf" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
	t_ok "[static $v] ADD exits 0"
	res=$T_OUT
	t_jq "[static $v] result address" "$res" '.ips[0].address' 10.77.0.5/24
	t_jq "[static $v] result gateway" "$res" '.ips[0].gateway' 10.77.0.1
	t_jq "[static $v] result default route" "$res" '[.routes[]?.dst] | index("0.0.0.0/0") != null' true
	t_jq "[static $v] result interface" "$res" '.interfaces[0].name' net1
	t_eq "[static $v] address on net1" 10.77.0.5/24 "$(pod_addrs "$pod" net1)"
	route=$(ip -n "$pod" -j route show default 2>/dev/null)
	t_jq "[static $v] default route via 10.77.0.1" "$route" '.[0].gateway' 10.77.0.1
	t_jq "[static $v] default route on net1" "$route" '.[0].dev' net1
	t_eq "[static $v] net1 is UP" true "$(link_is_up "$pod" net1)"
	t_cni CHECK "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
	t_ok "[static $v] CHECK exits 0"
	ip -n "$pod" route del default 2>/dev/null
	t_cni CHECK "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
	t_err "[static $v] CHECK without the default route fails" ""
	t_cni DEL "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
	t_ok "[static $v] DEL exits 0"
	t_eq "[static $v] DEL removed net1" "lo" "$(t_link_names "$pod")"
	ip netns del "$pod"
done

# =============================================================================
echo "# 4. L2 (ipam {})"
for v in 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0; do
	t_netns pod
	conf=$(mkconf "$v" "l2-${v//./}" '{"ipam": {}}')
	host_before=$(t_links)
	t_cni ADD "$conf" CNI_NETNS="$pod_path"
	t_ok "[L2 $v] ADD exits 0"
	res=$T_OUT
	t_jq "[L2 $v] result cniVersion" "$res" '.cniVersion' "$v"
	t_jq "[L2 $v] interfaces[0].name" "$res" '.interfaces[0].name' net1
	t_jq "[L2 $v] interfaces[0].sandbox" "$res" '.interfaces[0].sandbox' "$pod_path"
	t_jq "[L2 $v] no IPs in the result" "$res" '(.ips // []) | length' 0
	t_jq "[L2 $v] result mac equals net1's" "$res" '.interfaces[0].mac' "$(link_field "$pod" net1 .address)"
	t_eq "[L2 $v] net1 is a macvlan" macvlan "$(link_field "$pod" net1 .linkinfo.info_kind)"
	t_eq "[L2 $v] net1 is UP" true "$(link_is_up "$pod" net1)"
	t_eq "[L2 $v] no IPv4 address on net1" "" "$(pod_addrs "$pod" net1)"
	if ver_ge "$v" 0.4.0; then
		t_cni CHECK "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path"
		t_ok "[L2 $v] CHECK exits 0"
	fi
	t_cni DEL "$conf" CNI_NETNS="$pod_path"
	t_ok "[L2 $v] DEL exits 0"
	t_eq "[L2 $v] DEL removed net1" "lo" "$(t_link_names "$pod")"
	t_eq "[L2 $v] host links as before" "$host_before" "$(t_links)"
	ip netns del "$pod"
done
for v in 0.1.0 0.2.0; do
	t_netns pod
	conf=$(mkconf "$v" "l2-${v//./}" '{"ipam": {}}')
	host_before=$(t_links)
	pod_before=$(t_links "$pod")
	t_cni ADD "$conf" CNI_NETNS="$pod_path"
	t_err "[L2 $v] ADD refused with code 7" 7 "no valid IP addresses"
	expect_clean "[L2 $v]" "$pod" "$pod_before" "$host_before"
	ip netns del "$pod"
done

# =============================================================================
echo "# 5. modes, mtu, mac, bcqueuelen, linkInContainer"
for mode in private vepa passthru; do
	t_netns pod
	conf=$(mkconf 1.0.0 "mode-$mode" "{\"mode\": \"$mode\", \"ipam\": {}}")
	t_cni ADD "$conf" CNI_NETNS="$pod_path"
	t_ok "[mode $mode] ADD exits 0"
	res=$T_OUT
	t_eq "[mode $mode] macvlan mode" "$mode" "$(link_field "$pod" net1 .linkinfo.info_data.mode)"
	t_jq "[mode $mode] result mac equals net1's" "$res" '.interfaces[0].mac' "$(link_field "$pod" net1 .address)"
	t_cni CHECK "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path"
	t_ok "[mode $mode] CHECK exits 0"
	if [ "$mode" == passthru ]; then
		# A second macvlan on a master that has a passthru one is refused by
		# the kernel; nothing may be left.
		t_netns pod2
		host_before=$(t_links)
		pod2_before=$(t_links "$pod2")
		t_cni ADD "$(mkconf 1.0.0 mode-bridge2 '{"ipam": {}}')" CNI_NETNS="$pod2_path"
		t_err "[mode passthru] second macvlan on the master fails" ""
		expect_clean "[mode passthru] second macvlan" "$pod2" "$pod2_before" "$host_before"
		ip netns del "$pod2"
		# CHECK with another mode configured reports the mismatch.
		t_cni CHECK "$(with_prev "$(mkconf 1.0.0 mode-$mode '{"mode": "vepa", "ipam": {}}')" "$res")" \
			CNI_NETNS="$pod_path"
		t_err "[mode passthru] CHECK with mode vepa configured fails" ""
	fi
	t_cni DEL "$conf" CNI_NETNS="$pod_path"
	t_ok "[mode $mode] DEL exits 0"
	t_eq "[mode $mode] DEL removed net1" "lo" "$(t_link_names "$pod")"
	ip netns del "$pod"
done

for mode in source Bridge; do
	t_netns pod
	host_before=$(t_links)
	pod_before=$(t_links "$pod")
	t_cni ADD "$(mkconf 1.0.0 mode-bad "{\"mode\": \"$mode\", \"ipam\": {}}")" CNI_NETNS="$pod_path"
	t_err "[mode $mode] unknown mode is code 7" 7 "$mode"
	expect_clean "[mode $mode]" "$pod" "$pod_before" "$host_before"
	ip netns del "$pod"
done

t_netns pod
t_cni ADD "$(mkconf 1.0.0 mtu-ok '{"mtu": 1400, "ipam": {}}')" CNI_NETNS="$pod_path"
t_ok "[mtu 1400] ADD exits 0"
t_eq "[mtu 1400] net1 MTU" 1400 "$(link_field "$pod" net1 .mtu)"
t_cni DEL "$(mkconf 1.0.0 mtu-ok '{"mtu": 1400, "ipam": {}}')" CNI_NETNS="$pod_path"
t_ok "[mtu 1400] DEL exits 0"
ip netns del "$pod"

# mac: config < CNI_ARGS MAC= < runtimeConfig.mac
mac_case() { # DESC EXPECTED_MAC EXTRA_CONFIG [CNI_ARGS]
	local desc=$1 want=$2 extra=$3 args=${4:-} conf res
	t_netns pod
	conf=$(mkconf 1.0.0 mac-test "$extra")
	t_cni ADD "$conf" CNI_NETNS="$pod_path" CNI_ARGS="$args"
	t_ok "[mac $desc] ADD exits 0"
	res=$T_OUT
	t_eq "[mac $desc] net1 mac" "$want" "$(link_field "$pod" net1 .address)"
	t_jq "[mac $desc] result mac" "$res" '.interfaces[0].mac' "$want"
	t_cni CHECK "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path" CNI_ARGS="$args"
	t_ok "[mac $desc] CHECK exits 0"
	t_cni DEL "$conf" CNI_NETNS="$pod_path" CNI_ARGS="$args"
	t_ok "[mac $desc] DEL exits 0"
	t_eq "[mac $desc] DEL removed net1" "lo" "$(t_link_names "$pod")"
	ip netns del "$pod"
}
mac_case config c2:11:22:33:44:01 '{"mac": "c2:11:22:33:44:01", "ipam": {}}'
mac_case CNI_ARGS c2:11:22:33:44:55 '{"mac": "c2:11:22:33:44:01", "ipam": {}}' \
	"IgnoreUnknown=true;MAC=c2:11:22:33:44:55"
mac_case runtimeConfig c2:11:22:33:44:66 \
	'{"mac": "c2:11:22:33:44:01", "runtimeConfig": {"mac": "c2:11:22:33:44:66"}, "ipam": {}}' \
	"IgnoreUnknown=true;MAC=c2:11:22:33:44:55"
mac_case RuntimeConfig c2:11:22:33:44:77 \
	'{"RuntimeConfig": {"mac": "c2:11:22:33:44:77"}, "ipam": {}}' \
	"IgnoreUnknown=true;MAC=c2:11:22:33:44:55"

t_netns pod
conf=$(mkconf 1.0.0 bcq '{"bcqueuelen": 100, "ipam": {}}')
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_ok "[bcqueuelen 100] ADD exits 0"
bcq=$(link_field "$pod" net1 '.linkinfo.info_data.bcqueuelen // "absent"')
if [ "$bcq" != absent ]; then
	t_eq "[bcqueuelen 100] net1 bcqueuelen" 100 "$bcq"
fi
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_ok "[bcqueuelen 100] DEL exits 0"
ip netns del "$pod"

# linkInContainer: the master is a veth whose both ends live in the pod.
t_netns pod
t_name LICM "mvc"
t_name LICP "mvd"
t_veth "$LICM" "$LICP" "$pod" "$pod"
conf=$(jq -c --arg m "$LICM" '.master = $m | .linkInContainer = true' \
	<<<"$(mkconf 1.0.0 lic "{\"ipam\": $(hostlocal 10.89.0.0/24)}")")
host_before=$(t_links)
pod_before=$(t_links "$pod")
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_ok "[linkInContainer] ADD exits 0"
res=$T_OUT
link=$(t_link_json "$pod" net1)
t_jq "[linkInContainer] net1 is a macvlan" "$link" '.linkinfo.info_kind' macvlan
t_jq "[linkInContainer] net1's parent is the in-pod master" "$link" '.link' "$LICM"
t_jq "[linkInContainer] parent in the same netns (no link_netnsid)" "$link" 'has("link_netnsid")' false
t_jq "[linkInContainer] result address" "$res" '.ips[0].address' 10.89.0.2/24
t_eq "[linkInContainer] address on net1" 10.89.0.2/24 "$(pod_addrs "$pod" net1)"
t_eq "[linkInContainer] host links unchanged" "$host_before" "$(t_links)"
t_cni CHECK "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path"
t_ok "[linkInContainer] CHECK exits 0"
t_cni DEL "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path"
t_ok "[linkInContainer] DEL exits 0"
t_eq "[linkInContainer] DEL left the pod as before" "$pod_before" "$(t_links "$pod")"
t_eq "[linkInContainer] DEL released the IP" "" "$(t_store_ips "$DATA/lic")"
# The host master is not visible from the pod.
conf=$(jq -c '.linkInContainer = true' <<<"$(mkconf 1.0.0 lic2 "{\"ipam\": $(hostlocal 10.89.1.0/24)}")")
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_err "[linkInContainer] host master not found in the pod: code 102" 102 "failed to lookup master"
# The pod holds only this test's links: the message names them as the masters there are.
msg=$(jq -r .msg <<<"$T_OUT")
t_contains "[linkInContainer] ... naming the pod's Ethernet links (1)" "the pod's Ethernet links: " "$msg"
t_contains "[linkInContainer] ... naming the pod's Ethernet links (2)" "$LICM" "$msg"
t_contains "[linkInContainer] ... naming the pod's Ethernet links (3)" "$LICP" "$msg"
t_contains "[linkInContainer] ... and where the master is looked up" "(linkInContainer: the master is looked up in the pod)" "$msg"
expect_clean "[linkInContainer] host master" "$pod" "$pod_before" "$host_before" "$DATA/lic2" ""
ip netns del "$pod"

# An interface IPAM addressed gets no SLAAC address or RA route beside IPAM's: accept_ra
# and autoconf off before it goes up, unless "ipv6Autoconf": true; L2 leaves them alone.
t_netns pod
for keep in false true; do
	conf=$(jq -c --argjson k "$keep" '.ipv6Autoconf = $k' \
		<<<"$(mkconf 1.0.0 ra-$keep "{\"ipam\": $(hostlocal 10.89.4.0/24)}")")
	t_cni ADD "$conf" CNI_NETNS="$pod_path"
	t_ok "[ipv6Autoconf $keep] ADD exits 0"
	want=0
	[ "$keep" = false ] || want=1
	t_eq "[ipv6Autoconf $keep] accept_ra and autoconf of net1" "$want $want" \
		"$(ip netns exec "$pod" cat /proc/sys/net/ipv6/conf/net1/accept_ra /proc/sys/net/ipv6/conf/net1/autoconf | tr '\n' ' ' | sed 's/ $//')"
	t_cni DEL "$conf" CNI_NETNS="$pod_path"
	t_ok "[ipv6Autoconf $keep] DEL exits 0"
done
conf=$(jq -c '.ipv6Autoconf = "yes"' <<<"$(mkconf 1.0.0 ra-bad "{\"ipam\": $(hostlocal 10.89.5.0/24)}")")
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_jq "[ipv6Autoconf \"yes\"] refused, code 6" "$T_OUT" '.code' 6

# =============================================================================
echo "# 6. no master: the default-route interface (inside a separate host netns)"
t_netns hns
t_netns pod
t_name HA "mvh"
t_name HB "mvi"
t_veth "$HA" "$HB" "$hns" "$hns"
ip -n "$hns" addr add 10.66.0.2/24 dev "$HA"
ip -n "$hns" route add default via 10.66.0.1 dev "$HA"
ha_idx=$(ip -n "$hns" -j link show dev "$HA" | jq -r '.[0].ifindex')
conf=$(jq -c 'del(.master)' <<<"$(mkconf 1.0.0 nomaster "{\"ipam\": $(hostlocal 10.90.0.0/24)}")")
T_WRAP=(ip netns exec "$hns")
hns_before=$(t_links "$hns")
host_before=$(t_links)
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_ok "[no master] ADD exits 0"
res=$T_OUT
link=$(t_link_json "$pod" net1)
t_jq "[no master] net1 is a macvlan" "$link" '.linkinfo.info_kind' macvlan
t_jq "[no master] net1's parent is the default-route interface" "$link" '.link_index' "$ha_idx"
t_eq "[no master] address on net1" "$(jq -r '.ips[0].address' <<<"$res")" "$(pod_addrs "$pod" net1)"
t_eq "[no master] host netns links unchanged" "$hns_before" "$(t_links "$hns")"
t_cni CHECK "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path"
t_ok "[no master] CHECK exits 0"
t_cni DEL "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path"
t_ok "[no master] DEL exits 0"
t_eq "[no master] DEL removed net1" "lo" "$(t_link_names "$pod")"
t_eq "[no master] DEL released the IP" "" "$(t_store_ips "$DATA/nomaster")"
# Without a default route there is no master to use.
ip -n "$hns" route del default
pod_before=$(t_links "$pod")
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_err "[no master] no default route: code 102" 102 "default route"
expect_clean "[no master] no default route" "$pod" "$pod_before" "$host_before" "$DATA/nomaster" ""
t_eq "[no master] no default route: host netns links unchanged" "$hns_before" "$(t_links "$hns")"
T_WRAP=()
ip netns del "$pod"
ip netns del "$hns"

# =============================================================================
echo "# 7. DEL without a netns, of a never-added ifname, with empty CNI_NETNS"
t_netns pod
conf=$(mkconf 1.0.0 delgone "{\"ipam\": $(hostlocal 10.91.0.0/24)}")
host_before=$(t_links)
t_cni ADD "$conf" CNI_NETNS="$pod_path" CNI_CONTAINERID=ctr-gone
t_ok "[DEL netns gone] ADD exits 0"
res=$T_OUT
t_eq "[DEL netns gone] IP allocated" 10.91.0.2 "$(t_store_ips "$DATA/delgone")"
ip netns del "$pod"
t_cni DEL "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path" CNI_CONTAINERID=ctr-gone
t_ok "[DEL netns gone] DEL exits 0"
t_eq "[DEL netns gone] IP released" "" "$(t_store_ips "$DATA/delgone")"
t_cni DEL "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path" CNI_CONTAINERID=ctr-gone
t_ok "[DEL netns gone] second DEL exits 0"
: >"$T_DIR/stale-netns"
t_cni DEL "$(with_prev "$conf" "$res")" CNI_NETNS="$T_DIR/stale-netns" CNI_CONTAINERID=ctr-gone
t_ok "[DEL netns gone] DEL with a leftover file as netns path exits 0"
t_eq "[DEL netns gone] host links as before" "$host_before" "$(t_links)"

t_netns pod
t_cni DEL "$(mkconf 1.0.0 delnever "{\"ipam\": $(hostlocal 10.92.0.0/24)}")" \
	CNI_NETNS="$pod_path" CNI_IFNAME=net9
t_ok "[DEL never added] exits 0"
t_eq "[DEL never added] pod untouched" "lo" "$(t_link_names "$pod")"
t_cni DEL "$(mkconf 1.0.0 delnever '{"ipam": {}}')" CNI_NETNS="$pod_path" CNI_IFNAME=net9
t_ok "[DEL never added, L2] exits 0"

conf=$(mkconf 1.0.0 delempty "{\"ipam\": $(hostlocal 10.93.0.0/24)}")
t_cni ADD "$conf" CNI_NETNS="$pod_path" CNI_CONTAINERID=ctr-empty
t_ok "[DEL empty CNI_NETNS] ADD exits 0"
t_cni DEL "$conf" CNI_NETNS= CNI_CONTAINERID=ctr-empty
t_ok "[DEL empty CNI_NETNS] DEL exits 0"
t_eq "[DEL empty CNI_NETNS] IP released" "" "$(t_store_ips "$DATA/delempty")"
t_cni DEL "$conf" -CNI_NETNS CNI_CONTAINERID=ctr-empty
t_ok "[DEL unset CNI_NETNS] DEL exits 0"
t_cni DEL "$conf" CNI_NETNS="$pod_path" CNI_CONTAINERID=ctr-empty
t_ok "[DEL empty CNI_NETNS] DEL with the netns exits 0"
t_eq "[DEL empty CNI_NETNS] DEL with the netns removed net1" "lo" "$(t_link_names "$pod")"
ip netns del "$pod"

# =============================================================================
echo "# 8. injected failures"
# fail_case DESC CODE MSG CONF [t_cni overrides...]: ADD must fail with CODE
# (empty = any) and MSG, and leave host, pod and the host-local store of the
# config's network as they were.
fail_case() {
	local desc=$1 code=$2 msg=$3 conf=$4 net store
	shift 4
	t_netns pod
	net=$(jq -r '.name // "none"' <<<"$conf" 2>/dev/null) || net=none
	store=$DATA/$net
	local host_before pod_before store_before
	host_before=$(t_links)
	pod_before=$(t_links "$pod")
	store_before=$(t_store_ips "$store")
	t_cni ADD "$conf" CNI_NETNS="$pod_path" "$@"
	t_err "[$desc] ADD fails${code:+ with code $code}" "$code" "$msg"
	expect_clean "[$desc]" "$pod" "$pod_before" "$host_before" "$store" "$store_before"
	ip netns del "$pod"
}

# a. failing IPAM: its error passes through
: >"$IPAMLOG"
fail_case "failing IPAM" 11 "pool busy" "$(mkconf 1.0.0 failipam '{"ipam": {"type": "failipam"}}')"
t_jq "[failing IPAM] msg is exactly the IPAM's" "$T_OUT" '.msg' "pool busy"
t_contains "[failing IPAM] IPAM ADD was called" "failipam ADD" "$(cat "$IPAMLOG")"

# b. IPAM returning no IPs: error, and the IPAM allocation is released
: >"$IPAMLOG"
fail_case "empty IPAM result" "" "missing IP config" \
	"$(mkconf 1.0.0 emptyipam '{"ipam": {"type": "emptyipam"}}')"
t_contains "[empty IPAM result] IPAM DEL called after the ADD" \
	"$(printf 'emptyipam ADD cnitest\nemptyipam DEL cnitest')" "$(cat "$IPAMLOG")"

# IPAM plugin that does not exist in CNI_PATH
fail_case "IPAM not found" "" "" "$(mkconf 1.0.0 noipam '{"ipam": {"type": "nosuchipam"}}')"

# c. name collision in the pod: a veth named net1 is already there
t_netns pod
t_name COLP "mvq"
ip link add net1 netns "$pod" type veth peer name "$COLP" netns "$pod" || exit 1
ip -n "$pod" link set net1 up
# Its peer is down: the kernel marks net1 NO-CARRIER by itself, up to a second later
# (linkwatch). The snapshot below waits for that, or the ADD would seem to change it.
for _ in $(seq 200); do
	t_link_json "$pod" net1 | jq -e '.flags | index("NO-CARRIER")' >/dev/null && break
	sleep 0.05
done
conf=$(mkconf 1.0.0 collide "{\"ipam\": $(hostlocal 10.94.0.0/24)}")
host_before=$(t_links)
pod_before=$(t_links "$pod")
net1_before=$(t_link_json "$pod" net1 | jq -c '{ifindex, address, kind: .linkinfo.info_kind, flags}')
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_err "[name collision] ADD fails" ""
expect_clean "[name collision]" "$pod" "$pod_before" "$host_before" "$DATA/collide" ""
t_eq "[name collision] the existing net1 untouched" "$net1_before" \
	"$(t_link_json "$pod" net1 | jq -c '{ifindex, address, kind: .linkinfo.info_kind, flags}')"
# The runtime's DEL after the failed ADD must not remove the other veth.
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_ok "[name collision] DEL exits 0"
t_eq "[name collision] DEL left the foreign net1 in place" "$pod_before" "$(t_links "$pod")"
ip netns del "$pod"

# d. missing master
t_name NOMASTER "mvx"
fail_case "missing master" 102 "failed to lookup master" \
	"$(jq -c --arg m "$NOMASTER" '.master = $m' <<<"$(mkconf 1.0.0 nomst "{\"ipam\": $(hostlocal 10.95.0.0/24)}")")"

# e. MTU above the master's
fail_case "MTU 9999" 7 "invalid MTU" \
	"$(mkconf 1.0.0 badmtu "{\"mtu\": 9999, \"ipam\": $(hostlocal 10.96.0.0/24)}")"

# f. failure after IPAM succeeded: a route whose gateway is unreachable
fail_case "route add fails after IPAM" "" "" \
	"$(mkconf 1.0.0 badroute "{\"ipam\": $(hostlocal 10.99.0.0/24 '{"routes": [{"dst": "10.200.0.0/16", "gw": "10.250.0.1"}]}')}")"
t_eq "[route add fails after IPAM] host-local store dir was used" yes \
	"$([ -f "$DATA/badroute/last_reserved_ip.0" ] && echo yes || echo no)"

# g. bad input: nothing is created, nothing is allocated
fail_case "malformed stdin" 6 "" '{"cniVersion": "1.0.0", "name": "malformed", '
fail_case "cniVersion 9.9.9" 1 "incompatible CNI versions" \
	"$(mkconf 9.9.9 badver "{\"ipam\": $(hostlocal 10.97.0.0/24)}")"
fail_case "missing CNI_IFNAME" 4 "CNI_IFNAME" \
	"$(mkconf 1.0.0 noifname "{\"ipam\": $(hostlocal 10.97.1.0/24)}")" -CNI_IFNAME
fail_case "ifname a/b" 4 "" \
	"$(mkconf 1.0.0 slashif "{\"ipam\": $(hostlocal 10.97.2.0/24)}")" CNI_IFNAME=a/b
fail_case "containerID with bad characters" 4 "invalid characters in containerID" \
	"$(mkconf 1.0.0 badid "{\"ipam\": $(hostlocal 10.97.3.0/24)}")" "CNI_CONTAINERID=bad/id!"
fail_case "CNI_COMMAND in lower case" 4 "unknown CNI_COMMAND: add (one of ADD, DEL, CHECK, STATUS, GC, VERSION)" \
	"$(mkconf 1.0.0 lower "{\"ipam\": $(hostlocal 10.97.4.0/24)}")" CNI_COMMAND=add
# Not root (a user trying the plugin by hand): the error says what it lacks. Not under a
# checker's wrapper, which would run as that user too.
if [ ${#T_BASE_WRAP[@]} -eq 0 ] && command -v setpriv >/dev/null; then
	T_WRAP=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	fail_case "not root" 100 "(not root: a CNI plugin needs CAP_SYS_ADMIN and CAP_NET_ADMIN" \
		"$(mkconf 1.0.0 notroot "{\"ipam\": $(hostlocal 10.97.5.0/24)}")"
	T_WRAP=()
fi

# =============================================================================
echo "# 9. nothing left behind"
t_cleanup
t_eq "host link list equals the one at start" "$HOST_START" "$(t_links)"
leftover=$(ip netns list 2>/dev/null | grep -c "cnit-$T_TOK" || true)
t_eq "no test netns left" 0 "$leftover"

t_summary
