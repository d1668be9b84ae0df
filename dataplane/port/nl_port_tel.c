/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_telemetry commands of port mode, behind the engine's gate (nl_dp_tel_register()):
 *   /nlevel/stats               accounting (I1), drops per reason, messages per type
 *   /nlevel/machine/set,ID,ALIVE[,SPEED_IPS]   machine leave / join / speed change
 * and the security layer's /nlevel/principals (nl_dp_sec.c). Handlers run on the telemetry
 * thread and find the port with nl_dp_tel_driver() (set while serving); they read counters relaxed or as
 * one snapshot of the control lcore; a change is a request the control lcore applies (I3 of
 * nl_dp.h).
 */
#include <errno.h>
#include <stdio.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include "nl_atomic.h"
#include "nl_dp_sec.h"
#include "nl_port_priv.h"

/* The port the telemetry gate is open for, or NULL (not serving). */
static struct nl_port *
tel_port(void)
{
	return nl_dp_tel_driver();
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nl_port *io = tel_port();
	struct nl_port_counts pc;
	struct nl_dp_counts c;
	struct nl_dp *dp;
	char name[64];
	bool snap;

	(void)cmd;
	(void)params;
	if (io == NULL)
		return -EINVAL;
	dp = io->dp;
	/* #16: port mode: one instant of the control lcore, so I1 holds in what we show */
	snap = nl_dp_snap_get(io, &c, &pc, 100) == 0;
	if (!snap) {
		nl_dp_counts_get(dp, &c);
		nl_port_counts_get(io, &pc);
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "snapshot", snap);
	nl_dp_sec_tel_stats(io, d);
	rte_tel_data_add_dict_u64(d, "accepted", c.accepted);
	rte_tel_data_add_dict_u64(d, "rejected_ingress", c.rejected_ingress);
	rte_tel_data_add_dict_u64(d, "completed", c.completed);
	rte_tel_data_add_dict_u64(d, "failed", c.failed);
	rte_tel_data_add_dict_u64(d, "in_flight", c.in_flight);
	rte_tel_data_add_dict_u64(d, "redispatched", pc.redispatched);
	rte_tel_data_add_dict_u64(d, "xhops", c.xhops);
	rte_tel_data_add_dict_u64(d, "stale_done", pc.stale_done);
	rte_tel_data_add_dict_u64(d, "rejoin_asked", pc.rejoin_asked);
	rte_tel_data_add_dict_u64(d, "workers_joined", pc.workers_joined);
	rte_tel_data_add_dict_u64(d, "workers_left", pc.workers_left);
	rte_tel_data_add_dict_u64(d, "rx_frames", pc.rx_frames);
	rte_tel_data_add_dict_u64(d, "rx_missed", pc.rx_missed);
	rte_tel_data_add_dict_u64(d, "rx_errors", pc.rx_errors);
	rte_tel_data_add_dict_u64(d, "rx_nombuf", pc.rx_nombuf);
	rte_tel_data_add_dict_u64(d, "rx_appliance", pc.rx_appliance); /* scale-out */
	rte_tel_data_add_dict_u64(d, "tx_frames", pc.tx_frames);
	rte_tel_data_add_dict_u64(d, "tx_fail", pc.tx_fail);
	rte_tel_data_add_dict_u64(d, "dispatch_sum_us", pc.disp_sum_us); /* #39 */
	rte_tel_data_add_dict_u64(d, "load_publishes",
				  nl_atomic_load_relaxed(&dp->load->n_publish));
	for (unsigned int i = 1; i < NL_PROTO_E_MAX; i++) {
		snprintf(name, sizeof(name), "drop_%s", nl_proto_err_name((enum nl_proto_err)i));
		rte_tel_data_add_dict_u64(d, name, pc.drops[i]);
	}
	for (unsigned int i = 1; i < NL_MSG_TYPE_MAX; i++) {
		snprintf(name, sizeof(name), "rx_%s", nl_msg_type_name(i));
		rte_tel_data_add_dict_u64(d, name, pc.rx_msgs[i]);
	}
	/* #39: ingress to the DISPATCH of sub-task 0, log2 buckets of microseconds */
	struct rte_tel_data *h = rte_tel_data_alloc();

	if (h == NULL)
		return 0;
	rte_tel_data_start_array(h, RTE_TEL_U64_VAL);
	for (unsigned int b = 0; b < NL_PORT_DISP_HIST; b++)
		rte_tel_data_add_array_u64(h, pc.disp_hist_us[b]);
	rte_tel_data_add_dict_container(d, "dispatch_hist_us_log2", h, 0);
	return 0;
}

static int
tel_machine_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct nl_port *io = tel_port();
	struct nl_dp_req req = { 0 };
	unsigned int id, alive;
	double speed = 0;
	int n;

	(void)cmd;
	if (params == NULL || io == NULL)
		return -EINVAL;
	n = sscanf(params, "%u,%u,%lf", &id, &alive, &speed);
	if (n < 2 || alive > 1 || id >= io->dp->n_mach || speed < 0)
		return -EINVAL;
	req.mach = id;
	req.alive = alive;
	req.speed_ips = speed;
	if (rte_ring_mp_enqueue_elem(io->req_ring, &req, sizeof(req)) != 0)
		return -EBUSY;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "queued", 1);
	return 0;
}

int
nl_port_telemetry_init(struct nl_port *io)
{
	int rc;

	(void)io; /* found again with nl_dp_tel_driver() by each handler */
	rc = nl_dp_tel_register("/nlevel/stats", tel_stats,
				"Accounting, drops per reason, messages per type.");
	if (rc == 0)
		rc = nl_dp_tel_register("/nlevel/machine/set", tel_machine_set,
					"Machine leave/join/speed. Parameters: id,alive[,speed_ips]");
	if (rc == 0)
		rc = nl_dp_sec_tel_init(); /* #16: /nlevel/principals */
	return rc;
}
