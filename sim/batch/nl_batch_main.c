/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-sim's batch model (a [batch] section): load the SWF trace, run every scenario,
 * write DIR/batch.csv, DIR/batch.meta, DIR/plot_batch.gp and the PNGs in the style of seed 000
 * Fig. 2 (median wait per queue) and Fig. 3 (maximum wait per queue), progress on stderr and
 * a SUMMARY line for the first scenario on stdout (keys: docs/output.md). With [reservations], every scenario runs a
 * second time together with the request stream (rows "<scenario>+rsv" in batch.csv), every
 * request goes to DIR/reservations.csv, and SUMMARY gains the acceptance rate and the change
 * of the normal jobs' mean wait.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nl_batch.h"
#include "nl_batch_cfg.h"
#include "nl_plus.h"
#include "nl_sim_main.h"
#include "nl_version.h"

/* A relative trace path is tried from the current directory, then from the configuration
 * file's directory. */
static void
resolve_path(const char *trace, const char *config, char *out, size_t len)
{
	snprintf(out, len, "%s", trace);
	if (trace[0] == '/' || access(trace, R_OK) == 0)
		return;
	char tmp[4096];

	snprintf(tmp, sizeof(tmp), "%s", config);
	snprintf(out, len, "%s/%s", dirname(tmp), trace);
	if (access(out, R_OK) != 0)
		snprintf(out, len, "%s", trace);
}

/* Read the admission policy and check it compiles. @return 0, or 2 (message printed). */
static int
load_policy(const char *path, char **text, size_t *len, unsigned int nodes)
{
	FILE *f = fopen(path, "rb");
	struct nl_cad_err err;
	struct nl_plus *pl;
	long sz;

	*text = NULL;
	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "nlevel-sim: %s: %s\n", path, strerror(errno));
		if (f != NULL)
			fclose(f);
		return 2;
	}
	*text = malloc((size_t)sz + 1);
	if (*text == NULL || fread(*text, 1, (size_t)sz, f) != (size_t)sz) {
		fprintf(stderr, "nlevel-sim: %s: cannot read\n", path);
		fclose(f);
		return 2;
	}
	fclose(f);
	(*text)[sz] = '\0';
	*len = (size_t)sz;
	int rc = nl_plus_create(*text, *len, nodes, &pl, &err);

	if (rc != 0) {
		if (rc == -EINVAL)
			fprintf(stderr, "%s:%u:%u: error: %s\n", path, err.line, err.col, err.msg);
		else
			fprintf(stderr, "nlevel-sim: %s: %s\n", path, strerror(-rc));
		return 2;
	}
	nl_plus_free(pl);
	return 0;
}

static const char *const rsv_outcome[] = { "pending", "accepted", "refused_policy",
					   "refused_space", "invalid" };

/* One scenario with the request stream: a fresh manager, the run, reservations.csv rows. */
static int
run_rsv(const struct nl_batch_cfg *c, const struct nl_batch_scenario *sc,
	struct nl_batch_job *jobs, size_t n, const char *policy, size_t plen, double epoch_s,
	struct nl_batch_rsv_req *req, size_t n_req, struct nl_batch_stats *st, FILE *rcsv)
{
	struct nl_batch_rsv rv = { .epoch_s = epoch_s, .history_s = c->rsv.history_s,
				   .req = req, .n_req = n_req };
	int rc = nl_plus_create(policy, plen, c->sys.cpus, &rv.plus, NULL);

	if (rc != 0)
		return rc;
	rc = nl_batch_run_rsv(&c->sys, sc, jobs, n, &rv, st, NULL);
	nl_plus_free(rv.plus);
	if (rc != 0)
		return rc;
	for (size_t r = 0; r < n_req; r++) {
		const struct nl_batch_rsv_req *q = &req[r];

		fprintf(rcsv, "%s,%zu,%.0f,%.0f,%.0f,%u,%s,%s,%u,\"", sc->name, r, q->at_s,
			q->start_s, q->end_s, q->nodes, q->owner, rsv_outcome[q->outcome],
			q->preempted);
		for (const char *p = q->why; *p != '\0'; p++)
			fputs(*p == '"' ? "\"\"" : (char[2]){ *p == '\n' ? ' ' : *p, 0 }, rcsv);
		fputs("\"\n", rcsv);
	}
	return 0;
}

