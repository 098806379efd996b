#!/usr/bin/env bash
# Plugins that succeed print nothing on stderr (docs/errors.md, "stderr and logFile"): a
# runtime keeps a plugin's stderr beside its failures, and the reference plugins print
# nothing. Every plugin of the suite, as a runtime runs it, on veth pairs in throwaway
# netns: ADD, CHECK and DEL (and STATUS and GC where they reach nv-ipam or the bridge's
# rules) exit 0 with an
# empty stderr, and the info lines land in the logFile the config names. A misspelt key
# is the exception that shows stderr is watched: its warning is there.
#
#   quiet.sh NAME=BINARY...   (every plugin the build makes: each must have its case here)
#
# Needs root; exits 77 only when network namespaces cannot be created.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

declare -A B
for a in "$@"; do
	B[${a%%=*}]=$(realpath "${a#*=}")
done
for p in macvlan ipoib host-device tuning sbr dummy tap static nv-ipam loopback host-local portmap \
	bandwidth firewall ipvlan vlan vrf bridge ptp dhcp; do
	[ -x "${B[$p]:-}" ] || { echo "FAIL: no executable $p given ($p=BINARY)"; exit 1; }
done
# The plugins each case ran: at the end, every one given must have been.
declare -A RAN

t_init
BIN=$T_DIR/bin
mkdir "$BIN"
ln -s "${B[static]}" "$BIN/static"
ln -s "${B[nv-ipam]}" "$BIN/nv-ipam"
ln -s "${B[host-local]}" "$BIN/host-local"
T_ENV_PATH=$BIN
t_netns POD
T_ENV_NETNS=$POD_path
T_ENV_CONTAINERID=quiet$T_TOK
T_ENV_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=quiet$T_TOK;K8S_POD_UID=5e1f0c3a-$T_TOK"
t_name M qm
t_name P qp
t_veth "$M" "$P"
t_name D qd
t_name DP qe
t_veth "$D" "$DP"
LOG=$T_DIR/plugins.log

cat >"$T_DIR/pools.json" <<'JSON'
{"pools": {"quiet": {"subnet": "192.168.79.0/24", "startIP": "192.168.79.10",
                     "endIP": "192.168.79.20", "gateway": "192.168.79.1", "defaultGateway": true}}}
JSON
nvipam_node_conf "$T_DIR" "$T_DIR/pools.json" "$T_DIR/store" ", \"logFile\": \"$T_DIR/nv-ipam.log\""

STATIC='"ipam":{"type":"static","addresses":[{"address":"192.168.78.5/24","gateway":"192.168.78.1"}],"routes":[{"dst":"10.78.0.0/16"}],"logFile":"'"$T_DIR/static.log"'"}'
NVIPAM='"ipam":{"type":"nv-ipam","poolName":"quiet","confDir":"'"$T_DIR"'"}'

# run PLUGIN CMD CONF [t_cni args]: one command; stderr must stay empty.
run() {
	local p=$1 cmd=$2 conf=$3
	shift 3
	T_PLUGIN=${B[$p]}
	RAN[$p]=1
	t_cni "$cmd" "$conf" "$@"
	if [ "$T_RC" = 0 ] && [ -z "$T_ERR" ]; then
		t_pass "$p $cmd: exit 0, nothing on stderr"
	else
		t_fail "$p $cmd: exit 0, nothing on stderr" "$(t_last_run)"
	fi
}
# conf TYPE MEMBERS [PREV]: a 1.1.0 config of the plugin, logging to $LOG.
conf() {
	printf '{"cniVersion":"1.1.0","name":"quiet","type":"%s","logFile":"%s"%s%s}' \
		"$1" "$LOG" "${2:+,$2}" "${3:+,\"prevResult\":$3}"
}
# cycle PLUGIN MEMBERS: ADD, CHECK against its result, DEL.
cycle() {
	local p=$1 c
	c=$(conf "$p" "$2")
	run "$p" ADD "$c"
	RESULT=$T_OUT
	run "$p" CHECK "$(conf "$p" "$2" "$RESULT")"
	run "$p" DEL "$(conf "$p" "$2" "$RESULT")"
}

