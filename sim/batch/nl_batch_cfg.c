/* SPDX-License-Identifier: BSD-3-Clause */
/* Batch model configuration (docs/batch.md "Configuration") and SWF -> engine jobs. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_batch_cfg.h"
#include "nl_rng.h"

/* Split a comma-separated list of names. @return count, or -1 when a name is bad/too many. */
static int
split_names(const char *s, char names[][NL_BATCH_NAME_LEN], unsigned int max)
{
	unsigned int n = 0;

	while (*s != '\0') {
		const char *b, *e;
		size_t len;

		while (*s == ' ' || *s == '\t')
			s++;
		b = s;
		while (*s != '\0' && *s != ',')
			s++;
		e = s;
		while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		len = (size_t)(e - b);
		if (len == 0 || len >= NL_BATCH_NAME_LEN || n == max)
			return -1;
		for (size_t k = 0; k < len; k++)
			if (!isalnum((unsigned char)b[k]) && b[k] != '_' && b[k] != '-')
				return -1;
		memcpy(names[n], b, len);
		names[n][len] = '\0';
		n++;
		if (*s == ',' && *++s == '\0')
			return -1; /* a trailing comma is an empty item, as in number lists */
	}
	return (int)n;
}

static int
get_names(struct nl_cfg *cfg, const char *sec, const char *key, char names[][NL_BATCH_NAME_LEN],
	  unsigned int max, unsigned int *n)
{
	const char *v;
	int rc = nl_cfg_get_str(cfg, sec, key, &v, true), k;

	if (rc < 0)
		return rc;
	k = split_names(v, names, max);
	if (k <= 0)
		return nl_cfg_error(cfg, nl_cfg_find(cfg, sec, key),
				    "expected 1..%u comma-separated names ([A-Za-z0-9_-], < %u chars)",
				    max, NL_BATCH_NAME_LEN);
	*n = (unsigned int)k;
	return 0;
}

static int
parse_queue(struct nl_cfg *cfg, struct nl_batch_cfg *c, unsigned int qi)
{
	struct nl_batch_queue *q = &c->sys.q[qi];
	char sec[64];
	uint64_t u;
	double d;
	int rc;

	snprintf(sec, sizeof(sec), "queue.%s", q->name);
	if (nl_cfg_require_section(cfg, sec) != 0)
		return -EINVAL;
	rc = nl_cfg_get_u64(cfg, sec, "cpu_max", &u, 1, UINT32_MAX, true);
	if (rc < 0)
		return rc;
	q->cpu_max = (uint32_t)u;
	u = q->cpu_max;
	if ((rc = nl_cfg_get_u64(cfg, sec, "proc_max", &u, 1, UINT32_MAX, false)) < 0)
		return rc;
	q->proc_max = (uint32_t)u;
	u = q->cpu_max;
	if ((rc = nl_cfg_get_u64(cfg, sec, "thread_max", &u, 1, UINT32_MAX, false)) < 0)
		return rc;
	q->thread_max = (uint32_t)u;
	d = 0;
	if ((rc = nl_cfg_get_double(cfg, sec, "walltime_max_s", &d, 0, 1e12, false)) < 0)
		return rc;
	q->walltime_max_s = d;
	u = UINT32_MAX;
	if ((rc = nl_cfg_get_u64(cfg, sec, "overtake_cpus_max", &u, 0, UINT32_MAX, false)) < 0)
		return rc;
	q->overtake_cpus_max = (uint32_t)u;
	d = 0;
	if ((rc = nl_cfg_get_double(cfg, sec, "prio_threshold", &d, 0, 1e12, false)) < 0)
		return rc;
	q->prio_threshold = d;
	q->head_type = false;
	if ((rc = nl_cfg_get_bool(cfg, sec, "head_type", &q->head_type, false)) < 0)
		return rc;
	double nums[NL_CFG_LIST_MAX];
	unsigned int nn = 0;

	rc = nl_cfg_get_list(cfg, sec, "swf_queue", nums, NL_CFG_LIST_MAX, &nn, -1, 1e9, false);
	if (rc < 0)
		return rc;
	for (unsigned int k = 0; k < nn; k++) {
		if (c->n_qmap == NL_BATCH_MAX_QMAP)
			return nl_cfg_error(cfg, nl_cfg_find(cfg, sec, "swf_queue"),
					    "more than %u SWF queue numbers mapped", NL_BATCH_MAX_QMAP);
		c->qmap_swf[c->n_qmap] = (int64_t)nums[k];
		c->qmap_q[c->n_qmap] = qi;
		c->n_qmap++;
	}
	return 0;
}

