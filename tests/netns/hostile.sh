#!/usr/bin/env bash
# Hostile input and faults, for all four binaries: a network config is written
# by whoever may create a NAD, and the plugins run as root.
#
#   hostile.sh MACVLAN IPOIB HOST-DEVICE NV-IPAM [REFERENCE_CNI_DIR]
#
# 1. Every path key (logFile, ipam.logFile, confDir, poolFile, storeFile) as a
#    symbolic link, a FIFO, a directory, a device, a relative path, a path
#    with "..", and a path outside the directories the node allows: refused
#    (code 7), nothing created outside, no hang; DEL still cleans up.
# 2. Every string key as a newline, a NUL, invalid UTF-8 and 64 KiB: the code
#    each deserves, nothing left behind (or, where the value is harmless, a
#    clean ADD and DEL); no log line that the plugin did not start.
# 3. The environment: CNI_NETNS naming a FIFO, a directory, a device, another
#    namespace kind, a plain file; CNI_IFNAME that is not UTF-8.
# 4. The store directory open to others, a planted symbolic link as its lock.
# 5. An IPAM plugin that prints more than the plugin reads.
# 6. Keys differing only in case, side by side with Debian's Go macvlan.
# 7. SIGKILL at every netlink send of ADD (strace), for macvlan + nv-ipam,
#    host-device (L2 and nv-ipam) and ipoib, then DEL twice: nothing left in
#    either netns or in the store, the host device home.
#
# Each case checks the exit status, the CNI error code, the pod and host
# links, the store and the files outside the allowed directories. Needs root
# (and strace for 7); exits 77 only when network namespaces cannot be created.
# HOSTILE_SECTIONS (default "1 2 3 4 5 6 7") picks sections, for slow runs
# under valgrind.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if [ $# -lt 4 ]; then
	echo "usage: $0 MACVLAN IPOIB HOST-DEVICE NV-IPAM [REFERENCE_CNI_DIR]"
	exit 1
fi
MACVLAN=$(realpath "$1")
IPOIB=$(realpath "$2")
HOSTDEV=$(realpath "$3")
NVIPAM=$(realpath "$4")
REF=${5:-/usr/lib/cni}
for p in "$MACVLAN" "$IPOIB" "$HOSTDEV" "$NVIPAM" "$REF/macvlan"; do
	[ -x "$p" ] || { echo "FAIL: $p is not executable"; exit 1; }
done
command -v strace >/dev/null || { echo "FAIL: strace not found"; exit 1; }

t_init
SECTIONS=" ${HOSTILE_SECTIONS:-1 2 3 4 5 6 7} "
section() { [[ "$SECTIONS" == *" $1 "* ]]; }

# The node lets configs name files in $A only; $O is any other place.
A=$T_DIR/allowed
O=$T_DIR/outside
mkdir -m 0700 "$A" "$O"
node_settings "$T_DIR/node-settings.json" "$A"
BIN=$T_DIR/bin
mkdir "$BIN"
ln -s "$NVIPAM" "$BIN/nv-ipam"
T_ENV_PATH=$BIN

t_netns POD
T_ENV_NETNS=$POD_path
t_name M hm
t_name MP hp
t_veth "$M" "$MP"
t_name D hd
t_name DP hq
t_veth "$D" "$DP"
HOST_START=$(t_links)

cat >"$A/pools.json" <<JSON
{"pools": {"p": {"subnet": "10.123.0.0/24", "startIP": "10.123.0.10",
                 "endIP": "10.123.0.200", "gateway": "10.123.0.1"}}}
JSON
NVIPAM_OBJ='{"type":"nv-ipam","poolName":"p","confDir":"'$A'","poolFile":"'$A'/pools.json","storeFile":"'$A'/store"}'

base_conf() { # PLUGIN: a config that works (ipoib's master is a veth: refused by kind)
	case $1 in
	macvlan) echo '{"cniVersion":"1.0.0","name":"h","type":"macvlan","master":"'$M'","logFile":"'$A'/plugin.log","logLevel":"debug","ipam":'"$NVIPAM_OBJ"'}' ;;
	ipoib) echo '{"cniVersion":"1.0.0","name":"h","type":"ipoib","master":"'$M'","logFile":"'$A'/plugin.log","logLevel":"debug","ipam":'"$NVIPAM_OBJ"'}' ;;
	host-device) echo '{"cniVersion":"1.0.0","name":"h","type":"host-device","device":"'$D'","logFile":"'$A'/plugin.log","logLevel":"debug","ipam":'"$NVIPAM_OBJ"'}' ;;
	nv-ipam) echo '{"cniVersion":"1.0.0","name":"h","ipam":'"${NVIPAM_OBJ%\}}"',"logFile":"'$A'/plugin.log","logLevel":"debug"}}' ;;
	esac
}

use() { # PLUGIN
	case $1 in
	macvlan) T_PLUGIN=$MACVLAN ;;
	ipoib) T_PLUGIN=$IPOIB ;;
	host-device) T_PLUGIN=$HOSTDEV ;;
	nv-ipam) T_PLUGIN=$NVIPAM ;;
	esac
}

