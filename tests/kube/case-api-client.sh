# Case api-client: the API client (ipam/nv-ipam/api/) through api-probe, against the real
# API server: list and watch with bookmarks, changes seen through the watch (no list
# since the first); 403 and 404 answered
# as such; a PUT with an old resourceVersion is a 409 and a status merge-patch works (the
# write verbs the controller needs). What a long-running client meets (token rotation,
# restarts, 410) is checked with ipam-node (case node).

# Its own namespace: the other cases' pools and accounts are none of its business.
ANS=kube-api-client
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$ANS" | kc apply -f - >/dev/null
GV=/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$ANS
pool_yaml() { # NAME SUBNET
	printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: %s, namespace: %s}\nspec: {subnet: "%s", perNodeBlockSize: 4}\n' "$1" "$ANS" "$2"
}
# reflect LOG [ARGS...]: api-probe reflect in the background; $! is its PID.
reflect() {
	local log=$1
	shift
	"$probe" "$@" >"$log" 2>&1 &
}
has() { grep -q -- "$2" "$1"; }
last_objects() { grep '^objects' "$1" | tail -1; }

# The operator's ClusterRole (pods, ippools, cidrpools: get, list, watch), bound to an
# account of this case's namespace.
kc apply -f "$top/conf-examples/nv-ipam/deploy/nv-ipam-node-rbac.yaml" >/dev/null
bind_node_role() { # NAMESPACE SA
	printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: %s-%s}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: nv-ipam-node}\nsubjects: [{kind: ServiceAccount, name: %s, namespace: %s}]\n' "$1" "$2" "$2" "$1" |
		kc apply -f - >/dev/null
}
bind_node_role "$ANS" api-probe
node_sa=$(sa_dir "$ANS" api-probe)
nobody_sa=$(sa_dir "$ANS" api-probe-nobody)

# -- list and watch
reflect "$work/r1.log" --in-cluster "$node_sa" reflect "$GV/ippools"
r1=$!
lists() { grep -c "^note listed:" "$1"; }
check "a list as the operator's service account" wait_until 30 has "$work/r1.log" "note listed: listed 0 $GV/ippools"
pool_yaml w1 10.50.0.0/24 | kc apply -f - >/dev/null
t0=$(date +%s%N)
check "a created pool is seen" wait_until 30 has "$work/r1.log" "^objects 1: $ANS/w1="
note "seen $(ms_since "$t0") ms after kubectl returned"
rv=$(kc get ippool w1 -n "$ANS" -o 'jsonpath={.metadata.resourceVersion}')
NS=$ANS pool_status IPPool w1 '{"allocations":[{"nodeName":"n1","startIP":"10.50.0.1","endIP":"10.50.0.4"}]}'
check "a status change is seen (a new resourceVersion)" \
	wait_until 30 eval '[ "$(last_objects "$work/r1.log")" != "objects 1: $ANS/w1=$rv" ] && has "$work/r1.log" "^objects 1: $ANS/w1="'
kc delete ippool w1 -n "$ANS" >/dev/null
check "a deleted pool is gone from the mirror" wait_until 30 eval '[ "$(last_objects "$work/r1.log")" = "objects 0:" ]'
check "the three changes came through the watch: one list in all" eval '[ "$(lists "$work/r1.log")" = 1 ]'
stop_pid "$r1"
check "SIGTERM ends a watch at once" has "$work/r1.log" "^stopped"

# -- refusals
out=$("$probe" --in-cluster "$nobody_sa" get "$GV/ippools")
check "403: a clear error naming the refusal" \
	grep -q '^error EPERM 403 Forbidden: GET .*ippools: 403 Forbidden: .*cannot list resource "ippools"' <<<"$out"
reflect "$work/r2.log" --in-cluster "$nobody_sa" reflect "$GV/ippools"
r2=$!
check "a reflector refused lists again, saying why" wait_until 30 eval 'has "$work/r2.log" "note list-failed: listing $GV/ippools: 403 Forbidden" && ! has "$work/r2.log" "^objects"'
stop_pid "$r2"
# (RBAC answers before the API knows what is served: 404 comes to those who may list.)
reflect "$work/r3.log" --kubeconfig "$DIR/admin.kubeconfig" reflect "$GV/nopes"
r3=$!
check "404: a collection not served is empty, noted" wait_until 30 eval 'has "$work/r3.log" "note absent: $GV/nopes are not served" && has "$work/r3.log" "^objects 0:"'
stop_pid "$r3"

# -- writes: 409 on an old resourceVersion, a status merge-patch
pool_yaml w2 10.51.0.0/24 | kc apply -f - >/dev/null
"$probe" --kubeconfig "$DIR/admin.kubeconfig" get "$GV/ippools/w2" >"$work/w2.json"
jq '.spec.perNodeBlockSize = 8' "$work/w2.json" >"$work/w2-new.json"
NS=$ANS pool_status IPPool w2 '{"allocations":[]}'
out=$("$probe" --kubeconfig "$DIR/admin.kubeconfig" send PUT "$GV/ippools/w2" "$work/w2-new.json")
check "PUT with an outdated resourceVersion: 409 Conflict" grep -q '^error EEXIST 409 Conflict' <<<"$out"
echo '{"status":{"allocations":[{"nodeName":"n9","startIP":"10.51.0.1","endIP":"10.51.0.4"}]}}' >"$work/patch.json"
out=$("$probe" --kubeconfig "$DIR/admin.kubeconfig" send PATCH "$GV/ippools/w2/status" "$work/patch.json" application/merge-patch+json)
check "a status merge-patch through the subresource" \
	eval '[ "$(jq -r ".status.allocations[0].nodeName" <<<"$out")" = n9 ] && [ "$(kc get ippool w2 -n "$ANS" -o "jsonpath={.spec.perNodeBlockSize}")" = 4 ]'

# Token rotation, the API server killed mid-watch and a watch's version compacted away
# (410) are checked with ipam-node itself, which runs this client (case node).
kc delete ippools --all -n "$ANS" >/dev/null
kc delete clusterrolebinding "$ANS-api-probe" >/dev/null
