/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BM_dispatch_path: tasks through a whole N-level tree of managers, one rte_ring inbox per
 * manager, NLSC routing with nl_tree_next() at every hop and the leaf's pick of its L = 4
 * least-loaded machines (nl_pick_least_loaded()) at the end, built here from tree/,
 * managers/ and rte_ring as the live dataplane composes them.
 *
 * Arguments: N = 4, 8 (2^N leaves of 4 machines each, balanced vectors); lcores 1 = every
 * manager on the main lcore, 2 = the upper levels 0..N/2-1 on the worker lcore and the lower
 * levels (leaves included) on the main lcore, so a task crosses lcores twice when it climbs
 * above level N/2; start 0 = worst case (the task appears at the leaf opposite its vector:
 * 2N hops, up to the root and down), 1 = a random leaf (§4.2); batch = tasks injected
 * together per iteration (1 = the latency of one task alone, 32 = a burst in flight).
 *
 * An lcore serves its managers in sweeps, leaves-to-root (descending node id: a parent has a
 * smaller id, tree I1) then root-to-leaves, dequeuing bursts of up to 32 and enqueuing each
 * manager's output per destination as a burst. Rings that receive from both lcores use MP
 * enqueue; all others SP. Items = tasks completed.
 *
 * Counters: hops_per_task; bare_hop_ns = a bare SP/SC enqueue + dequeue of one pointer on one
 * lcore measured in the same run just before the loop (fastest of 8 rounds);
 * ratio_to_bare = time per task over
 * hops_per_task x bare_hop_ns (target <= 3); polls_per_task = inbox dequeue calls the main
 * lcore made per task (most of them on empty inboxes).
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

#include <rte_pause.h>
#include <rte_ring.h>

#include "bm_common.h"
#include "bm_lcore.h"

#include "nl_machine.h"
#include "nl_pick.h"
#include "nl_rng.h"
#include "nl_task.h"
#include "nl_tree.h"

namespace {

constexpr unsigned int burst_max = 32;
constexpr unsigned int n_sample = 4096;
unsigned int disp_seq;

struct sample {
	uint64_t need;
	uint32_t start;
};

struct disp {
	unsigned int n_res = 0;
	struct nl_tree *t = nullptr;
	std::vector<struct rte_ring *> ring; /* [n_node] inbox of each manager */
	std::vector<uint8_t> mp;             /* [n_node] enqueue MP: producers on two lcores */
	std::vector<uint32_t> own[2];        /* nodes of the main / worker lcore, ascending */
	std::vector<nl_machine> mach;
	std::vector<nl_mach_rate> rate;
	std::vector<nl_mach_load> load;      /* written only by the lcore owning the leaf */
	double now_vt = 0;
	uint64_t done = 0;                   /* tasks completed (main lcore: it owns the leaves) */
	uint64_t polls[2] = { 0, 0 };         /* inbox dequeue calls per lcore (own counter) */
	nl_bm_peer peer;

	~disp()
	{
		for (auto *r : ring)
			rte_ring_free(r);
		nl_tree_free(t);
	}

	void
	send(uint32_t to, nl_task **v, unsigned int k)
	{
		unsigned int s = 0;

		while (s < k) {
			s += mp[to] ? rte_ring_mp_enqueue_burst(ring[to], (void **)v + s, k - s, nullptr) :
				      rte_ring_sp_enqueue_burst(ring[to], (void **)v + s, k - s, nullptr);
		}
	}

	/* One manager's turn: route (or assign) what waits in its inbox. */
	unsigned int
	serve(uint32_t id)
	{
		nl_task *in[burst_max], *out[3][burst_max];
		unsigned int n_out[3] = { 0, 0, 0 };
		uint32_t dest[3] = { t->node[id].parent, t->node[id].child[0], t->node[id].child[1] };
		unsigned int n = rte_ring_sc_dequeue_burst(ring[id], (void **)in, burst_max, nullptr);

		for (unsigned int i = 0; i < n; i++) {
			nl_task *k = in[i];
			enum nl_route_act act;
			uint32_t nx = nl_tree_next(t, id, k->need, &act);

			if (act == NL_ROUTE_ASSIGN) {
				assign(id, k);
				continue;
			}
			(void)nx;
			unsigned int d = act == NL_ROUTE_UP ? 0 : (unsigned int)act + 1;

			k->hops++;
			out[d][n_out[d]++] = k;
		}
		for (unsigned int d = 0; d < 3; d++)
			if (n_out[d] > 0)
				send(dest[d], out[d], n_out[d]);
		return n;
	}

	void
	assign(uint32_t id, nl_task *k)
	{
		uint32_t leaf = t->node[id].leaf, pick[NL_TASK_MAX_SPLIT];
		const uint32_t *cand = &t->leaf_mach[t->leaf_off[leaf]];
		unsigned int n_cand = t->leaf_off[leaf + 1] - t->leaf_off[leaf];
		double si = k->instr / k->n_split, sb = k->data_bits / k->n_split;
		int got = nl_pick_least_loaded(cand, n_cand, rate.data(), load.data(), now_vt, si, sb,
					       k->n_split, pick);

		for (int j = 0; j < got; j++) {
			nl_mach_load *ld = &load[pick[j]];

			ld->busy_until_vt = std::max(ld->busy_until_vt, now_vt) +
					    nl_mach_service_vt(&mach[pick[j]], si, sb);
		}
		now_vt += 0.01;
		done++;
	}

