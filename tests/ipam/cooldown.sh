#!/usr/bin/env bash
# Released-address cooldown (nv-ipam.conf's releasedIPCooldownSeconds, ipam-node's
# --released-ip-cooldown): round robin skips an address released less than the cooldown
# ago while another is free, and hands it out when nothing else is; without the setting
# it is picked as before. A network config cannot set it.
. "$(dirname "$0")/lib.sh"

# Four addresses: .2 to .5 (.1 is the gateway).
cat >"$work/pools.json" <<JSON
{"pools": {"small": {"subnet": "10.79.0.0/29", "startIP": "10.79.0.1", "endIP": "10.79.0.5",
                      "gateway": "10.79.0.1"}}}
JSON
conf='{"cniVersion":"1.0.0","name":"net1","ipam":{"type":"nv-ipam","poolName":"small","confDir":"'$work'"}}'
ip_of() { nvipam ADD "$1" 2>/dev/null | jq -r '.ips[0].address // .code'; }
del() { nvipam DEL "$1" >/dev/null 2>&1; }
fill() { for c in a b c d; do ip_of "$c" >/dev/null; done; }

# Without a cooldown: the address released last is the next pick after the wrap.
fill
del b
del a
check "no cooldown: round robin takes .2, released a moment ago" '[ "$(ip_of e)" = 10.79.0.2/29 ]'
check "and writes no record of releases" '[ -z "$(ls "$work/store.d"/*.released 2>/dev/null)" ]'

# With one of 2 s.
rm -rf "$work/store" "$work/store.d"
nvipam_node_conf "$work" "$work/pools.json" "$work/store" ', "releasedIPCooldownSeconds": 2'
fill
del b
sleep 3 # .3's cooldown is over
del a
check "cooldown: .2, released a moment ago, is skipped for .3, whose cooldown is over" \
	'[ "$(ip_of e)" = 10.79.0.3/29 ]'
check "the release is recorded beside the pool's log" 'grep -q "^10.79.0.2 [0-9]*$" "$work/store.d/small.released"'
check "with nothing else free, the cooling address is handed out" '[ "$(ip_of f)" = 10.79.0.2/29 ]'
check "then the pool is full (110)" '[ "$(ip_of g)" = 110 ]'

conf='{"cniVersion":"1.0.0","name":"net1","ipam":{"type":"nv-ipam","poolName":"small","confDir":"'$work'","releasedIPCooldownSeconds":0}}'
out=$(nvipam ADD h 2>/dev/null || true)
check "a network config cannot set it (code 7)" \
	'[ "$(jq -r .code <<<"$out")" = 7 ] && grep -q "releasedIPCooldownSeconds is the node" <<<"$out"'

echo "$((7 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
