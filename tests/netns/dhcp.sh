#!/usr/bin/env bash
# Real-kernel tests of the dhcp IPAM plugin and its daemon against a real DHCP server.
#
#   dhcp.sh PLUGIN
#
# A netns stands for the DHCP server's network (hd-s...): a bridge with 10.77.0.1/24 and
# Debian's dnsmasq on it, with its own config, pid, lease and log files in the run's
# directory. The pod (hd-p...) has interfaces whose veth peers are on that bridge. Our
# daemon listens on a socket below the run's directory, which the node settings list in
# socketDirs. Cases: ADD and its result, the server's lease, CHECK, a second ADD keeping
# the lease, renewal (the server's T1 set to 12 s: the daemon clamps nothing above 10 s),
# DEL releasing (the server's log shows DHCPRELEASE, its lease file drops the address),
# DEL twice, STATUS up and down, a server down at ADD and back, the daemon killed with a
# lease live (DEL fails until it is back, then succeeds), hostile configs, the daemon's
# flags as upstream's, and beside upstream v1.9.1's pair (../shared/reference/cni-plugins)
# the result's shape. Needs root, jq, dnsmasq; exits 77 only when network namespaces
# cannot be created.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -ge 1 ] || { echo "usage: $0 PLUGIN"; exit 1; }
T_PLUGIN=$(realpath "$1")
OURS=$T_PLUGIN
[ -x "$T_PLUGIN" ] || { echo "FAIL: plugin $T_PLUGIN is not executable"; exit 1; }
t_init
command -v dnsmasq >/dev/null || { echo "FAIL: dnsmasq not found (tests/install-deps.sh test)"; exit 1; }

SOCKDIR=$T_DIR/sock
mkdir -p "$SOCKDIR" "$T_DIR/other"
printf '{"logDirs": ["%s"], "socketDirs": ["%s"]}\n' "$T_DIR" "$SOCKDIR" >"$T_DIR/node-settings.json"
chmod 0600 "$T_DIR/node-settings.json"
export CNI_RDMA_PLUGINS_CONF=$T_DIR/node-settings.json
SOCK=$SOCKDIR/dhcp.sock

SRV=hd-s$T_TOK-$$
POD=hd-p$T_TOK-$$
for ns in "$SRV" "$POD"; do
	ip netns add "$ns" || { echo "FAIL: ip netns add $ns"; exit 1; }
	t_defer "ip netns del '$ns'"
done
ip -n "$SRV" link add hdbr type bridge
ip -n "$SRV" addr add 10.77.0.1/24 dev hdbr
ip -n "$SRV" link set hdbr up
# pod_if NAME: a pod interface whose peer is on the server's bridge.
pod_if() {
	local peer
	t_name peer hd
	ip link add "$peer" type veth peer name "$1" netns "$POD" || { echo "FAIL: veth $1"; exit 1; }
	ip link set "$peer" netns "$SRV"
	ip -n "$SRV" link set "$peer" master hdbr up
}
pod_if net1
pod_if net2
pod_if net3
pod_if net4

