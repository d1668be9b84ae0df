/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: an SWF trace as a user hands it to nlevel-sim (sim/batch/nl_swf.h),
 * then the batch engine on the jobs it yields (sim/batch/nl_batch.h).
 *
 * For every input:
 *  - nl_swf_load_string() either parses it or refuses it with an error that names the input
 *    ("fuzz:LINE: ..." or "fuzz: ...");
 *  - a parsed trace written back (nl_swf_write_file()) parses again to the same records and
 *    the same header entries (docs/batch.md "Round trip");
 *  - the records kept by nl_swf_rigid() (default rules) become rigid jobs (at most 256, sorted
 *    by submit time, stable) and run on an 8-CPU machine under FCFS, FirstFit, EASY and
 *    conservative backfilling with the invariant checker of tests/batch/batch_check.h: no
 *    CPU used twice, every runnable job runs exactly once, EASY / conservative keep their
 *    reservations, and jobs that ran + unrunnable = jobs;
 *  - then again with the submit times scaled by 0.35, as nlevel-sim's submit_scale does
 *    (config/hpc2500.ini): fractional times whose sums round (docs/batch.md "Time
 *    arithmetic"; a conservative I4 break was reachable that way).
 * Any violation aborts, which libFuzzer reports with the input.
 * Built and run by tests/batch/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_check.h"
#include "nl_swf.h"

#define FUZZ_MAX_JOBS 256u
#define FUZZ_CPUS 8u

static void
fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_swf: %s: %s\n", what, detail ? detail : "");
	abort();
}

static int
same_num(double a, double b)
{
	return a == b || (a != a && b != b);
}

static void
check_round_trip(const struct nl_swf *t)
{
	char *buf = NULL, err[NL_SWF_ERR_LEN];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct nl_swf *u = NULL;

	if (f == NULL)
		return;
	if (nl_swf_write_file(t, f) != 0) {
		fclose(f);
		free(buf);
		fail("write", "nl_swf_write_file() failed on a trace it parsed");
	}
	fclose(f);
	if (nl_swf_load_string(&u, "rt", buf, err, sizeof(err)) != 0)
		fail("round trip: the written trace does not parse", err);
	if (u->n_job != t->n_job || u->n_hdr != t->n_hdr)
		fail("round trip", "record or header count changed");
	for (size_t i = 0; i < t->n_job; i++) {
		const struct nl_swf_job *a = &t->job[i], *b = &u->job[i];

		if (a->id != b->id || a->submit_s != b->submit_s || a->wait_s != b->wait_s ||
		    a->run_s != b->run_s || a->alloc_procs != b->alloc_procs ||
		    !same_num(a->avg_cpu_s, b->avg_cpu_s) || !same_num(a->used_mem_kb, b->used_mem_kb) ||
		    a->req_procs != b->req_procs || a->req_time_s != b->req_time_s ||
		    !same_num(a->req_mem_kb, b->req_mem_kb) || a->status != b->status ||
		    a->user != b->user || a->group != b->group || a->exe != b->exe ||
		    a->queue != b->queue || a->partition != b->partition ||
		    a->prev_job != b->prev_job || a->think_s != b->think_s)
			fail("round trip", "a record changed");
	}
	for (size_t i = 0; i < t->n_hdr; i++) {
		const struct nl_swf_hdr *a = &t->hdr[i], *b = &u->hdr[i];

		if ((a->key == NULL) != (b->key == NULL) || (a->key && strcmp(a->key, b->key)) ||
		    strcmp(a->value, b->value))
			fail("round trip", "a header entry changed");
	}
	nl_swf_free(u);
	free(buf);
}

/* Submit times x this in the second round (config/hpc2500.ini's submit_scale). */
#define FUZZ_SUBMIT_SCALE 0.35

static void
run_engine(const struct nl_swf *t)
{
	static const enum nl_batch_policy pol[] = { NL_BATCH_FCFS, NL_BATCH_FIRSTFIT, NL_BATCH_EASY,
						    NL_BATCH_CONSERVATIVE };
	struct nl_batch_job *j = calloc(FUZZ_MAX_JOBS, sizeof(*j)), *k = NULL;
	size_t n = 0;
	struct nl_batch_sys sys;

	if (j == NULL)
		return;
	for (size_t i = 0; i < t->n_job && n < FUZZ_MAX_JOBS; i++) {
		struct nl_swf_rigid r;

		if (nl_swf_rigid(&t->job[i], NULL, &r) != NL_SWF_KEEP)
			continue;
		if (r.procs < 1 || r.run_s < 0 || r.est_s < r.run_s)
			fail("nl_swf_rigid", "kept a record outside its documented ranges");
		j[n] = chk_job((double)t->job[i].submit_s, (double)r.run_s, (double)r.est_s,
			       r.procs > UINT32_MAX ? UINT32_MAX : (uint32_t)r.procs);
		/* stable insertion by submit time, as nl_batch_jobs_from_swf() sorts */
		for (size_t p = n; p > 0 && j[p - 1].submit_s > j[p].submit_s; p--) {
			struct nl_batch_job x = j[p];

			j[p] = j[p - 1];
			j[p - 1] = x;
		}
		n++;
	}
	k = malloc((n ? n : 1) * sizeof(*k));
	chk_one_queue(&sys, FUZZ_CPUS);
	for (unsigned int r = 0; k != NULL && r < 2 * sizeof(pol) / sizeof(pol[0]); r++) {
		unsigned int p = r % (sizeof(pol) / sizeof(pol[0]));
		bool scaled = r >= sizeof(pol) / sizeof(pol[0]);
		struct nl_batch_scenario sc = { .policy = pol[p], .qsel = NL_BATCH_QSEL_AUTO };
		struct nl_batch_stats st;
		struct chk c;
		struct nl_batch_hooks hk = { chk_on_ev, &c };
		int rc;

		memcpy(k, j, n * sizeof(*k));
		for (size_t i = 0; scaled && i < n; i++)
			k[i].submit_s *= FUZZ_SUBMIT_SCALE;
		chk_init(&c, &sys, &sc, k, n);
		rc = nl_batch_run(&sys, &sc, k, n, &st, &hk);
		if (rc == 0)
			chk_done(&c);
		if (rc != 0)
			fail("nl_batch_run", "refused sorted, filtered jobs");
		if (c.errors != 0) {
			char msg[400];

			snprintf(msg, sizeof(msg), "policy %d (nl_batch_policy), %zu jobs%s: %s",
				 (int)pol[p], n, scaled ? ", submit times x 0.35" : "", c.first);
			fail("invariant", msg);
		}
		if (st.jobs + st.unrunnable != n)
			fail("accounting", "jobs that ran + unrunnable != jobs");
		chk_fini(&c);
	}
	free(k);
	free(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[NL_SWF_ERR_LEN] = "";
	struct nl_swf *t = NULL;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (nl_swf_load_string(&t, "fuzz", text, err, sizeof(err)) != 0) {
		if (t != NULL || strncmp(err, "fuzz", 4) != 0)
			fail("a refused input's error does not name it", err);
		free(text);
		return 0;
	}
	check_round_trip(t);
	run_engine(t);
	nl_swf_free(t);
	free(text);
	return 0;
}
