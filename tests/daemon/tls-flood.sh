#!/usr/bin/env bash
# A TLS flood of the webhook port cannot end ipam-controller (issue 45: once it was gone
# after one). The controller runs with a low file descriptor limit (512) while four
# processes flood its webhook with handshakes reset halfway, ClientHellos and garbage,
# handshakes held open, bodies cut off and small reviews, and its certificate is replaced
# every second (each replacement starts a server for the new pair on the listening
# socket). Checked: it runs throughout and no sanitizer speaks; its servers never take the
# last descriptor (nothing in its log says "Too many open files"); every probe and review
# from the prober's address is answered meanwhile (how many within 1 s printed); the
# webhook still answers afterwards, with the last certificate written; a certificate
# replaced when no descriptor is left for the new server leaves the old one serving (it
# aborted the process before), the new one served once they are back; SIGTERM ends it
# with status 0. Waits are hang guards.
. "$(dirname "$0")/lib.sh"

SECONDS_OF_FLOOD=15
NOFILE=512
PROBE_HANG=10

api_start
make_cert "$work/certs"
free_port hook
free_port health
free_port metrics
prlimit --nofile=$NOFILE:$NOFILE "$IPAM_CONTROLLER" --kubeconfig "$KUBECONFIG_FILE" --webhook=true \
	--webhook-bind-address="127.0.0.1:$hook" --webhook-cert-dir="$work/certs" \
	--health-probe-bind-address="127.0.0.1:$health" --metrics-bind-address="127.0.0.1:$metrics" \
	2>"$work/ctl.log" &
ctl_pid=$!
defer "kill $ctl_pid; wait $ctl_pid"
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "127.0.0.1:$health/readyz")" = 200 ]; }
wait_for 30 ready || { bad "ipam-controller is ready"; tail -n 20 "$work/ctl.log"; summary; }

# served: the SHA-256 of the certificate the webhook serves now; file: of the one written.
served() {
	timeout 10 openssl s_client -connect "127.0.0.1:$hook" </dev/null 2>/dev/null |
		openssl x509 -noout -fingerprint -sha256 2>/dev/null
}
file() { openssl x509 -noout -fingerprint -sha256 -in "$work/certs/tls.crt"; }

# A new pair every second, each file replaced by a rename, the key first.
(
	while [ ! -e "$work/stop-rotating" ]; do
		sleep 1
		make_cert "$work/next" && cp "$work/next/tls.key" "$work/certs/.tls.key" &&
			cp "$work/next/tls.crt" "$work/certs/.tls.crt" &&
			mv "$work/certs/.tls.key" "$work/certs/tls.key" && mv "$work/certs/.tls.crt" "$work/certs/tls.crt"
	done
) 2>/dev/null &
rotator=$!
defer "touch $work/stop-rotating; wait $rotator"

# The prober: /healthz and a small review in turn from 127.0.0.1, each on a new connection.
python3 - "$health" "$hook" "$SECONDS_OF_FLOOD" "$PROBE_HANG" >"$work/probe.out" <<'EOF' &
import http.client, ssl, sys, time
health, hook, seconds, hang = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
ctx = ssl.create_default_context()
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
review = (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"f-1",'
          b'"kind":{"group":"nv-ipam.nvidia.com","version":"v1alpha1","kind":"IPPool"},"operation":"CREATE",'
          b'"object":{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool","metadata":{"name":"p1"},'
          b'"spec":{"subnet":"10.9.0.0/16","perNodeBlockSize":16,"gateway":"10.9.0.1"}}}}')
