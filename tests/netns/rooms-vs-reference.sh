#!/usr/bin/env bash
# The rooms against the reference plugins (containernetworking/plugins v1.9.1, static, in
# ../shared/reference/cni-plugins): what upstream's bandwidth, portmap (nftables and
# iptables) and bridge's ipMasq (both) leave in the kernel after an ADD, and what tests/netns/rooms-shapes builds through
# common/tc and common/netfilter with the same parameters, read back with tc -j, ip -j and
# nft list ruleset and iptables-save, must be the same. Each side runs in a fresh netns standing for the
# host, with a pod netns of its own; the names begin with rm.
# Usage: rooms-vs-reference.sh ROOMS_SHAPES   (REFERENCE_PLUGINS: another copy of the reference)
set -uo pipefail
. "$(dirname "$0")/../shared.sh"
shapes=$1
for tool in jq nft tc xz; do
	command -v $tool >/dev/null || { echo "FAIL: $tool is missing (tests/install-deps.sh test)"; exit 1; }
done
if ! unshare --net true 2>/dev/null; then
	echo "SKIP: cannot create a network namespace"
	exit 77
fi
bin=$(mktemp -d)
trap 'rm -rf "$bin"; ip netns del rm-rvr-pod 2>/dev/null' EXIT
shared_reference_plugins "$bin" bandwidth portmap bridge host-local || exit 77
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; printf '%s\n' "$@" | sed 's/^/# /'; }
same() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "ours:" "$2" "the reference's:" "$3"; fi; }

# in_host SIDE CMD...: CMD in a netns standing for the host, made for this call, with a
# veth rm-h (host) / eth0 (pod netns rm-rvr-pod, made anew); prints what CMD prints.
in_host() {
	ip netns del rm-rvr-pod 2>/dev/null
	ip netns add rm-rvr-pod || return 1
	unshare --net bash -c '
		set -e
		ip link set lo up
		ip link add rm-h mtu 1450 type veth peer name rm-c
		ip link set rm-c netns rm-rvr-pod
		ip -n rm-rvr-pod link set rm-c name eth0
		ip -n rm-rvr-pod link set eth0 up
		ip link set rm-h up
		'"$1"
}

# --- bandwidth: 8 Mbit/s in (burst 80 kbit), 16 Mbit/s out (burst 160 kbit) -----------
bw_conf='{"cniVersion":"1.0.0","name":"rmbw","type":"bandwidth",
  "ingressRate":8000000,"ingressBurst":80000,"egressRate":16000000,"egressBurst":160000,
  "prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"rm-h"},
    {"name":"eth0","sandbox":"/run/netns/rm-rvr-pod"}],
    "ips":[{"address":"10.1.0.5/24","interface":1}]}}'
# What the kernel shows: the host link's qdiscs and filters, the ifb and its qdiscs, with
# the numbers the kernel picks (indexes, MACs, the ifb's hashed name) left out.
bw_show='
	ifb=$(ip -j link show type ifb | jq -r ".[0].ifname")
	{ tc -j qdisc show dev rm-h; tc -j filter show dev rm-h ingress;
	  ip -j -d link show "$ifb" | jq "[.[] | {mtu, flags, txqlen, kind: .linkinfo.info_kind, operstate}]";
	  tc -j qdisc show dev "$ifb"; } |
	sed "s/\"$ifb\"/\"IFB\"/g" | jq -S -c "walk(if type == \"object\" then del(.index, .ref, .bind, .refcnt) else . end)"'
theirs=$(in_host "
	echo '$bw_conf' | CNI_COMMAND=ADD CNI_CONTAINERID=rmcid1 CNI_NETNS=/run/netns/rm-rvr-pod \
		CNI_IFNAME=eth0 CNI_PATH=$bin $bin/bandwidth >/dev/null
	$bw_show")
ours=$(in_host "
	$shapes bandwidth rm-h rmifb0 8000000 80000 16000000 160000
	$bw_show")
[ -n "$theirs" ] && ok "the reference bandwidth shapes rm-h" || not_ok "the reference bandwidth shapes rm-h"
same "bandwidth: tbf, ingress, the u32 redirect, the ifb and its tbf as the reference's" "$ours" "$theirs"

# --- portmap (nftables): two mappings, one with a host IP, SNAT --------------------------
pm_conf='{"cniVersion":"1.0.0","name":"rmpm","type":"portmap","backend":"nftables",
  "capabilities":{"portMappings":true},
  "runtimeConfig":{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"},
    {"hostPort":5353,"containerPort":53,"protocol":"udp","hostIP":"192.0.2.1"}]},
  "prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"rm-h"},
    {"name":"eth0","sandbox":"/run/netns/rm-rvr-pod"}],
    "ips":[{"address":"10.1.0.5/24","interface":1}]}}'
