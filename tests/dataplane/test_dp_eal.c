/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The live engine under EAL (--no-huge --no-pci --no-shconf, a net_ring vdev): emulated runs
 * of both schemes complete with the accounting invariant (nl_dp.h I1); machine generations
 * published under RCU while running are freed after grace periods (ASan checks the frees);
 * native overload answers REJECTs and keeps the invariant; every failure path of
 * nl_dp_create() leaves nothing behind and does not crash; [appliance] sections are checked
 * strictly (owns names against the model, empty items, MAC addresses, the number of roots).
 * TAP.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include <urcu/urcu-qsbr.h>

#include "nl_cfg.h"
#include "nl_dp.h"
#include "nl_machine.h"
#include "nl_tap.h"
#include "nl_xa.h"


static struct nl_dp_opts
opts(enum nl_scheme s, bool emulate)
{
	struct nl_dp_opts o;

	memset(&o, 0, sizeof(o));
	o.scheme = s;
	o.n_groups = 2;
	o.emulate = emulate;
	o.native_instant = !emulate;
	o.ns_per_vt = 1000;
	o.inbox_size = 1024;
	o.pool_size = 4095;
	o.burst = 32;
	o.publish_vt = emulate ? 1 : 20;
	o.work_scale_s = 1e-5;
	o.mgr_lcore[0] = rte_get_next_lcore(-1, 1, 0);
	o.n_mgr_lcore = 1;
	return o;
}

/* Every generated task counted once (docs/output.md, native SUMMARY): refused at ingress, or
 * accepted and then dispatched/completed, failed or unfinished at the stop; the rate is over
 * the measured wall time of the run. */
static bool
native_accounted(const struct nl_dp_native_result *r)
{
	return r->accepted + r->rejected == r->generated &&
	       r->accepted == r->tasks + r->failed + r->unfinished && r->wall_s > 0 &&
	       fabs(r->rate_tps - (double)r->tasks / r->wall_s) <= 1e-6 * r->rate_tps + 1e-9;
}

/* e2e.ini (N = 2, G = 2) with `extra` appended, through nl_model_cfg_parse() and
 * nl_xa_cfg_parse(); 0 or the error, with c->err in msg. */
static int
xa_parse(const char *base, const char *extra, char *msg, size_t len)
{
	static struct nl_xa_cfg xa;
	struct nl_model_cfg m;
	struct nl_cfg *c = NULL;
	char err[NL_CFG_ERR_LEN];
	size_t n = strlen(base) + strlen(extra) + 2;
	char *text = malloc(n);
	int rc;

	if (text == NULL)
		return -ENOMEM;
	snprintf(text, n, "%s\n%s", base, extra);
	rc = nl_cfg_load_string(&c, "xa.ini", text, err, sizeof(err));
	if (rc == 0)
		rc = nl_model_cfg_parse(c, &m);
	if (rc == 0)
		rc = nl_xa_cfg_parse(c, &m, NULL, &xa);
	snprintf(msg, len, "%s", c != NULL ? c->err : err);
	nl_cfg_free(c);
	free(text);
	return rc;
}

