#!/usr/bin/env bash
# Real-kernel tests of the host-device plugin, run as a runtime runs it: CNI_*
# environment, config on stdin, result or error JSON on stdout.
#
#   host-device.sh PLUGIN [REFERENCE_CNI_DIR]
#
# PLUGIN is the host-device binary under test. REFERENCE_CNI_DIR (default
# /usr/lib/cni, Debian's containernetworking-plugins) provides the host-local
# and static IPAM plugins. Every "host device" is one end of a veth pair made
# here in the root netns (its peer stays behind, so the pair survives the
# moves), every pod is a fresh `ip netns add` netns. After every step the test
# looks at the kernel: where the device is, its name, up/down, alias,
# addresses, and that nothing else appeared. Needs root; exits 77 only when
# network namespaces cannot be created.
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

# The versions of the full ADD/CHECK/DEL rounds. The kernel matrix narrows
# them (NETNS_CNI_VERSIONS, tests/kernel/run.sh): the kernel sees the same
# requests at every version, and a round costs minutes under user-mode Linux.
VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
HOST_START=$(t_links)

# --- CNI_PATH: the reference IPAM plugins and fake ones --------------------
BIN=$T_DIR/bin
DATA=$T_DIR/ipam
IPAMLOG=$T_DIR/ipam.log
mkdir -p "$BIN" "$DATA"
T_ENV_PATH=$BIN

t_ref_ipam "$BIN" "$REF" host-local static

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

# --- helpers ----------------------------------------------------------------
ver_ge() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" == "$2" ]; }

# Where the plugin keeps what ADD found on a device, for DEL (a file per device).
STATE_DIR=/run/cni-rdma-plugins/host-device

# new_dev VAR: a fresh host device (veth end "hd…", up) whose peer "hq…" stays in the host.
new_dev() {
	local d p
	t_name d "hd"
	t_name p "hq"
	t_veth "$d" "$p"
	# A veth destroyed with its pod leaves the state its ADD kept.
	t_defer "[ ! -e '$STATE_DIR/$d' ] || rm -f '$STATE_DIR/$d'"
	printf -v "$1" '%s' "$d"
}

kept() { [ -f "$STATE_DIR/$1" ] && echo kept || echo none; }

# mkconf VERSION NAME EXTRA: a host-device config, EXTRA merged in.
mkconf() {
	local x=${3:-}
	[ -n "$x" ] || x='{}'
	jq -cn --arg v "$1" --arg n "$2" --argjson x "$x" \
		'{cniVersion: $v, name: $n, type: "host-device"} + $x'
}

hostlocal() {
	local x=${2:-}
	[ -n "$x" ] || x='{}'
	jq -cn --arg d "$DATA" --arg s "$1" --argjson x "$x" \
		'{type: "host-local", dataDir: $d, subnet: $s} + $x'
}

with_prev() { jq -c --argjson r "$2" '. + {prevResult: $r}' <<<"$1"; }

addrs() {
	t_ip "$1" -j addr show dev "$2" 2>/dev/null |
		jq -r '[.[0].addr_info[]? | select(.family == "inet") | "\(.local)/\(.prefixlen)"] | join(" ")'
}

# state NS IF: "name up alias mac" of a link, "" when absent.
state() {
	local j
	j=$(t_link_json "$1" "$2")
	[ -n "$j" ] || { echo ""; return; }
	jq -r '"\(.ifname) \((.flags // []) | index("UP") != null) alias=\(.ifalias // "") \(.address)"' <<<"$j"
}

# at_home DESC DEV UP MAC: the device is in the host under its name, with that
# up state and MAC, no alias, no IPv4 address.
at_home() {
	t_eq "$1: $2 back in the host, up=$3, no alias" "$2 $3 alias= $4" "$(state "" "$2")"
	t_eq "$1: no address on $2" "" "$(addrs "" "$2")"
}

