#!/usr/bin/env bash
# Real-kernel tests of the static IPAM plugin, run as a runtime runs it.
#
#   static.sh PLUGIN [REFERENCE_CNI_DIR]
#
# PLUGIN is our static. Our macvlan comes from MACVLAN_BIN (default: beside
# PLUGIN). REFERENCE_CNI_DIR (default /usr/lib/cni) holds Debian's Go static.
# 1. our macvlan with our static as IPAM on a veth master: the pod gets the
#    addresses and routes; CHECK and DEL.
# 2. side by side with Debian's static run directly as an IPAM plugin: the same
#    result JSON (jq -S) for the same inputs at 0.3.1 and 1.0.0, the same messages.
# 3. the result shape at every version; VERSION, STATUS, GC, CHECK, DEL.
# 4. hostile input: malformed values, 64 KiB strings, invalid UTF-8, paths.
# Needs root; exits 77 only when network namespaces cannot be created.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if [ $# -lt 1 ]; then
	echo "usage: $0 PLUGIN [REFERENCE_CNI_DIR]"
	exit 1
fi
STATIC=$(realpath "$1")
REF=${2:-/usr/lib/cni}
MACVLAN=$(realpath "${MACVLAN_BIN:-$(dirname "$1")/macvlan}")
for b in "$STATIC" "$MACVLAN" "$REF/static"; do
	[ -x "$b" ] || { echo "FAIL: $b is not executable"; exit 1; }
done

t_init

VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}

