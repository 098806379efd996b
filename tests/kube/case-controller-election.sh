# Case controller-election: two ipam-controller replicas as the operator's Deployment runs
# them (its flags, its account), against the kit's API server. Only the leader writes: every
# status change the API shows is one the leader logged writing (its resourceVersion), none
# the other's. The leader killed (no release): the other takes the lease, not before it
# expired (15 s), and writes. The new leader cut off from the API (its token made
# worthless): it stops leading, the other takes over and writes, and once back it writes
# nothing. A leader's SIGTERM releases the lease, the other takes it. Waits are hang guards
# (ten lease durations for a takeover); how long each took is printed.

. "$top/tests/kube/ctl-lib.sh"
el_nodes=()
el_node() { # NAME [LABELS]: a Node object (no kubelet behind it)
	node_yaml "$@" | kc apply -f - >/dev/null && el_nodes+=("$1")
}
# rvs_since LOG FROM_LINE: the resourceVersions of pool el-ip the watch saw change, from a line on.
rvs_seen() {
	sed -n "$2,\$p" "$1" | grep -o "$CNS/el-ip=[0-9]*" | cut -d= -f2 | sort -un
}
# written_by NAME RV...: whether every RV is one the replica logged writing.
written_by() {
	local name=$1 rv
	shift
	for rv in "$@"; do ctl_written_rvs "$name" | grep -qx "$rv" || { note "rv $rv not written by $name"; return 1; }; done
}
writes_after() { # NAME LINE: "pool status updated" lines of the replica's log after a line number
	sed -n "$(($2 + 1)),\$p" "$work/ctl-$1.log" | grep -c '"pool status updated"'
}
lines() { wc -l <"$work/ctl-$1.log"; }
status_has_node() { pool_allocs ippool el-ip | jq -e --arg n "$1" 'map(.nodeName) | index($n) != null' >/dev/null; }

kc delete lease dd1643cf.nvidia.com -n "$CNS" --ignore-not-found >/dev/null
sa_a=$(ctl_sa a)
sa_b=$(ctl_sa b)
el_node el-n1 '{rack: r1}'
el_node el-n2 '{rack: r2}'
printf 'apiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: IPPool\nmetadata: {name: el-ip, namespace: %s}\nspec: {subnet: "10.80.0.0/16", perNodeBlockSize: 32, gateway: "10.80.0.1"}\n---\napiVersion: nv-ipam.nvidia.com/v1alpha1\nkind: CIDRPool\nmetadata: {name: el-cp, namespace: %s}\nspec: {cidr: "10.81.0.0/16", perNodeNetworkPrefix: 24, gatewayIndex: 1}\n' \
	"$CNS" "$CNS" | kc apply -f - >/dev/null
"$probe" --kubeconfig "$DIR/admin.kubeconfig" reflect "$GVP/ippools" >"$work/el-watch.log" 2>&1 &
watch_pid=$!

ctl_start a "$sa_a"
ctl_start b "$sa_b"
check "both replicas ready" wait_until 20 eval 'ctl_ready a && ctl_ready b'
check "one of them holds the lease" wait_until 20 eval '[ -n "$(lease_holder)" ]'
holder=$(lease_holder)
if [ "$holder" = "$(ctl_identity a)" ]; then leader=a follower=b; else leader=b follower=a; fi
note "leader: $leader ($holder)"
check "the lease names one replica, the one whose log says it acquired it" \
	eval '[ "$holder" = "$(ctl_identity $leader)" ] && grep -q "\"successfully acquired lease\"" "$work/ctl-$leader.log" && ! grep -q "\"successfully acquired lease\"" "$work/ctl-$follower.log"'
check "the leader carved both pools" wait_until 10 eval 'status_has_node el-n2 && pool_allocs cidrpool el-cp | jq -e "length >= 2" >/dev/null'