# =============================================================================
echo "# 1. ADD/CHECK/DEL with host-local at every version"
i=0
for v in $VERSIONS; do
	i=$((i + 1))
	new_dev dev
	t_mac mac "$dev"
	t_netns pod
	net="hl-${v//./}"
	store=$DATA/$net
	id="ctr-hl-$v"
	conf=$(mkconf "$v" "$net" "{\"device\": \"$dev\", \"ipam\": $(hostlocal "10.66.$i.0/24")}")

	t_cni ADD "$conf" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
	t_ok "[$v] ADD exits 0"
	res=$T_OUT
	t_jq "[$v] result cniVersion" "$res" '.cniVersion' "$v"
	ips=$(t_store_ips "$store")
	t_match "[$v] host-local holds one IP" '^10\.66\.'"$i"'\.[0-9]+$' "$ips"
	case $v in
	0.1.0 | 0.2.0)
		t_jq "[$v] ip4.ip" "$res" '.ip4.ip' "$ips/24"
		;;
	*)
		t_jq "[$v] interfaces" "$res" '[.interfaces[] | {name, mac, sandbox}]' \
			"$(jq -n --arg m "$mac" --arg s "$pod_path" '[{name: "net1", mac: $m, sandbox: $s}]')"
		t_jq "[$v] ips[0]" "$res" '"\(.ips[0].address) \(.ips[0].interface)"' "$ips/24 0"
		;;
	esac
	t_eq "[$v] device gone from the host" "" "$(t_link_json "" "$dev")"
	t_eq "[$v] device is net1 in the pod, up, alias = original name" \
		"net1 true alias=$dev $mac" "$(state "$pod" net1)"
	t_eq "[$v] the address is on net1" "$ips/24" "$(addrs "$pod" net1)"
	t_eq "[$v] pod holds lo and net1" "lo net1" "$(t_link_names "$pod")"

	if ver_ge "$v" 0.4.0; then
		t_cni CHECK "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
		t_ok "[$v] CHECK exits 0"
		bad=$(jq -c '.interfaces[0].mac = "c2:00:00:00:00:01"' <<<"$res")
		t_cni CHECK "$(with_prev "$conf" "$bad")" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
		t_err "[$v] CHECK with a wrong mac is code 103" 103 "doesn't match container Mac"
		bad=$(jq -c '.interfaces[0].sandbox = "/var/run/netns/other"' <<<"$res")
		t_cni CHECK "$(with_prev "$conf" "$bad")" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
		t_err "[$v] CHECK with another sandbox is code 103" 103 "sandbox in prevResult"
		t_cni CHECK "$conf" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
		t_err "[$v] CHECK without prevResult is code 7" 7 "required prevResult missing"
		delconf=$(with_prev "$conf" "$res")
	else
		t_cni CHECK "$conf" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
		t_err "[$v] CHECK below 0.4.0 is code 1" 1
		delconf=$conf
	fi

	t_cni DEL "$delconf" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
	t_ok "[$v] DEL exits 0"
	at_home "[$v] DEL" "$dev" true "$mac"
	t_eq "[$v] pod holds only lo" "lo" "$(t_link_names "$pod")"
	t_eq "[$v] DEL released the IP" "" "$(t_store_ips "$store")"
	t_cni DEL "$delconf" CNI_NETNS="$pod_path" CNI_CONTAINERID="$id"
	t_ok "[$v] second DEL exits 0"
	at_home "[$v] second DEL" "$dev" true "$mac"
	ip netns del "$pod"
done

# =============================================================================
echo "# 2. L2 (no IPAM), selectors, static IPAM"
for v in $VERSIONS; do
	case $v in 0.1.0 | 0.2.0) continue ;; esac
	new_dev dev
	t_mac mac "$dev"
	t_netns pod
	conf=$(mkconf "$v" "l2" "{\"hwaddr\": \"$mac\"}")
	t_cni ADD "$conf" CNI_NETNS="$pod_path"
	t_ok "[L2 hwaddr $v] ADD exits 0"
	t_jq "[L2 hwaddr $v] result is the interface alone" "$T_OUT" \
		'[.interfaces, (.ips // [] | length)] | tojson' \
		"$(jq -nc --arg m "$mac" --arg s "$pod_path" '[[{name: "net1", mac: $m, sandbox: $s}], 0]')"
	t_eq "[L2 hwaddr $v] net1 up in the pod" "net1 true alias=$dev $mac" "$(state "$pod" net1)"
	t_cni DEL "$conf" CNI_NETNS="$pod_path"
	t_ok "[L2 hwaddr $v] DEL exits 0"
	at_home "[L2 hwaddr $v]" "$dev" true "$mac"
	ip netns del "$pod"
done

