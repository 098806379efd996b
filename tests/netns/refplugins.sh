# The reference plugins (containernetworking/plugins v1.9.1, ../shared/reference/cni-plugins)
# beside ours on the same inputs, for the ipvlan, vlan and vrf suites: unpacking them,
# and the pod's state both are compared on. Sourced after lib.sh.
#
#   ref_state NS IF          one JSON object of what a plugin made of IF in NS: its
#                            kind and kind's data, MTU, up, master, addresses, routes in
#                            every table, arp_notify (5 processes); REF_STATE_IGNORE
#                            names members left out (comma-separated)
#   ref_result JSON          a result as compared: an empty dns dropped (Go prints "dns":{})
#   ref_use_ours PATH, ref_use_reference PATH
#                            the plugin t_cni runs next: ours under the checker
#                            PLUGIN_WRAPPER names (valgrind), the reference without it
#   ref_compare ...          ours and the reference on one input (below)
#   ref_hostile_strings ...  the hostile values of a string key (below)
. "$(dirname "${BASH_SOURCE[0]}")/../shared.sh"

REF_OURS_WRAP=("${T_BASE_WRAP[@]}")
ref_use_ours() { T_PLUGIN=$1; T_BASE_WRAP=("${REF_OURS_WRAP[@]}"); }
ref_use_reference() { T_PLUGIN=$1; T_BASE_WRAP=(); }

ref_state() {
	local ns=$1 ifname=$2 link addrs r4 r6 notify=?
	link=$(ip -n "$ns" -d -j link show dev "$ifname" 2>/dev/null) || { echo '{"absent":true}'; return 0; }
	addrs=$(ip -n "$ns" -j addr show dev "$ifname")
	r4=$(ip -n "$ns" -4 -j route show table all dev "$ifname")
	r6=$(ip -n "$ns" -6 -j route show table all dev "$ifname")
	ip netns exec "$ns" cat "/proc/sys/net/ipv4/conf/$ifname/arp_notify" 2>/dev/null >"$T_DIR/notify" || :
	read -r notify <"$T_DIR/notify" || :
	jq -cn --arg ignore "${REF_STATE_IGNORE:-}" --argjson l "$link" --argjson a "$addrs" --argjson r4 "$r4" --argjson r6 "$r6" --arg n "$notify" '
		$l[0] as $l | {
			kind: $l.linkinfo.info_kind,
			data: ($l.linkinfo.info_data // {} | del(.flags_raw?)),
			mtu: $l.mtu,
			up: (($l.flags // []) | index("UP") != null),
			master: ($l.master // null),
			addrs: [$a[0].addr_info[] | select(.scope == "global") | "\(.local)/\(.prefixlen)"] | sort,
			routes: [($r4 + $r6)[] | select((.table // "main") != "local" and (.dst | startswith("fe80") | not) and .dst != "ff00::/8")
				 | "\(.dst) via \(.gateway // "-") table \(.table // "main") proto \(.protocol // "boot") scope \(.scope // "global")"] | sort,
			arp_notify: $n
		} | delpaths([$ignore | select(. != "") | split(",")[] | [.]])'
}

ref_result() { jq -cS 'if .dns == {} then del(.dns) else . end' <<<"$1"; }

# ref_compare DESC OURS REF CONF [ENV...]: ADD with ours, the pod's state, DEL; the same
# with the reference; both must succeed or both fail, and on success give the same result
# and the same state of CNI_IFNAME ($T_ENV_IFNAME unless ENV sets it) in $REF_NS.
# Sets REF_OURS_OUT and REF_GO_OUT (the ADDs' outputs).
ref_compare() {
	local desc=$1 ours=$2 ref=$3 conf=$4 ifname=$T_ENV_IFNAME a rc_o rc_g st_o st_g
	shift 4
	for a; do [[ $a == CNI_IFNAME=* ]] && ifname=${a#CNI_IFNAME=}; done
	ref_use_ours "$ours"
	t_cni ADD "$conf" "$@"
	rc_o=$T_RC REF_OURS_OUT=$T_OUT
	st_o=$(ref_state "$REF_NS" "$ifname")
	t_cni DEL "$conf" "$@"
	[ "$rc_o" != 0 ] || t_ok "$desc: our DEL"
	ref_use_reference "$ref"
	t_cni ADD "$conf" "$@"
	rc_g=$T_RC REF_GO_OUT=$T_OUT
	st_g=$(ref_state "$REF_NS" "$ifname")
	t_cni DEL "$conf" "$@"
	[ "$rc_g" != 0 ] || t_ok "$desc: the reference's DEL"
	ref_use_ours "$ours"
	t_eq "$desc: ours and the reference agree on success" "$([ "$rc_g" = 0 ] && echo ok || echo fails)" \
		"$([ "$rc_o" = 0 ] && echo ok || echo fails)"
	[ "$rc_o" = 0 ] && [ "$rc_g" = 0 ] || return 0
	t_eq "$desc: the same result" "$(ref_result "$REF_GO_OUT")" "$(ref_result "$REF_OURS_OUT")"
	t_eq "$desc: the same interface in the pod" "$st_g" "$st_o"
}

# ref_hostile_strings CLEAN CONF KEY NL_CODE BIG_CODE: KEY (a dotted path) of CONF set
# to a newline followed by a line of /etc/passwd, to a NUL, to invalid UTF-8 and to
# 64 KiB: ADD is refused with the code each deserves (NUL and invalid UTF-8: 6), DEL
# succeeds (or, where ADD's was 6, fails with 6 as well: the config cannot be read),
# and CLEAN DESC checks that nothing was left. CONF logs to $T_DIR/hostile.log, which
# must never hold a line the plugin did not start.
ref_hostile_strings() {
	local clean=$1 conf=$2 key=$3 nl=$4 big=$5 variant c code desc
	conf=$(jq -c --arg f "$T_DIR/hostile.log" '. + {logFile: $f, logLevel: "debug"}' <<<"$conf")
	for variant in newline nul utf8 big; do
		case $variant in
		newline) c=$(jq -c --arg v $'a\nroot:x:0:0::/root:/bin/sh' --arg k "$key" 'setpath($k | split("."); $v)' <<<"$conf"); code=$nl ;;
		nul) c=$(jq -c --arg k "$key" 'setpath($k | split("."); "a\u0000b")' <<<"$conf"); code=6 ;;
		utf8) c=$(jq -c --arg k "$key" 'setpath($k | split("."); "a@RAW@b")' <<<"$conf" | sed 's/@RAW@/\xff\xfe/'); code=6 ;;
		big) c=$(jq -c --arg k "$key" 'setpath($k | split("."); ("a" * 65536))' <<<"$conf"); code=$big ;;
		esac
		desc="[$key $variant]"
		t_cni ADD "$c"
		t_err "$desc ADD refused" "$code"
		t_cni DEL "$c"
		if [ "$code" = 6 ] && [ "$T_RC" != 0 ]; then t_err "$desc DEL fails as ADD does" 6; else t_ok "$desc DEL"; fi
		"$clean" "$desc"
	done
	t_eq "[$key] a config's newline never starts a log line" "" \
		"$(grep -v '^[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9:.]*Z [a-z-]*\[[0-9]*\] [a-z]*: ' "$T_DIR/hostile.log" 2>/dev/null |
			grep -v '^# cni-rdma-plugins log' | head -3)"
}
