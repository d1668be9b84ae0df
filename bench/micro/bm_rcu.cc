/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BM_rcu_read_bare: the read side of a QSBR-protected load snapshot, one dereference plus one
 * machine's load record per iteration, as a manager does before picking. The reader is
 * registered and online; it announces a quiescent state every 1024 reads, as the lcore loop's
 * housekeeping block does (STYLE.md), and that cost is included.
 *
 * This file measures a bare liburcu QSBR snapshot (a pointer published with
 * rcu_assign_pointer), the floor any load table built on it can reach. BM_rcu_read
 * (bm_load.cc) does the same on the real table of managers/load; without managers/load in the
 * build, this benchmark is registered under the name BM_rcu_read as well.
 */
#include <cstdlib>
#include <vector>

#define URCU_INLINE_SMALL_FUNCTIONS
#include <urcu/urcu-qsbr.h>

#include "bm_common.h"

#include "nl_machine.h"

namespace {

struct snap {
	unsigned int n_mach;
	struct nl_mach_load ld[];
};

constexpr unsigned int n_mach = 4096;

snap *
snap_new(void)
{
	auto *s = static_cast<snap *>(calloc(1, sizeof(snap) + n_mach * sizeof(nl_mach_load)));

	if (s == nullptr)
		abort();
	s->n_mach = n_mach;
	for (unsigned int i = 0; i < n_mach; i++)
		s->ld[i].n_sub = i & 7;
	return s;
}

snap *root_rcu;

} // namespace

static void
BM_rcu_read_bare(benchmark::State &st)
{
	snap *s0 = snap_new(), *old;
	uint64_t sink = 0, n = 0;
	unsigned int i = 0;

	old = rcu_xchg_pointer(&root_rcu, s0);
	free(old);
	urcu_qsbr_register_thread();
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		const snap *s = rcu_dereference(root_rcu);

		sink += s->ld[i & (n_mach - 1)].n_sub;
		i += 7;
		if ((++n & 1023) == 0)
			urcu_qsbr_quiescent_state();
	}
	uint64_t dt = nl_bm_tsc() - t0;

	urcu_qsbr_unregister_thread();
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, dt, n);
	st.SetLabel("bare liburcu QSBR snapshot");
}
BENCHMARK(BM_rcu_read_bare);
#ifndef NL_BENCH_HAVE_LOAD
static benchmark::internal::Benchmark *const bm_rcu_read_alias =
	benchmark::RegisterBenchmark("BM_rcu_read", BM_rcu_read_bare);
#endif