for v in 0.1.0 0.2.0; do
	new_dev dev
	t_netns pod
	host_before=$(t_links)
	t_cni ADD "$(mkconf "$v" l2old "{\"device\": \"$dev\"}")" CNI_NETNS="$pod_path"
	t_err "[L2 $v] refused before anything moves" 7 "cannot convert"
	t_eq "[L2 $v] host unchanged" "$host_before" "$(t_links)"
	t_eq "[L2 $v] pod unchanged" "lo" "$(t_link_names "$pod")"
	ip netns del "$pod"
done

# detours LOG: how many moves in LOG (a debug logFile) went through a
# temporary netns because the direct way was blocked by a name.
DETOUR_MSG="a link has that name; through a temporary netns"
detours() { grep -c "$DETOUR_MSG" "$1" 2>/dev/null || true; }

# static IPAM with a route, and the host device's name equal to a pod link's
# name: the direct move is refused (EEXIST), so ADD goes through a temporary
# netns; DEL meets the same link (the original name taken in the pod) and
# goes around it too.
new_dev dev
t_mac mac "$dev"
t_netns pod
ip -n "$pod" link add "$dev" type veth peer name "${dev}p" || exit 1
hdlog=$T_DIR/static.log
conf=$(mkconf 1.0.0 st "{\"device\": \"$dev\", \"logFile\": \"$hdlog\", \"logLevel\": \"debug\", \"ipam\": {\"type\": \"static\", \"addresses\": [{\"address\": \"10.67.0.5/24\", \"gateway\": \"10.67.0.1\"}], \"routes\": [{\"dst\": \"10.68.0.0/16\"}]}}")
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_ok "[static, pod has a link named like the device] ADD exits 0"
res=$T_OUT
t_eq "[static] ADD went through a temporary netns" 1 "$(detours "$hdlog")"
t_eq "[static] the device is net1 in the pod, up, alias = original name" \
	"net1 true alias=$dev $mac" "$(state "$pod" net1)"
t_eq "[static] net1 in the pod with the address" "10.67.0.5/24" "$(addrs "$pod" net1)"
t_eq "[static] the pod's own $dev untouched" "$dev" "$(t_link_json "$pod" "$dev" | jq -r .ifname)"
t_jq_true "[static] route via the gateway on net1" "$(ip -n "$pod" -j route show 10.68.0.0/16)" \
	'.[0].gateway == "10.67.0.1" and .[0].dev == "net1"'
t_cni CHECK "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path"
t_ok "[static] CHECK exits 0"
ip -n "$pod" route del 10.68.0.0/16
t_cni CHECK "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path"
t_err "[static] CHECK without the route fails" ""
t_cni DEL "$(with_prev "$conf" "$res")" CNI_NETNS="$pod_path"
t_ok "[static] DEL exits 0"
t_eq "[static] DEL went through a temporary netns" 2 "$(detours "$hdlog")"
at_home "[static] DEL" "$dev" true "$mac"
t_eq "[static] the pod keeps its own $dev" "$dev ${dev}p lo" "$(t_link_names "$pod")"
ip netns del "$pod"

# The pod makes a link with the device's original name after ADD: ADD was
# direct, DEL cannot rename net1 to the original name in the pod and goes
# through a temporary netns; the device comes home under its original name.
new_dev dev
t_mac mac "$dev"
t_netns pod
hdlog=$T_DIR/delclash.log
conf=$(mkconf 1.0.0 delclash "{\"device\": \"$dev\", \"logFile\": \"$hdlog\", \"logLevel\": \"debug\"}")
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_ok "[pod takes the original name] ADD exits 0"
t_eq "[pod takes the original name] ADD was direct" 0 "$(detours "$hdlog")"
t_eq "[pod takes the original name] net1 in the pod" "net1 true alias=$dev $mac" \
	"$(state "$pod" net1)"
ip -n "$pod" link add "$dev" type veth peer name "${dev}p" || exit 1
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_ok "[pod takes the original name] DEL exits 0"
t_eq "[pod takes the original name] DEL went through a temporary netns" 1 "$(detours "$hdlog")"
at_home "[pod takes the original name] DEL" "$dev" true "$mac"
t_eq "[pod takes the original name] the pod keeps its own $dev" "$dev ${dev}p lo" \
	"$(t_link_names "$pod")"
ip netns del "$pod"

