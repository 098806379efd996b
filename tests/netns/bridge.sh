#!/usr/bin/env bash
# Real-kernel tests of the bridge plugin, run as a runtime runs it: CNI_*
# environment, config on stdin, result or error JSON on stdout.
#
#   bridge.sh PLUGIN [REFERENCE_CNI_DIR]
#
# The plugin works in the node's netns; here every "node" is a netns made for
# the test (brh...), with an uplink of its own (a veth pair carrying its default
# route) and pods (brp...), so the machine's own links, addresses and rulesets
# are never touched. Bridges are brt... Beside ours, upstream v1.9.1's bridge and
# host-local (../shared/reference/cni-plugins, tests/shared.sh) run on a twin
# node with the same input: results compared key by key and the kernel state
# both leave (ip -d -j link, bridge -j vlan, ip -j addr and route, nft list
# ruleset, iptables-save, ip6tables-save, forwarding) compared whole, with
# what the kernel picks (indexes, MACs, timers, the random veth names) left
# out; each then CHECKs and DELs the other's pod. Without ../shared those
# comparisons print NOT RUN and the rest runs with REFERENCE_CNI_DIR's
# host-local (Debian's). Sections (BRIDGE_SECTIONS picks; BRIDGE_REFERENCE=1, meson's
# "bridge vs upstream" test, runs 1, 2 and 8 and ends as not run without ../shared; the
# default is 3 to 7):
#   1. every CNI version, ours beside the reference
#   2. every key but VLANs, ours beside the reference
#   3. the kernel's facts of each key, CHECK, DEL, DEL without the pod, STATUS, GC
#   4. concurrent ADDs onto one new bridge
#   5. hostile input: a clear error and the node exactly as before
#   6. SIGKILL at every netlink send of ADD (strace), then DEL: nothing left
#   7. VLANs as the kernel holds them (where it filters VLANs: the kernel matrix's guests)
#   8. VLANs, ours beside the reference (where the kernel filters them; both refused elsewhere)
#   9. the flannel-like chain: bridge + host-local, then upstream's portmap, ours beside
#      upstream's bridge (with BRIDGE_REFERENCE=1)
# Needs root, jq, nft, iptables, strace, bridge (iproute2); exits 77 only
# when network namespaces cannot be created.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/../shared.sh"

if [ $# -lt 1 ]; then
	echo "usage: $0 PLUGIN [REFERENCE_CNI_DIR]"
	exit 1
fi
T_PLUGIN=$(realpath "$1")
OURS=$T_PLUGIN
REF=${2:-/usr/lib/cni}
[ -x "$T_PLUGIN" ] || { echo "FAIL: plugin $T_PLUGIN is not executable"; exit 1; }

t_init
for tool in nft iptables-save ip6tables-save strace bridge sysctl ping; do
	command -v $tool >/dev/null || { echo "FAIL: $tool not found (tests/install-deps.sh test)"; exit 1; }
done

VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
REQUIRE_REF=${BRIDGE_REFERENCE:-0}
if [ "$REQUIRE_REF" = 1 ]; then
	SECTIONS=${BRIDGE_SECTIONS:-1 2 8 9}
else
	SECTIONS=${BRIDGE_SECTIONS:-3 4 5 6 7}
fi
section() { [[ " $SECTIONS " == *" $1 "* ]]; }
HOST_START=$(t_links)

# --- CNI_PATH: host-local (upstream's when ../shared has it), a failing IPAM --
BIN=$T_DIR/bin
IPAMLOG=$T_DIR/ipam.log
mkdir -p "$BIN"
T_ENV_PATH=$BIN
refdir=${REFERENCE_PLUGINS:-$(shared_path reference/cni-plugins)}
if [ -f "$refdir/bridge.xz" ] && [ -f "$refdir/host-local.xz" ]; then
	shared_reference_plugins "$T_DIR/ref" bridge host-local portmap
	REFBR=$T_DIR/ref/bridge
	ln -s "$T_DIR/ref/host-local" "$BIN/host-local"
else
	what="reference plugins (containernetworking/plugins v1.9.1): the comparisons with upstream's bridge"
	[ "$REQUIRE_REF" = 1 ] && shared_not_run "$refdir" reference/cni-plugins "$what"
	if section 1 || section 2 || section 8 || section 9; then
		shared_missing "$refdir" reference/cni-plugins "$what"
	fi
	REFBR=
	# Without upstream's: ours from the same build (it speaks STATUS and GC, which
	# Debian's 1.1.1 does not), else Debian's (the kernel matrix's guests copy no IPAM).
	hl=$(dirname "$OURS")/../../ipam/host-local/host-local
	if [ -x "$hl" ]; then
		ln -s "$(realpath "$hl")" "$BIN/host-local"
		# Its stores below this run's directory: a state root of the node here, and
		# nv-ipam's state (which a store may not lie in) elsewhere.
		jq --arg t "$T_DIR" '.stateRoots = [$t] | .stateDirs = [$t + "/nv-ipam"]' \
			"$T_DIR/node-settings.json" >"$T_DIR/settings.tmp" &&
			mv "$T_DIR/settings.tmp" "$T_DIR/node-settings.json"
	else
		[ -x "$REF/host-local" ] || { echo "FAIL: $REF/host-local not found (containernetworking-plugins)"; exit 1; }
		t_ref_ipam "$BIN" "$REF" host-local
	fi
fi
cat >"$BIN/failipam" <<EOF
#!/bin/sh
cat >/dev/null
echo "failipam \$CNI_COMMAND \$CNI_CONTAINERID" >>"$IPAMLOG"
[ "\$CNI_COMMAND" = ADD ] || exit 0
printf '{"code":11,"msg":"pool busy"}'
exit 1
EOF
# loghl: host-local, each command logged.
cat >"$BIN/loghl" <<EOF
#!/bin/sh
echo "loghl \$CNI_COMMAND \$CNI_CONTAINERID" >>"$IPAMLOG"
exec "$BIN/host-local"
EOF
chmod +x "$BIN/failipam" "$BIN/loghl"
# A PATH without iptables (what STATUS says of the iptables backend there): what a plugin run
# needs besides (the wrapper of run-all.sh's valgrind run too).
mkdir -p "$T_DIR/noipt"
for t in timeout ip valgrind; do
	command -v $t >/dev/null || continue
	printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v $t)" >"$T_DIR/noipt/$t"
	chmod +x "$T_DIR/noipt/$t"
done
: >"$IPAMLOG"

