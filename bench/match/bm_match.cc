/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Matching at the leaf (issue #15): the cost of a leaf manager's pick for a task carrying a
 * 3-clause Requirements (`Memory >= 16384 && Arch == "X86_64" && HasAvx2`) and optionally a
 * Rank (`Mips`) over a group of 64 machines, beside the plain least-loaded pick of the same
 * group in the same run:
 *   BM_leaf_pick/plain        nl_pick_least_loaded() (what a task without a handle costs)
 *   BM_leaf_pick/req3         nl_match_pick_task(): Requirements filter from the table
 *   BM_leaf_pick/req3_rank    the same with Rank ordering before load
 *   BM_leaf_pick/req3_eval    no table: evaluating the compiled Requirements on every
 *                             candidate at each pick (what compile-once + per-generation
 *                             caching avoids)
 *   BM_match_build            building one handle's row of the table for a new machine
 *                             generation (64 evaluations; once per generation, control path)
 * As in bench/micro's BM_grp_pick, every pick books its sub-tasks and time advances (group
 * about 80 % busy) so loads change between iterations. Run: build/bench/match/nlevel-bench-match
 */
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "nl_match.h"
#include "nl_match_cad.h"
#include "nl_pick.h"
#include "nl_rng.h"
}

namespace {

using nl_match_src_t = struct nl_match_src;

constexpr unsigned int kMach = 64;

struct group {
	static constexpr double sub_instr = 8e9, sub_bits = 1e8;
	std::vector<nl_machine> mach;
	std::vector<nl_mach_load> load;
	std::vector<uint32_t> cand;
	std::vector<nl_mach_rate> rate;
	std::vector<nl_match_mad *> ads;
	nl_match_expr *req = nullptr, *req_rank = nullptr;
	nl_match_tab *tab = nullptr;
	double now_vt = 1000, dt_vt = 0;
	unsigned int n_elig = 0;

	explicit group(unsigned int L) : mach(kMach), load(kMach), cand(kMach), rate(kMach), ads(kMach)
	{
		const double speeds[] = { 40e6, 60e6, 80e6, 100e6, 120e6, 140e6 };
		struct nl_rng r;
		double mean_s = 0;
		char err[200];

		nl_rng_seed(&r, 0x6d61746368ULL + L);
		for (unsigned int i = 0; i < kMach; i++) {
			mach[i] = nl_machine{};
			mach[i].speed_class = i * 6u / kMach;
			mach[i].speed_ips = speeds[mach[i].speed_class];
			mach[i].link_bps = 10e6;
			load[i].busy_until_vt = now_vt - 50 + 550 * nl_rng_unif(&r);
			cand[i] = i;
			mean_s += nl_mach_service_vt(&mach[i], sub_instr, sub_bits) / kMach;
			/* about 3 in 4 machines meet each clause: ~40 % meet all three */
			std::string ad = "Memory = " + std::to_string(nl_rng_unif(&r) < 0.75 ? 65536 : 4096) +
					 "; Arch = \"" + (nl_rng_unif(&r) < 0.75 ? "X86_64" : "AARCH64") +
					 "\"; HasAvx2 = " + (nl_rng_unif(&r) < 0.75 ? "true" : "false") +
					 "; Mips = " + std::to_string((int)(mach[i].speed_ips / 1e6)) +
					 "; Cpus = 1; OpSys = \"LINUX\"";
			nl_match_mad_parse(ad.c_str(), ad.size(), &ads[i], err, sizeof(err));
		}
		dt_vt = (double)L * mean_s / (0.8 * kMach);
		nl_mach_rates_build(mach.data(), kMach, rate.data());
		const char *q = "Memory >= 16384 && Arch == \"X86_64\" && HasAvx2";

		nl_match_expr_compile(q, strlen(q), "", 0, &req, err, sizeof(err));
		nl_match_expr_compile(q, strlen(q), "Mips", 4, &req_rank, err, sizeof(err));
		tab = build(1);
		for (unsigned int i = 0; i < kMach; i++)
			n_elig += (tab->ent[1].elig[i / 64] >> (i % 64)) & 1;
	}