allocs() { jq -r '[.allocations[]?] | length' "$A/store" 2>/dev/null || echo 0; }

# The state every case must leave: pod with lo only, host links as at start,
# the device named and without alias, no allocation, nothing outside $A.
check_clean() { # DESC
	t_eq "$1: pod holds lo only" "lo" "$(t_link_names "$POD")"
	t_eq "$1: host links as at start" "$HOST_START" "$(t_links)"
	t_eq "$1: the host device is home, without alias" "$D " \
		"$(t_link_json "" "$D" | jq -r '"\(.ifname) \(.ifalias // "")"')"
	t_eq "$1: no address held" 0 "$(allocs)"
	t_eq "$1: nothing created outside the allowed directory" "" "$(ls -A "$O")"
	t_eq "$1: every log line is one the plugin started" "" \
		"$(cat "$A"/*.log 2>/dev/null | grep -Ev '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z [a-z-]+\[[0-9]+\] (error|warning|info|debug): ' | head -3)"
}

# run_case DESC PLUGIN ADD-CODE DEL-CODE CONF [ENV...]: ADD, then DEL with the
# same config, each expecting its code ("0": success; DEL "any": success or a
# CNI error, for a config DEL does not read whole); the state must be clean.
run_case() {
	local desc=$1 plugin=$2 add_code=$3 del_code=$4 conf=$5
	shift 5
	use "$plugin"
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
	# The codes of ADD and DEL per key and variant. A path outside the node's
	# directories cannot have been used by any ADD: DEL succeeds. One inside them
	# that is a link, a FIFO, a device or a directory only root can have put
	# there: DEL of what must read it fails as ADD does, for the node to mend.
	path_codes() { # KEY VARIANT -> "ADD DEL"
		case $1:$2 in
		logFile:* | ipam.logFile:*) echo "7 0" ;;
		*:relative | *:dotdot | *:outside) echo "7 0" ;;
		poolFile:*) echo "7 0" ;;
		confDir:*) echo "7 7" ;;
		storeFile:symlink-dir) echo "7 7" ;;
		storeFile:*) echo "5 5" ;;
		esac
	}
	for v in "${PATH_VARIANTS[@]}"; do
		name=${v%%|*}
		val=${v#*|}
		for plugin in macvlan ipoib host-device nv-ipam; do
			key=logFile
			[ "$plugin" = nv-ipam ] && key=ipam.logFile
			conf=$(base_conf "$plugin" | jq -c --arg v "$val" --arg k "$key" 'setpath($k | split("."); $v)')
			start=$(date +%s)
			run_case "[$plugin $key $name]" "$plugin" $(path_codes "$key" "$name") "$conf"
			t_eq "[$plugin $key $name] no hang" yes "$( [ $(($(date +%s) - start)) -lt 20 ] && echo yes)"
		done
		for key in confDir poolFile storeFile; do
			# An existing directory is what confDir should name.
			[ "$key" = confDir ] && [ "$name" = directory ] && continue
			conf=$(base_conf nv-ipam | jq -c --arg v "$val" --arg k "$key" '.ipam[$k] = $v')
			start=$(date +%s)
			run_case "[nv-ipam $key $name]" nv-ipam $(path_codes "$key" "$name") "$conf"
			t_eq "[nv-ipam $key $name] no hang" yes "$( [ $(($(date +%s) - start)) -lt 20 ] && echo yes)"
		done
	done
	t_eq "the FIFO, the device and the link target are as they were" "fifo device absent" \
		"$([ -p "$A/fifo" ] && echo fifo) $([ -c "$A/null" ] && echo device) $([ -e "$O/victim" ] && echo present || echo absent)"
fi

if section 2; then
	echo "# 2. string keys"
	BIG=$(printf 'a%.0s' $(seq 65536))
	# plugin|key path|ADD's code for a newline|for 64 KiB. A NUL is code 6 where
	# the key is read; invalid UTF-8 anywhere fails the parse (code 6, DEL too).
	# A 64 KiB network name is more than nv-ipam records in a pool's log (code 7).
	STRING_KEYS=(
		"macvlan|cniVersion|1|1"
		"macvlan|name|7|7"
		"macvlan|type|0|0"
		"macvlan|master|7|7"
		"macvlan|mode|7|7"
		"macvlan|mac|7|7"
		"macvlan|runtimeConfig.mac|7|7"
		"macvlan|logLevel|0|0"
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
		"nv-ipam|ipam.poolName|7|7"
		"nv-ipam|ipam.poolType|7|7"
		"nv-ipam|ipam.confDir|7|7"
		"nv-ipam|ipam.poolFile|7|7"
		"nv-ipam|ipam.storeFile|7|7"
		"nv-ipam|ipam.logLevel|7|7"
		"nv-ipam|ipam.daemonSocket|0|0"
		"nv-ipam|args.cni.poolType|7|7"
		"nv-ipam|deviceID|0|7"
	)
	for entry in "${STRING_KEYS[@]}"; do
		IFS='|' read -r plugin key nl_code big_code <<<"$entry"
		# host-device: the device key names the device only when it is the selector.
		prep='.'
		[ "$plugin" = host-device ] && [ "$key" != device ] && prep='del(.device)'
		for variant in newline nul utf8 big; do
			base=$(base_conf "$plugin" | jq -c "$prep")
			del_code=any
			case $variant in
			newline) conf=$(jq -c --arg v $'a\nroot:x:0:0::/root:/bin/sh' --arg k "$key" 'setpath($k | split("."); $v)' <<<"$base"); code=$nl_code ;;
			nul) conf=$(jq -c --arg k "$key" 'setpath($k | split("."); "a\u0000b")' <<<"$base"); code=6 ;;
			utf8) conf=$(jq -c --arg k "$key" 'setpath($k | split("."); "a@RAW@b")' <<<"$base" | sed 's/@RAW@/\xff\xfe/'); code=6 del_code=6 ;;
			big) conf=$(jq -c --arg v "$BIG" --arg k "$key" 'setpath($k | split("."); $v)' <<<"$base"); code=$big_code ;;
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
	for plugin in macvlan ipoib host-device nv-ipam; do
		for v in "fifo|$T_DIR/netns-fifo" "directory|$T_DIR" "device|/dev/null" \
			"mount namespace|/proc/self/ns/mnt" "plain file|$T_DIR/netns-file"; do
			name=${v%%|*}
			# nv-ipam never opens the pod's netns beyond the own-netns guard: it allocates.
			code=4
			[ "$plugin" = nv-ipam ] && code=0
			# DEL: a plain file is what a netns leaves behind (gone); the others are code 4.
			del_code=4
			[ "$name" = "plain file" ] && del_code=0
			[ "$plugin" = nv-ipam ] && del_code=0
			run_case "[$plugin CNI_NETNS $name]" "$plugin" "$code" "$del_code" "$(base_conf "$plugin")" "CNI_NETNS=${v#*|}"
		done
		run_case "[$plugin CNI_IFNAME not UTF-8]" "$plugin" 4 4 "$(base_conf "$plugin")" "CNI_IFNAME=$(printf 'net\xff')"
		run_case "[$plugin CNI_IFNAME with NBSP]" "$plugin" 4 4 "$(base_conf "$plugin")" "CNI_IFNAME=$(printf 'a\xc2\xa0b')"
	done
