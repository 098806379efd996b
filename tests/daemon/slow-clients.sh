#!/usr/bin/env bash
# Slow clients (issue 32): connections that send nothing, or a header line every 2.5 s, to
# ipam-node's probes and metrics, ipam-controller's probes and its webhook (TLS), 16 then
# 64 a server from the prober's own address, with 160 from another one (its limit: 128).
# Meanwhile every /healthz, /readyz, /metrics and AdmissionReview is answered: none
# refused, dropped or failed (how many within kubelet's 1 s, and the slowest, are printed:
# a loaded machine moves them); the servers close each trickling connection however often
# a byte arrives, never before its deadline (5 s, the webhook's 10 s), and refuse none of
# the prober's address; the other address is held to its share of the connections (what
# closes before a deadline is a refusal); large request bodies are held to a budget that
# leaves small reviews alone. The daemons keep running throughout. Waits are hang guards.
. "$(dirname "$0")/lib.sh"

SECONDS_PER_PHASE=12
# The servers' deadlines (serve/http.c).
DEADLINE_MS=5000
DEADLINE_TLS_MS=10000
PER_IP=128
# Hang guards: a probe's (kubelet's 1 s, ten times), the wait for the trickling connections'
# closes past the phase.
PROBE_HANG=10
CLOSE_HANG=60

api_start
mkdir -p "$work/node/bin" "$work/node/conf" "$work/node/store"
make_cert "$work/certs"
free_port node_health
free_port node_metrics
free_port ctl_health
free_port ctl_metrics
free_port hook

"$IPAM_NODE" --node-name=node-a --kubeconfig "$KUBECONFIG_FILE" \
	--store-file="$work/node/store/store" --cni-bin-dir="$work/node/bin" \
	--cni-conf-dir="$work/node/conf" --cni-skip-nv-ipam-binary-copy \
	--cni-log-file="$work/node/cni.log" --stale-ip-check-interval=0 \
	--health-probe-bind-address="127.0.0.1:$node_health" \
	--metrics-bind-address="127.0.0.1:$node_metrics" 2>"$work/node.log" &
node_pid=$!
defer "kill $node_pid; wait $node_pid"
"$IPAM_CONTROLLER" --kubeconfig "$KUBECONFIG_FILE" --webhook=true \
	--webhook-bind-address="127.0.0.1:$hook" --webhook-cert-dir="$work/certs" \
	--health-probe-bind-address="127.0.0.1:$ctl_health" \
	--metrics-bind-address="127.0.0.1:$ctl_metrics" 2>"$work/ctl.log" &
ctl_pid=$!
defer "kill $ctl_pid; wait $ctl_pid"

ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "127.0.0.1:$1/readyz")" = 200 ]; }
if wait_for 30 ready "$node_health" && wait_for 30 ready "$ctl_health"; then
	ok "ipam-node and ipam-controller are ready"
else
	bad "ipam-node and ipam-controller are ready"
	tail -5 "$work/node.log" "$work/ctl.log"
	summary
fi

review='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"slow-1",'
review+='"kind":{"group":"nv-ipam.nvidia.com","version":"v1alpha1","kind":"IPPool"},'
review+='"resource":{"group":"nv-ipam.nvidia.com","version":"v1alpha1","resource":"ippools"},'
review+='"name":"p1","namespace":"kube-system","operation":"CREATE","object":{"apiVersion":'
review+='"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool","metadata":{"name":"p1","namespace":'
review+='"kube-system"},"spec":{"subnet":"10.9.0.0/16","perNodeBlockSize":16,"gateway":"10.9.0.1"}}}}'
probes=$(printf '[
 {"name": "node-healthz", "port": %d, "tls": false, "method": "GET", "path": "/healthz", "expect": 200},
 {"name": "node-readyz", "port": %d, "tls": false, "method": "GET", "path": "/readyz", "expect": 200},
 {"name": "node-metrics", "port": %d, "tls": false, "method": "GET", "path": "/metrics", "expect": 200},
 {"name": "ctl-healthz", "port": %d, "tls": false, "method": "GET", "path": "/healthz", "expect": 200},
 {"name": "ctl-readyz", "port": %d, "tls": false, "method": "GET", "path": "/readyz", "expect": 200},
 {"name": "webhook", "port": %d, "tls": true, "method": "POST", "expect": 200, "allowed": true,
  "path": "/validate-nv-ipam-nvidia-com-v1alpha1-ippool", "body": %s}]' \
	"$node_health" "$node_health" "$node_metrics" "$ctl_health" "$ctl_health" "$hook" \
	"$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$review")")
# targets SRC IDLE TRICKLE [SUFFIX]: the four servers, each attacked from SRC; without a
# SUFFIX the phase waits for each trickling connection's close.
targets() {
	local name port tls deadline
	for t in node-health:$node_health:false node-metrics:$node_metrics:false \
		ctl-health:$ctl_health:false webhook:$hook:true; do
		IFS=: read -r name port tls <<<"$t"
		deadline=$DEADLINE_MS
		[ "$tls" = false ] || deadline=$DEADLINE_TLS_MS
		printf '{"name": "%s%s", "port": %d, "tls": %s, "src": "%s", "idle": %d, "trickle": %d, "deadline": %d, "await": %s}\n' \
			"$name" "${4:-}" "$port" "$tls" "$1" "$2" "$3" "$deadline" "$([ -z "${4:-}" ] && echo true || echo false)"
	done | paste -sd, -
}
# phase NAME ATTACK-LIST: run slow-clients.py; its lines in $work/NAME.out.
phase() {
	python3 "$DAEMON_DIR/slow-clients.py" "{\"seconds\": $SECONDS_PER_PHASE, \"hang\": $CLOSE_HANG,
		\"timeout\": $PROBE_HANG, \"interval\": 0.02, \"attack\": [$2], \"probes\": $probes}" >"$work/$1.out"
}
# field FILE KIND NAME KEY: a number of slow-clients.py's output.
field() { awk -v k="$2" -v n="$3" -v f="$4" '$1 == k && $2 == n { for (i = 3; i < NF; i += 2) if ($i == f) print $(i + 1) }' "$1"; }

