#!/usr/bin/env bash
# Benchmarks ipam-node's pool sync at cluster scale against a real kube-apiserver
# (../shared/k8s, up-api: no kubelet, no root): POOLS pools (half IPPools, half IPv6
# CIDRPools), each with a status of NODES entries, one of them this node's; ipam-node started
# on them with every path in a temporary directory; then UPDATES status updates (a merge
# patch of the whole allocations list, as ipam-controller writes it), one in OWN_EVERY of them
# moving this node's block, the others swapping two other nodes' blocks. Printed: CPU per
# update ((utime+stime) delta / updates), peak and final RSS (VmHWM, VmRSS), the pool file's
# rewrites (ipam-node's counter), and the cleaner's listing of 250 Pending pods bound to the
# node (its "clean pass" log line).
#
# With ASSERT=1 (the reduced form CI runs) it fails unless: the file holds this node's block
# of every pool, it is not rewritten on other nodes' changes, it is rewritten on each change
# of this node's block, and the peak RSS stays under RSS_MAX_KB.
#
# Usage: run-ipam-node-scale.sh [IPAM_NODE]   (default build/ipam/nv-ipam/ipam-node)
# Environment: POOLS (16), NODES (10000), UPDATES (50), OWN_EVERY (10), PODS (250),
#   ASSERT (0), RSS_MAX_KB (30720), KUBE_KIT (../shared/k8s), BENCH_DIR (the kit's cluster,
#   kept between runs for its unpacked binaries; default build/bench-kit), K8S_NICE (5).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
node_bin=$(realpath "${1:-$top/build/ipam/nv-ipam/ipam-node}")
. "$top/tests/shared.sh"
kit=${KUBE_KIT:-$(shared_path k8s)}
dir=${BENCH_DIR:-$top/build/bench-kit}
pools=${POOLS:-16}
nodes=${NODES:-10000}
updates=${UPDATES:-50}
own_every=${OWN_EVERY:-10}
npods=${PODS:-250}
assert=${ASSERT:-0}
rss_max=${RSS_MAX_KB:-30720}
ns=nvidia-network-operator
me=dgx-h100-rack000-node-00000
export K8S_NICE=${K8S_NICE:-5}
[ -x "$kit/k8s" ] || shared_not_run "$kit" k8s "Kubernetes kit"
for p in jq curl awk python3; do command -v "$p" >/dev/null || { echo "error: $p missing" >&2; exit 2; }; done

tmp=$(mktemp -d /tmp/ipam-node-scale.XXXXXX)
npid=
failed=0
cleanup() {
	[ -z "$npid" ] || kill -TERM "$npid" 2>/dev/null || true
	[ -z "$npid" ] || wait "$npid" 2>/dev/null || true
	"$kit/k8s" down "$dir" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; failed=1; }
