# Shared helpers for the real-kernel ("netns") test scripts. Source it from a
# bash script:  . "$(dirname "$0")/lib.sh"
#
# What it gives:
#   t_init                 skip (exit 77) only when network namespaces cannot be
#                          created; create the work dir $T_DIR; install the
#                          cleanup trap
#   t_defer CMD...         register a cleanup command (run last-in first-out
#                          by t_cleanup and on exit; errors ignored)
#   t_name VAR PREFIX      unique short name (<= 15 chars with a prefix of <= 4)
#   t_netns VAR            new netns (ip netns add), deleted on cleanup;
#                          VAR gets its name, ${VAR}_path the /var/run path
#   t_veth A B [NSA] [NSB] new veth pair A<->B (names given), each end moved to
#                          its netns if given, both set up
#   t_cni CMD CONF [VAR=VALUE | -VAR]...
#                          run $T_PLUGIN (prefixed by the array T_WRAP) as a
#                          runtime would: CNI_* variables from T_ENV_* defaults
#                          plus the overrides (-VAR unsets), CONF on stdin.
#                          Sets T_RC, T_OUT (stdout), T_ERR (stderr); a run the
#                          hang guard stopped (timeout's 124) counts in T_HUNG
#   t_links [NS]           "ifindex name kind" lines, sorted, of a netns (in
#                          the root netns only this run's links and their children)
#   t_link_names [NS]      sorted link names, space separated
#   t_link_json NS IFNAME  `ip -d -j link show` object of one link, or ""
#   t_ref_ipam BIN REF PLUGIN...
#                          the reference IPAM plugins in BIN, 1.1.0 configs
#                          relabelled for those that stop at 1.0.0
#   t_mac VAR IFNAME       MAC of a root-netns link (sysfs), or ""
#   t_store_ips DIR        IP files of a host-local store dir (no lock,
#                          no last_reserved_ip.*), sorted, space separated
#   t_ref191 DIR NAME...   unpack and check the v1.9.1 reference plugins NAME
#                          from ../shared (returns 1 with a NOT RUN line without them)
#   assertions (each counts one pass or one failure and prints expected/got):
#     t_eq DESC EXPECTED GOT        t_ne DESC UNEXPECTED GOT
#     t_contains DESC NEEDLE HAY    t_match DESC ERE GOT
#     t_jq DESC JSON FILTER EXPECTED   (jq -r FILTER output == EXPECTED)
#     t_jq_true DESC JSON FILTER       (jq -e FILTER succeeds)
#     t_ok DESC                 last t_cni exited 0
#     t_err DESC CODE [MSG]     last t_cni exited non-zero with error JSON on
#                               stdout whose code is CODE ("" = any) and whose
#                               msg contains MSG
#   t_summary              print "N passed, M failed"; exit 1 if M > 0

# What needs ../shared (the reference plugins): tests/shared.sh, the one rule.
. "$(dirname "${BASH_SOURCE[0]}")/../shared.sh"

T_PASS=0
T_FAIL=0
T_NUM=0
T_SEQ=0
T_CLEANUPS=()
T_WRAP=()
# PLUGIN_WRAPPER (e.g. "valgrind --log-file=...") runs every plugin under a checker.
read -r -a T_BASE_WRAP <<<"${PLUGIN_WRAPPER:-}"
# Every plugin run is stopped after 60 s, unless NETNS_PLUGIN_TIMEOUT=0: the
# kernel matrix's guest times its whole suite instead and saves an exec per run.
# A hang guard: a test asserts that no run hung (T_HUNG), never how long one took.
T_TIMEOUT=(timeout "${NETNS_PLUGIN_TIMEOUT:-60}")
T_HUNG=0
[ "${T_TIMEOUT[1]}" != 0 ] || T_TIMEOUT=()
T_PLUGIN=${T_PLUGIN:-}
T_ENV_COMMAND_LINE=
# 4 hex digits that make this run's names unique on the machine.
T_TOK=$(printf '%04x' $(( (RANDOM ^ $$) & 0xffff )))

