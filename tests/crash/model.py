"""The persistence models: which states of a directory a power loss can leave.

A crash point is a place between two lines of the trace: every call that returned
before it is done, one entered and not returned is in flight (it may have done any part
of its work). What a done call wrote is on disk once a sync that started after it
returned has returned itself (`durable`); everything else done or in flight is
`pending`, and each model says what may become of pending operations:

posix (strict POSIX, nothing more; the most states):
  - a write not yet synced (fsync/fdatasync of its file) lands whole, not at all, only up
    to a 512-byte or 4 KiB boundary of the file (`tear`), only from such a boundary on
    (`tail`: the sectors in another order), or, when it made the file longer, as that
    length with zeros (`zero`: the size landed, the data did not); each independently,
    so later writes may land where earlier ones did not;
  - ftruncate likewise lands or not;
  - a name made, removed or renamed (create, mkdir, link, unlink, rmdir, rename) and not
    yet synced by an fsync of its directory lands or not, independently of the others
    and of the data it names (a rename may land before the data of the file it names,
    a new file's name may be missing after its fsync);
  - rename itself is atomic: the new name names the old or the new file.
ext4/xfs (ext4 data=ordered and xfs, their defaults; a subset of posix's states):
  - names land in the order they were made (one journal): the pending ones that land
    are a prefix, and an fsync of any file or directory makes every name made before it
    durable (the journal's commit is global; fdatasync is not counted on for that);
  - data appended to a file lands as a prefix of what was appended, cut at a 4 KiB
    boundary at most (the size on disk follows written data: no zeros, no sector
    reordering); writes inside the file tear at 4 KiB and land in any order.
posix adds over ext4/xfs: names landing out of order or without their directory's
fsync after another fsync, tears at 512 bytes, tails, and appends as zeros.

The number of states is bounded (`Bounds`): every pending operation alone kept or dropped
against all the others kept and against all the others dropped, each variant of each
(tears at up to `tears` boundaries), every subset when there are at most `subsets`
pending, ext4's prefixes, and with `pairs` every pair of deviations. States are called
for in the order of their crash points (the durable parts are kept as they grow).
"""

import hashlib
import itertools
import os
import stat

MODELS = ("posix", "ext4")
INF = float("inf")


class Bounds:
    def __init__(self, full=False, small=False):
        self.tears = 16 if full else 1 if small else 3
        self.subsets = 8 if full else 3 if small else 5
        self.pairs = full


class Tree:
    """A directory tree by inode: files' bytes, directories' entries, modes. Inode 1 is the root."""

    def __init__(self):
        self.files, self.dirs, self.modes = {}, {1: {}}, {1: 0o700}
        self.next_ino = 2

    @classmethod
    def from_dir(cls, path, keep=None):
        """The tree of @path as it is (@keep(relpath): which entries to take)."""
        t = cls()
        inodes = {}

        def walk(dpath, dino, rel):
            for name in sorted(os.listdir(dpath)):
                r = os.path.join(rel, name) if rel else name
                if keep and not keep(r):
                    continue
                p = os.path.join(dpath, name)
                st = os.lstat(p)
                if (st.st_dev, st.st_ino) in inodes:
                    t.dirs[dino][name] = inodes[(st.st_dev, st.st_ino)]
                    continue
                ino = t.next_ino
                t.next_ino += 1
                inodes[(st.st_dev, st.st_ino)] = ino
                t.dirs[dino][name] = ino
                t.modes[ino] = st.st_mode & 0o7777
                if stat.S_ISDIR(st.st_mode):
                    t.dirs[ino] = {}
                    walk(p, ino, r)
                elif stat.S_ISREG(st.st_mode):
                    with open(p, "rb") as f:
                        t.files[ino] = f.read()
                else:
                    raise ValueError("%s: only files and directories are modelled" % p)

        t.modes[1] = os.stat(path).st_mode & 0o7777
        walk(path, 1, "")
        return t

    def copy(self):
        t = Tree.__new__(Tree)
        t.files, t.modes, t.next_ino = dict(self.files), dict(self.modes), self.next_ino
        t.dirs = {k: dict(v) for k, v in self.dirs.items()}
        return t

    def lookup(self, rel):
        ino = 1
        for part in rel.split("/") if rel else ():
            d = self.dirs.get(ino)
            if d is None or part not in d:
                return None
            ino = d[part]
        return ino

    def new_file(self, mode):
        ino = self.next_ino
        self.next_ino += 1
        self.files[ino], self.modes[ino] = b"", mode & 0o7777
        return ino

    def apply_meta(self, op):
        if op.kind == "create":
            if op.ino >= self.next_ino:
                self.next_ino = op.ino + 1
            if op.mode & 0o40000:
                self.dirs.setdefault(op.ino, {})
            else:
                self.files.setdefault(op.ino, b"")
            self.modes[op.ino] = op.mode & 0o7777
            self.dirs.setdefault(op.dir, {})[op.name] = op.ino
        elif op.kind == "link":
            self.dirs.setdefault(op.dir, {})[op.name] = op.ino
        elif op.kind == "unlink":
            d = self.dirs.get(op.dir, {})
            if d.get(op.name) == op.ino:
                del d[op.name]
        elif op.kind == "rename":
            s = self.dirs.get(op.dir, {})
            if s.get(op.name) == op.ino:
                del s[op.name]
            self.dirs.setdefault(op.dir2, {})[op.name2] = op.ino

    def apply(self, op):
        """The program's view: every operation as it was done."""
        if op.is_meta():
            self.apply_meta(op)
        elif op.is_data():
            self.files[op.ino] = data_apply(self.files.get(op.ino, b""), op, "keep")

    def listing(self):
        """(path, mode, bytes or None for a directory) of every reachable name, sorted."""
        out = []

        def walk(ino, rel, seen):
            for name in sorted(self.dirs.get(ino, {})):
                child = self.dirs[ino][name]
                r = os.path.join(rel, name) if rel else name
                if child in self.dirs:
                    if child in seen:
                        continue
                    out.append((r, self.modes.get(child, 0o700), None))
                    walk(child, r, seen | {child})
                else:
                    out.append((r, self.modes.get(child, 0o600), self.files.get(child, b"")))

        walk(1, "", {1})
        return out

    def digest(self):
        h = hashlib.sha1()
        for path, mode, data in self.listing():
            h.update(path.encode("utf-8", "surrogateescape") + b"\0")
            h.update(b"d" if data is None else hashlib.sha1(data).digest())
        return h.hexdigest()

    def materialise(self, path):
        """Writes the tree into @path (an empty directory)."""
        for rel, mode, data in self.listing():
            p = os.path.join(path, rel)
            if data is None:
                os.mkdir(p, mode)
                os.chmod(p, mode)
            else:
                fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
                try:
                    if data:
                        os.write(fd, data)
                finally:
                    os.close(fd)
                os.chmod(p, mode)


