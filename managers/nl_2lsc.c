/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 2LSC: 2-level scheduling (seed 002 §3.1, after Kai et al.). Machines are grouped by CPU
 * speed into G groups (slowest first, contiguous in speed order); managers 0..G-1 are the
 * group schedulers, manager G the single global scheduler.
 *
 * Group scheduler (§3.1 (1)): a task appears at a random group (§4.2). The group scheduler
 * selects its machines matching Delta and measures its load; if fewer than L machines match
 * or the load is above the threshold it forwards the task to the global scheduler, else it
 * assigns the L least-loaded matching machines of its group.
 *
 * Global scheduler (§3.1 (2)): it measures every group's load periodically (every
 * measure_period_vt; its view is stale in between) and sends the task where load is lowest.
 * With exact matching a group of M/G machines holds ~M/(G 2^N) machines of a vector, fewer
 * than L, so the task's matching machines are spread over several groups (SPEC.md, modelling
 * traps). The global scheduler sees every group, so it places the L sub-tasks on the matching
 * machines of least measured load across groups: "least-loaded group" applied per machine
 * (docs/model.md). Its service time grows with the groups it inspects:
 * global_base_vt + G * global_per_group_vt.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_match.h" /* issue #15 hook: matched tasks pick by Requirements/Rank */
#include "nl_pick.h"
#include "nl_pick_idx.h"
#include "nl_policy.h"

struct tlsc {
	unsigned int n_grp;
	uint32_t *grp_of;        /* [n_mach] group of each machine */
	uint32_t *grp_size;      /* [n_grp] */
	uint32_t *grp_mach;      /* machines of each group ascending, CSR by grp_off */
	uint32_t *grp_off;       /* [n_grp + 1] */
	uint32_t *gl_off;        /* [n_grp * n_leaf + 1]: matching machines of (group, leaf) */
	uint32_t *gl_mach;
	struct nl_mach_load *snap; /* global's last measurement, [n_mach] */
	double snap_vt;          /* when it was taken; < 0 = never */
	uint64_t snap_gen;       /* measurements taken (the memo's key) */
	/* The global's last pick per leaf: on one measurement and one task shape the pick is the
	 * same (it reads the measurement, not its own bookings), so it is made once per leaf and
	 * measurement (per-manager state of the global, nl_policy.h I3) */
	struct tlsc_memo {
		uint64_t gen;    /* snap_gen + 1 it was made on; 0 = none */
		double si, sb;   /* sub-task instructions and bits */
		unsigned int n_split;
		int n;           /* its result */
		uint32_t out[NL_TASK_MAX_SPLIT];
	} *memo;                 /* [n_leaf] */
	/* [G] pick index of each group scheduler of >= NL_PICK_IDX_MIN_CAND machines: index group
	 * l = its machines matching leaf l (picks); the mirror's busy counter = the whole group
	 * (its load) */
	struct nl_pick_mirror *pm;
};

static int
cmp_speed(const void *a, const void *b, void *arg)
{
	const struct nl_machine *m = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (m[x].speed_ips != m[y].speed_ips)
		return m[x].speed_ips < m[y].speed_ips ? -1 : 1;
	return x < y ? -1 : (x > y);
}

static void
tlsc_fini(struct nl_sched *s)
{
	struct tlsc *g = s->priv;

	if (g == NULL)
		return;
	free(g->grp_of);
	free(g->grp_size);
	free(g->grp_mach);
	free(g->grp_off);
	free(g->gl_off);
	free(g->gl_mach);
	free(g->snap);
	free(g->memo);
	for (unsigned int k = 0; g->pm != NULL && k < g->n_grp; k++) {
		nl_pick_idx_free(&g->pm[k].idx);
		nl_busy_cnt_free(&g->pm[k].cnt);
	}
	free(g->pm);
	free(g);
	s->priv = NULL;
}