/* A copy of s with the first `from` replaced by `to` (malloc'd), NULL without one. */
static char *
replace_once(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
	char *out = p != NULL ? malloc(n) : NULL;

	if (out != NULL)
		snprintf(out, n, "%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
	return out;
}

static void
test_xa_cfg_strict(const char *path)
{
	static const struct {
		const char *owns, *mac, *want; /* want NULL: accepted */
	} cases[] = {
		{ "M(0,root), global, group0", NULL, NULL },
		{ "M(1,0), group1", "02:00:00:00:00:01", NULL },
		{ "M(1,0)", "2:0:0:0:0:1", NULL },
		{ "group1x", NULL, "'group1x' names no manager" },
		{ "group-1", NULL, "'group-1' names no manager" },
		{ "group 1", NULL, "'group 1' names no manager" },
		{ "group+1", NULL, "'group+1' names no manager" },
		{ "M( 1,0)", NULL, "'M( 1,0)' names no manager" },
		{ "M(01,0)", NULL, "'M(01,0)' names no manager" },
		{ "group99", NULL, "'group99' names no manager" },
		{ "group2", NULL, "'group2' names no manager" },
		{ "M(5,00000)", NULL, "'M(5,00000)' names no manager" },
		{ "M(1,0),,M(1,1)", NULL, "empty item in the list" },
		{ "M(1,0),M(1,1),", NULL, "empty item in the list" },
		{ ",M(1,0)", NULL, "empty item in the list" },
		{ "M(1,0)", "02:00:00:00:00:0g", "is not a MAC address" },
		{ "M(1,0)", "02:00:00:00:00:01:ff", "is not a MAC address" },
		{ "M(1,0)", "2:0:0:0:0:1x", "is not a MAC address" },
		{ "M(1,0)", "02:00:00:00:00", "is not a MAC address" },
		{ "M(1,0)", "002:00:00:00:00:01", "is not a MAC address" },
	};
	char *base = NULL, msg[NL_CFG_ERR_LEN], sec[512];
	long n = 0;
	FILE *f = fopen(path, "r");

	if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (base = calloc(1, (size_t)n + 1)) != NULL &&
	    fread(base, 1, (size_t)n, f) != (size_t)n) {
		free(base);
		base = NULL;
	}
	if (f != NULL)
		fclose(f);
	if (base == NULL) {
		nl_tap_ok(0, "test_xa_cfg_strict: cannot read %s", path);
		return;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		snprintf(sec, sizeof(sec), "[appliance a]\nip = 10.0.0.1\nowns = %s\n%s%s\n",
			 cases[i].owns, cases[i].mac ? "mac = " : "", cases[i].mac ? cases[i].mac : "");
		rc = xa_parse(base, sec, msg, sizeof(msg));
		if (cases[i].want == NULL)
			nl_tap_ok(rc == 0, "test_xa_cfg_accepts owns='%s' mac='%s' (%s)", cases[i].owns,
				  cases[i].mac ? cases[i].mac : "", rc == 0 ? "ok" : msg);
		else
			nl_tap_ok(rc == -EINVAL && strstr(msg, cases[i].want) != NULL &&
					  strstr(msg, "xa.ini:") == msg,
				  "test_xa_cfg_refuses owns='%s' mac='%s' with FILE:LINE (%s)",
				  cases[i].owns, cases[i].mac ? cases[i].mac : "", msg);
	}
	/* #36 standby: `standby = OTHER` names another appliance of the file, before or after
	 * its own section; an unknown name or the appliance itself is refused at its line */
	{
		static const struct {
			const char *text, *want; /* want NULL: accepted */
			unsigned int line;       /* the `standby` line of the appended text */
		} sb[] = {
			{ "[appliance a]\nip = 10.0.0.1\nstandby = b\nowns = M(1,0)\n"
			  "[appliance b]\nip = 10.0.0.2\nowns = M(1,1)\n", NULL, 0 },
			{ "[appliance a]\nip = 10.0.0.1\nowns = M(1,0)\n"
			  "[appliance b]\nip = 10.0.0.2\nowns = M(1,1)\nstandby = a\n", NULL, 0 },
			{ "[appliance a]\nip = 10.0.0.1\nstandby = z\nowns = M(1,0)\n"
			  "[appliance b]\nip = 10.0.0.2\nowns = M(1,1)\n",
			  "no [appliance] section has that name", 3 },
			{ "[appliance a]\nip = 10.0.0.1\nowns = M(1,0)\n"
			  "[appliance b]\nip = 10.0.0.2\nowns = M(1,1)\nstandby = b\n",
			  "cannot be its own standby", 7 },
		};
		unsigned int base_lines = 1; /* xa_parse() joins base and text with a newline */

		for (const char *q = base; *q != '\0'; q++)
			base_lines += *q == '\n';
		for (size_t i = 0; i < sizeof(sb) / sizeof(sb[0]); i++) {
			char where[64];
			int rc = xa_parse(base, sb[i].text, msg, sizeof(msg));

			snprintf(where, sizeof(where), "xa.ini:%u:", base_lines + sb[i].line);
			if (sb[i].want == NULL)
				nl_tap_ok(rc == 0, "test_xa_cfg_standby_accepted case %zu (%s)", i,
					  rc == 0 ? "ok" : msg);
			else
				nl_tap_ok(rc == -EINVAL && strstr(msg, sb[i].want) != NULL &&
						  strstr(msg, where) == msg,
					  "test_xa_cfg_standby_refused_with_file_line case %zu, want %s "
					  "(%s)", i, where, msg);
		}
	}
	/* NL_XA_MAX_ROOTS: 255 owns names over all appliances fit (the top may be one more root),
	 * 256 are refused at the name that is one too many; N = 8 has 510 NLSC names */
	{
		char *b8 = replace_once(base, "resources = 2", "resources = 8");
		char *big = b8 != NULL ? replace_once(b8, "machines = 16", "machines = 256") : NULL;
		char *r = big;

		free(b8);
		for (unsigned int want = 255; r != NULL && want <= 256; want++) {
			size_t cap = 64 * 1024, len = 0;
			char *many = malloc(cap);
			unsigned int k = 1, bits = 0, done = 0;
			int rc;

			for (unsigned int a = 0; many != NULL && done < want; a++) {
				len += (size_t)snprintf(many + len, cap - len,
							"[appliance a%u]\nip = 10.0.%u.1\nowns = ", a, a);
				for (unsigned int j = 0; j < 12 && done < want; j++, done++) {
					len += (size_t)snprintf(many + len, cap - len, "%sM(%u,", j ? ", " : "", k);
					for (unsigned int b = k; b-- > 0;)
						many[len++] = (char)('0' + ((bits >> b) & 1));
					len += (size_t)snprintf(many + len, cap - len, ")");
					if (++bits == 1u << k) {
						bits = 0;
						k++;
					}
				}
				len += (size_t)snprintf(many + len, cap - len, "\n");
			}
			rc = many != NULL ? xa_parse(big, many, msg, sizeof(msg)) : -ENOMEM;
			if (want == 255)
				nl_tap_ok(rc == 0, "test_xa_cfg_255_roots_accepted (%s)", rc == 0 ? "ok" : msg);
			else
				nl_tap_ok(rc == -EINVAL && strstr(msg, "more than 255 owns names") != NULL,
					  "test_xa_cfg_256_roots_refused_with_file_line (%s)", msg);
			free(many);
		}
		if (r == NULL)
			nl_tap_ok(0, "test_xa_cfg_roots: cannot make an N = 8 model");
		free(big);
	}
	free(base);
}

