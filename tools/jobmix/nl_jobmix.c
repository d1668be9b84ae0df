/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Job-mix models (seed 001 §4): learning, the model file, sampling, distances.
 * See nl_jobmix.h for the rounding rules and docs/jobmix.md for the file format.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nl_jobmix.h"
#include "nl_rng.h"

static const char *const param_name[NL_JOBMIX_P__COUNT] = { "nodes", "wall_s", "ratio" };

static void
set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

void
nl_jobmix_units_default(struct nl_jobmix_units *u)
{
	u->node_unit = 1;
	u->time_unit_s = 300;
	u->wall_cells = 0;
	u->groups = 4;
}

uint32_t
nl_jobmix_node_cell(int64_t nodes, uint32_t unit)
{
	int64_t c;

	if (nodes < 1)
		return 1;
	c = nodes / (int64_t)unit + (nodes % (int64_t)unit != 0);
	return c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

uint32_t
nl_jobmix_wall_cell(int64_t wall_s, uint32_t unit_s, uint32_t cap)
{
	int64_t c;

	if (wall_s < 1)
		return 1;
	c = wall_s / (int64_t)unit_s + (wall_s % (int64_t)unit_s != 0);
	if (cap != 0 && c > (int64_t)cap)
		c = cap;
	return c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

uint32_t
nl_jobmix_ratio_cell(int64_t run_s, int64_t wall_s)
{
	int64_t c;

	if (run_s <= 0 || wall_s <= 0)
		return 1;
	if (run_s >= wall_s)
		return NL_JOBMIX_RATIO_CELLS;
	/* run_s < wall_s here; ceil(100 run / wall) without overflowing 100 * run_s */
	if (run_s <= INT64_MAX / 100)
		c = (100 * run_s + wall_s - 1) / wall_s;
	else
		c = (int64_t)ceill((long double)run_s * 100.0L / (long double)wall_s);
	if (c > (int64_t)NL_JOBMIX_RATIO_CELLS)
		c = NL_JOBMIX_RATIO_CELLS;
	return c < 1 ? 1 : (uint32_t)c;
}

/* 400 Gregorian years = 146,097 days = 20,871 weeks: calendar and weekday repeat [s]. */
#define CYCLE_400Y_S INT64_C(12622780800)

/* x modulo the 400-year cycle, in 0..CYCLE_400Y_S-1. */
static int64_t
fold_400y(int64_t x)
{
	int64_t r = x % CYCLE_400Y_S;

	return r < 0 ? r + CYCLE_400Y_S : r;
}

/* Local time of week of t, or -1 when time_t cannot hold t or localtime_r() fails. */
static int64_t
tow_local(int64_t unix_s)
{
	time_t t = (time_t)unix_s;
	struct tm tm;

	if ((int64_t)t != unix_s || localtime_r(&t, &tm) == NULL)
		return -1;
	return (int64_t)((tm.tm_wday + 6) % 7) * 86400 + tm.tm_hour * 3600 + tm.tm_min * 60 +
	       (tm.tm_sec > 59 ? 59 : tm.tm_sec);
}

int64_t
nl_jobmix_tow_s(int64_t unix_s)
{
	int64_t tow = tow_local(unix_s), f;

	if (tow >= 0)
		return tow;
	f = fold_400y(unix_s);
	tow = tow_local(f);
	if (tow >= 0)
		return tow;
	/* UTC: 1970-01-01 was a Thursday, day 3 of a Monday-based week */
	return ((f / 86400 + 3) % 7) * 86400 + f % 86400;
}

int64_t
nl_jobmix_tow_at_s(int64_t start_unix_s, int64_t off_s)
{
	if ((off_s > 0 && start_unix_s > INT64_MAX - off_s) ||
	    (off_s < 0 && start_unix_s < INT64_MIN - off_s))
		return nl_jobmix_tow_s(fold_400y(start_unix_s) + fold_400y(off_s));
	return nl_jobmix_tow_s(start_unix_s + off_s);
}

int
nl_jobmix_set_zone(const char *zone)
{
	if (zone == NULL || zone[0] == '\0' || strlen(zone) >= 64)
		return -EINVAL;
	if (setenv("TZ", zone, 1) != 0)
		return -errno;
	tzset();
	return 0;
}

/* ---- learning ---- */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Cell key: node cell (32 bits) | wall cell (24 bits) | ratio cell (8 bits); sorts as the
 * (node_c, wall_c, ratio_c) triple. */
static uint64_t
cell_key(uint32_t n, uint32_t w, uint32_t r)
{
	return ((uint64_t)n << 32) | ((uint64_t)(w & 0xffffffu) << 8) | (r & 0xffu);
}

#define NL_JOBMIX_MAX_WALL_CELLS 0xffffffu

static int
build_cum(struct nl_jobmix_model *m)
{
	uint64_t acc = 0;

	free(m->cum);
	m->cum = malloc((m->n_cell ? m->n_cell : 1) * sizeof(*m->cum));
	if (m->cum == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_cell; i++) {
		acc += m->cell[i].count;
		m->cum[i] = acc;
	}
	return 0;
}

/* Normal groups of one parameter: sorted values split into g parts of equal count. */
static void
learn_groups(struct nl_jobmix_model *m, enum nl_jobmix_param p, double *v, size_t n,
	     unsigned int g)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	m->lo[p] = v[0];
	m->hi[p] = v[n - 1];
	if (g > n)
		g = (unsigned int)n;
	m->n_grp[p] = 0;
	for (unsigned int k = 0; k < g; k++) {
		size_t a = n * k / g, b = n * (k + 1) / g;
		double s = 0, s2 = 0, mean;
		struct nl_jobmix_group *gr;

		if (b <= a)
			continue;
		for (size_t i = a; i < b; i++)
			s += v[i];
		mean = s / (double)(b - a);
		for (size_t i = a; i < b; i++)
			s2 += (v[i] - mean) * (v[i] - mean);
		gr = &m->grp[p][m->n_grp[p]++];
		gr->weight = (double)(b - a) / (double)n;
		gr->mean = mean;
		gr->sd = sqrt(s2 / (double)(b - a));
		gr->lo = v[a];
		gr->hi = v[b - 1];
	}
}

static int
check_units(const struct nl_jobmix_units *u, char *err, size_t len)
{
	if (u->node_unit < 1) {
		set_err(err, len, "node unit must be >= 1");
		return -EINVAL;
	}
	if (u->time_unit_s < NL_JOBMIX_MIN_TIME_UNIT_S) {
		set_err(err, len, "walltime unit must be >= %u s (so that every 1 %% run-time cell "
			"holds a whole second)", NL_JOBMIX_MIN_TIME_UNIT_S);
		return -EINVAL;
	}
	if (u->groups < 1 || u->groups > NL_JOBMIX_MAX_GROUPS) {
		set_err(err, len, "groups must be 1..%u", NL_JOBMIX_MAX_GROUPS);
		return -EINVAL;
	}
	if (u->wall_cells > NL_JOBMIX_MAX_WALL_CELLS) {
		set_err(err, len, "walltime cap above %u cells", NL_JOBMIX_MAX_WALL_CELLS);
		return -EINVAL;
	}
	return 0;
}

int
nl_jobmix_learn(struct nl_jobmix_model *m, const struct nl_jobmix_units *u,
		const struct nl_jobmix_job *jobs, size_t n, int64_t start_unix_s, char *err,
		size_t len)
{
	uint64_t *key = NULL;
	double *v = NULL;
	int64_t max_wall = 0, max_nodes = 0, t0 = INT64_MAX, t1 = INT64_MIN;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = check_units(u, err, len);
	if (rc != 0)
		return rc;
	if (n == 0) {
		set_err(err, len, "no jobs to learn from");
		return -EINVAL;
	}
	if (start_unix_s < 0 || start_unix_s > NL_JOBMIX_START_MAX_S) {
		set_err(err, len, "UnixStartTime %" PRId64 " is outside 0..%" PRId64 " s (1970 to "
			"9999)%s", start_unix_s, NL_JOBMIX_START_MAX_S,
			start_unix_s > NL_JOBMIX_START_MAX_S ? "; milliseconds or nanoseconds?"
							     : "");
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].nodes < 1 || jobs[i].nodes > NL_JOBMIX_MAX_NODES || jobs[i].wall_s < 1 ||
		    jobs[i].run_s < 0) {
			set_err(err, len, "job %zu: nodes %" PRId64 ", walltime %" PRId64
				" s, run time %" PRId64 " s out of range", i + 1, jobs[i].nodes,
				jobs[i].wall_s, jobs[i].run_s);
			return -EINVAL;
		}
		if (jobs[i].wall_s > max_wall)
			max_wall = jobs[i].wall_s;
		if (jobs[i].nodes > max_nodes)
			max_nodes = jobs[i].nodes;
		if (jobs[i].submit_s < t0)
			t0 = jobs[i].submit_s;
		if (jobs[i].submit_s > t1)
			t1 = jobs[i].submit_s;
	}
	m->u = *u;
	if (m->u.wall_cells == 0) {
		int64_t w = (max_wall + u->time_unit_s - 1) / u->time_unit_s;

		if (w > (int64_t)NL_JOBMIX_MAX_WALL_CELLS) {
			set_err(err, len, "a requested walltime of %" PRId64 " s is more than %u cells "
				"of %u s; cap the map with --max-walltime S (longer requests are "
				"clamped to it) or widen --time-unit", max_wall,
				NL_JOBMIX_MAX_WALL_CELLS, u->time_unit_s);
			return -EINVAL;
		}
		m->u.wall_cells = (uint32_t)w;
	}
	m->n_jobs = n;
	m->max_nodes = max_nodes;
	m->start_unix_s = start_unix_s;
	snprintf(m->zone, sizeof(m->zone), "%s", "UTC");
	/* Rate: n jobs over the submit span, one day at least (in double: t1 - t0 may not fit). */
	{
		double span = (double)t1 - (double)t0;

		m->rate_per_s = (double)n / (span > 86400 ? span : 86400);
	}

	key = malloc(n * sizeof(*key));
	v = malloc(n * sizeof(*v));
	if (key == NULL || v == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct nl_jobmix_job *j = &jobs[i];
		uint32_t wc = nl_jobmix_wall_cell(j->wall_s, m->u.time_unit_s, 0);

		if (wc > m->u.wall_cells) {
			wc = m->u.wall_cells;
			m->n_clamped++;
		}
		key[i] = cell_key(nl_jobmix_node_cell(j->nodes, m->u.node_unit), wc,
				  nl_jobmix_ratio_cell(j->run_s, j->wall_s));
		m->slot[nl_jobmix_tow_at_s(start_unix_s, j->submit_s) / 3600]++;
	}
	qsort(key, n, sizeof(*key), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || key[i] != key[i - 1])
			m->n_cell++;
	m->cell = calloc(m->n_cell, sizeof(*m->cell));
	if (m->cell == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0, c = 0; i < n; i++) {
		if (i > 0 && key[i] != key[i - 1])
			c++;
		m->cell[c].node_c = (uint32_t)(key[i] >> 32);
		m->cell[c].wall_c = (uint32_t)(key[i] >> 8) & 0xffffffu;
		m->cell[c].ratio_c = (uint32_t)key[i] & 0xffu;
		m->cell[c].count++;
	}
	rc = build_cum(m);
	if (rc != 0)
		goto out;

	for (size_t i = 0; i < n; i++)
		v[i] = (double)jobs[i].nodes;
	learn_groups(m, NL_JOBMIX_P_NODES, v, n, u->groups);
	for (size_t i = 0; i < n; i++)
		v[i] = (double)jobs[i].wall_s;
	learn_groups(m, NL_JOBMIX_P_WALL, v, n, u->groups);
	for (size_t i = 0; i < n; i++) {
		double r = (double)jobs[i].run_s / (double)jobs[i].wall_s;

		v[i] = r > 1.0 ? 1.0 : r;
	}
	learn_groups(m, NL_JOBMIX_P_RATIO, v, n, u->groups);
	rc = 0;