theirs=$(in_host "
	echo '$pm_conf' | CNI_COMMAND=ADD CNI_CONTAINERID=rmcid1 CNI_NETNS=/run/netns/rm-rvr-pod \
		CNI_IFNAME=eth0 CNI_PATH=$bin $bin/portmap >/dev/null
	nft list ruleset")
ours=$(in_host "
	$shapes portmap-nft rmcid1 10.1.0.5 tcp:8080:80 udp:5353:53:192.0.2.1
	nft list ruleset")
[ -n "$theirs" ] && ok "the reference portmap (nftables) writes its table" ||
	not_ok "the reference portmap (nftables) writes its table"
same "portmap (nftables): nft list ruleset as the reference's" "$ours" "$theirs"
# --- portmap (iptables, upstream's default): the same mappings -----------------------------
# Its per-container chain is "CNI-DN-" and sha512(name, container ID) in hex, cut to 28.
pm_ipt_conf=$(jq -c 'del(.backend)' <<<"$pm_conf")
dn="CNI-DN-$(printf '%s' rmpmrmcid1 | sha512sum | cut -c1-21)"
ipt_show='iptables-save -t nat | grep -v "^#" | sed "s/ \[[0-9]*:[0-9]*\]//"'
theirs=$(in_host "
	echo '$pm_ipt_conf' | CNI_COMMAND=ADD CNI_CONTAINERID=rmcid1 CNI_NETNS=/run/netns/rm-rvr-pod \
		CNI_IFNAME=eth0 CNI_PATH=$bin $bin/portmap >/dev/null
	$ipt_show")
ours=$(in_host "
	$shapes portmap-ipt $dn rmpm rmcid1 10.1.0.5/24 tcp:8080:80 udp:5353:53:192.0.2.1
	$ipt_show")
grep -q -- "-A $dn " <<<"$theirs" && ok "the reference portmap (iptables) writes $dn" ||
	not_ok "the reference portmap (iptables) writes $dn" "$theirs"
same "portmap (iptables): iptables-save -t nat as the reference's, rule for rule and in order" \
	"$ours" "$theirs"
# --- bridge's ipMasq (nftables, then iptables): 10.1.0.2/24 from host-local, net1 ---------
# common/netfilter/masq.c names the rules as upstream's pkg/ip does (sha512 of the network's
# name and of "<ifname>:<container ID>" for nftables' comment, of name and ID for the chain).
for backend in nftables iptables; do
	br_conf='{"cniVersion":"1.0.0","name":"rmbr","type":"bridge","bridge":"rmbr0",
	  "isGateway":true,"ipMasq":true,"ipMasqBackend":"'$backend'",
	  "ipam":{"type":"host-local","subnet":"10.1.0.0/24","dataDir":"'$bin'/ipam-'$backend'"}}'
	if [ $backend = nftables ]; then
		show='nft list table inet cni_plugins_masquerade'
		mine="$shapes ipmasq-nft rmbr net1 rmcid1 10.1.0.2/24"
	else
		show=$ipt_show
		mine="$shapes ipmasq-ipt rmbr net1 rmcid1 10.1.0.2/24"
	fi
	theirs=$(in_host "
		echo '$br_conf' | CNI_COMMAND=ADD CNI_CONTAINERID=rmcid1 CNI_NETNS=/run/netns/rm-rvr-pod \
			CNI_IFNAME=net1 CNI_PATH=$bin $bin/bridge >/dev/null
		$show")
	ours=$(in_host "
		$mine
		$show")
	grep -q "10.1.0.2" <<<"$theirs" && ok "the reference bridge masquerades 10.1.0.2 ($backend)" ||
		not_ok "the reference bridge masquerades 10.1.0.2 ($backend)" "$theirs"
	same "bridge ipMasq ($backend): as the reference's" "$ours" "$theirs"
done
echo "1..$n"
[ "$failed" = 0 ]
