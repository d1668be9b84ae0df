/* SPDX-License-Identifier: BSD-3-Clause */
/* nl_jobmix: rounding, learning = exact histogram, model file round trip and errors,
 * deterministic sampling, map support, submit profile (chi-square), distances. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_jobmix.h"
#include "nl_rng.h"
#include "nl_tap.h"

/* A skewed random log: node counts and walltimes cluster on a few values, like real ones. */
static void
make_jobs(struct nl_jobmix_job *j, size_t n, uint64_t seed)
{
	static const int64_t nodes[] = { 1, 1, 1, 2, 4, 8, 12, 13, 24, 64, 100 };
	static const int64_t wall[] = { 60, 600, 601, 1800, 3600, 14400, 36000, 86400 };
	struct nl_rng r;
	int64_t t = 0;

	nl_rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++) {
		t += (int64_t)nl_rng_exp(&r, 900.0);
		j[i].submit_s = t;
		j[i].nodes = nodes[nl_rng_u64(&r) % (sizeof(nodes) / sizeof(nodes[0]))];
		j[i].wall_s = wall[nl_rng_u64(&r) % (sizeof(wall) / sizeof(wall[0]))];
		j[i].run_s = (int64_t)(nl_rng_u64(&r) % (uint64_t)(j[i].wall_s + 120));
	}
}

static void
test_rounding_on_boundaries(void)
{
	nl_tap_ok(nl_jobmix_node_cell(1, 12) == 1 && nl_jobmix_node_cell(12, 12) == 1 &&
		  nl_jobmix_node_cell(13, 12) == 2 && nl_jobmix_node_cell(24, 12) == 2 &&
		  nl_jobmix_node_cell(25, 12) == 3 && nl_jobmix_node_cell(82944, 12) == 6912,
		  "node cell = ceil(nodes / U): 12 -> 1, 13 -> 2, 82944 -> 6912 with U = 12");
	nl_tap_ok(nl_jobmix_wall_cell(1, 600, 0) == 1 && nl_jobmix_wall_cell(600, 600, 0) == 1 &&
		  nl_jobmix_wall_cell(601, 600, 0) == 2 && nl_jobmix_wall_cell(86400, 600, 0) == 144 &&
		  nl_jobmix_wall_cell(86401, 600, 144) == 144 && nl_jobmix_wall_cell(0, 600, 0) == 1,
		  "walltime cell = ceil(wall / T): 600 -> 1, 601 -> 2, 24 h -> 144, capped");
	nl_tap_ok(nl_jobmix_ratio_cell(0, 1000) == 1 && nl_jobmix_ratio_cell(10, 1000) == 1 &&
		  nl_jobmix_ratio_cell(11, 1000) == 2 && nl_jobmix_ratio_cell(990, 1000) == 99 &&
		  nl_jobmix_ratio_cell(991, 1000) == 100 && nl_jobmix_ratio_cell(1000, 1000) == 100 &&
		  nl_jobmix_ratio_cell(5000, 1000) == 100,
		  "run-time cell = ceil(100 run / wall) in 1..100: 1.0 %% -> 1, 1.1 %% -> 2, "
		  "overrun -> 100");
}

static int
cmp_cell(const void *a, const void *b)
{
	const struct nl_jobmix_cell *x = a, *y = b;

	if (x->node_c != y->node_c)
		return x->node_c < y->node_c ? -1 : 1;
	if (x->wall_c != y->wall_c)
		return x->wall_c < y->wall_c ? -1 : 1;
	if (x->ratio_c != y->ratio_c)
		return x->ratio_c < y->ratio_c ? -1 : 1;
	return 0;
}

static const struct nl_jobmix_cell *
find_cell(const struct nl_jobmix_model *m, uint32_t n, uint32_t w, uint32_t r)
{
	struct nl_jobmix_cell k = { .node_c = n, .wall_c = w, .ratio_c = r };

	return bsearch(&k, m->cell, m->n_cell, sizeof(k), cmp_cell);
}

