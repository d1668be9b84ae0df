#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Differential test of nlevel-sim's FirstFit with Kawanami et al.'s automatic queue selection
and connection reservation against an independent reference written from docs/batch.md
("Engine", "Filtering", "Kawanami et al.: automatic queue selection and connection
reservation", "Configuration keys", invariants I3/I5), not from sim/batch/.

Engine ("Engine"): all ends and arrivals of one second are applied, then one scheduling pass
runs (a job of run time 0 ends at its start second: one more event, one more pass). FirstFit:
every waiting job that fits starts; `queue_order = priority` serves the queues in configuration
order, each in arrival order, `arrival` all waiting jobs in arrival order; a job that starts while
an earlier job of its queue waits overtakes it (how = overtake); `overtake_bound = true`: the
running overtakers' CPUs of a queue plus the candidate's stay within `overtake_cpus_max`.

Queue selection `auto`: among the queues accepting the job (CPUs <= cpu_max, processes <=
proc_max, threads <= thread_max, estimate <= walltime_max_s inclusive, 0 = none) the strictest by
cpu_max, walltime (0 = loosest), thread_max, proc_max, configuration order; a job no queue
accepts never starts (and is no event). Threads ("Threads"): threads = min(cpus,
threads_per_proc), processes = ceil(cpus / threads), except the thread-parallel jobs (1 process
x cpus threads): CPUs <= thread_jobs_cpus_max (0 = any) and splitmix64(job number) mod 10,000
< 100 x thread_jobs_pct (so the max-space "most threads" tie-break is exercised).

Connection reservation for waiting job R of queue q (steps 1-5):
1. population = running unflagged jobs of q, or all running unflagged jobs when those of q total
   fewer CPUs than R;
2. request-match: the population job with exactly R's CPUs, earliest start, lowest index;
3. else max-space: most CPUs, most threads, earliest start, lowest index, until the flagged CPUs
   cover R; Extension: when the whole population is short, all of it is flagged and the missing
   CPUs are taken from the free pool at once and held; still short: refused, nothing changes;
4. a flagged job's end gives its CPUs to R's held pool up to R's need, the surplus to the free
   pool. R, holding its need, starts in that second's pass before the FirstFit walk (how =
   reserved; it overtakes nobody); a zero-run R's end is one more event of
   the second, so one more pass runs. A reservation whose population is empty and whose need the
   free pool covers holds it at once, and R starts then (after the pass). Choice: in a pass, at
   its place in its queue, R starts when held + free cover it (how = reserved); its other
   flagged jobs are unflagged;
5. held CPUs are R's only; active reservations of q <= resv_max.q (default 0: no reservation in
   q, no attempt counted); over the limit: refused (counted), R stays an ordinary waiting job.
Triggers ("Triggers", applied after the pass in the order priority, head, nonwait):
- priority: a job overtaken in a pass (by a FirstFit start or a Choice start of a reserved job;
  not by a reserved job starting because it holds its need) gains formula (1) on itself,
  (threads/thread_max(q) * cpus/cpu_max(q))^(-1/2), once per overtaking job; a job incremented
  in this pass whose priority exceeds (>) prio_threshold (> 0) reserves, queues in configuration
  order, each from its head; a refused one tries again at its next increment;
- head: after a pass of a second in which a job ended, the still-waiting, unreserved head of each
  head_type queue;
- nonwait: a job that arrived to a queue with nobody waiting and did not start in that pass.
A reserved job is neither counted among the overtakers for overtake_bound nor held back by it
(docs/batch.md, FirstFit). Compared per job: start second, queue,
`how`; per scenario: batch.meta's resv_made, resv_refused, resv_priority, resv_head,
resv_nonwait.

