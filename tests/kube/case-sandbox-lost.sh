# Case sandbox-lost (after controller-deploy, whose nv-ipam-node DaemonSet still runs): a
# pod on two nv-ipam networks, one round-robin and one with a static IP, whose sandbox the
# runtime loses without a DEL (the kubelet down, the pod's containers removed from
# containerd, containerd restarted: its CRI no longer knows the sandbox). The kubelet back
# starts a new sandbox; its ADDs take over what the old one held: the same two addresses,
# held under the new sandbox alone. (Without the takeover the static IP's ADD fails with
# code 111 for as long as the pod lives, and the round-robin address leaks.)

sb_master=ksb$((RANDOM % 10000))
sb_node=${K8S_NODE:-node1}
sb_store=$DIR/node/var/lib/cni/nv-ipam/store
sb_pools=$DIR/node/etc/cni/net.d/nv-ipam.d/node-pools.json
ctrn() { ctr --address "$DIR/node/run/containerd/containerd.sock" -n k8s.io "$@"; }
sb_sandbox() { # the pod's sandbox container in containerd
	ctrn containers ls -q "labels.\"io.kubernetes.pod.uid\"==$sb_uid,labels.\"io.cri-containerd.kind\"==sandbox" 2>/dev/null
}
sb_held() { # the pod's allocations: "container interface ip" lines, sorted
	"$DIR/node/opt/cni/bin/nv-ipam-tool" show --store "$sb_store" --pool-file "$sb_pools" --pool ksbpool --json |
		jq -r '.pools[0].allocations[] | select(.podName == "ksb") | "\(.containerID) \(.ifname) \(.ip)"' | sort
}

check "the DaemonSet's ipam-node runs (left by controller-deploy)" \
	wait_until 60 eval '[ "$(kc get daemonset nv-ipam-node -n "$NS" -o "jsonpath={.status.numberReady}" 2>/dev/null)" = 1 ]'
printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: ksbpool, namespace: %s}\nspec: {subnet: "192.168.184.0/24", perNodeBlockSize: 16, gateway: "192.168.184.1"}\n' "$NS" |
	kc apply -f - >/dev/null
pool_status IPPool ksbpool "{\"allocations\":[{\"nodeName\":\"$sb_node\",\"startIP\":\"192.168.184.1\",\"endIP\":\"192.168.184.16\"}]}"
check "the node pool file has the pool's block" \
	wait_until 15 eval 'jq -e ".pools.ksbpool.startIP == \"192.168.184.1\"" "$sb_pools" >/dev/null'

ip link add "$sb_master" type veth peer name "${sb_master}p" && ip link set "$sb_master" up && ip link set "${sb_master}p" up
install -m 0755 "$build/plugins/macvlan/macvlan" "$DIR/node/opt/cni/bin/macvlan"
for sb_nad in 'ksbrr:' 'ksbst:"capabilities":{"ips":true},'; do
	cat <<EOF | kc apply -f - >/dev/null
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: ${sb_nad%%:*}
  namespace: default
spec:
  config: '{"cniVersion":"0.3.1","name":"${sb_nad%%:*}","type":"macvlan",${sb_nad#*:}"master":"$sb_master","mode":"bridge","ipam":{"type":"nv-ipam","poolName":"ksbpool"}}'
