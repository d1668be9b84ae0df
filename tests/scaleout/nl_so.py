#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Telemetry of several appliances in one process (python starts slowly on a loaded CI box):
#   nl_so.py wait SECS EXPR NAME=PREFIX...   poll until EXPR holds (exit 0) or SECS pass (1)
#   nl_so.py eval EXPR NAME=PREFIX...        print EXPR's value (None, after 30 s of tries, when
#                                            it cannot be evaluated)
#   nl_so.py report NAME=PREFIX...           per appliance: accounting and crossings; exit 1
#                                            unless accepted = completed + failed + in flight
#                                            and nothing is in flight at rest (a reading is
#                                            asked for 30 s before it counts as missing)
# EXPR sees s[NAME] (/nlevel/stats), p[NAME] (/nlevel/appliances), m[NAME] (/nlevel/summaries)
# and live(OBS, PEER): whether OBS sees PEER live. An appliance not answering reads as {}.
import json, os, socket, struct, sys, time


WHY = {}  # prefix -> why its last query gave nothing (diagnostics of "no telemetry")
# how long a missing reading is asked for again before it counts as missing [s]: DPDK's
# telemetry starts a thread per connection, and on this VM an ASan build's thread start
# (mmap) can wait in the kernel behind DAMON's kdamond for as long as the I/O lcore's holds
# documented in docs/dataplane.md (1.6-11.6 s); a CI run of test_scaleout_keys had b's replies
# missing for the whole of an earlier 10 s window while b served on. Not every miss is that:
# one local run had a's listener accept nothing for over 30 s (connect: EAGAIN, its backlog
# full) while a served on and later stopped cleanly; cause not found (docs/dataplane.md)
PATIENCE = 30


def session(prefix, cmds):
    """Answers to cmds from one appliance, over one connection (DPDK's telemetry serves at
    most 10 connections at once and closes any more at once: a busy host, whose server
    threads are slow to notice our earlier closes, refuses a burst of new ones; so one
    connection per appliance and snapshot, and a refused or empty greeting is tried again,
    up to 10 times 0.1 s apart). A command that fails reads as {} (WHY says why)."""
    path = os.path.join("/var/run", "dpdk", prefix, "dpdk_telemetry.v2")
    out = {c: {} for c in cmds}
    for attempt in range(10):
        raw = b""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
                # a blocking connect, bounded by SO_SNDTIMEO: DPDK listens with a backlog of 1,
                # and a non-blocking connect (what settimeout() makes) fails at once with
                # EAGAIN while the listener thread, slow on a loaded host, has not accepted the
                # previous connection yet (CI saw ten such tries in a row)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 2, 0))
                s.connect(path)
                s.settimeout(2)
                raw = s.recv(16384)
                info = json.loads(raw.decode())
                for c in cmds:
                    s.send(c.encode())
                    raw = s.recv(info.get("max_output_len", 16384))
                    got = json.loads(raw.decode()).get(c.split(",")[0])
                    if not got:
                        WHY[prefix] = "%s answered %r" % (c, raw[:200])
                    out[c] = got or {}
                    if got:
                        WHY.pop(prefix, None)  # what it says now, not an old miss
            return out
        except (OSError, ValueError) as e:
            WHY[prefix] = "try %d: %s: %s (%d bytes: %r)" % (attempt + 1, type(e).__name__,
                                                             e, len(raw), raw[:120])
            if isinstance(e, socket.timeout) or (raw and not isinstance(e, OSError)):
                return out  # an answer that came and was bad, or none in 2 s: no retry
            time.sleep(0.1)
    return out


def again(get, good, secs=PATIENCE, step=0.2):
    """get() until good(result) or secs pass (step s apart); the last result either way. A
    telemetry reading that is missing is a slow server thread on a loaded host, not a value."""
    end = time.time() + secs
    v = get()
    while not good(v) and time.time() < end:
        time.sleep(step)
        v = get()
    return v


def threads(prefix):
    """What the threads of the appliance of file prefix `prefix` wait in (a telemetry listener
    that accepts nothing, docs/dataplane.md): per thread its name, state and kernel wait
    channel, the kernel stack of those not running, and gdb's user stacks (60 s at most)."""
    import subprocess
    want = ("--file-prefix\0%s\0" % prefix).encode()
    out = []
    for pid in os.listdir("/proc"):
        try:
            if not pid.isdigit() or want not in open("/proc/%s/cmdline" % pid, "rb").read():
                continue
            for tid in sorted(os.listdir("/proc/%s/task" % pid), key=int):
                d = "/proc/%s/task/%s/" % (pid, tid)
                comm = open(d + "comm").read().strip()
                state = open(d + "stat").read().rsplit(")", 1)[1].split()[0]
                wchan = open(d + "wchan").read().strip()
                out.append("thread %s %s: state %s wchan %s" % (tid, comm, state, wchan or "-"))
                if state != "R":
                    try:
                        out += ["  " + l for l in open(d + "stack").read().split("\n")[:8] if l]
                    except OSError:
                        pass
            try:
                bt = subprocess.run(["gdb", "-p", pid, "-batch", "-ex", "thread apply all bt 12"],
                                    capture_output=True, text=True, timeout=60).stdout
                out += [l for l in bt.split("\n") if l.startswith(("#", "Thread"))][:120]
            except (OSError, subprocess.TimeoutExpired) as e:
                out.append("gdb: %s" % e)
        except OSError:
            continue
    return out


