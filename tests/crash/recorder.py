"""The recorder: programs run under strace, their file-system calls under one directory.

strace (-f -y -xx) sees every system call of static and dynamic binaries alike, with
each descriptor's path and every byte written. parse() turns its output into the
operations the model replays (model.py), each with the trace lines where it was entered
and where it returned, and the lines where each process ended:

  create(dir, name, inode, kind)   a name made for a new file or directory
  link(dir, name, inode)           another name for an inode (linkat of an O_TMPFILE file)
  unlink(dir, name, inode)         a name removed (rmdir too)
  rename(sdir, sname, ddir, dname, inode)
  write(inode, offset, bytes)      write, pwrite, writev (offsets followed per descriptor)
  trunc(inode, size)               ftruncate, O_TRUNC
  sync(inode, full)                fsync (full) or fdatasync of a file or directory

Calls outside the directory are dropped. What the model cannot replay (a shared writable
mapping, copy_file_range, sendfile or splice into the directory) stops the parse: a
recorder that misses a write would explore states that never were.
"""

import os
import re
import subprocess

# Every call that changes a file or a name, or a descriptor's meaning.
TRACED = ("open,openat,openat2,creat,write,pwrite64,writev,pwritev,pwritev2,ftruncate,"
          "truncate,fsync,fdatasync,sync,syncfs,sync_file_range,rename,renameat,renameat2,"
          "unlink,unlinkat,link,linkat,symlink,symlinkat,mkdir,mkdirat,rmdir,close,"
          "close_range,dup,dup2,dup3,fcntl,lseek,fallocate,mmap,copy_file_range,sendfile,"
          "fchmod,chmod,fchmodat,"
          "splice,clone,clone3,fork,vfork,execve")

LINE = re.compile(r'^(\d+) +(.*)$')
CALL = re.compile(r'^([a-z0-9_]+)\((.*)$')
RESUMED = re.compile(r'^<\.\.\. ([a-z0-9_]+) resumed>(.*)$')
EXITED = re.compile(r'^\+\+\+ (exited with (\d+)|killed by (SIG[A-Z0-9]+)( \(core dumped\))?) \+\+\+$')
RESULT = re.compile(r'^(.*)\) += (-?\d+|0x[0-9a-f]+|\?)(<[^>]*>)?(\(deleted\))?( .*)?$')


class TraceError(Exception):
    pass


def record(argv, trace_path, env=None, cwd=None):
    """Run @argv under strace, its calls written to @trace_path; return its exit status."""
    env = dict(os.environ if env is None else env)
    # An ASan build: LeakSanitizer cannot work under ptrace (every run would fail). The
    # runs judging each state are not traced and still look for leaks.
    env["ASAN_OPTIONS"] = (env["ASAN_OPTIONS"] + ":" if env.get("ASAN_OPTIONS") else "") + "detect_leaks=0"
    # -q, not -qq: the lines of processes' ends are needed.
    cmd = ["strace", "-f", "-q", "-y", "-xx", "-s", str(1 << 26), "-o", trace_path,
           "-e", "trace=" + TRACED, "-e", "signal=none"]
    return subprocess.run(cmd + argv, env=env, cwd=cwd).returncode


def unhex(s):
    """strace's -xx string: every byte as \\xNN."""
    if not s:
        return b""
    if not s.startswith("\\x") or len(s) % 4:
        raise TraceError("not a -xx string: %r" % s[:80])
    return bytes.fromhex(s.replace("\\x", ""))


