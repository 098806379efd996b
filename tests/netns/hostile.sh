#!/usr/bin/env bash
# Hostile input and faults, for every plugin of the suite: a network config is written by
# whoever may create a NAD, and the plugins run as root.
#
#   hostile.sh NAME=BINARY... [REFERENCE_CNI_DIR]
#
# NAME is each plugin of the table PLUGINS below (all of them are needed): adding a plugin
# to the suite is adding its entry there, its binary to the command line (meson.build,
# run-all.sh), and its string keys to STRING_KEYS (section 2) when it has keys of its own.
#
# 1. The log path key of every plugin, and nv-ipam's path keys (confDir; poolFile and
#    storeFile in the node's nv-ipam.conf) as a symbolic link, a FIFO, a directory, a
#    device, a relative path, a path with "..", and a path outside the directories the
#    node allows: refused (code 7), nothing created outside, no hang; DEL still cleans up,
#    or fails as ADD does when it cannot reach the store. poolFile and storeFile in a
#    network config: code 7 for ADD and DEL, whatever they name.
# 2. Every string key as a newline, a NUL, invalid UTF-8 and 64 KiB: the code each
#    deserves, nothing left behind (or, where the value is harmless, a clean ADD and DEL);
#    no log line that the plugin did not start. name and logLevel of every plugin.
# 3. The environment, for every plugin: CNI_NETNS naming a FIFO, a directory, a device,
#    another namespace kind, a plain file; CNI_IFNAME that is not UTF-8.
# 4. The store directory open to others, a planted symbolic link as its lock.
# 5. An IPAM plugin that prints more than the plugin reads.
# 6. Keys differing only in case, side by side with Debian's Go macvlan.
# 7. SIGKILL at every netlink send of ADD (strace), for every plugin that sends (macvlan
#    + nv-ipam, host-device L2 and with nv-ipam, ipoib, dummy, tap, tuning, sbr), then DEL
#    twice: nothing left in either netns, in the store or among the plugins' records, the
#    host device home, the interface a chained plugin changed as it was.
# 8. State paths and faults: a network config naming another store's lock,
#    logs or counts, or its own store with a held static IP; a store path of
#    the node's inside another store; DEL under broken node settings; a sync
#    that fails (strace); a result that cannot be written (stdout full); a log
#    file the plugins did not make; store content in an error; an older
#    store's oversized record; a pool named twice; check on hidden damage.
#
# Each case checks the exit status, the CNI error code, the pod and the links this run
# made (and any made off them), the pod's routing rules, the store, the plugins' records
# of this run's containers and the files outside the allowed directories; a chained
# plugin's case runs on an interface net1 made for it (a veth end with an address), which
# must be as it was after DEL. Needs root (and strace for 7 and 8); exits 77 only when
# network namespaces cannot be created. HOSTILE_SECTIONS (default "1 2 3 4 5 6 7 8")
# picks sections, for slow runs under valgrind; HOSTILE_PLUGINS (default all) the plugins
# whose cases run. NVIPAM_TOOL (default: tool/nv-ipam-tool
# beside nv-ipam) reads the store; STORE_SUMS (default: tests/store-sums of the build)
# checksums the older store written by hand.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# The plugins of the suite, one entry each:
#   NAME|KIND|LOG KEY|KILL|MEMBERS
# KIND: link (makes the pod's interface net1), chain (changes net1, which each case makes
# first: a veth end with 10.123.2.5/24, given as prevResult), meta (a chained plugin of the
# node's side: run in a netns standing for the node, net1's peer there named in
# prevResult; the node's links, rules and qdiscs compared after DEL), lo (the pod's
# loopback), ipam (allocates: never opens the pod, run as a runtime runs an IPAM plugin),
# lease (an IPAM plugin leasing on the pod's interface through its daemon, dhcp: net1 made
# first, a veth whose peer is on the bridge of a DHCP server's netns; the daemon and
# Debian's dnsmasq started for the run).
# LOG KEY: where its config names a log file. KILL: yes when its ADD sends netlink
# (section 7; bridge and the meta plugins have theirs in their own suites, which kill
# every process start and write too). MEMBERS: its own keys in a config that works, as
# JSON members (@M@ the master veth, @D@ the host device, @BR@ the node's bridge, @VRF@ a
# VRF name, @NVIPAM@, @STATIC@ and @HOSTLOCAL@ the IPAM objects of nv-ipam, static and
# host-local, @DHCP@ dhcp's).
PLUGINS=(
	'macvlan|link|logFile|yes|"master":"@M@","ipam":@NVIPAM@'
	'ipoib|link|logFile|yes|"master":"@M@","ipam":@NVIPAM@'
	'host-device|link|logFile|yes|"device":"@D@","ipam":@NVIPAM@'
	'dummy|link|logFile|yes|"ipam":@STATIC@'
	'tap|link|logFile|yes|"mtu":1400,"ipam":@STATIC@'
	'tuning|chain|logFile|yes|"sysctl":{"net.ipv4.conf.IFNAME.arp_ignore":"1"},"mtu":1400,"txQLen":77'
	'sbr|chain|logFile|yes|'
	'static|ipam|ipam.logFile|no|"ipam":@STATIC@'
	'nv-ipam|ipam|ipam.logFile|no|"ipam":@NVIPAM@'
	'loopback|lo|logFile|yes|'
	'host-local|ipam|ipam.logFile|no|"ipam":@HOSTLOCAL@'
	'ipvlan|link|logFile|yes|"master":"@M@","ipam":@STATIC@'
	'vlan|link|logFile|yes|"master":"@M@","vlanId":100,"ipam":@STATIC@'
	'vrf|chain|logFile|yes|"vrfname":"@VRF@"'
	'bridge|link|logFile|no|"bridge":"@BR@","ipam":@STATIC@'
	'ptp|link|logFile|no|"mtu":1400,"ipam":@HOSTLOCAL@'
	'dhcp|lease|ipam.logFile|no|"ipam":@DHCP@'
	'portmap|meta|logFile|no|"backend":"iptables","capabilities":{"portMappings":true},"runtimeConfig":{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"}]}'
	'bandwidth|meta|logFile|no|"ingressRate":1000000,"ingressBurst":100000,"egressRate":1000000,"egressBurst":100000'
	'firewall|meta|logFile|no|"backend":"iptables"'
)
declare -A BINS=() KIND=() LOGKEY=() KILL=() MEMBERS=()
for e in "${PLUGINS[@]}"; do
	IFS='|' read -r name kind log kill members <<<"$e"
	KIND[$name]=$kind LOGKEY[$name]=$log KILL[$name]=$kill MEMBERS[$name]=$members
