# Case podnet (after daemonset-end, whose kubelet it needs): the kit's pod network on our
# plugins, as a node of the operator's gets them. The cniPlugins DaemonSet
# (conf-examples/plugin-images/cni-plugins-ds.yaml, only the image changed) copies our
# image's plugins over the node's /opt/cni/bin; the cluster network (Multus' delegate, every
# pod's eth0) becomes bridge + host-local + portmap on the kit's ktbr0 and 10.244.0.0/24,
# and containerd's lo is our loopback. Pods get eth0 from our bridge and host-local (their
# store entries; our log file, which the reference plugins do not write, names their
# sandboxes), a hostPort reaches its pod through our portmap. Then the node's four files
# swapped for the reference's (v1.9.1) with the pods live, and back to ours: every pod keeps
# its address and its store entry, a new pod takes a free address, mappings keep working;
# the pods deleted, some under each: no store entry and no NAT rule left of them.
# Everything is put back at the end: the node's bin dir, the kit's conflist, the DaemonSet,
# the image, the log file, the portmap chains when the machine had none.

pn_bin=$DIR/node/opt/cni/bin
pn_conf=$DIR/node/etc/cni/net.d/00-multus.conflist
pn_store=$DIR/node/var/lib/cni/networks/kit-cluster
pn_tag=hk-podnet-$$
pn_image=localhost/cni-rdma-plugins:$pn_tag
pn_log=/var/log/hk-podnet-$$.log
pn_plugins=(loopback bridge host-local portmap)
declare -A pn_built=([loopback]=plugins/loopback/loopback [bridge]=plugins/bridge/bridge
	[host-local]=ipam/host-local/host-local [portmap]=plugins/portmap/portmap)
# Host ports of the mappings, one per pod that has one.
pn_port=$((20000 + $$ % 10000))
pn_pods=()
pn_started=$SECONDS

# The node's state before: its bin dir, its conflist, whether the machine had portmap's chains.
rm -rf "$work/pn-bin-before" "$work/pn"
mkdir -p "$work/pn"
cp -a "$pn_bin" "$work/pn-bin-before"
cp -p "$pn_conf" "$work/pn/conflist"
pn_had_chains=$(iptables -t nat -S 2>/dev/null | grep -c '^-N CNI-\(HOSTPORT\|DN\)-')

pn_ctr() { ctr --address "$DIR/node/run/containerd/containerd.sock" -n k8s.io "$@"; }
# pn_swap DIR: the node's four files replaced by DIR's, each by a rename (as an installer does).
pn_swap() {
	local p
	for p in "${pn_plugins[@]}"; do
		install -m 0755 "$1/$p" "$pn_bin/.$p.hk-new" && mv -f "$pn_bin/.$p.hk-new" "$pn_bin/$p" || return 1
	done
}
# pn_same DIR: the node's four files are DIR's, byte for byte.
pn_same() { local p; for p in "${pn_plugins[@]}"; do cmp -s "$1/$p" "$pn_bin/$p" || return 1; done; }

