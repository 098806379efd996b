#!/usr/bin/env bash
# Real-kernel tests of the portmap meta plugin beside the reference (containernetworking/plugins
# v1.9.1, ../shared/reference/cni-plugins), both backends.
#
#   portmap.sh PLUGIN
#
# Each "node" is a network namespace standing for the host (the plugin runs in it, as a
# runtime runs it in the host's), with a pod namespace behind a veth pair: 10.1.0.1/24 and
# fd00:1::1/64 on the node's end, 10.1.0.5/24 and fd00:1::5/64 on the pod's eth0. Ours and the
# reference run the same inputs on twin nodes, and what they leave (their output, iptables-save,
# ip6tables-save and nft list ruleset of the node) must be the same. Then: ADD with one and DEL
# with the other, CHECK, GC, STATUS, traffic through the mappings, hostile input (the node's
# rules as before), collisions with the node's own tables and chains, SIGKILL at every netlink
# send and every process start of ADD followed by DEL. Needs root, iptables, nftables, strace,
# busybox; NOT RUN without the reference plugins; exits 77 only when namespaces cannot be made.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/../shared.sh"

[ $# -ge 1 ] || { echo "usage: $0 PLUGIN"; exit 1; }
OURS=$(realpath "$1")
for tool in iptables-save ip6tables-save nft strace busybox; do
	command -v $tool >/dev/null || { echo "FAIL: $tool not found (tests/install-deps.sh test)"; exit 1; }
done
t_init
REFDIR=$T_DIR/ref
shared_reference_plugins "$REFDIR" portmap || exit 77
REF=$REFDIR/portmap
VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
T_ENV_IFNAME=eth0
T_ENV_PATH=$REFDIR
RECORDS=/run/cni-rdma-plugins/portmap
# The networks, this run's own: records are the machine's.
NET=nfpm$T_TOK NET2=nfpm2$T_TOK
# A run cut short leaves no record of its networks behind.
t_defer "rm -f '$RECORDS'/*:'$NET' '$RECORDS'/*:'$NET2'"

# node VAR: a node netns and its pod (POD_OF[node]), the veth pair between them, addresses,
# routes, forwarding on (a node's).
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
	ip -n "$n" link add nfh0 type veth peer name eth0 netns "$p"
	ip -n "$n" addr add 10.1.0.1/24 dev nfh0
	ip -n "$n" addr add fd00:1::1/64 dev nfh0 nodad
	ip -n "$n" link set nfh0 up
	ip -n "$p" addr add 10.1.0.5/24 dev eth0
	ip -n "$p" addr add fd00:1::5/64 dev eth0 nodad
	ip -n "$p" link set eth0 up
	ip -n "$p" route add default via 10.1.0.1
	ip -n "$p" -6 route add default via fd00:1::1
	ip -n "$n" link add nfd0 type veth peer name nfd1
	ip -n "$n" addr add 192.0.2.1/24 dev nfd0
	ip -n "$n" addr add 2001:db8:a::1/64 dev nfd0 nodad
	ip -n "$n" link set nfd0 up
	ip -n "$n" link set nfd1 up
	ip netns exec "$n" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	POD_OF[$n]=$p
	printf -v "$1" '%s' "$n"
	printf -v "${1}_pod" '%s' "$p"
}

# state NODE: what the plugins write, as the node's tools print it (counters and dates aside).
state() {
	{
		ip netns exec "$1" iptables-save -t nat
		ip netns exec "$1" ip6tables-save -t nat
		ip netns exec "$1" nft list ruleset
	} 2>&1 | grep -v '^#' | sed 's/ \[[0-9]*:[0-9]*\]//; s/counter packets [0-9]* bytes [0-9]*/counter/'
}

