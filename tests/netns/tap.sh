#!/usr/bin/env bash
# Real-kernel tests of the tap plugin, run as a runtime runs it: CNI_*
# environment, config on stdin, result or error JSON on stdout.
#
#   tap.sh PLUGIN [REFERENCE_CNI_DIR]
#
# PLUGIN is the tap binary under test. REFERENCE_CNI_DIR (default /usr/lib/cni,
# Debian's containernetworking-plugins) provides the static IPAM plugin; Debian
# has no tap plugin to compare with. Every pod is a fresh netns; the checks
# read the kernel's view of each tap (`ip -j -d link`). Needs root; exits 77
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
[ -x "$T_PLUGIN" ] || { echo "FAIL: plugin $T_PLUGIN is not executable"; exit 1; }
[ -x "$REF/static" ] || { echo "FAIL: $REF/static not found (containernetworking-plugins)"; exit 1; }

t_init

VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
HOST_START=$(t_links)

BIN=$T_DIR/bin
IPAMLOG=$T_DIR/ipam.log
mkdir -p "$BIN"
T_ENV_PATH=$BIN
t_ref_ipam "$BIN" "$REF" static
# failipam: ADD fails with a CNI error. killipam: ADD kills the plugin that ran it.
cat >"$BIN/failipam" <<EOF
#!/bin/sh
echo "failipam \$CNI_COMMAND" >>"$IPAMLOG"
[ "\$CNI_COMMAND" != ADD ] && exit 0
printf '{"code":11,"msg":"pool busy"}'
exit 1
EOF
cat >"$BIN/killipam" <<'EOF'
#!/bin/sh
[ "$CNI_COMMAND" != ADD ] && exit 0
kill -9 "$PPID"
exit 1
EOF
chmod +x "$BIN/failipam" "$BIN/killipam"
: >"$IPAMLOG"

# dt_netns VAR: a new netns named with this suite's prefix, deleted on cleanup.
dt_netns() {
	local name
	t_name name "dt"
	ip netns add "$name" || { echo "FAIL: ip netns add $name"; exit 1; }
	t_defer "[ ! -e '/var/run/netns/$name' ] || ip netns del '$name'"
	printf -v "$1" '%s' "$name"
	printf -v "${1}_path" '%s' "/var/run/netns/$name"
}

# conf VERSION EXTRA: a tap config; EXTRA is JSON members, comma first.
conf() { printf '{"cniVersion":"%s","name":"dtnet","type":"tap"%s}' "$1" "${2:-}"; }
# with_prev CONF RESULT: CONF with a prevResult, without a process.
with_prev() { printf '%s,"prevResult":%s}' "${1%\}}" "$2"; }
STATIC=',"ipam":{"type":"static","addresses":[{"address":"10.66.0.2/24"}],"routes":[{"dst":"10.67.0.0/16"}]}'

dt_netns pod
POD=$pod
POD_PATH=$pod_path
T_ENV_NETNS=$POD_PATH

if [ ! -c /dev/net/tun ]; then
	# A kernel without the tun driver: a clear error and nothing made.
	t_cni ADD "$(conf 1.0.0 "$STATIC")"
	t_err "no /dev/net/tun: ADD fails naming the tun driver" 100 "tun driver"
	t_eq "no /dev/net/tun: pod holds only lo" lo "$(t_link_names "$POD")"
	t_summary
fi

# =============================================================================
echo "# 1. result shape at every version (static IPAM, one tap each)"
i=0
for v in $VERSIONS; do
	i=$((i + 1))
	mac=$(printf '02:d7:00:00:00:%02x' "$i")
	ipam=",\"ipam\":{\"type\":\"static\",\"addresses\":[{\"address\":\"10.66.$i.2/24\"}],\"routes\":[{\"dst\":\"10.67.$i.0/24\"}]}"
	t_cni ADD "$(conf "$v" ",\"mac\":\"$mac\"$ipam")" CNI_IFNAME="tv$i"
	t_ok "[$v] ADD exits 0"
	case $v in
	0.1.0 | 0.2.0)
		t_jq "[$v] result: ip4 only" "$T_OUT" \
			'[.cniVersion, .ip4.ip, (has("interfaces")), (has("ips"))] | join(" ")' \
			"$v 10.66.$i.2/24 false false"
		;;
	*)
		t_jq "[$v] result: the tap, its address, the route" "$T_OUT" \
			'[.cniVersion, (.interfaces | length), .interfaces[0].name, .interfaces[0].mac,
			  .interfaces[0].sandbox, .ips[0].address, .ips[0].interface, .routes[0].dst] | join(" ")' \
			"$v 1 tv$i $mac $POD_PATH 10.66.$i.2/24 0 10.67.$i.0/24"
		;;
	esac
