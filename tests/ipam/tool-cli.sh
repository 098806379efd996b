#!/usr/bin/env bash
# nv-ipam-tool as an operator runs it: --help and --version, errors for bad input,
# carve on kubectl-shaped fixtures (the reference README's pool, a CIDRPool with a
# static allocation, point-to-point), and node-pools: the file nv-ipam reads, rewritten
# only when its contents change (bytes, inode and mtime compared).
. "$(dirname "$0")/lib.sh"
TOOL=${2:?usage: $0 NV-IPAM NV-IPAM-TOOL}
FIX=$(cd "$(dirname "$0")/fixtures" && pwd)

# --help for every subcommand, on stdout, exit 0; --version.
for c in carve node-pools show release check gc; do
	check "$c --help" "\"$TOOL\" $c --help | grep -q '^Usage: nv-ipam-tool $c'"
done
check "--help lists the commands" "\"$TOOL\" --help | grep -q '^  node-pools'"
check "--version, and the store formats it reads" "[ \"\$(\"$TOOL\" --version | head -1)\" = 'nv-ipam-tool (cni-rdma-plugins) 0.1.0' ] && \"$TOOL\" --version | grep -q '^store formats: reads 2 (writes 2)'"

# Bad usage: exit 2 and a message on stderr, nothing on stdout.
err_of() { "$@" 2>"$work/err" >"$work/out"; echo $?; }
check "no command is a usage error" "[ \$(err_of \"$TOOL\") = 2 ]"
check "unknown command" "[ \$(err_of \"$TOOL\" frobnicate) = 2 ] && grep -q 'unknown command \"frobnicate\"' \"$work/err\""
check "carve without --nodes" "[ \$(err_of \"$TOOL\" carve --pools x) = 2 ] && grep -q 'required' \"$work/err\" && [ ! -s \"$work/out\" ]"
check "release with both selectors" "[ \$(err_of \"$TOOL\" release --container-id a --pod ns/p) = 2 ]"
check "release takes no --pool-file (it never reads one)" "[ \$(err_of \"$TOOL\" release --pool-file /x --container-id a) = 2 ] && grep -q 'invalid option' \"$work/err\""
check "release --pod without a namespace" "[ \$(err_of \"$TOOL\" release --pod p) = 2 ] && grep -q 'NAMESPACE/NAME' \"$work/err\""
check "node-pools without a node" "[ \$(env -u NODE_NAME \"$TOOL\" node-pools --input /dev/null 2>&1 >/dev/null | grep -c required) = 1 ]"

# Bad input: exit 1, the file and the place named on stderr.
printf '{"items": [' >"$work/trunc.json"
check "truncated JSON" "[ \$(err_of \"$TOOL\" carve --pools \"$work/trunc.json\" --nodes \"$FIX/nodes.json\") = 1 ] && grep -q \"$work/trunc.json: malformed JSON\" \"$work/err\""
check "missing file" "[ \$(err_of \"$TOOL\" carve --pools \"$work/nope\" --nodes \"$FIX/nodes.json\") = 1 ] && grep -q 'No such file' \"$work/err\""
printf 'apiVersion: v1\nitems: []\n' >"$work/pools.yaml"
check "YAML given: it says it reads JSON and how to get it" "[ \$(err_of \"$TOOL\" node-pools --node host-a --input \"$work/pools.yaml\" --stdout) = 1 ] && grep -q 'this reads JSON, as .kubectl get ippools,cidrpools -o json. prints it' \"$work/err\""
check "a node no pool gives a block: the nodes that have one are named" "[ \$(err_of \"$TOOL\" node-pools --node host-x --input \"$FIX/pools.json\" --stdout) = 1 ] && grep -q 'the nodes with blocks: host-a, host-b' \"$work/err\""
check "a Node passed as a pool" "[ \$(err_of \"$TOOL\" carve --pools \"$FIX/nodes.json\" --nodes \"$FIX/nodes.json\") = 1 ] && grep -q 'not an IPPool or a CIDRPool' \"$work/err\""

# carve: the fixtures without their status give back the status they hold.
jq 'del(.items[].status)' "$FIX/pools.json" >"$work/nostatus.json"
"$TOOL" carve --pools "$work/nostatus.json" --nodes "$FIX/nodes.json" >"$work/carved.json" 2>"$work/err"
check "carve from scratch reproduces the IPPool status" \
	"[ \"\$(jq -c '.items[0].status' \"$work/carved.json\")\" = \"\$(jq -c '.items[0].status' \"$FIX/pools.json\")\" ]"
check "carve from scratch reproduces the CIDRPool status (static allocation)" \
	"[ \"\$(jq -c '.items[1].status' \"$work/carved.json\")\" = \"\$(jq -c '.items[1].status' \"$FIX/pools.json\")\" ]"
