/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BM_tree_route: one NLSC routing step (nl_tree_next(), seed 002 §3.3 steps 2-4) per
 * iteration, for N = 2..16 resources.
 *
 * The steps are the ones real task walks make: 1024 machines with random N-bit vectors build
 * the tree; tasks need the vector of a random machine (so a leaf serves them) and appear at a
 * random leaf (§4.2), then climb and descend. Every (node, task vector) pair of those walks is
 * recorded once, and the timed loop replays 4096 of them, one step per iteration. The steps are
 * independent of one another (a manager's lcore decides for many tasks in a row), so the figure
 * is the throughput cost of a decision, with the node hot or in L2 as it is on its manager.
 */
#include <cstdlib>
#include <vector>

#include "bm_common.h"

#include "nl_rng.h"
#include "nl_tree.h"

namespace {

struct step {
	uint64_t need;
	uint32_t at;
	uint32_t pad;
};

constexpr unsigned int n_step_pow2 = 4096;
constexpr unsigned int n_mach = 1024;

struct route_fixture {
	struct nl_tree *t = nullptr;
	std::vector<step> steps;
	double hops_per_task = 0;

	explicit route_fixture(unsigned int n_res)
	{
		std::vector<nl_resvec> v(n_mach);
		struct nl_rng r;
		uint64_t tasks = 0, hops = 0;

		nl_rng_seed(&r, 0x6e6c74726565ULL + n_res);
		for (auto &m : v) {
			m.set = nl_rng_u64(&r) & nl_res_mask(n_res);
			m.any = 0;
		}
		if (nl_tree_build(&t, n_res, v.data(), n_mach, 0) != 0)
			abort();
		while (steps.size() < n_step_pow2) {
			uint64_t need = v[nl_rng_u64(&r) % n_mach].set;
			uint32_t at = t->leaf_node[nl_rng_u64(&r) % t->n_leaf];
			enum nl_route_act act;

			tasks++;
			for (;;) {
				uint32_t nx = nl_tree_next(t, at, need, &act);

				if (steps.size() < n_step_pow2)
					steps.push_back(step{ need, at, 0 });
				if (act == NL_ROUTE_ASSIGN || nx == NL_NODE_NONE)
					break;
				hops++;
				at = nx;
			}
		}
		hops_per_task = (double)hops / (double)tasks;
	}
	~route_fixture() { nl_tree_free(t); }
};

} // namespace

static void
BM_tree_route(benchmark::State &st)
{
	route_fixture f((unsigned int)st.range(0));
	const struct nl_tree *t = f.t;
	const step *s = f.steps.data();
	uint64_t sink = 0, n = 0;
	unsigned int i = 0;
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		enum nl_route_act act;
		uint32_t nx = nl_tree_next(t, s[i].at, s[i].need, &act);

		sink += nx + (uint32_t)act;
		i = (i + 1) & (n_step_pow2 - 1);
		n++;
	}
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, nl_bm_tsc() - t0, n);
	st.counters["nodes"] = t->n_node;
	st.counters["hops_per_task"] = f.hops_per_task;
}
BENCHMARK(BM_tree_route)->ArgName("N")->DenseRange(2, 16, 2);