static int
parse_scenario(struct nl_cfg *cfg, struct nl_batch_cfg *c, struct nl_batch_scenario *s)
{
	static const char *const pol[] = { "fcfs", "firstfit", "easy", "conservative", NULL };
	char sec[64], key[64], names[4][NL_BATCH_NAME_LEN];
	unsigned int e = 0, n;
	const char *qs;
	uint64_t u;
	int rc;

	snprintf(sec, sizeof(sec), "scenario.%s", s->name);
	if (nl_cfg_require_section(cfg, sec) != 0)
		return -EINVAL;
	if ((rc = nl_cfg_get_enum(cfg, sec, "policy", pol, &e, true)) < 0)
		return rc;
	s->policy = (enum nl_batch_policy)e;
	if ((rc = nl_cfg_get_str(cfg, sec, "queue_select", &qs, true)) < 0)
		return rc;
	if (strcmp(qs, "auto") == 0) {
		s->qsel = NL_BATCH_QSEL_AUTO;
	} else if (strcmp(qs, "trace") == 0) {
		s->qsel = NL_BATCH_QSEL_TRACE;
	} else if (strcmp(qs, "random") == 0) {
		s->qsel = NL_BATCH_QSEL_RANDOM;
	} else {
		s->qsel = NL_BATCH_QSEL_FIXED;
		for (e = 0; e < c->sys.n_q && strcmp(c->sys.q[e].name, qs) != 0; e++)
			;
		if (e == c->sys.n_q)
			return nl_cfg_error(cfg, nl_cfg_find(cfg, sec, "queue_select"),
					    "'%s' is not auto, trace, random or a queue name", qs);
		s->fixed_queue = e;
	}
	u = 1;
	if ((rc = nl_cfg_get_u64(cfg, sec, "seed", &u, 0, UINT64_MAX, false)) < 0)
		return rc;
	s->seed = u;
	s->overtake_bound = false;
	if ((rc = nl_cfg_get_bool(cfg, sec, "overtake_bound", &s->overtake_bound, false)) < 0)
		return rc;
	for (unsigned int q = 0; q < c->sys.n_q; q++) {
		u = 0;
		snprintf(key, sizeof(key), "resv_max.%s", c->sys.q[q].name);
		if ((rc = nl_cfg_get_u64(cfg, sec, key, &u, 0, 1000000, false)) < 0)
			return rc;
		s->resv_max[q] = (uint32_t)u;
		if (u > 0 && s->policy != NL_BATCH_FIRSTFIT)
			return nl_cfg_error(cfg, nl_cfg_find(cfg, sec, key),
					    "connection reservation needs policy = firstfit");
	}
	static const char *const order[] = { "priority", "arrival", NULL };

	e = 0;
	if ((rc = nl_cfg_get_enum(cfg, sec, "queue_order", order, &e, false)) < 0)
		return rc;
	s->queue_order = (enum nl_batch_order)e;
	s->trig_priority = s->trig_head = s->trig_nonwait = false;
	if (nl_cfg_find(cfg, sec, "triggers") != NULL) {
		if ((rc = get_names(cfg, sec, "triggers", names, 4, &n)) < 0)
			return rc;
		for (unsigned int k = 0; k < n; k++) {
			if (strcmp(names[k], "priority") == 0)
				s->trig_priority = true;
			else if (strcmp(names[k], "head") == 0)
				s->trig_head = true;
			else if (strcmp(names[k], "nonwait") == 0)
				s->trig_nonwait = true;
			else if (strcmp(names[k], "none") != 0)
				return nl_cfg_error(cfg, nl_cfg_find(cfg, sec, "triggers"),
						    "'%s': expected priority, head, nonwait or none",
						    names[k]);
		}
	}
	return 0;
}

