#!/usr/bin/env bash
# Tests of the host-local IPAM plugin, run as an interface plugin runs it (CNI_*
# environment, config on stdin), ours alone and beside the reference host-local of
# containernetworking/plugins v1.9.1, on one store.
#
#   host-local.sh PLUGIN
#
# Our macvlan (pods live, section 4) comes from MACVLAN_BIN (default: beside PLUGIN's
# build directory). The reference comes from ../shared/reference/cni-plugins (t_ref191).
# 1. ours alone: the result at every version, the store's bytes and modes, round-robin,
#    exhaustion, requested addresses (IP=, args.cni.ips, runtimeConfig.ips), ranges and
#    range sets, IPv6, routes, resolvConf, CHECK, DEL, GC, STATUS.
# 2. beside the reference: the same configs on stores of their own: the same results,
#    the same files (names, bytes, modes), the same error messages (codes differ: upstream
#    answers 999 to everything; only what must differ is normalized, see below).
# 3. one store, both binaries, in turn and at once: each DELs and CHECKs what the other
#    ADDed, round-robin continues across them, 40 ADDs of both at once (no address
#    twice), a /28 filled by both at once (exactly its 13 addresses handed out), GC.
# 4. pods live: our macvlan in pods with host-local as IPAM, the binary switched between
#    ours and the reference and back while pods hold addresses.
# 5. SIGKILL at each system call of ADD (strace): the following DEL (ours, and the
#    reference's) leaves the store with no file of the attachment, and no stray file.
# 6. hostile input: dataDir outside the node's state roots, relative, with "..", inside
#    the suite's own state, a link on the way, a link or FIFO in the store, resolvConf
#    outside or through a link out, a FIFO, a huge file; nothing made outside.
# Expected differences (each asserted where it shows, listed in docs/host-local.md):
#   - error codes: upstream 999 everywhere; ours 7 (config), 6 (JSON type), 4 (CNI_ARGS),
#     103 (CHECK), 110 (no address left), 111 (requested address held), 11 (lock held);
#     error JSON carries "cniVersion";
#   - results at 0.1.0/0.2.0: upstream adds "dns": {} where ours has none to give;
#   - dataDir/resolvConf outside the node's directories: ours refuses (code 7);
#   - STATUS and GC: upstream does nothing (v1.9.1 has neither); ours reports an exhausted
#     set (code 50) and releases addresses no valid attachment holds.
# Needs root (strace for section 5); exits 77 only when network namespaces cannot be
# created, or (after sections 1 to 6 of ours alone) when the reference is not there.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if [ $# -lt 1 ]; then
	echo "usage: $0 PLUGIN"
	exit 1
fi
OURS=$(realpath "$1")
MACVLAN=$(realpath "${MACVLAN_BIN:-$(dirname "$1")/../../plugins/macvlan/macvlan}")
for b in "$OURS" "$MACVLAN"; do
	[ -x "$b" ] || { echo "FAIL: $b is not executable"; exit 1; }
done

t_init

VERSIONS=${NETNS_CNI_VERSIONS:-0.1.0 0.2.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0}
T_PLUGIN=$OURS
T_ENV_IFNAME=eth0
T_ENV_CONTAINERID=hl-c1
T_ENV_NETNS=/var/run/netns/hl-none
T_ENV_PATH=/nonexistent

# The node's settings: state roots and resolv.conf directories of this test's own.
ROOT=$T_DIR/state
ETC=$T_DIR/etc
mkdir -p "$ROOT" "$ETC" "$T_DIR/nvipam" "$T_DIR/log"
printf '{"logDirs": ["%s"], "stateDirs": ["%s"], "stateRoots": ["%s"], "resolvConfDirs": ["%s"]}\n' \
	"$T_DIR/log" "$T_DIR/nvipam" "$ROOT" "$ETC" >"$T_DIR/node-settings.json"
chmod 0600 "$T_DIR/node-settings.json"
export CNI_RDMA_PLUGINS_CONF=$T_DIR/node-settings.json
printf 'nameserver 10.80.0.53\nnameserver fd80::53\n# comment\ndomain example.net\nsearch a.example b.example\noptions ndots:2 rotate\n' \
	>"$ETC/resolv.conf"

REFBIN=$T_DIR/ref
HAVE_REF=0
# Not in a subshell: a reference that does not match its sum ends the test.
if t_ref191 "$REFBIN" host-local >"$T_DIR/ref-note"; then
	HAVE_REF=1
	REF=$REFBIN/host-local
fi
t_slurp ref_note "$T_DIR/ref-note"

# conf VERSION DATADIR IPAM-MEMBERS [TOP-MEMBERS]: a config naming host-local.
conf() {
	printf '{"cniVersion":"%s","name":"hlnet","type":"macvlan","ipam":{"type":"host-local","dataDir":"%s"%s}%s}' \
		"$1" "$2" "$3" "${4:-}"
}
SUBNET=',"subnet":"10.80.0.0/24"'
DUAL=',"ranges":[[{"subnet":"10.80.0.0/24","rangeStart":"10.80.0.10","rangeEnd":"10.80.0.20"}],[{"subnet":"fd80::/64"}]]'

# files DIR: "name:mode:content" of each file of a store (content with \r\n as "\r\n"),
# "name:type" of anything else (a link, a FIFO: never opened).
files() {
	local f
	[ -d "$1" ] || { echo "none"; return; }
	for f in "$1"/* "$1"/.[!.]*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		if [ -L "$f" ] || [ ! -f "$f" ]; then
			printf '%s:%s\n' "${f##*/}" "$(stat -c %F "$f")"
			continue
		fi
		printf '%s:%s:%s\n' "${f##*/}" "$(stat -c %a "$f")" "$(sed -z 's/\r/\\r/g; s/\n/\\n/g' "$f")"
	done
}
ips_of() { t_store_ips "$1"; }

