# Case api-client: the API client (ipam/nv-ipam/api/) through api-probe, against the real
# API server: list and watch with bookmarks, a change seen at once; 403 and 404 answered
# as such; a PUT with an old resourceVersion is a 409 and a status merge-patch works;
# a rotated token file is read again after a 401; the API server restarted mid-watch; a
# watch whose version was compacted away gets 410 and lists again.

GV=/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$NS
pool_yaml() { # NAME SUBNET
	printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: %s, namespace: %s}\nspec: {subnet: "%s", perNodeBlockSize: 4}\n' "$1" "$NS" "$2"
}
# reflect LOG [ARGS...]: api-probe reflect in the background; $! is its PID.
reflect() {
	local log=$1
	shift
	"$probe" "$@" >"$log" 2>&1 &
}
has() { grep -q -- "$2" "$1"; }
last_objects() { grep '^objects' "$1" | tail -1; }

# The operator's service account and ClusterRole (pods, ippools, cidrpools: get, list, watch).
kc apply -f "$top/conf-examples/nv-ipam/deploy/nv-ipam-node-rbac.yaml" >/dev/null
node_sa=$(sa_dir "$NS" nv-ipam-node)
nobody_sa=$(sa_dir "$NS" api-probe-nobody)

# -- list and watch
reflect "$work/r1.log" --in-cluster "$node_sa" reflect "$GV/ippools"
r1=$!
check "a list as the operator's service account" wait_until 10 has "$work/r1.log" "note listed: listed 0 $GV/ippools"
pool_yaml w1 10.50.0.0/24 | kc apply -f - >/dev/null
t0=$(date +%s%N)
check "a created pool is seen by the watch within 1 s of kubectl's return" wait_until 1 has "$work/r1.log" "^objects 1: $NS/w1="
note "seen $(ms_since "$t0") ms after kubectl returned"
rv=$(kc get ippool w1 -n "$NS" -o 'jsonpath={.metadata.resourceVersion}')
pool_status IPPool w1 '{"allocations":[{"nodeName":"n1","startIP":"10.50.0.1","endIP":"10.50.0.4"}]}'
check "a status change is seen (a new resourceVersion)" \
	wait_until 2 eval '[ "$(last_objects "$work/r1.log")" != "objects 1: $NS/w1=$rv" ] && has "$work/r1.log" "^objects 1: $NS/w1="'
kc delete ippool w1 -n "$NS" >/dev/null
check "a deleted pool is gone from the mirror" wait_until 2 eval '[ "$(last_objects "$work/r1.log")" = "objects 0:" ]'
stop_pid "$r1"
check "SIGTERM ends a watch at once" has "$work/r1.log" "^stopped"

# -- refusals
out=$("$probe" --in-cluster "$nobody_sa" get "$GV/ippools")
check "403: a clear error naming the refusal" \
	grep -q '^error EPERM 403 Forbidden: GET .*ippools: 403 Forbidden: .*cannot list resource "ippools"' <<<"$out"
reflect "$work/r2.log" --in-cluster "$nobody_sa" reflect "$GV/ippools"
r2=$!
check "a reflector refused lists again, saying why" wait_until 10 eval 'has "$work/r2.log" "note list-failed: listing $GV/ippools: 403 Forbidden" && ! has "$work/r2.log" "^objects"'
stop_pid "$r2"
# (RBAC answers before the API knows what is served: 404 comes to those who may list.)
reflect "$work/r3.log" --kubeconfig "$DIR/admin.kubeconfig" reflect "$GV/nopes"
r3=$!
check "404: a collection not served is empty, noted" wait_until 10 eval 'has "$work/r3.log" "note absent: $GV/nopes are not served" && has "$work/r3.log" "^objects 0:"'
stop_pid "$r3"