def again_stuck(get, good, prefixes, label):
    """again(get, good) once more, PATIENCE s, when it failed because the telemetry listener
    of one of `prefixes` accepted nothing (connect: EAGAIN, its backlog full; docs/dataplane.md,
    cause not found): first where that appliance's threads wait, to stderr (CI's log); a CI
    run's listener answered 2 s after 30 s. None when no listener was stuck so."""
    stuck = [x for x in prefixes if "BlockingIOError" in WHY.get(x, "")]
    if not stuck:
        return None
    t0 = time.time()
    for x in stuck:
        for line in ["%s: telemetry listener accepted nothing for %d s (%s); its threads:"
                     % (x, PATIENCE, WHY.get(x))] + threads(x):
            print("# " + line, file=sys.stderr)
    v = again(get, good)
    print("# %s: telemetry %s %.1f s after that" % (
        label, "answered" if good(v) else "still silent", time.time() - t0), file=sys.stderr)
    return v


def snap(apps):
    cmds = ["/nlevel/stats", "/nlevel/appliances", "/nlevel/summaries"]
    got = {n: session(x, cmds) for n, x in apps}
    s = {n: got[n][cmds[0]] for n, _ in apps}
    p = {n: got[n][cmds[1]] for n, _ in apps}
    m = {n: got[n][cmds[2]] for n, _ in apps}

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
        get = lambda: ev(expr, apps)
        v = again(get, bool, secs, 0.1)
        if not v:  # a listener that accepted nothing is not the membership's doing
            v = again_stuck(get, bool, [x for _, x in apps], "nl_so wait " + expr[:80])
        if not v:  # why, to stderr (CI's log): who sees whom live, what telemetry said
            try:
                sn = snap(apps)
                seen = "; ".join("%s sees %s" % (o, ",".join(
                    "%s:%s" % (q, "live" if sn["live"](o, q) else "not")
                    for q, _ in apps)) for o, _ in apps)
            except (KeyError, TypeError, ValueError) as e:
                seen = "no reading (%s)" % e
            print("# nl_so wait: %s not true in %g s: %s; telemetry misses: %s"
                  % (expr[:80], secs, seen, WHY or "none"), file=sys.stderr)
        return 0 if v else 1
    if mode == "eval":
        # an appliance whose telemetry did not answer reads as {}, and EXPR then fails (None):
        # on a loaded host that is a slow server thread, not a value, so try again (PATIENCE)
        get, good = lambda: ev(expr, apps), lambda v: v is not None
        v = again(get, good)
        if v is None:
            v = again_stuck(get, good, [x for _, x in apps], "nl_so eval " + expr[:80])
        if v is None:
            print("# nl_so eval: %s gave nothing for %d s (%s)" % (expr[:80], PATIENCE, WHY),
                  file=sys.stderr)
        print(v)
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
            "snapshot=%d rx_missed=%d drop_replay=%d" % (
                n, st["accepted"], st["completed"], st["failed"], st["in_flight"],
                st["rejected_ingress"], st.get("snapshot", -1), st.get("rx_missed", -1),
                st.get("drop_replay", -1)))
    ok = st["accepted"] == st["completed"] + st["failed"] + st["in_flight"]
    ok &= st["in_flight"] == 0
    return line, ok


def report(apps, err=None):
    ok = True
    for n, x in apps:
        # a reply that did not come within 2 s is a slow telemetry thread, not a count (seen
        # here: the ASan build's telemetry thread waiting 2+ s in the kernel for its memory
        # map, the I/O lcore serving on; docs/dataplane.md "What holds the I/O lcore"): ask
        # again (PATIENCE), as eval does, before the reading counts as missing
        get = lambda: session(x, ["/nlevel/stats", "/nlevel/appliances"])
        both = again(get, lambda b: b["/nlevel/stats"])
        if not both["/nlevel/stats"]:
            both = again_stuck(get, lambda b: b["/nlevel/stats"], [x], n) or both
        st, j = both["/nlevel/stats"], both["/nlevel/appliances"]
        if not st:
            print("# %s: no telemetry (%s)" % (n, WHY.get(x, "?")))
            print("# %s: no telemetry (%s)" % (n, WHY.get(x, "?")), file=sys.stderr)
            ok = False
            continue
        line, good = accounting(n, st)
        print(line)
        # a failure's detail reaches CI's log (stderr) with what tells where a task stays:
        # parked at a peer (peers), or here (workers, sub-tasks moved, frames not sent)
        out = [sys.stdout] if good and not err else [sys.stdout, sys.stderr]

        def pr(text):
            for f in out:
                print(text, file=f)
        if err or not good:
            print(line, file=sys.stderr)
            print("# %s port: tx_fail=%d stale_done=%d redispatched=%d workers_joined=%d "
                  "workers_left=%d rejoin_asked=%d" % (
                      n, st.get("tx_fail", -1), st.get("stale_done", -1),
                      st.get("redispatched", -1), st.get("workers_joined", -1),
                      st.get("workers_left", -1), st.get("rejoin_asked", -1)), file=sys.stderr)
        ok &= good
        if j:
            pr("# %s peers: %s parked=%d foreign=%d stale=%d moved=%d lost=%d" % (
                n, " ".join("%s:out=%d,in=%d,backs_out=%d,backs_in=%d,live=%d" % t for t in zip(
                    j["name"], j["tasks_out"], j["tasks_in"], j["handbacks_out"],
                    j["handbacks_in"], j["live"])),
                j["parked"], j["foreign"], j["stale_handback"], j["moved"],
                j["lost_tasks_total"]))
            pr("# %s datagrams: %s placed_out=%d rerouted=%d installed=%d test_dropped=%d" % (
                n, " ".join("%s:retx=%d,dup=%d,acked=%d,ovf=%d" % t for t in zip(
                    j["name"], j.get("retransmitted", []), j.get("duplicates_in", []),
                    j.get("acked", []), j.get("unacked_overflow", []))),
                j.get("placed_out", 0), j.get("rerouted", 0), j.get("summaries_installed", 0),
                j.get("test_dropped", 0)))
    return ok


sys.exit(main())