st = {"sent": 0, "ok": 0, "within_1s": 0, "max_ms": 0}
end, i = time.monotonic() + seconds, 0
while time.monotonic() < end:
    i += 1
    t0 = time.monotonic()
    st["sent"] += 1
    try:
        if i % 2:
            c = http.client.HTTPConnection("127.0.0.1", health, timeout=hang, source_address=("127.0.0.1", 0))
            c.request("GET", "/healthz")
        else:
            c = http.client.HTTPSConnection("127.0.0.1", hook, timeout=hang, context=ctx,
                                            source_address=("127.0.0.1", 0))
            c.request("POST", "/validate-nv-ipam-nvidia-com-v1alpha1-ippool", body=review,
                      headers={"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        good = r.status == 200
        c.close()
    except (OSError, http.client.HTTPException):
        good = False
    ms = int((time.monotonic() - t0) * 1000)
    if good:
        st["ok"] += 1
        st["within_1s"] += ms < 1000
        st["max_ms"] = max(st["max_ms"], ms)
    time.sleep(max(0.0, 0.05 - (time.monotonic() - t0)))
print(" ".join("%s %d" % kv for kv in st.items()))
EOF
prober=$!
python3 "$DAEMON_DIR/tls-flood.py" "$hook" "$SECONDS_OF_FLOOD" 4 150 >"$work/flood.out"
wait "$prober"
touch "$work/stop-rotating"
wait "$rotator"
echo "note: $(cat "$work/flood.out"); probes: $(cat "$work/probe.out")"
read -r _ sent _ okd _ within _ max <"$work/probe.out"
ge "probes sent during the flood" 1 "${sent:-0}"
eq "every probe and review answered during the flood" "${sent:-0}" "${okd:--}"
echo "note: $within of $sent answered within 1 s, the slowest in $max ms"

kill -0 "$ctl_pid" 2>/dev/null && ok "ipam-controller ran throughout" || bad "ipam-controller ran throughout"
eq "no descriptor ran out (\"Too many open files\" in its log)" 0 "$(grep -c 'Too many open files' "$work/ctl.log")"
eq "no sanitizer report" 0 "$(grep -c -E 'Sanitizer|runtime error' "$work/ctl.log")"
echo "note: $(grep -c 'serving the new one' "$work/ctl.log") certificates served during the flood"
want=$(file)
current() { [ "$(served)" = "$want" ]; }
if wait_for 30 current; then ok "the webhook answers with the last certificate written"; else
	bad "the webhook answers with the last certificate written: '$(served)', want '$want'"
	tail -n 20 "$work/ctl.log"
fi

# A certificate replaced while the process has no descriptor to spare for a new server
# (its limit lowered so that three are free): the old server keeps serving, and the
# process running (a server that failed to start closed the listening socket, and the old
# code closed it again: libmicrohttpd's "Close socket failed", an abort); the new pair is
# served once descriptors are back.
open=" $(ls /proc/"$ctl_pid"/fd | tr '\n' ' ') "
limit=0 free=0
while [ "$free" -lt 3 ]; do
	[[ $open == *" $limit "* ]] || free=$((free + 1))
	limit=$((limit + 1))
done
prlimit --pid "$ctl_pid" --nofile=$limit:$NOFILE
make_cert "$work/next" && cp "$work/next/tls.key" "$work/certs/.tls.key" && cp "$work/next/tls.crt" "$work/certs/.tls.crt" &&
	mv "$work/certs/.tls.key" "$work/certs/tls.key" && mv "$work/certs/.tls.crt" "$work/certs/tls.crt"
tried() { grep -q "cannot serve the webhook's new certificate" "$work/ctl.log" || ! kill -0 "$ctl_pid" 2>/dev/null; }
wait_for 60 tried || true
kill -0 "$ctl_pid" 2>/dev/null && ok "no descriptor for the new certificate's server: the process runs" ||
	{ bad "no descriptor for the new certificate's server: the process runs"; tail -n 5 "$work/ctl.log"; }
grep -q "the old one serves, tried again at the next check" "$work/ctl.log" && ok "... logged: the old one serves" ||
	{ bad "... logged: the old one serves"; grep -v '^I' "$work/ctl.log" | tail -n 5; }
old_answers() { [ "$(served)" = "$want" ]; }
old_answers && ok "... the old certificate still served" || bad "... the old certificate still served: '$(served)'"
prlimit --pid "$ctl_pid" --nofile=$NOFILE:$NOFILE
want=$(file)
if wait_for 60 current; then ok "descriptors back: the new certificate served"; else bad "descriptors back: the new certificate served"; fi

kill "$ctl_pid"
rc=0
wait "$ctl_pid" || rc=$?
eq "SIGTERM after the flood: status" 0 "$rc"
summary