done
t_eq "every version made one tap" "$i" \
	"$(ip -n "$POD" -d -j link show type tun | jq '[.[] | select(.linkinfo.info_data.type == "tap" and .linkinfo.info_data.persist)] | length')"
ip netns del "$POD"
dt_netns pod
POD=$pod
POD_PATH=$pod_path
T_ENV_NETNS=$POD_PATH

# =============================================================================
echo "# 2. every field: owner, group, multiQueue, mtu, mac, IPAM"
C=$(conf 1.0.0 ',"owner":54321,"group":54322,"multiQueue":true,"mtu":1400,"mac":"02:d7:00:00:01:01"'"$STATIC")
t_cni ADD "$C"
t_ok "ADD with every field exits 0"
RES=$T_OUT
L=$(t_link_json "$POD" net1)
t_jq "tap, owner, group, multi_queue, persist, mtu, mac, up" "$L" \
	'[.linkinfo.info_kind, .linkinfo.info_data.type, (.linkinfo.info_data.user | tostring),
	  (.linkinfo.info_data.group | tostring), .linkinfo.info_data.multi_queue,
	  .linkinfo.info_data.pi, .linkinfo.info_data.persist, .mtu, .address,
	  ((.flags // []) | index("UP") != null)] | map(tostring) | join(" ")' \
	"tun tap 54321 54322 true false true 1400 02:d7:00:00:01:01 true"
t_jq "the address and the route are in the pod" \
	"[$(ip -n "$POD" -j addr show dev net1),$(ip -n "$POD" -j route show dev net1)]" \
	'[(.[0][0].addr_info[] | select(.family == "inet") | "\(.local)/\(.prefixlen)"),
	  (.[1][] | select(.dst == "10.67.0.0/16") | .dst)] | join(" ")' \
	"10.66.0.2/24 10.67.0.0/16"
IFINDEX=$(jq -r '.ifindex' <<<"$L")

t_cni CHECK "$(with_prev "$C" "$RES")"
t_ok "CHECK exits 0"
t_cni CHECK "$(with_prev "$C" "${RES/02:d7:00:00:01:01/02:d7:00:00:01:02}")"
t_err "CHECK with another mac in prevResult" 103 "Mac"
t_cni CHECK "$(with_prev "$C" "${RES//net1/lo}")" CNI_IFNAME=lo
t_err "CHECK of a link that is no tap" 103 "not of type tap"

# The name is taken: refused, and the tap there is left as it was.
t_cni ADD "$(conf 1.0.0 ',"ipam":{"type":"failipam"}')"
t_err "ADD over an existing tap" 100 "already has an interface named"
t_jq "the existing tap is untouched" "$(t_link_json "$POD" net1)" \
	'[.ifindex, .linkinfo.info_data.persist] | map(tostring) | join(" ")' "$IFINDEX true"
t_eq "IPAM was not run for it" "" "$(<"$IPAMLOG")"

t_cni DEL "$(with_prev "$C" "$RES")"
t_ok "DEL exits 0"
t_eq "DEL removed the tap" lo "$(t_link_names "$POD")"
t_cni DEL "$(with_prev "$C" "$RES")"
t_ok "a second DEL exits 0"

# =============================================================================
echo "# 3. L2, owner only, as a bridge port"
t_name BR dtbr
ip -n "$POD" link add "$BR" type bridge
C=$(conf 1.0.0 ",\"owner\":54321,\"bridge\":\"$BR\"")
t_cni ADD "$C"
t_ok "L2 ADD as a bridge port exits 0"
t_jq "an L2 result: the tap, no IPs" "$T_OUT" '[.interfaces[0].name, (.ips | length)] | map(tostring) | join(" ")' \
	"net1 0"
t_jq "owner set, no group, one queue, up, the bridge's port" "$(t_link_json "$POD" net1)" \
	'[(.linkinfo.info_data.user | tostring), (.linkinfo.info_data | has("group")),
	  .linkinfo.info_data.multi_queue, ((.flags // []) | index("UP") != null), .master] | map(tostring) | join(" ")' \
	"54321 false false true $BR"
t_cni DEL "$C"
t_ok "L2 DEL exits 0"
t_eq "DEL removed the tap, the bridge stays" "$BR lo" "$(t_link_names "$POD")"

# =============================================================================
echo "# 4. refused before anything is made"
POD_START=$(t_links "$POD")
bad() { t_cni ADD "$(conf 1.0.0 "$2$STATIC")"; t_err "$1" "$3" "$4"; }
bad "bridge name too long" ',"bridge":"abcdefghijklmnop"' 7 "invalid bridge"
bad "bridge name with a slash" ',"bridge":"a/b"' 7 "invalid bridge"
bad "bridge missing" ',"bridge":"dtnobridge"' 102 "failed to get bridge dtnobridge"
bad "multicast MAC" ',"mac":"01:00:5e:00:00:01"' 7 "multicast"
bad "malformed MAC" ',"mac":"02:00:00:00:00"' 7 "invalid MAC"
bad "MTU below the tun minimum" ',"mtu":67' 7 "invalid MTU"
bad "MTU above the tun maximum" ',"mtu":65536' 7 "mtu"
bad "owner 4294967295" ',"owner":4294967295' 7 "owner"
bad "group -1" ',"group":-1' 7 "group"
bad "owner as a string" ',"owner":"root"' 6 "owner"
bad "selinuxContext" ',"selinuxContext":"system_u:system_r:container_t:s0"' 2 "selinuxContext"
t_cni ADD "$(conf 1.0.0 "$STATIC")" CNI_IFNAME=a/b
t_err "CNI_IFNAME with a slash" 4 ""
t_cni ADD "$(conf 0.2.0)"
t_err "L2 at 0.2.0" 7 "no valid IP addresses"
t_eq "the refusals left the pod as it was" "$POD_START" "$(t_links "$POD")"

# =============================================================================
echo "# 5. failures after the tap exists leave nothing"
t_cni ADD "$(conf 1.0.0 ',"ipam":{"type":"failipam"}')"
t_err "IPAM fails: its error passed through" 11 "pool busy"
t_cni ADD "$(conf 1.0.0 ',"ipam":{"type":"static","addresses":[{"address":"10.66.0.2/24"}],"routes":[{"dst":"10.68.0.0/16","gw":"10.99.0.1"}]}')"
t_err "a route IPAM gave cannot be added" 100 ""
# (bash's "Killed" notice for it goes to /dev/null)
t_cni ADD "$(conf 1.0.0 ',"ipam":{"type":"killipam"}')" 2>/dev/null
t_ne "the plugin killed during IPAM did not exit 0" 0 "$T_RC"
t_eq "no tap left by any of them" "$POD_START" "$(t_links "$POD")"

# =============================================================================
echo "# 6. DEL where there is nothing, or nothing of ours"
t_cni DEL "$(conf 1.0.0)" CNI_IFNAME=lo
t_ok "DEL of a link that is no tap exits 0"
t_eq "it is left in place" "$POD_START" "$(t_links "$POD")"
ip netns del "$POD"
t_cni DEL "$(conf 1.0.0)"
t_ok "DEL with the netns gone exits 0"
t_cni DEL "$(conf 1.0.0)" CNI_NETNS=
t_ok "DEL without CNI_NETNS exits 0"

# =============================================================================
echo "# 7. nothing left behind"
t_cleanup
t_eq "host links as at start" "$HOST_START" "$(t_links)"
t_summary
