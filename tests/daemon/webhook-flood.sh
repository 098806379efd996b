#!/usr/bin/env bash
# ipam-controller against CIDRPools whose staticAllocations list thousands of nodes: the
# HTTPS webhook answers a review of 3,000 nodes listed twice with a short denial (it took
# 101 s and 2.3 GB; its cost is the unit test's count of comparisons, its time here a
# note), a small review is answered while a 3 MiB one is still arriving (its last byte
# held back: an order, not a time), and a leader that finds such a pool already stored
# (no webhook in front of it) logs a short line and posts a short InvalidSpec Event. The
# waits and curl's limits are hang guards only.
# Usage: webhook-flood.sh IPAM-NODE IPAM-CONTROLLER
source "$(dirname "$0")/lib.sh"

api_start
make_cert "$work/certs"
free_port wh_port
free_port metrics_port
free_port health_port
ns=kube-system
pools=/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$ns/cidrpools

# pool.json: N nodes listed twice, each time with a prefix of its own; review.json: its
# review; big.json: a review of as many such entries as 3 MiB hold; small.json: a valid one.
python3 - "$work" <<'EOF'
import json, sys
d = sys.argv[1]
def pool(n, name="flood", twice=True):
    allocs = []
    for i in range(n):
        for k in ((2 * i, 2 * i + 1) if twice else (i,)):
            allocs.append({"nodeName": "node-%05d" % i, "prefix": "10.%d.%d.0/24" % (k // 256, k % 256)})
    return {"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "CIDRPool",
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {"cidr": "10.0.0.0/8", "perNodeNetworkPrefix": 24, "gatewayIndex": 1,
                     "staticAllocations": allocs}}
def review(obj, uid):
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": uid, "kind": {"kind": "CIDRPool"}, "operation": "CREATE",
                        "name": obj["metadata"]["name"], "object": obj}}
json.dump(pool(3000), open(d + "/pool.json", "w"))
json.dump(review(pool(3000), "u-3000"), open(d + "/review.json", "w"))
json.dump(review(pool(32000), "u-big"), open(d + "/big.json", "w"))
json.dump(review(pool(100, "small", False), "u-small"), open(d + "/small.json", "w"))
EOF
api_curl -X PUT --data-binary @"$work/pool.json" "https://127.0.0.1:$API_PORT/_test/object?path=$pools" >/dev/null

"$IPAM_CONTROLLER" --kubeconfig "$KUBECONFIG_FILE" --ippools-namespace "$ns" \
	--webhook=true --webhook-bind-address "127.0.0.1:$wh_port" --webhook-cert-dir "$work/certs" \
	--metrics-bind-address "127.0.0.1:$metrics_port" \
	--health-probe-bind-address "127.0.0.1:$health_port" 2>"$work/controller.log" &
ctl=$!
defer "kill $ctl"

# The leader's InvalidSpec: one Event whose message is short and counts what it leaves out.
if wait_for 60 eval '[ "$(api_count "^POST /api/v1/namespaces/$ns/events")" -ge 1 ]'; then
	ok "the leader posts an InvalidSpec Event"
else
	bad "no Event (a hang guard of 60 s)"
fi
api_curl "https://127.0.0.1:$API_PORT/_test/objects?path=/api/v1/namespaces/$ns/events" >"$work/events.json"
read -r reason msg_len more < <(python3 -c '
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["items"] if e.get("reason") == "InvalidSpec"]
m = ev[0]["message"] if ev else ""
print(ev[0]["reason"] if ev else "-", len(m.encode()), int("and 2990 more errors]" in m))
' "$work/events.json")
eq "the Event's reason" InvalidSpec "$reason"
le "the Event's message length" 16384 "$msg_len"
eq "the Event's message counts the errors past ten" 1 "$more"
longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' "$work/controller.log")
le "the controller's longest log line" 40000 "$longest"

# The webhook: a review of 3,000 nodes listed twice is denied at once, in a short answer.
wait_for 30 curl -sk -o /dev/null "https://127.0.0.1:$wh_port/healthz" || true
url=https://127.0.0.1:$wh_port/validate-nv-ipam-nvidia-com-v1alpha1-cidrpool
read -r code secs size < <(curl -sk --max-time 60 -o "$work/answer.json" -w '%{http_code} %{time_total} %{size_download}\n' \
	-H 'Content-Type: application/json' --data-binary @"$work/review.json" "$url")
eq "the review of 3,000 nodes twice is answered" 200 "$code"
le "its answer's size" 20000 "$size"
echo "note: its time: $secs s"
eq "it is denied naming node-00000 once and counting the rest" "False 1 1" "$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["response"]
m = r["status"]["message"]
print(r["allowed"], m.count("multiple entries for node node-00000,"), int("and 2990 more errors]" in m))
' "$work/answer.json")"

# A small review is answered while a 3 MiB one is still arriving; then the 3 MiB one is.
python3 - "$wh_port" "$work/big.json" "$work/small.json" >"$work/both.out" 2>&1 <<'PY' || true
import http.client, json, socket, ssl, sys, time
port, big, small = int(sys.argv[1]), open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read()
path = "/validate-nv-ipam-nvidia-com-v1alpha1-cidrpool"
ctx = ssl.create_default_context()
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
# Hang guards only: no answer here takes more than a second.
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=30))
s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
          % (path.encode(), len(big)))
s.sendall(big[:-1])
t0 = time.monotonic()
c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
c.request("POST", path, body=small, headers={"Content-Type": "application/json"})
r = c.getresponse()
print("small", r.status, str(json.loads(r.read())["response"]["allowed"]).lower(),
      "%.0f" % ((time.monotonic() - t0) * 1000))
t0 = time.monotonic()
s.sendall(big[-1:])
r = http.client.HTTPResponse(s)
r.begin()
print("big", r.status, str(json.loads(r.read())["response"]["allowed"]).lower(),
      "%.0f" % ((time.monotonic() - t0) * 1000))
PY
read -r _ code allowed ms < <(grep '^small' "$work/both.out" || echo "small - - -")
eq "a small review while a 3 MiB one arrives: answered" 200 "$code"
eq "the small pool is allowed" true "$allowed"
echo "note: its time: $ms ms"
read -r _ code allowed ms < <(grep '^big' "$work/both.out" || echo "big - - -")
eq "the 3 MiB review, once whole, is answered" 200 "$code"
eq "the 3 MiB review is denied" false "$allowed"
echo "note: its time from its last byte: $ms ms"
[ "$code" = 200 ] || cat "$work/both.out"
hwm=$(awk '/^VmHWM:/ { print int($2 / 1024) }' "/proc/$ctl/status")
le "the controller's peak RSS (MiB)" 400 "$hwm"
kill -0 "$ctl" && ok "the controller is still running"
summary
