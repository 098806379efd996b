#!/usr/bin/env python3
"""ipam-node's files through every power loss the models allow (docs/testing.md, "crash").

  ipamnode.py IPAM-NODE NV-IPAM NV-IPAM-TOOL

ipam-node started on a node whose store it handed over at its last stop, against
tests/daemon/apiserver.py serving an IPPool: the owner lock file, the store taken back,
nv-ipam.conf, the node pool file, then two ADDs by nv-ipam and ipam-node's SIGTERM (the
store handed over again). The directory explored holds the store's directory, the CNI
configuration directory and the bin directory. Each state, as the node finds it after
the power loss: an nv-ipam ADD before ipam-node is back (it may only be refused with
code 11, the store handed over), ipam-node's start (it must get in sync), an ADD, its
SIGTERM; then the handed-over file, read as the reference daemon reads it
(refstore.py), must hold every address an ADD returned, none twice.

FULL=1 widens the bounds; CRASH_KEEP=DIR keeps the states that failed.
"""

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Nothing written beside the sources (the modules imported are the tree's).
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "ipam"))

import explore as X  # noqa: E402
from model import Bounds  # noqa: E402
import refstore  # noqa: E402
from nvipam import judge_allocs, result_ips  # noqa: E402

FULL = os.environ.get("FULL") == "1"
POOL = {"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "IPPool",
        "metadata": {"name": "pool1", "namespace": "kube-system"},
        "spec": {"subnet": "10.78.0.0/16", "perNodeBlockSize": 256, "gateway": "10.78.0.1"},
        "status": {"allocations": [{"nodeName": "node-a", "startIP": "10.78.0.1", "endIP": "10.78.0.255"}]}}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Node:
    def __init__(self, work, ipam_node, nvipam, tool, kubeconfig):
        self.work, self.ipam_node, self.nvipam, self.tool = work, ipam_node, nvipam, tool
        self.kubeconfig = kubeconfig
        self.settings = os.path.join(work, "node-settings.json")
        with open(self.settings, "w") as f:
            json.dump({"logDirs": [work], "confDirs": [work], "stateDirs": [work]}, f)
        os.chmod(self.settings, 0o600)
        for side in ("a", "r"):
            X.fresh_dir(os.path.join(work, side), 0o755)
            for d in ("state", "conf", "bin"):
                os.makedirs(os.path.join(work, side, d), 0o700)

    def p(self, side, *parts):
        return os.path.join(self.work, side, *parts)

    def node_argv(self, side):
        return [self.ipam_node, "--node-name=node-a", "--store-file=" + self.p(side, "state", "store"),
                "--cni-bin-dir=" + self.p(side, "bin"), "--cni-conf-dir=" + self.p(side, "conf"),
                "--cni-skip-nv-ipam-binary-copy", "--cni-log-file=" + os.path.join(self.work, "cni.log"),
                "--metrics-bind-address=127.0.0.1:%d" % free_port(),
                "--health-probe-bind-address=127.0.0.1:%d" % free_port(),
                "--kubeconfig=" + self.kubeconfig, "--stale-ip-check-interval=0"]

    def cni(self, side, op, cid):
        conf = {"cniVersion": "1.0.0", "name": "net1",
                "ipam": {"type": "nv-ipam", "poolName": "pool1", "confDir": self.p(side, "conf")}}
        env = {"CNI_COMMAND": op, "CNI_CONTAINERID": cid, "CNI_NETNS": "/proc/self/ns/net",
               "CNI_NETNS_OVERRIDE": "1", "CNI_IFNAME": "net1", "CNI_PATH": "/nonexistent",
               "CNI_RDMA_PLUGINS_CONF": self.settings,
               "CNI_ARGS": "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=%s;K8S_POD_UID=uid-%s" % (cid, cid)}
        return [self.nvipam], env, json.dumps(conf).encode()

    def add(self, side, cid):
        argv, env, stdin = self.cni(side, "ADD", cid)
        rc, out, err = X.run(argv, X.env_with(env), stdin)
        return rc, out, err

    def run_node(self, side, log):
        """ipam-node in the background, its log in @log; (process, in sync)."""
        f = open(log, "wb")
        p = subprocess.Popen(self.node_argv(side), stdout=f, stderr=subprocess.STDOUT)
        f.close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with open(log, "rb") as g:
                if b"node pool file is in sync" in g.read():
                    return p, True
            if p.poll() is not None:
                return p, False
            time.sleep(0.05)
        return p, False

    def stop_node(self, p):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        try:
            return p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            return p.wait()


