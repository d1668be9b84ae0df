/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QSBR load table of managers/load (nl_load.h) from both sides. Built only when
 * managers/load is in the build (nl_load_dep).
 *
 * BM_rcu_read: the QSBR snapshot dereference on the real table: rcu_dereference() of the
 *   table's root and one machine's record, one read per iteration, the reader registered and
 *   online, a quiescent state every 1024 reads (the lcore loop's housekeeping; included).
 * BM_load_refresh: what a leaf manager pays per decision with the table's design:
 *   nl_load_view_refresh_rcu() when no new snapshot was published (a version compare) plus one
 *   record of its private view.
 * BM_load_publish: the writer: one booking applied (nl_load_apply_ctl()) and a publish
 *   (nl_load_publish_ctl(): copy of the table, rcu_assign_pointer, call_rcu of the old one)
 *   per iteration, m machines, while a reader on the worker lcore refreshes its view (and so
 *   copies every new snapshot) and announces quiescent states in a loop. Real time.
 */
#include <atomic>
#include <cstdlib>

#include "bm_common.h"

#define URCU_INLINE_SMALL_FUNCTIONS
#include <urcu/urcu-qsbr.h>

#include "nl_load.h"

#ifdef NL_BENCH_HAVE_DPDK
#include <rte_pause.h>

#include "bm_lcore.h"
#endif

static void
BM_rcu_read(benchmark::State &st)
{
	const unsigned int n_mach = 4096;
	struct nl_load_table *t = nullptr;
	uint64_t sink = 0, n = 0;
	unsigned int i = 0;

	urcu_qsbr_register_thread();
	if (nl_load_create(&t, n_mach, 1) != 0) {
		urcu_qsbr_unregister_thread();
		st.SkipWithError("nl_load_create failed");
		return;
	}
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		const struct nl_load_snap *s = rcu_dereference(t->cur_rcu);

		sink += s->load[i & (n_mach - 1)].n_sub;
		i += 7;
		if ((++n & 1023) == 0)
			urcu_qsbr_quiescent_state();
	}
	uint64_t dt = nl_bm_tsc() - t0;

	urcu_qsbr_unregister_thread();
	nl_load_free(t);
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, dt, n);
	st.SetLabel("nl_load_table snapshot");
}
BENCHMARK(BM_rcu_read);

static void
BM_load_refresh(benchmark::State &st)
{
	const unsigned int n_mach = 4096;
	struct nl_load_table *t = nullptr;
	struct nl_load_view v = {};
	uint64_t sink = 0, n = 0;
	unsigned int i = 0;

	urcu_qsbr_register_thread();
	if (nl_load_create(&t, n_mach, 1) != 0 || nl_load_view_init(&v, 0, n_mach, 64) != 0) {
		urcu_qsbr_unregister_thread();
		nl_load_free(t);
		st.SkipWithError("nl_load_create / view_init failed");
		return;
	}
	nl_load_view_refresh_rcu(&v, t);
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		sink += nl_load_view_refresh_rcu(&v, t);
		sink += v.load[i & (n_mach - 1)].n_sub;
		i += 7;
		if ((++n & 1023) == 0)
			urcu_qsbr_quiescent_state();
	}
	uint64_t dt = nl_bm_tsc() - t0;

	urcu_qsbr_unregister_thread();
	nl_load_view_fini(&v);
	nl_load_free(t);
	benchmark::DoNotOptimize(sink);
	nl_bm_report(st, dt, n);
}
BENCHMARK(BM_load_refresh);

#ifdef NL_BENCH_HAVE_DPDK
namespace {

struct reader_arg {
	nl_bm_peer *peer;
	const struct nl_load_table *t;
	unsigned int n_mach;
	std::atomic<uint64_t> rebuilt{ 0 };
};

int
reader_main(void *arg)
{
	auto *a = static_cast<reader_arg *>(arg);
	struct nl_load_view v = {};
	uint64_t rebuilt = 0;

	if (nl_load_view_init(&v, 0, a->n_mach, 64) != 0)
		return -1;
	urcu_qsbr_register_thread();
	while (!a->peer->stopping()) {
		rebuilt += nl_load_view_refresh_rcu(&v, a->t);
		urcu_qsbr_quiescent_state();
	}
	urcu_qsbr_unregister_thread();
	nl_load_view_fini(&v);
	a->rebuilt.store(rebuilt, std::memory_order_relaxed);
	return 0;
}

} // namespace

static void
BM_load_publish(benchmark::State &st)
{
	const unsigned int n_mach = (unsigned int)st.range(0);
	struct nl_load_table *t = nullptr;
	uint64_t n = 0;

	if (nl_bm_need_eal(st, 2))
		return;
	urcu_qsbr_register_thread();
	if (nl_load_create(&t, n_mach, 1) != 0) {
		urcu_qsbr_unregister_thread();
		st.SkipWithError("nl_load_create failed");
		return;
	}
	nl_bm_peer peer;
	reader_arg a;

	a.peer = &peer;
	a.t = t;
	a.n_mach = n_mach;
	if (peer.start(reader_main, &a) != 0) {
		urcu_qsbr_unregister_thread();
		nl_load_free(t);
		st.SkipWithError("cannot launch the worker lcore");
		return;
	}
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		n++;
		nl_load_apply_ctl(t, 0, n, (uint32_t)(n % n_mach), (double)n, 1.0);
		if (nl_load_publish_ctl(t) != 0) {
			st.SkipWithError("nl_load_publish_ctl failed");
			break;
		}
		/* The writer is a control thread: it passes quiescent states too. */
		urcu_qsbr_quiescent_state();
	}
	uint64_t dt = nl_bm_tsc() - t0;

	peer.join();
	urcu_qsbr_unregister_thread();
	nl_load_free(t);
	nl_bm_report(st, dt, n);
	st.counters["reader_rebuilds_per_publish"] =
		n == 0 ? 0.0 : (double)a.rebuilt.load(std::memory_order_relaxed) / (double)n;
}
BENCHMARK(BM_load_publish)->ArgName("m")->Arg(96)->Arg(1024)->Arg(4096)->UseRealTime();
#endif