ours() { T_PLUGIN=$OURS t_cni "$@"; }
ref() { local -a w=("${T_BASE_WRAP[@]}"); T_BASE_WRAP=(); T_PLUGIN=$REF t_cni "$@"; T_BASE_WRAP=("${w[@]}"); }

at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

# =============================================================================
echo "# 1. ours alone"
D=$ROOT/s1
for v in $VERSIONS; do
	rm -rf "$D"
	c=$(conf "$v" "$D" "$SUBNET"',"routes":[{"dst":"0.0.0.0/0"},{"dst":"10.81.0.0/16","gw":"10.80.0.254"}]')
	ours ADD "$c"
	t_ok "[$v] ADD exits 0"
	t_eq "[$v] nothing on stderr at the default level but the info line" "" \
		"$(grep -v ' info: ' <<<"$T_ERR")"
	if at_least "$v" 0.3.0; then
		t_jq "[$v] the first address and the gateway" "$T_OUT" \
			'"\(.cniVersion) \(.ips[0].address) \(.ips[0].gateway) \(.ips | length) \(.ips[0].interface)"' \
			"$v 10.80.0.2/24 10.80.0.1 1 null"
		t_jq "[$v] the routes" "$T_OUT" '[.routes[] | "\(.dst) \(.gw)"] | join(",")' \
			"0.0.0.0/0 null,10.81.0.0/16 10.80.0.254"
	else
		t_jq "[$v] ip4 and its routes" "$T_OUT" \
			'"\(.cniVersion) \(.ip4.ip) \(.ip4.gateway) \([.ip4.routes[].dst] | join(","))"' \
			"$v 10.80.0.2/24 10.80.0.1 0.0.0.0/0,10.81.0.0/16"
	fi
	t_eq "[$v] the store: the address, last_reserved_ip.0, the lock" \
		"$(printf '10.80.0.2:600:hl-c1\\r\\neth0\nlast_reserved_ip.0:600:10.80.0.2\nlock:750:')" \
		"$(files "$D/hlnet")"
	t_eq "[$v] directories mode 0755" "755 755" "$(stat -c %a "$D" "$D/hlnet" | tr '\n' ' ' | sed 's/ $//')"
	ours ADD "$c"
	t_err "[$v] a second ADD of the attachment is refused" 7 \
		"failed to allocate for range 0: 10.80.0.2 has been allocated to hl-c1, duplicate allocation is not allowed"
	if at_least "$v" 0.4.0; then
		ours CHECK "$c"
		t_ok "[$v] CHECK finds the address"
		ours CHECK "$c" CNI_CONTAINERID=hl-other
		t_err "[$v] CHECK of another container fails" 103 \
			"host-local: Failed to find address added by container hl-other"
	fi
	ours DEL "$c"
	t_ok "[$v] DEL exits 0"
	t_eq "[$v] DEL removed the address, kept the rest" \
		"$(printf 'last_reserved_ip.0:600:10.80.0.2\nlock:750:')" "$(files "$D/hlnet")"
	ours DEL "$c"
	t_ok "[$v] DEL again exits 0"
done

rm -rf "$D"
c=$(conf 1.0.0 "$D" "$DUAL")
ours ADD "$c"
t_jq "two range sets: an address of each" "$T_OUT" '[.ips[] | "\(.address) \(.gateway)"] | join(",")' \
	"10.80.0.10/24 10.80.0.1,fd80::2/64 fd80::1"
t_eq "two range sets: a file and a last_reserved_ip of each, IPv6 named as Go writes it" \
	"10.80.0.10 fd80::2" "$(ips_of "$D/hlnet")"
t_eq "last_reserved_ip.1 holds the IPv6 address" "fd80::2" "$(cat "$D/hlnet/last_reserved_ip.1")"
ours ADD "$(conf 0.2.0 "$D" "$DUAL")" CNI_CONTAINERID=hl-c2
t_jq "0.2.0: ip4 and ip6" "$T_OUT" '"\(.ip4.ip) \(.ip6.ip)"' "10.80.0.11/24 fd80::3/64"
ours ADD "$(conf 0.2.0 "$D" "$DUAL"',"subnet":"10.82.0.0/24"')" CNI_CONTAINERID=hl-c3
t_err "0.2.0: two IPv4 sets refused" 7 "CNI version 0.2.0 does not support more than 1 address per family"
# Round-robin: an address released is not handed out again before the others.
ours DEL "$c"
ours ADD "$c" CNI_CONTAINERID=hl-c3
t_jq "round-robin: the next address, not the one just released" "$T_OUT" '[.ips[].address] | join(",")' \
	"10.80.0.12/24,fd80::4/64"
for i in $(seq 13 20); do ours ADD "$c" CNI_CONTAINERID=hl-r$i; done
t_jq "the range's last address (rangeEnd 10.80.0.20)" "$T_OUT" '.ips[0].address' "10.80.0.20/24"
ours ADD "$c" CNI_CONTAINERID=hl-r21
t_jq "wrapping round to the address released first" "$T_OUT" '.ips[0].address' "10.80.0.10/24"
ours ADD "$c" CNI_CONTAINERID=hl-r22
t_err "a full range: code 110" 110 \
	"failed to allocate for range 0: no IP addresses available in range set: 10.80.0.10-10.80.0.20"
t_eq "the failed ADD took no IPv6 address either" "" "$(ls "$D/hlnet" | grep -c '^fd80' | grep -v '^11$')"
ours STATUS "$(conf 1.1.0 "$D" "$DUAL")" -CNI_CONTAINERID -CNI_NETNS -CNI_IFNAME
t_err "STATUS of a full set: code 50" 50 "no IP addresses available in range set: 10.80.0.10-10.80.0.20"
ours STATUS "$(conf 1.0.0 "$D" "$DUAL")" -CNI_CONTAINERID -CNI_NETNS -CNI_IFNAME
t_err "STATUS at 1.0.0: code 1" 1 "does not allow STATUS"
ours DEL "$c" CNI_CONTAINERID=hl-r15
ours STATUS "$(conf 1.1.0 "$D" "$DUAL")" -CNI_CONTAINERID -CNI_NETNS -CNI_IFNAME
t_ok "STATUS with an address free exits 0"
t_eq "STATUS prints nothing" "" "$T_OUT"

