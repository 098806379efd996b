#!/usr/bin/env python3
"""The records plugins keep for DEL, through every power loss the models allow.

  plugins.py BUILD-DIR [PLUGIN | NAME=PATH]...   (as root: network namespaces, veth pairs)

Each plugin's ADD is recorded under strace; its record directory's crash states are
judged through the plugin's command line only (the record's format is the plugin's
business, and may change: common/record/), two ways:

  reboot: what a power loss really leaves. The kernel starts afresh: the device is back
    in the host as it was before the ADD, the pod's netns is gone. The runtime's DEL of
    the old attachment (its netns missing) must succeed and change nothing; then an ADD
    and DEL of a new attachment on the same interface must restore it exactly (no record
    a crash left may block or mislead it).
  kept: a stricter, artificial one, at the crash points after the ADD returned: the kernel
    as the ADD left it, the record as the crash left it. DEL must restore exactly what
    ADD changed (so the record must be on disk before ADD answers).

Records under /run (tmpfs) do not survive a power loss at all: only the first way
happens there; both are run, so the plugins stay right if their records move to disk.

An IPAM plugin's leases are judged by IpamPlugin, through its command line too: every
ADD that returned still CHECKs and its address cannot be asked for again, every DEL
that returned (and every command in flight, which the runtime tears down) no longer
CHECKs. PLUGINS lists each plugin's driver; a plugin added since is one entry (the line
for host-local is there, commented: our host-local syncs nothing yet and fails). NAME=PATH
runs an IPAM plugin of BUILD-DIR by IpamPlugin by hand: host-local=ipam/host-local/host-local.
FULL=1 widens the bounds.
"""

import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Nothing written beside the sources (the modules imported are the tree's).
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)

import explore as X  # noqa: E402
from model import Bounds, Tree  # noqa: E402

FULL = os.environ.get("FULL") == "1"
TOKEN = "cr%x" % (os.getpid() & 0xfffff)


def sh(*argv, check=True):
    p = subprocess.run(argv, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(argv), p.stderr.strip()))
    return p


def link(name, ns=None):
    """(name, mtu, alias, up, mac) of a link, None when it is not there."""
    argv = ["ip"] + (["-n", ns] if ns else []) + ["-j", "link", "show", "dev", name]
    p = sh(*argv, check=False)
    if p.returncode != 0:
        return None
    j = json.loads(p.stdout)[0]
    return (j["ifname"], j["mtu"], j.get("ifalias", ""), "UP" in j.get("flags", []), j.get("address"))


def sysctl(ns, key):
    p = sh("ip", "netns", "exec", ns, "cat", "/proc/sys/" + key.replace(".", "/"))
    return p.stdout.strip()


