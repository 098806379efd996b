# Shared by the daemon suite: ipam-node and ipam-controller as processes against
# apiserver.py, the misbehaving API server on loopback. Source it from a bash script run as
#   SCRIPT IPAM-NODE IPAM-CONTROLLER
#
#   make_cert DIR         a self-signed certificate for 127.0.0.1 (DIR/tls.crt, tls.key)
#   api_start             start apiserver.py in $work/api (TLS on 127.0.0.1, its own CA);
#                         $API_PORT, $KUBECONFIG_FILE
#   api_put COLLECTION JSON      store an object (its watchers see ADDED)
#   api_rules JSON               replace the misbehaviour rules (apiserver.py's header)
#   api_count ERE [SINCE]        requests whose "METHOD PATH" matches ERE, logged at or
#                                after SINCE seconds of the server's clock
#   api_now                      the server's clock (seconds, as in requests.log)
#   free_port VAR                a loopback TCP port nobody listens on now
#   wait_for SECONDS CMD...      until CMD succeeds; 1 if it never did. SECONDS is a hang
#                                guard only, ten times what the wait takes or more: what a
#                                test asserts of a time is a lower bound or an order, never
#                                that something came within SECONDS (docs/testing.md)
#   ok DESC / bad DESC / eq DESC EXPECTED GOT / ge DESC MIN GOT / le DESC MAX GOT
#   summary                      "N passed, M failed"; exit 1 if M > 0
set -euo pipefail

IPAM_NODE=$(realpath "${1:?usage: $0 IPAM-NODE IPAM-CONTROLLER}")
IPAM_CONTROLLER=$(realpath "${2:?usage: $0 IPAM-NODE IPAM-CONTROLLER}")
DAEMON_DIR=$(dirname "${BASH_SOURCE[0]}")
work=$(mktemp -d /tmp/daemon-test.XXXXXX)
PASS=0
FAIL=0
CLEANUPS=()
defer() { CLEANUPS+=("$*"); }
on_exit() {
	local i
	for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[i]}" >/dev/null 2>&1 || true; done
	rm -rf "$work"
}
trap on_exit EXIT

# make_cert DIR: a self-signed EC certificate for 127.0.0.1, DIR/tls.crt and DIR/tls.key.
make_cert() {
	mkdir -p "$1"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-keyout "$1/tls.key" -out "$1/tls.crt" -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 2>/dev/null
}

api_start() {
	make_cert "$work/api"
	python3 "$DAEMON_DIR/apiserver.py" "$work/api" 2>"$work/api/stderr" &
	defer "kill $!; wait $! 2>/dev/null"
	wait_for 10 test -s "$work/api/port" || { echo "apiserver.py did not start" >&2; cat "$work/api/stderr" >&2; exit 1; }
	API_PORT=$(cat "$work/api/port")
	KUBECONFIG_FILE=$work/api/kubeconfig
}

api_curl() { curl -sSk --max-time 10 "$@"; }
api_put() { api_curl -X PUT --data "$2" "https://127.0.0.1:$API_PORT/_test/object?path=$1" >/dev/null; }
api_rules() { api_curl -X POST --data "$1" "https://127.0.0.1:$API_PORT/_test/rules" >/dev/null; }
api_now() { api_curl "https://127.0.0.1:$API_PORT/_test/now"; }
api_count() {
	awk -v since="${2:-0}" -v re="$1" '$1 >= since && ($2 " " $3) ~ re { n++ } END { print n + 0 }' \
		"$work/api/requests.log"
}

free_port() {
	local -n _port=$1
	_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
}

# controller_start: ipam-controller with the operator's flags on the test's API server, for the
# pools of $NS, its log in $work/controller.log; stopped and waited for at exit (a daemon still
# writing into $work when it is removed fails the script).
controller_start() {
	local metrics probe
	free_port metrics
	free_port probe
	"$IPAM_CONTROLLER" --kubeconfig "$KUBECONFIG_FILE" --ippools-namespace "$NS" \
		--metrics-bind-address "127.0.0.1:$metrics" --health-probe-bind-address "127.0.0.1:$probe" \
		2>"$work/controller.log" &
	defer "kill $!; wait $!"
}

wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.1
	done
}

ok() { PASS=$((PASS + 1)); echo "ok: $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL: $1"; }
eq() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: expected '$2', got '$3'"; fi; }
ge() { if [ "$3" -ge "$2" ]; then ok "$1 ($3 >= $2)"; else bad "$1: expected >= $2, got $3"; fi; }
le() { if [ "$3" -le "$2" ]; then ok "$1 ($3 <= $2)"; else bad "$1: expected <= $2, got $3"; fi; }
summary() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}