done
REF=/usr/lib/cni
for a in "$@"; do
	case $a in
	*=*) BINS[${a%%=*}]=$(realpath "${a#*=}") ;;
	*) REF=$a ;;
	esac
done
for name in "${!KIND[@]}"; do
	[ -n "${BINS[$name]:-}" ] || { echo "usage: $0 NAME=BINARY... [REFERENCE_CNI_DIR]: no $name="; exit 1; }
done
for name in "${!BINS[@]}"; do
	[ -n "${KIND[$name]:-}" ] || { echo "FAIL: $name has no entry in PLUGINS (hostile.sh)"; exit 1; }
done
# HOSTILE_PLUGINS: the plugins whose cases run (default all).
ALL=$(for e in "${PLUGINS[@]}"; do printf '%s ' "${e%%|*}"; done)
[ -z "${HOSTILE_PLUGINS:-}" ] || ALL=$HOSTILE_PLUGINS
NVIPAM=${BINS[nv-ipam]}
MACVLAN=${BINS[macvlan]}
TOOL=$(realpath "${NVIPAM_TOOL:-$(dirname "$NVIPAM")/tool/nv-ipam-tool}")
SUMS=$(realpath "${STORE_SUMS:-$(dirname "$NVIPAM")/../../tests/store-sums}")
for p in "${BINS[@]}" "$REF/macvlan" "$TOOL" "$SUMS"; do
	[ -x "$p" ] || { echo "FAIL: $p is not executable"; exit 1; }
done
command -v strace >/dev/null || { echo "FAIL: strace not found"; exit 1; }

t_init
SECTIONS=" ${HOSTILE_SECTIONS:-1 2 3 4 5 6 7 8} "
section() { [[ "$SECTIONS" == *" $1 "* ]]; }

# The node lets configs name files in $A only; $O is any other place.
A=$T_DIR/allowed
O=$T_DIR/outside
mkdir -m 0700 "$A" "$O"
node_settings "$T_DIR/node-settings.json" "$A"
# host-local's stores lie below a state root of the node, never in nv-ipam's directories.
HLROOT=$T_DIR/hl-root
mkdir -m 0700 "$HLROOT"
jq --arg r "$HLROOT" --arg s "$A/sock" '.stateRoots = [$r] | .socketDirs = [$s]' "$T_DIR/node-settings.json" >"$T_DIR/settings.tmp" &&
	mv "$T_DIR/settings.tmp" "$T_DIR/node-settings.json"
BIN=$T_DIR/bin
mkdir "$BIN"
ln -s "$NVIPAM" "$BIN/nv-ipam"
ln -s "${BINS[static]}" "$BIN/static"
# host-local as a link plugin's delegate (ptp), where the host-local entry runs it on its own.
ln -s "${BINS[host-local]}" "$BIN/host-local"
T_ENV_PATH=$BIN
# The plugins keep records by container ID on the node (/run/cni-rdma-plugins): this run's own.
t_name CID hc
T_ENV_CONTAINERID=$CID
RECORDS=/run/cni-rdma-plugins

t_netns POD
T_ENV_NETNS=$POD_path
t_name M hm
t_name MP hp
t_veth "$M" "$MP"
t_name D hd
t_name DP hq
t_veth "$D" "$DP"
# The node's bridge (bridge leaves it at DEL, as upstream's does).
t_name BR hb
ip link add "$BR" type bridge && ip link set "$BR" up
t_defer ip link del "$BR"
t_name VRF hv
# The node of the meta plugins, and the end of net1 there.
t_netns NODE
t_name HV hn
# The drivers this kernel lacks: a plugin making such a link fails there (code 100, naming
# the driver), where a working ADD would succeed or reach IPAM.
DRIVERLESS=
ip -n "$POD" link add hk0 type veth peer name hk1
for kind in dummy ipvlan vlan vrf; do
	case $kind in
	dummy) a=(type dummy) ;;
	ipvlan) a=(link hk0 type ipvlan mode l2) ;;
	vlan) a=(link hk0 type vlan id 5) ;;
	vrf) a=(type vrf table 10) ;;
	esac
	if ip -n "$POD" link add hkx "${a[@]}" 2>/dev/null; then
		ip -n "$POD" link del hkx
	else
		DRIVERLESS+=" $kind"
	fi
done
ip -n "$POD" link del hk0
echo "# drivers this kernel lacks:${DRIVERLESS:- none}"
driverless() { [[ " $DRIVERLESS " == *" $1 "* ]]; }
HOST_START=$(t_links)
RULES_START=$(ip -n "$POD" rule; ip -n "$POD" -6 rule)

cat >"$A/pools.json" <<JSON
{"pools": {"p": {"subnet": "10.123.0.0/24", "startIP": "10.123.0.10",
                 "endIP": "10.123.0.200", "gateway": "10.123.0.1"}}}
JSON
# The node names its pool file and store in nv-ipam.conf; configs reach it through confDir.
nvipam_node_conf "$A" "$A/pools.json" "$A/store"
NVIPAM_OBJ='{"type":"nv-ipam","poolName":"p","confDir":"'$A'"}'

STATIC_OBJ='{"type":"static","addresses":[{"address":"10.123.1.5/24","gateway":"10.123.1.1"}]}'
HOSTLOCAL_OBJ='{"type":"host-local","subnet":"10.123.4.0/24","dataDir":"'$HLROOT/store'"}'
DHCP_OBJ='{"type":"dhcp","daemonSocketPath":"'$A/sock/dhcp.sock'"}'
# dhcp's server: Debian's dnsmasq on a bridge of a netns of its own (the pod's net1 is a
# veth to it, made by prepare()), and our daemon on a socket below $A, which the node's
# settings list in socketDirs. Short tries: a failing ADD gives up after 10 s.
if [[ " $ALL " == *" dhcp "* ]]; then
	command -v dnsmasq >/dev/null || { echo "FAIL: dnsmasq not found (tests/install-deps.sh test)"; exit 1; }
	t_netns SRV
	t_name HS hs
	ip -n "$SRV" link add hsbr type bridge && ip -n "$SRV" addr add 10.123.6.1/24 dev hsbr &&
		ip -n "$SRV" link set hsbr up || { echo "FAIL: the DHCP server's bridge"; exit 1; }
	ip netns exec "$SRV" dnsmasq --conf-file=/dev/null --port=0 --user=root --interface=hsbr \
		--bind-interfaces --dhcp-range=10.123.6.50,10.123.6.250,255.255.255.0,2m \
		--dhcp-option=option:router,10.123.6.1 --dhcp-authoritative --no-ping \
		--dhcp-leasefile="$A/dhcp.leases" --pid-file="$T_DIR/dnsmasq.pid" ||
		{ echo "FAIL: dnsmasq did not start"; exit 1; }
	t_defer 'kill "$(cat "$T_DIR/dnsmasq.pid")"'
	"${BINS[dhcp]}" daemon -socketpath "$A/sock/dhcp.sock" -timeout 2s -resendtimeout 10s \
		>"$T_DIR/dhcp-daemon.log" 2>&1 &
	t_defer "kill $!"
	# Hang guard: the socket appears at once.
	for _ in $(seq 100); do [ -S "$A/sock/dhcp.sock" ] && break; sleep 0.1; done
