#!/usr/bin/env bash
# Multi-rail chains as the Network Operator renders them (metaPlugins): a
# conflist of cniVersion 0.3.1, macvlan (or host-device) with nv-ipam, then
# tuning with NVIDIA's ARP profile (the netns-wide "all" keys and the IFNAME
# placeholder), then sbr; run as libcni runs a conflist: ADD in order, each
# plugin given the previous result as prevResult; DEL in reverse order, each
# given the final result.
#
#   multirail.sh MACVLAN [REFERENCE_CNI_DIR]
#
# TUNING_BIN, SBR_BIN, NVIPAM_BIN, HOSTDEV_BIN, NVIPAM_TOOL name our other binaries (default:
# beside MACVLAN, as the kernel matrix's guest lays them out).
# 1. Four rails on one subnet, one pod: each rail's address has its own table
#    and rule, `ip route get ... from <address>` leaves through that rail, the
#    profile's sysctls are set on every rail; CHECK passes; DEL in reverse order
#    leaves no rule, no table, no tuning state, no address held.
# 2. Two rails on distinct subnets, one of them on host-device: the same.
# 3. The references' own macvlan, tuning and sbr (Debian's Go plugins) on the
#    same four rails give the same rules and tables; their macvlan followed by
#    our tuning and sbr works too.
# MULTIRAIL_REFERENCE=0 leaves 3 out (the kernel matrix's guests: the host run compares).
# Exits 77 only when network namespaces cannot be created.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -ge 1 ] || { echo "usage: $0 MACVLAN [REFERENCE_CNI_DIR]"; exit 1; }
MACVLAN=$(realpath "$1")
REF=${2:-/usr/lib/cni}
bins=$(dirname "$MACVLAN")
TUNING=$(realpath "${TUNING_BIN:-$bins/tuning}")
SBR=$(realpath "${SBR_BIN:-$bins/sbr}")
NVIPAM=$(realpath "${NVIPAM_BIN:-$bins/nv-ipam}")
HOSTDEV=$(realpath "${HOSTDEV_BIN:-$bins/host-device}")
TOOL=$(realpath "${NVIPAM_TOOL:-$bins/nv-ipam-tool}")
for p in "$MACVLAN" "$TUNING" "$SBR" "$NVIPAM" "$HOSTDEV" "$TOOL"; do
	[ -x "$p" ] || { echo "FAIL: $p is not executable"; exit 1; }
done
# Where our tuning keeps what DEL restores (docs/tuning.md).
TUNING_STATE=/run/cni-rdma-plugins/tuning

t_init
BIN=$T_DIR/bin
mkdir "$BIN"
ln -s "$NVIPAM" "$BIN/nv-ipam"
T_ENV_PATH=$BIN

t_netns POD
T_ENV_NETNS=$POD_path
T_ENV_CONTAINERID=mr$T_TOK
T_ENV_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=mr$T_TOK;K8S_POD_UID=0d4c9e7a-$T_TOK"
masters=()
for i in 1 2 3 4 5; do
	t_name m mr
	t_name p mp
	t_veth "$m" "$p"
	masters+=("$m")
done
t_name D md
t_name DP mq
t_veth "$D" "$DP"

# One pool for the four same-subnet rails, two for the distinct-subnet ones.
cat >"$T_DIR/pools.json" <<JSON
{"pools": {
  "rails": {"subnet": "192.168.77.0/24", "startIP": "192.168.77.10", "endIP": "192.168.77.50",
            "gateway": "192.168.77.1"},
  "rail-a": {"subnet": "10.78.1.0/24", "startIP": "10.78.1.10", "endIP": "10.78.1.50",
             "gateway": "10.78.1.1"},
  "rail-b": {"subnet": "10.78.2.0/24", "startIP": "10.78.2.10", "endIP": "10.78.2.50",
             "gateway": "10.78.2.1"}}}