# pn_pod NAME [HOSTPORT]: a busybox pod in default; with a host port, busybox httpd answers
# its name on container port 8080, mapped to it.
pn_pod() {
	local ports=""
	[ -z "${2:-}" ] || ports="
    ports:
    - {containerPort: 8080, hostPort: $2, protocol: TCP}"
	kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox:local
    command: ["sh", "-c", "mkdir -p /tmp/w && hostname >/tmp/w/index.html && exec httpd -f -p 8080 -h /tmp/w"]$ports
EOF
	pn_pods+=("$1")
}
pn_ip() { kc get pod "$1" -n default -o 'jsonpath={.status.podIP}' 2>/dev/null; }
# pn_sandbox POD: the ID of the pod's sandbox (CNI_CONTAINERID of its ADD).
pn_sandbox() {
	pn_ctr containers ls -q "labels.\"io.kubernetes.pod.name\"==$1,labels.\"io.cri-containerd.kind\"==sandbox" 2>/dev/null
}
# pn_entry IP: host-local's entry for IP, "CONTAINERID IFNAME" (upstream's layout: the two
# on lines of their own, CRLF between).
pn_entry() { [ -f "$pn_store/$1" ] && tr '\r\n' '  ' <"$pn_store/$1" | awk '{ print $1, $2 }'; }
# pn_held POD: its address is on its eth0, in 10.244.0.0/24, and the store holds it for its
# sandbox's eth0.
pn_held() {
	local ip
	ip=$(pn_ip "$1")
	[[ "$ip" == 10.244.0.* ]] && [ "$(pn_entry "$ip")" = "$(pn_sandbox "$1") eth0" ] &&
		grep -q "inet $ip/24 " <<<"$("$KIT/k8s" netns "$DIR" default "$1" ip -4 -o addr show eth0 2>/dev/null)"
}
# pn_store_list: every entry of the store, "IP CONTAINERID IFNAME", sorted.
pn_store_list() {
	local f
	for f in "$pn_store"/[0-9]*; do
		[ -f "$f" ] && echo "${f##*/} $(pn_entry "${f##*/}")"
	done | sort
}
# pn_unique: no two pods on the pod network share an address.
pn_unique() {
	local ips
	ips=$(kc get pods -A -o json | jq -r '.items[] | select(.spec.hostNetwork != true) | .status.podIP // empty')
	[ -n "$ips" ] && [ "$(sort <<<"$ips" | uniq -d)" = "" ]
}
# pn_answers PORT POD: the node's address on ktbr0 and its InternalIP (from the bridge's
# address: the pods have no route to the node's others), PORT, answer with POD's name.
pn_answers() {
	[ "$(curl -s --max-time 5 "http://10.244.0.1:$1/")" = "$2" ] &&
		[ "$(curl -s --max-time 5 --interface 10.244.0.1 "http://$pn_node_ip:$1/")" = "$2" ]
}
pn_ready() { local p; for p in "$@"; do [ "$(kc get pod "$p" -n default -o 'jsonpath={.status.phase}' 2>/dev/null)" = Running ] || return 1; done; }
# pn_logged_add CONTAINERID: our plugins logged an ADD of it (the reference ones log nothing:
# they ignore logFile).
pn_logged_add() { grep -qs "ADD \\(container=\\)\\?$1" "$pn_log"; }
pn_nat_rules() { iptables-save -t nat 2>/dev/null | grep -c -- "$1"; }
pn_node_ip=$(kc get node "${K8S_NODE:-node1}" -o 'jsonpath={.status.addresses[?(@.type=="InternalIP")].address}')

# Our image, built offline and imported into the node's containerd (the ipoib slot's image,
# built beside it, is not used).
if REPOSITORY=localhost TAG=$pn_tag ninja -C "$build" image >"$work/pn-image.log" 2>&1 &&
	podman save -o "$work/pn/plugins.tar" "$pn_image" >>"$work/pn-image.log" 2>&1 &&
	pn_ctr images import "$work/pn/plugins.tar" >>"$work/pn-image.log" 2>&1; then
	ok "the cni-rdma-plugins image built and imported into the node ($pn_image)"
else
	not_ok "the cni-rdma-plugins image built and imported into the node"
	tail -5 "$work/pn-image.log" | sed 's/^/# /'
fi
podman rmi "$pn_image" "localhost/cni-rdma-ipoib:$pn_tag" >/dev/null 2>&1
rm -f "$work/pn/plugins.tar"

# The operator's cniPlugins DaemonSet, the image replaced.
sed "s|image: registry.example.com/cni-rdma/cni-rdma-plugins:0.1.0|image: $pn_image|" \
	"$top/conf-examples/plugin-images/cni-plugins-ds.yaml" >"$work/pn/ds.yaml"
check "only the image differs from the operator's rendering" \
	eval '[ "$(diff "$top/conf-examples/plugin-images/cni-plugins-ds.yaml" "$work/pn/ds.yaml" | grep -c "^[<>]")" = 2 ]'
kc apply -f "$work/pn/ds.yaml" >/dev/null
pn_installed() {
	grep -qs 'binaries installed, waiting for SIGTERM' "$DIR"/logs/pods/"$NS"_cni-plugins-ds-*/cni-plugins/*.log
}
check "its pod installs the image's plugins into the node's /opt/cni/bin" wait_until 90 pn_installed
mkdir -p "$work/pn/ours"
for pn_p in "${pn_plugins[@]}"; do strip -o "$work/pn/ours/$pn_p" "$build/${pn_built[$pn_p]}"; done
check "the node's loopback, bridge, host-local, portmap are our build's, byte for byte (stripped as the image does)" \
	pn_same "$work/pn/ours"
pn_say_ours() { local p; for p in "${pn_plugins[@]}"; do "$pn_bin/$p" --version 2>&1 | grep -q "^$p (cni-rdma-plugins) " || return 1; done; }
check "  ... and say so (--version)" pn_say_ours

# The cluster network: the kit's delegate, its bridge, bridge and addresses kept, with
# portmap after it (Multus declares portMappings, so containerd hands it the pods' hostPorts)
# and our log file, which only our plugins write. containerd reloads the conflist when a file
# of the directory is renamed (a conflist moved in from another directory went unseen once):
# it is written beside and renamed over.
jq --arg log "$pn_log" '.plugins[0].capabilities = {portMappings: true}
	| .plugins[0].delegates[0].plugins[0].logFile = $log
	| .plugins[0].delegates[0].plugins[0].ipam.logFile = $log
	| .plugins[0].delegates[0].plugins += [{type: "portmap", capabilities: {portMappings: true}, logFile: $log, logLevel: "debug"}]' \
	"$work/pn/conflist" >"$pn_conf.hk-new" && mv -f "$pn_conf.hk-new" "$pn_conf"
pn_chain_set() {
	jq -e '.plugins[0].delegates[0] | .name == "kit-cluster" and ([.plugins[].type] == ["bridge", "portmap"])
		and .plugins[0].bridge == "ktbr0" and .plugins[0].ipam.ranges[0][0].subnet == "10.244.0.0/24"' "$pn_conf" >/dev/null
}
check "the cluster network: bridge on ktbr0 + host-local 10.244.0.0/24, then portmap" pn_chain_set

# Two pods on our plugins, one with a hostPort.
pn_pod hkp1 "$pn_port"
pn_pod hkp2
check "two pods start on our bridge + host-local" wait_until 120 pn_ready hkp1 hkp2
declare -A pn_cid pn_addr
for pn_p in hkp1 hkp2; do pn_cid[$pn_p]=$(pn_sandbox "$pn_p"); pn_addr[$pn_p]=$(pn_ip "$pn_p"); done
note "hkp1 ${pn_addr[hkp1]} (${pn_cid[hkp1]:0:12}), hkp2 ${pn_addr[hkp2]} (${pn_cid[hkp2]:0:12})"
check "each pod's eth0 has its address, host-local's store holds it for its sandbox" eval 'pn_held hkp1 && pn_held hkp2'
# pn_ours_added POD: our bridge, host-local and portmap each logged an ADD of its sandbox.
pn_ours_added() {
	local c=${pn_cid[$1]} p
	for p in bridge host-local portmap; do
		grep -qs "^[^ ]* $p\[[0-9]*\] [a-z]*: ADD \(container=\)\?$c" "$pn_log" || return 1
	done
}
check "our bridge, host-local and portmap logged their ADDs (our log file)" eval 'pn_ours_added hkp1 && pn_ours_added hkp2'
check "lo is up with 127.0.0.1 (our loopback, the node's only one)" \
	eval 'grep -q "inet 127.0.0.1/8 " <<<"$("$KIT/k8s" netns "$DIR" default hkp1 ip -4 -o addr show lo)"'
check "hostPort $pn_port reaches hkp1 through our portmap (the node's ktbr0 address and its InternalIP $pn_node_ip)" \
	wait_until 10 pn_answers "$pn_port" hkp1
check "our portmap's NAT rules name hkp1's sandbox" eval '[ "$(pn_nat_rules "${pn_cid[hkp1]}")" -gt 0 ]'

# The reference binaries, with the pods live.
mkdir -p "$work/pn/ref"
if shared_reference_plugins "$work/pn/ref" "${pn_plugins[@]}" >"$work/pn/ref.out"; then
	pn_store_list >"$work/pn/store-before-ref"
	check "the node's four files swapped for the reference's (v1.9.1)" eval 'pn_swap "$work/pn/ref" && pn_same "$work/pn/ref"'
	pn_pod hkp3 $((pn_port + 1))
	check "a pod starts on the reference bridge + host-local" wait_until 120 pn_ready hkp3
	pn_cid[hkp3]=$(pn_sandbox hkp3)
	pn_addr[hkp3]=$(pn_ip hkp3)
	note "hkp3 ${pn_addr[hkp3]} (${pn_cid[hkp3]:0:12})"
	check "  ... with a free address, held for it; the reference ran (our log has nothing of it)" \
		eval 'pn_held hkp3 && pn_unique && ! pn_logged_add "${pn_cid[hkp3]}"'
	check "  ... the live pods keep theirs: on eth0, store entries unchanged" \
		eval 'pn_held hkp1 && pn_held hkp2 && [ "$(pn_store_list | grep -v "^${pn_addr[hkp3]} ")" = "$(cat "$work/pn/store-before-ref")" ]'
	check "  ... both mappings answer (ours for hkp1, the reference's for hkp3)" \
		wait_until 10 eval 'pn_answers "$pn_port" hkp1 && pn_answers $((pn_port + 1)) hkp3'

	# Back to ours.
	pn_store_list >"$work/pn/store-before-ours"
	check "the node's four files ours again" eval 'pn_swap "$work/pn/ours" && pn_same "$work/pn/ours"'
	pn_pod hkp4 $((pn_port + 2))
	check "a pod starts on our plugins again" wait_until 120 pn_ready hkp4
	pn_cid[hkp4]=$(pn_sandbox hkp4)
	pn_addr[hkp4]=$(pn_ip hkp4)
	note "hkp4 ${pn_addr[hkp4]} (${pn_cid[hkp4]:0:12})"
	check "  ... with a free address, held for it, by ours (logged)" \
		eval 'pn_held hkp4 && pn_unique && pn_logged_add "${pn_cid[hkp4]}"'
	check "  ... the live pods keep theirs: on eth0, store entries unchanged" \
		eval 'pn_held hkp1 && pn_held hkp2 && pn_held hkp3 && [ "$(pn_store_list | grep -v "^${pn_addr[hkp4]} ")" = "$(cat "$work/pn/store-before-ours")" ]'
	check "  ... the three mappings answer" \
		wait_until 10 eval 'pn_answers "$pn_port" hkp1 && pn_answers $((pn_port + 1)) hkp3 && pn_answers $((pn_port + 2)) hkp4'
	pn_del_ours=(hkp1 hkp3)
	pn_del_ref=(hkp2 hkp4)
else
	sed 's/^/# /' "$work/pn/ref.out"
	pn_del_ours=(hkp1 hkp2)
	pn_del_ref=()
fi

# pn_gone POD...: deleted, their DELs through Multus done, nothing of them in the store or NAT.
pn_gone() {
	local p
	for p in "$@"; do
		! kc get pod "$p" -n default >/dev/null 2>&1 &&
			grep -q "Del: default:$p:" "$DIR/logs/multus.log" &&
			! grep -rqs -- "${pn_cid[$p]}" "$pn_store" &&
			[ "$(pn_nat_rules "${pn_cid[$p]}")" = 0 ] || return 1
	done
}
# Deleted under ours: one pod ours added, one the reference added (when it ran).
for pn_p in "${pn_del_ours[@]}"; do kc delete pod "$pn_p" -n default --wait=false >/dev/null 2>&1; done
check "pods deleted under our plugins (${pn_del_ours[*]}): no store entry, no NAT rule left" \
	wait_until 60 pn_gone "${pn_del_ours[@]}"
if [ ${#pn_del_ref[@]} -gt 0 ]; then
	check "the node's four files the reference's again" eval 'pn_swap "$work/pn/ref" && pn_same "$work/pn/ref"'
	for pn_p in "${pn_del_ref[@]}"; do kc delete pod "$pn_p" -n default --wait=false >/dev/null 2>&1; done
	check "pods deleted under the reference (${pn_del_ref[*]}): no store entry, no NAT rule left" \
		wait_until 60 pn_gone "${pn_del_ref[@]}"
fi
check "the store holds no address of this case's pods" \
	eval '! for pn_p in "${pn_pods[@]}"; do [ -z "${pn_addr[$pn_p]:-}" ] || [ ! -e "$pn_store/${pn_addr[$pn_p]}" ] || echo "$pn_p"; done | grep -q .'

# Put back: the DaemonSet, the image, the kit's conflist and bin dir, the log file and
# portmap's chains (none of which the machine had).
kc delete -f "$work/pn/ds.yaml" --wait=true --timeout=60s >/dev/null 2>&1
for pn_p in "${pn_pods[@]}"; do kc delete pod "$pn_p" -n default --ignore-not-found --wait=true --timeout=30s >/dev/null 2>&1; done
pn_ctr images rm "$pn_image" >/dev/null 2>&1
cp -p "$work/pn/conflist" "$pn_conf.hk-new" && mv -f "$pn_conf.hk-new" "$pn_conf"
for pn_f in "$pn_bin"/* "$pn_bin"/.[!.]*; do
	[ -e "$pn_f" ] || continue
	[ -e "$work/pn-bin-before/${pn_f##*/}" ] || rm -f "$pn_f"
done
for pn_f in "$work/pn-bin-before"/*; do
	cmp -s "$pn_f" "$pn_bin/${pn_f##*/}" || { cp -p "$pn_f" "$pn_bin/.${pn_f##*/}.hk-new" && mv -f "$pn_bin/.${pn_f##*/}.hk-new" "$pn_bin/${pn_f##*/}"; }
done
check "the node's bin dir and conflist as they were" \
	eval 'diff -r "$work/pn-bin-before" "$pn_bin" >/dev/null && cmp -s "$work/pn/conflist" "$pn_conf"'
# containerd runs the kit's network again: with the chain still loaded, portmap (not in the
# kit's bin dir) would fail the ADD, our log would name the pod.
pn_pod hkp5
check "a pod after the case starts on the kit's network as before (Debian's plugins, nothing in our log)" \
	eval 'wait_until 120 pn_ready hkp5 && pn_cid[hkp5]=$(pn_sandbox hkp5) && [ -n "${pn_cid[hkp5]}" ] && ! grep -qs "${pn_cid[hkp5]}" "$pn_log"'
kc delete pod hkp5 -n default --wait=true --timeout=60s >/dev/null 2>&1
rm -rf "$work/pn-bin-before"
rm -f "$pn_log"
if [ "$pn_had_chains" = 0 ]; then
	iptables -t nat -S | grep -E '^-A (PREROUTING|OUTPUT|POSTROUTING) .*-j CNI-(HOSTPORT|DN)-' | sed 's/^-A/-D/' |
		while read -r pn_rule; do eval "iptables -t nat $pn_rule"; done
	pn_chains=$(iptables -t nat -S | sed -n 's/^-N \(CNI-\(HOSTPORT\|DN\)-.*\)/\1/p')
	for pn_c in $pn_chains; do iptables -t nat -F "$pn_c"; done
	for pn_c in $pn_chains; do iptables -t nat -X "$pn_c"; done
fi
note "podnet: $((SECONDS - pn_started)) s"