echo "# interface plugins"
cycle macvlan '"master":"'"$M"'",'"$STATIC"
t_contains "macvlan: its info lines in logFile" "deleting macvlan net1" "$(cat "$LOG" 2>&1)"
# The IPAM plugins run as the interface plugins' delegates: their stderr is the runs'.
RAN[static]=1
t_contains "static: its info lines in ipam.logFile" "ADD quiet$T_TOK/net1: 1 address(es), 1 route(s)" \
	"$(cat "$T_DIR/static.log" 2>&1)"
# host-local behind macvlan: its store below a state root of this test's own (the node
# settings name it; not inside nv-ipam's state directory, which host-local refuses).
HLROOT=$(mktemp -d /tmp/cni-quiet-hl.XXXXXX)
t_defer rm -rf "$HLROOT"
jq --arg r "$HLROOT" '.stateRoots = [$r]' "$CNI_RDMA_PLUGINS_CONF" >"$T_DIR/settings.tmp" &&
	cat "$T_DIR/settings.tmp" >"$CNI_RDMA_PLUGINS_CONF"
HL='"ipam":{"type":"host-local","subnet":"192.168.77.0/24","dataDir":"'"$HLROOT/host-local"'"}'
cycle macvlan '"master":"'"$M"'",'"$HL"
t_eq "host-local: its store holds no address after DEL" "" \
	"$(ls "$HLROOT/host-local/quiet" 2>&1 | grep -E '^[0-9.]+$|^[0-9a-f:]+:[0-9a-f:]*$|No such')"
RAN[host-local]=1

echo "# bridge in a netns standing for the node: host-local, the gateway, masquerade, spoof check"
t_netns NODE
t_name BR qb
BRC='"bridge":"'"$BR"'","isGateway":true,"ipMasq":true,"ipMasqBackend":"nftables","macspoofchk":true,"hairpinMode":true,'
BRC+='"ipam":{"type":"host-local","subnet":"192.168.76.0/24","dataDir":"'"$HLROOT/host-local"'"}'
T_WRAP=(ip netns exec "$NODE")
cycle bridge "$BRC"
run bridge STATUS "$(conf bridge "$BRC")"
run bridge GC "$(conf bridge "$BRC" | jq -c '. + {"cni.dev/valid-attachments": []}')"
# The default backend (iptables here, as upstream picks it), its binaries' output kept off stderr.
cycle bridge "${BRC/\"ipMasqBackend\":\"nftables\",/}"
T_WRAP=()
t_contains "bridge: its info lines in logFile" "deleting veth net1" "$(cat "$LOG" 2>&1)"
echo "# ptp in a netns standing for the node: host-local, the node's end, masquerade"
t_netns P6NODE
P6C='"ipMasq":true,"ipMasqBackend":"nftables","mtu":1400,'
P6C+='"ipam":{"type":"host-local","subnet":"192.168.75.0/24","dataDir":"'"$HLROOT/host-local"'"}'
T_WRAP=(ip netns exec "$P6NODE")
cycle ptp "$P6C"
run ptp STATUS "$(conf ptp "$P6C")"
run ptp GC "$(conf ptp "$P6C" | jq -c '. + {"cni.dev/valid-attachments": []}')"
# The default backend (iptables here, as upstream picks it).
cycle ptp "${P6C/\"ipMasqBackend\":\"nftables\",/}"
T_WRAP=()
t_contains "ptp: its info lines in logFile" "ADD quiet$T_TOK: net1 in" "$(cat "$LOG" 2>&1)"
cycle loopback ""
cycle host-device '"device":"'"$DP"'",'"$STATIC"
cycle tap "$STATIC"
# No InfiniBand port here: ipoib's DEL of an attachment it never made succeeds.
run ipoib DEL "$(conf ipoib '"master":"'"$M"'"')"
# Neither have ipvlan, vlan or vrf a driver in every kernel (the kernel matrix runs their
# ADD): their DEL of what they never made succeeds, quietly.
run ipvlan DEL "$(conf ipvlan '"master":"'"$M"'"')"
run vlan DEL "$(conf vlan '"master":"'"$M"'","vlanId":100')"
run vrf DEL "$(conf vrf '"vrfname":"qvrf"' "$RESULT")"
# This kernel may have no dummy driver (code 100 then, a failure: stderr may speak).
T_PLUGIN=${B[dummy]}
t_cni ADD "$(conf dummy "$STATIC")"
if [ "$T_RC" = 0 ]; then
	t_pass "dummy ADD (the kernel has the driver)"
	run dummy CHECK "$(conf dummy "$STATIC" "$T_OUT")"
