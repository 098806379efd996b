#!/usr/bin/env bash
# Benchmarks a pod with eight rails through Multus on a one-node cluster of ../shared/k8s,
# our macvlan, tuning and sbr against Debian's Go plugins (/usr/lib/cni). Each rail is the
# conflist the NVIDIA Network Operator renders for a MacvlanNetwork with NVIDIA's
# multi-rail metaPlugins (cniVersion 0.3.1: macvlan on its own veth master, then the
# tuning ARP profile, then sbr), with Debian's host-local for addresses (a /24 per rail),
# the same for both builds. PODS pods per build are created one after another (builds
# alternating, go first; one uncounted warm-up pod each), each waited for to Ready, then
# deleted and waited for. Per pod: the time from creation (just before kubectl apply) to
# Ready (kubectl wait returning), and the CNI share of it: containerd's RunPodSandbox span
# from its log (Multus' log has whole-second timestamps only). RunPodSandbox is the
# sandbox's CNI ADD through Multus (eth0 on the kit's bridge + eight rails) plus creating
# and starting the sandbox container, which is the same for both builds. Figures are
# printed, not asserted (root).
#
# Usage: run-k8s-multirail.sh BUILD_DIR
# Environment: PODS (per build, default 20), WARMUP (uncounted pods per build, default 1),
#   KUBE_KIT (the kit, default ../shared/k8s beside the source tree), KUBE_DIR (the kit's
#   DIR, default BUILD_DIR/bench-k8s), K8S_NICE (default 5), OTHER_WAIT (seconds to wait
#   for another node of the kit on this machine to go, default 600).
# Exit status: 0 when the figures were printed; 77 (skip) without the kit, without root,
#   or while another node of the kit stays up; 1 on a failure (the cluster, a pod that
#   does not become Ready or lacks a rail).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
. "$top/tests/shared.sh"
KIT=${KUBE_KIT:-$(shared_path k8s)}
DIR=${KUBE_DIR:-$build/bench-k8s}
pods=${PODS:-20}
warmup=${WARMUP:-1}
rails=8
export K8S_NICE=${K8S_NICE:-5}
[ -x "$KIT/k8s" ] || shared_not_run "$KIT" k8s "Kubernetes kit"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root" >&2; exit 77; }
for p in macvlan tuning sbr host-local; do
	[ -x "/usr/lib/cni/$p" ] || { echo "SKIP: no /usr/lib/cni/$p (containernetworking-plugins)" >&2; exit 77; }
done

# The kit runs one node per machine (its bridge ktbr0, its nat chain and /kubepods are
# machine-wide): another's (the kube suite's) is waited for, never touched.
if [ ! -e "$DIR/state/pids/node" ]; then
	end=$((SECONDS + ${OTHER_WAIT:-600}))
	while ip link show ktbr0 >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || { echo "SKIP: another node of the kit is up (ktbr0)" >&2; exit 77; }
		sleep 5
	done
fi