# on NODE PLUGIN CMD CONF [VAR=VALUE]...: t_cni with PLUGIN in NODE's netns, its pod as CNI_NETNS.
on() {
	local node=$1 plugin=$2
	shift 2
	T_PLUGIN=$plugin
	T_WRAP=(ip netns exec "$node")
	# The reference is Go: valgrind (PLUGIN_WRAPPER) runs ours only.
	local wrap=("${T_BASE_WRAP[@]}")
	[ "$plugin" = "$OURS" ] || T_BASE_WRAP=()
	# The plugin's own environment, after the checker (which its PATH must still find).
	[ -z "${ON_ENV:-}" ] || T_BASE_WRAP+=(env "$ON_ENV")
	t_cni "$1" "$2" CNI_NETNS="/var/run/netns/${POD_OF[$node]}" "${@:3}"
	T_BASE_WRAP=("${wrap[@]}")
	T_WRAP=()
}

# prev VERSION [V6]: the previous plugin's result as that version writes it (IPv4, or both).
prev() {
	local v=$1 v6=${2:-} ver4='' ver6='' six=''
	case $v in
	0.1.0 | 0.2.0)
		[ -z "$v6" ] || six=',"ip6":{"ip":"fd00:1::5/64"}'
		printf '{"cniVersion":"%s","ip4":{"ip":"10.1.0.5/24","gateway":"10.1.0.1"}%s}' "$v" "$six"
		return ;;
	0.3.0 | 0.3.1 | 0.4.0) ver4='"version":"4",' ver6='"version":"6",' ;;
	esac
	[ -z "$v6" ] || six=",{$ver6\"address\":\"fd00:1::5/64\",\"interface\":1}"
	printf '{"cniVersion":"%s","interfaces":[{"name":"nfh0"},{"name":"eth0","sandbox":"/x"}],"ips":[{%s"address":"10.1.0.5/24","gateway":"10.1.0.1","interface":1}%s]}' \
		"$v" "$ver4" "$six"
}

MAPS='[{"hostPort":8080,"containerPort":80,"protocol":"tcp"},{"hostPort":5353,"containerPort":53,"protocol":"udp","hostIP":"192.0.2.1"},{"hostPort":8085,"containerPort":85,"protocol":"tcp","hostIP":"2001:db8:a::1"},{"hostPort":8086,"containerPort":86,"protocol":"sctp","hostIP":"::"}]'

# conf VERSION BACKEND [EXTRA [V6 [MAPPINGS]]]: a portmap config ("" backend: the default).
conf() {
	local v=$1 backend=$2 extra=${3:-} v6=${4:-} maps=${5:-$MAPS}
	printf '{"cniVersion":"%s","name":"'"$NET"'","type":"portmap",%s"capabilities":{"portMappings":true},"runtimeConfig":{"portMappings":%s}%s,"prevResult":%s}' \
		"$v" "${backend:+\"backend\":\"$backend\",}" "$maps" "${extra:+,$extra}" "$(prev "$v" "$v6")"
}

# twin DESC CONF [CID]: ADD with ours on node A and the reference on node B: the same output,
# the same rules; CHECK (where the version has it) with ours; DEL with ours leaves A as the
# reference's DEL leaves B, and a second DEL changes nothing.
twin() {
	local desc=$1 c=$2 cid=${3:-nfc1} ours_out theirs_out v
	v=$(jq -r .cniVersion <<<"$c")
	on "$A" "$OURS" ADD "$c" CNI_CONTAINERID="$cid"
	t_ok "$desc: ADD"
	ours_out=$T_OUT
	t_eq "$desc: nothing on stderr" "" "$T_ERR"
	on "$B" "$REF" ADD "$c" CNI_CONTAINERID="$cid"
	[ "$T_RC" = 0 ] || t_fail "$desc: the reference's ADD" "$(t_last_run)"
	theirs_out=$T_OUT
	t_eq "$desc: the result is the reference's" "$(jq -cS . <<<"$theirs_out")" \
		"$(jq -cS . <<<"$ours_out" 2>&1)"
	t_eq "$desc: the rules are the reference's" "$(state "$B")" "$(state "$A")"
	if [ "$v" != 0.1.0 ] && [ "$v" != 0.2.0 ] && [ "$v" != 0.3.0 ] && [ "$v" != 0.3.1 ]; then
		on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID="$cid"
		t_ok "$desc: CHECK"
		on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID=nfother
		t_err "$desc: CHECK of a container without rules" 103
	fi
	on "$A" "$OURS" DEL "$c" CNI_CONTAINERID="$cid"
	t_ok "$desc: DEL"
	on "$B" "$REF" DEL "$c" CNI_CONTAINERID="$cid"
	t_eq "$desc: after DEL the rules are the reference's" "$(state "$B")" "$(state "$A")"
	on "$A" "$OURS" DEL "$c" CNI_CONTAINERID="$cid"
	t_ok "$desc: DEL again"
	t_eq "$desc: DEL again changes nothing" "$(state "$B")" "$(state "$A")"
}

