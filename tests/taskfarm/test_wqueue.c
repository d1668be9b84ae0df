/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-worker's per-machine queue (tools/worker/nl_wqueue.h, issue #33): the occupancy
 * estimate (backlog_ns never 0 while a command runs, capped by the time limit and by the
 * running one's deadline, the mean run time learnt), KILL of a queued, running and unknown
 * sub-task (queue order kept, CANCELLED, TIMEOUT not overwritten), the time limit
 * min(DISPATCH, --max-time), and the DONE state of an end (TIMEOUT, CANCELLED, OOM, EXITED;
 * the status of an exit and of a signal). TAP.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/wait.h>

#include "nl_tap.h"
#include "nl_wqueue.h"

#define MS 1000000ull
#define S 1000000000ull

static struct nl_wq_sub ring[2][NL_WQ_QCAP];
static struct nl_wq_mach mach[2];

/* Queue a named-command sub-task (task id t, sub 0, token t * 10) on machine k at time at. */
static void
push(unsigned int k, uint64_t t, uint32_t limit_ms, uint64_t at)
{
	struct nl_wq_mach *m = &mach[k];
	struct nl_wq_sub *s = &m->q[(m->head + m->n) % NL_WQ_QCAP];

	memset(s, 0, sizeof(*s));
	s->d.task_id = t;
	s->d.token = (uint32_t)t * 10;
	s->d.mach = k;
	s->d.cmd_id = 7;
	s->d.time_limit_ms = limit_ms;
	s->arr_ns = at;
	m->n++;
}

static uint64_t
task_at(unsigned int k, unsigned int j)
{
	return mach[k].q[(mach[k].head + j) % NL_WQ_QCAP].d.task_id;
}

static void
reset(void)
{
	memset(mach, 0, sizeof(mach));
	for (unsigned int k = 0; k < 2; k++)
		mach[k].q = ring[k];
}

int
main(void)
{
	uint64_t t0 = 1000 * S, b;
	struct nl_msg_dispatch d;
	struct nl_msg_done u;
	struct nl_msg_kill kl = { 0 };
	int32_t st;

	/* --- occupancy ----------------------------------------------------------------------- */
	reset();
	nl_tap_ok(nl_wq_backlog_ns(&mach[0], t0) == 0, "an idle machine: backlog 0");
	push(0, 1, 0, t0);
	push(0, 2, 0, t0);
	b = nl_wq_backlog_ns(&mach[0], t0);
	nl_tap_ok(b == 2 * S, "two queued, no mean yet: 1 s each (got %llu ns)",
		  (unsigned long long)b);
	mach[0].pid = 100;
	nl_wq_started(&mach[0], t0, 0);
	nl_tap_ok(mach[0].deadline_ns == 0, "no limit anywhere: no deadline");
	b = nl_wq_backlog_ns(&mach[0], t0 + 600 * MS);
	nl_tap_ok(b == 400 * MS + 1 * S, "running 0.6 s of 1 s + 1 queued: 1.4 s (got %llu)",
		  (unsigned long long)b);
	b = nl_wq_backlog_ns(&mach[0], t0 + 3600 * S);
	nl_tap_ok(b == 250 * MS + 1 * S, "running for an hour past its estimate: a quarter of it "
		  "for the running one, never 0 (got %llu)", (unsigned long long)b);
	st = nl_wq_end(&mach[0], 0, false, t0 + 3 * S, &d, &u);
	nl_tap_ok(st == 0 && d.task_id == 1 && mach[0].n == 1 && mach[0].mean_ns == 3 * S &&
		  mach[0].pid == 0 && u.state == NL_DONE_EXITED && u.run_ms == 3000,
		  "end of the first: status 0, EXITED, run 3000 ms, mean learnt 3 s, popped");
	b = nl_wq_backlog_ns(&mach[0], t0 + 3 * S);
	nl_tap_ok(b == 3 * S, "one queued, mean 3 s: 3 s (got %llu)", (unsigned long long)b);
	mach[0].pid = 101;
	nl_wq_started(&mach[0], t0 + 4 * S, 0);
	nl_wq_end(&mach[0], 0, false, t0 + 5 * S, &d, &u);
	nl_tap_ok(mach[0].mean_ns == (4 * 3 * S + 1 * S) / 5 && u.queue_ms == 4000,
		  "the mean is an EWMA (1/5): 2.6 s; queue_ms 4000 (arrival to start)");
	/* the time limit caps the estimate, the deadline caps the running one's rest */
	push(0, 3, 500, t0 + 5 * S);
	push(0, 4, 0, t0 + 5 * S);
	b = nl_wq_backlog_ns(&mach[0], t0 + 5 * S);
	nl_tap_ok(b == 500 * MS + mach[0].mean_ns, "a 500 ms limit caps its estimate (got %llu)",
		  (unsigned long long)b);
	mach[0].pid = 102;
	nl_wq_started(&mach[0], t0 + 5 * S, 2 * S);
	nl_tap_ok(mach[0].deadline_ns == t0 + 5 * S + 500 * MS,
		  "deadline = start + min(DISPATCH 500 ms, --max-time 2 s)");
	b = nl_wq_backlog_ns(&mach[0], t0 + 5 * S + 499 * MS);
	nl_tap_ok(b == 1 * MS + mach[0].mean_ns, "1 ms before its deadline: 1 ms left (got %llu)",
		  (unsigned long long)b);
	b = nl_wq_backlog_ns(&mach[0], t0 + 5 * S + 900 * MS);
	nl_tap_ok(b >= 1 * MS && b <= 125 * MS + mach[0].mean_ns,
		  "past its deadline, not yet reaped: still > 0 (got %llu)", (unsigned long long)b);
	/* --max-time alone, and the smaller of both */
	reset();
	push(0, 5, 10000, t0);
	mach[0].pid = 103;
	nl_wq_started(&mach[0], t0, 2 * S);
	nl_tap_ok(mach[0].deadline_ns == t0 + 2 * S, "deadline = min(DISPATCH 10 s, --max-time 2 s)");
	push(1, 6, 0, t0);
	mach[1].pid = 104;
	nl_wq_started(&mach[1], t0, 3 * S);
	nl_tap_ok(mach[1].deadline_ns == t0 + 3 * S, "no DISPATCH limit: --max-time 3 s");
	/* emulated work counts until its model end, named commands by estimate */
	reset();
	mach[1].busy_until_ns = t0 + 7 * S;
	nl_tap_ok(nl_wq_backlog_ns(&mach[1], t0 + 2 * S) == 5 * S, "emulated work: to its model end");

	/* --- KILL ----------------------------------------------------------------------------- */
	reset();
	for (uint64_t t = 10; t < 15; t++)
		push(0, t, 0, t0);
	mach[0].pid = 200;
	nl_wq_started(&mach[0], t0, 0);
	kl.task_id = 12, kl.token = 120, kl.mach = 0;
	nl_tap_ok(nl_wq_kill(mach, 2, &kl, t0 + 1500 * MS, &d, &u) == NL_WQ_KILL_QUEUED &&
		  d.task_id == 12 && u.state == NL_DONE_CANCELLED && u.queue_ms == 1500 &&
		  mach[0].n == 4, "KILL of a queued one: withdrawn, DONE CANCELLED, queue_ms 1500");
	nl_tap_ok(task_at(0, 0) == 10 && task_at(0, 1) == 11 && task_at(0, 2) == 13 &&
		  task_at(0, 3) == 14, "the rest keep their order (10 11 13 14)");
	nl_tap_ok(nl_wq_kill(mach, 2, &kl, t0, &d, &u) == NL_WQ_KILL_NONE,
		  "the same KILL again: not held (answered with nothing)");
	kl.task_id = 13, kl.token = 999;
	nl_tap_ok(nl_wq_kill(mach, 2, &kl, t0, &d, &u) == NL_WQ_KILL_NONE && mach[0].n == 4,
		  "KILL with another token (a re-dispatch's): not held, nothing withdrawn");
	kl.task_id = 13, kl.token = 130, kl.mach = 1;
	nl_tap_ok(nl_wq_kill(mach, 2, &kl, t0, &d, &u) == NL_WQ_KILL_NONE,
		  "KILL naming the wrong machine: not held");
	kl.mach = 5;
	nl_tap_ok(nl_wq_kill(mach, 2, &kl, t0, &d, &u) == NL_WQ_KILL_NONE,
		  "KILL of a machine the worker does not have: not held");
	kl.task_id = 10, kl.token = 100, kl.mach = 0;
	nl_tap_ok(nl_wq_kill(mach, 2, &kl, t0, &d, &u) == NL_WQ_KILL_RUNNING && mach[0].n == 4 &&
		  mach[0].end_state == NL_DONE_CANCELLED,
		  "KILL of the running one: kill it, still held until reaped, end state CANCELLED");
	st = nl_wq_end(&mach[0], SIGKILL, false, t0 + 2 * S, &d, &u); /* killed by signal 9 */
	nl_tap_ok(st == 137 && u.state == NL_DONE_CANCELLED && d.task_id == 10 && mach[0].n == 3 &&
		  task_at(0, 0) == 11, "its end: DONE 137, CANCELLED; the next one is the head");
	/* a KILL after the time limit struck keeps TIMEOUT */
	mach[0].pid = 201;
	nl_wq_started(&mach[0], t0 + 2 * S, 1 * S);
	mach[0].end_state = NL_DONE_TIMEOUT; /* what the loop sets at the deadline */
	kl.task_id = 11, kl.token = 110;
	nl_tap_ok(nl_wq_kill(mach, 2, &kl, t0 + 3 * S, &d, &u) == NL_WQ_KILL_RUNNING &&
		  mach[0].end_state == NL_DONE_TIMEOUT, "a KILL after its time-out: TIMEOUT stays");
	st = nl_wq_end(&mach[0], SIGKILL, true, t0 + 3 * S, &d, &u);
	nl_tap_ok(st == 137 && u.state == NL_DONE_TIMEOUT, "TIMEOUT wins over an OOM count too");
	/* the ring wraps: a KILL across the end of the ring */
	reset();
	mach[1].head = NL_WQ_QCAP - 2;
	for (uint64_t t = 20; t < 25; t++)
		push(1, t, 0, t0);
	kl.task_id = 21, kl.token = 210, kl.mach = 1;
	nl_tap_ok(nl_wq_kill(mach, 2, &kl, t0, &d, &u) == NL_WQ_KILL_QUEUED && mach[1].n == 4 &&
		  task_at(1, 0) == 20 && task_at(1, 1) == 22 && task_at(1, 2) == 23 &&
		  task_at(1, 3) == 24, "a KILL across the ring's wrap keeps the order (20 22 23 24)");
	kl.task_id = 20, kl.token = 200;
	nl_tap_ok(nl_wq_kill(mach, 2, &kl, t0, &d, &u) == NL_WQ_KILL_QUEUED && d.task_id == 20 &&
		  task_at(1, 0) == 22, "the head not yet started (no pid) is withdrawn, not killed");
	/* the head whose start is under way (off the loop, pid not known yet): held, marked */
	mach[1].starting = true;
	kl.task_id = 22, kl.token = 220;
	nl_tap_ok(nl_wq_kill(mach, 2, &kl, t0, &d, &u) == NL_WQ_KILL_RUNNING && mach[1].n == 3 &&
		  task_at(1, 0) == 22 && mach[1].end_state == NL_DONE_CANCELLED,
		  "KILL of the head being started: kept at the head, end state CANCELLED (killed "
		  "once started)");
	mach[1].starting = false;

	/* --- DONE states ---------------------------------------------------------------------- */
	reset();
	push(0, 30, 0, t0);
	mach[0].pid = 300;
	nl_wq_started(&mach[0], t0, 0);
	st = nl_wq_end(&mach[0], SIGKILL, true, t0 + S, &d, &u);
	nl_tap_ok(st == 137 && u.state == NL_DONE_OOM, "killed while the OOM count rose: OOM");
	push(0, 31, 0, t0);
	mach[0].pid = 301;
	nl_wq_started(&mach[0], t0, 0);
	st = nl_wq_end(&mach[0], 3 << 8, false, t0 + S, &d, &u); /* exit(3) */
	nl_tap_ok(st == 3 && u.state == NL_DONE_EXITED, "exit 3: status 3, EXITED");
	push(0, 32, 0, t0);
	mach[0].pid = 302;
	nl_wq_started(&mach[0], t0, 0);
	st = nl_wq_end(&mach[0], SIGSEGV, false, t0 + S, &d, &u);
	nl_tap_ok(st == 128 + SIGSEGV && u.state == NL_DONE_EXITED,
		  "a signal not ours (SEGV): 139, EXITED");
	push(0, 33, 100, t0);
	mach[0].pid = 303;
	nl_wq_started(&mach[0], t0, 0);
	mach[0].end_state = NL_DONE_TIMEOUT;
	st = nl_wq_end(&mach[0], SIGKILL, false, t0 + 100 * MS, &d, &u);
	nl_tap_ok(st == 137 && u.state == NL_DONE_TIMEOUT && mach[0].end_state == NL_DONE_EXITED &&
		  mach[0].deadline_ns == 0, "TIMEOUT; the machine's end state and deadline reset");
	nl_tap_ok(nl_wq_ms(UINT64_MAX) == UINT32_MAX && nl_wq_ms(1999999) == 1,
		  "milliseconds saturate, round down");
	return nl_tap_done();
}