fi
# A meta plugin's prevResult: net1's peer on the node, and net1 in the pod.
PREV_META='{"cniVersion":"1.0.0","interfaces":[{"name":"'$HV'"},{"name":"net1","sandbox":"'$POD_path'"}],"ips":[{"address":"10.123.2.5/24","gateway":"10.123.2.1","interface":1}]}'
# The interface a chained plugin changes, made by prepare(): prevResult names it.
PREV='{"cniVersion":"1.0.0","interfaces":[{"name":"net1","sandbox":"'$POD_path'"}],"ips":[{"address":"10.123.2.5/24","gateway":"10.123.2.1","interface":0}]}'

base_conf() { # PLUGIN: a config that works (ipoib's master is a veth: refused by kind; dummy's driver is missing)
	local m=${MEMBERS[$1]} log=$A/plugin.log
	m=${m//@M@/$M}
	m=${m//@D@/$D}
	m=${m//@NVIPAM@/$NVIPAM_OBJ}
	m=${m//@STATIC@/$STATIC_OBJ}
	m=${m//@HOSTLOCAL@/$HOSTLOCAL_OBJ}
	m=${m//@DHCP@/$DHCP_OBJ}
	m=${m//@BR@/$BR}
	m=${m//@VRF@/$VRF}
	case ${KIND[$1]} in
	ipam | lease) jq -c --arg l "$log" '.ipam += {"logFile": $l, "logLevel": "debug"}' <<<"{\"cniVersion\":\"1.0.0\",\"name\":\"h\",$m}" ;;
	chain) echo "{\"cniVersion\":\"1.0.0\",\"name\":\"h\",\"type\":\"$1\",\"logFile\":\"$log\",\"logLevel\":\"debug\"${m:+,$m},\"prevResult\":$PREV}" ;;
	meta) echo "{\"cniVersion\":\"1.0.0\",\"name\":\"h\",\"type\":\"$1\",\"logFile\":\"$log\",\"logLevel\":\"debug\"${m:+,$m},\"prevResult\":$PREV_META}" ;;
	*) echo "{\"cniVersion\":\"1.0.0\",\"name\":\"h\",\"type\":\"$1\",\"logFile\":\"$log\",\"logLevel\":\"debug\"${m:+,$m}}" ;;
	esac
}

# chain_state: what a chained plugin may change of net1 and the pod: its MTU, MAC, queue
# length and flags, its sysctls, the pod's rules and the tables but local and main.
chain_state() {
	ip -n "$POD" -j link show net1 2>/dev/null | jq -c '.[0] | [.mtu, .address, .txqlen, .flags]'
	ip netns exec "$POD" cat /proc/sys/net/ipv4/conf/net1/arp_ignore 2>/dev/null
	ip -n "$POD" rule; ip -n "$POD" -6 rule
	ip -n "$POD" route show table all | grep -v 'table local' | grep table
}
# node_state: what a meta plugin may change of the node: its links, its netfilter rules
# (both families, both backends) and its qdiscs and filters.
node_state() {
	ip -n "$NODE" -o link show | sed -E 's/^[0-9]+: //; s/@[^:]*:/:/' | cut -d: -f1 | sort
	ip netns exec "$NODE" iptables-save 2>/dev/null | grep -v '^#' | sed -E 's/ \[[0-9]+:[0-9]+\]//'
	ip netns exec "$NODE" ip6tables-save 2>/dev/null | grep -v '^#' | sed -E 's/ \[[0-9]+:[0-9]+\]//'
	ip netns exec "$NODE" nft list ruleset 2>/dev/null | sed -E 's/counter packets [0-9]+ bytes [0-9]+/counter/'
	tc -n "$NODE" qdisc show; tc -n "$NODE" filter show dev lo
}
# prepare PLUGIN: for a chained plugin, net1 as an earlier plugin would leave it (a meta
# plugin's with its peer on the node).
prepare() {
	case ${KIND[$1]} in
	lease) ip -n "$POD" link add net1 type veth peer name "$HS" netns "$SRV"
		ip -n "$SRV" link set "$HS" master hsbr up
		return 0 ;;
	chain) ip -n "$POD" link add net1 type veth peer name net1p ;;
	meta) ip -n "$POD" link add net1 type veth peer name "$HV" netns "$NODE"
		ip -n "$NODE" link set "$HV" up ;;
	*) return 0 ;;
	esac
	ip -n "$POD" addr add 10.123.2.5/24 dev net1
	ip -n "$POD" link set net1 up
	CHAIN_BEFORE=$(chain_state)
}
# finish DESC PLUGIN: for a chained plugin, net1 as it was (and the node), then gone.
finish() {
	case ${KIND[$2]} in
	lease) ip -n "$POD" link del net1 2>/dev/null
		# The server drops a released lease from its file a moment after DEL (hang guard 10 s).
		for _ in $(seq 100); do [ -s "$A/dhcp.leases" ] || break; sleep 0.1; done
		t_eq "$1: the DHCP server holds no lease" "" "$(cat "$A/dhcp.leases" 2>/dev/null)"
		return 0 ;;
	chain | meta) ;;
	*) return 0 ;;
	esac
	t_eq "$1: net1, its sysctls, the pod's rules and tables as before ADD" "$CHAIN_BEFORE" "$(chain_state)"
	ip -n "$POD" link del net1 2>/dev/null
	[ "${KIND[$2]}" = meta ] &&
		t_eq "$1: the node's links, rules and qdiscs as before ADD" "$NODE_START" "$(node_state)"
}
# records: the plugins' records of this run's containers and devices.
records() {
	(cd "$RECORDS" 2>/dev/null && ls -d */"$CID"* */"$D"* 2>/dev/null)
	# host-local's leases (a file named by its address) of network h.
	ls "$HLROOT/store/h" 2>/dev/null | grep -E '^[0-9.]+$|^[0-9a-f:]*:[0-9a-f:]*$'
}

# node_store NAME STORE: a working nv-ipam config whose confDir's nv-ipam.conf (the
# node's file) names STORE.
node_store() {
	mkdir -p "$A/conf-$1"
	nvipam_node_conf "$A/conf-$1" "$A/pools.json" "$2"
	base_conf nv-ipam | jq -c --arg d "$A/conf-$1" '.ipam.confDir = $d'
}