	unsigned int
	sweep(unsigned int who)
	{
		const std::vector<uint32_t> &o = own[who];
		unsigned int busy = 0;

		for (size_t i = o.size(); i-- > 0;)
			busy += serve(o[i]);
		for (size_t i = 0; i < o.size(); i++)
			busy += serve(o[i]);
		polls[who] += 2 * o.size();
		return busy;
	}
};

int
disp_worker(void *arg)
{
	auto *d = static_cast<disp *>(arg);

	while (!d->peer.stopping())
		if (d->sweep(1) == 0)
			rte_pause();
	return 0;
}

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
	const unsigned int N = (unsigned int)st.range(0), n_lcore = (unsigned int)st.range(1);
	const bool worst = st.range(2) == 0;
	const unsigned int batch = (unsigned int)st.range(3);
	const double speeds[] = { 40e6, 60e6, 80e6, 100e6, 120e6, 140e6 };

	if (nl_bm_need_eal(st, n_lcore))
		return;
	disp d;
	const unsigned int M = 4u << N;

	d.n_res = N;
	d.mach.resize(M);
	d.load.assign(M, nl_mach_load{});
	std::vector<nl_resvec> vec(M);

	for (unsigned int i = 0; i < M; i++) {
		d.mach[i] = nl_machine{};
		d.mach[i].speed_class = i * 6u / M;
		d.mach[i].speed_ips = speeds[d.mach[i].speed_class];
		d.mach[i].link_bps = 10e6;
		d.mach[i].res.set = i & ((1u << N) - 1);
		vec[i] = d.mach[i].res;
	}
	d.rate.resize(M);
	nl_mach_rates_build(d.mach.data(), M, d.rate.data());
	if (nl_tree_build(&d.t, N, vec.data(), M, 0) != 0) {
		st.SkipWithError("nl_tree_build failed");
		return;
	}
	const struct nl_tree *t = d.t;
	const unsigned int split_level = n_lcore == 2 ? N / 2 : 0;
	std::vector<unsigned int> who(t->n_node);

	for (uint32_t id = 0; id < t->n_node; id++) {
		who[id] = t->node[id].level < split_level ? 1 : 0;
		d.own[who[id]].push_back(id);
	}
	d.ring.assign(t->n_node, nullptr);
	d.mp.assign(t->n_node, 0);
	for (uint32_t id = 0; id < t->n_node; id++) {
		const struct nl_tree_node *nd = &t->node[id];
		char name[RTE_RING_NAMESIZE];

		/* MP when its producers (parent, children; main injects into leaves) span lcores. */
		for (uint32_t p : { nd->parent, nd->child[0], nd->child[1] })
			if (p != NL_NODE_NONE && who[p] != who[id])
				d.mp[id] = 1;
		snprintf(name, sizeof(name), "bm_d%u_%u", disp_seq, id);
		d.ring[id] = rte_ring_create(name, 64, SOCKET_ID_ANY, 0);
		if (d.ring[id] == nullptr) {
			st.SkipWithError("rte_ring_create failed (memory? use a smaller N)");
			return;
		}
	}
	disp_seq++;
	/* Samples: vector of a random machine, start leaf opposite (worst) or random. */
	std::vector<sample> smp(n_sample);
	std::vector<nl_task> task(batch);
	struct nl_rng r;

	nl_rng_seed(&r, 0x64697370ULL + N * 4 + n_lcore * 2 + worst);
	for (auto &s : smp) {
		s.need = nl_rng_u64(&r) & nl_res_mask(N);
		uint64_t at = worst ? (~s.need & nl_res_mask(N)) : (nl_rng_u64(&r) & nl_res_mask(N));

		s.start = nl_tree_find(t, N, at);
	}
	for (auto &k : task) {
		k = nl_task{};
		k.n_split = 4;
		k.instr = 32e9;
		k.data_bits = 4e8;
	}
	const double bare_ns = bare_hop_ns();

	if (n_lcore == 2 && d.peer.start(disp_worker, &d) != 0) {
		st.SkipWithError("cannot launch the worker lcore");
		return;
	}
	uint64_t n = 0;
	unsigned int si = 0;
	auto w0 = std::chrono::steady_clock::now();
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		uint64_t target = d.done + batch;

		for (unsigned int b = 0; b < batch; b++) {
			nl_task *k = &task[b];
			const sample &s = smp[si];

			si = (si + 1) & (n_sample - 1);
			k->id = n + b;
			k->need = s.need;
			k->hops = 0;
			d.send(s.start, &k, 1);
		}
		while (d.done < target)
			if (d.sweep(0) == 0)
				rte_pause();
		n += batch;
	}
	uint64_t dt = nl_bm_tsc() - t0;
	std::chrono::duration<double, std::nano> wall = std::chrono::steady_clock::now() - w0;

	d.peer.join();
	/* Hops per task from the samples: a task climbs to the level where its start leaf's
	 * prefix stops matching its vector, then descends as far: 2 (N - common prefix). */
	uint64_t path = 0;

	for (const auto &s : smp)
		path += 2u * (N - nl_res_common_prefix(s.need, t->node[s.start].prefix, N));
	const double hpt = (double)path / n_sample;

	nl_bm_report(st, dt, n);
	st.counters["hops_per_task"] = hpt;
	st.counters["bare_hop_ns"] = bare_ns;
	st.counters["ratio_to_bare"] =
		n == 0 || bare_ns <= 0 ? 0.0 : (wall.count() / (double)n) / (hpt * bare_ns);
	st.counters["managers"] = t->n_node;
	st.counters["polls_per_task"] = n == 0 ? 0.0 : (double)d.polls[0] / (double)n;
}
BENCHMARK(BM_dispatch_path)
	->ArgNames({ "N", "lcores", "start", "batch" })
	->ArgsProduct({ { 4, 8 }, { 1, 2 }, { 0, 1 }, { 1, 32 } })
	->UseRealTime();