# Requested addresses.
rm -rf "$D"
ours ADD "$(conf 1.0.0 "$D" "$DUAL")" CNI_ARGS="IP=10.80.0.15"
t_jq "IP= takes that address, the other set the next" "$T_OUT" '[.ips[].address] | join(",")' \
	"10.80.0.15/24,fd80::2/64"
t_eq "last_reserved_ip.0 is the requested address" "10.80.0.15" "$(cat "$D/hlnet/last_reserved_ip.0")"
ours ADD "$(conf 1.0.0 "$D" "$DUAL")" CNI_CONTAINERID=hl-c2 CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAME=x;IP=10.80.0.15/24"
t_err "a requested address held: code 111" 111 \
	"failed to allocate for range 0: requested IP address 10.80.0.15 is not available in range set 10.80.0.10-10.80.0.20"
t_eq "the failed ADD left the store as it was" "10.80.0.15 fd80::2" "$(ips_of "$D/hlnet")"
t_eq "... and last_reserved_ip.1 too" "fd80::2" "$(cat "$D/hlnet/last_reserved_ip.1")"
ours ADD "$(conf 1.0.0 "$D" "$DUAL")" CNI_CONTAINERID=hl-c2 CNI_ARGS="K8S_POD_NAME=x"
t_err "an unknown CNI_ARGS key without IgnoreUnknown: code 4" 4 'ARGS: unknown args ["K8S_POD_NAME=x"]'
ours ADD "$(conf 1.0.0 "$D" "$DUAL")" CNI_CONTAINERID=hl-c2 CNI_ARGS="IP=10.80.0.x"
t_err "IP= not an address: code 4" 4 'ARGS: error parsing value of pair "IP=10.80.0.x": invalid IP address 10.80.0.x'
ours ADD "$(conf 1.0.0 "$D" "$DUAL" ',"args":{"cni":{"ips":["10.80.0.16","fd80::99"]}}')" CNI_CONTAINERID=hl-c2
t_jq "args.cni.ips: one per set" "$T_OUT" '[.ips[].address] | join(",")' "10.80.0.16/24,fd80::99/64"
ours ADD "$(conf 1.0.0 "$D" "$DUAL" ',"runtimeConfig":{"ips":["10.80.0.17/24"]},"args":{"cni":{"ips":["10.80.0.18"]}}')" CNI_CONTAINERID=hl-c3
t_err "two requested addresses in one set: the second unfulfilled" 7 "failed to allocate all requested IPs: 10.80.0.17"
t_eq "... and nothing of it left" "10.80.0.15 10.80.0.16 fd80::2 fd80::99" "$(ips_of "$D/hlnet")"
ours ADD "$(conf 1.0.0 "$D" "$SUBNET" ',"runtimeConfig":{"ips":["10.80.0.1"]}')" CNI_CONTAINERID=hl-c3
t_err "the gateway requested" 7 "failed to allocate for range 0: requested ip 10.80.0.1 is subnet's gateway"
ours ADD "$(conf 1.0.0 "$D" "$DUAL" ',"runtimeConfig":{"ips":["10.99.0.1"]}')" CNI_CONTAINERID=hl-c3
t_err "an address of no set" 7 "failed to allocate all requested IPs: 10.99.0.1"
ours ADD "$(conf 1.0.0 "$D" "$DUAL" ',"runtimeConfig":{"ips":[""]}')" CNI_CONTAINERID=hl-c3
t_err "an empty ips entry" 7 "cannot understand ip: IP <nil> not v4 nor v6"
ours ADD "$(conf 1.0.0 "$D" "$DUAL" ',"runtimeConfig":{"ips":[null]}')" CNI_CONTAINERID=hl-c3
t_err "a null ips entry: code 6 (upstream panics)" 6 "runtimeConfig.ips[0]"
ours ADD "$(conf 1.0.0 "$D" "" ',"runtimeConfig":{"ipRanges":[[{"subnet":"10.83.0.0/24","rangeStart":"10.83.0.100"}]]}')" \
	CNI_CONTAINERID=hl-c3
t_jq "runtimeConfig.ipRanges" "$T_OUT" '[.ips[].address] | join(",")' "10.83.0.100/24"
ours DEL "$(conf 1.0.0 "$D" "$DUAL")" CNI_CONTAINERID=hl-c3
t_eq "DEL releases whatever the attachment holds" "10.80.0.15 10.80.0.16 fd80::2 fd80::99" "$(ips_of "$D/hlnet")"

# resolvConf, its links and its refusals.
ln -s "$ETC/resolv.conf" "$ETC/link.conf"
ln -s /proc/self/status "$ETC/out.conf"
mkfifo "$ETC/fifo.conf"
ours ADD "$(conf 1.0.0 "$D" "$SUBNET"',"resolvConf":"'"$ETC"'/link.conf"')" CNI_CONTAINERID=hl-d1
t_jq "resolvConf through a link inside: nameservers, domain, search, options" "$T_OUT" \
	'"\(.dns.nameservers | join(",")) \(.dns.domain) \(.dns.search | join(",")) \(.dns.options | join(","))"' \
	"10.80.0.53,fd80::53 example.net a.example,b.example ndots:2,rotate"
