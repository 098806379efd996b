#!/usr/bin/env bash
# Real-kernel tests of the bandwidth meta plugin beside the reference (containernetworking/
# plugins v1.9.1, ../shared/reference/cni-plugins).
#
#   bandwidth.sh PLUGIN
#
# Each "node" is a network namespace standing for the host (the plugin runs in it, as a
# runtime runs it in the host's), with a pod namespace behind a veth pair (nfh0 on the
# node, eth0 in the pod, 10.2.0.1/24 and 10.2.0.5/24). Ours and the reference run the same
# inputs on twin nodes: their output (the ifb's MAC aside) and what they leave in the kernel
# (tc -j of the veth's qdiscs and filters, ip -j of the ifb, tc -j of its qdiscs) must be the
# same. Then: ADD with one and DEL with the other, CHECK, traffic through the tbf qdiscs,
# hostile input (the node's links and qdiscs as before), a node link under the ifb's name,
# GC, STATUS, SIGKILL at every netlink send and write of ADD followed by DEL. Needs root,
# strace; NOT RUN without the reference plugins; exits 77 only when namespaces cannot be made.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/../shared.sh"

[ $# -ge 1 ] || { echo "usage: $0 PLUGIN"; exit 1; }
OURS=$(realpath "$1")
for tool in tc strace; do
	command -v $tool >/dev/null || { echo "FAIL: $tool not found"; exit 1; }
done
t_init
REFDIR=$T_DIR/ref
shared_reference_plugins "$REFDIR" bandwidth || exit 77
REF=$REFDIR/bandwidth
# The reference speaks 0.3.0 and later (version.VersionsStartingFrom("0.3.0")).
VERSIONS=${NETNS_CNI_VERSIONS:-0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
T_ENV_IFNAME=eth0
T_ENV_PATH=$REFDIR
RECORDS=/run/cni-rdma-plugins/bandwidth
# The networks, this run's own: records are the machine's.
NET=nfbw$T_TOK NET2=nfbw2$T_TOK
# A run cut short leaves no record of its networks behind.
t_defer "rm -f '$RECORDS'/*:'$NET' '$RECORDS'/*:'$NET2'"

declare -A POD_OF
node() {
	local n p
	t_name n nfn
	t_name p nfp
	n=$n-$$ p=$p-$$
	ip netns add "$n" || { echo "FAIL: ip netns add $n"; exit 1; }
	t_defer "ip netns del '$n'"
	ip netns add "$p" || { echo "FAIL: ip netns add $p"; exit 1; }
	t_defer "ip netns del '$p'"
	ip -n "$n" link set lo up
	ip -n "$p" link set lo up
	ip -n "$n" link add nfh0 mtu 1450 type veth peer name eth0 netns "$p"
	ip -n "$n" addr add 10.2.0.1/24 dev nfh0
	ip -n "$n" link set nfh0 up
	ip -n "$p" addr add 10.2.0.5/24 dev eth0
	ip -n "$p" link set eth0 up
	POD_OF[$n]=$p
	printf -v "$1" '%s' "$n"
	printf -v "${1}_pod" '%s' "$p"
}

# state NODE: the veth's qdiscs and filters, the ifbs and their qdiscs (indexes, counters,
# the kernel's references and the ifb's MAC aside).
state() {
	local ifb
	{
		ip netns exec "$1" tc -j qdisc show dev nfh0
		ip netns exec "$1" tc -j filter show dev nfh0 ingress
		ip -n "$1" -j -d link show type ifb | jq -c '[.[] | {ifname, mtu, flags, txqlen, operstate, kind: .linkinfo.info_kind}]'
		for ifb in $(ip -n "$1" -j link show type ifb | jq -r '.[].ifname'); do
			ip netns exec "$1" tc -j qdisc show dev "$ifb"
		done
	} 2>&1 | jq -S -c 'walk(if type == "object" then del(.index, .ref, .bind, .refcnt, .ifindex) else . end)' 2>&1
}

# veth_gone NODE: the veth's qdiscs gone, as the chain's interface plugin's DEL takes them
# (the veth with them) after bandwidth's DEL, which leaves them, as upstream's does.
veth_gone() {
	ip netns exec "$1" tc qdisc del dev nfh0 root 2>/dev/null
	ip netns exec "$1" tc qdisc del dev nfh0 ingress 2>/dev/null
}

on() {
	local node=$1 plugin=$2
	shift 2
	T_PLUGIN=$plugin
	T_WRAP=(ip netns exec "$node")
	local wrap=("${T_BASE_WRAP[@]}")
	[ "$plugin" = "$OURS" ] || T_BASE_WRAP=()
	t_cni "$1" "$2" CNI_NETNS="/var/run/netns/${POD_OF[$node]}" "${@:3}"
	T_BASE_WRAP=("${wrap[@]}")
	T_WRAP=()
}

# prev VERSION POD: the interface plugin's result (0.3.x and 0.4.0 with the address's version).
prev() {
	local v=$1 ver=''
	case $v in 0.3.0 | 0.3.1 | 0.4.0) ver='"version":"4",' ;; esac
	printf '{"cniVersion":"%s","interfaces":[{"name":"nfh0"},{"name":"eth0","sandbox":"/var/run/netns/%s"}],"ips":[{%s"address":"10.2.0.5/24","gateway":"10.2.0.1","interface":1}]}' \
		"$v" "$2" "$ver"
}

IN_OUT='"ingressRate":8000000,"ingressBurst":80000,"egressRate":16000000,"egressBurst":160000'
# conf VERSION NODE MEMBERS: a bandwidth config with the node's pod's prevResult.
conf() {
	printf '{"cniVersion":"%s","name":"'"$NET"'","type":"bandwidth"%s,"prevResult":%s}' \
		"$1" "${3:+,$3}" "$(prev "$1" "${POD_OF[$2]}")"
}

# twin DESC VERSION MEMBERS [CID]: ADD on A (ours) and B (the reference), results and
# kernel state alike; CHECK; DEL with ours (and the veth's qdiscs gone with it, veth_gone)
# leaves A as it was before the ADD.
twin() {
	local desc=$1 v=$2 m=$3 cid=${4:-nfc1} before ours_out theirs_out norm
	before=$(state "$A")
	on "$A" "$OURS" ADD "$(conf "$v" "$A" "$m")" CNI_CONTAINERID="$cid"
	t_ok "$desc: ADD"
	ours_out=$T_OUT
	t_eq "$desc: nothing on stderr" "" "$T_ERR"
	on "$B" "$REF" ADD "$(conf "$v" "$B" "$m")" CNI_CONTAINERID="$cid"
	[ "$T_RC" = 0 ] || t_fail "$desc: the reference's ADD" "$(t_last_run)"
	theirs_out=$T_OUT
	# The pod's netns path and the ifb's MAC are the node's own.
	norm='del(.interfaces[]?.mac) | (.interfaces[]? | select(.sandbox) | .sandbox) = "POD"'
	t_eq "$desc: the result is the reference's" "$(jq -cS "$norm" <<<"$theirs_out")" \
		"$(jq -cS "$norm" <<<"$ours_out" 2>&1)"
	t_eq "$desc: the qdiscs, filters and ifb are the reference's" "$(state "$B")" "$(state "$A")"
	if [ "$v" != 0.3.0 ] && [ "$v" != 0.3.1 ]; then
		on "$A" "$OURS" CHECK "$(conf "$v" "$A" "$m")" CNI_CONTAINERID="$cid"
		t_ok "$desc: CHECK"
	fi
	on "$A" "$OURS" DEL "$(conf "$v" "$A" "$m")" CNI_CONTAINERID="$cid"
	t_ok "$desc: DEL"
	t_eq "$desc: DEL deletes the ifb" "" "$(ip -n "$A" -o link show type ifb)"
	veth_gone "$A"
	t_eq "$desc: ... the node as before the ADD once the veth goes" "$before" "$(state "$A")"
	on "$A" "$OURS" DEL "$(conf "$v" "$A" "$m")" CNI_CONTAINERID="$cid"
	t_ok "$desc: DEL again"
	on "$B" "$REF" DEL "$(conf "$v" "$B" "$m")" CNI_CONTAINERID="$cid"
	veth_gone "$B"
	t_eq "$desc: no ifb left by either" "" "$(ip -n "$A" -o link show type ifb; ip -n "$B" -o link show type ifb)"
}

node A
node B
BASE=$(state "$A")

for v in $VERSIONS; do
	twin "[$v ingress and egress]" "$v" "$IN_OUT"
done
twin "[ingress only]" 1.1.0 '"ingressRate":8000000,"ingressBurst":80000'
twin "[egress only]" 1.1.0 '"egressRate":16000000,"egressBurst":160000'
twin "[runtimeConfig.bandwidth]" 1.1.0 '"capabilities":{"bandwidth":true},"runtimeConfig":{"bandwidth":{"ingressRate":1000000,"ingressBurst":10000,"egressRate":2000000,"egressBurst":20000}}'
twin "[top-level keys over runtimeConfig]" 1.1.0 '"egressRate":16000000,"egressBurst":160000,"runtimeConfig":{"bandwidth":{"ingressRate":1000000,"ingressBurst":10000}}'
twin "[a rate past 32 bits: 100 Gbit/s]" 1.1.0 '"ingressRate":100000000000,"ingressBurst":80000000,"egressRate":100000000000,"egressBurst":80000000'
# containerd's "no burst limit" (2^32 - 1 bits) at 1 Mbit/s: a bucket of 4295 s, past what
# tbf holds. Upstream's conversion wraps (on amd64 its low 32 bits); ours gives tbf's largest.
on "$A" "$OURS" ADD "$(conf 1.1.0 "$A" '"ingressRate":1000000,"ingressBurst":4294967295,"egressRate":1000000,"egressBurst":4294967295')" CNI_CONTAINERID=nfnolimit
t_ok "[containerd's burst of 2^32 - 1 bits] ADD"
t_eq "[containerd's burst of 2^32 - 1 bits] nothing on stderr" "" "$T_ERR"
# 2^32 ticks of 64 ns, 274.9 s, at 125000 bytes/s: tc shows the bucket as 34359738 bytes.
t_jq "[containerd's burst of 2^32 - 1 bits] the veth's tbf has tbf's largest bucket" \
	"$(ip netns exec "$A" tc -j qdisc show dev nfh0)" '.[] | select(.kind == "tbf") | .options.burst' 34359738
t_eq "[containerd's burst of 2^32 - 1 bits] nothing on stderr" "" "$T_ERR"
on "$A" "$OURS" DEL "$(conf 1.1.0 "$A" '"ingressRate":1000000,"ingressBurst":4294967295')" CNI_CONTAINERID=nfnolimit
veth_gone "$A"
t_eq "[containerd's burst of 2^32 - 1 bits] DEL: nothing left" "$BASE" "$(state "$A")"
twin "[v1.9.1 has no shapedSubnets: ignored]" 1.1.0 "$IN_OUT"',"shapedSubnets":["10.0.0.0/8"],"unshapedSubnets":["10.1.0.0/16"]'
for m in '' '"ingressRate":0,"ingressBurst":0' '"runtimeConfig":{"bandwidth":{}}' '"ingressRate":null,"runtimeConfig":{"bandwidth":{"ingressRate":1000000,"ingressBurst":10000}}'; do
	on "$A" "$OURS" ADD "$(conf 1.1.0 "$A" "$m")"
	t_ok "[no limit: ${m:-none}] ADD passes prevResult on"
	t_eq "[no limit: ${m:-none}] ... unchanged" "$(jq -cS . <<<"$(prev 1.1.0 "${POD_OF[$A]}")")" "$(jq -cS . <<<"$T_OUT")"
	t_eq "[no limit: ${m:-none}] ... nothing shaped" "$BASE" "$(state "$A")"
done
# Below 0.3.0 the reference refuses the config; ours takes it (no interface in the result).
on "$B" "$REF" ADD "$(printf '{"cniVersion":"0.2.0","name":"'"$NET"'","type":"bandwidth",%s,"prevResult":{"cniVersion":"0.2.0","ip4":{"ip":"10.2.0.5/24"}}}' "$IN_OUT")"
t_err "[0.2.0] the reference refuses it" 1
on "$A" "$OURS" ADD "$(printf '{"cniVersion":"0.2.0","name":"'"$NET"'","type":"bandwidth",%s,"prevResult":{"cniVersion":"0.2.0","ip4":{"ip":"10.2.0.5/24"}}}' "$IN_OUT")"
t_err "[0.2.0] ours: no interface in a 0.2.0 result to find the host side by" 7 "no interfaces provided"

# --- moving a node between the reference and ours, pods live ----------------------
c=$(conf 1.1.0 "$A" "$IN_OUT")
on "$A" "$REF" ADD "$c" CNI_CONTAINERID=nfmv1
on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID=nfmv1
t_ok "ours CHECKs what the reference added"
on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nfmv1
t_ok "ours DELs what the reference added"
t_eq "... its ifb" "" "$(ip -n "$A" -o link show type ifb)"
veth_gone "$A"
on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfmv2
on "$A" "$REF" CHECK "$c" CNI_CONTAINERID=nfmv2
[ "$T_RC" = 0 ] && t_pass "the reference CHECKs what ours added" || t_fail "the reference CHECKs what ours added" "$(t_last_run)"
on "$A" "$REF" DEL "$c" CNI_CONTAINERID=nfmv2
t_eq "the reference DELs the ifb ours added" "" "$(ip -n "$A" -o link show type ifb)"
veth_gone "$A"
t_eq "... nothing left of either" "$BASE" "$(state "$A")"

# --- traffic through the qdiscs ----------------------------------------------------
on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nftr
ifb=$(jq -r '.interfaces[2].name' <<<"$T_OUT")
ip netns exec "$A_pod" ping -c 5 -i 0.2 -q 10.2.0.1 >/dev/null 2>&1
t_eq "the pod's pings reach the node" 0 "$?"
t_jq_true "the pod's egress went through the ifb's tbf" "$(ip netns exec "$A" tc -s -j qdisc show dev "$ifb")" \
	'.[] | select(.kind == "tbf") | .packets >= 5'
t_jq_true "the pod's ingress (the replies) went through the veth's tbf" "$(ip netns exec "$A" tc -s -j qdisc show dev nfh0)" \
	'.[] | select(.kind == "tbf") | .packets >= 5'
on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nftr
veth_gone "$A"

# --- CHECK finds what differs --------------------------------------------------------
on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfck
ip netns exec "$A" tc qdisc change dev nfh0 root handle 1: tbf rate 9mbit burst 10000 latency 25ms
on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID=nfck
t_err "CHECK: another rate on the veth" 103 "Rate doesn't match (ingress)"
on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID=nfother
t_err "CHECK: no ifb for that container" 103
on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nfck
veth_gone "$A"
t_eq "DEL after a hand-made change: nothing left" "$BASE" "$(state "$A")"
on "$A" "$OURS" CHECK "$(jq -c 'del(.prevResult)' <<<"$c")"
t_err "CHECK without prevResult" 7 "must be called as a chained plugin"

# --- hostile input: a clear error, the node as before -----------------------------
links_before=$(ip -n "$A" -j link show | jq -c '[.[] | {ifname, flags, mtu}]')
bad() { # DESC CODE MSG MEMBERS
	on "$A" "$OURS" ADD "$(conf 1.1.0 "$A" "$4")" CNI_CONTAINERID=nfbad
	t_err "$1" "$2" "$3"
	t_eq "$1: qdiscs and ifbs as before" "$BASE" "$(state "$A")"
	t_eq "$1: links as before" "$links_before" "$(ip -n "$A" -j link show | jq -c '[.[] | {ifname, flags, mtu}]')"
}
bad "a rate without a burst" 7 "if rate is set, burst must also be set" '"ingressRate":1000'
bad "a burst without a rate" 7 "if burst is set, rate must also be set" '"egressBurst":1000'
bad "a burst of 4 GiB" 7 "burst cannot be more than 4GB" '"egressRate":1000000,"egressBurst":34359738360'
bad "a rate of 7 bits/s" 7 "less than 8 bits" '"ingressRate":7,"ingressBurst":8000'
bad "a burst of 7 bits" 7 "less than 8 bits" '"egressRate":8000,"egressBurst":7'
bad "a rate whose queue passes 4 GiB (upstream wraps)" 7 "4 GiB or more" '"egressRate":18446744073709551615,"egressBurst":8000000'
# Buckets that hold less than a byte once cut to whole microseconds and ticks: the kernel
# refuses the reference's; ours are refused before.
for rb in 10000000000:80 8000000:8; do
	m="\"ingressRate\":${rb%:*},\"ingressBurst\":${rb#*:}"
	bad "a bucket of less than a byte ($m)" 7 "less than a byte" "$m"
	on "$A" "$REF" ADD "$(conf 1.1.0 "$A" "$m")" CNI_CONTAINERID=nfbad
	t_err "... the reference meets the kernel's refusal" 999 "create qdisc: invalid argument"
	t_eq "... and leaves nothing" "$BASE" "$(state "$A")"
done
# Two bytes at 1 MB/s hold one: both make it.
c2=$(conf 1.1.0 "$A" '"ingressRate":8000000,"ingressBurst":16')
for p in "$OURS" "$REF"; do
	on "$A" "$p" ADD "$c2" CNI_CONTAINERID=nfsmall
	t_ok "a bucket of two bytes at 1 MB/s ($( [ "$p" = "$OURS" ] && echo ours || echo the reference))"
	on "$A" "$p" DEL "$c2" CNI_CONTAINERID=nfsmall
	ip netns exec "$A" tc qdisc del dev nfh0 root 2>/dev/null
done
t_eq "... nothing left" "$BASE" "$(state "$A")"
bad "a negative rate" 6 "ingressRate" '"ingressRate":-8000,"ingressBurst":8000'
bad "a rate as a string" 6 "ingressRate" '"ingressRate":"8000","ingressBurst":8000'
bad "a fractional rate" 6 "egressRate" '"egressRate":8000.5,"egressBurst":8000'
bad "a rate past 2^64" "" "" '"egressRate":18446744073709551616,"egressBurst":8000'
bad "runtimeConfig.bandwidth not an object" 6 "bandwidth" '"runtimeConfig":{"bandwidth":[1]}'
on "$A" "$OURS" ADD "$(jq -c '.prevResult.interfaces = []' <<<"$c")" CNI_CONTAINERID=nfbad
t_err "prevResult without interfaces" 7 "no interfaces provided"
on "$A" "$OURS" ADD "$(jq -c 'del(.prevResult)' <<<"$c")" CNI_CONTAINERID=nfbad
t_err "no prevResult" 7 "must be called as chained plugin"
on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfbad CNI_IFNAME=eth9
t_err "CNI_IFNAME not in the pod" 7 "container interface eth9 has no veth peer"
on "$A" "$OURS" ADD "$(jq -c '.prevResult.interfaces[0].name = "nfzz"' <<<"$c")" CNI_CONTAINERID=nfbad
t_err "prevResult does not name the veth's host side" 7 "no veth peer of container interface found in host ns"
t_eq "... qdiscs and ifbs as before" "$BASE" "$(state "$A")"

# --- a node link under the ifb's name -----------------------------------------------
taken="bwp$(printf '%s' "${NET}nfcol" | sha512sum | cut -c1-12)"
ip -n "$A" link add "$taken" type veth peer name nfcol1
before=$(ip -n "$A" -j -d link show "$taken" | jq -c '.[0] | {ifname, kind: .linkinfo.info_kind}')
on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfcol
t_err "the ifb's name is the node's link: ADD fails" 100 "adding link: $taken"
t_eq "... the veth's tbf undone" "$BASE" "$(state "$A")"
on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nfcol
t_ok "... DEL succeeds"
t_eq "... and leaves the node's link" "$before" "$(ip -n "$A" -j -d link show "$taken" | jq -c '.[0] | {ifname, kind: .linkinfo.info_kind}')"
ip -n "$A" link del "$taken"

# --- GC -------------------------------------------------------------------------
# gc_add VAR CONF CID: an ADD whose ifb stays; the veth's qdiscs go (the next ADD makes its own).
gc_add() {
	on "$A" "$OURS" ADD "$2" CNI_CONTAINERID="$3"
	t_ok "GC: ADD of $3"
	printf -v "$1" '%s' "$(jq -r '.interfaces[2].name' <<<"$T_OUT")"
	veth_gone "$A"
}
gc_add ifb1 "$c" nfg1
gc_add ifb2 "$c" nfg2
gc_add ifb3 "$(jq -c '.name = "'"$NET2"'"' <<<"$c")" nfg3
on "$A" "$OURS" GC '{"cniVersion":"1.1.0","name":"'"$NET"'","type":"bandwidth","cni.dev/valid-attachments":[{"containerID":"nfg1","ifname":"eth0"}]}'
t_ok "GC keeping nfg1"
t_eq "... nfg1's ifb and another network's stay, nfg2's goes" "$(printf '%s\n' "$ifb1" "$ifb3" | sort | paste -sd' ')" \
	"$(ip -n "$A" -j link show type ifb | jq -r '[.[].ifname] | sort | join(" ")')"
t_eq "... its record too" "" "$(ls "$RECORDS" 2>/dev/null | grep "^nfg2:$NET\$")"
on "$A" "$OURS" GC '{"cniVersion":"1.1.0","name":"'"$NET"'","type":"bandwidth","cni.dev/valid-attachments":[]}'
on "$A" "$OURS" GC '{"cniVersion":"1.1.0","name":"'"$NET2"'","type":"bandwidth","cni.dev/valid-attachments":[]}'
t_eq "GC with none valid: no ifb left" "" "$(ip -n "$A" -o link show type ifb)"
t_eq "... no record" "" "$(ls "$RECORDS" 2>/dev/null | grep -E ":($NET|$NET2)\$")"
on "$A" "$OURS" STATUS '{"cniVersion":"1.1.0","name":"'"$NET"'","type":"bandwidth"}'
t_ok "STATUS"
on "$A" "$OURS" STATUS '{"cniVersion":"1.1.0","name":"'"$NET"'","type":"bandwidth","ingressRate":5}'
t_err "STATUS of a config ADD refuses" 7 "if rate is set, burst must also be set"

# --- SIGKILL at every netlink send and write of ADD, then DEL ---------------------
if [ -z "${PLUGIN_WRAPPER:-}" ]; then
	kills=0
	for sys in sendto sendmsg write; do
		for ((n = 1; n < 40; n++)); do
			T_WRAP=(ip netns exec "$A" strace -qq -o /dev/null -e trace="$sys" -e inject="$sys":signal=SIGKILL:when=$n)
			T_PLUGIN=$OURS
			t_cni ADD "$c" CNI_NETNS="/var/run/netns/$A_pod" CNI_CONTAINERID=nfkill
			rc=$T_RC
			T_WRAP=()
			[ "$rc" = 137 ] && kills=$((kills + 1))
			on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nfkill
			t_ok "DEL after ADD killed at $sys #$n"
			t_eq "... no ifb left" "" "$(ip -n "$A" -o link show type ifb)"
			veth_gone "$A"
			t_eq "... the node as before once the veth goes" "$BASE" "$(state "$A")"
			[ "$rc" = 137 ] || break
		done
	done
	t_ne "ADD was killed at some point" 0 "$kills"
	t_eq "no record left by the killed ADDs" "" "$(ls "$RECORDS" 2>/dev/null | grep "^nfkill:$NET\$")"
else
	echo "# SIGKILL section left to the runs without PLUGIN_WRAPPER"
fi

t_summary
