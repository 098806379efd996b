# Case node: ipam-node run outside the cluster as the Network Operator's DaemonSet runs it
# (its flags; its service account and ClusterRole; the account's token files where a pod
# has them, KUBERNETES_SERVICE_HOST/PORT naming the API), against the kit's API server:
# the install, nv-ipam.conf, readiness; a pool status change in the node pool file through
# the watch (no list since); a refused status entry logged once; the cleaner releasing a
# gone pod's address on its N-th miss and never a live pod's; token rotation; the API
# server killed mid-watch; a watch whose version was compacted away (410); metrics;
# SIGTERM: exit 0, the store handed over for the reference daemon, taken back; a store of
# a newer format left alone; RBAC refusing (a clear error, not ready); flag errors and the
# store lock. How long things took is printed, never asserted.

node_bin=$build/ipam/nv-ipam/ipam-node
nd=$work/node
# Its own namespace for its pools and its account: the DaemonSet of the operator's
# namespace (case daemonset-start) runs on meanwhile, and its account must stay valid.
NNS=kube-node-case
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$NNS" | kc apply -f - >/dev/null
node=${K8S_NODE:-node1}
mkdir -p "$nd/src" "$nd/bin" "$nd/conf" "$nd/state"
cp "$build/ipam/nv-ipam/nv-ipam" "$build/ipam/nv-ipam/tool/nv-ipam-tool" "$nd/src/"
. "$top/tests/node-settings.sh"
# The network configs of the test may name its directories (confDir, the log).
node_settings "$work/node-settings.json" "$nd"
pport=$((20000 + RANDOM % 20000))
mport=$((pport + 1))

# The operator's ClusterRole, bound to an account of this namespace.
kc apply -f "$top/conf-examples/nv-ipam/deploy/nv-ipam-node-rbac.yaml" >/dev/null
printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: kube-node-case}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: nv-ipam-node}\nsubjects: [{kind: ServiceAccount, name: nv-ipam-node, namespace: %s}]\n' "$NNS" |
	kc apply -f - >/dev/null
node_sa=$(sa_dir "$NNS" nv-ipam-node)

# node_args [FLAG...]: the DaemonSet's flags (conf-examples/nv-ipam/deploy/nv-ipam-node-ds.yaml),
# with the test's directories and ports, then FLAG...
node_args() {
	echo --node-name="$node" --v=1 --logging-format=json \
		--bind-address=unix:///var/lib/cni/nv-ipam/daemon.sock --store-file="$nd/state/store" \
		--cni-daemon-socket=unix:///var/lib/cni/nv-ipam/daemon.sock --cni-daemon-call-timeout=5 \
		--cni-bin-dir="$nd/bin" --cni-conf-dir="$nd/conf" --cni-log-file="$nd/nv-ipam.log" \
		--cni-log-level=info --ippools-namespace="$NNS" --cni-nv-ipam-bin-file="$nd/src/nv-ipam" \
		--health-probe-bind-address=127.0.0.1:$pport --metrics-bind-address=127.0.0.1:$mport "$@"
}
# start_node LOG SA_DIR [FLAG...]: ipam-node as a pod of that service account; $! is its PID.
start_node() {
	local log=$1 sa=$2
	shift 2
	# shellcheck disable=SC2046
	in_pod "$sa" "$node_bin" $(node_args "$@") >"$log" 2>&1 &
}
logged() { grep -q -- "$2" "$1"; }
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$pport/readyz")" = 200 ]; }
metric() { curl -s "127.0.0.1:$mport/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
pool_file=$nd/conf/node-pools.json
in_file() { jq -e "$1" "$pool_file" >/dev/null 2>&1; }

ippool() { # NAME SUBNET GATEWAY
	printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: %s, namespace: %s}\nspec: {subnet: "%s", perNodeBlockSize: 16, gateway: "%s"}\n' \
		"$1" "$NNS" "$2" "$3" | kc apply -f - >/dev/null
}
cidrpool() { # NAME
	printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: CIDRPool\nmetadata: {name: %s, namespace: %s}\nspec: {cidr: "10.70.0.0/16", perNodeNetworkPrefix: 24, gatewayIndex: 1}\n' \
		"$1" "$NNS" | kc apply -f - >/dev/null
}
ippool pool1 10.60.0.0/24 10.60.0.1
NS=$NNS pool_status IPPool pool1 "{\"allocations\":[{\"nodeName\":\"$node\",\"startIP\":\"10.60.0.1\",\"endIP\":\"10.60.0.16\"},{\"nodeName\":\"other\",\"startIP\":\"10.60.0.17\",\"endIP\":\"10.60.0.32\"}]}"

