#!/usr/bin/env bash
# Counts the system calls of one macvlan ADD and its DEL, with strace, per process:
# L2 (no IPAM) and with nv-ipam, ours beside Debian's Go macvlan (with host-local) and
# the do-nothing plugin, in a throwaway pod netns off a throwaway veth master. What is
# counted is what an ADD costs beyond its exec: netns opens, netlink sockets and
# messages, setns, reads of a reply. Counts are printed, not asserted.
#
# Usage: run-syscalls.sh [MACVLAN [NV_IPAM [NOOP]]]
#   defaults: build/plugins/macvlan/macvlan, build/ipam/nv-ipam/nv-ipam,
#   build/tests/bench/bench-noop
# Environment: REFERENCE_CNI_DIR (default /usr/lib/cni: Debian's macvlan and
#   host-local), ROUNDS (default 3: each count is the median of the rounds; the
#   kernel's link work can make a process wait, so futex and the like vary), KEEP
#   (non-empty: the traces stay in the temporary directory, which is printed).
# Exit status: 0, 1 when a plugin run failed, 2 on a harness error, 77 when not root,
# strace is missing or a netns or veth cannot be made.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
macvlan=${1:-$top/build/plugins/macvlan/macvlan}
nvipam=${2:-$top/build/ipam/nv-ipam/nv-ipam}
noop=${3:-$top/build/tests/bench/bench-noop}
ref=${REFERENCE_CNI_DIR:-/usr/lib/cni}
rounds=${ROUNDS:-3}

