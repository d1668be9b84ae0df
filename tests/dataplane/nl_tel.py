#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Minimal rte_telemetry client (what usertools/dpdk-telemetry.py does): nl_tel.py PREFIX CMD
# prints the JSON reply of CMD from the DPDK process started with --file-prefix PREFIX.
# DPDK's telemetry serves at most 10 connections at once and closes any more at once (its
# socket_listener); on a busy host its threads are slow to notice earlier clients' closes, so a
# connection closed before the greeting is tried again, up to 10 times 0.1 s apart.
import json, os, socket, sys, time

prefix, cmd = sys.argv[1], sys.argv[2]
base = os.environ.get("XDG_RUNTIME_DIR") if os.getuid() != 0 else None
path = os.path.join(base or "/var/run", "dpdk", prefix, "dpdk_telemetry.v2")
for attempt in range(10):
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.connect(path)
        greeting = s.recv(16384)
        if not greeting and attempt < 9:
            time.sleep(0.1)
            continue
        info = json.loads(greeting.decode())
        s.send(cmd.encode())
        print(json.dumps(json.loads(s.recv(info.get("max_output_len", 16384)).decode())))
        break