# -- flag errors and the store lock, before anything runs
out=$("$node_bin" $(node_args --no-such-flag) 2>&1)
rc=$?
check "an unknown flag: exit 1, named" eval '[ $rc = 1 ] && grep -q "unknown flag: --no-such-flag" <<<"$out"'
out=$("$node_bin" --v=1 --store-file="$nd/state/store" 2>&1)
rc=$?
check "no --node-name: exit 1" eval '[ $rc = 1 ] && grep -q "node-name is required" <<<"$out"'

# -- start-up
start_node "$work/node.log" "$node_sa"
npid=$!
check "ready once the pools are synced" wait_until 30 ready
check "nv-ipam and nv-ipam-tool installed, the image's bytes, mode 0755" \
	eval 'cmp -s "$nd/src/nv-ipam" "$nd/bin/nv-ipam" && cmp -s "$nd/src/nv-ipam-tool" "$nd/bin/nv-ipam-tool" && [ "$(stat -c %a "$nd/bin/nv-ipam")" = 755 ]'
check "nv-ipam.conf: the reference's keys and the node's, mode 0664" \
	eval '[ "$(jq -c . "$nd/conf/nv-ipam.conf")" = "{\"daemonSocket\":\"unix:///var/lib/cni/nv-ipam/daemon.sock\",\"daemonCallTimeoutSeconds\":5,\"logFile\":\"$nd/nv-ipam.log\",\"logLevel\":\"info\",\"forcePoolName\":false,\"storeFile\":\"$nd/state/store\",\"poolFile\":\"$pool_file\"}" ] && [ "$(stat -c %a "$nd/conf/nv-ipam.conf")" = 664 ]'
check "the node pool file holds this node's block" \
	in_file ".nodeName == \"$node\" and .pools.pool1.startIP == \"10.60.0.1\" and .pools.pool1.endIP == \"10.60.0.16\" and .pools.pool1.gateway == \"10.60.0.1\""
check "the daemon flags are taken and said to mean nothing" \
	eval 'logged "$work/node.log" "\"msg\":\"flag taken and ignored: nv-ipam has no daemon\",\"v\":0,\"flag\":\"bind-address\""'
check "the log is JSON, one object per line" eval 'jq -c . "$work/node.log" >/dev/null'
# As a pod too: ipam-node reaches the API before it looks at the store.
# shellcheck disable=SC2046
out=$(in_pod "$node_sa" "$node_bin" $(node_args --health-probe-bind-address=0 --metrics-bind-address=0) 2>&1)
rc=$?
check "a second ipam-node on the store: exit 1, the owner lock held" \
	eval '[ $rc = 1 ] && grep -q "another ipam-node holds the owner lock $nd/state/store.owner" <<<"$out"'

# -- a pool status change reaches the file through the watch: no list since (the lists it
# made, logged at --v=1)
lists() { grep -c '"msg":"pools listed","v":1,"resource":"ippools"' "$1"; }
lists0=$(lists "$work/node.log")
NS=$NNS pool_status IPPool pool1 "{\"allocations\":[{\"nodeName\":\"$node\",\"startIP\":\"10.60.0.33\",\"endIP\":\"10.60.0.48\"}]}"
t0=$(date +%s%N)
check "a status change reaches the node pool file" wait_until 30 in_file '.pools.pool1.startIP == "10.60.0.33"'
note "in the file $(ms_since "$t0") ms after the PATCH returned"
check "  ... through the watch: no list since ($lists0 before)" eval '[ "$lists0" -ge 1 ] && [ "$(lists "$work/node.log")" = "$lists0" ]'
check "the change is logged" eval 'logged "$work/node.log" "\"change\":\"pool pool1: changed (10.60.0.1-10.60.0.16 -> 10.60.0.33-10.60.0.48)\""'
check "the file is mode 0644, written whole (it parses)" eval '[ "$(stat -c %a "$pool_file")" = 644 ] && jq . "$pool_file" >/dev/null'