skip() { echo "SKIP: $*" >&2; exit 77; }
die() { echo "error: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || skip "needs root to create a network namespace"
command -v strace >/dev/null || skip "strace missing"
for b in "$macvlan" "$nvipam" "$noop"; do
	[ -x "$b" ] || die "$b is not an executable; build it first"
done

tag=$$$RANDOM
tag=${tag:0:9}
ns=cnisys-$tag
master=sm$tag
peer=sp$tag
tmp=$(mktemp -d /tmp/cni-syscalls.XXXXXX)
cleanup() {
	ip netns del "$ns" 2>/dev/null || true
	ip link del "$master" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$ns" 2>/dev/null || skip "cannot create a network namespace"
ip link add "$master" type veth peer name "$peer" 2>/dev/null || skip "cannot create a veth pair"
ip link set "$master" up

. "$top/tests/node-settings.sh"
node_settings "$tmp/node-settings.json" "$tmp"
printf '{"pools": {"sys": {"subnet": "10.97.0.0/16", "startIP": "10.97.0.2", "endIP": "10.97.0.250", "gateway": "10.97.0.1"}}}\n' \
	>"$tmp/pools.json"
nvipam_node_conf "$tmp" "$tmp/pools.json" "$tmp/store"
mkdir "$tmp/bin-ours"
cp "$macvlan" "$tmp/bin-ours/macvlan"
cp "$nvipam" "$tmp/bin-ours/nv-ipam"
cp "$noop" "$tmp/bin-ours/noop"

conf() { # TYPE IPAM
	printf '{"cniVersion":"1.0.0","name":"sys","type":"%s","master":"%s","mode":"bridge","ipam":%s}' \
		"$1" "$master" "$2"
}
l2=$(conf macvlan '{}')
ours_ipam=$(conf macvlan "{\"type\":\"nv-ipam\",\"poolName\":\"sys\",\"confDir\":\"$tmp\"}")
go_ipam=$(conf macvlan "{\"type\":\"host-local\",\"subnet\":\"10.96.0.0/16\",\"dataDir\":\"$tmp/hl\"}")

status=0
# count LABEL BIN CNI_PATH CONFIG CMD ROUND: one traced run, every process in one file.
count() {
	local out=$tmp/trace-$1-$5-$6
	if ! printf '%s' "$4" | env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin CNI_COMMAND="$5" \
		CNI_CONTAINERID="sys-$tag-$1" CNI_NETNS="/run/netns/$ns" CNI_IFNAME=eth0 \
		CNI_PATH="$3" CNI_RDMA_PLUGINS_CONF="$CNI_RDMA_PLUGINS_CONF" \
		strace -f -qq -o "$out" "$2" >"$out.stdout" 2>"$out.stderr"; then
		echo "$1 $5 failed: $(cat "$out.stdout" "$out.stderr")" >&2
		status=1
	fi
}

# summarize LABEL CMD: per program (a process and its threads, by the program it
# exec'd), the median over the rounds of all calls and of the ones this is about.
summarize() {
	local label=$1 cmd=$2 round
	for round in $(seq "$rounds"); do
		awk -v round="$round" -v netns="/run/netns/$ns" '
			/ \+\+\+ / || / --- / { next }
			{
				pid = $1
				if (!(pid in prog)) prog[pid] = "?"
			}
			# A call strace splits around a switch is counted where it starts; its
			# outcome (a child made, a program run) is read where it ends.
			/ resumed>/ {
				if ($0 ~ /<\.\.\. execve resumed>/ && $0 ~ /= 0$/) prog[pid] = pending[pid]
				if ($0 ~ /<\.\.\. (clone|clone3|vfork|fork) resumed>/ && $NF ~ /^[0-9]+$/) prog[$NF] = prog[pid]
				next
			}
			{
				call = $2
				sub(/\(.*/, "", call)
				if (call == "execve") {
					p = $0
					sub(/^[0-9]+ +execve\("/, "", p)
					sub(/".*/, "", p)
					sub(/.*\//, "", p)
					pending[pid] = p
					if ($0 ~ /= 0$/) prog[pid] = p
				}
				if ((call == "clone" || call == "clone3" || call == "vfork" || call == "fork") && $NF ~ /^[0-9]+$/)
					prog[$NF] = prog[pid]
				k = prog[pid]
				if (!(k in seen)) { seen[k] = 1; order[++np] = k }
				all[k]++
				if (call == "openat" && index($0, "\"" netns "\"")) nsopen[k]++
				if (call == "setns") setns[k]++
				if (call == "socket" && index($0, "AF_NETLINK")) nlsock[k]++
				if (call == "sendmsg" || call == "sendto") send[k]++
				if ((call == "sendmsg" || call == "sendto") && ($0 ~ /nlmsg_type=(RTM_GETLINK|0x12 )/)) getlink[k]++
				if (call == "recvmsg" || call == "recvfrom") recv[k]++
				if (index($0, "MSG_PEEK")) peek[k]++
			}
			END {
				for (i = 1; i <= np; i++) {
					k = order[i]
					if (k == "?") continue
					printf "%s %d %d %d %d %d %d %d %d %d\n", k, round, all[k], nsopen[k], setns[k], nlsock[k], send[k], getlink[k], recv[k], peek[k]
				}
			}
		' "$tmp/trace-$label-$cmd-$round"
	done | awk -v label="$label" -v cmd="$cmd" '
		function med(k,   n, i, j, t, a) {
			n = 0
			for (i = 1; i <= rounds[cur]; i++) a[++n] = v[cur, i, k]
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return a[int((n + 1) / 2)]
		}
		{ key = $1; rounds[key]++; for (k = 3; k <= 10; k++) v[key, rounds[key], k] = $k; if (!(key in seen)) { seen[key] = 1; order[++np] = key } }
		END {
			for (p = 1; p <= np; p++) {
				cur = order[p]
				printf "%-9s %-4s %-10s %5d %6d %6d %6d %5d %7d %5d %5d\n", label, cmd, cur, med(3), med(4), med(5), med(6), med(7), med(8), med(9), med(10)
			}
		}'
}

echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
echo "ours: $(realpath "$macvlan") + $(realpath "$nvipam")"
echo "go:   $ref/macvlan + $ref/host-local"
[ -z "${KEEP:-}" ] || echo "traces: $tmp"
for round in $(seq "$rounds"); do
	count noop "$tmp/bin-ours/noop" "$tmp/bin-ours" "$l2" ADD "$round"
	count ours-L2 "$tmp/bin-ours/macvlan" "$tmp/bin-ours" "$l2" ADD "$round"
	count ours-L2 "$tmp/bin-ours/macvlan" "$tmp/bin-ours" "$l2" DEL "$round"
	count ours-IPAM "$tmp/bin-ours/macvlan" "$tmp/bin-ours" "$ours_ipam" ADD "$round"
	count ours-IPAM "$tmp/bin-ours/macvlan" "$tmp/bin-ours" "$ours_ipam" DEL "$round"
	if [ -x "$ref/macvlan" ] && [ -x "$ref/host-local" ]; then
		count go-L2 "$ref/macvlan" "$ref" "$l2" ADD "$round"
		count go-L2 "$ref/macvlan" "$ref" "$l2" DEL "$round"
		count go-IPAM "$ref/macvlan" "$ref" "$go_ipam" ADD "$round"
		count go-IPAM "$ref/macvlan" "$ref" "$go_ipam" DEL "$round"
	fi
done

echo
echo "System calls per program (a process and its threads), medians of $rounds rounds. netns: opens of"
echo "CNI_NETNS; nlsock: netlink sockets made; send, recv: sendmsg/sendto, recvmsg/recvfrom;"
echo "getlink: link lookups sent; peek: receives with MSG_PEEK (the same reply read twice)"
printf '%-9s %-4s %-10s %5s %6s %6s %6s %5s %7s %5s %5s\n' config cmd program all netns setns nlsock send getlink recv peek
for label in noop ours-L2 ours-IPAM go-L2 go-IPAM; do
	for cmd in ADD DEL; do
		[ -f "$tmp/trace-$label-$cmd-1" ] || continue
		summarize "$label" "$cmd"
	done
done
exit "$status"
