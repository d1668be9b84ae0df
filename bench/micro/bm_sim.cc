/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BM_sim_events: events per second of the seed 002 discrete-event simulator (nl_dsim_run(),
 * sim/dispatch/nl_dsim.h) on the paper's model (config/paper-96.ini: M = 96, N = 4, L = 4) at
 * 50 % load with a short horizon (1e5 u.t., about 10,000 tasks): one whole run per iteration,
 * items = events the run processed. scheme: 0 = NLSC, 1 = 2LSC with G = 4.
 */
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bm_common.h"

#include "nl_cfg.h"
#include "nl_dsim.h"
#include "nl_machine.h"
#include "nl_model_cfg.h"

static void
BM_sim_events(benchmark::State &st)
{
	struct nl_model_cfg m = {};
	struct nl_variant v = {};
	uint64_t n = 0, seed = 1;

	if (!nl_bm_paper96(st, &m))
		return;
	m.horizon_vt = 1e5;
	m.warmup_vt = 1e4;
	v.scheme = st.range(0) == 0 ? NL_SCHEME_NLSC : NL_SCHEME_2LSC;
	v.n_groups = st.range(0) == 0 ? 0 : 4;
	std::vector<nl_machine> mach(m.n_mach);

	if (nl_machines_build(&m, m.seed, mach.data()) != 0) {
		st.SkipWithError("nl_machines_build failed");
		return;
	}
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		struct nl_dsim_result r;

		int rc = nl_dsim_run(&m, mach.data(), &v, 50, seed++, &r);

		if (rc != 0) {
			st.SkipWithError(("nl_dsim_run failed: " + std::to_string(rc)).c_str());
			break;
		}
		n += r.events;
	}
	nl_bm_report(st, nl_bm_tsc() - t0, n);
}
BENCHMARK(BM_sim_events)->ArgName("scheme")->DenseRange(0, 1)->Unit(benchmark::kMillisecond);