/* DIR/jobs.csv: one row per job of a scenario run, for job-by-job comparisons with other
 * simulators (docs/batch.md "Outputs"). A job that never started (runnable in no queue) has
 * empty start, end and wait. how: head, overtake (backfill / FirstFit), reserved, or none. */
static void
write_jobs(FILE *f, const char *scenario, const struct nl_batch_sys *sys,
	   const struct nl_batch_job *j, size_t n)
{
	static const char *const how[] = { "none", "head", "overtake", "reserved" };

	for (size_t i = 0; i < n; i++) {
		const struct nl_batch_job *b = &j[i];
		const char *q = b->queue >= 0 && (unsigned int)b->queue < sys->n_q ?
					sys->q[b->queue].name : "";

		if (b->start_s < 0)
			fprintf(f, "%s,%lld,%.15g,,,%u,%s,,none\n", scenario, (long long)b->swf_id,
				b->submit_s, b->cpus, q);
		else
			fprintf(f, "%s,%lld,%.15g,%.15g,%.15g,%u,%s,%.15g,%s\n", scenario,
				(long long)b->swf_id, b->submit_s, b->start_s, b->end_s, b->cpus, q,
				b->start_s - b->submit_s, how[b->how < 4 ? b->how : 0]);
	}
}

static int
write_plot(const char *dir, const struct nl_batch_cfg *c)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/plot_batch.gp", dir);
	f = fopen(path, "w");
	if (f == NULL)
		return -errno;
	fprintf(f, "# Made by nlevel-sim from batch.csv only; run it from this folder:\n"
		   "#   cd %s && gnuplot plot_batch.gp\n", dir);
	fprintf(f, "set datafile separator ','\nset terminal pngcairo size 900,560 noenhanced\n"
		   "csv = 'batch.csv'\n"
		   "stats csv every ::1 using 4 nooutput\nymax4 = STATS_max / 60\n"
		   "stats csv every ::1 using 5 nooutput\nymax5 = STATS_max / 60\n"
		   "stats csv every ::1 using 6 nooutput\nymax6 = STATS_max / 60\n");
	fprintf(f, "qs = '");
	for (unsigned int q = 0; q < c->sys.n_q; q++)
		fprintf(f, "%s ", c->sys.q[q].name);
	fprintf(f, "all'\nscs = '");
	for (unsigned int s = 0; s < c->n_sc; s++)
		fprintf(f, "%s%s%s%s%s", s ? " " : "", c->sc[s].name, c->rsv.on ? " " : "",
			c->rsv.on ? c->sc[s].name : "", c->rsv.on ? "+rsv" : "");
	fprintf(f, "'\nNS = words(scs)\nbw = 0.8 / NS\n"
		   "qi(n) = sum [k=1:words(qs)] (word(qs,k) eq n ? k : 0)\n"
		   "set style fill solid 0.8 border -1\nset boxwidth bw\nset grid ytics\n"
		   "set key below horizontal\nset xrange [0.4:words(qs)+0.6]\n"
		   "set xtics (");
	for (unsigned int q = 0; q <= c->sys.n_q; q++)
		fprintf(f, "%s'%s' %u", q ? ", " : "", q < c->sys.n_q ? c->sys.q[q].name : "all",
			q + 1);
	fprintf(f, ")\nset ylabel 'wait [min]'\n");
	static const struct {
		const char *png, *title;
		int col, mean_col; /* mean_col: also the mean wait, as outlined boxes */
	} fig[] = {
		{ "fig2_wait_median.png",
		  "Median (filled) and mean (outlined) wait per queue, as Fig. 2 of Kawanami et al.",
		  5, 4 },
		{ "fig3_wait_max.png",
		  "Maximum wait per queue, as Fig. 3 of Kawanami et al. (automatic queue selection)",
		  6, 0 },
	};
	for (unsigned int k = 0; k < 2; k++) {
		/* fig. 2 shows the mean beside the median, so a figure of zero medians (a lightly
		 * loaded machine) still shows what happened; with 1-2 scenarios every bar carries
		 * its value (more would overlap) */
		if (fig[k].mean_col)
			fprintf(f, "ymax = ymax%d > ymax%d ? ymax%d : ymax%d\n", fig[k].col,
				fig[k].mean_col, fig[k].col, fig[k].mean_col);
		else
			fprintf(f, "ymax = ymax%d\n", fig[k].col);
		fprintf(f, "if (ymax <= 0) { set yrange [0:1] } else { set yrange [0:ymax * 1.15] }\n");
		fprintf(f, "set output '%s'\nset title '%s'\nplot ", fig[k].png, fig[k].title);
		if (fig[k].mean_col)
			fprintf(f, "for [s=1:NS] csv every ::1 using "
				   "(qi(strcol(2)) + (s - (NS + 1) / 2.0) * bw):"
				   "(strcol(1) eq word(scs,s) ? column(%d) / 60 : 1/0) "
				   "with boxes fs empty lw 2 lc s "
				   "title word(scs,s).' mean', \\\n"
				   "     for [s=1:NS] csv every ::1 using "
				   "(qi(strcol(2)) + (s - (NS + 1) / 2.0) * bw):"
				   "(strcol(1) eq word(scs,s) ? column(%d) / 60 : 1/0):"
				   "(NS <= 2 ? sprintf('mean %%.0f', column(%d) / 60) : '') with labels offset 0,1.5 "
				   "font ',8' notitle, \\\n     ",
				fig[k].mean_col, fig[k].mean_col, fig[k].mean_col);
		fprintf(f, "for [s=1:NS] csv every ::1 using "
			   "(qi(strcol(2)) + (s - (NS + 1) / 2.0) * bw):"
			   "(strcol(1) eq word(scs,s) ? column(%d) / 60 : 1/0) "
			   "with boxes lc s title word(scs,s).'%s', \\\n"
			   "     for [s=1:NS] csv every ::1 using "
			   "(qi(strcol(2)) + (s - (NS + 1) / 2.0) * bw):"
			   "(strcol(1) eq word(scs,s) ? column(%d) / 60 : 1/0):"
			   "(NS <= 2 ? sprintf('%s%%.0f', column(%d) / 60) : '') with labels offset 0,%s "
			   "font ',8' notitle\n",
			fig[k].col, fig[k].mean_col ? " median" : "", fig[k].col,
			fig[k].mean_col ? "median " : "", fig[k].col, "0.7");
	}
	fclose(f);
	return 0;
}