EOF
done
net_pod ksb "'[{\"name\":\"ksbrr\"},{\"name\":\"ksbst\",\"ips\":[\"192.168.184.9/24\"]}]'"
check "a pod on both networks starts" wait_until 120 net_pod_ready ksb
sb_rr=$(net_pod_ip ksb ksbrr)
sb_uid=$(kc get pod ksb -n default -o 'jsonpath={.metadata.uid}')
sb_old=$(sb_sandbox)
check "it got $sb_rr round-robin from the node's block (past the gateway) and the static 192.168.184.9, held under its sandbox" \
	eval '[ "${sb_rr%.*}" = 192.168.184 ] && [ "${sb_rr##*.}" -ge 2 ] && [ "${sb_rr##*.}" -le 16 ] && [ "$(net_pod_ip ksb ksbst)" = 192.168.184.9 ] &&
	      [ "$(sb_held)" = "$sb_old net1 $sb_rr
$sb_old net2 192.168.184.9" ]'
# Where the old sandbox's netns is pinned (removed at the end: the runtime that lost it never will).
sb_old_netns=$(ctrn containers info "$sb_old" 2>/dev/null | jq -r '.Spec.linux.namespaces[] | select(.type == "network") | .path')

# The runtime loses the sandbox: no DEL can come for it.
sb_kubelet=$(cut -d' ' -f1 "$DIR/state/pids/kubelet")
kill -TERM "$sb_kubelet"
wait_until 20 eval '! kill -0 '"$sb_kubelet"' 2>/dev/null' || kill -KILL "$sb_kubelet"
for sb_id in $(ctrn containers ls -q "labels.\"io.kubernetes.pod.uid\"==$sb_uid" 2>/dev/null); do
	ctrn tasks delete --force "$sb_id" >/dev/null 2>&1
	ctrn containers delete "$sb_id" >/dev/null 2>&1
done
sb_containerd=$(cut -d' ' -f1 "$DIR/state/pids/containerd")
kill -TERM "$sb_containerd"
wait_until 20 eval '! kill -0 '"$sb_containerd"' 2>/dev/null' || kill -KILL "$sb_containerd"
check "the pod's containers are gone from containerd, its DEL never sent" \
	eval '[ -z "$(sb_sandbox)" ] && ! grep -q "Del: default:ksb:$sb_uid:" "$DIR/logs/multus.log"'
# containerd starts again from this shell: not with the node settings an earlier case
# exported for its own plugin runs (the plugins containerd runs read the node's).
env -u CNI_RDMA_PLUGINS_CONF K8S_NICE="${K8S_NICE:-5}" "$KIT/k8s" up-node "$DIR" >>"$work/kit.log" 2>&1

sb_new() { local id; id=$(sb_sandbox) && [ -n "$id" ] && [ "$id" != "$sb_old" ] && echo "$id"; }
check "containerd and the kubelet back: the pod runs in a new sandbox" \
	wait_until 120 eval 'sb_new >/dev/null && net_pod_ready ksb'
sb_cur=$(sb_new)
check "the new sandbox took over both addresses: the same two, held under it alone" \
	wait_until 30 eval '[ "$(sb_held)" = "$sb_cur net1 $sb_rr
$sb_cur net2 192.168.184.9" ] && [ "$(net_pod_ip ksb ksbrr)" = "$sb_rr" ] && [ "$(net_pod_ip ksb ksbst)" = 192.168.184.9 ]'
check "nv-ipam's log names the takeover, old sandbox and new" \
	eval 'grep -F "ADD $sb_cur/net2: pod default/ksb (uid $sb_uid) had 192.168.184.9 in pool ksbpool under container $sb_old, a sandbox replaced without a DEL: taken over" "$nvlog" >/dev/null'
check "and the pod's net1 has it" \
	eval '"$KIT/k8s" netns "$DIR" default ksb ip -4 -o addr show net1 >"$work/sb-addr" && grep -q "inet $sb_rr/24" "$work/sb-addr"'

kc delete pod ksb -n default --wait=true --timeout=60s >/dev/null 2>&1
check "the pod deleted: its DEL releases both" eval '[ -z "$(sb_held)" ]'

# What the runtime leaked: the old sandbox's netns (its macvlans with it).
[ -z "$sb_old_netns" ] ||
	nsenter -t "$(cut -d' ' -f1 "$DIR/state/pids/node")" -m -- sh -c 'umount "$1" && rm -f "$1"' sh "$sb_old_netns"
kc delete network-attachment-definitions ksbrr ksbst -n default >/dev/null 2>&1
kc delete ippool ksbpool -n "$NS" >/dev/null 2>&1
ip link del "$sb_master" 2>/dev/null
