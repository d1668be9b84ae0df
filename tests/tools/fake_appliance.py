#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# A stand-in for the nlevel appliance (docs/protocol.md, client side only) for the loadgen CLI
# test: an appliance with N resources and L sub-tasks per group. It answers each SUBMIT
#   REJECT no_machine (1) when the task needs a resource >= N,
#   REJECT bad_task (2)   when its n_split > L,
#   ACCEPT then COMPLETE (status 0) otherwise.
# Usage: fake_appliance.py N L SECONDS; prints its UDP port on stdout, then serves.
import socket, struct, sys, time

n_res, max_l, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
s.settimeout(0.2)
end = time.time() + secs
HDR = struct.Struct(">HBBHH")


def msg(mtype, body):
    return HDR.pack(0x4E4C, 1, mtype, HDR.size + len(body), 0) + body


while time.time() < end:
    try:
        data, addr = s.recvfrom(2048)
    except socket.timeout:
        continue
    if len(data) < 56:
        continue
    magic, ver, mtype, length, _ = HDR.unpack_from(data)
    if magic != 0x4E4C or mtype != 1:
        continue
    task_id, need, _instr, _data, ts = struct.unpack_from(">QQQQQ", data, 8)
    (n_split,) = struct.unpack_from(">H", data, 48)
    if need >> n_res:
        s.sendto(msg(3, struct.pack(">QQH6x", task_id, ts, 1)), addr)
    elif n_split > max_l:
        s.sendto(msg(3, struct.pack(">QQH6x", task_id, ts, 2)), addr)
    else:
        s.sendto(msg(2, struct.pack(">QQ", task_id, ts)), addr)
        s.sendto(msg(4, struct.pack(">QQHHiI4x", task_id, ts, 0, n_split, 0, 5)), addr)