int
nl_sim_main_batch(struct nl_cfg *cfg, const struct nl_sim_opts *o)
{
	struct nl_batch_cfg c;
	struct nl_swf *t = NULL;
	struct nl_batch_job *base = NULL, *jobs = NULL;
	size_t n = 0, drops[NL_SWF_DROP__COUNT];
	char path[4200], err[NL_SWF_ERR_LEN];
	char summary[768] = "", policy_path[4200] = "";
	FILE *csv = NULL, *meta = NULL, *rcsv = NULL, *jcsv = NULL;
	struct nl_batch_rsv_req *req = NULL;
	size_t n_req = 0, plen = 0;
	char *policy = NULL;
	double epoch_s = 0;
	double t0 = nl_sim_wall_s(), load_s = 0;
	int rc = 1;
	const struct nl_cfg_entry *ce = nl_cfg_find(cfg, "batch", "cpus");
	bool cpus_auto = ce != NULL && strcmp(ce->value, "auto") == 0;
	unsigned int cpus_line = ce != NULL ? ce->line : 0;

	if (cpus_auto) {
		/* cpus = auto: the trace's MaxProcs header, read before the rest is parsed */
		const struct nl_cfg_entry *te = nl_cfg_find(cfg, "batch", "trace");
		uint64_t mp;

		if (o->trace == NULL && te == NULL) {
			fprintf(stderr, "nlevel-sim: %s:%u: [batch] cpus = auto needs a trace: set "
					"[batch] trace or give --trace\n", o->config, cpus_line);
			return 2;
		}
		if (o->trace != NULL)
			snprintf(path, sizeof(path), "%s", o->trace);
		else
			resolve_path(te->value, o->config, path, sizeof(path));
		if (nl_swf_load(&t, path, err, sizeof(err)) != 0) {
			fprintf(stderr, "nlevel-sim: %s\n", err);
			return 2;
		}
		if (nl_batch_cfg_cpus_auto(cfg, t, path, &mp) != 0) {
			fprintf(stderr, "nlevel-sim: %s\n", cfg->err);
			nl_swf_free(t);
			return 2;
		}
		if (!o->quiet)
			fprintf(stderr, "nlevel-sim: cpus = auto: %llu processors (MaxProcs of %s%s)\n",
				(unsigned long long)mp, path,
				(int64_t)mp != nl_swf_header_int(t, "MaxProcs") ? " x cpus_scale" : "");
	}
	if (nl_batch_cfg_parse(cfg, &c) != 0 || nl_cfg_check_unused(cfg) != 0) {
		fprintf(stderr, "nlevel-sim: %s\n", cfg->err);
		nl_swf_free(t);
		return 2;
	}
	if (o->trace == NULL && c.trace == NULL) {
		fprintf(stderr, "nlevel-sim: %s: no trace: set [batch] trace or give --trace\n",
			o->config);
		return 2;
	}
	if (o->rsv_policy != NULL && !c.rsv.on) {
		fprintf(stderr, "nlevel-sim: --rsv-policy: %s has no [reservations] section\n",
			o->config);
		return 2;
	}
	if (c.rsv.on) {
		if (o->rsv_policy != NULL)
			snprintf(policy_path, sizeof(policy_path), "%s", o->rsv_policy);
		else
			resolve_path(c.rsv.policy_file, o->config, policy_path,
				     sizeof(policy_path));
		if (load_policy(policy_path, &policy, &plen, c.sys.cpus) != 0) {
			free(policy);
			nl_swf_free(t);
			return 2;
		}
	}
	if (o->trace != NULL)
		snprintf(path, sizeof(path), "%s", o->trace);
	else
		resolve_path(c.trace, o->config, path, sizeof(path));
	if (t == NULL && nl_swf_load(&t, path, err, sizeof(err)) != 0) {
		fprintf(stderr, "nlevel-sim: %s\n", err);
		if (access(path, R_OK) != 0)
			fprintf(stderr, "nlevel-sim: the Parallel Workloads Archive logs are at "
					"https://www.cs.huji.ac.il/labs/parallel/workload/ (README.md)\n");
		free(policy);
		return 2;
	}
	if (nl_batch_jobs_from_swf(t, &c, &base, &n, drops) != 0)
		goto out;
	if (n == 0) { /* nothing to simulate: say why rather than print a run of no job */
		if (t->n_job == 0)
			fprintf(stderr, "nlevel-sim: %s: no job records (empty trace: only %zu header "
					"lines)\n", path, t->n_hdr);
		else {
			fprintf(stderr, "nlevel-sim: %s: no usable job in %zu records (dropped:", path,
				t->n_job);
			nl_swf_drops_fprint(stderr, drops, " ");
			fprintf(stderr, ")\n");
		}
		rc = 2;
		goto out;
	}
	load_s = nl_sim_wall_s() - t0;
	if (!cpus_auto && c.cpus_scale <= 1) {
		/* replaying a log on a machine of another size changes every wait */
		int64_t mp = nl_swf_header_int(t, "MaxProcs");

		if (mp > 0 && mp != (int64_t)c.sys.cpus)
			fprintf(stderr, "nlevel-sim: warning: %s:%u: [batch] cpus = %u, but the "
					"trace's header says MaxProcs %lld; waits depend strongly on "
					"the processor count (cpus = auto uses the header's)\n",
				o->config, cpus_line, c.sys.cpus, (long long)mp);
	}
	if (!o->quiet) {
		const char *comp = nl_swf_header_get(t, "Computer");

		fprintf(stderr, "nlevel-sim: %s: %zu records (%s, MaxProcs %lld) read in %.2fs; "
				"%zu jobs kept",
			path, t->n_job, comp ? comp : "?", (long long)nl_swf_header_int(t, "MaxProcs"),
			nl_sim_wall_s() - t0, n);
		for (unsigned int k = 1; k < NL_SWF_DROP__COUNT; k++)
			if (drops[k] > 0)
				fprintf(stderr, ", %zu dropped (%s)", drops[k], nl_swf_drop_name(k));
		fprintf(stderr, "\n");
	}
	jobs = malloc((n ? n : 1) * sizeof(*jobs));
	if (jobs == NULL)
		goto out;
	snprintf(path, sizeof(path), "%s/batch.csv", o->out_dir);
	csv = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/batch.meta", o->out_dir);
	meta = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/jobs.csv", o->out_dir);
	jcsv = fopen(path, "w");
	if (csv == NULL || meta == NULL || jcsv == NULL) {
		fprintf(stderr, "nlevel-sim: cannot write in %s: %s\n", o->out_dir, strerror(errno));
		goto out;
	}
	fprintf(jcsv, "scenario,job,submit_s,start_s,end_s,cpus,queue,wait_s,how\n");
	fprintf(csv, "scenario,queue,jobs,wait_mean_s,wait_median_s,wait_max_s,bsld_mean,"
		     "utilization\n");
	fprintf(meta, "config=%s\nnlevel=%s\ntrace=%s\nrecords=%zu\njobs=%zu\ncpus=%u\n"
		      "bsld_tau_s=%g\n",
		o->config, NL_GIT_DESCRIBE, o->trace ? o->trace : c.trace, t->n_job, n, c.sys.cpus,
		c.tau_s);
	/* every record accounted for: records = jobs + beyond_jobs_max + the drops */
	fprintf(meta, "beyond_jobs_max=%zu\n", drops[NL_SWF_KEEP] - n);
	for (unsigned int k = 1; k < NL_SWF_DROP__COUNT; k++)
		fprintf(meta, "dropped_%s=%zu\n", nl_swf_drop_name(k), drops[k]);
	if (c.rsv.on) {
		double t_first = n ? base[0].submit_s : 0, t_last = n ? base[n - 1].submit_s : 0;
		int64_t ep = nl_swf_header_int(t, "UnixStartTime");

		epoch_s = ep > 0 ? (double)ep : 0;
		if (c.rsv.requests != NULL) {
			char rp[4200], rerr[512];

			resolve_path(c.rsv.requests, o->config, rp, sizeof(rp));
			if (nl_batch_rsv_load(rp, &req, &n_req, rerr, sizeof(rerr)) != 0) {
				fprintf(stderr, "nlevel-sim: %s\n", rerr);
				rc = 2;
				goto out;
			}
		} else if (nl_batch_rsv_generate(&c.rsv, t_first, t_last, &req, &n_req) != 0) {
			goto out;
		}
		snprintf(path, sizeof(path), "%s/reservations.csv", o->out_dir);
		rcsv = fopen(path, "w");
		if (rcsv == NULL) {
			fprintf(stderr, "nlevel-sim: %s: %s\n", path, strerror(errno));
			goto out;
		}
		fprintf(rcsv, "scenario,request,at_s,start_s,end_s,nodes,owner,outcome,preempted,"
			      "refused_by\n");
		fprintf(meta, "rsv_policy=%s\nrsv_requests=%zu\nrsv_epoch_s=%.0f\n", policy_path,
			n_req, epoch_s);
		if (!o->quiet)
			fprintf(stderr, "nlevel-sim: %zu reservation requests (%s), policy %s\n",
				n_req, c.rsv.requests != NULL ? c.rsv.requests : "generated",
				policy_path);
	}
	for (unsigned int s = 0; s < c.n_sc; s++) {
		double base_wait = 0;

		for (unsigned int pass = 0; pass < (c.rsv.on ? 2u : 1u); pass++) {
			const struct nl_batch_scenario *sc = &c.sc[s];
			struct nl_batch_stats st;
			struct nl_batch_metrics all = { 0 };
			char name[NL_BATCH_NAME_LEN + 8];
			double w0, wall;

			snprintf(name, sizeof(name), "%s%s", sc->name, pass ? "+rsv" : "");
			memcpy(jobs, base, n * sizeof(*jobs));
			w0 = nl_sim_wall_s();
			if (pass == 0)
				rc = nl_batch_run(&c.sys, sc, jobs, n, &st, NULL);
			else
				rc = run_rsv(&c, sc, jobs, n, policy, plen, epoch_s, req, n_req, &st,
					     rcsv);
			wall = nl_sim_wall_s() - w0;
			if (rc != 0) {
				fprintf(stderr, "nlevel-sim: scenario %s: %s\n", name, strerror(-rc));
				rc = 1;
				goto out;
			}
			write_jobs(jcsv, name, &c.sys, jobs, n);
			for (int q = 0; q <= (int)c.sys.n_q; q++) {
				struct nl_batch_metrics m;
				int qq = q < (int)c.sys.n_q ? q : -1;

				if (nl_batch_metrics(&c.sys, jobs, n, &st, qq, c.tau_s, &m) != 0) {
					rc = 1;
					goto out;
				}
				if (qq < 0)
					all = m;
				fprintf(csv, "%s,%s,%zu,%.1f,%.1f,%.1f,%.3f,%.4f\n", name,
					qq < 0 ? "all" : c.sys.q[q].name, m.jobs, m.wait_mean_s,
					m.wait_median_s, m.wait_max_s, m.bsld_mean, m.utilization);
			}
			fprintf(meta, "scenario.%s=policy:%s jobs:%zu unrunnable:%zu makespan_s:%.0f "
				      "events:%llu passes:%llu resv_made:%llu resv_refused:%llu "
				      "resv_priority:%llu resv_head:%llu resv_nonwait:%llu "
				      "held_cpu_s:%.0f wall_s:%.4f",
				name, nl_batch_policy_name(sc->policy), st.jobs, st.unrunnable,
				st.makespan_s, (unsigned long long)st.events,
				(unsigned long long)st.passes, (unsigned long long)st.resv_made,
				(unsigned long long)st.resv_refused,
				(unsigned long long)st.resv_by_trigger[0],
				(unsigned long long)st.resv_by_trigger[1],
				(unsigned long long)st.resv_by_trigger[2], st.held_cpu_s, wall);
			if (pass)
				fprintf(meta, " rsv_requests:%llu rsv_accepted:%llu "
					      "rsv_refused_policy:%llu rsv_refused_space:%llu "
					      "rsv_invalid:%llu preempted:%llu preempted_cpu_s:%.0f "
					      "rsv_node_s:%.0f",
					(unsigned long long)st.rsv_requests,
					(unsigned long long)st.rsv_accepted,
					(unsigned long long)st.rsv_refused_policy,
					(unsigned long long)st.rsv_refused_space,
					(unsigned long long)st.rsv_invalid,
					(unsigned long long)st.preempted, st.preempted_cpu_s,
					st.rsv_node_s);
			fprintf(meta, "\n");
			if (pass == 0 && st.unrunnable > 0)
				fprintf(stderr, "nlevel-sim: warning: scenario %s: %zu of %zu jobs never "
						"run: no queue of it accepts them (wider than cpus = %u, or "
						"beyond a queue's cpu_max, proc_max, thread_max or "
						"walltime_max_s); batch.meta counts them as unrunnable\n",
					name, st.unrunnable, n, c.sys.cpus);
			if (!o->quiet) {
				fprintf(stderr, "[%u/%u] %s (%s): %zu jobs, wait mean %.1f min median "
						"%.1f min max %.1f h, bsld %.2f, util %.3f, %zu "
						"unrunnable, %llu reservations; %.3fs (%.0f jobs/s)\n",
					s + 1, c.n_sc, name, nl_batch_policy_name(sc->policy), all.jobs,
					all.wait_mean_s / 60, all.wait_median_s / 60,
					all.wait_max_s / 3600, all.bsld_mean, all.utilization,
					st.unrunnable, (unsigned long long)st.resv_made, wall,
					st.jobs / (wall > 0 ? wall : 1e-9));
				if (pass)
					fprintf(stderr, "      advance reservations: %llu requested, "
							"%llu accepted (%.1f %%), refused %llu by the "
							"policy, %llu for space, %llu invalid; %llu jobs "
							"preempted; normal jobs' mean wait %+.1f min\n",
						(unsigned long long)st.rsv_requests,
						(unsigned long long)st.rsv_accepted,
						st.rsv_requests ? 100.0 * st.rsv_accepted /
									  st.rsv_requests : 0.0,
						(unsigned long long)st.rsv_refused_policy,
						(unsigned long long)st.rsv_refused_space,
						(unsigned long long)st.rsv_invalid,
						(unsigned long long)st.preempted,
						(all.wait_mean_s - base_wait) / 60);
			}
			if (pass == 0)
				base_wait = all.wait_mean_s;
			if (s == 0 && pass == 0)
				snprintf(summary, sizeof(summary),
					 "SUMMARY scenario=%s jobs=%zu wait_mean_s=%.1f "
					 "wait_median_s=%.1f bsld_mean=%.3f utilization=%.4f "
					 "makespan_s=%.0f wall_s=%.4f load_s=%.4f "
					 "engine_jobs_per_s=%.0f e2e_jobs_per_s=%.0f jobs_per_s=%.0f",
					 sc->name, all.jobs, all.wait_mean_s, all.wait_median_s,
					 all.bsld_mean, all.utilization, st.makespan_s, wall, load_s,
					 st.jobs / (wall > 0 ? wall : 1e-9),
					 st.jobs / (wall + load_s > 0 ? wall + load_s : 1e-9),
					 st.jobs / (wall > 0 ? wall : 1e-9));
			if (s == 0 && pass == 1) {
				size_t l = strlen(summary);

				snprintf(summary + l, sizeof(summary) - l,
					 " rsv_requests=%llu rsv_accepted_pct=%.1f "
					 "rsv_wait_delta_s=%.1f rsv_preempted=%llu",
					 (unsigned long long)st.rsv_requests,
					 st.rsv_requests ? 100.0 * st.rsv_accepted / st.rsv_requests :
							   0.0,
					 all.wait_mean_s - base_wait, (unsigned long long)st.preempted);
			}
		}
	}
	fclose(csv);
	csv = NULL;
	if (fclose(jcsv) != 0)
		fprintf(stderr, "nlevel-sim: %s/jobs.csv: %s\n", o->out_dir, strerror(errno));
	jcsv = NULL;
	if (rcsv != NULL)
		fclose(rcsv);
	rcsv = NULL;
	fclose(meta);
	meta = NULL;
	if (write_plot(o->out_dir, &c) == 0) {
		if (nl_gnuplot_run(o->out_dir, "plot_batch.gp", "plot_batch.log") != 0)
			fprintf(stderr, "nlevel-sim: gnuplot failed or missing (see %s/plot_batch.log); "
					"batch.csv is complete\n", o->out_dir);
	}
	printf("%s\n", summary);
	rc = 0;
out:
	if (csv != NULL)
		fclose(csv);
	if (meta != NULL)
		fclose(meta);
	if (rcsv != NULL)
		fclose(rcsv);
	if (jcsv != NULL)
		fclose(jcsv);
	free(req);
	free(policy);
	free(jobs);
	free(base);
	nl_swf_free(t);
	return rc;
}
