/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Matching at the leaf (managers/nl_match.h, managers/match/nl_match_cad.h):
 *  - nl_match_pick() against a brute-force model on 20,000 random cases: only eligible, live
 *    machines; highest Rank first, then least expected completion, then lowest id; with fewer
 *    eligible live machines than sub-tasks, they share;
 *  - a task without a handle takes nl_pick_least_loaded()'s result exactly;
 *  - Requirements/Rank against machine records with HTCondor's reading (bare names and
 *    TARGET.x from the machine, undefined is not true, Rank not a number is 0), and
 *    syntax errors refused with where they are.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_match.h"
#include "nl_match_cad.h"
#include "nl_pick.h"
#include "nl_tap.h"

static uint64_t rs = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

struct key {
	double r, k;
	uint32_t id;
};

static int
cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->r != y->r)
		return x->r > y->r ? -1 : 1;
	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void
test_pick_model(void)
{
	unsigned int bad = 0, enospc_ok = 0;

	for (unsigned int it = 0; it < 20000; it++) {
		uint32_t n_mach = 1 + (uint32_t)(rnd() % 130), cand[130], n_cand = 0;
		struct nl_machine mach[130];
		struct nl_mach_rate rate[130];
		struct nl_mach_load load[130];
		struct nl_match_tab *tab = nl_match_tab_new(n_mach, 3, 1);
		unsigned int L = 1 + (unsigned int)(rnd() % 6);
		bool use_rank = rnd() & 1;
		uint32_t out[64];
		struct key k[130];
		unsigned int nk = 0;

		for (uint32_t m = 0; m < n_mach; m++) {
			mach[m].speed_ips = 1e8 * (double)(1 + rnd() % 4);
			mach[m].link_bps = 1e9;
			load[m].busy_until_vt = rnd() % 8 == 0 ? NL_MACH_GONE_VT : (double)(rnd() % 5);
			if (rnd() % 3 != 0)
				cand[n_cand++] = m;
			nl_match_tab_set(tab, 2, m, rnd() % 3 != 0, (double)(rnd() % 3));
		}
		if (use_rank)
			nl_match_tab_use_rank(tab, 2);
		nl_mach_rates_build(mach, n_mach, rate);
		int n = nl_match_pick(tab, 2, cand, n_cand, rate, load, 1.0, 1e8, 0, L, out);

		for (uint32_t c = 0; c < n_cand; c++) {
			uint32_t m = cand[c];
			double b = load[m].busy_until_vt;

			if (!((tab->ent[2].elig[m / 64] >> (m % 64)) & 1) || b >= NL_MACH_GONE_VT)
				continue;
			k[nk].r = use_rank ? tab->ent[2].rank[m] : 0;
			k[nk].k = (b > 1.0 ? b - 1.0 : 0) + nl_mach_rate_service_vt(&rate[m], 1e8, 0);
			k[nk++].id = m;
		}
		qsort(k, nk, sizeof(k[0]), cmp_key);
		if (nk == 0) {
			enospc_ok += n == -ENOSPC;
			bad += n != -ENOSPC;
		} else if (nk >= L) {
			if (n != (int)L)
				bad++;
			for (unsigned int i = 0; n == (int)L && i < L; i++)
				if (out[i] != k[i].id)
					bad++;
		} else { /* share: every output is one of the eligible live ones */
			for (int i = 0; i < n; i++) {
				bool in = false;

				for (unsigned int j = 0; j < nk; j++)
					in |= out[i] == k[j].id;
				bad += !in;
			}
			bad += n != (int)L;
		}
		nl_match_tab_free(tab);
	}
	nl_tap_ok(bad == 0 && enospc_ok > 0,
		  "nl_match_pick = model (Requirements filter, Rank, completion, id) on 20,000 random cases (%u wrong)", bad);
}

