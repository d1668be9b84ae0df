/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-sim's gossip model (a [gossip] section): the experiments of Umeda, Nakada, Matsuoka
 * (docs/gossip.md). Each experiment section present in the configuration runs:
 *   [table1]       utilization, central vs gossip, queue never dry     -> table1.csv/.png
 *   [rounds]       rounds for one record to reach everyone (theory)    -> rounds.csv
 *   [spread]       Fig. 6 share informed vs N, Fig. 7 share vs round   -> fig6/fig7 .csv/.png
 *   [nat]          Fig. 8 share of NAT'd nodes                         -> fig8.csv/.png
 *   [table2]       gossip/central ratio vs offered load and N          -> table2.csv/.png
 *   [schedulers]   Fig. 9 utilization vs scheduling nodes              -> fig9.csv/.png
 *   [sensitivity]  crossover node count vs per-record central cost     -> sensitivity.csv/.png
 * Runs are spread over worker threads; progress goes to stderr, one SUMMARY line to stdout.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nl_cfg.h"
#include "nl_gsched.h"
#include "nl_gspread.h"
#include "nl_sim_main.h"
#include "nl_version.h"

#define MAXN 32u

/* Default matchmaking cost per (job, record) [ns]: one Requirements + Rank evaluation of the
 * default job ad by managers/classad, measured once by nl_gsched_match_cost() (fastest of 10
 * batches of 2,000) on a release build pinned to one CPU (taskset -c 1), 3 runs: 95.6, 95.8,
 * 96.0 ns. Fixed so results do not depend on how busy the host is; `match_cost_ns = auto`
 * measures the host instead. */
#define NL_GSIM_MATCH_COST_NS 96.0

/* Default negotiation interval [s] (`[central] negotiator_interval_s`): Condor 6's matchmaker
 * (htcondor/htcondor's history, src/condor_negotiator.V6/matchmaker.C: NEGOTIATOR_INTERVAL
 * defaults to 300 s in every version of that file; today's HTCondor: 60 s), the Condor of the
 * paper's time. Its first versions connected to each matched startd by TCP, blocking, before the
 * next match (`match_rtts` = 1); later ones send the match by UDP, and the default is 0. */
#define NL_GSIM_NEG_INTERVAL_S 300.0

/* Default time the central collector spends on one record [ms] (`[central] record_cost_ms`).
 * The paper gives no per-record cost; we derive it once, for every node count, from the one
 * place where the paper's central manager is bound by its collector: Table 1 at 10,000 nodes,
 * 0.844, i.e. an idle gap of 2,700 s x (1/0.844 - 1) = 499 s per job (jobs of 45 min on
 * average). With a saturated collector a record waits about half a collection cycle, N x c / 2,
 * after half an update interval (30 s) and half a negotiation interval (150 s): 499 = 180 +
 * 10,000 x c / 2 gives c = 64 ms; the model gives 0.8594, 0.8432 and 0.8337 at 60, 70 and
 * 80 ms, and 70 it is (docs/gossip.md "Central side"). */
#define NL_GSIM_RECORD_COST_MS 70.0

/* Default `library_max_nodes` with the library view engine: pools of more compute nodes run on
 * the sweep (anti-entropy, records remade at every exchange), where the two engines agree within
 * 0.002 at 1,000 nodes (0.010 at 500); the library engine costs O(view) per exchange
 * (docs/gossip.md "Which engine at which size"). */
#define NL_GSIM_LIBRARY_MAX_NODES 500u

/* The job ad of every experiment: any node with a free core and enough memory; prefer big
 * memory, then many cores (HTCondor syntax, evaluated by managers/classad). */
static const char default_job_ad[] =
	"RequestCores = 1;\n"
	"RequestMemory = 1024;\n"
	"Requirements = TARGET.State == \"Unclaimed\" && TARGET.FreeCores >= RequestCores &&\n"
	"    TARGET.Memory >= RequestMemory && (TARGET.Arch == \"X86_64\" || TARGET.Arch == \"AARCH64\");\n"
	"Rank = TARGET.Memory / 1024 + TARGET.Cores\n";

enum task_kind { T_SCHED = 0, T_SPREAD };

struct task {
	enum task_kind kind;
	unsigned int exp, i, j; /* experiment and indices, for aggregation */
	struct nl_gsched_cfg sc;
	struct nl_gsched_res sr;
	struct nl_gspread_cfg pc;
	struct nl_gspread_res pr;
	int rc;
	_Atomic uint32_t progress_ppm; /* share of its simulated time done (T_SCHED) */
	atomic_int state;              /* 0 waiting, 1 running, 2 done */
};

struct pool {
	struct task *t;
	size_t n, cap;
	atomic_size_t next, done;
	pthread_mutex_t lock;
	bool quiet;
	double t0;
	double t_end; /* wall clock when the last run ended (written by its worker) */
};

static const char *const exp_name[] = { "table1", "rounds", "spread", "nat", "table2",
					"schedulers", "sensitivity" };
enum { E_T1 = 0, E_ROUNDS, E_SPREAD, E_NAT, E_T2, E_SCHED, E_SENS, E_N };

struct gcfg {
	struct nl_gsched_cfg base;
	uint64_t seed;
	unsigned int threads;
	double days, node_days_min;
	double node_days_max; /* large pools: simulated node-days cap (0: none) */
	/* view_engine = library: larger pools run on the sweep (anti-entropy, records remade at
	 * every exchange); 0 = library at every size; default NL_GSIM_LIBRARY_MAX_NODES */
	unsigned int library_max_nodes;
	bool match_auto;
	char *job_ad;
	bool on[E_N];
	double t1_nodes[MAXN];
	unsigned int n_t1;
	bool t1_sys[2]; /* [table1] systems: central, gossip */
	double r_nodes[MAXN];
	unsigned int n_r, r_trials;
	double s_nodes[MAXN];
	unsigned int n_s, s_trials, s_curve_n, stop_k;
	double nat_pct[MAXN];
	unsigned int n_nat, nat_n, nat_trials;
	bool nat_blind; /* [nat] peers = blind: initiators cannot tell NAT'd nodes (default) */
	double t2_nodes[MAXN], t2_loads[MAXN];
	unsigned int n_t2n, n_t2l;
	double f9_counts[MAXN];
	unsigned int n_f9, f9_n;
	double f9_load;
	double se_nodes[MAXN], se_scales[MAXN];
	unsigned int n_sen, n_ses;
};

/* ---- configuration ---------------------------------------------------------------------- */

static int
get_u(struct nl_cfg *cfg, const char *sec, const char *key, unsigned int *out, uint64_t min,
      uint64_t max)
{
	uint64_t v = *out;
	int rc = nl_cfg_get_u64(cfg, sec, key, &v, min, max, false);

	*out = (unsigned int)v;
	return rc < 0 ? rc : 0;
}

static int
get_bool(struct nl_cfg *cfg, const char *sec, const char *key, bool *out)
{
	int rc = nl_cfg_get_bool(cfg, sec, key, out, false);

	return rc < 0 ? rc : 0;
}

static int
get_d(struct nl_cfg *cfg, const char *sec, const char *key, double *out, double min, double max)
{
	int rc = nl_cfg_get_double(cfg, sec, key, out, min, max, false);

	return rc < 0 ? rc : 0;
}

/* Whether a spread experiment of n nodes, share nat of them behind NAT, keeps two nodes
 * outside NAT (the count nl_gspread_run() takes: round(nat x n) NAT'd). */
static bool
spread_public_ok(uint32_t n, double nat)
{
	return n - (uint32_t)(nat * n + 0.5) >= 2;
}

static int
get_nodes(struct nl_cfg *cfg, const char *sec, double *out, unsigned int *n, bool required)
{
	int rc = nl_cfg_get_list(cfg, sec, "nodes", out, MAXN, n, 2, 1e6, required);

	if (rc < 0)
		return rc;
	for (unsigned int i = 0; i < *n; i++)
		if (out[i] != floor(out[i]))
			return nl_cfg_error(cfg, nl_cfg_find(cfg, sec, "nodes"),
					    "node counts must be integers (%g)", out[i]);
	return 0;
}

