/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drain on stop (issue #34 item 3; docs/taskfarm.md "Stopping the appliance"). In port mode
 * the first SIGTERM or SIGINT does not stop the appliance: it drains.
 *
 *   1. No new task: a SUBMIT or FSUBMIT is answered REJECT shutdown (reason 9, never
 *      accepted). Resends of accepted FSUBMITs are still answered from their state; DONE,
 *      LOAD, HELLO, CANCEL and the status questions are served as before.
 *   2. Tasks accepted and not dispatched yet (in the managers, on the sub-task ring, or
 *      waiting at the appliance for an idle slot) are withdrawn, as a CANCEL withdraws them,
 *      with reason shutdown: REJECT shutdown to their submitter, record state `shutdown`.
 *   3. Tasks under way (a sub-task dispatched or done) go on; their DONEs are served.
 *   4. The appliance stops when nothing is in flight, or at the drain's deadline:
 *      --drain-timeout S after the signal (default 30 s), min(S, 2 s) for SIGINT (Ctrl-C and
 *      test clean-ups stay fast). A second signal stops at once.
 *   5. At the stop (nl_dp_drain_end(), the manager lcores stopped) every task still accepted
 *      and unanswered is answered REJECT shutdown, after a KILL of its sub-tasks still on
 *      workers: nothing accepted is left silent, and a task re-submitted after a restart
 *      does not run beside its old self.
 *
 * Invariants:
 *   I1  every task accepted here (nl_dp_meta.held) gets exactly one final answer: COMPLETE,
 *       or REJECT (shutdown unless it failed for a reason of its own before);
 *   I2  no task is admitted after the drain started (on_submit() asks nl_dp_draining());
 *   I3  a task withdrawn for shutdown never reaches a worker (drain_subs() and the pull check
 *       the withdraw mark before any DISPATCH).
 *
 * The request comes from a signal handler (nl_port_drain_request_mt()): a counter taken with
 * an atomic add, so that exactly one signal starts the drain and a later one stops at once;
 * the I/O loop reads the signal number with a relaxed load once per turn.
 */
#include <signal.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_log.h>
#include <rte_ring.h>

#include "nl_atomic.h"
#include "nl_dp_farm.h"
#include "nl_dp_sec.h"
#include "nl_port_priv.h"

#define DP_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)

#define SIGINT_DRAIN_MAX_S 2.0 /* SIGINT drains at most this long [s] */

/* Relaxed: each is one word written by a signal handler and read by the I/O lcore once per
 * turn; nothing else is published through them (the loop acts on its own state). */
static uint64_t drain_armed; /* nl_port_serve() is in its I/O loop */
static uint64_t drain_n;     /* signals asking for a drain so far */
static uint64_t drain_sig;   /* the first one's number, 0 = none */

bool
nl_port_drain_request_mt(int sig)
{
	if (nl_atomic_load_relaxed(&drain_armed) == 0)
		return false; /* not serving: the caller stops at once */
	if (nl_atomic_add_relaxed(&drain_n, 1) != 0)
		return false; /* a second signal: stop at once */
	nl_atomic_store_relaxed(&drain_sig, (uint64_t)(sig > 0 ? sig : SIGTERM));
	return true;
}

void
nl_port_drain_arm(bool on)
{
	nl_atomic_store_relaxed(&drain_armed, on ? 1 : 0);
}

static const char *
sig_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

/* Whether a sub-task of the task was dispatched (or ended): then it is under way. */
static bool
started(const struct nl_dp_meta *mt)
{
	const struct nl_task *t = mt->task;

	for (unsigned int s = 0; s < t->n_split && s < NL_TASK_MAX_SPLIT; s++)
		if (((mt->done_mask >> s) & 1) || mt->sub_mach[s] != NO_SLOT)
			return true;
	return false;
}

/* Withdraw every accepted task not under way (REJECT shutdown when it surfaces); how many. */
static uint64_t
withdraw_queued(struct nl_port *io, uint64_t *running)
{
	uint64_t n = 0;

	for (uint32_t aux = 0; aux < io->dp->n_pool; aux++) {
		const struct nl_dp_meta *mt = &io->meta[aux];

		if (!mt->held || mt->task == NULL)
			continue;
		if (started(mt)) {
			(*running)++;
			continue;
		}
		nl_dp_farm_shutdown(io, aux);
		n++;
	}
	nl_dp_farm_pull(io); /* those waiting for an idle slot end now */
	return n;
}

static uint64_t
ended(const struct nl_dp *dp)
{
	struct nl_dp_counts c;

	nl_dp_counts_get(dp, &c);
	return c.completed + c.failed;
}

static void
drain_start(struct nl_port *io, int sig)
{
	struct nl_dp_drain *d = &io->drain;
	double s = io->o.drain_timeout_s;
	uint64_t hz = rte_get_tsc_hz();

	if (sig == SIGINT && s > SIGINT_DRAIN_MAX_S)
		s = SIGINT_DRAIN_MAX_S;
	d->sig = sig;
	d->t0_tsc = rte_rdtsc();
	d->end_tsc = d->t0_tsc + (uint64_t)(s * (double)hz);
	d->done0 = ended(io->dp);
	d->withdrawn = withdraw_queued(io, &d->running0);
	DP_LOG(NOTICE, "drain on %s: no new task (REJECT shutdown); %llu queued answered REJECT "
	       "shutdown, %llu running may end within %.1f s (--drain-timeout; a second signal "
	       "stops at once)\n", sig_name(sig), (unsigned long long)d->withdrawn,
	       (unsigned long long)d->running0, s);
}

bool
nl_dp_drain_poll(struct nl_port *io)
{
	struct nl_dp_counts c;

	if (!nl_dp_draining(io)) {
		int sig = (int)nl_atomic_load_relaxed(&drain_sig);

		if (sig == 0)
			return false;
		drain_start(io, sig);
	}
	nl_dp_counts_get(io->dp, &c);
	return c.in_flight == 0 || rte_rdtsc() >= io->drain.end_tsc;
}

void
nl_dp_drain_refused(struct nl_port *io)
{
	io->drain.refused++;
	nl_stat_add_st(&io->dp->io_rejected, 1);
}

/* REJECT shutdown to the submitter of a task still inside the engine (the manager lcores
 * stopped with it; nl_dp_drain_ctl() returns it to the pool and counts it failed). */
static void
answer_only(struct nl_port *io, struct nl_dp_meta *mt)
{
	nl_dp_port_reply(io, mt, mt->task->id, NL_MSG_REJECT, NL_REJECT_SHUTDOWN, 0, 0, 0);
	if (io->sec != NULL)
		nl_dp_sec_finish(io, mt, true);
	mt->held = 0;
	mt->active = 0;
}

void
nl_dp_drain_end(struct nl_port *io, unsigned int (*subs)(struct nl_port *io))
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_drain *d = &io->drain;
	uint64_t late = 0, inner = 0, running = 0, ran, hz = rte_get_tsc_hz(), now = rte_rdtsc();
	void *fin[64];
	unsigned int n;

	nl_port_drain_arm(false);
	if (d->sig == 0) { /* a second signal came before the loop saw the first, or none */
		d->sig = (int)nl_atomic_load_relaxed(&drain_sig);
		d->t0_tsc = now;
		d->done0 = ended(dp);
	}
	/* what is not under way never starts (I3), then what the managers left on the rings */
	d->withdrawn += withdraw_queued(io, &running);
	while (subs(io) > 0)
		;
	while ((n = rte_ring_sc_dequeue_burst(dp->fin_ring, fin, 64, NULL)) > 0)
		for (unsigned int i = 0; i < n; i++)
			nl_dp_port_finish(io, fin[i]);
	nl_dp_farm_pull(io);
	for (uint32_t aux = 0; aux < dp->n_pool; aux++) { /* I1: the rest, answered now */
		struct nl_dp_meta *mt = &io->meta[aux];
		struct nl_task *t = mt->task;

		if (!mt->held || t == NULL)
			continue;
		if (!mt->active) { /* inside the engine: never dispatched */
			answer_only(io, mt);
			inner++;
			continue;
		}
		nl_dp_farm_kill(io, aux); /* not to run on beside a re-submitted self */
		if (!(t->flags & NL_TF_FAILED))
			t->flags |= NL_TF_FAILED | ((uint32_t)NL_REJECT_SHUTDOWN << NL_TF_REASON_SHIFT);
		nl_dp_port_finish(io, t);
		late++;
	}
	/* --principals: submissions still in a fair queue (the admission limit was full of
	 * running tasks) are admitted now that nothing runs, each answered REJECT shutdown */
	if (io->sec != NULL && nl_dp_draining(io))
		nl_dp_sec_poll(io);
	if (d->sig == 0 && late + inner == 0)
		return; /* stopped without a signal (a failed start) and nothing to tell */
	/* ended since the start: those that ran to their end, the withdrawn ones that surfaced
	 * (not the `inner` ones: the engine counts those at its teardown), the late ones */
	ran = ended(dp) - d->done0;
	ran -= ran >= late ? late : ran;
	ran -= ran >= d->withdrawn - inner ? d->withdrawn - inner : ran;
	DP_LOG(NOTICE, "drain on %s ended after %.1f s: %llu tasks answered (ran to their end), "
	       "%llu new refused, %llu queued rejected (shutdown), %llu still running at the "
	       "end answered REJECT shutdown (their sub-tasks killed)\n", sig_name(d->sig),
	       (double)(now - d->t0_tsc) / (double)hz, (unsigned long long)ran,
	       (unsigned long long)d->refused, (unsigned long long)d->withdrawn,
	       (unsigned long long)late);
}