static void
test_no_handle_is_plain_pick(void)
{
	struct nl_machine mach[16];
	struct nl_mach_rate rate[16];
	struct nl_mach_load load[16];
	uint32_t cand[16], a[4], b[4];
	struct nl_task t = { .id = 1, .n_split = 4, .aux = 0 };
	int na, nb;

	for (uint32_t m = 0; m < 16; m++) {
		mach[m].speed_ips = 1e8 * (1 + m % 3);
		mach[m].link_bps = 1e9;
		load[m].busy_until_vt = (double)(m * 7 % 5);
		cand[m] = m;
	}
	nl_mach_rates_build(mach, 16, rate);
	na = nl_pick_least_loaded(cand, 16, rate, load, 0, 1e8, 0, 4, a);
	nb = nl_match_pick_task(&t, cand, 16, rate, load, 0, 1e8, 0, 4, b);
	nl_tap_ok(na == nb && memcmp(a, b, sizeof(a)) == 0,
		  "a task without a handle gets nl_pick_least_loaded()'s machines");
	uint32_t h_by_aux[1] = { 1 };

	nl_match_src.h_by_aux = h_by_aux;
	nl_match_src.n_aux = 1;
	nb = nl_match_pick_task(&t, cand, 16, rate, load, 0, 1e8, 0, 4, b);
	nl_tap_ok(nb == -ENOSPC, "a task with a handle but no published table finds no machine");
	struct nl_match_tab *tab = nl_match_tab_new(16, 2, 1);

	nl_match_tab_set(tab, 1, 9, true, 0);
	nl_match_src.tab = tab;
	nb = nl_match_pick_task(&t, cand, 16, rate, load, 0, 1e8, 0, 4, b);
	nl_tap_ok(nb == 4 && b[0] == 9 && b[3] == 9, "one eligible machine: all 4 sub-tasks share it");
	nl_match_src = (struct nl_match_src){ 0 };
	nl_match_tab_free(tab);
}

static bool
eval(const char *req, const char *rank, const char *ad, bool *ok, double *r)
{
	struct nl_match_expr *x;
	struct nl_match_mad *m = NULL;
	char err[200];

	if (nl_match_expr_compile(req, strlen(req), rank, strlen(rank), &x, err, sizeof(err)) != 0)
		return false;
	if (ad != NULL && nl_match_mad_parse(ad, strlen(ad), &m, err, sizeof(err)) != 0) {
		nl_match_expr_free(x);
		return false;
	}
	nl_match_expr_eval(x, m, ok, r);
	nl_match_expr_free(x);
	nl_match_mad_free(m);
	return true;
}

static void
test_classad(void)
{
	const char *ad = "Memory = 16384; Arch = \"X86_64\"; HasAvx2 = true; Mips = 2000; "
			 "Slots = Memory / 4096";
	bool ok;
	double r;

	nl_tap_ok(eval("Memory >= 16384 && Arch == \"X86_64\" && HasAvx2", "Mips", ad, &ok, &r) &&
			  ok && r == 2000,
		  "3-clause Requirements true, Rank = Mips (bare names read the machine record)");
	nl_tap_ok(eval("TARGET.Memory > 16384", "", ad, &ok, &r) && !ok && r == 0,
		  "TARGET.Memory > 16384 is false for 16384");
	nl_tap_ok(eval("Slots == 4", "", ad, &ok, &r) && ok,
		  "a record attribute computed from another (Slots = Memory / 4096) is a constant");
	nl_tap_ok(eval("HasGpu", "", ad, &ok, &r) && !ok,
		  "an attribute the machine lacks is undefined: not true");
	nl_tap_ok(eval("HasGpu =?= undefined", "Arch", ad, &ok, &r) && ok && r == 0,
		  "=?= undefined is true; a string Rank counts 0");
	nl_tap_ok(eval("", "", NULL, &ok, &r) && ok, "no Requirements: every machine, even without a record");
	nl_tap_ok(eval("Memory >= 1", "", NULL, &ok, &r) && !ok, "a machine without a record meets no Requirements on it");

	struct nl_match_expr *x = NULL;
	char err[200] = "";
	int rc = nl_match_expr_compile("Memory >= ", 10, "", 0, &x, err, sizeof(err));

	nl_tap_ok(rc == -EINVAL && strstr(err, "Requirements: line 1") != NULL,
		  "a Requirements syntax error is refused, saying where (%s)", err);
	rc = nl_match_expr_compile("true", 4, "Mips +", 6, &x, err, sizeof(err));
	nl_tap_ok(rc == -EDOM && strstr(err, "Rank") != NULL, "a Rank syntax error is -EDOM (%s)", err);
	struct nl_match_mad *m = NULL;

	rc = nl_match_mad_parse("Memory = ", 9, &m, err, sizeof(err));
	nl_tap_ok(rc == -EINVAL && strstr(err, "machine record") != NULL,
		  "a machine record syntax error is refused (%s)", err);
}

int
main(void)
{
	test_pick_model();
	test_no_handle_is_plain_pick();
	test_classad();
	printf("1..%u\n", nl_tap_n);
	return nl_tap_fail ? 1 : 0;
}