Usage: ref_kawanami.py NLEVEL_SIM OUT_DIR [SEEDS]: SEEDS random workloads (from NL_TEST_SEED,
default 1), each run once through `nlevel-sim` with every scenario (DIR/jobs.csv, DIR/batch.meta)
and through the reference; TAP, one test per workload, failing on any difference."""
import csv
import heapq
import os
import random
import subprocess
import sys

def select_auto(job, Q):
    acc = [q for q in Q if job['cpus'] <= q['cpu_max'] and job['procs'] <= q['proc_max']
           and job['threads'] <= q['thread_max'] and (q['wall'] == 0 or job['est'] <= q['wall'])]
    if not acc:
        return None
    return min(acc, key=lambda q: (q['cpu_max'], q['wall'] or float('inf'), q['thread_max'],
                                   q['proc_max'], Q.index(q)))['name']


class Kawanami:
    def __init__(self, jobs, P, Q, sc):
        self.jobs, self.P, self.sc = jobs, P, sc
        self.Q = {q['name']: q for q in Q}
        self.qnames = [q['name'] for q in Q]
        self.qof = {i: select_auto(j, Q) for i, j in enumerate(jobs)}
        self.free = P
        self.waiting = {q: [] for q in self.qnames}
        self.running = {}      # idx -> start time
        self.flag = {}         # running idx -> R
        self.resv = {}         # R -> dict(held, flagged set, trig)
        self.active = {q: 0 for q in self.qnames}
        self.prio = {}
        self.ovt = set()
        self.ovt_cpus = {q: 0 for q in self.qnames}
        self.start, self.how = {}, {}
        self.count = dict(made=0, refused=0, priority=0, head=0, nonwait=0)
        self.trig = set(sc['triggers'])
        self.bound = sc['bound']
        self.arrived = []      # this second's arrivals that found their queue empty
        self.ended = False
        self.log = None
        self.ready = []        # reserved jobs that came to hold their need this second

    def arrive(self, i):
        q = self.qof[i]
        if q is None:
            return
        if not self.waiting[q]:
            self.arrived.append(i)
        self.waiting[q].append(i)

    def end(self, i, t):
        c = self.jobs[i]['cpus']
        self.ended = True
        del self.running[i]
        if i in self.ovt:
            self.ovt.discard(i)
            self.ovt_cpus[self.qof[i]] -= c
        R = self.flag.pop(i, None)
        if R is None:
            self.free += c
            return []
        r = self.resv[R]
        r['flagged'].discard(i)
        need = self.jobs[R]['cpus']
        give = min(c, need - r['held'])
        r['held'] += give
        self.free += c - give
        if r['held'] == need:
            self.ready.append(R)  # it starts in this second's pass, before FirstFit
        return []

    def inc(self, j):
        q, k = self.Q[self.qof[j]], self.jobs[j]  # formula (1) on the overtaken job
        x = (k['threads'] / q['thread_max']) * (k['cpus'] / q['cpu_max'])
        self.prio[j] = self.prio.get(j, 0.0) + x ** -0.5
        self.incd.add(j)

    def pass_(self, t):
        self.now, self.late = t, []
        if self.sc['order'] == 'priority':
            seq = [i for q in self.qnames for i in self.waiting[q]]
        else:
            seq = sorted(i for q in self.qnames for i in self.waiting[q])
        blocked = {}  # queue -> earlier jobs of it still waiting in this pass
        started = []
        self.incd = set()
        # reserved jobs holding their need start first, not overtaking
        for R in self.ready:
            q, r = self.qof[R], self.resv.pop(R)
            for f in r['flagged']:
                del self.flag[f]
            self.active[q] -= 1
            self.how[R] = 'reserved'
            self.start[R] = self.running[R] = t
            self.waiting[q].remove(R)
            started.append(R)
        self.ready = []
        seq = [i for i in seq if i not in self.start]
        for i in seq:
            q, c = self.qof[i], self.jobs[i]['cpus']
            r = self.resv.get(i)
            held = r['held'] if r else 0
            ok = c <= self.free + held
            # a reserved job is no overtaker for the bound, but its Choice start raises the
            # priority of the jobs of its queue it passes
            isov = q in blocked and r is None
            if ok and isov and self.bound:
                ok = self.ovt_cpus[q] + c <= self.Q[q]['omax']
            if not ok:
                blocked.setdefault(q, []).append(i)
                continue
            self.free -= c - held
            assert self.free >= 0
            if r:
                for f in r['flagged']:
                    del self.flag[f]
                del self.resv[i]
                self.active[q] -= 1
                self.how[i] = 'reserved'
            else:
                self.how[i] = 'overtake' if q in blocked else 'head'
            if isov:
                self.ovt.add(i)
                self.ovt_cpus[q] += c
            for j in blocked.get(q, []):  # once per overtaking job
                self.inc(j)
            started.append(i)
            self.start[i] = t
            self.running[i] = t
        for i in started:
            if i in self.waiting[self.qof[i]]:
                self.waiting[self.qof[i]].remove(i)
        st = set(started)
        for trig in ('priority', 'head', 'nonwait'):
            if trig not in self.trig:
                continue
            if trig == 'priority':
                cands = [i for q in self.qnames for i in self.waiting[q]
                         if i in self.incd and self.Q[q]['thr'] > 0
                         and self.prio[i] > self.Q[q]['thr']]
            elif trig == 'head':
                cands = [self.waiting[q][0] for q in self.qnames
                         if self.ended and self.Q[q]['head'] and self.waiting[q]]
            else:
                cands = [i for i in self.arrived if i not in st]
            for i in cands:
                if i not in self.resv and i not in self.start:
                    self.reserve(i, trig)
        self.arrived = []
        self.ended = False
        return started + self.late

    def reserve(self, R, trig):
        q, need = self.qof[R], self.jobs[R]['cpus']
        if self.sc['resv_max'].get(q, 0) == 0:
            return False  # no connection reservation in q: no attempt, no refusal
        if self.active[q] >= self.sc['resv_max'][q]:
            self.count['refused'] += 1
            return False
        pop = [i for i in self.running if i not in self.flag and self.qof[i] == q]
        if sum(self.jobs[i]['cpus'] for i in pop) < need:
            pop = [i for i in self.running if i not in self.flag]
        held = 0
        match = [i for i in pop if self.jobs[i]['cpus'] == need]
        if match:
            fl = [min(match, key=lambda i: (self.running[i], i))]
        elif sum(self.jobs[i]['cpus'] for i in pop) >= need:
            fl, got = [], 0
            for i in sorted(pop, key=lambda i: (-self.jobs[i]['cpus'], -self.jobs[i]['threads'],
                                                 self.running[i], i)):
                if got >= need:
                    break
                fl.append(i)
                got += self.jobs[i]['cpus']
        else:
            miss = need - sum(self.jobs[i]['cpus'] for i in pop)
            if self.free < miss:
                self.count['refused'] += 1
                return False
            fl, held = pop, miss
            self.free -= miss
        for i in fl:
            self.flag[i] = R
        if self.log is not None:
            self.log.append((trig, 'job', self.jobs[R]['id'], 'flags',
                             [self.jobs[i]['id'] for i in fl], 'held', held))
        self.count['made'] += 1
        self.count[trig] += 1
        if held == need:
            # nothing ran to flag and the free pool covered R: it holds its need, it starts now
            self.how[R] = 'reserved'
            self.start[R] = self.running[R] = self.now
            self.waiting[q].remove(R)
            self.late.append(R)
            return True
        self.resv[R] = dict(held=held, flagged=set(fl), trig=trig)
        self.active[q] += 1
        return True


def simulate(jobs, P, pol):
    ends = []
    arr = [i for i in range(len(jobs)) if pol.qof[i] is not None]  # the others are no event
    ai, n = 0, len(arr)
    while ai < n or ends:
        t = jobs[arr[ai]]['submit'] if ai < n else float('inf')
        if ends and ends[0][0] < t:
            t = ends[0][0]
        while ends and ends[0][0] == t:
            _, i = heapq.heappop(ends)
            pol.end(i, t)
        while ai < n and jobs[arr[ai]]['submit'] == t:
            pol.arrive(arr[ai])
            ai += 1
        for i in pol.pass_(t):
            heapq.heappush(ends, (t + jobs[i]['run'], i))
    return pol


def workload(seed, nmax=None):
    r = random.Random(seed)
    P = r.choice([4, 8, 16, 32])
    n = r.choice([20, 60, 120, 200]) if nmax is None else r.randint(1, nmax)
    tpp = r.choice([1, 1, 2, 4])
    t = 0
    lines, jobs = [], []
    gaps = r.choice([[0, 0, 1, 5, 30, 100], [0, 0, 0, 1, 10], [0, 10, 60, 600]])
    for i in range(n):
        t += r.choice(gaps)
        run = r.choice([0, 1, 10, 60, 300, 600, 3600, r.randint(1, 5000)])
        req = r.choice([run, -1, run * 2, max(1, run // 2), r.choice([600, 3600, 7200])])
        cpus = r.choice([1, 1, 2, 3, 4, P // 4 or 1, P // 2, P, r.randint(1, P)])
        lines.append(f"{i + 1} {t} -1 {run} {cpus} -1 -1 {cpus} {req} -1 1 1 1 1 -1 -1 -1 -1")
        th = min(cpus, tpp)
        jobs.append(dict(id=i + 1, submit=t, run=run, est=run if req <= 0 else max(req, run),
                         cpus=cpus, threads=th, procs=-(-cpus // th)))
    q4, q2 = max(1, P // 4), P // 2
    thr = lambda: r.choice([0, 0.5, 1, 1.5, 2, 3, 5])  # noqa: E731
    # qs: small, short; qt, qm: cpu_max ties broken by thread_max or (equal thread_max) by
    # proc_max; qw: a walltime, ties qt/qm or ql on cpu_max; ql: takes everything
    tm = max(1, P // 4)
    Q = [dict(name='qs', cpu_max=q4, proc_max=q4, thread_max=min(q4, 2), wall=r.choice([600, 3600])),
         dict(name='qt', cpu_max=q2, proc_max=r.choice([1, 2]), thread_max=r.choice([q2, tm]), wall=0),
         dict(name='qm', cpu_max=q2, proc_max=q2, thread_max=tm, wall=0),
         dict(name='qw', cpu_max=r.choice([q2, P]), proc_max=r.choice([q4, P]),
              thread_max=r.choice([1, tm, P]), wall=r.choice([600, 3600])),
         dict(name='ql', cpu_max=P, proc_max=P, thread_max=P, wall=0)]
    if r.random() < 0.5:
        del Q[3]
    if r.random() < 0.15:
        del Q[-1]  # no queue takes the widest jobs: they never start (counted unrunnable)
    r.shuffle(Q)  # service order and the last tie-break
    for q in Q:
        q.update(omax=r.randint(1, P), thr=thr(), head=r.random() < (0.7 if q['name'] == 'ql' else 0.3))
    rmax = {q['name']: r.choice([0, 1, 1, 2, 3]) for q in Q}
    # thread-parallel jobs ("Threads"): 1 process x cpus threads for the hashed share
    pct, tcm = r.choice([0, 0, 15, 50, 100]), r.choice([0, max(1, P // 2)])
    for j in jobs:
        if pct and (tcm == 0 or j['cpus'] <= tcm) and splitmix64(j['id']) % 10000 < pct * 100:
            j['threads'], j['procs'] = j['cpus'], 1
    return dict(P=P, tpp=tpp, lines=lines, jobs=jobs, Q=Q, rmax=rmax, pct=pct, tcm=tcm)


def splitmix64(x):
    """Steele, Lea and Flood's splitmix64 finaliser (docs/batch.md, thread_jobs_pct)."""
    m = (1 << 64) - 1
    x = (x + 0x9e3779b97f4a7c15) & m
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & m
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & m
    return x ^ (x >> 31)


