# Case multirail (after controller-deploy, whose nv-ipam-node DaemonSet still runs): a
# MacvlanNetwork with metaPlugins as the Network Operator renders it (a conflist of
# cniVersion 0.3.1: macvlan with nv-ipam, then NVIDIA's tuning profile, then sbr), four
# rails on one subnet, a pod on all four through Multus. Each rail's address has its own
# routing table and rule, `ip route get ... from <address>` leaves through that rail,
# the profile's ARP settings are on each; the pod's deletion leaves no tuning state on
# the node and no address held. The same NADs with Debian's Go macvlan, tuning and sbr
# in the node's bin dir give the same rules and tables.

mr_node=${K8S_NODE:-node1}
mr_bin=$DIR/node/opt/cni/bin
mr_store=$DIR/node/var/lib/cni/nv-ipam/store
mr_pools=$DIR/node/etc/cni/net.d/nv-ipam.d/node-pools.json
mr_tok=$((RANDOM % 10000))
mr_masters=()
# In the node's mount namespace, where the plugins Multus runs see /run.
mr_node_sh() { nsenter -t "$(cut -d' ' -f1 "$DIR/state/pids/node")" -m -- sh -c "$@"; }
mr_held() {
	"$mr_bin/nv-ipam-tool" show --store "$mr_store" --pool-file "$mr_pools" --pool kmrpool --json |
		jq -r '[.pools[0].allocations[] | select(.podName | startswith("kmr"))] | length'
}
mr_in_pod() { "$KIT/k8s" netns "$DIR" default "$1" "${@:2}"; }
# mr_layout POD: the pod's rules and, per rail, its table's routes, addresses left out:
# what the operator's chain makes, to compare between plugin builds.
mr_layout() {
	local i table
	mr_in_pod "$1" ip -4 rule show | grep -v -e 'lookup local' -e 'lookup main' -e 'lookup default' |
		sed -e 's/^[0-9]*:[[:space:]]*from [0-9.]* //' | sort
	for i in 1 2 3 4; do
		table=$(mr_in_pod "$1" ip -4 rule show | sed -n "s|.*from $(mr_addr "$1" "$i") lookup \\([0-9]*\\).*|\\1|p")
		echo "rail$i: table ${table:-none}"
		[ -z "$table" ] || mr_in_pod "$1" ip -4 route show table "$table" | sed 's/ src [0-9.]*//' | sort
	done
}
mr_addr() { net_pod_ip "$1" "kmr$2"; }
# mr_rails POD: every rail's rule, table, egress and ARP settings.
mr_rails() {
	local pod=$1 i addr table
	for i in 1 2 3 4; do
		addr=$(mr_addr "$pod" "$i")
		table=$(mr_in_pod "$pod" ip -4 rule show | sed -n "s|.*from $addr lookup \\([0-9]*\\).*|\\1|p")
		[ -n "$addr" ] && [ -n "$table" ] || { echo "net$i: no address or no rule" >&2; return 1; }
		mr_in_pod "$pod" ip -4 route get 192.168.185.200 from "$addr" | grep -q "dev net$i " ||
			{ echo "net$i: from $addr not through net$i" >&2; return 1; }
		mr_in_pod "$pod" ip -4 route show table "$table" >"$work/mr-table" 2>&1
		grep -q "^default via 192.168.185.1 dev net$i" "$work/mr-table" ||
			{ { echo "net$i: table $table has no default route through net$i:"; cat "$work/mr-table"; } >&2; return 1; }
		[ "$(mr_in_pod "$pod" cat /proc/sys/net/ipv4/conf/net$i/arp_ignore /proc/sys/net/ipv4/conf/net$i/arp_announce /proc/sys/net/ipv4/conf/net$i/rp_filter | tr '\n' ' ')" = "1 2 0 " ] ||
			{ echo "net$i: the profile's ARP settings are not set" >&2; return 1; }
	done
}

check "the DaemonSet's ipam-node runs (left by controller-deploy)" \
	wait_until 60 eval '[ "$(kc get daemonset nv-ipam-node -n "$NS" -o "jsonpath={.status.numberReady}" 2>/dev/null)" = 1 ]'
printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: kmrpool, namespace: %s}\nspec: {subnet: "192.168.185.0/24", perNodeBlockSize: 32, gateway: "192.168.185.1"}\n' "$NS" |
	kc apply -f - >/dev/null
pool_status IPPool kmrpool "{\"allocations\":[{\"nodeName\":\"$mr_node\",\"startIP\":\"192.168.185.1\",\"endIP\":\"192.168.185.32\"}]}"
check "the node pool file has the pool's block" \
	wait_until 15 eval 'jq -e ".pools.kmrpool.startIP == \"192.168.185.1\"" "$mr_pools" >/dev/null'

# The binaries the cniPlugins slot would hold, ours first; what was there is put back at the end.
mkdir -p "$work/mr-saved"
for mr_p in macvlan tuning sbr; do
	[ ! -e "$mr_bin/$mr_p" ] || cp -p "$mr_bin/$mr_p" "$work/mr-saved/$mr_p"