/* nl_dp_create() failing at each stage it can fail at from bad input returns the error and
 * frees what it built (ASan: no leak, no read of a NULL manager array). */
static void
test_create_failure_paths(const struct nl_model_cfg *m, const struct nl_machine *mach)
{
	static struct nl_xa_cfg xa;
	struct nl_dp_opts o = opts(NL_SCHEME_NLSC, true);
	struct nl_dp *dp = NULL;
	int rc;

	memset(&xa, 0, sizeof(xa));
	snprintf(xa.path, sizeof(xa.path), "split.ini");
	xa.n_app = 1;
	xa.self = 0;
	snprintf(xa.app[0].name, sizeof(xa.app[0].name), "a");
	/* the scale-out hook refuses a split tree outside port mode: n_mgr set, dp->mgr not */
	o.ext = &nl_xa_dp_ext;
	o.ext_arg = &xa;
	rc = nl_dp_create(&dp, m, mach, &o);
	nl_tap_ok(rc == -EINVAL && dp == NULL, "test_create_fails_at_scaleout_hook_emulated (rc %d)", rc);
	o = opts(NL_SCHEME_NLSC, false);
	o.ext = &nl_xa_dp_ext;
	o.ext_arg = &xa;
	dp = NULL;
	rc = nl_dp_create(&dp, m, mach, &o);
	nl_tap_ok(rc == -EINVAL && dp == NULL, "test_create_fails_at_scaleout_hook_native (rc %d)", rc);
	/* a pool the EAL's memory cannot hold: the mempool fails after managers exist */
	o = opts(NL_SCHEME_2LSC, false);
	o.pool_size = 1u << 23;
	dp = NULL;
	rc = nl_dp_create(&dp, m, mach, &o);
	nl_tap_ok(rc < 0 && dp == NULL, "test_create_fails_at_mempool (rc %d)", rc);
	/* a map naming a manager lcore index that does not exist */
	o = opts(NL_SCHEME_NLSC, false);
	o.mgr_map_n = 1;
	o.mgr_map[0] = 5;
	dp = NULL;
	rc = nl_dp_create(&dp, m, mach, &o);
	nl_tap_ok(rc == -EINVAL && dp == NULL, "test_create_fails_at_manager_map (rc %d)", rc);
}