# --- nodes and pods ------------------------------------------------------------
# node VAR: a netns standing for the node: lo up, an uplink veth (VAR_up) with
# 192.0.2.2/24 and the default route through it, forwarding off.
node() {
	local name up
	t_name name brh
	t_name up bru
	ip netns add "$name" || { echo "FAIL: ip netns add $name"; exit 1; }
	t_defer "[ ! -e '/var/run/netns/$name' ] || ip netns del '$name'"
	ip -n "$name" -batch - <<EOF || { echo "FAIL: node $name"; exit 1; }
link set lo up
link add $up type veth peer name ${up}x
link set $up up
link set ${up}x up
addr add 192.0.2.2/24 dev $up
route add default via 192.0.2.1 dev $up
EOF
	# The nat tables a node with iptables has (an upstream DEL makes them, ours does not):
	# twin nodes would differ in that alone. (A kernel iptables cannot work on has none.)
	if have_ref; then
		ip netns exec "$name" sh -c 'iptables -t nat -N brx && iptables -t nat -X brx &&
			ip6tables -t nat -N brx && ip6tables -t nat -X brx' >/dev/null 2>&1
	fi
	printf -v "$1" '%s' "$name"
	printf -v "${1}_up" '%s' "$up"
}

# pod VAR: a pod's netns (VAR_path its path).
pod() {
	local name
	t_name name brp
	ip netns add "$name" || { echo "FAIL: ip netns add $name"; exit 1; }
	t_defer "[ ! -e '/var/run/netns/$name' ] || ip netns del '$name'"
	printf -v "$1" '%s' "$name"
	printf -v "${1}_path" '%s' "/var/run/netns/$name"
}

# on NODE PLUGIN CMD CONF [VAR=VALUE]...: t_cni of PLUGIN in NODE.
on() {
	local n=$1 p=$2
	shift 2
	T_WRAP=(ip netns exec "$n")
	T_PLUGIN=$p
	t_cni "$@"
	T_WRAP=()
	T_PLUGIN=$OURS
}

# What the kernel picks itself is left out: indexes, MACs, timers, lifetimes, bridge and
# port IDs (MACs inside), link-local addresses (made of the MAC), the random veth names,
# and the read-only TSO limits a bridge inherits from the ports it has had.
NORM='walk(if type == "object" then
	with_entries(select(.key | test("^(ifindex|link_index|link_netnsid|address|broadcast|perm_address|valid_life_time|preferred_life_time|id|no|tso_max_size|tso_max_segs)$|timer|_id$|designated") | not))
	else . end)'
LL='map(select(((.dst // .local // "") | startswith("fe80")) | not))'
macs() {
	sed -E 's/\b([0-9a-f]{1,2}:){5}[0-9a-f]{1,2}\b/MAC/g; s/veth[0-9a-f]{8}/VETH/g;
		s/bru[0-9a-f]+/UPLINK/g; s/brp[0-9a-f]+/POD/g'
}

# state NS: what a node's (or a pod's) kernel holds, as text to compare.
state() {
	local ns=$1
	{
		# In name order: indexes (the order ip lists) differ with the order a pair is made in.
		echo "links:"
		ip -n "$ns" -d -j link show | jq -S -c "$NORM | .[]" | macs | sort
		echo "vlans:"
		ip netns exec "$ns" bridge -j vlan show 2>/dev/null | jq -S -c '.[]?'
		echo "addresses:"
		ip -n "$ns" -j addr show | jq -S -c "$NORM | .[] | .addr_info |= $LL" | macs | sort
		echo "routes:"
		{ ip -n "$ns" -j route show table all | jq -S -c "$LL | $NORM | .[]"
		  ip -n "$ns" -6 -j route show table all | jq -S -c "$LL | $NORM | .[]"; } | macs | sort
		echo "nftables:"
		# Counters count what the node's own traffic happened to send meanwhile.
		ip netns exec "$ns" nft list ruleset | sed -E 's/counter packets [0-9]+ bytes [0-9]+/counter/'
		echo "iptables:"
		ip netns exec "$ns" iptables-save | grep -v '^#' | sed -E 's/ \[[0-9]+:[0-9]+\]//'
		ip netns exec "$ns" ip6tables-save | grep -v '^#' | sed -E 's/ \[[0-9]+:[0-9]+\]//'
		echo "forwarding: $(ip netns exec "$ns" sysctl -n net.ipv4.ip_forward net.ipv6.conf.all.forwarding | tr '\n' ' ')"
	} 2>&1 | macs
}

# settle NS: a bridge whose last port went loses its carrier when the kernel's link watcher
# gets to it, an IPv6 address stays tentative until duplicate address detection ends; a
# state read before differs only in that. Waits (at most 3 s) for both.
settle() {
	local i
	for ((i = 0; i < 30; i++)); do
		ip -n "$1" -j -d link show type bridge | jq -e --argjson ports "$(ip -n "$1" -j link show | jq '[.[] | .master // empty]')" \
			'all(.[]; (.ifname as $b | $ports | index($b)) != null or .operstate == "DOWN")' >/dev/null &&
			ip -n "$1" -j addr show | jq -e 'all(.[].addr_info[]; .tentative != true)' >/dev/null && return 0
		sleep 0.1
	done
}

# A result with its MACs and random names left out, keys sorted.
norm_result() { macs <<<"$1" | jq -S -c . 2>/dev/null || echo "not JSON: $1"; }

# conf VERSION NAME BRIDGE EXTRA: a bridge config; EXTRA is JSON members, comma first.
conf() { printf '{"cniVersion":"%s","name":"%s","type":"bridge","bridge":"%s"%s}' "$1" "$2" "$3" "${4:-}"; }
# hl DIR [SUBNET]: host-local's section on a store of its own.
hl() { printf ',"ipam":{"type":"host-local","subnet":"%s","dataDir":"%s"}' "${2:-10.77.0.0/24}" "$1"; }
hl6() { printf ',"ipam":{"type":"host-local","ranges":[[{"subnet":"10.77.0.0/24"}],[{"subnet":"fd00:77::/64"}]],"dataDir":"%s"}' "$1"; }
with_prev() { jq -c --argjson p "$2" '. + {prevResult: $p}' <<<"$1"; }

have_ref() {
	[ -n "$REFBR" ] && return 0
	return 1
}