/* The pick index of every group large enough to gain from one (nl_pick_idx.h). */
static int
tlsc_build_idx(struct nl_sched *s, struct tlsc *g)
{
	const struct nl_tree *t = s->tree;
	uint32_t *off = malloc((t->n_leaf + 2) * sizeof(uint32_t)), *cand = NULL;
	int rc = 0;

	g->pm = calloc(g->n_grp, sizeof(*g->pm));
	if (off == NULL || g->pm == NULL) {
		free(off);
		return -ENOMEM;
	}
	for (unsigned int k = 0; k < g->n_grp && rc == 0; k++) {
		uint32_t a = g->grp_off[k], n = g->grp_off[k + 1] - a, p;
		const uint32_t *gl = &g->gl_off[k * t->n_leaf];

		if (n < NL_PICK_IDX_MIN_CAND)
			continue;
		free(cand);
		cand = malloc((gl[t->n_leaf] - gl[0] + 1) * sizeof(uint32_t));
		if (cand == NULL) {
			rc = -ENOMEM;
			break;
		}
		off[0] = p = 0;
		for (unsigned int l = 0; l < t->n_leaf; l++) {
			for (uint32_t j = gl[l]; j < gl[l + 1]; j++)
				cand[p++] = g->gl_mach[j];
			off[l + 1] = p;
		}
		rc = nl_pick_idx_build(&g->pm[k].idx, t->n_leaf, off, cand, s->rate, s->n_mach);
		if (rc == 0) {
			rc = nl_busy_cnt_build(&g->pm[k].cnt, &g->grp_mach[a], n, s->n_mach);
			g->pm[k].has_cnt = rc == 0;
		}
		g->pm[k].built = rc == 0;
	}
	free(cand);
	free(off);
	return rc;
}

static int
tlsc_init(struct nl_sched *s)
{
	const struct nl_tree *t = s->tree;
	unsigned int G = s->p.n_groups, M = s->n_mach;
	struct tlsc *g;
	uint32_t *order;

	if (G == 0 || G > M)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	s->priv = g;
	g->n_grp = G;
	g->snap_vt = -1;
	g->grp_of = malloc(M * sizeof(uint32_t));
	g->grp_size = calloc(G, sizeof(uint32_t));
	g->grp_mach = malloc(M * sizeof(uint32_t));
	g->grp_off = calloc(G + 1, sizeof(uint32_t));
	g->gl_off = calloc((size_t)G * t->n_leaf + 1, sizeof(uint32_t));
	g->gl_mach = malloc((t->leaf_off[t->n_leaf] + 1) * sizeof(uint32_t));
	g->snap = calloc(M, sizeof(*g->snap));
	g->memo = calloc(t->n_leaf, sizeof(*g->memo));
	order = malloc(M * sizeof(uint32_t));
	if (g->grp_of == NULL || g->grp_size == NULL || g->grp_mach == NULL || g->grp_off == NULL ||
	    g->gl_off == NULL || g->gl_mach == NULL || g->snap == NULL || g->memo == NULL ||
	    order == NULL) {
		free(order);
		tlsc_fini(s);
		return -ENOMEM;
	}
	/* Groups by CPU speed: rank machines by (speed, id), cut into G near-equal blocks. */
	for (uint32_t i = 0; i < M; i++)
		order[i] = i;
	qsort_r(order, M, sizeof(uint32_t), cmp_speed, (void *)s->mach);
	for (uint32_t r = 0; r < M; r++) {
		uint32_t grp = (uint32_t)((uint64_t)r * G / M);

		g->grp_of[order[r]] = grp;
		g->grp_size[grp]++;
	}
	for (unsigned int k = 0; k < G; k++)
		g->grp_off[k + 1] = g->grp_off[k] + g->grp_size[k];
	uint32_t *fill = calloc(G, sizeof(uint32_t));

	if (fill == NULL) {
		free(order);
		tlsc_fini(s);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < M; i++) /* ascending ids within each group */
		g->grp_mach[g->grp_off[g->grp_of[i]] + fill[g->grp_of[i]]++] = i;
	free(fill);
	free(order);
	/* (group, leaf) matching lists from the tree's leaf lists. */
	uint32_t p = 0;

	for (unsigned int k = 0; k < G; k++) {
		for (unsigned int l = 0; l < t->n_leaf; l++) {
			for (uint32_t j = t->leaf_off[l]; j < t->leaf_off[l + 1]; j++)
				if (g->grp_of[t->leaf_mach[j]] == k)
					g->gl_mach[p++] = t->leaf_mach[j];
			g->gl_off[k * t->n_leaf + l + 1] = p;
		}
	}
	s->n_mgr = G + 1;
	int rc = tlsc_build_idx(s, g);

	if (rc != 0)
		tlsc_fini(s);
	return rc;
}

