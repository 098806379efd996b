#!/usr/bin/env bash
# Functions are called indirectly (traps, run_case), which shellcheck cannot see.
# shellcheck disable=SC2317
# End-to-end test of the macvlan plugin through a real libcni client.
#
# Usage: e2e-macvlan.sh <plugin-dir> <cniclient> [<reference-dir>]
#   plugin-dir     directory holding our `macvlan` binary (meson: build/plugins/macvlan)
#   cniclient      the libcni client built from tests/e2e/cniclient
#   reference-dir  Debian's containernetworking-plugins (default /usr/lib/cni):
#                  host-local, tuning and sbr for the chains, and the Go macvlan
#                  that every case is also run with for the comparison
# Environment:
#   E2E_EXPECTED_DIFFERENCES  allow-list (default: expected-differences.txt next to this script)
#   E2E_KEEP_TMP=1            keep the temporary directory (configs, results, plugin I/O)
#   E2E_VERBOSE=1             print every result and state snapshot
#   E2E_CASES=<regex>         run only the cases whose name matches
#
# Every case runs twice, once with our macvlan ("ours") and once with the Go one
# ("ref"), each in a fresh pod netns with a fresh host-local store, on a veth
# master in the root netns. A case asserts the ADD result and the pod state,
# CHECK, DEL and repeated DEL. Then the two runs are compared key by key: the
# client's exit codes and ADD result, the raw stdout and exit code of each
# macvlan call (a wrapper in front of the plugin records them), and a snapshot
# of the pod after ADD (link attributes, addresses, routes, rules, sysctls).
# A difference fails the test unless a line of the allow-list matches it.
# CNI_PATH is <wrapper dir>:<plugin-dir>:<reference-dir> for ours and
# <wrapper dir>:<reference-dir> for ref.
#
# Needs root. Exits 77 (skip) only if a network namespace cannot be created.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 <plugin-dir> <cniclient> [<reference-dir>]" >&2
	exit 2
fi
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }
plugin_dir=$(abspath "$1")
client=$(abspath "$2")
ref_dir=$(abspath "${3:-/usr/lib/cni}")
allow_file=${E2E_EXPECTED_DIFFERENCES:-$here/expected-differences.txt}
verbose=${E2E_VERBOSE:-0}

# Names unique to this run: interface names stay within 15 characters.
tag=$$
master=e2eM$tag
peer=e2eP$tag
ns_prefix=e2e$tag-
netns_list=()
tmp=

