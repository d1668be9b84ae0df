/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Standby per subtree (issue #36, docs/scale-out.md "Standby"), after Slurm's backup
 * controller: `[appliance A] standby = B`. When A is declared dead, every appliance that
 * knows B live moves A's managers and machine slots to B (xa->mgr_app, xa->mach_app,
 * xa->root[].app; the configured owners stay in mgr_home, mach_home, root[].home):
 *   - B decides at A's managers on its control lcore (nl_xa.c drain_proxies() ->
 *     nl_dp_mgr_serve_ctl(): they stay on the proxy lcore struct, so no manager lcore runs
 *     scale-out code), accepts A's workers' HELLOs for A's slots (nl_xa_owns_mach()), and
 *     makes the summaries of A's subtree roots (under their own source ids);
 *   - the others hand tasks for A's managers to B instead of answering them machine_lost.
 * When A comes back (SWIM takes it back: a restart, or a refuted verdict), everyone gives
 * A's subtree back: the configuration says who owns what, so every appliance comes to the
 * same map from the same verdicts. Control lcore only.
 *
 * Failback or not (`[appliance A] failback = no`). A restarted A leaves its subtree at B and
 * is B's standby for it; if B dies, A takes it back. Who holds A's subtree now depends on
 * history, which a restarted A (or any restarted appliance) has lost; so every appliance
 * says, in a HOLD message every SWIM period to every other, which subtrees it runs, and the
 * map follows from the claims (want_holder()):
 *   - A dead: the verdicts decide, as above (B, or nobody);
 *   - A claims its own subtree: A (a primary that never stopped running it wins: after a
 *     partition or a pause, its workers stayed with it);
 *   - else B live and claiming it: B;
 *   - else A, except while A itself is settling.
 * A starts settling: it claims nothing of its own and gives its workers no slot until B's
 * HOLD has said whether B keeps its subtree (or SWIM declared B dead, or 5 SWIM periods
 * passed). A claims its own subtree only once settled and while it holds it (settled with B
 * not holding it, or taken back because B died or restarted), never while it settles.
 * A claim counts only while of the claimer's current incarnation: B restarted has lost what
 * it held.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_log.h>

#include "nl_atomic.h"
#include "nl_xa_core.h"

/* Move appliance `home`'s subtree (as configured) to appliance `to` in this appliance's map:
 * its managers, its machine slots and their load entries, its summary roots. */
static void
move_subtree(struct nl_port *io, unsigned int home, unsigned int to)
{
	struct nl_dp *dp = io->dp;
	struct nl_xa *xa = nl_xa_of(dp);
	const struct nl_sched *s = dp->gen_rcu->s;

	for (uint32_t m = 0; m < dp->n_mgr; m++)
		if (xa->mgr_home[m] == home)
			xa->mgr_app[m] = (uint8_t)to;
	for (uint32_t m = 0; m < dp->n_mach; m++) {
		struct nl_mach_load *w = nl_load_entry_ctl(dp->load, m);

		if (xa->mach_home[m] != home || xa->mach_app[m] == to)
			continue;
		/* Ours now: the port keeps its load (gone until a worker joins for it). Not ours
		 * any more: its appliance's summaries keep it (gone until one is installed). */
		xa->mach_inst[m] = to != xa->self;
		if (w != NULL && (to != xa->self || !io->alive[m])) {
			w->busy_until_vt = NL_MACH_GONE_VT;
			w->n_sub = 0;
		}
		xa->mach_app[m] = (uint8_t)to;
	}
	for (unsigned int i = 0; i < xa->n_root; i++)
		if (xa->root[i].home == home) {
			xa->root[i].app = (uint16_t)to;
			/* newer wins by one producer's clock: the new producer's first record wins */
			xa->root[i].created_s = 0;
		}
	nl_atomic_store_relaxed(&xa->holder[home], (uint8_t)to);
	if (to == xa->self && home != xa->self)
		xa->adopt_tsc[home] = rte_rdtsc(); /* its workers tell from now (nl_xa_resend.c) */
	nl_xa_entry_init(xa, s); /* local entry: this appliance's machine vectors changed */
	nl_load_publish_ctl(dp->load);
}

static unsigned int
count_home(const uint8_t *home, unsigned int n, unsigned int app)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++)
		k += home[i] == app;
	return k;
}

static bool
is_live(const struct nl_xa *xa, unsigned int a)
{
	return a == xa->self || xa->peer[a].live;
}

/* Whether appliance `who` runs x's subtree now by its own word: its last HOLD of its current
 * incarnation; this appliance's own map for itself (its own subtree: by decision only). */
static bool
claims(const struct nl_xa *xa, unsigned int who, unsigned int x)
{
	if (who == xa->self)
		return xa->holder[x] == who && (x != who || !xa->settling);
	return xa->claim_inc[who] != 0 && xa->claim_inc[who] == xa->peer[who].inc &&
	       (xa->claim[who] >> x & 1u) != 0;
}

