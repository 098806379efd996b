#!/usr/bin/env bash
# Real-kernel tests of the ipoib plugin, on the paths that exist without
# InfiniBand: the master is missing or is a veth (refused, nothing created),
# DEL without ADD, DEL with the netns gone, DEL twice, DEL releasing IPAM,
# DEL leaving other plugins' links alone, bad input. The IPoIB child itself
# (create, move, rename, undo) is covered by tests/unit/test-ipoib.c against a
# fake of common/net, since this kernel has no IPoIB driver.
#
#   ipoib.sh PLUGIN [REFERENCE_CNI_DIR]
#
# REFERENCE_CNI_DIR (default /usr/lib/cni) provides host-local. Needs root;
# exits 77 only when network namespaces cannot be created.
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
[ -x "$REF/host-local" ] || { echo "FAIL: $REF/host-local not found (containernetworking-plugins)"; exit 1; }

t_init

BIN=$T_DIR/bin
DATA=$T_DIR/ipam
mkdir -p "$BIN" "$DATA"
ln -s "$REF/host-local" "$BIN/host-local"
T_ENV_PATH=$BIN

# A veth end stands where an InfiniBand master would be.
t_name VMASTER "ibv"
t_name VPEER "ibp"
t_veth "$VMASTER" "$VPEER"
t_name MISSING "ibx"

# conf VERSION MASTER IPAM [EXTRA]: an ipoib config as the operator renders it
conf() {
	jq -c -n --arg v "$1" --arg m "$2" --argjson ipam "$3" --argjson extra "${4:-{\}}" \
		'{cniVersion: $v, name: "ibnet", type: "ipoib", master: $m, ipam: $ipam} + $extra'
}
hostlocal() {
	jq -c -n --arg s "$1" --arg d "$DATA" '{type: "host-local", subnet: $s, dataDir: $d}'
}

echo "# 1. command line and VERSION"
out=$("$T_PLUGIN" --version 2>&1)
t_match "--version names the plugin, the suite and the version" '^ipoib \(cni-rdma-plugins\) [0-9]+\.[0-9]+\.[0-9]+' "$out"
out=$("$T_PLUGIN" --help 2>&1)
t_contains "--help describes the plugin" "IPoIB child" "$out"
# What the reference plugins do without CNI_COMMAND: an about line on stderr, exit 0.
out=$(env -i "$T_PLUGIN" 2>&1 >/dev/null)
t_eq "no CNI_COMMAND: the about line, the name once" \
	"ipoib: gives a pod an IPoIB child (pkey, mode, umcast) of an InfiniBand master" \
	"$(printf '%s\n' "$out" | head -n 1)"
t_cni VERSION '{"cniVersion": "1.1.0"}'
t_ok "VERSION exits 0"
t_jq "VERSION lists 0.3.1 ... 1.1.0" "$T_OUT" '.supportedVersions | join(" ")' \
	"0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0"
# A runtime slower to write the config than the plugin is to answer must not meet a
# closed pipe (SIGPIPE, 141): VERSION reads its stdin as every other command does.
{ sleep 0.3; printf '{"cniVersion": "1.1.0"}'; } | CNI_COMMAND=VERSION "$T_PLUGIN" >/dev/null
t_eq "VERSION reads the config a runtime writes late" "0 0" "${PIPESTATUS[*]}"

echo "# 2. a master that is not IPoIB is refused and nothing is created"
# expect_nothing DESC POD HOST_BEFORE POD_BEFORE: no link appeared anywhere, no address reserved
expect_nothing() {
	t_eq "$1 host links unchanged" "$3" "$(t_links)"
	t_eq "$1 pod links unchanged" "$4" "$(t_links "$2")"
	t_eq "$1 no address reserved" "" "$(t_store_ips "$DATA/ibnet")"
}
for v in 0.3.1 1.0.0 1.1.0; do
	t_netns pod
	host_before=$(t_links)
	pod_before=$(t_links "$pod")
	t_cni ADD "$(conf "$v" "$VMASTER" "$(hostlocal 10.77.0.0/24)")" CNI_NETNS="$pod_path"
	t_err "[veth master $v] ADD refused" 7 "master device $VMASTER is not of type ipoib (its link kind: veth)"
	expect_nothing "[veth master $v]" "$pod" "$host_before" "$pod_before"
	prev=$(jq -c -n --arg v "$v" --arg p "$pod_path" \
		'{prevResult: {cniVersion: $v, interfaces: [{name: "net1", sandbox: $p}]}}')
	t_cni CHECK "$(conf "$v" "$VMASTER" '{}' "$prev")" CNI_NETNS="$pod_path"
	if [ "$v" = 0.3.1 ]; then
		t_err "[veth master $v] CHECK needs 0.4.0" 1 "config version does not allow CHECK"
	else
		t_err "[veth master $v] CHECK refused" 7 "not of type ipoib"
	fi
	ip netns del "$pod"
done