out:
	free(key);
	free(v);
	if (rc != 0) {
		if (rc == -ENOMEM)
			set_err(err, len, "out of memory");
		nl_jobmix_model_free(m);
	}
	return rc;
}

void
nl_jobmix_model_free(struct nl_jobmix_model *m)
{
	if (m == NULL)
		return;
	free(m->cell);
	free(m->cum);
	m->cell = NULL;
	m->cum = NULL;
	m->n_cell = 0;
}

/* ---- model file ---- */

/* A byte the model reader would split a word on or take as the start of a comment. */
static bool
bad_word_char(unsigned char ch)
{
	return ch <= ' ' || ch == 0x7f || ch == '#';
}

int
nl_jobmix_model_write(const struct nl_jobmix_model *m, FILE *f)
{
	char src[sizeof(m->source)];
	size_t k;

	/* The zone means something: refuse one that cannot be read back, rather than change it. */
	if (m->zone[0] == '\0')
		return -EINVAL;
	for (k = 0; k < sizeof(m->zone) && m->zone[k] != '\0'; k++)
		if (bad_word_char((unsigned char)m->zone[k]))
			return -EINVAL;
	/* The source is a label: one word, no '#' (docs/jobmix.md "Model file"). */
	for (k = 0; k + 1 < sizeof(src) && m->source[k] != '\0'; k++)
		src[k] = bad_word_char((unsigned char)m->source[k]) ? '_' : m->source[k];
	src[k] = '\0';
	fprintf(f, "# nlevel-jobmix model (docs/jobmix.md); Uno et al. §4.1.1 normal groups, "
		"§4.1.2 probability-distribution map, §3.6 submit profile\n");
	fprintf(f, "jobmix 1\n");
	fprintf(f, "source %s\n", src[0] ? src : "-");
	fprintf(f, "jobs %" PRIu64 "\n", m->n_jobs);
	fprintf(f, "clamped %" PRIu64 "\n", m->n_clamped);
	fprintf(f, "node_unit %u\n", m->u.node_unit);
	fprintf(f, "time_unit_s %u\n", m->u.time_unit_s);
	fprintf(f, "wall_cells %u\n", m->u.wall_cells);
	fprintf(f, "max_nodes %" PRId64 "\n", m->max_nodes);
	fprintf(f, "start_unix_s %" PRId64 "\n", m->start_unix_s);
	fprintf(f, "zone %.*s\n", (int)sizeof(m->zone), m->zone);
	fprintf(f, "rate_per_s %.17g\n", m->rate_per_s);
	fprintf(f, "# slot WEEKDAY(0=Mon) HOUR JOBS\n");
	for (unsigned int s = 0; s < NL_JOBMIX_SLOTS; s++)
		fprintf(f, "slot %u %u %" PRIu64 "\n", s / 24, s % 24, m->slot[s]);
	fprintf(f, "# normal PARAM WEIGHT MEAN SD LO HI   (PARAM nodes | wall_s | ratio)\n");
	for (unsigned int p = 0; p < NL_JOBMIX_P__COUNT; p++)
		for (unsigned int k = 0; k < m->n_grp[p]; k++) {
			const struct nl_jobmix_group *g = &m->grp[p][k];

			fprintf(f, "normal %s %.17g %.17g %.17g %.17g %.17g\n", param_name[p],
				g->weight, g->mean, g->sd, g->lo, g->hi);
		}
	fprintf(f, "# cell NODE_CELL WALL_CELL RATIO_CELL JOBS   (%zu cells)\n", m->n_cell);
	for (size_t i = 0; i < m->n_cell; i++)
		fprintf(f, "cell %u %u %u %" PRIu64 "\n", m->cell[i].node_c, m->cell[i].wall_c,
			m->cell[i].ratio_c, m->cell[i].count);
	fprintf(f, "end\n");
	return ferror(f) ? -EIO : 0;
}

