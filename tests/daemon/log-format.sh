#!/bin/bash
# One log per program (issue 43): every line ipam-node writes is in its --logging-format,
# the store's own lines included (they went out as a plugin's "cni[PID] warning:" lines
# on stderr, which a pipeline reading the DaemonSet's JSON drops or misreads). The store
# logs a warning when the reference daemon's store file comes back after ipam-node took
# the store back (the late write of a daemon stopping): ipam-node hands over (SIGTERM),
# takes back (a second start, then SIGKILL: no second handover), and the handed-over
# file is put back. Then with --logging-format=json every line of the output parses as a
# JSON object and the store's warning is one (v 0, a caller); with text, every line is
# klog's and the warning a W line. nv-ipam-tool adopt, on the same store, says the
# warning as its own ("nv-ipam-tool: warning: ..."), not as a plugin's.
. "$(dirname "$0")/lib.sh"
. "$DAEMON_DIR/nodelib.sh"

NVIPAM_TOOL=${NVIPAM_TOOL:-$(dirname "$NVIPAM_BIN")/tool/nv-ipam-tool}
LATE='the reference daemon wrote its store file again after nv-ipam took it over'

api_start
api_put /apis/nv-ipam.nvidia.com/v1alpha1/namespaces/kube-system/ippools '{"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "IPPool", "metadata": {"name": "pool1", "namespace": "kube-system"}, "spec": {"subnet": "10.77.0.0/16", "perNodeBlockSize": 256, "gateway": "10.77.0.1"}, "status": {"allocations": [{"nodeName": "node-a", "startIP": "10.77.0.1", "endIP": "10.77.0.255"}]}}'

# json_check LOG: every line a JSON object with ts, caller and msg; the lines that are
# not on stdout, then "<lines> <the store's warning as JSON: its v and caller>".
json_check() {
	python3 - "$1" "$LATE" <<'PY'
import json, re, sys
bad, lines, late = [], 0, []
with open(sys.argv[1], encoding='utf-8', errors='replace') as f:
    for line in f:
        lines += 1
        try:
            o = json.loads(line)
        except ValueError:
            bad.append(line.rstrip('\n'))
            continue
        if not isinstance(o, dict) or not {'ts', 'caller', 'msg'} <= o.keys():
            bad.append(line.rstrip('\n'))
            continue
        if sys.argv[2] in o['msg']:
            late.append('v=%s caller=%s' % (o.get('v'), 'file.c:N' if re.fullmatch(r'[a-z_]+\.c:[0-9]+', o['caller']) else o['caller']))
for b in bad:
    print('not JSON: ' + b)
print(lines, ';'.join(late) or 'none')
PY
}

started() { grep -q "config for shim CNI" "$work/$1.log"; }

# 1. Adopted, an ADD, handed over by SIGTERM: the file the reference daemon starts on.
node_start a --logging-format=json
wait_for 30 started a || { bad "first start"; cat "$work/a.log"; }
wait_for 30 grep -q "node pool file is in sync" "$work/a.log" || bad "pool file in sync"
node_add c1 >"$work/add.out" 2>&1 && grep -q '"10\.77\.0\.' "$work/add.out" && ok "nv-ipam ADD" ||
	{ bad "nv-ipam ADD"; cat "$work/add.out"; }
kill -TERM "$a_PID"
wait_for 30 node_gone "$a_PID" || bad "first stop"
grep -q "store handed over in the reference daemon's format" "$work/a.log" && ok "handed over" ||
	{ bad "handed over"; cat "$work/a.log"; }
cp "$STORE" "$work/late.json"

# 2. Taken back, then killed: no second handover, the pool logs are the store.
node_start b --logging-format=json
wait_for 30 started b || { bad "second start"; cat "$work/b.log"; }
grep -q "store taken back as handed over" "$work/b.log" && ok "taken back" || { bad "taken back"; cat "$work/b.log"; }
kill -9 "$b_PID"
wait_for 30 node_gone "$b_PID" || bad "SIGKILL"

# The daemon's late write lands: its file as it was handed over, put back by rename.
late_write() {
	cp "$work/late.json" "$STORE.l3tmp"
	mv "$STORE.l3tmp" "$STORE"
}

# 3. JSON: the store's warning is a JSON line like every other.
late_write
node_start c --logging-format=json
wait_for 30 started c || { bad "third start"; cat "$work/c.log"; }
grep -q "store merged with the reference daemon's late write" "$work/c.log" && ok "merged" ||
	{ bad "merged"; cat "$work/c.log"; }
kill -9 "$c_PID"
wait_for 30 node_gone "$c_PID" || bad "SIGKILL"
for name in a b c; do
	json_check "$work/$name.log" >"$work/$name.check"
	eq "$name: lines that are not JSON" "" "$(grep '^not JSON: ' "$work/$name.check")"
	ge "$name: lines" 5 "$(tail -1 "$work/$name.check" | cut -d' ' -f1)"
done
grep -F "$LATE" "$work/c.log" | sed 's/^/note: /'
eq "the store's warning as JSON (a warning: v 0)" "v=0 caller=file.c:N" "$(tail -1 "$work/c.check" | cut -d' ' -f2-)"

# 4. Text: every line is klog's (I, W or E, date, time, thread, file:line]), the store's
# warning a W line.
late_write
node_start d
wait_for 30 started d || { bad "fourth start"; cat "$work/d.log"; }
kill -9 "$d_PID"
wait_for 30 node_gone "$d_PID" || bad "SIGKILL"
KLOG='^[IWE][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} +[0-9]+ [a-z_]+\.c:[0-9]+\] "'
eq "d: lines that are not klog text" "" "$(grep -Ev "$KLOG" "$work/d.log")"
ge "d: lines" 5 "$(wc -l <"$work/d.log")"
grep -F "$LATE" "$work/d.log" | sed 's/^/note: /'
eq "the store's warning as klog text" 1 "$(grep -E "$KLOG" "$work/d.log" | grep -F "$LATE" | grep -c '^W')"

# 5. nv-ipam-tool adopt merges the same late write: the warning in the tool's own words.
late_write
"$NVIPAM_TOOL" adopt --store "$STORE" >"$work/tool.out" 2>"$work/tool.err" && ok "nv-ipam-tool adopt" ||
	{ bad "nv-ipam-tool adopt"; cat "$work/tool.out" "$work/tool.err"; }
eq "nv-ipam-tool: the store's warning" 1 "$(grep -c "^nv-ipam-tool: warning: store $STORE: $LATE" "$work/tool.err")"
eq "nv-ipam-tool: lines that are not its own" "" "$(grep -v '^nv-ipam-tool: ' "$work/tool.err")"
summary