static int
read_file(const char *path, const char *cfg_path, char **out)
{
	char full[4096];
	FILE *f = fopen(path, "rb");

	if (f == NULL && path[0] != '/') {
		const char *sl = strrchr(cfg_path, '/');

		snprintf(full, sizeof(full), "%.*s/%s", sl ? (int)(sl - cfg_path) : 1,
			 sl ? cfg_path : ".", path);
		f = fopen(full, "rb");
	}
	if (f == NULL)
		return -errno;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);

	while (b != NULL) {
		size_t k = fread(b + n, 1, cap - n - 1, f);

		n += k;
		if (k == 0)
			break;
		if (n + 1 == cap) {
			char *nb = realloc(b, cap *= 2);

			if (nb == NULL) {
				free(b);
				b = NULL;
			} else {
				b = nb;
			}
		}
	}
	fclose(f);
	if (b == NULL)
		return -ENOMEM;
	b[n] = '\0';
	*out = b;
	return 0;
}

static int
parse(struct nl_cfg *cfg, struct gcfg *g)
{
	struct nl_gsched_cfg *b = &g->base;
	const char *s = "gossip", *str;
	unsigned int u;
	double d;
	int rc;

	memset(g, 0, sizeof(*g));
	*b = (struct nl_gsched_cfg){
		.sys = NL_GSCHED_GOSSIP, .n_sched = 1, .load = 0, .period_s = 60,
		.lifetime_s = 1800, .fanout = 1, .mode = NL_GOSSIP_PUSH_PULL, .cores = 1,
		.job_min_s = 1800, .job_max_s = 3600, .fail_per_day = 0.01, .leave_per_day = 0.01,
		.rejoin_s = 7200, .neg_interval_s = NL_GSIM_NEG_INTERVAL_S, .update_interval_s = 60,
		.rec_rtts = 3, .rec_cost_s = NL_GSIM_RECORD_COST_MS / 1e3, .rec_scale = 1,
		.match_cost_s = 0,
		.ask_timeout_s = 1,
		.net = { .sites = 20, .intra_min_s = 0.0002, .intra_max_s = 0.002,
			 .inter_min_s = 0.010, .inter_max_s = 0.200 },
	};
	g->seed = 1;
	g->days = 1;
	g->node_days_min = 100;
	g->stop_k = 1;
	double warm_h = 2, job_min = 30, job_max = 60, nat = 0, rejoin_h = 2;
	uint64_t seed = 1;

	if ((rc = nl_cfg_get_u64(cfg, s, "seed", &seed, 0, UINT64_MAX, false)) < 0)
		return rc;
	g->seed = seed;
	if ((rc = get_u(cfg, s, "threads", &g->threads, 0, 256)) < 0 ||
	    (rc = get_d(cfg, s, "days", &g->days, 0.01, 365)) < 0 ||
	    (rc = get_d(cfg, s, "warmup_h", &warm_h, 0, 24 * 365)) < 0 ||
	    (rc = get_d(cfg, s, "node_days_min", &g->node_days_min, 0, 1e7)) < 0 ||
	    (rc = get_d(cfg, s, "node_days_max", &g->node_days_max, 0, 1e9)) < 0 ||
	    (rc = get_u(cfg, s, "library_max_nodes", &g->library_max_nodes, 0, UINT32_MAX)) < 0 ||
	    (rc = get_d(cfg, s, "period_s", &b->period_s, 0.001, 86400)) < 0 ||
	    (rc = get_d(cfg, s, "lifetime_s", &b->lifetime_s, 0.001, 1e7)) < 0 ||
	    (rc = get_u(cfg, s, "fanout", &b->fanout, 1, NL_GOSSIP_MAX_FANOUT)) < 0 ||
	    (rc = get_u(cfg, s, "cores", &b->cores, 1, 1024)) < 0 ||
	    (rc = get_d(cfg, s, "job_min_min", &job_min, 0.01, 1e6)) < 0 ||
	    (rc = get_d(cfg, s, "job_max_min", &job_max, 0.01, 1e6)) < 0 ||
	    (rc = get_d(cfg, s, "nat_pct", &nat, 0, 99)) < 0 ||
	    (rc = get_u(cfg, s, "stop_k", &g->stop_k, 1, 1000)) < 0)
		return rc;
	if (warm_h / 24 >= g->days)
		return nl_cfg_error(cfg, nl_cfg_find(cfg, s, "warmup_h"),
				    "warm-up (%g h) must be shorter than the run (%g days)", warm_h,
				    g->days);
	if (job_max < job_min)
		return nl_cfg_error(cfg, nl_cfg_find(cfg, s, "job_max_min"),
				    "job_max_min (%g) is below job_min_min (%g)", job_max, job_min);
	b->job_min_s = job_min * 60;
	b->job_max_s = job_max * 60;
	b->nat_share = nat / 100;
	b->warmup_s = warm_h * 3600;
	b->horizon_s = g->days * 86400;
	static const char *const modes[] = { "push-pull", "push", "pull", NULL };

	u = 0;
	if ((rc = nl_cfg_get_enum(cfg, s, "mode", modes, &u, false)) < 0)
		return rc;
	b->mode = (enum nl_gossip_mode)u;
	/* The defaults are the model of Table 1 and Table 2 (docs/gossip.md "Configuration keys"),
	 * so that a configuration naming none of these keys runs it: nl_gossip views with the
	 * paper's stop rule (k = 1, §2.3.1, §5.1.1), records remade on a change, the sweep above
	 * NL_GSIM_LIBRARY_MAX_NODES, a client scheduling node (§4.1) fetching once per matching
	 * pass. `view_engine = sweep` makes anti-entropy, every exchange and no switch the defaults
	 * instead, the only ones the sweep runs. */
	static const char *const engines[] = { "sweep", "library", NULL };
	static const char *const rules[] = { "anti-entropy", "stop-k", NULL };

	u = NL_GSCHED_VIEW_LIBRARY;
	if ((rc = nl_cfg_get_enum(cfg, s, "view_engine", engines, &u, false)) < 0)
		return rc;
	b->view = (enum nl_gsched_view)u;
	const bool lib = b->view == NL_GSCHED_VIEW_LIBRARY;

	if (lib && nl_cfg_find(cfg, s, "library_max_nodes") == NULL)
		g->library_max_nodes = NL_GSIM_LIBRARY_MAX_NODES;
	u = lib ? NL_GOSSIP_STOP_K : NL_GOSSIP_ANTI_ENTROPY;
	if ((rc = nl_cfg_get_enum(cfg, s, "rule", rules, &u, false)) < 0)
		return rc;
	b->rule = (enum nl_gossip_rule)u;
	static const char *const refresh[] = { "every-exchange", "on-change", NULL };

	u = lib ? 1 : 0;
	if ((rc = nl_cfg_get_enum(cfg, s, "refresh", refresh, &u, false)) < 0)
		return rc;
	b->refresh_on_change = u == 1;
	static const char *const beliefs[] = { "own-dispatches", "view", NULL };
	static const char *const retries[] = { "next-candidate", "next-period", NULL };

	u = 0;
	if ((rc = nl_cfg_get_enum(cfg, s, "belief", beliefs, &u, false)) < 0)
		return rc;
	b->belief = (enum nl_gsched_belief)u;
	u = 0;
	if ((rc = nl_cfg_get_enum(cfg, s, "retry", retries, &u, false)) < 0)
		return rc;
	b->retry = (enum nl_gsched_retry)u;
	static const char *const pulls[] = { "per-job", "none", "per-pass", NULL };

	u = NL_GSCHED_PULL_PER_PASS;
	if ((rc = nl_cfg_get_enum(cfg, s, "sched_pull", pulls, &u, false)) < 0)
		return rc;
	b->sched_pull = (enum nl_gsched_pull)u;
	static const char *const roles[] = { "participant", "client", NULL };

	u = 1;
	if ((rc = nl_cfg_get_enum(cfg, s, "sched_role", roles, &u, false)) < 0)
		return rc;
	b->sched_client = u == 1;
	static const char *const fetches[] = { "exchange", "pull", "view", NULL };

	u = 0;
	if ((rc = nl_cfg_get_enum(cfg, s, "sched_fetch", fetches, &u, false)) < 0)
		return rc;
	b->sched_fetch = (enum nl_gsched_fetch)u;
	if (b->refresh_on_change && b->view != NL_GSCHED_VIEW_LIBRARY)
		return nl_cfg_error(cfg, nl_cfg_find(cfg, s, "refresh"),
				    "refresh = on-change needs view_engine = library");
	if (b->rule == NL_GOSSIP_STOP_K && b->view != NL_GSCHED_VIEW_LIBRARY)
		return nl_cfg_error(cfg, nl_cfg_find(cfg, s, "rule"),
				    "the stop-k rule needs view_engine = library (the sweep "
				    "assumes whole-view exchanges)");
	if (g->library_max_nodes > 0 && b->view != NL_GSCHED_VIEW_LIBRARY)
		return nl_cfg_error(cfg, nl_cfg_find(cfg, s, "library_max_nodes"),
				    "library_max_nodes needs view_engine = library");
	/* fixed by default, so a result does not move with the host's load; `auto` measures */
	g->match_auto = false;
	b->match_cost_s = NL_GSIM_MATCH_COST_NS * 1e-9;
	rc = nl_cfg_get_str(cfg, s, "match_cost_ns", &str, false);
	if (rc < 0)
		return rc;
	if (rc == 1 && strcmp(str, "auto") == 0) {
		g->match_auto = true;
	} else if (rc == 1) {
		if ((rc = get_d(cfg, s, "match_cost_ns", &d, 0, 1e9)) < 0)
			return rc;
		b->match_cost_s = d * 1e-9;
		g->match_auto = false;
	}
	rc = nl_cfg_get_str(cfg, s, "job_ad_file", &str, false);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		const struct nl_cfg_entry *e = nl_cfg_find(cfg, s, "job_ad_file");

		if ((rc = read_file(str, cfg->path, &g->job_ad)) != 0)
			return nl_cfg_error(cfg, e, "cannot read '%s': %s", str, strerror(-rc));
		double cost;

		if (nl_gsched_match_cost(g->job_ad, &cost) != 0)
			return nl_cfg_error(cfg, e, "'%s' is not a ClassAd defining Requirements and "
					    "Rank over an unbound TARGET", str);
	}
	/* [network] */
	s = "network";
	double ms[4] = { 0.2, 2, 10, 200 };

	if ((rc = get_u(cfg, s, "sites", &b->net.sites, 1, 256)) < 0 ||
	    (rc = get_d(cfg, s, "intra_min_ms", &ms[0], 0, 1e4)) < 0 ||
	    (rc = get_d(cfg, s, "intra_max_ms", &ms[1], 0, 1e4)) < 0 ||
	    (rc = get_d(cfg, s, "inter_min_ms", &ms[2], 0, 1e4)) < 0 ||
	    (rc = get_d(cfg, s, "inter_max_ms", &ms[3], 0, 1e4)) < 0)
		return rc;
	if (ms[1] < ms[0] || ms[3] < ms[2])
		return nl_cfg_error(cfg, nl_cfg_find(cfg, s, ms[1] < ms[0] ? "intra_max_ms" :
							 "inter_max_ms"),
				    "maximum below minimum");
	b->net.intra_min_s = ms[0] / 1e3;
	b->net.intra_max_s = ms[1] / 1e3;
	b->net.inter_min_s = ms[2] / 1e3;
	b->net.inter_max_s = ms[3] / 1e3;
	/* [churn] */
	s = "churn";
	if ((rc = get_d(cfg, s, "fail_per_day", &b->fail_per_day, 0, 100)) < 0 ||
	    (rc = get_d(cfg, s, "leave_per_day", &b->leave_per_day, 0, 100)) < 0 ||
	    (rc = get_d(cfg, s, "rejoin_h", &rejoin_h, 0.001, 1e4)) < 0)
		return rc;
	b->rejoin_s = rejoin_h * 3600;
	/* [central] */
	s = "central";
	if ((rc = get_d(cfg, s, "negotiator_interval_s", &b->neg_interval_s, 0.001, 86400)) < 0 ||
	    (rc = get_d(cfg, s, "update_interval_s", &b->update_interval_s, 0.001, 86400)) < 0 ||
	    (rc = get_d(cfg, s, "record_rtts", &b->rec_rtts, 0, 100)) < 0 ||
	    (rc = get_bool(cfg, s, "update_on_change", &b->update_on_change)) < 0)
		return rc;
	static const char *const colls[] = { "event", "blocking", NULL };

	u = 0;
	if ((rc = nl_cfg_get_enum(cfg, s, "collector", colls, &u, false)) < 0)
		return rc;
	b->coll_blocking = u == 1;
	d = b->rec_cost_s * 1e3;
	if ((rc = get_d(cfg, s, "record_cost_ms", &d, 0, 1e6)) < 0)
		return rc;
	b->rec_cost_s = d / 1e3;
	d = 0;
	if ((rc = get_d(cfg, s, "negotiator_ad_cost_ms", &d, 0, 1e6)) < 0)
		return rc;
	b->neg_ad_cost_s = d / 1e3;
	if ((rc = get_d(cfg, s, "match_rtts", &b->match_rtts, 0, 100)) < 0)
		return rc;
	/* experiments */
	for (unsigned int e = 0; e < E_N; e++)
		g->on[e] = nl_cfg_has_section(cfg, exp_name[e]);
	if (g->on[E_T1] && (rc = get_nodes(cfg, "table1", g->t1_nodes, &g->n_t1, true)) < 0)
		return rc;
	g->t1_sys[0] = g->t1_sys[1] = true;
	if (g->on[E_T1]) {
		rc = nl_cfg_get_str(cfg, "table1", "systems", &str, false);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			bool c = strstr(str, "central") != NULL, q = strstr(str, "gossip") != NULL;
			char rest[256];

			snprintf(rest, sizeof(rest), "%s", str);
			for (char *t = strtok(rest, ", "); t != NULL; t = strtok(NULL, ", "))
				if (strcmp(t, "central") != 0 && strcmp(t, "gossip") != 0)
					c = q = false;
			if (!c && !q)
				return nl_cfg_error(cfg, nl_cfg_find(cfg, "table1", "systems"),
						    "expected 'central', 'gossip' or both");
			g->t1_sys[0] = c;
			g->t1_sys[1] = q;
		}
	}
	g->r_trials = 10;
	if (g->on[E_ROUNDS] && ((rc = get_nodes(cfg, "rounds", g->r_nodes, &g->n_r, true)) < 0 ||
				(rc = get_u(cfg, "rounds", "trials", &g->r_trials, 1, 10000)) < 0))
		return rc;
	g->s_trials = 10;
	g->s_curve_n = 1000;
	if (g->on[E_SPREAD] &&
	    ((rc = get_nodes(cfg, "spread", g->s_nodes, &g->n_s, true)) < 0 ||
	     (rc = get_u(cfg, "spread", "trials", &g->s_trials, 1, 10000)) < 0 ||
	     (rc = get_u(cfg, "spread", "curve_nodes", &g->s_curve_n, 2, 1000000)) < 0))
		return rc;
	g->nat_n = 1000;
	g->nat_trials = 10;
	g->nat_blind = true;
	if (g->on[E_NAT] &&
	    ((rc = nl_cfg_get_list(cfg, "nat", "nat_pct", g->nat_pct, MAXN, &g->n_nat, 0, 95,
				   true)) < 0 ||
	     (rc = get_u(cfg, "nat", "nodes", &g->nat_n, 2, 1000000)) < 0 ||
	     (rc = get_u(cfg, "nat", "trials", &g->nat_trials, 1, 10000)) < 0))
		return rc;
	if (g->on[E_NAT]) {
		static const char *const peers[] = { "blind", "flagged", NULL };

		u = 0;
		if ((rc = nl_cfg_get_enum(cfg, "nat", "peers", peers, &u, false)) < 0)
			return rc;
		g->nat_blind = u == 0;
	}
	if (g->on[E_T2] &&
	    ((rc = get_nodes(cfg, "table2", g->t2_nodes, &g->n_t2n, true)) < 0 ||
	     (rc = nl_cfg_get_list(cfg, "table2", "loads", g->t2_loads, MAXN, &g->n_t2l, 0.001,
				   100, true)) < 0))
		return rc;
	g->f9_n = 1000;
	g->f9_load = 1.0;
	if (g->on[E_SCHED] &&
	    ((rc = nl_cfg_get_list(cfg, "schedulers", "counts", g->f9_counts, MAXN, &g->n_f9, 1,
				   NL_GSCHED_MAX_SCHED, true)) < 0 ||
	     (rc = get_u(cfg, "schedulers", "nodes", &g->f9_n, 2, 1000000)) < 0 ||
	     (rc = get_d(cfg, "schedulers", "load", &g->f9_load, 0.001, 100)) < 0))
		return rc;
	for (unsigned int i = 0; i < g->n_f9; i++)
		if (g->f9_counts[i] != floor(g->f9_counts[i]))
			return nl_cfg_error(cfg, nl_cfg_find(cfg, "schedulers", "counts"),
					    "scheduling node counts must be integers (%g)",
					    g->f9_counts[i]);
	if (g->on[E_SENS] &&
	    ((rc = get_nodes(cfg, "sensitivity", g->se_nodes, &g->n_sen, true)) < 0 ||
	     (rc = nl_cfg_get_list(cfg, "sensitivity", "scales", g->se_scales, MAXN, &g->n_ses,
				   0.001, 1000, true)) < 0))
		return rc;
	/* the spread experiments need two nodes outside NAT (nl_gspread_run()) */
	for (unsigned int i = 0; g->on[E_SPREAD] && i <= g->n_s; i++) {
		uint32_t n = i < g->n_s ? (uint32_t)g->s_nodes[i] : g->s_curve_n;

		if (!spread_public_ok(n, b->nat_share))
			return nl_cfg_error(cfg, nl_cfg_find(cfg, "gossip", "nat_pct"),
					    "%g %% of %u nodes ([spread] %s) leaves fewer than 2 nodes "
					    "outside NAT; a record cannot spread", b->nat_share * 100, n,
					    i < g->n_s ? "nodes" : "curve_nodes");
	}
	for (unsigned int i = 0; g->on[E_NAT] && i < g->n_nat; i++)
		if (!spread_public_ok(g->nat_n, g->nat_pct[i] / 100))
			return nl_cfg_error(cfg, nl_cfg_find(cfg, "nat", "nat_pct"),
					    "%g %% of %u nodes ([nat] nodes) leaves fewer than 2 nodes "
					    "outside NAT; a record cannot spread", g->nat_pct[i], g->nat_n);
	bool any = false;

	for (unsigned int e = 0; e < E_N; e++)
		any |= g->on[e];
	if (!any) {
		snprintf(cfg->err, sizeof(cfg->err),
			 "%s: [gossip] needs at least one experiment section: [table1], [rounds], "
			 "[spread], [nat], [table2], [schedulers] or [sensitivity]", cfg->path);
		return -EINVAL;
	}
	return 0;
}