node A
node B

# --- every version, both backends, IPv4 and dual stack ----------------------------
for v in $VERSIONS; do
	for be in iptables nftables; do
		twin "[$v $be]" "$(conf "$v" "$be")"
		twin "[$v $be dual stack]" "$(conf "$v" "$be" "" 6)"
	done
done
t_eq "no record is left by the nftables DELs" "" "$(ls "$RECORDS" 2>/dev/null | grep ":$NET\$")"

# --- every key -------------------------------------------------------------------
BIG=$(jq -c '[range(1; 41) | {hostPort: (9000 + .), containerPort: ., protocol: (if . % 3 == 0 then "udp" else "tcp" end)}]' <<<null)
for be in iptables nftables; do
	twin "[$be snat false]" "$(conf 1.1.0 "$be" '"snat":false' 6)"
	twin "[$be 40 mappings: multiport cut at 15]" "$(conf 1.1.0 "$be" "" 6 "$BIG")"
done
CAPS='[{"hostPort":8080,"containerPort":80,"protocol":"TCP"},{"hostPort":8081,"containerPort":81,"protocol":"Udp"}]'
twin "[iptables protocols in capitals]" "$(conf 1.1.0 iptables "" "" "$CAPS")"
# The reference's nftables backend writes "TCP dport" for nft, which refuses it; ours takes
# the protocol in any case, as its iptables backend and iptables do.
on "$B" "$REF" ADD "$(conf 1.1.0 nftables "" "" "$CAPS")" CNI_CONTAINERID=nfcaps
t_err "[nftables protocols in capitals] the reference's nft refuses them" "" "syntax error"
on "$A" "$OURS" ADD "$(conf 1.1.0 nftables "" "" "$CAPS")" CNI_CONTAINERID=nfcaps
t_ok "[nftables protocols in capitals] ours takes them"
t_contains "[nftables protocols in capitals] ... as tcp and udp" "udp dport 8081 dnat to 10.1.0.5:81" \
	"$(ip netns exec "$A" nft list chain ip cni_hostport hostports)"
on "$A" "$OURS" DEL "$(conf 1.1.0 nftables "" "" "$CAPS")" CNI_CONTAINERID=nfcaps
twin "[default backend]" "$(conf 1.1.0 "" "" 6)"
twin "[iptables markMasqBit 5]" "$(conf 1.1.0 iptables '"markMasqBit":5' 6)"
twin "[iptables markMasqBit 31]" "$(conf 1.1.0 iptables '"markMasqBit":31')"
twin "[iptables masqAll]" "$(conf 1.1.0 iptables '"masqAll":true' 6)"
ip netns exec "$A" iptables -t nat -N NF-MARK
ip netns exec "$B" iptables -t nat -N NF-MARK
twin "[iptables externalSetMarkChain]" "$(conf 1.1.0 iptables '"externalSetMarkChain":"NF-MARK"')"
twin "[iptables conditions]" "$(conf 1.1.0 iptables '"conditionsV4":["!","-s","10.9.0.0/16","-i","nfd0"],"conditionsV6":["-s","fd00:9::/64"]' 6)"
twin "[iptables conditions, backend by default]" "$(conf 1.1.0 "" '"conditionsV4":["-d","192.0.2.1"]')"
twin "[nftables conditions]" "$(conf 1.1.0 nftables '"conditionsV4":["ip","saddr","!=","10.9.0.0/16","iifname","nfd0"],"conditionsV6":["ip6 daddr 2001:db8::/32","meta oifname != \"nfh0\"","tcp sport 1024"]' 6)"

