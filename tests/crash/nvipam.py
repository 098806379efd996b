#!/usr/bin/env python3
"""nv-ipam's files through every power loss the models allow (docs/testing.md, "crash").

  nvipam.py NV-IPAM NV-IPAM-TOOL [store|handover|syncs]...

store: ADDs and DELs on one and two pools, a burst of commands at once (a line synced
by the next writer's fdatasync), a release by the tool, a pool log compacted, snapshots
written, the cooldown's file of released addresses; and the first ADD of a store (its
file, its pool directory, a pool log created). Each state: the runtime's retry of the
commands in flight, an ADD of a new attachment, `nv-ipam-tool show` and `check`.

handover: the store handed over in the reference daemon's format, a DEL in that file
with no daemon, `adopt` (migrating the changed file, recording `.adopted`), the daemon's
late write merged by the next ADD, a second handover taken back unchanged; then a store
born ours (no .adopted) handed over and taken back twice. Each state is judged twice: as ipam-node's start finds it (`adopt`, then an ADD, show, check), and as
the reference daemon finds it after a rollback (refstore.py reads the file whenever it is
in the daemon's format; with ../shared the reference's own code allocates from it, and
adopt takes that back).

syncs: each fsync and fdatasync the store calls, by where it is called, treated in turn
as never done: the explorer must find a failing state for each one (one it cannot see
would have to be listed in UNSEEN with the reason, or removed from the product).

FULL=1 runs larger scenarios with wider bounds (the full run); CRASH_KEEP=DIR keeps the
states that failed.
"""

import copy
import json
import os
import re
import subprocess
import sys
import tempfile

# Nothing written beside the sources (the modules imported are the tree's).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ipam"))

import explore as X  # noqa: E402
from model import MODELS, Bounds  # noqa: E402
import refstore  # noqa: E402

FULL = os.environ.get("FULL") == "1"
POOLS = {
    "pool1": {"subnet": "10.77.0.0/22", "startIP": "10.77.0.1", "endIP": "10.77.3.232", "gateway": "10.77.0.1"},
    "pool2": {"subnet": "10.88.0.0/24", "startIP": "10.88.0.1", "endIP": "10.88.0.100", "gateway": "10.88.0.1"},
    "pool3": {"subnet": "10.99.0.0/22", "startIP": "10.99.0.1", "endIP": "10.99.3.232", "gateway": "10.99.0.1"},
}
NETS = {"net1": "pool1", "net12": "pool1,pool2", "net3": "pool3"}


class Node:
    """A node's files in @work: settings, pool file, the traced store (a/) and the one
    each state is rebuilt in (r/), each with its nv-ipam.conf."""

    def __init__(self, work, nvipam, tool, cooldown=60):
        self.work, self.nvipam, self.tool = work, nvipam, tool
        os.makedirs(work, exist_ok=True)
        self.settings = os.path.join(work, "node-settings.json")
        with open(self.settings, "w") as f:
            json.dump({"logDirs": [work], "confDirs": [work], "stateDirs": [work]}, f)
        os.chmod(self.settings, 0o600)
        self.pools = os.path.join(work, "pools.json")
        with open(self.pools, "w") as f:
            json.dump({"pools": POOLS}, f)
        for side in ("a", "r"):
            X.fresh_dir(os.path.join(work, side))
            conf = os.path.join(work, "conf-" + side)
            os.makedirs(conf, exist_ok=True)
            with open(os.path.join(conf, "nv-ipam.conf"), "w") as f:
                json.dump({"poolFile": self.pools, "storeFile": os.path.join(work, side, "store"),
                           "releasedIPCooldownSeconds": cooldown}, f)

    def store(self, side):
        return os.path.join(self.work, side, "store")

    def cni(self, side, op, cid, net, ifname="net1", pod=None):
        """argv, env, stdin of nv-ipam @op for attachment (@cid, @ifname) on network @net."""
        conf = {"cniVersion": "1.0.0", "name": net,
                "ipam": {"type": "nv-ipam", "poolName": NETS[net], "confDir": os.path.join(self.work, "conf-" + side)}}
        env = {"CNI_COMMAND": op, "CNI_CONTAINERID": cid, "CNI_NETNS": "/proc/self/ns/net",
               "CNI_NETNS_OVERRIDE": "1", "CNI_IFNAME": ifname, "CNI_PATH": "/nonexistent",
               "CNI_RDMA_PLUGINS_CONF": self.settings}
        if pod:
            env["CNI_ARGS"] = "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=%s;K8S_POD_UID=uid-%s" % (pod, pod)
        return [self.nvipam], env, json.dumps(conf).encode()

    def tool_argv(self, side, *args):
        return [self.tool] + list(args) + ["--store", self.store(side)]

    def now(self, side, op, cid, net, **kw):
        argv, env, stdin = self.cni(side, op, cid, net, **kw)
        rc, out, err = X.run(argv, X.env_with(env), stdin)
        if rc != 0:
            raise RuntimeError("setup: %s %s: %s" % (op, cid, (out + err).decode(errors="replace")[:300]))
        return out

    def show(self, side):
        """(rc, allocations as (pool, ip, cid, ifname, network), error text)."""
        rc, out, err = X.run(self.tool_argv(side, "show", "--json", "--pool-file", self.pools),
                             X.env_with({"CNI_RDMA_PLUGINS_CONF": self.settings}))
        if rc != 0:
            return rc, None, (out + err).decode(errors="replace").strip()[:400]
        doc = json.loads(out)
        allocs = [(p["pool"], a["ip"], a["containerID"], a["ifname"], a.get("network", ""))
                  for p in doc.get("pools", []) for a in p.get("allocations", [])]
        return 0, allocs, ""


