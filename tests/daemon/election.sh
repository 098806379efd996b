#!/bin/bash
# ipam-controller's election against a refusing API server, and with a host name that is not
# UTF-8. A Lease create refused with 403: every failed round is logged with the create's 403,
# never the 404 of the GET before it, and retried once per retry period; the refusal lifted,
# it leads. An Event PATCH answered 404 (expired) and the POST after it 422: the log names the
# 422. Then, in a UTS namespace of its own (root), a host name holding the bytes 0xff 0xfe: the
# identity is valid UTF-8, the stored Lease names it as it is, and the replica keeps the lease
# over several renewals (no U+FFFD read back, no loss, no transition).
# A short retry period (1 s) through the --leader-elect-* flags; the lease (15 s) and the renew
# deadline (10 s) are the operator's, far beyond what a loaded machine delays a renewal. What
# load cannot move is asserted: the rounds come spaced by the retry period at least (the
# server's log), it leads at the first create after the refusal is lifted, it renews; the
# waits for them are hang guards only ($HANG s).
# PLUGIN_WRAPPER (valgrind ...) runs the controller under a checker.
# shellcheck source=tests/daemon/lib.sh
. "$(dirname "$0")/lib.sh"

LEASES=/apis/coordination.k8s.io/v1/namespaces/el-ns/leases
IPPOOLS=/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/el-ns/ippools
EVENTS=/api/v1/namespaces/el-ns/events
# shellcheck disable=SC2206
WRAP=(${PLUGIN_WRAPPER:-})
HANG=30

api_start

# ctl_args NAMESPACE: the flags of a controller electing in NAMESPACE, its ports its own.
ctl_args() {
	local mp hp
	free_port mp
	free_port hp
	CTL_ARGS=(--leader-elect --leader-elect-namespace "$1" --ippools-namespace el-ns
		--leader-elect-lease-duration 15s --leader-elect-renew-deadline 10s
		--leader-elect-retry-period 1s --metrics-bind-address "127.0.0.1:$mp"
		--health-probe-bind-address "127.0.0.1:$hp" --kubeconfig "$KUBECONFIG_FILE")
}
# stop_ctl PID: SIGTERM, and its exit status is 0.
stop_ctl() {
	local rc=0
	kill -TERM "$1"
	wait "$1" || rc=$?
	eq "it stops at SIGTERM with status 0" 0 "$rc"
}
# lease NAMESPACE FIELD: a spec field of the Lease stored in NAMESPACE.
lease() {
	api_curl "https://127.0.0.1:$API_PORT/_test/objects?path=/apis/coordination.k8s.io/v1/namespaces/$1/leases" |
		python3 -c 'import json, sys
items = json.load(sys.stdin)["items"]
print(items[0]["spec"].get(sys.argv[1], "") if items else "")' "$2"
}
# first_request ERE SINCE: when the first request matching ERE came, at or after SINCE.
first_request() {
	awk -v since="$2" -v re="$1" '$1 >= since && ($2 " " $3) ~ re { print $1; exit }' "$work/api/requests.log"
}
logged_identity() { grep -o 'identity="[^"]*"' "$1" | head -n 1 | sed 's/^identity="//; s/"$//'; }
acquired() { grep -c '"successfully acquired lease"' "$1" || true; }
# spaced ERE SINCE: whether the requests matching ERE at or after SINCE came at least the
# retry period (1 s, to the log's millisecond) apart: a round waits it after its answers.
spaced() {
	awk -v since="$2" -v re="$1" '$1 >= since && ($2 " " $3) ~ re { if (n++ && $1 - prev < 0.998) bad = 1; prev = $1 }
		END { exit bad }' "$work/api/requests.log"
}
n_403() { grep -c "\"leader election round failed\" err=\"creating the lease: POST $LEASES: 403 " "$log" || true; }

# -- a refused Lease create: its own 403 logged, one try per retry period, then leading
api_rules "[{\"method\": \"POST\", \"path\": \"$LEASES\$\", \"action\": \"status\", \"code\": 403}]"
api_put "$IPPOOLS" '{"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "IPPool",
	"metadata": {"name": "el-bad", "namespace": "el-ns", "uid": "el-uid-1"},
	"spec": {"subnet": "not-a-subnet", "perNodeBlockSize": 4, "gateway": "10.0.0.1"}}'
ctl_args el-ns
log=$work/ctl.log
"${WRAP[@]}" "$IPAM_CONTROLLER" "${CTL_ARGS[@]}" 2>"$log" &
pid=$!
defer "kill -KILL $pid"
wait_for "$HANG" grep -qs '"leader election round failed"' "$log" || bad "no failed round logged"
t0=$(api_now)
three_refused() { [ "$(api_count "^POST $LEASES\$" "$t0")" -ge 3 ] && [ "$(n_403)" -ge 3 ]; }
wait_for "$HANG" three_refused || true
ge "lease creates retried while refused" 3 "$(api_count "^POST $LEASES\$" "$t0")"
spaced "^POST $LEASES\$" 0 && ok "lease creates no faster than the retry period" ||
	bad "lease creates no faster than the retry period: $(awk -v re="^POST $LEASES\$" '($2 " " $3) ~ re { print $1 }' "$work/api/requests.log" | paste -sd' ')"
ge "failed rounds name the create's 403" 3 "$(n_403)"
# Else only a read that timed out (the first TLS handshake under valgrind is slow).
other=$(grep '"leader election round failed"' "$log" | grep -v "err=\"creating the lease: POST $LEASES: 403 " |
	grep -v 'err="reading the lease: GET [^ ]*: [A-Za-z ]* timed out' || true)