# CNI_PATH for macvlan: a directory holding our static (under PLUGIN_WRAPPER's
# checker too, when one is set).
BIN=$T_DIR/bin
mkdir -p "$BIN"
if [ ${#T_BASE_WRAP[@]} -gt 0 ]; then
	printf '#!/bin/sh\nexec %s "%s" "$@"\n' "${T_BASE_WRAP[*]}" "$STATIC" >"$BIN/static"
	chmod +x "$BIN/static"
else
	ln -s "$STATIC" "$BIN/static"
fi
T_ENV_PATH=$BIN

# conf VERSION IPAM_EXTRA [TOP_EXTRA]: a macvlan config with static IPAM.
conf() {
	printf '{"cniVersion":"%s","name":"stnet","type":"macvlan","master":"%s","ipam":{"type":"static"%s}%s}' \
		"$1" "${MASTER:-none}" "$2" "${3:-}"
}

ADDRS=',"addresses":[{"address":"10.61.0.5/24","gateway":"10.61.0.1"},{"address":"fd61::5/64","gateway":"fd61::1"}]'
ROUTES=',"routes":[{"dst":"10.62.0.0/16","gw":"10.61.0.254"},{"dst":"0.0.0.0/0"},{"dst":"fd62::/48","gw":"fd61::fe"}]'
DNS=',"dns":{"nameservers":["10.61.0.53"],"domain":"rail.example","search":["rail.example"],"options":["ndots:2"]}'

# =============================================================================
echo "# 1. macvlan with our static as IPAM"
# A route without gw goes via the gateway of its family (the spec's rule, applied by macvlan).
t_name MASTER "st"
t_name MPEER "st"
t_veth "$MASTER" "$MPEER"
T_PLUGIN=$MACVLAN
t_netns pod
c=$(conf 1.0.0 "$ADDRS$ROUTES$DNS")
t_cni ADD "$c" CNI_NETNS="$pod_path" CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAME=p"
t_ok "macvlan+static ADD exits 0"
res=$T_OUT
t_jq "result: both addresses on interface 0" "$res" \
	'[.ips[] | "\(.address) \(.gateway) \(.interface)"] | join(",")' \
	"10.61.0.5/24 10.61.0.1 0,fd61::5/64 fd61::1 0"
t_jq "result: routes and dns from ipam" "$res" '"\(.routes | length) \(.dns.nameservers[0])"' "3 10.61.0.53"
addrs=$(ip -n "$pod" -j addr show dev net1 | jq -r '[.[0].addr_info[] | select(.scope == "global") | "\(.local)/\(.prefixlen)"] | sort | join(" ")')
t_eq "the pod's net1 has both addresses" "10.61.0.5/24 fd61::5/64" "$addrs"
routes=$(ip -n "$pod" -j route show dev net1 | jq -r '[.[] | "\(.dst) \(.gateway // "-")"] | sort | join(",")')
t_eq "the pod's IPv4 routes" "10.61.0.0/24 -,10.62.0.0/16 10.61.0.254,default 10.61.0.1" "$routes"
routes=$(ip -n "$pod" -6 -j route show dev net1 | jq -r '[.[] | select(.dst | startswith("fd")) | "\(.dst) \(.gateway // "-")"] | sort | join(",")')
t_eq "the pod's IPv6 routes" "fd61::/64 -,fd62::/48 fd61::fe" "$routes"
t_cni CHECK "$(jq -c --argjson r "$res" '. + {prevResult: $r}' <<<"$c")" CNI_NETNS="$pod_path"
t_ok "macvlan+static CHECK exits 0"
t_cni DEL "$c" CNI_NETNS="$pod_path"
t_ok "macvlan+static DEL exits 0"
t_eq "DEL removed net1" "lo" "$(t_link_names "$pod")"

# IP=/GATEWAY= and runtimeConfig reach static through macvlan.
t_cni ADD "$(conf 1.0.0 "")" CNI_NETNS="$pod_path" CNI_ARGS="IgnoreUnknown=1;IP=10.63.0.9/24;GATEWAY=10.63.0.1"
t_ok "macvlan+static ADD with IP= exits 0"
t_eq "the pod's net1 has the IP= address" "10.63.0.9/24" \
	"$(ip -n "$pod" -4 -j addr show dev net1 | jq -r '.[0].addr_info[0] | "\(.local)/\(.prefixlen)"')"
t_cni DEL "$(conf 1.0.0 "")" CNI_NETNS="$pod_path"
t_cni ADD "$(conf 1.0.0 "$ADDRS" ',"runtimeConfig":{"ips":["10.64.0.9/24"]}')" CNI_NETNS="$pod_path"
t_jq "runtimeConfig ips replace the config's" "$T_OUT" '[.ips[].address] | join(",")' "10.64.0.9/24"
t_cni DEL "$(conf 1.0.0 "")" CNI_NETNS="$pod_path"
t_eq "DEL removed net1" "lo" "$(t_link_names "$pod")"
ip netns del "$pod"
MASTER=

# =============================================================================
echo "# 2. side by side with Debian's Go static"
# Debian's build (1.1.1) predates two things of upstream main: route mtu, advmss,
# priority, table and scope (so these configs have none), and a 1.x result without
# DNS that leaves "dns" out (its "dns": {} is dropped before comparing). Its errors
# are all code 999: only their messages are compared.
T_PLUGIN=$STATIC
T_ENV_NETNS=/var/run/netns/st-none
T_ENV_IFNAME=eth0
cases=(
	"$ADDRS$ROUTES$DNS||"
	"$ADDRS|IP=10.61.0.7/24, 10.66.0.2/16;GATEWAY=10.61.0.254,10.66.9.9|"
	"$ADDRS|IP=10.65.0.2/24|,\"args\":{\"cni\":{\"ips\":[\"10.67.0.2/24\",\"fd67::2/64\"]}}"
	"$ADDRS$DNS||,\"args\":{\"cni\":{\"ips\":[\"10.67.0.2/24\"]}},\"runtimeConfig\":{\"ips\":[\"10.68.0.2/24\",\"fd68::2/64\"]}"
	",\"dns\":{\"nameservers\":[\"fd61::53\"],\"search\":[\"a\",\"b\"]}||"
)
# ref_cni ARGS...: t_cni with Debian's static, outside PLUGIN_WRAPPER's checker (Go's
# runtime is not what it checks).
ref_cni() {
	local -a wrap=("${T_BASE_WRAP[@]}")
	T_BASE_WRAP=()
	T_PLUGIN=$REF/static t_cni "$@"
	T_BASE_WRAP=("${wrap[@]}")
}
norm='(if .dns == {} and (.cniVersion | startswith("1.")) then del(.dns) else . end) | walk(if type == "object" then to_entries | sort_by(.key) | from_entries else . end)'
for v in 0.3.1 1.0.0; do
	n=0
	for cs in "${cases[@]}"; do
		n=$((n + 1))
		IFS='|' read -r ipam args top <<<"$cs"
		c=$(conf "$v" "$ipam" "$top")
		t_cni ADD "$c" CNI_ARGS="$args"
		ours=$T_OUT ours_rc=$T_RC
		ref_cni ADD "$c" CNI_ARGS="$args"
		if [ "$ours_rc" = 0 ] && [ "$T_RC" = 0 ]; then
			both=$(jq -rn --argjson ref "$T_OUT" --argjson our "$ours" \
				"[\$ref, \$our] | map($norm | tojson) | join(\"\\n\")" 2>&1)
			t_eq "[$v case $n] the same result as Debian's static" "${both%%$'\n'*}" "${both#*$'\n'}"
		else
			t_fail "[$v case $n] both succeed" "ours: $ours_rc $ours" "Debian's: $T_RC $T_OUT"
		fi
	done
done
errs=(
	"1.0.0||IP=10.65.0.2"
	"1.0.0|,\"addresses\":[{\"address\":\"10.65.0.2\"}]|"
	"1.0.0||IP=10.65.0.2/24;GATEWAY=10.65.0"
	"1.0.0||IP=10.65.0.2/24;K8S_POD_NAME=p"
	"0.2.0||IP=10.65.0.2/24,10.65.0.3/24"
)
for e in "${errs[@]}"; do
	IFS='|' read -r v ipam args <<<"$e"
	c=$(conf "$v" "$ipam")
	ref_cni ADD "$c" CNI_ARGS="$args"
	want=$(jq -r .msg <<<"$T_OUT")
	# We add how to ignore unknown CNI_ARGS keys to the reference's message.
	t_cni ADD "$c" CNI_ARGS="$args"
	t_err "[$v] refused as Debian's static refuses $args$ipam" "" "$want"
done

# =============================================================================
echo "# 3. result shape per version, other commands"
for v in $VERSIONS; do
	t_cni ADD "$(conf "$v" "$ADDRS$ROUTES")"
	case $v in
	0.1.0 | 0.2.0) f='"\(.cniVersion) \(.ip4.ip) \(.ip4.gateway) \(.ip4.routes | length) \(.ip6.ip) \(.ip6.routes | length) \(has("ips"))"'
		want="$v 10.61.0.5/24 10.61.0.1 2 fd61::5/64 1 false" ;;
	1.*) f='"\(.cniVersion) \([.ips[] | .address, .gateway, has("version"), has("interface")] | join(" ")) \(.routes | length)"'
		want="$v 10.61.0.5/24 10.61.0.1 false false fd61::5/64 fd61::1 false false 3" ;;
	*) f='"\(.cniVersion) \([.ips[] | .address, .gateway, .version, has("interface")] | join(" ")) \(.routes | length)"'
		want="$v 10.61.0.5/24 10.61.0.1 4 false fd61::5/64 fd61::1 6 false 3" ;;
	esac
	t_ok "[$v] ADD exits 0"
	t_jq "[$v] result shape" "$T_OUT" "$f" "$want"