/* Who should run the subtree of x (an appliance with failback = no): see the head. */
static unsigned int
want_holder(const struct nl_xa *xa, unsigned int x)
{
	int sb = xa->cfg.app[x].standby;

	return nl_xa_hold_want(x, is_live(xa, x), claims(xa, x, x), sb,
			       sb >= 0 && is_live(xa, (unsigned int)sb),
			       sb >= 0 && claims(xa, (unsigned int)sb, x),
			       x == xa->self && xa->settling, xa->holder[x]);
}

/* Bring the map of the subtrees with failback = no to what the claims say. */
static void
eval(struct nl_port *io)
{
	struct nl_xa *xa = nl_xa_of(io->dp);

	for (unsigned int x = 0; x < xa->cfg.n_app; x++) {
		unsigned int w, h = xa->holder[x];

		if (xa->cfg.app[x].failback || (w = want_holder(xa, x)) == h)
			continue;
		move_subtree(io, x, w);
		if (x == xa->self && w == x) {
			nl_atomic_store_relaxed(&xa->taken_back, xa->taken_back + 1);
			XA_LOG(WARNING, "this appliance runs its own subtree again (its standby %s "
			       "no longer holds it): its workers join here\n", xa->cfg.app[h].name);
		} else if (x == xa->self) {
			nl_atomic_store_relaxed(&xa->left_at_standby, xa->left_at_standby + 1);
			XA_LOG(WARNING, "this appliance's subtree stays at its standby %s "
			       "(failback = no): this appliance is its standby now; tasks for it are "
			       "handed there, its workers stay there\n", xa->cfg.app[w].name);
		} else if (h == xa->self) {
			nl_atomic_store_relaxed(&xa->returned, xa->returned + 1);
			XA_LOG(WARNING, "appliance %s runs its own subtree again: the subtree held "
			       "here as its standby is given back\n", xa->cfg.app[x].name);
		} else {
			XA_LOG(INFO, "appliance %s's subtree is at %s now (was at %s)\n",
			       xa->cfg.app[x].name, xa->cfg.app[w].name, xa->cfg.app[h].name);
		}
	}
}

/* Settling over: act on what is known now. Still settling, the map follows the standby's
 * claim (it keeps the subtree); settled, this appliance claims its own subtree if it holds it
 * (and takes it back if the standby no longer claims it). */
static void
settled(struct nl_port *io, const char *why)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	bool own;

	eval(io);
	xa->settling = false;
	eval(io);
	own = xa->holder[xa->self] == xa->self;
	XA_LOG(INFO, "settled (%s): %s\n", why, own ? "this appliance runs its own subtree" :
						   "its standby keeps this appliance's subtree");
	/* workers that joined meanwhile got no slot; those without --standby would not ask
	 * again: forgotten, their next LOAD is asked to join again (nl_dp_live.c) */
	if (own)
		nl_dp_live_forget_slotless(io);
}

void
nl_xa_hold_rx_ctl(struct nl_port *io, const struct nl_xa_msg *m)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	unsigned int from = m->from_app;

	xa->hold_rx++;
	xa->claim[from] = m->u.hold.held;
	xa->claim_inc[from] = m->incarnation;
	if (xa->settling && (int)from == xa->cfg.app[xa->self].standby) {
		settled(io, "its standby's HOLD arrived");
		return;
	}
	eval(io);
}

void
nl_xa_hold_tick_ctl(struct nl_port *io, uint64_t now_tsc)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	static struct nl_xa_msg m; /* control lcore only (X2) */

	if (!xa->cfg.any_no_failback)
		return;
	if (xa->settle_end_tsc == 0) /* the first call: settling began at init */
		xa->settle_end_tsc = now_tsc + (uint64_t)(5.0 * xa->cfg.swim_period_s *
							  (double)rte_get_tsc_hz());
	if (xa->settling && now_tsc >= xa->settle_end_tsc)
		settled(io, "no HOLD from its standby within 5 SWIM periods");
	if (now_tsc < xa->hold_next_tsc)
		return;
	xa->hold_next_tsc = now_tsc + (uint64_t)(xa->cfg.swim_period_s * (double)rte_get_tsc_hz());
	memset(&m, 0, offsetof(struct nl_xa_msg, u));
	m.type = NL_XA_MSG_HOLD;
	m.n = 1;
	nl_xa_prep_ctl(xa, &m);
	m.u.hold.held = 0;
	m.u.hold.flags = xa->settling ? NL_XA_HOLD_F_SETTLING : 0;
	for (unsigned int x = 0; x < xa->cfg.n_app; x++)
		if (claims(xa, xa->self, x))
			m.u.hold.held |= UINT64_C(1) << x;
	for (unsigned int a = 0; a < xa->cfg.n_app; a++) /* the dead too: a restart learns */
		if (a != xa->self) {
			nl_xa_send_ctl(io, a, &m);
			xa->hold_tx++;
		}
}

