/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Machine generations (nl_dp.h I3): the machine table and the policy bound to it, published
 * under RCU by the control thread and read by the manager lcores until their next quiescent
 * state. A join, leave or speed change publishes a new generation; the old one is freed after
 * a grace period.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-qsbr.h>

#include "nl_dp_priv.h"

void
nl_dp_gen_free_ctl(struct nl_dp_gen *g)
{
	nl_sched_free(g->s);
	free(g->mach);
	free(g->alive);
	free(g);
}

static void
gen_free_cb(struct rcu_head *head)
{
	nl_dp_gen_free_ctl(caa_container_of(head, struct nl_dp_gen, rcu));
}

int
nl_dp_gen_publish_ctl(struct nl_dp *dp, const struct nl_machine *mach, const uint8_t *alive,
		      unsigned int n_mach)
{
	struct nl_dp_gen *g = calloc(1, sizeof(*g)), *old;
	int rc;

	if (g == NULL)
		return -ENOMEM;
	g->mach = malloc(n_mach * sizeof(*g->mach));
	g->alive = malloc(n_mach);
	if (g->mach == NULL || g->alive == NULL) {
		free(g->mach);
		free(g->alive);
		free(g);
		return -ENOMEM;
	}
	memcpy(g->mach, mach, n_mach * sizeof(*mach));
	if (alive != NULL)
		memcpy(g->alive, alive, n_mach);
	else
		memset(g->alive, 1, n_mach);
	g->n_mach = n_mach;
	rc = nl_sched_create(&g->s, dp->policy, &dp->sp, g->mach, n_mach);
	if (rc != 0) {
		free(g->mach);
		free(g->alive);
		free(g);
		return rc;
	}
	if (dp->n_mgr != 0 && g->s->n_mgr != dp->n_mgr) { /* manager ids must stay valid */
		nl_dp_gen_free_ctl(g);
		return -EINVAL;
	}
	old = dp->gen_rcu;
	g->id = old != NULL ? old->id + 1 : 1;
	/* Orders the generation's contents before the pointer; pairs with rcu_dereference()
	 * in nl_dp_lcore_main(). */
	rcu_assign_pointer(dp->gen_rcu, g);
	if (old != NULL)
		urcu_qsbr_call_rcu(&old->rcu, gen_free_cb);
	return 0;
}

int
nl_dp_machine_set_ctl(struct nl_dp *dp, uint32_t mach, bool alive, double speed_ips)
{
	const struct nl_dp_gen *g = dp->gen_rcu;
	struct nl_machine *m;
	uint8_t *al;
	int rc;

	if (mach >= g->n_mach || speed_ips < 0)
		return -EINVAL;
	m = malloc(g->n_mach * sizeof(*m));
	al = malloc(g->n_mach);
	if (m == NULL || al == NULL) {
		free(m);
		free(al);
		return -ENOMEM;
	}
	memcpy(m, g->mach, g->n_mach * sizeof(*m));
	memcpy(al, g->alive, g->n_mach);
	al[mach] = alive;
	if (speed_ips > 0)
		m[mach].speed_ips = speed_ips;
	rc = nl_dp_gen_publish_ctl(dp, m, al, g->n_mach);
	free(m);
	free(al);
	if (rc == 0) {
		/* A machine that left looks infinitely busy to every view (it is skipped unless
		 * fewer than L machines remain; the control lcore re-dispatches then). */
		struct nl_mach_load *w = nl_load_entry_ctl(dp->load, mach);

		if (w != NULL && !alive)
			w->busy_until_vt = NL_MACH_GONE_VT;
		else if (w != NULL && w->busy_until_vt >= NL_MACH_GONE_VT)
			w->busy_until_vt = 0;
		rc = nl_load_publish_ctl(dp->load);
	}
	return rc;
}