# twin DESC VERSION EXTRA [VAR=VALUE]...: the same ADD by ours and by the reference, each on
# a node and pod of its own (a fresh bridge brt... each; IPAM stores of their own), the
# results and the kernel states compared; then each CHECKs and DELs the other's pod, and
# what is left is compared too and must hold no pod port, no masquerade, no spoof check.
# EXTRA may hold @IPAM@, replaced by host-local on the side's store.
TWIN=0
twin() {
	local desc=$1 v=$2 extra=$3 no nr po pr bo br co cr ro rr eo er
	shift 3
	TWIN=$((TWIN + 1))
	if ! have_ref; then
		return 0
	fi
	node no; node nr; pod po; pod pr
	t_name bo brt; br=$bo
	co=$(conf "$v" brnet "$bo" "${extra//@IPAM@/$(hl "$T_DIR/tw$TWIN-o")}")
	cr=$(conf "$v" brnet "$br" "${extra//@IPAM@/$(hl "$T_DIR/tw$TWIN-r")}")
	co=${co//@IPAM6@/$(hl6 "$T_DIR/tw$TWIN-o")}
	cr=${cr//@IPAM6@/$(hl6 "$T_DIR/tw$TWIN-r")}
	on "$no" "$OURS" ADD "$co" CNI_NETNS="$po_path" "$@"
	ro=$T_OUT eo=$T_RC
	[ "$eo" = 0 ] && t_eq "[$desc] ours: nothing on stderr" "" "$T_ERR"
	on "$nr" "$REFBR" ADD "$cr" CNI_NETNS="$pr_path" "$@"
	rr=$T_OUT er=$T_RC
	t_eq "[$desc] ADD: ours exits as the reference" "$er" "$eo"
	if [ "$eo" != 0 ] || [ "$er" != 0 ]; then
		t_contains "[$desc] ours fails with error JSON" '"code"' "$ro"
		return 0
	fi
	t_eq "[$desc] ADD result as the reference's, key by key" "$(norm_result "$rr")" "$(norm_result "$ro")"
	settle "$no"; settle "$nr"; settle "$po"; settle "$pr"
	t_eq "[$desc] the node's kernel state as the reference's" "$(state "$nr")" "$(state "$no")"
	t_eq "[$desc] the pod's kernel state as the reference's" "$(state "$pr")" "$(state "$po")"
	TWIN_OURS=$ro TWIN_REF=$rr
	if [[ "$v" != 0.1.0 && "$v" != 0.2.0 && "$v" != 0.3.0 && "$v" != 0.3.1 ]]; then
		on "$nr" "$OURS" CHECK "$(with_prev "$cr" "$rr")" CNI_NETNS="$pr_path" "$@"
		t_ok "[$desc] ours CHECKs the reference's pod"
		on "$no" "$REFBR" CHECK "$(with_prev "$co" "$ro")" CNI_NETNS="$po_path" "$@"
		if [[ "$co" == *'"ipam"'* ]]; then
			t_ok "[$desc] the reference CHECKs our pod"
		else
			# Upstream's CHECK runs IPAM's CHECK even without IPAM, and fails (docs/bridge.md).
			t_err "[$desc] the reference's CHECK of an L2 pod fails as it does on its own" "" \
				"no plugin name provided"
		fi
	fi
	on "$nr" "$OURS" DEL "$(with_prev "$cr" "$rr")" CNI_NETNS="$pr_path" "$@"
	t_ok "[$desc] ours DELs the reference's pod"
	on "$no" "$REFBR" DEL "$(with_prev "$co" "$ro")" CNI_NETNS="$po_path" "$@"
	t_ok "[$desc] the reference DELs our pod"
	local so sr
	settle "$no"; settle "$nr"
	so=$(state "$no") sr=$(state "$nr")
	t_eq "[$desc] after each DELs the other's pod: the same node state" "$sr" "$so"
	t_eq "[$desc] no masquerade or spoof check left" "" \
		"$(grep -E 'CNI-[0-9a-f]|masquerade comment|macspoofchk' <<<"$so")"
	# The gateway's interface of a VLAN, "<bridge>.<vlan>", and its port stay, as upstream's.
	t_eq "[$desc] no pod's port left on either bridge" "0 0" \
		"$(for n in "$no" "$nr"; do ip -n "$n" -j link show master "$bo" |
			jq --arg b "$bo." '[.[] | select((.link // "") | startswith($b) | not)] | length'; done | tr '\n' ' ' | sed 's/ $//')"
	t_eq "[$desc] the pods hold only lo" "lo lo" "$(t_link_names "$po") $(t_link_names "$pr")"
	ip netns del "$no"; ip netns del "$nr"; ip netns del "$po"; ip netns del "$pr"
}


# =============================================================================
if section 1; then
	echo "# 1. every CNI version, ours beside the reference"
	for v in $VERSIONS; do
		twin "$v gateway" "$v" ',"isGateway":true@IPAM@'
		twin "$v L2" "$v" ''
		twin "$v default gateway, masquerade" "$v" ',"isDefaultGateway":true,"ipMasq":true@IPAM@'
	done
fi

# What this kernel has: bridge VLAN filtering, nftables' inet family (the guests of the kernel
# matrix have the first, not the second).
VLAN_OK=no INET_OK=no
if ip netns add "brvlan$T_TOK$$" 2>/dev/null; then
	ip -n "brvlan$T_TOK$$" link add brtv type bridge vlan_filtering 1 2>/dev/null && VLAN_OK=yes
	ip netns exec "brvlan$T_TOK$$" nft add table inet brx 2>/dev/null && INET_OK=yes
	ip netns del "brvlan$T_TOK$$"
fi

# =============================================================================
if section 2; then
	echo "# 2. every key but VLANs, ours beside the reference"
	twin "isGateway, forceAddress" 1.1.0 ',"isGateway":true,"forceAddress":true@IPAM@'
	twin "ipMasq iptables" 1.1.0 ',"isGateway":true,"ipMasq":true,"ipMasqBackend":"iptables"@IPAM@'
	twin "ipMasq nftables" 1.1.0 ',"isGateway":true,"ipMasq":true,"ipMasqBackend":"nftables"@IPAM@'
	twin "dual stack, default gateway, masquerade" 1.1.0 ',"isDefaultGateway":true,"ipMasq":true@IPAM6@'
	twin "dual stack, nftables masquerade" 1.0.0 ',"isGateway":true,"ipMasq":true,"ipMasqBackend":"nftables"@IPAM6@'
	twin "mtu 9000" 1.1.0 ',"mtu":9000,"isGateway":true@IPAM@'
	twin "hairpinMode" 1.1.0 ',"hairpinMode":true@IPAM@'
	twin "promiscMode" 1.1.0 ',"promiscMode":true,"isGateway":true@IPAM@'
	twin "portIsolation" 1.1.0 ',"portIsolation":true@IPAM@'
	twin "macspoofchk" 1.1.0 ',"macspoofchk":true,"isGateway":true@IPAM@'
	twin "macspoofchk L2" 1.0.0 ',"macspoofchk":true'
	twin "enabledad" 1.1.0 ',"enabledad":true,"isGateway":true@IPAM6@'
	twin "disableContainerInterface" 1.1.0 ',"disableContainerInterface":true'
	twin "MAC from CNI_ARGS" 1.1.0 '@IPAM@' CNI_ARGS="IgnoreUnknown=1;MAC=02:42:ac:11:00:09"
	twin "MAC from args.cni.mac" 1.1.0 ',"args":{"cni":{"mac":"02:42:ac:11:00:0a"}}@IPAM@'
	twin "MAC from runtimeConfig" 1.1.0 ',"runtimeConfig":{"mac":"02:42:ac:11:00:0b"}@IPAM@'
	twin "every switch off" 1.1.0 ',"isGateway":false,"ipMasq":false,"hairpinMode":false,"promiscMode":false,"macspoofchk":false@IPAM@'
fi

# =============================================================================
if section 3; then
	echo "# 3. the kernel's facts, CHECK, DEL, STATUS and GC"
	node N
	pod P1
	pod P2
	t_name BR brt
	D=$T_DIR/s3
	C=$(conf 1.1.0 s3net "$BR" ",\"isDefaultGateway\":true,\"ipMasq\":true,\"hairpinMode\":true,\"portIsolation\":true,\"macspoofchk\":true,\"mtu\":1400$(hl "$D")")
	on "$N" "$OURS" ADD "$C" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_ok "ADD exits 0"
	t_eq "nothing on stderr" "" "$T_ERR"
	R1=$T_OUT
	t_jq "result: bridge, port, pod interface; the address on the pod's; gateway .1" "$R1" \
		'[(.interfaces | length), .interfaces[0].name, (.interfaces[1].name | test("^veth[0-9a-f]{8}$")),
		  .interfaces[2].name, .interfaces[2].sandbox, .ips[0].address, .ips[0].gateway, .ips[0].interface,
		  .routes[0].dst, .routes[0].gw] | map(tostring) | join(" ")' \
		"3 $BR true net1 $P1_path 10.77.0.2/24 10.77.0.1 2 0.0.0.0/0 10.77.0.1"
	VETH1=$(jq -r '.interfaces[1].name' <<<"$R1")
	t_jq "the bridge: up, 10.77.0.1/24, its MAC the result's" "$(ip -n "$N" -j addr show dev "$BR")" \
		'.[0] | [.operstate, (.addr_info[] | select(.family == "inet") | "\(.local)/\(.prefixlen)"), .address] | join(" ")' \
		"UP 10.77.0.1/24 $(jq -r '.interfaces[0].mac' <<<"$R1")"
	t_jq "the port: on the bridge, up, hairpin, isolated, MTU 1400" \
		"$(ip -n "$N" -d -j link show dev "$VETH1")" \
		'.[0] | [.master, .operstate, .linkinfo.info_slave_data.hairpin, .linkinfo.info_slave_data.isolated, .mtu] | map(tostring) | join(" ")' \
		"$BR UP true true 1400"
	t_jq "the pod: its address, default route via the gateway, MTU 1400, the result's MAC" \
		"[$(ip -n "$P1" -j addr show dev net1),$(ip -n "$P1" -j route show default)]" \
		'[(.[0][0].addr_info[] | select(.family == "inet") | "\(.local)/\(.prefixlen)"), .[1][0].gateway, .[0][0].mtu, .[0][0].address] | map(tostring) | join(" ")' \
		"10.77.0.2/24 10.77.0.1 1400 $(jq -r '.interfaces[2].mac' <<<"$R1")"
	t_eq "forwarding on" 1 "$(ip netns exec "$N" sysctl -n net.ipv4.ip_forward)"
	t_contains "the masquerade of 10.77.0.2 (iptables, upstream's default)" "-A POSTROUTING -s 10.77.0.2/32" \
		"$(ip netns exec "$N" iptables-save -t nat)"
	t_contains "the spoof check of the pod's MAC" "ether saddr $(jq -r '.interfaces[2].mac' <<<"$R1") return" \
		"$(ip netns exec "$N" nft list table bridge nat)"
	on "$N" "$OURS" ADD "$C" CNI_NETNS="$P2_path" CNI_CONTAINERID=c2
	t_ok "a second pod on the bridge"
	R2=$T_OUT
	t_jq "it gets .3 and the same bridge MAC" "$R2" '[.ips[0].address, .interfaces[0].mac] | join(" ")' \
		"10.77.0.3/24 $(jq -r '.interfaces[0].mac' <<<"$R1")"
	t_eq "isolated ports: the pods do not reach each other" 1 \
		"$(ip netns exec "$P1" ping -c1 -W1 10.77.0.3 >/dev/null 2>&1; echo $?)"
	t_eq "... and reach the gateway" 0 "$(ip netns exec "$P1" ping -c1 -W2 10.77.0.1 >/dev/null 2>&1; echo $?)"
	on "$N" "$OURS" ADD "$C" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_err "ADD again for a pod that has net1" 100 "already exists"
	t_eq "the first pod's port is still there" "$BR" "$(ip -n "$N" -j link show dev "$VETH1" | jq -r '.[0].master')"

	C1=$(with_prev "$C" "$R1")
	on "$N" "$OURS" CHECK "$C1" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_ok "CHECK exits 0"
	ip -n "$N" link set "$BR" promisc on
	on "$N" "$OURS" CHECK "$C1" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_err "CHECK: the bridge turned promiscuous" 103 "Promisc"
	ip -n "$N" link set "$BR" promisc off
	ip -n "$N" link set "$VETH1" nomaster
	on "$N" "$OURS" CHECK "$C1" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_err "CHECK: the port left the bridge" 103 "was not found"
	ip -n "$N" link set "$VETH1" master "$BR"
	ip -n "$P1" addr del 10.77.0.2/24 dev net1
	on "$N" "$OURS" CHECK "$C1" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_err "CHECK: the pod's address is gone" 103 "10.77.0.2/24"

	on "$N" "$OURS" STATUS "$C"
	t_ok "STATUS exits 0"
	on "$N" "$OURS" STATUS "$(jq -c '.ipMasqBackend = "iptables"' <<<"$C")" PATH="$T_DIR/noipt"
	t_err "STATUS: ipMasq through iptables without an iptables binary" 50 "iptables"

	on "$N" "$OURS" DEL "$C1" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_ok "DEL exits 0"
	t_eq "DEL: nothing on stderr" "" "$T_ERR"
	t_eq "DEL: the pod holds only lo" lo "$(t_link_names "$P1")"
	t_eq "DEL: the port is gone, the bridge stays" "$BR up" \
		"$(ip -n "$N" -j link show | jq -r --arg v "$VETH1" '[.[] | select(.ifname == $v)] | length as $n | (if $n == 0 then "" else "port" end)')$BR up"
	t_eq "DEL: 10.77.0.2's masquerade gone, 10.77.0.3's kept" "10.77.0.3/32" \
		"$(ip netns exec "$N" iptables-save -t nat | sed -nE 's/^-A POSTROUTING -s ([^ ]+) .*/\1/p' | tr '\n' ' ' | sed 's/ $//')"
	t_eq "DEL: c1's spoof check gone, c2's kept" "macspoofchk-c2-net1" \
		"$(ip netns exec "$N" nft list chain bridge nat PREROUTING | grep -o 'macspoofchk-[a-z0-9-]*' | sort -u | tr '\n' ' ' | sed 's/ $//')"
	t_eq "DEL: host-local released .2" "10.77.0.3" "$(t_store_ips "$D/s3net")"
	on "$N" "$OURS" DEL "$C1" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_ok "a second DEL exits 0"

	# The pod gone without a DEL: the node's rules go by their names (upstream leaves them).
	ip netns del "$P2"
	on "$N" "$OURS" DEL "$C" CNI_NETNS="$P2_path" CNI_CONTAINERID=c2
	t_ok "DEL with the netns gone exits 0"
	t_eq "DEL with the netns gone: no masquerade, no spoof check, no address held" "0 0 " \
		"$(ip netns exec "$N" iptables-save -t nat | grep -c 'CNI-') $(ip netns exec "$N" nft list chain bridge nat PREROUTING | grep -c macspoofchk) $(t_store_ips "$D/s3net")"

	if [ "$INET_OK" = no ]; then
		on "$N" "$OURS" ADD "$(jq -c '.ipMasqBackend = "nftables"' <<<"$C")" CNI_NETNS="$P1_path" CNI_CONTAINERID=c3
		t_err "a kernel without nftables' inet family: the nftables masquerade refused" 100 "nftables"
		t_eq "... and nothing of it left" "lo" "$(t_link_names "$P1")"
		GCB=iptables
	else
		GCB=nftables
	fi
	# The containers whose masquerade the node holds, by either backend.
	masq_ids() {
		{ ip netns exec "$N" nft list table inet cni_plugins_masquerade 2>/dev/null | grep -o 'id: c[0-9]' | sed 's/id: //'
		  ip netns exec "$N" iptables-save -t nat | grep '^-A POSTROUTING' | grep -o 'id: \\"c[0-9]' | sed 's/.*"//'; } |
			sort -u | tr '\n' ' ' | sed 's/ $//'
	}
	# GC: two pods of the network, one of them not in the list to keep.
	pod P3; pod P4
	for i in 3 4; do
		p=P$i; pp=P${i}_path
		on "$N" "$OURS" ADD "$(jq -c --arg b $GCB '.ipMasqBackend = $b' <<<"$C")" CNI_NETNS="${!pp}" CNI_CONTAINERID=c$i
		t_ok "GC: ADD c$i ($GCB masquerade)"
	done
	ip netns del "$P4"
	: >"$IPAMLOG"
	on "$N" "$OURS" GC "$(jq -c '.ipam.type = "loghl" | . + {"cni.dev/valid-attachments":[{"containerID":"c3","ifname":"net1"}]}' <<<"$C")"
	t_ok "GC exits 0"
	t_eq "GC: c4's masquerade and spoof check gone, c3's kept" "c3 c3" \
		"$(masq_ids) $(ip netns exec "$N" nft list chain bridge nat PREROUTING | grep -o 'macspoofchk-c[0-9]' | sed 's/macspoofchk-//')"
	t_eq "GC: IPAM's GC run (host-local v1.9.1 has none: c4's address stays)" "loghl GC cnitest" "$(<"$IPAMLOG")"
	ip netns exec "$N" iptables -t nat -N CNI-stale1 && ip netns exec "$N" iptables -t nat -A POSTROUTING -s 10.77.0.9/32 -m comment --comment 'name: "s3net" id: "c9"' -j CNI-stale1
	on "$N" "$OURS" GC "$(jq -c '. + {"cni.dev/valid-attachments":[{"containerID":"c3","ifname":"net1"}]}' <<<"$C")"
	t_contains "GC: an iptables jump of the network under a chain not named for it is left" "CNI-stale1" \
		"$(ip netns exec "$N" iptables-save -t nat)"
	on "$N" "$OURS" DEL "$(jq -c --arg b $GCB '.ipMasqBackend = $b' <<<"$C")" CNI_NETNS="$P3_path" CNI_CONTAINERID=c3
	t_ok "DEL c3"
	t_eq "nothing of c3 left (the stale jump above stays)" "c9 0" \
		"$(masq_ids) $(ip netns exec "$N" nft list chain bridge nat PREROUTING | grep -c macspoofchk)"

	# A bridge whose last port left has an all-zero MAC; upstream's next gateway ADD fails
	# setting it (EINVAL): ours makes the new port's its own.
	t_name BR2 brt
	pod P5
	on "$N" "$OURS" ADD "$(conf 1.1.0 s3net "$BR2")" CNI_NETNS="$P5_path" CNI_CONTAINERID=c5
	on "$N" "$OURS" DEL "$(conf 1.1.0 s3net "$BR2")" CNI_NETNS="$P5_path" CNI_CONTAINERID=c5
	t_eq "a bridge without ports: its MAC all zero" "00:00:00:00:00:00" \
		"$(ip -n "$N" -j link show dev "$BR2" | jq -r '.[0].address')"
	on "$N" "$OURS" ADD "$(conf 1.1.0 s3net "$BR2" ",\"isGateway\":true$(hl "$T_DIR/s3b")")" \
		CNI_NETNS="$P5_path" CNI_CONTAINERID=c5
	t_ok "a gateway ADD on it"
	t_jq "the bridge's MAC is the result's, and set" "$T_OUT" '.interfaces[0].mac' \
		"$(ip -n "$N" -j link show dev "$BR2" | jq -r '.[0].address')"
	t_ne "... not all zero" "00:00:00:00:00:00" "$(ip -n "$N" -j link show dev "$BR2" | jq -r '.[0].address')"
	ip netns del "$N"