/* ---- tasks ------------------------------------------------------------------------------ */

static struct task *
add_task(struct pool *p, enum task_kind k, unsigned int exp, unsigned int i, unsigned int j)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct task *t = realloc(p->t, cap * sizeof(*t));

		if (t == NULL)
			return NULL;
		p->t = t;
		p->cap = cap;
	}
	struct task *t = &p->t[p->n++];

	memset(t, 0, sizeof(*t));
	t->kind = k;
	t->exp = exp;
	t->i = i;
	t->j = j;
	return t;
}

static uint64_t
mix(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t x = seed ^ (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xbf58476d1ce4e5b9ull) ^
		     (c * 0x94d049bb133111ebull);

	return nl_splitmix64(&x);
}

/* Replicas of a scheduling point so that small node counts get node_days_min node-days. */
static unsigned int
replicas(const struct gcfg *g, double n)
{
	double r = ceil(g->node_days_min / (n * g->days));

	return r < 1 ? 1 : r > 200 ? 200 : (unsigned int)r;
}

static int
add_sched(struct pool *p, const struct gcfg *g, unsigned int exp, unsigned int i, unsigned int j,
	  const struct nl_gsched_cfg *c)
{
	unsigned int r = replicas(g, c->n_nodes);
	double horizon_s = c->horizon_s;
	struct nl_gsched_cfg cl = *c;

	/* library_max_nodes: a larger pool runs on the sweep, exact for whole-view exchanges
	 * with records remade at every exchange; the library engine is O(view) per exchange.
	 * docs/gossip.md gives the measurement that makes the two agree there. */
	if (g->library_max_nodes > 0 && c->view == NL_GSCHED_VIEW_LIBRARY &&
	    c->n_nodes > g->library_max_nodes) {
		cl.view = NL_GSCHED_VIEW_SWEEP;
		cl.rule = NL_GOSSIP_ANTI_ENTROPY;
		cl.refresh_on_change = false;
	}
	c = &cl;

	/* large pools: no more than node_days_max node-days, but at least the warm-up and four
	 * of the longest jobs measured (steady state: utilization over many job lengths) */
	if (g->node_days_max > 0) {
		double cap_s = g->node_days_max / c->n_nodes * 86400,
		       floor_s = c->warmup_s + 4 * c->job_max_s;

		cap_s = cap_s > floor_s ? cap_s : floor_s;
		horizon_s = cap_s < horizon_s ? cap_s : horizon_s;
	}
	for (unsigned int k = 0; k < r; k++) {
		struct task *t = add_task(p, T_SCHED, exp, i, j);

		if (t == NULL)
			return -ENOMEM;
		t->sc = *c;
		t->sc.horizon_s = horizon_s;
		/* the same seed for both systems at one point: the same nodes and network */
		t->sc.seed = mix(g->seed, exp, c->n_nodes, k);
	}
	return 0;
}