check "carve gives every node a /31 of the point-to-point pool" \
	"[ \"\$(jq -r '[.items[2].status.allocations[].prefix] | join(\" \")' \"$work/carved.json\")\" = '192.168.100.0/31 192.168.100.2/31 192.168.100.4/31 192.168.100.6/31' ]"
check "carve keeps the spec" "[ \"\$(jq -c '.items[0].spec' \"$work/carved.json\")\" = \"\$(jq -c '.items[0].spec' \"$FIX/pools.json\")\" ]"
# A node leaves and another joins: the others keep their blocks, the newcomer reuses.
jq '.items |= map(select(.metadata.name != "host-b")) | .items += [{"kind":"Node","metadata":{"name":"host-d"}}]' \
	"$FIX/nodes.json" >"$work/nodes2.json"
"$TOOL" carve --pools "$FIX/pools.json" --nodes "$work/nodes2.json" >"$work/carved2.json"
check "host-d reuses host-b's block" \
	"[ \"\$(jq -c '[.items[0].status.allocations[] | [.nodeName, .startIP]]' \"$work/carved2.json\")\" = '[[\"host-a\",\"192.168.0.1\"],[\"host-c\",\"192.168.0.49\"],[\"host-d\",\"192.168.0.25\"],[\"k8s-master\",\"192.168.0.73\"]]' ]"
# No room: a warning on stderr, the node left out, exit 0 (as the controller).
jq '.items[0].spec.perNodeBlockSize = 30000' "$work/nostatus.json" >"$work/big.json"
"$TOOL" carve --pools "$work/big.json" --nodes "$FIX/nodes.json" >"$work/carved3.json" 2>"$work/err"
check "NoFreeRanges is reported and the node left out" \
	"grep -q 'Warning NoFreeRanges: no free range for node host-c' \"$work/err\" && [ \"\$(jq '.items[0].status.allocations | length' \"$work/carved3.json\")\" = 2 ]"
jq '.items[0].spec.gateway = "10.0.0.1"' "$FIX/pools.json" >"$work/bad.json"
"$TOOL" carve --pools "$work/bad.json" --nodes "$FIX/nodes.json" >"$work/carved4.json" 2>"$work/err"
check "InvalidSpec empties the status" \
	"grep -q 'IPPool pool1: Warning InvalidSpec' \"$work/err\" && [ \"\$(jq -c '.items[0].status.allocations' \"$work/carved4.json\")\" = '[]' ]"

# node-pools writes only a file --output names: without it, the file on stdout and nothing
# else (the node's own file is ipam-node's); no directory made for it.
out=$("$TOOL" node-pools --node host-a --input "$FIX/pools.json")
check "node-pools without --output prints the file, nothing else" \
	"[ \"\$(jq -c '[.nodeName, .pools.pool1.startIP]' <<<\"\$out\")\" = '[\"host-a\",\"192.168.0.1\"]' ]"
check "node-pools --help says it writes only what --output names" \
	"\"$TOOL\" node-pools --help | grep -q 'Nothing' && \"$TOOL\" node-pools --help | grep -q 'is written unless --output names a file'"
pf=$work/etc/nv-ipam.d/node-pools.json
rc=0
"$TOOL" node-pools --node host-a --input "$FIX/pools.json" --output "$pf" >"$work/out" 2>"$work/err" || rc=$?
check "node-pools makes no directory: --output in one that is not there is exit 1" \
	"[ $rc = 1 ] && grep -qF 'cannot write $pf: its directory does not exist' \"$work/err\" && [ ! -e \"$work/etc\" ]"
# node-pools --output: created, then left alone while nothing changes.
mkdir -p "$work/etc/nv-ipam.d"
out=$("$TOOL" node-pools --node host-a --input "$FIX/pools.json" --output "$pf")
check "node-pools --output creates the file" "[ -f \"$pf\" ] && grep -q 'created' <<<\"\$out\""
check "node-pools reports the pools added" "grep -q '^pool pool1: added (192.168.0.1-192.168.0.24)' <<<\"\$out\" && grep -q '^pool cidrpool/p2p: added (192.168.100.0/31)' <<<\"\$out\""
check "the file is mode 0644" "[ \$(stat -c %a \"$pf\") = 644 ]"
check "the file holds host-a's blocks" \
	"[ \"\$(jq -c '[.nodeName, .pools.pool1.startIP, .pools.pool1.endIP, .pools[\"cidrpool/pool1\"].prefix, .pools.pool1.defaultGateway]' \"$pf\")\" = '[\"host-a\",\"192.168.0.1\",\"192.168.0.24\",\"192.168.0.0/24\",true]' ]"