fi

# =============================================================================
if section 4; then
	echo "# 4. concurrent ADDs onto one new bridge"
	node N
	t_name BR brt
	C=$(conf 1.0.0 s4net "$BR" ",\"isGateway\":true$(hl "$T_DIR/s4")")
	pids=()
	for i in 1 2 3 4 5 6 7 8; do
		pod "Q$i"
		qp=Q${i}_path
		printf '%s' "$C" | ip netns exec "$N" env CNI_COMMAND=ADD CNI_CONTAINERID=q$i CNI_NETNS="${!qp}" \
			CNI_IFNAME=eth0 CNI_PATH="$BIN" "$OURS" >"$T_DIR/q$i.out" 2>"$T_DIR/q$i.err" &
		pids+=($!)
	done
	ok=0
	for i in "${!pids[@]}"; do wait "${pids[i]}" && ok=$((ok + 1)); done
	t_eq "8 concurrent ADDs onto a new bridge all succeed" 8 "$ok"
	t_eq "8 ports on the one bridge" 8 "$(ip -n "$N" -j link show master "$BR" | jq length)"
	t_eq "the bridge has its gateway address once" "10.77.0.1/24" \
		"$(ip -n "$N" -j addr show dev "$BR" | jq -r '[.[0].addr_info[] | select(.family == "inet") | "\(.local)/\(.prefixlen)"] | join(" ")')"
	ip netns del "$N"
