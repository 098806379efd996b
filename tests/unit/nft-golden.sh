#!/usr/bin/env bash
# Writes tests/unit/golden/nft/*.hex: the netlink messages Debian's nft sends for the
# rules common/netfilter builds (nft --debug=mnl, read back into bytes). Each case is a
# setup run quietly and one command whose messages between the batch's begin and end are
# kept, one line per message: its type in hex, then its payload (after the netlink
# header) in hex. Run as root; it works in a netns of its own (rm-nftgold).
# Usage: tests/unit/nft-golden.sh [OUT_DIR]
set -euo pipefail
out=${1:-$(dirname "$0")/golden/nft}
ns=rm-nftgold
ip netns add $ns
trap 'ip netns del $ns' EXIT
mkdir -p "$out"

# case NAME SETUP COMMAND
case_() {
	ip netns exec $ns nft flush ruleset
	[ -z "$2" ] || ip netns exec $ns nft -f - <<<"$2"
	ip netns exec $ns nft --debug=mnl -f - <<<"$3" 2>&1 | python3 -c '
import re, sys
msgs, cur, inbatch = [], None, False
for line in sys.stdin:
    line = re.sub(r"\x1b\[[0-9;]*m", "", line.rstrip("\n"))
    m = re.match(r"^\|\s+(\d{10})\s+\|\s+\|\s*message length", line)
    if m:
        cur = {"len": int(m.group(1)), "bytes": b""}
        continue
    m = re.match(r"^\|\s*(\d{5})\s*\|\s*([A-Z-]{4})\s*\|\s+\|\s*type", line)
    if m and cur is not None and "type" not in cur:
        cur["type"] = int(m.group(1))
        msgs.append(cur)
        continue
    m = re.match(r"^\|\s*([0-9a-f]{2}) ([0-9a-f]{2}) ([0-9a-f]{2}) ([0-9a-f]{2})\s+\|\s+\|\s+(extra header|data)", line)
    if m and cur is not None:
        cur["bytes"] += bytes(int(x, 16) for x in m.groups()[:4])
        continue
    m = re.match(r"^\|(\d{5})\|([NB-]{2})\|(\d{5})\|", line)
    if m and cur is not None:
        ln, fl, ty = int(m.group(1)), m.group(2), int(m.group(3))
        if "N" in fl: ty |= 0x8000
        if "B" in fl: ty |= 0x4000
        cur["bytes"] += ln.to_bytes(2, "little") + ty.to_bytes(2, "little")
for m in msgs:
    if m["type"] == 0x10:
        inbatch = True
        continue
    if m["type"] == 0x11:
        inbatch = False
        continue
    if inbatch:
        assert len(m["bytes"]) + 16 == m["len"], (m["len"], len(m["bytes"]))
        print("%04x %s" % (m["type"], m["bytes"].hex()))
' > "$out/$1.hex"
	[ -s "$out/$1.hex" ] || { echo "no message for $1" >&2; exit 1; }
}

T4='add table ip rmnat'
C4="$T4
add chain ip rmnat hostports
add chain ip rmnat hostports_all
add chain ip rmnat prerouting { type nat hook prerouting priority dstnat; }"
TI='add table inet rmmasq'
CI="$TI
add chain inet rmmasq masq_checks
add chain inet rmmasq postrouting { type nat hook postrouting priority srcnat; }"
T6='add table ip6 rmnat
add chain ip6 rmnat hostports'