echo "# 3. a missing master: code 102, nothing created"
t_netns pod
host_before=$(t_links)
pod_before=$(t_links "$pod")
t_cni ADD "$(conf 1.0.0 "$MISSING" "$(hostlocal 10.77.0.0/24)")" CNI_NETNS="$pod_path"
t_err "[missing master] ADD fails" 102 "failed to lookup master \"$MISSING\""
t_contains "[missing master] ... naming the host's InfiniBand links" \
	"; the host's InfiniBand links: " "$(jq -r .msg <<<"$T_OUT")"
t_contains "[missing master] ... and how to find the port's name" \
	"(the master is the IPoIB port's name, ip -br link show type ipoib)" "$(jq -r .msg <<<"$T_OUT")"
expect_nothing "[missing master]" "$pod" "$host_before" "$pod_before"

echo "# 4. the Network Operator's NADs are accepted (and reach the master lookup)"
for ipam in '{"type":"nv-ipam","poolName":"my-pool"}' \
	'{"type":"whereabouts","range":"192.168.6.225/28","exclude":["192.168.6.229/30","192.168.6.236/32"]}' \
	'{}'; do
	nad="{ \"cniVersion\":\"0.3.1\", \"name\":\"example-ipoibnetwork\", \"type\":\"ipoib\", \"master\": \"$MISSING\", \"ipam\":$ipam }"
	t_cni ADD "$nad" CNI_NETNS="$pod_path"
	t_err "[operator NAD ipam $ipam] parsed; fails only on the missing master" 102 "failed to lookup master"
done
expect_nothing "[operator NADs]" "$pod" "$host_before" "$pod_before"

# The configs in conf-examples/ipoib, as a user copies them.
examples=$here/../../conf-examples/ipoib
for f in nad.yaml nad-pkey.yaml; do
	cfg=$(sed -n "s/^  config: '\(.*\)'\$/\1/p" "$examples/$f")
	t_ne "[conf-examples/ipoib/$f] has a config" "" "$cfg"
	t_cni ADD "$(jq -c --arg m "$MISSING" '.master = $m' <<<"$cfg")" CNI_NETNS="$pod_path"
	t_err "[conf-examples/ipoib/$f] parsed; fails only on the missing master" 102 "failed to lookup master"
done
cfg=$(jq -c --arg m "$MISSING" '.plugins[0] + {cniVersion, name} | .master = $m' "$examples/ipoib-cnitool.conflist")
t_cni ADD "$cfg" CNI_NETNS="$pod_path"
t_err "[conf-examples/ipoib/ipoib-cnitool.conflist] parsed; fails only on the missing master" 102 \
	"failed to lookup master"

echo "# 5. config refusals before the kernel is touched"
t_cni ADD "$(conf 1.0.0 "$VMASTER" '{}' '{"pkey": 0}')" CNI_NETNS="$pod_path"
t_err "[pkey 0] refused" 7 "partition key 0 is reserved"
t_cni ADD "$(conf 1.0.0 "$VMASTER" '{}' '{"pkey": "0x8000"}')" CNI_NETNS="$pod_path"
t_err "[pkey 0x8000] refused" 7 "partition key 0 is reserved"
t_cni ADD "$(conf 1.0.0 "$VMASTER" '{}' '{"pkey": "0x1ffff"}')" CNI_NETNS="$pod_path"
t_err "[pkey 0x1ffff] refused" 7 "out of range"
t_cni ADD "$(conf 1.0.0 "$VMASTER" '{}' '{"mode": "cm"}')" CNI_NETNS="$pod_path"
t_err "[mode cm] refused" 7 "unknown IPoIB mode"
t_cni ADD "$(conf 1.0.0 "$VMASTER" '{}' '{"umcast": 1}')" CNI_NETNS="$pod_path"
t_err "[umcast 1] wrong type" 6 "umcast"
t_cni ADD "$(conf 1.0.0 "$VMASTER" '{"type": "dhcp"}')" CNI_NETNS="$pod_path"
t_err "[dhcp] refused" 7 "ipam dhcp type is not supported"
t_cni ADD '{"cniVersion": "1.0.0", "name": "ibnet", "type": "ipoib", "ipam": {}}' CNI_NETNS="$pod_path"
t_err "[no master] refused" 7 "host master interface is missing"
t_cni ADD "$(conf 0.2.0 "$VMASTER" '{}')" CNI_NETNS="$pod_path"
t_err "[L2 at 0.2.0] refused" 7 "no valid IP addresses"
t_cni ADD '{"cniVersion": "1.0.0", "name": "ibnet", ' CNI_NETNS="$pod_path"
t_err "[malformed JSON] decode error" 6
t_cni ADD "$(conf 9.9.9 "$VMASTER" '{}')" CNI_NETNS="$pod_path"
t_err "[cniVersion 9.9.9] incompatible" 1
t_cni ADD "$(conf 1.0.0 "$VMASTER" '{}')" CNI_NETNS="$pod_path" CNI_IFNAME=a/b
t_err "[ifname a/b] invalid env" 4
t_cni ADD "$(conf 1.0.0 "$VMASTER" '{}')" CNI_NETNS=/proc/self/ns/net
t_err "[own netns] refused" 8 "should not be the same"
t_cni ADD "$(conf 1.0.0 "$VMASTER" '{}')" CNI_NETNS="$T_DIR"
t_err "[netns path not a netns] invalid env" 4 "failed to open netns"
expect_nothing "[refusals]" "$pod" "$host_before" "$pod_before"
ip netns del "$pod"