static int
add_spread(struct pool *p, const struct gcfg *g, unsigned int exp, unsigned int i,
	   unsigned int j, uint32_t n, double nat, enum nl_gossip_mode mode,
	   enum nl_gossip_rule rule, unsigned int trials)
{
	for (unsigned int k = 0; k < trials; k++) {
		struct task *t = add_task(p, T_SPREAD, exp, i, j);

		if (t == NULL)
			return -ENOMEM;
		t->pc = (struct nl_gspread_cfg){ .n_nodes = n, .nat_share = nat, .max_rounds = 150,
						 .nat_blind = exp == E_NAT && g->nat_blind,
						 .seed = mix(g->seed, 1000 + exp, n * 131 + i, k),
						 .g = { .fanout = g->base.fanout, .mode = mode,
							.rule = rule, .stop_k = g->stop_k } };
	}
	return 0;
}

static void *
worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		size_t i = atomic_fetch_add(&p->next, 1);

		if (i >= p->n)
			break;
		struct task *t = &p->t[i];

		atomic_store(&t->state, 1);
		if (t->kind == T_SCHED)
			t->rc = nl_gsched_run(&t->sc, &t->sr);
		else
			t->rc = nl_gspread_run(&t->pc, &t->pr);
		atomic_store(&t->state, 2);
		size_t d = atomic_fetch_add(&p->done, 1) + 1;

		if (d == p->n)
			p->t_end = nl_sim_wall_s(); /* read after the workers are joined */

		if (!p->quiet && (t->kind == T_SCHED || d == p->n || d % 50 == 0)) {
			pthread_mutex_lock(&p->lock);
			if (t->kind == T_SCHED)
				fprintf(stderr, "[%zu/%zu %.1fs] %s: %s %u nodes%s load %g sched %u: "
						"util %.4f\n", d, p->n, nl_sim_wall_s() - p->t0,
					exp_name[t->exp],
					t->sc.sys == NL_GSCHED_CENTRAL ? "central" : "gossip",
					t->sc.n_nodes, "", t->sc.load, t->sc.n_sched, t->sr.util);
			else
				fprintf(stderr, "[%zu/%zu %.1fs] %s: spreads\n", d, p->n,
					nl_sim_wall_s() - p->t0, exp_name[t->exp]);
			pthread_mutex_unlock(&p->lock);
		}
	}
	return NULL;
}

/* Until every run is done: a line every 10 s (unless quiet) with the runs in flight and how
 * far their simulated time got, so one long run does not look like a hang. */