static void
test_learned_map_is_exact_histogram(const struct nl_jobmix_model *m,
				    const struct nl_jobmix_job *j, size_t n)
{
	uint64_t total = 0;
	bool sorted = true, counts_ok = true;
	size_t bad = 0;
	uint64_t *recount = calloc(m->n_cell, sizeof(*recount));

	for (size_t i = 0; i < m->n_cell; i++) {
		total += m->cell[i].count;
		if (i > 0 && cmp_cell(&m->cell[i - 1], &m->cell[i]) >= 0)
			sorted = false;
	}
	/* Count again, job by job, with the rounding functions. */
	for (size_t i = 0; i < n; i++) {
		const struct nl_jobmix_cell *c = find_cell(
			m, nl_jobmix_node_cell(j[i].nodes, m->u.node_unit),
			nl_jobmix_wall_cell(j[i].wall_s, m->u.time_unit_s, m->u.wall_cells),
			nl_jobmix_ratio_cell(j[i].run_s, j[i].wall_s));

		if (c == NULL)
			bad++;
		else
			recount[c - m->cell]++;
	}
	for (size_t i = 0; i < m->n_cell; i++)
		if (recount[i] != m->cell[i].count)
			counts_ok = false;
	nl_tap_ok(sorted && total == n && bad == 0 && counts_ok,
		  "learned map = the input's histogram: %zu cells, every job in its cell, "
		  "counts equal, sum %" PRIu64 " = %zu jobs", m->n_cell, total, n);
	nl_tap_ok(nl_jobmix_joint_tv(j, n, j, n, &m->u) == 0.0,
		  "joint distance of a log to itself is 0");
	{
		struct nl_jobmix_job x = { .nodes = 1, .wall_s = 600, .run_s = 10 };
		struct nl_jobmix_job y[2] = { { .nodes = 1, .wall_s = 600, .run_s = 10 },
					      { .nodes = 50, .wall_s = 600, .run_s = 10 } };
		double d1 = nl_jobmix_joint_tv(&x, 1, &y[1], 1, &m->u);
		double d2 = nl_jobmix_joint_tv(&x, 1, y, 2, &m->u);

		nl_tap_ok(d1 == 1.0 && fabs(d2 - 0.5) < 1e-12,
			  "joint distance: disjoint cells 1 (%.3f), half overlap 0.5 (%.3f)", d1, d2);
	}
	free(recount);
}

/* Normal model: G groups of equal job count per parameter, ordered by value, each a normal
 * whose mean lies in its range; the weights sum to 1. */
static void
test_normal_groups(const struct nl_jobmix_model *m, unsigned int g)
{
	bool ok = true;

	for (unsigned int p = 0; p < NL_JOBMIX_P__COUNT; p++) {
		double w = 0;

		if (m->n_grp[p] != g)
			ok = false;
		for (unsigned int k = 0; k < m->n_grp[p]; k++) {
			const struct nl_jobmix_group *gr = &m->grp[p][k];

			w += gr->weight;
			if (gr->mean < gr->lo || gr->mean > gr->hi || gr->sd < 0 ||
			    fabs(gr->weight - 1.0 / g) > 1e-3 ||
			    (k > 0 && gr->lo < m->grp[p][k - 1].hi))
				ok = false;
		}
		if (fabs(w - 1) > 1e-9 || m->lo[p] != m->grp[p][0].lo ||
		    m->hi[p] != m->grp[p][m->n_grp[p] - 1].hi)
			ok = false;
	}
	nl_tap_ok(ok, "normal model: %u equal-count groups per parameter, ordered, weights sum "
		  "to 1, means inside their ranges", g);
}