static uint32_t
tlsc_entry(const struct nl_sched *s, const struct nl_task *t, uint64_t rnd)
{
	(void)t;
	return (uint32_t)(rnd % (s->n_mgr - 1));
}

static double
tlsc_service_vt(const struct nl_sched *s, uint32_t mgr, const struct nl_task *t)
{
	if (mgr == nl_2lsc_global_mgr(s)) /* issue #15 hook: nl_match_service_vt() */
		return s->p.global_base_vt + s->p.global_per_group_vt * (s->n_mgr - 1) +
		       nl_match_service_vt(s, t);
	return s->p.pick_service_vt + nl_match_service_vt(s, t);
}

unsigned int
nl_2lsc_group_of(const struct nl_sched *s, uint32_t mach)
{
	const struct tlsc *g = s->priv;

	return g->grp_of[mach];
}

double
nl_2lsc_group_load(const struct nl_sched *s, unsigned int grp, double now_vt,
		   const struct nl_engine *eng, unsigned int n_split)
{
	const struct tlsc *g = s->priv;
	const struct nl_mach_load *ld = eng->ops->load(eng->ctx, grp, now_vt);
	unsigned int busy = 0, live = 0;

	for (uint32_t j = g->grp_off[grp]; j < g->grp_off[grp + 1]; j++) {
		double b = ld[g->grp_mach[j]].busy_until_vt;

		if (b >= NL_MACH_GONE_VT)
			continue; /* left: neither busy nor capacity */
		live++;
		busy += b > now_vt;
	}
	if (live == 0)
		return INFINITY;
	return ((double)busy + (double)n_split * eng->ops->queue_len(eng->ctx, grp)) / live;
}

static void
tlsc_measure(struct nl_sched *s, double now_vt, const struct nl_engine *eng)
{
	struct tlsc *g = s->priv;

	memcpy(g->snap, eng->ops->load(eng->ctx, nl_2lsc_global_mgr(s), now_vt),
	       s->n_mach * sizeof(*g->snap));
	g->snap_vt = now_vt;
	g->snap_gen++;
}

/* Whether one of the n machines the global scheduler picked on its last measurement has left
 * by now_vt (busy_until >= NL_MACH_GONE_VT in the table its engine gives it now). */
static bool
tlsc_picked_gone(const struct nl_sched *s, const struct nl_engine *eng, const uint32_t *out,
		 int n, double now_vt)
{
	const struct nl_mach_load *ld = eng->ops->load(eng->ctx, nl_2lsc_global_mgr(s), now_vt);
	bool gone = false;

	for (int j = 0; j < n; j++)
		gone |= ld[out[j]].busy_until_vt >= NL_MACH_GONE_VT;
	return gone;
}

/* The global scheduler's pick for t among leaf's machines on its last measurement (the
 * backlog each machine had then, at the measurement's time), made once per measurement, leaf
 * and task shape (struct tlsc_memo): the same machines as picking every time. */
static int
tlsc_global_pick(const struct nl_sched *s, struct tlsc *g, uint32_t leaf, const struct nl_task *t,
		 uint32_t *out)
{
	const struct nl_tree *tr = s->tree;
	struct tlsc_memo *mm = &g->memo[leaf];
	double si = t->instr / t->n_split, sb = t->data_bits / t->n_split;
	int n;

	if (nl_match_handle(t) != 0) /* issue #15 hook: Requirements / Rank, per task */
		return nl_match_pick_task(t, &tr->leaf_mach[tr->leaf_off[leaf]],
					  tr->leaf_off[leaf + 1] - tr->leaf_off[leaf], s->rate, g->snap,
					  g->snap_vt, si, sb, t->n_split, out);
	if (mm->gen == g->snap_gen + 1 && mm->si == si && mm->sb == sb && mm->n_split == t->n_split) {
		if (mm->n > 0)
			memcpy(out, mm->out, (size_t)mm->n * sizeof(*out));
		return mm->n;
	}
	n = nl_pick_least_loaded(&tr->leaf_mach[tr->leaf_off[leaf]],
				 tr->leaf_off[leaf + 1] - tr->leaf_off[leaf], s->rate, g->snap,
				 g->snap_vt, si, sb, t->n_split, out);
	mm->gen = g->snap_gen + 1;
	mm->si = si;
	mm->sb = sb;
	mm->n_split = t->n_split;
	mm->n = n;
	if (n > 0)
		memcpy(mm->out, out, (size_t)n * sizeof(*out));
	return n;
}