done
mr_install() { # DIR-OF-macvlan DIR-OF-tuning DIR-OF-sbr
	install -m 0755 "$1" "$mr_bin/macvlan" && install -m 0755 "$2" "$mr_bin/tuning" &&
		install -m 0755 "$3" "$mr_bin/sbr"
}
mr_install "$build/plugins/macvlan/macvlan" "$build/plugins/tuning/tuning" "$build/plugins/sbr/sbr"

# What the operator renders for a MacvlanNetwork with NVIDIA's multi-rail metaPlugins.
mr_profile='{"type":"tuning","sysctl":{"net.ipv4.conf.all.arp_ignore":"1","net.ipv4.conf.all.arp_announce":"2","net.ipv4.conf.all.rp_filter":"0","net.ipv4.conf.IFNAME.arp_ignore":"1","net.ipv4.conf.IFNAME.arp_announce":"2","net.ipv4.conf.IFNAME.rp_filter":"0"}},{"type":"sbr"}'
for i in 1 2 3 4; do
	mr_m=kmr$mr_tok$i
	ip link add "$mr_m" type veth peer name "${mr_m}p" && ip link set "$mr_m" up && ip link set "${mr_m}p" up
	mr_masters+=("$mr_m")
	cat <<EOF | kc apply -f - >/dev/null
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: kmr$i
  namespace: default
spec:
  config: '{"cniVersion":"0.3.1","name":"kmr$i","plugins":[{"type":"macvlan","master":"$mr_m","mode":"bridge","mtu":1500,"ipam":{"type":"nv-ipam","poolName":"kmrpool"}},$mr_profile]}'
EOF
done
mr_nets="'[{\"name\":\"kmr1\"},{\"name\":\"kmr2\"},{\"name\":\"kmr3\"},{\"name\":\"kmr4\"}]'"

net_pod kmr-ours "$mr_nets"
check "a pod on four same-subnet rails (our macvlan, tuning, sbr) starts" wait_until 120 net_pod_ready kmr-ours
# Retried: once under load a probe into the pod (k8s netns) came back without a table's routes.
check "each rail: its own table and rule, traffic from its address leaves through it, ARP profile set" \
	wait_until 20 mr_rails kmr-ours
check "four addresses held for it" eval '[ "$(mr_held)" = 4 ]'
mr_layout kmr-ours >"$work/mr-ours.layout"
check "four rules into four distinct tables" \
	eval '[ "$(grep -c "^lookup" "$work/mr-ours.layout")" = 4 ] && [ "$(grep "^lookup" "$work/mr-ours.layout" | sort -u | wc -l)" = 4 ]'
mr_cid=$(ctr --address "$DIR/node/run/containerd/containerd.sock" -n k8s.io containers ls -q \
	"labels.\"io.kubernetes.pod.name\"==kmr-ours,labels.\"io.cri-containerd.kind\"==sandbox" 2>/dev/null)
check "our tuning keeps one state file per rail on the node" \
	eval '[ "$(mr_node_sh "ls /run/cni-rdma-plugins/tuning 2>/dev/null" | grep -c "$mr_cid")" = 4 ]'
kc delete pod kmr-ours -n default --wait=true --timeout=60s >/dev/null 2>&1
check "the pod deleted: no address held, no tuning state left on the node" \
	eval '[ "$(mr_held)" = 0 ] && [ "$(mr_node_sh "ls /run/cni-rdma-plugins/tuning 2>/dev/null" | grep -c "$mr_cid")" = 0 ]'

# The same NADs with the Go plugins Debian ships (what the reference image installs).
if mr_install /usr/lib/cni/macvlan /usr/lib/cni/tuning /usr/lib/cni/sbr; then
	net_pod kmr-go "$mr_nets"
	check "the same pod with Debian's Go macvlan, tuning and sbr starts" wait_until 120 net_pod_ready kmr-go
	check "  ... and its rails work the same" wait_until 20 mr_rails kmr-go
	mr_layout kmr-go >"$work/mr-go.layout"
	check "  ... with the same rules and tables as ours" cmp -s "$work/mr-ours.layout" "$work/mr-go.layout"
	kc delete pod kmr-go -n default --wait=true --timeout=60s >/dev/null 2>&1
	check "  ... and its deletion holds nothing" eval '[ "$(mr_held)" = 0 ]'
else
	not_ok "Debian's macvlan, tuning and sbr are in /usr/lib/cni (containernetworking-plugins)"
fi

for mr_p in macvlan tuning sbr; do
	if [ -e "$work/mr-saved/$mr_p" ]; then cp -p "$work/mr-saved/$mr_p" "$mr_bin/$mr_p"; else rm -f "$mr_bin/$mr_p"; fi
done
kc delete network-attachment-definitions kmr1 kmr2 kmr3 kmr4 -n default >/dev/null 2>&1
kc delete ippool kmrpool -n "$NS" >/dev/null 2>&1
for mr_m in "${mr_masters[@]}"; do ip link del "$mr_m" 2>/dev/null; done
