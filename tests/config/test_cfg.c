/* SPDX-License-Identifier: BSD-3-Clause */
/* Configuration errors name file, line and key; nlevel-sim exits 2 on them. argv[1] is the
 * nlevel-sim executable. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nl_cfg.h"
#include "nl_model_cfg.h"
#include "nl_tap.h"

static const char *good =
	"[system]\n"                 /* 1 */
	"machines = 16\n"            /* 2 */
	"resources = 2\n"            /* 3 */
	"speeds_ips = 1e6, 2e6\n"    /* 4 */
	"link_bps = 1e6\n"           /* 5 */
	"[task]\n"                   /* 6 */
	"split = 4\n"                /* 7 */
	"instr = 4e6\n"              /* 8 */
	"[nlsc]\n"                   /* 9 */
	"static_known = 0, 1\n"      /* 10 */
	"[2lsc]\n"                   /* 11 */
	"groups = 2\n"               /* 12 */
	"global_base_vt = 0.1\n"     /* 13 */
	"[run]\n"                    /* 14 */
	"horizon_vt = 1000\n"        /* 15 */
	"loads_pct = 5:20:5\n";      /* 16 */

/* Parse text with line `line` (1-based) replaced by `repl` (NULL: deleted), or appended. */
static int
parse_with(const char *text, int line, const char *repl, char *err, size_t len)
{
	char buf[4096] = "", *save = NULL, copy[4096];
	struct nl_cfg *c = NULL;
	struct nl_model_cfg m;
	int n = 0, rc;

	snprintf(copy, sizeof(copy), "%s", text);
	for (char *l = strtok_r(copy, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		n++;
		if (n == line) {
			if (repl != NULL) {
				strcat(buf, repl);
				strcat(buf, "\n");
			}
			continue;
		}
		strcat(buf, l);
		strcat(buf, "\n");
	}
	if (line > n && repl != NULL) {
		strcat(buf, repl);
		strcat(buf, "\n");
	}
	rc = nl_cfg_load_string(&c, "t.ini", buf, err, len);
	if (rc != 0)
		return rc;
	rc = nl_model_cfg_parse(c, &m);
	if (rc == 0)
		rc = nl_cfg_check_unused(c);
	if (rc != 0)
		snprintf(err, len, "%s", c->err);
	nl_cfg_free(c);
	return rc;
}

static void
expect(int line, const char *repl, const char *want, const char *claim)
{
	char err[NL_CFG_ERR_LEN] = "";
	int rc = parse_with(good, line, repl, err, sizeof(err));

	if (!nl_tap_ok(rc != 0 && strstr(err, want) != NULL, "%s", claim))
		nl_tap_diag("got rc=%d err='%s', wanted '%s'", rc, err, want);
}

static void
test_library(void)
{
	char err[NL_CFG_ERR_LEN] = "";
	struct nl_cfg *c = NULL;
	struct nl_model_cfg m;

	nl_tap_ok(nl_cfg_load_string(&c, "t.ini", good, err, sizeof(err)) == 0 &&
		  nl_model_cfg_parse(c, &m) == 0 && nl_cfg_check_unused(c) == 0,
		  "a valid configuration parses");
	nl_tap_ok(m.n_mach == 16 && m.n_speed == 2 && m.n_load == 4 && m.load_pct[3] == 20 &&
		  m.n_variant == 3 && m.variant[1].static_known == 1 && m.variant[2].n_groups == 2 &&
		  m.n_seeds == 5 && m.vectors == NL_VECTORS_BALANCED,
		  "values, ranges (5:20:5), variants and defaults are as written");
	nl_cfg_free(c);
	c = NULL;
	snprintf(err, sizeof(err), "%s", "");
	{
		char text[4096];

		snprintf(text, sizeof(text), "%s[split]\ncut = M(0,root), M(2,01), group1, global\n", good);
		nl_tap_ok(nl_cfg_load_string(&c, "t.ini", text, err, sizeof(err)) == 0 &&
			  nl_model_cfg_parse(c, &m) == 0 && m.n_cut == 4,
			  "[split] cut takes the names the managers have (M(0,root), M(K,bits), groupG, global)");
		nl_cfg_free(c);
	}
	expect(99, "machinez = 3", "t.ini:17: unknown key 'machinez' in [run]",
	       "an unknown key is refused with file:line and its name");
	expect(16, "loads_pct = 5:20:5\n[sytem]\nx = 1", "t.ini:18: unknown section [sytem]",
	       "an unknown section is refused with file:line");
	expect(7, "split = 0", "t.ini:7: [task] split: 0 is out of range",
	       "an out-of-range value names file:line, section and key");
	expect(2, "machines = lots", "t.ini:2: [system] machines: 'lots' is not a non-negative integer",
	       "a non-numeric value names file:line and key");
	expect(5, "link_bps = 1e6x", "t.ini:5: [system] link_bps: '1e6x' is not a number",
	       "trailing garbage after a number is refused");
	expect(14, "[ru]", "missing section [run]", "a missing section is named");
	expect(15, NULL, "t.ini:14: [run] horizon_vt: required key missing",
	       "a missing required key is named with its section's line");
	expect(2, "machnes = 96", "t.ini:2: unknown key 'machnes' in [system] (a misspelling of "
	       "'machines'?); [system] machines: required key missing",
	       "a misspelled required key is reported as unknown and as missing");
	expect(15, "horizon_tv = 1000", "t.ini:15: unknown key 'horizon_tv' in [run] (a misspelling "
	       "of 'horizon_vt'?); [run] horizon_vt: required key missing",
	       "a transposition in a required key is reported as unknown and as missing");
	expect(3, "resources = 2\nresources = 3", "t.ini:4: [system] resources: duplicate key (first set on line 3)",
	       "a duplicate key is refused with both lines");
	expect(8, "instr 4e6", "t.ini:8: syntax error", "a line without '=' is a syntax error at its line");
	expect(16, "loads_pct = 20:5:5", "t.ini:16: [run] loads_pct: range must be from:to:step",
	       "a backwards range is refused");
	expect(16, "loads_pct = 5,,10", "t.ini:16: [run] loads_pct: empty item in the list",
	       "an empty list item (two commas) is refused, not skipped");
	expect(16, "loads_pct = 5,10,", "t.ini:16: [run] loads_pct: empty item in the list",
	       "a trailing comma in a list is refused");
	expect(16, "loads_pct = 5:20:5:1", "t.ini:16: [run] loads_pct: range '5:20:5:1' must be from:to:step",
	       "a range of four parts is named as such");
	expect(2, "machines = 15", "balanced vectors need machines (15) divisible by 2^N (4)",
	       "balanced vectors with M not divisible by 2^N is refused");
	expect(10, "static_known = 3", "t.ini:10: [nlsc] static_known: 3 is out of range [0, 2]",
	       "static_known above N is refused");
	/* A `[name]` line alone is a section, with its own line. */
	expect(16, "loads_pct = 5:20:5\n[bogus]", "t.ini:17: unknown section [bogus]",
	       "an unknown section without keys is refused with file:line");
	expect(12, "groups = 2, 2", "t.ini:12: [2lsc] groups: 2 is listed twice",
	       "a G listed twice (two identical curves, two crossover_pct_g2 keys) is refused");
	expect(12, "[run]", "t.ini:11: [2lsc] groups: required key missing",
	       "a known section without keys is there: its required keys are asked for");
	expect(16, "loads_pct = 5:20:5\n[split]\ncut = M(1,0), M(1, 1)",
	       "t.ini:18: [split] cut: 'M(1, 1)' names no manager",
	       "a [split] cut naming no manager (a space in M(K,bits)) is refused, not ignored");
	expect(16, "loads_pct = 5:20:5\n[split]\ncut = M(1,1),, group1", "t.ini:18: [split] cut: empty item",
	       "an empty item in [split] cut is refused");
	expect(16, "loads_pct = 5:20:5\n[split]\ncut = M(1,1), group1,", "t.ini:18: [split] cut: empty item",
	       "a trailing comma in [split] cut is refused");
	expect(16, "loads_pct = 5:20:5\n[split]\ncut = M(3,000)", "'M(3,000)' names no manager",
	       "a cut below the tree's N levels is refused");
	expect(16, "loads_pct = 5:20:5\n[split]\ncut = group2", "'group2' names no manager",
	       "a cut at a group the 2LSC curves do not have is refused");
}

/* The offered load is over machines, not speed classes: two machines listed as classes
 * (10e6, 1e9) or as (10e6, 1e9, 1e9, 1e9) (machine i has class i * n_speed / M: the same two
 * machines) get the same arrival rate. */
static double
rate_of(const char *speeds, unsigned int mach)
{
	char text[4096], err[NL_CFG_ERR_LEN];
	struct nl_cfg *c = NULL;
	struct nl_model_cfg m;
	double r = -1;

	snprintf(text, sizeof(text),
		 "[system]\nmachines = %u\nresources = 1\nvectors = random\nspeeds_ips = %s\n"
		 "link_bps = 1e6\n[task]\nsplit = 1\ninstr = 4e6\n[nlsc]\n[run]\nhorizon_vt = 10\n"
		 "loads_pct = 50\n", mach, speeds);
	if (nl_cfg_load_string(&c, "t.ini", text, err, sizeof(err)) == 0 &&
	    nl_model_cfg_parse(c, &m) == 0)
		r = nl_model_arrival_rate(&m, 50);
	else
		nl_tap_diag("%s", c != NULL ? c->err : err);
	nl_cfg_free(c);
	return r;
}

static void
test_load_over_machines(void)
{
	double a = rate_of("10e6, 1e9", 2), b = rate_of("10e6, 1e9, 1e9, 1e9", 2);
	double c3 = rate_of("1e6, 2e6, 4e6", 5); /* classes of 2, 2 and 1 machines (0 1 | 2 3 | 4) */
	double want3 = 0.5 * 5 / (2 * 4.0 + 2 * 2.0 + 1 * 1.0) * 5;

	nl_tap_ok(a > 0 && fabs(a - b) <= 1e-12 * a,
		  "the same two machines give the same arrival rate however their classes are listed "
		  "(%g vs %g tasks/u.t.)", a, b);
	nl_tap_ok(fabs(c3 - want3) <= 1e-12 * want3,
		  "unequal class blocks weigh each class by its machines (%g, want %g)", c3, want3);
}

/* An [nlsc] section without keys is plain NLSC (every key has its default), not no NLSC. */
static void
test_empty_section(void)
{
	char err[NL_CFG_ERR_LEN] = "", text[4096];
	struct nl_cfg *c = NULL;
	struct nl_model_cfg m;
	const char *cut = strstr(good, "static_known");
	bool ok;

	snprintf(text, sizeof(text), "%.*s%s", (int)(cut - good), good, strstr(cut, "[2lsc]"));
	ok = nl_cfg_load_string(&c, "t.ini", text, err, sizeof(err)) == 0 &&
	     nl_model_cfg_parse(c, &m) == 0 && nl_cfg_check_unused(c) == 0;
	if (!nl_tap_ok(ok && m.n_variant == 2 && m.variant[0].scheme == NL_SCHEME_NLSC &&
			       m.variant[0].static_known == 0,
		       "an [nlsc] line without keys gives the plain NLSC curve"))
		nl_tap_diag("rc ok=%d err='%s' n_variant=%u", ok, c != NULL ? c->err : err,
			    ok ? m.n_variant : 0);
	nl_cfg_free(c);
}

static int
run_sim(const char *sim, const char *ini, char *err, size_t len)
{
	char cmd[2048];
	FILE *p;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' --config '%s' --out /tmp/nl-test-cfg-out -q 2>&1 >/dev/null", sim, ini);
	p = popen(cmd, "r");
	if (p == NULL)
		return -1;
	n = fread(err, 1, len - 1, p);
	err[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
test_cli(const char *sim)
{
	char dir[] = "/tmp/nl-test-cfg-XXXXXX", path[256], err[1024];
	FILE *f;
	int st;

	if (mkdtemp(dir) == NULL) {
		nl_tap_ok(0, "temporary folder");
		return;
	}
	snprintf(path, sizeof(path), "%s/bad.ini", dir);
	f = fopen(path, "w");
	fprintf(f, "%s", good);
	fprintf(f, "seedz = 3\n");
	fclose(f);
	st = run_sim(sim, path, err, sizeof(err));
	nl_tap_ok(st == 2 && strstr(err, "bad.ini:17: unknown key 'seedz' in [run]") != NULL,
		  "nlevel-sim: unknown key -> exit status 2 and FILE:LINE on stderr");
	if (st != 2)
		nl_tap_diag("status %d, stderr: %s", st, err);
	st = run_sim(sim, "/nonexistent/x.ini", err, sizeof(err));
	nl_tap_ok(st == 2 && strstr(err, "x.ini: cannot open") != NULL,
		  "nlevel-sim: a missing file -> exit status 2 with the path");
	snprintf(path, sizeof(path), "%s/bad2.ini", dir);
	f = fopen(path, "w");
	{
		const char *at = strstr(good, "speeds_ips = 1e6, 2e6");

		fprintf(f, "%.*sspeeds_ips = fast%s", (int)(at - good), good, at + strlen("speeds_ips = 1e6, 2e6"));
	}
	fclose(f);
	st = run_sim(sim, path, err, sizeof(err));
	nl_tap_ok(st == 2 && strstr(err, "bad2.ini:4: [system] speeds_ips: 'fast' is not a number"),
		  "nlevel-sim: non-numeric list value -> exit status 2 with FILE:LINE and key");
	unlink(path);
	/* options are checked as the file's keys are */
	snprintf(path, sizeof(path), "%s/bad.ini", dir);
	f = fopen(path, "w");
	fprintf(f, "%s", good);
	fclose(f);
	{
		static const struct {
			const char *opt, *want;
		} bad[] = {
			{ "--seeds 2x", "--seeds: '2x' is not a non-negative integer" },
			{ "--seeds 1.5", "--seeds: '1.5' is not a non-negative integer" },
			{ "--threads -1", "--threads: '-1' is not a non-negative integer" },
			{ "--threads 1000", "--threads: 1000 is out of range [1, 256]" },
			{ "--horizon inf", "--horizon: 'inf' is not a number" },
			{ "--horizon 1e4,5", "--horizon: '1e4,5' is not a number" },
		};
		char cmd[1024];

		for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(cmd, sizeof(cmd), "'%s' --config '%s' --out %s/o -q %s 2>&1 >/dev/null", sim,
				 path, dir, bad[i].opt);
			f = popen(cmd, "r");
			size_t n = f != NULL ? fread(err, 1, sizeof(err) - 1, f) : 0;

			err[n] = '\0';
			st = f != NULL ? pclose(f) : -1;
			if (!nl_tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(err, bad[i].want),
				       "nlevel-sim %s is refused (exit 2): %s", bad[i].opt, bad[i].want))
				nl_tap_diag("status %d, stderr: %s", st, err);
		}
		/* 64 loads in 400 characters: more than an INI line holds, not more than a list */
		char loads[600] = "";

		for (unsigned int k = 0; k < 64; k++)
			snprintf(loads + strlen(loads), sizeof(loads) - strlen(loads), "%s%.1f",
				 k ? "," : "", 0.5 + k * 0.5);
		snprintf(cmd, sizeof(cmd), "'%s' --config '%s' --out %s/o -q --seeds 1e0 --horizon 5 "
			 "--loads %s >/dev/null 2>&1", sim, path, dir, loads);
		st = system(cmd);
		nl_tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "nlevel-sim --loads takes 64 values in %zu characters, --seeds 1e0 is 1",
			  strlen(loads));
		snprintf(cmd, sizeof(cmd), "rm -rf '%s/o'", dir);
		if (system(cmd) != 0)
			nl_tap_diag("could not remove %s/o", dir);
	}
	unlink(path);
	rmdir(dir);
	snprintf(path, sizeof(path), "'%s' --help >/dev/null", sim);
	nl_tap_ok(system(path) == 0, "nlevel-sim --help exits 0");
	snprintf(path, sizeof(path), "'%s' --bogus 2>/dev/null", sim);
	st = system(path);
	nl_tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "nlevel-sim with an unknown option exits 2");
}

int
main(int argc, char **argv)
{
	test_library();
	test_empty_section();
	test_load_over_machines();
	if (argc > 1)
		test_cli(argv[1]);
	return nl_tap_done();
}
