#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The accounting invariant, checked continuously (issue #34 item 5): every POLL seconds read
/nlevel/stats of the DPDK process with --file-prefix PREFIX and check, on each consistent
snapshot (snapshot = 1: one instant of the control lcore), accepted = completed + failed +
in_flight. Runs until the process's telemetry socket goes away (it stops, or is killed) or
until SIGTERM; then prints one line `polls N snapshots S violations V` and, per violation (at
most 10), the counters. Usage: nl_invariant.py PREFIX [POLL]."""
import json, os, signal, socket, sys, time

prefix = sys.argv[1]
poll = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
path = os.path.join("/var/run", "dpdk", prefix, "dpdk_telemetry.v2")
polls = snaps = 0
bad = []
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
sock = None
while not stop:
    try:
        if sock is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            sock.connect(path)
            info = json.loads(sock.recv(16384).decode())
        sock.send(b"/nlevel/stats")
        reply = sock.recv(info.get("max_output_len", 16384))
        if not reply:
            raise OSError("closed")
        d = list(json.loads(reply.decode()).values())[0]
    except (OSError, ValueError, IndexError, AttributeError):
        if sock is not None:
            sock.close()
            sock = None
        if not os.path.exists(path) and polls > 0:
            time.sleep(poll)  # the appliance stopped (or restarts): wait for the next one
        time.sleep(poll)
        continue
    if not isinstance(d, dict):  # not serving yet (or any more): no counters to check
        time.sleep(poll)
        continue
    polls += 1
    if d.get("snapshot") == 1:
        snaps += 1
        a, c, f, i = d["accepted"], d["completed"], d["failed"], d["in_flight"]
        if a != c + f + i and len(bad) < 10:
            bad.append(f"accepted={a} completed={c} failed={f} in_flight={i}")
    time.sleep(poll)
print(f"polls {polls} snapshots {snaps} violations {len(bad)}")
for b in bad:
    print(b)
