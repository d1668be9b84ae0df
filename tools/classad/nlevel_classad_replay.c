/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-classad-replay: replay an SWF trace on a node-level FCFS machine together with a
 * stream of advance-reservation requests admitted by a seed 004 policy (nl_plus), and report
 * the acceptance rate and the effect on the normal jobs' wait — against a run of the same
 * trace without reservations (the baseline, same invocation).
 *
 * Model (a stand-in until bench/batch/ takes external holds; docs/classad.md):
 *  - P nodes (SWF MaxProcs, or --nodes), one processor each; a job takes req_procs nodes
 *    (alloc_procs when unknown) for run_s; its estimate is max(req_time_s, run_s).
 *  - FCFS: the queue head starts as soon as enough nodes are idle *and* free of reservations
 *    until its estimated end (nl_plus_node_next_hold); the jobs behind it wait.
 *  - Reservation requests: Poisson, --rate per hour; lead time uniform in [30 min, --lead h],
 *    duration uniform in [30 min, --dur h], 1..--max-nodes nodes, owners userA/userX/userZ.
 *    Each node record carries its running job (startTime, wallTime = estimate) so Fig. 8
 *    can keep reservations off nodes whose jobs would still run.
 *  - A reservation "disturbs" a job when one of its nodes still runs a job at the start.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_plus.h"
#include "nl_swf.h"

struct job {
	int64_t submit_s, run_s, est_s, start_s;
	unsigned int procs;
};

struct rreq {
	int64_t at_s, start_s, end_s;
	unsigned int n;
	const char *owner;
};

struct running {
	int64_t end_s;
	unsigned int job;
};

struct out {
	double wait_mean_s, wait_max_s;
	unsigned int n_req, n_acc, n_disturbed;
	int64_t makespan_s;
};

static uint64_t rng_state;