t_start=$SECONDS
work=$(mktemp -d /tmp/bk8-bench.XXXXXX)
. "$top/tests/kube/lib.sh"
tok=$((RANDOM % 1000))
masters=()
cleanup() {
	"$KIT/k8s" down "$DIR" >>"$work/kit.log" 2>&1 || { echo "k8s down failed:" >&2; tail -n 5 "$work/kit.log" >&2; }
	local m
	for m in "${masters[@]}"; do ip link del "$m" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT

# Our plugins, copied now so that a rebuild in the tree during the run changes nothing.
if [ ! -x "$build/plugins/macvlan/macvlan" ] || [ ! -x "$build/plugins/tuning/tuning" ] ||
	[ ! -x "$build/plugins/sbr/sbr" ]; then
	ninja -C "$build" plugins/macvlan/macvlan plugins/tuning/tuning plugins/sbr/sbr >"$work/build.log" 2>&1 ||
		{ tail "$work/build.log"; exit 1; }
fi
mkdir -p "$work/ours" "$work/go"
for p in macvlan tuning sbr; do
	cp "$build/plugins/$p/$p" "$work/ours/$p" && cp "/usr/lib/cni/$p" "$work/go/$p" || exit 1
done

echo "cluster up ($DIR) ..."
"$KIT/k8s" up-node "$DIR" >>"$work/kit.log" 2>&1 || { tail "$work/kit.log"; exit 1; }
bin=$DIR/node/opt/cni/bin
install -m 0755 /usr/lib/cni/host-local "$bin/host-local"
clog=$DIR/logs/containerd.log
clog_from=$(($(wc -l <"$clog") + 1)) # the kit keeps its logs between runs: this run's lines only

profile='{"type":"tuning","sysctl":{"net.ipv4.conf.all.arp_ignore":"1","net.ipv4.conf.all.arp_announce":"2","net.ipv4.conf.all.rp_filter":"0","net.ipv4.conf.IFNAME.arp_ignore":"1","net.ipv4.conf.IFNAME.arp_announce":"2","net.ipv4.conf.IFNAME.rp_filter":"0"}},{"type":"sbr"}'
nets=
for i in $(seq "$rails"); do
	m=bk8$tok$i
	ip link add "$m" type veth peer name "${m}p" && ip link set "$m" up && ip link set "${m}p" up || exit 1
	masters+=("$m")
	s=192.168.$((210 + i))
	cat <<EOF | kc apply -f - >/dev/null || exit 1
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: bk8-rail$i
  namespace: default
spec:
  config: '{"cniVersion":"0.3.1","name":"rail$i","plugins":[{"type":"macvlan","master":"$m","mode":"bridge","mtu":1500,"ipam":{"type":"host-local","ranges":[[{"subnet":"$s.0/24","rangeStart":"$s.10","rangeEnd":"$s.250","gateway":"$s.1"}]]}},$profile]}'
EOF
	nets="$nets${nets:+,}{\"name\":\"bk8-rail$i\"}"
done
nets="'[$nets]'"

use() { # BUILD: its macvlan, tuning and sbr into the node's bin dir
	local p
	for p in macvlan tuning sbr; do install -m 0755 "$work/$1/$p" "$bin/$p" || return 1; done
}

# one BUILD NAME: a pod created, waited for to Ready, checked, deleted; prints its ms to Ready.
one() {
	local t0 ms n
	t0=$(date +%s%N)
	net_pod "$2" "$nets"
	kc wait --for=condition=Ready "pod/$2" -n default --timeout=120s >/dev/null 2>&1 ||
		{ echo "$2 ($1) not Ready in 120 s" >&2; return 1; }
	ms=$(ms_since "$t0")
	n=$(kc get pod "$2" -n default -o 'jsonpath={.metadata.annotations.k8s\.v1\.cni\.cncf\.io/network-status}' |
		jq '[.[] | select(.name | startswith("default/bk8-rail")) | select(.ips | length == 1)] | length')
	[ "$n" = "$rails" ] || { echo "$2 ($1): $n of $rails rails with an address" >&2; return 1; }
	kc delete pod "$2" -n default --wait=true --timeout=60s >/dev/null 2>&1 ||
		{ echo "$2 ($1) not deleted in 60 s" >&2; return 1; }
	echo "$ms"
}

loads=()
echo "$pods pods per build, one at a time, builds alternating (+$warmup warm-up each) ..."
for i in $(seq "$((pods + warmup))"); do
	for b in go ours; do
		use "$b" || exit 1
		if [ "$i" -le "$warmup" ]; then name=bk8-$b-w$i; else name=bk8-$b-$((i - warmup)); fi
		ms=$(one "$b" "$name") || exit 1
		[ "$i" -le "$warmup" ] || echo "$b $name $ms" >>"$work/ready"
	done
	loads+=("$(cut -d' ' -f1 /proc/loadavg)")
done

# RunPodSandbox spans (ms) per pod name, from containerd's log (same day assumed; a
# span over midnight is mended).
awk '
	/msg="RunPodSandbox for &PodSandboxMetadata\{Name:bk8-/ {
		if (!match($0, /time="[^"]*"/)) next
		ts = substr($0, RSTART + 6, RLENGTH - 7)
		split(substr(ts, 12), hms, ":"); sub(/Z$/, "", hms[3]); sub(/[+-][0-9][0-9]:[0-9][0-9]$/, "", hms[3])
		t = hms[1] * 3600 + hms[2] * 60 + hms[3]
		match($0, /Name:bk8-[^,]*/); name = substr($0, RSTART + 5, RLENGTH - 5)
		if ($0 ~ /returns sandbox id/) { if (name in start) { d = t - start[name]; if (d < 0) d += 86400; printf "%s %.0f\n", name, d * 1000 } }
		else start[name] = t
	}' <(tail -n "+$clog_from" "$clog") >"$work/sandbox"

stats() { # BUILD: "median p90 cni_median n_cni" of its counted pods
	local b=$1
	awk -v b="$b" 'NR == FNR { if ($1 == b) { r[++n] = $3; want[$2] = 1 } next }
		($1 in want) { c[++m] = $2 }
		function med(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
		END { m50 = med(r, n); p = int(0.9 * n + 0.999999); if (p < 1) p = 1
			printf "%.0f %.0f %.0f %d\n", m50, r[p], (m ? med(c, m) : -1), m }' "$work/ready" "$work/sandbox"
}
read -r go_med go_p90 go_cni go_n < <(stats go)
read -r our_med our_p90 our_cni our_n < <(stats ours)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a >= 0) printf "%.2f", a / b; else printf "?" }'; }
lmax=$(printf '%s\n' "${loads[@]}" | sort -g | tail -n 1)
lmin=$(printf '%s\n' "${loads[@]}" | sort -g | head -n 1)