int
main(int argc, char **argv)
{
	char prefix[64], err[NL_CFG_ERR_LEN], path[4096];
	const char *src = getenv("NL_SRC_ROOT");
	/* lcore 2 (a second manager lcore) shares a core with lcore 1: CI machines have two */
	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", "--lcores", "0@0,1@1,2@1",
			"-m", "256", "--vdev=net_ring0", "--log-level=lib.eal:error", "--file-prefix", prefix };
	struct nl_cfg *cfg = NULL;
	struct nl_model_cfg m;
	struct nl_machine *mach;
	int rc;

	(void)argc;
	snprintf(prefix, sizeof(prefix), "nleal%d", (int)getpid());
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])), eal) < 0) {
		printf("1..0 # SKIP EAL cannot start here\n");
		return 0; /* TAP: a "1..0 # SKIP" plan with status 0 */
	}
	urcu_qsbr_register_thread();
	snprintf(path, sizeof(path), "%s/tests/dataplane/e2e.ini", src ? src : ".");
	if (nl_cfg_load(&cfg, path, err, sizeof(err)) != 0 || nl_model_cfg_parse(cfg, &m) != 0) {
		printf("Bail out! %s\n", cfg ? cfg->err : err);
		return 1;
	}
	m.horizon_vt = 4e4;
	m.warmup_vt = 1e3;
	m.instr = 4e10; /* sub-tasks of ~130 u.t., as in the paper's model */
	m.bg_load_max = 0.2;
	mach = calloc(m.n_mach, sizeof(*mach));
	nl_machines_build(&m, 1, mach);

	nl_tap_check(rte_eth_dev_count_avail() == 1, "test_net_ring_vdev_is_a_port");

	for (int s = 0; s < 2; s++) {
		struct nl_dp_opts o = opts((enum nl_scheme)s, true);
		struct nl_dp *dp = NULL;
		struct nl_dp_point pt;
		char name[128];

		rc = nl_dp_create(&dp, &m, mach, &o);
		rc = rc == 0 ? nl_dp_run_point(dp, 30, 7, &pt) : rc;
		printf("# %s: %llu measured, mean %.1f u.t., hops %.2f, %.2f s\n", s ? "2lsc" : "nlsc",
		       (unsigned long long)pt.measured, pt.resp_mean_vt, pt.hops_mean, pt.wall_s);
		snprintf(name, sizeof(name), "test_emulated_%s_point_completes_and_accounts",
			 s ? "2lsc" : "nlsc");
		nl_tap_check(rc == 0 && pt.measured > 100 && !pt.saturated && pt.unfinished == 0 &&
			   pt.completed == pt.generated && nl_dp_accounting_ok(dp),
		   name);
		if (s == 0) {
			/* service times are the lower bound: every task pays at least one sub-task
			 * (I/L at the fastest W) plus the dispatch delay */
			double min_vt = m.instr / m.n_split / 200e6 + m.dispatch_delay_vt;

			nl_tap_check(rc == 0 && pt.resp_p50_vt >= min_vt, "test_emulated_response_at_least_model_minimum");
			/* machine churn between runs: generations replaced under RCU, run again */
			bool all = true;

			for (int k = 0; k < 50 && rc == 0; k++)
				all &= nl_dp_machine_set_ctl(dp, (uint32_t)(k % m.n_mach), k % 3 != 0,
							     k % 2 ? 150e6 : 0) == 0;
			for (uint32_t k = 0; k < m.n_mach; k++)
				all &= nl_dp_machine_set_ctl(dp, k, true, 0) == 0;
			urcu_qsbr_quiescent_state();
			rc = nl_dp_run_point(dp, 20, 8, &pt);
			nl_tap_check(all && rc == 0 && pt.measured > 50 && nl_dp_accounting_ok(dp),
			   "test_machine_generations_replaced_under_rcu_then_run");
		}
		nl_dp_free(dp);
	}
	{
		struct nl_dp_opts o = opts(NL_SCHEME_NLSC, false);
		struct nl_dp *dp = NULL;
		struct nl_dp_native_result r;

		o.inbox_size = 64;
		o.pool_size = 1024;
		rc = nl_dp_create(&dp, &m, mach, &o);
		rc = rc == 0 ? nl_dp_run_native(dp, 0, 0.3, &r) : rc;
		printf("# native saturating: %.0f tasks/s, %llu rejected, latency mean %.0f ns\n",
		       r.rate_tps, (unsigned long long)r.rejected, r.lat_mean_ns);
		/* One manager lcore is a closed loop: the ingress draws a burst per round and the
		 * round hands every task on to its leaf on the same lcore (no inbox, no overload);
		 * REJECT overload at a full inbox is the e2e test's (port mode). */
		nl_tap_check(rc == 0 && r.tasks > 1000 && nl_dp_accounting_ok(dp) &&
				     native_accounted(&r) && r.xhops == 0,
			     "test_native_saturating_every_generated_task_dispatched_or_rejected");
		nl_dp_free(dp);
		/* Two manager lcores (managers alternate between them): hops between the lcores go
		 * through the pair's SP/SC ring a burst at a time; every task is still dispatched
		 * or refused, none lost in a ring or a stage, and the rings are drained at the end. */
		o.mgr_lcore[1] = rte_get_next_lcore(o.mgr_lcore[0], 1, 0);
		o.n_mgr_lcore = 2;
		dp = NULL;
		rc = o.mgr_lcore[1] < RTE_MAX_LCORE ? nl_dp_create(&dp, &m, mach, &o) : -ENODEV;
		rc = rc == 0 ? nl_dp_run_native(dp, 0, 0.3, &r) : rc;
		printf("# native, 2 manager lcores: %.0f tasks/s, %llu handed between lcores, "
		       "%llu rejected\n", r.rate_tps, (unsigned long long)r.xhops,
		       (unsigned long long)r.rejected);
		nl_tap_check(rc == 0 && r.tasks > 1000 && r.xhops > 1000 && nl_dp_accounting_ok(dp) &&
				     native_accounted(&r),
			     "test_native_two_lcores_hops_through_spsc_rings_every_task_accounted");
		nl_dp_free(dp);
		o.n_mgr_lcore = 1;
		/* Native booking (the default of nlevel --native): machines take their modelled
		 * time x work scale. Fast machines keep up; slow ones bound the completion rate
		 * (the machines' capacity, not the dispatch's), the pool fills and the ingress
		 * refuses the rest; every generated task is completed or refused either way. */
		double rate_fast = 0;

		for (int slow = 0; slow < 2; slow++) {
			struct nl_dp_opts ob = opts(NL_SCHEME_NLSC, false);
			/* capacity of the machines [tasks/s]: sum of 1 / sub-task time, over L */
			double cap = 0, scale = slow ? 1e-4 : 1e-8;

			for (unsigned int i = 0; i < m.n_mach; i++)
				cap += 1.0 / (nl_mach_service_vt(&mach[i], m.instr / m.n_split,
								 m.data_bits / m.n_split) * scale);
			cap /= m.n_split;
			ob.native_instant = false;
			ob.native_book = true;
			ob.work_scale_s = scale;
			ob.pool_size = 1024;
			dp = NULL;
			rc = nl_dp_create(&dp, &m, mach, &ob);
			rc = rc == 0 ? nl_dp_run_native(dp, 0, 0.3, &r) : rc;
			printf("# native booking, %g s per u.t.: %.0f tasks/s completed (machines: %.0f), "
			       "%llu refused\n", scale, r.rate_tps, cap, (unsigned long long)r.rejected);
			if (!slow) {
				rate_fast = r.rate_tps;
				nl_tap_check(rc == 0 && r.tasks > 1000 && nl_dp_accounting_ok(dp) &&
						     native_accounted(&r),
					     "test_native_booking_fast_machines_complete_every_task");
			} else {
				nl_tap_check(rc == 0 && r.tasks > 0 && r.rate_tps <= 1.05 * cap &&
						     r.rate_tps < rate_fast / 10 && r.rejected > 0 &&
						     nl_dp_accounting_ok(dp) &&
						     native_accounted(&r),
					     "test_native_booking_slow_machines_bound_the_rate_and_the_rest_is_refused");
			}
			nl_dp_free(dp);
		}
	}
	test_create_failure_paths(&m, mach);
	{
		/* SUMMARY mgr_lcores: lcores with managers, not the EAL's worker lcores */
		struct nl_dp_opts o = opts(NL_SCHEME_NLSC, false);
		struct nl_dp *dp = NULL;

		o.mgr_lcore[1] = rte_get_next_lcore(o.mgr_lcore[0], 1, 0);
		o.n_mgr_lcore = 2;
		o.mgr_map_n = 1; /* manager 0 on lcore index 0, the rest round-robin: both */
		rc = o.mgr_lcore[1] < RTE_MAX_LCORE ? nl_dp_create(&dp, &m, mach, &o) : -ENODEV;
		unsigned int both = rc == 0 ? nl_dp_mgr_lcores(dp) : 0;

		nl_dp_free(dp);
		dp = NULL;
		o.mgr_map_n = 4096; /* every manager on lcore index 0 (mgr_map zeroed) */
		rc = rc == 0 ? nl_dp_create(&dp, &m, mach, &o) : rc;
		nl_tap_ok(rc == 0 && both == 2 && nl_dp_mgr_lcores(dp) == 1,
			  "test_mgr_lcores_counts_lcores_that_run_managers (%u, %u)", both,
			  rc == 0 ? nl_dp_mgr_lcores(dp) : 0);
		nl_dp_free(dp);
	}
	snprintf(path, sizeof(path), "%s/tests/dataplane/e2e.ini", src ? src : ".");
	test_xa_cfg_strict(path);
	free(mach);
	nl_cfg_free(cfg);
	urcu_qsbr_unregister_thread();
	rte_eal_cleanup();
	return nl_tap_done();
}
