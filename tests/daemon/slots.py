#!/usr/bin/env python3
# Connection slots (issue 45): N source addresses, each of its own /24 (127.1.I.1), open
# PER_ADDRESS connections to each target and keep every one they get alive, a request every
# BEAT s on it (over TLS after the handshake), so that a server that gives its slots away
# first come, first served never frees one; a connection the server closes after it
# answered (a deadline, an eviction) is opened again at once, one it closed before any
# answer (refused) after BEAT s. Meanwhile a prober from 127.0.0.1 sends each probe in turn
# on a new connection, as kubelet does, and counts the answers. It goes on for SECONDS.
#
# Usage: slots.py CONFIG-JSON, where CONFIG is
#   {"seconds": S, "timeout": T, "interval": I, "addresses": N, "per_address": K,
#    "targets": [{"name": N, "port": P, "tls": B}],
#    "probes": [{"name": N, "port": P, "tls": B, "method": "GET", "path": "/healthz",
#                "body": "...", "expect": 200, "allowed": true}]}
# TIMEOUT is the prober's hang guard (what kubelet's 1 s and the API server's 10 s are
# compared with is printed, not asserted). It prints, per target and per probe:
#   attack NAME opened N held_max N answered N closed_answered N refused N
#   probe NAME sent N ok N failed N within_1s N max_ms N
# held_max: the most connections the attack held open at once.
import errno
import http.client
import json
import resource
import selectors
import socket
import ssl
import sys
import threading
import time

BEAT = 2.0
cfg = json.loads(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
end = time.monotonic() + cfg["seconds"]
done = threading.Event()
tls_ctx = ssl.create_default_context()
tls_ctx.check_hostname = False
tls_ctx.verify_mode = ssl.CERT_NONE
REQUEST = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


class Slot:
    def __init__(self, target, src, st):
        self.target, self.src, self.st = target, src, st
        self.sock = None
        self.state = "closed"   # connecting, handshake, open, closed
        self.answered = False
        self.next_at = 0.0      # when to (re)open, or to send the next request
        self.pending = False    # a request sent, its answer not yet read


def attack(results):
    sel = selectors.DefaultSelector()
    slots = []
    for t in cfg["targets"]:
        st = results[t["name"]] = {"opened": 0, "held": 0, "held_max": 0, "answered": 0,
                                   "closed_answered": 0, "refused": 0}
        for a in range(cfg["addresses"]):
            src = "127.1.%d.1" % a
            slots += [Slot(t, src, st) for _ in range(cfg["per_address"])]

    def close(slot, now):
        try:
            sel.unregister(slot.sock)
        except (KeyError, ValueError):
            pass
        slot.sock.close()
        slot.sock = None
        if slot.state == "open":
            slot.st["held"] -= 1
        if slot.answered:
            slot.st["closed_answered"] += 1
            slot.next_at = now
        else:
            slot.st["refused"] += 1
            slot.next_at = now + BEAT
        slot.state, slot.answered, slot.pending = "closed", False, False

    def opened(slot, now):
        slot.state = "open"
        slot.st["opened"] += 1
        slot.st["held"] += 1
        slot.st["held_max"] = max(slot.st["held_max"], slot.st["held"])
        slot.next_at = now
        sel.modify(slot.sock, selectors.EVENT_READ, slot)

    def start(slot, now):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.bind((slot.src, 0))
            r = s.connect_ex(("127.0.0.1", slot.target["port"]))
        except OSError:
            s.close()
            slot.st["refused"] += 1
            slot.next_at = now + BEAT
            return
        if r not in (0, errno.EINPROGRESS):
            s.close()
            slot.st["refused"] += 1
            slot.next_at = now + BEAT
            return
        slot.sock, slot.state = s, "connecting"
        sel.register(s, selectors.EVENT_WRITE, slot)

    def handshake(slot, now):
        try:
            slot.sock.do_handshake()
        except ssl.SSLWantReadError:
            sel.modify(slot.sock, selectors.EVENT_READ, slot)
            return
        except ssl.SSLWantWriteError:
            sel.modify(slot.sock, selectors.EVENT_WRITE, slot)
            return
        except OSError:
            close(slot, now)
            return
        opened(slot, now)

    def ready(slot, now):
        if slot.state == "connecting":
            if slot.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                close(slot, now)
                return
            if not slot.target["tls"]:
                opened(slot, now)
                return
            sel.unregister(slot.sock)
            slot.sock = tls_ctx.wrap_socket(slot.sock, do_handshake_on_connect=False)
            slot.state = "handshake"
            sel.register(slot.sock, selectors.EVENT_WRITE, slot)
            handshake(slot, now)
        elif slot.state == "handshake":
            handshake(slot, now)
        else:
            try:
                data = slot.sock.recv(65536)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                return
            except OSError:
                data = b""
            if not data:
                close(slot, now)
                return
            if b"HTTP/1.1 " in data:
                slot.answered = True
                slot.pending = False
                slot.st["answered"] += 1

    while time.monotonic() < end:
        now = time.monotonic()
        for slot in slots:
            if slot.next_at > now:
                continue
            if slot.state == "closed":
                start(slot, now)
            elif slot.state == "open" and not slot.pending:
                try:
                    slot.sock.send(REQUEST)
                    slot.pending = True
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                    pass
                except OSError:
                    close(slot, now)
                    continue
                slot.next_at = now + BEAT
        for key, _ in sel.select(timeout=0.05):
            ready(key.data, time.monotonic())
    done.set()
    for slot in slots:
        if slot.sock is not None:
            slot.sock.close()


def probe(results):
    probes = cfg["probes"]
    for p in probes:
        results[p["name"]] = {"sent": 0, "ok": 0, "failed": 0, "within_1s": 0, "max_ms": 0}
    # The attack's first connections before the first probe: the servers are full by then.
    time.sleep(min(2.0, cfg["seconds"] / 4))
    i = 0
    while not done.is_set():
        p = probes[i % len(probes)]
        i += 1
        st = results[p["name"]]
        st["sent"] += 1
        t0 = time.monotonic()
        kw = {"timeout": cfg["timeout"], "source_address": ("127.0.0.1", 0)}
        if p["tls"]:
            c = http.client.HTTPSConnection("127.0.0.1", p["port"], context=tls_ctx, **kw)
        else:
            c = http.client.HTTPConnection("127.0.0.1", p["port"], **kw)
        try:
            body = p.get("body")
            c.request(p["method"], p["path"], body=body,
                      headers={"Content-Type": "application/json"} if body else {})
            r = c.getresponse()
            data = r.read()
            good = r.status == p["expect"]
            if good and "allowed" in p:
                good = json.loads(data)["response"]["allowed"] == p["allowed"]
        except (OSError, ValueError, KeyError, http.client.HTTPException):
            good = False
        finally:
            c.close()
        ms = int((time.monotonic() - t0) * 1000)
        if good:
            st["ok"] += 1
            st["within_1s"] += ms < 1000
            st["max_ms"] = max(st["max_ms"], ms)
        else:
            st["failed"] += 1
        time.sleep(max(0.0, cfg["interval"] - (time.monotonic() - t0)))


attacked, probed = {}, {}
threads = [threading.Thread(target=attack, args=(attacked,)),
           threading.Thread(target=probe, args=(probed,))]
for t in threads:
    t.start()
for t in threads:
    t.join()
for name, st in attacked.items():
    del st["held"]
    print("attack", name, " ".join("%s %d" % kv for kv in st.items()))
for name, st in probed.items():
    print("probe", name, " ".join("%s %d" % kv for kv in st.items()))
