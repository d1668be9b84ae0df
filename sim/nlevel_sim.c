/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-sim: the discrete-event simulator's command line.
 *
 * Dispatch model (seed 002): runs every curve of the configuration (NLSC, NLSC with static
 * scheduling, 2LSC per G) at every load and seed, in parallel over worker threads, and writes
 * DIR/curves.csv, DIR/curves.meta, DIR/plot.gp and the PNGs of Fig. 4-6 (gnuplot), with
 * progress on stderr and one SUMMARY line on stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nl_cfg.h"
#include "nl_dsim.h"
#include "nl_machine.h"
#include "nl_match_model.h"
#include "nl_model_cfg.h"
#include "nl_version.h"
#include "nl_sim_main.h"

struct job {
	unsigned int var, load, seed;
	struct nl_dsim_result r;
	double cpu_s;
	int rc;
	atomic_int state; /* 0 waiting, 1 running, 2 done (progress lines) */
};

struct pool {
	const struct nl_model_cfg *m;
	const struct nl_machine *mach;
	struct job *job;
	unsigned int n_job;
	atomic_uint next;
	atomic_uint done;
	pthread_mutex_t log_lock;
	bool quiet;
	double t0;
	unsigned int curves_done;          /* under log_lock */
	bool curve_printed[NL_MODEL_MAX_VARIANTS]; /* under log_lock */
};

static double
thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void
variant_label(const struct nl_variant *v, char *buf, size_t len)
{
	if (v->scheme == NL_SCHEME_2LSC)
		snprintf(buf, len, "2LSC G=%u", v->n_groups);
	else if (v->static_known > 0)
		snprintf(buf, len, "NLSC static k=%u", v->static_known);
	else
		snprintf(buf, len, "NLSC");
}

/* Until every run is done: unless quiet, a line every 10 s with the runs in flight and how far
 * each is (a long run otherwise prints nothing until it ends). */
static void
wait_runs(struct pool *p)
{
	double last = nl_sim_wall_s();

	while (atomic_load(&p->done) < p->n_job) {
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
		if (p->quiet || nl_sim_wall_s() - last < 10)
			continue;
		last = nl_sim_wall_s();
		char line[320] = "";
		int len = 0;
		unsigned int shown = 0;

		for (unsigned int i = 0; i < p->n_job && shown < 4; i++) {
			struct job *j = &p->job[i];
			char lab[64];

			if (atomic_load(&j->state) != 1)
				continue;
			shown++;
			variant_label(&p->m->variant[j->var], lab, sizeof(lab));
			len += snprintf(line + len, sizeof(line) - (size_t)len,
					" %s load %g%% seed %u at %.1f%% of the horizon;", lab,
					p->m->load_pct[j->load], j->seed,
					__atomic_load_n(&j->r.progress_ppm, __ATOMIC_RELAXED) / 1e4);
			if (len >= (int)sizeof(line))
				break;
		}
		pthread_mutex_lock(&p->log_lock);
		fprintf(stderr, "[%u/%u %.1fs] running:%s\n", atomic_load(&p->done), p->n_job,
			nl_sim_wall_s() - p->t0, line);
		pthread_mutex_unlock(&p->log_lock);
	}
}

/* Progress, one line per curve (issue #39): once every run of variant v (its loads x seeds) is
 * done, its mean response at the lowest and highest unsaturated load and where it saturates. */