class NodeDriver:
    def __init__(self, node, base_held):
        self.node, self.base = node, base_held

    def expect(self, sc, c):
        e = X.Expectation()
        e.held = {k: set(v) for k, v in self.base.items()}
        for cmd in sorted(sc.cmds, key=lambda x: x.start):
            key = cmd.meta.get("key")
            if not cmd.started(c) or not key:
                continue
            if not cmd.returned(c):
                e.held.pop(key, None)
                continue
            if cmd.rc != 0:
                raise RuntimeError("%s failed in the scenario: %s" % (cmd.label(), cmd.err.decode(errors="replace")[:300]))
            e.held[key] = result_ips(cmd.out, "net1")
        return e

    def recover(self, tree, exp):
        n = self.node
        r = n.p("r")
        X.fresh_dir(r, 0o755)
        tree.materialise(r)
        obs = {}
        obs["conf"] = os.path.exists(n.p("r", "conf", "nv-ipam.conf"))
        rc, out, err = n.add("r", "cr-early")
        doc = X.json_of(out) or {}
        obs["early"] = (rc, result_ips(out, "net1") if rc == 0 else None, doc.get("code"),
                        (out + err).decode(errors="replace")[:300])
        log = os.path.join(n.work, "node-r.log")
        p, synced = n.run_node("r", log)
        obs["synced"] = synced
        if synced:
            rc, out, err = n.add("r", "cr-next")
            obs["next"] = (rc, result_ips(out, "net1"), (out + err).decode(errors="replace")[:300])
        obs["stopped"] = n.stop_node(p)
        with open(log, "rb") as f:
            obs["log"] = f.read().decode(errors="replace")[-600:]
        try:
            obs["theirs"] = (refstore.read(n.p("r", "state", "store")), None)
        except (OSError, ValueError, KeyError, TypeError) as e:
            obs["theirs"] = (None, str(e))
        return obs

    def judge(self, obs, exp, v):
        rc, ips, code, text = obs["early"]
        retried = {}
        if rc == 0:
            retried[("cr-early", "net1")] = ips
        elif code != 11 and (obs["conf"] or code != 7):
            # 11: handed over. 7: no nv-ipam.conf yet (ipam-node's first start had not
            # written it), so the defaults, which this test's node settings refuse.
            v.fail("refused", "nv-ipam before ipam-node is back: " + " ".join(text.split()))
        if not obs["synced"]:
            v.fail("refused", "ipam-node's start did not get in sync: " + " ".join(obs["log"].split())[-300:])
            return
        rc, ips, text = obs["next"]
        if rc != 0:
            v.fail("refused", "nv-ipam after ipam-node's start: " + " ".join(text.split()))
        else:
            retried[("cr-next", "net1")] = ips
        if obs["stopped"] != 0:
            v.fail("refused", "ipam-node's stop: exit %d: %s" % (obs["stopped"], " ".join(obs["log"].split())[-300:]))
        entries, why = obs["theirs"]
        if why:
            v.fail("refused", "the handed-over file, as the reference daemon reads it: " + why)
            return
        judge_allocs(entries, exp, v, obs, retried, who="handed over: ")