# The first line of a log file the plugins create for a network config (common/cni/trust.h).
LOG_MARK="# cni-rdma-plugins log: written by the CNI plugins of this node"

use() { # PLUGIN
	T_PLUGIN=${BINS[$1]}
	T_WRAP=()
	[ "${KIND[$1]}" = meta ] && T_WRAP=(ip netns exec "$NODE")
}

# The node as after its first pods: the meta plugins' node-wide chains (upstream's, which
# stay) made by one ADD and DEL each.
for p in portmap bandwidth firewall; do
	[[ " $ALL " == *" $p "* ]] || continue
	use "$p"
	prepare "$p"
	t_cni ADD "$(base_conf "$p")"
	t_ok "[$p on the node] a first ADD"
	t_cni DEL "$(base_conf "$p")"
	t_ok "[$p on the node] its DEL"
	ip -n "$POD" link del net1
done
NODE_START=$(node_state)

# allocs [STORE]: addresses held in the store (default the node's), read by the tool; a
# store it cannot read is "unreadable", never 0.
allocs() {
	# No store yet (nothing was ever allocated): show refuses a missing store.
	if [ ! -e "${1:-$A/store}" ] && [ ! -e "${1:-$A/store}.d" ]; then
		echo 0
		return
	fi
	"$TOOL" show --store "${1:-$A/store}" --pool-file "$A/pools.json" --json 2>/dev/null |
		jq -r '[.pools[].allocations[]] | length' 2>/dev/null | grep . || echo unreadable
}

# The state every case must leave: pod with lo only, host links as at start,
# the device named and without alias, no allocation, nothing outside $A.
check_clean() { # DESC
	t_eq "$1: pod holds lo only" "lo" "$(t_link_names "$POD")"
	t_eq "$1: host links as at start" "$HOST_START" "$(t_links)"
	t_eq "$1: the host device is home, without alias" "$D " \
		"$(t_link_json "" "$D" | jq -r '"\(.ifname) \(.ifalias // "")"')"
	t_eq "$1: no address held" 0 "$(allocs)"
	t_eq "$1: nothing created outside the allowed directory" "" "$(ls -A "$O")"
	t_eq "$1: the pod's rules are the kernel's" "$RULES_START" "$(ip -n "$POD" rule; ip -n "$POD" -6 rule)"
	t_eq "$1: no record of this run's containers or devices" "" "$(records)"
	t_eq "$1: every log line is one the plugin started" "" \
		"$(cat "$A"/*.log 2>/dev/null | grep -Ev '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z [a-z-]+\[[0-9]+\] (error|warning|info|debug): ' |
			grep -vxF "$LOG_MARK" | head -3)"
}

# run_case DESC PLUGIN ADD-CODE DEL-CODE CONF [ENV...]: ADD, then DEL with the
# same config, each expecting its code ("0": success; DEL "any": success or a
# CNI error, for a config DEL does not read whole); the state must be clean.
run_case() {
	local desc=$1 plugin=$2 add_code=$3 del_code=$4 conf=$5
	shift 5
	# A link of a driver this kernel lacks: what would succeed, or reach IPAM, fails
	# making it (code 100, naming the driver, nothing made).
	if driverless "$plugin" && { [ "$add_code" = 0 ] || [ "$add_code" = 101 ]; }; then
		add_code=100
	fi
	use "$plugin"
	prepare "$plugin"
	t_cni ADD "$conf" "$@"
	if [ "$add_code" = 0 ]; then
		t_ok "$desc: ADD succeeds"
	else
		t_err "$desc: ADD fails with code $add_code" "$add_code"
	fi
	t_cni DEL "$conf" "$@"
	if [ "$del_code" = 0 ]; then
		t_ok "$desc: DEL succeeds"
	elif [ "$del_code" = any ] && [ "$T_RC" = 0 ]; then
		t_pass "$desc: DEL succeeds"
	elif [ "$del_code" = any ]; then
		t_err "$desc: DEL answers with a CNI error" ""
	else
		t_err "$desc: DEL fails with code $del_code" "$del_code"
	fi
	finish "$desc" "$plugin"
	check_clean "$desc"
}

