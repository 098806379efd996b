#!/usr/bin/env bash
# Every plugin's config keys, as its docs page lists them, run through the binary itself
# (CNI STATUS at 1.1.0: the config is read, the kernel untouched, no privileges):
#   - a config holding every key draws no warning;
#   - each key misspelt (its last two letters swapped) draws one warning on stderr
#     naming the key it probably is, and the command's result is what it was without;
#   - the conf-examples' configs draw none;
#   - nv-ipam.conf's keys: the example draws none, a misspelt one a warning naming the file.
# Usage: keys.sh SOURCE_ROOT NAME=BINARY...
# Environment: MESON_EXE_WRAPPER (meson sets it in a cross build) runs the binaries.
set -uo pipefail

src=${1:?usage: $0 SOURCE_ROOT NAME=BINARY...}
shift
declare -A BIN
for a in "$@"; do
	BIN[${a%%=*}]=${a#*=}
done
read -ra wrap <<<"${MESON_EXE_WRAPPER:-}"
command -v jq >/dev/null || { echo "Bail out! jq missing (tests/install-deps.sh test)"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cni-keys-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/node-settings.sh"
node_settings "$tmp/node-settings.json" "$tmp"

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }

# The keys of each docs/<plugin>.md table, as dotted paths; "ipam." and "args.cni." name
# the objects they are in. The top level's common keys (cniVersion, name, ipam, dns,
# logFile, ...) are every plugin's.
declare -A KEYS=(
	[macvlan]="master mode mtu mac linkInContainer bcqueuelen ipv6Autoconf"
	[ipoib]="master pkey mode umcast mtu ipv6Autoconf"
	[host-device]="device hwaddr kernelpath pciBusID deviceID guid ipv6Autoconf args.cni.guid"
	[tuning]="sysctl mac mtu promisc allmulti txQLen dataDir args.cni.sysctl args.cni.mac args.cni.promisc args.cni.mtu args.cni.allmulti args.cni.txQLen"
	[sbr]="table gateways addSourceHints"
	[dummy]="ipv6Autoconf"
	[tap]="owner group multiQueue mtu mac bridge selinuxContext ipv6Autoconf"
	[static]="ipam.type ipam.addresses ipam.routes ipam.dns ipam.logFile ipam.logLevel args.cni.ips"
	[loopback]=""
	[ipvlan]="master mode flag mtu linkInContainer"
	[vlan]="master vlanId=100 mtu linkInContainer"
	[vrf]="vrfname table=100"
	[portmap]="backend=\"nftables\" snat=true masqAll=false markMasqBit=13 externalSetMarkChain conditionsV4=[] conditionsV6=[]"
	[bandwidth]="ingressRate=1000000 ingressBurst=100000 egressRate=1000000 egressBurst=100000"
	[firewall]="backend firewalldZone ingressPolicy iptablesAdminChainName"
	[ptp]="ipMasq ipMasqBackend mtu ipv6Autoconf"
	[bridge]="bridge isGateway isDefaultGateway forceAddress ipMasq ipMasqBackend mtu hairpinMode promiscMode vlan vlanTrunk preserveDefaultVlan macspoofchk enabledad disableContainerInterface portIsolation ipv6Autoconf args.cni.mac"
	[host-local]="ipam.type ipam.subnet ipam.rangeStart ipam.rangeEnd ipam.gateway ipam.ranges ipam.routes ipam.dataDir ipam.resolvConf ipam.logFile ipam.logLevel args.cni.ips"
	[dhcp]="ipam.type ipam.daemonSocketPath ipam.provide ipam.request ipam.priority ipam.logFile ipam.logLevel"
	[nv-ipam]="ipam.type ipam.poolName ipam.poolType ipam.forcePoolName ipam.confDir ipam.poolFile ipam.storeFile ipam.lockTimeoutMs ipam.releasedIPCooldownSeconds ipam.logFile ipam.logLevel ipam.daemonSocket ipam.daemonCallTimeoutSeconds args.cni.poolNames args.cni.poolType args.cni.ips args.cni.allocateDefaultGateway args.cni.allocateIPWithIndex"
)

# status PLUGIN CONFIG: runs STATUS; RC, ERR (stderr), OUT.
status() {
	printf '%s' "$2" >"$tmp/in"
	OUT=$(CNI_COMMAND=STATUS CNI_PATH=/nonexistent "${wrap[@]}" "${BIN[$1]}" <"$tmp/in" 2>"$tmp/err")
	RC=$?
	# cat, not $(<): a subshell that reads the file itself leaks in bash, which the unit
	# suite's valgrind run watches.
	ERR=$(cat "$tmp/err")
}
# conf PLUGIN PATH[=JSON]...: a 1.1.0 config with every PATH set to JSON, "1" when none is
# given (a string passes the common parse, ipam.type included, where STATUS reads no other
# value; a plugin whose STATUS checks its keys' types gets values of theirs).
conf() {
	local p=$1 filter='{cniVersion: "1.1.0", name: "keys", type: $t}' k v
	shift
	for k in "$@"; do
		v='"1"'
		[[ $k != *=* ]] || { v=${k#*=}; k=${k%%=*}; }
		filter+=" | setpath(\"$k\" | split(\".\"); $v)"
	done
	jq -nc --arg t "$p" "$filter"
}
# typo KEY: its last two letters swapped, or its last dropped when they are the same.
typo() {
	local k=$1 t
	t=${k:0:${#k}-2}${k: -1}${k: -2:1}
	[ "$t" != "$k" ] || t=${k:0:${#k}-1}
	echo "$t"
}

warnings() { grep -c 'is not one this plugin reads' <<<"$ERR"; }

# Every plugin the build makes is given (meson's cni_plugin_exes); each needs its keys here.
for p in $(printf '%s\n' "${!BIN[@]}" | sort); do
	[ -n "${KEYS[$p]+set}" ] || { not_ok "$p: its documented keys are not listed in keys.sh"; continue; }
	read -ra keys <<<"${KEYS[$p]}"
	status "$p" "$(conf "$p" "${keys[@]}")"
	if [ "$(warnings)" = 0 ] && [ "$(jq -r '.code // 0' <<<"$OUT" 2>/dev/null)" != 6 ]; then
		ok "$p: every key it documents, no warning"
	else
		not_ok "$p: every key it documents: $OUT $ERR"
	fi
	for kv in "${keys[@]}"; do
		k=${kv%%=*} v=${kv#"$k"}
		leaf=${k##*.} in=${k%"$leaf"}
		t=$in$(typo "$leaf")
		c=$(conf "$p" "$t$v")
		# The answer to the config without it (its object left, empty).
		status "$p" "$(jq -c --arg t "$t" 'delpaths([$t | split(".")])' <<<"$c")"
		rc0=$RC out0=$OUT
		status "$p" "$c"
		want="key \"$t\" is not one this plugin reads and is ignored: is it \"$k\" misspelt?"
		if [ "$(warnings)" = 1 ] && grep -qF "warning: config $want" <<<"$ERR"; then
			ok "$p: $t warned of as $k"
		else
			not_ok "$p: $t: stderr was: $ERR"
		fi
		# A misspelt key changes nothing else: the answer to a config without it.
		[ "$RC" = "$rc0" ] && [ "$OUT" = "$out0" ] || not_ok "$p: $t changed the answer (exit $RC): $OUT"
	done
done

# The examples' configs: every plugin of each conflist, and the quickstart's configs.
for f in "$src"/conf-examples/*/*.conflist "$src"/conf-examples/quickstart/*.json; do
	jq -e 'has("type") or has("plugins")' "$f" >/dev/null 2>&1 || continue
	while IFS= read -r c; do
		for p in "$(jq -r .type <<<"$c")" "$(jq -r '.ipam.type // empty' <<<"$c")"; do
			[ -n "$p" ] && [ -n "${BIN[$p]:-}" ] || continue
			status "$p" "$(jq -c '.cniVersion = "1.1.0"' <<<"$c")"
			if [ "$(warnings)" = 0 ]; then ok "${f#"$src"/} ($p): no warning"; else not_ok "${f#"$src"/} ($p): $ERR"; fi
		done
	done < <(jq -c 'if has("plugins") then .plugins[] + {name, cniVersion} else . end' "$f")
done

# nv-ipam.conf: the example's keys, then one misspelt, named with the file.
cp "$src/conf-examples/nv-ipam/nv-ipam.conf" "$tmp/nv-ipam.conf"
nv=$(jq -nc --arg d "$tmp" '{cniVersion: "1.1.0", name: "keys", ipam: {type: "nv-ipam", confDir: $d}}')
status nv-ipam "$nv"
if [ "$(warnings)" = 0 ]; then ok "conf-examples/nv-ipam/nv-ipam.conf: no warning"; else not_ok "nv-ipam.conf: $ERR"; fi
jq '.storFile = .storeFile | del(.storeFile)' "$src/conf-examples/nv-ipam/nv-ipam.conf" >"$tmp/nv-ipam.conf"
status nv-ipam "$nv"
if grep -qF "warning: $tmp/nv-ipam.conf key \"storFile\" is not one this plugin reads and is ignored: is it \"storeFile\" misspelt?" <<<"$ERR"; then
	ok "nv-ipam.conf: storFile warned of, the file named"
else
	not_ok "nv-ipam.conf: storFile: $ERR"
fi

echo "1..$n"
[ "$failed" = 0 ]
