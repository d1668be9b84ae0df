/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BM_grp_pick: a leaf manager picks the L least-loaded machines of its group for one task
 * (nl_pick_least_loaded(), seed 002 §3.3 step 5), group size m = 4..4096, L = 1..64.
 *
 * The machines are the paper's (six speed classes 40e6..140e6 instr/u.t., 10 Mbit links) and
 * the sub-task is the paper's (8e9 instr, 100 Mbit). As on the live leaf, every pick books its
 * sub-tasks on the chosen machines and time advances so the group runs near 80 % busy; the
 * loads therefore change from one iteration to the next and the branch predictor cannot learn
 * one fixed answer. The booking (L stores) is inside the timed loop.
 */
#include <algorithm>
#include <vector>

#include "bm_common.h"

#include "nl_pick.h"
#include "nl_rng.h"
#include "nl_task.h"

static void
BM_grp_pick(benchmark::State &st)
{
	const unsigned int m = (unsigned int)st.range(0), L = (unsigned int)st.range(1);
	const double speeds[] = { 40e6, 60e6, 80e6, 100e6, 120e6, 140e6 };
	const double sub_instr = 8e9, sub_bits = 1e8;
	std::vector<nl_machine> mach(m);
	std::vector<nl_mach_load> load(m);
	std::vector<uint32_t> cand(m);
	uint32_t out[NL_TASK_MAX_SPLIT];
	struct nl_rng r;
	double now_vt = 1000, mean_s = 0, dt_vt;
	uint64_t n = 0, sink = 0;

	nl_rng_seed(&r, 0x7069636bULL ^ (m * 131u + L));
	for (unsigned int i = 0; i < m; i++) {
		mach[i] = nl_machine{};
		mach[i].speed_class = i * 6u / m;
		mach[i].speed_ips = speeds[mach[i].speed_class];
		mach[i].link_bps = 10e6;
		load[i].busy_until_vt = now_vt - 50 + 550 * nl_rng_unif(&r);
		load[i].n_sub = 1;
		cand[i] = i;
		mean_s += nl_mach_service_vt(&mach[i], sub_instr, sub_bits) / m;
	}
	dt_vt = (double)L * mean_s / (0.8 * m); /* offered load 80 % */
	std::vector<nl_mach_rate> rate(m);

	nl_mach_rates_build(mach.data(), m, rate.data());
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		int k = nl_pick_least_loaded(cand.data(), m, rate.data(), load.data(), now_vt,
					     sub_instr, sub_bits, L, out);

		for (int j = 0; j < k; j++) {
			nl_mach_load *ld = &load[out[j]];

			ld->busy_until_vt = std::max(ld->busy_until_vt, now_vt) +
					    nl_mach_service_vt(&mach[out[j]], sub_instr, sub_bits);
		}
		sink += out[0];
		now_vt += dt_vt;
		n++;
	}
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, nl_bm_tsc() - t0, n);
	st.counters["ns_per_machine"] = benchmark::Counter((double)n * m,
		benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_grp_pick)
	->ArgNames({ "m", "L" })
	->ArgsProduct({ { 4, 16, 64, 256, 1024, 4096 }, { 1, 4, 16, 64 } });
