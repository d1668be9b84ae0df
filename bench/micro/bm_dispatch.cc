/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BM_dispatch_path: tasks through the appliance itself. An nlevel engine (dataplane/engine/nl_dp.h)
 * in native mode with instant machines, all managers on one lcore, is driven from the
 * benchmark thread with nl_dp_drive_round(): each round is what nl_dp_lcore_main() runs per
 * loop: the ingress draws tasks from the model (managers/nl_model.h) and enqueues them at
 * their entry manager (a random leaf, seed 002 §4.2), then every manager with work admits and
 * decides (NLSC routing at each hop through rte_ring inboxes, the leaf's least-loaded pick of
 * L = 4 machines, the booking in its load view) until the task is dispatched. Nothing here
 * re-assembles the path: the figures are the appliance's.
 *
 * Arguments: N = 4, 8 (config/paper-96.ini with N resources and 2^N leaves of 4 machines each);
 * batch = tasks the ingress admits per round (1 = one task alone, 32 = a burst in flight);
 * book = 0: instant machines (nothing booked); 1: native booking as `nlevel --native` does
 * it (each sub-task booked on its machine for its modelled time x 1e-8 s per u.t., the task
 * completed by the lcore's timing wheel when its last sub-task ends; a task counts when it
 * completes).
 *
 * Counters: hops_per_task (forwards counted by the managers); bare_hop_ns = a bare SP/SC
 * enqueue + dequeue of one pointer on one lcore measured in the same run just before the loop
 * (fastest of 8 rounds); ratio_to_bare = time per task over hops_per_task x bare_hop_ns.
 */
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <rte_lcore.h>
#include <rte_ring.h>

#include <urcu/urcu-qsbr.h>

#include "bm_common.h"

#include "nl_dp.h"
#include "nl_machine.h"

namespace {

unsigned int disp_seq;

/* A bare hop on one lcore: SP enqueue + SC dequeue of one pointer [ns]; the fastest of
 * 8 rounds of 2^16 hops, so a preemption during calibration does not inflate it. */
double
bare_hop_ns(void)
{
	char name[RTE_RING_NAMESIZE];
	void *obj = &name, *got = nullptr;
	const unsigned int n = 1u << 16;
	double best = 0;

	snprintf(name, sizeof(name), "bm_bare_%u", disp_seq++);
	struct rte_ring *r = rte_ring_create(name, 64, SOCKET_ID_ANY, 0);

	if (r == nullptr)
		return 0;
	for (unsigned int round = 0; round < 8; round++) {
		auto t0 = std::chrono::steady_clock::now();

		for (unsigned int i = 0; i < n; i++) {
			rte_ring_sp_enqueue(r, obj);
			rte_ring_sc_dequeue(r, &got);
			benchmark::DoNotOptimize(got);
		}
		std::chrono::duration<double, std::nano> dt = std::chrono::steady_clock::now() - t0;

		if (round == 0 || dt.count() / n < best)
			best = dt.count() / n;
	}
	rte_ring_free(r);
	return best;
}

} // namespace

static void
BM_dispatch_path(benchmark::State &st)
{
	const unsigned int N = (unsigned int)st.range(0), batch = (unsigned int)st.range(1);
	const bool book = st.range(2) != 0;

	nl_model_cfg m = {};

	if (nl_bm_need_eal(st, 1) || !nl_bm_paper96(st, &m))
		return;
	/* paper-96 with N resources: 2^N groups of 4 machines */
	m.n_res = m.sp.n_res = N;
	m.n_mach = 4u << N;
	std::vector<nl_machine> mach(m.n_mach);
	nl_dp_opts o;
	nl_dp *dp = nullptr;

	nl_machines_build(&m, 1, mach.data());
	/* the engine's control thread and lcore rounds are QSBR readers: this thread is both */
	urcu_qsbr_register_thread();
	std::memset(&o, 0, sizeof(o));
	o.scheme = NL_SCHEME_NLSC;
	o.native_instant = !book;
	o.native_book = book;
	o.work_scale_s = 1e-8;
	o.ns_per_vt = 1000;
	o.inbox_size = 256;
	o.pool_size = 4095;
	o.burst = batch;
	o.publish_vt = 1e12; /* instant machines: nothing to publish */
	o.mgr_lcore[0] = rte_lcore_id();
	o.n_mgr_lcore = 1;
	if (nl_dp_create(&dp, &m, mach.data(), &o) != 0 || nl_dp_drive_begin(dp) != 0) {
		nl_dp_free(dp);
		urcu_qsbr_unregister_thread();
		st.SkipWithError("nl_dp_create failed (memory? use a smaller N)");
		return;
	}
	const double bare_ns = bare_hop_ns();
	uint64_t done = 0, loops = 0;
	auto w0 = std::chrono::steady_clock::now();
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		uint64_t target = done + batch;

		while (done < target) {
			done = nl_dp_drive_round(dp, 0);
			if ((++loops & 1023) == 0)
				urcu_qsbr_quiescent_state();
		}
	}
	uint64_t dt = nl_bm_tsc() - t0;
	std::chrono::duration<double, std::nano> wall = std::chrono::steady_clock::now() - w0;
	nl_dp_counts c;

	nl_dp_counts_get(dp, &c);
	const double hpt = done == 0 ? 0 : (double)c.forwards / (double)done;

	nl_bm_report(st, dt, done);
	st.counters["hops_per_task"] = hpt;
	st.counters["bare_hop_ns"] = bare_ns;
	st.counters["ratio_to_bare"] =
		done == 0 || bare_ns <= 0 || hpt <= 0 ? 0.0 : (wall.count() / (double)done) / (hpt * bare_ns);
	st.counters["rejected"] = (double)(c.rejected_ingress + c.failed);
	nl_dp_free(dp);
	urcu_qsbr_unregister_thread();
}
BENCHMARK(BM_dispatch_path)
	->ArgNames({ "N", "batch", "book" })
	->ArgsProduct({ { 4, 8 }, { 1, 32 }, { 0, 1 } })
	->UseRealTime();
