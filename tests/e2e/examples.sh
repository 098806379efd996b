#!/usr/bin/env bash
# The shell examples of the docs, run as a user copies them: conf-examples/README.md's
# libcni block and conf-examples/nv-ipam/README.md's private node. Names that are
# machine-wide (the netns, the links, the network name and
# so host-local's directory under /var/lib/cni/networks, the config directory) are made
# unique to this run; nothing else of the block changes. Checks the result, and that
# the block's own clean-up leaves nothing behind.
#   examples.sh BUILD-DIR
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/../netns/lib.sh"
build=$(realpath "${1:?usage: $0 BUILD-DIR}")
t_init

# block FILE LINE: the first ```sh block after the line that starts with LINE.
block() {
	awk -v start="$2" 'index($0, start) == 1 { found = 1 } found && /^```sh$/ { in_block = 1; next }
		in_block && /^```$/ { exit } in_block { print }' "$1"
}

t_name POD ep
t_name MASTER em
t_name PEER eq
net=macvlan-demo-$T_TOK
netconf=$T_DIR/netconf
# The conflist the block copies, under the run's network name.
jq --arg n "$net" '.name = $n' "$top/conf-examples/macvlan/macvlan-cnitool.conflist" >"$T_DIR/macvlan.conflist"
script=$(block "$top/conf-examples/README.md" "A conflist of a plugin directory" |
	sed -e "s|conf-examples/macvlan/macvlan-cnitool.conflist|$T_DIR/macvlan.conflist|g" \
		-e "s|demo-pod|$POD|g; s|demo-master|$MASTER|g; s|demo-peer|$PEER|g" \
		-e "s|macvlan-demo|$net|g; s|/tmp/netconf|$netconf|g" -e "s|build/|$build/|g")
t_ne "[libcni block] found in conf-examples/README.md" "" "$script"
# The block's own names, for the clean-up if it fails half-way.
t_defer "ip netns del '$POD'"
t_defer "ip link del '$MASTER'"
t_defer "rm -rf '/var/lib/cni/networks/$net'"
out=$(cd "$top" && bash -euo pipefail -c "$script" 2>&1)
rc=$?
t_eq "[libcni block] runs to its end" 0 "$rc"
t_contains "[libcni block] add printed the result" '"address": "192.168.5.2/24"' "$out"
t_eq "[libcni block] the pod netns is gone" absent "$([ -e "/run/netns/$POD" ] && echo present || echo absent)"
t_eq "[libcni block] its links are gone" "" "$(ip -br link show | awk -v m="$MASTER" -v p="$PEER" '$1 == m || $1 ~ "^"m"@" || $1 == p || $1 ~ "^"p"@"')"
t_eq "[libcni block] host-local's directory is gone" absent "$([ -e "/var/lib/cni/networks/$net" ] && echo present || echo absent)"
t_eq "[libcni block] its config directory is gone" absent "$([ -e "$netconf" ] && echo present || echo absent)"
t_eq "[libcni block] no cached result of the network left" "" \
	"$(find /var/lib/cni/results -name "$net-*" 2>/dev/null)"

# conf-examples/nv-ipam/README.md's private node: its names (nvx-*) and its directory
# made unique to this run.
t_name NVX nx
nvdir=/run/nv-ipam-example-$T_TOK
script=$(block "$top/conf-examples/nv-ipam/README.md" "To try it without a cluster" |
	sed -e "s|nvx-|$NVX-|g; s|/run/nv-ipam-example|$nvdir|g" -e 's|\$PWD/build/|build/|g' -e "s|build/|$build/|g")
t_ne "[nv-ipam block] found in conf-examples/nv-ipam/README.md" "" "$script"
t_defer "ip netns del '$NVX-pod'"
t_defer "ip link del '$NVX-m'"
t_defer "rm -rf '$nvdir'"
out=$(cd "$top" && bash -euo pipefail -c "$script" 2>&1)
rc=$?
t_eq "[nv-ipam block] runs to its end" 0 "$rc"
t_contains "[nv-ipam block] add printed the result" '"address": "192.168.0.3/24"' "$out"
t_contains "[nv-ipam block] with the pool's route" '"dst": "10.200.0.0/16"' "$out"
t_match "[nv-ipam block] show lists the allocation in host-a's block" \
	'pool my-pool  block 192.168.0.1-192.168.0.100  gateway 192.168.0.1  used 1  free 87.*192\.168\.0\.3 ' \
	"$(tr '\n' ' ' <<<"$out")"
t_contains "[nv-ipam block] del released the address" "1 address(es) released" "$out"
t_eq "[nv-ipam block] the pod netns is gone" absent "$([ -e "/run/netns/$NVX-pod" ] && echo present || echo absent)"
t_eq "[nv-ipam block] its links are gone" "" "$(ip -br link show | awk -v m="$NVX-m" -v p="$NVX-p" '$1 == m || $1 ~ "^"m"@" || $1 == p || $1 ~ "^"p"@"')"
t_eq "[nv-ipam block] its directory (settings, store, log, config) is gone" absent \
	"$([ -e "$nvdir" ] && echo present || echo absent)"
t_eq "[nv-ipam block] no cached result of the network left" "" \
	"$(find /var/lib/cni/results -name "$NVX-net-*" 2>/dev/null)"
t_summary
