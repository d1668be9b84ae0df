/* SPDX-License-Identifier: BSD-3-Clause */
/* The simulator against queueing theory (M/M/1, Erlang C, Little's law) and its accounting
 * invariants (nl_dsim.h I1-I3). */
#include <math.h>
#include <string.h>

#include "nl_dsim.h"
#include "nl_machine.h"
#include "nl_tap.h"

/* c identical machines (one vector), L = 1, exponential work of mean 1 u.t., no scheduling
 * cost: c servers behind least-loaded assignment = one FCFS queue, M/M/c. */
static void
mmc_model(struct nl_model_cfg *m, unsigned int c)
{
	memset(m, 0, sizeof(*m));
	m->n_mach = c;
	m->n_res = 1;
	m->vectors = NL_VECTORS_RANDOM;
	m->res_prob = 0;
	m->speed_ips[0] = 1;
	m->n_speed = 1;
	m->link_bps = 1;
	m->n_split = 1;
	m->instr = 1;
	m->work_dist = NL_WORK_EXP;
	m->need_prob = 0;
	m->sp.n_res = 1;
	m->horizon_vt = 2e5;
	m->warmup_vt = 1e4;
	m->max_in_system = 1u << 20;
	m->n_seeds = 1;
}

static double
erlang_c_resp(unsigned int c, double lambda, double mu)
{
	double a = lambda / mu, rho = a / c, sum = 0, term = 1, top;

	for (unsigned int k = 0; k < c; k++) {
		sum += term;
		term *= a / (k + 1);
	}
	top = term / (1 - rho); /* a^c / c! / (1 - rho) */
	return top / (sum + top) / (c * mu - lambda) + 1 / mu;
}

static double
mean_resp(const struct nl_model_cfg *m, const struct nl_machine *mach, double load, uint64_t seed,
	  unsigned int reps, struct nl_dsim_result *last)
{
	struct nl_variant v = { .scheme = NL_SCHEME_NLSC };
	double s = 0;

	for (unsigned int k = 0; k < reps; k++) {
		nl_dsim_run(m, mach, &v, load, seed + k, last);
		s += last->resp_mean_vt;
	}
	return s / reps;
}

static void
test_queueing_theory(uint64_t seed)
{
	struct nl_model_cfg m;
	struct nl_machine mach[4];
	struct nl_dsim_result r;
	double got, want;

	mmc_model(&m, 1);
	nl_machines_build(&m, 1, mach);
	got = mean_resp(&m, mach, 50, seed, 5, &r);
	want = 1 / (1 - 0.5);
	nl_tap_ok(fabs(got / want - 1) < 0.03, "M/M/1 at rho = 0.5: mean response %.4f within 3%% of 1/(mu-lambda) = %.4f",
		  got, want);
	mmc_model(&m, 4);
	nl_machines_build(&m, 1, mach);
	got = mean_resp(&m, mach, 70, seed, 5, &r);
	want = erlang_c_resp(4, 2.8, 1);
	nl_tap_ok(fabs(got / want - 1) < 0.03, "M/M/4 at rho = 0.7: mean response %.4f within 3%% of Erlang C %.4f",
		  got, want);
	nl_tap_ok(fabs(r.lambda_measured / 2.8 - 1) < 0.02, "measured arrival rate %.4f matches lambda = 2.8",
		  r.lambda_measured);
}

/* The paper-96 model, in code (as config/paper-96.ini). */
static void
paper_model(struct nl_model_cfg *m)
{
	static const double sp[] = { 40e6, 60e6, 80e6, 100e6, 120e6, 140e6 };

	memset(m, 0, sizeof(*m));
	m->n_mach = 96;
	m->n_res = 4;
	m->vectors = NL_VECTORS_BALANCED;
	memcpy(m->speed_ips, sp, sizeof(sp));
	m->n_speed = 6;
	m->link_bps = 10e6;
	m->bg_load_max = 0.2;
	m->bg_period_vt = 500;
	m->n_split = 4;
	m->instr = 32e9;
	m->data_bits = 400e6;
	m->need_prob = 0.5;
	m->transfer_delay_vt = 20;
	m->dispatch_delay_vt = 5;
	m->sp.n_res = 4;
	m->sp.mgr_service_vt = 0.5;
	m->sp.pick_service_vt = 1;
	m->sp.global_base_vt = 32;
	m->sp.global_per_group_vt = 0.5;
	m->sp.measure_period_vt = 50;
	m->sp.grp_threshold = 1;
	m->horizon_vt = 1e5;
	m->warmup_vt = 5e3;
	m->max_in_system = 20000;
}