T_ENV_CONTAINERID=${T_ENV_CONTAINERID:-cnitest}
T_ENV_NETNS=${T_ENV_NETNS:-}
T_ENV_IFNAME=${T_ENV_IFNAME:-net1}
T_ENV_ARGS=${T_ENV_ARGS:-}
T_ENV_PATH=${T_ENV_PATH:-}

t_log() { printf '%s\n' "$*"; }

t_defer() { T_CLEANUPS+=("$*"); }

# t_defer_link NAME [NS]: delete a link on cleanup if it is still there. Most
# are gone by then (moved, or deleted with their netns): the check costs no
# process, an `ip` that fails costs a fork and an exec, 50 to 130 ms each
# under user-mode Linux. /sys/class/net shows the root netns's links.
t_defer_link() {
	if [ -n "${2:-}" ]; then
		t_defer "[ ! -e '/var/run/netns/$2' ] || ip -n '$2' link del '$1'"
	else
		t_defer "[ ! -e '/sys/class/net/$1' ] || ip link del '$1'"
	fi
}

t_cleanup() {
	local i
	for ((i = ${#T_CLEANUPS[@]} - 1; i >= 0; i--)); do
		eval "${T_CLEANUPS[i]}" >/dev/null 2>&1 || true
	done
	T_CLEANUPS=()
}

t_on_exit() {
	local rc=$?
	t_cleanup
	[ -n "${T_DIR:-}" ] && rm -rf "$T_DIR"
	exit "$rc"
}

t_init() {
	local probe err
	T_DIR=$(mktemp -d /tmp/cni-netns-test.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
	# Configs may name files in T_DIR (logFile), as a node allows in its settings.
	. "$(dirname "${BASH_SOURCE[0]}")/../node-settings.sh"
	node_settings "$T_DIR/node-settings.json" "$T_DIR"
	trap t_on_exit EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	probe="cnit-probe-$T_TOK-$$"
	if ! err=$(ip netns add "$probe" 2>&1); then
		if [ "$(id -u)" != 0 ]; then
			echo "FAIL: the netns tests need root (ip netns add: $err)"
			exit 1
		fi
		echo "SKIP: network namespaces cannot be created here (ip netns add: $err)"
		exit 77
	fi
	ip netns del "$probe"
	for tool in jq ip timeout; do
		command -v "$tool" >/dev/null || { echo "FAIL: $tool not found"; exit 1; }
	done
}

# t_name VAR PREFIX: a name unique to this run, PREFIX + token + sequence.
t_name() {
	T_SEQ=$((T_SEQ + 1))
	printf -v "$1" '%s%s%x' "$2" "$T_TOK" "$T_SEQ"
}

t_netns() {
	local name
	t_name name "cnit-"
	name="$name-$$"
	if ! ip netns add "$name"; then
		echo "FAIL: ip netns add $name"
		exit 1
	fi
	t_defer "[ ! -e '/var/run/netns/$name' ] || ip netns del '$name'"
	printf -v "$1" '%s' "$name"
	printf -v "${1}_path" '%s' "/var/run/netns/$name"
}

# t_veth A B [NSA] [NSB]
t_veth() {
	local a=$1 b=$2 nsa=${3:-} nsb=${4:-} cmds
	# One ip for what happens in the root netns (batch lines take no -n).
	cmds="link add $a type veth peer name $b"
	if [ -n "$nsa" ]; then cmds+=$'\n'"link set $a netns $nsa"; else cmds+=$'\n'"link set $a up"; fi
	if [ -n "$nsb" ]; then cmds+=$'\n'"link set $b netns $nsb"; else cmds+=$'\n'"link set $b up"; fi
	# Deferred first: a batch that stops halfway leaves nothing behind.
	t_defer_link "$a"
	t_defer_link "$b"
	[ -z "$nsa" ] || t_defer_link "$a" "$nsa"
	[ -z "$nsb" ] || t_defer_link "$b" "$nsb"
	if ! ip -batch - <<<"$cmds"; then
		echo "FAIL: ip -batch: $cmds"
		exit 1
	fi
	[ -z "$nsa" ] || ip -n "$nsa" link set "$a" up
	[ -z "$nsb" ] || ip -n "$nsb" link set "$b" up
}

# t_ip NS ARGS...: ip in a netns, or in the root netns when NS is empty.
t_ip() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then ip -n "$ns" "$@"; else ip "$@"; fi
}

t_links() {
	local ns=${1:-} filter='.'
	# The root netns is the node's: other programs add and remove links there while a
	# test runs. Only this run's links count, and any link made off one of them (a
	# child a plugin left behind, under any name).
	if [ -z "$ns" ]; then
		filter='select((.ifname | contains($tok)) or ((.link // "") | contains($tok)))'
	fi
	t_ip "$ns" -d -j link show 2>/dev/null |
		jq -r --arg tok "$T_TOK" "[.[] | $filter] | sort_by(.ifindex) | .[]"' | "\(.ifindex) \(.ifname) \(.linkinfo.info_kind // "-")"'
}

t_link_names() {
	t_ip "${1:-}" -j link show 2>/dev/null | jq -r '[.[].ifname] | sort | join(" ")'
}

t_link_json() {
	local out
	out=$(t_ip "$1" -d -j link show dev "$2" 2>/dev/null) || return 0
	# ip prints the one link as a one-element array: [{...}]
	out=${out#\[}
	printf '%s\n' "${out%\]}"
}

# t_mac VAR IFNAME: the MAC of a link of the root netns, "" when there is none
# (read from sysfs: no process).
t_mac() {
	local -n t_mac_var=$1
	read -r t_mac_var 2>/dev/null <"/sys/class/net/$2/address" || t_mac_var=
}

t_store_ips() {
	local d=$1 f out=()
	[ -d "$d" ] || { echo ""; return 0; }
	for f in "$d"/*; do
		[ -e "$f" ] || continue
		f=${f##*/}
		case $f in lock | last_reserved_ip.*) continue ;; esac
		out+=("$f")
	done
	# The glob is sorted already.
	local IFS=' '
	echo "${out[*]}"
}

# t_cni CMD CONF [VAR=VALUE | -VAR]...
t_cni() {
	local cmd=$1 conf=$2 a k
	shift 2
	local -A env=(
		[CNI_COMMAND]=$cmd
		[CNI_CONTAINERID]=$T_ENV_CONTAINERID
		[CNI_NETNS]=$T_ENV_NETNS
		[CNI_IFNAME]=$T_ENV_IFNAME
		[CNI_ARGS]=$T_ENV_ARGS
		[CNI_PATH]=$T_ENV_PATH
	)
	for a in "$@"; do
		case $a in
		-*) unset "env[${a#-}]" ;;
		*=*) env[${a%%=*}]=${a#*=} ;;
		*) echo "t_cni: bad argument $a"; exit 1 ;;
		esac
	done
	# Under user-mode Linux every fork and exec costs 50 to 130 ms: the run
	# forks once (the subshell) and execs only timeout (unless
	# NETNS_PLUGIN_TIMEOUT=0) and the plugin.
	T_ENV_COMMAND_LINE=
	for k in CNI_COMMAND CNI_CONTAINERID CNI_NETNS CNI_IFNAME CNI_ARGS CNI_PATH; do
		[ -n "${env[$k]+set}" ] && T_ENV_COMMAND_LINE+="$k='${env[$k]}' "
	done
	for k in "${!env[@]}"; do
		case $k in CNI_COMMAND | CNI_CONTAINERID | CNI_NETNS | CNI_IFNAME | CNI_ARGS | CNI_PATH) ;;
		*) T_ENV_COMMAND_LINE+="$k='${env[$k]}' " ;;
		esac
	done
	T_ENV_COMMAND_LINE+="${T_WRAP[*]} ${T_BASE_WRAP[*]} $T_PLUGIN"
	T_LAST_CONF=$conf
	printf '%s' "$conf" >"$T_DIR/stdin"
	(
		unset CNI_COMMAND CNI_CONTAINERID CNI_NETNS CNI_IFNAME CNI_ARGS CNI_PATH CNI_NETNS_OVERRIDE
		for k in "${!env[@]}"; do export "$k=${env[$k]}"; done
		exec "${T_TIMEOUT[@]}" "${T_WRAP[@]}" "${T_BASE_WRAP[@]}" "$T_PLUGIN"
	) <"$T_DIR/stdin" >"$T_DIR/stdout" 2>"$T_DIR/stderr"
	T_RC=$?
	[ "${#T_TIMEOUT[@]}" = 0 ] || [ "$T_RC" != 124 ] || T_HUNG=$((T_HUNG + 1))
	t_slurp T_OUT "$T_DIR/stdout"
	t_slurp T_ERR "$T_DIR/stderr"
}