/* The engine keeps nodes for FCFS and FirstFit only, without connection reservation. */
static int
check_rsv_scenarios(struct nl_cfg *cfg, const struct nl_batch_cfg *c)
{
	for (unsigned int s = 0; s < c->n_sc; s++) {
		char ss[64];

		snprintf(ss, sizeof(ss), "scenario.%s", c->sc[s].name);
		if (c->sc[s].policy > NL_BATCH_FIRSTFIT)
			return nl_cfg_error(cfg, nl_cfg_find(cfg, ss, "policy"),
					    "[reservations] needs policy = fcfs or firstfit");
		for (unsigned int q = 0; q < c->sys.n_q; q++)
			if (c->sc[s].resv_max[q] > 0) {
				char key[64];

				snprintf(key, sizeof(key), "resv_max.%s", c->sys.q[q].name);
				return nl_cfg_error(cfg, nl_cfg_find(cfg, ss, key),
						    "connection reservation cannot be combined with "
						    "[reservations]");
			}
	}
	return 0;
}

/* [reservations] (docs/batch.md "Advance reservations"). */
static int
parse_rsv(struct nl_cfg *cfg, struct nl_batch_cfg *c)
{
	static const char sec[] = "reservations";
	struct nl_batch_rsv_cfg *r = &c->rsv;
	char names[NL_BATCH_RSV_OWNERS_MAX][NL_BATCH_NAME_LEN];
	uint64_t u;
	int rc;

	r->on = nl_cfg_has_section(cfg, sec);
	if (!r->on)
		return 0;
	if ((rc = nl_cfg_get_str(cfg, sec, "policy_file", &r->policy_file, true)) < 0)
		return rc;
	r->requests = NULL;
	if ((rc = nl_cfg_get_str(cfg, sec, "requests", &r->requests, false)) < 0)
		return rc;
	r->history_s = 7 * 86400.0;
	if ((rc = nl_cfg_get_double(cfg, sec, "history_s", &r->history_s, 0, 1e9, false)) < 0)
		return rc;
	if ((rc = check_rsv_scenarios(cfg, c)) < 0)
		return rc;
	if (r->requests != NULL) {
		static const char *const gen[] = { "rate_per_h", "lead_min_s", "lead_max_s",
						   "dur_min_s", "dur_max_s", "nodes_min",
						   "nodes_max", "owners", "seed", NULL };

		for (unsigned int k = 0; gen[k] != NULL; k++) {
			const struct nl_cfg_entry *e = nl_cfg_find(cfg, sec, gen[k]);

			if (e != NULL)
				return nl_cfg_error(cfg, e, "the generator's keys and requests "
							   "exclude each other");
		}
		return 0;
	}
	r->rate_per_h = 1;
	if ((rc = nl_cfg_get_double(cfg, sec, "rate_per_h", &r->rate_per_h, 0, 1e6, false)) < 0)
		return rc;
	r->lead_min_s = 1800;
	r->lead_max_s = 86400;
	r->dur_min_s = 1800;
	r->dur_max_s = 14400;
	if ((rc = nl_cfg_get_double(cfg, sec, "lead_min_s", &r->lead_min_s, 0, 1e9, false)) < 0 ||
	    (rc = nl_cfg_get_double(cfg, sec, "lead_max_s", &r->lead_max_s, 0, 1e9, false)) < 0 ||
	    (rc = nl_cfg_get_double(cfg, sec, "dur_min_s", &r->dur_min_s, 1, 1e9, false)) < 0 ||
	    (rc = nl_cfg_get_double(cfg, sec, "dur_max_s", &r->dur_max_s, 1, 1e9, false)) < 0)
		return rc;
	if (r->lead_max_s < r->lead_min_s)
		return nl_cfg_error(cfg, nl_cfg_find(cfg, sec, "lead_max_s"),
				    "%g < lead_min_s %g", r->lead_max_s, r->lead_min_s);
	if (r->dur_max_s < r->dur_min_s)
		return nl_cfg_error(cfg, nl_cfg_find(cfg, sec, "dur_max_s"),
				    "%g < dur_min_s %g", r->dur_max_s, r->dur_min_s);
	u = 1;
	if ((rc = nl_cfg_get_u64(cfg, sec, "nodes_min", &u, 1, c->sys.cpus, false)) < 0)
		return rc;
	r->nodes_min = (uint32_t)u;
	u = r->nodes_min > 8 ? r->nodes_min : (c->sys.cpus < 8 ? c->sys.cpus : 8);
	if ((rc = nl_cfg_get_u64(cfg, sec, "nodes_max", &u, 1, c->sys.cpus, false)) < 0)
		return rc;
	r->nodes_max = (uint32_t)u;
	if (r->nodes_max < r->nodes_min)
		return nl_cfg_error(cfg, nl_cfg_find(cfg, sec, "nodes_max"), "%u < nodes_min %u",
				    r->nodes_max, r->nodes_min);
	if ((rc = get_names(cfg, sec, "owners", names, NL_BATCH_RSV_OWNERS_MAX, &r->n_owners)) < 0)
		return rc;
	memcpy(r->owners, names, sizeof(names));
	r->seed = 4;
	return nl_cfg_get_u64(cfg, sec, "seed", &r->seed, 0, UINT64_MAX, false) < 0 ? -EINVAL : 0;
}

