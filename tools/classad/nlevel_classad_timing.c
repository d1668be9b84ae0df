/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-classad-timing: a small timing program for the ClassAd evaluator and the PluS
 * admission (the figures of docs/benchmarks.md (ClassAd); Google Benchmark's BM_classad_* in
 * nlevel-bench measure the same loops). Not a test.
 *
 *   nlevel-classad-timing [POLICY] [REPS]
 *
 * Prints, for the policy (default config/policies/fig4-simple.cad, 1000 acceptable nodes):
 * one evaluation [ns], and one admission decision for n = 1, 10, 100, 1000 of 1000 nodes [us]
 * — each the minimum over REPS (default 15) batches of the thread's CPU time, which is robust
 * to other processes sharing the cores, and the median wall time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nl_classad.h"
#include "nl_plus.h"

#define N_NODES 1000

static double
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double
wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: nlevel-classad-timing [POLICY] [REPS]\n"
		   "Times the ClassAd evaluator and the PluS admission of the reservation paper\n"
		   "(Nakada et al., 2007) on POLICY (default config/policies/fig4-simple.cad) with\n"
		   "%u acceptable nodes: one evaluation [ns], and one admission decision for\n"
		   "n = 1, 10, 100, 1000 nodes [us]; each the minimum over REPS batches (1..1000,\n"
		   "default 15) of the thread's CPU time, and the median wall time.\n"
		   "A timing program for docs/benchmarks.md, not a test.\n"
		   "Exit status: 0, or 2 on a bad command line or a policy that does not parse.\n",
		   N_NODES);
}

