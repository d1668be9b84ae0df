#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Resent FSUBMITs (issue #15), for test_taskfarm.sh: a raw client (protocol version 1,
docs/protocol.md) registers `tick`, sends one FSUBMIT three times at once (attempt 1), waits
for its COMPLETE, sends it again (answered from the stored result), then attempt 2 of the
same task id (a retry: runs again). Prints OK or what went wrong."""
import socket
import struct
import sys
import time

APP = (sys.argv[1], 7477)
S = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
S.settimeout(0.1)
ACCEPT, REJECT, COMPLETE, REGISTERED, TASKINFO = 2, 3, 4, 27, 31


def send(t, body):
    S.sendto(struct.pack(">HBBHH", 0x4E4C, 1, t, 8 + len(body), 0) + body, APP)


def recv(secs, until=None):
    got, end = [], time.time() + secs
    while time.time() < end:
        try:
            d = S.recv(2048)
        except socket.timeout:
            continue
        got.append((d[3], d[8:]))
        if until is not None and until(got):
            break
    return got


def fsubmit(tid, handle, attempt, arg):
    body = struct.pack(">QQQQQIHBB", tid, 0, 1000000, 0, time.monotonic_ns(), handle, 1,
                       len(arg), attempt) + arg
    send(28, body)


def count(got, t, tid):
    return sum(1 for ty, b in got if ty == t and struct.unpack(">Q", b[:8])[0] == tid)


send(26, struct.pack(">QBHH3x", 7, 4, 0, 0) + b"tick")
reg = [b for t, b in recv(3, lambda g: any(t == REGISTERED for t, _ in g)) if t == REGISTERED]
if not reg:
    sys.exit(print("no REGISTERED"))
handle, status = struct.unpack(">IH", reg[0][8:14])
if status != 0:
    sys.exit(print("REGISTER status", status))
tid = 777 << 32 | 1
for _ in range(3):
    fsubmit(tid, handle, 1, b"x1")
got = recv(10, lambda g: count(g, COMPLETE, tid) >= 1)
acc, comp = count(got, ACCEPT, tid), count(got, COMPLETE, tid)
time.sleep(0.3)
got += recv(0.3)
comp = count(got, COMPLETE, tid)
# each send: ACCEPT while in flight (a resend that arrives after the end: COMPLETE)
if acc < 1 or acc + comp != 4:
    sys.exit(print("3 sends: %d ACCEPT, %d COMPLETE (want 4 answers)" % (acc, comp)))
fsubmit(tid, handle, 1, b"x1")  # ended: the stored TASKINFO and COMPLETE again
got = recv(2, lambda g: count(g, COMPLETE, tid) >= 1)
if count(got, COMPLETE, tid) != 1 or count(got, TASKINFO, tid) != 1 or count(got, ACCEPT, tid):
    sys.exit(print("resend after the end: %s" % [t for t, _ in got]))
fsubmit(tid, handle, 2, b"x2")  # a retry: a new attempt runs
got = recv(10, lambda g: count(g, COMPLETE, tid) >= 1)
if count(got, ACCEPT, tid) != 1 or count(got, COMPLETE, tid) != 1:
    sys.exit(print("attempt 2: %s" % [t for t, _ in got]))
print("OK")
