# Case uninstall (last: it removes the DaemonSet controller-deploy left running): the
# operator's nvIpam state removed while pods hold nv-ipam addresses. ipam-node hands the
# store over at its SIGTERM and our nv-ipam stays in the node's bin dir; with no reference
# daemon there, the pods' DELs release their addresses in the handed-over store itself, so
# every pod leaves (none stays Terminating), the store holds nothing of them, and the
# reference daemon's format still reads it (refstore.py, and the reference's own code when
# ../shared/reference/nvipam-refcni is there).

un_store=$nodefs/var/lib/cni/nv-ipam/store
un_pods=(kun1 kun2 kun3 kun4)
un_master=kun$((RANDOM % 10000))
# un_entries: the handed-over store's entries of this case's pods ("" when none).
un_entries() { jq -r '[.pools[].entries[] | select(.metadata.pod_name | startswith("kun")) | .ip_address] | sort | join(" ")' "$un_store" 2>/dev/null; }

printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: kunpool, namespace: %s}\nspec: {subnet: "192.168.186.0/24", perNodeBlockSize: 16, gateway: "192.168.186.1"}\n' "$NS" |
	kc apply -f - >/dev/null
# The status the controller would write (controller-deploy removed the controller).
pool_status IPPool kunpool "{\"allocations\":[{\"nodeName\":\"${K8S_NODE:-node1}\",\"startIP\":\"192.168.186.1\",\"endIP\":\"192.168.186.16\"}]}"
ip link add "$un_master" type veth peer name "${un_master}p" && ip link set "$un_master" up && ip link set "${un_master}p" up
install -m 0755 "$build/plugins/macvlan/macvlan" "$nodefs/opt/cni/bin/macvlan"
cat <<EOF | kc apply -f - >/dev/null
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: kunmacvlan
  namespace: default
spec:
  config: '{"cniVersion":"0.3.1","name":"kunmacvlan","type":"macvlan","master":"$un_master","mode":"bridge","ipam":{"type":"nv-ipam","poolName":"kunpool"}}'
EOF
check "ipam-node puts the node's block in the node pool file" \
	wait_until 30 eval 'jq -e ".pools.kunpool" "$nodefs/etc/cni/net.d/nv-ipam.d/node-pools.json" >/dev/null'
for un_p in "${un_pods[@]}"; do net_pod "$un_p" kunmacvlan; done
un_ready() { local p; for p in "${un_pods[@]}"; do net_pod_ready "$p" || return 1; done; }
check "${#un_pods[@]} pods on the network start" wait_until 120 un_ready

# The operator removing the nvIpam state deletes the DaemonSet (the controller's Deployment
# is gone already); ipam-node's SIGTERM hands over.
kc delete daemonset nv-ipam-node -n "$NS" >/dev/null 2>&1
check "nvIpam uninstalled: ipam-node gone, the store handed over with the pods' addresses" \
	wait_until 60 eval '! kc get pods -n "$NS" -l name=nv-ipam-node -o name 2>/dev/null | grep -q . &&
		[ -e "$un_store.handed-over" ] && [ "$(un_entries | wc -w)" = ${#un_pods[@]} ]'

un_deleted_at=$SECONDS
for un_p in "${un_pods[@]}"; do kc delete pod "$un_p" -n default --wait=false >/dev/null 2>&1; done
un_gone() { ! kc get pods -n default -o name 2>/dev/null | grep -q '^pod/kun'; }
check "every pod leaves, none stays Terminating" wait_until 90 un_gone
# The kubelet may remove a pod's object before its sandbox's teardown (the CNI DEL) ends.
un_dels() { [ "$(grep -c "Del: default:kun[0-9]:" "$DIR/logs/multus.log")" -ge ${#un_pods[@]} ]; }
check "their DELs went through Multus to nv-ipam" wait_until 60 un_dels
check "the handed-over store holds nothing of them" wait_until 30 eval '[ -z "$(un_entries)" ]'
note "uninstall: the store held nothing of them $((SECONDS - un_deleted_at)) s after their deletion"
check "the reference daemon's format still reads it (refstore.py: checksum and layout)" \
	eval 'python3 "$top/tests/ipam/refstore.py" "$un_store" >/dev/null'
un_refcni=$(shared_path reference/nvipam-refcni)/refcni.xz
if [ -f "$un_refcni" ]; then
	xz -dc "$un_refcni" >"$work/refcni" && chmod +x "$work/refcni"
	cp "$un_store" "$work/un-store"
	# The reference's own code, on a copy: an ADD from the block reads the store and
	# writes it back, refusing a checksum or layout it would not start on.
	jq -n --arg n "${K8S_NODE:-node1}" '[{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool",
		"metadata":{"name":"kunpool","namespace":"x"},
		"spec":{"subnet":"192.168.186.0/24","perNodeBlockSize":16,"gateway":"192.168.186.1"},
		"status":{"allocations":[{"nodeName":$n,"startIP":"192.168.186.1","endIP":"192.168.186.16"}]}}]' \
		>"$work/un-pools.json"
	check "the reference's own code reads it and allocates from it" \
		eval 'echo "{\"cniVersion\":\"0.3.1\",\"name\":\"kunmacvlan\",\"ipam\":{\"type\":\"nv-ipam\",\"poolName\":\"kunpool\"}}" |
			CNI_COMMAND=ADD CNI_CONTAINERID=refcheck CNI_IFNAME=net1 CNI_NETNS=/nonexistent CNI_PATH=/nonexistent \
			CNI_ARGS="K8S_POD_NAMESPACE=default;K8S_POD_NAME=refcheck" REF_POOLS="$work/un-pools.json" \
			REF_NODE="${K8S_NODE:-node1}" REF_STORE="$work/un-store" "$work/refcni" 2>/dev/null | jq -e ".ips[0].address" >/dev/null'
else
	note "$(shared_missing "${un_refcni%/*}" reference/nvipam-refcni "reference nv-ipam code (its own reading of the uninstalled store)")"
fi

kc delete network-attachment-definitions kunmacvlan -n default >/dev/null 2>&1
kc delete ippool kunpool -n "$NS" >/dev/null 2>&1
ip link del "$un_master" 2>/dev/null