# CNI_IFNAME equal to the device's own name: no rename at all.
new_dev dev
t_mac mac "$dev"
t_netns pod
t_cni ADD "$(mkconf 1.0.0 same "{\"device\": \"$dev\"}")" CNI_NETNS="$pod_path" CNI_IFNAME="$dev"
t_ok "[same name] ADD exits 0"
t_eq "[same name] in the pod under its own name" "$dev true alias=$dev $mac" "$(state "$pod" "$dev")"
t_cni DEL "$(mkconf 1.0.0 same "{\"device\": \"$dev\"}")" CNI_NETNS="$pod_path" CNI_IFNAME="$dev"
t_ok "[same name] DEL exits 0"
at_home "[same name]" "$dev" true "$mac"
ip netns del "$pod"

# =============================================================================
echo "# 3. DEL edge cases"
# a. the netns is gone (a veth is destroyed with it): DEL succeeds, IPAM released.
new_dev dev
t_netns pod
conf=$(mkconf 1.0.0 gone "{\"device\": \"$dev\", \"ipam\": $(hostlocal 10.69.0.0/24)}")
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_ok "[netns gone] ADD exits 0"
ip netns del "$pod"
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_ok "[netns gone] DEL exits 0"
t_eq "[netns gone] IP released" "" "$(t_store_ips "$DATA/gone")"
t_cni DEL "$conf" CNI_NETNS=""
t_ok "[empty CNI_NETNS] DEL exits 0"

# b. the netns is gone and the kernel handed the device back under its pod
#    name (what happens to a physical NIC): DEL gives it its name back.
new_dev dev
t_mac mac "$dev"
t_netns pod
conf=$(mkconf 1.0.0 refund "{\"device\": \"$dev\"}")
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_ok "[refunded] ADD exits 0"
ip -n "$pod" link set net1 netns 1
t_defer "ip link del net1"
ip netns del "$pod"
t_eq "[refunded] the device is net1 in the host, alias kept" "net1 false alias=$dev $mac" "$(state "" net1)"
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_ok "[refunded] DEL exits 0"
at_home "[refunded]" "$dev" true "$mac"
t_eq "[refunded] no net1 left in the host" "" "$(t_link_json "" net1)"
# Same by MAC, with the original name taken meanwhile: left as is, DEL still succeeds.
t_netns pod
conf=$(mkconf 1.0.0 refund2 "{\"hwaddr\": \"$mac\"}")
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_ok "[refunded, name taken] ADD exits 0"
ip -n "$pod" link set net1 netns 1
ip netns del "$pod"
t_name taker "hx"
ip link add "$taker" type veth peer name "${taker}p"
t_defer "ip link del '$taker'"
ip link set "$taker" name "$dev"
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_ok "[refunded, name taken] DEL exits 0"
t_eq "[refunded, name taken] device stays net1 with its alias" "net1 false alias=$dev $mac" "$(state "" net1)"
ip link del "$dev"
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_ok "[refunded, name free again] DEL exits 0"
at_home "[refunded, name free again]" "$dev" true "$mac"

# b2. DEL gives the device back the up state, MTU and alias ADD found, also
#     when the kernel handed it back from a gone pod; a device that was down
#     comes back down; no state is left behind.
for how in "pod there" "pod gone"; do
	new_dev dev
	t_mac mac "$dev"
	ip link set "$dev" mtu 9000
	ip link set "$dev" alias "uplink to tor switch port 12"
	t_netns pod
	conf=$(mkconf 1.0.0 restore "{\"device\": \"$dev\"}")
	t_cni ADD "$conf" CNI_NETNS="$pod_path"
	t_ok "[restore, $how] ADD exits 0"
	t_eq "[restore, $how] ADD kept the device's state" kept "$(kept "$dev")"
	# What a chained tuning plugin or the pod may do to the device.
	ip -n "$pod" link set net1 mtu 1500
	if [ "$how" = "pod gone" ]; then
		ip -n "$pod" link set net1 netns 1
		t_defer "ip link del net1"
		ip netns del "$pod"
	fi
	t_cni DEL "$conf" CNI_NETNS="$pod_path"
	t_ok "[restore, $how] DEL exits 0"
	t_eq "[restore, $how] DEL gave back the up state and alias" \
		"$dev true alias=uplink to tor switch port 12 $mac" "$(state "" "$dev")"
	t_eq "[restore, $how] DEL gave back the MTU" 9000 "$(t_link_json "" "$dev" | jq -r .mtu)"
	t_eq "[restore, $how] no state left" none "$(kept "$dev")"
	[ "$how" = "pod gone" ] || ip netns del "$pod"