fi

if section 4; then
	echo "# 4. the store's directory"
	mkdir -m 0777 "$A/open"
	conf=$(base_conf nv-ipam | jq -c --arg s "$A/open/store" '.ipam.storeFile = $s')
	run_case "[store directory writable by others]" nv-ipam 5 5 "$conf"
	t_eq "[store directory writable by others] no lock made there" "" "$(ls -A "$A/open")"
	mkdir -m 0700 "$A/planted"
	ln -s "$O/lock-target" "$A/planted/store.lock"
	conf=$(base_conf nv-ipam | jq -c --arg s "$A/planted/store" '.ipam.storeFile = $s')
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
	start=$(date +%s)
	run_case "[IPAM prints 3 MB]" macvlan 101 0 "$conf"
	t_eq "[IPAM prints 3 MB] stopped early, released by DEL" "ADD DEL DEL" "$(tr '\n' ' ' <"$T_DIR/loud.log" | sed 's/ $//')"
	t_eq "[IPAM prints 3 MB] no hang" yes "$( [ $(($(date +%s) - start)) -lt 20 ] && echo yes)"
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
				printf '%s' "$conf" | env CNI_COMMAND=ADD CNI_CONTAINERID=kill$n CNI_NETNS="$POD_path" \
					CNI_IFNAME=net1 CNI_PATH="$BIN" CNI_RDMA_PLUGINS_CONF="$CNI_RDMA_PLUGINS_CONF" \
					strace -qq -o /dev/null -e trace=sendto,sendmsg \
					-e inject="$sys":signal=SIGKILL:when=$n "$T_PLUGIN" >/dev/null 2>&1
				rc=$?
				[ "$rc" = 137 ] && kills=$((kills + 1))
				T_ENV_CONTAINERID=kill$n
				t_cni DEL "$conf"
				t_ok "$desc: DEL after ADD killed at $sys #$n"
				t_cni DEL "$conf"
				t_ok "$desc: DEL again after ADD killed at $sys #$n"
				T_ENV_CONTAINERID=cnitest
				check_clean "$desc $sys #$n"
				# Past the last send the ADD was not killed.
				[ "$rc" = 137 ] || break
			done
			t_eq "$desc: the last $sys pass ran to its end (exit 0 or an error, not killed)" yes \
				"$([ "$rc" != 137 ] && echo yes)"
		done
		t_ne "$desc: ADD was killed at some send" 0 "$kills"
	}
	killed_add "[kill macvlan + nv-ipam]" macvlan "$(base_conf macvlan)"
	killed_add "[kill host-device L2]" host-device "$(base_conf host-device | jq -c '.ipam = {}')"
	killed_add "[kill host-device + nv-ipam]" host-device "$(base_conf host-device)"
	killed_add "[kill ipoib (veth master: refused)]" ipoib "$(base_conf ipoib)"
fi

t_summary
