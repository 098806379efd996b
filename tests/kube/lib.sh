# Helpers of the kube suite's cases (sourced by run.sh, which brought the cluster up).
# In scope: $DIR (the kit's directory), $KIT (the kit), $top (the source tree), $build,
# $work (this run's scratch directory), $NS (the operator's namespace).

kc() { "$DIR/bin/kubectl" --kubeconfig "$DIR/admin.kubeconfig" "$@"; }

# TAP: one line per check, numbered by the driver's counter.
t_n=${t_n:-0}
t_failed=${t_failed:-0}
ok() { t_n=$((t_n + 1)); echo "ok $t_n - $*"; }
not_ok() { t_n=$((t_n + 1)); t_failed=$((t_failed + 1)); echo "not ok $t_n - $*"; failure_state "$t_n" >&2; }
# failure_state N: what the cluster looked like at failed check N, on stderr, which CI
# prints of a failed suite (its TAP lines and the case logs it does not).
failure_state() {
	echo "--- at failed check $1 ($(date -u +%T)): pods, the node's nv-ipam images, free space"
	kc get pods -A -o wide --no-headers 2>&1 | head -n 30
	ctr --address "$DIR/node/run/containerd/containerd.sock" -n k8s.io images ls -q 2>&1 | grep -F nv-ipam
	df -h "$DIR" /tmp 2>&1
}
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
note() { echo "# $*"; }

# wait_until SECONDS CMD...: CMD until it succeeds, every 50 ms, for at most SECONDS. SECONDS
# is a hang guard only, ten times what the wait takes or more (a product's period plus
# room where the wait is for it): a check asserts that the event came, its order, counts;
# never that it came within a time (docs/testing.md, "Time in tests").
wait_until() {
	local s=$1 end
	shift
	end=$(($(date +%s%N) + $(awk -v s="$s" 'BEGIN { printf "%.0f", s * 1e9 }')))
	until "$@"; do
		[ "$(date +%s%N)" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# ms_since NANOSECONDS: milliseconds elapsed since a date +%s%N.
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

api_port() { sed -n 's/^apiserver=//p' "$DIR/state/ports"; }
etcd_url() { echo "http://127.0.0.1:$(sed -n 's/^etcd=//p' "$DIR/state/ports")"; }

# sa_dir NAMESPACE SA: a fresh bound token for the service account (created if missing),
# laid out as a pod's service account directory; prints the directory.
sa_dir() {
	K8S_NICE=${K8S_NICE:-5} "$KIT/k8s" token "$DIR" "$1" "$2" >/dev/null 2>>"$work/kit.log" || return 1
	echo "$DIR/sa/$1-$2"
}

# in_pod SA_DIR CMD...: CMD as a pod of that service account would run it: in a mount
# namespace of its own where SA_DIR is /var/run/secrets/kubernetes.io/serviceaccount,
# with KUBERNETES_SERVICE_HOST/PORT naming the API. Execs: the PID is CMD's.
in_pod() {
	local sa=$1
	shift
	KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$(api_port) \
		exec unshare -m --propagation private -- bash -c '
			sa=$1; shift
			mount -t tmpfs -o mode=0755 ipam-node-run /run &&
			mkdir -p /run/secrets/kubernetes.io/serviceaccount &&
			mount --bind "$sa" /run/secrets/kubernetes.io/serviceaccount || exit 99
			exec "$@"' in_pod "$sa" "$@"
}

# pid_alive PID
pid_alive() { kill -0 "$1" 2>/dev/null; }

# stop_pid PID: SIGTERM, then wait (SIGKILL after 5 s: a check has failed by then).
stop_pid() {
	local pid=$1 i
	pid_alive "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null
	# A hang guard: the kubelet's default grace period before its SIGKILL.
	for i in $(seq 600); do pid_alive "$pid" || break; sleep 0.05; done
	pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# The kit's API server killed (a crash: its connections end at once; a SIGTERM would have
# it drain watches for a minute) and started again. Its process is the kit's, found by
# the PID the kit recorded.
apiserver_pid() { cut -d' ' -f1 "$DIR/state/pids/kube-apiserver"; }
apiserver_stop() {
	local pid
	pid=$(apiserver_pid)
	kill -KILL "$pid"
	wait_until 10 eval '! kill -0 '"$pid"' 2>/dev/null'
}
apiserver_start() {
	local i
	for i in 1 2 3; do
		K8S_NICE=${K8S_NICE:-5} "$KIT/k8s" up-api "$DIR" >>"$work/kit.log" 2>&1 && return 0
		# Under load, or while another apt-get holds its lock, a start can fail.
		note "k8s up-api failed ($(tail -1 "$work/kit.log")), trying again"
		sleep 5
	done
	return 1
}

# etcd's revision now, and compaction up to it (what an API server's periodic compaction
# does): a watch from an older resourceVersion then gets 410 Gone.
etcd_revision() {
	ETCDCTL_API=3 etcdctl --endpoints="$(etcd_url)" endpoint status -w json | jq '.[0].Status.header.revision'
}
etcd_compact() { ETCDCTL_API=3 etcdctl --endpoints="$(etcd_url)" compact "$1" >/dev/null; }

# A pool's status written through the status subresource, as the controller writes it.
# pool_status KIND NAME STATUS_JSON
pool_status() {
	local plural
	case $1 in IPPool) plural=ippools ;; CIDRPool) plural=cidrpools ;; esac
	echo "{\"status\": $3}" >"$work/status.json"
	"$probe" --kubeconfig "$DIR/admin.kubeconfig" send PATCH \
		"/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$NS/$plural/$2/status" "$work/status.json" \
		application/merge-patch+json >/dev/null
}

# A busybox pod in default with the networks annotation naming NAD (as a workload asks for a
# secondary network), its readiness, and the first address Multus reports for NAD.
# net_pod NAME NAD / net_pod_ready NAME / net_pod_ip NAME NAD
net_pod() {
	kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: default
  annotations:
    k8s.v1.cni.cncf.io/networks: $2
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox:local
    command: ["sh", "-c", "exec sleep 3600"]
EOF
}
net_pod_ready() { [ "$(kc get pod "$1" -n default -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; }
net_pod_ip() {
	kc get pod "$1" -n default -o 'jsonpath={.metadata.annotations.k8s\.v1\.cni\.cncf\.io/network-status}' |
		jq -r --arg n "default/$2" '.[] | select(.name == $n) | .ips[0]'
}