cleanup() {
	local rc=$? ns
	trap - EXIT
	for ns in "${netns_list[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
	ip link del "$master" 2>/dev/null || true
	if [ -n "$tmp" ]; then
		if [ "${E2E_KEEP_TMP:-0}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The one reason to skip: no way to create a network namespace (not root, or
# no CAP_SYS_ADMIN in a container).
if ! err=$(ip netns add "${ns_prefix}probe" 2>&1); then
	echo "SKIP: cannot create a network namespace: $err"
	exit 77
fi
netns_list+=("${ns_prefix}probe")

missing=()
for tool in jq sha256sum; do command -v "$tool" >/dev/null || missing+=("$tool"); done
[ -x "$client" ] || missing+=("$client")
[ -x "$plugin_dir/macvlan" ] || missing+=("$plugin_dir/macvlan")
for p in macvlan host-local tuning sbr; do [ -x "$ref_dir/$p" ] || missing+=("$ref_dir/$p"); done
[ -f "$allow_file" ] || missing+=("$allow_file")
if [ ${#missing[@]} -gt 0 ]; then
	echo "FAIL: missing: ${missing[*]}" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/e2e-macvlan.XXXXXX")
ip link add "$master" type veth peer name "$peer"
ip link set "$master" up
ip link set "$peer" up
master_ifindex=$(ip -j link show dev "$master" | jq -r '.[0].ifindex')

subnet_re='^10\.66\.0\.'
first_ip=10.66.0.2
gateway=10.66.0.1

# ---------------------------------------------------------------- helpers

die() {
	echo "FAIL [$CASE]: $*" >&2
	exit 1
}
note() { echo "  [$CASE] $*"; }

ver_ge() { # ver_ge A B: A >= B for CNI versions
	[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n1)" = "$2" ]
}

container_id() { # must match the client's scheme
	printf 'e2e-%s' "$(printf '%s' "$1" | sha256sum | cut -c1-24)"
}

# Writes <dir>/tap/macvlan: passes stdin, stdout and the exit code of the real
# plugin through and records them as <dir>/raw/<COMMAND>.<n>.{in,out,rc}.
make_tap() {
	local dir=$1 real=$2
	mkdir -p "$dir/tap" "$dir/raw"
	cat >"$dir/tap/macvlan" <<EOF
#!/usr/bin/env bash
log=$(printf '%q' "$dir/raw")/\${CNI_COMMAND:-none}
n=1
while [ -e "\$log.\$n.in" ]; do n=\$((n + 1)); done
cat >"\$log.\$n.in"
rc=0
$(printf '%q' "$real") <"\$log.\$n.in" >"\$log.\$n.out" || rc=\$?
echo "\$rc" >"\$log.\$n.rc"
cat "\$log.\$n.out"
exit "\$rc"
EOF
	chmod +x "$dir/tap/macvlan"
}

# cni <cmd>: runs the client for the current case; the result goes to
# $dir/<cmd>.<n>.out, stderr to .err. Returns the client's exit code.
cni() {
	local cmd=$1 n=1 rc=0
	while [ -e "$dir/$cmd.$n.out" ]; do n=$((n + 1)); done
	last_out=$dir/$cmd.$n.out
	last_err=$dir/$cmd.$n.err
	env NETCONFPATH="$dir/conf" CNI_PATH="$dir/tap:$cni_path" CNI_IFNAME="$ifname" \
		CNI_ARGS="$case_cni_args" CAP_ARGS="$case_cap_args" \
		"$client" --cache-dir "$dir/cache" "$cmd" "$net" "$nspath" \
		>"$last_out" 2>"$last_err" || rc=$?
	printf '%s\t%s\n' "$cmd.$n" "$rc" >>"$dir/outcomes"
	return "$rc"
}

cni_ok() { # cni_ok <cmd>: the command must succeed
	cni "$1" || { sed 's/^/    stderr: /' "$last_err" >&2; die "$1 failed"; }
}

pod_link() { ip -n "$ns" -d -j link show dev "$ifname" 2>/dev/null | jq '.[0]'; }

# The IP files of host-local's store for this case (not lock, not last_reserved_ip.*).
store_ips() {
	local d=$dir/data/$net
	[ -d "$d" ] || return 0
	find "$d" -maxdepth 1 -type f ! -name lock ! -name 'last_reserved_ip.*' -printf '%f\n' | sort
}

sysctl_json() {
	local keys=(
		ipv4/conf/all/arp_ignore ipv4/conf/all/arp_announce ipv4/conf/all/rp_filter
		"ipv4/conf/$ifname/arp_ignore" "ipv4/conf/$ifname/arp_announce" "ipv4/conf/$ifname/rp_filter"
		"ipv4/conf/$ifname/arp_notify" "ipv4/conf/$ifname/forwarding" "ipv4/conf/$ifname/proxy_arp"
		"ipv6/conf/$ifname/ndisc_notify" "ipv6/conf/$ifname/disable_ipv6"
		"ipv6/conf/$ifname/keep_addr_on_down" ipv6/conf/lo/disable_ipv6
		ipv4/ip_forward ipv6/conf/all/forwarding
	)
	local k
	for k in "${keys[@]}"; do
		printf '%s\t%s\n' "$k" "$(ip netns exec "$ns" cat "/proc/sys/net/$k" 2>/dev/null || echo '<unreadable>')"
	done | jq -R -s 'split("\n") | map(select(length > 0) | split("\t") | {key: .[0], value: .[1]}) | from_entries'
}

# A snapshot of the pod's network state with the values that legitimately
# differ between two runs (ifindex, random MAC, link-local address) normalised.
snapshot() {
	local link addrs r4 r6 rules sys
	link=$(ip -n "$ns" -d -j link show dev "$ifname")
	addrs=$(ip -n "$ns" -j addr show dev "$ifname")
	r4=$(ip -n "$ns" -4 -j route show table all)
	r6=$(ip -n "$ns" -6 -j route show table all)
	rules=$(ip -n "$ns" -4 -j rule)
	sys=$(sysctl_json)
	jq -n --argjson link "$link" --argjson addrs "$addrs" --argjson r4 "$r4" --argjson r6 "$r6" \
		--argjson rules "$rules" --argjson sys "$sys" --argjson mi "$master_ifindex" '
		def routes: map(select((.table // "main") != "local"))
			| map({key: "\(.table // "main") \(.dst)", value: .}) | from_entries;
		{
		  link: ($link[0] | del(.ifindex, .address, .addr_info)
		         | .link_index = (if .link_index == $mi then "<master>" else .link_index end)),
		  addrs: ($addrs[0].addr_info
		          | map(if .family == "inet6" and (.local | startswith("fe80:"))
		                then {key: "inet6 <link-local>", value: {prefixlen, scope}}
		                else {key: "\(.family) \(.local)/\(.prefixlen)", value: .} end)
		          | from_entries),
		  routes4: ($r4 | routes),
		  routes6: ($r6 | routes),
		  rules: ($rules | map({key: "\(.priority)", value: .}) | from_entries),
		  sysctl: $sys
		}'
}

# Normalises a result: the random MAC (unless it is the requested one) and the
# per-run sandbox path.
normalise_result() { # normalise_result <fixed-mac or ""> < json
	jq --arg fixed "$1" --arg sandbox "$nspath" '
		if type == "object" and has("interfaces") and (.interfaces | type) == "array" then
			.interfaces |= map(
				(if has("mac") and .mac != $fixed then .mac = "<random-mac>" else . end)
				| (if .sandbox == $sandbox then .sandbox = "<netns>" else . end))
		else . end'
}

# The raw stdout of every macvlan call: JSON parsed, anything else as a string.
raw_json() {
	local f name
	{
		for f in "$dir"/raw/*.out; do
			[ -e "$f" ] || continue
			name=$(basename "$f" .out)
			printf '%s\t%s\t' "$name" "$(cat "${f%.out}.rc")"
			# exactly one JSON document, else the text as a string
			jq -s -c 'if length == 1 then .[0] else error("not one document") end' "$f" 2>/dev/null ||
				jq -R -s -c . "$f"
		done
	} | jq -R -s --arg fixed "$1" --arg sandbox "$nspath" '
		split("\n") | map(select(length > 0) | split("\t")
		  | {key: .[0], value: {rc: (.[1] | tonumber), stdout: (.[2:] | join("\t") | fromjson)}})
		| from_entries
		| ([.[].stdout | objects | .interfaces? // [] | .[]? | objects | .mac? | strings
		    | select(. != $fixed)] | unique) as $macs
		| walk(if type == "string" then
		         reduce $macs[] as $m (.; gsub($m; "<random-mac>"; "i")) | gsub($sandbox; "<netns>")
		       else . end)'
}

# ---------------------------------------------------------------- configs

ipam_json() { # ipam_json <with-routes 0|1>
	jq -n --arg data "$dir/data" --argjson routes "$1" '
		{type: "host-local", dataDir: $data, ranges: [[{subnet: "10.66.0.0/24"}]]}
		+ (if $routes == 1 then {routes: [{dst: "0.0.0.0/0"}, {dst: "192.168.50.0/24", gw: "10.66.0.254"}]} else {} end)'
}

conf_basic() { # conf_basic <version> <capabilities-json>
	jq -n --arg v "$1" --arg name "$net" --arg master "$master" --argjson ipam "$(ipam_json 1)" \
		--argjson caps "$2" '
		{cniVersion: $v, name: $name, plugins: [
		  {type: "macvlan", master: $master, mode: "bridge", ipam: $ipam,
		   dns: {nameservers: ["10.66.0.53"], search: ["e2e.example"]}}
		  + (if $caps == {} then {} else {capabilities: $caps} end)]}'
}

# The Network Operator's metaPlugins rendering (macvlan, tuning, sbr) with
# host-local in place of nv-ipam.
conf_chain() { # conf_chain <version> <with sbr 0|1> <interface in the sysctl keys>
	jq -n --arg v "$1" --arg name "$net" --arg master "$master" --argjson ipam "$(ipam_json 0)" \
		--argjson sbr "$2" --arg dev "$3" '
		{cniVersion: $v, name: $name, plugins: ([
		  {type: "macvlan", master: $master, mode: "bridge", mtu: 1500, ipam: $ipam},
		  {type: "tuning", sysctl: {
		    "net.ipv4.conf.all.arp_ignore": "1", "net.ipv4.conf.all.arp_announce": "2",
		    "net.ipv4.conf.all.rp_filter": "0",
		    "net.ipv4.conf.\($dev).arp_ignore": "1", "net.ipv4.conf.\($dev).arp_announce": "2",
		    "net.ipv4.conf.\($dev).rp_filter": "0"}}]
		  + (if $sbr == 1 then [{type: "sbr"}] else [] end))}'
}

# ---------------------------------------------------------------- assertions

# Checks the ADD result against the pod and the store; sets pod_mac.
check_added() { # check_added <version> <expected-mac or "">
	local ver=$1 want_mac=$2 res=$last_out link addrs
	jq -e . "$res" >/dev/null || die "ADD result is not JSON"
	[ "$(jq -r .cniVersion "$res")" = "$ver" ] || die "result cniVersion $(jq -r .cniVersion "$res") != $ver"
	link=$(pod_link) || true
	if [ -z "$link" ] || [ "$link" = null ]; then die "no $ifname in the pod after ADD"; fi
	pod_mac=$(jq -r .address <<<"$link")
	[ "$(jq -r .linkinfo.info_kind <<<"$link")" = macvlan ] || die "$ifname is not a macvlan"
	[ "$(jq -r .linkinfo.info_data.mode <<<"$link")" = bridge ] || die "$ifname is not in bridge mode"
	[ "$(jq -r .link_index <<<"$link")" = "$master_ifindex" ] || die "$ifname's lower link is not $master"
	jq -e '.flags | index("UP")' <<<"$link" >/dev/null || die "$ifname is not up"
	[ "$(jq -r .mtu <<<"$link")" = 1500 ] || die "$ifname mtu $(jq -r .mtu <<<"$link") != 1500"
	if [ -n "$want_mac" ]; then
		[ "$pod_mac" = "$want_mac" ] || die "pod MAC $pod_mac != requested $want_mac"
	fi
	addrs=$(ip -n "$ns" -4 -j addr show dev "$ifname" | jq -c '[.[0].addr_info[] | "\(.local)/\(.prefixlen)"]')
	[ "$addrs" = "[\"$first_ip/24\"]" ] || die "pod IPv4 addresses $addrs != [$first_ip/24]"

	if ver_ge "$ver" 0.3.0; then
		jq -e --arg n "$ifname" --arg s "$nspath" --arg m "$pod_mac" '
			(.interfaces | length) == 1
			and .interfaces[0].name == $n and .interfaces[0].sandbox == $s
			and (.interfaces[0].mac | ascii_downcase) == $m' "$res" >/dev/null ||
			die "interfaces[] does not describe $ifname ($pod_mac) in $nspath: $(jq -c .interfaces "$res")"
		jq -e --arg re "$subnet_re" '(.ips | length) == 1 and (.ips[0].address | test($re))
			and (.ips[0].address | endswith("/24")) and .ips[0].interface == 0' "$res" >/dev/null ||
			die "ips[] is not one address of the host-local range on interface 0: $(jq -c .ips "$res")"
		[ "$(jq -r '.ips[0].address' "$res")" = "$first_ip/24" ] || die "ips[0].address is not $first_ip/24"
		[ "$(jq -r '.ips[0].gateway' "$res")" = "$gateway" ] || die "ips[0].gateway is not $gateway"
		if ver_ge "$ver" 1.0.0; then
			jq -e '.ips[0] | has("version") | not' "$res" >/dev/null || die "1.x result has ips[].version"
		else
			[ "$(jq -r '.ips[0].version' "$res")" = 4 ] || die "ips[0].version is not \"4\""
		fi
	else
		jq -e --arg ip "$first_ip/24" --arg gw "$gateway" '.ip4.ip == $ip and .ip4.gateway == $gw
			and (has("interfaces") | not)' "$res" >/dev/null ||
			die "0.x result has no ip4 $first_ip/24 via $gateway: $(jq -c . "$res")"
	fi

	local cid files
	cid=$(container_id "$nspath")
	files=$(store_ips)
	[ "$files" = "$first_ip" ] || die "host-local store holds [$files], expected [$first_ip]"
	[ "$(cat "$dir/data/$net/$first_ip")" = "$cid"$'\r'$'\n'"$ifname" ] ||
		die "store file content is $(jq -R -s . <"$dir/data/$net/$first_ip"), expected id\\r\\nifname"
	[ -n "$(ls "$dir/cache/results" 2>/dev/null)" ] || die "libcni cached no result"
}

check_deleted() {
	local files
	[ -z "$(ip -n "$ns" -j link show dev "$ifname" 2>/dev/null | jq '.[]?' 2>/dev/null)" ] ||
		die "$ifname still in the pod after DEL"
	files=$(store_ips)
	[ -z "$files" ] || die "host-local store still holds [$files] after DEL"
	[ -z "$(ls "$dir/cache/results" 2>/dev/null)" ] || die "libcni cache not cleared after DEL"
	ip -j link show dev "$master" | jq -e '.[0].flags | index("UP")' >/dev/null ||
		die "master $master is gone or down"
}

check_routes() { # the configured routes are in the pod
	local r
	r=$(ip -n "$ns" -4 -j route show table main)
	jq -e --arg gw "$gateway" --arg dev "$ifname" \
		'any(.[]; .dst == "default" and .gateway == $gw and .dev == $dev)' <<<"$r" >/dev/null ||
		die "no default route via $gateway in the pod: $(jq -c . <<<"$r")"
	jq -e --arg dev "$ifname" \
		'any(.[]; .dst == "192.168.50.0/24" and .gateway == "10.66.0.254" and .dev == $dev)' <<<"$r" >/dev/null ||
		die "no route 192.168.50.0/24 via 10.66.0.254 in the pod: $(jq -c . <<<"$r")"
}

# CHECK: below 0.4.0 libcni refuses it before running any plugin.
check_check() { # check_check <version>
	if ver_ge "$1" 0.4.0; then
		cni_ok check
	else
		! cni check || die "CHECK at $1 succeeded; libcni should refuse it"
		grep -q 'does not support the CHECK command' "$last_err" ||
			die "CHECK at $1 failed with an unexpected error: $(cat "$last_err")"
		note "CHECK at $1 refused by libcni, as expected"
	fi
}

save_outputs() { # save_outputs <fixed-mac or "">: what the comparison reads
	normalise_result "$1" <"$dir/add.1.out" >"$dir/cmp-result.json"
	raw_json "$1" >"$dir/cmp-raw.json"
	jq -R -s 'split("\n") | map(select(length > 0) | split("\t") | {key: .[0], value: (.[1] | tonumber)})
		| from_entries' "$dir/outcomes" >"$dir/cmp-exit.json"
	cp "$dir/state.json" "$dir/cmp-state.json"
	if [ "$verbose" = 1 ]; then
		echo "  --- $CASE result"; cat "$dir/cmp-result.json"
		echo "  --- $CASE state"; cat "$dir/cmp-state.json"
	fi
}

# ---------------------------------------------------------------- cases

# ADD, CHECK, a CHECK that must notice a changed MAC, DEL, DEL again, DEL
# with the netns gone. $1 = cniVersion.
case_basic() {
	local ver=$1
	conf_basic "$ver" '{}' >"$dir/conf/net.conflist"

	cni_ok del # DEL of an attachment that was never added
	cni_ok add
	check_added "$ver" ""
	check_routes
	if ver_ge "$ver" 0.3.0; then
		jq -e '.dns.nameservers == ["10.66.0.53"] and .dns.search == ["e2e.example"]' "$last_out" >/dev/null ||
			die "result dns is not the configured one: $(jq -c .dns "$last_out")"
	fi
	snapshot >"$dir/state.json"
	check_check "$ver"
	if ver_ge "$ver" 0.4.0; then
		ip -n "$ns" link set dev "$ifname" address 02:00:5e:00:53:01
		! cni check || die "CHECK passed although $ifname's MAC changed"
		note "CHECK with a changed MAC fails: $(tr '\n' ' ' <"$last_err")"
		ip -n "$ns" link set dev "$ifname" address "$pod_mac"
		cni_ok check
	fi
	cni_ok del
	check_deleted
	cni_ok del
	ip netns del "$ns"
	cni_ok del # the netns is gone
	save_outputs ""
}

# The metaPlugins chain: macvlan, tuning (sysctls with the IFNAME placeholder,
# which tuning replaces on ADD), sbr. $2 = 1 for that chain, 0 for macvlan and
# tuning only, with the real interface name in the sysctl keys.
#
# Outcomes recorded rather than asserted, because the Debian 1.1.1 plugins
# cannot pass them (the comparison shows any deviation of ours):
# - CHECK (>= 0.4.0) of the full chain: the Go macvlan's CHECK looks for the
#   subnet route in the main table, and sbr has moved it to table 100, so it
#   fails with "Failed to find Gateway 10.66.0.1 for interface net1". Were it
#   to pass, tuning's CHECK would fail next: Debian's tuning replaces IFNAME
#   on ADD but not on CHECK ("open /proc/sys/net/ipv4/conf/IFNAME/...: no
#   such file or directory"). Hence the macvlan+tuning variant with the real
#   name, whose CHECK must pass.
# - a repeated DEL of the full chain: Debian's sbr fails with "Failed to get
#   link net1: Link not found" once the interface is gone.
case_chain() {
	local ver=$1 with_sbr=$2 k v kv got rules t100 key=IFNAME
	[ "$with_sbr" = 1 ] || key=$ifname
	conf_chain "$ver" "$with_sbr" "$key" >"$dir/conf/net.conflist"

	cni_ok add
	check_added "$ver" ""
	for kv in all.arp_ignore=1 all.arp_announce=2 all.rp_filter=0 \
		"$ifname.arp_ignore=1" "$ifname.arp_announce=2" "$ifname.rp_filter=0"; do
		k=${kv%=*} v=${kv#*=}
		got=$(ip netns exec "$ns" cat "/proc/sys/net/ipv4/conf/${k/./\/}")
		[ "$got" = "$v" ] || die "net.ipv4.conf.$k is $got, tuning should have set $v"
	done
	rules=$(ip -n "$ns" -4 -j rule)
	if [ "$with_sbr" = 1 ]; then
		t100=$(ip -n "$ns" -4 -j route show table 100)
		jq -e --arg ip "$first_ip" 'any(.[]; .src == $ip and .table == "100")' <<<"$rules" >/dev/null ||
			die "sbr rule 'from $first_ip lookup 100' missing: $(jq -c . <<<"$rules")"
		jq -e --arg gw "$gateway" --arg dev "$ifname" \
			'any(.[]; .dst == "default" and .gateway == $gw and .dev == $dev)
			 and any(.[]; .dst == "10.66.0.0/24" and .dev == $dev)' <<<"$t100" >/dev/null ||
			die "sbr table 100 lacks the default and subnet routes: $(jq -c . <<<"$t100")"
	fi
	snapshot >"$dir/state.json"
	if [ "$with_sbr" = 1 ] && ver_ge "$ver" 0.4.0; then
		if cni check; then
			note "CHECK of macvlan+tuning+sbr passed"
		else
			note "CHECK of macvlan+tuning+sbr failed (recorded): $(tr '\n' ' ' <"$last_err")"
		fi
	else
		check_check "$ver"
	fi
	cni_ok del
	check_deleted
	rules=$(ip -n "$ns" -4 -j rule)
	jq -e 'any(.[]; .table == "100") | not' <<<"$rules" >/dev/null || die "sbr rule left after DEL"
	if [ "$with_sbr" = 1 ]; then
		if cni del; then
			note "repeated DEL passed"
		else
			note "repeated DEL failed (recorded): $(tr '\n' ' ' <"$last_err")"
		fi
	else
		cni_ok del
	fi
	save_outputs ""
}

# A requested MAC: $2 = how (cap: runtimeConfig.mac; args: CNI_ARGS MAC=;
# both: both, runtimeConfig wins).
case_mac() {
	local ver=$1 how=$2 want
	case $how in
	cap)
		want=c2:11:22:33:44:55
		case_cap_args='{"mac":"c2:11:22:33:44:55"}'
		;;
	args)
		want=c2:11:22:33:44:66
		case_cni_args='IgnoreUnknown=true;MAC=c2:11:22:33:44:66'
		;;
	both)
		want=c2:11:22:33:44:55
		case_cap_args='{"mac":"c2:11:22:33:44:55"}'
		case_cni_args='IgnoreUnknown=true;MAC=c2:11:22:33:44:66'
		;;
	*) die "bad mac case $how" ;;
	esac
	conf_basic "$ver" '{"mac": true}' >"$dir/conf/net.conflist"
	cni_ok add
	check_added "$ver" "$want"
	snapshot >"$dir/state.json"
	check_check "$ver"
	cni_ok del
	check_deleted
	save_outputs "$want"
}

# ---------------------------------------------------------------- runner

declare -A case_rc
ns_idx=0
case_names=()
failures=0

run_case() { # run_case <impl> <name> <ifname> <function> <args...>
	local impl=$1 name=$2 ifn=$3 fn=$4 rc=0
	shift 4
	ns_idx=$((ns_idx + 1))
	local nsname=$ns_prefix$ns_idx
	ip netns add "$nsname"
	netns_list+=("$nsname")
	local d=$tmp/$impl/$name
	mkdir -p "$d/conf" "$d/data" "$d/cache"
	local real=$ref_dir/macvlan path=$ref_dir
	if [ "$impl" = ours ]; then
		real=$plugin_dir/macvlan
		path=$plugin_dir:$ref_dir
	fi
	make_tap "$d" "$real"
	set +e
	(
		set -e
		CASE=$impl/$name dir=$d ns=$nsname nspath=/var/run/netns/$nsname ifname=$ifn
		net=e2e-$name cni_path=$path case_cni_args="" case_cap_args=""
		"$fn" "$@"
	) 2>&1
	rc=$?
	set -e
	case_rc[$impl/$name]=$rc
	if [ "$rc" = 0 ]; then
		echo "ok   $impl/$name"
	else
		echo "FAIL $impl/$name"
		failures=$((failures + 1))
	fi
	return 0
}

add_case() { # add_case <name> <ifname> <function> <args...>
	[[ $1 =~ ${E2E_CASES:-.} ]] || return 0
	case_names+=("$1")
	run_case ours "$@"
	run_case ref "$@"
}

echo "# ours: $plugin_dir/macvlan"
echo "# ref:  $ref_dir/macvlan (host-local, tuning, sbr from $ref_dir)"
echo "# client: $client; master: $master"

for v in 0.1.0 0.2.0 0.3.1 0.4.0 1.0.0; do
	add_case "basic-$v" eth0 case_basic "$v"
done
for v in 0.3.1 0.4.0 1.0.0; do
	add_case "chain-$v" net1 case_chain "$v" 1
done
add_case chain-tuning-1.0.0 net1 case_chain 1.0.0 0
add_case mac-cap-0.3.1 eth0 case_mac 0.3.1 cap
add_case mac-cap-1.0.0 eth0 case_mac 1.0.0 cap
add_case mac-args-0.4.0 eth0 case_mac 0.4.0 args
add_case mac-both-1.0.0 eth0 case_mac 1.0.0 both

# ---------------------------------------------------------------- comparison

flatten() { # flatten <prefix> <file>: {"<prefix><path>": "<json value>"}
	jq --arg prefix "$1" '
		def fmt: map(if type == "number" then "[\(.)]"
		             elif test("^[A-Za-z_][A-Za-z0-9_]*$") then ".\(.)"
		             else "[\(tojson)]" end) | join("");
		. as $doc
		| [paths(if type == "object" or type == "array" then length == 0 else true end)
		   | {key: ($prefix + fmt), value: (. as $p | $doc | getpath($p) | tojson)}]
		| from_entries' "$2"
}

diffs=$tmp/differences.json
echo '[]' >"$diffs"
for name in "${case_names[@]}"; do
	if [ "${case_rc[ours/$name]}" != 0 ] || [ "${case_rc[ref/$name]}" != 0 ]; then
		continue
	fi
	for aspect in exit result raw state; do
		jq -n --arg case "$name" \
			--argjson a "$(flatten "$aspect" "$tmp/ours/$name/cmp-$aspect.json")" \
			--argjson b "$(flatten "$aspect" "$tmp/ref/$name/cmp-$aspect.json")" \
			--slurpfile acc "$diffs" '
			$acc[0] + [([$a, $b] | map(keys) | add | unique)[] as $k
			  | select($a[$k] != $b[$k])
			  | {case: $case, path: $k, ours: ($a[$k] // "<absent>"), ref: ($b[$k] // "<absent>")}]' \
			>"$diffs.new"
		mv "$diffs.new" "$diffs"
	done
done

# The allow-list: "case-glob | path-glob | ours-glob | ref-glob | reason", where
# only * is special in a glob.
allow=$(jq -R -s '
	def glob: "^" + (gsub("(?<c>[.\\[\\](){}^$+?|\\\\])"; "\\\(.c)") | gsub("\\*"; ".*")) + "$";
	split("\n") | to_entries
	| map(select(.value | test("^\\s*(#|$)") | not)
	      | {line: (.key + 1), f: (.value | split("|") | map(gsub("^\\s+|\\s+$"; "")))})
	| map(if (.f | length) == 5 and (.f[4] | length) > 0
	      then {line, c: (.f[0] | glob), p: (.f[1] | glob), o: (.f[2] | glob), r: (.f[3] | glob), reason: .f[4]}
	      else error("\(.line): expected 5 |-separated fields with a reason") end)' "$allow_file")

report=$(jq -r --argjson allow "$allow" '
	.[] | . as $d
	| ([$allow[] | . as $a | select(($d.case | test($a.c)) and ($d.path | test($a.p))
	                                and ($d.ours | test($a.o)) and ($d.ref | test($a.r)))] | first) as $m
	| if $m then "expected   \($d.case) | \($d.path) | \($d.ours) | \($d.ref)   [allow-list line \($m.line)]"
	  else "UNEXPECTED \($d.case) | \($d.path) | \($d.ours) | \($d.ref)" end' "$diffs")
unused=$(jq -r --argjson allow "$allow" '
	. as $ds | $allow[] | . as $a
	| select([$ds[] | select((.case | test($a.c)) and (.path | test($a.p))
	                         and (.ours | test($a.o)) and (.ref | test($a.r)))] | length == 0)
	| "  line \(.line): \(.reason)"' "$diffs")

echo
echo "# differences between ours and ref (case | key | ours | ref):"
if [ -n "$report" ]; then printf '%s\n' "$report"; else echo "none"; fi
if [ -n "$unused" ]; then
	echo "# allow-list entries that matched nothing in this run:"
	printf '%s\n' "$unused"
fi
unexpected=$(grep -c '^UNEXPECTED' <<<"$report" || true)

echo
echo "# ${#case_names[@]} cases x 2 implementations: $failures failed runs, $unexpected unexpected differences"
if [ "$failures" -gt 0 ] || [ "$unexpected" -gt 0 ]; then
	[ "${E2E_KEEP_TMP:-0}" = 1 ] || echo "# rerun with E2E_KEEP_TMP=1 to keep the configs, results and plugin I/O"
	exit 1
fi
exit 0