static void
test_model_file_round_trip(const struct nl_jobmix_model *m)
{
	char *buf = NULL, err[NL_JOBMIX_ERR_LEN] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct nl_jobmix_model b;
	int rc;
	bool same;

	nl_jobmix_model_write(m, f);
	fclose(f);
	rc = nl_jobmix_model_load_string(&b, "mem", buf, err, sizeof(err));
	same = rc == 0 && b.n_cell == m->n_cell && b.n_jobs == m->n_jobs &&
	       memcmp(b.slot, m->slot, sizeof(b.slot)) == 0 && b.u.node_unit == m->u.node_unit &&
	       b.u.time_unit_s == m->u.time_unit_s && b.u.wall_cells == m->u.wall_cells &&
	       b.rate_per_s == m->rate_per_s && strcmp(b.zone, m->zone) == 0;
	for (size_t i = 0; same && i < m->n_cell; i++)
		same = cmp_cell(&b.cell[i], &m->cell[i]) == 0 && b.cell[i].count == m->cell[i].count;
	for (unsigned int p = 0; same && p < NL_JOBMIX_P__COUNT; p++) {
		same = b.n_grp[p] == m->n_grp[p];
		for (unsigned int k = 0; same && k < m->n_grp[p]; k++)
			same = memcmp(&b.grp[p][k], &m->grp[p][k], sizeof(b.grp[p][k])) == 0;
	}
	nl_tap_ok(same, "model file round trip keeps cells, groups, profile, units exactly (%s)",
		  rc ? err : "ok");
	nl_jobmix_model_free(&b);
	free(buf);
}

static void
test_bad_model_lines(void)
{
	static const char head[] = "jobmix 1\njobs 3\nnode_unit 1\ntime_unit_s 600\n"
				   "wall_cells 10\nrate_per_s 0.01\nstart_unix_s 0\n";
	static const struct {
		const char *tail;
		const char *want;
	} c[] = {
		{ "cell 1 2 3 3\nbogus 1\nend\n", "mem:9: unknown keyword 'bogus'" },
		{ "cell 1 11 3 3\nend\n", "mem:8: walltime cell 11 out of range" },
		{ "cell 1 2 101 3\nend\n", "mem:8: run-time cell 101 out of range" },
		{ "cell 1 2 x 3\nend\n", "mem:8: expected 'cell" },
		{ "cell 1 2 3 2\ncell 1 2 3 1\nend\n", "mem:9: cells must be strictly ascending" },
		{ "cell 1 2 3 3\nslot 7 0 1\nend\n", "mem:9: expected 'slot" },
		{ "cell 1 2 3 3\nnormal nodes 1 2 -1 1 3\nend\n", "mem:9: need 0 < WEIGHT" },
		{ "cell 1 2 3 3\n", "mem: no 'end' line" },
		{ "cell 1 2 3 2\nend\n", "mem: cells hold 2 jobs" },
		{ "cell 1 2 3 3\nend\ncell 1 2 4 1\n", "mem:10: text after 'end'" },
		{ "max_nodes 2\ncell 3 2 3 3\nend\n",
		  "mem:9: node cell 3 holds 3..3 nodes, above max_nodes 2" },
		{ "cell 1 2 3 3\nmax_nodes 4\nend\n", "mem:9: max_nodes after the first cell" },
		{ "cell 1 2 3 9223372036854775808\ncell 1 2 4 9223372036854775808\nend\n",
		  "mem:8: cells hold more than 'jobs' 3 jobs" },
		{ "start_unix_s 253402300800\ncell 1 2 3 3\nend\n", "mem:8: start_unix_s must be" },
		{ "start_unix_s 67768036191676800\ncell 1 2 3 3\nend\n",
		  "mem:8: start_unix_s must be" },
		{ "start_unix_s -1\ncell 1 2 3 3\nend\n", "mem:8: start_unix_s must be" },
	};
	bool all = true;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char text[1024], err[NL_JOBMIX_ERR_LEN] = "";
		struct nl_jobmix_model m;
		int rc;

		snprintf(text, sizeof(text), "%s%s", head, c[i].tail);
		rc = nl_jobmix_model_load_string(&m, "mem", text, err, sizeof(err));
		if (rc != -EINVAL || strstr(err, c[i].want) == NULL) {
			nl_tap_diag("case %zu: rc %d, err '%s', want '%s'", i, rc, err, c[i].want);
			all = false;
		}
		nl_jobmix_model_free(&m);
	}
	nl_tap_ok(all, "bad model lines fail with -EINVAL and 'NAME:LINE: reason'");
	{
		char err[NL_JOBMIX_ERR_LEN] = "";
		struct nl_jobmix_model m;
		int rc = nl_jobmix_model_load_string(&m, "mem", "jobmix 1\njobs 1\nend\n", err,
						     sizeof(err));

		nl_tap_ok(rc == -EINVAL && strstr(err, "mem: missing 'node_unit'") != NULL,
			  "a model without a required key names the key (%s)", err);
		rc = nl_jobmix_model_load_string(&m, "mem", "jobs 1\n", err, sizeof(err));
		nl_tap_ok(rc == -EINVAL && strstr(err, "mem:1:") != NULL,
			  "a file that is not a model fails on line 1 (%s)", err);
	}
}