before=$(stat -c '%i %y' "$pf"); sum=$(sha256sum <"$pf")
sleep 0.05
out=$("$TOOL" node-pools --node host-a --input "$FIX/pools.json" --output "$pf")
check "same input: reported unchanged" "grep -q 'unchanged' <<<\"\$out\""
check "same input: same bytes, inode and mtime" "[ \"\$(stat -c '%i %y' \"$pf\")\" = \"$before\" ] && [ \"\$(sha256sum <\"$pf\")\" = \"$sum\" ]"
# Names from the API reach stderr escaped: a pool listed twice, named with a newline,
# cannot write a line of its own into the agent's log.
jq '.items += [.items[0]] | .items[0].metadata.name = "evil\nFORGED LINE" | .items[-1].metadata.name = "evil\nFORGED LINE"' \
	"$FIX/pools.json" >"$work/forged.json"
"$TOOL" node-pools --node host-a --input "$work/forged.json" --stdout >/dev/null 2>"$work/err" || true
check "node-pools escapes a pool name it reports" "grep -q 'evil.nFORGED LINE' \"$work/err\" && ! grep -q '^FORGED' \"$work/err\""
# Reordered input (another List order, other metadata) is the same file.
jq '.items |= reverse | .items[0].metadata.resourceVersion = "999"' "$FIX/pools.json" >"$work/reordered.json"
"$TOOL" node-pools --node host-a --input "$work/reordered.json" --output "$pf" >/dev/null
check "reordered input: file untouched" "[ \"\$(stat -c '%i %y' \"$pf\")\" = \"$before\" ]"
# A changed block: rewritten (a new inode: rename), the change reported.
jq '(.items[0].status.allocations[] | select(.nodeName == "host-a")) |= (.startIP = "192.168.0.97" | .endIP = "192.168.0.120")' \
	"$FIX/pools.json" >"$work/moved.json"
out=$("$TOOL" node-pools --node host-a --input "$work/moved.json" --output "$pf")
check "changed block: reported" "grep -q '^pool pool1: changed (192.168.0.1-192.168.0.24 -> 192.168.0.97-192.168.0.120)' <<<\"\$out\""
check "changed block: file replaced" "[ \"\$(stat -c %i \"$pf\")\" != \"\${before%% *}\" ] && [ \"\$(jq -r .pools.pool1.startIP \"$pf\")\" = 192.168.0.97 ]"
check "no temporary file left" "[ \"\$(ls -A \"$work/etc/nv-ipam.d\")\" = node-pools.json ]"
# A pool without this node: removed.
jq '.items |= map(select(.metadata.name != "p2p"))' "$FIX/pools.json" >"$work/nop2p.json"
out=$("$TOOL" node-pools --node host-a --input "$work/nop2p.json" --output "$pf")
check "pool gone: reported removed" "grep -q '^pool cidrpool/p2p: removed' <<<\"\$out\""
# An entry the node side would refuse is left out with a warning.
jq '(.items[0].status.allocations[] | select(.nodeName == "host-a")).endIP = "10.9.9.9"' "$FIX/pools.json" >"$work/badalloc.json"
"$TOOL" node-pools --node host-a --input "$work/badalloc.json" --stdout >"$work/out" 2>"$work/err"
check "invalid entry skipped with a warning" "grep -q 'skipping pool \"pool1\"' \"$work/err\" && [ \"\$(jq '.pools | has(\"pool1\")' \"$work/out\")\" = false ]"

# A node no pool gives a block (a typo): an error, the file left as it was.
"$TOOL" node-pools --node host-a --input "$FIX/pools.json" --output "$pf" >/dev/null
sum=$(sha256sum <"$pf")
rc=0
"$TOOL" node-pools --node host-z --input "$FIX/pools.json" --output "$pf" >"$work/out" 2>"$work/err" || rc=$?
check "node of no pool: exit 1, said, the file untouched" \
	"[ $rc = 1 ] && grep -q 'no pool gives node \"host-z\" a block' \"$work/err\" && [ \"\$(sha256sum <\"$pf\")\" = \"$sum\" ]"
"$TOOL" node-pools --node host-z --input "$FIX/pools.json" --stdout --allow-empty >"$work/out"
check "--allow-empty: the file of no pool" "[ \"\$(jq -c '[.nodeName, .pools]' \"$work/out\")\" = '[\"host-z\",{}]' ]"

# conf-examples/nv-ipam: its pool files are what node-pools prints from its pools.json,
# byte for byte, and its statuses what carve computes from the specs and nodes.json.
ex=$(cd "$(dirname "$0")/../../conf-examples/nv-ipam" && pwd)
for n in host-a host-b; do
	"$TOOL" node-pools --node "$n" --input "$ex/pools.json" --stdout >"$work/ex-$n.json"
	check "conf-examples/nv-ipam: node-pools-$n.json is node-pools' output" "cmp -s \"$work/ex-$n.json\" \"$ex/node-pools-$n.json\""