# --- moving a node between the reference and ours, pods live ----------------------
for be in iptables nftables; do
	c=$(conf 1.1.0 $be "" 6)
	# The shared part (an ADD renews its jumps) as this config makes it.
	on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfmv0
	on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nfmv0
	before=$(state "$A")
	on "$A" "$REF" ADD "$c" CNI_CONTAINERID=nfmv1
	on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfmv2
	on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID=nfmv1
	t_ok "[$be] ours CHECKs what the reference added"
	on "$A" "$REF" CHECK "$c" CNI_CONTAINERID=nfmv2
	t_ok "[$be] the reference CHECKs what ours added"
	on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nfmv1
	t_ok "[$be] ours DELs what the reference added"
	on "$A" "$REF" DEL "$c" CNI_CONTAINERID=nfmv2
	[ "$T_RC" = 0 ] || t_fail "[$be] the reference DELs what ours added" "$(t_last_run)"
	t_eq "[$be] reference ADD + our DEL, our ADD + the reference's DEL: nothing left" \
		"$before" "$(state "$A")"
done

# --- traffic through the mappings -------------------------------------------------
# busybox httpd in the pod on 80 (IPv4 and IPv6): reached at the node's addresses on 8080,
# from the node itself, from the pod (hairpin: masqueraded) and from 127.0.0.1 (route_localnet).
mkdir -p "$T_DIR/www"
echo nfok >"$T_DIR/www/f"
ip netns exec "$A_pod" busybox httpd -f -p 80 -h "$T_DIR/www" &
t_defer "kill $!"
# fetch NS HOST PORT: the file through an HTTP/1.0 GET (bash's /dev/tcp: busybox's wget
# looks names up, which its static build cannot).
fetch() {
	ip netns exec "$1" timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1" && printf "GET /f HTTP/1.0\r\n\r\n" >&3 &&
		tail -n 1 <&3' "$2" "$3" 2>/dev/null
}
for be in iptables nftables; do
	c=$(conf 1.1.0 $be "" 6)
	on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nftr
	t_eq "[$be] the node reaches the pod through 192.0.2.1:8080" nfok "$(fetch "$A" 192.0.2.1 8080)"
	t_eq "[$be] ... and through 127.0.0.1:8080 (route_localnet, masquerade)" nfok "$(fetch "$A" 127.0.0.1 8080)"
	t_eq "[$be] the pod reaches itself through 10.1.0.1:8080 (hairpin)" nfok "$(fetch "$A_pod" 10.1.0.1 8080)"
	t_eq "[$be] the node reaches the pod through [2001:db8:a::1]:8080" nfok "$(fetch "$A" 2001:db8:a::1 8080)"
	t_eq "[$be] route_localnet is on for the pod's host link" 1 \
		"$(ip netns exec "$A" cat /proc/sys/net/ipv4/conf/nfh0/route_localnet)"
	on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nftr
	t_eq "[$be] after DEL 192.0.2.1:8080 reaches nothing" "" "$(fetch "$A" 192.0.2.1 8080)"
	ip netns exec "$A" sh -c 'echo 0 >/proc/sys/net/ipv4/conf/nfh0/route_localnet'
done
on "$A" "$OURS" ADD "$(conf 1.1.0 nftables '"snat":false')" CNI_CONTAINERID=nftr
t_eq "snat false sets no route_localnet" 0 "$(ip netns exec "$A" cat /proc/sys/net/ipv4/conf/nfh0/route_localnet)"
on "$A" "$OURS" DEL "$(conf 1.1.0 nftables '"snat":false')" CNI_CONTAINERID=nftr

# --- UDP: conntrack entries made before the mapping are deleted --------------------
for be in iptables nftables; do
	ip netns exec "$A" bash -c 'echo x >/dev/udp/192.0.2.1/5300' 2>/dev/null
	before_ct=$(ip netns exec "$A" cat /proc/net/nf_conntrack 2>/dev/null | grep -c 'dport=5300')
	on "$A" "$OURS" ADD "$(conf 1.1.0 $be "" "" '[{"hostPort":5300,"containerPort":53,"protocol":"udp"}]')" CNI_CONTAINERID=nfct
	t_ok "[$be] ADD of a UDP mapping"
	t_eq "[$be] there was a conntrack entry of the port before" 1 "$before_ct"
	t_eq "[$be] its port's conntrack entries are gone" 0 \
		"$(ip netns exec "$A" cat /proc/net/nf_conntrack | grep -c 'dport=5300')"
	on "$A" "$OURS" DEL "$(conf 1.1.0 $be "" "" '[{"hostPort":5300,"containerPort":53,"protocol":"udp"}]')" CNI_CONTAINERID=nfct
