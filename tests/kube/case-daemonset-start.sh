# Case daemonset-start: the Network Operator's nv-ipam-node DaemonSet, as the operator
# renders it (conf-examples/nv-ipam/deploy/, unchanged but for the image), runs our image
# on the kit's node, which held the reference daemon's store (migrated, its address kept): ipam-node installs nv-ipam, writes nv-ipam.conf and the node pool
# file; a pod with the networks annotation on a macvlan + nv-ipam NAD (as the operator
# renders a MacvlanNetwork) gets its address through Multus. Then the kubelet is stopped
# and the pod force-deleted: its DEL cannot come, and the cleaner must free the address.
# Case daemonset-end checks that, after the other cases (the default 4 minutes of clean
# period x misses are spent on them).

ds_tag=kube-$$
ds_image=localhost/nv-ipam:$ds_tag
nodefs=$DIR/node
master=kdm$((RANDOM % 10000))
ds_started=$SECONDS

# The image, built offline and imported into the node's containerd.
if TAG=$ds_tag IMAGE=localhost/nv-ipam ninja -C "$build" image-nv-ipam >"$work/ds-image.log" 2>&1 &&
	podman save -o "$work/nv-ipam.tar" "$ds_image" >>"$work/ds-image.log" 2>&1 &&
	ctr --address "$nodefs/run/containerd/containerd.sock" -n k8s.io images import "$work/nv-ipam.tar" \
		>>"$work/ds-image.log" 2>&1; then
	ok "the nv-ipam image built and imported into the node ($ds_image)"
else
	not_ok "the nv-ipam image built and imported into the node"
	tail -5 "$work/ds-image.log" | sed 's/^/# /'
fi
podman rmi "$ds_image" >/dev/null 2>&1
rm -f "$work/nv-ipam.tar"

# The node ran the reference nv-ipam before: its daemon's store, one pod's address in it
# (a pool the cluster no longer has, so the other cases' figures stay theirs).
refstore=$top/tests/ipam/refstore.py
nstore=$nodefs/var/lib/cni/nv-ipam/store
mkdir -p "${nstore%/*}"
python3 -c 'import json, sys; sys.path.insert(0, sys.argv[1]); import refstore
root = {"version": 1, "checksum": 0, "pools": {}}
root["checksum"] = refstore.checksum(root)
json.dump(root, open(sys.argv[2], "w"), separators=(",", ":"))' "${refstore%/*}" "$nstore"
python3 "$refstore" edit "$nstore" add oldpool 10.99.0.5 refpod net1

# The operator's objects, the image replaced; the pool with the status the controller writes.
kc apply -f "$top/conf-examples/nv-ipam/deploy/nv-ipam-node-rbac.yaml" >/dev/null
sed "s|image: registry.example.com/cni-rdma/nv-ipam:0.1.0|image: $ds_image|" \
	"$top/conf-examples/nv-ipam/deploy/nv-ipam-node-ds.yaml" >"$work/ds.yaml"
check "only the image differs from the operator's rendering" \
	eval '[ "$(diff "$top/conf-examples/nv-ipam/deploy/nv-ipam-node-ds.yaml" "$work/ds.yaml" | grep -c "^[<>]")" = 2 ]'
kc apply -f "$work/ds.yaml" >/dev/null
printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: kpool, namespace: %s}\nspec: {subnet: "192.168.180.0/24", perNodeBlockSize: 16, gateway: "192.168.180.1"}\n' "$NS" |
	kc apply -f - >/dev/null
pool_status IPPool kpool "{\"allocations\":[{\"nodeName\":\"${K8S_NODE:-node1}\",\"startIP\":\"192.168.180.1\",\"endIP\":\"192.168.180.16\"}]}"

