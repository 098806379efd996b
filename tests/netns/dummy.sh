#!/usr/bin/env bash
# Real-kernel tests of the dummy plugin, run as a runtime runs it: CNI_*
# environment, config on stdin, result or error JSON on stdout.
#
#   dummy.sh PLUGIN [REFERENCE_CNI_DIR]
#
# PLUGIN is the dummy binary under test. REFERENCE_CNI_DIR (default
# /usr/lib/cni, Debian's containernetworking-plugins) provides the host-local
# and static IPAM plugins. Whether the kernel can make a dummy link is tried
# first, in this suite's own netns: where it can, ADD/CHECK/DEL are checked in
# full; where it cannot (no CONFIG_DUMMY), that ADD fails with code 100 naming
# the missing driver, leaves nothing and DEL succeeds. Needs root; exits 77
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
for p in host-local static; do
	[ -x "$REF/$p" ] || { echo "FAIL: $REF/$p not found (containernetworking-plugins)"; exit 1; }
done

t_init

VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
HOST_START=$(t_links)

BIN=$T_DIR/bin
DATA=$T_DIR/ipam
mkdir -p "$BIN" "$DATA"
T_ENV_PATH=$BIN
t_ref_ipam "$BIN" "$REF" host-local static
cat >"$BIN/failipam" <<'EOF'
#!/bin/sh
[ "$CNI_COMMAND" != ADD ] && exit 0
printf '{"code":11,"msg":"pool busy"}'
exit 1
EOF
chmod +x "$BIN/failipam"

# dt_netns VAR: a new netns named with this suite's prefix, deleted on cleanup.
dt_netns() {
	local name
	t_name name "dt"
	ip netns add "$name" || { echo "FAIL: ip netns add $name"; exit 1; }
	t_defer "[ ! -e '/var/run/netns/$name' ] || ip netns del '$name'"
	printf -v "$1" '%s' "$name"
	printf -v "${1}_path" '%s' "/var/run/netns/$name"
}

# conf VERSION EXTRA: a dummy config; EXTRA is JSON members, comma first.
conf() { printf '{"cniVersion":"%s","name":"dtnet","type":"dummy"%s}' "$1" "${2:-}"; }
with_prev() { printf '%s,"prevResult":%s}' "${1%\}}" "$2"; }
HOSTLOCAL=',"ipam":{"type":"host-local","dataDir":"'$DATA'","subnet":"10.65.0.0/24"}'
STORE=$DATA/dtnet
STATIC=',"ipam":{"type":"static","addresses":[{"address":"10.64.99.2/24"}]}'

dt_netns pod
POD=$pod
POD_PATH=$pod_path
T_ENV_NETNS=$POD_PATH

# Refused whatever the kernel: the config is checked first.
t_cni ADD "$(conf 1.0.0)"
t_err "no IPAM: refused" 7 "requires an IPAM configuration"
t_cni ADD "$(conf 1.0.0 ',"ipam":{}')"
t_err "empty IPAM: refused" 7 "requires an IPAM configuration"
t_cni ADD "$(conf 1.0.0 "$HOSTLOCAL")" CNI_IFNAME=a/b
t_err "CNI_IFNAME with a slash: refused" 4 ""

if ! ip -n "$POD" link add dtprobe type dummy 2>/dev/null; then
	echo "# the kernel has no dummy driver: ADD must say so and leave nothing"
	t_cni ADD "$(conf 1.0.0 "$HOSTLOCAL")"
	t_err "ADD fails naming the missing dummy driver" 100 "the kernel has no dummy driver"
	t_eq "the pod holds only lo" lo "$(t_link_names "$POD")"
	t_eq "nothing reserved" "" "$(t_store_ips "$STORE")"
	t_cni DEL "$(conf 1.0.0 "$HOSTLOCAL")"
	t_ok "DEL exits 0"
	t_cni DEL "$(conf 1.0.0 "$HOSTLOCAL")"
	t_ok "a second DEL exits 0"
	t_cleanup
	t_eq "host links as at start" "$HOST_START" "$(t_links)"
	t_summary
fi
ip -n "$POD" link del dtprobe