static void
curve_line(struct pool *p, unsigned int v)
{
	const struct nl_model_cfg *m = p->m;
	unsigned int runs = 0, done = 0, lo = ~0u, hi = ~0u, sat_from = ~0u;
	double resp_lo = 0, resp_hi = 0;
	char lab[64];

	pthread_mutex_lock(&p->log_lock);
	for (unsigned int i = 0; i < p->n_job; i++)
		if (p->job[i].var == v) {
			runs++;
			done += atomic_load(&p->job[i].state) == 2;
		}
	if (done < runs || p->curve_printed[v]) {
		pthread_mutex_unlock(&p->log_lock);
		return;
	}
	p->curve_printed[v] = true;
	p->curves_done++;
	for (unsigned int l = 0; l < m->n_load; l++) {
		double sum = 0;
		unsigned int n = 0, sat = 0;

		for (unsigned int i = 0; i < p->n_job; i++) {
			const struct job *j = &p->job[i];

			if (j->var != v || j->load != l)
				continue;
			if (j->r.saturated)
				sat++;
			else {
				sum += j->r.resp_mean_vt;
				n++;
			}
		}
		if (sat > 0 && sat_from == ~0u)
			sat_from = l;
		if (n > 0 && sat == 0) {
			if (lo == ~0u) {
				lo = l;
				resp_lo = sum / n;
			}
			hi = l;
			resp_hi = sum / n;
		}
	}
	variant_label(&m->variant[v], lab, sizeof(lab));
	fprintf(stderr, "[curve %u/%u %.1fs] %s: %u runs", p->curves_done, m->n_variant,
		nl_sim_wall_s() - p->t0, lab, runs);
	if (lo != ~0u)
		fprintf(stderr, ", mean response %.1f u.t. at %g%% .. %.1f u.t. at %g%%", resp_lo,
			m->load_pct[lo], resp_hi, m->load_pct[hi]);
	if (sat_from != ~0u)
		fprintf(stderr, ", saturated from %g%%", m->load_pct[sat_from]);
	fputc('\n', stderr);
	pthread_mutex_unlock(&p->log_lock);
}

static void *
worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		unsigned int i = atomic_fetch_add(&p->next, 1);
		struct job *j;
		double c0;

		if (i >= p->n_job)
			break;
		j = &p->job[i];
		atomic_store(&j->state, 1);
		c0 = thread_cpu_s();
		j->rc = nl_dsim_run(p->m, p->mach, &p->m->variant[j->var], p->m->load_pct[j->load],
				    p->m->seed + 1000003ull * j->seed + 7919ull * j->load, &j->r);
		j->cpu_s = thread_cpu_s() - c0;
		atomic_store(&j->state, 2);
		atomic_fetch_add(&p->done, 1);

		if (!p->quiet)
			curve_line(p, j->var);
	}
	return NULL;
}

/* Offered tasks over all runs above which nlevel-sim warns before it starts. */
#define NL_SIM_TASKS_WARN 1e9

/* SUMMARY keys of a model with task classes: match_classes, matched_tasks, match_rejected
 * (over every run), match_eligible (eligible machines per class, in file order). */
static void
match_summary(const struct nl_model_cfg *m, const struct pool *p, char *summ, size_t cap,
	      size_t *off)
{
	const struct nl_match_tab *tab = __atomic_load_n(&nl_match_src.tab, __ATOMIC_ACQUIRE);
	uint64_t matched = 0, rej = 0;

	for (unsigned int i = 0; i < p->n_job; i++) {
		matched += p->job[i].r.matched;
		rej += p->job[i].r.matched_rejected;
	}
	*off += (size_t)snprintf(summ + *off, cap - *off,
				 " match_classes=%u matched_tasks=%llu match_rejected=%llu "
				 "match_eligible=", m->n_tclass, (unsigned long long)matched,
				 (unsigned long long)rej);
	for (unsigned int k = 0; tab != NULL && k < m->n_tclass && *off < cap; k++)
		*off += (size_t)snprintf(summ + *off, cap - *off, "%s%u", k ? "/" : "",
					 tab->ent[k + 1].n_elig);
	if (*off >= cap)
		*off = cap - 1;
}

/* Student t quantile 0.975 for df = 1..30 (then 1.96). */
static double
t975(unsigned int df)
{
	static const double t[] = { 0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
				    2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
				    2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
				    2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042 };

	return df == 0 ? 0 : df <= 30 ? t[df] : 1.96;
}

