"""The explorer: a scenario recorded, each crash state rebuilt, the next command judged.

A `Scenario` is a list of steps, each one command or several at once, run by one bash
under strace (recorder.py) on its directory (`root`) as the driver's setup left it. The
trace gives the operations; model.py gives every state a power loss can leave at every
crash point; each state is written into a directory of its own, and the program's
driver runs what comes next on it (the runtime's retries of the commands in flight, the
next command, a reader) and judges what it sees against what the commands that returned
promised:

  lost       an ADD that returned before the crash point: its address not held by it
  doubled    an address held by two attachments
  back       a DEL (or release) that returned: its attachment holds an address again
  refused    the store (or record) does not open without a human
  wrong      anything else the driver checks (a plugin's DEL that does not restore)

A driver has expect(scenario, point), recover(tree, expectation) and judge(observation,
expectation, verdict). Recovery runs are cached by the state's digest and
Expectation.retry_key() (the commands retried, and what else a driver's recovery
depends on), so a state seen at many crash points runs once; the judgement is made at
each crash point.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

from model import MODELS, Exploration, Tree
import recorder as rec

KINDS = ("lost", "doubled", "back", "refused", "wrong")
# Failing states printed per model and kind.
EXAMPLES = int(os.environ.get("CRASH_EXAMPLES", "2"))


class Command:
    """One program run of a scenario: what ran, and what the trace says of it."""

    def __init__(self, i, argv, env, stdin, meta):
        self.i, self.argv, self.env, self.stdin, self.meta = i, argv, env or {}, stdin, meta
        self.pid = self.rc = None
        self.out = self.err = b""
        self.start = self.end = None

    def returned(self, c):
        return self.end is not None and self.end < c

    def started(self, c):
        return self.start is not None and self.start < c

    def label(self):
        return self.meta.get("label") or " ".join(os.path.basename(a) for a in self.argv[:2])


class Scenario:
    """Steps run under one strace; @root is the directory whose states are explored."""

    def __init__(self, name, work, root):
        self.name, self.work, self.root = name, work, os.path.realpath(root)
        self.steps, self.cmds = [], []
        # Which names under the root are the scenario's (a shared directory's others' are not).
        self.keep = None

    def run(self, argv, env=None, stdin=b"", **meta):
        c = Command(len(self.cmds), argv, env, stdin, meta)
        self.cmds.append(c)
        self.steps.append([c])
        return c

    def together(self, specs):
        """Several commands started at once (each (argv, env, stdin, meta))."""
        group = []
        for argv, env, stdin, meta in specs:
            c = Command(len(self.cmds), argv, env, stdin, meta)
            self.cmds.append(c)
            group.append(c)
        self.steps.append(group)
        return group

    def start(self, argv, env=None, stdin=b"", **meta):
        """A command left running: end_of() waits for it later."""
        c = Command(len(self.cmds), argv, env, stdin, meta)
        self.cmds.append(c)
        self.steps.append(("start", c))
        return c

    def end_of(self, c):
        self.steps.append(("wait", c))

    def shell(self, line):
        """A line of the steps' bash as it is ($P[i]: the pid of command i)."""
        self.steps.append(line)

    def record(self):
        meta = os.path.join(self.work, "meta-" + self.name)
        shutil.rmtree(meta, ignore_errors=True)
        os.makedirs(meta)
        lines = ["set -u", "M=" + shlex.quote(meta), "declare -A P"]
        def launch(c):
            with open(os.path.join(meta, "in.%d" % c.i), "wb") as f:
                f.write(c.stdin)
            env = ["%s=%s" % (k, v) for k, v in c.env.items()]
            argv = (["env"] + env if env else []) + c.argv
            lines.append('%s <"$M/in.%d" >"$M/out.%d" 2>"$M/err.%d" & P[%d]=$!; echo "%d $!" >>"$M/pids"' %
                         (" ".join(shlex.quote(a) for a in argv), c.i, c.i, c.i, c.i, c.i))

        def wait(c):
            lines.append('wait "${P[%d]}"; echo "%d $?" >>"$M/rcs"' % (c.i, c.i))

        for step in self.steps:
            if isinstance(step, str):
                lines.append(step)
            elif isinstance(step, tuple):
                (launch if step[0] == "start" else wait)(step[1])
            else:
                for c in step:
                    launch(c)
                for c in step:
                    wait(c)
        script = os.path.join(meta, "steps.sh")
        with open(script, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.base = Tree.from_dir(self.root, self.keep)
        tr = os.path.join(meta, "trace")
        t0 = time.monotonic()
        rc = rec.record(["bash", script], tr)
        self.record_s = time.monotonic() - t0
        if rc != 0:
            raise RuntimeError("%s: the steps' shell ended with %d" % (self.name, rc))
        with open(os.path.join(meta, "pids")) as f:
            for line in f:
                i, pid = line.split()
                self.cmds[int(i)].pid = int(pid)
        with open(os.path.join(meta, "rcs")) as f:
            for line in f:
                i, r = line.split()
                self.cmds[int(i)].rc = int(r)
        for c in self.cmds:
            with open(os.path.join(meta, "out.%d" % c.i), "rb") as f:
                c.out = f.read()
            with open(os.path.join(meta, "err.%d" % c.i), "rb") as f:
                c.err = f.read()
        volatile = self.base.copy()
        self.ops, ends, first = rec.parse(tr, volatile, self.root)
        for c in self.cmds:
            c.start = first.get(c.pid)
            c.end = ends.get(c.pid, (None,))[0]
            if c.start is None or c.end is None:
                raise RuntimeError("%s: command %d (%s) is not in the trace" % (self.name, c.i, c.label()))
        # The recorder checks itself: every operation replayed gives the directory as it is.
        real = Tree.from_dir(self.root, self.keep)
        if real.listing() != volatile.listing():
            want = {p: (m, d) for p, m, d in real.listing()}
            got = {p: (m, d) for p, m, d in volatile.listing()}
            diff = sorted(p for p in set(want) | set(got) if want.get(p) != got.get(p))
            raise RuntimeError("%s: the trace replayed differs from the directory at: %s" %
                               (self.name, ", ".join(diff[:8])))
        with open(tr) as f:
            self.trace_lines = f.read().splitlines()
        return self


class Verdict:
    """What a driver found in one state: failures by kind, with a line each."""

    def __init__(self):
        self.fails = []

    def fail(self, kind, why):
        assert kind in KINDS
        self.fails.append((kind, why))


class Report:
    def __init__(self, name):
        self.name = name
        self.points = 0
        self.states = {m: 0 for m in MODELS}
        self.distinct = {m: set() for m in MODELS}
        self.runs = 0
        self.found = {m: {k: 0 for k in KINDS} for m in MODELS}
        self.examples = []
        self.example_count = {}
        self.seconds = 0.0

    def line(self):
        per = "; ".join("%s %d states (%d distinct)" % (m, self.states[m], len(self.distinct[m]))
                        for m in MODELS)
        bad = "; ".join("%s: %s" % (m, ", ".join("%d %s" % (self.found[m][k], k) for k in KINDS))
                        for m in MODELS)
        return "%s: %d crash points; %s; %d recovery runs; %s; %.1f s" % (
            self.name, self.points, per, self.runs, bad, self.seconds)

    def failed(self, model=None):
        ms = [model] if model else MODELS
        return sum(self.found[m][k] for m in ms for k in KINDS)


def explore(scenario, driver, bounds, keep=None, models=MODELS, drop_syncs=None, quiet=False,
            cache=None, points=None, enough=None):
    """Every crash state of @scenario judged by @driver; a Report.

    @drop_syncs: a predicate on sync operations; those it accepts are treated as never
    done (a product built without them), for showing which syncs matter. @cache: the
    recovery runs of earlier explorations of the same scenario, by state. @points: a
    predicate on crash points, the others not explored. @enough: stop once every model has
    this many failing states."""
    t0 = time.monotonic()
    ops = scenario.ops
    if drop_syncs:
        ops = [o for o in ops if not (o.kind == "sync" and drop_syncs(o))]
        ops = [_copy_op(o) for o in ops]
    ex = Exploration(scenario.base, ops, bounds)
    extra = [c.start + 1 for c in scenario.cmds] + [c.end + 1 for c in scenario.cmds]
    report = Report(scenario.name)
    if cache is None:
        cache = {}
    for point in ex.crash_points(extra):
        if points and not points(point):
            continue
        if enough and all(report.failed(m) >= enough for m in models):
            break
        exp = driver.expect(scenario, point)
        report.points += 1
        for digest, (tree, chosen) in ex.states(point).items():
            if not any(m in chosen for m in models):
                continue
            key = (digest, exp.retry_key())
            obs = cache.get(key)
            if obs is None:
                obs = driver.recover(tree, exp)
                cache[key] = obs
                report.runs += 1
            v = Verdict()
            driver.judge(obs, exp, v)
            for m in models:
                if m not in chosen:
                    continue
                report.states[m] += 1
                report.distinct[m].add(digest)
                for kind, why in v.fails:
                    report.found[m][kind] += 1
            if v.fails:
                ex_models = [m for m in models if m in chosen]
                slot = (ex_models[-1], v.fails[0][0])
                if report.example_count.get(slot, 0) < EXAMPLES:
                    report.example_count[slot] = report.example_count.get(slot, 0) + 1
                    report.examples.append(_example(scenario, ops, point, exp, chosen, v, ex_models))
                if keep:
                    d = os.path.join(keep, "%s-%d-%s" % (scenario.name.replace(" ", "-"), point, digest[:8]))
                    if not os.path.exists(d):
                        os.makedirs(d)
                        tree.materialise(d)
    report.seconds = time.monotonic() - t0
    if not quiet:
        print(report.line())
        for e in report.examples:
            print("  " + e)
    return report


def _example(scenario, ops, point, exp, chosen, v, models):
    where = _readable(scenario.trace_lines[point - 1]) if point else "(before the first line)"
    return "%s: crash after trace line %d: %s\n    in flight: %s\n    %s\n    %s" % (
        "/".join(models), point, where[:200],
        ", ".join(c.label() for c in exp.inflight) or "nothing",
        "; ".join("%s: %s" % (m, _describe(ops, chosen[m])) for m in models),
        "\n    ".join("%s: %s" % (k, " ".join(why.split())[:300]) for k, why in v.fails[:4]))


def _readable(line):
    """A trace line with its -xx strings as text."""
    return re.sub(r"((?:\\x[0-9a-f]{2})+)",
                  lambda m: bytes.fromhex(m.group(1).replace("\\x", "")).decode("utf-8", "replace"), line)


def _copy_op(o):
    c = rec.Op(o.kind, o.start, o.end, o.pid)
    for k in rec.Op.__slots__:
        setattr(c, k, getattr(o, k))
    return c


def _describe(ops, choice):
    if not choice:
        return "every pending operation landed"
    by = {o.idx: o for o in ops}
    return ", ".join("%r %s" % (by[i], v if isinstance(v, str) else "%s at %d" % v)
                     for i, v in sorted(choice.items())[:6]) + (" ..." if len(choice) > 6 else "")


class Expectation:
    """What must hold at a crash point: attachments promised, attachments gone, retries."""

    def __init__(self):
        self.held = {}      # key -> set of (pool, ip) an ADD returned
        self.gone = set()   # keys a DEL returned for
        self.inflight = []  # commands the runtime runs again
        self.extra = []     # what else a recovery depends on (part of its cache key)

    def retry_key(self):
        """What the recovery runs depend on besides the state: the commands retried (and
        what a driver adds to `extra`)."""
        return tuple(c.i for c in self.inflight) + tuple(self.extra)


def run(argv, env=None, stdin=b"", timeout=60):
    p = subprocess.run(argv, input=stdin, env=env, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def fresh_dir(path, mode=0o700):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    os.chmod(path, mode)


def main_summary(reports):
    total = sum(r.failed() for r in reports)
    states = {m: sum(r.states[m] for r in reports) for m in MODELS}
    print("explored: %s; %d recovery runs; %d failures" % (
        ", ".join("%s %d states" % (m, states[m]) for m in MODELS),
        sum(r.runs for r in reports), total))
    return total


def env_with(extra):
    e = dict(os.environ)
    e.update(extra)
    return e


def json_of(b):
    try:
        return json.loads(b.decode("utf-8", "replace"))
    except ValueError:
        return None


def die(msg):
    print("FAIL: " + msg)
    sys.exit(1)