fi

# =============================================================================
if section 5; then
	echo "# 5. hostile input: a clear error, the node exactly as before"
	node N
	pod P
	T_ENV_NETNS=$P_path
	t_name BR brt
	D=$T_DIR/s5
	ip -n "$N" link add brtx5 type veth peer name brtx5p
	BEFORE=$(state "$N")
	refused() { # DESC CODE MSG CONF [VAR=VALUE]...
		local desc=$1 code=$2 msg=$3 c=$4
		shift 4
		on "$N" "$OURS" ADD "$c" "$@"
		t_err "$desc" "$code" "$msg"
		t_eq "$desc: the node as before" "$BEFORE" "$(state "$N")"
		t_eq "$desc: the pod holds only lo" lo "$(t_link_names "$P")"
		t_eq "$desc: no address held" "" "$(t_store_ips "$D/s5net")"
	}
	refused "bridge: an existing veth" 7 "already exists but is not a bridge" "$(conf 1.0.0 s5net brtx5 "$(hl "$D")")"
	refused "bridge: the node's uplink" 7 "the node's uplink" "$(conf 1.0.0 s5net "$N_up" ",\"isGateway\":true$(hl "$D")")"
	refused "bridge: lo" 7 "not a bridge" "$(conf 1.0.0 s5net lo "$(hl "$D")")"
	refused "bridge: too long" 7 "invalid bridge name" "$(conf 1.0.0 s5net brtabcdefghijklm "$(hl "$D")")"
	refused "bridge: a slash" 7 "invalid bridge name" "$(conf 1.0.0 s5net 'br/t' "$(hl "$D")")"
	refused "bridge: empty" 7 "invalid bridge name" "$(conf 1.0.0 s5net '' "$(hl "$D")")"
	refused "bridge: a number" 6 "bridge" '{"cniVersion":"1.0.0","name":"s5net","type":"bridge","bridge":7}'
	refused "vlan 4095" 7 "invalid VLAN ID 4095" "$(conf 1.0.0 s5net "$BR" ",\"vlan\":4095$(hl "$D")")"
	refused "vlan -1" 7 "invalid VLAN ID -1" "$(conf 1.0.0 s5net "$BR" ",\"vlan\":-1$(hl "$D")")"
	refused "vlan 1.5" 6 "vlan" "$(conf 1.0.0 s5net "$BR" ",\"vlan\":1.5$(hl "$D")")"
	refused "vlan \"100\"" 6 "vlan" "$(conf 1.0.0 s5net "$BR" ",\"vlan\":\"100\"$(hl "$D")")"
	refused "vlanTrunk id 0" 7 "incorrect trunk id parameter" "$(conf 1.0.0 s5net "$BR" ",\"vlanTrunk\":[{\"id\":0}]$(hl "$D")")"
	refused "vlanTrunk minID 4095" 7 "incorrect trunk minID parameter" "$(conf 1.0.0 s5net "$BR" ",\"vlanTrunk\":[{\"minID\":4095,\"maxID\":4095}]$(hl "$D")")"
	refused "vlanTrunk maxID < minID" 7 "minID is greater than maxID" "$(conf 1.0.0 s5net "$BR" ",\"vlanTrunk\":[{\"minID\":20,\"maxID\":10}]$(hl "$D")")"
	refused "vlanTrunk maxID alone" 7 "minID is missing" "$(conf 1.0.0 s5net "$BR" ",\"vlanTrunk\":[{\"maxID\":10}]$(hl "$D")")"
	refused "vlanTrunk of a string" 6 "vlanTrunk" "$(conf 1.0.0 s5net "$BR" ",\"vlanTrunk\":\"1-10\"$(hl "$D")")"
	refused "vlanTrunk null entry" 6 "vlanTrunk[0]" "$(conf 1.0.0 s5net "$BR" ",\"vlanTrunk\":[null]$(hl "$D")")"
	refused "mtu 67" 7 "invalid MTU" "$(conf 1.0.0 s5net "$BR" ",\"mtu\":67$(hl "$D")")"
	refused "mtu 65536" 7 "invalid MTU" "$(conf 1.0.0 s5net "$BR" ",\"mtu\":65536$(hl "$D")")"
	refused "hairpin and promiscuous" 7 "hairpin mode and promiscuous mode" "$(conf 1.0.0 s5net "$BR" ",\"hairpinMode\":true,\"promiscMode\":true$(hl "$D")")"
	refused "IPAM without a container interface" 7 "DisableContainerInterface" "$(conf 1.0.0 s5net "$BR" ",\"disableContainerInterface\":true$(hl "$D")")"
	refused "ipMasqBackend ebtables" 7 "unknown ipmasq backend" "$(conf 1.0.0 s5net "$BR" ",\"ipMasq\":true,\"ipMasqBackend\":\"ebtables\"$(hl "$D")")"
	refused "ipMasq as a string" 6 "ipMasq" "$(conf 1.0.0 s5net "$BR" ",\"ipMasq\":\"true\"$(hl "$D")")"
	refused "a multicast MAC" 7 "multicast" "$(conf 1.0.0 s5net "$BR" "$(hl "$D")")" CNI_ARGS="MAC=01:00:5e:00:00:01"
	refused "an unknown CNI_ARGS key" 4 "FOO" "$(conf 1.0.0 s5net "$BR" "$(hl "$D")")" CNI_ARGS="FOO=1"
	refused "L2 at 0.2.0" 7 "" "$(conf 0.2.0 s5net "$BR")"
	refused "gateway on VLAN 4094 of a 12-byte bridge name" 7 "longer than 15 bytes" "$(conf 1.0.0 s5net brt456789012 ",\"isGateway\":true,\"vlan\":4094$(hl "$D")")"
	if [ "$VLAN_OK" = no ]; then
		refused "vlan on a kernel without VLAN filtering" 100 "no bridge VLAN filtering" "$(conf 1.0.0 s5net "$BR" ",\"vlan\":100$(hl "$D")")"
	fi
	# Refused after the bridge, the port and IPAM: everything taken back.
	refused "IPAM fails" 11 "pool busy" "$(conf 1.0.0 s5net "$BR" ',"isGateway":true,"ipam":{"type":"failipam"}')"
	# The node's own rules named as ours: the node's chain, and a table of ours taken over.
	ip netns exec "$N" iptables -t nat -N "$(printf 'CNI-%s' "$(printf '%s' s5netc5 | sha512sum | cut -c1-24)")"
	ip netns exec "$N" iptables -t nat -A "CNI-$(printf '%s' s5netc5 | sha512sum | cut -c1-24)" -j RETURN
	BEFORE=$(state "$N")
	refused "ipMasq: the node's own iptables chain of that name" 7 "not the masquerade" \
		"$(conf 1.0.0 s5net "$BR" ",\"isGateway\":true,\"ipMasq\":true$(hl "$D")")" CNI_CONTAINERID=c5
	ip netns exec "$N" nft add table inet cni_plugins_masquerade
	ip netns exec "$N" nft add chain inet cni_plugins_masquerade postrouting '{ type filter hook postrouting priority 0; }'
	BEFORE=$(state "$N")
	refused "ipMasq: the node's own postrouting chain of another type in upstream's table" 100 "nftables" \
		"$(conf 1.0.0 s5net "$BR" ",\"isGateway\":true,\"ipMasq\":true,\"ipMasqBackend\":\"nftables\"$(hl "$D")")"
	ip netns exec "$N" nft add table bridge nat
	ip netns exec "$N" nft add chain bridge nat PREROUTING '{ type filter hook prerouting priority 50; }'
	BEFORE=$(state "$N")
	refused "macspoofchk: the node's own PREROUTING at another priority" 100 "spoof-check" \
		"$(conf 1.0.0 s5net "$BR" ",\"macspoofchk\":true$(hl "$D")")"
	# A bridge of the node's, with its own address: no forceAddress, nothing changed on it.
	ip -n "$N" link add "$BR" type bridge
	ip -n "$N" addr add 10.77.0.254/24 dev "$BR"
	BEFORE=$(state "$N")
	refused "the node's bridge holds another address" 7 "already has an IP address different from 10.77.0.1/24" \
		"$(conf 1.0.0 s5net "$BR" ",\"isGateway\":true$(hl "$D")")"
	on "$N" "$OURS" ADD "$(conf 1.0.0 s5net "$BR" ",\"promiscMode\":true$(hl "$D")")"
	t_ok "the node's bridge, promiscMode: ADD"
	t_jq "the node's bridge is promiscuous, its address kept" "$(ip -n "$N" -j addr show dev "$BR")" \
		'.[0] | [(.flags | index("PROMISC") != null), (.addr_info[] | select(.family == "inet") | .local)] | map(tostring) | join(" ")' \
		"true 10.77.0.254"
	ip netns del "$N"
	T_ENV_NETNS=
