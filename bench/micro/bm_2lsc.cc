/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 2LSC decisions (seed 002 §3.1) through the policy ops table (managers/nl_policy.h), driven
 * by a trivial engine that books dispatched sub-tasks on its load table and counts forwards.
 *
 * BM_2lsc_global: the global scheduler's decision alone, G = 2..64 groups: the task's matching
 * machines across all groups ranked by the last periodic measurement. The measurement itself
 * (a copy of the load table every measure_period_vt) runs inside the loop when it falls due,
 * as it would on the global scheduler's lcore.
 * BM_2lsc_task: a task as 2LSC serves it: the decision of the group it appears at (§4.2) and,
 * when that group forwards (fewer than L matching machines or load above the threshold), the
 * global decision too.
 *
 * 1024 machines, N = 4 with balanced vectors (64 machines per vector), six speed classes,
 * L = 4, the paper's task (32e9 instr, 400 Mbit); time advances so machines run near 80 % busy.
 */
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "bm_common.h"

#include "nl_policy.h"
#include "nl_rng.h"

namespace {

constexpr unsigned int n_mach = 1024;

struct eng_ctx {
	std::vector<nl_mach_load> load;
	const nl_machine *mach;
	uint64_t forwarded = 0, dispatched = 0, rejected = 0;
	uint32_t fwd_to = NL_NODE_NONE;
};

void
bm2_forward(void *ctx, struct nl_task *t, uint32_t to_mgr, double now_vt)
{
	auto *e = static_cast<eng_ctx *>(ctx);

	(void)t;
	(void)now_vt;
	e->forwarded++;
	e->fwd_to = to_mgr;
}

void
bm2_dispatch(void *ctx, struct nl_task *t, const uint32_t *mach, unsigned int n, double now_vt)
{
	auto *e = static_cast<eng_ctx *>(ctx);

	for (unsigned int j = 0; j < n; j++) {
		nl_mach_load *ld = &e->load[mach[j]];

		ld->busy_until_vt = std::max(ld->busy_until_vt, now_vt) +
				    nl_mach_service_vt(&e->mach[mach[j]], t->instr / n,
						       t->data_bits / n);
		ld->n_sub++;
	}
	e->dispatched++;
}

void
bm2_reject(void *ctx, struct nl_task *t, enum nl_reject_reason why, double now_vt)
{
	(void)t;
	(void)why;
	(void)now_vt;
	static_cast<eng_ctx *>(ctx)->rejected++;
}

const struct nl_mach_load *
bm2_load(void *ctx, uint32_t mgr, double now_vt)
{
	(void)mgr;
	(void)now_vt;
	return static_cast<eng_ctx *>(ctx)->load.data();
}

unsigned int
bm2_queue_len(void *ctx, uint32_t mgr)
{
	(void)ctx;
	(void)mgr;
	return 0;
}

const struct nl_engine_ops eng_ops = {
	bm2_forward,
	bm2_dispatch,
	bm2_reject,
	bm2_load,
	bm2_queue_len,
	nullptr, /* pass: every hop through the global scheduler's queue */
	nullptr, /* load_gen: the scan on every pick */
};

void
run_2lsc(benchmark::State &st, bool entry_group)
{
	const unsigned int G = (unsigned int)st.range(0);
	const double speeds[] = { 40e6, 60e6, 80e6, 100e6, 120e6, 140e6 };
	std::vector<nl_machine> mach(n_mach);
	struct nl_sched_params p = {};
	struct nl_sched *s = nullptr;
	eng_ctx e;
	struct nl_engine eng = { &eng_ops, &e };
	struct nl_rng r;
	struct nl_task t = {};
	double now_vt = 0, next_measure_vt = 0, mean_s = 0, dt_vt;
	uint64_t n = 0;

	for (unsigned int i = 0; i < n_mach; i++) {
		mach[i] = nl_machine{};
		mach[i].speed_class = i * 6u / n_mach;
		mach[i].speed_ips = speeds[mach[i].speed_class];
		mach[i].link_bps = 10e6;
		mach[i].res.set = i & 15u;
		mean_s += nl_mach_service_vt(&mach[i], 8e9, 1e8) / n_mach;
	}
	p.n_res = 4;
	p.mgr_service_vt = 0.5;
	p.pick_service_vt = 1;
	p.global_base_vt = 20;
	p.global_per_group_vt = 1;
	p.measure_period_vt = 50;
	p.grp_threshold = 1.0;
	p.n_groups = G;
	if (nl_sched_create(&s, &nl_policy_2lsc, &p, mach.data(), n_mach) != 0) {
		st.SkipWithError("nl_sched_create failed");
		return;
	}
	e.load.assign(n_mach, nl_mach_load{});
	e.mach = mach.data();
	dt_vt = 4 * mean_s / (0.8 * n_mach);
	nl_rng_seed(&r, 0x326c7363ULL + G);
	t.n_split = 4;
	t.instr = 32e9;
	t.data_bits = 4e8;
	const uint32_t global = nl_2lsc_global_mgr(s);
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		uint64_t rnd = nl_rng_u64(&r);

		if (now_vt >= next_measure_vt) {
			s->ops->measure(s, now_vt, &eng);
			next_measure_vt = now_vt + p.measure_period_vt;
		}
		t.id = n;
		t.need = rnd & 15u;
		if (entry_group) {
			e.fwd_to = NL_NODE_NONE;
			s->ops->decide(s, s->ops->entry(s, &t, rnd >> 8), &t, now_vt, &eng);
			if (e.fwd_to == global)
				s->ops->decide(s, global, &t, now_vt, &eng);
		} else {
			s->ops->decide(s, global, &t, now_vt, &eng);
		}
		now_vt += dt_vt;
		n++;
	}
	uint64_t dt = nl_bm_tsc() - t0;

	nl_bm_report(st, dt, n);
	st.counters["fwd_pct"] = n == 0 ? 0.0 : 100.0 * (double)e.forwarded / (double)n;
	st.counters["rejected"] = (double)e.rejected;
	nl_sched_free(s);
}

} // namespace

static void
BM_2lsc_global(benchmark::State &st)
{
	run_2lsc(st, false);
}
BENCHMARK(BM_2lsc_global)->ArgName("G")->RangeMultiplier(2)->Range(2, 64);

static void
BM_2lsc_task(benchmark::State &st)
{
	run_2lsc(st, true);
}
BENCHMARK(BM_2lsc_task)->ArgName("G")->RangeMultiplier(2)->Range(2, 64);
