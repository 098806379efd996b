# Case controller-churn: ipam-controller (the operator's flags and account) while IPPools and
# CIDRPools and Nodes are created, relabelled (moving in and out of pools' selectors) and
# deleted in random order, one change at a time. At every quiet point each pool's status
# equals what nv-ipam-tool carve computes from the same inputs (the pools' specs now, their
# statuses at the previous quiet point, the nodes now); and no node's block ever moves
# while the node stays in the pool. KUBE_SEED replays a run (the seed is printed).

. "$top/tests/kube/ctl-lib.sh"
seed=${KUBE_SEED:-$((RANDOM * 32768 + RANDOM))}
RANDOM=$seed
note "controller-churn: seed $seed (KUBE_SEED=$seed replays it)"
ch_steps=${KUBE_CHURN_STEPS:-30}
ch_nodes=() ch_pools=() ch_n=0 ch_p=0
ch_prev=$work/ch-prev.json   # the pools at the last quiet point
ch_failed=0 ch_moved=0 ch_ms=0 ch_max_ms=0

pick() { local -n arr=$1; echo "${arr[RANDOM % ${#arr[@]}]}"; }
labels() { # random labels: tier a or b (or none), a rack
	case $((RANDOM % 3)) in
	0) echo "{tier: a, rack: r$((RANDOM % 3))}" ;;
	1) echo "{tier: b, rack: r$((RANDOM % 3))}" ;;
	*) echo "{rack: r$((RANDOM % 3))}" ;;
	esac
}
selector() { # a random nodeSelector, or none
	case $((RANDOM % 4)) in
	0) echo "nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: tier, operator: In, values: [a]}]}]}" ;;
	1) echo "nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: tier, operator: Exists}]}]}" ;;
	2) echo "nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: NotIn, values: [r0]}]}, {matchExpressions: [{key: tier, operator: In, values: [b]}]}]}" ;;
	*) echo "" ;;
	esac
}
pool_spec() { # KIND INDEX SELECTOR: the pool's spec, fixed by its index but for the selector
	local i=$2 sel=$3
	if [ "$1" = IPPool ]; then
		# Small pools (blocks of 16 in a /26 to a /24) run out: NoFreeRanges, reuse.
		printf 'spec: {subnet: "10.%d.%d.0/%d", perNodeBlockSize: 16, gateway: "10.%d.%d.1"%s}\n' \
			$((90 + i / 200)) $((i % 200)) $((24 + i % 3)) $((90 + i / 200)) $((i % 200)) "${sel:+, $sel}"
	else
		printf 'spec: {cidr: "10.%d.%d.0/22", perNodeNetworkPrefix: 25, gatewayIndex: 1%s%s}\n' \
			$((95 + i / 60)) $(((i % 60) * 4)) "${sel:+, $sel}" \
			"$([ $((i % 2)) = 0 ] && echo ", exclusions: [{startIP: \"10.$((95 + i / 60)).$(((i % 60) * 4)).0\", endIP: \"10.$((95 + i / 60)).$(((i % 60) * 4)).126\"}]")"
	fi
}
apply_pool() { # KIND NAME INDEX SELECTOR
	{ printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: %s\nmetadata: {name: %s, namespace: %s}\n' "$1" "$2" "$CNS"
	  pool_spec "$1" "$3" "$4"; } | kc apply -f - >/dev/null
}
# (api-probe, not kubectl: a poll every 100 ms must cost little on a loaded machine.)
api_get() { "$probe" --kubeconfig "$DIR/admin.kubeconfig" get "$1"; }
pools_now() {
	api_get "$GVP/ippools" >"$work/ch-ipp.json"
	api_get "$GVP/cidrpools" >"$work/ch-cidr.json"
	jq -cs '[(.[0].items[] | .kind = "IPPool"), (.[1].items[] | .kind = "CIDRPool") |
		 {kind, metadata: {name: .metadata.name}, spec, status}] | sort_by(.kind, .metadata.name)' \
		"$work/ch-ipp.json" "$work/ch-cidr.json"
}

# The expected statuses: carve of the pools now, each with its status at the last quiet point.
expected() {
	local now=$1
	jq -c --slurpfile prev "$ch_prev" '[.[] | . as $p | .status = (($prev[0][] | select(.kind == $p.kind and .metadata.name == $p.metadata.name) | .status) // null)]' "$now" >"$work/ch-in.json"
	api_get /api/v1/nodes >"$work/ch-nodes.json"
	"$tool_bin" carve --pools "$work/ch-in.json" --nodes "$work/ch-nodes.json" 2>/dev/null |
		jq -cS '[.items[] | {kind, name: .metadata.name, allocations: (.status.allocations // [])}] | sort_by(.kind, .name)'
}
actual() { jq -cS '[.[] | {kind, name: .metadata.name, allocations: (.status.allocations // [])}] | sort_by(.kind, .name)' "$1"; }