fi

# =============================================================================
if section 6; then
	echo "# 6. SIGKILL at every netlink send of ADD, then DEL"
	# What a completed ADD and DEL leave on the node (the bridge, its address, forwarding,
	# the tables upstream leaves) is the state every killed ADD and its DEL must leave.
	killed() { # DESC CONF
		local desc=$1 c=$2 sys n rc kills=0 N P want
		node N
		pod P
		on "$N" "$OURS" ADD "$c" CNI_NETNS="$P_path" CNI_CONTAINERID=k0
		t_ok "$desc: a clean ADD"
		on "$N" "$OURS" DEL "$c" CNI_NETNS="$P_path" CNI_CONTAINERID=k0
		t_ok "$desc: its DEL"
		settle "$N"
		want=$(state "$N")
		for sys in sendto sendmsg; do
			for ((n = 1; n < 200; n++)); do
				printf '%s' "$c" | ip netns exec "$N" env CNI_COMMAND=ADD CNI_CONTAINERID=k$n \
					CNI_NETNS="$P_path" CNI_IFNAME=net1 CNI_PATH="$BIN" \
					strace -qq -o /dev/null -e trace=sendto,sendmsg \
					-e inject="$sys":signal=SIGKILL:when=$n "$OURS" >/dev/null 2>&1
				rc=$?
				[ "$rc" = 137 ] && kills=$((kills + 1))
				on "$N" "$OURS" DEL "$c" CNI_NETNS="$P_path" CNI_CONTAINERID=k$n
				t_ok "$desc: DEL after ADD killed at $sys #$n"
				settle "$N"
				t_eq "$desc: after ADD killed at $sys #$n and DEL, the node as after ADD and DEL" \
					"$want" "$(state "$N")"
				t_eq "$desc: ... the pod holds only lo, no address held" "lo " \
					"$(t_link_names "$P") $(t_store_ips "$T_DIR/s6/s6net")"
				[ "$rc" = 137 ] || break
			done
			t_ne "$desc: the last $sys pass ran to its end" 137 "$rc"
		done
		t_ne "$desc: ADD was killed at some send" 0 "$kills"
		ip netns del "$N"
		ip netns del "$P"
	}
	killed "gateway, masquerade (iptables), spoof check" \
		"$(conf 1.0.0 s6net brtk ",\"isGateway\":true,\"ipMasq\":true,\"macspoofchk\":true$(hl "$T_DIR/s6")")"
	killed "nftables masquerade, dual stack" \
		"$(conf 1.0.0 s6net brtk ",\"isDefaultGateway\":true,\"ipMasq\":true,\"ipMasqBackend\":\"nftables\"$(hl6 "$T_DIR/s6")")"
	killed "L2" "$(conf 1.0.0 s6net brtk)"