for p in "$ETC/out.conf|leads to" "$ETC/fifo.conf|is not a regular file" "/etc/hostname|is outside" \
	"$ETC/none.conf|no such file or directory"; do
	ours ADD "$(conf 1.0.0 "$D" "$SUBNET"',"resolvConf":"'"${p%%|*}"'"')" CNI_CONTAINERID=hl-d2
	t_err "resolvConf ${p%%|*} refused" 7 "${p#*|}"
done
t_eq "the refusals took no address" "" "$(grep -D skip -l hl-d2 "$D"/hlnet/* 2>/dev/null)"

# DEL and CHECK of a store that was never made make none.
ours DEL "$(conf 1.0.0 "$ROOT/never" "$SUBNET")"
t_ok "DEL of a store never made exits 0"
ours CHECK "$(conf 1.0.0 "$ROOT/never" "$SUBNET")"
t_err "CHECK of a store never made fails" 103 "Failed to find address"
ours GC "$(conf 1.1.0 "$ROOT/never" "$SUBNET" ',"cni.dev/valid-attachments":[]')" -CNI_CONTAINERID -CNI_NETNS -CNI_IFNAME
t_ok "GC of a store never made exits 0"
t_eq "none was made" "no" "$([ -e "$ROOT/never" ] && echo yes || echo no)"

# GC: what no valid attachment holds goes; an empty file (an upstream ADD killed
# between creating and writing it) goes; a file holding something else stays.
rm -rf "$D"
for i in 1 2 3; do ours ADD "$(conf 1.1.0 "$D" "$SUBNET")" CNI_CONTAINERID=hl-g$i; done
printf 'hl-old' >"$D/hlnet/10.80.0.50"
: >"$D/hlnet/10.80.0.51"
printf 'not an attachment\n\n' >"$D/hlnet/10.80.0.52"
ours GC "$(conf 1.1.0 "$D" "$SUBNET" ',"cni.dev/valid-attachments":[{"containerID":"hl-g2","ifname":"eth0"},{"containerID":"hl-old","ifname":"eth9"}]')" \
	-CNI_CONTAINERID -CNI_NETNS -CNI_IFNAME
t_ok "GC exits 0"
t_eq "GC kept the valid ones, the older format of a valid ID, and what it cannot read" \
	"10.80.0.3 10.80.0.50 10.80.0.52" "$(ips_of "$D/hlnet")"
ours GC "$(conf 1.1.0 "$D" "$SUBNET")" -CNI_CONTAINERID -CNI_NETNS -CNI_IFNAME
t_ok "GC without a list exits 0"
t_eq "... and releases nothing" "10.80.0.3 10.80.0.50 10.80.0.52" "$(ips_of "$D/hlnet")"
ours GC "$(conf 1.0.0 "$D" "$SUBNET" ',"cni.dev/valid-attachments":[]')" -CNI_CONTAINERID -CNI_NETNS -CNI_IFNAME
t_err "GC at 1.0.0: code 1" 1 "does not allow GC"