bool
nl_xa_adopted_slot_empty(const struct nl_port *io, const struct nl_xa *xa, unsigned int x)
{
	for (uint32_t m = 0; m < io->dp->n_mach; m++)
		if (xa->mach_home[m] == x && xa->mach_app[m] == xa->self &&
		    (!io->alive[m] || !xa->mach_fo[m]))
			return true;
	return false;
}

bool
nl_xa_hold_on_ctl(struct nl_port *io, unsigned int x, uint64_t now)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct xa_peer *p = &xa->peer[x];
	const double hz = (double)rte_get_tsc_hz();
	bool on;

	if (xa->holder[x] != xa->self || x == xa->self ||
	    (double)(now - p->hold_tsc) >= xa->cfg.word_wait_s * hz) {
		on = false;
	} else if (nl_xa_adopted_slot_empty(io, xa, x)) {
		p->full_tsc = 0;
		on = true;
	} else {
		if (p->full_tsc == 0)
			p->full_tsc = now;
		on = (double)(now - p->full_tsc) < XA_RESEND_TELL_S * hz;
	}
	if (on && !p->holding_on) {
		p->holding_on = true;
		nl_atomic_store_relaxed(&p->held_on, p->held_on + 1);
		XA_LOG(WARNING, "appliance %s not back within dead_hold_s: what is parked there is "
		       "held on until its workers, failing over here, have told what ran (each "
		       "adopted slot with one of them, then %g s; the slots are theirs only "
		       "meanwhile), at most %g s more (word_wait_s)\n",
		       xa->cfg.app[x].name, XA_RESEND_TELL_S, xa->cfg.word_wait_s);
	}
	return on;
}

void
nl_xa_standby_dead_ctl(struct nl_port *io, unsigned int a)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct nl_dp *dp = io->dp;
	int sb = xa->cfg.app[a].standby;

	/* subtrees a held for others (it was their standby) have nobody now: back to their
	 * configured appliance, itself dead (their tasks are detoured or answered), or live
	 * (failback = no: it was a's standby for its own subtree) */
	for (unsigned int x = 0; x < xa->cfg.n_app; x++)
		if (x != a && xa->holder[x] == a) {
			move_subtree(io, x, x);
			if (x == xa->self) {
				nl_atomic_store_relaxed(&xa->taken_back, xa->taken_back + 1);
				XA_LOG(WARNING, "appliance %s, which held this appliance's subtree, is "
				       "gone: this appliance runs its subtree again (its workers join "
				       "here)\n", xa->cfg.app[a].name);
			} else if (is_live(xa, x)) {
				XA_LOG(INFO, "appliance %s, which held appliance %s's subtree, is gone: "
				       "%s runs it again\n", xa->cfg.app[a].name, xa->cfg.app[x].name,
				       xa->cfg.app[x].name);
			} else {
				XA_LOG(WARNING, "appliance %s, which held appliance %s's subtree as "
				       "its standby, is gone too: that subtree has no appliance now\n",
				       xa->cfg.app[a].name, xa->cfg.app[x].name);
			}
		}
	if (xa->settling && (int)a == xa->cfg.app[xa->self].standby)
		settled(io, "its standby was declared dead");
	if (sb < 0 || xa->holder[a] != a)
		return;
	if ((unsigned int)sb != xa->self && !xa->peer[sb].live) {
		XA_LOG(WARNING, "appliance %s is gone and its standby %s is gone too: nobody takes "
		       "its subtree\n", xa->cfg.app[a].name, xa->cfg.app[sb].name);
		return;
	}
	move_subtree(io, a, (unsigned int)sb);
	if ((unsigned int)sb != xa->self) {
		XA_LOG(INFO, "appliance %s is gone: its subtree is at its standby %s now\n",
		       xa->cfg.app[a].name, xa->cfg.app[sb].name);
		return;
	}
	nl_atomic_store_relaxed(&xa->adoptions, xa->adoptions + 1);
	XA_LOG(WARNING, "appliance %s is gone: this appliance, its standby, adopts its subtree "
	       "(%u managers, %u machine slots): its workers join here, its managers decide "
	       "here\n", xa->cfg.app[a].name, count_home(xa->mgr_home, dp->n_mgr, a),
	       count_home(xa->mach_home, dp->n_mach, a));
}

void
nl_xa_standby_alive_ctl(struct nl_port *io, unsigned int a)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	unsigned int h = xa->holder[a];

	if (!xa->cfg.app[a].failback) { /* the claims say (HOLD), not the verdict alone */
		eval(io);
		return;
	}
	if (h == a)
		return;
	move_subtree(io, a, a);
	if (h != xa->self) {
		XA_LOG(INFO, "appliance %s is back: its subtree is its own again (was at %s)\n",
		       xa->cfg.app[a].name, xa->cfg.app[h].name);
		return;
	}
	nl_atomic_store_relaxed(&xa->returned, xa->returned + 1);
	XA_LOG(WARNING, "appliance %s is back: its subtree, adopted here as its standby, is given "
	       "back (tasks in its managers' inboxes go to it; its workers rejoin it)\n",
	       xa->cfg.app[a].name);
}