done
t_cni VERSION ""
t_jq "VERSION lists 0.1.0 to 1.1.0" "$T_OUT" '.supportedVersions | "\(first) \(last)"' "0.1.0 1.1.0"
for cmd in STATUS GC; do
	t_cni "$cmd" "$(conf 1.1.0 "$ADDRS")"
	t_eq "$cmd succeeds and prints nothing" "0 " "$T_RC $T_OUT"
done
t_cni STATUS "$(conf 1.0.0 "$ADDRS")"
t_err "STATUS below 1.1.0 is code 1" 1
t_cni CHECK "$(conf 0.3.1 "$ADDRS")"
t_err "CHECK below 0.4.0 is code 1" 1
prev=',"prevResult":{"cniVersion":"1.0.0","ips":[{"address":"10.61.0.5/24","gateway":"10.61.0.9"}]}'
t_cni CHECK "$(conf 1.0.0 "$ADDRS" "$prev")"
t_err "CHECK with another gateway in prevResult is code 103" 103 "static: Failed to match addr 10.61.0.5"
t_cni CHECK "$(conf 1.0.0 "$ADDRS")"
t_err "CHECK without prevResult is code 7" 7 "required prevResult missing"
t_cni DEL "$(conf 1.0.0 ',"addresses":[{"address":"garbage"}]')"
t_eq "DEL holds nothing: succeeds and prints nothing" "0 " "$T_RC $T_OUT"

