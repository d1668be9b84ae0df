/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_ring hops and the physical baselines of this machine.
 *
 * BM_ring_hop: task pointers through one rte_ring: mode 0 = SP/SC, 1 = MP/SC enqueue;
 * burst 1, 8, 32; lcores 1 = enqueue then dequeue on the same lcore (the hop between two
 * managers of one lcore), lcores 2 = a producer on the worker lcore enqueues while the main
 * lcore dequeues (the hop between lcores). Items = pointers moved.
 *
 * Baselines (every other figure is given as a multiple of them):
 * BM_base_ring_2lcore: bare SP/SC rte_ring, one pointer per enqueue and per dequeue, producer
 *   on the worker lcore, consumer on the main lcore: the cross-lcore throughput floor.
 * BM_base_pingpong: one cache line bounced between the two lcores (the main lcore writes a
 *   sequence number, the worker echoes it in a second line): items = round trips; the time of
 *   one round trip is two cache-line transfers, the latency floor of any cross-lcore hop.
 * The cross-lcore benchmarks use real time (the other lcore's progress is what is measured).
 */
#include <atomic>
#include <cstdio>

#include <rte_pause.h>
#include <rte_ring.h>

#include "bm_common.h"
#include "bm_lcore.h"

namespace {

constexpr unsigned int ring_size = 1024;
unsigned int ring_seq;

struct rte_ring *
ring_new(void)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "bm_hop_%u", ring_seq++);
	return rte_ring_create(name, ring_size, SOCKET_ID_ANY, 0);
}

struct prod_arg {
	nl_bm_peer *peer;
	struct rte_ring *r;
	unsigned int burst;
	bool mp;
};

int
prod_main(void *arg)
{
	auto *a = static_cast<prod_arg *>(arg);
	void *obj[32];

	for (unsigned int i = 0; i < 32; i++)
		obj[i] = (void *)(uintptr_t)(i + 1);
	while (!a->peer->stopping()) {
		unsigned int k = a->mp ? rte_ring_mp_enqueue_burst(a->r, obj, a->burst, nullptr) :
					 rte_ring_sp_enqueue_burst(a->r, obj, a->burst, nullptr);

		if (k == 0)
			rte_pause();
	}
	return 0;
}

} // namespace

static void
BM_ring_hop(benchmark::State &st)
{
	const bool mp = st.range(0) != 0;
	const unsigned int burst = (unsigned int)st.range(1), n_lcore = (unsigned int)st.range(2);
	void *obj[32], *got[32];
	uint64_t n = 0;

	if (nl_bm_need_eal(st, n_lcore))
		return;
	struct rte_ring *r = ring_new();

	if (r == nullptr) {
		st.SkipWithError("rte_ring_create failed");
		return;
	}
	for (unsigned int i = 0; i < 32; i++)
		obj[i] = (void *)(uintptr_t)(i + 1);
	if (n_lcore == 1) {
		uint64_t t0 = nl_bm_tsc();

		for (auto _ : st) {
			if (mp)
				rte_ring_mp_enqueue_burst(r, obj, burst, nullptr);
			else
				rte_ring_sp_enqueue_burst(r, obj, burst, nullptr);
			n += rte_ring_sc_dequeue_burst(r, got, burst, nullptr);
		}
		benchmark::DoNotOptimize(got[0]);
		nl_bm_report(st, nl_bm_tsc() - t0, n);
	} else {
		nl_bm_peer peer;
		prod_arg a = { &peer, r, burst, mp };

		if (peer.start(prod_main, &a) != 0) {
			rte_ring_free(r);
			st.SkipWithError("cannot launch the worker lcore");
			return;
		}
		uint64_t t0 = nl_bm_tsc();

		for (auto _ : st) {
			unsigned int k = 0;

			while (k < burst) {
				unsigned int g = rte_ring_sc_dequeue_burst(r, got, burst - k, nullptr);

				if (g == 0)
					rte_pause();
				k += g;
			}
			n += k;
		}
		uint64_t dt = nl_bm_tsc() - t0;

		peer.join();
		nl_bm_report(st, dt, n);
	}
	rte_ring_free(r);
}
BENCHMARK(BM_ring_hop)
	->ArgNames({ "mp", "burst", "lcores" })
	->ArgsProduct({ { 0, 1 }, { 1, 8, 32 }, { 1, 2 } })
	->UseRealTime();

static void
BM_base_ring_2lcore(benchmark::State &st)
{
	uint64_t n = 0;

	if (nl_bm_need_eal(st, 2))
		return;
	struct rte_ring *r = ring_new();
	nl_bm_peer peer;
	prod_arg a = { &peer, r, 1, false };

	if (r == nullptr || peer.start(prod_main, &a) != 0) {
		rte_ring_free(r);
		st.SkipWithError("rte_ring_create or launch failed");
		return;
	}
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		void *got;

		while (rte_ring_sc_dequeue(r, &got) != 0)
			rte_pause();
		n++;
	}
	uint64_t dt = nl_bm_tsc() - t0;

	peer.join();
	rte_ring_free(r);
	nl_bm_report(st, dt, n);
}
BENCHMARK(BM_base_ring_2lcore)->UseRealTime();

namespace {

struct alignas(64) line {
	std::atomic<uint64_t> v{ 0 };
};

struct pp_arg {
	nl_bm_peer *peer;
	line ping, pong;
};

int
pong_main(void *arg)
{
	auto *a = static_cast<pp_arg *>(arg);
	uint64_t seen = 0;

	while (!a->peer->stopping()) {
		/* A1: pairs with R1 in BM_base_pingpong(). */
		uint64_t v = a->ping.v.load(std::memory_order_acquire);

		if (v == seen) {
			rte_pause();
			continue;
		}
		seen = v;
		/* R2: echo; pairs with A2 in BM_base_pingpong(). */
		a->pong.v.store(v, std::memory_order_release);
	}
	return 0;
}

} // namespace

static void
BM_base_pingpong(benchmark::State &st)
{
	uint64_t n = 0;

	if (nl_bm_need_eal(st, 2))
		return;
	nl_bm_peer peer;
	auto *a = new pp_arg;

	a->peer = &peer;
	if (peer.start(pong_main, a) != 0) {
		delete a;
		st.SkipWithError("cannot launch the worker lcore");
		return;
	}
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		uint64_t v = ++n;

		/* R1: pairs with A1 in pong_main(). */
		a->ping.v.store(v, std::memory_order_release);
		/* A2: pairs with R2 in pong_main(). */
		while (a->pong.v.load(std::memory_order_acquire) != v)
			rte_pause();
	}
	uint64_t dt = nl_bm_tsc() - t0;

	peer.join();
	delete a;
	nl_bm_report(st, dt, n);
}
BENCHMARK(BM_base_pingpong)->UseRealTime();
