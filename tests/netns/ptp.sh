#!/usr/bin/env bash
# Real-kernel tests of the ptp plugin, run as a runtime runs it: CNI_* environment,
# config on stdin, result or error JSON on stdout.
#
#   ptp.sh PLUGIN [REFERENCE_CNI_DIR]
#
# The plugin works in the node's netns; here every "node" is a netns made for the
# test (p6h...) with an uplink of its own (p6u..., carrying its default route), and
# pods (p6p...), so the machine's own links, addresses and rulesets are never
# touched. Beside ours, upstream v1.9.1's ptp and host-local (../shared/reference/
# cni-plugins, tests/shared.sh) run on a twin node with the same input: results
# compared key by key and the kernel state both leave (ip -d -j link, ip -j addr and
# route of node and pod, nft list ruleset, iptables-save, ip6tables-save, forwarding)
# compared whole, with what the kernel picks (indexes, MACs, the random veth names)
# left out; each then CHECKs and DELs the other's pod. Sections (PTP_SECTIONS picks;
# PTP_REFERENCE=1, meson's "ptp vs upstream" test, runs 1 and 2 and ends as not run
# without ../shared; the default is 3):
#   1. every CNI version, ours beside the reference
#   2. every key, ours beside the reference (both masquerade backends, dual stack, mtu, dns)
#   3. the kernel's facts, CHECK, DEL (twice, without the pod), STATUS, GC, failed ADDs
# Needs root, jq, nft, iptables; exits 77 only when network namespaces cannot be created.
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
for tool in nft iptables-save ip6tables-save sysctl ping; do
	command -v $tool >/dev/null || { echo "FAIL: $tool not found (tests/install-deps.sh test)"; exit 1; }
done

VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
REQUIRE_REF=${PTP_REFERENCE:-0}
if [ "$REQUIRE_REF" = 1 ]; then
	SECTIONS=${PTP_SECTIONS:-1 2}
else
	SECTIONS=${PTP_SECTIONS:-3}
fi
section() { [[ " $SECTIONS " == *" $1 "* ]]; }

# --- CNI_PATH: host-local (upstream's when ../shared has it), a failing IPAM --
BIN=$T_DIR/bin
IPAMLOG=$T_DIR/ipam.log
mkdir -p "$BIN"
T_ENV_PATH=$BIN
refdir=${REFERENCE_PLUGINS:-$(shared_path reference/cni-plugins)}
if [ -f "$refdir/ptp.xz" ] && [ -f "$refdir/host-local.xz" ]; then
	shared_reference_plugins "$T_DIR/ref" ptp host-local
	REFPTP=$T_DIR/ref/ptp
	ln -s "$T_DIR/ref/host-local" "$BIN/host-local"
else
	what="reference plugins (containernetworking/plugins v1.9.1): the comparisons with upstream's ptp"
	[ "$REQUIRE_REF" = 1 ] && shared_not_run "$refdir" reference/cni-plugins "$what"
	if section 1 || section 2; then
		shared_missing "$refdir" reference/cni-plugins "$what"
	fi
	REFPTP=
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
# nogw: an address without a gateway.
cat >"$BIN/nogw" <<EOF
#!/bin/sh
cat >/dev/null
echo "nogw \$CNI_COMMAND \$CNI_CONTAINERID" >>"$IPAMLOG"
[ "\$CNI_COMMAND" = ADD ] || exit 0
printf '{"cniVersion":"1.1.0","ips":[{"address":"10.78.0.5/24"}]}'
EOF
chmod +x "$BIN/failipam" "$BIN/loghl" "$BIN/nogw"
# A PATH without iptables (STATUS and a masquerade through iptables there fail).
mkdir -p "$T_DIR/noipt"
for t in timeout ip valgrind; do
	command -v $t >/dev/null || continue
	printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v $t)" >"$T_DIR/noipt/$t"
	chmod +x "$T_DIR/noipt/$t"
done
: >"$IPAMLOG"