static double
unif(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static int
simulate(struct job *jobs, size_t n_job, unsigned int P, const char *policy, size_t plen,
	 const struct rreq *rq, size_t n_rq, bool first_fit, struct out *o)
{
	struct nl_plus *pl = NULL;
	struct nl_cad_err e;
	int64_t *busy_until = calloc(P, sizeof(int64_t));       /* 0: idle */
	unsigned int *job_on = calloc(P, sizeof(unsigned int));
	struct nl_plus_job *pj = calloc(P, sizeof(*pj));
	unsigned int *pick = calloc(P, sizeof(unsigned int));
	uint64_t *rid = calloc(n_rq + 1, sizeof(uint64_t));
	int64_t *rend = calloc(n_rq + 1, sizeof(int64_t)), *rstart = calloc(n_rq + 1, sizeof(int64_t));
	size_t n_live = 0, next_job = 0, head = 0, next_rq = 0;
	double wait_sum = 0;
	int rc = nl_plus_create(policy, plen, P, &pl, &e);

	memset(o, 0, sizeof(*o));
	for (size_t k = 0; k < n_job; k++)
		jobs[k].start_s = -1;
	if (rc < 0) {
		fprintf(stderr, "policy:%u:%u: error: %s\n", e.line, e.col, e.msg);
		goto done;
	}
	for (unsigned int i = 0; i < P; i++) {
		struct nl_plus_node nd = { .alive = true };

		snprintf(nd.name, sizeof(nd.name), "n%u", i);
		nl_plus_node_set(pl, i, &nd);
	}
	int64_t t = 0;

	for (;;) {
		/* next event: job end, job arrival, request arrival, reservation start/end */
		int64_t nt = INT64_MAX;

		for (unsigned int i = 0; i < P; i++)
			if (busy_until[i] > t && busy_until[i] < nt)
				nt = busy_until[i];
		if (next_job < n_job && jobs[next_job].submit_s < nt)
			nt = jobs[next_job].submit_s;
		if (next_rq < n_rq && rq[next_rq].at_s < nt)
			nt = rq[next_rq].at_s;
		for (size_t k = 0; k < n_live; k++) {
			if (rstart[k] > t && rstart[k] < nt)
				nt = rstart[k];
			if (rend[k] > t && rend[k] < nt)
				nt = rend[k];
		}
		if (nt == INT64_MAX) {
			if (head < next_job || next_job < n_job)
				rc = -EDEADLK; /* a job larger than the machine */
			break;
		}
		t = nt > t ? nt : t;
		nl_plus_set_now(pl, t);
		/* job ends */
		for (unsigned int i = 0; i < P; i++) {
			if (busy_until[i] != 0 && busy_until[i] <= t) {
				struct nl_plus_node nd = { .alive = true };

				snprintf(nd.name, sizeof(nd.name), "n%u", i);
				busy_until[i] = 0;
				nl_plus_node_set(pl, i, &nd);
			}
		}
		/* reservations starting now: count the jobs still on their nodes; ended: release */
		for (size_t k = 0; k < n_live;) {
			if (rstart[k] == t) {
				struct nl_plus_rsv_info in;

				nl_plus_get(pl, rid[k], &in);
				for (unsigned int q = 0; q < in.n_nodes; q++)
					o->n_disturbed += busy_until[in.nodes[q]] > t;
			}
			if (rend[k] <= t) {
				nl_plus_cancel(pl, rid[k]);
				rid[k] = rid[--n_live];
				rend[k] = rend[n_live];
				rstart[k] = rstart[n_live];
				continue;
			}
			k++;
		}
		while (next_job < n_job && jobs[next_job].submit_s <= t)
			next_job++;
		/* reservation requests */
		while (next_rq < n_rq && rq[next_rq].at_s <= t) {
			const struct rreq *r = &rq[next_rq++];
			struct nl_plus_req q = { r->owner, r->start_s, r->end_s, r->n };
			uint64_t id;

			o->n_req++;
			if (nl_plus_reserve(pl, &q, &id, NULL) == 0) {
				o->n_acc++;
				rid[n_live] = id;
				rstart[n_live] = r->start_s;
				rend[n_live++] = r->end_s;
			}
		}
		/* FCFS: start queue heads while they fit; FirstFit: then any waiting job that fits */
		for (size_t w = head; w < next_job; w++) {
			struct job *j = &jobs[w];
			unsigned int got = 0;

			if (j->start_s >= 0)
				continue;
			for (unsigned int i = 0; i < P && got < j->procs; i++)
				if (busy_until[i] == 0 && nl_plus_node_next_hold(pl, i, t) >= t + j->est_s)
					pick[got++] = i;
			if (got < j->procs) {
				if (first_fit)
					continue;
				break;
			}
			j->start_s = t;
			wait_sum += (double)(t - j->submit_s);
			if ((double)(t - j->submit_s) > o->wait_max_s)
				o->wait_max_s = (double)(t - j->submit_s);
			for (unsigned int k = 0; k < got; k++) {
				unsigned int i = pick[k];
				struct nl_plus_node nd = { .alive = true, .loadavg = 1.0, .n_jobs = 1 };

				busy_until[i] = t + j->run_s;
				job_on[i] = (unsigned int)head;
				snprintf(nd.name, sizeof(nd.name), "n%u", i);
				pj[i] = (struct nl_plus_job){ "job", "user", "Running", 0, t,
							      (double)j->est_s };
				nd.jobs = &pj[i];
				nl_plus_node_set(pl, i, &nd);
			}
			while (head < next_job && jobs[head].start_s >= 0)
				head++;
		}
		if (t > o->makespan_s)
			o->makespan_s = t;
	}
	o->wait_mean_s = n_job ? wait_sum / (double)n_job : 0;
done:
	nl_plus_free(pl);
	free(busy_until);
	free(job_on);
	free(pj);
	free(pick);
	free(rid);
	free(rend);
	free(rstart);
	return rc;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: nlevel-classad-replay TRACE.swf[.gz] [options]\n"
		"  -p, --policy FILE   admission policy (default config/policies/fig8-running-jobs.cad)\n"
		"  -j, --jobs N        first N jobs of the trace (default 5000)\n"
		"  -P, --nodes N       machine size (default: the trace's MaxProcs)\n"
		"  -r, --rate R        reservation requests per hour (default 1)\n"
		"  -l, --lead H        lead time up to H hours (default 24)\n"
		"  -d, --dur H         duration up to H hours (default 4)\n"
		"  -m, --max-nodes K   nodes per request up to K (default 8)\n"
		"  -s, --seed S        random seed (default 4)\n"
		"  -f, --first-fit     any waiting job that fits may start (default: strict FCFS)\n"
		"  -h, --help\n"
		"Prints the acceptance rate, disturbed jobs, and the normal jobs' mean/max wait with and\n"
		"without the reservations (the baseline is the same trace and scheduler, no requests).\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' }, { "jobs", required_argument, NULL, 'j' },
		{ "nodes", required_argument, NULL, 'P' }, { "rate", required_argument, NULL, 'r' },
		{ "lead", required_argument, NULL, 'l' }, { "dur", required_argument, NULL, 'd' },
		{ "max-nodes", required_argument, NULL, 'm' }, { "seed", required_argument, NULL, 's' },
		{ "first-fit", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	bool first_fit = false;
	const char *policy_path = "config/policies/fig8-running-jobs.cad";
	size_t max_jobs = 5000;
	unsigned int P = 0, max_nodes = 8;
	double rate = 1, lead_h = 24, dur_h = 4;
	unsigned long long seed = 4;
	int o;

	while ((o = getopt_long(argc, argv, "p:j:P:r:l:d:m:s:fh", opts, NULL)) != -1) {
		switch (o) {
		case 'p': policy_path = optarg; break;
		case 'j': max_jobs = strtoul(optarg, NULL, 10); break;
		case 'P': P = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 'r': rate = strtod(optarg, NULL); break;
		case 'l': lead_h = strtod(optarg, NULL); break;
		case 'd': dur_h = strtod(optarg, NULL); break;
		case 'm': max_nodes = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'f': first_fit = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc || rate < 0 || lead_h < 0.5 || dur_h < 0.5 || max_nodes == 0) {
		usage(stderr);
		return 2;
	}
	char err[NL_SWF_ERR_LEN];
	struct nl_swf *tr;

	if (nl_swf_load(&tr, argv[optind], err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (P == 0)
		P = (unsigned int)nl_swf_header_int(tr, "MaxProcs");
	if (P == 0 || P > 100000) {
		fprintf(stderr, "nlevel-classad-replay: no MaxProcs in the trace; give --nodes\n");
		nl_swf_free(tr);
		return 2;
	}
	FILE *f = fopen(policy_path, "rb");
	static char policy[1 << 16];
	size_t plen;

	if (f == NULL) {
		perror(policy_path);
		nl_swf_free(tr);
		return 2;
	}
	plen = fread(policy, 1, sizeof(policy) - 1, f);
	fclose(f);
	struct job *jobs = calloc(max_jobs + 1, sizeof(*jobs));
	size_t n_job = 0;

	for (size_t i = 0; i < tr->n_job && n_job < max_jobs; i++) {
		const struct nl_swf_job *s = &tr->job[i];
		int64_t procs = s->req_procs > 0 ? s->req_procs : s->alloc_procs;

		if (s->run_s <= 0 || procs <= 0 || procs > P || s->submit_s < 0)
			continue;
		jobs[n_job].submit_s = s->submit_s;
		jobs[n_job].run_s = s->run_s;
		jobs[n_job].est_s = s->req_time_s > s->run_s ? s->req_time_s : s->run_s;
		jobs[n_job].procs = (unsigned int)procs;
		n_job++;
	}
	nl_swf_free(tr);
	if (n_job == 0) {
		fprintf(stderr, "nlevel-classad-replay: no usable job\n");
		free(jobs);
		return 2;
	}
	/* the request stream over the span of the jobs' submissions */
	int64_t span = jobs[n_job - 1].submit_s;
	size_t cap = (size_t)(rate * (double)span / 3600.0 * 2 + 16), n_rq = 0;
	struct rreq *rq = calloc(cap, sizeof(*rq));
	static const char *const owners[] = { "userA", "userX", "userZ" };
	double at = 0;

	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
	while (rate > 0 && n_rq < cap) {
		at += -log(1 - unif()) * 3600.0 / rate;
		if (at > (double)span)
			break;
		struct rreq *r = &rq[n_rq++];

		r->at_s = (int64_t)at;
		r->start_s = r->at_s + (int64_t)(1800 + unif() * (lead_h * 3600 - 1800));
		r->end_s = r->start_s + (int64_t)(1800 + unif() * (dur_h * 3600 - 1800));
		r->n = 1 + (unsigned int)(unif() * max_nodes) % max_nodes;
		r->owner = owners[(unsigned int)(unif() * 3) % 3];
	}
	struct out base, with;
	int rc1 = simulate(jobs, n_job, P, policy, plen, NULL, 0, first_fit, &base);
	int rc2 = simulate(jobs, n_job, P, policy, plen, rq, n_rq, first_fit, &with);

	if (rc1 < 0 || rc2 < 0) {
		fprintf(stderr, "nlevel-classad-replay: simulation failed (%d, %d)\n", rc1, rc2);
		free(jobs);
		free(rq);
		return 2;
	}
	printf("trace %s: %zu jobs on %u nodes (%s), policy %s, seed %llu\n", argv[optind],
	       n_job, P, first_fit ? "FirstFit" : "FCFS", policy_path, seed);
	printf("requests %u, accepted %u (%.1f %%), jobs running at a reservation start %u\n",
	       with.n_req, with.n_acc, with.n_req ? 100.0 * with.n_acc / with.n_req : 0.0,
	       with.n_disturbed);
	printf("normal jobs' wait: mean %.0f s (baseline %.0f s, %+.1f %%), max %.0f s "
	       "(baseline %.0f s)\n",
	       with.wait_mean_s, base.wait_mean_s,
	       base.wait_mean_s > 0 ? 100.0 * (with.wait_mean_s / base.wait_mean_s - 1) : 0.0,
	       with.wait_max_s, base.wait_max_s);
	free(jobs);
	free(rq);
	return 0;
}