static void
wait_runs(struct pool *p)
{
	double last = nl_sim_wall_s();

	while (atomic_load(&p->done) < p->n) {
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
		if (p->quiet || nl_sim_wall_s() - last < 10)
			continue;
		last = nl_sim_wall_s();
		char line[256];
		int len = 0;
		unsigned int shown = 0;

		for (size_t i = 0; i < p->n && shown < 4; i++) {
			const struct task *t = &p->t[i];

			if (atomic_load(&t->state) != 1)
				continue;
			shown++;
			if (t->kind == T_SCHED)
				len += snprintf(line + len, sizeof(line) - (size_t)len,
						" %s %s %u nodes at %.1f %%;", exp_name[t->exp],
						t->sc.sys == NL_GSCHED_CENTRAL ? "central" : "gossip",
						t->sc.n_nodes,
						atomic_load_explicit(&t->progress_ppm,
								     memory_order_relaxed) / 1e4);
			else
				len += snprintf(line + len, sizeof(line) - (size_t)len,
						" %s spread of %u nodes;", exp_name[t->exp],
						t->pc.n_nodes);
			if (len >= (int)sizeof(line))
				len = (int)sizeof(line) - 1;
		}
		pthread_mutex_lock(&p->lock);
		fprintf(stderr, "[%zu/%zu %.1fs] running:%s\n", atomic_load(&p->done), p->n,
			last - p->t0, shown ? line : " (starting)");
		pthread_mutex_unlock(&p->lock);
	}
}

/* Mean utilization (and other figures) over the replicas of (exp, i, j, sys). */
struct agg {
	double util, age, cycle, rec;
	double gap; /* idle core time per job started [s] (after warm-up) */
	double sim_s; /* simulated time of one run [s] */
	double recs_per_x; /* gossip records per exchange (library engine; NAN with the sweep) */
	double refused_per_job; /* asks refused per job started, all replicas */
	unsigned int n;
};

static struct agg
agg_sched(const struct pool *p, unsigned int exp, unsigned int i, unsigned int j,
	  enum nl_gsched_sys sys)
{
	struct agg a = { 0 };
	uint64_t x = 0, r = 0, nref = 0, nst = 0;
	bool lib = false;

	for (size_t k = 0; k < p->n; k++) {
		const struct task *t = &p->t[k];

		if (t->kind != T_SCHED || t->exp != exp || t->i != i || t->j != j || t->sc.sys != sys)
			continue;
		a.util += t->sr.util;
		a.age += t->sr.info_age_s;
		a.cycle += t->sr.cycle_s;
		a.rec += t->sr.rec_cost_s;
		a.gap += t->sr.idle_gap_s;
		a.sim_s = t->sr.sim_s;
		x += t->sr.exchanges;
		r += t->sr.recs_sent;
		nref += t->sr.refused;
		nst += t->sr.started;
		lib |= t->sc.view == NL_GSCHED_VIEW_LIBRARY;
		a.n++;
	}
	if (a.n > 0) {
		a.util /= a.n;
		a.age /= a.n;
		a.cycle /= a.n;
		a.rec /= a.n;
		a.gap /= a.n;
	}
	a.recs_per_x = lib && x > 0 ? (double)r / (double)x : NAN;
	a.refused_per_job = nst > 0 ? (double)nref / (double)nst : NAN;
	return a;
}

struct sagg {
	double rounds_all, rounds_conv, share, never;
	double recs_per_x;  /* copies of the record sent per exchange opened */
	double recs_per_node; /* copies of the record sent per node over the whole spread */
	double curve[NL_GSPREAD_MAX_ROUNDS + 1];
	unsigned int n, n_curve;
};

static struct sagg
agg_spread(const struct pool *p, unsigned int exp, unsigned int i, unsigned int j)
{
	struct sagg a;
	unsigned int reached = 0;
	uint64_t x = 0, sent = 0;
	double nodes = 0;

	memset(&a, 0, sizeof(a));
	for (size_t k = 0; k < p->n; k++) {
		const struct task *t = &p->t[k];

		if (t->kind != T_SPREAD || t->exp != exp || t->i != i || t->j != j)
			continue;
		a.n++;
		if (t->pr.rounds_all > 0) {
			a.rounds_all += t->pr.rounds_all;
			reached++;
		}
		a.rounds_conv += t->pr.rounds_conv;
		x += t->pr.exchanges;
		sent += t->pr.recs_sent;
		nodes += t->pc.n_nodes;
		a.share += t->pr.final_share;
		for (unsigned int r = 0; r <= NL_GSPREAD_MAX_ROUNDS; r++)
			a.curve[r] += r < t->pr.n_share ? t->pr.share[r] : t->pr.final_share;
		if (t->pr.n_share > a.n_curve)
			a.n_curve = t->pr.n_share;
	}
	if (a.n > 0) {
		a.rounds_all = reached ? a.rounds_all / reached : NAN;
		a.never = (double)(a.n - reached) / a.n;
		a.rounds_conv /= a.n;
		a.share /= a.n;
		a.recs_per_x = x ? (double)sent / (double)x : 0;
		a.recs_per_node = nodes > 0 ? (double)sent / nodes : 0;
		for (unsigned int r = 0; r <= NL_GSPREAD_MAX_ROUNDS; r++)
			a.curve[r] /= a.n;
	}
	return a;
}

/* ---- output ----------------------------------------------------------------------------- */

struct out {
	char summ[8192];
	size_t off;
	const char *dir;
	FILE *gp;
};

static void
summ(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
summ(struct out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->off >= sizeof(o->summ) - 1)
		return;
	o->summ[o->off++] = ' ';
	va_start(ap, fmt);
	int k = vsnprintf(o->summ + o->off, sizeof(o->summ) - o->off, fmt, ap);

	va_end(ap);
	if (k > 0)
		o->off += (size_t)k;
	if (o->off >= sizeof(o->summ))
		o->off = sizeof(o->summ) - 1;
}

static FILE *
csv_open(const struct out *o, const char *name, const char *config, uint64_t seed)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	f = fopen(path, "w");
	if (f != NULL)
		fprintf(f, "# nlevel-sim gossip model, config %s, seed %llu, nlevel %s\n", config,
			(unsigned long long)seed, NL_GIT_DESCRIBE);
	return f;
}

static const char paper[] = "after Umeda, Nakada, Matsuoka: Decentralized Job Scheduling "
			    "System based on Information Sharing...";

static void
gp_head(struct out *o, const char *png, const char *title, const char *xl, const char *yl)
{
	fprintf(o->gp, "set output '%s/%s'\nset title \"%s\\n(%s)\" noenhanced\n"
		       "set xlabel '%s'\nset ylabel '%s'\nunset logscale\nset key bottom left\n",
		".", png, title, paper, xl, yl);
}

/* Rounds for one record to reach all N nodes, anti-entropy, fan-out f. Push-pull: while few
 * know it, each informed node pushes to f peers and is pulled by about f, so the informed
 * count grows (1 + 2f)-fold a round; at the end an uninformed node stays so only if its f
 * pulls all hit uninformed nodes, u -> u^(1+f), which takes log_(1+f) ln N rounds (f = 1:
 * Karp, Schindelhauer, Shenker, Vöcking, FOCS 2000). Push: (1 + f)-fold, then u -> u e^-f,
 * i.e. ln N / f rounds (f = 1: Pittel 1987, log2 N + ln N). */
static double
theory_rounds(unsigned int n, unsigned int f, bool push_pull)
{
	if (push_pull)
		return log(n) / log(1.0 + 2 * f) + log(log(n)) / log(1.0 + f);
	return log(n) / log(1.0 + f) + log(n) / f;
}

/* crossover: the smallest node count of the list from which gossip >= central. */
static double
crossover(const double *nodes, unsigned int n, const double *uc, const double *ug)
{
	for (unsigned int i = 0; i < n; i++) {
		bool all = true;

		for (unsigned int k = i; k < n; k++)
			all &= ug[k] >= uc[k];
		if (all)
			return nodes[i];
	}
	return 0;
}

