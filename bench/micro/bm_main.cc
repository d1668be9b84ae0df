/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-bench: Google Benchmark harness of nlevel, with its own main() so the EAL comes up
 * before the benchmarks that use rte_ring and several lcores.
 *
 * Command line, DPDK style:  nlevel-bench [EAL args] -- [benchmark args]
 * Without "--" (or with nothing before it) every argument goes to Google Benchmark and the
 * EAL is initialised with
 * "--no-huge --no-pci --no-shconf -l 0-1" (or -l 0 on one CPU). NL_BENCH_NO_EAL=1 skips the
 * EAL: the benchmarks that need it then report "EAL not initialised" and the others run.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "bm_common.h"

#ifdef NL_BENCH_HAVE_DPDK
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#endif

bool nl_bm_eal_ok = false;
unsigned int nl_bm_n_lcore = 1;

#ifdef NL_BENCH_HAVE_DPDK
static void
eal_up(std::vector<char *> &eal)
{
	int rc;

	rc = rte_eal_init((int)eal.size(), eal.data());
	if (rc < 0) {
		fprintf(stderr, "nlevel-bench: EAL init failed (%s); EAL benchmarks are skipped\n",
			rte_strerror(rte_errno));
		return;
	}
	nl_bm_eal_ok = true;
	nl_bm_n_lcore = rte_lcore_count();
}
#endif

int
main(int argc, char **argv)
{
	std::vector<char *> eal, bm;
	static char a_nohuge[] = "--no-huge", a_nopci[] = "--no-pci", a_noshconf[] = "--no-shconf";
	static char a_l[] = "-l", a_l01[] = "0-1", a_l0[] = "0", a_log[] = "--log-level=lib.*:error";
	int dd = -1;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dd = i;
			break;
		}
	eal.push_back(argv[0]);
	bm.push_back(argv[0]);
	if (dd > 1) {
		for (int i = 1; i < dd; i++)
			eal.push_back(argv[i]);
		for (int i = dd >= 0 ? dd + 1 : 1; i < argc; i++)
			bm.push_back(argv[i]);
	} else {
		eal.push_back(a_nohuge);
		eal.push_back(a_nopci);
		eal.push_back(a_noshconf);
		eal.push_back(a_log);
		eal.push_back(a_l);
		eal.push_back(sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? a_l01 : a_l0);
		for (int i = dd >= 0 ? dd + 1 : 1; i < argc; i++)
			bm.push_back(argv[i]);
	}
	bool help = false;

	for (size_t i = 1; i < bm.size(); i++)
		if (strcmp(bm[i], "--help") == 0 || strcmp(bm[i], "-h") == 0)
			help = true;
	if (help) {
		/* Google Benchmark prints its own options and exits in Initialize() */
		printf("nlevel-bench: nlevel's micro-benchmarks (Google Benchmark): the resource tree\n"
		       "and routing step, least-loaded picking, 2LSC decisions, the discrete-event\n"
		       "simulator, wire frames, rte_ring hops and one-task dispatch across lcores, QSBR\n"
		       "load tables (RCU) and the ClassAd evaluator. Figures and the commands that\n"
		       "produced them: docs/benchmarks.md.\n"
		       "  nlevel-bench [--benchmark_filter=REGEX ...]\n"
		       "      the EAL comes up with --no-huge --no-pci --no-shconf -l 0-1\n"
		       "  nlevel-bench EAL-ARGS -- [--benchmark_filter=REGEX ...]\n"
		       "      DPDK style: EAL arguments first, then '--', then Google Benchmark's\n"
		       "      (e.g. nlevel-bench -l 2-3 --no-huge -- --benchmark_filter=BM_ring)\n"
		       "  NL_BENCH_NO_EAL=1 skips the EAL; the benchmarks needing it then say so.\n"
		       "Google Benchmark's options:\n");
		fflush(stdout);
	}
#ifdef NL_BENCH_HAVE_DPDK
	const char *no_eal = getenv("NL_BENCH_NO_EAL");

	if (!help && (no_eal == NULL || strcmp(no_eal, "1") != 0))
		eal_up(eal);
#endif
	std::string cmd;

	for (int i = 0; i < argc; i++)
		cmd += (i ? " " : "") + std::string(argv[i]);
	benchmark::AddCustomContext("command", cmd);
	benchmark::AddCustomContext("eal", nl_bm_eal_ok ? "up" : "down");
	benchmark::AddCustomContext("lcores", std::to_string(nl_bm_n_lcore));
	int bm_argc = (int)bm.size();

	bm.push_back(nullptr);
	benchmark::Initialize(&bm_argc, bm.data());
	if (benchmark::ReportUnrecognizedArguments(bm_argc, bm.data()))
		return 1;
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
#ifdef NL_BENCH_HAVE_DPDK
	if (nl_bm_eal_ok)
		rte_eal_cleanup();
#endif
	return 0;
}