static void
test_little_and_accounting(uint64_t seed)
{
	struct nl_model_cfg m;
	struct nl_machine mach[96];
	struct nl_variant nlsc = { .scheme = NL_SCHEME_NLSC };
	struct nl_variant tl = { .scheme = NL_SCHEME_2LSC, .n_groups = 4 };
	struct nl_dsim_result r, r2;
	double little;

	paper_model(&m);
	nl_machines_build(&m, 1, mach);
	nl_dsim_run(&m, mach, &nlsc, 40, seed, &r);
	little = r.lambda_measured * r.resp_mean_vt;
	nl_tap_ok(fabs(r.in_system_mean / little - 1) < 0.02,
		  "Little's law: time-average tasks in system %.3f within 2%% of lambda x W = %.3f",
		  r.in_system_mean, little);
	nl_tap_ok(!r.saturated && r.unfinished == 0 && r.rejected == 0 &&
		  r.completed == r.generated && r.generated > 1000,
		  "NLSC 40%%: every generated task (%llu) completes exactly once, none rejected",
		  (unsigned long long)r.generated);
	nl_tap_ok(r.hops_mean > 5.5 && r.hops_mean < 6.7,
		  "NLSC mean hops %.3f near the expected 6.125 for N = 4 from random leaves", r.hops_mean);
	nl_dsim_run(&m, mach, &nlsc, 40, seed, &r2);
	nl_tap_ok(r2.resp_mean_vt == r.resp_mean_vt && r2.events == r.events && r2.resp_p99_vt == r.resp_p99_vt,
		  "runs are deterministic in the seed");
	nl_dsim_run(&m, mach, &tl, 10, seed, &r);
	nl_tap_ok(!r.saturated && r.completed == r.generated && fabs(r.hops_mean - 1) < 1e-9,
		  "2LSC G = 4 at 10%%: all complete; every task takes exactly one hop (group -> global)");
	nl_dsim_run(&m, mach, &tl, 40, seed, &r);
	nl_tap_ok(r.saturated && r.global_util > 0.97,
		  "2LSC at 40%%: the global scheduler saturates (busy %.2f) and the run says so", r.global_util);
	nl_tap_ok(r.generated == r.completed + r.rejected + r.unfinished,
		  "saturated run: generated = completed + rejected + unfinished (%llu = %llu + %llu + %llu)",
		  (unsigned long long)r.generated, (unsigned long long)r.completed,
		  (unsigned long long)r.rejected, (unsigned long long)r.unfinished);

	/* Random vectors on 12 machines, N = 4: some vectors have no machine -> rejects. */
	m.n_mach = 12;
	m.vectors = NL_VECTORS_RANDOM;
	m.n_speed = 2;
	nl_machines_build(&m, 7, mach);
	nl_dsim_run(&m, mach, &nlsc, 5, seed, &r);
	nl_tap_ok(r.rejected > 0 && r.completed + r.rejected == r.generated && r.unfinished == 0,
		  "tasks no machine can run are rejected, the rest complete: %llu + %llu = %llu",
		  (unsigned long long)r.completed, (unsigned long long)r.rejected,
		  (unsigned long long)r.generated);
	nl_dsim_run(&m, mach, &tl, 5, seed, &r);
	nl_tap_ok(r.rejected > 0 && r.completed + r.rejected + r.unfinished == r.generated,
		  "2LSC: the same accounting holds");

	/* Every machine all '*': each serves every vector, nothing is rejected. */
	m.star_prob = 1;
	nl_machines_build(&m, 7, mach);
	nl_dsim_run(&m, mach, &nlsc, 5, seed, &r);
	nl_tap_ok(r.rejected == 0 && r.completed == r.generated && r.generated > 0,
		  "'*' machines serve both sides: with all entries '*' no task is rejected");
}

int
main(void)
{
	uint64_t seed = nl_tap_seed(42);

	test_queueing_theory(seed);
	test_little_and_accounting(seed);
	return nl_tap_done();
}
