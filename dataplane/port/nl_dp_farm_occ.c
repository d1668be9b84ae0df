/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Task farms: placement by real occupancy (issue #33 item 1; nl_dp_farm.h). A farm command
 * occupies its slot from its DISPATCH to its DONE, as a slot does in HTCondor and a CPU in
 * Slurm, whatever the model booking (its instructions at the machine's speed, meaningless for
 * a named command) says. Per slot the I/O lcore keeps:
 *  - occ[m]: farm sub-tasks dispatched to m and not done (running + queued on its worker);
 *  - est_sum[m]: the sum of their run-time estimates [ns] (each the mean run time of its
 *    command name so far, an exponential average of the DONEs; 1 s before the first, as the workers assume);
 *  - head_tsc[m]: when the sub-task running now started (its DISPATCH on an idle slot, or
 *    the DONE of the one before it: workers run a machine's sub-tasks in order);
 *  - the worker's last LOAD report (n_sub, backlog_ns) and when it came.
 * From these the slot's entry of the load table is rewritten at every DISPATCH, DONE and
 * LOAD, and every millisecond while it is occupied (nl_dp_farm_occ_poll()):
 *   busy_until = now + max(est_sum - head_est + remaining, reported backlog - its age),
 *   remaining  = max(head_est - elapsed, elapsed, 1 ms)  (a command that ran long is
 *                expected to run about as long again), n_sub = occ;
 * and an emptied slot is idle at once (busy_until = now, n_sub = 0). The leaf managers'
 * least-expected-completion pick (nl_match_pick()) then takes an idle eligible slot before it
 * queues anything behind a busy one, and among busy ones the least backlog. Slots that never
 * held a farm sub-task keep the model booking (native and emulated work unchanged).
 * A farm task's model work (its instructions) is set at admission so that the model booking
 * equals its command's estimate (nl_dp_farm_instr()): the leaf manager's own bookings between
 * two load snapshots then weigh as much as the occupancy the snapshot brings, and a burst
 * spreads over the idle slots instead of piling onto the one the last snapshot saw idle.
 */
#include <stdlib.h>

#include <rte_cycles.h>

#include "nl_dp_farm_priv.h"
#include "nl_tree.h"

#define EST_FLOOR_NS 1000000.0   /* 1 ms: an occupied slot never looks idle */
#define EST_FIRST_NS 1e9 /* 1 s before a command name's first DONE: the workers' default too
			  * (nl_wq_backlog_ns()), so their LOAD reports and our bookings agree */
#define REPORT_TTL_NS 3000000000.0 /* a LOAD report counts for 3 s */

int
nl_dp_farm_occ_init(struct nl_dp_farm *f, uint32_t n_mach, uint32_t n_pool)
{
	f->occ = calloc(n_mach, sizeof(*f->occ));
	f->occ_est_sum = calloc(n_mach, sizeof(*f->occ_est_sum));
	f->occ_head_tsc = calloc(n_mach, sizeof(*f->occ_head_tsc));
	f->occ_rep_tsc = calloc(n_mach, sizeof(*f->occ_rep_tsc));
	f->occ_rep_ns = calloc(n_mach, sizeof(*f->occ_rep_ns));
	f->occ_touched = calloc(n_mach, 1);
	f->occ_est_aux = calloc(n_pool, sizeof(*f->occ_est_aux));
	f->park_cap = n_pool;
	f->park = calloc(n_pool, sizeof(*f->park));
	if (f->occ == NULL || f->occ_est_sum == NULL || f->occ_head_tsc == NULL ||
	    f->occ_rep_tsc == NULL || f->occ_rep_ns == NULL || f->occ_touched == NULL ||
	    f->occ_est_aux == NULL || f->park == NULL) {
		nl_dp_farm_occ_fini(f);
		return -1;
	}
	return 0;
}

void
nl_dp_farm_occ_fini(struct nl_dp_farm *f)
{
	free(f->occ);
	free(f->occ_est_sum);
	free(f->occ_head_tsc);
	free(f->occ_rep_tsc);
	free(f->occ_rep_ns);
	free(f->occ_touched);
	free(f->occ_est_aux);
	free(f->park);
	f->park = NULL;
	f->occ = NULL;
	f->occ_est_sum = NULL;
	f->occ_head_tsc = NULL;
	f->occ_rep_tsc = NULL;
	f->occ_rep_ns = NULL;
	f->occ_touched = NULL;
	f->occ_est_aux = NULL;
}

static double
ns_of(uint64_t cyc)
{
	return (double)cyc * 1e9 / (double)rte_get_tsc_hz();
}

/* Rewrite slot m's load entry from its occupancy (see the top of the file). */
static void
apply(struct nl_port *io, uint32_t m, uint64_t now_tsc)
{
	struct nl_dp *dp = io->dp;
	struct nl_dp_farm *f = io->farm;
	struct nl_mach_load *wl = nl_load_entry_ctl(dp->load, m);
	double now = nl_dp_now_vt(dp), term = 0;

	if (wl == NULL || !io->alive[m] || wl->busy_until_vt >= NL_MACH_GONE_VT)
		return;
	if (f->occ[m] > 0) {
		double head = f->occ_est_sum[m] / f->occ[m];
		double el = ns_of(now_tsc - f->occ_head_tsc[m]);
		double rem = head - el;

		if (rem < el)
			rem = el;
		if (rem < EST_FLOOR_NS)
			rem = EST_FLOOR_NS;
		term = f->occ_est_sum[m] - head + rem;
		if (f->occ_rep_tsc[m] != 0) {
			double age = ns_of(now_tsc - f->occ_rep_tsc[m]);

			if (age < REPORT_TTL_NS && (double)f->occ_rep_ns[m] - age > term)
				term = (double)f->occ_rep_ns[m] - age;
		}
	}
	wl->busy_until_vt = now + term / dp->o.ns_per_vt;
	wl->n_sub = f->occ[m];
	dp->ctl_dirty = true;
}

void
nl_dp_farm_occ_dispatch(struct nl_port *io, const struct nl_task *t, uint32_t name, uint32_t m)
{
	struct nl_dp_farm *f = io->farm;
	uint64_t now = rte_rdtsc();
	double est;

	if (m >= io->dp->n_mach)
		return;
	est = f->name_est_ns[name] > 0 ? f->name_est_ns[name] : EST_FIRST_NS;
	f->occ_est_aux[t->aux] = est;
	if (f->occ[m] == 0)
		f->occ_head_tsc[m] = now;
	f->occ[m]++;
	f->occ_est_sum[m] += est;
	f->occ_touched[m] = 1;
	apply(io, m, now);
}

void
nl_dp_farm_occ_done(struct nl_port *io, const struct nl_task *t, uint32_t m,
		    const struct nl_msg_done *d)
{
	struct nl_dp_farm *f = io->farm;
	uint64_t now = rte_rdtsc();
	uint32_t h;
	double run_ns;

	if (f == NULL || t->aux >= io->dp->n_pool || (h = f->h_by_aux[t->aux]) == 0 ||
	    h >= f->n_h)
		return;
	if (m >= io->dp->n_mach || f->occ[m] == 0)
		return;
	/* the worker's own measure when it gives one, else since the head started here */
	run_ns = d->run_ms > 0 ? d->run_ms * 1e6 : ns_of(now - f->occ_head_tsc[m]);
	double *e = &f->name_est_ns[f->hd[h].name];

	*e = *e > 0 ? 0.75 * *e + 0.25 * run_ns : run_ns;
	f->occ[m]--;
	f->occ_est_sum[m] -= f->occ_est_aux[t->aux];
	if (f->occ[m] == 0 || f->occ_est_sum[m] < 0)
		f->occ_est_sum[m] = 0;
	f->occ_head_tsc[m] = now; /* the next one (if any) starts now */
	f->occ_rep_tsc[m] = 0;    /* a report from before this DONE counts it still */
	apply(io, m, now);
	if (f->occ[m] == 0)
		nl_dp_farm_pull(io); /* the slot is idle: a parked sub-task takes it */
}

void
nl_dp_farm_set_port_fns(struct nl_port *io, nl_dp_farm_dispatch_fn d, nl_dp_farm_withdraw_fn w)
{
	if (io->farm != NULL) {
		io->farm->dispatch_fn = d;
		io->farm->withdraw_fn = w;
	}
}

void
nl_dp_farm_load(struct nl_port *io, uint32_t m, uint32_t n_sub, uint64_t backlog_ns)
{
	struct nl_dp_farm *f = io->farm;
	uint64_t now = rte_rdtsc();

	(void)n_sub;
	if (f == NULL || m >= io->dp->n_mach || !f->occ_touched[m])
		return; /* no farm sub-task ever ran there: the report stands as written */
	f->occ_rep_tsc[m] = now;
	f->occ_rep_ns[m] = backlog_ns;
	apply(io, m, now);
}

double
nl_dp_farm_instr(const struct nl_port *io, uint32_t name)
{
	const struct nl_dp *dp = io->dp;
	const struct nl_dp_farm *f = io->farm;
	double est = name < FARM_NAMES && f->name_est_ns[name] > 0 ? f->name_est_ns[name] :
								      EST_FIRST_NS;

	if (!(dp->work_scale_us > 0) || !(f->mean_speed > 0))
		return 1e6; /* no booking scale: what nlevel-submit sends */
	/* booking [u.t.] = instr / speed [model s] x work_scale_us = est [us] (port mode: 1 u.t.
	 * = 1 us) */
	return est * 1e-3 / dp->work_scale_us * f->mean_speed;
}

void
nl_dp_farm_slot_gone(struct nl_port *io, uint32_t m)
{
	struct nl_dp_farm *f = io->farm;

	if (f == NULL || m >= io->dp->n_mach)
		return;
	f->occ[m] = 0;
	f->occ_est_sum[m] = 0;
	f->occ_rep_tsc[m] = 0;
}

unsigned int
nl_dp_farm_occ_poll(struct nl_port *io)
{
	struct nl_dp_farm *f = io->farm;
	uint64_t now;

	if (f == NULL)
		return 0;
	now = rte_rdtsc();
	if (now - f->occ_last_poll < rte_get_tsc_hz() / 1000)
		return 0;
	f->occ_last_poll = now;
	for (uint32_t m = 0; m < io->dp->n_mach; m++)
		if (f->occ[m] > 0)
			apply(io, m, now);
	return 0;
}

/* ---- the pull: a farm sub-task waits at the appliance for an idle slot ---- */

/* An idle (nothing dispatched and not done), live slot of t's leaf that t's handle matches,
 * or NO_SLOT. */
static uint32_t
idle_slot(struct nl_port *io, const struct nl_task *t, uint32_t h)
{
	struct nl_dp *dp = io->dp;
	const struct nl_tree *tr = dp->gen_rcu->s->tree;
	const struct nl_match_tab *tab = io->farm->tab;
	uint32_t leaf = nl_tree_leaf_of(tr, t->need);

	if (leaf == NL_NODE_NONE || tab == NULL || h >= tab->n_h)
		return NO_SLOT;
	for (uint32_t c = tr->leaf_off[leaf]; c < tr->leaf_off[leaf + 1]; c++) {
		uint32_t m = tr->leaf_mach[c];

		if (m < dp->n_mach && m < tab->n_mach && io->alive[m] &&
		    io->slot_worker[m] != NO_SLOT && io->farm->occ[m] == 0 &&
		    ((tab->ent[h].elig[m / 64] >> (m % 64)) & 1))
			return m;
	}
	return NO_SLOT;
}

/* Sub-task sub of t waits at the appliance, last in line: true; false when the line is full
 * (or there is none). */
static bool
park_push(struct nl_dp_farm *f, const struct nl_task *t, unsigned int sub)
{
	if (f->park == NULL || f->n_park == f->park_cap)
		return false;
	f->park[(f->park_head + f->n_park++) % f->park_cap] =
		(struct farm_park){ .aux = t->aux, .sub = (uint16_t)sub, .task_id = t->id };
	return true;
}

bool
nl_dp_farm_park(struct nl_port *io, struct nl_task *t, unsigned int sub, uint32_t *m)
{
	struct nl_dp_farm *f = io->farm;
	uint32_t h, alt;
	int pin;

	if (f != NULL && (pin = sub == 0 ? nl_dp_farm_jrnl_pin(io, t->aux, m) :
					   nl_dp_farm_jrnl_pin_sub(io, t, sub, m)) != 0) {
		/* #34: the journal's run goes back to its worker (1), or waits for it (2) */
		return pin == 2 && park_push(f, t, sub);
	}
	if (f == NULL || f->park == NULL || t->aux >= io->dp->n_pool ||
	    (h = f->h_by_aux[t->aux]) == 0 || h >= f->n_h || f->hd[h].has_rank ||
	    *m >= io->dp->n_mach || !io->alive[*m])
		return false;
	if (f->occ[*m] == 0)
		return false; /* idle: goes now */
	alt = idle_slot(io, t, h);
	if (alt != NO_SLOT) { /* the manager's view was behind: another slot is idle */
		*m = alt;
		return false;
	}
	return park_push(f, t, sub); /* full: it queues on its worker */
}

void
nl_dp_farm_pull(struct nl_port *io)
{
	struct nl_dp_farm *f = io->farm;
	uint32_t kept = 0, n;

	if (f == NULL || f->n_park == 0 || f->pull_busy)
		return;
	f->pull_busy = true; /* dispatching below comes back here through occ_dispatch */
	n = f->n_park;
	for (uint32_t i = 0; i < n; i++) {
		struct farm_park p = f->park[(f->park_head + i) % f->park_cap];
		struct nl_task *t = io->meta[p.aux].task;
		uint32_t m;

		if (t == NULL || t->id != p.task_id || !io->meta[p.aux].active)
			continue; /* ended meanwhile (machine lost, ...) */
		if (f->withdraw[p.aux]) { /* cancelled while it waited */
			f->withdraw_fn(io, t, p.sub);
			continue;
		}
		if ((p.sub == 0 && f->pin_w != NULL && f->pin_w[p.aux] != 0) ||
		    (p.sub != 0 && f->jr_n > 0)) { /* #34 */
			int pin = p.sub == 0 ? nl_dp_farm_jrnl_pin(io, p.aux, &m) :
					       nl_dp_farm_jrnl_pin_sub(io, t, p.sub, &m);

			if (pin == 2) {
				f->park[(f->park_head + kept++) % f->park_cap] = p;
				continue;
			}
			if (pin == 1) {
				f->dispatch_fn(io, t, p.sub, m);
				continue;
			}
		}
		m = idle_slot(io, t, f->h_by_aux[p.aux]);
		if (m == NO_SLOT) { /* keeps its place, in order */
			f->park[(f->park_head + kept++) % f->park_cap] = p;
			continue;
		}
		f->dispatch_fn(io, t, p.sub, m);
	}
	f->n_park = kept;
	f->pull_busy = false;
}