printf '\nA pod with %d rails through Multus (macvlan + tuning + sbr each, host-local), %d pods per build, %s\n' \
	"$rails" "$pods" "$(date -u +%F)"
printf 'load average (1 min) during the pods: %s to %s; at the end: %s\n' "$lmin" "$lmax" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-16s %14s %14s %26s\n' build "Ready median" "Ready p90" "CNI median (RunPodSandbox)"
printf '%-16s %11s ms %11s ms %23s ms\n' "go (Debian)" "$go_med" "$go_p90" "$go_cni"
printf '%-16s %11s ms %11s ms %23s ms\n' ours "$our_med" "$our_p90" "$our_cni"
printf '%-16s %14s %14s %26s\n' "ratio ours/go" "$(ratio "$our_med" "$go_med")" "$(ratio "$our_p90" "$go_p90")" \
	"$(ratio "$our_cni" "$go_cni")"
[ "$go_n" = "$pods" ] && [ "$our_n" = "$pods" ] ||
	echo "note: RunPodSandbox spans found for $go_n (go) and $our_n (ours) of $pods pods each"
# Every pod's figures, sorted: Ready moves in steps of about a second (the kubelet's PLEG
# relists every second), so a median or p90 is one step or another.
for b in go ours; do
	printf 'all %-4s Ready (ms): %s\n' "$b" "$(awk -v b="$b" '$1 == b {print $3}' "$work/ready" | sort -n | tr '\n' ' ')"
	printf 'all %-4s RunPodSandbox (ms): %s\n' "$b" "$(awk -v b="$b" '$1 ~ "^bk8-" b "-[0-9]" {print $2}' "$work/sandbox" | sort -n | tr '\n' ' ')"
done
echo "CNI time: containerd's RunPodSandbox span (Multus' ADD of eth0 and the $rails rails, plus the sandbox container)."
printf 'the run took %d s (cluster up and down included)\n' "$((SECONDS - t_start))"