# check_probes FILE WHAT: every probe answered as expected, none refused, dropped or failed
# (kubelet's 1 s: printed).
check_probes() {
	local name sent okd within max
	for name in node-healthz node-readyz node-metrics ctl-healthz ctl-readyz webhook; do
		sent=$(field "$1" probe "$name" sent)
		okd=$(field "$1" probe "$name" ok)
		within=$(field "$1" probe "$name" within_1s)
		max=$(field "$1" probe "$name" max_ms)
		ge "$2: $name probes sent" 1 "${sent:-0}"
		eq "$2: $name: every probe answered" "${sent:-0}" "${okd:--}"
		echo "note: $2: $name: ${within:-0} of ${sent:-0} answered within 1 s, the slowest in ${max:-?} ms"
	done
}
# check_deadlines FILE WHAT TRICKLE: each trickling connection was closed by its server
# (closed_trickle: never before its deadline), none of them refused.
check_deadlines() {
	local name
	for name in node-health node-metrics ctl-health webhook; do
		eq "$2: $name closed each trickling connection at its deadline" "$3" "$(field "$1" attack "$name" trickle_slots_closed)"
		eq "$2: $name refused none (closed none before its deadline)" 0 "$(field "$1" attack "$name" refused)"
	done
}

# A kept-alive connection gets a deadline for each request: requests a second apart on one
# connection, one of them sent more than the deadline (5 s) after the first answer came
# (so after the connection's accept) and answered, outlive a single deadline, whatever the
# load. A connection closed sooner (a stall of seconds between two requests may end one,
# as it should) is tried again, three times at most (during the first phase).
python3 - "$node_health" >"$work/keepalive.out" 2>&1 <<'EOF' &
import http.client, sys, time
for attempt in range(3):
    c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
    first = port = None
    n = 0
    try:
        while True:
            sent = time.monotonic()
            c.request("GET", "/healthz")
            r = c.getresponse()
            r.read()
            if r.status != 200 or port not in (None, c.sock.getsockname()[1]):
                break
            n += 1
            if first is None:
                first, port = time.monotonic(), c.sock.getsockname()[1]
            elif sent > first + 5:
                print("outlived its deadline: %d requests, the last sent %.1f s after the first answer"
                      % (n, sent - first))
                sys.exit(0)
            time.sleep(1)
    except (OSError, http.client.HTTPException) as e:
        print("attempt %d: %r" % (attempt + 1, e))
    c.close()
sys.exit(1)
EOF
keepalive=$!

phase p16 "$(targets 127.0.0.1 8 8)"
check_probes "$work/p16.out" "16 slow connections a server"
check_deadlines "$work/p16.out" "16 slow connections a server" 8
rc=0
wait "$keepalive" || rc=$?
eq "one kept-alive connection outlives a deadline, a request at a time" 0 "$rc"
sed 's/^/note: /' "$work/keepalive.out"

# 64 from the prober's address, and from another one more than an address may hold.
phase p64 "$(targets 127.0.0.1 32 32),$(targets 127.0.0.2 64 $((PER_IP - 64 + 32)) -other)"
check_probes "$work/p64.out" "64 slow connections a server, $((PER_IP + 32)) from another address"
check_deadlines "$work/p64.out" "64 slow connections a server" 32
for name in node-health node-metrics ctl-health webhook; do
	ge "the other address is held to $PER_IP connections of $name" 32 "$(field "$work/p64.out" attack "$name-other" refused)"
done

# Request bodies: four connections that each send 4 MiB but the last byte hold the budget
# of large bodies; a fifth large one is refused (503), a review of a few KiB still passes.
python3 - "$hook" "$review" >"$work/bodies.out" 2>&1 <<'EOF' || true
import http.client, json, socket, ssl, sys
port, review = int(sys.argv[1]), sys.argv[2].encode()
ctx = ssl.create_default_context()
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
path = "/validate-nv-ipam-nvidia-com-v1alpha1-ippool"
size = 4 << 20
held = []
for _ in range(4):
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0)))
    s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (path.encode(), size))
    s.sendall(b" " * (size - 1))
    held.append(s)
def post(body):
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=5)
    c.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    return r.status, r.read()
status, _ = post(b" " * size)
print("large", status)
status, data = post(review)
print("small", status, json.loads(data)["response"]["allowed"])
EOF
eq "a fifth large body while four are held: 503" "large 503" "$(grep large "$work/bodies.out")"
eq "a small review meanwhile: answered" "small 200 True" "$(grep small "$work/bodies.out")"

kill -0 "$node_pid" 2>/dev/null && kill -0 "$ctl_pid" 2>/dev/null && ok "the daemons ran throughout" ||
	bad "the daemons ran throughout"
# Stopped, each exits 0 (under ASan or valgrind: nothing leaked, no error).
for d in node:$node_pid ctl:$ctl_pid; do
	kill "${d#*:}"
	rc=0
	wait "${d#*:}" || rc=$?
	eq "${d%%:*} exits 0 on SIGTERM" 0 "$rc"
	[ "$rc" = 0 ] || tail -20 "$work/${d%%:*}.log"
done
summary