def result_ips(out, net):
    doc = X.json_of(out)
    if not doc or "ips" not in doc:
        return None
    pools = NETS[net].split(",")
    return {(pools[i], ip["address"].split("/")[0]) for i, ip in enumerate(doc["ips"])}


class StoreDriver:
    """What nv-ipam's commands promised, and what the next commands find."""

    def __init__(self, node, base_allocs):
        self.node = node
        self.base = {}
        self.base_net = {}
        for pool, ip, cid, ifname, net in base_allocs:
            self.base.setdefault((cid, ifname), set()).add((pool, ip))
            self.base_net[(cid, ifname)] = net

    def expect(self, sc, c):
        e = X.Expectation()
        e.held = {k: set(v) for k, v in self.base.items()}
        e.network = dict(self.base_net)
        for cmd in sorted(sc.cmds, key=lambda x: x.start):
            key = cmd.meta.get("key")
            if not cmd.started(c):
                continue
            if cmd.meta.get("migrates"):
                # The daemon's format has no network names: what a migration reads has none.
                e.network = {k: None for k in e.network}
            if not cmd.returned(c):
                e.inflight.append(cmd)
                for k in (key, cmd.meta["late"][2] if cmd.meta.get("late") else None):
                    if k:
                        e.held.pop(k, None)
                        e.gone.discard(k)
                continue
            if cmd.rc != 0:
                raise RuntimeError("%s failed in the scenario: %s" % (cmd.label(), cmd.err.decode(errors="replace")[:300]))
            op = cmd.meta.get("op")
            if op == "ADD":
                e.held[key] = result_ips(cmd.out, cmd.meta["net"])
                e.network[key] = cmd.meta["net"]
                e.gone.discard(key)
                if cmd.meta.get("late"):
                    late = cmd.meta["late"]
                    e.held[late[0]] = late[1]
                    e.network[late[0]] = None
                    e.gone.add(late[2])
            elif op in ("DEL", "release"):
                e.held.pop(key, None)
                e.gone.add(key)
            elif op == "late":
                # The daemon's own write: durable only as the daemon makes it (renameio:
                # the file synced, the rename not); ours once the next ADD merged it.
                for k in (key, cmd.meta["late"][2]):
                    e.held.pop(k, None)
                    e.gone.discard(k)
        return e

    def retry(self, cmd):
        """The runtime's retry of a command in flight, on the rebuilt store: (rc, out)."""
        op = cmd.meta.get("op")
        if op in ("ADD", "DEL"):
            cid, ifname = cmd.meta["key"]
            argv, env, stdin = self.node.cni("r", "DEL" if op == "DEL" else "ADD", cid,
                                             cmd.meta["net"], ifname=ifname, pod=cmd.meta.get("pod"))
            return X.run(argv, X.env_with(env), stdin)[:2]
        if op == "release":
            rc, out, err = X.run(self.node.tool_argv("r", "release", "--container-id", cmd.meta["key"][0]),
                                 X.env_with({"CNI_RDMA_PLUGINS_CONF": self.node.settings}))
            return rc, out + err
        # handover, adopt, the daemon's write: ipam-node's start (adopt) is the next step.
        return 0, b""

    def next_commands(self, obs):
        n = self.node
        argv, env, stdin = n.cni("r", "ADD", "cr-next", "net1", pod="cr-next")
        rc, out, err = X.run(argv, X.env_with(env), stdin)
        obs["next"] = (rc, result_ips(out, "net1"), (out + err).decode(errors="replace")[:400])
        obs["show"] = n.show("r")
        rc, out, err = X.run(n.tool_argv("r", "check", "--pool-file", n.pools),
                             X.env_with({"CNI_RDMA_PLUGINS_CONF": n.settings}))
        obs["check"] = (rc, (out + err).decode(errors="replace")[-600:])

    def recover(self, tree, exp):
        r = os.path.join(self.node.work, "r")
        X.fresh_dir(r)
        tree.materialise(r)
        obs = {"retries": []}
        for cmd in exp.inflight:
            rc, out = self.retry(cmd)
            obs["retries"].append((cmd.i, rc, out))
        self.next_commands(obs)
        return obs

    def judge(self, obs, exp, v):
        for i, rc, out in obs["retries"]:
            # A release retried after it was done finds nothing: the tool says so, exit 1.
            if rc != 0 and not (rc == 1 and b"no allocation matches" in out):
                v.fail("refused", "retry of command %d: exit %d: %s" % (i, rc, out.decode(errors="replace")[:200]))
        rc, allocs, err = obs["show"]
        if rc != 0:
            v.fail("refused", "show: " + err)
            return
        rc, ips, err = obs["next"]
        retried = self.retried_keys(exp, obs)
        if rc != 0:
            v.fail("refused", "the next ADD: " + err)
        else:
            retried[("cr-next", "net1")] = ips
        judge_allocs(allocs, exp, v, obs, retried)
        rc, out = obs["check"]
        if rc != 0:
            v.fail("wrong", "nv-ipam-tool check: " + out.strip().replace("\n", " | ")[:300])

    def retried_keys(self, exp, obs):
        out = {}
        for cmd, (_, rc, o) in zip(exp.inflight, obs["retries"]):
            key = cmd.meta.get("key")
            op = cmd.meta.get("op")
            if key and op == "ADD" and rc == 0:
                out[key] = result_ips(o, cmd.meta["net"])
            elif key and op in ("DEL", "release") and rc == 0:
                out[key] = None
        return out