# -- a refused entry: left out, logged once
cidrpool c1
NS=$NNS pool_status CIDRPool c1 "{\"allocations\":[{\"nodeName\":\"$node\",\"prefix\":\"10.70.1.0/24\",\"gateway\":\"10.70.1.9\"}]}"
check "a CIDRPool entry whose gateway is not gatewayIndex's is refused and logged" \
	wait_until 30 logged "$work/node.log" 'gateway 10.70.1.9 doesn'"'"'t match the gateway 10.70.1.1 of gatewayIndex'
# More syncs: the status written again (another field), another pool added.
NS=$NNS pool_status CIDRPool c1 "{\"allocations\":[{\"nodeName\":\"$node\",\"prefix\":\"10.70.1.0/24\",\"gateway\":\"10.70.1.9\"}],\"note\":\"again\"}"
ippool pool2 10.61.0.0/24 10.61.0.1
sleep 1 # syncs later than this could only make the check below pass unproven, not fail
check "the refusal is logged once, however many syncs" \
	eval '[ "$(grep -c "gateway 10.70.1.9 doesn" "$work/node.log")" = 1 ] && ! in_file ".pools[\"cidrpool/c1\"]"'
NS=$NNS pool_status CIDRPool c1 "{\"allocations\":[{\"nodeName\":\"$node\",\"prefix\":\"10.70.1.0/24\",\"gateway\":\"10.70.1.1\"}]}"
check "fixed, the pool is in the file" wait_until 30 in_file '.pools["cidrpool/c1"].prefix == "10.70.1.0/24"'

# -- stopped, the store is handed over in the reference daemon's format (a rollback finds
# it) and nv-ipam waits (code 11); the tool takes it back, as the next start would
stop_pid "$npid"
check "stopped: the store handed over, the reference daemon's format (refstore.py reads it)" \
	eval 'logged "$work/node.log" "store handed over in the reference daemon" && [ -e "$nd/state/store.handed-over" ] && python3 "$top/tests/ipam/refstore.py" "$nd/state/store" >/dev/null'
netconf='{"cniVersion":"1.0.0","name":"kubenet","ipam":{"type":"nv-ipam","poolName":"pool1","confDir":"'$nd/conf'"}}'
out=$(CNI_COMMAND=ADD CNI_CONTAINERID=c-wait CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 CNI_IFNAME=net1 \
	CNI_PATH=/nonexistent "$nd/bin/nv-ipam" <<<"$netconf" 2>/dev/null)
check "meanwhile an ADD is code 11, naming the handover" \
	eval '[ "$(jq -r .code <<<"$out")" = 11 ] && grep -q "handed over to the reference nv-ipam node daemon" <<<"$out"'
check "nv-ipam-tool adopt takes it back as it was" \
	eval '"$nd/bin/nv-ipam-tool" adopt --store "$nd/state/store" | grep -q "as handed over" && [ ! -e "$nd/state/store.handed-over" ]'

# -- the cleaner: a gone pod's address released on its 2nd miss (count-before-release 1),
# a live pod's never. The live pod runs on the kit's node; "gone" never existed.
kc delete pod kube-live -n default --ignore-not-found --wait=true >/dev/null
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: kube-live, namespace: default}\nspec:\n  nodeName: %s\n  terminationGracePeriodSeconds: 1\n  containers: [{name: c, image: "busybox:local", command: [sleep, "3600"]}]\n' "$node" |
	kc apply -f - >/dev/null
live_uid=$(kc get pod kube-live -n default -o 'jsonpath={.metadata.uid}')
cni_add() { # CONTAINER NAMESPACE/NAME UID
	CNI_COMMAND=ADD CNI_CONTAINERID=$1 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 CNI_IFNAME=net1 \
		CNI_PATH=/nonexistent \
		CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=${2%%/*};K8S_POD_NAME=${2#*/};K8S_POD_UID=$3" \
		"$nd/bin/nv-ipam" <<<"$netconf" 2>>"$work/nv-ipam-stderr.log"
}
live_ip=$(cni_add c-live "default/kube-live" "$live_uid" | jq -r '.ips[0].address')
gone_ip=$(cni_add c-gone "default/kube-gone" 0badc0de-0000-4000-8000-000000000000 | jq -r '.ips[0].address')
check "nv-ipam allocates from ipam-node's files (nv-ipam.conf, the pool file)" \
	eval '[[ $live_ip == 10.60.0.3?/24 && $gone_ip == 10.60.0.3?/24 ]]'