class PluginDriver:
    """ADD recorded; each state of its record judged by DEL (and a new ADD/DEL round)."""

    name = None
    record_dir = None

    def __init__(self, build, work):
        self.build, self.work = build, work
        self.cleanups = []
        self.reboot_checks = self.kept_checks = 0

    def binary(self):
        return os.path.join(self.build, "plugins", self.name, self.name)

    def env(self, op, cid, netns):
        return {"CNI_COMMAND": op, "CNI_CONTAINERID": cid, "CNI_NETNS": netns, "CNI_IFNAME": "net1",
                "CNI_PATH": "/nonexistent"}

    def call(self, op, cid, netns, conf):
        return X.run([self.binary()], X.env_with(self.env(op, cid, netns)), json.dumps(conf).encode())

    def ours(self, rel):
        """Which names of the record directory are this run's (others' are never touched)."""
        return rel.startswith(self.key_prefix())

    def put_record(self, tree):
        """The record directory's files of ours as @tree has them (others' left alone)."""
        for n in os.listdir(self.record_dir):
            if self.ours(n):
                os.unlink(os.path.join(self.record_dir, n))
        for rel, mode, data in tree.listing():
            if data is None:
                raise RuntimeError("a directory in a record directory: " + rel)
            with open(os.path.join(self.record_dir, rel), "wb") as f:
                f.write(data)
            os.chmod(os.path.join(self.record_dir, rel), mode)

    def scenario(self):
        os.makedirs(self.record_dir, 0o700, exist_ok=True)
        self.setup()
        sc = X.Scenario(self.name, self.work, self.record_dir)
        sc.keep = self.ours
        argv, env, stdin = [self.binary()], self.env("ADD", self.cid, self.pod_path), json.dumps(self.conf()).encode()
        sc.run(argv, env, stdin, label="%s ADD" % self.name, op="ADD")
        sc.record()
        add = sc.cmds[0]
        if add.rc != 0:
            raise RuntimeError("%s ADD failed: %s" % (self.name, add.out.decode(errors="replace")))
        self.after_add = self.observe()
        # Back to the start for the states: the ADD undone by its DEL.
        rc, out, err = self.call("DEL", self.cid, self.pod_path, self.conf())
        if rc != 0 or self.observe() != self.before:
            raise RuntimeError("%s: DEL after the recorded ADD did not restore: %s" % (self.name, out))
        return sc

    def expect(self, sc, c):
        e = X.Expectation()
        e.add_returned = sc.cmds[0].returned(c)
        e.extra.append(e.add_returned)
        return e

    def recover(self, tree, exp):
        obs = {}
        # reboot: the device as before the ADD, the pod's netns gone.
        self.reset()
        self.put_record(tree)
        rc, out, _ = self.call("DEL", self.cid, "/var/run/netns/%s-gone" % TOKEN, self.conf())
        obs["reboot_del"] = (rc, out.decode(errors="replace")[:300], self.observe())
        rc, out, _ = self.call("ADD", self.cid + "n", self.pod_path, self.conf())
        obs["new_add"] = (rc, out.decode(errors="replace")[:300], self.observe())
        rc, out, _ = self.call("DEL", self.cid + "n", self.pod_path, self.conf())
        obs["new_del"] = (rc, out.decode(errors="replace")[:300], self.observe())
        self.reboot_checks += 1
        # kept: the kernel as ADD left it, the record as the crash left it.
        if exp.add_returned:
            self.reset()
            rc, out, _ = self.call("ADD", self.cid, self.pod_path, self.conf())
            if rc != 0:
                raise RuntimeError("%s ADD again: %s" % (self.name, out))
            self.put_record(tree)
            rc, out, _ = self.call("DEL", self.cid, self.pod_path, self.conf())
            obs["kept_del"] = (rc, out.decode(errors="replace")[:300], self.observe())
            self.kept_checks += 1
        self.reset()
        self.put_record(Tree())
        return obs

    def judge(self, obs, exp, v):
        rc, out, seen = obs["reboot_del"]
        if rc != 0:
            v.fail("refused", "DEL after a reboot: exit %d: %s" % (rc, out))
        elif seen != self.before:
            v.fail("wrong", "DEL after a reboot changed %s into %s" % (self.before, seen))
        rc, out, seen = obs["new_add"]
        if rc != 0:
            v.fail("refused", "a new ADD after a reboot: exit %d: %s" % (rc, out))
        elif seen != self.after_add:
            v.fail("wrong", "a new ADD after a reboot gave %s, not %s" % (seen, self.after_add))
        rc, out, seen = obs["new_del"]
        if rc != 0 or seen != self.before:
            v.fail("wrong", "its DEL: exit %d, %s instead of %s: %s" % (rc, seen, self.before, out))
        if "kept_del" in obs:
            rc, out, seen = obs["kept_del"]
            if rc != 0:
                v.fail("refused", "DEL with the kernel as ADD left it: exit %d: %s" % (rc, out))
            elif seen != self.before:
                v.fail("wrong", "DEL with the kernel as ADD left it: %s, not %s" % (seen, self.before))

    def close(self):
        for f in reversed(self.cleanups):
            try:
                f()
            except Exception:  # noqa: BLE001 - best effort, every one tried
                pass