static int
report(const struct gcfg *g, const struct pool *p, struct out *o, const char *config)
{
	FILE *f;

	if (g->on[E_T1]) {
		f = csv_open(o, "table1.csv", config, g->seed);
		if (f == NULL)
			return -errno;
		fprintf(f, "nodes,util_central,util_gossip,ratio,age_central_s,age_gossip_s,"
			   "collect_cycle_s,record_cost_s,replicas,gossip_records_per_exchange,"
			   "gap_central_s,gap_gossip_s,sim_h,wait_theory_s,refused_per_job_gossip\n");
		for (unsigned int i = 0; i < g->n_t1; i++) {
			struct agg c = agg_sched(p, E_T1, i, 0, NL_GSCHED_CENTRAL);
			struct agg q = agg_sched(p, E_T1, i, 0, NL_GSCHED_GOSSIP);
			unsigned int n = (unsigned int)g->t1_nodes[i];

			/* the floor of gossip's wait: a freed node's record reaching the one
			 * scheduling node (n + 1 participants) */
			double wt = nl_gsched_spread_wait_s(n + 1, g->base.period_s,
							    g->base.fanout, g->base.mode);

			fprintf(f, "%u,%.4f,%.4f,%.4f,%.1f,%.1f,%.1f,%.4f,%u,%.3f,%.1f,%.1f,%.1f,"
				   "%.1f,%.4f\n",
				n, c.util, q.util, c.n ? q.util / c.util : NAN, c.age, q.age,
				c.cycle, c.rec, c.n ? c.n : q.n, q.recs_per_x, c.n ? c.gap : NAN,
				q.n ? q.gap : NAN, (c.n ? c.sim_s : q.sim_s) / 3600, wt,
				q.n ? q.refused_per_job : NAN);
			if (c.n)
				summ(o, "util_central_%u=%.4f gap_central_%u=%.0f", n, c.util, n, c.gap);
			if (q.n)
				summ(o, "util_gossip_%u=%.4f gap_gossip_%u=%.0f", n, q.util, n, q.gap);
		}
		fclose(f);
		gp_head(o, "table1.png", "Table 1: mean utilization, central manager vs gossip",
			"compute nodes", "utilization");
		fprintf(o->gp, "set logscale x\nset yrange [0:1.02]\n"
			       "plot '%s/table1.csv' using 1:2 with linespoints lw 2 title 'central "
			       "(Condor-like)', '' using 1:3 with linespoints lw 2 title 'gossip'\n",
			".");
	}
	if (g->on[E_ROUNDS]) {
		f = csv_open(o, "rounds.csv", config, g->seed);
		if (f == NULL)
			return -errno;
		fprintf(f, "nodes,mode,fanout,rounds_mean,theory_rounds,records_per_exchange,"
			   "trials\n");
		for (unsigned int i = 0; i < g->n_r; i++) {
			unsigned int n = (unsigned int)g->r_nodes[i], fo = g->base.fanout;
			struct sagg pp = agg_spread(p, E_ROUNDS, i, 0), pu = agg_spread(p, E_ROUNDS, i, 1);

			fprintf(f, "%u,push-pull,%u,%.3f,%.3f,%.4f,%u\n", n, fo, pp.rounds_all,
				theory_rounds(n, fo, true), pp.recs_per_x, pp.n);
			fprintf(f, "%u,push,%u,%.3f,%.3f,%.4f,%u\n", n, fo, pu.rounds_all,
				theory_rounds(n, fo, false), pu.recs_per_x, pu.n);
			summ(o, "rounds_pp_f%u_%u=%.2f rounds_push_f%u_%u=%.2f", fo, n, pp.rounds_all,
			     fo, n, pu.rounds_all);
			if (fo == 1) /* the historical keys, fan-out 1 only */
				summ(o, "rounds_pp_%u=%.2f rounds_push_%u=%.2f", n, pp.rounds_all, n,
				     pu.rounds_all);
		}
		fclose(f);
	}
	if (g->on[E_SPREAD]) {
		f = csv_open(o, "fig6.csv", config, g->seed);
		if (f == NULL)
			return -errno;
		fprintf(f, "nodes,share_push_stopk,share_pp_stopk,share_pp_antientropy,"
			   "rounds_conv_push_stopk,rounds_conv_pp_stopk,rounds_all_pp_antientropy,"
			   "recs_per_node_push_stopk,recs_per_node_pp_stopk,recs_per_node_pp_antientropy,"
			   "recs_per_exchange_push_stopk,recs_per_exchange_pp_stopk,"
			   "recs_per_exchange_pp_antientropy,trials\n");
		for (unsigned int i = 0; i < g->n_s; i++) {
			unsigned int n = (unsigned int)g->s_nodes[i];
			struct sagg a[3];

			for (unsigned int v = 0; v < 3; v++)
				a[v] = agg_spread(p, E_SPREAD, i, v);
			fprintf(f, "%u,%.4f,%.4f,%.4f,%.2f,%.2f,%.2f,%.3f,%.3f,%.3f,%.4f,%.4f,%.4f,%u\n",
				n, a[0].share, a[1].share, a[2].share, a[0].rounds_conv,
				a[1].rounds_conv, a[2].rounds_all, a[0].recs_per_node,
				a[1].recs_per_node, a[2].recs_per_node, a[0].recs_per_x,
				a[1].recs_per_x, a[2].recs_per_x, a[0].n);
			summ(o, "share_paperrule_f%u_%u=%.4f share_pp_stopk_f%u_%u=%.4f",
			     g->base.fanout, n, a[0].share, g->base.fanout, n, a[1].share);
			if (g->base.fanout == 1) /* the historical keys, fan-out 1 only */
				summ(o, "share_paperrule_%u=%.4f share_pp_stopk_%u=%.4f", n,
				     a[0].share, n, a[1].share);
			summ(o, "recs_node_paperrule_f%u_%u=%.3f recs_node_pp_stopk_f%u_%u=%.3f "
				"recs_node_pp_ae_f%u_%u=%.3f", g->base.fanout, n, a[0].recs_per_node,
			     g->base.fanout, n, a[1].recs_per_node, g->base.fanout, n,
			     a[2].recs_per_node);
		}
		fclose(f);
		f = csv_open(o, "fig7.csv", config, g->seed);
		if (f == NULL)
			return -errno;
		struct sagg cv[3];
		unsigned int nr = 0;

		for (unsigned int v = 0; v < 3; v++) {
			cv[v] = agg_spread(p, E_SPREAD, g->n_s, v);
			if (cv[v].n_curve > nr)
				nr = cv[v].n_curve;
		}
		fprintf(f, "round,share_push_stopk,share_pp_stopk,share_pp_antientropy\n");
		for (unsigned int r = 0; r < nr; r++)
			fprintf(f, "%u,%.4f,%.4f,%.4f\n", r, cv[0].curve[r], cv[1].curve[r],
				cv[2].curve[r]);
		fclose(f);
		gp_head(o, "fig6.png", "Fig. 6: share of nodes informed at convergence (f = 1, k = 1)",
			"nodes", "share informed");
		fprintf(o->gp, "set logscale x\nset yrange [0:1.05]\n"
			       "plot '%s/fig6.csv' using 1:2 with linespoints lw 2 title 'push stop-k (paper rule)', "
			       "'' using 1:3 with linespoints lw 2 title 'push-pull stop-k', "
			       "'' using 1:4 with linespoints lw 2 title 'push-pull anti-entropy'\n", ".");
		char t7[128];

		snprintf(t7, sizeof(t7), "Fig. 7: share informed vs round, %u nodes", g->s_curve_n);
		gp_head(o, "fig7.png", t7, "round", "share informed");
		fprintf(o->gp, "set yrange [0:1.05]\nset key bottom right\n"
			       "plot '%s/fig7.csv' using 1:2 with linespoints lw 2 title 'push stop-k (paper rule)', "
			       "'' using 1:3 with linespoints lw 2 title 'push-pull stop-k', "
			       "'' using 1:4 with linespoints lw 2 title 'push-pull anti-entropy'\n", ".");
	}
	if (g->on[E_NAT]) {
		f = csv_open(o, "fig8.csv", config, g->seed);
		if (f == NULL)
			return -errno;
		fprintf(f, "nat_pct,share_stopk,rounds_converged_stopk,share_antientropy,"
			   "rounds_all_antientropy,recs_per_node_stopk,trials\n");
		for (unsigned int i = 0; i < g->n_nat; i++) {
			struct sagg a = agg_spread(p, E_NAT, i, 0), b = agg_spread(p, E_NAT, i, 1);

			fprintf(f, "%g,%.4f,%.2f,%.4f,%.2f,%.3f,%u\n", g->nat_pct[i], a.share,
				a.rounds_conv, b.share, b.rounds_all, a.recs_per_node, a.n);
			summ(o, "nat%g_share_f%u=%.4f nat%g_rounds_f%u=%.2f", g->nat_pct[i],
			     g->base.fanout, a.share, g->nat_pct[i], g->base.fanout, a.rounds_conv);
			if (g->base.fanout == 1) /* the historical keys, fan-out 1 only */
				summ(o, "nat%g_share=%.4f nat%g_rounds=%.2f", g->nat_pct[i], a.share,
				     g->nat_pct[i], a.rounds_conv);
		}
		fclose(f);
		gp_head(o, "fig8.png", "Fig. 8: nodes behind NAT (push-pull, f = 1)",
			"share of nodes behind NAT [%]", "share informed / rounds");
		fprintf(o->gp, "set yrange [0:*]\nset y2range [0:*]\nset y2tics\nset y2label 'rounds'\n"
			       "set key bottom left\n"
			       "plot '%s/fig8.csv' using 1:2 with linespoints lw 2 title 'share informed, stop-k', "
			       "'' using 1:3 axes x1y2 with linespoints lw 2 title 'rounds, stop-k (right)', "
			       "'' using 1:5 axes x1y2 with linespoints lw 2 title 'rounds to all, anti-entropy (right)'\n"
			       "unset y2tics\nunset y2label\n", ".");
	}
	if (g->on[E_T2]) {
		f = csv_open(o, "table2.csv", config, g->seed);
		if (f == NULL)
			return -errno;
		fprintf(f, "nodes,load,util_central,util_gossip,ratio\n");
		for (unsigned int i = 0; i < g->n_t2n; i++)
			for (unsigned int j = 0; j < g->n_t2l; j++) {
				struct agg c = agg_sched(p, E_T2, i, j, NL_GSCHED_CENTRAL);
				struct agg q = agg_sched(p, E_T2, i, j, NL_GSCHED_GOSSIP);
				unsigned int n = (unsigned int)g->t2_nodes[i];

				/* no ratio where the central manager ran nothing in the measured window
				 * (a tiny load on a short run): an empty field, no SUMMARY key */
				fprintf(f, "%u,%g,%.4f,%.4f,", n, g->t2_loads[j], c.util, q.util);
				if (c.util > 0) {
					fprintf(f, "%.4f", q.util / c.util);
					summ(o, "t2_ratio_%g_%u=%.4f", g->t2_loads[j], n, q.util / c.util);
				}
				fprintf(f, "\n");
			}
		fclose(f);
		gp_head(o, "table2.png", "Table 2: gossip / central utilization vs offered load",
			"offered load (x capacity)", "gossip / central");
		fprintf(o->gp, "set datafile separator ','\nset key top left\nset yrange [*:*]\nplot ");
		for (unsigned int i = 0; i < g->n_t2n; i++)
			fprintf(o->gp, "%s'%s/table2.csv' using 2:($1 == %u ? $5 : 1/0) with linespoints "
				       "lw 2 title '%u nodes'", i ? ", " : "", ".",
				(unsigned int)g->t2_nodes[i], (unsigned int)g->t2_nodes[i]);
		fprintf(o->gp, "\n");
	}
	if (g->on[E_SCHED]) {
		f = csv_open(o, "fig9.csv", config, g->seed);
		if (f == NULL)
			return -errno;
		fprintf(f, "schedulers,nodes,load,util_gossip,age_s\n");
		for (unsigned int i = 0; i < g->n_f9; i++) {
			struct agg q = agg_sched(p, E_SCHED, i, 0, NL_GSCHED_GOSSIP);

			fprintf(f, "%g,%u,%g,%.4f,%.1f\n", g->f9_counts[i], g->f9_n, g->f9_load, q.util,
				q.age);
			summ(o, "util_sched_%g=%.4f", g->f9_counts[i], q.util);
		}
		fclose(f);
		gp_head(o, "fig9.png", "Fig. 9: utilization vs scheduling nodes (gossip)",
			"scheduling nodes", "utilization");
		fprintf(o->gp, "set logscale x 2\nset yrange [0:1.02]\nplot '%s/fig9.csv' using 1:4 "
			       "with linespoints lw 2 title 'gossip'\n", ".");
	}
	if (g->on[E_SENS]) {
		f = csv_open(o, "sensitivity.csv", config, g->seed);
		if (f == NULL)
			return -errno;
		fprintf(f, "scale,record_cost_ms,crossover_nodes\n");
		double ug[MAXN], uc[MAXN];
		unsigned int drawn = 0; /* points the log-log figure can show */

		for (unsigned int i = 0; i < g->n_sen; i++)
			ug[i] = agg_sched(p, E_SENS, i, 0, NL_GSCHED_GOSSIP).util;
		for (unsigned int j = 0; j < g->n_ses; j++) {
			double rec = 0;

			for (unsigned int i = 0; i < g->n_sen; i++) {
				struct agg c = agg_sched(p, E_SENS, i, j + 1, NL_GSCHED_CENTRAL);

				uc[i] = c.util;
				rec = c.rec;
			}
			double x = crossover(g->se_nodes, g->n_sen, uc, ug);

			drawn += rec > 0 && x > 0;
			fprintf(f, "%g,%.2f,%g\n", g->se_scales[j], rec * 1e3, x);
			summ(o, "crossover_x%g=%g", g->se_scales[j], x);
		}
		fclose(f);
		gp_head(o, "sensitivity.png",
			"central per-record cost vs crossover node count (0 = none in range)",
			"per-record cost [ms]", "crossover [nodes]");
		if (drawn == 0) /* log axes: gnuplot refuses a plot with no point */
			fprintf(o->gp, "set label 1 'no crossover with a per-record cost > 0 in the "
				       "node range' at graph 0.5, 0.5 center\nplot [1:10] [1:10] 1/0 "
				       "notitle\nunset label 1\n");
		else
			fprintf(o->gp, "set logscale xy\nplot '%s/sensitivity.csv' using ($2 > 0 ? "
				       "$2 : 1/0):($3 > 0 ? $3 : 1/0) with linespoints lw 2 title "
				       "'gossip >= central from'\n", ".");
	}
	return 0;
}

