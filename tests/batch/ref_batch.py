#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Differential test of nlevel-sim's FCFS, FirstFit and conservative backfilling against
independent references written from docs/batch.md ("Engine", "Filtering", "Queue selection",
"Configuration keys"), not from sim/batch/.

Common to all: all ends and arrivals of one second are applied, then one scheduling pass runs
(a job of run time 0 ends at its start second: its end is one more event of that second, so
one more pass runs then). Jobs wider than P never start and are no events (no pass).
- FCFS: per queue in arrival order, a queue stops at its first job that does not fit;
  `queue_order = priority` serves the queues in configuration order, `arrival` goes through
  all waiting jobs in arrival order (each queue still stops at its first misfit).
- FirstFit: every waiting job that fits starts (same two orders); a job that starts while an
  earlier job of its own queue waits is an overtaker; with `overtake_bound = true` it starts
  only if the CPUs held by its queue's running overtakers plus its own stay within the queue's
  `overtake_cpus_max`.
- Conservative (Mu'alem and Feitelson): a profile of free CPUs over time (running jobs until
  start + estimate, waiting jobs' reservations); at each pass every waiting job, in arrival
  order, is taken out and put back at its earliest fit; jobs whose slot is now start. A job of
  estimate 0 holds its CPUs at its instant: time is counted in units of 1/K s (K = 2^20) and
  such a job holds [s, s + 1 unit), an infinitesimal interval (n zero jobs in a row < 1 s).
- Queues (`queue_select = trace`): SWF field 15 through each queue's `swf_queue`; a job
  without a mapped, accepting queue goes to the strictest accepting queue (cpu_max, then
  walltime_max_s with 0 = none, then configuration order); acceptance: CPUs <= cpu_max,
  estimate <= walltime_max_s.

Usage: ref_batch.py NLEVEL_SIM OUT_DIR [SEEDS]: SEEDS random workloads (from NL_TEST_SEED,
default 1) through `nlevel-sim` (one run, every scenario; its DIR/jobs.csv) and the
references; TAP, one test per (policy, workload), failing on any job whose start or queue
differs."""
import bisect
import csv
import heapq
import os
import random
import subprocess
import sys


def simulate(jobs, P, policy):
    """Event loop: jobs sorted by submit; policy.arrive(i), policy.end(i), policy.pass_(t, free)
    -> jobs to start now. Returns {index: start time}. A job wider than P is no event at all
    (docs/batch.md "Filtering": not run, counted unrunnable), so its submit time brings no
    pass; this matters for conservative backfilling, where one more pass can compress more."""
    start = {}
    ends = []  # heap (t, idx)
    free = P
    arr = [i for i, j in enumerate(jobs) if j['cpus'] <= P]
    ai, n = 0, len(arr)
    while ai < n or ends:
        t = jobs[arr[ai]]['submit'] if ai < n else float('inf')
        if ends and ends[0][0] < t:
            t = ends[0][0]
        while ends and ends[0][0] == t:
            _, i = heapq.heappop(ends)
            free += jobs[i]['cpus']
            policy.end(i)
        while ai < n and jobs[arr[ai]]['submit'] == t:
            policy.arrive(arr[ai])
            ai += 1
        for i in policy.pass_(t, free):
            start[i] = t
            free -= jobs[i]['cpus']
            assert free >= 0
            heapq.heappush(ends, (t + jobs[i]['run'], i))
    return start


class Fcfs:
    """FCFS (firstfit=False) or FirstFit; queues: names in service order; qof: idx -> queue."""

    def __init__(self, jobs, queues, qof, order, firstfit=False, bound=None):
        self.jobs, self.queues, self.qof, self.order = jobs, queues, qof, order
        self.firstfit, self.bound = firstfit, bound  # bound: {queue: overtake_cpus_max} or None
        self.waiting = {q: [] for q in queues}
        self.ovt = set()
        self.ovt_cpus = {q: 0 for q in queues}

    def arrive(self, i):
        self.waiting[self.qof[i]].append(i)

    def end(self, i):
        if i in self.ovt:
            self.ovt.discard(i)
            self.ovt_cpus[self.qof[i]] -= self.jobs[i]['cpus']

    def pass_(self, t, free):
        if self.order == 'priority':
            seq = [i for q in self.queues for i in self.waiting[q]]
        else:
            seq = sorted(i for q in self.queues for i in self.waiting[q])
        blocked = set()  # queues with an earlier job still waiting in this pass
        started = []
        for i in seq:
            q, c = self.qof[i], self.jobs[i]['cpus']
            if q in blocked and not self.firstfit:
                continue
            ok = c <= free
            if ok and q in blocked and self.bound is not None:
                ok = self.ovt_cpus[q] + c <= self.bound[q]
            if not ok:
                blocked.add(q)
                continue
            if q in blocked:
                self.ovt.add(i)
                self.ovt_cpus[q] += c
            free -= c
            started.append(i)
        for i in started:
            self.waiting[self.qof[i]].remove(i)
        return started


class Profile:
    """Free CPUs over time (in 1/K s): fr[k] free on [ts[k], ts[k+1]), the last to infinity."""

    def __init__(self, t0, P):
        self.ts, self.fr = [t0], [P]

    def _split(self, x):
        k = bisect.bisect_right(self.ts, x) - 1
        if k < 0:
            self.ts.insert(0, x); self.fr.insert(0, self.fr[0])  # before t0: not used
            return 0
        if self.ts[k] != x:
            self.ts.insert(k + 1, x); self.fr.insert(k + 1, self.fr[k])
            return k + 1
        return k

    def take(self, s, e, c):
        a = self._split(s); b = self._split(e)
        for k in range(a, b):
            self.fr[k] -= c

    def earliest(self, now, d, c):
        """Earliest x >= now with at least c free on [x, x + d)."""
        ts, fr = self.ts, self.fr
        j = max(0, bisect.bisect_right(ts, now) - 1)
        x = now
        while True:
            if fr[j] < c:
                x = ts[j + 1]  # the last segment always fits (c <= P)
            elif j + 1 == len(ts) or ts[j + 1] >= x + d:
                return x
            j += 1


K = 1 << 20  # time unit of the conservative profile: 1/K s


class Conservative:
    def __init__(self, jobs, P):
        self.jobs, self.P = jobs, P
        self.waiting = []
        self.rsv = {}  # idx -> reserved start (1/K s)
        self.running = {}  # idx -> (start2, end2)
        self.late = 0  # reservations found in the past (should never happen)

    def dur(self, i):
        e = self.jobs[i]['est']
        return K * e if e > 0 else 1

    def arrive(self, i):
        self.waiting.append(i)

    def end(self, i):
        del self.running[i]

    def pass_(self, t, free):
        now = K * t
        pr = Profile(now, self.P)
        for i, (s, e) in self.running.items():
            if e > now:
                pr.take(now, e, self.jobs[i]['cpus'])
            elif s == now:  # estimate 0, started in this second's earlier pass: ends now
                pr.take(now, now + 1, self.jobs[i]['cpus'])
        for i in self.waiting:
            if i in self.rsv:
                s = self.rsv[i]
                if s < now:
                    self.late += 1
                pr.take(max(s, now), max(s, now) + self.dur(i), self.jobs[i]['cpus'])
        started = []
        for i in self.waiting:
            c, d = self.jobs[i]['cpus'], self.dur(i)
            if i in self.rsv:
                s = max(self.rsv[i], now)
                pr.take(s, s + d, -c)
            s = pr.earliest(now, d, c)
            pr.take(s, s + d, c)
            self.rsv[i] = s
            if s == now:
                started.append(i)
        for i in started:
            self.waiting.remove(i)
            del self.rsv[i]
            self.running[i] = (now, now + self.dur(i))
        return started


# queues of every workload: q1 takes all, q2 only jobs of estimate <= 3600 s, q3 only jobs of
# at most P/2 CPUs; trace queue numbers 1, 2, 3 map to them, others (0, -1, 4) go to `auto`
def queues(P, omax):
    return [dict(name='q1', cpu_max=P, wall=0, swf=[1], omax=omax[0]),
            dict(name='q2', cpu_max=P, wall=3600, swf=[2], omax=omax[1]),
            dict(name='q3', cpu_max=max(1, P // 2), wall=0, swf=[3], omax=omax[2])]


def select_trace(job, Q):
    acc = [q for q in Q if job['cpus'] <= q['cpu_max'] and (q['wall'] == 0 or job['est'] <= q['wall'])]
    for q in acc:
        if job['squeue'] in q['swf']:
            return q['name']
    if not acc:
        return None
    return min(acc, key=lambda q: (q['cpu_max'], q['wall'] or float('inf'), Q.index(q)))['name']


# scenario name -> (policy, reference builder)
SCENARIOS = {
    'fcfs': 'fcfs', 'fcfs3p': 'fcfs', 'fcfs3a': 'fcfs',
    'ff': 'firstfit', 'ffb': 'firstfit', 'ff3p': 'firstfit', 'ff3a': 'firstfit',
    'cons': 'conservative',
}


def reference(name, jobs, P, Q):
    one = {i: 'q1' for i in range(len(jobs))}
    tr = {i: select_trace(j, Q) for i, j in enumerate(jobs)}
    names = [q['name'] for q in Q]
    bound = {q['name']: q['omax'] for q in Q}
    pol = {
        'fcfs': lambda: (Fcfs(jobs, ['q1'], one, 'priority'), one),
        'fcfs3p': lambda: (Fcfs(jobs, names, tr, 'priority'), tr),
        'fcfs3a': lambda: (Fcfs(jobs, names, tr, 'arrival'), tr),
        'ff': lambda: (Fcfs(jobs, ['q1'], one, 'priority', True), one),
        'ffb': lambda: (Fcfs(jobs, ['q1'], one, 'priority', True, bound), one),
        'ff3p': lambda: (Fcfs(jobs, names, tr, 'priority', True, bound), tr),
        'ff3a': lambda: (Fcfs(jobs, names, tr, 'arrival', True), tr),
        'cons': lambda: (Conservative(jobs, P), one),
    }[name]
    p, qof = pol()
    return simulate(jobs, P, p), qof, p


INI_SCEN = {
    'fcfs': 'policy = fcfs\nqueue_select = q1\n',
    'fcfs3p': 'policy = fcfs\nqueue_select = trace\nqueue_order = priority\n',
    'fcfs3a': 'policy = fcfs\nqueue_select = trace\nqueue_order = arrival\n',
    'ff': 'policy = firstfit\nqueue_select = q1\n',
    'ffb': 'policy = firstfit\nqueue_select = q1\novertake_bound = true\n',
    'ff3p': 'policy = firstfit\nqueue_select = trace\nqueue_order = priority\novertake_bound = true\n',
    'ff3a': 'policy = firstfit\nqueue_select = trace\nqueue_order = arrival\n',
    'cons': 'policy = conservative\nqueue_select = q1\n',
}


def ini(P, Q, scen, trace="w.swf"):
    s = f"[batch]\ntrace = {trace}\ncpus = {P}\nqueues = q1, q2, q3\nscenarios = {', '.join(scen)}\n"
    for q in Q:
        s += (f"[queue.{q['name']}]\ncpu_max = {q['cpu_max']}\nwalltime_max_s = {q['wall']}\n"
              f"swf_queue = {', '.join(map(str, q['swf']))}\novertake_cpus_max = {q['omax']}\n")
    for n in scen:
        s += f"[scenario.{n}]\n{INI_SCEN[n]}triggers = none\n"
    return s


def workload(seed, nmax=None):
    """ref_easy.py's generator plus: estimate -1 and 0, jobs wider than P, SWF queue numbers
    (some unmapped), per-queue overtake bounds."""
    r = random.Random(seed)
    P = r.choice([1, 4, 8, 16, 32])
    n = r.choice([20, 60, 200]) if nmax is None else r.randint(1, nmax)
    t = 0
    lines, jobs = [], []
    est_vals = [r.choice([60, 300, 600, 3600]) for _ in range(4)]
    gaps = r.choice([[0, 0, 1, 5, 30, 100, 600], [0, 0, 0, 1, 10], [0, 60, 600, 3600]])
    for i in range(n):
        t += r.choice(gaps)
        run = r.choice([0, 0, 1, 10, 60, 300, 600, 3600, r.randint(1, 5000)])
        req = r.choice([run, max(run, r.choice(est_vals)), -1, 0, run * 2, max(1, run // 2),
                        r.choice(est_vals)])
        cpus = r.choice([1, 1, 2, 3, 4, P // 2 or 1, P, P + 1, r.randint(1, P)])
        sq = r.choice([1, 1, 2, 3, -1, 0, 4])
        lines.append(f"{i + 1} {t} -1 {run} {cpus} -1 -1 {cpus} {req} -1 1 1 1 1 {sq} -1 -1 -1")
        # docs/batch.md "Filtering": no request (-1 or 0) -> the run time; overrun extends
        jobs.append(dict(id=i + 1, submit=t, run=run, est=run if req <= 0 else max(req, run),
                         cpus=cpus, squeue=sq))
    omax = [r.randint(1, P) for _ in range(3)]
    return P, lines, jobs, queues(P, omax)


def run_sim(sim, d, P, lines, Q, scen):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "w.swf"), "w") as f:
        f.write(f"; MaxProcs: {P}\n" + "\n".join(lines) + "\n")
    with open(os.path.join(d, "b.ini"), "w") as f:
        f.write(ini(P, Q, scen, os.path.abspath(os.path.join(d, "w.swf"))))
    rc = subprocess.run([sim, "-q", "-c", os.path.join(d, "b.ini"), "-o", os.path.join(d, "o")],
                        capture_output=True, text=True)
    if rc.returncode != 0:
        return None, rc.stderr.strip()[-300:]
    ours = {}
    with open(os.path.join(d, "o", "jobs.csv")) as f:
        for row in csv.DictReader(f):
            ours[(row["scenario"], int(row["job"]))] = (
                float(row["start_s"]) if row["start_s"] else None, row["queue"] or None)
    return ours, None


def compare(name, ours, jobs, P, Q):
    ref, qof, pol = reference(name, jobs, P, Q)
    bad = []
    for i, j in enumerate(jobs):
        s, q = ours.get((name, j['id']), (None, None))
        rs = ref.get(i)
        rq = qof[i] if j['cpus'] <= P else None
        if s != rs or (rs is not None and q != rq):
            bad.append((j['id'], s, rs) if q == rq else (j['id'], s, rs, q, rq))
    if getattr(pol, 'late', 0):
        bad.append(('reference: reservations in the past', pol.late))
    return bad


def main():
    sim, out = sys.argv[1], sys.argv[2]
    seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    base = int(os.environ.get("NL_TEST_SEED", "1"))
    policies = ['fcfs', 'firstfit', 'conservative']
    print(f"1..{seeds * len(policies)}")
    print(f"# NL_TEST_SEED={base}")
    failed = 0
    k = 0
    scen = list(SCENARIOS)
    for w in range(seeds):
        seed = base + w
        P, lines, jobs, Q = workload(seed)
        ours, err = run_sim(sim, os.path.join(out, f"w{seed}"), P, lines, Q, scen)
        for pol in policies:
            k += 1
            variants = [n for n in scen if SCENARIOS[n] == pol]
            name = f"{pol} ({', '.join(variants)}) on random workload {seed} ({len(jobs)} jobs, " \
                   f"{P} CPUs): every job starts at the reference's second, in its queue"
            if err is not None:
                print(f"not ok {k} - {name}\n# nlevel-sim: {err}")
                failed += 1
                continue
            msgs = []
            for v in variants:
                bad = compare(v, ours, jobs, P, Q)
                if bad:
                    msgs.append(f"# {v}: {len(bad)} differ; (job, nlevel-sim, reference"
                                f"[, queues]): {bad[:5]}")
            print(f"{'not ok' if msgs else 'ok'} {k} - {name}")
            if msgs:
                failed += 1
                print("\n".join(msgs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
