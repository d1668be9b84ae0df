#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Differential test of nlevel-sim's EASY backfilling against an independent reference.

Reference EASY backfilling (written from the textbook definition, Mu'alem and Feitelson):
at every instant, after applying all ends and arrivals of that instant: start waiting jobs in
arrival order while the first fits; then reserve the first waiting job at the earliest time
its CPUs are free by the running jobs' estimates (all running jobs ending by then count), and
start any later job that fits now and does not delay that reservation: it ends (by estimate)
by the reservation, or it fits beside the reserved job at the reservation time.

Usage: ref_easy.py NLEVEL_SIM OUT_DIR [SEEDS]: SEEDS random workloads (from NL_TEST_SEED,
default 1) through `nlevel-sim` (its DIR/jobs.csv) and the reference; TAP, one test per
workload, failing on any job whose start differs."""
import csv
import heapq
import os
import random
import subprocess
import sys


def easy(jobs, P):
    """jobs: dicts (id, submit, run, est, cpus) sorted by submit (stable); P processors.
    Returns {index: start time}; jobs wider than P never start."""
    waiting, running = [], []  # running: (est_end, end, idx)
    free = P
    start = {}
    ai = 0
    ends = []  # heap of actual ends (t, idx)
    n = len(jobs)
    while ai < n or ends or waiting:
        t = jobs[ai]['submit'] if ai < n else float('inf')
        if ends and ends[0][0] < t:
            t = ends[0][0]
        if t == float('inf'):
            break
        while ends and ends[0][0] == t:
            _, i = heapq.heappop(ends)
            free += jobs[i]['cpus']
            running = [r for r in running if r[2] != i]
        while ai < n and jobs[ai]['submit'] == t:
            if jobs[ai]['cpus'] <= P:
                waiting.append(ai)
            ai += 1
        # pass
        while waiting and jobs[waiting[0]]['cpus'] <= free:
            i = waiting.pop(0)
            start[i] = t; free -= jobs[i]['cpus']
            running.append((t + jobs[i]['est'], t + jobs[i]['run'], i))
            heapq.heappush(ends, (t + jobs[i]['run'], i))
        if waiting and free > 0:
            h = waiting[0]; need = jobs[h]['cpus']
            # free CPUs over time by estimates
            rs = sorted(running)
            avail = free; shadow = float('inf'); k = 0
            while k < len(rs):
                te = rs[k][0]
                while k < len(rs) and rs[k][0] == te:
                    avail += jobs[rs[k][2]]['cpus']; k += 1
                if avail >= need:
                    shadow = te; break
            extra = avail - need if shadow != float('inf') else 0
            for i in list(waiting[1:]):
                if free == 0:
                    break
                c = jobs[i]['cpus']
                if c > free:
                    continue
                if t + jobs[i]['est'] <= shadow:
                    pass
                elif c <= extra:
                    extra -= c
                else:
                    continue
                waiting.remove(i)
                start[i] = t; free -= c
                running.append((t + jobs[i]['est'], t + jobs[i]['run'], i))
                heapq.heappush(ends, (t + jobs[i]['run'], i))
    return start


def workload(seed):
    """A random rigid workload in SWF with ties on purpose: equal submit times, round
    estimates (many running jobs end by estimate at one second), zero run times, run time 0
    with no request (estimate 0), overruns, jobs as wide as the machine."""
    r = random.Random(seed)
    P = r.choice([4, 8, 16, 32])
    n = r.choice([50, 200, 1000])
    t = 0
    lines, jobs = [], []
    est_vals = [r.choice([60, 300, 600, 3600]) for _ in range(4)]
    for i in range(n):
        t += r.choice([0, 0, 1, 5, 30, 100, 600])
        run = r.choice([0, 1, 10, 60, 300, 600, 3600, r.randint(1, 5000)])
        est = r.choice([run, max(run, r.choice(est_vals)), -1, run * 2, max(1, run // 2)])
        cpus = r.choice([1, 1, 2, 3, 4, P // 2, P, r.randint(1, P)])
        lines.append(f"{i + 1} {t} -1 {run} {cpus} -1 -1 {cpus} {est} -1 1 1 1 1 1 -1 -1 -1")
        # docs/batch.md "Filtering": no request (-1 or 0) -> the run time; overrun extends
        jobs.append(dict(id=i + 1, submit=t, run=run, est=run if est <= 0 else max(est, run),
                         cpus=cpus))
    return P, lines, jobs


def main():
    sim, out = sys.argv[1], sys.argv[2]
    seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    base = int(os.environ.get("NL_TEST_SEED", "1"))
    print(f"1..{seeds}")
    print(f"# NL_TEST_SEED={base}")
    failed = 0
    for k in range(seeds):
        seed = base + k
        P, lines, jobs = workload(seed)
        d = os.path.join(out, f"w{seed}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "w.swf"), "w") as f:
            f.write(f"; MaxProcs: {P}\n" + "\n".join(lines) + "\n")
        with open(os.path.join(d, "e.ini"), "w") as f:
            f.write(f"[batch]\ntrace = {os.path.abspath(os.path.join(d, 'w.swf'))}\ncpus = {P}\nqueues = q\nscenarios = easy\n"
                    f"[queue.q]\ncpu_max = {P}\n[scenario.easy]\npolicy = easy\n"
                    f"queue_select = q\n")
        rc = subprocess.run([sim, "-q", "-c", os.path.join(d, "e.ini"), "-o", os.path.join(d, "o")],
                            capture_output=True, text=True)
        name = f"EASY on random workload {seed} ({len(jobs)} jobs, {P} CPUs): every job starts " \
               f"at the reference's second"
        if rc.returncode != 0:
            print(f"not ok {k + 1} - {name}\n# nlevel-sim: {rc.stderr.strip()[-300:]}")
            failed += 1
            continue
        ours = {}
        with open(os.path.join(d, "o", "jobs.csv")) as f:
            for row in csv.DictReader(f):
                ours[int(row["job"])] = float(row["start_s"]) if row["start_s"] else None
        ref = easy(jobs, P)
        bad = [(j["id"], ours.get(j["id"]), ref.get(i)) for i, j in enumerate(jobs)
               if ours.get(j["id"]) != ref.get(i)]
        print(f"{'not ok' if bad else 'ok'} {k + 1} - {name}")
        if bad:
            failed += 1
            print(f"# {len(bad)} differ; (job, nlevel-sim, reference): {bad[:5]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