/* Parse an unsigned integer token fully; false on junk or overflow. */
static bool
tok_u64(const char *s, uint64_t *out)
{
	char *e;
	unsigned long long v;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno != 0 || *e != '\0')
		return false;
	*out = v;
	return true;
}

static bool
tok_i64(const char *s, int64_t *out)
{
	char *e;
	long long v;

	if (s == NULL || s[0] == '\0')
		return false;
	errno = 0;
	v = strtoll(s, &e, 10);
	if (errno != 0 || *e != '\0')
		return false;
	*out = v;
	return true;
}

static bool
tok_dbl(const char *s, double *out)
{
	char *e;

	if (s == NULL || s[0] == '\0')
		return false;
	errno = 0;
	*out = strtod(s, &e);
	return errno == 0 && *e == '\0' && isfinite(*out);
}

#define MAX_TOK 8

struct parse {
	struct nl_jobmix_model *m;
	const char *name;
	char *err;
	size_t len;
	size_t cap_cell;
	uint64_t cell_sum; /* jobs in the cells read so far (checked not to wrap) */
	unsigned int seen; /* bit per required key */
	bool ended;
};

enum {
	K_VERSION = 1u << 0,
	K_JOBS = 1u << 1,
	K_NODE_UNIT = 1u << 2,
	K_TIME_UNIT = 1u << 3,
	K_WALL_CELLS = 1u << 4,
	K_RATE = 1u << 5,
	K_START = 1u << 6,
	K_ALL = (1u << 7) - 1,
};