def judge_allocs(allocs, exp, v, obs, retried, who="", names=True):
    by_ip, by_key, nets = {}, {}, {}
    for a in allocs:
        pool, ip, cid, ifname = a[:4]
        by_ip.setdefault((pool, ip), set()).add((cid, ifname))
        by_key.setdefault((cid, ifname), set()).add((pool, ip))
        if len(a) > 4:
            nets.setdefault((cid, ifname), set()).add(a[4])
    for key, want in sorted(getattr(exp, "network", {}).items() if names else ()):
        if want is not None and key in exp.held and key in nets and nets[key] != {want}:
            v.fail("wrong", who + "%s/%s: network %s, recorded as %s" % (key[0], key[1], want, sorted(nets[key])))
    for where, keys in sorted(by_ip.items()):
        if len(keys) > 1:
            v.fail("doubled", who + "%s %s held by %s" % (where[0], where[1], sorted(keys)))
    for key, want in sorted(exp.held.items()):
        if want and not want <= by_key.get(key, set()):
            v.fail("lost", who + "%s/%s: returned %s, holds %s" % (key[0], key[1], sorted(want), sorted(by_key.get(key, ()))))
    for key in sorted(exp.gone):
        if key in by_key and key not in retried:
            v.fail("back", who + "%s/%s: released, holds %s again" % (key[0], key[1], sorted(by_key[key])))
    for key, want in retried.items():
        if want is None and key in by_key:
            v.fail("back", "%s/%s: its DEL retried, still holds %s" % (key[0], key[1], sorted(by_key[key])))
        elif want and not want <= by_key.get(key, set()):
            v.fail("lost", "%s/%s: its ADD retried returned %s, holds %s" % (key[0], key[1], sorted(want), sorted(by_key.get(key, ()))))


# ---- the store ----