done

# --- without mappings, or as the first plugin ---------------------------------------
base=$(state "$A")
on "$A" "$OURS" ADD "$(conf 1.1.0 nftables "" "" '[]')"
t_ok "no mappings: ADD passes prevResult on"
t_eq "... unchanged" "$(jq -cS . <<<"$(prev 1.1.0)")" "$(jq -cS . <<<"$T_OUT")"
on "$A" "$OURS" ADD '{"cniVersion":"1.1.0","name":"'"$NET"'","type":"portmap","runtimeConfig":{"portMappings":[{"hostPort":1,"containerPort":1,"protocol":"tcp"}]}}'
t_err "no prevResult: refused" 7 "must be called as chained plugin"
on "$A" "$OURS" CHECK '{"cniVersion":"1.1.0","name":"'"$NET"'","type":"portmap"}'
t_err "CHECK without prevResult" 7 "Required prevResult missing"
t_eq "nothing written" "$base" "$(state "$A")"

# --- hostile input: a clear error, the node's rules as before ---------------------
ip netns exec "$A" iptables -t nat -A POSTROUTING -s 10.99.0.0/16 -j MASQUERADE
ip netns exec "$A" nft add table inet nfnode
ip netns exec "$A" nft add chain inet nfnode c '{ type filter hook input priority 0; }'
ip netns exec "$A" nft add rule inet nfnode c tcp dport 22 accept
base=$(state "$A")
bad() { # DESC CODE MSG EXTRA-KEYS [MAPPINGS] [BACKEND]
	on "$A" "$OURS" ADD "$(conf 1.1.0 "${6-nftables}" "$4" 6 "${5:-$MAPS}")" CNI_CONTAINERID=nfbad
	t_err "$1" "$2" "$3"
	t_eq "$1: the node's rules as before" "$base" "$(state "$A")"
}
bad "host port 0" 7 "Invalid host port number: 0" "" '[{"hostPort":0,"containerPort":80,"protocol":"tcp"}]'
bad "host port 70000" 7 "Invalid host port number: 70000" "" '[{"hostPort":70000,"containerPort":80,"protocol":"tcp"}]'
bad "container port -1" 7 "Invalid container port number: -1" "" '[{"hostPort":80,"containerPort":-1,"protocol":"tcp"}]'
bad "a port as a string" 6 "hostPort" "" '[{"hostPort":"80","containerPort":80,"protocol":"tcp"}]'
bad "a port of 2^64" 7 "hostPort" "" '[{"hostPort":18446744073709551616,"containerPort":80,"protocol":"tcp"}]'
bad "protocol icmp" 7 'protocol "icmp"' "" '[{"hostPort":80,"containerPort":80,"protocol":"icmp"}]'
bad "no protocol" 7 'protocol ""' "" '[{"hostPort":80,"containerPort":80}]'
bad "a hostIP that is no address" 7 'hostIP "192.0.2.300"' "" '[{"hostPort":80,"containerPort":80,"protocol":"tcp","hostIP":"192.0.2.300"}]'
bad "a mapping that is not an object" 6 "portMappings[0]" "" '["80:80"]'
bad "portMappings not a list" 6 "portMappings" "" '{"hostPort":80}'
bad "markMasqBit 32" 7 "MasqMarkBit must be between 0 and 31" '"markMasqBit":32' "" iptables
bad "markMasqBit and externalSetMarkChain" 7 "Cannot specify externalSetMarkChain and markMasqBit" \
	'"markMasqBit":3,"externalSetMarkChain":"X"' "" iptables
bad "externalSetMarkChain with a blank" 7 "not an iptables chain name" '"externalSetMarkChain":"A B"' "" iptables
bad "externalSetMarkChain of 29 characters" 7 "not an iptables chain name" \
	'"externalSetMarkChain":"ABCDEFGHIJKLMNOPQRSTUVWXYZABC"' "" iptables