/** One (variant, load) aggregated over seeds. */
struct point {
	double mean, p50, p95, p99, ci95, hops, sched_wait, gutil;
	uint64_t completed, rejected;
	bool saturated;
};

static void
aggregate(const struct nl_model_cfg *m, const struct job *jobs, unsigned int var, unsigned int ld,
	  struct point *pt)
{
	double s = 0, s2 = 0;
	unsigned int n = 0;

	memset(pt, 0, sizeof(*pt));
	for (unsigned int k = 0; k < m->n_seeds; k++) {
		const struct job *j = &jobs[(var * m->n_load + ld) * m->n_seeds + k];

		pt->saturated |= j->r.saturated;
		pt->completed += j->r.completed;
		pt->rejected += j->r.rejected;
		pt->gutil += j->r.global_util / m->n_seeds;
		if (j->r.measured == 0)
			continue;
		n++;
		s += j->r.resp_mean_vt;
		s2 += j->r.resp_mean_vt * j->r.resp_mean_vt;
		pt->p50 += j->r.resp_p50_vt;
		pt->p95 += j->r.resp_p95_vt;
		pt->p99 += j->r.resp_p99_vt;
		pt->hops += j->r.hops_mean;
		pt->sched_wait += j->r.sched_wait_mean_vt;
	}
	if (n == 0) {
		pt->saturated = true;
		return;
	}
	pt->mean = s / n;
	pt->p50 /= n;
	pt->p95 /= n;
	pt->p99 /= n;
	pt->hops /= n;
	pt->sched_wait /= n;
	if (n > 1) {
		double var_ = (s2 - s * s / n) / (n - 1);

		pt->ci95 = t975(n - 1) * sqrt(var_ > 0 ? var_ : 0) / sqrt((double)n);
	}
}

/* Whether figure fig shows variant var: Fig. 4/5 NLSC vs 2LSC, Fig. 6 NLSC with and without
 * static scheduling. */
static bool
in_figure(int fig, const struct nl_variant *var)
{
	return fig == 6 ? var->scheme == NL_SCHEME_NLSC :
			  !(var->scheme == NL_SCHEME_NLSC && var->static_known > 0);
}

/* Whether variant v has a point to draw (not saturated) at a load <= max_pct. */
static bool
variant_drawn(const struct nl_model_cfg *m, const struct point *pts, unsigned int v,
	      double max_pct)
{
	for (unsigned int l = 0; l < m->n_load; l++)
		if (!pts[v * m->n_load + l].saturated && m->load_pct[l] <= max_pct)
			return true;
	return false;
}

/* DIR/plot.gp for Fig. 4-6 from curves.csv. A curve with no point to draw in a figure's range
 * is left out of it (gnuplot refuses a series of undefined points), and a figure with no
 * curve left is not drawn (its PNG removed, the reason on stderr). */