def split_args(s):
    """Top-level arguments of a call (strings are hex, so only brackets nest)."""
    out, depth, cur, i = [], 0, [], 0
    while i < len(s):
        c = s[i]
        if c == '"':
            j = s.index('"', i + 1)
            cur.append(s[i:j + 1])
            i = j + 1
            continue
        if c == '<':
            j = s.index('>', i + 1)
            cur.append(s[i:j + 1])
            i = j + 1
            continue
        if c in '[{':
            depth += 1
        elif c in ']}':
            depth -= 1
        if c == ',' and depth == 0:
            out.append(''.join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    if cur and ''.join(cur).strip():
        out.append(''.join(cur).strip())
    return out


FD = re.compile(r'^(-?\d+|AT_FDCWD)(?:<((?:\\x[0-9a-f]{2})*)>(\(deleted\))?)?$')
STR = re.compile(r'^"((?:\\x[0-9a-f]{2})*)"(\.\.\.)?$')


def arg_fd(a):
    m = FD.match(a)
    if not m:
        raise TraceError("not a descriptor: %r" % a)
    fd = -100 if m.group(1) == "AT_FDCWD" else int(m.group(1))
    path = unhex(m.group(2)).decode("utf-8", "surrogateescape") if m.group(2) is not None else None
    if path is not None and m.group(3):
        path += " (deleted)"
    return fd, path


def arg_str(a):
    m = STR.match(a)
    if not m:
        raise TraceError("not a string: %r" % a[:80])
    if m.group(2):
        raise TraceError("a string strace cut short: raise -s")
    return unhex(m.group(1))


def arg_flags(a):
    return set(a.split("|"))


def arg_int(a):
    """A number as strace prints it: decimal, 0x hex, or a mode in octal with a leading 0."""
    if len(a) > 1 and a[0] == "0" and a.isdigit():
        return int(a, 8)
    return int(a, 0)


class Call:
    """One system call: its name, arguments, result, the lines it was entered and returned on."""
    __slots__ = ("pid", "name", "args", "ret", "ret_path", "start", "end")

    def __init__(self, pid, name, args, ret, ret_path, start, end):
        self.pid, self.name, self.args, self.ret = pid, name, args, ret
        self.ret_path, self.start, self.end = ret_path, start, end


def read_calls(trace_path):
    """The trace's calls in the order they returned, each process's last line (and its exit
    status or signal) and its first line."""
    calls, ends, pending, first = [], {}, {}, {}
    with open(trace_path, encoding="ascii", errors="strict") as f:
        for idx, raw in enumerate(f):
            raw = raw.rstrip("\n")
            m = LINE.match(raw)
            if not m:
                raise TraceError("line %d: no pid: %r" % (idx + 1, raw[:80]))
            pid, rest = int(m.group(1)), m.group(2)
            first.setdefault(pid, idx)
            e = EXITED.match(rest)
            if e:
                ends[pid] = (idx, int(e.group(2)) if e.group(2) else e.group(3))
                continue
            if rest.startswith("---"):
                continue
            r = RESUMED.match(rest)
            if r:
                if pid not in pending:
                    raise TraceError("line %d: resumed without its start" % (idx + 1))
                name, start, head = pending.pop(pid)
                if name != r.group(1):
                    raise TraceError("line %d: %s resumed as %s" % (idx + 1, name, r.group(1)))
                body = head + r.group(2)
            else:
                c = CALL.match(rest)
                if not c:
                    raise TraceError("line %d: not a call: %r" % (idx + 1, rest[:80]))
                name, body, start = c.group(1), c.group(2), idx
                if body.endswith(" <unfinished ...>"):
                    pending[pid] = (name, idx, body[:-len(" <unfinished ...>")])
                    continue
            res = RESULT.match(body)
            if not res:
                if body.endswith(" = ?"):
                    continue  # never returned (exit, execve replaced it, a kill)
                raise TraceError("line %d: no result read: %r" % (idx + 1, rest[:120]))
            ret = res.group(2)
            ret_path = None
            if res.group(3):
                ret_path = unhex(res.group(3)[1:-1]).decode("utf-8", "surrogateescape")
            calls.append(Call(pid, name, split_args(res.group(1)),
                              None if ret == "?" else int(ret, 0), ret_path, start, idx))
    return calls, ends, first


class Op:
    """One operation on the directory, in the order the trace returned them."""
    __slots__ = ("kind", "start", "end", "pid", "ino", "dir", "name", "dir2", "name2", "off",
                 "data", "size", "mode", "full", "extends", "idx")

    def __init__(self, kind, start, end, pid, **kw):
        self.kind, self.start, self.end, self.pid = kind, start, end, pid
        self.ino = self.dir = self.name = self.dir2 = self.name2 = None
        self.off = self.size = self.mode = 0
        self.data = b""
        self.full = self.extends = False
        for k, v in kw.items():
            setattr(self, k, v)

    def is_meta(self):
        return self.kind in ("create", "link", "unlink", "rename")

    def is_data(self):
        return self.kind in ("write", "trunc")

    def __repr__(self):
        if self.kind == "write":
            return "write(#%d, %d, %d bytes)" % (self.ino, self.off, len(self.data))
        if self.kind == "trunc":
            return "trunc(#%d, %d)" % (self.ino, self.size)
        if self.kind == "sync":
            return "%s(#%d)" % ("fsync" if self.full else "fdatasync", self.ino)
        if self.kind == "rename":
            return "rename(%s -> %s)" % (self.name, self.name2)
        return "%s(%s)" % (self.kind, self.name)


class Ofd:
    """An open file description: shared by dup'd descriptors and forked processes."""
    __slots__ = ("ino", "offset", "append")

    def __init__(self, ino, append):
        self.ino, self.offset, self.append = ino, 0, append


def _under(path, root):
    return path == root or path.startswith(root + "/")


class Recorder:
    """Turns calls into operations on @tree (model.Tree), the volatile view of @root."""

    def __init__(self, tree, root):
        self.tree, self.root = tree, root
        self.ops = []
        self.tables = {}      # pid -> {fd: [Ofd, cloexec]}
        self.parents = {}     # child pid -> (parent pid, shares its table)

    # -- paths --
    def resolve(self, call, dirfd_arg, path_arg):
        path = arg_str(path_arg).decode("utf-8", "surrogateescape")
        if path.startswith("/"):
            return os.path.normpath(path)
        fd, dpath = arg_fd(dirfd_arg)
        if dpath is None:
            raise TraceError("line %d: %s: a directory descriptor without its path" % (call.end + 1, call.name))
        return os.path.normpath(os.path.join(dpath, path)) if path else dpath

    def rel(self, path):
        return "" if path == self.root else path[len(self.root) + 1:]

    def lookup(self, path):
        return self.tree.lookup(self.rel(path)) if _under(path, self.root) else None

    def parent(self, call, path):
        d, name = os.path.split(path)
        ino = self.lookup(d)
        if ino is None or ino not in self.tree.dirs:
            raise TraceError("line %d: %s: no directory %s in the model" % (call.end + 1, call.name, d))
        return ino, name

    # -- descriptors --
    def table(self, pid):
        t = self.tables.get(pid)
        if t is None:
            parent = self.parents.get(pid)
            if parent and parent[0] in self.tables:
                src = self.tables[parent[0]]
                t = src if parent[1] else {fd: [e[0], e[1]] for fd, e in src.items()}
            else:
                t = {}
            self.tables[pid] = t
        return t

    def fd_ino(self, call, arg):
        fd, path = arg_fd(arg)
        e = self.table(call.pid).get(fd)
        if e is None:
            if path is not None and _under(path, self.root) and not path.endswith(" (deleted)"):
                raise TraceError("line %d: %s: descriptor %d of %s not seen opened" % (call.end + 1, call.name, fd, path))
            return None, None
        ino = e[0].ino
        # The recorder's own check: the descriptor names what the model says it does.
        if ino is not None and path is not None and not path.endswith(" (deleted)") and "/#" not in path:
            if self.lookup(path) != ino:
                raise TraceError("line %d: %s: descriptor %d is %s, the model has #%d there" %
                                 (call.end + 1, call.name, fd, path, ino))
        return e[0], ino

    def fd_name(self, arg):
        """The path a descriptor argument names, relative to the root (for messages)."""
        path = arg_fd(arg)[1] or ""
        return self.rel(path) if _under(path, self.root) else path

    def add(self, kind, call, **kw):
        op = Op(kind, call.start, call.end, call.pid, **kw)
        op.idx = len(self.ops)
        self.ops.append(op)
        self.tree.apply(op)
        return op

    # -- calls --
    def feed(self, call):
        if call.ret is None or call.ret < 0:
            return
        h = getattr(self, "c_" + call.name, None)
        if h is None:
            raise TraceError("line %d: %s is not modelled" % (call.end + 1, call.name))
        h(call)

    def _open(self, call, path, flags, mode):
        t = self.table(call.pid)
        if not _under(path, self.root) and not (call.ret_path and _under(call.ret_path, self.root)):
            t[call.ret] = [Ofd(None, False), "O_CLOEXEC" in flags]
            return
        if "O_TMPFILE" in flags:
            ino = self.tree.new_file(mode & 0o7777 & ~0o022)
            t[call.ret] = [Ofd(ino, False), "O_CLOEXEC" in flags]
            return
        ino = self.lookup(path)
        if ino is None:
            if "O_CREAT" not in flags:
                raise TraceError("line %d: %s opened, not in the model" % (call.end + 1, path))
            d, name = self.parent(call, path)
            ino = self.tree.next_ino
            self.add("create", call, dir=d, name=name, ino=ino, mode=mode & 0o7777 & ~0o022)
        elif "O_TRUNC" in flags and ino in self.tree.files:
            self.add("trunc", call, ino=ino, size=0)
        t[call.ret] = [Ofd(ino, "O_APPEND" in flags), "O_CLOEXEC" in flags]

    def c_openat(self, call):
        a = call.args
        flags = arg_flags(a[2])
        self._open(call, self.resolve(call, a[0], a[1]), flags, arg_int(a[3]) if len(a) > 3 else 0)

    def c_open(self, call):
        a = call.args
        flags = arg_flags(a[1])
        self._open(call, self.resolve(call, "AT_FDCWD", a[0]), flags, arg_int(a[2]) if len(a) > 2 else 0)

    def c_creat(self, call):
        a = call.args
        self._open(call, self.resolve(call, "AT_FDCWD", a[0]), {"O_CREAT", "O_WRONLY", "O_TRUNC"}, arg_int(a[1]))

    def c_openat2(self, call):
        raise TraceError("line %d: openat2 is not modelled" % (call.end + 1))

    def _write(self, call, fdarg, data, off):
        ofd, ino = self.fd_ino(call, fdarg)
        if ino is None:
            return
        data = data[:call.ret]
        size = len(self.tree.files[ino])
        if off is None or ofd.append:
            at = size if ofd.append else ofd.offset
        else:
            at = off
        self.add("write", call, ino=ino, off=at, data=data, extends=at + len(data) > size,
                 name=self.fd_name(fdarg))
        if off is None:
            ofd.offset = at + len(data)

    def c_write(self, call):
        self._write(call, call.args[0], arg_str(call.args[1]), None)

    def c_pwrite64(self, call):
        self._write(call, call.args[0], arg_str(call.args[1]), arg_int(call.args[3]))

    @staticmethod
    def _iov(arg):
        return b"".join(unhex(m) for m in re.findall(r'iov_base="((?:\\x[0-9a-f]{2})*)"', arg))

    def c_writev(self, call):
        self._write(call, call.args[0], self._iov(call.args[1]), None)

    def c_pwritev(self, call):
        self._write(call, call.args[0], self._iov(call.args[1]), arg_int(call.args[3]))

    c_pwritev2 = c_pwritev

    def c_lseek(self, call):
        e = self.table(call.pid).get(arg_fd(call.args[0])[0])
        if e:
            e[0].offset = call.ret

    def c_ftruncate(self, call):
        _, ino = self.fd_ino(call, call.args[0])
        if ino is not None:
            self.add("trunc", call, ino=ino, size=arg_int(call.args[1]), name=self.fd_name(call.args[0]))

    def c_truncate(self, call):
        path = self.resolve(call, "AT_FDCWD", call.args[0])
        ino = self.lookup(path)
        if ino is not None:
            self.add("trunc", call, ino=ino, size=arg_int(call.args[1]))

    def _sync(self, call, full):
        _, ino = self.fd_ino(call, call.args[0])
        if ino is not None:
            self.add("sync", call, ino=ino, full=full, name=self.fd_name(call.args[0]))

    def c_fsync(self, call):
        self._sync(call, True)

    def c_fdatasync(self, call):
        self._sync(call, False)

    def c_sync(self, call):
        self.add("sync", call, ino=-1, full=True)

    def c_syncfs(self, call):
        self.add("sync", call, ino=-1, full=True)

    def _unmodelled_into(self, call, fdarg):
        _, ino = self.fd_ino(call, fdarg)
        if ino is not None:
            raise TraceError("line %d: %s into the directory is not modelled" % (call.end + 1, call.name))

    def c_fallocate(self, call):
        self._unmodelled_into(call, call.args[0])

    def c_sync_file_range(self, call):
        self._unmodelled_into(call, call.args[0])

    def c_copy_file_range(self, call):
        self._unmodelled_into(call, call.args[2])

    def c_sendfile(self, call):
        self._unmodelled_into(call, call.args[0])

    def c_splice(self, call):
        self._unmodelled_into(call, call.args[2])

    def c_mmap(self, call):
        if len(call.args) < 5 or not call.args[4].startswith(tuple("0123456789")):
            return
        _, ino = self.fd_ino(call, call.args[4])
        if ino is not None and "MAP_SHARED" in call.args[3] and "PROT_WRITE" in call.args[2]:
            raise TraceError("line %d: a shared writable mapping of the directory is not modelled" % (call.end + 1))

    def _rename(self, call, old, new, flags=()):
        if "RENAME_EXCHANGE" in flags:
            raise TraceError("line %d: RENAME_EXCHANGE is not modelled" % (call.end + 1))
        if not _under(old, self.root) and not _under(new, self.root):
            return
        ino = self.lookup(old)
        sd, sn = self.parent(call, old)
        dd, dn = self.parent(call, new)
        self.add("rename", call, dir=sd, name=sn, dir2=dd, name2=dn, ino=ino)

    def c_rename(self, call):
        a = call.args
        self._rename(call, self.resolve(call, "AT_FDCWD", a[0]), self.resolve(call, "AT_FDCWD", a[1]))

    def c_renameat(self, call):
        a = call.args
        self._rename(call, self.resolve(call, a[0], a[1]), self.resolve(call, a[2], a[3]))

    def c_renameat2(self, call):
        a = call.args
        self._rename(call, self.resolve(call, a[0], a[1]), self.resolve(call, a[2], a[3]), arg_flags(a[4]))

    def _unlink(self, call, path):
        if not _under(path, self.root):
            return
        ino = self.lookup(path)
        d, name = self.parent(call, path)
        self.add("unlink", call, dir=d, name=name, ino=ino)

    def c_unlink(self, call):
        self._unlink(call, self.resolve(call, "AT_FDCWD", call.args[0]))

    def c_rmdir(self, call):
        self._unlink(call, self.resolve(call, "AT_FDCWD", call.args[0]))

    def c_unlinkat(self, call):
        self._unlink(call, self.resolve(call, call.args[0], call.args[1]))

    def _link(self, call, ino, new):
        if not _under(new, self.root):
            return
        d, name = self.parent(call, new)
        self.add("link", call, dir=d, name=name, ino=ino)

    def c_linkat(self, call):
        a = call.args
        flags = arg_flags(a[4])
        old = arg_str(a[1]).decode("utf-8", "surrogateescape")
        proc = re.match(r"^/proc/(self|\d+)/fd/(\d+)$", old)
        if "AT_EMPTY_PATH" in flags and old == "":
            _, ino = self.fd_ino(call, a[0])
        elif proc and "AT_SYMLINK_FOLLOW" in flags:
            # An O_TMPFILE file linked through its descriptor's /proc name.
            pid = call.pid if proc.group(1) == "self" else int(proc.group(1))
            e = self.table(pid).get(int(proc.group(2)))
            ino = e[0].ino if e else None
        else:
            ino = self.lookup(self.resolve(call, a[0], a[1]))
        self._link(call, ino, self.resolve(call, a[2], a[3]))

    def c_link(self, call):
        a = call.args
        self._link(call, self.lookup(self.resolve(call, "AT_FDCWD", a[0])), self.resolve(call, "AT_FDCWD", a[1]))

    def _symlink(self, call, new):
        if _under(new, self.root):
            raise TraceError("line %d: a symbolic link in the directory is not modelled" % (call.end + 1))

    def c_symlink(self, call):
        self._symlink(call, self.resolve(call, "AT_FDCWD", call.args[1]))

    def c_symlinkat(self, call):
        self._symlink(call, self.resolve(call, call.args[1], call.args[2]))

    def _mkdir(self, call, path, mode):
        if not _under(path, self.root):
            return
        d, name = self.parent(call, path)
        self.add("create", call, dir=d, name=name, ino=self.tree.next_ino, mode=(mode & 0o7777) | 0o40000)

    def c_mkdir(self, call):
        self._mkdir(call, self.resolve(call, "AT_FDCWD", call.args[0]), arg_int(call.args[1]))

    def c_mkdirat(self, call):
        self._mkdir(call, self.resolve(call, call.args[0], call.args[1]), arg_int(call.args[2]))

    def _chmod(self, call, ino, mode):
        """Modes are not judged: the mode set is the mode of the file in every state."""
        if ino is None:
            return
        self.tree.modes[ino] = mode & 0o7777
        for o in reversed(self.ops):
            if o.kind == "create" and o.ino == ino:
                o.mode = (o.mode & 0o40000) | (mode & 0o7777)
                break

    def c_fchmod(self, call):
        _, ino = self.fd_ino(call, call.args[0])
        self._chmod(call, ino, arg_int(call.args[1]))

    def c_chmod(self, call):
        self._chmod(call, self.lookup(self.resolve(call, "AT_FDCWD", call.args[0])), arg_int(call.args[1]))

    def c_fchmodat(self, call):
        self._chmod(call, self.lookup(self.resolve(call, call.args[0], call.args[1])), arg_int(call.args[2]))

    def c_close(self, call):
        self.table(call.pid).pop(arg_fd(call.args[0])[0], None)

    def c_close_range(self, call):
        lo, hi = arg_int(call.args[0]), arg_int(call.args[1])
        t = self.table(call.pid)
        for fd in [fd for fd in t if lo <= fd <= hi]:
            if "CLOSE_RANGE_CLOEXEC" in call.args[2]:
                t[fd][1] = True
            else:
                del t[fd]

    def _dup(self, call, old, new, cloexec):
        t = self.table(call.pid)
        e = t.get(old)
        if e is None:
            t.pop(new, None)
        else:
            t[new] = [e[0], cloexec]

    def c_dup(self, call):
        self._dup(call, arg_fd(call.args[0])[0], call.ret, False)

    def c_dup2(self, call):
        self._dup(call, arg_fd(call.args[0])[0], call.ret, False)

    def c_dup3(self, call):
        self._dup(call, arg_fd(call.args[0])[0], call.ret, "O_CLOEXEC" in call.args[2])

    def c_fcntl(self, call):
        fd = arg_fd(call.args[0])[0]
        cmd = call.args[1]
        t = self.table(call.pid)
        if cmd in ("F_DUPFD", "F_DUPFD_CLOEXEC"):
            self._dup(call, fd, call.ret, cmd == "F_DUPFD_CLOEXEC")
        elif cmd == "F_SETFD" and fd in t:
            t[fd][1] = "FD_CLOEXEC" in call.args[2]
        elif cmd == "F_SETFL" and fd in t:
            t[fd][0].append = "O_APPEND" in call.args[2]

    def c_execve(self, call):
        t = self.table(call.pid)
        for fd in [fd for fd, e in t.items() if e[1]]:
            del t[fd]

    def _clone(self, call):
        pass  # read ahead by parse(): a child's calls may come before its parent's return

    c_clone = c_clone3 = c_fork = c_vfork = _clone


def parse(trace_path, tree, root):
    """The operations on @root (a realpath) in @trace_path, applied to @tree as they go."""
    calls, ends, first = read_calls(trace_path)
    rec = Recorder(tree, root)
    for c in calls:
        if c.name in ("clone", "clone3", "fork", "vfork") and c.ret and c.ret > 0:
            flags = " ".join(c.args)
            rec.parents[c.ret] = (c.pid, "CLONE_FILES" in flags)
    for c in calls:
        rec.feed(c)
    return rec.ops, ends, first