bad "externalSetMarkChain that does not exist" 100 "iptables-restore" '"externalSetMarkChain":"NF-NOPE"' "" iptables
bad "backend foo" 7 'unrecognized backend "foo"' "" "" foo
bad "nftables conditions with the iptables backend" 7 \
	"iptables backend was requested but configuration contains nftables-specific options [conditionsV4]" \
	'"conditionsV4":["ip","saddr","10.0.0.1"]' "" iptables
bad "externalSetMarkChain with the nftables backend" 7 "iptables-specific options [externalSetMarkChain]" \
	'"externalSetMarkChain":"NF-MARK"'
bad "a condition with a newline (nft would run a second command)" 7 "control character" \
	'"conditionsV4":["ip saddr 10.0.0.1\nflush ruleset"]'
bad "an iptables condition with a newline" 7 "control character" '"conditionsV4":["-s","10.0.0.1\nCOMMIT"]' "" iptables
bad "an nft condition ours does not read" 7 "not a condition ours reads" '"conditionsV4":["ct","state","new"]'
bad "an IPv6 address in conditionsV4" 7 "an IPv4 address or prefix expected" '"conditionsV4":["ip","saddr","fd00::1"]'
bad "an interface name wildcard" 7 "no wildcard" '"conditionsV4":["iifname","eth*"]'
bad "a condition of 64 KiB" 7 "longer than 255 bytes" "\"conditionsV4\":[\"$(head -c 65536 /dev/zero | tr '\0' a)\"]"
bad "an iptables condition iptables refuses" 100 "iptables-restore" '"conditionsV4":["--no-such-option"]' "" iptables
MANY=$(jq -c '[range(0; 5000) | {hostPort: (1 + . % 60000), containerPort: 80, protocol: "tcp"}]' <<<null)
bad "5000 mappings" 7 "5000 mappings, at most 4096" "" "$MANY"
bad "5000 mappings (iptables)" 7 "5000 mappings, at most 4096" "" "$MANY" iptables
on "$A" "$OURS" ADD "$(conf 1.1.0 nftables)" CNI_CONTAINERID='../x'
t_err "a container ID with a slash" 4
t_eq "a container ID with a slash: the node's rules as before" "$base" "$(state "$A")"

# --- thousands of mappings ---------------------------------------------------------
K4=$(jq -c '[range(0; 4000) | {hostPort: (10000 + .), containerPort: 80, protocol: (if . % 2 == 0 then "tcp" else "udp" end)}]' <<<null)
for be in nftables iptables; do
	on "$A" "$OURS" ADD "$(conf 1.1.0 $be "" 6 "$K4")" CNI_CONTAINERID=nfk4
	t_ok "[$be] 4000 mappings, both families"
	if [ $be = nftables ]; then
		t_eq "[$be] 4000 DNAT rules a family" "4000 4000" \
			"$(ip netns exec "$A" nft list chain ip cni_hostport hostports | grep -c dnat) $(ip netns exec "$A" nft list chain ip6 cni_hostport hostports | grep -c dnat)"
	else
		t_eq "[$be] 12000 rules in the container's chain, 268 entry rules (15 ports each)" "12000 268" \
			"$(ip netns exec "$A" iptables -t nat -S | grep -c '^-A CNI-DN-') $(ip netns exec "$A" iptables -t nat -S CNI-HOSTPORT-DNAT | grep -c 'dnat name')"
	fi
	on "$A" "$OURS" CHECK "$(conf 1.1.0 $be "" 6 "$K4")" CNI_CONTAINERID=nfk4
	t_ok "[$be] CHECK of 4000 mappings"
	on "$A" "$OURS" DEL "$(conf 1.1.0 $be "" 6 "$K4")" CNI_CONTAINERID=nfk4
	t_ok "[$be] DEL of 4000 mappings"
	t_eq "[$be] nothing of them left" "$base" "$(state "$A")"
done

