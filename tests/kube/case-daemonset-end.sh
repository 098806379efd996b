# Case daemonset-end (after daemonset-start and the other cases): the force-deleted pod's
# address is freed by the DaemonSet's cleaner on its 4th miss (passes on a beat of 60 s,
# each miss in a beat of its own: the operator passes no cleaner flag), so more than two
# periods after the delete (the time printed; the wait a hang guard of two periods past
# the fourth), its metrics say so, and the kubelet started again
# tears the orphan down without trouble. The DaemonSet deleted, the store is left in the
# reference daemon's format with the addresses still held.

store_has_kmv() {
	"$nodefs/opt/cni/bin/nv-ipam-tool" show --store "$nodefs/var/lib/cni/nv-ipam/store" \
		--pool-file "$nodefs/etc/cni/net.d/nv-ipam.d/node-pools.json" --json |
		jq -e '[.pools[].allocations[] | select(.podName == "kmv")] | length == 1' >/dev/null
}
left=$((ds_deleted_at + 6 * 60 - SECONDS))
[ "$left" -gt 60 ] || left=60
check "the force-deleted pod's address is freed" wait_until "$left" eval '! store_has_kmv'
released_line=$(ds_log | grep "released 192.168.180.2 in pool kpool: container [0-9a-f]* interface net1 pod default/kmv: not in the pod list (miss 4 of 4)")
check "the DaemonSet's log says what was released and why" [ -n "$released_line" ]
# When, by the log line's own time (klog JSON: milliseconds since the epoch).
released_ms=$(sed 's/^[^{]*//' <<<"$released_line" | jq -r '.ts | floor' 2>/dev/null | head -1)
freed_s=$(( (${released_ms:-0} - ds_deleted_ms) / 1000 ))
note "released $freed_s s after the force-delete"
check "not before its 4th miss: more than two clean periods (120 s) after the force-delete" \
	eval '[ "$freed_s" -ge 120 ]'
ds_metrics() { "$KIT/k8s" netns "$DIR" "$NS" "$(ds_pod)" curl -s 127.0.0.1:8080/metrics; }
check "its metrics (in the pod, :8080) show the release and the pool" \
	eval 'm=$(ds_metrics) && grep -qx "nv_ipam_node_cleaner_released_total{pool=\"kpool\",type=\"ippool\"} 1" <<<"$m" &&
	      grep -qx "nv_ipam_node_pool_size{pool=\"kpool\",type=\"ippool\"} 15" <<<"$m" &&
	      grep -qx "nv_ipam_node_pool_allocated{pool=\"kpool\",type=\"ippool\"} 0" <<<"$m"'
check "its probes answer in the pod (:8081)" \
	eval '[ "$("$KIT/k8s" netns "$DIR" "$NS" "$(ds_pod)" curl -s 127.0.0.1:8081/readyz)" = ok ]'
# The kubelet back: the orphan sandbox goes, its DEL finds nothing to release.
K8S_NICE=${K8S_NICE:-5} "$KIT/k8s" up-node "$DIR" >>"$work/kit.log" 2>&1
check "kubelet back: the orphan's sandbox is torn down, its DEL through Multus" \
	wait_until 90 eval 'grep -q "Del: default:kmv:" "$DIR/logs/multus.log"'
check "nothing was allocated again meanwhile" eval '! store_has_kmv'

# conf-examples/nv-ipam/monitoring: the headless Service gets the pod as its endpoint on
# :8080 (once ready again: the kubelet was down), and what Prometheus would scrape there
# (the pod network from the host) is /metrics.
kc apply -f "$top/conf-examples/nv-ipam/monitoring/nv-ipam-metrics-services.yaml" >/dev/null
ds_endpoint() {
	kc get endpointslices -n "$NS" -l kubernetes.io/service-name=nv-ipam-node-metrics -o json |
		jq -r 'first(.items[].endpoints[]? | select(.conditions.ready) | .addresses[0]) // empty'
}
check "the example's Service lists the DaemonSet's pod; its /metrics answers there" \
	wait_until 60 eval 'ep=$(ds_endpoint) && [ "$ep" = "$(ds_pod_field status.podIP)" ] &&
		m=$(curl -s --max-time 5 "http://$ep:8080/metrics") && grep -qx "nv_ipam_node_pool_size{pool=\"kpool\",type=\"ippool\"} 15" <<<"$m"'
kc delete -f "$top/conf-examples/nv-ipam/monitoring/nv-ipam-metrics-services.yaml" >/dev/null

# Going back: a live pod on the network, then the DaemonSet's pod stops and hands the store
# over in the reference daemon's format, as that daemon reads it: the live pod's address
# and the old pod's, not the freed one.
net_pod kkeep kmacvlan
check "a live pod on the network before going back" wait_until 120 net_pod_ready kkeep
kkeep_ip=$(net_pod_ip kkeep kmacvlan)
kc delete daemonset nv-ipam-node -n "$NS" >/dev/null
ref_pools_ips() { python3 "$refstore" "$nstore" | awk '{printf "%s %s ", $1, $2}'; }
check "the DaemonSet gone, the store is handed over: the live pod's and the old pod's addresses, as the reference daemon reads them" \
	wait_until 60 eval '[ -e "$nstore.handed-over" ] && [ "$(ref_pools_ips)" = "kpool $kkeep_ip oldpool 10.99.0.5 " ]'
# Back to ours by hand (what the DaemonSet's next start does), so that the pod's DEL can
# release its address.
kkeep_held() { "$nodefs/opt/cni/bin/nv-ipam-tool" show --store "$nstore" --pool-file "$nodefs/etc/cni/net.d/nv-ipam.d/node-pools.json" --pool kpool --json | jq -r '[.pools[0].allocations[] | select(.podName == "kkeep") | .ip] | join(" ")'; }
check "taken back: the live pod's address is ours again" \
	eval '"$nodefs/opt/cni/bin/nv-ipam-tool" adopt --store "$nstore" | grep -q "as handed over" && [ "$(kkeep_held)" = "$kkeep_ip" ]'
kc delete pod kkeep -n default --wait=true --timeout=60s >/dev/null 2>&1
check "and its DEL released it" eval '[ -z "$(kkeep_held)" ]'
kc delete network-attachment-definitions kmacvlan -n default >/dev/null
kc delete ippools --all -n "$NS" >/dev/null
ip link del "$master" 2>/dev/null
