#!/usr/bin/env python3
# Slow clients against the daemons' HTTP servers, and a prober sending what kubelet, Prometheus
# and the API server send meanwhile (slow-clients.sh). One process, two threads:
#   the attacker holds connections to each target: "idle" ones send nothing (over TLS: not
#   even a handshake), "trickle" ones send a request line, then a header line every 2.5 s
#   (over TLS after the handshake), never ending the headers. A connection the server
#   closes is opened again at the next beat, as an attacker would. It goes on for SECONDS,
#   and then until every trickling connection of the targets marked "await" was closed by
#   its server once, for HANG s at most (a hang guard: a server that never closes one
#   fails the count).
#   the prober sends each probe in turn every INTERVAL s on a new connection (as kubelet
#   does) while the attacker runs, and counts the answers with the expected status (for a
#   review also "allowed": true). Its TIMEOUT is a hang guard; how many were answered
#   within kubelet's 1 s, and the slowest, are figures to print.
#
# Usage: slow-clients.py CONFIG-JSON, where CONFIG is
#   {"seconds": S, "hang": H, "timeout": T, "interval": I,
#    "attack": [{"name": N, "port": P, "tls": B, "src": "127.0.0.2", "idle": K, "trickle": K,
#                "deadline": MS, "await": B}],
#    "probes": [{"name": N, "port": P, "tls": B, "method": "GET", "path": "/healthz",
#                "body": "...", "expect": 200, "allowed": true}]}
# It prints, per target and per probe:
#   attack NAME opened N refused N closed_idle N closed_trickle N trickle_slots_closed N
#   probe NAME sent N ok N failed N within_1s N max_ms N
# A connection's life counts from before its connect. refused: not opened, or closed before
# the target's DEADLINE ms (which cannot end it sooner, however slow the machine: a limit
# did); closed_*: closed later (a deadline); trickle_slots_closed: trickling slots closed so.
import http.client
import json
import selectors
import socket
import ssl
import sys
import threading
import time

BEAT = 2.5
cfg = json.loads(sys.argv[1])
end = time.monotonic() + cfg["seconds"]
hang_end = end + cfg["hang"]
done = threading.Event()
tls_ctx = ssl.create_default_context()
tls_ctx.check_hostname = False
tls_ctx.verify_mode = ssl.CERT_NONE


class Slot:
    def __init__(self, target, trickle):
        self.target, self.trickle = target, trickle
        self.sock, self.opened, self.lines, self.closed_once = None, 0.0, 0, False


def open_slot(slot, sel, stats):
    t = slot.target
    opened = time.monotonic()
    s = socket.socket()
    try:
        s.bind((t["src"], 0))
        s.settimeout(cfg["timeout"])
        s.connect(("127.0.0.1", t["port"]))
        if t["tls"] and slot.trickle:
            s = tls_ctx.wrap_socket(s)
        if slot.trickle:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        s.setblocking(False)
    except OSError:
        s.close()
        stats["refused"] += 1
        return
    slot.sock, slot.opened, slot.lines = s, opened, 0
    stats["opened"] += 1
    sel.register(s, selectors.EVENT_READ, slot)


def closed(slot, sel, stats):
    life = time.monotonic() - slot.opened
    sel.unregister(slot.sock)
    slot.sock.close()
    slot.sock = None
    # The server counts its deadline in whole milliseconds from its accept: one may come
    # up to a millisecond short of DEADLINE after the connect began, never more.
    if life * 1000 < slot.target["deadline"] - 2:
        stats["refused"] += 1
        return
    if slot.trickle:
        stats["closed_trickle"] += 1
        stats["trickle_slots_closed"] += not slot.closed_once
        slot.closed_once = True
    else:
        stats["closed_idle"] += 1


def attack(results):
    sel = selectors.DefaultSelector()
    slots = []
    for t in cfg["attack"]:
        st = results[t["name"]] = {"opened": 0, "refused": 0, "closed_idle": 0,
                                   "closed_trickle": 0, "trickle_slots_closed": 0}
        slots += [(Slot(t, False), st) for _ in range(t["idle"])]
        slots += [(Slot(t, True), st) for _ in range(t["trickle"])]
    stats_of = {id(s): st for s, st in slots}

    def over():
        now = time.monotonic()
        return now >= hang_end or (now >= end and all(s.closed_once for s, _ in slots
                                                if s.trickle and s.target["await"]))

    beat = time.monotonic()
    while not over():
        if time.monotonic() >= beat:
            beat += BEAT
            for slot, st in slots:
                if over():
                    break  # a server that takes no connection costs a timeout each
                if slot.sock is None:
                    open_slot(slot, sel, st)
                elif slot.trickle:
                    slot.lines += 1
                    try:
                        slot.sock.send(b"X-Trickle-%d: a\r\n" % slot.lines)
                    except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                        pass
                    except OSError:
                        closed(slot, sel, st)
        for key, _ in sel.select(timeout=max(0.0, min(beat, hang_end) - time.monotonic())):
            slot = key.data
            try:
                data = slot.sock.recv(4096)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                continue  # a TLS record that is no data (a session ticket)
            except OSError:
                data = b""
            if not data:
                closed(slot, sel, stats_of[id(slot)])
    done.set()
    for slot, _ in slots:
        if slot.sock is not None:
            slot.sock.close()


def probe(results):
    probes = cfg["probes"]
    for p in probes:
        results[p["name"]] = {"sent": 0, "ok": 0, "failed": 0, "within_1s": 0, "max_ms": 0}
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
    print("attack", name, " ".join("%s %d" % kv for kv in st.items()))
for name, st in probed.items():
    print("probe", name, " ".join("%s %d" % kv for kv in st.items()))
