/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Matching in the model (issue #15 item 4; managers/match/nl_match_model.h): the [machine]
 * and [class] sections refused with FILE:LINE when wrong, machine records as documented
 * (selectors, later section wins, Machine / Mips), task classes by share, and under 2LSC a
 * group whose machines do not meet a task's Requirements passes it to the global scheduler,
 * which refuses it no_machine only when no machine anywhere meets them. TAP.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_cfg.h"
#include "nl_dsim.h"
#include "nl_machine.h"
#include "nl_match_model.h"
#include "nl_model.h"
#include "nl_tap.h"

/* 16 machines, N = 1 (two vectors of 8), speeds 10 and 20: 2LSC G = 2 puts the 8 slow
 * machines in group 0 and the 8 fast ones in group 1. Only fast machines have Memory 64. */
static const char base[] =
	"[system]\n"                                   /* 1 */
	"machines = 16\n"                              /* 2 */
	"resources = 1\n"                              /* 3 */
	"speeds_ips = 10, 20\n"                        /* 4 */
	"link_bps = 1e9\n"                             /* 5 */
	"[task]\n"                                     /* 6 */
	"split = 2\n"                                  /* 7 */
	"instr = 100\n"                                /* 8 */
	"[scheduler]\n"                                /* 9 */
	"pick_service_vt = 0.1\n"                      /* 10 */
	"[2lsc]\n"                                     /* 11 */
	"groups = 2\n"                                 /* 12 */
	"global_base_vt = 0.5\n"                       /* 13 */
	"measure_period_vt = 5\n"                      /* 14 */
	"group_threshold = 1e9\n"                      /* 15 */
	"[run]\n"                                      /* 16 */
	"horizon_vt = 4000\n"                          /* 17 */
	"loads_pct = 20\n"                             /* 18 */
	"[machine all]\n"                              /* 19 */
	"machines = 0-15\n"                            /* 20 */
	"Memory = 8\n"                                 /* 21 */
	"Arch = \"X86_64\"\n"                          /* 22 */
	"[machine fast]\n"                             /* 23 */
	"speed_ips = 20\n"                             /* 24 */
	"Memory = 64\n"                                /* 25 */
	"[class big]\n"                                /* 26 */
	"share = 0.4\n"                                /* 27 */
	"requirements = Memory >= 64\n"                /* 28 */
	"rank = Machine\n"                             /* 29 */
	"[class arm]\n"                                /* 30 */
	"share = 0.1\n"                                /* 31 */
	"requirements = Arch == \"ARM64\"\n";          /* 32 */

static int
load(const char *text, struct nl_cfg **cfg, struct nl_model_cfg *m, char *err, size_t n)
{
	int rc = nl_cfg_load_string(cfg, "t.ini", text, err, n);

	if (rc == 0 && (rc = nl_model_cfg_parse(*cfg, m)) == 0)
		rc = nl_cfg_check_unused(*cfg);
	if (rc != 0 && *cfg != NULL)
		snprintf(err, n, "%s", (*cfg)->err);
	return rc;
}

/* The configuration with line `line` replaced by `repl` (NULL: as is). */
static void
expect_err(unsigned int line, const char *repl, const char *want, const char *what)
{
	static struct nl_model_cfg m;
	char text[4096] = "", err[NL_CFG_ERR_LEN] = "";
	struct nl_cfg *cfg = NULL;
	const char *p = base;
	int rc;

	for (unsigned int l = 1; *p != '\0'; l++) {
		const char *e = strchr(p, '\n');

		if (l == line)
			snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s\n", repl);
		else
			snprintf(text + strlen(text), sizeof(text) - strlen(text), "%.*s\n",
				 (int)(e - p), p);
		p = e + 1;
	}
	rc = load(text, &cfg, &m, err, sizeof(err));
	if (rc == 0) {
		struct nl_machine *mach = calloc(m.n_mach, sizeof(*mach));

		rc = mach != NULL && nl_machines_build(&m, m.seed, mach) == 0 ?
			     nl_match_model_check(&m, mach, err, sizeof(err)) : -1;
		free(mach);
	}
	nl_tap_ok(rc != 0 && strstr(err, want) != NULL, "%s (%s)", what, err);
	nl_cfg_free(cfg);
}

struct trace_log {
	const struct nl_model_cfg *m;
	struct nl_model_src src;
	const struct nl_sched *s;
	unsigned int n_big, big_group0, big_rej, big_inelig, n_arm, arm_bad, n_plain, plain_rej;
};

static void
on_dispatch(void *arg, const struct nl_task *t, const uint32_t *mach, unsigned int n, double now)
{
	struct trace_log *l = arg;
	uint32_t h = nl_model_task_class(l->m, &l->src, t);
	const struct nl_match_tab *tab = nl_match_src.tab;

	(void)now;
	if (h == 1) {
		l->n_big++;
		l->big_group0 += t->hops == 1; /* entered a group, passed to the global */
		for (unsigned int j = 0; j < n; j++)
			l->big_inelig += !((tab->ent[1].elig[0] >> mach[j]) & 1);
	} else if (h == 2) {
		l->n_arm++;
		l->arm_bad++;
	} else {
		l->n_plain++;
	}
}

static void
on_reject(void *arg, const struct nl_task *t, enum nl_reject_reason why, double now)
{
	struct trace_log *l = arg;
	uint32_t h = nl_model_task_class(l->m, &l->src, t);

	(void)now;
	if (h == 1) {
		l->n_big++;
		l->big_rej++;
	} else if (h == 2) {
		l->n_arm++;
		/* refused at the global scheduler (one hop), not by the group it entered */
		l->arm_bad += why != NL_REJECT_NO_MACHINE || t->hops != 1;
	} else {
		l->n_plain++;
		l->plain_rej++;
	}
}

int
main(void)
{
	static struct nl_model_cfg m;
	char err[NL_CFG_ERR_LEN] = "";
	struct nl_cfg *cfg = NULL;
	struct nl_machine *mach;
	struct nl_match_tab *tab = NULL;
	int rc;

	rc = load(base, &cfg, &m, err, sizeof(err));
	nl_tap_ok(rc == 0 && m.n_mclass == 2 && m.n_tclass == 2 && m.tclass[0].line_req == 28 &&
			  m.mclass[1].speed_ips == 20 && m.mclass[0].n_range == 1,
		  "[machine] / [class] sections parsed (%s)", err);
	mach = calloc(m.n_mach, sizeof(*mach));
	if (mach == NULL || nl_machines_build(&m, m.seed, mach) != 0)
		return printf("Bail out! machines\n"), 1;
	rc = nl_match_model_build(&m, mach, &tab, err, sizeof(err));
	unsigned int fast = 0, ok_fast = 1, rank_ok = 1;

	for (uint32_t i = 0; rc == 0 && i < m.n_mach; i++) {
		bool elig = (tab->ent[1].elig[0] >> i) & 1;

		fast += mach[i].speed_ips == 20;
		ok_fast &= elig == (mach[i].speed_ips == 20);
		rank_ok &= tab->ent[1].rank != NULL && tab->ent[1].rank[i] == (double)i;
	}
	nl_tap_ok(rc == 0 && fast == 8 && ok_fast && rank_ok && tab->ent[1].n_elig == 8 &&
			  tab->ent[2].n_elig == 0 && tab->ent[2].rank == NULL,
		  "records: a later section's Memory replaces an earlier one's, speed selector, "
		  "Machine = id as Rank; nobody is ARM64 (%s)", err);
	nl_match_tab_free(tab);

	/* task classes by share: a pure function of (seed, id) */
	struct nl_model_src src;
	unsigned int cnt[3] = { 0 };

	nl_model_src_init(&src, 1, 42);
	for (uint64_t id = 0; id < 20000; id++) {
		struct nl_task t = { .id = id };

		cnt[nl_model_task_class(&m, &src, &t)]++;
	}
	nl_tap_ok(fabs(cnt[1] / 20000.0 - 0.4) < 0.02 && fabs(cnt[2] / 20000.0 - 0.1) < 0.01 &&
			  fabs(cnt[0] / 20000.0 - 0.5) < 0.02,
		  "classes by share: %u / %u / %u of 20000 (0.5 / 0.4 / 0.1)", cnt[0], cnt[1], cnt[2]);

	/* 2LSC: Requirements met only in group 1 */
	struct trace_log lg = { .m = &m };
	struct nl_model_trace tr = { on_dispatch, on_reject, &lg };
	struct nl_sched_params sp = m.sp;
	struct nl_dsim_result r;

	sp.n_groups = 2;
	rc = nl_match_model_bind(&m, mach, err, sizeof(err));
	nl_model_src_init(&lg.src, nl_model_arrival_rate(&m, 20), 5);
	rc = rc == 0 ? nl_dsim_run_ops(&m, mach, nl_policy_of(NL_SCHEME_2LSC), &sp, 20, 5, &tr, &r)
		     : rc;
	nl_tap_ok(rc == 0 && lg.n_big > 100 && lg.big_rej == 0 && lg.big_inelig == 0 &&
			  lg.big_group0 > lg.n_big / 4,
		  "2LSC: %u tasks whose Requirements only group 1 meets: %u rejected, %u on "
		  "ineligible machines, %u passed by the other group to the global scheduler",
		  lg.n_big, lg.big_rej, lg.big_inelig, lg.big_group0);
	nl_tap_ok(rc == 0 && lg.n_arm > 20 && lg.arm_bad == 0 && r.matched_rejected == lg.n_arm,
		  "2LSC: %u tasks whose Requirements no machine meets: rejected no_machine by the "
		  "global scheduler (%u otherwise)", lg.n_arm, lg.arm_bad);
	nl_tap_ok(rc == 0 && lg.n_plain > 100 && lg.plain_rej == 0 && r.matched == lg.n_big + lg.n_arm,
		  "2LSC: %u tasks without a class placed as before, none rejected", lg.n_plain);
	nl_match_model_unbind();
	rc = nl_dsim_run_ops(&m, mach, nl_policy_of(NL_SCHEME_2LSC), &sp, 20, 5, NULL, &r);
	nl_tap_ok(rc == -EINVAL, "task classes without a bound table are refused (%d)", rc);
	nl_cfg_free(cfg);
	free(mach);

	expect_err(20, "machines = 0-16", "t.ini:20: [machine all] machines: range 0-16 is not within machines 0-15",
		   "a machine id out of range");
	expect_err(24, "speed_ips = 30", "t.ini:24: [machine fast] speed_ips: 30 is not one of",
		   "a speed that is no class");
	expect_err(25, "Memory = (64", "t.ini:25: [machine fast] Memory:",
		   "an attribute value that does not parse");
	expect_err(25, "9lives = 1", "t.ini:25: [machine fast] 9lives: not a ClassAd attribute name",
		   "a bad attribute name");
	expect_err(28, "requirements = Memory >= ", "t.ini:28: [class big] requirements: line 1",
		   "Requirements that do not parse");
	expect_err(29, "rank = Machine +", "t.ini:29: [class big] rank: line 1", "Rank that does not parse");
	expect_err(31, "share = 0.7", "t.ini:31: [class arm] share: the [class] shares add up to 1.1",
		   "shares above 1");
	expect_err(27, "sharee = 0.4", "[class big] share", "a class without its share");
	expect_err(20, "Cpus = 2", "t.ini:19: [machine all]: which machines?", "a machine class without a selector");
	return nl_tap_done();
}