if section 1; then
	echo "# 1. path keys"
	mkfifo "$A/fifo"
	mkdir "$A/dir"
	mknod "$A/null" c 1 3
	ln -s "$O/victim" "$A/link"
	ln -s "$O" "$A/linkdir"
	# variant NAME VALUE: the hostile paths, each in the area the key is checked in.
	PATH_VARIANTS=(
		"symlink|$A/link"
		"symlink-dir|$A/linkdir/x"
		"fifo|$A/fifo"
		"directory|$A/dir"
		"device|$A/null"
		"relative|x.log"
		"dotdot|$A/../outside/x"
		"outside|$O/x"
	)
	# The codes of ADD and DEL per key and variant. A logging setting never stops a
	# DEL. A network config naming poolFile or storeFile is refused whatever they
	# name (where state lives is the node's). What DEL needs to find the store (confDir,
	# the node's storeFile) fails DEL as it fails ADD: it cannot reach what it should
	# release. DEL never reads the pool file.
	path_codes() { # KEY VARIANT -> "ADD DEL"
		case $1:$2 in
		logFile:* | ipam.logFile:*) echo "7 0" ;;
		confDir:* | poolFile:* | storeFile:*) echo "7 7" ;;
		node.*:relative | node.*:dotdot | node.*:outside) echo "7 7" ;;
		node.poolFile:*) echo "7 0" ;;
		node.storeFile:symlink-dir) echo "7 7" ;;
		node.storeFile:*) echo "5 5" ;;
		esac
	}
	for v in "${PATH_VARIANTS[@]}"; do
		name=${v%%|*}
		val=${v#*|}
		for plugin in $ALL; do
			key=${LOGKEY[$plugin]}
			conf=$(base_conf "$plugin" | jq -c --arg v "$val" --arg k "$key" 'setpath($k | split("."); $v)')
			hung=$T_HUNG
			run_case "[$plugin $key $name]" "$plugin" $(path_codes "$key" "$name") "$conf"
			t_eq "[$plugin $key $name] no hang (no run stopped by the hang guard)" 0 "$((T_HUNG - hung))"
		done
		for key in confDir poolFile storeFile; do
			# An existing directory is what confDir should name.
			[ "$key" = confDir ] && [ "$name" = directory ] && continue
			conf=$(base_conf nv-ipam | jq -c --arg v "$val" --arg k "$key" '.ipam[$k] = $v')
			hung=$T_HUNG
			run_case "[nv-ipam $key $name]" nv-ipam $(path_codes "$key" "$name") "$conf"
			t_eq "[nv-ipam $key $name] no hang (no run stopped by the hang guard)" 0 "$((T_HUNG - hung))"
		done
		# The same paths set by the node's own nv-ipam.conf.
		for key in poolFile storeFile; do
			d=$A/node-$key-$name
			mkdir -p "$d"
			if [ "$key" = poolFile ]; then
				nvipam_node_conf "$d" "$val" "$A/store"
			else
				nvipam_node_conf "$d" "$A/pools.json" "$val"
			fi
			conf=$(base_conf nv-ipam | jq -c --arg d "$d" '.ipam.confDir = $d')
			hung=$T_HUNG
			run_case "[nv-ipam node $key $name]" nv-ipam $(path_codes "node.$key" "$name") "$conf"
			t_eq "[nv-ipam node $key $name] no hang (no run stopped by the hang guard)" 0 "$((T_HUNG - hung))"
		done
	done
	t_eq "the FIFO, the device and the link target are as they were" "fifo device absent" \
		"$([ -p "$A/fifo" ] && echo fifo) $([ -c "$A/null" ] && echo device) $([ -e "$O/victim" ] && echo present || echo absent)"
fi

if section 2; then
	echo "# 2. string keys"
	BIG=$(printf 'a%.0s' $(seq 65536))
	# plugin|key path|ADD's code for a newline|for 64 KiB[|for a NUL]. A NUL is code 6
	# where the key is read, unless given; invalid UTF-8 anywhere fails the parse (code 6,
	# DEL too). A 64 KiB network name is more than nv-ipam records in a pool's log (code 7).
	# A key path's parts are split at "/" when it has one, else at "."; a number is an index.
	STRING_KEYS=(
		"macvlan|cniVersion|1|1"
		"macvlan|type|0|0"
		"macvlan|master|7|7"
		"macvlan|mode|7|7"
		"macvlan|mac|7|7"
		"macvlan|runtimeConfig.mac|7|7"
		"macvlan|ipam.type|7|101"
		"macvlan|dns.domain|0|0"
		"ipoib|master|7|7"
		"ipoib|pkey|7|7"
		"ipoib|mode|7|7"
		"host-device|device|7|7"
		"host-device|hwaddr|7|7"
		"host-device|kernelpath|7|7"
		"host-device|pciBusID|102|102"
		"host-device|deviceID|102|102"
		"host-device|runtimeConfig.deviceID|102|102"
		"dummy|ipam.type|7|101"
		"tap|mac|7|7"
		"tap|bridge|7|7"
		"tap|selinuxContext|2|2"
		"tuning|mac|7|7"
		"tuning|sysctl/net.ipv4.conf.IFNAME.arp_ignore|7|7|7"
		"sbr|gateways/0|7|7"
		"static|ipam.addresses.0.address|7|7"
		"static|ipam.addresses.0.gateway|7|7"
		"static|ipam.dns.domain|0|0"
		"nv-ipam|ipam.poolName|7|7"
		"nv-ipam|ipam.poolType|7|7"
		"nv-ipam|ipam.confDir|7|7"
		"nv-ipam|ipam.poolFile|7|7"
		"nv-ipam|ipam.storeFile|7|7"
		"nv-ipam|ipam.logLevel|7|7"
		"nv-ipam|ipam.daemonSocket|0|0"
		"nv-ipam|args.cni.poolType|7|7"
		"nv-ipam|deviceID|7|7"
		"dhcp|ipam.daemonSocketPath|7|7"
		"dhcp|ipam.request.0.option|7|7"
		"dhcp|ipam.provide.0.option|7|7"
	)
	# name and logLevel of every plugin but nv-ipam's (above): what each plugin reads of them.
	for plugin in $ALL; do
		case $plugin in
		nv-ipam) ;;
		# A name of 64 KiB is more than nv-ipam records in a pool's log and than one
		# directory of host-local's store can be named (code 7, also for the plugins
		# delegating to them); the others take it.
		static) STRING_KEYS+=("static|name|7|0" "static|ipam.logLevel|0|0") ;;
		host-local) STRING_KEYS+=("host-local|name|7|7" "host-local|ipam.logLevel|0|0") ;;
		# portmap and bandwidth keep records named "<container ID>:<network>": the name
		# must fit one.
		*) big=0
			[[ ${MEMBERS[$plugin]} == *@NVIPAM@* || ${MEMBERS[$plugin]} == *@HOSTLOCAL@* ]] && big=7
			case $plugin in portmap | bandwidth) big=7 ;; esac
			STRING_KEYS+=("$plugin|name|7|$big" "$plugin|logLevel|0|0") ;;
		esac
	done
	# The jq path of a key path.
	path_of() { [[ $1 == */* ]] && echo "\$k | split(\"/\") | map(tonumber? // .)" || echo "\$k | split(\".\") | map(tonumber? // .)"; }
	for entry in "${STRING_KEYS[@]}"; do
		IFS='|' read -r plugin key nl_code big_code nul_code <<<"$entry"
		# HOSTILE_PLUGINS: only the cases of the plugins it names.
		[[ " $ALL " == *" $plugin "* ]] || continue
		path=$(path_of "$key")
		# host-device: the device key names the device only when it is the selector.
		prep='.'
		case $plugin:$key in
		host-device:hwaddr | host-device:kernelpath | host-device:pciBusID | host-device:*deviceID) prep='del(.device)' ;;
		esac
		# sbr's gateways: an array of one address to be made hostile.
		[ "$plugin" = sbr ] && prep='.gateways = ["10.123.2.1"]'
		for variant in newline nul utf8 big; do
			base=$(base_conf "$plugin" | jq -c "$prep")
			del_code=any
			case $variant in
			newline) conf=$(jq -c --arg v $'a\nroot:x:0:0::/root:/bin/sh' --arg k "$key" "setpath($path; \$v)" <<<"$base"); code=$nl_code ;;
			nul) conf=$(jq -c --arg k "$key" "setpath($path; \"a\\u0000b\")" <<<"$base"); code=${nul_code:-6} ;;
			utf8) conf=$(jq -c --arg k "$key" "setpath($path; \"a@RAW@b\")" <<<"$base" | sed 's/@RAW@/\xff\xfe/'); code=6 del_code=6 ;;
			big) conf=$(jq -c --arg v "$BIG" --arg k "$key" "setpath($path; \$v)" <<<"$base"); code=$big_code ;;
			esac
			[ "$code" = 0 ] && del_code=0
			# ipoib's master is a veth: what passes the config is refused by kind.
			[ "$plugin" = ipoib ] && [ "$code" = 0 ] && code=7
			run_case "[$plugin $key $variant]" "$plugin" "$code" "$del_code" "$conf"
		done
	done
	t_eq "a config's newline never starts a log line" "" "$(grep -h '^root:x' "$A"/*.log)"
	t_contains "a config's newline is in the log, escaped" 'a\nroot:x:0:0::/root:/bin/sh' "$(cat "$A"/*.log)"
fi

if section 3; then
	echo "# 3. the environment"
	mkfifo "$T_DIR/netns-fifo"
	: >"$T_DIR/netns-file"
	for plugin in $ALL; do
		for v in "fifo|$T_DIR/netns-fifo" "directory|$T_DIR" "device|/dev/null" \
			"mount namespace|/proc/self/ns/mnt" "plain file|$T_DIR/netns-file"; do
			name=${v%%|*}
			# An IPAM plugin never opens the pod's netns beyond the own-netns guard: it allocates.
			code=4
			[ "${KIND[$plugin]}" = ipam ] && code=0
			# dhcp's daemon opens the pod's netns for ADD (code 8), DEL finds no lease there.
			[ "${KIND[$plugin]}" = lease ] && code=8
			# DEL: a plain file is what a netns leaves behind (gone); the others are code 4.
			del_code=4
			[ "$name" = "plain file" ] && del_code=0
			[ "${KIND[$plugin]}" = ipam ] && del_code=0
			[ "${KIND[$plugin]}" = lease ] && del_code=0
			# tuning's DEL opens the pod only to restore what its record holds: none here.
			[ "$plugin" = tuning ] && del_code=0
			# The meta plugins work on the node: portmap and firewall never open the pod,
			# bandwidth only at ADD (to find the pod's end of the veth).
			if [ "${KIND[$plugin]}" = meta ]; then
				del_code=0
				[ "$plugin" = bandwidth ] || code=0
			fi
			run_case "[$plugin CNI_NETNS $name]" "$plugin" "$code" "$del_code" "$(base_conf "$plugin")" "CNI_NETNS=${v#*|}"
		done
		run_case "[$plugin CNI_IFNAME not UTF-8]" "$plugin" 4 4 "$(base_conf "$plugin")" "CNI_IFNAME=$(printf 'net\xff')"
		run_case "[$plugin CNI_IFNAME with NBSP]" "$plugin" 4 4 "$(base_conf "$plugin")" "CNI_IFNAME=$(printf 'a\xc2\xa0b')"
	done
fi

if section 4; then
	echo "# 4. the store's directory"
	mkdir -m 0777 "$A/open"
	conf=$(node_store open "$A/open/store")
	run_case "[store directory writable by others]" nv-ipam 5 5 "$conf"
	t_eq "[store directory writable by others] no lock made there" "" "$(ls -A "$A/open")"
	mkdir -m 0700 "$A/planted"
	ln -s "$O/lock-target" "$A/planted/store.lock"
	conf=$(node_store planted "$A/planted/store")
	run_case "[store lock is a planted link]" nv-ipam 5 5 "$conf"
	t_eq "[store lock is a planted link] its target not created" absent \
		"$([ -e "$O/lock-target" ] && echo present || echo absent)"
fi

if section 5; then
	echo "# 5. an IPAM plugin that prints too much"
	cat >"$BIN/loud" <<-EOF
	#!/bin/sh
	cat >/dev/null
	echo "\$CNI_COMMAND" >>"$T_DIR/loud.log"
	[ "\$CNI_COMMAND" = DEL ] && exit 0
	head -c 3000000 /dev/zero | tr '\\0' x
	echo done >>"$T_DIR/loud.log"
	EOF
	chmod +x "$BIN/loud"
	conf=$(base_conf macvlan | jq -c '.ipam = {"type": "loud"}')
	hung=$T_HUNG
	run_case "[IPAM prints 3 MB]" macvlan 101 0 "$conf"
	t_eq "[IPAM prints 3 MB] stopped early, released by DEL" "ADD DEL DEL" "$(tr '\n' ' ' <"$T_DIR/loud.log" | sed 's/ $//')"
	t_eq "[IPAM prints 3 MB] no hang (no run stopped by the hang guard)" 0 "$((T_HUNG - hung))"
	t_contains "[IPAM prints 3 MB] the message says why" "printed more than" "$(jq -r .msg <<<"$T_OUT" 2>/dev/null)$(cat "$A/plugin.log")"
fi

if section 6; then
	echo "# 6. keys differing only in case, ours and Debian's Go macvlan"
	# Go assigns every member that matches a field, in order: the last one stays.
	# master (or Master, maſter with U+017F) is the veth or a name no link has.
	t_name NOPE zz
	for order in "master:$NOPE Master:$M" "Master:$M master:$NOPE" "master:$NOPE ma$(printf '\xc5\xbf')ter:$M"; do
		read -r first second <<<"$order"
		conf=$(jq -cn --arg k1 "${first%%:*}" --arg v1 "${first#*:}" --arg k2 "${second%%:*}" --arg v2 "${second#*:}" \
			'{"cniVersion":"1.0.0","name":"case","type":"macvlan","ipam":{}} | .[$k1] = $v1 | .[$k2] = $v2')
		# The objects must keep the order written: jq keeps insertion order.
		results=""
		ours_wrap=("${T_BASE_WRAP[@]}")
		for p in "$MACVLAN" "$REF/macvlan"; do
			T_PLUGIN=$p
			# A checker (PLUGIN_WRAPPER) is for our binaries, not Go's.
			[ "$p" = "$MACVLAN" ] || T_BASE_WRAP=()
			t_cni ADD "$conf"
			results+="$T_RC "
			if [ "$T_RC" = 0 ]; then
				results+="$(ip -n "$POD" -d -j link show net1 | jq -r '.[0].link_index // .[0].link' ) "
				t_cni DEL "$conf"
			else
				results+="- "
			fi
		done
		T_BASE_WRAP=("${ours_wrap[@]}")
		read -r ours_rc ours_link go_rc go_link <<<"$results"
		t_eq "[$order] ours and Go agree on whether ADD works" "$go_rc" "$ours_rc"
		t_eq "[$order] ours and Go pick the same master" "$go_link" "$ours_link"
		t_eq "[$order] Go's pick is the last match" "$([ "${second#*:}" = "$M" ] && echo 0 || echo 1)" "$([ "$go_rc" = 0 ] && echo 0 || echo 1)"
		t_eq "[$order] pod clean after" "lo" "$(t_link_names "$POD")"
	done
fi

if section 7; then
	echo "# 7. SIGKILL at every netlink send of ADD, then DEL"
	# strace counts each syscall on its own: one pass per send syscall covers them all.
	killed_add() { # DESC PLUGIN CONF
		local desc=$1 plugin=$2 conf=$3 sys n rc kills=0
		use "$plugin"
		for sys in sendto sendmsg; do
			for ((n = 1; n < 200; n++)); do
				prepare "$plugin"
				printf '%s' "$conf" | env CNI_COMMAND=ADD CNI_CONTAINERID=${CID}k$n CNI_NETNS="$POD_path" \
					CNI_IFNAME=net1 CNI_PATH="$BIN" CNI_RDMA_PLUGINS_CONF="$CNI_RDMA_PLUGINS_CONF" \
					strace -qq -o /dev/null -e trace=sendto,sendmsg \
					-e inject="$sys":signal=SIGKILL:when=$n "$T_PLUGIN" >/dev/null 2>&1
				rc=$?
				[ "$rc" = 137 ] && kills=$((kills + 1))
				T_ENV_CONTAINERID=${CID}k$n
				t_cni DEL "$conf"
				t_ok "$desc: DEL after ADD killed at $sys #$n"
				t_cni DEL "$conf"
				t_ok "$desc: DEL again after ADD killed at $sys #$n"
				T_ENV_CONTAINERID=$CID
				finish "$desc $sys #$n" "$plugin"
				check_clean "$desc $sys #$n"
				# Past the last send the ADD was not killed.
				[ "$rc" = 137 ] || break
			done
			t_eq "$desc: the last $sys pass ran to its end (exit 0 or an error, not killed)" yes \
				"$([ "$rc" != 137 ] && echo yes)"
		done
		t_ne "$desc: ADD was killed at some send" 0 "$kills"
	}
	killed_add "[kill host-device L2]" host-device "$(base_conf host-device | jq -c '.ipam = {}')"
	for plugin in $ALL; do
		[ "${KILL[$plugin]}" = yes ] && killed_add "[kill $plugin]" "$plugin" "$(base_conf "$plugin")"
	done
fi

if section 8; then
	echo "# 8. state paths, the node's files and the disk"
	# A live pod holds an address through the node's store.
	use nv-ipam
	T_ENV_CONTAINERID=live1
	t_cni ADD "$(base_conf nv-ipam)"
	t_ok "[a live pod] ADD"
	live_ip=$(jq -r '.ips[0].address' <<<"$T_OUT")
	live_ip=${live_ip%/*}
	T_ENV_CONTAINERID=$CID
	lock_inode=$(stat -c %i "$A/store.d/p.lock")
	node_lock_inode=$(stat -c %i "$A/store.lock")
	log_sum=$(md5sum <"$A/store.d/p.log")
	files_before=$(cd "$A" && find store* | sort)
	# A network config naming another store's lock, node lock, logs, counts: refused before
	# anything is created, for ADD and DEL alike.
	for target in store.d/p.lock store.lock store.d/evil.log store.d/p.log/x store.gc; do
		conf=$(base_conf nv-ipam | jq -c --arg s "$A/$target" '.ipam.storeFile = $s')
		t_cni ADD "$conf"
		t_err "[storeFile $target in a network config] ADD refused" 7 "the node's setting"
		t_cni DEL "$conf"
		t_err "[storeFile $target in a network config] DEL refused" 7 "the node's setting"
	done
	t_eq "[another store's files named] the pool lock is the same file" "$lock_inode" "$(stat -c %i "$A/store.d/p.lock")"
	t_eq "[another store's files named] the node lock is the same file" "$node_lock_inode" "$(stat -c %i "$A/store.lock")"
	t_eq "[another store's files named] the pool log is unchanged" "$log_sum" "$(md5sum <"$A/store.d/p.log")"
	t_eq "[another store's files named] nothing planted beside the store" "$files_before" "$(cd "$A" && find store* | sort)"
	# Its own store, to be given a live pod's static IP.
	conf=$(base_conf nv-ipam | jq -c --arg s "$A/private/store" --arg ip "$live_ip" '.ipam.storeFile = $s | .args = {"cni": {"ips": [$ip]}}')
	T_ENV_CONTAINERID=thief
	t_cni ADD "$conf"
	t_err "[a live pod's static IP through a private store] ADD refused" 7 "the node's setting"
	T_ENV_CONTAINERID=$CID
	t_eq "[a live pod's static IP through a private store] no private store" absent "$([ -e "$A/private" ] && echo present || echo absent)"
	t_eq "[a live pod's static IP through a private store] the address is held once" 1 "$(allocs)"
	# The node's own store named inside another store: refused on its name.
	for target in store.d/p.lock store.d/other; do
		conf=$(node_store "inside-${target//\//-}" "$A/$target")
		t_cni ADD "$conf"
		t_err "[the node's storeFile $target] ADD refused" 7 "store file"
		t_cni DEL "$conf"
		t_err "[the node's storeFile $target] DEL refused" 7 "store file"
	done
	t_eq "[the node's storeFile inside another store] the pool lock is the same file" "$lock_inode" "$(stat -c %i "$A/store.d/p.lock")"
	t_eq "[the node's storeFile inside another store] nothing planted" "$files_before" "$(cd "$A" && find store* | sort)"

	# DEL under node settings that cannot be used: it fails as ADD does, and releases later.
	settings=$T_DIR/node-settings.json
	cp -p "$settings" "$T_DIR/settings.good"
	for broken in group-writable not-root fifo malformed unknown-key state-not-listed; do
		rm -f "$settings"
		cp -p "$T_DIR/settings.good" "$settings"
		case $broken in
		group-writable) chmod 0660 "$settings" ;;
		not-root) chown nobody "$settings" ;;
		fifo) rm -f "$settings"; mkfifo -m 0600 "$settings" ;;
		malformed) echo '{' >"$settings" ;;
		unknown-key) echo '{"stateDir": ["'"$A"'"]}' >"$settings" ;;
		state-not-listed) printf '{"logDirs": ["%s"], "confDirs": ["%s"], "stateDirs": ["%s"]}\n' "$A" "$A" "$O" >"$settings" ;;
		esac
		T_ENV_CONTAINERID=live1
		hung=$T_HUNG
		t_cni DEL "$(base_conf nv-ipam)"
		T_ENV_CONTAINERID=$CID
		if [ "$broken" = state-not-listed ]; then
			t_err "[node settings $broken] DEL fails as ADD would, naming the store" 7 "storeFile"
		else
			t_err "[node settings $broken] DEL fails as ADD would" 7 "node settings"
		fi
		t_eq "[node settings $broken] no hang (no run stopped by the hang guard)" 0 "$((T_HUNG - hung))"
		rm -f "$settings"
		cp -p "$T_DIR/settings.good" "$settings"
		t_eq "[node settings $broken] the address is still held" 1 "$(allocs)"
	done
	T_ENV_CONTAINERID=live1
	t_cni DEL "$(base_conf nv-ipam)"
	T_ENV_CONTAINERID=$CID
	t_ok "[node settings mended] DEL releases"
	check_clean "[node settings mended]"

	# A sync that fails: the ADD fails and holds nothing, whether or not the undo's own
	# sync fails too.
	for when in "when=1" "when=1+"; do
		T_WRAP=(strace -qq -o /dev/null -e trace=fdatasync -e inject=fdatasync:error=EIO:$when)
		t_cni ADD "$(base_conf nv-ipam)"
		T_WRAP=()
		t_err "[fdatasync fails ($when)] ADD fails" 5 "sync"
		t_cni DEL "$(base_conf nv-ipam)"
		t_ok "[fdatasync fails ($when)] DEL"
		check_clean "[fdatasync fails ($when)]"
	done

	# A result the runtime cannot read: the ADD fails and undoes itself.
	for plugin in macvlan nv-ipam; do
		use "$plugin"
		printf '%s' "$(base_conf "$plugin")" | env CNI_COMMAND=ADD CNI_CONTAINERID=full CNI_NETNS="$POD_path" \
			CNI_IFNAME=net1 CNI_PATH="$BIN" CNI_RDMA_PLUGINS_CONF="$CNI_RDMA_PLUGINS_CONF" \
			"${T_BASE_WRAP[@]}" "$T_PLUGIN" >/dev/full 2>"$T_DIR/full.err"
		rc=$?
		t_ne "[$plugin stdout full] ADD does not exit 0" 0 "$rc"
		t_contains "[$plugin stdout full] says why" "cannot write the result" "$(cat "$T_DIR/full.err")"
		check_clean "[$plugin stdout full]"
	done

	# Log files: a config may create one (it starts with the mark) or use its own, never
	# append to another file of the log directory.
	echo precious >"$A/foreign.txt"
	conf=$(base_conf macvlan | jq -c --arg l "$A/foreign.txt" '.logFile = $l')
	run_case "[logFile names a file the plugins did not create]" macvlan 7 0 "$conf"
	t_eq "[logFile names a file the plugins did not create] it is unchanged" precious "$(cat "$A/foreign.txt")"
	conf=$(base_conf macvlan | jq -c --arg l "$A/made.log" '.logFile = $l')
	run_case "[logFile names a new file]" macvlan 0 0 "$conf"
	run_case "[logFile names a file the plugins created]" macvlan 0 0 "$conf"
	t_eq "[logFile names a new file] its first line is the mark" "$LOG_MARK" "$(head -n 1 "$A/made.log")"
	t_eq "[logFile names a new file] the mark once, then both runs' lines" "1 yes" \
		"$(grep -cxF "$LOG_MARK" "$A/made.log") $([ "$(grep -c 'ADD\|DEL\|macvlan' "$A/made.log")" -ge 2 ] && echo yes)"

	# A damaged older store (the reference daemon's): the error names the file and the
	# place, not what it holds.
	mkdir -m 0700 "$A/v1bad"
	printf '{"version":1,"checksum":1,"pools":{"p":{"name":"p","entries":{"c_e":{"container_id":"c","interface_name":"e","ip_address":"SECRET-7f3a"}}}}}' >"$A/v1bad/store"
	conf=$(node_store v1bad "$A/v1bad/store")
	use nv-ipam
	t_cni ADD "$conf"
	t_err "[a damaged older store] ADD fails" 5 "entries member 0"
	t_eq "[a damaged older store] its content is not in the error" "" "$(grep -o 'SECRET[^"]*' <<<"$T_OUT$T_ERR")"

	# An older store's record too long for a log line: kept, and the other pools work. The
	# daemon's file as Go writes it, with its checksum (FNV-1a-32 with "checksum":0).
	mkdir -m 0700 "$A/v1big"
	printf '{"version":1,"checksum":0,"pools":{"q":{"name":"q","entries":{"c1_net1":{"container_id":"c1","interface_name":"net1","ip_address":"10.124.0.5","metadata":{"create_time":"","pod_uuid":"","pod_name":"%s","pod_namespace":"","device_id":"","pool_config_snapshot":""}}},"last_pool_config":"","last_reserved_ip":""}}}' \
		"$(head -c 614400 /dev/zero | tr '\0' x)" >"$A/v1big/store.go"
	sum=$("$SUMS" fnv32 <"$A/v1big/store.go")
	sed "s/\"checksum\":0,/\"checksum\":$sum,/" "$A/v1big/store.go" >"$A/v1big/store"
	rm -f "$A/v1big/store.go"
	conf=$(node_store v1big "$A/v1big/store")
	t_cni ADD "$conf"
	t_ok "[an older store with an oversized record] ADD in another pool"
	t_cni DEL "$conf"
	t_ok "[an older store with an oversized record] DEL"
	t_eq "[an older store with an oversized record] its address stays held" 1 "$(allocs "$A/v1big/store")"

	# A pool named twice.
	run_case "[poolName p,p]" nv-ipam 7 0 "$(base_conf nv-ipam | jq -c '.ipam.poolName = "p,p"')"

	# check reads the whole log: damage a snapshot covers, and a log without its header.
	conf=$(node_store chk "$A/chk/store")
	mkdir -m 0700 "$A/chk"
	for i in $(seq 70); do
		T_ENV_CONTAINERID=chk$i
		t_cni ADD "$conf" >/dev/null
		t_cni DEL "$conf" >/dev/null
	done
	T_ENV_CONTAINERID=$CID
	t_eq "[check] a snapshot was made" yes "$([ -s "$A/chk/store.d/p.snap" ] && echo yes)"
	"$TOOL" check --store "$A/chk/store" --pool-file "$A/pools.json" >"$T_DIR/check.out" 2>&1
	t_eq "[check] the store is clean" 0 "$?"
	sed -i '3s/chk/CHK/' "$A/chk/store.d/p.log"
	"$TOOL" check --store "$A/chk/store" --pool-file "$A/pools.json" >"$T_DIR/check.out" 2>&1
	t_eq "[check] a damaged line the snapshot covers: exit 1" 1 "$?"
	t_contains "[check] ... names the line" "line 3" "$(cat "$T_DIR/check.out")"
	sed -i '3s/CHK/chk/' "$A/chk/store.d/p.log"
	: >"$A/chk/store.d/zz.log"
	"$TOOL" check --strict --store "$A/chk/store" --pool-file "$A/pools.json" >"$T_DIR/check.out" 2>&1
	t_eq "[check] a pool log without its header: reported" "1 yes" "$? $(grep -q 'zz.log has no header' "$T_DIR/check.out" && echo yes)"
fi

t_summary