done
new_dev dev
t_mac mac "$dev"
ip link set "$dev" down
t_netns pod
conf=$(mkconf 1.0.0 restore "{\"hwaddr\": \"$mac\"}")
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_ok "[restore, down before ADD] ADD exits 0"
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_ok "[restore, down before ADD] DEL exits 0"
at_home "[restore, down before ADD]" "$dev" false "$mac"
t_eq "[restore, down before ADD] no state left" none "$(kept "$dev")"
ip netns del "$pod"

# c. the original name is taken in the host: DEL fails (code 104), the device
#    stays in the pod as it was; once the name is free, DEL succeeds.
new_dev dev
t_mac mac "$dev"
t_netns pod
conf=$(mkconf 1.0.0 clash "{\"device\": \"$dev\", \"ipam\": $(hostlocal 10.70.0.0/24)}")
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_ok "[host name taken] ADD exits 0"
ip link add "$dev" type veth peer name "${dev}x"
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_err "[host name taken] DEL fails with code 104" 104 "the host has a link of that name"
t_eq "[host name taken] device still net1 in the pod, up" "net1 true alias=$dev $mac" "$(state "$pod" net1)"
t_eq "[host name taken] the host's $dev is the other link" veth \
	"$(t_link_json "" "$dev" | jq -r .linkinfo.info_kind)"
t_ne "[host name taken] the host's $dev is not the device" "$mac" "$(t_link_json "" "$dev" | jq -r .address)"
ip link del "$dev"
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_ok "[host name free] DEL exits 0"
at_home "[host name free]" "$dev" true "$mac"
ip netns del "$pod"

# d. DEL of a net1 this plugin did not move in (no alias): left alone.
t_netns pod
ip -n "$pod" link add net1 type veth peer name net1p
t_cni DEL "$(mkconf 1.0.0 foreign '{"device": "nosuchdev"}')" CNI_NETNS="$pod_path"
t_ok "[foreign net1] DEL exits 0"
t_eq "[foreign net1] left in the pod" "lo net1 net1p" "$(t_link_names "$pod")"
ip netns del "$pod"

# e. DEL without the pod never touches a live host link: only a device the
#    kernel named (CNI_IFNAME or devN) is renamed back to its alias.
for alias in "uplink to tor switch port 12" "mgmt0"; do
	new_dev dev
	t_mac mac "$dev"
	ip link set "$dev" alias "$alias"
	conf=$(mkconf 1.0.0 live "{\"hwaddr\": \"$mac\"}")
	t_cni DEL "$conf" CNI_NETNS=""
	t_ok "[live host link, alias '$alias'] DEL with empty CNI_NETNS exits 0"
	t_eq "[live host link, alias '$alias'] untouched: name, up, alias" \
		"$dev true alias=$alias $mac" "$(state "" "$dev")"
	t_eq "[live host link, alias '$alias'] no $alias appeared" "" "$(t_link_json "" "$alias")"
	ip link set "$dev" alias ""
done

# f. a CNI_NETNS path that is no netns any more (a plain file): gone, DEL
#    succeeds and recovers a device the kernel handed back.
new_dev dev
t_mac mac "$dev"
stale=$T_DIR/stale-netns
: >"$stale"
ip link set "$dev" down
ip link set "$dev" alias "$dev"
ip link set "$dev" name net1
t_defer "ip link del net1"
conf=$(mkconf 1.0.0 stale "{\"hwaddr\": \"$mac\", \"ipam\": $(hostlocal 10.75.0.0/24)}")
t_cni DEL "$conf" CNI_NETNS="$stale"
t_ok "[stale netns path] DEL exits 0"
at_home "[stale netns path]" "$dev" false "$mac"