class HostDevice(PluginDriver):
    """A veth end as the host device: its MTU, alias and up state, kept by ADD, given back by DEL."""

    name = "host-device"
    record_dir = "/run/cni-rdma-plugins/host-device"

    def key_prefix(self):
        return self.dev

    def setup(self):
        self.dev, peer = TOKEN + "hd", TOKEN + "hq"
        self.pod = TOKEN + "-hdpod"
        self.pod_path = "/var/run/netns/" + self.pod
        self.cid = TOKEN + "hdc"
        sh("ip", "netns", "add", self.pod)
        self.cleanups.append(lambda: sh("ip", "netns", "del", self.pod, check=False))
        sh("ip", "link", "add", self.dev, "type", "veth", "peer", "name", peer)
        self.cleanups.append(lambda: sh("ip", "link", "del", peer, check=False))
        self.cleanups.append(lambda: [os.unlink(os.path.join(self.record_dir, n))
                                      for n in os.listdir(self.record_dir) if self.ours(n)])
        self.reset()
        self.before = self.observe()

    def reset(self):
        if link(self.dev) is None:
            for name in ("net1", self.dev):
                if link(name, self.pod):
                    sh("ip", "-n", self.pod, "link", "set", name, "down")
                    sh("ip", "-n", self.pod, "link", "set", name, "name", self.dev)
                    sh("ip", "-n", self.pod, "link", "set", self.dev, "netns", "1")
                    break
        sh("ip", "link", "set", self.dev, "mtu", "1400", "alias", "cr-alias", "up")

    def conf(self):
        return {"cniVersion": "1.0.0", "name": "crnet", "type": "host-device", "device": self.dev}

    def observe(self):
        return ("host", link(self.dev), "pod", link("net1", self.pod))


class Tuning(PluginDriver):
    """A pod's interface (a veth end in the pod as net1): MTU, MAC, promiscuity and a sysctl."""

    name = "tuning"
    record_dir = "/run/cni-rdma-plugins/tuning"

    def key_prefix(self):
        return self.cid

    def setup(self):
        self.pod = TOKEN + "-tupod"
        self.pod_path = "/var/run/netns/" + self.pod
        self.cid = TOKEN + "tuc"
        peer = TOKEN + "tp"
        sh("ip", "netns", "add", self.pod)
        self.cleanups.append(lambda: sh("ip", "netns", "del", self.pod, check=False))
        sh("ip", "link", "add", "net1", "netns", self.pod, "type", "veth", "peer", "name", peer)
        self.cleanups.append(lambda: sh("ip", "link", "del", peer, check=False))
        self.cleanups.append(lambda: [os.unlink(os.path.join(self.record_dir, n))
                                      for n in os.listdir(self.record_dir) if self.ours(n)])
        sh("ip", "link", "set", peer, "up")
        self.mac = link("net1", self.pod)[4]
        self.reset()
        self.before = self.observe()

    def reset(self):
        sh("ip", "-n", self.pod, "link", "set", "net1", "mtu", "1500", "address", self.mac, "promisc", "off", "up")
        sh("ip", "netns", "exec", self.pod, "sh", "-c", "echo 0 >/proc/sys/net/ipv4/conf/net1/arp_ignore")

    def conf(self):
        return {"cniVersion": "1.0.0", "name": "crnet", "type": "tuning", "mtu": 1400,
                "mac": "c2:7a:00:00:00:01", "promisc": True,
                "sysctl": {"net.ipv4.conf.net1.arp_ignore": "1"},
                "prevResult": {"cniVersion": "1.0.0",
                               "interfaces": [{"name": "net1", "sandbox": self.pod_path}]}}

    def observe(self):
        flags = json.loads(sh("ip", "-n", self.pod, "-j", "link", "show", "dev", "net1").stdout)[0].get("flags", [])
        return (link("net1", self.pod), "PROMISC" in flags, sysctl(self.pod, "net.ipv4.conf.net1.arp_ignore"))


