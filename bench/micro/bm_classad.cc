/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BM_classad_eval_fig4: one evaluation of seed 004's Fig. 4 policy (PLUS_NODE_RESERVABLE)
 * against a bound node record; the candidate changes every iteration (1000 nodes, round robin),
 * the compiled policy does not. Items = evaluations.
 *
 * BM_classad_admission/n: one whole admission decision of PluS (nl_plus_admit) for n nodes out
 * of 1000, Fig. 4 policy, every node acceptable (as in seed 004 §6, where the Fig. 4 evaluation
 * always succeeds, so the walk stops after n nodes). Items = nodes evaluated. Seed 004 Fig. 9
 * (Java ClassAd): 3.9 / 43.0 / 1,167.0 / 72,897.8 us for n = 1 / 10 / 100 / 1000.
 */
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bm_common.h"

#include "nl_classad.h"
#include "nl_plus.h"

namespace {

constexpr unsigned int n_nodes = 1000;

std::string
fig4_policy()
{
	std::string path = std::string(NL_BENCH_SRC_ROOT) + "/config/policies/fig4-simple.cad";
	FILE *f = fopen(path.c_str(), "rb");
	std::string s;
	char buf[4096];
	size_t k;

	if (f == nullptr)
		return s;
	while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
		s.append(buf, k);
	fclose(f);
	return s;
}

void
BM_classad_eval_fig4(benchmark::State &st)
{
	std::string src = fig4_policy();
	struct nl_cad_prog *p = nullptr;
	struct nl_cad_ctx *c = nullptr;
	static const char *const names[] = { "name", "isAlive", "loadavg", "nRunJobs", "jobs" };
	struct nl_cad_schema sc;
	std::vector<nl_cad_val> vals(n_nodes * 5);
	std::vector<nl_cad_rec> recs(n_nodes);
	std::vector<nl_cad_val> rv(n_nodes);
	std::vector<std::string> nm(n_nodes);

	if (src.empty() || nl_cad_parse(src.data(), src.size(), &p, nullptr) != 0 ||
	    nl_cad_ctx_create(p, &c) != 0) {
		st.SkipWithError("cannot load config/policies/fig4-simple.cad");
		return;
	}
	nl_cad_schema_init(&sc, names, 5);
	for (unsigned int i = 0; i < n_nodes; i++) {
		nm[i] = "n" + std::to_string(i);
		nl_cad_val *v = &vals[i * 5];

		v[0] = nl_cad_str(nm[i].c_str(), (uint32_t)nm[i].size());
		v[1] = nl_cad_bool(true);
		v[2] = nl_cad_real(0.1 * (i % 4));
		v[3] = nl_cad_int(0);
		v[4] = nl_cad_list(nullptr, 0);
		recs[i] = nl_cad_rec{ &sc, v };
		rv[i] = nl_cad_record(&recs[i]);
	}
	int s_cand = nl_cad_slot(p, "PLUS_CANDIDATE_NODE");
	int s_ok = nl_cad_slot(p, "PLUS_NODE_RESERVABLE");
	uint64_t n = 0, yes = 0;
	unsigned int i = 0;
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		nl_cad_val v;

		nl_cad_bind(c, s_cand, &rv[i]);
		nl_cad_eval(c, s_ok, &v);
		yes += nl_cad_is_true(&v);
		if (++i == n_nodes)
			i = 0;
		n++;
	}
	benchmark::DoNotOptimize(yes);
	nl_bm_report(st, nl_bm_tsc() - t0, n);
	st.counters["accepted_pct"] = n ? 100.0 * (double)yes / (double)n : 0;
	nl_cad_ctx_free(c);
	nl_cad_prog_free(p);
}
BENCHMARK(BM_classad_eval_fig4);

void
BM_classad_admission(benchmark::State &st)
{
	unsigned int want = (unsigned int)st.range(0);
	std::string src = fig4_policy();
	struct nl_plus *pl = nullptr;

	if (src.empty() || nl_plus_create(src.data(), src.size(), n_nodes, &pl, nullptr) != 0) {
		st.SkipWithError("cannot load config/policies/fig4-simple.cad");
		return;
	}
	for (unsigned int i = 0; i < n_nodes; i++) {
		struct nl_plus_node nd = {};

		snprintf(nd.name, sizeof(nd.name), "n%04u", i);
		nd.alive = true;
		nd.loadavg = 0.1;
		nl_plus_node_set(pl, i, &nd);
	}
	std::vector<uint32_t> out(want);
	struct nl_plus_req q = { "userX", 1704067200 + 3600, 1704067200 + 7200, want };
	uint64_t n = 0;
	int rc = 0;
	uint64_t t0 = nl_bm_tsc();

	for (auto _ : st) {
		rc = nl_plus_admit(pl, &q, out.data(), nullptr);
		n += want;
	}
	nl_bm_report(st, nl_bm_tsc() - t0, n);
	if (rc != (int)want)
		st.SkipWithError("admission refused");
	st.counters["nodes"] = want;
	nl_plus_free(pl);
}
BENCHMARK(BM_classad_admission)->ArgName("n")->Arg(1)->Arg(10)->Arg(100)->Arg(1000);

} // namespace