int
main(int argc, char **argv)
{
	const char *path = "config/policies/fig4-simple.cad";
	int reps = 15;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "nlevel-classad-timing: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	if (argc > 3) {
		fprintf(stderr, "nlevel-classad-timing: at most two arguments, POLICY and REPS\n");
		usage(stderr);
		return 2;
	}
	if (argc > 1)
		path = argv[1];
	if (argc > 2) {
		char *end;
		long v = strtol(argv[2], &end, 10);

		if (*end != '\0' || end == argv[2] || v < 1 || v > 1000) {
			fprintf(stderr, "nlevel-classad-timing: REPS must be an integer 1..1000, got "
					"'%s'\n", argv[2]);
			return 2;
		}
		reps = (int)v;
	}
	FILE *f = fopen(path, "rb");
	static char src[1 << 16];
	size_t len;
	struct nl_plus *pl;
	struct nl_cad_err e;

	if (f == NULL) {
		perror(path);
		return 2;
	}
	len = fread(src, 1, sizeof(src) - 1, f);
	fclose(f);
	if (nl_plus_create(src, len, N_NODES, &pl, &e) < 0) {
		fprintf(stderr, "%s:%u:%u: error: %s\n", path, e.line, e.col, e.msg);
		return 2;
	}
	nl_plus_set_now(pl, 1704067200);
	for (unsigned int i = 0; i < N_NODES; i++) {
		struct nl_plus_node nd = { .alive = true, .loadavg = 0.1 };

		snprintf(nd.name, sizeof(nd.name), "n%04u", i);
		nl_plus_node_set(pl, i, &nd);
	}
	/* one evaluation: bind the next candidate, evaluate PLUS_NODE_RESERVABLE */
	struct nl_cad_ctx *c = nl_plus_ctx(pl);
	const struct nl_cad_schema *sc_dummy = NULL;
	(void)sc_dummy;
	static const char *const names[] = { "name", "isAlive", "loadavg", "nRunJobs", "jobs" };
	static struct nl_cad_schema sc;
	static struct nl_cad_val vals[N_NODES][5];
	static struct nl_cad_rec recs[N_NODES];
	static struct nl_cad_val rv[N_NODES];
	static char nm[N_NODES][16];

	nl_cad_schema_init(&sc, names, 5);
	for (unsigned int i = 0; i < N_NODES; i++) {
		snprintf(nm[i], sizeof(nm[i]), "n%u", i);
		vals[i][0] = nl_cad_str(nm[i], (uint32_t)strlen(nm[i]));
		vals[i][1] = nl_cad_bool(true);
		vals[i][2] = nl_cad_real(0.1 * (i % 4));
		vals[i][3] = nl_cad_int(0);
		vals[i][4] = nl_cad_list(NULL, 0);
		recs[i].schema = &sc;
		recs[i].vals = vals[i];
		rv[i] = nl_cad_record(&recs[i]);
	}
	int s_cand = -1, s_ok = -1;

	{
		/* the manager's program: find its slots through a throwaway parse of the same text */
		struct nl_cad_prog *p;

		nl_cad_parse(src, len, &p, NULL);
		s_cand = nl_cad_slot(p, "PLUS_CANDIDATE_NODE");
		s_ok = nl_cad_slot(p, "PLUS_NODE_RESERVABLE");
		nl_cad_prog_free(p);
	}
	double *cpu = calloc((size_t)reps, sizeof(double)), *wall = calloc((size_t)reps, sizeof(double));
	const int n_eval = 200000;
	unsigned long yes = 0;

	for (int r = 0; r < reps; r++) {
		double c0 = cpu_ns(), w0 = wall_ns();

		for (int k = 0; k < n_eval; k++) {
			struct nl_cad_val v;

			nl_cad_bind(c, s_cand, &rv[k % N_NODES]);
			nl_cad_eval(c, s_ok, &v);
			yes += nl_cad_is_true(&v);
		}
		cpu[r] = (cpu_ns() - c0) / n_eval;
		wall[r] = (wall_ns() - w0) / n_eval;
	}
	qsort(cpu, (size_t)reps, sizeof(double), cmp_d);
	qsort(wall, (size_t)reps, sizeof(double), cmp_d);
	printf("policy %s, %d nodes, %d batches\n", path, N_NODES, reps);
	printf("eval          : %8.1f ns cpu (min)  %8.1f ns wall (median)  [%lu accepted]\n",
	       cpu[0], wall[reps / 2], yes);
	/* baseline from the same run: no compiled form kept, parse + context + evaluate per node */
	{
		const int n_base = 2000;

		for (int r = 0; r < reps; r++) {
			double c0 = cpu_ns(), w0 = wall_ns();

			for (int k = 0; k < n_base; k++) {
				struct nl_cad_prog *bp;
				struct nl_cad_ctx *bc;
				struct nl_cad_val v;

				if (nl_cad_parse(src, len, &bp, NULL) != 0)
					break;
				nl_cad_ctx_create(bp, &bc);
				nl_cad_bind(bc, nl_cad_slot(bp, "PLUS_CANDIDATE_NODE"), &rv[k % N_NODES]);
				nl_cad_eval(bc, nl_cad_slot(bp, "PLUS_NODE_RESERVABLE"), &v);
				yes += nl_cad_is_true(&v);
				nl_cad_ctx_free(bc);
				nl_cad_prog_free(bp);
			}
			cpu[r] = (cpu_ns() - c0) / n_base;
			wall[r] = (wall_ns() - w0) / n_base;
		}
		qsort(cpu, (size_t)reps, sizeof(double), cmp_d);
		qsort(wall, (size_t)reps, sizeof(double), cmp_d);
		printf("baseline      : %8.1f ns cpu (min)  %8.1f ns wall (median)  "
		       "[parse + evaluate per node, no compiled form kept]\n", cpu[0], wall[reps / 2]);
	}
	static const unsigned int ns[] = { 1, 10, 100, 1000 };
	uint32_t out[N_NODES];

	for (unsigned int t = 0; t < 4; t++) {
		struct nl_plus_req q = { "userX", 1704067200 + 3600, 1704067200 + 7200, ns[t] };
		int n_adm = (int)(200000 / ns[t]) + 20;
		int rc = 0;

		for (int r = 0; r < reps; r++) {
			double c0 = cpu_ns(), w0 = wall_ns();

			for (int k = 0; k < n_adm; k++)
				rc = nl_plus_admit(pl, &q, out, NULL);
			cpu[r] = (cpu_ns() - c0) / n_adm / 1000;
			wall[r] = (wall_ns() - w0) / n_adm / 1000;
		}
		qsort(cpu, (size_t)reps, sizeof(double), cmp_d);
		qsort(wall, (size_t)reps, sizeof(double), cmp_d);
		printf("admit %4u/%d: %8.3f us cpu (min)  %8.3f us wall (median)  %6.1f ns/node%s\n",
		       ns[t], N_NODES, cpu[0], wall[reps / 2], cpu[0] * 1000 / ns[t],
		       rc == (int)ns[t] ? "" : "  REFUSED");
	}
	free(cpu);
	free(wall);
	nl_plus_free(pl);
	return 0;
}