/* Room for one more request at (*v)[*m]. @return it (zeroed), or NULL when out of memory. */
static struct nl_batch_rsv_req *
req_append(struct nl_batch_rsv_req **v, size_t *m, size_t *cap)
{
	if (*m == *cap) {
		size_t nc = *cap ? 2 * *cap : 256;
		struct nl_batch_rsv_req *nv = realloc(*v, nc * sizeof(**v));

		if (nv == NULL)
			return NULL;
		*v = nv;
		*cap = nc;
	}
	memset(&(*v)[*m], 0, sizeof(**v));
	return &(*v)[(*m)++];
}

int
nl_batch_rsv_generate(const struct nl_batch_rsv_cfg *rc, double t0_s, double t1_s,
		      struct nl_batch_rsv_req **out, size_t *n)
{
	struct nl_batch_rsv_req *v = NULL;
	size_t m = 0, cap = 0;
	struct nl_rng rng;
	double at = t0_s;

	*out = NULL;
	*n = 0;
	if (!(rc->rate_per_h > 0) || !(t1_s >= t0_s) || rc->n_owners == 0)
		return 0;
	nl_rng_seed(&rng, rc->seed);
	for (;;) {
		struct nl_batch_rsv_req *q;
		double lead, dur;

		at += nl_rng_exp(&rng, 3600.0 / rc->rate_per_h);
		if (at > t1_s)
			break;
		if ((q = req_append(&v, &m, &cap)) == NULL) {
			free(v);
			return -ENOMEM;
		}
		lead = rc->lead_min_s + nl_rng_unif(&rng) * (rc->lead_max_s - rc->lead_min_s);
		dur = rc->dur_min_s + nl_rng_unif(&rng) * (rc->dur_max_s - rc->dur_min_s);
		q->at_s = floor(at);
		q->start_s = q->at_s + floor(lead);
		q->end_s = q->start_s + fmax(1, floor(dur));
		q->nodes = rc->nodes_min +
			   (uint32_t)(nl_rng_u64(&rng) % (rc->nodes_max - rc->nodes_min + 1u));
		memcpy(q->owner, rc->owners[nl_rng_u64(&rng) % rc->n_owners], NL_BATCH_NAME_LEN);
	}
	*out = v;
	*n = m;
	return 0;
}