# =============================================================================
echo "# 1. result shape at every version (static IPAM, one dummy each)"
i=0
for v in $VERSIONS; do
	i=$((i + 1))
	ipam=",\"ipam\":{\"type\":\"static\",\"addresses\":[{\"address\":\"10.64.$i.2/24\"}]}"
	t_cni ADD "$(conf "$v" "$ipam")" CNI_IFNAME="dv$i"
	t_ok "[$v] ADD exits 0"
	case $v in
	0.1.0 | 0.2.0)
		t_jq "[$v] result: ip4 only" "$T_OUT" \
			'[.cniVersion, .ip4.ip, (has("interfaces")), (has("ips"))] | map(tostring) | join(" ")' \
			"$v 10.64.$i.2/24 false false"
		;;
	*)
		t_jq "[$v] result: the dummy and its address" "$T_OUT" \
			'[.cniVersion, (.interfaces | length), .interfaces[0].name,
			  (.interfaces[0].mac | test("^([0-9a-f]{2}:){5}[0-9a-f]{2}$")),
			  .interfaces[0].sandbox, .ips[0].address, .ips[0].interface] | map(tostring) | join(" ")' \
			"$v 1 dv$i true $POD_PATH 10.64.$i.2/24 0"
		;;
	esac
done
t_eq "every version made one dummy, up" "$i" \
	"$(ip -n "$POD" -j link show type dummy up | jq 'length')"
ip netns del "$POD"
dt_netns pod
POD=$pod
POD_PATH=$pod_path
T_ENV_NETNS=$POD_PATH

# =============================================================================
echo "# 2. ADD, CHECK, DEL with host-local"
C=$(conf 1.0.0 "$HOSTLOCAL")
t_cni ADD "$C"
t_ok "ADD exits 0"
RES=$T_OUT
IP=$(t_store_ips "$STORE")
t_match "host-local reserved one address" '^10\.65\.0\.[0-9]+$' "$IP"
L=$(t_link_json "$POD" net1)
t_jq "a dummy, up, with the result's MAC" "$L" \
	'[.linkinfo.info_kind, ((.flags // []) | index("UP") != null), .address] | map(tostring) | join(" ")' \
	"dummy true $(jq -r '.interfaces[0].mac' <<<"$RES")"
t_jq "the address is on it" "$(ip -n "$POD" -j addr show dev net1)" \
	'[.[0].addr_info[] | select(.family == "inet") | "\(.local)/\(.prefixlen)"] | join(" ")' "$IP/24"
t_cni CHECK "$(with_prev "$C" "$RES")"
t_ok "CHECK exits 0"
# (static IPAM: host-local's CHECK would refuse first, lo holding none of its reservations)
t_cni CHECK "$(with_prev "$(conf 1.0.0 "$STATIC")" "${RES//net1/lo}")" CNI_IFNAME=lo
t_err "CHECK of a link that is no dummy" 103 "not of type dummy"
ip -n "$POD" link set net1 down
t_cni CHECK "$(with_prev "$C" "$RES")"
t_err "CHECK of a dummy that is down" 103 "is down"
ip -n "$POD" link set net1 up

t_cni ADD "$(conf 1.0.0 ',"ipam":{"type":"failipam"}')"
t_err "ADD over an existing interface" 100 "already has an interface named"
t_eq "the dummy there is untouched" "$(jq -r '.ifindex' <<<"$L")" \
	"$(t_link_json "$POD" net1 | jq -r '.ifindex')"

t_cni DEL "$(with_prev "$C" "$RES")"
t_ok "DEL exits 0"
t_eq "DEL removed the dummy" lo "$(t_link_names "$POD")"
t_eq "DEL released the address" "" "$(t_store_ips "$STORE")"
t_cni DEL "$(with_prev "$C" "$RES")"
t_ok "a second DEL exits 0"

# =============================================================================
echo "# 3. failures after the dummy exists leave nothing"
t_cni ADD "$(conf 1.0.0 ',"ipam":{"type":"failipam"}')"
t_err "IPAM fails: its error passed through" 11 "pool busy"
t_cni ADD "$(conf 1.0.0 ',"ipam":{"type":"host-local","dataDir":"'"$DATA"'","subnet":"10.65.0.0/24","routes":[{"dst":"10.68.0.0/16","gw":"10.99.0.1"}]}')"
t_err "a route IPAM gave cannot be added" 100 ""
t_eq "no dummy left" lo "$(t_link_names "$POD")"
t_eq "no address left reserved" "" "$(t_store_ips "$STORE")"

# =============================================================================
echo "# 4. DEL where there is nothing, or nothing of ours"
t_cni DEL "$(conf 1.0.0 "$HOSTLOCAL")" CNI_IFNAME=lo
t_ok "DEL of a link that is no dummy exits 0"
t_eq "it is left in place" lo "$(t_link_names "$POD")"
ip netns del "$POD"
t_cni DEL "$(conf 1.0.0 "$HOSTLOCAL")"
t_ok "DEL with the netns gone exits 0"

t_cleanup
t_eq "host links as at start" "$HOST_START" "$(t_links)"
t_summary