echo "# $(date -u +%FT%TZ), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$kit/k8s" up-api "$dir" >"$tmp/kit.log" 2>&1 || { tail -5 "$tmp/kit.log"; exit 1; }
port=$(sed -n 's/^apiserver=//p' "$dir/state/ports")
api=https://127.0.0.1:$port
kc() { "$dir/bin/kubectl" --kubeconfig "$dir/admin.kubeconfig" "$@"; }
acurl() { curl -sS --fail-with-body --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" "$@"; }
kc apply -f "$top/tests/kube/crds.yaml" >/dev/null
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$ns" | kc apply -f - >/dev/null
until kc get ippools,cidrpools -n "$ns" >/dev/null 2>&1; do sleep 0.2; done

# The pools, their statuses, and every update's patch, written by one python run: pool i
# (0-based) is an IPPool 10.i.0.0/16 with blocks of 4 when i is even, else a CIDRPool
# fd00:i::/48 with a /64 per node; node k holds block k+1 (block 0 keeps the gateway).
# Update u patches pool u % POOLS: when u % OWN_EVERY == OWN_EVERY - 1 this node moves to
# the block after the last node's, else two other nodes swap their blocks.
python3 - "$tmp" "$pools" "$nodes" "$updates" "$own_every" "$me" <<'EOF'
import json, sys, ipaddress
tmp, pools, nodes, updates, own_every, me = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[6]
names = [me] + ["dgx-h100-rack%03d-node-%05d" % (k // 32, k) for k in range(1, nodes)]
def entry(i, k, block):
    if i % 2 == 0:
        base = int(ipaddress.ip_address("10.%d.0.0" % (i + 1))) + 4 * block
        return {"nodeName": names[k], "startIP": str(ipaddress.ip_address(base)),
                "endIP": str(ipaddress.ip_address(base + 3))}
    net = ipaddress.ip_network("fd00:%x::/48" % (i + 1))
    pfx = ipaddress.ip_network((int(net.network_address) + (block << 64), 64))
    return {"nodeName": names[k], "prefix": str(pfx), "gateway": str(pfx.network_address + 1)}
blocks = [list(range(1, nodes + 1)) for _ in range(pools)]
for i in range(pools):
    if i % 2 == 0:
        obj = {"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "IPPool",
               "metadata": {"name": "pool%02d" % i},
               "spec": {"subnet": "10.%d.0.0/16" % (i + 1), "perNodeBlockSize": 4,
                        "gateway": "10.%d.0.1" % (i + 1)}}
    else:
        obj = {"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "CIDRPool",
               "metadata": {"name": "pool%02d" % i},
               "spec": {"cidr": "fd00:%x::/48" % (i + 1), "perNodeNetworkPrefix": 64,
                        "gatewayIndex": 1}}
    json.dump(obj, open("%s/pool%02d.json" % (tmp, i), "w"))
    status = {"status": {"allocations": [entry(i, k, blocks[i][k]) for k in range(nodes)]}}
    json.dump(status, open("%s/status%02d.json" % (tmp, i), "w"), separators=(",", ":"))
plan = open("%s/plan" % tmp, "w")
for u in range(updates):
    i = u % pools
    own = u % own_every == own_every - 1
    if own:
        blocks[i][0] = max(blocks[i]) + 1
    else:
        a, b = 1 + (7 * u) % (nodes - 1), 1 + (13 * u + 5) % (nodes - 1)
        blocks[i][a], blocks[i][b] = blocks[i][b], blocks[i][a]
    status = {"status": {"allocations": [entry(i, k, blocks[i][k]) for k in range(nodes)]}}
    json.dump(status, open("%s/update%03d.json" % (tmp, u), "w"), separators=(",", ":"))
    mine = entry(i, 0, blocks[i][0])
    print(u, "ippools" if i % 2 == 0 else "cidrpools", "pool%02d" % i, int(own),
          mine.get("startIP", mine.get("prefix")), file=plan)
EOF
echo "# $pools pools x $nodes entries: $(($(stat -c %s "$tmp/status00.json") / 1024)) KiB per IPPool status, $(($(stat -c %s "$tmp/status01.json") / 1024)) KiB per CIDRPool status"

for i in $(seq 0 $((pools - 1))); do
	f=$(printf '%02d' "$i")
	res=$([ $((i % 2)) = 0 ] && echo ippools || echo cidrpools)
	acurl -o /dev/null -H 'Content-Type: application/json' -d @"$tmp/pool$f.json" \
		"$api/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$ns/$res"
	acurl -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' -d @"$tmp/status$f.json" \
		"$api/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$ns/$res/pool$f/status"
done

# 250 pods bound to this node: no kubelet, so they stay Pending, which the cleaner lists alike.
: >"$tmp/pods.cfg"
# The pods' service account (no controller-manager makes it).
acurl -o /dev/null -H 'Content-Type: application/json' -d '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}' \
	"$api/api/v1/namespaces/default/serviceaccounts" 2>/dev/null || true
for p in $(seq 1 "$npods"); do
	[ "$p" = 1 ] || echo next >>"$tmp/pods.cfg"
	printf 'cacert = "%s"\ncert = "%s"\nkey = "%s"\n' "$dir/pki/ca.crt" "$dir/pki/admin.crt" "$dir/pki/admin.key" >>"$tmp/pods.cfg"
	printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w-%03d","namespace":"default","labels":{"app":"trainer","job":"llm-%d"},"annotations":{"k8s.v1.cni.cncf.io/networks":"rail1,rail2,rail3,rail4,rail5,rail6,rail7,rail8"}},"spec":{"nodeName":"%s","automountServiceAccountToken":false,"containers":[{"name":"c","image":"registry.example/trainer:1.0","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}\n' \
		"$p" $((p % 7)) "$me" >"$tmp/pod-$p.json"
	printf 'url = "%s/api/v1/namespaces/default/pods"\ndata = "@%s"\nheader = "Content-Type: application/json"\noutput = "/dev/null"\n' \
		"$api" "$tmp/pod-$p.json" >>"$tmp/pods.cfg"
done
acurl -K "$tmp/pods.cfg"
listed=$(acurl "$api/api/v1/pods?fieldSelector=spec.nodeName%3D$me" | jq '.items | length')
[ "$listed" = "$npods" ] || fail "$listed pods on the node, not $npods"

mkdir -p "$tmp/state" "$tmp/conf" "$tmp/bin"
chmod 0700 "$tmp/state"
pool_file=$tmp/conf/node-pools.json
mport=$((20000 + RANDOM % 20000)) hport=$((mport + 1))
t0=$(date +%s%N)
"$node_bin" --node-name="$me" --ippools-namespace="$ns" --kubeconfig="$dir/admin.kubeconfig" \
	--store-file="$tmp/state/store" --cni-bin-dir="$tmp/bin" --cni-conf-dir="$tmp/conf" \
	--cni-skip-nv-ipam-binary-copy --cni-log-file="$tmp/nv-ipam-cni.log" \
	--metrics-bind-address="127.0.0.1:$mport" --health-probe-bind-address="127.0.0.1:$hport" \
	--stale-ip-check-interval=1h >"$tmp/node.log" 2>&1 &
npid=$!
metric() { curl -s "127.0.0.1:$mport/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
cpu() { awk '{print $14 + $15}' "/proc/$npid/stat"; }
status_kb() { awk -v k="$1" '$1 == k ":" {print $2}' "/proc/$npid/status"; }
# Waits (10 s at most) until the pool file has @2 in pool @1's entry.
# (Waits here: hang guards of 30 s or more for what takes milliseconds.)
wait_block() {
	local key=$1 want=$2 i
	for i in $(seq 1 600); do
		[ "$(jq -r --arg k "$key" '.pools[$k] | .startIP // .prefix' "$pool_file" 2>/dev/null)" = "$want" ] && return 0
		sleep 0.05
	done
	return 1
}
key_of() { [ "$1" = ippools ] && echo "$2" || echo "cidrpool/$2"; }
until [ -s "$pool_file" ] && [ "$(jq '.pools | length' "$pool_file" 2>/dev/null)" = "$pools" ]; do
	kill -0 "$npid" 2>/dev/null || { tail -5 "$tmp/node.log"; exit 1; }
	[ $(($(date +%s%N) - t0)) -lt 120000000000 ] || { fail "no pool file with $pools pools after 120 s"; break; }
	sleep 0.05
done
echo "start to a pool file of $pools pools: $((($(date +%s%N) - t0) / 1000000)) ms;" \
	"CPU $(( $(cpu) * 1000 / $(getconf CLK_TCK) )) ms, peak RSS $(status_kb VmHWM) kB, RSS $(status_kb VmRSS) kB"
bad=$(jq -r --arg n "$me" 'select(.nodeName != $n) | "nodeName"' "$pool_file")
[ -z "$bad" ] || fail "the pool file names another node"
if [ "$(jq -r '.pools.pool00.startIP' "$pool_file")" != 10.1.0.4 ]; then fail "pool00's block is not 10.1.0.4"; fi
sleep 1
writes0=$(metric nv_ipam_node_pool_sync_writes_total)
ino0=$(stat -c %i "$pool_file")
cpu0=$(cpu) own=0 own_cpu=0 other_cpu=0 rewrites_other=0
while read -r u res name is_own block; do
	f=$(printf '%03d' "$u")
	w=$(metric nv_ipam_node_pool_sync_writes_total)
	c=$(cpu)
	acurl -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' -d @"$tmp/update$f.json" \
		"$api/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$ns/$res/$name/status"
	if [ "$is_own" = 1 ]; then
		own=$((own + 1))
		wait_block "$(key_of "$res" "$name")" "$block" || fail "update $u: $name's block is not $block in the pool file"
		# Its write counted (the file is renamed into place first), then its CPU settles.
		for i in $(seq 1 600); do [ "$(metric nv_ipam_node_pool_sync_writes_total)" != "$w" ] && break; sleep 0.05; done
		sleep 0.3
		own_cpu=$((own_cpu + $(cpu) - c))
	else
		sleep 0.3
		other_cpu=$((other_cpu + $(cpu) - c))
		[ "$(metric nv_ipam_node_pool_sync_writes_total)" = "$w" ] || rewrites_other=$((rewrites_other + 1))
	fi
done <"$tmp/plan"
sleep 1
tck=$(getconf CLK_TCK)
writes=$(( $(metric nv_ipam_node_pool_sync_writes_total) - writes0 ))
others=$((updates - own))
echo "$updates updates of $nodes-entry statuses ($own moving this node's block):"
echo "  CPU per update $(awk -v c=$(( $(cpu) - cpu0 )) -v t="$tck" -v n="$updates" 'BEGIN {printf "%.1f", c * 1000 / t / n}') ms" \
	"(other nodes' changes $(awk -v c="$other_cpu" -v t="$tck" -v n="$others" 'BEGIN {printf "%.1f", n ? c * 1000 / t / n : 0}') ms," \
	"this node's $(awk -v c="$own_cpu" -v t="$tck" -v n="$own" 'BEGIN {printf "%.1f", n ? c * 1000 / t / n : 0}') ms)"
echo "  pool file rewrites: $writes (this node's changes: $own; after other nodes' changes: $rewrites_other);" \
	"inode $([ "$(stat -c %i "$pool_file")" = "$ino0" ] && echo same || echo replaced)"
echo "  peak RSS $(status_kb VmHWM) kB, RSS now $(status_kb VmRSS) kB"
[ "$writes" = "$own" ] || fail "$writes pool file rewrites, $own expected"
[ "$rewrites_other" = 0 ] || fail "the pool file was rewritten after $rewrites_other updates of other nodes' entries"
[ "$(status_kb VmHWM)" -le "$rss_max" ] || fail "peak RSS $(status_kb VmHWM) kB over $rss_max kB"

# The cleaner's first pass (right after the first sync; the next an hour later): its
# listing of the node's pods.
for i in $(seq 1 600); do
	grep -q '"clean pass"' "$tmp/node.log" && break
	sleep 0.1
done
pass=$(grep '"clean pass"' "$tmp/node.log" | tail -1)
echo "cleaner: $npods pods on the node: $(sed -n 's/.*\("clean pass".*\)/\1/p' <<<"$pass")"
[ -n "$pass" ] || fail "no clean pass logged"
t1=$(date +%s%N)
acurl -o /dev/null "$api/api/v1/pods?fieldSelector=spec.nodeName%3D$me&limit=500"
echo "  the same listing by curl: $((($(date +%s%N) - t1) / 1000000)) ms"
grep -q '"level":"error"\|E[0-9]\{4\} ' "$tmp/node.log" && { grep '"level":"error"\|E[0-9]\{4\} ' "$tmp/node.log" | head -3; fail "ipam-node logged errors"; }
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$assert" = 1 ] || exit 0
exit "$failed"