# Blocks that moved: a node in a pool's status at the last quiet point and now, another entry.
moved() {
	jq -n --slurpfile a "$ch_prev" --slurpfile b "$1" '
		[ $a[0][] as $p | $b[0][] | select(.kind == $p.kind and .metadata.name == $p.metadata.name) as $q |
		  ($p.status.allocations // [])[] as $e | ($q.status.allocations // [])[] |
		  select(.nodeName == $e.nodeName and . != $e) | "\($q.kind)/\($q.metadata.name) \(.nodeName)" ] | .[]'
}

quiet_point() { # STEP: wait for the expected statuses; check no block moved
	local t0 exp
	t0=$(date +%s%N)
	pools_now >"$work/ch-now.json"
	exp=$(expected "$work/ch-now.json")
	until [ "$(actual "$work/ch-now.json")" = "$exp" ]; do
		# A hang guard: a quiet point takes a fraction of a second.
		if [ "$(ms_since "$t0")" -gt 60000 ]; then
			ch_failed=$((ch_failed + 1))
			note "step $1: the status is not carve's after 60 s"
			note "  want $exp"
			note "  have $(actual "$work/ch-now.json")"
			break
		fi
		sleep 0.1
		pools_now >"$work/ch-now.json"
	done
	local ms
	ms=$(ms_since "$t0")
	ch_ms=$((ch_ms + ms))
	[ "$ms" -gt "$ch_max_ms" ] && ch_max_ms=$ms
	if [ -n "$(moved "$work/ch-now.json")" ]; then
		ch_moved=$((ch_moved + 1))
		note "step $1: a block moved: $(moved "$work/ch-now.json" | tr '\n' ' ')"
	fi
	cp "$work/ch-now.json" "$ch_prev"
}

kc delete lease dd1643cf.nvidia.com -n "$CNS" --ignore-not-found >/dev/null
ctl_start ch "$(ctl_sa ch)"
check "the controller is ready" wait_until 20 ctl_ready ch
check "it leads (one replica)" wait_until 10 eval '[ "$(ctl_metric ch nv_ipam_controller_leader)" = 1 ]'
# The pools other cases left carry statuses of their own: the first quiet point starts from them.
pools_now >"$ch_prev"
quiet_point 0
for i in 1 2 3; do
	ch_n=$((ch_n + 1)); node_yaml "ch-n$ch_n" "$(labels)" | kc apply -f - >/dev/null; ch_nodes+=("ch-n$ch_n")
done
for kind in IPPool CIDRPool; do
	ch_p=$((ch_p + 1)); apply_pool "$kind" "ch-p$ch_p" "$ch_p" "$(selector)"; ch_pools+=("$kind:ch-p$ch_p:$ch_p")
done
# One block only (16 of a /27's 30 addresses): every node but the first is left out.
printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: ch-small, namespace: %s}\nspec: {subnet: "10.89.0.0/27", perNodeBlockSize: 16}\n' "$CNS" |
	kc apply -f - >/dev/null
quiet_point setup
ops=""
for step in $(seq 1 "$ch_steps"); do
	r=$((RANDOM % 100))
	if [ "$r" -lt 30 ] || [ ${#ch_nodes[@]} -lt 2 ]; then
		ch_n=$((ch_n + 1)); node_yaml "ch-n$ch_n" "$(labels)" | kc apply -f - >/dev/null
		ch_nodes+=("ch-n$ch_n"); op="node+"
	elif [ "$r" -lt 45 ]; then
		n=$(pick ch_nodes); kc delete node "$n" >/dev/null
		mapfile -t ch_nodes < <(printf '%s\n' "${ch_nodes[@]}" | grep -vx "$n"); op="node-"
	elif [ "$r" -lt 70 ]; then
		n=$(pick ch_nodes); node_yaml "$n" "$(labels)" | kc apply -f - >/dev/null; op="label"
	elif [ "$r" -lt 82 ] || [ ${#ch_pools[@]} -lt 1 ]; then
		ch_p=$((ch_p + 1)); kind=$([ $((RANDOM % 2)) = 0 ] && echo IPPool || echo CIDRPool)
		apply_pool "$kind" "ch-p$ch_p" "$ch_p" "$(selector)"; ch_pools+=("$kind:ch-p$ch_p:$ch_p"); op="pool+"
	elif [ "$r" -lt 88 ]; then
		p=$(pick ch_pools); IFS=: read -r kind name idx <<<"$p"
		kc delete "$kind" "$name" -n "$CNS" >/dev/null
		mapfile -t ch_pools < <(printf '%s\n' "${ch_pools[@]}" | grep -vx "$p"); op="pool-"
	else
		p=$(pick ch_pools); IFS=: read -r kind name idx <<<"$p"
		apply_pool "$kind" "$name" "$idx" "$(selector)"; op="selector"
	fi
	ops+="$op "
	quiet_point "$step"
done
note "steps: $ops"
note "quiet points reached in $((ch_ms / (ch_steps + 2))) ms on average, $ch_max_ms ms at most"
check "at each of $((ch_steps + 2)) quiet points every pool's status is nv-ipam-tool carve's" eval '[ $ch_failed = 0 ]'
check "no node's block moved while it stayed in its pool" eval '[ $ch_moved = 0 ]'
check "the controller met no write failure" eval '[ "$(ctl_metric ch nv_ipam_controller_status_write_failures_total)" = 0 ]'
check "NoFreeRanges Events for the nodes the small pool leaves out" \
	eval 'kc get events -n "$CNS" -o json | jq -e "[.items[] | select(.reason == \"NoFreeRanges\" and .involvedObject.name == \"ch-small\")] | length > 0" >/dev/null'
ctl_stop ch
kc delete ippool ch-small -n "$CNS" >/dev/null
for p in "${ch_pools[@]}"; do
	IFS=: read -r kind name idx <<<"$p"
	kc delete "$kind" "$name" -n "$CNS" --ignore-not-found >/dev/null
done
[ ${#ch_nodes[@]} -eq 0 ] || kc delete node "${ch_nodes[@]}" --ignore-not-found >/dev/null
kc delete lease dd1643cf.nvidia.com -n "$CNS" --ignore-not-found >/dev/null
