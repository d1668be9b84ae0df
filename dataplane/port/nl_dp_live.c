/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Liveness of the workers as the I/O lcore sees it (issue #33; nl_port_priv.h). A worker is
 * lost after --worker-timeout of silence, but only of silence while the appliance itself was
 * running: a turn of the I/O loop that took long (the lcore descheduled, the host stalled)
 * heard nobody, so that time is not held against the workers. Each worker's last-heard time
 * moves on by the length of such a turn, as memberlist's Lifeguard ("local health awareness")
 * widens its own timeouts when the local member is the slow one. Without it, an appliance
 * held for 3 s by a loaded host (seen here: 18 s for a fork+exec of /bin/true) removed every
 * worker at once on its next turn, before reading the LOADs waiting in its receive ring, and
 * answered their running tasks machine_lost. Also here: which worker a frame comes from, and
 * its LOAD reports into the load table (moved from nl_dp_port.c, issue #34). A LOAD from an
 * address that is no joined worker (this appliance restarted, or timed the worker out) is
 * answered with a HELLO reply flagged NL_HELLO_F_REJOIN, and the worker joins again (#36).
 * And the slots a worker's HELLO claims (nl_dp_claim_slots()), and the stop of the manager
 * lcores with the holds on the way logged (nl_dp_live_stop(), beside the turn's hold log).
 */
#include <sys/resource.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_log.h>

#include <rte_ethdev.h>

#include "nl_atomic.h"
#include "nl_dp.h"
#include "nl_dp_farm.h" /* #33: a farm slot's occupancy beside the worker's report */
#include "nl_port_priv.h"
#include "nl_dp_sec.h" /* #16: slots a principal may take */

#define DP_LOG(l, ...) rte_log(RTE_LOG_##l, nl_dp_logtype, "nlevel: " __VA_ARGS__)

/* The thread's CPU time and context switches, into io->ru_* (every 100 ms, and at a hold) */
static void
live_ru(struct nl_port *io, uint64_t tsc)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return;
	io->ru_cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	io->ru_nivcsw = ru.ru_nivcsw;
	io->ru_nvcsw = ru.ru_nvcsw;
	io->ru_tsc = tsc;
}

/* The port's own drop counters into io->c (every 100 ms): a frame it dropped before we read
 * it (a full receive ring) is otherwise nowhere counted (a client's SUBMIT never answered) */
static void
live_eth(struct nl_port *io)
{
	struct rte_eth_stats st;

	if (rte_eth_stats_get(io->o.port_id, &st) != 0)
		return;
	nl_atomic_store_relaxed(&io->c.rx_missed, st.imissed);
	nl_atomic_store_relaxed(&io->c.rx_errors, st.ierrors);
	nl_atomic_store_relaxed(&io->c.rx_nombuf, st.rx_nombuf);
}

void
nl_dp_live_turn(struct nl_port *io, uint64_t tsc)
{
	uint64_t hz = rte_get_tsc_hz(), gap = tsc - io->live_tsc;

	if (io->live_tsc != 0 && tsc > io->live_tsc && gap > hz / 10) { /* a turn over 100 ms */
		for (unsigned int i = 0; i < io->n_workers; i++)
			if (io->workers[i].live)
				io->workers[i].last_seen_tsc += gap;
		if (gap > hz) {
			double cpu = io->ru_cpu_s, held = (double)(tsc - io->ru_tsc) / (double)hz;
			long niv = io->ru_nivcsw, nv = io->ru_nvcsw;

			live_ru(io, tsc);
			DP_LOG(NOTICE, "the I/O lcore was held %.1f s: the workers' silence in that "
			       "time is not counted against them (--worker-timeout); of the last "
			       "%.1f s, %.1f s in its idle nap (--idle-sleep-us), %.2f s on a CPU, "
			       "%ld involuntary and %ld voluntary context switches\n",
			       (double)gap / (double)hz, held, (double)io->nap_cyc / (double)hz,
			       io->ru_cpu_s - cpu, io->ru_nivcsw - niv, io->ru_nvcsw - nv);
		}
	}
	if (tsc - io->ru_tsc > hz / 10) {
		live_ru(io, tsc);
		live_eth(io);
	}
	io->live_tsc = tsc;
	io->nap_cyc = 0;
}

void
nl_dp_live_stop(struct nl_port *io)
{
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc(), t1;

	nl_dp_live_turn(io, t0);
	nl_atomic_store_relaxed(&io->dp->run_quit, 1);
	rte_eal_mp_wait_lcore();
	t1 = rte_rdtsc();
	if (t1 - t0 > hz)
		DP_LOG(NOTICE, "the manager lcores took %.1f s to stop: the host held them\n",
		       (double)(t1 - t0) / (double)hz);
}

int32_t
nl_dp_live_due(const struct nl_port *io, uint64_t tsc, uint64_t timeout_cyc)
{
	for (unsigned int i = 0; i < io->n_workers; i++)
		if (io->workers[i].live && tsc > io->workers[i].last_seen_tsc &&
		    tsc - io->workers[i].last_seen_tsc > timeout_cyc)
			return (int32_t)i;
	return -1;
}

int32_t
nl_dp_live_worker(const struct nl_port *io, const struct nl_frame_addr *a)
{
	for (unsigned int i = 0; i < io->n_workers; i++)
		if (io->workers[i].live && io->workers[i].ip == a->src_ip &&
		    io->workers[i].port == a->src_port)
			return (int32_t)i;
	return -1;
}

void
nl_dp_live_load(struct nl_port *io, const struct nl_msg_hello *h, const struct nl_frame_addr *a)
{
	struct nl_dp *dp = io->dp;
	int32_t wi = nl_dp_live_worker(io, a);
	double now = nl_dp_now_vt(dp);
	struct nl_dp_worker *w;

	if (wi < 0) { /* #36: not (or no longer) a worker of ours: ask it to join again */
		struct nl_msg r = { .type = NL_MSG_HELLO };

		r.u.hello = *h;
		r.u.hello.flags = NL_HELLO_F_REPLY | NL_HELLO_F_REJOIN;
		for (unsigned int i = 0; i < h->n_mach; i++)
			r.u.hello.mach[i].slot = UINT32_MAX;
		nl_dp_io_send(io, &r, io->principal, a->src_mac, a->src_ip, a->src_port);
		nl_stat_add_st(&io->c.rejoin_asked, 1);
		return;
	}
	w = &io->workers[wi];
	w->last_seen_tsc = rte_rdtsc();
	for (unsigned int i = 0; i < h->n_mach && i < w->n_mach; i++) {
		uint32_t m = w->slot[i];
		struct nl_mach_load *wl;

		if (m == NO_SLOT || !io->alive[m])
			continue; /* taken out of service: stays NL_MACH_GONE_VT for the policies */
		wl = nl_load_entry_ctl(dp->load, m);
		wl->n_sub = h->mach[i].n_sub;
		wl->busy_until_vt = now + (double)h->mach[i].backlog_ns / dp->o.ns_per_vt;
		nl_dp_farm_load(io, m, h->mach[i].n_sub, h->mach[i].backlog_ns); /* #33 */
	}
}

unsigned int
nl_dp_live_forget_slotless(struct nl_port *io)
{
	unsigned int n = 0;

	for (uint32_t wi = 0; wi < io->n_workers; wi++) {
		struct nl_dp_worker *w = &io->workers[wi];
		bool slot = false;

		for (unsigned int i = 0; i < w->n_mach; i++)
			slot |= w->slot[i] != NO_SLOT;
		if (!w->live || slot)
			continue;
		/* remove_worker() (nl_dp_port.c, which calls this file) less what a worker without
		 * a slot has none of: machines to take out of service, sub-tasks to re-place */
		nl_dp_farm_worker_gone(io, wi);
		w->live = false;
		nl_stat_add_st(&io->c.workers_left, 1);
		DP_LOG(INFO, "worker %u, which joined here without a slot, is asked to join again: "
		       "this appliance has slots for it now\n", w->worker_id);
		n++;
	}
	return n;
}

void
nl_dp_claim_slots(struct nl_port *io, int32_t wi, const struct nl_msg_hello *h, uint32_t *setm,
	    double *sets, unsigned int *ns, unsigned int *n_other)
{
	struct nl_dp *dp = io->dp;
	const struct nl_dp_gen *g = dp->gen_rcu;
	struct nl_dp_worker *w = &io->workers[wi];

	for (unsigned int i = 0; i < w->n_mach && i < h->n_mach; i++) {
		const struct nl_msg_mach *x = &h->mach[i];
		bool other = false;

		if (w->slot[i] != NO_SLOT)
			continue;
		for (uint32_t m = 0; m < g->n_mach; m++) {
			if (io->slot_worker[m] != NO_SLOT || g->mach[m].res.set != x->res_set ||
			    g->mach[m].res.any != x->res_any ||
			    (io->sec != NULL && !nl_dp_sec_slot_ok(io, m))) /* #16 */
				continue;
			if (nl_port_ext(io) != NULL && !io->o.ext->owns_mach(dp->ext, m, h->flags)) {
				other = true;
				continue; /* hook up (scale-out): another appliance's slot */
			}
			w->slot[i] = m;
			io->slot_worker[m] = (uint32_t)wi;
			io->slot_local[m] = i;
			io->alive[m] = 1;
			setm[*ns] = m;
			sets[(*ns)++] = (double)x->speed_ips;
			break;
		}
		*n_other += w->slot[i] == NO_SLOT && other;
	}
}
