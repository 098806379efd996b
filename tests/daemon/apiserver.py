#!/usr/bin/env python3
# A Kubernetes API server stand-in on loopback that misbehaves when told to and logs every
# request: what ipam-node and ipam-controller meet on a hostile network, which the real API
# server of the kube suite cannot be made to do (close a watch at once, answer 410 or 404
# for a while, send garbage, hang).
#
# Usage: apiserver.py DIR   (DIR holds tls.crt and tls.key; the server writes DIR/port once
# it listens, DIR/kubeconfig for the programs and appends each request to DIR/requests.log
# as "SECONDS METHOD PATH" where PATH carries its query string).
#
# It keeps objects by collection path (LIST, WATCH, GET, POST, PUT, PATCH, DELETE of any
# path; a watch gets ADDED/MODIFIED/DELETED of its collection and a bookmark every second).
# Test control, on the same port (curl -k):
#   PUT  /_test/object?path=COLLECTION   body: an object; stored under metadata.name
#   POST /_test/rules                    body: [RULE, ...], replacing the rules
#   GET  /_test/objects?path=COLLECTION  the stored objects, as a list
#   GET  /_test/now                      the clock of requests.log
#   POST /_test/close?path=REGEX         ends (cleanly) every open watch whose PATH matches
# A list honours limit= and continue= (pages in the order objects were first stored; the
# token is the offset, "c3"; a malformed one gets a 400).
# RULE: {"method": "GET", "path": REGEX matched against PATH from its start, "watch": true
# or false (absent: both), "times": N (absent: forever), "action": ACTION, ...}; the first
# rule that matches and has times left answers. ACTION:
#   "status"   {"code": 410}: a Status object with that code ("message": its message,
#              as the real server passes etcd's words on, e.g. "etcdserver: request is too
#              large")
#   "empty"    200 with an empty body (a watch that ends at once)
#   "bookmark" a watch that sends one bookmark and ends
#   "garbage"  200 with a body that is not JSON (a watch: one line of it, then the end)
#   "event"    {"line": TEXT}: a watch that sends TEXT as one line, then ends
#   "hang"     {"seconds": S}: answers nothing for S seconds, then closes
#   "page"     {"size": N}: a list answered as usual, but at most N items a page (an API
#              server may give fewer than limit=, with a continue token)
# A request body's bytes that are not valid UTF-8 are stored as U+FFFD, as the real API
# server's JSON decoder (Go's) stores them.
import json
import os
import re
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

DIR = sys.argv[1]
lock = threading.Condition()
store = {}  # collection path -> {name: object}
rules = []
rv = [1]
events = []  # (rv, collection, type, object)
closes = []  # (generation, REGEX) of /_test/close
log = open(os.path.join(DIR, "requests.log"), "a", buffering=1)
t0 = time.monotonic()


KNOWN = {"pods", "nodes", "ippools", "cidrpools", "leases", "events"}


def split(path):
    """COLLECTION, NAME, SUBRESOURCE of a path ("status" the only subresource)."""
    parts = path.rstrip("/").split("/")
    if len(parts) > 3 and parts[-1] == "status" and parts[-3] in KNOWN:
        return "/".join(parts[:-2]), parts[-2], "status"
    if len(parts) > 2 and parts[-2] in KNOWN:
        return "/".join(parts[:-1]), parts[-1], None
    return "/".join(parts), None, None