# --- the node's own tables and chains under upstream's names ------------------------
ip netns exec "$A" nft delete table ip cni_hostport
ip netns exec "$A" nft add table ip cni_hostport
ip netns exec "$A" nft add chain ip cni_hostport prerouting '{ type filter hook prerouting priority 0; }'
ip netns exec "$A" nft add rule ip cni_hostport prerouting tcp dport 7 drop
collided=$(state "$A")
on "$A" "$OURS" ADD "$(conf 1.1.0 nftables)" CNI_CONTAINERID=nfcol
t_err "[nftables] the node's cni_hostport has a filter chain named prerouting" 100 \
	"add chain ip cni_hostport prerouting: Operation not supported"
t_eq "[nftables] ... nothing changed" "$collided" "$(state "$A")"
on "$A" "$OURS" DEL "$(conf 1.1.0 nftables)" CNI_CONTAINERID=nfcol
t_ok "[nftables] ... DEL"
t_eq "[nftables] ... DEL leaves the node's table" "$collided" "$(state "$A")"
ip netns exec "$A" nft delete table ip cni_hostport
ip netns exec "$A" iptables -t nat -N CNI-HOSTPORT-DNAT
ip netns exec "$A" iptables -t nat -A CNI-HOSTPORT-DNAT -p tcp --dport 7 -j RETURN
collided=$(state "$A")
on "$A" "$OURS" ADD "$(conf 1.1.0 iptables)" CNI_CONTAINERID=nfcol
t_ok "[iptables] the node has a CNI-HOSTPORT-DNAT chain with a rule of its own: ADD"
on "$A" "$OURS" DEL "$(conf 1.1.0 iptables)" CNI_CONTAINERID=nfcol
t_ok "[iptables] ... DEL"
t_contains "[iptables] ... the node's rule stays" "-A CNI-HOSTPORT-DNAT -p tcp -m tcp --dport 7 -j RETURN" "$(state "$A")"
ip netns exec "$A" iptables -t nat -N "$(printf 'CNI-DN-%s' "$(printf '%s' "${NET}nfcol2" | sha512sum | cut -c1-21)")"
on "$A" "$OURS" ADD "$(conf 1.1.0 iptables)" CNI_CONTAINERID=nfcol2
t_ok "[iptables] the container's chain is there already (empty): ADD fills it, as upstream"
on "$A" "$OURS" CHECK "$(conf 1.1.0 iptables)" CNI_CONTAINERID=nfcol2
t_ok "[iptables] ... CHECK"
on "$A" "$OURS" DEL "$(conf 1.1.0 iptables)" CNI_CONTAINERID=nfcol2
ip netns exec "$A" iptables -t nat -F CNI-HOSTPORT-DNAT
base=$(state "$A")

# --- GC -------------------------------------------------------------------------
gc() { # BACKEND VALID-IDS...
	local be=$1 list=""
	shift
	for id in "$@"; do list+="${list:+,}{\"containerID\":\"$id\",\"ifname\":\"eth0\"}"; done
	on "$A" "$OURS" GC "{\"cniVersion\":\"1.1.0\",\"name\":\"$NET\",\"type\":\"portmap\",\"backend\":\"$be\",\"cni.dev/valid-attachments\":[$list]}"
}
for be in iptables nftables; do
	c=$(conf 1.1.0 $be "" 6)
	other=$(jq -c '.name = "'"$NET2"'"' <<<"$c")
	on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfg0
	on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nfg0
	base=$(state "$A")
	on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfg1
	on "$A" "$OURS" ADD "$c" CNI_CONTAINERID=nfg2
	[ $be = iptables ] && on "$A" "$REF" ADD "$c" CNI_CONTAINERID=nfg3
	on "$A" "$OURS" ADD "$other" CNI_CONTAINERID=nfg4
	gc $be nfg1
	t_ok "[$be] GC keeping nfg1"
	on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID=nfg1
	t_ok "[$be] ... nfg1's mappings stay"
	on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID=nfg2
	t_err "[$be] ... nfg2's are gone" 103
	if [ $be = iptables ]; then
		on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID=nfg3
		t_err "[$be] ... the reference's nfg3's are gone too" 103
	fi
	on "$A" "$OURS" CHECK "$other" CNI_CONTAINERID=nfg4
	t_ok "[$be] ... another network's container stays"
	gc $be
	on "$A" "$OURS" CHECK "$c" CNI_CONTAINERID=nfg1
	t_err "[$be] GC with none valid: nfg1's are gone" 103
	on "$A" "$OURS" DEL "$other" CNI_CONTAINERID=nfg4
	t_eq "[$be] GC and DEL leave nothing" "$base" "$(state "$A")"