/* Cell counts that wrap uint64_t (2 x 2^63 = 0 = 'jobs') are refused on their line, wherever
 * 'jobs' is; a model whose counts sum to 0 is refused by generate (no division by 0). */
static void
test_cell_counts_do_not_wrap(void)
{
	static const char *const text[] = {
		"jobmix 1\nnode_unit 1\ntime_unit_s 600\nwall_cells 10\nrate_per_s 0.01\n"
		"start_unix_s 0\ncell 1 2 3 9223372036854775808\ncell 1 2 4 9223372036854775808\n"
		"jobs 0\nend\n",
		"jobmix 1\njobs 0\nnode_unit 1\ntime_unit_s 600\nwall_cells 10\nrate_per_s 0.01\n"
		"start_unix_s 0\ncell 1 2 3 9223372036854775808\ncell 1 2 4 9223372036854775808\n"
		"end\n",
		"jobmix 1\nnode_unit 1\ntime_unit_s 600\nwall_cells 10\nrate_per_s 0.01\n"
		"start_unix_s 0\ncell 1 2 3 18446744073709551615\ncell 1 2 4 1\nend\n",
	};
	static const char *const want[] = {
		"mem:8: cell counts add up to more than 18446744073709551615 jobs",
		"mem:8: cells hold more than 'jobs' 0 jobs",
		"mem:8: cell counts add up to more than",
	};
	bool all = true;

	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		char err[NL_JOBMIX_ERR_LEN] = "";
		struct nl_jobmix_model m;
		int rc = nl_jobmix_model_load_string(&m, "mem", text[i], err, sizeof(err));

		if (rc != -EINVAL || strstr(err, want[i]) == NULL) {
			nl_tap_diag("case %zu: rc %d, err '%s', want '%s'", i, rc, err, want[i]);
			all = false;
		}
		nl_jobmix_model_free(&m);
	}
	nl_tap_ok(all, "cell counts whose sum wraps uint64_t are refused with NAME:LINE");
	{
		struct nl_jobmix_model m;
		struct nl_jobmix_cell cell = { .node_c = 1, .wall_c = 1, .ratio_c = 1, .count = 0 };
		uint64_t cum = 0;
		struct nl_jobmix_gen g = { .method = NL_JOBMIX_MAP, .seed = 1 };
		struct nl_jobmix_job j;

		memset(&m, 0, sizeof(m));
		m.u.node_unit = 1;
		m.u.time_unit_s = 600;
		m.u.wall_cells = 1;
		m.max_nodes = 1;
		m.rate_per_s = 0.01;
		m.slot[0] = 1;
		m.cell = &cell;
		m.cum = &cum;
		m.n_cell = 1;
		nl_tap_ok(nl_jobmix_generate(&m, &g, &j, 1) == -EINVAL,
			  "generate refuses a map whose counts sum to 0");
	}
}