static const char *const key_name[] = { "jobmix", "jobs", "node_unit", "time_unit_s",
					"wall_cells", "rate_per_s", "start_unix_s" };

static int
parse_line(struct parse *ps, unsigned int lineno, char *line)
{
	struct nl_jobmix_model *m = ps->m;
	char *tok[MAX_TOK + 1], *save = NULL;
	unsigned int nt = 0;
	uint64_t a, b, c, d;

#define BAD(...)                                                                          \
	do {                                                                              \
		char msg_[256];                                                           \
		snprintf(msg_, sizeof(msg_), __VA_ARGS__);                                \
		set_err(ps->err, ps->len, "%s:%u: %s", ps->name, lineno, msg_);           \
		return -EINVAL;                                                           \
	} while (0)

	for (char *t = strtok_r(line, " \t\r", &save); t != NULL; t = strtok_r(NULL, " \t\r", &save)) {
		if (t[0] == '#')
			break;
		if (nt == MAX_TOK)
			BAD("too many fields");
		tok[nt++] = t;
	}
	if (nt == 0)
		return 0;
	tok[nt] = NULL;
	if (ps->ended)
		BAD("text after 'end'");
	if (strcmp(tok[0], "jobmix") == 0) {
		if (nt != 2 || strcmp(tok[1], "1") != 0)
			BAD("expected 'jobmix 1' (format version 1)");
		ps->seen |= K_VERSION;
		return 0;
	}
	if (!(ps->seen & K_VERSION))
		BAD("expected 'jobmix 1' before '%s'", tok[0]);
	if (strcmp(tok[0], "end") == 0) {
		if (nt != 1)
			BAD("'end' takes no value");
		ps->ended = true;
		return 0;
	}
	if (strcmp(tok[0], "source") == 0 || strcmp(tok[0], "zone") == 0) {
		if (nt != 2)
			BAD("'%s' takes one word", tok[0]);
		if (tok[0][0] == 's')
			snprintf(m->source, sizeof(m->source), "%s", tok[1]);
		else if (strlen(tok[1]) >= sizeof(m->zone))
			BAD("zone name too long");
		else
			snprintf(m->zone, sizeof(m->zone), "%s", tok[1]);
		return 0;
	}
	if (strcmp(tok[0], "slot") == 0) {
		if (nt != 4 || !tok_u64(tok[1], &a) || !tok_u64(tok[2], &b) || !tok_u64(tok[3], &c) ||
		    a > 6 || b > 23)
			BAD("expected 'slot WEEKDAY(0..6) HOUR(0..23) JOBS'");
		m->slot[a * 24 + b] = c;
		return 0;
	}
	if (strcmp(tok[0], "cell") == 0) {
		struct nl_jobmix_cell *cl;

		if (nt != 5 || !tok_u64(tok[1], &a) || !tok_u64(tok[2], &b) || !tok_u64(tok[3], &c) ||
		    !tok_u64(tok[4], &d))
			BAD("expected 'cell NODE_CELL WALL_CELL RATIO_CELL JOBS'");
		if (!(ps->seen & K_WALL_CELLS))
			BAD("'cell' before 'wall_cells'");
		if (!(ps->seen & K_NODE_UNIT))
			BAD("'cell' before 'node_unit'");
		/* a, node_unit < 2^32: (a - 1) * node_unit fits */
		if (a < 1 || a > UINT32_MAX ||
		    (a - 1) * m->u.node_unit >= (uint64_t)NL_JOBMIX_MAX_NODES)
			BAD("node cell %" PRIu64 " out of range (its smallest job, (cell - 1) x "
			    "node_unit + 1 nodes, must be <= 2^40)", a);
		if (m->max_nodes >= 1 && (a - 1) * m->u.node_unit >= (uint64_t)m->max_nodes)
			BAD("node cell %" PRIu64 " holds %" PRIu64 "..%" PRIu64 " nodes, above "
			    "max_nodes %" PRId64, a, (a - 1) * m->u.node_unit + 1,
			    a * m->u.node_unit, m->max_nodes);
		if (b < 1 || b > m->u.wall_cells)
			BAD("walltime cell %" PRIu64 " out of range 1..%u", b, m->u.wall_cells);
		if (c < 1 || c > NL_JOBMIX_RATIO_CELLS)
			BAD("run-time cell %" PRIu64 " out of range 1..%u", c, NL_JOBMIX_RATIO_CELLS);
		if (d < 1)
			BAD("cell with 0 jobs");
		if (d > UINT64_MAX - ps->cell_sum)
			BAD("cell counts add up to more than %" PRIu64 " jobs", UINT64_MAX);
		ps->cell_sum += d;
		if ((ps->seen & K_JOBS) && ps->cell_sum > m->n_jobs)
			BAD("cells hold more than 'jobs' %" PRIu64 " jobs", m->n_jobs);
		if (m->n_cell > 0) {
			const struct nl_jobmix_cell *p = &m->cell[m->n_cell - 1];

			if (cell_key((uint32_t)a, (uint32_t)b, (uint32_t)c) <=
			    cell_key(p->node_c, p->wall_c, p->ratio_c))
				BAD("cells must be strictly ascending by (node, wall, ratio)");
		}
		if (m->n_cell == ps->cap_cell) {
			size_t nc = ps->cap_cell ? 2 * ps->cap_cell : 1024;
			void *p = realloc(m->cell, nc * sizeof(*m->cell));

			if (p == NULL)
				BAD("out of memory");
			m->cell = p;
			ps->cap_cell = nc;
		}
		cl = &m->cell[m->n_cell++];
		cl->node_c = (uint32_t)a;
		cl->wall_c = (uint32_t)b;
		cl->ratio_c = (uint32_t)c;
		cl->count = d;
		return 0;
	}
	if (strcmp(tok[0], "normal") == 0) {
		double x[5];
		unsigned int p;
		struct nl_jobmix_group *g;

		if (nt != 7)
			BAD("expected 'normal PARAM WEIGHT MEAN SD LO HI'");
		for (p = 0; p < NL_JOBMIX_P__COUNT; p++)
			if (strcmp(tok[1], param_name[p]) == 0)
				break;
		if (p == NL_JOBMIX_P__COUNT)
			BAD("unknown parameter '%s' (nodes, wall_s or ratio)", tok[1]);
		for (unsigned int i = 0; i < 5; i++)
			if (!tok_dbl(tok[2 + i], &x[i]))
				BAD("'%s' is not a number", tok[2 + i]);
		if (x[0] <= 0 || x[0] > 1 || x[2] < 0 || x[3] > x[4])
			BAD("need 0 < WEIGHT <= 1, SD >= 0, LO <= HI");
		if (m->n_grp[p] == NL_JOBMIX_MAX_GROUPS)
			BAD("more than %u groups for %s", NL_JOBMIX_MAX_GROUPS, tok[1]);
		g = &m->grp[p][m->n_grp[p]++];
		g->weight = x[0];
		g->mean = x[1];
		g->sd = x[2];
		g->lo = x[3];
		g->hi = x[4];
		if (m->n_grp[p] == 1 || x[3] < m->lo[p])
			m->lo[p] = x[3];
		if (m->n_grp[p] == 1 || x[4] > m->hi[p])
			m->hi[p] = x[4];
		return 0;
	}
	if (nt != 2)
		BAD("'%s' takes one value", tok[0]);
	if (strcmp(tok[0], "rate_per_s") == 0) {
		if (!tok_dbl(tok[1], &m->rate_per_s) || m->rate_per_s <= 0)
			BAD("rate_per_s must be a positive number");
		ps->seen |= K_RATE;
		return 0;
	}
	if (strcmp(tok[0], "start_unix_s") == 0 || strcmp(tok[0], "max_nodes") == 0) {
		int64_t x;

		if (!tok_i64(tok[1], &x))
			BAD("'%s' is not an integer", tok[1]);
		if (tok[0][0] == 's') {
			if (x < 0 || x > NL_JOBMIX_START_MAX_S)
				BAD("start_unix_s must be 0..%" PRId64 " (UnixStartTime in seconds, "
				    "1970 to 9999)", NL_JOBMIX_START_MAX_S);
			m->start_unix_s = x;
			ps->seen |= K_START;
		} else {
			if (x < 1)
				BAD("max_nodes must be >= 1");
			if (m->n_cell > 0)
				BAD("max_nodes after the first cell");
			m->max_nodes = x;
		}
		return 0;
	}
	if (!tok_u64(tok[1], &a))
		BAD("'%s' is not an unsigned integer", tok[1]);
	if (strcmp(tok[0], "jobs") == 0) {
		if (ps->cell_sum > a)
			BAD("the cells above hold %" PRIu64 " jobs, more than %" PRIu64,
			    ps->cell_sum, a);
		m->n_jobs = a;
		ps->seen |= K_JOBS;
	} else if (strcmp(tok[0], "clamped") == 0) {
		m->n_clamped = a;
	} else if (strcmp(tok[0], "node_unit") == 0) {
		if (a < 1 || a > UINT32_MAX)
			BAD("node_unit must be >= 1");
		if (m->n_cell > 0)
			BAD("node_unit after the first cell");
		m->u.node_unit = (uint32_t)a;
		ps->seen |= K_NODE_UNIT;
	} else if (strcmp(tok[0], "time_unit_s") == 0) {
		if (a < NL_JOBMIX_MIN_TIME_UNIT_S || a > UINT32_MAX)
			BAD("time_unit_s must be >= %u", NL_JOBMIX_MIN_TIME_UNIT_S);
		if (m->n_cell > 0)
			BAD("time_unit_s after the first cell");
		m->u.time_unit_s = (uint32_t)a;
		ps->seen |= K_TIME_UNIT;
	} else if (strcmp(tok[0], "wall_cells") == 0) {
		if (a < 1 || a > NL_JOBMIX_MAX_WALL_CELLS)
			BAD("wall_cells must be 1..%u", NL_JOBMIX_MAX_WALL_CELLS);
		if (m->n_cell > 0)
			BAD("wall_cells after the first cell");
		m->u.wall_cells = (uint32_t)a;
		ps->seen |= K_WALL_CELLS;
	} else {
		BAD("unknown keyword '%s'", tok[0]);
	}
	return 0;
#undef BAD
}