held() { "$nd/bin/nv-ipam-tool" show --store "$nd/state/store" --pool-file "$pool_file" --json | jq -r '[.pools[].allocations[].containerID] | sort | join(" ")'; }
sleep 2 # the allocations older than any listing of the next start
start_node "$work/node2.log" "$node_sa" --stale-ip-check-interval=2s --stale-ip-check-count-before-release=1
npid=$!
check "released on the 2nd miss" \
	wait_until 60 logged "$work/node2.log" "released ${gone_ip%/*} in pool pool1: container c-gone interface net1 pod default/kube-gone: not in the pod list (miss 2 of 2)"
first_line() { grep -n -m1 -- "$2" "$1" | cut -d: -f1; }
check "  ... missed once before, and not released then" \
	eval 'm1=$(first_line "$work/node2.log" "kube-gone: not in the pod list (miss 1 of 2)") &&
	      rel=$(first_line "$work/node2.log" "released ${gone_ip%/*}") && [ -n "$m1" ] && [ "$m1" -lt "$rel" ]'
check "gone from the store; the live pod's kept" eval '[ "$(held)" = c-live ]'
passes=$(metric 'nv_ipam_node_cleaner_runs_total{result="ok"}')
check "two clean passes more" \
	wait_until 60 eval '[ "$(metric "nv_ipam_node_cleaner_runs_total{result=\"ok\"}")" -ge $((passes + 2)) ]'
check "the live pod's address is never missed, pass after pass" \
	eval '! logged "$work/node2.log" "kube-live" && [ "$(held)" = c-live ]'