/* issue #15: a task with Requirements whose group holds fewer than L eligible live machines
 * of its vector goes to the global scheduler, as one with fewer than L matching machines
 * (the global refuses it no_machine only when no machine anywhere is eligible). */
static bool
tlsc_match_short(const struct tlsc *g, uint32_t mgr, uint32_t leaf, uint32_t n_leaf,
		 const struct nl_task *t, const struct nl_mach_load *ld)
{
	uint32_t h = nl_match_handle(t), a, b;

	if (h == 0)
		return false;
	a = g->gl_off[mgr * n_leaf + leaf];
	b = g->gl_off[mgr * n_leaf + leaf + 1];
	return nl_match_live_cur(h, &g->gl_mach[a], b - a, ld) < t->n_split;
}

/* A group scheduler's decision through its pick index: the same as the scanning path of
 * tlsc_decide (live matching machines, group load, pick). true when it dispatched; false when
 * the task goes to the global scheduler. */
static bool
tlsc_group_decide_idx(struct nl_sched *s, struct tlsc *g, uint32_t mgr, uint32_t leaf,
		      struct nl_task *t, double now_vt, const struct nl_engine *eng)
{
	struct nl_pick_mirror *pm = &g->pm[mgr];
	const struct nl_mach_load *ld = eng->ops->load(eng->ctx, mgr, now_vt);
	unsigned int busy, live, m_busy, m_live;
	uint32_t out[NL_TASK_MAX_SPLIT];
	double load;
	int n;

	nl_pick_mirror_sync(pm, ld, eng->ops->load_gen(eng->ctx, mgr), now_vt);
	nl_pick_idx_count(&pm->idx, leaf, now_vt, &m_busy, &m_live);
	if (m_live < t->n_split)
		return false;
	if (tlsc_match_short(g, mgr, leaf, s->tree->n_leaf, t, ld)) /* issue #15 hook */
		return false;
	nl_busy_cnt_count(&pm->cnt, now_vt, &busy, &live);
	load = live == 0 ? INFINITY :
			   ((double)busy + (double)t->n_split * eng->ops->queue_len(eng->ctx, mgr)) / live;
	if (load > s->p.grp_threshold)
		return false;
	uint32_t a = g->gl_off[mgr * s->tree->n_leaf + leaf];
	uint32_t b = g->gl_off[mgr * s->tree->n_leaf + leaf + 1];

	if (nl_match_handle(t) == 0 && nl_pick_idx_worth(b - a, t->n_split))
		n = nl_pick_idx_pick(&pm->idx, leaf, now_vt, t->instr / t->n_split,
				     t->data_bits / t->n_split, t->n_split, out);
	else /* issue #15 hook: the scan, or Requirements / Rank when t has a match handle */
		n = nl_match_pick_task(t, &g->gl_mach[a], b - a, s->rate, ld, now_vt,
				       t->instr / t->n_split, t->data_bits / t->n_split,
				       t->n_split, out);
	if (n < 0) {
		eng->ops->reject(eng->ctx, t, NL_REJECT_NO_MACHINE, now_vt);
		return true;
	}
	eng->ops->dispatch(eng->ctx, t, out, (unsigned int)n, now_vt);
	nl_pick_mirror_booked(pm, ld, out, (unsigned int)n, eng->ops->load_gen(eng->ctx, mgr));
	return true;
}