def store_scenarios(work, nvipam, tool):
    """(Node, Scenario) of each store scenario, recorded."""
    out = []

    # The first ADDs of a store: its file, its pool directory, the logs created.
    node = Node(os.path.join(work, "fresh"), nvipam, tool)
    sc = X.Scenario("first ADDs", node.work, os.path.join(node.work, "a"))
    add(sc, node, "f1", "net12")
    add(sc, node, "f2", "net1")
    dele(sc, node, "f1", "net12")
    if FULL:
        add(sc, node, "f3", "net3")
    out.append((node, sc.record()))

    # A store in use: pool1 near its next snapshot, pool3 near its compaction.
    node = Node(os.path.join(work, "store"), nvipam, tool)
    node.now("a", "ADD", "p1", "net1", pod="p1")
    node.now("a", "ADD", "p2", "net12", pod="p2")
    node.now("a", "ADD", "v1", "net1", pod="v1")
    # pool1 at 124 lines past its header: a2's two-pool ADD leaves its confirmation
    # unsynced at line 127, and the DEL after it writes the snapshot at line 128, over it
    # (which is why the log is synced before a snapshot).
    fill(node, "pool1", "net1", "w", 125)
    node.now("a", "ADD", "q1", "net3", pod="q1")
    # A few lines short of the compaction (dead lines 512 over twice the live ones).
    fill(node, "pool3", "net3", "z", 510)
    sc = X.Scenario("store in use", node.work, os.path.join(node.work, "a"))
    add(sc, node, "a1", "net1")
    add(sc, node, "a2", "net12")
    dele(sc, node, "a1", "net1")
    burst = [("ADD", "b1", "net1"), ("ADD", "b2", "net1"), ("DEL", "p1", "net1"), ("ADD", "b3", "net12")]
    if FULL:
        burst += [("ADD", "b4", "net1"), ("DEL", "p2", "net12"), ("ADD", "b5", "net3")]
    specs = []
    for op, cid, net in burst:
        argv, env, stdin = node.cni("a", op, cid, net, pod=cid)
        specs.append((argv, env, stdin, {"op": op, "key": (cid, "net1"), "net": net, "pod": cid,
                                         "label": "%s %s (%s, at once)" % (op, cid, net)}))
    sc.together(specs)
    for i in range(8 if FULL else 4):
        add(sc, node, "y%d" % i, "net3")
        dele(sc, node, "y%d" % i, "net3")
    sc.run(node.tool_argv("a", "release", "--container-id", "a2"),
           {"CNI_RDMA_PLUGINS_CONF": node.settings}, b"", op="release", key=("a2", "net1"), label="release a2")
    for i in range(6 if FULL else 2):
        add(sc, node, "s%d" % i, "net1")
    out.append((node, sc.record()))
    return out


def fill(node, pool, net, prefix, lines):
    """ADD and DEL pairs on @net until @pool's log has @lines lines."""
    log = os.path.join(node.work, "a", "store.d", pool + ".log")
    i = 0
    while True:
        with open(log, "rb") as f:
            n = f.read().count(b"\n")
        if n >= lines:
            if n != lines:
                raise RuntimeError("setup: %s has %d lines, not %d" % (log, n, lines))
            return
        node.now("a", "ADD", "%s%d" % (prefix, i), net)
        node.now("a", "DEL", "%s%d" % (prefix, i), net)
        i += 1


def add(sc, node, cid, net, ifname="net1", **meta):
    argv, env, stdin = node.cni("a", "ADD", cid, net, ifname=ifname, pod=cid)
    m = {"op": "ADD", "key": (cid, ifname), "net": net, "pod": cid, "label": "ADD %s (%s)" % (cid, net)}
    m.update(meta)
    return sc.run(argv, env, stdin, **m)


def dele(sc, node, cid, net, ifname="net1", **meta):
    argv, env, stdin = node.cni("a", "DEL", cid, net, ifname=ifname, pod=cid)
    m = {"op": "DEL", "key": (cid, ifname), "net": net, "pod": cid, "label": "DEL %s (%s)" % (cid, net)}
    m.update(meta)
    return sc.run(argv, env, stdin, **m)


def coverage(sc):
    """What the scenario's trace did to the store, by kind (so a scenario that stops
    reaching a path fails instead of passing on less)."""
    names = {}
    for o in sc.ops:
        if o.kind in ("create", "rename", "unlink"):
            n = o.name2 if o.kind == "rename" else o.name
            names.setdefault(o.kind, set()).add(re.sub(r"[0-9]+", "N", n))
    return names


def base_allocs(node, side="a"):
    rc, allocs, err = node.show(side)
    if rc != 0:
        raise RuntimeError("setup: show: " + err)
    return allocs