class IpamPlugin:
    """An IPAM plugin's leases, judged through its command line only: ADDs, a DEL, a
    concurrent pair recorded; on each state, the runtime's retries, then CHECK of every
    attachment an ADD returned (held) and of every one a DEL released (gone), an ADD
    asking for each held address (it must be refused: else it is doubled), and an ADD of
    a new attachment (the store opens)."""

    def __init__(self, build, work, name, path, subnet="10.66.0.0/24"):
        self.build, self.work, self.name = build, work, name
        self.path, self.subnet = os.path.join(build, path), subnet
        self.record_dir = "/run/%s-%s" % (TOKEN, name)
        self.reboot_checks = self.kept_checks = 0

    def conf(self, ips=None):
        c = {"cniVersion": "1.0.0", "name": "crnet",
             "ipam": {"type": self.name, "subnet": self.subnet, "dataDir": self.record_dir}}
        if ips:
            c["args"] = {"cni": {"ips": ips}}
        return c

    def argv(self, op, cid, ips=None):
        env = {"CNI_COMMAND": op, "CNI_CONTAINERID": cid, "CNI_NETNS": "/var/run/netns/%s-none" % TOKEN,
               "CNI_IFNAME": "net1", "CNI_PATH": "/nonexistent"}
        return [self.path], env, json.dumps(self.conf(ips)).encode()

    def call(self, op, cid, ips=None):
        argv, env, stdin = self.argv(op, cid, ips)
        rc, out, err = X.run(argv, X.env_with(env), stdin)
        return rc, out

    def key_prefix(self):
        return ""

    def scenario(self):
        X.fresh_dir(self.record_dir, 0o755)
        sc = X.Scenario(self.name, self.work, self.record_dir)
        for op, cid in (("ADD", "a1"), ("ADD", "a2"), ("DEL", "a1"), ("ADD", "a3")):
            sc.run(*self.argv(op, TOKEN + cid), op=op, key=TOKEN + cid, label="%s %s" % (op, cid))
        sc.together([self.argv("ADD", TOKEN + cid) + ({"op": "ADD", "key": TOKEN + cid, "label": "ADD %s (at once)" % cid},)
                     for cid in ("b1", "b2")])
        sc.record()
        for c in sc.cmds:
            if c.rc != 0:
                raise RuntimeError("%s: %s" % (c.label(), c.out.decode(errors="replace")))
        self.keys = sorted({c.meta["key"] for c in sc.cmds})
        self.returned = {c.meta["key"]: [ip["address"].split("/")[0] for ip in json.loads(c.out)["ips"]]
                         for c in sc.cmds if c.meta["op"] == "ADD"}
        return sc

    def expect(self, sc, c):
        e = X.Expectation()
        for cmd in sorted(sc.cmds, key=lambda x: x.start):
            key = cmd.meta["key"]
            if not cmd.started(c):
                continue
            if not cmd.returned(c):
                e.inflight.append(cmd)
                e.held.pop(key, None)
                e.gone.discard(key)
            elif cmd.meta["op"] == "ADD":
                e.held[key] = [ip["address"].split("/")[0] for ip in json.loads(cmd.out)["ips"]]
                e.gone.discard(key)
            else:
                e.held.pop(key, None)
                e.gone.add(key)
        return e

    def recover(self, tree, exp):
        X.fresh_dir(self.record_dir, 0o755)
        tree.materialise(self.record_dir)
        # After a power loss the runtime tears down the sandboxes whose set-up it never saw
        # answered: a DEL for every command in flight.
        obs = {"retries": [(c.meta["key"], "DEL") + self.call("DEL", c.meta["key"]) for c in exp.inflight]}
        # Every attachment and every address the scenario's ADDs returned (a run depends
        # on the state and the retries only: it is shared by every crash point of both).
        obs["check"] = {k: self.call("CHECK", k)[0] for k in self.keys}
        obs["ask"] = {}
        for k, ips in self.returned.items():
            rc, out = self.call("ADD", TOKEN + "probe", ips)
            obs["ask"][k] = rc
            if rc == 0:
                self.call("DEL", TOKEN + "probe")
        obs["new"] = self.call("ADD", TOKEN + "new")
        self.reboot_checks += 1
        return obs

    def judge(self, obs, exp, v):
        for key, op, rc, out in obs["retries"]:
            if rc != 0:
                v.fail("refused", "%s %s retried: exit %d: %s" % (op, key, rc, out.decode(errors="replace")[:200]))
        for k in exp.held:
            if obs["check"][k] != 0:
                v.fail("lost", "%s: its ADD returned %s, CHECK finds no lease" % (k, exp.held[k]))
            if obs["ask"][k] == 0:
                v.fail("doubled", "%s holds %s, an ADD asking for it got it" % (k, exp.held[k]))
        for k in exp.gone | {c.meta["key"] for c in exp.inflight}:
            if obs["check"][k] == 0:
                v.fail("back", "%s: released, CHECK finds its lease" % k)
        if obs["new"][0] != 0:
            v.fail("refused", "a new ADD: " + obs["new"][1].decode(errors="replace")[:200])

    def close(self):
        subprocess.run(["rm", "-rf", self.record_dir])