static int
finish_model(struct parse *ps)
{
	struct nl_jobmix_model *m = ps->m;
	uint64_t total = 0;

	if ((ps->seen & K_ALL) != K_ALL) {
		for (unsigned int i = 0; i < sizeof(key_name) / sizeof(key_name[0]); i++)
			if (!(ps->seen & (1u << i))) {
				set_err(ps->err, ps->len, "%s: missing '%s'", ps->name, key_name[i]);
				return -EINVAL;
			}
	}
	if (!ps->ended) {
		set_err(ps->err, ps->len, "%s: no 'end' line (truncated file?)", ps->name);
		return -EINVAL;
	}
	/* parse_line() checked that the sum does not wrap */
	for (size_t i = 0; i < m->n_cell; i++)
		total += m->cell[i].count;
	if (m->n_cell > 0 && total != m->n_jobs) {
		set_err(ps->err, ps->len, "%s: cells hold %" PRIu64 " jobs, 'jobs' says %" PRIu64,
			ps->name, total, m->n_jobs);
		return -EINVAL;
	}
	if (m->max_nodes < 1) {
		int64_t mx = 1;

		for (size_t i = 0; i < m->n_cell; i++)
			if ((int64_t)m->cell[i].node_c * m->u.node_unit > mx)
				mx = (int64_t)m->cell[i].node_c * m->u.node_unit;
		m->max_nodes = mx;
	}
	if (m->zone[0] == '\0')
		snprintf(m->zone, sizeof(m->zone), "%s", "UTC");
	m->u.groups = 1;
	for (unsigned int p = 0; p < NL_JOBMIX_P__COUNT; p++)
		if (m->n_grp[p] > m->u.groups)
			m->u.groups = m->n_grp[p];
	if (build_cum(m) != 0) {
		set_err(ps->err, ps->len, "%s: out of memory", ps->name);
		return -ENOMEM;
	}
	return 0;
}

