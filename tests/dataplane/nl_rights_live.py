#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The rights table of docs/security.md, cell by cell, on a live appliance (test_secure.sh
case 7): for every row (message type) and role (submitter, worker, operator, and a principal
holding both submitter and worker), send one frame of that type as a sender of that role
(nl-send, a new process: a new sender id and source port), wait until the appliance has counted
the frame for that sender, and check that it was counted `denied` exactly when the table says
`no`. Prints TAP lines (numbered from --first) and a summary; exits 1 when a cell disagrees.

usage: nl_rights_live.py PREFIX DOCS NS NL_SEND APP_IP KEYDIR FIRST
  KEYDIR holds site.key, rsub.key (submitter rsub), rwork.key (worker rwork), rboth.key.
"""
import json
import os
import socket
import subprocess
import sys
import time

pfx, docs, ns, nl_send, app_ip, keydir, first = sys.argv[1:8]
n = int(first) - 1

head = "| type | message | submitter | worker | operator |"
rows = []
with open(docs) as f:
    lines = [l.rstrip("\n") for l in f]
i = lines.index(head) + 2
while i < len(lines) and lines[i].startswith("|"):
    c = [x.strip() for x in lines[i].strip("|").split("|")]
    lo, _, hi = c[0].partition("-")
    for t in range(int(lo), int(hi or lo) + 1):
        rows.append((t, c[1], c[2] == "yes", c[3] == "yes", c[4] == "yes"))
    i += 1

s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(os.path.join("/var/run/dpdk", pfx, "dpdk_telemetry.v2"))
maxlen = json.loads(s.recv(16384).decode()).get("max_output_len", 16384)


def counts(name):
    s.send(b"/nlevel/principals")
    p = json.loads(s.recv(maxlen).decode())["/nlevel/principals"]
    k = p["name"].index(name)
    return p["frames"][k], p["denied"][k]


roles = [  # role, principal name in /nlevel/principals, nl-send arguments, allowed(row)
    ("submitter", "rsub", ["--key", keydir + "/rsub.key", "--principal", "rsub"], lambda r: r[2]),
    ("worker", "rwork", ["--key", keydir + "/rwork.key", "--principal", "rwork"], lambda r: r[3]),
    ("operator", "(site-key)", ["--key", keydir + "/site.key"], lambda r: r[4]),
    ("submitter_and_worker", "rboth", ["--key", keydir + "/rboth.key", "--principal", "rboth"],
     lambda r: r[2] or r[3]),
]
bad = cells = 0
for row in rows:
    t = row[0]
    if 16 <= t <= 23:
        continue  # between appliances: the scale-out layer's, verified under the site key
    for role, name, args, allowed in roles:
        f0, d0 = counts(name)
        r = subprocess.run(["ip", "netns", "exec", ns, nl_send, "--appliance", app_ip,
                            "--type", str(t)] + args, capture_output=True, text=True)
        f1, d1 = f0, d0
        for _ in range(100):  # until the appliance counted the frame (<= 2 s)
            f1, d1 = counts(name)
            if f1 > f0:
                break
            time.sleep(0.02)
        want = 0 if allowed(row) else 1
        ok = r.returncode == 0 and f1 == f0 + 1 and d1 - d0 == want
        n += 1
        cells += 1
        bad += not ok
        print("%sok %d - rights_live_type_%d_%s_%s_%s%s" % (
            "" if ok else "not ", n, t, row[1], role, "allowed" if want == 0 else "refused",
            "" if ok else " # frames +%d denied +%d (want +1, +%d) %s" % (
                f1 - f0, d1 - d0, want, (r.stdout + r.stderr).strip())))
        sys.stdout.flush()
print("# rights table on the live appliance: %d cells, %d disagree" % (cells, bad))
print("# next %d" % (n + 1))
sys.exit(1 if bad else 0)