done
jq 'del(.items[].status)' "$ex/pools.json" >"$work/ex-specs.json"
"$TOOL" carve --pools "$work/ex-specs.json" --nodes "$ex/nodes.json" >"$work/ex-carved.json"
check "conf-examples/nv-ipam: pools.json's statuses are carve's" \
	"[ \"\$(jq -c '[.items[] | [.metadata.name, .status]]' \"$ex/pools.json\")\" = \"\$(jq -c '[.items[] | [.metadata.name, .status]]' \"$work/ex-carved.json\")\" ]"

# A status written before the exclusions grew to cover host-b's block: the controller (carve)
# moves host-b to the next free block and leaves the others; until it does, the node
# (node-pools) keeps the block the status gives, as the reference's node does, and nv-ipam
# says why round-robin finds nothing (code 110) and still grants a static IP.
jq '.items[0].spec.exclusions += [{startIP: "192.168.0.25", endIP: "192.168.0.48"}]' "$FIX/pools.json" >"$work/fullex.json"
"$TOOL" carve --pools "$work/fullex.json" --nodes "$FIX/nodes.json" >"$work/fullex-carved.json"
check "fully excluded block: carve moves the node to the next free block, the others kept" \
	"[ \"\$(jq -c '[.items[0].status.allocations[] | [.nodeName, .startIP, .endIP]]' \"$work/fullex-carved.json\")\" = '[[\"host-a\",\"192.168.0.1\",\"192.168.0.24\"],[\"host-b\",\"192.168.0.97\",\"192.168.0.120\"],[\"host-c\",\"192.168.0.49\",\"192.168.0.72\"],[\"k8s-master\",\"192.168.0.73\",\"192.168.0.96\"]]' ]"
fx_dir=$work/fullex
mkdir "$fx_dir"
"$TOOL" node-pools --node host-b --input "$work/fullex.json" --output "$fx_dir/node-pools.json" >/dev/null
check "fully excluded block: node-pools keeps the status's block until it changes" \
	"[ \"\$(jq -c '.pools.pool1 | [.startIP, .endIP]' \"$fx_dir/node-pools.json\")\" = '[\"192.168.0.25\",\"192.168.0.48\"]' ]"
nvipam_node_conf "$fx_dir" "$fx_dir/node-pools.json" "$fx_dir/store"
fx_add() { # CONTAINER-ID [STATIC-IP]: an ADD on pool1 with the node files of $fx_dir
	CNI_COMMAND=ADD CNI_CONTAINERID=$1 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 CNI_IFNAME=net1 \
		CNI_PATH=/nonexistent CNI_ARGS=${2:+"IgnoreUnknown=1;IP=$2"} "$NVIPAM" \
		<<<'{"cniVersion":"1.0.0","name":"net","ipam":{"type":"nv-ipam","poolName":"pool1","confDir":"'"$fx_dir"'"}}'
}
rc=0
fx_add fx1 >"$work/out" 2>/dev/null || rc=$?
check "fully excluded block: ADD fails with code 110 saying every address is excluded" \
	"[ $rc = 1 ] && jq -e '.code == 110 and (.msg | contains(\"every address of this node'\\''s range 192.168.0.25-192.168.0.48 is excluded or the gateway\"))' \"$work/out\" >/dev/null"
check "fully excluded block: a static IP is still granted" \
	"[ \"\$(fx_add fx2 192.168.0.30 | jq -r '.ips[0].address')\" = 192.168.0.30/16 ]"

# The file written is what nv-ipam reads: the README's first ADD on host-a.
"$TOOL" node-pools --node host-a --input "$FIX/pools.json" --output "$pf" >/dev/null
nvipam_node_conf "$work" "$pf" "$work/store"
res=$(CNI_COMMAND=ADD CNI_CONTAINERID=c1 CNI_NETNS=/proc/self/ns/net CNI_NETNS_OVERRIDE=1 CNI_IFNAME=net1 \
	CNI_PATH=/nonexistent "$NVIPAM" <<<'{"cniVersion":"1.0.0","name":"net","ipam":{"type":"nv-ipam","poolName":"pool1","confDir":"'"$work"'"}}' 2>/dev/null)
check "nv-ipam allocates from the written file" \
	"[ \"\$(jq -c '[.ips[0].address, .ips[0].gateway, [.routes[].dst]]' <<<\"\$res\")\" = '[\"192.168.0.2/16\",\"192.168.0.1\",[\"0.0.0.0/0\",\"5.5.0.0/24\"]]' ]"

exit $((fails > 0))