# -- only the leader writes: node churn while both run
from=$(($(wc -l <"$work/el-watch.log") + 1))
el_node el-n3 '{rack: r1}'
node_yaml el-n1 '{rack: r3}' | kc apply -f - >/dev/null
kc delete node el-n2 >/dev/null
el_node el-n4
check "the changes reach the status" wait_until 60 eval 'status_has_node el-n4 && ! status_has_node el-n2'
sleep 1
mapfile -t seen < <(rvs_seen "$work/el-watch.log" "$from")
check "every status change the API shows (${#seen[@]}) was written by the leader" \
	eval '[ ${#seen[@]} -ge 2 ] && written_by $leader "${seen[@]}"'
check "the follower wrote nothing" eval '[ "$(writes_after $follower 0)" = 0 ]'
check "the follower's metrics: not leading, no write" \
	eval '[ "$(ctl_metric $follower nv_ipam_controller_leader)" = 0 ] && [ "$(ctl_metric $follower nv_ipam_controller_status_writes_total)" = 0 ]'

# -- the leader killed (SIGKILL: no release): the other writes, once the lease expired
kill -KILL "$(ctl_pid $leader)"
wait "$(ctl_pid $leader)" 2>/dev/null
t_kill=$(date +%s%N)
el_node el-n5
check "the leader killed: the other replica writes" wait_until 150 status_has_node el-n5
note "the new leader wrote $(ms_since "$t_kill") ms after the kill"
# The leader renewed at most 2 s before the kill; the other saw that and waits 15 s from it.
check "it did not take the lease before it expired (12 s at least)" eval '[ $(ms_since "$t_kill") -ge 12000 ]'
check "the lease is the new leader's, one transition more" \
	eval '[ "$(lease_holder)" = "$(ctl_identity $follower)" ] && [ "$(kc get lease dd1643cf.nvidia.com -n "$CNS" -o "jsonpath={.spec.leaseTransitions}")" -ge 1 ]'
# From here: "cur" leads, "other" is the killed replica started again.
cur=$follower other=$leader
sa_of() { [ "$1" = a ] && echo "$sa_a" || echo "$sa_b"; }

# -- the leader cut off from the API: its token made worthless
ctl_start "$other" "$(sa_of "$other")"
check "the killed replica is back, following" \
	wait_until 20 eval 'ctl_ready $other && [ "$(ctl_metric $other nv_ipam_controller_leader)" = 0 ]'
cp "$(sa_of "$cur")/token" "$work/el-token"
cut_line=$(lines "$cur")
from=$(($(wc -l <"$work/el-watch.log") + 1))
echo "not-a-token" >"$(sa_of "$cur")/token"
t_cut=$(date +%s%N)
el_node el-n6
check "cut off, the leader stops leading (its renew deadline: 10 s)" \
	wait_until 100 eval 'sed -n "$((cut_line + 1)),\$p" "$work/ctl-$cur.log" | grep -q "\"leader election lost"'
note "it stopped leading $(ms_since "$t_cut") ms after the cut"
check "the other replica takes over and writes" wait_until 150 status_has_node el-n6
note "the other wrote $(ms_since "$t_cut") ms after the cut"
cp "$work/el-token" "$(sa_of "$cur")/token"
el_node el-n7
check "a change after the cut-off replica came back is written" wait_until 60 status_has_node el-n7
# Its rounds succeed again: its failures stop growing over three retry periods (2 s each),
# which load can only postpone (the wait a hang guard).
fails_stop() {
	local a
	a=$(ctl_metric "$cur" nv_ipam_controller_election_failures_total)
	sleep 6
	[ "$a" -ge 1 ] && [ "$(ctl_metric "$cur" nv_ipam_controller_election_failures_total)" = "$a" ]
}
check "the cut-off replica's rounds succeed again (its failures stop)" wait_until 120 fails_stop
mapfile -t seen < <(rvs_seen "$work/el-watch.log" "$from")
check "every status change since the cut (${#seen[@]}) was written by the new leader" \
	eval '[ ${#seen[@]} -ge 2 ] && written_by $other "${seen[@]}"'