/* Times of week are defined for every int64 (no localtime_r() failure turns them into a
 * constant 0), and a start time far outside 1970..9999 in an in-memory model still gives a
 * mix that ends, in the one non-empty slot. */
static void
test_time_of_week_total(void)
{
	const int64_t cyc = INT64_C(12622780800); /* 400 years */
	static const int64_t t[] = { INT64_MAX, INT64_MIN, INT64_C(67768036191676800),
				     INT64_C(1600000000000000000), -1, 0 };
	bool in_range = true;

	nl_jobmix_set_zone("UTC");
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int64_t a = nl_jobmix_tow_s(t[i]), b = nl_jobmix_tow_at_s(t[i], t[i]),
			c = nl_jobmix_tow_at_s(t[i], -t[i] / 2 - 1);

		if (a < 0 || a >= NL_JOBMIX_WEEK_S || b < 0 || b >= NL_JOBMIX_WEEK_S || c < 0 ||
		    c >= NL_JOBMIX_WEEK_S)
			in_range = false;
	}
	nl_tap_ok(in_range && nl_jobmix_tow_s(1000000000 + 700000000 * cyc) ==
				      nl_jobmix_tow_s(1000000000) &&
			  nl_jobmix_tow_s(1000000000) == 6 * 86400 + 1 * 3600 + 46 * 60 + 40,
		  "time of week is defined for every int64 and keeps the weekday across 400-year "
		  "cycles (Sun 2001-09-09 01:46:40 UTC: %" PRId64 " s)",
		  nl_jobmix_tow_s(1000000000));
	{
		struct nl_jobmix_model m;
		struct nl_jobmix_cell cell = { .node_c = 1, .wall_c = 1, .ratio_c = 50, .count = 1 };
		uint64_t cum = 1;
		struct nl_jobmix_gen g = { .method = NL_JOBMIX_MAP, .seed = 3 };
		struct nl_jobmix_job j[50];
		static const int64_t start[] = { INT64_C(67768036191676800), INT64_MAX - 10 };
		bool ok = true;

		memset(&m, 0, sizeof(m));
		m.u.node_unit = 1;
		m.u.time_unit_s = 600;
		m.u.wall_cells = 1;
		m.max_nodes = 1;
		m.rate_per_s = 1.0 / 3600;
		m.slot[100] = 5; /* Thursday 04:00 only */
		m.cell = &cell;
		m.cum = &cum;
		m.n_cell = 1;
		for (size_t k = 0; k < 2; k++) {
			m.start_unix_s = start[k];
			if (nl_jobmix_generate(&m, &g, j, 50) != 0)
				ok = false;
			for (size_t i = 0; ok && i < 50; i++)
				if (nl_jobmix_tow_at_s(m.start_unix_s, j[i].submit_s) / 3600 != 100)
					ok = false;
		}
		nl_tap_ok(ok, "generate with a start time beyond localtime_r() ends and puts every "
			  "job in the one non-empty slot");
	}
}