echo "# 6. DEL: without ADD, twice, with the netns gone, releasing IPAM"
t_netns pod
host_before=$(t_links)
pod_before=$(t_links "$pod")
t_cni DEL "$(conf 1.0.0 "$VMASTER" '{}')" CNI_NETNS="$pod_path"
t_ok "[DEL without ADD] exits 0"
t_eq "[DEL without ADD] prints nothing" "" "$T_OUT"
t_cni DEL "$(conf 1.0.0 "$VMASTER" '{}')" CNI_NETNS="$pod_path"
t_ok "[DEL again] exits 0"
t_cni DEL "$(conf 1.0.0 "$MISSING" '{}')" CNI_NETNS="$pod_path"
t_ok "[DEL with the master gone] exits 0"
expect_nothing "[DEL without ADD]" "$pod" "$host_before" "$pod_before"

# An address reserved for this container (as a successful ADD would have) is released by DEL.
hl=$(conf 1.0.0 "$VMASTER" "$(hostlocal 10.78.0.0/24)")
CNI_COMMAND=ADD CNI_CONTAINERID=cnitest CNI_NETNS="$pod_path" CNI_IFNAME=net1 CNI_PATH=$BIN \
	"$BIN/host-local" <<<"$hl" >/dev/null
t_eq "[DEL releases IPAM] host-local reserved an address" "10.78.0.2" "$(t_store_ips "$DATA/ibnet")"
t_cni DEL "$hl" CNI_NETNS="$pod_path"
t_ok "[DEL releases IPAM] exits 0"
t_eq "[DEL releases IPAM] the address is free" "" "$(t_store_ips "$DATA/ibnet")"

# The netns is gone before DEL (the pod was torn down first).
CNI_COMMAND=ADD CNI_CONTAINERID=cnitest CNI_NETNS="$pod_path" CNI_IFNAME=net1 CNI_PATH=$BIN \
	"$BIN/host-local" <<<"$hl" >/dev/null
gone=$pod_path
ip netns del "$pod"
t_cni DEL "$hl" CNI_NETNS="$gone"
t_ok "[DEL, netns gone] exits 0"
t_eq "[DEL, netns gone] the address is free" "" "$(t_store_ips "$DATA/ibnet")"
t_cni DEL "$hl" CNI_NETNS="$gone"
t_ok "[DEL, netns gone, again] exits 0"
t_cni DEL "$hl" -CNI_NETNS
t_ok "[DEL without CNI_NETNS] exits 0"
: >"$T_DIR/stale-netns"
t_cni DEL "$hl" CNI_NETNS="$T_DIR/stale-netns"
t_ok "[DEL with a leftover file as netns path] exits 0"
t_eq "[DEL] host links unchanged" "$host_before" "$(t_links)"

echo "# 7. DEL leaves other plugins' links alone"
t_netns pod
t_name PEER "ibq"
ip link add net1 netns "$pod" type veth peer name "$PEER" netns "$pod" || exit 1
pod_before=$(t_links "$pod")
t_cni DEL "$(conf 1.0.0 "$VMASTER" '{}')" CNI_NETNS="$pod_path"
t_ok "[foreign net1 in the pod] DEL exits 0"
t_eq "[foreign net1 in the pod] left in place" "$pod_before" "$(t_links "$pod")"
# A host link carrying the alias an IPoIB child of this attachment would have
ip link set "$VPEER" alias "cni-ipoib cnitest net1"
t_cni DEL "$(conf 1.0.0 "$VMASTER" '{}')" CNI_NETNS="$pod_path"
t_ok "[foreign link with our alias] DEL exits 0"
t_eq "[foreign link with our alias] left in place" "$host_before" "$(t_links)"
t_contains "[foreign link with our alias] DEL says why" "not an IPoIB child" "$T_ERR"

echo "# 8. the kernel keeps the alias across netns moves (what DEL relies on)"
ip link set "$VPEER" alias "cni-ipoib movetest net9"
ip link set "$VPEER" netns "$pod"
t_eq "[alias] kept in the pod" "cni-ipoib movetest net9" \
	"$(ip -n "$pod" -j link show "$VPEER" | jq -r '.[0].ifalias // ""')"
ip -n "$pod" link set "$VPEER" netns 1
t_eq "[alias] kept back in the host" "cni-ipoib movetest net9" \
	"$(ip -j link show "$VPEER" | jq -r '.[0].ifalias // ""')"
ip link set "$VPEER" up
ip netns del "$pod"

t_summary
