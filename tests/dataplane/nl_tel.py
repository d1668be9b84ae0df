#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Minimal rte_telemetry client (what usertools/dpdk-telemetry.py does): nl_tel.py PREFIX CMD
# prints the JSON reply of CMD from the DPDK process started with --file-prefix PREFIX.
import json, os, socket, sys

prefix, cmd = sys.argv[1], sys.argv[2]
base = os.environ.get("XDG_RUNTIME_DIR") if os.getuid() != 0 else None
path = os.path.join(base or "/var/run", "dpdk", prefix, "dpdk_telemetry.v2")
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
info = json.loads(s.recv(16384).decode())
s.send(cmd.encode())
print(json.dumps(json.loads(s.recv(info.get("max_output_len", 16384)).decode())))