static void
test_sampling(const struct nl_jobmix_model *m, uint64_t seed)
{
	const size_t n = 50000;
	struct nl_jobmix_job *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
	struct nl_jobmix_gen g = { .method = NL_JOBMIX_MAP, .seed = seed };
	size_t outside = 0, not_back = 0, decreasing = 0, wider = 0;

	nl_jobmix_generate(m, &g, a, n);
	nl_jobmix_generate(m, &g, b, n);
	nl_tap_ok(memcmp(a, b, n * sizeof(*a)) == 0, "map sampling with a fixed seed is "
		  "deterministic (%zu jobs)", n);
	g.seed = seed + 1;
	nl_jobmix_generate(m, &g, b, n);
	nl_tap_ok(memcmp(a, b, n * sizeof(*a)) != 0, "another seed gives another mix");
	for (size_t i = 0; i < n; i++) {
		const struct nl_jobmix_cell *c = find_cell(
			m, nl_jobmix_node_cell(a[i].nodes, m->u.node_unit),
			nl_jobmix_wall_cell(a[i].wall_s, m->u.time_unit_s, 0),
			nl_jobmix_ratio_cell(a[i].run_s, a[i].wall_s));

		/* representative: the cell's upper bound n U, clamped to the machine */
		int64_t rep = c == NULL ? 0 : (int64_t)c->node_c * m->u.node_unit;

		if (rep > m->max_nodes)
			rep = m->max_nodes;
		if (c == NULL)
			outside++;
		else if (a[i].nodes != rep || a[i].wall_s != (int64_t)c->wall_c * m->u.time_unit_s)
			not_back++;
		if (a[i].nodes > m->max_nodes)
			wider++;
		if (i > 0 && a[i].submit_s < a[i - 1].submit_s)
			decreasing++;
	}
	nl_tap_ok(outside == 0 && not_back == 0,
		  "every map-generated job rounds back to a cell the map holds (%zu outside, "
		  "%zu off the cell's representative min(n U, max_nodes))", outside, not_back);
	nl_tap_ok(wider == 0 && m->max_nodes % m->u.node_unit != 0,
		  "no map job is wider than the machine, %" PRId64 " nodes, not a multiple of U = "
		  "%u (%zu wider)", m->max_nodes, m->u.node_unit, wider);
	nl_tap_ok(decreasing == 0 && a[0].submit_s >= 0, "submit times are non-decreasing");

	g.method = NL_JOBMIX_NORMAL;
	g.seed = seed;
	nl_jobmix_generate(m, &g, a, n);
	nl_jobmix_generate(m, &g, b, n);
	{
		bool in_range = true;

		for (size_t i = 0; i < n; i++)
			if (a[i].nodes < 1 || a[i].nodes > m->max_nodes || a[i].wall_s < 1 ||
			    a[i].run_s < 0 || a[i].run_s > a[i].wall_s)
				in_range = false;
		nl_tap_ok(memcmp(a, b, n * sizeof(*a)) == 0 && in_range,
			  "normal sampling is deterministic and stays in range");
	}
	free(a);
	free(b);
}

/* Submit profile: a skewed weekday/hour profile in UTC from a Monday 00:00; over whole weeks
 * each slot occurs equally often, so expected counts are proportional to the slot weights. */
static void
test_submit_profile_chi_square(uint64_t seed)
{
	const size_t n = 200000;
	struct nl_jobmix_model m;
	struct nl_jobmix_cell cell = { .node_c = 1, .wall_c = 1, .ratio_c = 50, .count = 1 };
	uint64_t cum = 1, obs[NL_JOBMIX_SLOTS] = { 0 }, wsum = 0, used = 0;
	struct nl_jobmix_job *j = calloc(n, sizeof(*j));
	struct nl_jobmix_gen g = { .method = NL_JOBMIX_MAP, .seed = seed };
	double chi = 0;
	int64_t end;
	unsigned int df = 0;

	memset(&m, 0, sizeof(m));
	m.u.node_unit = 1;
	m.u.time_unit_s = 600;
	m.u.wall_cells = 1;
	m.n_jobs = 1;
	m.max_nodes = 1;
	m.start_unix_s = 345600; /* Mon 1970-01-05 00:00 UTC */
	snprintf(m.zone, sizeof(m.zone), "UTC");
	m.rate_per_s = 200.0 / 3600.0;
	for (unsigned int s = 0; s < NL_JOBMIX_SLOTS; s++) {
		unsigned int d = s / 24, h = s % 24;

		/* working hours busy, nights quiet, Sunday night empty */
		m.slot[s] = (d >= 5 ? 1 : 3) * (h >= 9 && h < 18 ? 10 : 2);
		if (d == 6 && h < 6)
			m.slot[s] = 0;
		wsum += m.slot[s];
	}
	m.cell = &cell;
	m.cum = &cum;
	m.n_cell = 1;
	nl_jobmix_set_zone("UTC");
	nl_jobmix_generate(&m, &g, j, n);
	end = j[n - 1].submit_s / NL_JOBMIX_WEEK_S * NL_JOBMIX_WEEK_S;
	for (size_t i = 0; i < n && j[i].submit_s < end; i++) {
		obs[nl_jobmix_tow_s(m.start_unix_s + j[i].submit_s) / 3600]++;
		used++;
	}
	for (unsigned int s = 0; s < NL_JOBMIX_SLOTS; s++) {
		double e = (double)used * (double)m.slot[s] / (double)wsum;

		if (m.slot[s] == 0) {
			if (obs[s] != 0)
				chi = INFINITY;
			continue;
		}
		chi += ((double)obs[s] - e) * ((double)obs[s] - e) / e;
		df++;
	}
	df--;
	/* chi-square 0.999 quantile, Wilson-Hilferty for df ~ 161: about df + 3.09 sqrt(2 df) */
	nl_tap_ok(used > n / 2 && chi < df + 3.09 * sqrt(2.0 * df) + 10,
		  "submit times follow the weekday/hour profile: chi-square %.1f on %u df over "
		  "%" PRIu64 " jobs, empty slots stay empty", chi, df, used);
	{
		/* whole weeks only: the profile makes a partial week busier or quieter */
		double rate = (double)used / ((double)end / 86400.0);

		nl_tap_ok(fabs(rate / (200.0 * 24) - 1) < 0.02,
			  "overall rate is the configured one: %.0f jobs/day for 4800", rate);
	}
	free(j);
}