# name -> driver. host-local (ipam/host-local) is one more entry, once its leases survive
# a power loss (it syncs nothing: lost, doubled and released leases back, both models):
#   "host-local": lambda b, w: IpamPlugin(b, w, "host-local", "ipam/host-local/host-local"),
PLUGINS = {"host-device": HostDevice, "tuning": Tuning}


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: plugins.py BUILD-DIR [PLUGIN]...\n")
        return 2
    build = os.path.realpath(sys.argv[1])
    names = sys.argv[2:] or sorted(PLUGINS)
    # NAME=PATH (relative to BUILD-DIR): an IPAM plugin judged by IpamPlugin.
    for n in names:
        if "=" in n:
            PLUGINS[n] = lambda b, w, n=n: IpamPlugin(b, w, n.split("=")[0], n.split("=", 1)[1])
    probe = TOKEN + "-probe"
    p = sh("ip", "netns", "add", probe, check=False)
    if p.returncode != 0:
        if os.getuid() != 0:
            print("FAIL: the crash states of the plugins' records need root (ip netns add: %s)" % p.stderr.strip())
            return 1
        print("SKIP: network namespaces cannot be created here (ip netns add: %s)" % p.stderr.strip())
        return 77
    sh("ip", "netns", "del", probe)
    work = os.path.join("/tmp", TOKEN + "-plugins")
    X.fresh_dir(work)
    reports, bad = [], []
    try:
        for name in names:
            drv = PLUGINS[name](build, work)
            try:
                sc = drv.scenario()
                names_made = sorted({(o.kind, o.name2 if o.kind == "rename" else o.name) for o in sc.ops if o.is_meta()})
                print("# %s: ADD recorded, %d operations on its record in %.1f s: %s" % (
                    name, len(sc.ops), sc.record_s, ", ".join("%s %s" % n for n in names_made)))
                if isinstance(drv, PluginDriver) and not any(k == "rename" for k, _ in names_made):
                    X.die("%s: its ADD no longer writes a record" % name)
                t0 = time.monotonic()
                reports.append(X.explore(sc, drv, Bounds(FULL), os.environ.get("CRASH_KEEP")))
                if drv.kept_checks or isinstance(drv, PluginDriver):
                    print("  %d states judged after a reboot, %d with the kernel as ADD left it (%.1f s)" % (
                        drv.reboot_checks, drv.kept_checks, time.monotonic() - t0))
                # Each sync of the record treated as never done: the kept states must show it.
                for o in [o for o in sc.ops if o.kind == "sync"]:
                    name_of = re.sub(r"\.tmp\.[0-9]+$", ".tmp", o.name.replace(drv.key_prefix(), "<record>"))
                    what = "%s of %s" % ("fsync" if o.full else "fdatasync", name_of or "its directory")
                    r = X.explore(sc, drv, Bounds(FULL), drop_syncs=lambda x, i=o.idx: x.idx == i, quiet=True)
                    print("  without the %s: %d failing states%s" % (
                        what, r.failed(), " (%s)" % r.examples[0].split("\n")[-1].strip() if r.examples else ""))
                    if not r.failed():
                        bad.append("%s: the %s is not seen needed" % (name, what))
            finally:
                drv.close()
    finally:
        if not os.environ.get("CRASH_KEEP_WORK"):
            subprocess.run(["rm", "-rf", work])
    for b in bad:
        print("FAIL: " + b)
    return 1 if X.main_summary(reports) or bad else 0


if __name__ == "__main__":
    sys.exit(main())