def scenarios(w):
    rm = w['rmax']
    base = dict(order='priority', bound=False, resv_max=rm)
    return {
        'none': dict(base, triggers=[]),
        'prio': dict(base, triggers=['priority']),
        'head': dict(base, triggers=['head']),
        'nonw': dict(base, triggers=['nonwait']),
        'all': dict(base, triggers=['priority', 'head', 'nonwait']),
        'allarr': dict(base, order='arrival', triggers=['priority', 'head', 'nonwait']),
        'allb': dict(base, bound=True, triggers=['priority', 'head', 'nonwait']),
    }


def ini(w, scen):
    s = (f"[batch]\ntrace = {w.get('trace', 'w.swf')}\ncpus = {w['P']}\nthreads_per_proc = {w['tpp']}\n"
         f"thread_jobs_pct = {w['pct']}\nthread_jobs_cpus_max = {w['tcm']}\n"
         f"queues = {', '.join(q['name'] for q in w['Q'])}\nscenarios = {', '.join(scen)}\n")
    for q in w['Q']:
        s += (f"[queue.{q['name']}]\ncpu_max = {q['cpu_max']}\nproc_max = {q['proc_max']}\n"
              f"thread_max = {q['thread_max']}\nwalltime_max_s = {q['wall']}\n"
              f"overtake_cpus_max = {q['omax']}\nprio_threshold = {q['thr']}\n"
              f"head_type = {'true' if q['head'] else 'false'}\n")
    for n, sc in scen.items():
        s += (f"[scenario.{n}]\npolicy = firstfit\nqueue_select = auto\nqueue_order = {sc['order']}\n"
              f"overtake_bound = {'true' if sc['bound'] else 'false'}\n"
              f"triggers = {', '.join(sc['triggers']) or 'none'}\n")
        for q, m in sc['resv_max'].items():
            if m:
                s += f"resv_max.{q} = {m}\n"
    return s