fi

# =============================================================================
if section 7 && [ "$VLAN_OK" = no ]; then
	echo "# 7. VLANs: this kernel has no bridge VLAN filtering (its refusal is in 5; the kernel matrix runs 7)"
elif section 7; then
	echo "# 7. VLANs as the kernel holds them"
	node N
	t_name BR brt
	# vlans ID CONF_EXTRA: ADD for container ID; VL = its port's VLANs as "vid:flags" words.
	vlans() {
		local p
		pod p
		on "$N" "$OURS" ADD "$(conf 1.1.0 s7net "$BR" "$2")" CNI_NETNS="$p_path" CNI_CONTAINERID="$1"
		t_ok "[$1] ADD"
		RES=$T_OUT
		# Runs of consecutive VLANs with the same flags as one "min-max:flags" word.
		VL=$(ip netns exec "$N" bridge -j vlan show dev "$(jq -r '.interfaces[1].name' <<<"$RES")" |
			jq -r '[.[0].vlans[] | {v: .vlan, e: (.vlanEnd // .vlan),
				f: ((.flags // []) | map(if . == "Egress Untagged" then "U" else . end) | join(","))}]
			| reduce .[] as $x ([]; if length > 0 and .[-1].e + 1 == $x.v and .[-1].f == $x.f
				then .[-1].e = $x.e else . + [$x] end)
			| map("\(.v)\(if .e != .v then "-\(.e)" else "" end):\(.f)") | join(" ")')
	}
	vlans v1 ',"vlan":100'
	t_eq "vlan 100: the port in 100 alone, untagged, its PVID" "100:PVID,U" "$VL"
	t_eq "the bridge filters VLANs" 1 "$(ip -n "$N" -d -j link show dev "$BR" | jq '.[0].linkinfo.info_data.vlan_filtering')"
	vlans v2 ',"vlan":100,"preserveDefaultVlan":true'
	t_eq "preserveDefaultVlan: VLAN 1 kept (untagged, no longer the PVID)" "1:U 100:PVID,U" "$VL"
	vlans v3 ',"vlanTrunk":[{"minID":200,"maxID":210},{"id":300}]'
	t_eq "a trunk: VLAN 1 native, the ranges tagged" "1:PVID,U 200-210: 300:" "$VL"
	vlans v4 ',"vlan":100,"vlanTrunk":[{"id":100},{"id":4094}]'
	t_eq "a trunk holding the PVID: upstream's order leaves it tagged" "100: 4094:" "$VL"
	vlans v5 ',"vlanTrunk":[{"minID":1,"maxID":4094}]'
	t_eq "every VLAN in one trunk, 1 the native one" "1:PVID,U 2-4094:" "$VL"
	vlans v6 ',"vlanTrunk":[]'
	t_eq "an empty trunk: the default VLAN kept" "1:PVID,U" "$VL"
	vlans v7 ",\"vlan\":7,\"isGateway\":true$(hl "$T_DIR/s7")"
	t_eq "vlan 7 with the gateway: the pod's port in 7" "7:PVID,U" "$VL"
	t_jq "the gateway's interface $BR.7 in the result" "$RES" '[.interfaces[3].name, (.interfaces | length)] | map(tostring) | join(" ")' "$BR.7 4"
	t_jq "$BR.7 holds the gateway address, up" "$(ip -n "$N" -j addr show dev "$BR.7")" \
		'.[0] | [.operstate, (.addr_info[] | select(.family == "inet") | "\(.local)/\(.prefixlen)")] | join(" ")' "UP 10.77.0.1/24"
	GWPORT=$(ip -n "$N" -j link show master "$BR" | jq -r --arg p "$(jq -r '.interfaces[1].name' <<<"$RES")" '[.[] | select(.ifname != $p and (.ifname | startswith("veth")))] | map(.ifname) | .[]' |
		while read -r v; do [ "$(ip netns exec "$N" bridge -j vlan show dev "$v" | jq -r '.[0].vlans[0].vlan')" = 7 ] && echo "$v"; done | head -1)
	t_ne "the gateway's pair has its port on the bridge in VLAN 7" "" "$GWPORT"
	pod pv8
	on "$N" "$OURS" ADD "$(conf 1.1.0 s7net "$BR" ",\"vlan\":7,\"isGateway\":true$(hl "$T_DIR/s7")")" CNI_NETNS="$pv8_path" CNI_CONTAINERID=v8
	t_ok "a second pod in VLAN 7 with the gateway"
	t_eq "the gateway's interface is made once" 1 "$(ip -n "$N" -j link show | jq --arg n "$BR.7" '[.[] | select(.ifname == $n)] | length')"
	t_eq "the pods of VLAN 7 reach their gateway" 0 "$(ip netns exec "$pv8" ping -c1 -W2 10.77.0.1 >/dev/null 2>&1; echo $?)"
	ip netns del "$N"
fi

# =============================================================================
if section 8; then
	echo "# 8. VLANs, ours beside the reference (VLAN filtering: $VLAN_OK)"
	# The four ways a port's VLANs are set (section 7 reads the rest back on its own).
	for key in ',"vlan":100' ',"vlan":100,"preserveDefaultVlan":true' \
		',"vlanTrunk":[{"minID":200,"maxID":210},{"id":300}]' ',"vlan":7,"isGateway":true'; do
		twin "${key#,}" 1.1.0 "$key@IPAM@"
	done
fi

# =============================================================================
if section 9 && have_ref; then
	echo "# 9. the flannel-like chain: bridge + host-local, then upstream's portmap"
	# chain NODE POD BRIDGE_PLUGIN STORE: ADD of both (portmap given bridge's result), the
	# results in CHAIN_RES; DEL in reverse with the last result, as libcni runs a conflist.
	pmc='{"cniVersion":"1.0.0","name":"brchain","type":"portmap","capabilities":{"portMappings":true},"runtimeConfig":{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"},{"hostPort":5353,"containerPort":53,"protocol":"udp"}]}}'
	chain_add() {
		local bc
		bc=$(conf 1.0.0 brchain brtc ",\"isGateway\":true,\"ipMasq\":true$(hl "$4")")
		on "$1" "$3" ADD "$bc" CNI_NETNS="$2"
		t_ok "[chain, $5] bridge ADD"
		CHAIN_BR=$T_OUT
		on "$1" "$T_DIR/ref/portmap" ADD "$(with_prev "$pmc" "$CHAIN_BR")" CNI_NETNS="$2"
		t_ok "[chain, $5] portmap ADD after it"
		CHAIN_RES=$T_OUT
	}
	chain_del() {
		local bc
		bc=$(conf 1.0.0 brchain brtc ",\"isGateway\":true,\"ipMasq\":true$(hl "$4")")
		on "$1" "$T_DIR/ref/portmap" DEL "$(with_prev "$pmc" "$5")" CNI_NETNS="$2"
		t_ok "[chain, $6] portmap DEL"
		on "$1" "$3" DEL "$(with_prev "$bc" "$5")" CNI_NETNS="$2"
		t_ok "[chain, $6] bridge DEL"
	}
	node no; node nr; pod po; pod pr
	chain_add "$no" "$po_path" "$OURS" "$T_DIR/ch-o" ours
	ro=$CHAIN_RES
	chain_add "$nr" "$pr_path" "$REFBR" "$T_DIR/ch-r" upstream
	rr=$CHAIN_RES
	t_eq "[chain] the chain's result as with upstream's bridge" "$(norm_result "$rr")" "$(norm_result "$ro")"
	settle "$no"; settle "$nr"
	t_eq "[chain] the node's state (the bridge's and portmap's rules) as with upstream's bridge" \
		"$(state "$nr")" "$(state "$no")"
	on "$no" "$OURS" CHECK "$(with_prev "$(conf 1.0.0 brchain brtc ",\"isGateway\":true,\"ipMasq\":true$(hl "$T_DIR/ch-o")")" "$ro")" CNI_NETNS="$po_path"
	t_ok "[chain] bridge CHECK with portmap's result"
	chain_del "$no" "$po_path" "$OURS" "$T_DIR/ch-o" "$ro" ours
	chain_del "$nr" "$pr_path" "$REFBR" "$T_DIR/ch-r" "$rr" upstream
	settle "$no"; settle "$nr"
	t_eq "[chain] after the DELs the nodes alike" "$(state "$nr")" "$(state "$no")"
	t_eq "[chain] no masquerade, port mapping or port left" "" \
		"$(state "$no" | grep -E 'CNI-[0-9a-f]|CNI-DN|8080|masquerade comment|"master":"brtc"')"
fi

t_cleanup
t_eq "the machine's links as at start" "$HOST_START" "$(t_links)"
t_summary