int
nl_batch_rsv_load(const char *path, struct nl_batch_rsv_req **out, size_t *n, char *err,
		  size_t len)
{
	static const char *const want[] = { "at_s", "start_s", "end_s", "nodes", "owner" };
	FILE *f = fopen(path, "r");
	struct nl_batch_rsv_req *v = NULL;
	size_t m = 0, cap = 0;
	int col[5] = { -1, -1, -1, -1, -1 }, rc = 0;
	unsigned int line = 0;
	char buf[1024];
	bool header = false;

	*out = NULL;
	*n = 0;
	if (f == NULL) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -ENOENT;
	}
	while (rc == 0 && fgets(buf, sizeof(buf), f) != NULL) {
		char *fld[32], *p = buf;
		int nf = 0;

		line++;
		buf[strcspn(buf, "\r\n")] = '\0';
		if (buf[0] == '#' || buf[strspn(buf, " \t")] == '\0')
			continue;
		while (nf < 32) {
			fld[nf++] = p;
			p = strchr(p, ',');
			if (p == NULL)
				break;
			*p++ = '\0';
		}
		for (int k = 0; k < nf; k++) { /* trim */
			while (*fld[k] == ' ' || *fld[k] == '\t')
				fld[k]++;
			for (char *e = fld[k] + strlen(fld[k]); e > fld[k] && (e[-1] == ' ' || e[-1] == '\t');)
				*--e = '\0';
		}
		if (!header) {
			for (int k = 0; k < nf; k++)
				for (int w = 0; w < 5; w++)
					if (strcmp(fld[k], want[w]) == 0)
						col[w] = k;
			for (int w = 0; w < 5 && rc == 0; w++)
				if (col[w] < 0) {
					snprintf(err, len, "%s:%u: header has no column '%s' (needs "
						 "at_s,start_s,end_s,nodes,owner)", path, line, want[w]);
					rc = -EINVAL;
				}
			header = true;
			continue;
		}
		double t[3];
		char *end;
		unsigned long long nodes;

		for (int w = 0; w < 5 && rc == 0; w++)
			if (col[w] >= nf) {
				snprintf(err, len, "%s:%u: %d fields, column '%s' missing", path, line,
					 nf, want[w]);
				rc = -EINVAL;
			}
		for (int w = 0; w < 3 && rc == 0; w++) {
			t[w] = strtod(fld[col[w]], &end);
			if (end == fld[col[w]] || *end != '\0' || !(t[w] >= 0) || t[w] > 1e12 ||
			    floor(t[w]) != t[w]) {
				snprintf(err, len, "%s:%u: %s '%s' is not a whole number of seconds >= 0",
					 path, line, want[w], fld[col[w]]);
				rc = -EINVAL;
			}
		}
		if (rc != 0)
			break;
		nodes = strtoull(fld[col[3]], &end, 10);
		if (end == fld[col[3]] || *end != '\0' || nodes == 0 || nodes > UINT32_MAX) {
			snprintf(err, len, "%s:%u: nodes '%s' is not a positive integer", path, line,
				 fld[col[3]]);
			rc = -EINVAL;
		} else if (!(t[2] > t[1])) {
			snprintf(err, len, "%s:%u: end_s %.0f is not after start_s %.0f", path, line,
				 t[2], t[1]);
			rc = -EINVAL;
		} else if (fld[col[4]][0] == '\0' || strlen(fld[col[4]]) >= NL_BATCH_NAME_LEN) {
			snprintf(err, len, "%s:%u: owner must have 1..%u characters", path, line,
				 NL_BATCH_NAME_LEN - 1);
			rc = -EINVAL;
		}
		if (rc != 0)
			break;
		struct nl_batch_rsv_req *q = req_append(&v, &m, &cap);

		if (q == NULL) {
			rc = -ENOMEM;
			snprintf(err, len, "%s: out of memory", path);
			break;
		}
		q->at_s = t[0];
		q->start_s = t[1];
		q->end_s = t[2];
		q->nodes = (uint32_t)nodes;
		snprintf(q->owner, sizeof(q->owner), "%s", fld[col[4]]);
	}
	fclose(f);
	if (rc == 0 && !header) {
		snprintf(err, len, "%s:%u: no header line", path, line);
		rc = -EINVAL;
	}
	if (rc != 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = m;
	return 0;
}