# g. the pod replaced the device by a link of its own with the same name and
#    an alias: DEL leaves both in the pod and succeeds.
for sel in device hwaddr; do
	new_dev dev
	t_mac mac "$dev"
	t_netns pod
	if [ "$sel" = device ]; then
		conf=$(mkconf 1.0.0 forged "{\"device\": \"$dev\"}")
		forged_alias=hdE
	else
		conf=$(mkconf 1.0.0 forged "{\"hwaddr\": \"$mac\"}")
		forged_alias=$dev
	fi
	t_cni ADD "$conf" CNI_NETNS="$pod_path"
	t_ok "[forged net1, $sel] ADD exits 0"
	ip -n "$pod" link set net1 down
	ip -n "$pod" link set net1 name keep0
	ip -n "$pod" link add net1 type veth peer name net1p
	ip -n "$pod" link set net1 alias "$forged_alias"
	host_before=$(t_links)
	t_cni DEL "$conf" CNI_NETNS="$pod_path"
	t_ok "[forged net1, $sel] DEL exits 0"
	t_contains "[forged net1, $sel] DEL warns" "not the configured device" "$T_ERR"
	t_eq "[forged net1, $sel] host links unchanged" "$host_before" "$(t_links)"
	t_eq "[forged net1, $sel] the pod keeps both" "keep0 lo net1 net1p" "$(t_link_names "$pod")"
	ip netns del "$pod"
done

# h. an ADD killed while the device was in the temporary netns: a physical
#    device comes back to the host as CNI_IFNAME (or devN) with its original
#    name as alias. DEL with the pod there renames it back; an ADD keeps the
#    alias as the original name.
new_dev dev
t_mac mac "$dev"
t_netns pod
conf=$(mkconf 1.0.0 killed "{\"hwaddr\": \"$mac\"}")
ip link set "$dev" down
ip link set "$dev" alias "$dev"
ip link set "$dev" name net1
t_defer "ip link del net1"
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_ok "[interrupted ADD] DEL with the pod there exits 0"
at_home "[interrupted ADD] DEL" "$dev" false "$mac"
ip link set "$dev" alias "$dev"
ip link set "$dev" name "dev$((RANDOM % 9000 + 1000))"
t_cni ADD "$conf" CNI_NETNS="$pod_path"
t_ok "[interrupted ADD] ADD of the devN device exits 0"
t_eq "[interrupted ADD] in the pod with its original name as alias" \
	"net1 true alias=$dev $mac" "$(state "$pod" net1)"
t_cni DEL "$conf" CNI_NETNS="$pod_path"
t_ok "[interrupted ADD] DEL exits 0"
at_home "[interrupted ADD] DEL after ADD" "$dev" false "$mac"
ip netns del "$pod"

# h2. a plugin killed on the direct way: the device is in the pod under its
#     original name (between ADD's move and rename, or DEL's rename and move),
#     or as devN (an ADD of a returned device), its original name as alias.
#     DEL finds it there and brings it home; a second DEL has nothing to do.
for left in orig devN; do
	new_dev dev
	t_mac mac "$dev"
	t_netns pod
	ip link set "$dev" down
	ip link set "$dev" alias "$dev"
	name=$dev
	if [ "$left" = devN ]; then
		name=dev$((RANDOM % 9000 + 1000))
		ip link set "$dev" name "$name"
	fi
	ip link set "$name" netns "$pod"
	for sel in "{\"device\": \"$dev\"}" "{\"hwaddr\": \"$mac\"}"; do
		conf=$(mkconf 1.0.0 leftmid "$sel")
		t_cni DEL "$conf" CNI_NETNS="$pod_path"
		t_ok "[left mid-move as $left, $sel] DEL exits 0"
		at_home "[left mid-move as $left, $sel] DEL" "$dev" false "$mac"
		t_eq "[left mid-move as $left, $sel] the pod holds lo only" "lo" "$(t_link_names "$pod")"
		t_cni DEL "$conf" CNI_NETNS="$pod_path"
		t_ok "[left mid-move as $left, $sel] a second DEL exits 0"
		at_home "[left mid-move as $left, $sel] second DEL" "$dev" false "$mac"
		ip link set "$dev" alias "$dev"
		[ "$left" = devN ] && ip link set "$dev" name "$name"
		ip link set "$name" netns "$pod"
	done
	ip netns del "$pod"
done

# i. DEL is lenient about a device that is gone, not about a wrong type.
t_cni DEL "$(mkconf 1.0.0 badtype '{"deviceID": 5}')" CNI_NETNS=""
t_err "[deviceID is not a string] DEL fails with code 6" 6 "deviceID"