def main():
    if len(sys.argv) != 4:
        sys.stderr.write("usage: ipamnode.py IPAM-NODE NV-IPAM NV-IPAM-TOOL\n")
        return 2
    ipam_node, nvipam, tool = (os.path.realpath(a) for a in sys.argv[1:])
    keep = os.environ.get("CRASH_KEEP")
    work = tempfile.mkdtemp(prefix="cr-node.")
    os.chmod(work, 0o755)
    api = None
    try:
        api_dir = os.path.join(work, "api")
        os.makedirs(api_dir)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "2", "-keyout", os.path.join(api_dir, "tls.key"),
                        "-out", os.path.join(api_dir, "tls.crt"), "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        api = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "daemon", "apiserver.py"), api_dir],
                               stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists(os.path.join(api_dir, "port")):
            if time.monotonic() > deadline:
                X.die("apiserver.py did not start")
            time.sleep(0.05)
        time.sleep(0.1)
        with open(os.path.join(api_dir, "port")) as f:
            port = f.read().strip()
        X.run(["curl", "-sSk", "--max-time", "10", "-X", "PUT", "--data", json.dumps(POOL),
               "https://127.0.0.1:%s/_test/object?path=/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/kube-system/ippools" % port])
        node = Node(work, ipam_node, nvipam, tool, os.path.join(api_dir, "kubeconfig"))

        # The node as its last stop left it: two pods' addresses, the store handed over.
        p, synced = node.run_node("a", os.path.join(work, "node-0.log"))
        if not synced:
            X.die("setup: ipam-node did not get in sync")
        base = {}
        for cid in ("h1", "h2"):
            rc, out, err = node.add("a", cid)
            if rc != 0:
                X.die("setup: ADD %s: %s" % (cid, (out + err).decode(errors="replace")))
            base[(cid, "net1")] = result_ips(out, "net1")
        if node.stop_node(p) != 0:
            X.die("setup: ipam-node's stop failed")

        # As a first start finds it: no owner lock file, conf file or pool file yet.
        for f in (("state", "store.owner"), ("conf", "nv-ipam.conf"), ("conf", "node-pools.json")):
            os.unlink(node.p("a", *f))
        changed = dict(POOL, spec=dict(POOL["spec"], exclusions=[{"startIP": "10.78.0.200", "endIP": "10.78.0.210"}]))
        sc = X.Scenario("ipam-node", work, node.p("a"))
        start = sc.start(node.node_argv("a"), {}, b"", label="ipam-node (start, then SIGTERM)")
        sc.shell('for i in $(seq 200); do grep -q "node pool file is in sync" "$M/err.%d" "$M/out.%d" && break; sleep 0.05; done' %
                 (start.i, start.i))
        for cid in ("n1", "n2"):
            argv, env, stdin = node.cni("a", "ADD", cid)
            sc.run(argv, env, stdin, key=(cid, "net1"), label="ADD " + cid)
        # The pool's status changes: the pool file is replaced while pods are added.
        sc.shell("curl -sSk --max-time 10 -X PUT --data %s %s >/dev/null" % (
            shlex.quote(json.dumps(changed)),
            shlex.quote("https://127.0.0.1:%s/_test/object?path=/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/kube-system/ippools" % port)))
        sc.shell('for i in $(seq 200); do grep -q 10.78.0.210 %s && break; sleep 0.05; done' %
                 shlex.quote(node.p("a", "conf", "node-pools.json")))
        argv, env, stdin = node.cni("a", "ADD", "n3")
        sc.run(argv, env, stdin, key=("n3", "net1"), label="ADD n3")
        sc.shell('kill -TERM "${P[%d]}"' % start.i)
        sc.end_of(start)
        sc.record()
        if start.rc != 0:
            X.die("ipam-node's traced run ended with %s: %s" % (start.rc, start.out[-300:]))
        names = sorted({(o.kind, o.name2 if o.kind == "rename" else o.name) for o in sc.ops if o.is_meta()})
        print("# ipam-node: %d commands, %d operations recorded in %.1f s; names made: %s" % (
            len(sc.cmds), len(sc.ops), sc.record_s, ", ".join("%s %s" % n for n in names)))
        for want in (("rename", "node-pools.json"), ("rename", "nv-ipam.conf"), ("rename", "store.handed-over"),
                     ("rename", "store"), ("create", "store.owner"), ("unlink", "store.handed-over")):
            if want not in names:
                X.die("the scenario no longer does %s %s" % want)
        if sum(1 for o in sc.ops if o.kind == "rename" and o.name2 == "node-pools.json") < 2:
            X.die("the scenario no longer replaces the pool file it wrote")
        report = X.explore(sc, NodeDriver(node, base), Bounds(FULL, small=not FULL), keep)
    finally:
        if api:
            api.kill()
            api.wait()
        if not os.environ.get("CRASH_KEEP_WORK"):
            subprocess.run(["rm", "-rf", work])
    return 1 if X.main_summary([report]) else 0


if __name__ == "__main__":
    sys.exit(main())