JSON
nvipam_node_conf "$T_DIR" "$T_DIR/pools.json" "$T_DIR/store"

# NVIDIA's multi-rail profile, as the operator pastes it after the interface plugin.
PROFILE='{"type":"tuning","sysctl":{"net.ipv4.conf.all.arp_ignore":"1","net.ipv4.conf.all.arp_announce":"2","net.ipv4.conf.all.rp_filter":"0","net.ipv4.conf.IFNAME.arp_ignore":"1","net.ipv4.conf.IFNAME.arp_announce":"2","net.ipv4.conf.IFNAME.rp_filter":"0"}},{"type":"sbr"}'

# nad NAME FIRST-PLUGIN: the conflist the operator renders for a network with metaPlugins.
nad() {
	printf '{"cniVersion":"0.3.1","name":"%s","plugins":[%s,%s]}' "$1" "$2" "$PROFILE"
}
macvlan_rail() { # NAME MASTER POOL
	nad "$1" '{"type":"macvlan","master":"'"$2"'","mode":"bridge","mtu":1500,"ipam":{"type":"nv-ipam","poolName":"'"$3"'","confDir":"'"$T_DIR"'"}}'
}

# The binaries each plugin type runs as: ours unless REF_CHAIN is set.
declare -A OURS=([macvlan]=$MACVLAN [host-device]=$HOSTDEV [tuning]=$TUNING [sbr]=$SBR)
plugin_bin() { # TYPE
	if [ -n "${REF_CHAIN:-}" ] && [[ " $REF_CHAIN " == *" $1 "* ]]; then
		echo "$REF/$1"
	else
		echo "${OURS[$1]}"
	fi
}