int
nl_batch_cfg_cpus_auto(struct nl_cfg *cfg, const struct nl_swf *t, const char *path,
		       uint64_t *cpus)
{
	const struct nl_cfg_entry *ce = nl_cfg_find(cfg, "batch", "cpus");
	const struct nl_cfg_entry *se = nl_cfg_find(cfg, "batch", "cpus_scale");
	const char *mp_s = nl_swf_header_get(t, "MaxProcs"), *mn_s = nl_swf_header_get(t, "MaxNodes");
	int64_t mp = nl_swf_header_int(t, "MaxProcs");
	unsigned long long scale = 1;
	char num[32];

	if (cpus != NULL)
		*cpus = 0;
	if (ce == NULL || strcmp(ce->value, "auto") != 0)
		return 0;
	if (se != NULL) { /* out of range or malformed: nl_batch_cfg_parse() says so */
		char *end;
		unsigned long long v = strtoull(se->value, &end, 10);

		if (end != se->value && *end == '\0' && v >= 1 && v <= (1u << 16))
			scale = v;
	}
	if (mp < 1 || mp > (1 << 24)) {
		char hint[160] = "";

		if (mn_s != NULL)
			snprintf(hint, sizeof(hint), "; its MaxNodes line says '%.60s'", mn_s);
		if (mp_s == NULL)
			return nl_cfg_error(cfg, ce, "auto: %s has no MaxProcs header line; give the "
					    "processor count (cpus = N)%s", path, hint);
		return nl_cfg_error(cfg, ce, "auto: the MaxProcs header line of %s says '%.60s', "
				    "not a processor count in 1..16777216; give the processor count "
				    "(cpus = N)%s", path, mp_s, hint);
	}
	if ((uint64_t)mp * scale > (1u << 24))
		return nl_cfg_error(cfg, ce, "auto: MaxProcs %lld of %s x cpus_scale %llu is more "
				    "than 16777216 processors", (long long)mp, path, scale);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)mp * scale);
	if (nl_cfg_set_value(cfg, "batch", "cpus", num) != 0)
		return -ENOMEM;
	if (cpus != NULL)
		*cpus = (uint64_t)mp * scale;
	return 0;
}