fi
run dummy DEL "$(conf dummy "$STATIC")"

echo "# dhcp behind host-device: the device's peer on the bridge of a DHCP server's netns"
# Debian's dnsmasq there and our daemon on a socket the node settings list in socketDirs.
t_netns DSRV
t_name DD qt
t_name DH qs
ip link add "$DD" type veth peer name "$DH" netns "$DSRV"
t_defer_link "$DD"
ip link set "$DD" up
ip -n "$DSRV" link add qsbr type bridge
ip -n "$DSRV" addr add 192.168.74.1/24 dev qsbr
ip -n "$DSRV" link set qsbr up
ip -n "$DSRV" link set "$DH" master qsbr up
ip netns exec "$DSRV" dnsmasq --conf-file=/dev/null --port=0 --user=root --interface=qsbr \
	--bind-interfaces --dhcp-range=192.168.74.10,192.168.74.20,255.255.255.0,2m --no-ping \
	--dhcp-option=option:router,192.168.74.1 --dhcp-leasefile="$T_DIR/dhcp.leases" \
	--pid-file="$T_DIR/dnsmasq.pid" || t_fail "dnsmasq starts (tests/install-deps.sh test)" ""
t_defer 'kill "$(cat "$T_DIR/dnsmasq.pid")"'
jq --arg s "$T_DIR/sock" '.socketDirs = [$s]' "$CNI_RDMA_PLUGINS_CONF" >"$T_DIR/settings.tmp" &&
	cat "$T_DIR/settings.tmp" >"$CNI_RDMA_PLUGINS_CONF"
"${B[dhcp]}" daemon -socketpath "$T_DIR/sock/dhcp.sock" >"$T_DIR/dhcp-daemon.log" 2>&1 &
t_defer "kill $!"
# Hang guard: the socket appears at once.
for _ in $(seq 100); do [ -S "$T_DIR/sock/dhcp.sock" ] && break; sleep 0.1; done
ln -s "${B[dhcp]}" "$BIN/dhcp"
DHCP='"ipam":{"type":"dhcp","daemonSocketPath":"'"$T_DIR/sock/dhcp.sock"'","logFile":"'"$T_DIR/dhcp.log"'"}'
cycle host-device '"device":"'"$DD"'",'"$DHCP"
RAN[dhcp]=1
t_contains "dhcp: its info lines in ipam.logFile" "ADD quiet$T_TOK/net1: 1 address(es), 1 route(s)" \
	"$(cat "$T_DIR/dhcp.log" 2>&1)"
run dhcp STATUS "$(conf dhcp "$DHCP")"
run dhcp GC "$(conf dhcp "$DHCP" | jq -c '. + {"cni.dev/valid-attachments": []}')"

echo "# nv-ipam behind macvlan, every command"
MV='"master":"'"$M"'",'"$NVIPAM"
run macvlan ADD "$(conf macvlan "$MV")"
RESULT=$T_OUT
RAN[nv-ipam]=1
t_contains "nv-ipam: its info lines in its logFile" "from pool quiet" "$(cat "$T_DIR/nv-ipam.log" 2>&1)"
run macvlan CHECK "$(conf macvlan "$MV" "$RESULT")"
run macvlan STATUS "$(conf macvlan "$MV")"