# chain CMD CONFLIST IFNAME [PREV]: run every plugin of the list as libcni does. ADD: in
# order, each with the previous result; DEL and CHECK: DEL in reverse order, each with
# PREV (the cached result). CHAIN_RESULT: the last ADD's result; T_RC of the first failure.
chain() {
	local cmd=$1 list=$2 ifname=$3 prev=${4:-} n i conf
	n=$(jq '.plugins | length' <<<"$list")
	local order=()
	if [ "$cmd" = DEL ]; then
		for ((i = n - 1; i >= 0; i--)); do order+=("$i"); done
	else
		for ((i = 0; i < n; i++)); do order+=("$i"); done
	fi
	for i in "${order[@]}"; do
		conf=$(jq -c --argjson i "$i" --arg prev "$prev" \
			'.plugins[$i] + {cniVersion, name} + (if $prev == "" then {} else {prevResult: ($prev | fromjson)} end)' <<<"$list")
		T_PLUGIN=$(plugin_bin "$(jq -r '.type' <<<"$conf")")
		# A checker (PLUGIN_WRAPPER) watches ours only: Debian's Go runtime is not this suite's.
		if [[ $T_PLUGIN == "$REF"/* ]]; then
			local wrap=("${T_BASE_WRAP[@]}")
			T_BASE_WRAP=()
			t_cni "$cmd" "$conf" CNI_IFNAME="$ifname"
			T_BASE_WRAP=("${wrap[@]}")
		else
			t_cni "$cmd" "$conf" CNI_IFNAME="$ifname"
		fi
		[ "$T_RC" = 0 ] || return 1
		[ "$cmd" != ADD ] || prev=$T_OUT
	done
	CHAIN_RESULT=$prev
}

# rules: the pod's rules but the kernel's three defaults, "from ADDR lookup TABLE" lines.
rules() {
	ip -n "$POD" -4 rule show | grep -v -e 'lookup local' -e 'lookup main' -e 'lookup default' |
		sed 's/^[0-9]*:[[:space:]]*//' | sort
}
# table_of ADDR: the table of the rule for ADDR, "" when none.
table_of() { rules | sed -n "s|^from $1 lookup \\([0-9]*\\).*|\\1|p"; }
# routes TABLE: the table's IPv4 routes, the pod's names replaced by rail numbers.
routes() { ip -n "$POD" -4 route show table "$1" | sort; }
sysctl_of() { ip netns exec "$POD" cat "/proc/sys/net/ipv4/conf/$1/$2" 2>/dev/null; }
tuning_state() { ls "$TUNING_STATE" 2>/dev/null | grep -c "$T_ENV_CONTAINERID" ; }
held() { # the number of addresses nv-ipam holds in this run's store, "unreadable" if unknown
	"$TOOL" show --store "$T_DIR/store" --pool-file "$T_DIR/pools.json" --json 2>/dev/null |
		jq -r '[.pools[].allocations[]] | length' 2>/dev/null | grep . || echo unreadable
}

# attach_rails LABEL IFNAME:CONFLIST...: ADD each rail; RES[IFNAME] its result, ADDR[IFNAME]
# its address.
declare -A RES ADDR
attach_rails() {
	local label=$1 spec ifname list
	shift
	for spec in "$@"; do
		ifname=${spec%%:*} list=${spec#*:}
		if chain ADD "$list" "$ifname"; then
			t_pass "$label: $ifname's chain ADD"
		else
			t_fail "$label: $ifname's chain ADD" "$(t_last_run)"
			continue
		fi
		RES[$ifname]=$CHAIN_RESULT
		ADDR[$ifname]=$(jq -r '.ips[0].address | sub("/.*"; "")' <<<"$CHAIN_RESULT")
	done
}
detach_rails() {
	local label=$1 spec ifname list
	shift
	for spec in "$@"; do
		ifname=${spec%%:*} list=${spec#*:}
		chain DEL "$list" "$ifname" "${RES[$ifname]:-}"
		t_ok "$label: $ifname's chain DEL"
		# Debian's sbr (1.1.1) fails a DEL whose link is gone; upstream has fixed it since.
		[[ " ${REF_CHAIN:-} " != *" sbr "* ]] || continue
		chain DEL "$list" "$ifname" "${RES[$ifname]:-}"
		t_ok "$label: $ifname's chain DEL again"
	done
}
# check_rail LABEL IFNAME DST: the rail's rule, its table, the route its address takes.
check_rail() {
	local label=$1 ifname=$2 dst=$3 addr=${ADDR[$2]:-} table
	table=$(table_of "$addr")
	t_match "$label: $ifname ($addr) has a rule into a table of its own" '^[0-9]+$' "$table"
	t_contains "$label: $ifname's table routes the default through the gateway on $ifname" \
		"dev $ifname" "$(routes "${table:-none}" | grep '^default')"
	t_contains "$label: traffic from $addr leaves through $ifname" "dev $ifname" \
		"$(ip -n "$POD" route get "$dst" from "$addr" 2>&1)"
	t_eq "$label: $ifname arp_ignore arp_announce rp_filter" "1 2 0" \
		"$(sysctl_of "$ifname" arp_ignore) $(sysctl_of "$ifname" arp_announce) $(sysctl_of "$ifname" rp_filter)"
}
# check_clean LABEL: nothing of the chains left.
check_clean() {
	t_eq "$1: the pod holds lo only" "lo" "$(t_link_names "$POD")"
	t_eq "$1: no rule but the kernel's" "" "$(rules)"
	t_eq "$1: no tuning state of this pod" 0 "$(tuning_state)"
	t_eq "$1: no address held" 0 "$(held)"
}

echo "# 1. four rails on one subnet"
same=()
for i in 1 2 3 4; do
	same+=("net$i:$(macvlan_rail "rail$i" "${masters[$((i - 1))]}" rails)")
done
attach_rails "same subnet" "${same[@]}"
t_eq "our tuning keeps what DEL restores, one record per rail" 4 "$(tuning_state)"
t_eq "four rules, four tables" 4 "$(rules | awk '{print $NF}' | sort -u | grep -c .)"
for i in 1 2 3 4; do
	check_rail "same subnet" "net$i" 192.168.77.200
done
t_eq "the profile's netns-wide keys" "1 2 0" \
	"$(sysctl_of all arp_ignore) $(sysctl_of all arp_announce) $(sysctl_of all rp_filter)"
t_eq "the main table holds no route of a rail" "" "$(ip -n "$POD" -4 route show table main | grep ' dev net')"
# The operator's rules and tables, to compare with the references' below.
ours_rules=$(rules | sed 's/from [0-9.]* //')
ours_tables=""
for i in 1 2 3 4; do
	ours_tables+="$(routes "$(table_of "${ADDR[net$i]}")" | sed "s/ src [0-9.]*//")"$'\n'
done
# CHECK as libcni runs it on a conflist: every plugin, in order, with the cached result;
# the operator's 0.3.1 has no CHECK, so the same list and its result at 1.0.0.
chain CHECK "$(jq -c '.cniVersion = "1.0.0"' <<<"${same[1]#*:}")" net2 \
	"$(jq -c '.cniVersion = "1.0.0" | .ips |= map(del(.version))' <<<"${RES[net2]}")"
t_ok "same subnet: net2's chain CHECK (at 1.0.0)"
# DEL of one rail leaves the others as they were.
before=$(rules | grep -v "from ${ADDR[net3]} ")
detach_rails "same subnet" "${same[2]}"
t_eq "net3's DEL left the other rails' rules" "$before" "$(rules)"
check_rail "after net3's DEL" net4 192.168.77.200
detach_rails "same subnet" "${same[0]}" "${same[1]}" "${same[3]}"
check_clean "same subnet"

echo "# 2. distinct subnets, macvlan and host-device rails"
hd=$(nad railb '{"type":"host-device","device":"'"$DP"'","ipam":{"type":"nv-ipam","poolName":"rail-b","confDir":"'"$T_DIR"'"}}')
distinct=("net1:$(macvlan_rail raila "${masters[4]}" rail-a)" "net2:$hd")
attach_rails "distinct subnets" "${distinct[@]}"
check_rail "distinct subnets" net1 10.78.1.200
check_rail "distinct subnets" net2 10.78.2.200
detach_rails "distinct subnets" "${distinct[@]}"
check_clean "distinct subnets"
t_eq "host-device: the device is home" "$DP" "$(t_link_json "" "$DP" | jq -r .ifname)"

if [ "${MULTIRAIL_REFERENCE:-1}" = 0 ]; then
	:
elif [ -x "$REF/macvlan" ] && [ -x "$REF/tuning" ] && [ -x "$REF/sbr" ]; then
	echo "# 3. the references' macvlan, tuning and sbr on the same rails"
	REF_CHAIN="macvlan tuning sbr"
	attach_rails "Go chain" "${same[@]}"
	ref_rules=$(rules | sed 's/from [0-9.]* //')
	ref_tables=""
	for i in 1 2 3 4; do
		ref_tables+="$(routes "$(table_of "${ADDR[net$i]}")" | sed "s/ src [0-9.]*//")"$'\n'
	done
	t_eq "the Go chain makes the same rules" "$ours_rules" "$ref_rules"
	t_eq "and the same tables" "$ours_tables" "$ref_tables"
	detach_rails "Go chain" "${same[@]}"
	t_eq "Go chain: no rule left" "" "$(rules)"
	REF_CHAIN="macvlan"
	attach_rails "Go macvlan, our tuning and sbr" "${same[0]}"
	check_rail "Go macvlan, our tuning and sbr" net1 192.168.77.200
	detach_rails "Go macvlan, our tuning and sbr" "${same[0]}"
	check_clean "Go macvlan, our tuning and sbr"
	REF_CHAIN=
else
	t_fail "the reference plugins (macvlan, tuning, sbr) are in $REF" "install containernetworking-plugins"
fi

t_summary