static int
write_plot(const char *dir, const struct nl_model_cfg *m, const struct point *pts)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/plot.gp", dir);
	f = fopen(path, "w");
	if (f == NULL)
		return -errno;
	fprintf(f, "# Made by nlevel-sim from curves.csv only; run it from this folder:\n"
		   "#   cd %s && gnuplot plot.gp\n", dir);
	fprintf(f, "set datafile separator ','\nset datafile missing ''\n"
		   "set terminal pngcairo size 900,600 noenhanced\n"
		   "set key top left\nset grid\nset xlabel 'system load [%%]'\n"
		   "set ylabel 'mean response time [u.t.]'\n"
		   "csv = 'curves.csv'\n"
		   "sel(s,g,k) = (strcol(1) eq s && $2 == g && $3 == k) ? $5 : 1/0\n");
	for (int fig = 4; fig <= 6; fig++) {
		double max_pct = fig == 5 ? 25 : INFINITY;
		bool first = true, any = false;

		for (unsigned int v = 0; v < m->n_variant; v++)
			any |= in_figure(fig, &m->variant[v]) && variant_drawn(m, pts, v, max_pct);
		if (!any) {
			char png[4200];

			fprintf(f, "# fig%d.png: no curve has an unsaturated point%s; not drawn\n", fig,
				fig == 5 ? " at loads <= 25 %" : "");
			fprintf(stderr, "nlevel-sim: fig%d.png not drawn: no curve has an unsaturated "
					"point%s\n", fig, fig == 5 ? " at loads <= 25 %" : "");
			snprintf(png, sizeof(png), "%s/fig%d.png", dir, fig);
			unlink(png);
			continue;
		}
		fprintf(f, "set output 'fig%d.png'\n", fig);
		if (fig == 4)
			fprintf(f, "set title 'N-level scheduling (Matsuzawa et al.), Fig. 4: mean "
				   "response time, N-level vs 2-level'\n"
				   "set xrange [0:*]\nset yrange [0:*]\n");
		else if (fig == 5)
			fprintf(f, "set title 'N-level scheduling (Matsuzawa et al.), Fig. 5: low-load "
				   "zoom'\nset xrange [0:25]\nset yrange [0:*]\n");
		else
			fprintf(f, "set title 'N-level scheduling (Matsuzawa et al.), Fig. 6: N-level "
				   "with static scheduling'\nset xrange [0:*]\nset yrange [0:*]\n");
		if (fig != 6)
			fprintf(f, "set label 1 'a 2LSC curve ends where its global scheduler saturates' "
				   "at graph 0.98, graph 0.04 right\n");
		else
			fprintf(f, "unset label 1\n");
		fprintf(f, "plot ");
		for (unsigned int v = 0; v < m->n_variant; v++) {
			const struct nl_variant *var = &m->variant[v];
			char lab[64];

			if (!in_figure(fig, var) || !variant_drawn(m, pts, v, max_pct))
				continue;
			variant_label(var, lab, sizeof(lab));
			fprintf(f, "%scsv using 4:(sel('%s',%u,%u)) with linespoints lw 2 title '%s'",
				first ? "" : ", \\\n     ", nl_scheme_name(var->scheme), var->n_groups,
				var->static_known, lab);
			first = false;
		}
		fprintf(f, "\n");
	}
	fclose(f);
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: nlevel-sim --config FILE --out DIR [options]\n"
		"\n"
		"Discrete-event simulator of nlevel's scheduling policies (docs/model.md).\n"
		"Dispatch configurations (N-level scheduling, Matsuzawa et al.; e.g.\n"
		"config/paper-96.ini) write DIR/curves.csv, DIR/fig4.png, fig5.png, fig6.png,\n"
		"DIR/plot.gp (cd DIR && gnuplot plot.gp redraws them) and a final SUMMARY line.\n"
		"Batch configurations (a [batch] section: batch queues with automatic queue\n"
		"selection, Kawanami et al.; e.g. config/kth-easy.ini, config/hpc2500.ini) replay\n"
		"an SWF trace (.swf or .swf.gz) and write DIR/batch.csv, PNGs and SUMMARY\n"
		"(docs/batch.md). With a [reservations] section (e.g. config/kth-rsv.ini) each\n"
		"scenario also runs with a stream of advance-reservation requests admitted by a\n"
		"ClassAd policy (PluS, Nakada et al.), and DIR/reservations.csv lists every request.\n"
		"Gossip configurations (a [gossip] section, e.g. config/gossip-table1.ini) compare\n"
		"gossip scheduling with a Condor-like central manager (Umeda, Nakada, Matsuoka) and\n"
		"write one CSV and PNG per experiment and a SUMMARY line (docs/gossip.md).\n"
		"SUMMARY keys are defined in docs/output.md.\n"
		"\n"
		"options:\n"
		"  -c, --config FILE   configuration (INI, docs/config.md)\n"
		"  -o, --out DIR       output folder (created, with its parents)\n"
		"      --trace PATH    workload trace, overrides the configuration's (batch models)\n"
		"      --rsv-policy F  reservation admission policy (ClassAd), overrides\n"
		"                      [reservations] policy_file (batch models)\n"
		"      --seeds N       replications per point, overrides [run] seeds (dispatch\n"
		"                      models; --seeds, --horizon and --loads are refused elsewhere)\n"
		"      --horizon VT    simulated time per run [u.t.], overrides [run] horizon_vt\n"
		"      --loads LIST    loads [%%], e.g. 5:70:5 or 5,15,40, overrides [run] loads_pct\n"
		"      --threads N     worker threads (default: [run] threads, else one per CPU;\n"
		"                      dispatch and gossip models)\n"
		"  -q, --quiet         no progress on stderr\n"
		"  -h, --help          this text\n"
		"  -V, --version       version\n"
		"\n"
		"Exit status: 0 done; 1 the run failed (cannot write DIR, out of memory); 2 bad\n"
		"input: command line, configuration (FILE:LINE), trace (unreadable, truncated or\n"
		"corrupt .gz, bad SWF line) or policy file.\n");
}