static void
test_ks(void)
{
	double a[] = { 1, 2, 3, 4 }, b[] = { 1, 2, 3, 4 }, c[] = { 5, 6 }, d[] = { 1, 1, 2, 2 },
	       e[] = { 1, 2 };

	nl_tap_ok(nl_jobmix_ks(a, 4, b, 4) == 0.0, "KS of equal samples is 0");
	nl_tap_ok(nl_jobmix_ks(a, 4, c, 2) == 1.0, "KS of disjoint samples is 1");
	nl_tap_ok(fabs(nl_jobmix_ks(d, 4, e, 2)) < 1e-12,
		  "KS treats ties: {1,1,2,2} vs {1,2} is 0");
	{
		double x[] = { 1, 2, 3, 4 }, y[] = { 3, 4, 5, 6 };

		nl_tap_ok(fabs(nl_jobmix_ks(x, 4, y, 4) - 0.5) < 1e-12,
			  "KS of {1..4} vs {3..6} is 0.5");
	}
}

static void
test_learn_rejects(void)
{
	struct nl_jobmix_units u;
	struct nl_jobmix_model m;
	struct nl_jobmix_job j = { .submit_s = 0, .nodes = 0, .wall_s = 60, .run_s = 1 };
	char err[NL_JOBMIX_ERR_LEN] = "";

	nl_jobmix_units_default(&u);
	nl_tap_ok(nl_jobmix_learn(&m, &u, &j, 0, 0, err, sizeof(err)) == -EINVAL &&
		  strstr(err, "no jobs") != NULL, "learning from no job is refused (%s)", err);
	nl_tap_ok(nl_jobmix_learn(&m, &u, &j, 1, 0, err, sizeof(err)) == -EINVAL &&
		  strstr(err, "job 1") != NULL, "a job with 0 nodes is refused by index (%s)", err);
	u.time_unit_s = 60;
	j.nodes = 1;
	nl_tap_ok(nl_jobmix_learn(&m, &u, &j, 1, 0, err, sizeof(err)) == -EINVAL,
		  "a walltime unit under 100 s is refused (%s)", err);
	nl_jobmix_units_default(&u);
	nl_tap_ok(nl_jobmix_learn(&m, &u, &j, 1, INT64_C(1600000000000000000), err,
				  sizeof(err)) == -EINVAL &&
			  strstr(err, "UnixStartTime 1600000000000000000 is outside") != NULL &&
			  nl_jobmix_learn(&m, &u, &j, 1, -1, err, sizeof(err)) == -EINVAL,
		  "a start time outside 1970..9999 (here in ns) is refused (%s)", err);
	j.nodes = NL_JOBMIX_MAX_NODES + 1;
	nl_tap_ok(nl_jobmix_learn(&m, &u, &j, 1, 0, err, sizeof(err)) == -EINVAL,
		  "a job wider than 2^40 nodes is refused (the model could not be read back)");
}