def data_apply(content, op, variant):
    """@content after data operation @op landed as @variant says."""
    if variant == "drop":
        return content
    if op.kind == "trunc":
        return content[:op.size] + b"\0" * max(0, op.size - len(content))
    off, data = op.off, op.data
    if variant == "zero":
        end = off + len(data)
        return content + b"\0" * (end - len(content)) if end > len(content) else content
    if isinstance(variant, tuple):
        kind, at = variant
        if kind == "tear":
            data = data[:at - off]
        else:
            data, off = data[at - off:], at
    if off > len(content):
        content = content + b"\0" * (off - len(content))
    return content[:off] + data + content[off + len(data):]


def boundaries(op, step, limit):
    """File offsets that are multiples of @step strictly inside write @op, at most @limit."""
    lo, hi = op.off, op.off + len(op.data)
    first = (lo // step + 1) * step
    pts = list(range(first, hi, step))
    if len(pts) <= limit:
        return pts
    pick = {pts[0], pts[-1]}
    for i in range(1, limit - 1):
        pick.add(pts[i * (len(pts) - 1) // (limit - 1)])
    return sorted(pick)


class Exploration:
    """The crash states of @base after @ops (trace.parse()), by crash point and model."""

    def __init__(self, base, ops, bounds):
        self.base, self.bounds = base, bounds
        self.all = ops
        for i, o in enumerate(ops):
            o.idx = i
        self.ops = [o for o in ops if o.kind != "sync"]
        self.syncs = [o for o in ops if o.kind == "sync"]
        self._data_ops = {}
        for o in self.ops:
            if o.is_data():
                self._data_ops.setdefault(o.ino, []).append(o)
        self.dt = {m: self._durable_times(m) for m in MODELS}
        # Every inode a file was created as (empty until written), for states where its
        # name landed and its data did not.
        self.empty = {o.ino: b"" for o in self.ops if o.kind == "create" and not o.mode & 0o40000}
        self._cache = {m: {"meta": (0, base.copy()), "data": {}} for m in MODELS}

    def _durable_times(self, model):
        """For each operation, the first crash point at which it is durable (INF: never)."""
        by_ino = {}
        for s in self.syncs:
            by_ino.setdefault(s.ino, []).append(s)
        full = [s for s in self.syncs if s.full]

        def first_after(syncs, end):
            best = INF
            for s in syncs:
                if s.start > end and s.end + 1 < best:
                    best = s.end + 1
            return best

        out = [INF] * len(self.all)
        for o in self.ops:
            if o.is_data():
                t = first_after(by_ino.get(o.ino, []) + by_ino.get(-1, []), o.end)
            else:
                dirs = {o.dir2} if o.kind == "rename" else {o.dir}
                cands = [s for s in self.syncs if s.full and (s.ino in dirs or s.ino == -1)]
                if model == "ext4":
                    cands = full
                t = first_after(cands, o.end)
            out[o.idx] = t
        return out

    def crash_points(self, extra=()):
        """Every crash point at which what may be on disk changes (plus @extra)."""
        pts = {0}
        for m in MODELS:
            for o in self.ops:
                t = self.dt[m][o.idx]
                pts.add(o.start + 1)
                pts.add(o.end + 1)
                if t != INF:
                    pts.add(t)
        pts.update(extra)
        return sorted(pts)

    # -- one crash point --
    def _pending(self, c, model):
        dt = self.dt[model]
        return [o for o in self.ops if o.start < c and dt[o.idx] > c]

    def _meta_tree(self, c, model, chosen):
        """The names: durable operations and the @chosen pending ones, in program order."""
        dt = self.dt[model]
        cache = self._cache[model]
        k, tree = cache["meta"]
        # Advance the cached prefix while every operation in it is durable.
        while k < len(self.ops) and (not self.ops[k].is_meta() or dt[self.ops[k].idx] <= c) and \
                self.ops[k].start < c:
            if self.ops[k].is_meta():
                tree.apply_meta(self.ops[k])
            k += 1
        cache["meta"] = (k, tree)
        t = tree.copy()
        for o in self.ops[k:]:
            if o.start >= c:
                continue
            if o.is_meta() and (dt[o.idx] <= c or chosen.get(o.idx, "keep") != "drop"):
                t.apply_meta(o)
        return t

    def _content(self, c, model, ino, ops, chosen):
        dt = self.dt[model]
        cache = self._cache[model]["data"]
        k, content = cache.get(ino, (0, self.base.files.get(ino, self.empty.get(ino, b""))))
        while k < len(ops) and dt[ops[k].idx] <= c:
            content = data_apply(content, ops[k], "keep")
            k += 1
        cache[ino] = (k, content)
        for o in ops[k:]:
            if o.start < c:
                content = data_apply(content, o, chosen.get(o.idx, "keep"))
        return content

    def build(self, c, model, chosen):
        """The tree of crash point @c with pending operations as @chosen says (index -> variant)."""
        t = self._meta_tree(c, model, chosen)
        for ino, ops in self._data_ops.items():
            if ops[0].start < c:
                t.files[ino] = self._content(c, model, ino, ops, chosen)
        for ino, data in self.empty.items():
            t.files.setdefault(ino, data)
        return t

    def variants(self, o, model):
        if o.is_meta() or o.kind == "trunc":
            return ["keep", "drop"]
        v = ["keep", "drop"]
        n = self.bounds.tears
        if model == "posix":
            pts = sorted(set(boundaries(o, 512, n)) | set(boundaries(o, 4096, n)))
            v += [("tear", p) for p in pts] + [("tail", p) for p in pts]
            if o.extends:
                v.append("zero")
        else:
            v += [("tear", p) for p in boundaries(o, 4096, n)]
        return v

    def valid(self, pending, chosen, model):
        if model == "posix":
            return True
        dropped = False
        for o in pending:
            if o.is_meta():
                v = chosen.get(o.idx, "keep")
                if v != "drop" and dropped:
                    return False
                dropped = dropped or v == "drop"
        ended = {}
        for o in pending:
            if o.kind == "write" and o.extends:
                v = chosen.get(o.idx, "keep")
                if ended.get(o.ino) and v != "drop":
                    return False
                if v != "keep":
                    ended[o.ino] = True
        return True

    def choices(self, pending, model):
        """Bounded choices for the pending operations (dicts index -> variant; absent: keep)."""
        idx = [o.idx for o in pending]
        allkeep = {}
        alldrop = {i: "drop" for i in idx}
        yield allkeep
        yield alldrop
        var = {o.idx: self.variants(o, model) for o in pending}
        for i in idx:
            for v in var[i]:
                if v != "keep":
                    yield {i: v}
                if v != "drop":
                    d = dict(alldrop)
                    d[i] = v
                    yield d
        if len(idx) <= self.bounds.subsets:
            for bits in itertools.product(("keep", "drop"), repeat=len(idx)):
                yield {i: b for i, b in zip(idx, bits) if b == "drop"}
        if model == "ext4":
            meta = [o.idx for o in pending if o.is_meta()]
            for j in range(len(meta) + 1):
                d = {i: "drop" for i in meta[j:]}
                yield d
                d2 = dict(alldrop)
                for i in meta[:j]:
                    del d2[i]
                yield d2
            for ino in {o.ino for o in pending if o.kind == "write" and o.extends}:
                apps = [o.idx for o in pending if o.kind == "write" and o.extends and o.ino == ino]
                for j in range(len(apps) + 1):
                    yield {i: "drop" for i in apps[j:]}
        if self.bounds.pairs:
            for a, b in itertools.combinations(idx, 2):
                yield {a: "drop", b: "drop"}
                d = dict(alldrop)
                del d[a]
                del d[b]
                yield d

    def states(self, c):
        """{digest: (tree, {model: example choice})} of crash point @c."""
        out = {}
        for model in MODELS:
            pending = self._pending(c, model)
            seen = set()
            for ch in self.choices(pending, model):
                key = tuple(sorted((k, str(v)) for k, v in ch.items()))
                if key in seen or not self.valid(pending, ch, model):
                    continue
                seen.add(key)
                t = self.build(c, model, ch)
                d = t.digest()
                if d not in out:
                    out[d] = (t, {})
                out[d][1].setdefault(model, ch)
        return out