echo "# tuning and sbr chained after it"
TUNE='"sysctl":{"net.ipv4.conf.IFNAME.arp_ignore":"1"},"mtu":1400'
run tuning ADD "$(conf tuning "$TUNE" "$RESULT")"
TRESULT=$T_OUT
run sbr ADD "$(conf sbr "" "$TRESULT")"
SRESULT=$T_OUT
run tuning CHECK "$(conf tuning "$TUNE" "$SRESULT")"
run sbr CHECK "$(conf sbr "" "$SRESULT")"
run sbr DEL "$(conf sbr "" "$SRESULT")"
run tuning DEL "$(conf tuning "$TUNE" "$SRESULT")"
run macvlan DEL "$(conf macvlan "$MV" "$SRESULT")"
# GC of the network, nothing kept: the store had this attachment and DEL released it.
run macvlan GC "$(conf macvlan "$MV" | jq -c '. + {"cni.dev/valid-attachments": []}')"

echo "# the node-network meta plugins, in a netns standing for the node (its ruleset and"
echo "# qdiscs, not this machine's), after a veth pod's interface plugin"
t_netns NODE
t_netns POD2
t_name NH qh
t_name PE qi
t_veth "$NH" "$PE" "$NODE" "$POD2"
ip -n "$POD2" link set "$PE" down
ip -n "$POD2" link set "$PE" name eth0 up
ip -n "$NODE" addr add 10.79.0.1/24 dev "$NH"
ip -n "$POD2" addr add 10.79.0.2/24 dev eth0
VETH_PREV='{"cniVersion":"1.1.0","interfaces":[{"name":"'"$NH"'"},{"name":"eth0","sandbox":"'"$POD2_path"'"}],"ips":[{"address":"10.79.0.2/24","gateway":"10.79.0.1","interface":1}]}'
T_WRAP=(ip netns exec "$NODE")
T_ENV_NETNS=$POD2_path
T_ENV_IFNAME=eth0
PM='"backend":"nftables","runtimeConfig":{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"}]}'
BW='"ingressRate":8000000,"ingressBurst":80000,"egressRate":8000000,"egressBurst":80000'
FW='"backend":"iptables"'
for m in "portmap|$PM" "bandwidth|$BW" "firewall|$FW"; do
	p=${m%%|*} members=${m#*|}
	run "$p" ADD "$(conf "$p" "$members" "$VETH_PREV")"
	run "$p" CHECK "$(conf "$p" "$members" "$T_OUT")"
	run "$p" DEL "$(conf "$p" "$members" "$VETH_PREV")"
done
T_WRAP=()
T_ENV_NETNS=$POD_path
T_ENV_IFNAME=net1

echo "# a misspelt key: the warning is on stderr, the ADD goes on"
run macvlan ADD "$(conf macvlan '"master":"'"$M"'",'"$STATIC")"
RESULT=$T_OUT
T_PLUGIN=${B[tuning]}
t_cni ADD "$(conf tuning '"sysctls":{"net.ipv4.conf.IFNAME.arp_ignore":"1"}' "$RESULT")"
t_ok "tuning ADD with \"sysctls\""
t_contains "... warns of it on stderr" 'config key "sysctls" is not one this plugin reads and is ignored: is it "sysctl" misspelt?' "$T_ERR"
t_contains "... and in logFile" 'config key "sysctls"' "$(cat "$LOG" 2>&1)"
T_PLUGIN=${B[tuning]}
t_cni DEL "$(conf tuning '"sysctls":{}' "$RESULT")"
t_ok "tuning DEL with \"sysctls\""
run macvlan DEL "$(conf macvlan '"master":"'"$M"'",'"$STATIC" "$RESULT")"

for p in "${!B[@]}"; do
	[ -n "${RAN[$p]:-}" ] || t_fail "$p has a case here (a plugin of the build not checked)" ""
done
t_summary
