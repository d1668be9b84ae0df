#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Telemetry of several appliances in one process (python starts slowly on a loaded CI box):
#   nl_so.py wait SECS EXPR NAME=PREFIX...   poll until EXPR holds (exit 0) or SECS pass (1)
#   nl_so.py eval EXPR NAME=PREFIX...        print EXPR's value
#   nl_so.py report NAME=PREFIX...           per appliance: accounting and crossings; exit 1
#                                            unless accepted = completed + failed + in flight
#                                            and nothing is in flight at rest
# EXPR sees s[NAME] (/nlevel/stats), p[NAME] (/nlevel/appliances), m[NAME] (/nlevel/summaries)
# and live(OBS, PEER): whether OBS sees PEER live. An appliance not answering reads as {}.
import json, os, socket, sys, time


def query(prefix, cmd):
    path = os.path.join("/var/run", "dpdk", prefix, "dpdk_telemetry.v2")
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(2)
        s.connect(path)
        info = json.loads(s.recv(16384).decode())
        s.send(cmd.encode())
        out = json.loads(s.recv(info.get("max_output_len", 16384)).decode())
        s.close()
        return out.get(cmd.split(",")[0]) or {}
    except (OSError, ValueError):
        return {}


def snap(apps):
    s = {n: query(p, "/nlevel/stats") for n, p in apps}
    p = {n: query(x, "/nlevel/appliances") for n, x in apps}
    m = {n: query(x, "/nlevel/summaries") for n, x in apps}

    def live(obs, peer):
        j = p.get(obs) or {}
        try:
            return j["live"][j["name"].index(peer)] == 1
        except (KeyError, ValueError):
            return False
    return {"s": s, "p": p, "m": m, "live": live}


def ev(expr, apps):
    try:
        return eval(expr, snap(apps))
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def main():
    mode = sys.argv[1]
    if mode == "wait":
        secs, expr, rest = float(sys.argv[2]), sys.argv[3], sys.argv[4:]
    elif mode == "eval":
        expr, rest = sys.argv[2], sys.argv[3:]
    else:
        rest = sys.argv[2:]
    apps = [a.split("=", 1) for a in rest]
    if mode == "wait":
        end = time.time() + secs
        while time.time() < end:
            if ev(expr, apps):
                return 0
            time.sleep(0.1)
        return 1
    if mode == "eval":
        print(ev(expr, apps))
        return 0
    ok = report(apps)
    if not ok:
        # the failing reading goes to stderr too (CI's log shows stderr), with a second
        # reading 2 s later: a difference tells a late counter from a task really in flight
        time.sleep(2)
        print("# 2 s later:", file=sys.stderr)
        report(apps, sys.stderr)
    return 0 if ok else 1


def accounting(n, st):
    """One appliance's accounting line and whether it holds at rest."""
    line = ("# %s: accepted=%d completed=%d failed=%d in_flight=%d rejected_ingress=%d "
            "snapshot=%d" % (n, st["accepted"], st["completed"], st["failed"], st["in_flight"],
                             st["rejected_ingress"], st.get("snapshot", -1)))
    ok = st["accepted"] == st["completed"] + st["failed"] + st["in_flight"]
    ok &= st["in_flight"] == 0
    return line, ok


def report(apps, err=None):
    ok = True
    for n, x in apps:
        st, j = query(x, "/nlevel/stats"), query(x, "/nlevel/appliances")
        if not st:
            print("# %s: no telemetry" % n)
            print("# %s: no telemetry" % n, file=sys.stderr)
            ok = False
            continue
        line, good = accounting(n, st)
        print(line)
        if err or not good:
            print(line, file=sys.stderr)
        ok &= good
        if j:
            print("# %s peers: %s parked=%d foreign=%d stale=%d moved=%d lost=%d" % (
                n, " ".join("%s:out=%d,in=%d,backs_out=%d,backs_in=%d,live=%d" % t for t in zip(
                    j["name"], j["tasks_out"], j["tasks_in"], j["handbacks_out"],
                    j["handbacks_in"], j["live"])),
                j["parked"], j["foreign"], j["stale_handback"], j["moved"],
                j["lost_tasks_total"]))
            print("# %s datagrams: %s placed_out=%d rerouted=%d installed=%d test_dropped=%d" % (
                n, " ".join("%s:retx=%d,dup=%d,acked=%d" % t for t in zip(
                    j["name"], j.get("retransmitted", []), j.get("duplicates_in", []),
                    j.get("acked", []))),
                j.get("placed_out", 0), j.get("rerouted", 0), j.get("summaries_installed", 0),
                j.get("test_dropped", 0)))
    return ok


sys.exit(main())