int
nl_batch_cfg_parse(struct nl_cfg *cfg, struct nl_batch_cfg *c)
{
	static const char *const procs[] = { "requested", "allocated", "max", NULL };
	static const char *const over[] = { "extend", "kill", NULL };
	char names[NL_BATCH_MAX_SCENARIOS > NL_BATCH_MAX_QUEUES ? NL_BATCH_MAX_SCENARIOS :
								    NL_BATCH_MAX_QUEUES][NL_BATCH_NAME_LEN];
	unsigned int n, e;
	uint64_t u;
	int rc;

	memset(c, 0, sizeof(*c));
	if (nl_cfg_require_section(cfg, "batch") != 0)
		return -EINVAL;
	c->trace = NULL;
	if ((rc = nl_cfg_get_str(cfg, "batch", "trace", &c->trace, false)) < 0)
		return rc;
	if ((rc = nl_cfg_get_u64(cfg, "batch", "cpus", &u, 1, 1u << 24, true)) < 0)
		return rc;
	c->sys.cpus = (uint32_t)u;
	e = 0;
	if ((rc = nl_cfg_get_enum(cfg, "batch", "procs", procs, &e, false)) < 0)
		return rc;
	c->filter.procs_src = (enum nl_swf_procs_src)e;
	e = 0;
	if ((rc = nl_cfg_get_enum(cfg, "batch", "overrun", over, &e, false)) < 0)
		return rc;
	c->filter.overrun = (enum nl_swf_overrun)e;
	static const char *const est[] = { "requested", "runtime", NULL };

	e = 0;
	if ((rc = nl_cfg_get_enum(cfg, "batch", "estimate", est, &e, false)) < 0)
		return rc;
	c->filter.exact_estimates = e == 1;
	if ((rc = nl_cfg_get_bool(cfg, "batch", "drop_cancelled", &c->filter.drop_cancelled,
				  false)) < 0)
		return rc;
	if ((rc = nl_cfg_get_bool(cfg, "batch", "drop_zero_run", &c->filter.drop_zero_run,
				  false)) < 0)
		return rc;
	c->filter.max_procs = 0; /* wider than P: counted as unrunnable by the engine */
	c->tau_s = 10;
	if ((rc = nl_cfg_get_double(cfg, "batch", "bsld_tau_s", &c->tau_s, 1e-3, 1e9, false)) < 0)
		return rc;
	c->submit_scale = 1;
	if ((rc = nl_cfg_get_double(cfg, "batch", "submit_scale", &c->submit_scale, 1e-6, 1e6,
				    false)) < 0)
		return rc;
	u = 1;
	if ((rc = nl_cfg_get_u64(cfg, "batch", "cpus_scale", &u, 1, 1u << 16, false)) < 0)
		return rc;
	c->cpus_scale = (uint32_t)u;
	u = 1;
	if ((rc = nl_cfg_get_u64(cfg, "batch", "threads_per_proc", &u, 1, 1u << 20, false)) < 0)
		return rc;
	c->threads_per_proc = (uint32_t)u;
	c->thread_jobs_pct = 0;
	if ((rc = nl_cfg_get_double(cfg, "batch", "thread_jobs_pct", &c->thread_jobs_pct, 0, 100,
				    false)) < 0)
		return rc;
	u = 0;
	if ((rc = nl_cfg_get_u64(cfg, "batch", "thread_jobs_cpus_max", &u, 0, UINT32_MAX,
				 false)) < 0)
		return rc;
	c->thread_jobs_cpus_max = (uint32_t)u;
	c->jobs_max = 0;
	if ((rc = nl_cfg_get_u64(cfg, "batch", "jobs_max", &c->jobs_max, 0, UINT64_MAX, false)) < 0)
		return rc;
	if ((rc = get_names(cfg, "batch", "queues", names, NL_BATCH_MAX_QUEUES, &n)) < 0)
		return rc;
	c->sys.n_q = n;
	for (unsigned int q = 0; q < n; q++) {
		if (strcmp(names[q], "all") == 0)
			return nl_cfg_error(cfg, nl_cfg_find(cfg, "batch", "queues"),
					    "'all' is reserved for the whole-system rows of batch.csv");
		for (unsigned int k = 0; k < q; k++)
			if (strcmp(names[k], names[q]) == 0)
				return nl_cfg_error(cfg, nl_cfg_find(cfg, "batch", "queues"),
						    "queue '%s' twice", names[q]);
		memcpy(c->sys.q[q].name, names[q], NL_BATCH_NAME_LEN);
	}
	for (unsigned int q = 0; q < n; q++)
		if ((rc = parse_queue(cfg, c, q)) < 0)
			return rc;
	if ((rc = get_names(cfg, "batch", "scenarios", names, NL_BATCH_MAX_SCENARIOS, &n)) < 0)
		return rc;
	c->n_sc = n;
	for (unsigned int s = 0; s < n; s++) {
		for (unsigned int k = 0; k < s; k++)
			if (strcmp(names[k], names[s]) == 0)
				return nl_cfg_error(cfg, nl_cfg_find(cfg, "batch", "scenarios"),
						    "scenario '%s' twice", names[s]);
		memcpy(c->sc[s].name, names[s], NL_BATCH_NAME_LEN);
		if ((rc = parse_scenario(cfg, c, &c->sc[s])) < 0)
			return rc;
	}
	return parse_rsv(cfg, c);
}