/* Every model learn writes loads back: a source name with '#', blanks and a newline is
 * written as one word; a zone that could not be read back is refused by the writer. */
static void
test_written_model_loads_back(void)
{
	struct nl_jobmix_units u;
	struct nl_jobmix_model m, b;
	struct nl_jobmix_job j[3] = { { 0, 4, 60, 10 }, { 100, 13, 3600, 3600 }, { 200, 1, 60, 0 } };
	char *buf = NULL, err[NL_JOBMIX_ERR_LEN] = "";
	size_t len = 0;
	FILE *f;
	int rc, wrc;

	nl_jobmix_units_default(&u);
	u.node_unit = 12;
	nl_jobmix_set_zone("UTC");
	rc = nl_jobmix_learn(&m, &u, j, 3, 1000000000, err, sizeof(err));
	snprintf(m.source, sizeof(m.source), "#hash\nx y\r.swf");
	m.max_nodes = 13;
	f = open_memstream(&buf, &len);
	wrc = nl_jobmix_model_write(&m, f);
	fclose(f);
	rc |= nl_jobmix_model_load_string(&b, "mem", buf, err, sizeof(err));
	nl_tap_ok(rc == 0 && wrc == 0 && strcmp(b.source, "_hash_x_y_.swf") == 0 &&
			  b.n_cell == m.n_cell && b.max_nodes == 13,
		  "a model with '#', blanks and a newline in its source loads back (%s)",
		  rc ? err : b.source);
	if (rc == 0)
		nl_jobmix_model_free(&b);
	free(buf);
	buf = NULL;
	snprintf(m.zone, sizeof(m.zone), "#1");
	f = open_memstream(&buf, &len);
	wrc = nl_jobmix_model_write(&m, f);
	fclose(f);
	nl_tap_ok(wrc == -EINVAL && len == 0, "a zone that could not be read back ('#1') is "
		  "refused by the writer, nothing written");
	free(buf);
	nl_jobmix_model_free(&m);
}

int
main(void)
{
	uint64_t seed = nl_tap_seed(42);
	const size_t n = 30000;
	struct nl_jobmix_job *j = calloc(n, sizeof(*j));
	struct nl_jobmix_units u;
	struct nl_jobmix_model m;
	char err[NL_JOBMIX_ERR_LEN] = "";
	int rc;

	nl_jobmix_set_zone("Europe/Stockholm");
	test_rounding_on_boundaries();
	make_jobs(j, n, seed);
	nl_jobmix_units_default(&u);
	u.node_unit = 12;
	u.time_unit_s = 600;
	rc = nl_jobmix_learn(&m, &u, j, n, 843480031, err, sizeof(err));
	nl_tap_ok(rc == 0 && m.n_jobs == n && m.u.wall_cells == 144,
		  "learn: %zu jobs, U = 12, T = 600 s, cap from data = 144 cells (%s)", n,
		  rc ? err : "ok");
	if (rc == 0) {
		test_learned_map_is_exact_histogram(&m, j, n);
		test_normal_groups(&m, u.groups);
		test_model_file_round_trip(&m);
		test_sampling(&m, seed);
		nl_jobmix_model_free(&m);
	}
	test_bad_model_lines();
	test_cell_counts_do_not_wrap();
	test_time_of_week_total();
	test_written_model_loads_back();
	test_submit_profile_chi_square(seed);
	test_ks();
	test_learn_rejects();
	free(j);
	return nl_tap_done();
}