int
nl_jobmix_model_load_string(struct nl_jobmix_model *m, const char *name, const char *text,
			    char *err, size_t len)
{
	struct parse ps = { .m = m, .name = name, .err = err, .len = len };
	unsigned int lineno = 0;
	const char *p = text;
	char buf[1024];
	int rc = 0;

	memset(m, 0, sizeof(*m));
	while (*p != '\0') {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		lineno++;
		if (l >= sizeof(buf)) {
			set_err(err, len, "%s:%u: line longer than %zu bytes", name, lineno,
				sizeof(buf) - 1);
			rc = -EINVAL;
			break;
		}
		memcpy(buf, p, l);
		buf[l] = '\0';
		rc = parse_line(&ps, lineno, buf);
		if (rc != 0)
			break;
		p += l + (e ? 1 : 0);
	}
	if (rc == 0)
		rc = finish_model(&ps);
	if (rc != 0)
		nl_jobmix_model_free(m);
	return rc;
}

int
nl_jobmix_model_load(struct nl_jobmix_model *m, const char *path, char *err, size_t len)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t n = 0, cap = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	if (f == NULL) {
		rc = -errno;
		set_err(err, len, "%s: %s", path, strerror(errno));
		return rc;
	}
	for (;;) {
		size_t got;

		if (cap - n < 65536) {
			char *t = realloc(text, cap + (cap ? cap : 65536) + 1);

			if (t == NULL) {
				fclose(f);
				free(text);
				set_err(err, len, "%s: out of memory", path);
				return -ENOMEM;
			}
			text = t;
			cap += cap ? cap : 65536;
		}
		got = fread(text + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fclose(f);
		free(text);
		set_err(err, len, "%s: read error", path);
		return -EIO;
	}
	fclose(f);
	text[n] = '\0';
	if (memchr(text, '\0', n) != NULL) {
		free(text);
		set_err(err, len, "%s: binary file (NUL byte), not a model", path);
		return -EINVAL;
	}
	rc = nl_jobmix_model_load_string(m, path, text, err, len);
	free(text);
	return rc;
}