# =============================================================================
echo "# 4. ADD failures: every step undone"
# fail_case DESC CODE MSG UP CONF [t_cni overrides...]: with a fresh device
# (down first unless UP is true), ADD fails with CODE/MSG and the device is
# back in the host: same name, same up state, same alias, no address; the pod
# and the IPAM store as before.
fail_case() {
	local desc=$1 code=$2 msg=$3 up=$4 conf=$5 dev mac net store
	shift 5
	new_dev dev
	[ "$up" == true ] || ip link set "$dev" down
	ip link set "$dev" alias "admin-alias"
	t_mac mac "$dev"
	conf=${conf//@DEV@/$dev}
	[ -n "${PRE_POD:-}" ] || t_netns pod
	net=$(jq -r '.name' <<<"$conf")
	store=$DATA/$net
	local host_before pod_before
	host_before=$(t_links)
	pod_before=$(t_links "$pod")
	t_cni ADD "$conf" CNI_NETNS="$pod_path" "$@"
	t_err "[$desc] ADD fails${code:+ with code $code}" "$code" "$msg"
	t_eq "[$desc] device back: name, up=$up, alias restored" "$dev $up alias=admin-alias $mac" \
		"$(state "" "$dev")"
	t_eq "[$desc] no address on the device" "" "$(addrs "" "$dev")"
	t_eq "[$desc] host links as before" "$host_before" "$(t_links)"
	t_eq "[$desc] pod links as before" "$pod_before" "$(t_links "$pod")"
	t_eq "[$desc] IPAM store empty" "" "$(t_store_ips "$store")"
	ip netns del "$pod"
}

: >"$IPAMLOG"
fail_case "failing IPAM" 11 "pool busy" true \
	"$(mkconf 1.0.0 failipam '{"device": "@DEV@", "ipam": {"type": "failipam"}}')"
t_contains "[failing IPAM] IPAM ADD was called" "failipam ADD" "$(cat "$IPAMLOG")"
: >"$IPAMLOG"
fail_case "empty IPAM result" 101 "missing IP config" false \
	"$(mkconf 1.0.0 emptyipam '{"device": "@DEV@", "ipam": {"type": "emptyipam"}}')"
t_contains "[empty IPAM result] IPAM DEL after the ADD" \
	"$(printf 'emptyipam ADD cnitest\nemptyipam DEL cnitest')" "$(cat "$IPAMLOG")"
fail_case "a malformed hwaddr beside device" 7 'invalid hwaddr "zz:zz"' true \
	"$(mkconf 1.0.0 badmac '{"device": "@DEV@", "hwaddr": "zz:zz"}')"
# An attachment an older build made with it still goes at DEL.
t_cni DEL "$(mkconf 1.0.0 badmac '{"device": "nosuchdev0", "hwaddr": "zz:zz"}')" CNI_NETNS=
t_ok "[a malformed hwaddr beside device] DEL succeeds"
t_netns pod
t_cni ADD "$(mkconf 1.0.0 loop '{"device": "lo"}')" CNI_NETNS="$pod_path"
t_err "[device lo] ADD fails with code 7" 7 "lo is a loopback device: it cannot be moved into a pod"
ip netns del "$pod"
fail_case "IPAM not found" 101 "" true \
	"$(mkconf 1.0.0 noipam '{"device": "@DEV@", "ipam": {"type": "nosuchipam"}}')"
fail_case "route fails after IPAM (up)" 100 "" true \
	"$(mkconf 1.0.0 badroute "{\"device\": \"@DEV@\", \"ipam\": $(hostlocal 10.71.0.0/24 '{"routes": [{"dst": "10.200.0.0/16", "gw": "10.250.0.1"}]}')}")"
t_eq "[route fails after IPAM] host-local had allocated" yes \
	"$([ -f "$DATA/badroute/last_reserved_ip.0" ] && echo yes || echo no)"
fail_case "route fails after IPAM (down)" 100 "" false \
	"$(mkconf 1.0.0 badroute2 "{\"device\": \"@DEV@\", \"ipam\": $(hostlocal 10.72.0.0/24 '{"routes": [{"dst": "10.200.0.0/16", "gw": "10.250.0.1"}]}')}")"
# An address the kernel refuses: IPv4 broadcast-only /32 with a conflicting
# duplicate in the same result (the second add is EEXIST).
fail_case "address add fails" 100 "" true \
	"$(mkconf 1.0.0 dupaddr '{"device": "@DEV@", "ipam": {"type": "static", "addresses": [{"address": "10.73.0.5/24"}, {"address": "10.73.0.5/24"}]}}')"

# The pod already has net1: the move into the pod fails, every step before it is undone.
t_netns pod
ip -n "$pod" link add net1 type veth peer name net1p
PRE_POD=1 fail_case "net1 exists in the pod" 100 "container already has an interface named" true \
	"$(mkconf 1.0.0 podclash "{\"device\": \"@DEV@\", \"ipam\": $(hostlocal 10.74.0.0/24)}")"

# Config errors: nothing moves.
fail_case "no selector" 7 '"pciBusID": no device was given, and none by the device plugin (a HostDeviceNetwork NAD names its resource in the annotation k8s.v1.cni.cncf.io/resourceName' true \
	"$(mkconf 1.0.0 nosel '{}')"
fail_case "device not found" 102 "failed to find host device" true \
	"$(mkconf 1.0.0 nodev '{"device": "hdnosuchdev"}')"
fail_case "runtimeConfig.deviceID not found" 102 \
	"runtime config DeviceID 0000:ff:1f.7 not found or unsupported" true \
	"$(mkconf 1.0.0 nodevid '{"runtimeConfig": {"deviceID": "0000:ff:1f.7"}}')"
fail_case "pciBusID not found" 102 "pciBusID 0000:ff:1f.6 not found" true \
	"$(mkconf 1.0.0 nopci '{"pciBusID": "0000:ff:1f.6"}')"
fail_case "Multus deviceID not found" 102 "deviceID mlx5_core.sf.99 not found" true \
	"$(mkconf 1.0.0 nodevid2 '{"deviceID": "mlx5_core.sf.99", "pciBusID": "mlx5_core.sf.99"}')"
fail_case "kernelpath outside /sys/devices" 7 "invalid kernelpath" true \
	"$(mkconf 1.0.0 badkp '{"kernelpath": "/etc"}')"
fail_case "kernelpath with .." 7 "invalid kernelpath" true \
	"$(mkconf 1.0.0 dotdot '{"kernelpath": "/sys/devices/../class/net/lo"}')"
fail_case "bad hwaddr" 7 "invalid hwaddr" true "$(mkconf 1.0.0 badmac '{"hwaddr": "zz"}')"
fail_case "device is not a string" 6 "device" true "$(mkconf 1.0.0 badtype '{"device": 5}')"
# InfiniBand VF GUIDs: no kernel here makes an IB VF (no netdevsim), so only
# the refusals before anything changes run on a real kernel; the set and
# restore run in the unit suite (test-host-device.c, test_guid_*).
fail_case "GUID for a device that is no InfiniBand VF" 7 \
	"cannot take a GUID: it is not an InfiniBand device" true \
	"$(mkconf 1.0.0 guidveth '{"device": "@DEV@", "runtimeConfig": {"infinibandGUID": "02:00:00:00:00:00:00:01"}}')"
fail_case "malformed infinibandGUID" 7 \
	"invalid runtimeConfig.infinibandGUID \"02:00:00:00:00:00:01\": an InfiniBand GUID is 8 hex octets" true \
	"$(mkconf 1.0.0 guidbad '{"device": "@DEV@", "runtimeConfig": {"infinibandGUID": "02:00:00:00:00:00:01"}}')"
fail_case "zero args.cni.guid" 7 "invalid args.cni.guid" true \
	"$(mkconf 1.0.0 guidzero '{"device": "@DEV@", "args": {"cni": {"guid": "00:00:00:00:00:00:00:00"}}}')"

# =============================================================================
echo "# 5. STATUS, VERSION"
t_cni STATUS "$(mkconf 1.1.0 st '{"device": "x"}')" CNI_NETNS= CNI_IFNAME= CNI_CONTAINERID=
t_ok "STATUS without IPAM exits 0"
t_cni VERSION ""
t_jq "VERSION lists 1.1.0" "$T_OUT" '.supportedVersions | index("1.1.0") != null' true

# =============================================================================
echo "# 6. nothing left behind"
t_cleanup
t_eq "host link list equals the one at start" "$HOST_START" "$(t_links)"
t_eq "no test netns left" 0 "$(ip netns list | grep -c "cnit-$T_TOK" || true)"

t_summary