# --- nodes and pods ------------------------------------------------------------
# node VAR: a netns standing for the node: lo up, an uplink veth with 192.0.2.2/24 and
# the default route through it, forwarding off.
node() {
	local name up
	t_name name p6h
	t_name up p6u
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
	# twin nodes would differ in that alone.
	if have_ref; then
		ip netns exec "$name" sh -c 'iptables -t nat -N p6x && iptables -t nat -X p6x &&
			ip6tables -t nat -N p6x && ip6tables -t nat -X p6x' >/dev/null 2>&1
	fi
	printf -v "$1" '%s' "$name"
}

# pod VAR: a pod's netns (VAR_path its path).
pod() {
	local name
	t_name name p6p
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

# What the kernel picks itself is left out: indexes, MACs, timers, lifetimes, link-local
# addresses (made of the MAC), the random veth names.
NORM='walk(if type == "object" then
	with_entries(select(.key | test("^(ifindex|link_index|link_netnsid|address|broadcast|perm_address|valid_life_time|preferred_life_time|id|no)$|timer|_id$") | not))
	else . end)'
LL='map(select(((.dst // .local // "") | startswith("fe80")) | not))'
macs() {
	sed -E 's/\b([0-9a-f]{1,2}:){5}[0-9a-f]{1,2}\b/MAC/g; s/veth[0-9a-f]{8}/VETH/g;
		s/p6u[0-9a-f]+/UPLINK/g; s/p6p[0-9a-f]+/POD/g'
}

# state NS: what a node's (or a pod's) kernel holds, as text to compare.
state() {
	local ns=$1
	{
		echo "links:"
		ip -n "$ns" -d -j link show | jq -S -c "$NORM | .[]" | macs | sort
		echo "addresses:"
		ip -n "$ns" -j addr show | jq -S -c "$NORM | .[] | .addr_info |= $LL" | macs | sort
		echo "routes:"
		{ ip -n "$ns" -j route show table all | jq -S -c "$LL | $NORM | .[]"
		  ip -n "$ns" -6 -j route show table all | jq -S -c "$LL | $NORM | .[]"; } | macs | sort
		echo "nftables:"
		ip netns exec "$ns" nft list ruleset | sed -E 's/counter packets [0-9]+ bytes [0-9]+/counter/'
		echo "iptables:"
		ip netns exec "$ns" iptables-save | grep -v '^#' | sed -E 's/ \[[0-9]+:[0-9]+\]//'
		ip netns exec "$ns" ip6tables-save | grep -v '^#' | sed -E 's/ \[[0-9]+:[0-9]+\]//'
		echo "forwarding: $(ip netns exec "$ns" sysctl -n net.ipv4.ip_forward net.ipv6.conf.all.forwarding | tr '\n' ' ')"
	} 2>&1 | macs
}

# settle NS: an IPv6 address stays tentative until duplicate address detection ends; a
# state read before differs only in that. Waits (at most 3 s).
settle() {
	local i
	for ((i = 0; i < 30; i++)); do
		ip -n "$1" -j addr show | jq -e 'all(.[].addr_info[]; .tentative != true)' >/dev/null && return 0
		sleep 0.1
	done
}

norm_result() { macs <<<"$1" | jq -S -c . 2>/dev/null || echo "not JSON: $1"; }

# conf VERSION NAME EXTRA: a ptp config; EXTRA is JSON members, comma first.
conf() { printf '{"cniVersion":"%s","name":"%s","type":"ptp"%s}' "$1" "$2" "${3:-}"; }
# hl DIR: host-local's section on a store of its own; hl6 DIR: dual stack.
hl() { printf ',"ipam":{"type":"host-local","subnet":"10.77.0.0/24","dataDir":"%s"}' "$1"; }
hl6() { printf ',"ipam":{"type":"host-local","ranges":[[{"subnet":"10.77.0.0/24"}],[{"subnet":"fd00:77::/64"}]],"routes":[{"dst":"0.0.0.0/0"},{"dst":"::/0"}],"dataDir":"%s"}' "$1"; }
with_prev() { jq -c --argjson p "$2" '. + {prevResult: $p}' <<<"$1"; }

have_ref() { [ -n "$REFPTP" ]; }