def run_store(recorded, bounds, keep):
    reports = []
    need = {"first ADDs": [("create", "store.d"), ("rename", "store"), ("create", "poolN.log"),
                           ("create", "poolN.released")],
            "store in use": [("rename", "poolN.snap"), ("rename", "poolN.log")],
            "handover": [("rename", "store.adopted"), ("rename", "store.handed-over"), ("unlink", "store.handed-over")],
            "handover of a store born ours": [("rename", "store.handed-over"), ("unlink", "store.handed-over")]}
    for node, sc, drv in recorded:
        cov = coverage(sc)
        print("# %s: %d commands, %d operations recorded in %.1f s; names made: %s" % (
            sc.name, len(sc.cmds), len(sc.ops), sc.record_s,
            ", ".join("%s %s" % (k, " ".join(sorted(v))) for k, v in sorted(cov.items()))))
        for kind, name in need.get(sc.name, []):
            if name not in cov.get(kind, set()):
                X.die("%s: the scenario no longer does %s %s" % (sc.name, kind, name))
        reports.append(X.explore(sc, drv, bounds, keep))
        if isinstance(drv, HandoverDriver):
            print("  states in the reference daemon's format, read as the daemon reads them: "
                  "%d by refstore.py, %d by the reference's own code (refcni); %d holding the "
                  "daemon's late write" % (drv.theirs["refstore.py"], drv.theirs["refcni"], drv.theirs["late write"]))
    return reports


def allocs_of_base(node, sc):
    """The allocations of the store as the trace found it."""
    r = os.path.join(node.work, "r")
    X.fresh_dir(r)
    sc.base.materialise(r)
    if not os.path.exists(node.store("r")):
        return []
    return base_allocs(node, "r")


# ---- the handover ----

REF_NET = {"cniVersion": "1.0.0", "name": "net1", "ipam": {"type": "nv-ipam", "poolName": "pool1"}}


def ref_pools(path):
    """The node's blocks as the reference reads them: IPPools with this node's status."""
    items = [{"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "IPPool",
              "metadata": {"name": k, "namespace": "nvidia-network-operator"},
              "spec": {"subnet": v["subnet"], "perNodeBlockSize": 1000, "gateway": v["gateway"]},
              "status": {"allocations": [{"nodeName": "host-a", "startIP": v["startIP"], "endIP": v["endIP"]}]}}
             for k, v in POOLS.items()]
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)


class HandoverDriver(StoreDriver):
    """As StoreDriver, judged as ipam-node's start finds each state (adopt, an ADD, show,
    check) and, when the store file is in the reference daemon's format, as that daemon
    finds it: refstore.py reads it; the reference's own code (refcni) allocates from it and
    adopt takes that back."""

    def __init__(self, node, base_allocs, refcni):
        super().__init__(node, base_allocs)
        self.refcni = refcni
        # States the reference daemon's reading judged: by refstore.py, by refcni.
        self.theirs = {"refstore.py": 0, "refcni": 0, "late write": 0}
        self.late = None
        if refcni:
            ref_pools(os.path.join(node.work, "refpools.json"))

    def expect(self, sc, c):
        for cmd in sc.cmds:
            if cmd.meta.get("op") == "late":
                self.late = cmd.meta["late"]
        return super().expect(sc, c)

    def retry(self, cmd):
        if cmd.meta.get("op") in ("handover", "adopt", "late"):
            return 0, b""
        return super().retry(cmd)

    def adopt(self):
        rc, out, err = X.run(self.node.tool_argv("r", "adopt"), X.env_with({"CNI_RDMA_PLUGINS_CONF": self.node.settings}))
        return rc, (out + err).decode(errors="replace")[-400:]

    def recover(self, tree, exp):
        r = os.path.join(self.node.work, "r")
        X.fresh_dir(r)
        tree.materialise(r)
        obs = {"retries": [], "theirs": None}
        # Handed over: the marker there and the file in the daemon's format. (Its format
        # without the marker is the daemon's own file, or its late write after an adoption.)
        handed = False
        try:
            with open(self.node.store("r"), "rb") as f:
                handed = b'"checksum"' in f.read(200) and os.path.exists(self.node.store("r") + ".handed-over")
        except OSError:
            pass
        # The daemon's late write, when this state holds it: what it added and released.
        obs["late_file"] = None
        if not handed and self.late:
            try:
                entries = refstore.read(self.node.store("r"))
                keys = {(e[2], e[3]) for e in entries}
                if self.late[0] in keys and self.late[2] not in keys:
                    obs["late_file"] = self.late
                    self.theirs["late write"] += 1
            except (OSError, ValueError, KeyError, TypeError):
                pass
        if handed:
            # The reference daemon after a rollback, on the file as the power loss left it.
            try:
                theirs = {"entries": refstore.read(self.node.store("r")), "error": None}
                self.theirs["refstore.py"] += 1
            except (OSError, ValueError, KeyError, TypeError) as e:
                theirs = {"entries": None, "error": str(e)}
            if self.refcni and theirs["error"] is None:
                rc, out, err = X.run([self.refcni], X.env_with({
                    "REF_POOLS": os.path.join(self.node.work, "refpools.json"), "REF_NODE": "host-a",
                    "REF_STORE": self.node.store("r"), "CNI_PATH": "/nonexistent", "CNI_COMMAND": "ADD",
                    "CNI_CONTAINERID": "cr-ref", "CNI_IFNAME": "net1", "CNI_NETNS": "/var/run/netns/cr-none",
                    "CNI_ARGS": "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=cr-ref;K8S_POD_UID=uid-cr-ref"}),
                    json.dumps(REF_NET).encode())
                theirs["refcni"] = (rc, result_ips(out, "net1"), (out + err).decode(errors="replace")[:300])
                self.theirs["refcni"] += 1
                theirs["adopt"] = self.adopt()
                theirs["show"] = self.node.show("r")
            obs["theirs"] = theirs
            X.fresh_dir(r)
            tree.materialise(r)
        for cmd in exp.inflight:
            rc, out = self.retry(cmd)
            obs["retries"].append((cmd.i, rc, out))
        obs["adopt"] = self.adopt()
        self.next_commands(obs)
        return obs

    def judge(self, obs, exp, v):
        theirs = obs["theirs"]
        if theirs is not None:
            if theirs["error"]:
                v.fail("refused", "the reference daemon's reading (refstore.py): " + theirs["error"])
            else:
                judge_allocs(theirs["entries"], exp, v, obs, {}, who="as the daemon reads it: ")
                if "refcni" in theirs:
                    rc, ips, err = theirs["refcni"]
                    if rc != 0:
                        v.fail("refused", "the reference's own ADD on it (refcni): " + err)
                    rc, out = theirs["adopt"]
                    if rc != 0:
                        v.fail("refused", "adopt after the reference's ADD: " + out)
                    rc, allocs, err = theirs["show"]
                    if rc != 0:
                        v.fail("refused", "show after the reference's ADD: " + err)
                    else:
                        # The daemon changed the file: taken back, it is migrated, names and all.
                        judge_allocs(allocs, exp, v, obs, {("cr-ref", "net1"): ips} if ips else {},
                                     who="after the reference's ADD and adopt: ", names=False)
        rc, out = obs["adopt"]
        if rc != 0:
            v.fail("refused", "adopt (ipam-node's start): " + out)
        if obs["late_file"]:
            # The daemon answered its DEL and wrote the file that landed: merged, the
            # release stands (else a leak only the cleaner frees).
            late = obs["late_file"]
            exp = copy.copy(exp)
            exp.held = dict(exp.held)
            exp.held[late[0]] = late[1]
            exp.gone = exp.gone | {late[2]}
        super().judge(obs, exp, v)