	~group()
	{
		nl_match_tab_free(tab);
		nl_match_expr_free(req);
		nl_match_expr_free(req_rank);
		for (auto *a : ads)
			nl_match_mad_free(a);
	}

	/* The table of one generation: handle 1 = req, handle 2 = req_rank. */
	nl_match_tab *
	build(uint64_t gen)
	{
		nl_match_tab *t = nl_match_tab_new(kMach, 3, gen);

		nl_match_tab_use_rank(t, 2);
		for (unsigned int h = 1; h <= 2; h++)
			for (unsigned int m = 0; m < kMach; m++) {
				bool ok;
				double rk;

				nl_match_expr_eval(h == 1 ? req : req_rank, ads[m], &ok, &rk);
				nl_match_tab_set(t, h, m, ok, rk);
			}
		return t;
	}

	void
	book(const uint32_t *out, int n)
	{
		for (int i = 0; i < n; i++) {
			nl_mach_load *ld = &load[out[i]];

			ld->busy_until_vt = std::max(ld->busy_until_vt, now_vt) +
					    nl_mach_rate_service_vt(&rate[out[i]], sub_instr, sub_bits);
		}
		now_vt += dt_vt;
	}
};

enum mode { PLAIN, REQ3, REQ3_RANK, REQ3_EVAL };

void
BM_leaf_pick(benchmark::State &st, mode md)
{
	unsigned int L = (unsigned int)st.range(0);
	group g(L);
	uint32_t out[64], h_by_aux[1] = { md == REQ3_RANK ? 2u : 1u };
	nl_task t{};

	t.n_split = (uint16_t)L;
	t.instr = g.sub_instr * L;
	t.data_bits = g.sub_bits * L;
	nl_match_src.tab = g.tab;
	nl_match_src.h_by_aux = h_by_aux;
	nl_match_src.n_aux = 1;
	for (auto _ : st) {
		int n;

		if (md == PLAIN) {
			n = nl_pick_least_loaded(g.cand.data(), kMach, g.rate.data(), g.load.data(),
						 g.now_vt, g.sub_instr, g.sub_bits, L, out);
		} else if (md == REQ3_EVAL) {
			uint32_t el[kMach];
			unsigned int ne = 0;

			for (unsigned int c = 0; c < kMach; c++) {
				bool ok;
				double rk;

				nl_match_expr_eval(g.req, g.ads[g.cand[c]], &ok, &rk);
				if (ok)
					el[ne++] = g.cand[c];
			}
			n = nl_pick_least_loaded(el, ne, g.rate.data(), g.load.data(), g.now_vt,
						 g.sub_instr, g.sub_bits, L, out);
		} else {
			n = nl_match_pick_task(&t, g.cand.data(), kMach, g.rate.data(), g.load.data(),
					       g.now_vt, g.sub_instr, g.sub_bits, L, out);
		}
		benchmark::DoNotOptimize(out);
		g.book(out, n);
	}
	nl_match_src = nl_match_src_t{};
	st.counters["eligible"] = md == PLAIN ? kMach : g.n_elig;
}

void
BM_match_build(benchmark::State &st)
{
	group g(1);
	uint64_t gen = 2;

	for (auto _ : st) {
		nl_match_tab *t = g.build(gen++);

		benchmark::DoNotOptimize(t);
		nl_match_tab_free(t);
	}
	st.counters["evals"] = benchmark::Counter(2.0 * kMach, benchmark::Counter::kIsIterationInvariantRate);
}

} // namespace

BENCHMARK_CAPTURE(BM_leaf_pick, plain, PLAIN)->Arg(1)->Arg(4);
BENCHMARK_CAPTURE(BM_leaf_pick, req3, REQ3)->Arg(1)->Arg(4);
BENCHMARK_CAPTURE(BM_leaf_pick, req3_rank, REQ3_RANK)->Arg(1)->Arg(4);
BENCHMARK_CAPTURE(BM_leaf_pick, req3_eval, REQ3_EVAL)->Arg(1)->Arg(4);
BENCHMARK(BM_match_build);
BENCHMARK_MAIN();