/* ---- sampling ---- */

static double
normal01(struct nl_rng *r)
{
	/* Box-Muller; one of the pair is dropped to keep the stream simple. */
	double u1 = nl_rng_unif(r), u2 = nl_rng_unif(r);

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static double
draw_normal(const struct nl_jobmix_model *m, enum nl_jobmix_param p, struct nl_rng *r)
{
	double u = nl_rng_unif(r), acc = 0, x = 0;
	const struct nl_jobmix_group *g = &m->grp[p][m->n_grp[p] - 1];

	for (unsigned int k = 0; k < m->n_grp[p]; k++) {
		acc += m->grp[p][k].weight;
		if (u <= acc) {
			g = &m->grp[p][k];
			break;
		}
	}
	/* Rejection outside the parameter's observed range, then clamp. */
	for (int tries = 0; tries < 16; tries++) {
		x = g->mean + g->sd * normal01(r);
		if (x >= m->lo[p] && x <= m->hi[p])
			return x;
	}
	return x < m->lo[p] ? m->lo[p] : m->hi[p];
}

static void
draw_map(const struct nl_jobmix_model *m, struct nl_rng *r, struct nl_jobmix_job *j)
{
	uint64_t total = m->cum[m->n_cell - 1], x = nl_rng_u64(r) % total;
	size_t lo = 0, hi = m->n_cell - 1;
	const struct nl_jobmix_cell *c;
	uint64_t nodes;
	int64_t a, b;

	/* First cell whose cumulative count exceeds x. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->cum[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	c = &m->cell[lo];
	/* the cell's upper bound, clamped to the machine: a top cell (n-1)U < x <= max_nodes < nU
	 * gets max_nodes (nl_jobmix_generate() checked that (n-1)U < max_nodes) */
	nodes = (uint64_t)c->node_c * m->u.node_unit;
	j->nodes = nodes > (uint64_t)m->max_nodes ? m->max_nodes : (int64_t)nodes;
	j->wall_s = (int64_t)c->wall_c * m->u.time_unit_s;
	/* Seconds s with ceil(100 s / wall) == ratio_c: (ratio_c-1)*wall/100 < s <= ratio_c*wall/100;
	 * cell 1 also holds run time 0. */
	b = (int64_t)c->ratio_c * j->wall_s / 100;
	a = ((int64_t)c->ratio_c - 1) * j->wall_s / 100 + 1;
	if (c->ratio_c == 1)
		a = 0;
	if (b < a)
		b = a; /* cannot happen with T >= 100 s */
	j->run_s = a + (int64_t)(nl_rng_u64(r) % (uint64_t)(b - a + 1));
}

int
nl_jobmix_generate(const struct nl_jobmix_model *m, const struct nl_jobmix_gen *g,
		   struct nl_jobmix_job *out, size_t n)
{
	struct nl_rng r, rt;
	double rate = g->rate_per_s > 0 ? g->rate_per_s : m->rate_per_s;
	double lam[NL_JOBMIX_SLOTS], sum = 0, t = 0;
	int64_t hour_end = 0;
	unsigned int slot = 0, idle_h = 0;

	if (n == 0)
		return 0;
	/* at least one job per 1,000 weeks: the hour-by-hour walk stays short */
	if (!(rate > 0) || rate * NL_JOBMIX_WEEK_S < 1e-3)
		return -EINVAL;
	if (m->max_nodes < 1)
		return -EINVAL;
	if (g->method == NL_JOBMIX_MAP) {
		const struct nl_jobmix_cell *top;

		if (m->n_cell == 0 || m->cum == NULL || m->cum[m->n_cell - 1] == 0)
			return -EINVAL;
		top = &m->cell[m->n_cell - 1]; /* largest node cell: the cells are sorted */
		/* a cell wholly above the machine; uint32 x uint32 fits in uint64 */
		if ((uint64_t)(top->node_c - 1) * m->u.node_unit >= (uint64_t)m->max_nodes)
			return -EINVAL;
	}
	if (g->method == NL_JOBMIX_NORMAL)
		for (unsigned int p = 0; p < NL_JOBMIX_P__COUNT; p++)
			if (m->n_grp[p] == 0)
				return -EINVAL;
	for (unsigned int s = 0; s < NL_JOBMIX_SLOTS; s++)
		sum += (double)m->slot[s];
	if (!(sum > 0))
		return -EINVAL;
	for (unsigned int s = 0; s < NL_JOBMIX_SLOTS; s++)
		lam[s] = rate * NL_JOBMIX_SLOTS * (double)m->slot[s] / sum;

	/* Two streams: job shapes and submit times, so that changing the rate keeps shapes. */
	nl_rng_seed(&r, g->seed);
	nl_rng_seed(&rt, g->seed ^ UINT64_C(0x5b0e5a11d1ce5eed));
	hour_end = 0; /* forces a slot look-up on the first step */
	for (size_t i = 0; i < n; i++) {
		struct nl_jobmix_job *j = &out[i];
		double e = nl_rng_exp(&rt, 1.0);

		/* Time change: consume e units of integrated intensity hour by hour. */
		for (;;) {
			if (t >= (double)hour_end) {
				int64_t now = (int64_t)floor(t), tow;

				tow = nl_jobmix_tow_at_s(m->start_unix_s, now);
				slot = (unsigned int)(tow / 3600);
				hour_end = now + (3600 - tow % 3600);
				/* Termination: every step moves t to a later hour, and a week
				 * of hours visits every slot, one of which is non-empty (sum >
				 * 0). Guard against a clock that stops (t beyond double
				 * precision) or a time of week that never reaches a non-empty
				 * slot. */
				if (!((double)hour_end > t))
					return -ERANGE;
				if (lam[slot] > 0)
					idle_h = 0;
				else if (++idle_h > 2 * NL_JOBMIX_SLOTS)
					return -ERANGE;
			}
			if (lam[slot] > 0 && e <= lam[slot] * ((double)hour_end - t)) {
				t += e / lam[slot];
				break;
			}
			if (lam[slot] > 0)
				e -= lam[slot] * ((double)hour_end - t);
			t = (double)hour_end;
		}
		j->submit_s = (int64_t)floor(t);
		if (g->method == NL_JOBMIX_MAP) {
			draw_map(m, &r, j);
		} else {
			double nd = draw_normal(m, NL_JOBMIX_P_NODES, &r);
			double w = draw_normal(m, NL_JOBMIX_P_WALL, &r);
			double q = draw_normal(m, NL_JOBMIX_P_RATIO, &r);

			j->nodes = (int64_t)llround(nd);
			if (j->nodes < 1)
				j->nodes = 1;
			if (j->nodes > m->max_nodes)
				j->nodes = m->max_nodes;
			j->wall_s = (int64_t)llround(w);
			if (j->wall_s < 1)
				j->wall_s = 1;
			if (q < 0)
				q = 0;
			if (q > 1)
				q = 1;
			j->run_s = (int64_t)llround(q * (double)j->wall_s);
		}
	}
	return 0;
}

/* ---- distances ---- */

double
nl_jobmix_ks(double *a, size_t na, double *b, size_t nb)
{
	size_t i = 0, k = 0;
	double d = 0;

	if (na == 0 || nb == 0)
		return 0;
	qsort(a, na, sizeof(*a), cmp_dbl);
	qsort(b, nb, sizeof(*b), cmp_dbl);
	while (i < na && k < nb) {
		double x = a[i] < b[k] ? a[i] : b[k], diff;

		while (i < na && a[i] == x)
			i++;
		while (k < nb && b[k] == x)
			k++;
		diff = fabs((double)i / (double)na - (double)k / (double)nb);
		if (diff > d)
			d = diff;
	}
	return d;
}

static uint64_t *
job_keys(const struct nl_jobmix_job *j, size_t n, const struct nl_jobmix_units *u)
{
	uint64_t *k = malloc((n ? n : 1) * sizeof(*k));

	if (k == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		k[i] = cell_key(nl_jobmix_node_cell(j[i].nodes, u->node_unit),
				nl_jobmix_wall_cell(j[i].wall_s, u->time_unit_s, u->wall_cells),
				nl_jobmix_ratio_cell(j[i].run_s, j[i].wall_s));
	qsort(k, n, sizeof(*k), cmp_u64);
	return k;
}

double
nl_jobmix_joint_tv(const struct nl_jobmix_job *a, size_t na, const struct nl_jobmix_job *b,
		   size_t nb, const struct nl_jobmix_units *u)
{
	uint64_t *ka, *kb;
	size_t i = 0, k = 0;
	double s = 0;

	if (na == 0 || nb == 0)
		return -1;
	ka = job_keys(a, na, u);
	kb = job_keys(b, nb, u);
	if (ka == NULL || kb == NULL) {
		free(ka);
		free(kb);
		return -1;
	}
	while (i < na || k < nb) {
		uint64_t x;
		size_t ca = 0, cb = 0;

		if (k >= nb || (i < na && ka[i] <= kb[k]))
			x = ka[i];
		else
			x = kb[k];
		while (i < na && ka[i] == x) {
			i++;
			ca++;
		}
		while (k < nb && kb[k] == x) {
			k++;
			cb++;
		}
		s += fabs((double)ca / (double)na - (double)cb / (double)nb);
	}
	free(ka);
	free(kb);
	return s / 2;
}