def handover_scenarios(work, nvipam, tool):
    node = Node(os.path.join(work, "handover"), nvipam, tool)
    daemon = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "daemon.py")]
    X.run(daemon + ["new", node.store("a"), "pool1:10.77.0.50:r1:net1", "pool1:10.77.0.51:r2:net1",
                    "pool2:10.88.0.50:r3:net1"])
    sc = X.Scenario("handover", node.work, os.path.join(node.work, "a"))
    add(sc, node, "m1", "net1", migrates=True, label="ADD m1 (migrates the reference's store)")
    add(sc, node, "m2", "net12")
    tool_env = {"CNI_RDMA_PLUGINS_CONF": node.settings}
    sc.run(node.tool_argv("a", "handover"), tool_env, b"", op="handover", label="handover")
    # The file changed: taken back, it is migrated (names and all, by design).
    dele(sc, node, "r2", "net1", migrates=True, label="DEL r2 (in the handed-over file)")
    sc.run(node.tool_argv("a", "adopt"), tool_env, b"", op="adopt", migrates=True,
           label="adopt (migrates the changed file)")
    add(sc, node, "m5", "net1", label="ADD m5 (before the daemon's late write)")
    # The daemon's last write, landing after the adoption: late1 added, r1 released.
    late = (("late1", "net1"), {("pool1", "10.77.3.200")}, ("r1", "net1"))
    sc.run(daemon + ["edit", node.store("a"), node.store("a") + ".adopted", "add", "pool1", "10.77.3.200",
                     "late1", "net1", "del", "r1", "net1"], {}, b"", op="late", key=late[0], daemon=True,
           late=late, label="the daemon's late write")
    add(sc, node, "m3", "net1", late=late, label="ADD m3 (merges the late write)")
    sc.run(node.tool_argv("a", "handover"), tool_env, b"", op="handover", label="handover again")
    sc.run(node.tool_argv("a", "adopt"), tool_env, b"", op="adopt", label="adopt (taken back unchanged)")
    add(sc, node, "m4", "net1")
    out = [(node, sc.record())]

    # A store born ours: no record of a takeover, handed over and taken back twice.
    node = Node(os.path.join(work, "ours"), nvipam, tool)
    node.now("a", "ADD", "o1", "net1", pod="o1")
    node.now("a", "ADD", "o2", "net12", pod="o2")
    tool_env = {"CNI_RDMA_PLUGINS_CONF": node.settings}
    sc = X.Scenario("handover of a store born ours", node.work, os.path.join(node.work, "a"))
    sc.run(node.tool_argv("a", "handover"), tool_env, b"", op="handover", label="handover")
    sc.run(node.tool_argv("a", "adopt"), tool_env, b"", op="adopt", label="adopt (taken back unchanged)")
    add(sc, node, "o3", "net1")
    sc.run(node.tool_argv("a", "handover"), tool_env, b"", op="handover", label="handover again")
    dele(sc, node, "o1", "net1", migrates=True, label="DEL o1 (in the handed-over file)")
    sc.run(node.tool_argv("a", "adopt"), tool_env, b"", op="adopt", migrates=True,
           label="adopt (migrates the changed file)")
    add(sc, node, "o4", "net12")
    out.append((node, sc.record()))
    return out