/* mkdir -p: create dir and its missing parents. 0, or -1 with errno. */
static int
mkdir_parents(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++)
		if (p[i] == '/' || p[i] == '\0') {
			char c = p[i];

			p[i] = '\0';
			if (mkdir(p, 0777) != 0 && errno != EEXIST)
				return -1;
			p[i] = c;
		}
	struct stat sb;

	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

/* A numeric option (nl_cfg_option_number()) into an unsigned int or a double. */
static int
cli_number(const char *opt, const char *v, double lo, double hi, unsigned int *u, double *d)
{
	uint64_t x = 0;

	if (nl_cfg_option_number("nlevel-sim", opt, v, lo, hi, u != NULL ? &x : NULL, d) != 0)
		return -EINVAL;
	if (u != NULL && v != NULL)
		*u = (unsigned int)x;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' }, { "out", required_argument, NULL, 'o' },
		{ "trace", required_argument, NULL, 't' },  { "seeds", required_argument, NULL, 's' },
		{ "horizon", required_argument, NULL, 'H' }, { "loads", required_argument, NULL, 'L' },
		{ "threads", required_argument, NULL, 'j' }, { "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },         { "version", no_argument, NULL, 'V' },
		{ "rsv-policy", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	struct nl_sim_opts o = { 0 };
	const char *seeds_s = NULL, *horizon_s = NULL, *threads_s = NULL;
	struct nl_cfg *cfg = NULL;
	char err[NL_CFG_ERR_LEN];
	int c, rc;

	while ((c = getopt_long(argc, argv, "c:o:qhV", lo, NULL)) != -1) {
		switch (c) {
		case 'c': o.config = optarg; break;
		case 'o': o.out_dir = optarg; break;
		case 't': o.trace = optarg; break;
		case 'P': o.rsv_policy = optarg; break;
		case 's': seeds_s = optarg; break;
		case 'H': horizon_s = optarg; break;
		case 'L': o.loads = optarg; break;
		case 'j': threads_s = optarg; break;
		case 'q': o.quiet = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("nlevel-sim %s\n", NL_GIT_DESCRIBE); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || o.config == NULL || o.out_dir == NULL) {
		fprintf(stderr, "nlevel-sim: %s\n", optind != argc ? "unexpected argument" :
			"--config and --out are required (see --help)");
		return 2;
	}
	if (cli_number("--seeds", seeds_s, 1, 1000, &o.seeds, NULL) != 0 ||
	    cli_number("--horizon", horizon_s, 1e-9, 1e18, NULL, &o.horizon_vt) != 0 ||
	    cli_number("--threads", threads_s, 1, 256, &o.threads, NULL) != 0)
		return 2;
	rc = nl_cfg_load(&cfg, o.config, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "nlevel-sim: %s\n", err);
		return 2;
	}
	if (mkdir_parents(o.out_dir) != 0) {
		fprintf(stderr, "nlevel-sim: cannot create %s: %s\n", o.out_dir, strerror(errno));
		nl_cfg_free(cfg);
		return 1;
	}
	rc = nl_sim_main_dispatch(cfg, &o);
	nl_cfg_free(cfg);
	return rc;
}

/* Apply command-line overrides to the parsed model. -EINVAL with a message on bad input. */
static int
apply_overrides(struct nl_model_cfg *m, const struct nl_sim_opts *o)
{
	if (o->seeds > 0)
		m->n_seeds = o->seeds;
	if (o->horizon_vt > 0) {
		m->warmup_vt = m->warmup_vt * o->horizon_vt / m->horizon_vt;
		m->horizon_vt = o->horizon_vt;
	}
	if (o->threads > 0)
		m->threads = o->threads;
	if (o->loads != NULL) {
		struct nl_cfg *c = NULL;
		char err[NL_CFG_ERR_LEN] = "out of memory";
		int rc;

		/* the list as the key's value (no INI text: its 198-character line limit) */
		rc = nl_cfg_new(&c, "--loads");
		if (rc == 0)
			rc = nl_cfg_add(c, "run", "loads_pct", o->loads, 0);
		if (rc == 0)
			rc = nl_cfg_get_list(c, "run", "loads_pct", m->load_pct, NL_MODEL_MAX_LOADS,
					     &m->n_load, 0.001, 1000, true);
		if (rc < 0) {
			/* the message without the made-up file:line and key of the text above */
			const char *msg = c != NULL ? c->err : err, *k = strstr(msg, "loads_pct: ");

			fprintf(stderr, "nlevel-sim: --loads %s: %s\n", o->loads,
				k != NULL ? k + strlen("loads_pct: ") : msg);
			nl_cfg_free(c);
			return -EINVAL;
		}
		nl_cfg_free(c);
	}
	return 0;
}

int
nl_sim_main_curves(struct nl_cfg *cfg, const struct nl_sim_opts *o)
{
	struct nl_model_cfg m;
	struct nl_machine *mach = NULL;
	struct pool p = { 0 };
	pthread_t th[256];
	unsigned int n_th;
	char path[4096];
	FILE *f;
	int rc;

	if (nl_model_cfg_parse(cfg, &m) != 0 || nl_cfg_check_unused(cfg) != 0) {
		fprintf(stderr, "nlevel-sim: %s\n", cfg->err);
		return 2;
	}
	if (apply_overrides(&m, o) != 0)
		return 2;
	mach = calloc(m.n_mach, sizeof(*mach));
	if (mach == NULL || nl_machines_build(&m, m.seed, mach) != 0) {
		fprintf(stderr, "nlevel-sim: cannot build %u machines\n", m.n_mach);
		free(mach);
		return 1;
	}
	if (m.n_tclass > 0) { /* issue #15: [machine] records and [class] Requirements / Rank */
		char merr[NL_CFG_ERR_LEN];

		if (nl_match_model_bind(&m, mach, merr, sizeof(merr)) != 0) {
			fprintf(stderr, "nlevel-sim: %s\n", merr);
			free(mach);
			return 2;
		}
	} else if (m.n_mclass > 0) {
		char merr[NL_CFG_ERR_LEN];

		if (nl_match_model_check(&m, mach, merr, sizeof(merr)) != 0) {
			fprintf(stderr, "nlevel-sim: %s\n", merr);
			free(mach);
			return 2;
		}
	}
	p.m = &m;
	p.mach = mach;
	p.n_job = m.n_variant * m.n_load * m.n_seeds;
	p.job = calloc(p.n_job, sizeof(*p.job));
	p.quiet = o->quiet;
	pthread_mutex_init(&p.log_lock, NULL);
	if (p.job == NULL) {
		free(mach);
		return 1;
	}
	for (unsigned int v = 0, i = 0; v < m.n_variant; v++)
		for (unsigned int l = 0; l < m.n_load; l++)
			for (unsigned int k = 0; k < m.n_seeds; k++, i++) {
				p.job[i].var = v;
				p.job[i].load = l;
				p.job[i].seed = k;
			}
	n_th = m.threads ? m.threads : (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	if (n_th == 0)
		n_th = 1;
	if (n_th > 256)
		n_th = 256;
	if (!o->quiet)
		fprintf(stderr, "nlevel-sim: %u curves x %u loads x %u seeds = %u runs of %g u.t. on %u threads\n",
			m.n_variant, m.n_load, m.n_seeds, p.n_job, m.horizon_vt, n_th);
	/* A run lasts as many tasks as the load offers over the horizon: say so up front when
	 * that is beyond what finishes in minutes (tiny sub-tasks against the machines' speeds
	 * make the arrival rate huge), even with --quiet. */
	double offered = 0, top_rate = 0, top_load = 0;

	for (unsigned int l = 0; l < m.n_load; l++) {
		double r = nl_model_arrival_rate(&m, m.load_pct[l]);

		offered += r * m.horizon_vt * m.n_variant * m.n_seeds;
		if (r > top_rate) {
			top_rate = r;
			top_load = m.load_pct[l];
		}
	}
	if (offered > NL_SIM_TASKS_WARN)
		fprintf(stderr, "nlevel-sim: warning: %s: up to %.3g tasks offered in all (%.3g per u.t. "
				"at %g %% load over %g u.t.); the simulator handles ~10^6 per second, so "
				"runs that do not saturate will take hours: check [task] instr, data_bits "
				"against [system] speeds_ips, link_bps, and [run] horizon_vt\n",
			o->config, offered, top_rate, top_load, m.horizon_vt);
	p.t0 = nl_sim_wall_s();
	for (unsigned int i = 0; i < n_th; i++)
		pthread_create(&th[i], NULL, worker, &p);
	wait_runs(&p);
	for (unsigned int i = 0; i < n_th; i++)
		pthread_join(th[i], NULL);
	double wall = nl_sim_wall_s() - p.t0, cpu = 0;
	uint64_t events = 0;

	for (unsigned int i = 0; i < p.n_job; i++) {
		if (p.job[i].rc != 0) {
			fprintf(stderr, "nlevel-sim: run failed: %s\n", strerror(-p.job[i].rc));
			free(p.job);
			free(mach);
			return 1;
		}
		events += p.job[i].r.events;
		cpu += p.job[i].cpu_s;
	}

	/* curves.csv */
	struct point *pts = calloc((size_t)m.n_variant * m.n_load, sizeof(*pts));

	if (pts == NULL) {
		free(p.job);
		free(mach);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/curves.csv", o->out_dir);
	f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "nlevel-sim: cannot write %s: %s\n", path, strerror(errno));
		free(pts);
		free(p.job);
		free(mach);
		return 1;
	}
	fprintf(f, "scheme,groups,static_known,load_pct,resp_mean_vt,resp_p50_vt,resp_p95_vt,"
		   "resp_p99_vt,ci95_vt,hops_mean,sched_wait_mean_vt,global_util,completed,rejected,"
		   "saturated\n");
	for (unsigned int v = 0; v < m.n_variant; v++) {
		for (unsigned int l = 0; l < m.n_load; l++) {
			struct point *pt = &pts[v * m.n_load + l];

			aggregate(&m, p.job, v, l, pt);
			fprintf(f, "%s,%u,%u,%g,", nl_scheme_name(m.variant[v].scheme),
				m.variant[v].n_groups, m.variant[v].static_known, m.load_pct[l]);
			if (pt->saturated)
				fprintf(f, ",,,,,");
			else
				fprintf(f, "%.4f,%.4f,%.4f,%.4f,%.4f,", pt->mean, pt->p50, pt->p95,
					pt->p99, pt->ci95);
			fprintf(f, "%.4f,%.4f,%.4f,%llu,%llu,%d\n", pt->hops, pt->sched_wait, pt->gutil,
				(unsigned long long)pt->completed, (unsigned long long)pt->rejected,
				pt->saturated ? 1 : 0);
		}
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/curves.meta", o->out_dir);
	f = fopen(path, "w");
	if (f != NULL) {
		fprintf(f, "config=%s\nnlevel=%s\nseed=%llu\nseeds=%u\nhorizon_vt=%g\nwarmup_vt=%g\n"
			   "threads=%u\nruns=%u\nevents=%llu\nwall_s=%.3f\n",
			o->config, NL_GIT_DESCRIBE, (unsigned long long)m.seed, m.n_seeds, m.horizon_vt,
			m.warmup_vt, n_th, p.n_job, (unsigned long long)events, wall);
		fclose(f);
	}
	if (write_plot(o->out_dir, &m, pts) == 0) {
		if (nl_gnuplot_run(o->out_dir, "plot.gp", "plot.log") != 0)
			fprintf(stderr, "nlevel-sim: gnuplot failed or missing (see %s/plot.log); "
					"curves.csv is complete\n", o->out_dir);
	}

	/* SUMMARY: crossover and 5 %% ratio against the first NLSC curve without static k. */
	int nl = -1;

	for (unsigned int v = 0; v < m.n_variant; v++)
		if (m.variant[v].scheme == NL_SCHEME_NLSC && m.variant[v].static_known == 0 && nl < 0)
			nl = (int)v;
	char summ[2048] = "", first[256] = "";
	size_t off = 0;

	for (unsigned int v = 0; nl >= 0 && v < m.n_variant; v++) {
		double cross = -1, ratio = NAN;

		if (m.variant[v].scheme != NL_SCHEME_2LSC)
			continue;
		unsigned int lo = 0; /* the lowest load (the list may be in any order) */

		for (unsigned int l = 1; l < m.n_load; l++)
			if (m.load_pct[l] < m.load_pct[lo])
				lo = l;
		for (unsigned int l = 0; l < m.n_load; l++) {
			const struct point *a = &pts[(unsigned int)nl * m.n_load + l];
			const struct point *b = &pts[v * m.n_load + l];

			if (l == lo && !a->saturated && !b->saturated)
				ratio = a->mean / b->mean;
			/* not a crossover where NLSC is saturated too (both curves ended) */
			if (!a->saturated && (b->saturated || a->mean <= b->mean) &&
			    (cross < 0 || m.load_pct[l] < cross))
				cross = m.load_pct[l];
		}
		if (first[0] == '\0')
			snprintf(first, sizeof(first), "crossover_pct=%g ratio_5pct=%.3f", cross, ratio);
		off += (size_t)snprintf(summ + off, sizeof(summ) - off,
					" crossover_pct_g%u=%g ratio_5pct_g%u=%.3f",
					m.variant[v].n_groups, cross, m.variant[v].n_groups, ratio);
		if (off >= sizeof(summ))
			off = sizeof(summ) - 1;
	}
	if (m.n_tclass > 0) /* issue #15: matching (docs/output.md) */
		match_summary(&m, &p, summ, sizeof(summ), &off);
	/* no crossover keys without both an NLSC (k = 0) and a 2LSC curve: no empty field */
	printf("SUMMARY%s%s%s wall_s=%.2f events=%llu events_per_s=%.0f events_per_s_thread=%.0f "
	       "threads=%u runs=%u\n",
	       first[0] ? " " : "", first, summ, wall, (unsigned long long)events, events / wall,
	       cpu > 0 ? events / cpu : 0, n_th, p.n_job);
	nl_match_model_unbind();
	free(pts);
	free(p.job);
	free(mach);
	rc = 0;
	return rc;
}