# t_ref_ipam BIN REF PLUGIN...: makes each reference IPAM plugin of REF
# callable from BIN at every CNI version. Debian's host-local and static
# (1.1.1) stop at cniVersion 1.0.0: where the plugin does not list 1.1.0, a
# shim of the same name hands it a 1.1.0 config relabelled 1.0.0 (the formats
# are the same); other versions reach it unchanged but for a trailing newline
# (JSON does not mind; a pipe from printf would cost a fork). Under user-mode Linux
# every process costs 50 to 130 ms: the shim is one bash that reads and
# relabels without a fork, and calls jq only for a config whose top-level
# label is not where `jq -c` puts it.
t_ref_ipam() {
	local bin=$1 ref=$2 p
	shift 2
	for p in "$@"; do
		if CNI_COMMAND=VERSION "$ref/$p" </dev/null 2>/dev/null |
			jq -e '.supportedVersions | index("1.1.0")' >/dev/null; then
			ln -s "$ref/$p" "$bin/$p"
			continue
		fi
		cat >"$bin/$p" <<EOF
#!/bin/bash
IFS= read -r -d '' in
new='{"cniVersion":"1.0.0"' old='{"cniVersion":"1.1.0"'
if [[ \$in == "\$old"* ]]; then
	in=\$new\${in#"\$old"}
elif [[ \$in == *1.1.0* ]] && v=\$(jq -er '.cniVersion' <<<"\$in" 2>/dev/null) && [ "\$v" = 1.1.0 ]; then
	in=\$(jq -c '.cniVersion = "1.0.0"' <<<"\$in")
fi
exec "$ref/$p" <<<"\$in"
EOF
		chmod +x "$bin/$p"
	done
}

# t_ref191 DIR NAME...: unpack the reference plugins NAME of containernetworking/plugins
# v1.9.1 (../shared/reference/cni-plugins, tests/shared.sh; REFERENCE_PLUGINS names
# another copy) into DIR and check them against its SHA256SUMS. Returns 1, with the NOT
# RUN line the run lists, when they are not there; exits 1 when one does not match.
t_ref191() {
	local dir=$1 src name
	shift
	src=${REFERENCE_PLUGINS:-$(shared_path reference/cni-plugins)}
	for name in "$@"; do
		if [ ! -f "$src/$name.xz" ] || [ ! -f "$src/SHA256SUMS" ]; then
			shared_missing "$src" reference/cni-plugins "reference plugins (containernetworking/plugins v1.9.1)"
			return 1
		fi
	done
	shared_reference_plugins "$dir" "$@"
}

# t_slurp VAR FILE: VAR = FILE's content less its trailing newlines, as $(cat
# FILE) would give, without a fork.
t_slurp() {
	local -n t_slurp_var=$1
	IFS= read -r -d '' t_slurp_var <"$2" || true
	while [[ $t_slurp_var == *$'\n' ]]; do t_slurp_var=${t_slurp_var%$'\n'}; done
}

t_pass() {
	T_NUM=$((T_NUM + 1))
	T_PASS=$((T_PASS + 1))
	printf 'ok %d - %s\n' "$T_NUM" "$1"
}

# t_fail DESC [DETAIL LINES...]
t_fail() {
	T_NUM=$((T_NUM + 1))
	T_FAIL=$((T_FAIL + 1))
	printf 'not ok %d - %s\n' "$T_NUM" "$1"
	shift
	local l
	for l in "$@"; do printf '%s\n' "$l" | sed 's/^/#   /'; done
}

# Details of the last plugin run, for failure messages.
t_last_run() {
	printf 'run: %s\nstdin: %s\nexit: %s\nstdout: %s\nstderr: %s' \
		"$T_ENV_COMMAND_LINE" "$T_LAST_CONF" "${T_RC:-}" "${T_OUT:-}" \
		"$(printf '%s' "${T_ERR:-}" | head -c 2000)"
}

t_eq() {
	if [ "$2" == "$3" ]; then t_pass "$1"; else
		t_fail "$1" "expected: $2" "got:      $3"
	fi
}

t_ne() {
	if [ "$2" != "$3" ]; then t_pass "$1"; else
		t_fail "$1" "expected anything but: $2" "got:                   $3"
	fi
}

t_contains() {
	if [[ "$3" == *"$2"* ]]; then t_pass "$1"; else
		t_fail "$1" "expected to contain: $2" "got:                 $3"
	fi
}

t_match() {
	if [[ "$3" =~ $2 ]]; then t_pass "$1"; else
		t_fail "$1" "expected to match: $2" "got:               $3"
	fi
}

t_jq() {
	local desc=$1 json=$2 filter=$3 want=$4 got
	if got=$(jq -r "$filter" <<<"$json" 2>&1) && [ "$got" == "$want" ]; then
		t_pass "$desc"
	else
		t_fail "$desc" "jq: $filter" "expected: $want" "got:      $got" "in: $json"
	fi
}

t_jq_true() {
	local desc=$1 json=$2 filter=$3 got
	if got=$(jq -e "$filter" <<<"$json" 2>&1); then
		t_pass "$desc"
	else
		t_fail "$desc" "jq -e: $filter" "gave: $got" "in: $json"
	fi
}

t_ok() {
	if [ "$T_RC" == 0 ]; then t_pass "$1"; else
		t_fail "$1" "expected exit 0" "$(t_last_run)"
	fi
}

# t_err DESC CODE [MSG]
t_err() {
	local desc=$1 code=$2 msg=${3:-} got_code got_msg
	if [ "$T_RC" == 0 ]; then
		t_fail "$desc" "expected an error (code ${code:-any}${msg:+, msg containing \"$msg\"})" \
			"$(t_last_run)"
		return
	fi
	# One jq for both: "CODE MSG", nothing when the code is not a number or
	# stdout is not exactly one JSON document.
	if ! got_msg=$(jq -ser 'select(length == 1) | .[0] | "\(.code | numbers) \(.msg // "")"' \
		<<<"$T_OUT" 2>/dev/null); then
		t_fail "$desc" "expected error JSON with a numeric code on stdout" "$(t_last_run)"
		return
	fi
	got_code=${got_msg%% *}
	got_msg=${got_msg#* }
	if [ -n "$code" ] && [ "$got_code" != "$code" ]; then
		t_fail "$desc" "expected code $code, got $got_code" "$(t_last_run)"
	elif [[ "$got_msg" != *"$msg"* ]]; then
		t_fail "$desc" "expected msg containing: $msg" "got msg: $got_msg" "$(t_last_run)"
	else
		t_pass "$desc"
	fi
}

t_summary() {
	echo "$T_PASS passed, $T_FAIL failed"
	[ "$T_FAIL" == 0 ] || exit 1
	exit 0
}