def put(coll, obj, kind):
    with lock:
        rv[0] += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(rv[0])
        store.setdefault(coll, {})[obj["metadata"]["name"]] = obj
        events.append((rv[0], coll, kind, obj))
        lock.notify_all()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def send(self, code, obj, raw=None):
        data = raw if raw is not None else json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def status(self, code, reason="Failure", message=None):
        self.send(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                         "reason": reason, "message": message or "apiserver.py: %d" % code,
                         "code": code})

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def rule(self, path, watch):
        with lock:
            for r in rules:
                if r.get("method", self.command) != self.command:
                    continue
                if "watch" in r and r["watch"] != watch:
                    continue
                if not re.match(r.get("path", ""), path):
                    continue
                if "times" in r:
                    if r["times"] <= 0:
                        continue
                    r["times"] -= 1
                return r
        return None

    def misbehave(self, r, watch):
        a = r["action"]
        if a == "status":
            self.status(r["code"], message=r.get("message"))
        elif a == "empty":
            if watch:
                self.start_stream()
                self.end_stream()
            else:
                self.send(200, None, raw=b"")
        elif a == "bookmark":
            self.start_stream()
            with lock:
                now = rv[0]
            self.chunk(json.dumps({"type": "BOOKMARK", "object": {"metadata": {
                "resourceVersion": str(now)}}}).encode() + b"\n")
            self.end_stream()
        elif a == "garbage":
            if watch:
                self.start_stream()
                self.chunk(b"{this is not json\n")
                self.end_stream()
            else:
                self.send(200, None, raw=b"{this is not json")
        elif a == "event":
            self.start_stream()
            self.chunk(r["line"].encode() + b"\n")
            self.end_stream()
        elif a == "hang":
            time.sleep(r.get("seconds", 30))
            self.close_connection = True
        elif a == "page":
            url = urlsplit(self.path)
            self.list(split(url.path)[0], parse_qs(url.query), r["size"])

    def handle_any(self):
        url = urlsplit(self.path)
        q = parse_qs(url.query)
        log.write("%.3f %s %s\n" % (time.monotonic() - t0, self.command, self.path))
        if url.path.startswith("/_test/"):
            return self.control(url.path, q)
        watch = q.get("watch", ["0"])[0] in ("1", "true")
        r = self.rule(self.path, watch)
        if r:
            self.body()
            return self.misbehave(r, watch)
        coll, name, _ = split(url.path)
        if self.command == "GET" and name is None:
            return self.watch(coll, q) if watch else self.list(coll, q)
        if self.command == "GET":
            obj = store.get(coll, {}).get(name)
            return self.send(200, obj) if obj else self.status(404, "NotFound")
        if self.command == "DELETE":
            with lock:
                obj = store.get(coll, {}).pop(name, None)
            if obj is None:
                return self.status(404, "NotFound")
            put_event = (coll, "DELETED", obj)
            with lock:
                rv[0] += 1
                events.append((rv[0], *put_event))
                lock.notify_all()
            return self.send(200, obj)
        try:
            obj = json.loads((self.body() or b"{}").decode("utf-8", "replace"))
        except ValueError:
            return self.status(400, "BadRequest")
        if self.command == "POST" and name is None:
            name = obj.get("metadata", {}).get("name") or "gen-%d" % rv[0]
            obj.setdefault("metadata", {})["name"] = name
            if name in store.get(coll, {}):
                return self.status(409, "AlreadyExists")
            put(coll, obj, "ADDED")
            return self.send(201, obj)
        old = store.get(coll, {}).get(name)
        if old is None:
            return self.status(404, "NotFound")
        if self.command == "PATCH":
            merged = json.loads(json.dumps(old))
            merge(merged, obj)
            obj = merged
        put(coll, obj, "MODIFIED")
        return self.send(200, obj)

    def list(self, coll, q, cap=0):
        with lock:
            items = list(store.get(coll, {}).values())
            now = rv[0]
        meta = {"resourceVersion": str(now)}
        token = q.get("continue", [""])[0]
        if token and not re.fullmatch(r"c[0-9]+", token):
            return self.status(400, "BadRequest")
        start = int(token[1:]) if token else 0
        limit = int(q.get("limit", ["0"])[0] or 0)
        if cap:
            limit = min(limit, cap) if limit > 0 else cap
        if limit > 0 and start + limit < len(items):
            meta["continue"] = "c%d" % (start + limit)
            items = items[start:start + limit]
        else:
            items = items[start:]
        self.send(200, {"kind": "List", "apiVersion": "v1", "metadata": meta, "items": items})

    def closed(self, gen):
        return any(g > gen and re.match(rx, self.path) for g, rx in closes)

    def watch(self, coll, q):
        since = int(q.get("resourceVersion", ["0"])[0] or 0)
        until = time.monotonic() + int(q.get("timeoutSeconds", ["300"])[0])
        with lock:
            gen = len(closes)
        self.start_stream()
        try:
            while time.monotonic() < until:
                with lock:
                    if self.closed(gen):
                        break
                    new = [e for e in events if e[0] > since and e[1] == coll]
                    if not new:
                        lock.wait(1)
                        if self.closed(gen):
                            break
                        new = [e for e in events if e[0] > since and e[1] == coll]
                    now = rv[0]
                for e in new:
                    self.chunk(json.dumps({"type": e[2], "object": e[3]}).encode() + b"\n")
                    since = e[0]
                if not new:
                    self.chunk(json.dumps({"type": "BOOKMARK", "object": {"metadata": {
                        "resourceVersion": str(now)}}}).encode() + b"\n")
            self.end_stream()
        except OSError:
            pass

    def control(self, path, q):
        global rules
        if path == "/_test/object":
            obj = json.loads(self.body())
            put(q["path"][0], obj, "ADDED")
            return self.send(200, obj)
        if path == "/_test/rules":
            with lock:
                rules = json.loads(self.body())
            return self.send(200, rules)
        if path == "/_test/close":
            with lock:
                closes.append((len(closes) + 1, q["path"][0]))
                lock.notify_all()
            return self.send(200, None, raw=b"")
        if path == "/_test/now":
            return self.send(200, None, raw=b"%.3f" % (time.monotonic() - t0))
        if path == "/_test/objects":
            with lock:
                items = list(store.get(q["path"][0], {}).values())
            return self.send(200, {"items": items})
        self.status(404, "NotFound")

    do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = handle_any


def merge(dst, src):
    for k, v in src.items():
        if v is None:
            dst.pop(k, None)
        elif isinstance(v, dict) and isinstance(dst.get(k), dict):
            merge(dst[k], v)
        else:
            dst[k] = v


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


srv = Server(("127.0.0.1", 0), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(os.path.join(DIR, "tls.crt"), os.path.join(DIR, "tls.key"))
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
port = srv.server_address[1]
with open(os.path.join(DIR, "kubeconfig.tmp"), "w") as f:
    json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "t",
               "clusters": [{"name": "t", "cluster": {
                   "server": "https://127.0.0.1:%d" % port,
                   "certificate-authority": os.path.join(DIR, "tls.crt")}}],
               "users": [{"name": "t", "user": {"token": "t"}}],
               "contexts": [{"name": "t", "context": {"cluster": "t", "user": "t"}}]}, f)
os.rename(os.path.join(DIR, "kubeconfig.tmp"), os.path.join(DIR, "kubeconfig"))
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write("%d\n" % port)
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
srv.serve_forever()