case_ table-comment "" 'add table inet rmmasq { comment "Masquerading for plugins"; }'
case_ table-plain "" 'add table ip rmnat'
case_ chain-base "$TI" 'add chain inet rmmasq postrouting { type nat hook postrouting priority srcnat; }'
case_ chain-comment "$TI" 'add chain inet rmmasq masq_checks { comment "Masquerade traffic"; }'
case_ chain-policy "add table ip rmfw" 'add chain ip rmfw forward { type filter hook forward priority 0; policy drop; }'
case_ chain-flush "$C4" 'flush chain ip rmnat prerouting'
case_ chain-delete "$C4" 'delete chain ip rmnat hostports'
case_ table-delete "$C4" 'delete table ip rmnat'
case_ rule-multicast-return "$CI" 'add rule inet rmmasq postrouting ip daddr 224.0.0.0/4 return'
case_ rule-multicast6-return "$CI" 'add rule inet rmmasq postrouting ip6 daddr ff00::/8 return'
case_ rule-goto "$CI" 'add rule inet rmmasq postrouting goto masq_checks'
case_ rule-masq "$CI" 'add rule inet rmmasq masq_checks ip saddr 10.1.0.5 ip daddr != 10.1.0.0/24 masquerade comment "3d8c, net: n, if: eth0, id: c1"'
case_ rule-masq6 "$CI" 'add rule inet rmmasq masq_checks ip6 saddr fd00::5 ip6 daddr != fd00::/64 masquerade'
case_ rule-fib-jump "$C4" 'add rule ip rmnat prerouting fib daddr type local jump hostports_all'
case_ rule-dnat "$C4" 'add rule ip rmnat hostports tcp dport 8080 dnat to 10.1.0.5:80 comment "cid1"'
case_ rule-dnat-hostip "$C4" 'add rule ip rmnat hostports ip daddr 192.0.2.1 udp dport 53 dnat to 10.1.0.5:5353 comment "cid1"'
case_ rule-dnat6 "$T6" 'add rule ip6 rmnat hostports tcp dport 8080 dnat to [fd00::5]:80 comment "cid1"'
case_ rule-masq-hairpin "$C4" 'add rule ip rmnat hostports ip saddr 127.0.0.1 ip daddr 10.1.0.5 masquerade'
case_ rule-snat "$C4" 'add rule ip rmnat hostports ip saddr 10.1.0.5 snat to 192.0.2.1'
case_ rule-ct-accept "add table ip rmfw
add chain ip rmfw forwarding" 'add rule ip rmfw forwarding ct state established,related accept'
case_ rule-mark-set "$C4" 'add rule ip rmnat hostports meta mark set meta mark | 0x00002000'
case_ rule-mark-match "$C4" 'add rule ip rmnat hostports meta mark & 0x00002000 == 0x00002000 masquerade'
case_ rule-iifname "$C4" 'add rule ip rmnat hostports iifname "cni0" ip saddr 10.1.0.0/24 accept'
case_ rule-oifname-drop "$C4" 'add rule ip rmnat hostports oifname != "cni0" drop'
TB='add table bridge rmbr
add chain bridge rmbr PREROUTING { type filter hook prerouting priority -300; policy accept; }
add chain bridge rmbr cni-br-iface-c1-eth0
add chain bridge rmbr cni-br-iface-c1-eth0-mac'
case_ table-bridge "" 'add table bridge rmbr'
case_ chain-bridge-base "add table bridge rmbr" 'add chain bridge rmbr PREROUTING { type filter hook prerouting priority -300; policy accept; }'
case_ rule-bridge-iifname-jump "$TB" 'add rule bridge rmbr PREROUTING iifname "veth0a1b2c3d" jump cni-br-iface-c1-eth0 comment "macspoofchk-c1-eth0"'
case_ rule-bridge-ether-return "$TB" 'add rule bridge rmbr cni-br-iface-c1-eth0-mac ether saddr 02:42:ac:11:00:02 return comment "macspoofchk-c1-eth0"'
case_ rule-bridge-drop "$TB" 'add rule bridge rmbr cni-br-iface-c1-eth0-mac drop comment "macspoofchk-c1-eth0"'
case_ rule-delete "$C4
add rule ip rmnat hostports accept" 'delete rule ip rmnat hostports handle 4'
echo "wrote $(ls "$out" | wc -l) goldens in $out"