/* Deterministic per-job hash (splitmix64 finaliser) for thread_jobs_pct. */
static uint64_t
mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void
nl_batch_map_threads(const struct nl_batch_cfg *c, struct nl_batch_job *j)
{
	uint32_t k = c->threads_per_proc ? c->threads_per_proc : 1;

	if (c->thread_jobs_pct > 0 &&
	    (c->thread_jobs_cpus_max == 0 || j->cpus <= c->thread_jobs_cpus_max) &&
	    (double)(mix64((uint64_t)j->swf_id) % 10000u) < c->thread_jobs_pct * 100.0) {
		j->procs = 1;
		j->threads = j->cpus;
		return;
	}
	j->threads = j->cpus < k ? j->cpus : k;
	j->procs = (j->cpus + j->threads - 1) / (j->threads ? j->threads : 1);
}

static int
cmp_job(const void *a, const void *b)
{
	const struct nl_batch_job *x = a, *y = b;

	if (x->submit_s != y->submit_s)
		return x->submit_s < y->submit_s ? -1 : 1;
	/* stable: file order is kept in resv_s until the run resets it */
	return x->resv_s < y->resv_s ? -1 : x->resv_s > y->resv_s;
}

int
nl_batch_jobs_from_swf(const struct nl_swf *t, const struct nl_batch_cfg *c,
		       struct nl_batch_job **out, size_t *n, size_t drops[NL_SWF_DROP__COUNT])
{
	struct nl_batch_job *jobs = malloc((t->n_job ? t->n_job : 1) * sizeof(*jobs));
	size_t m = 0;
	bool sorted = true;

	*out = NULL;
	*n = 0;
	for (unsigned int k = 0; k < NL_SWF_DROP__COUNT; k++)
		drops[k] = 0;
	if (jobs == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_job; i++) {
		const struct nl_swf_job *s = &t->job[i];
		struct nl_swf_rigid r;
		enum nl_swf_drop d = nl_swf_rigid(s, &c->filter, &r);
		struct nl_batch_job *j;

		drops[d]++;
		if (d != NL_SWF_KEEP)
			continue;
		j = &jobs[m];
		memset(j, 0, sizeof(*j));
		j->submit_s = (double)s->submit_s * (c->submit_scale > 0 ? c->submit_scale : 1);
		j->run_s = (double)r.run_s;
		j->est_s = (double)r.est_s;
		if (c->cpus_scale > 1) /* saturating: a wider job is unrunnable all the same */
			r.procs = r.procs > INT64_MAX / c->cpus_scale ? INT64_MAX :
								      r.procs * c->cpus_scale;
		j->cpus = r.procs > UINT32_MAX ? UINT32_MAX : (uint32_t)r.procs;
		j->swf_id = s->id;
		j->user = s->user >= 0 && s->user <= INT32_MAX ? (int32_t)s->user : -1;
		j->user_queue = -1;
		for (unsigned int k = 0; k < c->n_qmap; k++)
			if (c->qmap_swf[k] == s->queue) {
				j->user_queue = (int32_t)c->qmap_q[k];
				break;
			}
		nl_batch_map_threads(c, j);
		j->resv_s = (double)i; /* file order, for the stable sort below */
		if (m > 0 && j->submit_s < jobs[m - 1].submit_s)
			sorted = false;
		m++;
	}
	if (!sorted)
		qsort(jobs, m, sizeof(*jobs), cmp_job);
	if (c->jobs_max > 0 && m > c->jobs_max)
		m = (size_t)c->jobs_max;
	for (size_t i = 0; i < m; i++)
		jobs[i].resv_s = -1;
	*out = jobs;
	*n = m;
	return 0;
}