int
nl_sim_main_gossip(struct nl_cfg *cfg, const struct nl_sim_opts *o)
{
	struct gcfg g;
	struct pool p = { 0 };
	int rc;

	if (parse(cfg, &g) != 0 || nl_cfg_check_unused(cfg) != 0) {
		fprintf(stderr, "nlevel-sim: %s\n", cfg->err);
		free(g.job_ad);
		return 2;
	}
	if (o->threads > 0)
		g.threads = o->threads;
	struct nl_gsched_cfg *b = &g.base;
	double mc = 0;

	b->job_ad = g.job_ad != NULL ? g.job_ad : default_job_ad;
	if (nl_gsched_match_cost(b->job_ad, &mc) != 0) {
		fprintf(stderr, "nlevel-sim: the job ad does not compile\n");
		free(g.job_ad);
		return 2;
	}
	if (g.match_auto)
		b->match_cost_s = mc;
	b->seed = g.seed;
	b->net_seed = g.seed;
	b->stop_k = g.stop_k;
	p.quiet = o->quiet;
	pthread_mutex_init(&p.lock, NULL);
	rc = 0;
	/* tasks */
	for (unsigned int i = 0; i < g.n_t1 && g.on[E_T1] && rc == 0; i++)
		for (int sys = 0; sys < 2 && rc == 0; sys++) {
			struct nl_gsched_cfg c = *b;

			if (!g.t1_sys[sys == NL_GSCHED_GOSSIP])
				continue;
			c.sys = (enum nl_gsched_sys)sys;
			c.n_nodes = (uint32_t)g.t1_nodes[i];
			c.load = 0;
			rc = add_sched(&p, &g, E_T1, i, 0, &c);
		}
	for (unsigned int i = 0; i < g.n_r && g.on[E_ROUNDS] && rc == 0; i++) {
		rc = add_spread(&p, &g, E_ROUNDS, i, 0, (uint32_t)g.r_nodes[i], 0, NL_GOSSIP_PUSH_PULL,
				NL_GOSSIP_ANTI_ENTROPY, g.r_trials);
		if (rc == 0)
			rc = add_spread(&p, &g, E_ROUNDS, i, 1, (uint32_t)g.r_nodes[i], 0,
					NL_GOSSIP_PUSH, NL_GOSSIP_ANTI_ENTROPY, g.r_trials);
	}
	static const enum nl_gossip_mode vm[3] = { NL_GOSSIP_PUSH, NL_GOSSIP_PUSH_PULL,
						   NL_GOSSIP_PUSH_PULL };
	static const enum nl_gossip_rule vr[3] = { NL_GOSSIP_STOP_K, NL_GOSSIP_STOP_K,
						   NL_GOSSIP_ANTI_ENTROPY };

	for (unsigned int i = 0; i <= g.n_s && g.on[E_SPREAD] && rc == 0; i++) {
		uint32_t n = i < g.n_s ? (uint32_t)g.s_nodes[i] : g.s_curve_n; /* i = n_s: Fig. 7 */

		for (unsigned int v = 0; v < 3 && rc == 0; v++)
			rc = add_spread(&p, &g, E_SPREAD, i, v, n, b->nat_share, vm[v], vr[v],
					g.s_trials);
	}
	for (unsigned int i = 0; i < g.n_nat && g.on[E_NAT] && rc == 0; i++) {
		rc = add_spread(&p, &g, E_NAT, i, 0, g.nat_n, g.nat_pct[i] / 100, NL_GOSSIP_PUSH_PULL,
				NL_GOSSIP_STOP_K, g.nat_trials);
		if (rc == 0)
			rc = add_spread(&p, &g, E_NAT, i, 1, g.nat_n, g.nat_pct[i] / 100,
					NL_GOSSIP_PUSH_PULL, NL_GOSSIP_ANTI_ENTROPY, g.nat_trials);
	}
	for (unsigned int i = 0; i < g.n_t2n && g.on[E_T2] && rc == 0; i++)
		for (unsigned int j = 0; j < g.n_t2l && rc == 0; j++)
			for (int sys = 0; sys < 2 && rc == 0; sys++) {
				struct nl_gsched_cfg c = *b;

				c.sys = (enum nl_gsched_sys)sys;
				c.n_nodes = (uint32_t)g.t2_nodes[i];
				c.load = g.t2_loads[j];
				rc = add_sched(&p, &g, E_T2, i, j, &c);
			}
	for (unsigned int i = 0; i < g.n_f9 && g.on[E_SCHED] && rc == 0; i++) {
		struct nl_gsched_cfg c = *b;

		c.n_nodes = g.f9_n;
		c.n_sched = (unsigned int)g.f9_counts[i];
		c.load = g.f9_load;
		rc = add_sched(&p, &g, E_SCHED, i, 0, &c);
	}
	for (unsigned int i = 0; i < g.n_sen && g.on[E_SENS] && rc == 0; i++) {
		struct nl_gsched_cfg c = *b;

		c.n_nodes = (uint32_t)g.se_nodes[i];
		rc = add_sched(&p, &g, E_SENS, i, 0, &c);
		c.sys = NL_GSCHED_CENTRAL;
		for (unsigned int j = 0; j < g.n_ses && rc == 0; j++) {
			c.rec_scale = g.se_scales[j];
			rc = add_sched(&p, &g, E_SENS, i, j + 1, &c);
		}
	}
	if (rc != 0) {
		fprintf(stderr, "nlevel-sim: out of memory\n");
		free(p.t);
		free(g.job_ad);
		return 1;
	}
	/* longest runs first, so the threads finish together */
	for (size_t i = 1; i < p.n; i++) {
		struct task t = p.t[i];
		double w = t.kind == T_SCHED ? (double)t.sc.n_nodes * (t.sc.sys ? 0.1 : 1) : 0;
		size_t j = i;

		for (; j > 0; j--) {
			const struct task *u = &p.t[j - 1];
			double wu = u->kind == T_SCHED ? (double)u->sc.n_nodes * (u->sc.sys ? 0.1 : 1) : 0;

			if (wu >= w)
				break;
			p.t[j] = p.t[j - 1];
		}
		p.t[j] = t;
	}
	unsigned int n_th = g.threads ? g.threads : (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);

	if (n_th == 0)
		n_th = 1;
	if (n_th > 64)
		n_th = 64;
	if (!o->quiet)
		fprintf(stderr, "nlevel-sim: gossip model, %zu runs on %u threads, matchmaking %.0f ns "
				"per evaluation%s\n", p.n, n_th, b->match_cost_s * 1e9,
			g.match_auto ? " (measured)" : " (configured)");
	pthread_t th[64];

	struct timespec c0, c1;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	p.t0 = nl_sim_wall_s();
	for (size_t i = 0; i < p.n; i++)
		p.t[i].sc.progress_ppm = &p.t[i].progress_ppm; /* p.t no longer moves */
	for (unsigned int i = 0; i < n_th; i++)
		pthread_create(&th[i], NULL, worker, &p);
	wait_runs(&p);
	for (unsigned int i = 0; i < n_th; i++)
		pthread_join(th[i], NULL);
	/* the last run's end, not the poll that saw it (wait_runs() polls every 100 ms) */
	double wall = (p.t_end > 0 ? p.t_end : nl_sim_wall_s()) - p.t0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
	uint64_t exch = 0, exch_failed = 0, recs = 0;

	for (size_t i = 0; i < p.n; i++) {
		if (p.t[i].rc != 0) {
			fprintf(stderr, "nlevel-sim: run failed: %s\n", strerror(-p.t[i].rc));
			free(p.t);
			free(g.job_ad);
			return 1;
		}
		if (p.t[i].kind == T_SCHED) {
			exch += p.t[i].sr.exchanges;
			recs += p.t[i].sr.recs_sent;
		} else {
			exch += p.t[i].pr.exchanges;
			exch_failed += p.t[i].pr.failed;
			recs += p.t[i].pr.recs_sent;
		}
	}
	struct out out = { .dir = o->out_dir };
	char path[4200];

	snprintf(path, sizeof(path), "%s/plot_gossip.gp", o->out_dir);
	out.gp = fopen(path, "w");
	if (out.gp == NULL) {
		fprintf(stderr, "nlevel-sim: cannot write %s: %s\n", path, strerror(errno));
		free(p.t);
		free(g.job_ad);
		return 1;
	}
	fprintf(out.gp, "# Made by nlevel-sim from the CSV files only: cd to this folder, then "
			"gnuplot plot_gossip.gp (%s)\n"
			"set datafile separator ','\nset terminal pngcairo size 900,600 noenhanced\n"
			"set grid\n", path);
	rc = report(&g, &p, &out, o->config);
	fclose(out.gp);
	if (rc != 0) {
		fprintf(stderr, "nlevel-sim: cannot write the CSV files in %s: %s\n", o->out_dir,
			strerror(-rc));
		free(p.t);
		free(g.job_ad);
		return 1;
	}
	/* in the output folder: the script names its files relative to it */
	if (nl_gnuplot_run(o->out_dir, "plot_gossip.gp", "plot_gossip.log") != 0)
		fprintf(stderr, "nlevel-sim: gnuplot failed or missing (see %s/plot_gossip.log); the "
				"CSV files are complete\n", o->out_dir);
	/* exchanges: opened; exchanges_failed: of them, to a peer that could not be contacted
	 * (spread experiments); records_sent: the messages that carried a record (spread: copies
	 * of the tracked record; scheduling runs: library engine only, the sweep counts none) */
	printf("SUMMARY%s match_cost_ns=%.1f sim_days=%g runs=%zu exchanges=%llu "
	       "exchanges_failed=%llu records_sent=%llu exchanges_per_s=%.0f wall_s=%.2f cpu_s=%.2f "
	       "threads=%u\n", out.summ, b->match_cost_s * 1e9, g.days, p.n,
	       (unsigned long long)exch, (unsigned long long)exch_failed, (unsigned long long)recs,
	       exch / wall, wall, cpu, n_th);
	free(p.t);
	free(g.job_ad);
	return 0;
}