# The DaemonSet's pod on the kit's node: the Node objects other cases make (no kubelet
# behind them) get pods of it too, which never run.
ds_pod_field() {
	kc get pods -n "$NS" -l name=nv-ipam-node --field-selector "spec.nodeName=${K8S_NODE:-node1}" \
		-o "jsonpath={.items[0].$1}" 2>/dev/null
}
ds_pod() { ds_pod_field metadata.name; }
ds_running() { [ "$(ds_pod_field status.phase)" = Running ]; }
ds_log() { cat "$DIR"/logs/pods/"$NS"_nv-ipam-node-*/nv-ipam-node/*.log 2>/dev/null; }
# ds_log_has TEXT: grep reads the files itself (a pipe into grep -q fails under pipefail
# when grep stops reading before cat has written all).
ds_log_has() { grep -qsF -- "$1" "$DIR"/logs/pods/"$NS"_nv-ipam-node-*/nv-ipam-node/*.log; }
check "the DaemonSet's pod runs" wait_until 90 ds_running
check "ipam-node in the pod: in sync with the pools (its log, JSON)" \
	wait_until 30 ds_log_has '"msg":"ready: the node pool file is in sync"'
check "the reference daemon's store migrated at its start, its pod's address kept" \
	eval 'ds_log_has "\"msg\":\"store migrated from the reference nv-ipam node daemon" && "$nodefs/opt/cni/bin/nv-ipam-tool" show --store "$nstore" --pool oldpool --json | jq -e ".pools[0].allocations[0].ip == \"10.99.0.5\"" >/dev/null'
check "it reached the API the way pods do (10.96.0.1:443, the pod's token)" \
	ds_log_has '"server":"https://10.96.0.1:443","from":"in-cluster (/var/run/secrets/kubernetes.io/serviceaccount)"'
# ds_installed_as_built: each of the two on the node is the build's, stripped as the image
# strips it (a function: the case is sourced, and an exit would end the suite unreported).
ds_installed_as_built() {
	local b
	for b in nv-ipam nv-ipam-tool; do
		strip -o "$work/stripped" "$build/ipam/nv-ipam/${b/nv-ipam-tool/tool/nv-ipam-tool}" &&
			cmp -s "$work/stripped" "$nodefs/opt/cni/bin/$b" || return 1
	done
}
check "nv-ipam and nv-ipam-tool installed into the node's /opt/cni/bin, static" ds_installed_as_built
check "nv-ipam.conf in the node's /etc/cni/net.d/nv-ipam.d, the DaemonSet's settings" \
	eval 'jq -e ".logFile == \"/var/log/nv-ipam-cni.log\" and .storeFile == \"/var/lib/cni/nv-ipam/store\" and .poolFile == \"/etc/cni/net.d/nv-ipam.d/node-pools.json\" and .daemonCallTimeoutSeconds == 5" "$nodefs/etc/cni/net.d/nv-ipam.d/nv-ipam.conf" >/dev/null'
check "the node pool file has the node's block" \
	wait_until 10 eval 'jq -e ".pools.kpool.startIP == \"192.168.180.1\"" "$nodefs/etc/cni/net.d/nv-ipam.d/node-pools.json" >/dev/null'

# A macvlan network as the operator renders a MacvlanNetwork, on a veth of the machine;
# our macvlan in the node's bin directory (the cni-rdma-plugins image puts it there).
ip link add "$master" type veth peer name "${master}p" && ip link set "$master" up && ip link set "${master}p" up
install -m 0755 "$build/plugins/macvlan/macvlan" "$nodefs/opt/cni/bin/macvlan"
cat <<EOF | kc apply -f - >/dev/null
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: kmacvlan
  namespace: default
spec:
  config: '{"cniVersion":"0.3.1","name":"kmacvlan","type":"macvlan","master":"$master","mode":"bridge","ipam":{"type":"nv-ipam","poolName":"kpool"}}'
EOF
net_pod kmv kmacvlan
check "the pod with the networks annotation starts" wait_until 120 net_pod_ready kmv
kmv_ip=$(net_pod_ip kmv kmacvlan)
check "its net1 got $kmv_ip from the node's block (past the gateway)" \
	eval '[ "$kmv_ip" = 192.168.180.2 ] && "$KIT/k8s" netns "$DIR" default kmv ip -4 -o addr show net1 | grep -q "inet 192.168.180.2/24"'
check "the store holds it for the pod" \
	eval '"$nodefs/opt/cni/bin/nv-ipam-tool" show --store "$nodefs/var/lib/cni/nv-ipam/store" --pool-file "$nodefs/etc/cni/net.d/nv-ipam.d/node-pools.json" --json | jq -e "[.pools[].allocations[] | select(.podName == \"kmv\")] | length == 1" >/dev/null'

# The kubelet stopped, the pod force-deleted: no DEL can come.
kubelet_pid=$(cut -d' ' -f1 "$DIR/state/pids/kubelet")
kill -TERM "$kubelet_pid"
wait_until 20 eval '! kill -0 '"$kubelet_pid"' 2>/dev/null' || kill -KILL "$kubelet_pid"
# Taken before the delete: no pass can miss the pod sooner.
ds_deleted_at=$SECONDS
ds_deleted_ms=$(($(date +%s%N) / 1000000))
kc delete pod kmv -n default --grace-period=0 --force >/dev/null 2>&1
check "kubelet down, the pod force-deleted from the API" eval '! kc get pod kmv -n default >/dev/null 2>&1'
note "daemonset-start: $((SECONDS - ds_started)) s; the cleaner's 4th miss comes in the 4th beat of 60 s"