# =============================================================================
echo "# 2. beside the reference"
if [ "$HAVE_REF" = 1 ]; then
	DO=$ROOT/o2 DR=$ROOT/r2
	# norm: results compared with sorted keys; upstream's empty "dns" at 0.x dropped.
	norm() { jq -cS 'if .dns == {} then del(.dns) else . end' <<<"$1" 2>/dev/null || echo "$1"; }
	cases=(
		"$SUBNET|"
		"$SUBNET"',"gateway":"10.80.0.254","rangeStart":"10.80.0.200"|'
		"$DUAL"',"routes":[{"dst":"0.0.0.0/0"},{"dst":"::/0","gw":"fd80::fe"}]|'
		',"ranges":[[{"subnet":"10.80.0.0/28"},{"subnet":"10.80.1.0/28","gateway":"10.80.1.14"}],[{"subnet":"fd81::/120","rangeEnd":"fd81::3"}]]|'
		"$SUBNET"',"resolvConf":"'"$ETC"'/resolv.conf"|'
		"$DUAL|IP=fd80::5"
		"$DUAL"'|IgnoreUnknown=1;IP=10.80.0.12/24'
		',"subnet":"10.80.0.0/24","ranges":[[{"subnet":"fd80::/64","rangeStart":"fd80::a","rangeEnd":"fd80::c"}]]|'
	)
	for v in $VERSIONS; do
		n=0
		for cs in "${cases[@]}"; do
			n=$((n + 1))
			ipam=${cs%%|*} args=${cs#*|}
			rm -rf "$DO" "$DR"
			failed=0
			for id in hl-a hl-b hl-c; do
				ours ADD "$(conf "$v" "$DO" "$ipam")" CNI_CONTAINERID=$id CNI_ARGS="$args"
				o_rc=$T_RC o=$(norm "$T_OUT")
				ref ADD "$(conf "$v" "$DR" "$ipam")" CNI_CONTAINERID=$id CNI_ARGS="$args"
				r_rc=$T_RC r=$(norm "$T_OUT")
				[ "$o_rc" = 0 ] || failed=1
				if [ "$o_rc" = 0 ] || [ "$r_rc" = 0 ]; then
					t_eq "[$v case $n $id] ADD: the same result" "$r_rc $r" "$o_rc $o"
				else
					t_eq "[$v case $n $id] ADD: both fail with one message" \
						"$(jq -r .msg <<<"$r")" "$(jq -r .msg <<<"$o")"
				fi
			done
			# Expected difference: a failed ADD of ours puts last_reserved_ip.N back, upstream's
			# leaves it at the address it took before failing (round-robin then skips one).
			skip='^$'
			[ "$failed" = 0 ] || skip='^last_reserved_ip'
			t_eq "[$v case $n] the same files" "$(files "$DR/hlnet" | grep -v "$skip")" \
				"$(files "$DO/hlnet" | grep -v "$skip")"
			ours DEL "$(conf "$v" "$DO" "$ipam")" CNI_CONTAINERID=hl-b CNI_ARGS="$args"
			ref DEL "$(conf "$v" "$DR" "$ipam")" CNI_CONTAINERID=hl-b CNI_ARGS="$args"
			t_eq "[$v case $n] DEL: the same files" "$(files "$DR/hlnet" | grep -v "$skip")" \
				"$(files "$DO/hlnet" | grep -v "$skip")"
		done
	done
	# Errors: the same message (ours with a better code, checked in section 1).
	errs=(
		'"subnet":"10.80.0.0/31"' '"subnet":"10.80.0.1/24"' '"subnet":"::ffff:10.80.0.0/104"'
		'"subnet":"10.80.0.0/24","rangeStart":"10.80.0.50","rangeEnd":"10.80.0.40"'
		'"subnet":"10.80.0.0/24","rangeStart":"10.80.1.5"' '"subnet":"10.80.0.0/24","rangeEnd":"10.80.1.5"'
		'"subnet":"x"' '"subnet":"10.80.0.0/24","gateway":"x"' '"subnet":"10.80.0.0/24","rangeStart":"010.80.0.5"'
		'"ranges":[[{"subnet":"10.80.0.0/24"},{"subnet":"10.80.0.0/25"}]]'
		'"ranges":[[{"subnet":"10.80.0.0/24"}],[{"subnet":"10.80.0.0/25"}]]'
		'"ranges":[[]]' '"ranges":[[{"subnet":"10.80.0.0/24"},{"subnet":"fd80::/64"}]]' '"ranges":[]'
		'"subnet":"fd80::/127"' '"subnet":"10.80.0.0/0024"'
	)
	for e in "${errs[@]}"; do
		c='{"cniVersion":"1.0.0","name":"hlnet","ipam":{"type":"host-local","dataDir":"'$DO'",'$e'}}'
		ours ADD "$c"
		o=$(jq -r .msg <<<"$T_OUT" 2>/dev/null)
		ref ADD "${c/$DO/$DR}"
		t_eq "[error $e] the same message" "$(jq -r .msg <<<"$T_OUT" 2>/dev/null)" "$o"
	done
	for a in "IP=10.80.0.x" "K8S_POD_NAME=x" "IgnoreUnknown=1;IP=10.90.0.1" "IP=10.80.0.1"; do
		ours ADD "$(conf 1.0.0 "$DO" "$SUBNET")" CNI_CONTAINERID=hl-e CNI_ARGS="$a"
		o=$(jq -r .msg <<<"$T_OUT")
		ref ADD "$(conf 1.0.0 "$DR" "$SUBNET")" CNI_CONTAINERID=hl-e CNI_ARGS="$a"
		# Ours says how to ignore unknown args, after upstream's message.
		t_match "[CNI_ARGS $a] the same message" "^$(jq -r .msg <<<"$T_OUT" | sed 's/[][\.*^$]/\\&/g')" "$o"
	done
	ours ADD '{"cniVersion":"1.0.0","name":"hlnet"}'
	o=$(jq -r .msg <<<"$T_OUT")
	ref ADD '{"cniVersion":"1.0.0","name":"hlnet"}'
	t_eq "[no ipam] the same message" "$(jq -r .msg <<<"$T_OUT")" "$o"
	t_cni VERSION '{}'
	o=$(jq -cS . <<<"$T_OUT")
	ref VERSION '{}'
	t_eq "VERSION: the same answer" "$(jq -cS . <<<"$T_OUT")" "$o"
	# v1.9.1 has no STATUS or GC: it succeeds doing nothing.
	for cmd in STATUS GC; do
		ref "$cmd" "$(conf 1.1.0 "$DR" "$SUBNET" ',"cni.dev/valid-attachments":[]')" -CNI_CONTAINERID -CNI_NETNS -CNI_IFNAME
		t_eq "[reference $cmd] exits 0, prints nothing" "0 " "$T_RC $T_OUT"
	done
else
	echo "$ref_note"
fi

# =============================================================================
echo "# 3. one store, both binaries"
if [ "$HAVE_REF" = 1 ]; then
	D=$ROOT/s3
	c=$(conf 1.0.0 "$D" "$DUAL")
	ours ADD "$c" CNI_CONTAINERID=hl-o1
	ref ADD "$c" CNI_CONTAINERID=hl-r1
	t_jq "the reference continues ours's round-robin" "$T_OUT" '[.ips[].address] | join(",")' \
		"10.80.0.11/24,fd80::3/64"
	ours ADD "$c" CNI_CONTAINERID=hl-o2
	t_jq "ours continues the reference's" "$T_OUT" '[.ips[].address] | join(",")' "10.80.0.12/24,fd80::4/64"
	ref ADD "$c" CNI_CONTAINERID=hl-o1
	t_err "the reference refuses a second address for ours's attachment" "" "duplicate allocation is not allowed"
	ours ADD "$c" CNI_CONTAINERID=hl-r1
	t_err "ours refuses a second address for the reference's" 7 "duplicate allocation is not allowed"
	ref CHECK "$c" CNI_CONTAINERID=hl-o1
	t_ok "the reference's CHECK finds ours's"
	ours CHECK "$c" CNI_CONTAINERID=hl-r1
	t_ok "ours's CHECK finds the reference's"
	ref DEL "$c" CNI_CONTAINERID=hl-o1
	t_ok "the reference DELs ours's"
	ours DEL "$c" CNI_CONTAINERID=hl-r1
	t_ok "ours DELs the reference's"
	t_eq "each DEL removed exactly that attachment's files" "10.80.0.12 fd80::4" "$(ips_of "$D/hlnet")"
	ref ADD "$c" CNI_CONTAINERID=hl-r2 CNI_ARGS="IP=10.80.0.12"
	t_err "the reference will not take an address ours holds" "" "10.80.0.12 is not available"
	ours GC "$(conf 1.1.0 "$D" "$DUAL" ',"cni.dev/valid-attachments":[]')" -CNI_CONTAINERID -CNI_NETNS -CNI_IFNAME
	t_eq "ours's GC released what no attachment holds" "" "$(ips_of "$D/hlnet")"

	# 40 ADDs of both at once, then their DELs at once.
	rm -rf "$D"
	c=$(conf 1.0.0 "$D" ',"subnet":"10.84.0.0/24"')
	pids=()
	for i in $(seq 1 40); do
		bin=$OURS
		[ $((i % 2)) = 0 ] && bin=$REF
		printf '%s' "$c" | CNI_COMMAND=ADD CNI_CONTAINERID=hl-p$i CNI_NETNS=/x CNI_IFNAME=eth0 CNI_PATH=/x \
			"$bin" >"$T_DIR/par$i" 2>/dev/null &
		pids+=($!)
	done
	fails=0
	for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
	t_eq "40 ADDs at once, 20 each: all succeed" 0 "$fails"
	got=$(cat "$T_DIR"/par* | jq -r '.ips[0].address' | sort -u | wc -l)
	t_eq "40 distinct addresses handed out" 40 "$got"
	t_eq "40 files in the store" 40 "$(ips_of "$D/hlnet" | wc -w)"
	owners=$(for f in "$D"/hlnet/10.*; do head -n1 "$f" | tr -d '\r\n'; echo; done | sort -u | wc -l)
	t_eq "each file held by its own container" 40 "$owners"
	pids=()
	for i in $(seq 1 40); do
		bin=$REF
		[ $((i % 3)) = 0 ] && bin=$OURS
		printf '%s' "$c" | CNI_COMMAND=DEL CNI_CONTAINERID=hl-p$i CNI_NETNS=/x CNI_IFNAME=eth0 CNI_PATH=/x \
			"$bin" >/dev/null 2>&1 &
		pids+=($!)
	done
	fails=0
	for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
	t_eq "40 DELs at once, mixed: all succeed" 0 "$fails"
	t_eq "the store holds no address" "" "$(ips_of "$D/hlnet")"
	rm -f "$T_DIR"/par*

	# A /28 filled by both at once: 13 addresses (.2 to .14), 20 asking.
	rm -rf "$D"
	c=$(conf 1.0.0 "$D" ',"subnet":"10.85.0.0/28"')
	pids=()
	for i in $(seq 1 20); do
		bin=$OURS
		[ $((i % 2)) = 0 ] && bin=$REF
		printf '%s' "$c" | CNI_COMMAND=ADD CNI_CONTAINERID=hl-f$i CNI_NETNS=/x CNI_IFNAME=eth0 CNI_PATH=/x \
			"$bin" >"$T_DIR/full$i" 2>/dev/null &
		pids+=($!)
	done
	ok=0
	for p in "${pids[@]}"; do wait "$p" && ok=$((ok + 1)); done
	t_eq "a /28 filled by both at once: 13 ADDs succeed" 13 "$ok"
	t_eq "... with 13 distinct addresses" 13 "$(cat "$T_DIR"/full* | jq -r '.ips[0].address // empty' | sort -u | wc -l)"
	t_eq "... the 7 others fail: no address left" 7 "$(cat "$T_DIR"/full* | grep -c 'no IP addresses available')"
	t_eq "the store: 13 files" 13 "$(ips_of "$D/hlnet" | wc -w)"
	rm -f "$T_DIR"/full*
else
	echo "$ref_note"
fi

# =============================================================================
echo "# 4. pods live: our macvlan, host-local switched between ours and the reference"
if [ "$HAVE_REF" = 1 ]; then
	BIN=$T_DIR/bin
	mkdir -p "$BIN"
	use_ipam() { ln -sfn "$1" "$BIN/host-local"; }
	t_name MASTER hl
	t_name MPEER hl
	t_veth "$MASTER" "$MPEER"
	t_defer_link "$MASTER"
	D=$ROOT/s4
	mc='{"cniVersion":"1.0.0","name":"hlnet","type":"macvlan","master":"'$MASTER'","ipam":{"type":"host-local","dataDir":"'$D'","subnet":"10.86.0.0/24"}}'
	declare -A pod_path=() pod_result=()
	pod_add() { # N: ADD pod N; its address in the store and in the pod
		local name
		t_name name hl
		ip netns add "$name"
		t_defer "[ ! -e '/var/run/netns/$name' ] || ip netns del '$name'"
		pod_path[$1]=/var/run/netns/$name
		T_PLUGIN=$MACVLAN t_cni ADD "$mc" CNI_CONTAINERID=hl-pod$1 CNI_NETNS="${pod_path[$1]}" CNI_IFNAME=net1 \
			CNI_PATH="$BIN"
		pod_result[$1]=$T_OUT
	}
	pod_addr() { ip -n "${pod_path[$1]##*/}" -4 -j addr show dev net1 2>/dev/null | jq -r '.[0].addr_info[0].local // "none"'; }
	pod_cmd() { # N CMD: CHECK with the pod's ADD result as prevResult
		local c=$mc
		[ "$2" != CHECK ] || c=$(jq -c --argjson r "${pod_result[$1]}" '. + {prevResult: $r}' <<<"$mc")
		T_PLUGIN=$MACVLAN t_cni "$2" "$c" CNI_CONTAINERID=hl-pod$1 CNI_NETNS="${pod_path[$1]}" \
			CNI_IFNAME=net1 CNI_PATH="$BIN"
	}
	use_ipam "$OURS"
	for i in 1 2 3; do pod_add $i; t_ok "[ours] pod $i ADD"; done
	use_ipam "$REF"
	for i in 4 5; do pod_add $i; t_ok "[reference] pod $i ADD"; done
	t_eq "pods 1 to 5: .2 to .6, in turn" "10.86.0.2 10.86.0.3 10.86.0.4 10.86.0.5 10.86.0.6" \
		"$(for i in 1 2 3 4 5; do pod_addr $i; done | tr '\n' ' ' | sed 's/ $//')"
	pod_cmd 1 CHECK
	t_ok "[reference] CHECK of pod 1 (ours's lease)"
	pod_cmd 1 DEL
	t_ok "[reference] DEL of pod 1"
	use_ipam "$OURS"
	pod_cmd 4 DEL
	t_ok "[ours] DEL of pod 4 (the reference's lease)"
	pod_add 6
	t_eq "[ours] pod 6 gets .7: round-robin goes on, no lease handed out twice" 10.86.0.7 "$(pod_addr 6)"
	pod_cmd 5 CHECK
	t_ok "[ours] CHECK of pod 5 (the reference's lease)"
	t_eq "the store holds exactly the live pods' addresses" "10.86.0.3 10.86.0.4 10.86.0.6 10.86.0.7" \
		"$(ips_of "$D/hlnet")"
	use_ipam "$REF"
	for i in 2 3 5 6; do pod_cmd $i DEL; t_ok "[reference] DEL of pod $i"; done
	t_eq "every lease released" "" "$(ips_of "$D/hlnet")"
else
	echo "$ref_note"
fi

# =============================================================================
echo "# 5. SIGKILL at each system call of ADD, then DEL"
if command -v strace >/dev/null; then
	D=$ROOT/s5
	c=$(conf 1.0.0 "$D" "$DUAL")
	kills=0
	for sys in mkdirat openat flock read write pwrite64 linkat unlinkat getdents64 close; do
		rm -rf "$D"
		ours ADD "$c" CNI_CONTAINERID=hl-live
		sys_kills=0
		for ((n = 1; n < 60; n++)); do
			# In a subshell of its own, whose report of the kill goes nowhere.
			(printf '%s' "$c" | CNI_COMMAND=ADD CNI_CONTAINERID=hl-k CNI_NETNS=/x CNI_IFNAME=eth0 CNI_PATH=/x \
				strace -qq -f -o /dev/null -e trace="$sys" -e inject="$sys":signal=SIGKILL:when=$n \
				"$OURS" >/dev/null 2>&1) 2>/dev/null
			rc=$?
			[ "$rc" = 137 ] && kills=$((kills + 1)) sys_kills=$((sys_kills + 1))
			ours DEL "$c" CNI_CONTAINERID=hl-k
			bad=$( { [ "$T_RC" = 0 ] || echo "DEL exit $T_RC"; }
				grep -D skip -l 'hl-k' "$D"/hlnet/* 2>/dev/null
				ls -A "$D/hlnet" 2>/dev/null | grep -Ev '^(lock|last_reserved_ip\.[01]|10\.80\.0\.10|fd80::2)$' )
			[ -z "$bad" ] || t_fail "[kill at $sys #$n] DEL left the store clean" "$bad"
			[ "$rc" = 137 ] || break
		done
		t_eq "[kill at $sys, $sys_kills kills] every pass ended clean, the last one not killed" "0 yes" \
			"$(ls "$D"/hlnet 2>/dev/null | grep -c '\.tmp\.') $([ "$rc" != 137 ] && echo yes)"
		t_eq "[kill at $sys] the live attachment kept its addresses" "10.80.0.10 fd80::2" "$(ips_of "$D/hlnet")"
	done
	t_ne "ADD was killed at some system call" 0 "$kills"
	if [ "$HAVE_REF" = 1 ]; then
		# The reference's DEL after ours was killed after its first address's link (its file
		# is whole, so the reference finds it).
		for ((n = 1; n < 3; n++)); do
			(printf '%s' "$c" | CNI_COMMAND=ADD CNI_CONTAINERID=hl-k2 CNI_NETNS=/x CNI_IFNAME=eth0 CNI_PATH=/x \
				strace -qq -o /dev/null -e trace=linkat -e inject=linkat:signal=SIGKILL:when=$((n + 1)) \
				"$OURS" >/dev/null 2>&1) 2>/dev/null
			ref DEL "$c" CNI_CONTAINERID=hl-k2
			t_eq "[kill #$n, the reference's DEL] no file of the attachment left" "" \
				"$(grep -D skip -l 'hl-k2' "$D"/hlnet/* 2>/dev/null)"
		done
	fi
else
	t_fail "strace not found (tests/install-deps.sh test)"
fi

# =============================================================================
echo "# 6. hostile input"
before=$(find "$T_DIR" /run -maxdepth 1 2>/dev/null | sort)
for dd in /tmp/hl-evil "$T_DIR/elsewhere" relative/dir "$ROOT/../etc" "$ROOT/./x" /var/lib/cnix /; do
	ours ADD "$(conf 1.0.0 "$dd" "$SUBNET")" CNI_CONTAINERID=hl-h
	t_err "dataDir $dd refused" 7 "dataDir"
	ours DEL "$(conf 1.0.0 "$dd" "$SUBNET")" CNI_CONTAINERID=hl-h
	t_err "DEL with dataDir $dd refused too (it cannot reach the store)" 7 "dataDir"
done
t_eq "nothing was made outside the state roots" "$before" "$(find "$T_DIR" /run -maxdepth 1 2>/dev/null | sort)"
# The suite's own state: nv-ipam's state directory, /run/cni-rdma-plugins.
ours ADD "$(conf 1.0.0 "$T_DIR" "$SUBNET" | sed 's/"name":"hlnet"/"name":"nvipam"/')" CNI_CONTAINERID=hl-h
t_err "a store inside nv-ipam's state directory refused" 7 "would lie in the state of the suite's own plugins"
printf '{"stateRoots": ["/run"], "stateDirs": ["%s"]}\n' "$T_DIR/nvipam" >"$T_DIR/ns2.json"
chmod 0600 "$T_DIR/ns2.json"
ours ADD "$(conf 1.0.0 /run/cni-rdma-plugins "$SUBNET" | sed 's/"name":"hlnet"/"name":"tuning"/')" \
	CNI_CONTAINERID=hl-h CNI_RDMA_PLUGINS_CONF="$T_DIR/ns2.json"
t_err "a store in /run/cni-rdma-plugins refused" 7 "would lie in the state of the suite's own plugins"
ours ADD "$(conf 1.0.0 /run//cni-rdma-plugins/ "$SUBNET" | sed 's/"name":"hlnet"/"name":"tuning"/')" \
	CNI_CONTAINERID=hl-h CNI_RDMA_PLUGINS_CONF="$T_DIR/ns2.json"
t_err "... however it is spelt" 7 "would lie in the state of the suite's own plugins"
# Links: on the way, as the store, as the lock; a FIFO as an address file.
mkdir -p "$T_DIR/target"
ln -s "$T_DIR/target" "$ROOT/link"
ours ADD "$(conf 1.0.0 "$ROOT/link" "$SUBNET")" CNI_CONTAINERID=hl-h
t_err "a link on the way to dataDir refused" 7 "symbolic link"
mkdir -p "$ROOT/s6"
ln -s "$T_DIR/target" "$ROOT/s6/hlnet"
ours ADD "$(conf 1.0.0 "$ROOT/s6" "$SUBNET")" CNI_CONTAINERID=hl-h
t_err "a link as the network's directory refused" 7 "not a directory (no symbolic link is followed)"
rm "$ROOT/s6/hlnet"
mkdir "$ROOT/s6/hlnet"
ln -s "$T_DIR/target/planted" "$ROOT/s6/hlnet/lock"
ours ADD "$(conf 1.0.0 "$ROOT/s6" "$SUBNET")" CNI_CONTAINERID=hl-h
t_err "a link as the lock refused" 5 "lock"
t_eq "nothing made where the links lead" "" "$(ls -A "$T_DIR/target")"
rm "$ROOT/s6/hlnet/lock"
mkfifo "$ROOT/s6/hlnet/10.80.0.2"
ln -s /etc/passwd "$ROOT/s6/hlnet/10.80.0.3"
ours ADD "$(conf 1.0.0 "$ROOT/s6" "$SUBNET")" CNI_CONTAINERID=hl-h
t_jq "a FIFO and a link named as addresses: skipped, never opened" "$T_OUT" '.ips[0].address' "10.80.0.4/24"
ours DEL "$(conf 1.0.0 "$ROOT/s6" "$SUBNET")" CNI_CONTAINERID=hl-h
t_ok "DEL beside them exits 0"
t_eq "the FIFO and the link are left alone" "fifo link" \
	"$(stat -c %F "$ROOT/s6/hlnet/10.80.0.2" | cut -d' ' -f1) $(stat -c %F "$ROOT/s6/hlnet/10.80.0.3" | cut -d' ' -f2)"
# Big and strange values.
big=$(head -c 70000 /dev/zero | tr '\0' 'a')
ours ADD "$(conf 1.0.0 "$ROOT/$big" "$SUBNET")" CNI_CONTAINERID=hl-h
t_err "a 70 KB dataDir refused" 7
ours ADD "$(conf 1.0.0 "$ROOT/s6" "$SUBNET"',"resolvConf":"'"$ETC/$big"'"')" CNI_CONTAINERID=hl-h
t_err "a 70 KB resolvConf refused" 7
head -c 2000000 /dev/zero | tr '\0' '#' >"$ETC/huge.conf"
ours ADD "$(conf 1.0.0 "$ROOT/s6" "$SUBNET"',"resolvConf":"'"$ETC/huge.conf"'"')" CNI_CONTAINERID=hl-h
t_err "a 2 MB resolvConf refused" 7 "larger than"
ours ADD "$(conf 1.0.0 "$ROOT/s6" ',"subnet":"10.80.0.0/24\n"')" CNI_CONTAINERID=hl-h
t_err "a subnet with a newline refused" 7 "invalid CIDR address"
ours ADD "$(conf 1.0.0 "$ROOT/s6" ',"subnet":"10.80.0.0/99999999999999999999"')" CNI_CONTAINERID=hl-h
t_err "a prefix length that overflows refused" 7 "invalid CIDR address"
ours ADD "$(conf 1.0.0 "$ROOT/s6" ',"subnet":"fd00::/8","rangeStart":"fd00::1","rangeEnd":"fdff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"')" \
	CNI_CONTAINERID=hl-h2
t_jq "a /8 of IPv6: handed out from its start, the gateway skipped" "$T_OUT" '.ips[0].address' "fd00::2/8"
ours STATUS "$(conf 1.1.0 "$ROOT/s6" ',"subnet":"fd00::/8","rangeStart":"fd00::1","rangeEnd":"fdff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"')" \
	-CNI_CONTAINERID -CNI_NETNS -CNI_IFNAME
t_ok "STATUS of a 2^120 range: ready"
ours ADD "$(conf 1.0.0 "$ROOT/s6" ',"subnet":"10.80.0.0/24"' | sed 's/"name":"hlnet"/"name":".."/')" CNI_CONTAINERID=hl-h
t_err "a network named .. refused" 7 "invalid characters found in network name"
before=$(files "$ROOT/s6/hlnet")
ours ADD "$(conf 1.0.0 "$ROOT/s6" "$SUBNET")" CNI_CONTAINERID=hl-h CNI_IFNAME=$'a\nb'
t_err "an interface name with a newline refused" 4
t_eq "... with the store as it was" "$before" "$(files "$ROOT/s6/hlnet")"

[ "$HAVE_REF" = 1 ] || { [ "$T_FAIL" = 0 ] || t_summary; echo "$T_PASS passed, $T_FAIL failed (the comparison with the reference not run)"; exit 77; }
t_summary
