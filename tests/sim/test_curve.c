/* SPDX-License-Identifier: BSD-3-Clause */
/* Curve suite: a shortened run of config/paper-96.ini (fewer seeds and loads, 2e5 u.t.)
 * keeps the shape of seed 002 Fig. 4-6 (the acceptance of the core issue). */
#include <stdlib.h>
#include <string.h>

#include "nl_cfg.h"
#include "nl_dsim.h"
#include "nl_machine.h"
#include "nl_model_cfg.h"
#include "nl_tap.h"

#define N_LOAD 6
static const double loads[N_LOAD] = { 5, 10, 15, 20, 40, 70 };

struct pt {
	double resp, hops;
	bool sat;
};

static void
run_curve(const struct nl_model_cfg *m, const struct nl_machine *mach, const struct nl_variant *v,
	  struct pt *out)
{
	for (unsigned int l = 0; l < N_LOAD; l++) {
		struct nl_dsim_result r;
		double s = 0, h = 0;

		out[l].sat = false;
		for (unsigned int k = 0; k < 2; k++) {
			nl_dsim_run(m, mach, v, loads[l], 11 + k, &r);
			out[l].sat |= r.saturated;
			s += r.resp_mean_vt / 2;
			h += r.hops_mean / 2;
		}
		out[l].resp = s;
		out[l].hops = h;
	}
}

int
main(void)
{
	const char *root = getenv("NL_SRC_ROOT");
	char path[1024], err[NL_CFG_ERR_LEN];
	struct nl_cfg *cfg = NULL;
	struct nl_model_cfg m;
	struct nl_machine *mach;
	struct pt nl[N_LOAD], st[N_LOAD], tw[N_LOAD];
	int have_static = -1;

	snprintf(path, sizeof(path), "%s/config/paper-96.ini", root ? root : ".");
	if (nl_cfg_load(&cfg, path, err, sizeof(err)) != 0 || nl_model_cfg_parse(cfg, &m) != 0) {
		nl_tap_ok(0, "config/paper-96.ini loads: %s", cfg ? cfg->err : err);
		return nl_tap_done();
	}
	nl_cfg_free(cfg);
	m.horizon_vt = 2e5;
	m.warmup_vt = 1e4;
	mach = calloc(m.n_mach, sizeof(*mach));
	nl_machines_build(&m, m.seed, mach);
	for (unsigned int v = 0; v < m.n_variant; v++)
		if (m.variant[v].scheme == NL_SCHEME_NLSC && m.variant[v].static_known > 0)
			have_static = (int)v;
	struct nl_variant vn = { .scheme = NL_SCHEME_NLSC };

	run_curve(&m, mach, &vn, nl);
	nl_tap_ok(!nl[N_LOAD - 1].sat && nl[N_LOAD - 1].resp <= 1.5 * nl[0].resp,
		  "NLSC stays nearly flat: response at 70%% (%.1f) <= 1.5 x at 5%% (%.1f)",
		  nl[N_LOAD - 1].resp, nl[0].resp);
	for (unsigned int v = 0; v < m.n_variant; v++) {
		const struct nl_variant *var = &m.variant[v];
		double cross = -1, ratio;

		if (var->scheme != NL_SCHEME_2LSC)
			continue;
		run_curve(&m, mach, var, tw);
		ratio = nl[0].resp / tw[0].resp;
		nl_tap_ok(ratio >= 1.15 && ratio <= 1.5,
			  "G=%u: at 5%% load 2LSC is better, NLSC/2LSC = %.3f in [1.15, 1.5] (paper: ~1.3)",
			  var->n_groups, ratio);
		for (unsigned int l = 0; l < N_LOAD && cross < 0; l++)
			if (tw[l].sat || nl[l].resp <= tw[l].resp)
				cross = loads[l];
		nl_tap_ok(cross >= 10 && cross <= 20, "G=%u: the curves cross at %g%% (paper: ~15%%)",
			  var->n_groups, cross);
		nl_tap_ok(tw[4].sat || tw[4].resp >= 3 * tw[0].resp,
			  "G=%u: 2LSC degrades sharply: at 40%% saturated or >= 3 x its 5%% value",
			  var->n_groups);
	}
	if (nl_tap_ok(have_static >= 0, "the configuration has a static-scheduling curve")) {
		bool better = true;

		run_curve(&m, mach, &m.variant[have_static], st);
		for (unsigned int l = 0; l < N_LOAD; l++)
			better &= st[l].hops < nl[l].hops && st[l].resp < nl[l].resp;
		nl_tap_ok(better, "static scheduling (k = %u): fewer hops and lower response at every load",
			  m.variant[have_static].static_known);
	}
	free(mach);
	return nl_tap_done();
}
