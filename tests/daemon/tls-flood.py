#!/usr/bin/env python3
# A TLS flood of a webhook port (tls-flood.sh): PROCS processes, each from addresses of its
# own (127.3.P.N), open connections as fast as they can and do one of: a handshake then a
# reset (SO_LINGER 0), a ClientHello then gone, bytes that are no TLS, a handshake then
# nothing (kept, up to HOLD a process), a request with a body of a few KiB then a reset,
# a small review read to its end. It goes on for SECONDS.
#
# Usage: tls-flood.py PORT SECONDS PROCS HOLD
# It prints "flood N connections M answered" (answered: reviews that got their answer).
import multiprocessing
import os
import random
import socket
import ssl
import struct
import sys
import time

PORT, SECONDS, PROCS, HOLD = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
PATH = b"/validate-nv-ipam-nvidia-com-v1alpha1-ippool"
LINGER0 = struct.pack("ii", 1, 0)


def worker(p, out):
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    rnd = random.Random(p)
    end = time.monotonic() + SECONDS
    held, n, answered = [], 0, 0
    while time.monotonic() < end:
        how = rnd.choice(("reset", "hello", "garbage", "hold", "body", "review"))
        s = socket.socket()
        s.settimeout(2)
        try:
            s.bind(("127.3.%d.%d" % (p, rnd.randint(1, 250)), 0))
            s.connect(("127.0.0.1", PORT))
            if how == "garbage":
                s.sendall(os.urandom(rnd.randint(1, 4096)))
            elif how == "hello":
                inc, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
                obj = ctx.wrap_bio(inc, outb)
                try:
                    obj.do_handshake()
                except ssl.SSLWantReadError:
                    pass
                s.sendall(outb.read())
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
            else:
                s = ctx.wrap_socket(s)
                if how == "hold":
                    held.append(s)
                    if len(held) > HOLD:
                        held.pop(0).close()
                    s = None
                elif how == "body":
                    s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" % PATH
                              + b"{" * 4096)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
                elif how == "review":
                    s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                              b"Connection: close\r\n\r\n{}" % PATH)
                    answered += b"HTTP/1.1" in s.recv(100)
                else:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER0)
            n += 1
        except OSError:
            pass
        finally:
            if s is not None:
                s.close()
    for h in held:
        h.close()
    out.put((n, answered))


queue = multiprocessing.Queue()
procs = [multiprocessing.Process(target=worker, args=(p, queue)) for p in range(PROCS)]
for pr in procs:
    pr.start()
total = [queue.get() for _ in procs]
for pr in procs:
    pr.join()
print("flood %d connections %d answered" % (sum(t[0] for t in total), sum(t[1] for t in total)))