LEASES=$T_DIR/dnsmasq.leases
DLOG=$T_DIR/dnsmasq.log
dnsmasq_start() {
	ip netns exec "$SRV" dnsmasq --conf-file=/dev/null --port=0 --user=root --interface=hdbr \
		--bind-interfaces --dhcp-range=10.77.0.50,10.77.0.99,255.255.255.0,2m \
		--dhcp-option=option:router,10.77.0.1 --dhcp-option=option:T1,12 \
		--dhcp-authoritative --dhcp-leasefile="$LEASES" --log-dhcp --log-facility="$DLOG" \
		--pid-file="$T_DIR/dnsmasq.pid" || { echo "FAIL: dnsmasq did not start"; exit 1; }
}
dnsmasq_stop() {
	local pid
	pid=$(cat "$T_DIR/dnsmasq.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
	# Hang guard: it ends within a moment.
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
}
t_defer dnsmasq_stop
dnsmasq_start

DAEMON_PID=
daemon_start() {
	local started
	started=$(grep -c "listening on" "$T_DIR/daemon.log" 2>/dev/null)
	# Under PLUGIN_WRAPPER (valgrind) the daemon too.
	"${T_BASE_WRAP[@]}" "$OURS" daemon -socketpath "$SOCK" -timeout 2s -resendtimeout 30s \
		-pidfile "$T_DIR/daemon.pid" >>"$T_DIR/daemon.log" 2>&1 &
	DAEMON_PID=$!
	# Hang guard (30 s: under valgrind too): it says it listens at once. A dead daemon's
	# socket is there before: the log tells this one's.
	for _ in $(seq 300); do
		[ "$(grep -c "listening on" "$T_DIR/daemon.log")" -gt "${started:-0}" ] && return 0
		sleep 0.1
	done
	echo "FAIL: the daemon made no socket"; cat "$T_DIR/daemon.log"; exit 1
}
daemon_stop() { [ -z "$DAEMON_PID" ] || { kill "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; }; DAEMON_PID=; }
t_defer daemon_stop
daemon_start

# wait_log PATTERN COUNT: hang guard of 90 s for COUNT lines of the server's log.
wait_log() {
	for _ in $(seq 900); do
		[ "$(grep -c -- "$1" "$DLOG")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

conf() { # conf [IPAM-MEMBERS]
	printf '{"cniVersion":"1.1.0","name":"hdnet","type":"host-device","ipam":{"type":"dhcp","daemonSocketPath":"%s"%s}}' \
		"$SOCK" "${1:+,$1}"
}
T_ENV_NETNS=/var/run/netns/$POD
T_ENV_CONTAINERID=hd-c1
T_ENV_IFNAME=net1
T_ENV_PATH=$T_DIR

echo "# STATUS, ADD and its result"
t_cni STATUS "$(conf)"
t_ok "STATUS with the daemon up"
t_cni ADD "$(conf)"
t_ok "ADD"
R1=$T_OUT
A1=$(jq -r '.ips[0].address' <<<"$R1")
t_match "an address of the server's range" '^10\.77\.0\.(5[0-9]|[6-9][0-9])/24$' "$A1"
t_jq "gateway from option 3" "$R1" '.ips[0].gateway' 10.77.0.1
t_jq "the default route via the router" "$R1" '[.routes[] | "\(.dst) \(.gw)"] | join(",")' "0.0.0.0/0 10.77.0.1"
t_jq "cniVersion of the config" "$R1" '.cniVersion' 1.1.0
t_jq "keys as upstream's result" "$R1" 'keys | join(",")' "cniVersion,ips,routes"
t_eq "nothing on stderr" "" "$T_ERR"
t_contains "the server's lease file holds the address" "${A1%/*}" "$(cat "$LEASES")"
t_contains "client ID: upstream's (type 0, container/network/ifname)" \
	"$(printf 'hd-c1/hdnet/net1' | od -An -tx1 | tr -s ' \n' ':' | sed 's/^://; s/:$//')" "$(cat "$LEASES")"
ip -n "$POD" addr add "$A1" dev net1
t_cni ADD "$(conf)" CNI_CONTAINERID=hd-c1
t_jq "a second ADD keeps the lease" "$T_OUT" '.ips[0].address' "$A1"
t_cni CHECK "$(conf)"
t_ok "CHECK"
t_cni ADD "$(sed 's/"1.1.0"/"0.4.0"/' <<<"$(conf)")"
t_jq "0.4.0 result" "$T_OUT" '.cniVersion + " " + (.ips[0].version // "")' "0.4.0 4"

echo "# renewal: T1 12 s"
if wait_log "DHCPACK(hdbr) ${A1%/*}" 3; then t_pass "renewed (the server acked the address again)"; else
	t_fail "renewed" "$(tail -20 "$DLOG")"; fi
t_contains "the daemon logs the renewal" "renewal in" "$(cat "$T_DIR/daemon.log")"

echo "# DEL"
t_cni DEL "$(conf)"
t_ok "DEL"
if wait_log "DHCPRELEASE(hdbr) ${A1%/*}" 1; then t_pass "the server saw DHCPRELEASE"; else
	t_fail "DHCPRELEASE" "$(tail -20 "$DLOG")"; fi
sleep 0.5
t_eq "the server's lease file drops the address" "" "$(grep -F " ${A1%/*} " "$LEASES")"
t_cni DEL "$(conf)"
t_ok "DEL again"
t_cni DEL "$(conf)" CNI_IFNAME=net9 CNI_CONTAINERID=hd-none
t_ok "DEL of a lease never held"

echo "# hostile configs"
t_cni ADD "$(printf '{"cniVersion":"1.1.0","name":"hdnet","type":"x","ipam":{"type":"dhcp","daemonSocketPath":"/run/containerd/containerd.sock"}}')"
t_err "a socket outside socketDirs" 7 "outside the directories"
ln -s "$SOCK" "$SOCKDIR/link.sock"
t_cni ADD "$(conf | sed "s|$SOCK|$SOCKDIR/link.sock|")"
t_err "a link to the socket" 7 "symbolic link"
: >"$SOCKDIR/file.sock"
t_cni ADD "$(conf | sed "s|$SOCK|$SOCKDIR/file.sock|")"
t_err "a regular file" 7 "not a unix socket"
t_cni ADD "$(conf | sed "s|$SOCK|$SOCKDIR/../other/x.sock|")"
t_err "a .. component" 7 "absolute path"
t_cni ADD "$(conf '"request":[{"option":"bogus"}]')"
t_err "an option that is none" 7 "Can not parse option"
t_cni ADD "$(conf '"provide":[{"option":"host-name","value":"'"$(printf 'x%.0s' $(seq 256))"'"}]')"
t_err "a value over 255 bytes" 7 "value too long"
t_cni ADD "$(conf '"provide":"x"')"
t_err "provide not a list" 6 ""
t_cni ADD "$(conf)" CNI_IFNAME=nope0 CNI_CONTAINERID=hd-c9
t_err "an interface the pod lacks" 102 "Link not found"

echo "# provide and request"
t_cni ADD "$(conf '"provide":[{"option":"host-name","value":"hdpod"}],"request":[{"option":"121"}],"priority":7')" \
	CNI_CONTAINERID=hd-c2 CNI_IFNAME=net2
t_ok "ADD with provide, request and priority"
t_jq "priority on every route" "$T_OUT" '[.routes[].priority] | unique | join(",")' 7
wait_log "client provides name: hdpod" 1 && t_pass "the server saw host-name" || t_fail "host-name" "$(tail -20 "$DLOG")"
t_cni DEL "$(conf)" CNI_CONTAINERID=hd-c2 CNI_IFNAME=net2
t_ok "DEL net2"

echo "# the server down at ADD, then back"
dnsmasq_stop
( sleep 3; dnsmasq_start ) &
back=$!
t_cni ADD "$(conf)" CNI_CONTAINERID=hd-c3 CNI_IFNAME=net3
wait "$back"
t_ok "ADD waits for the server (upstream's quick retries)"
t_contains "the daemon logged the retries" "retrying in" "$(cat "$T_DIR/daemon.log")"
t_cni DEL "$(conf)" CNI_CONTAINERID=hd-c3 CNI_IFNAME=net3
t_ok "DEL net3"

echo "# the daemon killed with a lease live"
t_cni ADD "$(conf)" CNI_CONTAINERID=hd-c4 CNI_IFNAME=net4
t_ok "ADD net4"
A4=$(jq -r '.ips[0].address' <<<"$T_OUT")
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
t_cni STATUS "$(conf)"
t_err "STATUS without the daemon" 50 "error dialing DHCP daemon"
t_cni DEL "$(conf)" CNI_CONTAINERID=hd-c4 CNI_IFNAME=net4
t_err "DEL cannot reach the daemon" 11 "error dialing DHCP daemon"
daemon_start
t_cni STATUS "$(conf)"
t_ok "the daemon listens on the dead one's socket"
t_cni DEL "$(conf)" CNI_CONTAINERID=hd-c4 CNI_IFNAME=net4
t_ok "DEL after the restart (the lease is lost, as upstream's)"
t_contains "the server still has the lost lease" "${A4%/*}" "$(cat "$LEASES")"

echo "# GC, the daemon's flags"
t_cni GC "$(conf)"
t_ok "GC"
help=$("$OURS" daemon -h 2>&1); rc=$?
t_eq "daemon -h exits 0" 0 "$rc"
for f in broadcast hostprefix pidfile resendmax resendtimeout socketpath timeout; do
	t_contains "flag -$f" "-$f" "$help"
done
t_contains "resendtimeout's default" "(default 3m28s)" "$help"
"$OURS" daemon -nope >/dev/null 2>&1; t_eq "an unknown flag exits 2" 2 "$?"
t_eq "the pid file" "$DAEMON_PID" "$(cat "$T_DIR/daemon.pid")"

echo "# beside upstream v1.9.1's pair"
if shared_reference_plugins "$T_DIR/ref" dhcp; then
	"$T_DIR/ref/dhcp" daemon -socketpath "$SOCKDIR/ref.sock" >"$T_DIR/ref-daemon.log" 2>&1 &
	refpid=$!
	t_defer "kill $refpid"
	for _ in $(seq 100); do [ -S "$SOCKDIR/ref.sock" ] && break; sleep 0.1; done
	# The reference runs as it is, never under PLUGIN_WRAPPER's checker.
	T_PLUGIN=$T_DIR/ref/dhcp
	wrap=("${T_BASE_WRAP[@]}")
	T_BASE_WRAP=()
	t_cni ADD "$(conf | sed "s|$SOCK|$SOCKDIR/ref.sock|")" CNI_CONTAINERID=hd-r1 CNI_IFNAME=net2
	RREF=$T_OUT
	t_ok "the reference's ADD"
	t_cni DEL "$(conf | sed "s|$SOCK|$SOCKDIR/ref.sock|")" CNI_CONTAINERID=hd-r1 CNI_IFNAME=net2
	t_ok "the reference's DEL"
	T_PLUGIN=$OURS
	T_BASE_WRAP=("${wrap[@]}")
	t_cni ADD "$(conf)" CNI_CONTAINERID=hd-r1 CNI_IFNAME=net2
	ROURS=$T_OUT
	t_ok "our ADD with the reference's client ID"
	shape='del(.ips[0].address) | .routes |= map(del(.priority))'
	t_eq "the result as the reference's, but the address" "$(jq -S "$shape" <<<"$RREF")" "$(jq -S "$shape" <<<"$ROURS")"
	t_eq "the same address for the same client ID" "$(jq -r '.ips[0].address' <<<"$RREF")" \
		"$(jq -r '.ips[0].address' <<<"$ROURS")"
	t_cni DEL "$(conf)" CNI_CONTAINERID=hd-r1 CNI_IFNAME=net2
	t_ok "our DEL of it"
fi
t_eq "no plugin run hung" 0 "$T_HUNG"
t_summary