eq "no round failed otherwise" "" "$other"
eq "no failed round names the GET's 404" 0 "$(grep '"leader election round failed"' "$log" | grep -c ' 404 ' || true)"
eq "no lease stored while refused" "" "$(lease el-ns holderIdentity)"
api_rules '[]'
t_lift=$(api_now)
wait_for "$HANG" grep -qs '"successfully acquired lease"' "$log" || true
eq "the refusal lifted: it leads" 1 "$(acquired "$log")"
# (A create already under way at the lift may be the one that succeeds: none after it then.)
le "at its next round: creates since the lift" 1 "$(api_count "^POST $LEASES\$" "$t_lift")"
first=$(first_request "^POST $LEASES\$" "$t_lift")
[ -z "$first" ] || echo "note: the create came $(awk -v a="$t_lift" -v b="$first" 'BEGIN { printf "%.1f", b - a }') s after the lift"
id_a=$(logged_identity "$log")
eq "the stored Lease names its identity" "$id_a" "$(lease el-ns holderIdentity)"

# -- an Event's PATCH answered 404 (expired), the POST after it 422: the log names the 422
wait_for "$HANG" eval "[ \"\$(api_count '^POST $EVENTS\$')\" -ge 1 ]" || true
ge "the invalid pool's Warning was posted" 1 "$(api_count "^POST $EVENTS\$")"
# The echo of its status write carves it again: the same Warning, counted by a PATCH.
wait_for "$HANG" eval "[ \"\$(api_count '^PATCH $EVENTS/')\" -ge 1 ]" || true
ge "the repeat counted by a PATCH" 1 "$(api_count "^PATCH $EVENTS/")"
api_rules "[{\"method\": \"PATCH\", \"path\": \"$EVENTS/\", \"action\": \"status\", \"code\": 404},
	{\"method\": \"POST\", \"path\": \"$EVENTS\$\", \"action\": \"status\", \"code\": 422}]"
t_rules=$(api_now)
# The pool changed (a label): carved again, the same Warning again: a PATCH of its count.
api_put "$IPPOOLS" '{"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "IPPool",
	"metadata": {"name": "el-bad", "namespace": "el-ns", "uid": "el-uid-1", "labels": {"a": "b"}},
	"spec": {"subnet": "not-a-subnet", "perNodeBlockSize": 4, "gateway": "10.0.0.1"}}'
# Each pass of the pool (the change, then the echo of its status write) tries it once.
event_tries_done() {
	local p
	p=$(api_count "^PATCH $EVENTS/" "$t_rules")
	[ "$p" -ge 1 ] && [ "$(api_count "^POST $EVENTS\$" "$t_rules")" = "$p" ] &&
		[ "$(grep -c '"cannot write an Event"' "$log")" = "$p" ]
}
wait_for "$HANG" event_tries_done || true
patches=$(api_count "^PATCH $EVENTS/" "$t_rules")
ge "the repeat a PATCH of the Event again" 1 "$patches"
eq "each refused PATCH followed by a POST" "$patches" "$(api_count "^POST $EVENTS\$" "$t_rules")"
ev=$(grep '"cannot write an Event"' "$log" || true)
eq "each failure logged" "$patches" "$(grep -c . <<<"$ev" || true)"
eq "each names the POST's 422" "$patches" "$(grep -c "err=\"POST $EVENTS: 422 " <<<"$ev" || true)"
eq "none the PATCH's 404" 0 "$(grep -c ' 404 ' <<<"$ev" || true)"
api_rules '[]'
stop_ctl "$pid"

# -- a host name that is not UTF-8, in a UTS namespace of its own
if ! command -v unshare >/dev/null || ! unshare -u true 2>/dev/null; then
	echo "note: unshare -u is not available (not root?): the host name part is left out"
	summary
	exit
fi
ctl_args el-uts
log=$work/ctl-uts.log
unshare -u python3 -c 'import os, socket, sys
socket.sethostname(b"el-\xff\xfe-host")
os.execvp(sys.argv[1], sys.argv[1:])' "${WRAP[@]}" "$IPAM_CONTROLLER" "${CTL_ARGS[@]}" 2>"$log" &
pid=$!
defer "kill -KILL $pid"
wait_for "$HANG" grep -qs '"successfully acquired lease"' "$log" || bad "it never led"
t0=$(api_now)
wait_for "$HANG" eval "[ \"\$(api_count '^PUT /apis/coordination.k8s.io/v1/namespaces/el-uts/leases/' '$t0')\" -ge 4 ]" || true
ge "renewals while it leads" 4 "$(api_count '^PUT /apis/coordination.k8s.io/v1/namespaces/el-uts/leases/' "$t0")"
id_b=$(logged_identity "$log")
holder=$(lease el-uts holderIdentity)
case $id_b in
el-__-host_????????-????-4???-????-????????????) ok "identity: each invalid byte a '_' ($id_b)" ;;
*) bad "identity: each invalid byte a '_': $id_b" ;;
esac
eq "the stored Lease names it as it is (valid UTF-8, no U+FFFD)" "$id_b" "$holder"
eq "the lease held throughout: acquired once" 1 "$(acquired "$log")"
eq "never lost" 0 "$(grep -c '"leader election lost' "$log" || true)"
eq "no transition" 0 "$(lease el-uts leaseTransitions)"
eq "no round failed while it led" "" \
	"$(sed -n '/"successfully acquired lease"/,$p' "$log" | grep '"leader election round failed"' || true)"
stop_ctl "$pid"
summary