done
on "$A" "$OURS" ADD "$(conf 1.1.0 nftables)" CNI_CONTAINERID=nfg5
on "$A" "$OURS" ADD "$(jq -c '.name = "'"$NET2"'"' <<<"$(conf 1.1.0 nftables)")" CNI_CONTAINERID=nfg5
gc nftables
on "$A" "$OURS" CHECK "$(jq -c '.name = "'"$NET2"'"' <<<"$(conf 1.1.0 nftables)")" CNI_CONTAINERID=nfg5
t_ok "[nftables] GC leaves the rules of a container another network still has"
t_eq "[nftables] ... and forgets its record of this network" "nfg5:$NET2" "$(ls "$RECORDS" | grep -E "^nfg5:($NET|$NET2)\$")"
on "$A" "$OURS" DEL "$(jq -c '.name = "'"$NET2"'"' <<<"$(conf 1.1.0 nftables)")" CNI_CONTAINERID=nfg5
t_eq "[nftables] ... and its DEL takes them" "$base" "$(state "$A")"

# --- STATUS ---------------------------------------------------------------------
for be in iptables nftables; do
	on "$A" "$OURS" STATUS "{\"cniVersion\":\"1.1.0\",\"name\":\"$NET\",\"type\":\"portmap\",\"backend\":\"$be\"}"
	t_ok "[$be] STATUS"
done
ON_ENV=PATH=/nonexistent on "$A" "$OURS" STATUS '{"cniVersion":"1.1.0","name":"'"$NET"'","type":"portmap","backend":"iptables"}'
t_err "STATUS without an iptables binary" 50 "portmap cannot write rules"
on "$A" "$OURS" STATUS '{"cniVersion":"1.0.0","name":"'"$NET"'","type":"portmap"}'
t_err "STATUS at 1.0.0" 1

# --- SIGKILL at every process start and netlink send of ADD, then DEL -------------
killed() { # BACKEND
	local be=$1 c sys n rc kills=0
	c=$(conf 1.1.0 "$be" "" 6)
	for sys in clone3 sendmsg sendto write; do
		for ((n = 1; n < 60; n++)); do
			T_WRAP=(ip netns exec "$A" strace -qq -o /dev/null -e trace="$sys" -e inject="$sys":signal=SIGKILL:when=$n)
			T_PLUGIN=$OURS
			t_cni ADD "$c" CNI_NETNS="/var/run/netns/$A_pod" CNI_CONTAINERID=nfkill
			rc=$T_RC
			T_WRAP=()
			[ "$rc" = 137 ] && kills=$((kills + 1))
			on "$A" "$OURS" DEL "$c" CNI_CONTAINERID=nfkill
			t_ok "[$be] DEL after ADD killed at $sys #$n"
			t_eq "[$be] ... nothing of the container left" "$killbase" "$(state "$A")"
			[ "$rc" = 137 ] || break
		done
	done
	t_ne "[$be] ADD was killed at some point" 0 "$kills"
}
# Under a checker (PLUGIN_WRAPPER: valgrind) strace would count the checker's calls: the
# kills run in the plain runs (and under the sanitizers).
[ -z "${PLUGIN_WRAPPER:-}" ] || { echo "# SIGKILL section left to the runs without PLUGIN_WRAPPER"; t_summary; }
for be in iptables nftables; do
	on "$A" "$OURS" ADD "$(conf 1.1.0 $be "" 6)" CNI_CONTAINERID=nfkill0
	on "$A" "$OURS" DEL "$(conf 1.1.0 $be "" 6)" CNI_CONTAINERID=nfkill0
	killbase=$(state "$A")
	killed $be
done
t_eq "no record left by the killed ADDs" "" "$(ls "$RECORDS" 2>/dev/null | grep "^nfkill:$NET\$")"

t_summary