check "metrics: the release, the pool's size, allocated and free" \
	eval '[ "$(metric "nv_ipam_node_cleaner_released_total{pool=\"pool1\",type=\"ippool\"}")" = 1 ] &&
	      [ "$(metric "nv_ipam_node_pool_size{pool=\"pool1\",type=\"ippool\"}")" = 16 ] &&
	      [ "$(metric "nv_ipam_node_pool_allocated{pool=\"pool1\",type=\"ippool\"}")" = 1 ] &&
	      [ "$(metric "nv_ipam_node_pool_free{pool=\"pool1\",type=\"ippool\"}")" = 15 ]'

# -- token rotation: the account made again (the old token worthless), a new token in the
# same file; the next listings read it after a 401.
kc delete serviceaccount nv-ipam-node -n "$NNS" >/dev/null
sa_dir "$NNS" nv-ipam-node >/dev/null
failed_before=$(metric 'nv_ipam_node_cleaner_runs_total{result="failed"}')
ok_before=$(metric 'nv_ipam_node_cleaner_runs_total{result="ok"}')
check "after the token rotates, clean passes go on" \
	wait_until 60 eval '[ "$(metric "nv_ipam_node_cleaner_runs_total{result=\"ok\"}")" -ge $((ok_before + 3)) ]'
note "passes failed meanwhile: $(( $(metric 'nv_ipam_node_cleaner_runs_total{result="failed"}') - failed_before ))"

# -- the API server killed mid-watch
restarts0=$(metric 'nv_ipam_node_watch_restarts_total{resource="ippools"}')
apiserver_stop
check "the watch's end is logged" wait_until 30 logged "$work/node2.log" '"msg":"watch ended, starting it again","v":0,"resource":"ippools"'
apiserver_start
NS=$NNS pool_status IPPool pool1 "{\"allocations\":[{\"nodeName\":\"$node\",\"startIP\":\"10.60.0.49\",\"endIP\":\"10.60.0.64\"}]}"
check "after the restart a status change reaches the file" wait_until 90 in_file '.pools.pool1.startIP == "10.60.0.49"'
check "metrics: watch restarts counted" eval '[ "$(metric "nv_ipam_node_watch_restarts_total{resource=\"ippools\"}")" -gt "$restarts0" ]'

# -- 410: ipam-node held still while its connections are cut (an API server restart) and
# the pools change; etcd compacted and the API server restarted again, so that its watch
# cache starts past ipam-node's version
relists0=$(metric 'nv_ipam_node_watch_relists_total{resource="ippools"}')
kill -STOP "$npid"
apiserver_stop
apiserver_start
NS=$NNS pool_status IPPool pool1 "{\"allocations\":[{\"nodeName\":\"$node\",\"startIP\":\"10.60.0.65\",\"endIP\":\"10.60.0.80\"}]}"
kc delete ippool pool2 -n "$NNS" >/dev/null
etcd_compact "$(etcd_revision)"
apiserver_stop
apiserver_start
kill -CONT "$npid"
check "410: listed again, the changes made meanwhile in the file" \
	wait_until 120 eval 'in_file ".pools.pool1.startIP == \"10.60.0.65\" and (.pools | has(\"pool2\") | not)"'
check "the 410 is logged and counted" \
	eval 'logged "$work/node2.log" "watch expired, listing again" && [ "$(metric "nv_ipam_node_watch_relists_total{resource=\"ippools\"}")" -gt "$relists0" ]'

# -- SIGTERM: status 0, every file whole (the wait a hang guard: the kubelet's 30 s grace)
t0=$(date +%s%N)
kill -TERM "$npid"
check "SIGTERM: it ends" wait_until 30 eval '! pid_alive "$npid"'
wait "$npid"
rc=$?
note "SIGTERM to the exit: $(ms_since "$t0") ms"
check "SIGTERM: exit 0" eval '[ $rc = 0 ]'
check "after the stop every file parses; the handed-over store holds the live pod's address alone" \
	eval 'jq . "$pool_file" >/dev/null && jq . "$nd/conf/nv-ipam.conf" >/dev/null && [ "$(python3 "$top/tests/ipam/refstore.py" "$nd/state/store")" = "pool1 ${live_ip%/*} c-live net1" ]'
check "the stop is logged" logged "$work/node2.log" '"msg":"IPAM node daemon stopped"'

# -- a store of a newer format than this build reads: left alone, nv-ipam not installed
# over it (an older nv-ipam must not replace a newer one), the rest runs
mkdir -p "$nd/state4" "$nd/bin4"
printf '{"version":3,"pools":"store.d"}\n' >"$nd/state4/store"
start_node "$work/node4.log" "$node_sa" --store-file="$nd/state4/store" --cni-bin-dir="$nd/bin4"
npid=$!
check "newer store format: refused in one clear line, nothing installed, ready all the same" \
	wait_until 30 eval 'logged "$work/node4.log" "store format not readable by this build: nv-ipam not installed" && logged "$work/node4.log" "unsupported version 3" && [ ! -e "$nd/bin4/nv-ipam" ] && ready'
stop_pid "$npid"
check "and the store stays as it was, not handed over" \
	eval '[ "$(cat "$nd/state4/store")" = "{\"version\":3,\"pools\":\"store.d\"}" ] && [ ! -e "$nd/state4/store.handed-over" ]'

# -- RBAC refusing: a service account without the ClusterRole
nobody_sa=$(sa_dir "$NNS" ipam-node-nobody)
rm -f "$pool_file"
start_node "$work/node3.log" "$nobody_sa"
npid=$!
check "RBAC refused: a clear error naming what is forbidden" \
	wait_until 30 logged "$work/node3.log" 'cannot list pools: the node pool file stays as it is.*403 Forbidden.*cannot list resource \\"ippools\\"'
check "RBAC refused: not ready, no pool file" eval 'curl -s "127.0.0.1:$pport/readyz" | grep -q "not synced" && ! ready && [ ! -e "$pool_file" ]'
check "healthz answers all the same" eval '[ "$(curl -s "127.0.0.1:$pport/healthz")" = ok ]'
stop_pid "$npid"

kc delete pod kube-live -n default --wait=false >/dev/null
kc delete ippools,cidrpools --all -n "$NNS" >/dev/null
kc delete clusterrolebinding kube-node-case >/dev/null