def refcni_binary(work):
    """The reference's own nv-ipam code (../shared, tests/shared.sh's rule), unpacked; None
    with the NOT RUN line printed when it is not there."""
    shared = os.environ.get("CNI_SHARED") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared")
    d = os.path.join(shared, "reference", "nvipam-refcni")
    xz, sums = os.path.join(d, "refcni.xz"), os.path.join(d, "SHA256SUMS")
    if not (os.access(xz, os.R_OK) and os.access(sums, os.R_OK)):
        rel = os.path.join("reference", "nvipam-refcni")
        print("NOT RUN: no reference nv-ipam code, the reference's own reading of each handed-over "
              "state, at %s (../shared/%s beside the checkout)" % (d, rel))
        return None
    out = os.path.join(work, "refcni")
    with open(out, "wb") as f:
        subprocess.run(["xz", "-dc", xz], stdout=f, check=True)
    os.chmod(out, 0o755)
    subprocess.run(["sha256sum", "--quiet", "-c", sums], cwd=work, check=True)
    return out


# ---- which syncs matter ----

def norm(path):
    """A store path with its pool and process parts generalised."""
    path = re.sub(r"\.tmp\.[0-9]+$", ".tmp", path)
    return re.sub(r"(^|/)pool[0-9]+\.", r"\1<pool>.", path) or "<store dir>"


def sync_site(o, ops):
    """Where the store calls sync @o, said as what it makes durable."""
    call = "fsync" if o.full else "fdatasync"
    mine = [x for x in ops if x.pid == o.pid and x.idx < o.idx]
    later = [x for x in ops if x.pid == o.pid and x.idx > o.idx]
    name = norm(o.name)
    if name.endswith(".log") and not o.full:
        wrote = [x for x in mine if x.kind == "write" and x.ino == o.ino]
        line = wrote[-1].data if wrote else b""
        nxt = next((x for x in later if x.kind != "write"), None)
        if nxt is not None and nxt.kind == "create" and ".snap.tmp." in nxt.name:
            return "%s of a pool log before a snapshot over it" % call
        made = any(x.kind == "create" and x.ino == o.ino for x in mine)
        kind = {b"A": "an ADD's line", b"D": "a DEL's line", b"C": "a confirmation", b"X": "a drop",
                b"n": "a new log's header and lines"}.get(line[:1], "lines")
        if line.startswith(b"A\tp") or line.startswith(b"A\trp"):
            kind = "a two-pool ADD's pending line (before the other pool's)"
        if made:
            kind = "a new log's header and lines"
        return "%s of a pool log: %s" % (call, kind)
    if o.ino in {x.ino for x in ops if x.kind == "create" and x.mode & 0o40000} or name in ("<store dir>", "store.d"):
        meta = [x for x in mine if x.is_meta() and (x.dir == o.ino or x.dir2 == o.ino)]
        last = meta[-1] if meta else None
        what = "-" if last is None else "%s %s" % (last.kind, norm(last.name2 if last.kind == "rename" else last.name))
        return "%s of %s after %s" % (call, name, what)
    return "%s of %s before its rename" % (call, name)


# Syncs the explorer cannot show needed, and why (each must still be found harmless):
# none. (The directory's fsync after .adopted's rename was one: gone, gate.c says why.)
UNSEEN = {}