check "the cut-off replica wrote nothing since the cut, and does not lead" \
	eval '[ "$(writes_after $cur "$cut_line")" = 0 ] && [ "$(ctl_metric $cur nv_ipam_controller_leader)" = 0 ]'
check "its failed rounds are logged with the API's 401" \
	eval 'sed -n "$((cut_line + 1)),\$p" "$work/ctl-$cur.log" | grep -q "\"leader election round failed\".*401"'

# -- SIGTERM: the leader releases the lease (no holder, 1 s), the other takes it at its next
# round rather than a lease (15 s) later: what the release guarantees is asserted, the time
# printed.
t_term=$(date +%s%N)
ctl_stop "$other"
check "SIGTERM: the leader ends, its lease released" \
	eval '! pid_alive "$(ctl_pid $other)" && grep -q "\"lease released" "$work/ctl-$other.log"'
check "the other replica holds the lease" \
	wait_until 60 eval '[ "$(lease_holder)" = "$(ctl_identity $cur)" ]'
note "taken over $(ms_since "$t_term") ms after the SIGTERM"
ctl_stop "$cur"

# -- a host name that is not UTF-8 (bytes 0xff 0xfe): the real API server stores a string
# with U+FFFD for them, so an identity made of the raw bytes lost its own lease at every
# renewal; made valid UTF-8 first, it keeps it.
printf '%s\n' '#!/bin/sh' \
	"exec unshare -u python3 -c 'import os, socket, sys" \
	'socket.sethostname(b"el-\xff\xfe-host")' \
	"os.execvp(sys.argv[1], sys.argv[1:])' \"$ctl_bin\" \"\$@\"" >"$work/ctl-badhost"
chmod +x "$work/ctl-badhost"
el_real_bin=$ctl_bin
ctl_bin=$work/ctl-badhost
# The operator's lease and renew deadline (15 s, 10 s), which no load reaches between two
# renewals (the check is of the identity), a retry period of 1 s for renewals to count.
ctl_start u "$sa_a" --leader-elect-lease-duration=15s --leader-elect-renew-deadline=10s \
	--leader-elect-retry-period=1s
ctl_bin=$el_real_bin
check "host name with bytes 0xff 0xfe: it takes the lease under an identity of '_' for them" \
	wait_until 30 eval '[ -n "$(ctl_identity u)" ] && [ "$(lease_holder)" = "$(ctl_identity u)" ] &&
		[[ "$(ctl_identity u)" == el-__-host_* ]]'
el_transitions=$(kc get lease dd1643cf.nvidia.com -n "$CNS" -o 'jsonpath={.spec.leaseTransitions}' 2>/dev/null)
# Four renewals seen (renewTime changing), each a read back of the stored holder.
el_renewals=$work/el-renewals
: >"$el_renewals"
renewed_4() {
	kc get lease dd1643cf.nvidia.com -n "$CNS" -o 'jsonpath={.spec.renewTime}{"\n"}' >>"$el_renewals" 2>/dev/null
	[ "$(sort -u "$el_renewals" | grep -c .)" -ge 5 ]
}
check "  ... renews it" wait_until 60 renewed_4
check "  ... and keeps it over its renewals: no transition, never lost" \
	eval '[ "$(lease_holder)" = "$(ctl_identity u)" ] &&
		[ "$(kc get lease dd1643cf.nvidia.com -n "$CNS" -o "jsonpath={.spec.leaseTransitions}")" = "$el_transitions" ] &&
		! grep -q "\"leader election lost" "$work/ctl-u.log" && [ "$(grep -c "\"successfully acquired lease\"" "$work/ctl-u.log")" = 1 ]'
ctl_stop u
stop_pid "$watch_pid"
kc delete ippool el-ip -n "$CNS" >/dev/null
kc delete cidrpool el-cp -n "$CNS" >/dev/null
kc delete node "${el_nodes[@]}" --ignore-not-found >/dev/null 2>&1
kc delete lease dd1643cf.nvidia.com -n "$CNS" --ignore-not-found >/dev/null
