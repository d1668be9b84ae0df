/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's rte_telemetry commands, behind the appliance's gate (nl_dp_tel_gate.c; read
 * with usertools/dpdk-telemetry.py):
 *   /nlevel/managers[,ID]       per-manager arrays (tasks in/out, hops out, inbox depth, ...);
 *                               with an id, that manager and its decide() cost histogram
 *   /nlevel/machines            per-machine arrays (alive, speed, sub-tasks, backlog)
 * The layers above register theirs behind the same gate (port/nl_port_tel.c: /nlevel/stats,
 * /nlevel/machine/set, /nlevel/principals; xa/: /nlevel/appliances, /nlevel/summaries).
 * Callbacks run on the telemetry thread: they read statistics with relaxed loads and the
 * machine generation and load snapshot as a short-lived QSBR reader (I3 of nl_dp.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include <urcu/urcu-qsbr.h>

#include "nl_atomic.h"
#include "nl_dp_priv.h"

static struct rte_tel_data *
u64_array(void)
{
	struct rte_tel_data *a = rte_tel_data_alloc();

	if (a != NULL)
		rte_tel_data_start_array(a, RTE_TEL_U64_VAL);
	return a;
}

static int
tel_managers(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nl_dp *dp = nl_dp_tel_dp();
	static const char *const key[] = { "tasks_in", "tasks_out", "hops_out", "dispatched",
					   "refused", "inbox_depth", "lcore" };
	struct rte_tel_data *arr[7];

	(void)cmd;
	rte_tel_data_start_dict(d);
	if (params != NULL && *params != '\0') {
		char *end;
		unsigned long id = strtoul(params, &end, 10);
		struct nl_dp_mgr *mg;
		struct rte_tel_data *h;

		if (*end != '\0' || id >= dp->n_mgr)
			return -EINVAL;
		mg = &dp->mgr[id];
		rte_tel_data_add_dict_u64(d, "id", id);
		rte_tel_data_add_dict_u64(d, "lcore", mg->lcore);
		rte_tel_data_add_dict_u64(d, "tasks_in", nl_atomic_load_relaxed(&mg->tasks_in));
		rte_tel_data_add_dict_u64(d, "tasks_out", nl_atomic_load_relaxed(&mg->tasks_out));
		rte_tel_data_add_dict_u64(d, "hops_out", nl_atomic_load_relaxed(&mg->fwd_out));
		rte_tel_data_add_dict_u64(d, "dispatched", nl_atomic_load_relaxed(&mg->dispatched));
		rte_tel_data_add_dict_u64(d, "refused", nl_atomic_load_relaxed(&mg->refused));
		rte_tel_data_add_dict_u64(d, "inbox_depth", rte_ring_count(mg->inbox));
		h = u64_array();
		if (h == NULL)
			return -ENOMEM;
		for (unsigned int b = 0; b < NL_DP_HIST_BUCKETS; b++)
			rte_tel_data_add_array_u64(h, nl_atomic_load_relaxed(&mg->svc_hist[b]));
		/* bucket b counts decisions of [2^(b-1), 2^b) ns */
		rte_tel_data_add_dict_container(d, "svc_hist_ns_log2", h, 0);
		return 0;
	}
	for (unsigned int k = 0; k < 7; k++) {
		arr[k] = u64_array();
		if (arr[k] == NULL) {
			while (k-- > 0)
				rte_tel_data_free(arr[k]);
			return -ENOMEM;
		}
	}
	for (uint32_t i = 0; i < dp->n_mgr && i < RTE_TEL_MAX_ARRAY_ENTRIES; i++) {
		struct nl_dp_mgr *mg = &dp->mgr[i];

		rte_tel_data_add_array_u64(arr[0], nl_atomic_load_relaxed(&mg->tasks_in));
		rte_tel_data_add_array_u64(arr[1], nl_atomic_load_relaxed(&mg->tasks_out));
		rte_tel_data_add_array_u64(arr[2], nl_atomic_load_relaxed(&mg->fwd_out));
		rte_tel_data_add_array_u64(arr[3], nl_atomic_load_relaxed(&mg->dispatched));
		rte_tel_data_add_array_u64(arr[4], nl_atomic_load_relaxed(&mg->refused));
		rte_tel_data_add_array_u64(arr[5], rte_ring_count(mg->inbox));
		rte_tel_data_add_array_u64(arr[6], mg->lcore);
	}
	rte_tel_data_add_dict_u64(d, "managers", dp->n_mgr);
	for (unsigned int k = 0; k < 7; k++)
		rte_tel_data_add_dict_container(d, key[k], arr[k], 0);
	/* names ("M(2,01)", "group1", "global") from the current generation's policy */
	struct rte_tel_data *names = rte_tel_data_alloc();

	if (names == NULL)
		return 0;
	rte_tel_data_start_array(names, RTE_TEL_STRING_VAL);
	urcu_qsbr_register_thread();
	{
		const struct nl_dp_gen *g = rcu_dereference(dp->gen_rcu);
		char buf[64];

		for (uint32_t i = 0; i < dp->n_mgr && i < RTE_TEL_MAX_ARRAY_ENTRIES; i++) {
			g->s->ops->mgr_name(g->s, i, buf, sizeof(buf));
			rte_tel_data_add_array_string(names, buf);
		}
	}
	urcu_qsbr_unregister_thread();
	rte_tel_data_add_dict_container(d, "name", names, 0);
	return 0;
}

static int
tel_machines(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nl_dp *dp = nl_dp_tel_dp();
	struct rte_tel_data *alive = u64_array(), *speed = u64_array(), *nsub = u64_array(),
			    *backlog = u64_array();
	double now = nl_dp_now_vt(dp);

	(void)cmd;
	(void)params;
	if (alive == NULL || speed == NULL || nsub == NULL || backlog == NULL) {
		rte_tel_data_free(alive);
		rte_tel_data_free(speed);
		rte_tel_data_free(nsub);
		rte_tel_data_free(backlog);
		return -ENOMEM;
	}
	rte_tel_data_start_dict(d);
	/* A short QSBR read-side section on the telemetry thread. */
	urcu_qsbr_register_thread();
	{
		const struct nl_dp_gen *g = rcu_dereference(dp->gen_rcu);
		const struct nl_load_snap *s = rcu_dereference(dp->load->cur_rcu);

		rte_tel_data_add_dict_u64(d, "machines", g->n_mach);
		rte_tel_data_add_dict_u64(d, "generation", g->id);
		rte_tel_data_add_dict_u64(d, "load_version", s->version);
		for (unsigned int i = 0; i < g->n_mach && i < RTE_TEL_MAX_ARRAY_ENTRIES; i++) {
			double bl = i < s->n_mach ? s->load[i].busy_until_vt - now : 0;

			rte_tel_data_add_array_u64(alive, g->alive[i]);
			rte_tel_data_add_array_u64(speed, (uint64_t)g->mach[i].speed_ips);
			rte_tel_data_add_array_u64(nsub, i < s->n_mach ? s->load[i].n_sub : 0);
			rte_tel_data_add_array_u64(backlog, bl > 0 && bl < 1e15 ? (uint64_t)bl : 0);
		}
	}
	urcu_qsbr_unregister_thread();
	rte_tel_data_add_dict_container(d, "alive", alive, 0);
	rte_tel_data_add_dict_container(d, "speed_ips", speed, 0);
	rte_tel_data_add_dict_container(d, "n_sub", nsub, 0);
	rte_tel_data_add_dict_container(d, "backlog_vt", backlog, 0);
	return 0;
}

int
nl_dp_telemetry_init(struct nl_dp *dp)
{
	int rc;

	nl_dp_tel_open(dp);
	rc = nl_dp_tel_register("/nlevel/managers", tel_managers,
				"Per-manager counters. Parameters: int manager id "
				"(optional, adds its service-time histogram)");
	if (rc == 0)
		rc = nl_dp_tel_register("/nlevel/machines", tel_machines,
					"Per-machine alive, speed, sub-tasks, backlog.");
	return rc;
}