def run_syncs(scenarios, bounds):
    """Each sync site treated as never done, in every scenario that calls it: what the
    explorer finds without it. A list of what is wrong with the verdicts."""
    sites = {}
    for node, sc, drv in scenarios:
        cache = {}
        by_site = {}
        theirs = {c.pid for c in sc.cmds if c.meta.get("daemon")}
        for o in sc.ops:
            if o.kind == "sync" and o.pid not in theirs:
                by_site.setdefault(sync_site(o, sc.ops), set()).add(o.idx)
        syncs = [o for o in sc.ops if o.kind == "sync"]
        for site, idxs in sorted(by_site.items()):
            # Without a sync, states change from where it was called until the next sync
            # of the same file or directory (which covers what it covered): only there.
            windows = []
            for o in syncs:
                if o.idx in idxs:
                    nxt = next((x for x in syncs if x.idx > o.idx and x.ino == o.ino and x.idx not in idxs), None)
                    windows.append((o.start, nxt.end + 1 if nxt else float("inf")))
            r = X.explore(sc, drv, bounds, drop_syncs=lambda o, idxs=idxs: o.idx in idxs, quiet=True, cache=cache,
                          points=lambda c, w=windows: any(a <= c <= b for a, b in w),
                          enough=None if FULL else 1)
            row = sites.setdefault(site, {"calls": 0, "posix": 0, "ext4": 0, "kinds": set(), "where": [], "ex": []})
            row["calls"] += len(idxs)
            for m in MODELS:
                row[m] += r.failed(m)
                row["kinds"] |= {k for k in X.KINDS if r.found[m][k]}
            row["where"].append(sc.name)
            row["ex"] += r.examples[:1]
    bad = []
    for site, row in sorted(sites.items()):
        seen = row["posix"] or row["ext4"]
        verdict = "needed" if seen else ("not needed: " + UNSEEN[site] if site in UNSEEN else "NOT SEEN")
        print("%s (%d calls in %s): posix %d, ext4 %d failing states%s%s: %s" % (
            site, row["calls"], ", ".join(row["where"]), row["posix"], row["ext4"],
            " (%s)" % ", ".join(sorted(row["kinds"])) if row["kinds"] else "",
            "" if FULL else " (counting stops at the first in each model)", verdict))
        if seen and site in UNSEEN:
            bad.append("%s: listed as not needed, yet without it: %s" % (site, row["ex"][0] if row["ex"] else ""))
        if not seen and site not in UNSEEN:
            bad.append("%s: no failing state without it, and no reason listed" % site)
    return bad


def main():
    if len(sys.argv) < 3 or not set(sys.argv[3:]) <= {"store", "handover", "syncs"}:
        sys.stderr.write("usage: nvipam.py NV-IPAM NV-IPAM-TOOL [store|handover|syncs]...\n")
        return 2
    nvipam, tool = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
    parts = sys.argv[3:] or ["store", "handover", "syncs"]
    # syncs alone: over every scenario; beside store or handover, over theirs.
    syncs_over = [p for p in parts if p != "syncs"] or ["store", "handover"]
    bounds = Bounds(FULL)
    keep = os.environ.get("CRASH_KEEP")
    work = tempfile.mkdtemp(prefix="cr-nvipam.")
    os.chmod(work, 0o700)
    reports, bad, recorded = [], [], []
    try:
        if "store" in parts or "store" in syncs_over and "syncs" in parts:
            scs = store_scenarios(os.path.join(work, "s"), nvipam, tool)
            recorded += [("store", node, sc, StoreDriver(node, allocs_of_base(node, sc))) for node, sc in scs]
        if "handover" in parts or "handover" in syncs_over and "syncs" in parts:
            refcni = refcni_binary(work) if "handover" in parts else None
            scs = handover_scenarios(os.path.join(work, "h"), nvipam, tool)
            recorded += [("handover", node, sc, HandoverDriver(node, allocs_of_base(node, sc), refcni))
                         for node, sc in scs]
        reports += run_store([r[1:] for r in recorded if r[0] in parts], bounds, keep)
        recorded = [r for r in recorded if r[0] in syncs_over]
        if "syncs" in parts:
            print("# each sync the store calls, treated as never done")
            bad = run_syncs([r[1:] for r in recorded], Bounds(False, small=True))
            for b in bad:
                print("FAIL: " + b)
    finally:
        if not os.environ.get("CRASH_KEEP_WORK"):
            subprocess.run(["rm", "-rf", work])
    fails = X.main_summary(reports) if reports else 0
    return 1 if fails or bad else 0


if __name__ == "__main__":
    sys.exit(main())