# -- writes: 409 on an old resourceVersion, a status merge-patch
pool_yaml w2 10.51.0.0/24 | kc apply -f - >/dev/null
"$probe" --kubeconfig "$DIR/admin.kubeconfig" get "$GV/ippools/w2" >"$work/w2.json"
jq '.spec.perNodeBlockSize = 8' "$work/w2.json" >"$work/w2-new.json"
pool_status IPPool w2 '{"allocations":[]}'
out=$("$probe" --kubeconfig "$DIR/admin.kubeconfig" send PUT "$GV/ippools/w2" "$work/w2-new.json")
check "PUT with an outdated resourceVersion: 409 Conflict" grep -q '^error EEXIST 409 Conflict' <<<"$out"
echo '{"status":{"allocations":[{"nodeName":"n9","startIP":"10.51.0.1","endIP":"10.51.0.4"}]}}' >"$work/patch.json"
out=$("$probe" --kubeconfig "$DIR/admin.kubeconfig" send PATCH "$GV/ippools/w2/status" "$work/patch.json" application/merge-patch+json)
check "a status merge-patch through the subresource" \
	eval '[ "$(jq -r ".status.allocations[0].nodeName" <<<"$out")" = n9 ] && [ "$(kc get ippool w2 -n "$NS" -o "jsonpath={.spec.perNodeBlockSize}")" = 4 ]'

# -- token rotation: the old token is made worthless (its service account is deleted and
# made again), a new one written into the same file; the running client reads it after
# its next request is refused.
rot_sa=$(sa_dir "$NS" api-probe-rot)
printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: api-probe-rot}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: nv-ipam-node}\nsubjects: [{kind: ServiceAccount, name: api-probe-rot, namespace: %s}]\n' "$NS" | kc apply -f - >/dev/null
old_token=$(cat "$rot_sa/token")
PROBE_WATCH_TIMEOUT=2 reflect "$work/r4.log" --in-cluster "$rot_sa" reflect "$GV/ippools"
r4=$!
wait_until 10 has "$work/r4.log" "note listed" || true
kc delete serviceaccount api-probe-rot -n "$NS" >/dev/null
sa_dir "$NS" api-probe-rot >/dev/null
old_refused() {
	[ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$rot_sa/ca.crt" -H "Authorization: Bearer $old_token" \
		"https://127.0.0.1:$(api_port)$GV/ippools")" = 401 ]
}
# The API server notices the new service account's UID within moments.
check "the old token is refused now (401)" wait_until 10 old_refused
pool_yaml w3 10.52.0.0/24 | kc apply -f - >/dev/null
check "after the rotation the running client sees changes again" wait_until 10 has "$work/r4.log" "^objects 2: $NS/w2=.* $NS/w3="
stop_pid "$r4"

# -- the API server restarted mid-watch
reflect "$work/r5.log" --kubeconfig "$DIR/admin.kubeconfig" reflect "$GV/ippools"
r5=$!
wait_until 10 has "$work/r5.log" "note listed" || true
apiserver_stop
check "the watch's end is noted while the API server is down" wait_until 10 has "$work/r5.log" "note watch-failed: watching $GV/ippools"
apiserver_start
pool_yaml w4 10.53.0.0/24 | kc apply -f - >/dev/null
check "after the restart the watch goes on: a new pool is seen" wait_until 30 has "$work/r5.log" "^objects 3: .*$NS/w4="
stop_pid "$r5"

# -- 410: the watch's version compacted away while the client could not watch
reflect "$work/r6.log" --kubeconfig "$DIR/admin.kubeconfig" reflect "$GV/ippools"
r6=$!
wait_until 10 has "$work/r6.log" "^objects 3:" || true
# Held still while its connection is cut, so that no event of the changes reaches it.
kill -STOP "$r6"
apiserver_stop
apiserver_start
pool_yaml w5 10.54.0.0/24 | kc apply -f - >/dev/null
kc delete ippool w4 -n "$NS" >/dev/null
etcd_compact "$(etcd_revision)"
apiserver_stop
apiserver_start
kill -CONT "$r6"
check "a watch from a compacted version: 410, noted, listed again" \
	wait_until 40 eval 'has "$work/r6.log" "note expired: watching $GV/ippools from resourceVersion" && has "$work/r6.log" "410 Expired"'
check "the new list has the changes made meanwhile" wait_until 10 eval '[[ "$(last_objects "$work/r6.log")" =~ ^objects\ 3:\ $NS/w2=[0-9]+\ $NS/w3=[0-9]+\ $NS/w5=[0-9]+$ ]]'
stop_pid "$r6"
kc delete ippools --all -n "$NS" >/dev/null
kc delete clusterrolebinding api-probe-rot >/dev/null