# =============================================================================
echo "# 4. hostile input: the right code, nothing on stdout but the error"
big=$(printf '%065536d' 0)
badutf=$(printf '10.61.0.5\xff\xfe/24')
# t_hostile DESC CODE CONF [CNI_ARGS]
t_hostile() {
	t_cni ADD "$3" CNI_ARGS="${4:-}"
	t_err "$1" "$2"
	[ ${#T_OUT} -lt 2048 ] || t_fail "$1: the error is short" "$(t_last_run)"
}
t_hostile "malformed address" 7 "$(conf 1.0.0 ',"addresses":[{"address":"10.61.0.500/24"}]')"
t_hostile "address of the wrong type" 6 "$(conf 1.0.0 ',"addresses":[{"address":["10.61.0.5/24"]}]')"
t_hostile "gateway of the wrong family" 7 "$(conf 1.0.0 ',"addresses":[{"address":"10.61.0.5/24","gateway":"fd61::1"}]')"
t_hostile "malformed route dst" 6 "$(conf 1.0.0 ',"routes":[{"dst":"10.62.0.0/33"}]')"
t_hostile "malformed route gw" 6 "$(conf 1.0.0 ',"routes":[{"dst":"10.62.0.0/16","gw":"x"}]')"
t_hostile "route mtu out of range" 7 "$(conf 1.0.0 ',"routes":[{"dst":"10.62.0.0/16","mtu":4294967296}]')"
t_hostile "malformed dns" 6 "$(conf 1.0.0 ',"dns":{"nameservers":"10.61.0.53"}')"
t_hostile "64 KiB address" 7 "$(conf 1.0.0 ",\"addresses\":[{\"address\":\"$big\"}]")"
t_hostile "64 KiB IP=" 4 "$(conf 1.0.0 "")" "IP=$big"
t_hostile "64 KiB GATEWAY=" 4 "$(conf 1.0.0 "")" "IP=10.61.0.5/24;GATEWAY=$big"
t_hostile "64 KiB runtimeConfig ip" 7 "$(conf 1.0.0 "" ",\"runtimeConfig\":{\"ips\":[\"$big\"]}")"
t_cni ADD "$(conf 1.0.0 ",\"dns\":{\"search\":[\"$big\"]}")"
t_ok "a 64 KiB dns search entry is passed on (as upstream)"
t_hostile "invalid UTF-8 in an address" 6 "$(conf 1.0.0 ",\"addresses\":[{\"address\":\"$badutf\"}]")"
t_hostile "invalid UTF-8 in IP=" 4 "$(conf 1.0.0 "")" "IP=$badutf"
t_hostile "a path as an address" 7 "$(conf 1.0.0 ',"addresses":[{"address":"/etc/passwd"}]')"
t_hostile "a path as IP=" 4 "$(conf 1.0.0 "")" "IP=../../etc/passwd"
t_hostile "ipam.logFile outside the log directory" 7 \
	"$(conf 1.0.0 ",\"logFile\":\"$T_DIR/../st-$T_TOK.log\"")"
t_eq "that log file was not made" "" "$(ls "$T_DIR/../st-$T_TOK.log" 2>/dev/null)"

t_summary
