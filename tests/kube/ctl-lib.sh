# Helpers of the kube suite's ipam-controller cases run outside the cluster (sourced by
# them, after lib.sh). They work in a namespace of their own ($CNS: pools, lease, Events,
# the account), so that the DaemonSet of the operator's namespace (case daemonset-start)
# runs on undisturbed; the account has the operator's ClusterRole.

ctl_bin=$build/ipam/nv-ipam/controller/ipam-controller
tool_bin=$build/ipam/nv-ipam/tool/nv-ipam-tool
CNS=kube-ctl-case
GVP=/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$CNS

kc apply -f "$top/conf-examples/nv-ipam/deploy/nv-ipam-controller-rbac.yaml" >/dev/null
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: nv-ipam-controller, namespace: %s}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: kube-ctl-case}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: nv-ipam-controller}\nsubjects: [{kind: ServiceAccount, name: nv-ipam-controller, namespace: %s}]\n' \
	"$CNS" "$CNS" "$CNS" | kc apply -f - >/dev/null

# ctl_sa NAME: a service account directory of the controller's account, a copy of its own
# (so that one replica's token can be made worthless without the other's).
ctl_sa() {
	local sa
	sa=$(sa_dir "$CNS" nv-ipam-controller) || return 1
	rm -rf "$work/sa-$1"
	cp -r "$sa" "$work/sa-$1"
	echo "$work/sa-$1"
}

# ctl_start NAME SA_DIR [FLAG...]: ipam-controller as a pod of the operator's Deployment
# (its flags, its account), outside the cluster: probes on 127.0.0.1:<port>, metrics on the
# next port (ctl_port NAME). Log: $work/ctl-NAME.log; PID: ctl_pid NAME.
ctl_start() {
	local name=$1 sa=$2 port=$((20000 + RANDOM % 20000))
	shift 2
	echo "$port" >"$work/ctl-$name.port"
	KUBECONFIG= in_pod "$sa" "$ctl_bin" --leader-elect=true --leader-elect-namespace="$CNS" \
		--ippools-namespace="$CNS" --health-probe-bind-address=127.0.0.1:$port \
		--metrics-bind-address=127.0.0.1:$((port + 1)) "$@" >>"$work/ctl-$name.log" 2>&1 &
	echo $! >"$work/ctl-$name.pid"
}
ctl_pid() { cat "$work/ctl-$1.pid"; }
ctl_port() { cat "$work/ctl-$1.port"; }
ctl_log() { cat "$work/ctl-$1.log"; }
ctl_stop() { stop_pid "$(ctl_pid "$1")"; }
ctl_ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$(ctl_port "$1")/readyz")" = 200 ]; }
ctl_metric() { curl -s "127.0.0.1:$(($(ctl_port "$1") + 1))/metrics" | awk -v m="$2" '$1 == m {print $2}'; }
# ctl_identity NAME: the replica's identity, as its start line says.
ctl_identity() { sed -n 's/.*"start IPAM controller".* identity="\([^"]*\)".*/\1/p' "$work/ctl-$1.log" | tail -1; }
# The resourceVersions a replica's status writes gave, one a line.
ctl_written_rvs() { sed -n 's/.*"pool status updated".* resourceVersion="\([0-9]*\)".*/\1/p' "$work/ctl-$1.log"; }

lease_holder() {
	kc get lease dd1643cf.nvidia.com -n "$CNS" -o 'jsonpath={.spec.holderIdentity}' 2>/dev/null
}

node_yaml() { # NAME [LABELS_FLOW_MAP]
	printf 'apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: %s}\n' "$1" "${2:-{\}}"
}

# pool_allocs KIND NAME: the pool's status.allocations, compact, "null" when there is none.
pool_allocs() {
	kc get "$1" "$2" -n "$CNS" -o json 2>/dev/null | jq -c '.status.allocations'
}
