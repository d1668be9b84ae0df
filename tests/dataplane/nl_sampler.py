#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Sample the appliance's accounting continuously (issue #16 item 5): nl_sampler.py PREFIX PID
# SECS [PERIOD_S]. Over one telemetry connection it reads /nlevel/stats and
# /nlevel/principals every PERIOD_S (default 0.1) for SECS seconds and checks in every sample
# that it is a snapshot of the control lcore ("snapshot": 1) and that I1 holds in it,
# accepted == completed + failed + in_flight, for the appliance and for every principal; it
# also reads the resident set (VmRSS of /proc/PID/status). Prints one line
#   SAMPLES n=N snapshots=N violations=N rss_first_kb=K rss_after_5s_kb=K rss_mid_kb=K
#           rss_max_kb=K rss_last_kb=K accepted_max=N in_flight_max=N
# (rss_mid_kb: at SECS / 2, to tell a plateau from a steady growth)
# and the first violations as "# ..." lines. Exit 0 when no sample violated I1.
import json, os, socket, sys, time

prefix, pid, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
period = float(sys.argv[4]) if len(sys.argv) > 4 else 0.1
base = os.environ.get("XDG_RUNTIME_DIR") if os.getuid() != 0 else None
path = os.path.join(base or "/var/run", "dpdk", prefix, "dpdk_telemetry.v2")
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
info = json.loads(s.recv(16384).decode())
maxlen = info.get("max_output_len", 16384)


def cmd(c):
    s.send(c.encode())
    return json.loads(s.recv(maxlen).decode())[c]


def rss_kb():
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


n = snaps = bad = 0
rss_first = rss5 = rss_mid = rss_max = rss_last = -1
acc_max = inf_max = 0
t0 = time.monotonic()
while time.monotonic() - t0 < secs:
    st = cmd("/nlevel/stats")
    pr = cmd("/nlevel/principals")
    n += 1
    ok = True
    if st.get("snapshot") == 1:
        snaps += 1
    else:
        ok = False
    if st["accepted"] != st["completed"] + st["failed"] + st["in_flight"]:
        ok = False
    if pr.get("principals", 0) > 0:
        if pr.get("snapshot") != 1:
            ok = False
        for i, name in enumerate(pr["name"]):
            if pr["accepted"][i] != pr["completed"][i] + pr["failed"][i] + pr["in_flight"][i]:
                ok = False
    if not ok:
        bad += 1
        if bad <= 5:
            print("# violation at %.2f s: %s" % (time.monotonic() - t0,
                  {k: st[k] for k in ("snapshot", "accepted", "completed", "failed", "in_flight")}))
    acc_max = max(acc_max, st["accepted"])
    inf_max = max(inf_max, st["in_flight"])
    r = rss_kb()
    if rss_first < 0:
        rss_first = r
    if rss5 < 0 and time.monotonic() - t0 >= 5:
        rss5 = r
    if rss_mid < 0 and time.monotonic() - t0 >= secs / 2:
        rss_mid = r
    rss_max = max(rss_max, r)
    rss_last = r
    time.sleep(period)
print("SAMPLES n=%d snapshots=%d violations=%d rss_first_kb=%d rss_after_5s_kb=%d rss_mid_kb=%d "
      "rss_max_kb=%d rss_last_kb=%d accepted_max=%d in_flight_max=%d"
      % (n, snaps, bad, rss_first, rss5, rss_mid, rss_max, rss_last, acc_max, inf_max))
sys.exit(0 if bad == 0 and n > 0 else 1)