static void
tlsc_decide(struct nl_sched *s, uint32_t mgr, struct nl_task *t, double now_vt,
	    const struct nl_engine *eng)
{
	struct tlsc *g = s->priv;
	const struct nl_tree *tr = s->tree;
	uint32_t out[NL_TASK_MAX_SPLIT];
	uint32_t leaf;
	int n;

	if (!nl_sched_task_ok(s, t)) {
		eng->ops->reject(eng->ctx, t, NL_REJECT_BAD_TASK, now_vt);
		return;
	}
	leaf = nl_tree_leaf_of(tr, t->need);
	if (leaf == NL_NODE_NONE) {
		eng->ops->reject(eng->ctx, t, NL_REJECT_NO_MACHINE, now_vt);
		return;
	}
	if (mgr != nl_2lsc_global_mgr(s) && g->pm[mgr].built && eng->ops->load_gen != NULL) {
		if (tlsc_group_decide_idx(s, g, mgr, leaf, t, now_vt, eng))
			return;
		/* the group passes the task to the global scheduler */
		if (!nl_engine_pass(eng, t, nl_2lsc_global_mgr(s), now_vt)) {
			eng->ops->forward(eng->ctx, t, nl_2lsc_global_mgr(s), now_vt);
			return;
		}
		mgr = nl_2lsc_global_mgr(s); /* I6: decided below at once */
	}
	if (mgr != nl_2lsc_global_mgr(s)) {
		uint32_t a = g->gl_off[mgr * tr->n_leaf + leaf], b = g->gl_off[mgr * tr->n_leaf + leaf + 1];

		const struct nl_mach_load *ld = eng->ops->load(eng->ctx, mgr, now_vt);
		uint32_t live = 0;

		for (uint32_t j = a; j < b; j++)
			live += ld[g->gl_mach[j]].busy_until_vt < NL_MACH_GONE_VT;
		if (live < t->n_split || tlsc_match_short(g, mgr, leaf, tr->n_leaf, t, ld) ||
		    nl_2lsc_group_load(s, mgr, now_vt, eng, t->n_split) > s->p.grp_threshold) {
			if (!nl_engine_pass(eng, t, nl_2lsc_global_mgr(s), now_vt)) {
				eng->ops->forward(eng->ctx, t, nl_2lsc_global_mgr(s), now_vt);
				return;
			}
			tlsc_decide(s, nl_2lsc_global_mgr(s), t, now_vt, eng); /* I6 */
			return;
		}
		/* issue #15 hook: nl_pick_least_loaded() unless t has a match handle */
		n = nl_match_pick_task(t, &g->gl_mach[a], b - a, s->rate, ld, now_vt,
					 t->instr / t->n_split, t->data_bits / t->n_split, t->n_split,
					 out);
	} else {
		/* Global: all matching machines, by the last measurement (stale between periods):
		 * the backlog each machine had when measured. No measurement yet, or period 0:
		 * measure now. */
		if (s->p.measure_period_vt <= 0 || g->snap_vt < 0)
			tlsc_measure(s, now_vt, eng);
		n = tlsc_global_pick(s, g, leaf, t, out);
		if (n > 0 && g->snap_vt != now_vt && tlsc_picked_gone(s, eng, out, n, now_vt)) {
			/* A machine it picked has left since (the load table says so; e.g. its
			 * appliance was declared gone): measure now rather than send sub-tasks to a
			 * machine that is not there. */
			tlsc_measure(s, now_vt, eng);
			n = tlsc_global_pick(s, g, leaf, t, out);
		}
		if (n == -ENOSPC && g->snap_vt != now_vt) {
			/* Its last measurement holds no live matching machine (machines joined
			 * since): measure now rather than refuse on stale information. */
			tlsc_measure(s, now_vt, eng);
			n = tlsc_global_pick(s, g, leaf, t, out);
		}
	}
	if (n < 0)
		eng->ops->reject(eng->ctx, t, NL_REJECT_NO_MACHINE, now_vt);
	else
		eng->ops->dispatch(eng->ctx, t, out, (unsigned int)n, now_vt);
}

static void
tlsc_mgr_name(const struct nl_sched *s, uint32_t mgr, char *buf, unsigned int len)
{
	if (mgr == nl_2lsc_global_mgr(s))
		snprintf(buf, len, "global");
	else
		snprintf(buf, len, "group%u", mgr);
}

const struct nl_policy_ops nl_policy_2lsc = {
	.name = "2lsc",
	.init = tlsc_init,
	.fini = tlsc_fini,
	.entry = tlsc_entry,
	.service_vt = tlsc_service_vt,
	.decide = tlsc_decide,
	.measure = tlsc_measure,
	.mgr_name = tlsc_mgr_name,
	.top_mgr = nl_2lsc_global_mgr,
	.replace = nl_sched_replace_leaf,
};