# twin DESC VERSION EXTRA: the same ADD by ours and by the reference, each on a node and
# pod of its own (IPAM stores of their own), results and kernel states compared; then each
# CHECKs and DELs the other's pod, and what is left is compared and holds no masquerade.
# EXTRA may hold @IPAM@ or @IPAM6@, replaced by host-local on the side's store.
TWIN=0
twin() {
	local desc=$1 v=$2 extra=$3 no nr po pr co cr ro rr eo er so sr
	TWIN=$((TWIN + 1))
	have_ref || return 0
	node no; node nr; pod po; pod pr
	co=$(conf "$v" p6net "$extra") cr=$co
	co=${co//@IPAM@/$(hl "$T_DIR/tw$TWIN-o")} cr=${cr//@IPAM@/$(hl "$T_DIR/tw$TWIN-r")}
	co=${co//@IPAM6@/$(hl6 "$T_DIR/tw$TWIN-o")} cr=${cr//@IPAM6@/$(hl6 "$T_DIR/tw$TWIN-r")}
	on "$no" "$OURS" ADD "$co" CNI_NETNS="$po_path"
	ro=$T_OUT eo=$T_RC
	[ "$eo" = 0 ] && t_eq "[$desc] ours: nothing on stderr" "" "$T_ERR"
	on "$nr" "$REFPTP" ADD "$cr" CNI_NETNS="$pr_path"
	rr=$T_OUT er=$T_RC
	t_eq "[$desc] ADD: ours exits as the reference" "$er" "$eo"
	if [ "$eo" != 0 ] || [ "$er" != 0 ]; then
		t_contains "[$desc] ours fails with error JSON" '"code"' "$ro"
		ip netns del "$no"; ip netns del "$nr"; ip netns del "$po"; ip netns del "$pr"
		return 0
	fi
	t_eq "[$desc] ADD result as the reference's, key by key" "$(norm_result "$rr")" "$(norm_result "$ro")"
	settle "$no"; settle "$nr"; settle "$po"; settle "$pr"
	t_eq "[$desc] the node's kernel state as the reference's" "$(state "$nr")" "$(state "$no")"
	t_eq "[$desc] the pod's kernel state as the reference's" "$(state "$pr")" "$(state "$po")"
	if [[ "$v" != 0.1.0 && "$v" != 0.2.0 && "$v" != 0.3.0 && "$v" != 0.3.1 ]]; then
		on "$nr" "$OURS" CHECK "$(with_prev "$cr" "$rr")" CNI_NETNS="$pr_path"
		t_ok "[$desc] ours CHECKs the reference's pod"
		on "$no" "$REFPTP" CHECK "$(with_prev "$co" "$ro")" CNI_NETNS="$po_path"
		t_ok "[$desc] the reference CHECKs our pod"
	fi
	on "$nr" "$OURS" DEL "$(with_prev "$cr" "$rr")" CNI_NETNS="$pr_path"
	t_ok "[$desc] ours DELs the reference's pod"
	on "$no" "$REFPTP" DEL "$(with_prev "$co" "$ro")" CNI_NETNS="$po_path"
	t_ok "[$desc] the reference DELs our pod"
	settle "$no"; settle "$nr"
	so=$(state "$no") sr=$(state "$nr")
	t_eq "[$desc] after each DELs the other's pod: the same node state" "$sr" "$so"
	t_eq "[$desc] no masquerade and no veth left" "" "$(grep -E 'CNI-[0-9a-f]|[[:space:]]masquerade|VETH' <<<"$so")"
	t_eq "[$desc] the pods hold only lo" "lo lo" "$(t_link_names "$po") $(t_link_names "$pr")"
	ip netns del "$no"; ip netns del "$nr"; ip netns del "$po"; ip netns del "$pr"
}

# =============================================================================
if section 1; then
	echo "# 1. every CNI version, ours beside the reference"
	for v in $VERSIONS; do
		twin "$v" "$v" '@IPAM@'
		twin "$v masquerade" "$v" ',"ipMasq":true@IPAM@'
	done
fi

# =============================================================================
if section 2; then
	echo "# 2. every key, ours beside the reference"
	twin "ipMasq iptables" 1.1.0 ',"ipMasq":true,"ipMasqBackend":"iptables"@IPAM@'
	twin "ipMasq nftables" 1.1.0 ',"ipMasq":true,"ipMasqBackend":"nftables"@IPAM@'
	twin "dual stack, masquerade" 1.1.0 ',"ipMasq":true@IPAM6@'
	twin "dual stack, nftables masquerade" 1.0.0 ',"ipMasq":true,"ipMasqBackend":"nftables"@IPAM6@'
	twin "mtu 9000" 1.1.0 ',"mtu":9000@IPAM@'
	twin "dns of the config" 1.1.0 ',"dns":{"nameservers":["10.1.1.1"],"search":["p6.example"]}@IPAM@'
	twin "ipMasq off, an unknown backend" 1.1.0 ',"ipMasq":false,"ipMasqBackend":"p6"@IPAM@'
	twin "an unknown backend" 1.1.0 ',"ipMasq":true,"ipMasqBackend":"p6"@IPAM@'
	twin "no ipam" 1.1.0 ''
fi

# =============================================================================
if section 3; then
	echo "# 3. the kernel's facts, CHECK, DEL, STATUS, GC, failed ADDs"
	node N
	pod P1
	pod P2
	D=$T_DIR/s3
	C=$(conf 1.1.0 s3net ",\"ipMasq\":true,\"mtu\":1400$(hl "$D")" | jq -c '.ipam.routes = [{"dst":"0.0.0.0/0"}]')
	on "$N" "$OURS" ADD "$C" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_ok "ADD exits 0"
	t_eq "nothing on stderr" "" "$T_ERR"
	R1=$T_OUT
	t_jq "result: the node's end, the pod's; the address on the pod's; gateway .1" "$R1" \
		'[(.interfaces | length), (.interfaces[0].name | test("^veth[0-9a-f]{8}$")), .interfaces[0].sandbox,
		  .interfaces[1].name, .interfaces[1].sandbox, .ips[0].address, .ips[0].gateway, .ips[0].interface]
		  | map(tostring) | join(" ")' \
		"2 true null net1 $P1_path 10.77.0.2/24 10.77.0.1 1"
	VETH1=$(jq -r '.interfaces[0].name' <<<"$R1")
	t_jq "the node's end: up, 10.77.0.1/32, MTU 1400, its MAC the result's" \
		"$(ip -n "$N" -j addr show dev "$VETH1")" \
		'.[0] | [.operstate, (.addr_info[] | select(.family == "inet") | "\(.local)/\(.prefixlen)"), .mtu, .address] | map(tostring) | join(" ")' \
		"UP 10.77.0.1/32 1400 $(jq -r '.interfaces[0].mac' <<<"$R1")"
	t_eq "the node: a host route to the pod through its end" "10.77.0.2 $VETH1 host" \
		"$(ip -n "$N" -j route show 10.77.0.2 | jq -r '.[0] | "\(.dst) \(.dev) \(.scope)"')"
	t_jq "the pod: 10.77.0.2/24, MTU 1400, the result's MAC" "$(ip -n "$P1" -j addr show dev net1)" \
		'.[0] | [(.addr_info[] | select(.family == "inet") | "\(.local)/\(.prefixlen)"), .mtu, .address] | map(tostring) | join(" ")' \
		"10.77.0.2/24 1400 $(jq -r '.interfaces[1].mac' <<<"$R1")"
	t_eq "the pod's routes: the gateway on the link, the subnet and IPAM's default through it, no kernel route" \
		"10.77.0.0/24 via 10.77.0.1 src 10.77.0.2 universe|10.77.0.1 via - src 10.77.0.2 link|default via 10.77.0.1 src null universe|" \
		"$(ip -n "$P1" -j route show dev net1 | jq -r '.[] | "\(.dst) via \(.gateway // "-") src \(.prefsrc) \(.scope // "universe")"' | sort | tr '\n' '|')"
	t_eq "forwarding on" 1 "$(ip netns exec "$N" sysctl -n net.ipv4.ip_forward)"
	t_contains "the masquerade of 10.77.0.2 (iptables, upstream's default)" "-A POSTROUTING -s 10.77.0.2/32" \
		"$(ip netns exec "$N" iptables-save -t nat)"
	t_eq "the pod reaches the gateway and the node's uplink address" "0 0" \
		"$(ip netns exec "$P1" ping -c1 -W2 10.77.0.1 >/dev/null 2>&1; echo -n "$? ")$(ip netns exec "$P1" ping -c1 -W2 192.0.2.2 >/dev/null 2>&1; echo $?)"
	on "$N" "$OURS" ADD "$C" CNI_NETNS="$P2_path" CNI_CONTAINERID=c2
	t_ok "a second pod"
	R2=$T_OUT
	t_jq "it gets .3, the same gateway on an end of its own" "$R2" '[.ips[0].address, .ips[0].gateway] | join(" ")' \
		"10.77.0.3/24 10.77.0.1"
	t_eq "the pods reach each other through the node" 0 \
		"$(ip netns exec "$P1" ping -c1 -W2 10.77.0.3 >/dev/null 2>&1; echo $?)"
	LINKS=$(t_link_names "$N")
	on "$N" "$OURS" ADD "$C" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1b
	t_err "ADD again for a pod that has net1" 100 "already exists"
	t_eq "... the node's links as before" "$LINKS" "$(t_link_names "$N")"
	t_eq "... its address released" "10.77.0.2 10.77.0.3" "$(t_store_ips "$D/s3net")"

	C1=$(with_prev "$C" "$R1")
	on "$N" "$OURS" CHECK "$C1" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_ok "CHECK exits 0"
	on "$N" "$OURS" CHECK "$C1" CNI_NETNS="$P2_path" CNI_CONTAINERID=c1
	t_err "CHECK: another pod's netns than prevResult's" 103 ""
	t_jq "prevResult holds IPAM's default route" "$C1" '.prevResult.routes[0].dst' "0.0.0.0/0"
	ip -n "$P1" route del default
	on "$N" "$OURS" CHECK "$C1" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_err "CHECK: the default route gone" 103 "0.0.0.0/0"
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
	t_eq "DEL: the node's end is gone" 0 "$(ip -n "$N" -j link show | jq --arg v "$VETH1" '[.[] | select(.ifname == $v)] | length')"
	t_eq "DEL: 10.77.0.2's masquerade gone, 10.77.0.3's kept" "10.77.0.3/32" \
		"$(ip netns exec "$N" iptables-save -t nat | sed -nE 's/^-A POSTROUTING -s ([^ ]+) .*/\1/p' | tr '\n' ' ' | sed 's/ $//')"
	t_eq "DEL: host-local released .2" "10.77.0.3" "$(t_store_ips "$D/s3net")"
	on "$N" "$OURS" DEL "$C1" CNI_NETNS="$P1_path" CNI_CONTAINERID=c1
	t_ok "a second DEL exits 0"

	# The pod gone without a DEL: the masquerade goes by its names (upstream leaves it).
	ip netns del "$P2"
	on "$N" "$OURS" DEL "$C" CNI_NETNS="$P2_path" CNI_CONTAINERID=c2
	t_ok "DEL with the netns gone exits 0"
	t_eq "DEL with the netns gone: no masquerade, no veth, no address held" "0 0 " \
		"$(ip netns exec "$N" iptables-save -t nat | grep -c 'CNI-') $(ip -n "$N" -j link show type veth | jq '[.[] | select(.ifname | startswith("veth"))] | length') $(t_store_ips "$D/s3net")"
	on "$N" "$OURS" DEL "$C" CNI_NETNS="" CNI_CONTAINERID=c2
	t_ok "DEL without CNI_NETNS exits 0"

	# Failed ADDs leave nothing: IPAM's refusal, an address without a gateway, the masquerade.
	LINKS=$(t_link_names "$N")
	RULES=$(ip netns exec "$N" iptables-save -t nat | grep -c CNI-)
	on "$N" "$OURS" ADD "$(conf 1.1.0 s3net ',"ipam":{"type":"failipam"}')" CNI_NETNS="$P1_path" CNI_CONTAINERID=c5
	t_err "ADD: IPAM fails, its error passed on" 11 "pool busy"
	t_eq "... the pod holds only lo, the node's links as before" "lo|$LINKS" "$(t_link_names "$P1")|$(t_link_names "$N")"
	: >"$IPAMLOG"
	on "$N" "$OURS" ADD "$(conf 1.1.0 s3net ',"ipam":{"type":"nogw"}')" CNI_NETNS="$P1_path" CNI_CONTAINERID=c6
	t_err "ADD: an address without a gateway" 101 "no gateway"
	t_eq "... IPAM's address released, nothing made" "nogw ADD c6 nogw DEL c6 lo|$LINKS" \
		"$(tr '\n' ' ' <"$IPAMLOG" | sed 's/ $//') $(t_link_names "$P1")|$(t_link_names "$N")"
	on "$N" "$OURS" ADD "$(jq -c '.ipMasqBackend = "iptables"' <<<"$C")" CNI_NETNS="$P1_path" CNI_CONTAINERID=c7 PATH="$T_DIR/noipt"
	t_err "ADD: the masquerade fails (no iptables binary)" 100 "iptables"
	t_eq "... the pair gone, the address released, no rule" "lo|$LINKS||$RULES" \
		"$(t_link_names "$P1")|$(t_link_names "$N")|$(t_store_ips "$D/s3net")|$(ip netns exec "$N" iptables-save -t nat | grep -c CNI-)"
	on "$N" "$OURS" ADD "$(conf 1.1.0 s3net)" CNI_NETNS="$P1_path" CNI_CONTAINERID=c8
	t_err "ADD without ipam refused" 7 "ipam"
	on "$N" "$OURS" ADD "$(conf 1.1.0 s3net ",\"mtu\":20$(hl "$D")")" CNI_NETNS="$P1_path" CNI_CONTAINERID=c8
	t_err "ADD: mtu 20 refused before IPAM" 7 "MTU"
	t_eq "... nothing reserved" "" "$(t_store_ips "$D/s3net")"
	on "$N" "$OURS" DEL "$(conf 1.1.0 s3net ",\"mtu\":20,\"ipMasq\":true,\"ipMasqBackend\":\"p6\"$(hl "$D")")" CNI_NETNS="$P1_path" CNI_CONTAINERID=c8
	t_ok "... the DEL of a config ADD refuses (mtu, backend) succeeds"

	# GC: two pods of the network, one of them not in the list to keep.
	masq_ids() {
		{ ip netns exec "$N" nft list table inet cni_plugins_masquerade 2>/dev/null | grep -o 'id: c[0-9]' | sed 's/id: //'
		  ip netns exec "$N" iptables-save -t nat | grep '^-A POSTROUTING' | grep -o 'id: \\"c[0-9]' | sed 's/.*"//'; } |
			sort -u | tr '\n' ' ' | sed 's/ $//'
	}
	pod P3; pod P4
	for i in 3 4; do
		pp=P${i}_path
		on "$N" "$OURS" ADD "$(jq -c '.ipMasqBackend = "nftables"' <<<"$C")" CNI_NETNS="${!pp}" CNI_CONTAINERID=c$i
		t_ok "GC: ADD c$i (nftables masquerade)"
	done
	t_eq "GC: both masquerades in nftables" "c3 c4" "$(masq_ids)"
	ip netns del "$P4"
	: >"$IPAMLOG"
	on "$N" "$OURS" GC "$(jq -c '.ipam.type = "loghl" | . + {"cni.dev/valid-attachments":[{"containerID":"c3","ifname":"net1"}]}' <<<"$C")"
	t_ok "GC exits 0"
	t_eq "GC: c4's masquerade gone, c3's kept" "c3" "$(masq_ids)"
	t_eq "GC: IPAM's GC run" "loghl GC cnitest" "$(<"$IPAMLOG")"
	on "$N" "$OURS" DEL "$(jq -c '.ipMasqBackend = "nftables"' <<<"$C")" CNI_NETNS="$P3_path" CNI_CONTAINERID=c3
	t_ok "DEL c3"
	t_eq "nothing of c3 left" "" "$(masq_ids)"
	ip netns del "$N"
fi

t_summary
