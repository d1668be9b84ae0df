/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BM_grp_pick_scan: a leaf manager picks the L least-loaded machines of its group for one task
 * by scanning it (nl_pick_least_loaded(), seed 002 §3.3 step 5), group size m = 4..4096,
 * L = 1..64. BM_grp_pick (at the end) is the pick the policies make: the scan or the index.
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
#include "nl_pick_idx.h"
#include "nl_rng.h"
#include "nl_task.h"

namespace {

/* The group of BM_grp_pick: m of the paper's machines, loads spread over 550 u.t. */
struct grp {
	static constexpr double sub_instr = 8e9, sub_bits = 1e8;
	std::vector<nl_machine> mach;
	std::vector<nl_mach_load> load;
	std::vector<uint32_t> cand;
	std::vector<nl_mach_rate> rate;
	double now_vt = 1000, dt_vt = 0;

	grp(unsigned int m, unsigned int L) : mach(m), load(m), cand(m), rate(m)
	{
		const double speeds[] = { 40e6, 60e6, 80e6, 100e6, 120e6, 140e6 };
		struct nl_rng r;
		double mean_s = 0;

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
		nl_mach_rates_build(mach.data(), m, rate.data());
	}

	/* Book one sub-task on machine id, as the live leaf does (its service time from the
	 * machine's rates, as the pick computes it). @return its new busy_until. */
	double
	book(uint32_t id)
	{
		nl_mach_load *ld = &load[id];

		ld->busy_until_vt = std::max(ld->busy_until_vt, now_vt) +
				    nl_mach_rate_service_vt(&rate[id], sub_instr, sub_bits);
		return ld->busy_until_vt;
	}
};

} // namespace

/* The scan at every group size (what BM_grp_pick does below NL_PICK_IDX_MIN_CAND). */
static void
BM_grp_pick_scan(benchmark::State &st)
{
	const unsigned int m = (unsigned int)st.range(0), L = (unsigned int)st.range(1);
	grp g(m, L);
	uint32_t out[NL_TASK_MAX_SPLIT];
	uint64_t n = 0, sink = 0;
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		int k = nl_pick_least_loaded(g.cand.data(), m, g.rate.data(), g.load.data(), g.now_vt,
					     g.sub_instr, g.sub_bits, L, out);

		for (int j = 0; j < k; j++)
			g.book(out[j]);
		sink += out[0];
		g.now_vt += g.dt_vt;
		n++;
	}
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, nl_bm_tsc() - t0, n);
	st.counters["ns_per_machine"] = benchmark::Counter((double)n * m,
		benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_grp_pick_scan)
	->ArgNames({ "m", "L" })
	->ArgsProduct({ { 4, 16, 64, 256, 1024, 4096 }, { 1, 4, 16, 64 } });

/*
 * BM_grp_pick_idx: the same picks and bookings through the pick index (nl_pick_idx.h): per
 * speed class an idle bitmap and a busy heap, classes merged; each booking is one
 * nl_pick_idx_set(). Same decisions as BM_grp_pick's scan (tests/managers/test_pick_idx.c).
 */
static void
BM_grp_pick_idx(benchmark::State &st)
{
	const unsigned int m = (unsigned int)st.range(0), L = (unsigned int)st.range(1);
	grp g(m, L);
	uint32_t out[NL_TASK_MAX_SPLIT], off[2] = { 0, m };
	uint64_t n = 0, sink = 0;
	nl_pick_idx x;

	if (nl_pick_idx_build(&x, 1, off, g.cand.data(), g.rate.data(), m) != 0) {
		st.SkipWithError("nl_pick_idx_build failed");
		return;
	}
	nl_pick_idx_reset(&x, g.load.data(), g.now_vt);
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		int k = nl_pick_idx_pick(&x, 0, g.now_vt, g.sub_instr, g.sub_bits, L, out);

		for (int j = 0; j < k; j++)
			nl_pick_idx_set(&x, out[j], g.book(out[j]));
		sink += out[0];
		g.now_vt += g.dt_vt;
		n++;
	}
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, nl_bm_tsc() - t0, n);
	nl_pick_idx_free(&x);
}
BENCHMARK(BM_grp_pick_idx)
	->ArgNames({ "m", "L" })
	->ArgsProduct({ { 4, 16, 64, 256, 1024, 4096 }, { 1, 4, 16, 64 } });

/*
 * BM_grp_pick: the leaf pick as the policies make it (nl_nlsc.c, nl_2lsc.c): through the
 * group's pick index, every booking applied to it (BM_grp_pick_idx), where the index is worth
 * it (nl_pick_idx_worth(): 64 machines or more and 32 per sub-task), else the scan
 * (BM_grp_pick_scan).
 */
static void
BM_grp_pick(benchmark::State &st)
{
	if (nl_pick_idx_worth((unsigned int)st.range(0), (unsigned int)st.range(1)))
		BM_grp_pick_idx(st);
	else
		BM_grp_pick_scan(st);
}
BENCHMARK(BM_grp_pick)
	->ArgNames({ "m", "L" })
	->ArgsProduct({ { 4, 16, 64, 256, 1024, 4096 }, { 1, 4, 16, 64 } });
