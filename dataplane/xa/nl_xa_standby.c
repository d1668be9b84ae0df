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
 */
#include <stdio.h>
#include <string.h>

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

void
nl_xa_standby_dead_ctl(struct nl_port *io, unsigned int a)
{
	struct nl_xa *xa = nl_xa_of(io->dp);
	struct nl_dp *dp = io->dp;
	int sb = xa->cfg.app[a].standby;

	/* subtrees a held for others (it was their standby) have nobody now: back to their
	 * configured appliance, itself dead (their tasks are detoured or answered) */
	for (unsigned int x = 0; x < xa->cfg.n_app; x++)
		if (x != a && xa->holder[x] == a) {
			move_subtree(io, x, x);
			XA_LOG(WARNING, "appliance %s, which held appliance %s's subtree as its "
			       "standby, is gone too: that subtree has no appliance now\n",
			       xa->cfg.app[a].name, xa->cfg.app[x].name);
		}
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