def run_sim(sim, d, w, scen):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "w.swf"), "w") as f:
        f.write(f"; MaxProcs: {w['P']}\n" + "\n".join(w['lines']) + "\n")
    w = dict(w, trace=os.path.abspath(os.path.join(d, "w.swf")))
    with open(os.path.join(d, "b.ini"), "w") as f:
        f.write(ini(w, scen))
    rc = subprocess.run([sim, "-q", "-c", os.path.join(d, "b.ini"), "-o", os.path.join(d, "o")],
                        capture_output=True, text=True)
    if rc.returncode != 0:
        return None, None, rc.stderr.strip()[-300:]
    ours = {}
    with open(os.path.join(d, "o", "jobs.csv")) as f:
        for row in csv.DictReader(f):
            ours[(row["scenario"], int(row["job"]))] = (
                float(row["start_s"]) if row["start_s"] else None, row["queue"] or None, row["how"])
    meta = {}
    with open(os.path.join(d, "o", "batch.meta")) as f:
        for line in f:
            if line.startswith("scenario."):
                k, v = line.strip().split("=", 1)
                meta[k[9:]] = dict(x.split(":", 1) for x in v.split())
    return ours, meta, None


def compare(name, sc, w, ours, meta):
    jobs, P = w['jobs'], w['P']
    pol = simulate(jobs, P, Kawanami(jobs, P, w['Q'], sc))
    bad = []
    for i, j in enumerate(jobs):
        s, q, how = ours.get((name, j['id']), (None, None, None))
        rs = pol.start.get(i)
        rq = pol.qof[i] if j['cpus'] <= P else None
        rh = pol.how.get(i, 'none')
        if s != rs or (rs is not None and q != rq) or how != rh:
            bad.append((j['id'], s, rs, how, rh) if q == rq else (j['id'], s, rs, how, rh, q, rq))
    if meta is not None:
        m = meta.get(name, {})
        got = {k: int(m.get('resv_' + k, -1)) for k in pol.count}
        if got != pol.count:
            bad.append(('resv counts', got, pol.count))
    return bad


def main():
    sim, out = sys.argv[1], sys.argv[2]
    seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    base = int(os.environ.get("NL_TEST_SEED", "1"))
    print(f"1..{seeds}")
    print(f"# NL_TEST_SEED={base}")
    failed = 0
    for k in range(1, seeds + 1):
        seed = base + k - 1
        w = workload(seed)
        scen = scenarios(w)
        ours, meta, err = run_sim(sim, os.path.join(out, f"w{seed}"), w, scen)
        name = (f"FirstFit, auto queues, connection reservation ({', '.join(scen)}) on random "
                f"workload {seed} ({len(w['jobs'])} jobs, {w['P']} CPUs): every job starts at the "
                f"reference's second, in its queue, the same way")
        if err is not None:
            print(f"not ok {k} - {name}\n# nlevel-sim: {err}")
            failed += 1
            continue
        msgs = []
        for n, sc in scen.items():
            bad = compare(n, sc, w, ours, meta)
            if bad:
                msgs.append(f"# {n}: {len(bad)} differ; (job, nlevel-sim, reference start, "
                            f"how, how[, queues]): {bad[:4]}")
        print(f"{'not ok' if msgs else 'ok'} {k} - {name}")
        if msgs:
            failed += 1
            print("\n".join(msgs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
