# Case controller-deploy: the whole nvIpam component from our one image, as the Network
# Operator renders it (conf-examples/nv-ipam/deploy/, unchanged but for the image) on the
# kit's node: the nv-ipam-controller Deployment (2 replicas, --webhook=true), its webhook
# Service and ValidatingWebhookConfiguration with a certificate minted with openssl (the
# Secret and caBundle cert-manager would make), and the nv-ipam-node DaemonSet. An IPPool is
# created through the webhook (an invalid one refused), the leader carves its status, the
# DaemonSet's ipam-node writes the node pool file, and a pod with the networks annotation
# on a macvlan + nv-ipam NAD gets its address from the node's carved block.

cd_node=${K8S_NODE:-node1}
nodefs=$DIR/node
cd_master=kcm$((RANDOM % 10000))
cd_chain=kt-nvipam-wh
cd_wh=$work/cd-wh
mkdir -p "$cd_wh"

# The image: the one daemonset-start imported, or built and imported here.
cd_image=${ds_image:-localhost/nv-ipam:kube-$$}
# ctr writes a line at a time: read all before grep (grep -q on the pipe may stop reading
# before ctr's last line, and the SIGPIPE fails the pipeline under pipefail).
cd_has_image() {
	local refs
	refs=$(ctr --address "$nodefs/run/containerd/containerd.sock" -n k8s.io images ls -q 2>/dev/null) &&
		grep -q "$cd_image\$" <<<"$refs"
}
if ! cd_has_image; then
	if TAG=${cd_image##*:} IMAGE=${cd_image%:*} ninja -C "$build" image-nv-ipam >"$work/cd-image.log" 2>&1 &&
		podman save -o "$work/cd-nv-ipam.tar" "$cd_image" >>"$work/cd-image.log" 2>&1 &&
		ctr --address "$nodefs/run/containerd/containerd.sock" -n k8s.io images import "$work/cd-nv-ipam.tar" \
			>>"$work/cd-image.log" 2>&1; then
		note "built and imported $cd_image"
	else
		tail -5 "$work/cd-image.log" | sed 's/^/# /'
	fi
	podman rmi "$cd_image" >/dev/null 2>&1
	rm -f "$work/cd-nv-ipam.tar"
fi
check "the nv-ipam image is in the node ($cd_image)" cd_has_image

# The webhook's certificate, as cert-manager would issue it: a CA, the Service's names.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=nv-ipam-selfsigned-issuer" \
	-keyout "$cd_wh/ca.key" -out "$cd_wh/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=nv-ipam-webhook-service.$NS.svc" \
	-keyout "$cd_wh/tls.key" -out "$cd_wh/tls.csr" 2>/dev/null
printf 'subjectAltName=DNS:nv-ipam-webhook-service.%s.svc,DNS:nv-ipam-webhook-service.%s.svc.cluster.local\n' \
	"$NS" "$NS" >"$cd_wh/ext"
openssl x509 -req -in "$cd_wh/tls.csr" -CA "$cd_wh/ca.crt" -CAkey "$cd_wh/ca.key" -CAcreateserial \
	-days 1 -extfile "$cd_wh/ext" -out "$cd_wh/tls.crt" 2>/dev/null
printf 'apiVersion: v1\nkind: Secret\nmetadata: {name: nv-ipam-webhook-server-cert, namespace: %s}\ntype: kubernetes.io/tls\ndata: {tls.crt: %s, tls.key: %s, ca.crt: %s}\n' \
	"$NS" "$(base64 -w0 <"$cd_wh/tls.crt")" "$(base64 -w0 <"$cd_wh/tls.key")" "$(base64 -w0 <"$cd_wh/ca.crt")" |
	kc apply -f - >/dev/null

# The operator's objects: only the image replaced (and cert-manager's caBundle added).
d=$top/conf-examples/nv-ipam/deploy
sed "s|image: registry.example.com/cni-rdma/nv-ipam:0.1.0|image: $cd_image|" "$d/nv-ipam-controller-deployment.yaml" >"$work/cd-ctl.yaml"
sed "s|image: registry.example.com/cni-rdma/nv-ipam:0.1.0|image: $cd_image|" "$d/nv-ipam-node-ds.yaml" >"$work/cd-ds.yaml"
check "only the image differs from the operator's renderings" \
	eval '[ "$(diff "$d/nv-ipam-controller-deployment.yaml" "$work/cd-ctl.yaml" | grep -c "^[<>]")" = 2 ] && [ "$(diff "$d/nv-ipam-node-ds.yaml" "$work/cd-ds.yaml" | grep -c "^[<>]")" = 2 ]'
awk -v ca="$(base64 -w0 <"$cd_wh/ca.crt")" '{ print } /^    clientConfig:$/ { print "      caBundle: " ca }' \
	"$d/nv-ipam-webhook.yaml" >"$work/cd-wh.yaml"
kc apply -f "$d/nv-ipam-controller-rbac.yaml" -f "$d/nv-ipam-node-rbac.yaml" >/dev/null
kc apply -f "$work/cd-ctl.yaml" -f "$work/cd-ds.yaml" -f "$work/cd-wh.yaml" >/dev/null

ctl_ready_replicas() { kc get deployment nv-ipam-controller -n "$NS" -o 'jsonpath={.status.readyReplicas}' 2>/dev/null; }
check "the controller Deployment's 2 replicas are ready (/readyz on :8081)" wait_until 150 eval '[ "$(ctl_ready_replicas)" = 2 ]'
cd_pods=$(kc get pods -n "$NS" -l name=nv-ipam-controller -o 'jsonpath={.items[*].metadata.name}')
cd_holder() { kc get lease dd1643cf.nvidia.com -n "$NS" -o 'jsonpath={.spec.holderIdentity}' 2>/dev/null; }
cd_held() { local p; for p in $cd_pods; do [[ "$(cd_holder)" == "${p}_"* ]] && return 0; done; return 1; }
check "one replica holds the lease in the operator's namespace" wait_until 30 cd_held
cd_log() { cat "$DIR"/logs/pods/"$NS"_nv-ipam-controller-*/nv-ipam-controller/*.log 2>/dev/null; }
check "the replicas reached the API the way pods do (10.96.0.1:443, the pod's token)" \
	eval '[ "$(cd_log | grep -c "\"API server\" server=\"https://10.96.0.1:443\" from=\"in-cluster (/var/run/secrets/kubernetes.io/serviceaccount)\"")" -ge 2 ]'
check "both serve the webhook from the mounted certificate" \
	eval '[ "$(cd_log | grep -c "\"serving the validating webhook\" address=\":9443\" certificate=\"/tmp/k8s-webhook-server/serving-certs/tls.crt\"")" -ge 2 ]'
ds_ready() { [ "$(kc get daemonset nv-ipam-node -n "$NS" -o 'jsonpath={.status.numberReady}' 2>/dev/null)" = 1 ]; }
check "the node DaemonSet's pod is ready" wait_until 90 ds_ready

# The API server reaches the webhook's Service at its ClusterIP; with no kube-proxy, a DNAT
# rule for the machine's own connections does what kube-proxy would, and a route through
# the pods' bridge gives them a source address the pod can answer (both removed at the end).
cd_cip=$(kc get service nv-ipam-webhook-service -n "$NS" -o 'jsonpath={.spec.clusterIP}')
cd_pip=$(kc get pods -n "$NS" -l name=nv-ipam-controller -o 'jsonpath={.items[0].status.podIP}')
iptables -t nat -N "$cd_chain" 2>/dev/null
iptables -t nat -F "$cd_chain"
iptables -t nat -A "$cd_chain" -p tcp -j DNAT --to-destination "$cd_pip:9443"
iptables -t nat -I OUTPUT -d "$cd_cip/32" -p tcp --dport 443 -j "$cd_chain"
ip route add "$cd_cip/32" dev ktbr0 src 10.244.0.1
cd_pool() { # NAME SPEC
	printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: %s, namespace: %s}\nspec: %s\n' "$1" "$NS" "$2" |
		kc apply -f - 2>&1
}
# kubectl exits 1 on a refusal: its output is taken whole before it is matched (under
# pipefail a pipe into grep would fail with kubectl).
cd_refused() {
	local out
	out=$(cd_pool cdbad '{subnet: "192.168.182.0/24", perNodeBlockSize: 16, gateway: "192.168.183.1"}')
	grep -q 'admission webhook "validate-ippool.nv-ipam.nvidia.com" denied the request: spec.gateway: Invalid value: "192.168.183.1": is not part of the subnet' <<<"$out"
}
check "through the Service, the webhook refuses an invalid IPPool, naming the field" wait_until 30 cd_refused
out=$(cd_pool cdpool '{subnet: "192.168.181.0/24", perNodeBlockSize: 16, gateway: "192.168.181.1"}')
check "a valid IPPool is created through it" eval 'kc get ippool cdpool -n "$NS" >/dev/null 2>&1'

cd_block() { kc get ippool cdpool -n "$NS" -o json 2>/dev/null | jq -c --arg n "$cd_node" '.status.allocations[]? | select(.nodeName == $n)'; }
check "the leader carves the pool: the node has a block in its status" wait_until 20 eval '[ -n "$(cd_block)" ]'
cd_start=$(cd_block | jq -r .startIP)
cd_end=$(cd_block | jq -r .endIP)
note "$cd_node: $cd_start-$cd_end"
# The API shows the status before the container's log file has the line: waited for, and
# read by grep itself (a pipe into grep -q can fail under pipefail when it stops reading).
check "the leader's log says it wrote the status" \
	wait_until 15 eval 'grep -qs "\"pool status updated\" kind=\"IPPool\" pool=\"cdpool\"" "$DIR"/logs/pods/"$NS"_nv-ipam-controller-*/nv-ipam-controller/*.log'
check "the DaemonSet's ipam-node puts the carved block in the node pool file" \
	wait_until 15 eval 'jq -e --arg s "$cd_start" --arg e "$cd_end" ".pools.cdpool.startIP == \$s and .pools.cdpool.endIP == \$e" "$nodefs/etc/cni/net.d/nv-ipam.d/node-pools.json" >/dev/null'

# Overlapping pools (192.168.96.0/24 and its /25): admitted with a warning naming the other
# (kubectl prints it), an OverlappingPools Event on each, and on this node, where both give
# a block, ipam-node's gauge and nv-ipam-tool check say so.
out=$(cd_pool cdwide '{subnet: "192.168.96.0/24", perNodeBlockSize: 16}')
out=$(cd_pool cdhalf '{subnet: "192.168.96.0/25", perNodeBlockSize: 16}')
check "an overlapping pool is admitted, kubectl printing the webhook's warning naming the other" \
	eval 'kc get ippool cdhalf -n "$NS" >/dev/null 2>&1 && grep -q "IPPool \"cdhalf\" 192.168.96.0/25 overlaps IPPool \"cdwide\" 192.168.96.0/24" <<<"$out"'
cd_overlap_events() {
	kc get events -n "$NS" -o json 2>/dev/null |
		jq -r '[.items[] | select(.reason == "OverlappingPools" and .type == "Warning") | .involvedObject.name] | sort | unique | join(" ")'
}
check "the leader records an OverlappingPools Event on both pools" wait_until 30 eval '[ "$(cd_overlap_events)" = "cdhalf cdwide" ]'
cd_ds_pod() { kc get pods -n "$NS" -l name=nv-ipam-node --field-selector "spec.nodeName=$cd_node" -o 'jsonpath={.items[0].metadata.name}'; }
cd_gauge() {
	local m
	m=$("$KIT/k8s" netns "$DIR" "$NS" "$(cd_ds_pod)" curl -s --max-time 5 127.0.0.1:8080/metrics) &&
		grep -qx 'nv_ipam_node_pool_overlapping{pool="cdhalf",type="ippool"} 1' <<<"$m"
}
check "the node's blocks of both overlap: ipam-node's gauge says so" wait_until 30 cd_gauge
check "and nv-ipam-tool check on the node exits 1 naming them" \
	eval '! out=$("$nodefs/opt/cni/bin/nv-ipam-tool" check --store "$nodefs/var/lib/cni/nv-ipam/store" --pool-file "$nodefs/etc/cni/net.d/nv-ipam.d/node-pools.json" 2>&1) &&
		grep -q "overlapping pools: IPPool \"cd\(half\|wide\)\"" <<<"$out"'
kc delete ippool cdwide cdhalf -n "$NS" >/dev/null 2>&1

if [ -z "$cd_start" ]; then
	not_ok "no block carved: no pod can get an address from it"
else
ip link add "$cd_master" type veth peer name "${cd_master}p" && ip link set "$cd_master" up && ip link set "${cd_master}p" up
install -m 0755 "$build/plugins/macvlan/macvlan" "$nodefs/opt/cni/bin/macvlan"
cat <<EOF | kc apply -f - >/dev/null
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: kcdmacvlan
  namespace: default
spec:
  config: '{"cniVersion":"0.3.1","name":"kcdmacvlan","type":"macvlan","master":"$cd_master","mode":"bridge","ipam":{"type":"nv-ipam","poolName":"cdpool"}}'
EOF
net_pod kcd kcdmacvlan
check "the pod with the networks annotation starts" wait_until 120 net_pod_ready kcd
cd_ip=$(net_pod_ip kcd kcdmacvlan)
# The block's first address is the gateway (.1) when the node was carved the first block.
cd_want=$(awk -F. -v s="$cd_start" 'BEGIN { split(s, a, "."); n = a[4] + (s == "192.168.181.1" ? 1 : 0); print a[1] "." a[2] "." a[3] "." n }')
check "its net1 got $cd_ip, the first free address of the node's carved block" \
	eval '[ "$cd_ip" = "$cd_want" ] && "$KIT/k8s" netns "$DIR" default kcd ip -4 -o addr show net1 | grep -q "inet $cd_want/24"'

kc delete pod kcd -n default --wait=true >/dev/null 2>&1
kc delete network-attachment-definitions kcdmacvlan -n default >/dev/null 2>&1
ip link del "$cd_master" 2>/dev/null
fi
kc delete ippool cdpool -n "$NS" --ignore-not-found >/dev/null
ip route del "$cd_cip/32" dev ktbr0
iptables -t nat -D OUTPUT -d "$cd_cip/32" -p tcp --dport 443 -j "$cd_chain"
iptables -t nat -F "$cd_chain"
iptables -t nat -X "$cd_chain"
kc delete -f "$work/cd-wh.yaml" -f "$work/cd-ctl.yaml" >/dev/null 2>&1
kc delete secret nv-ipam-webhook-server-cert -n "$NS" >/dev/null 2>&1
