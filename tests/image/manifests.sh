#!/usr/bin/env bash
# The plugin images' deployment files against a real API server (the kit of
# ../shared/k8s, API only): every DaemonSet of conf-examples/plugin-images is
# accepted by a server-side dry run and, as the server would store it, runs
# its slot's image with no command or argument, privileged, on the host
# network, with the host's CNI bin directory (/opt/cni/bin, /var/lib/cni/bin
# on OpenShift) at /host/opt/cni/bin; the OpenShift service account, Role and
# RoleBinding are applied and the API's authorizer (SubjectAccessReview)
# says the DaemonSet's service account may use the SCC `privileged` in its
# namespace and nothing else; the NicClusterPolicies name the images in
# their slots, OpenShift's only the ipoib slot.
# Usage: manifests.sh SOURCE_ROOT KIT_DIR
# Exits 77 when ../shared/k8s is missing beside SOURCE_ROOT.
set -uo pipefail

src=${1:?usage: $0 SOURCE_ROOT KIT_DIR}
kitdir=${2:?usage: $0 SOURCE_ROOT KIT_DIR}
kitsrc=$(realpath -m "$src/../shared/k8s")
kit=$kitsrc/k8s
[ -x "$kit" ] || { echo "NOT RUN: no Kubernetes kit at $kitsrc (../shared/k8s beside the checkout)"; exit 77; }
command -v jq >/dev/null || { echo "error: jq missing (tests/install-deps.sh test)" >&2; exit 2; }
ex=$src/conf-examples
ns=nvidia-network-operator
sa=system:serviceaccount:$ns:ipoib-cni

cleanup() { "$kit" down "$kitdir" >/dev/null 2>&1; }
trap cleanup EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
finish() { echo "$((n - failed)) passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

mkdir -p "$kitdir"
if ! "$kit" up-api "$kitdir" >"$kitdir/up.log" 2>&1; then
	not_ok "k8s up-api"; tail -20 "$kitdir/up.log"; finish
fi
eval "$("$kit" env "$kitdir" | grep '^export')"
kubectl() { "$kitdir/bin/kubectl" "$@"; }
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$ns" | kubectl apply -f - >/dev/null
check "namespace $ns" kubectl get namespace "$ns" -o name

# ds FILE: the DaemonSet as the server would store it, reduced to what matters here.
ds() {
	kubectl apply --dry-run=server -o json -f "$1" | jq -c '.spec.template.spec | {
		sa: .serviceAccountName, hostNetwork, paths: [.volumes[].hostPath.path],
		containers: [.containers[] | {image: (.image | sub(".*/"; "")), command, args,
			privileged: .securityContext.privileged, mounts: [.volumeMounts[].mountPath]}],
		gpuTolerated: any(.tolerations[]?; .key == "nvidia.com/gpu" and .operator == "Exists")}'
}
# want IMAGE SA PATH: what ds prints for a plugin image's DaemonSet.
want() {
	jq -nc --arg i "$1" --arg sa "$2" --arg p "$3" '{sa: (if $sa == "" then null else $sa end),
		hostNetwork: true, paths: [$p], containers: [{image: $i, command: null, args: null,
		privileged: true, mounts: ["/host/opt/cni/bin"]}], gpuTolerated: true}'
}
for t in "cni-plugins-ds.yaml cni-rdma-plugins:0.1.0 - /opt/cni/bin" \
	"ipoib-cni-ds.yaml cni-rdma-ipoib:0.1.0 - /opt/cni/bin" \
	"openshift/ipoib-cni-ds.yaml cni-rdma-ipoib:0.1.0 ipoib-cni /var/lib/cni/bin"; do
	read -r file image account path <<<"$t"
	[ "$account" = - ] && account=
	got=$(ds "$ex/plugin-images/$file" 2>&1)
	check "$file: $got" [ "$got" = "$(want "$image" "$account" "$path")" ]
done

echo "# OpenShift: the SCC binding, applied, asked of the API's authorizer"
check "openshift/ipoib-cni-rbac.yaml applied" \
	kubectl apply -f "$ex/plugin-images/openshift/ipoib-cni-rbac.yaml" -o name
# may USER SCC NAMESPACE: the API's answer (true/false) to "may USER use SCC in NAMESPACE".
may() {
	local body
	body=$(jq -nc --arg u "$1" --arg scc "$2" --arg ns "$3" '{apiVersion: "authorization.k8s.io/v1",
		kind: "SubjectAccessReview", spec: {user: $u, groups: ["system:serviceaccounts",
		"system:serviceaccounts:\($u | split(":")[2])", "system:authenticated"],
		resourceAttributes: {group: "security.openshift.io", resource: "securitycontextconstraints",
		verb: "use", name: $scc, namespace: $ns}}}')
	curl -sS --cacert "$kitdir/pki/ca.crt" --cert "$kitdir/pki/admin.crt" --key "$kitdir/pki/admin.key" \
		-H 'Content-Type: application/json' -X POST -d "$body" \
		"$K8S_API/apis/authorization.k8s.io/v1/subjectaccessreviews" | jq -r '.status.allowed'
}
check "ipoib-cni may use the SCC privileged in $ns" [ "$(may "$sa" privileged "$ns")" = true ]
check "  ... no other SCC (anyuid)" [ "$(may "$sa" anyuid "$ns")" = false ]
check "  ... not in another namespace" [ "$(may "$sa" privileged default)" = false ]
check "  ... and no other service account of $ns may" \
	[ "$(may "system:serviceaccount:$ns:default" privileged "$ns")" = false ]

echo "# the NicClusterPolicies"
# slots FILE: "slot=image" for each ImageSpec under secondaryNetwork, in order.
slots() {
	awk '/^  secondaryNetwork:/ { in_sn = 1; next } /^  [^ ]/ { in_sn = 0 }
		in_sn && /^    [a-zA-Z]+:$/ { slot = $1 } in_sn && /^      image:/ { printf "%s%s", sep, slot $2; sep = " " }' "$1"
}
got=$(slots "$ex/network-operator/nicclusterpolicy.yaml")
check "Kubernetes: $got" [ "$got" = "cniPlugins:cni-rdma-plugins ipoib:cni-rdma-ipoib multus:multus-cni" ]
got=$(slots "$ex/network-operator/nicclusterpolicy-openshift.yaml")
check "OpenShift: $got (the ipoib slot only)" [ "$got" = "ipoib:cni-rdma-ipoib" ]
finish
