/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-swim-sim: the failure-detector experiments of docs/results.md on nl_swimnet.
 *
 *   nlevel-swim-sim loss   [--n 32] [--seconds 1000] [--seed S]
 *       false positives vs message loss (1..30 %), three modes: plain SWIM (§3: a failed
 *       probe is dead), SWIM with suspicion (§4.2), SWIM + Lifeguard
 *   nlevel-swim-sim pause  [--n 32] [--seconds 600] [--paused C] [--pause-ms 3000]
 *                          [--every-ms 10000] [--loss P] [--seed S]
 *       false positives while C members are paused (SIGSTOP-like) pause-ms in every every-ms
 *   nlevel-swim-sim partition [--n 3] [--trials 20] [--seed S]
 *       members 0 .. n/2-1 cut from the rest for 1, 2, ... 10 s: how many trials declared
 *       anyone dead (a cut longer than the suspicion timeout is, by design, a death)
 *   nlevel-swim-sim detect [--nmax 1024] [--trials 5] [--seed S]
 *       detection time of one crashed member vs N = 8, 16, ... nmax
 *
 * Output: CSV (header line first, unit-suffixed columns) and one `SUMMARY key=value ...`
 * line per row group. Defaults: memberlist's DefaultLANConfig (T' = 1 s, timeout 500 ms,
 * k = 3, suspicion_mult 4, max mult 6, LHM max 8); one-way delay 0.1..1 ms.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl_swimnet.h"
#include "nl_version.h"

#define S_NS 1000000000ull
#define MS_NS 1000000ull

struct opts {
	uint32_t n;
	uint32_t nmax;
	uint32_t trials;
	uint32_t paused;
	uint64_t seconds;
	uint64_t pause_ms;
	uint64_t every_ms;
	double loss;
	uint64_t seed;
};

static const struct {
	const char *name;
	bool suspicion;
	bool lifeguard;
} modes[] = {
	{ "swim-basic", false, false },
	{ "swim", true, false },
	{ "lifeguard", true, true },
};

static void
base_cfg(struct nl_swimnet_cfg *c, uint32_t n, unsigned int mode, double loss, uint64_t seed)
{
	memset(c, 0, sizeof(*c));
	c->n = n;
	c->suspicion = modes[mode].suspicion;
	c->lifeguard = modes[mode].lifeguard;
	c->loss = loss;
	c->delay_min_ns = 100000;
	c->delay_max_ns = 1000000;
	c->seed = seed;
}

static int
run_loss(const struct opts *o)
{
	static const double losses[] = { 0.01, 0.05, 0.10, 0.20, 0.30 };

	printf("mode,n,loss,seconds_s,probes,probes_failed,fail_per_probe,analytic_fail_per_probe,"
		"fp_dead_events,fp_subjects,fp_subjects_per_member_hour,lhm_max,msgs_per_member_s\n");
	for (unsigned int li = 0; li < sizeof(losses) / sizeof(losses[0]); li++)
		for (unsigned int m = 0; m < 3; m++) {
			struct nl_swimnet_cfg c;
			struct nl_swimnet *net;
			const struct nl_swimnet_res *r;
			double p = losses[li], an;
			int rc;

			base_cfg(&c, o->n, m, p, o->seed + li);
			rc = nl_swimnet_create(&c, &net);
			if (rc != 0)
				return rc;
			nl_swimnet_run(net, o->seconds * S_NS);
			r = nl_swimnet_res(net);
			/* SWIM §3.1: a probe fails iff the direct round trip and all k indirect
			 * round trips (4 messages each) fail; every helper is up (q_f = 1) */
			an = (1 - pow(1 - p, 2)) * pow(1 - pow(1 - p, 4), 3);
			printf("%s,%u,%.2f,%llu,%llu,%llu,%.6f,%.6f,%llu,%llu,%.4f,%u,%.2f\n",
				modes[m].name, o->n, p, (unsigned long long)o->seconds,
				(unsigned long long)r->probes, (unsigned long long)r->probes_failed,
				r->probes ? (double)r->probes_failed / (double)r->probes : 0.0, an,
				(unsigned long long)r->fp_dead_healthy,
				(unsigned long long)r->fp_subjects,
				(double)r->fp_subjects * 3600.0 / (double)o->n / (double)o->seconds,
				r->lhm_max, (double)r->msgs / (double)o->n / (double)o->seconds);
			fflush(stdout);
			nl_swimnet_free(net);
		}
	printf("SUMMARY experiment=loss n=%u seconds=%llu seed=%llu\n", o->n,
		(unsigned long long)o->seconds, (unsigned long long)o->seed);
	return 0;
}

static int
run_pause(const struct opts *o)
{
	printf("mode,n,paused,pause_ms,every_ms,loss,seconds_s,fp_dead_healthy,fp_dead_by_paused,"
		"fp_dead_paused,suspect_healthy,fp_subjects,lhm_max\n");
	for (unsigned int m = 1; m < 3; m++) {
		struct nl_swimnet_cfg c;
		struct nl_swimnet *net;
		const struct nl_swimnet_res *r;
		uint64_t rs = o->seed * 7919 + 17;
		int rc;

		base_cfg(&c, o->n, m, o->loss, o->seed);
		rc = nl_swimnet_create(&c, &net);
		if (rc != 0)
			return rc;
		for (uint32_t id = 0; id < o->paused && id < o->n; id++)
			for (uint64_t t = 5 * S_NS; t + o->every_ms * MS_NS <= o->seconds * S_NS;
			     t += o->every_ms * MS_NS) {
				uint64_t slack = (o->every_ms - o->pause_ms) * MS_NS, at;

				rs = rs * 6364136223846793005ull + 1442695040888963407ull;
				at = t + (slack ? (rs >> 20) % slack : 0);
				rc = nl_swimnet_pause(net, id, at, at + o->pause_ms * MS_NS);
				if (rc != 0)
					return rc;
			}
		nl_swimnet_run(net, o->seconds * S_NS);
		r = nl_swimnet_res(net);
		printf("%s,%u,%u,%llu,%llu,%.2f,%llu,%llu,%llu,%llu,%llu,%llu,%u\n", modes[m].name,
			o->n, o->paused, (unsigned long long)o->pause_ms,
			(unsigned long long)o->every_ms, o->loss, (unsigned long long)o->seconds,
			(unsigned long long)r->fp_dead_healthy, (unsigned long long)r->fp_dead_by_paused,
			(unsigned long long)r->fp_dead_paused, (unsigned long long)r->suspect_healthy,
			(unsigned long long)r->fp_subjects, r->lhm_max);
		fflush(stdout);
		nl_swimnet_free(net);
	}
	printf("SUMMARY experiment=pause n=%u paused=%u pause_ms=%llu every_ms=%llu loss=%.2f "
		"seed=%llu\n", o->n, o->paused, (unsigned long long)o->pause_ms,
		(unsigned long long)o->every_ms, o->loss, (unsigned long long)o->seed);
	return 0;
}

static int
run_partition(const struct opts *o)
{
	printf("mode,n,cut_s,trials,trials_with_false_death,false_death_events\n");
	for (uint64_t cut = 1; cut <= 10; cut++)
		for (unsigned int m = 1; m < 3; m++) {
			unsigned int hit = 0;
			uint64_t ev = 0;

			for (uint32_t t = 0; t < o->trials; t++) {
				struct nl_swimnet_cfg c;
				struct nl_swimnet *net;
				uint64_t at = 20 * S_NS + (o->seed + t * 7777) % 1000 * MS_NS;
				int rc;

				base_cfg(&c, o->n, m, o->loss, o->seed + 100 * cut + t);
				rc = nl_swimnet_create(&c, &net);
				if (rc != 0)
					return rc;
				rc = nl_swimnet_partition(net, (UINT64_C(1) << (o->n / 2)) - 1, at,
					at + cut * S_NS);
				if (rc != 0) {
					nl_swimnet_free(net);
					return rc;
				}
				nl_swimnet_run(net, at + cut * S_NS + 60 * S_NS);
				hit += nl_swimnet_res(net)->fp_dead_healthy > 0;
				ev += nl_swimnet_res(net)->fp_dead_healthy;
				nl_swimnet_free(net);
			}
			printf("%s,%u,%llu,%u,%u,%llu\n", modes[m].name, o->n,
				(unsigned long long)cut, o->trials, hit, (unsigned long long)ev);
			fflush(stdout);
		}
	printf("SUMMARY experiment=partition n=%u trials=%u loss=%.2f seed=%llu\n", o->n,
		o->trials, o->loss, (unsigned long long)o->seed);
	return 0;
}

static int
run_detect(const struct opts *o)
{
	printf("mode,n,trials,first_suspect_s,first_dead_s,all_dead_s,undetected\n");
	for (uint32_t n = 8; n <= o->nmax; n *= 2)
		for (unsigned int m = 1; m < 3; m++) {
			double fs = 0, fd = 0, ad = 0;
			unsigned int ok = 0, miss = 0;

			for (uint32_t t = 0; t < o->trials; t++) {
				struct nl_swimnet_cfg c;
				struct nl_swimnet *net;
				uint64_t crash, s, d, a, until;
				int rc;

				base_cfg(&c, n, m, o->loss, o->seed + 1000 * n + t);
				rc = nl_swimnet_create(&c, &net);
				if (rc != 0)
					return rc;
				crash = 10 * S_NS + (o->seed + t * 7777) % 1000 * MS_NS;
				nl_swimnet_crash(net, n - 1, crash);
				for (until = crash + 5 * S_NS; until <= crash + 300 * S_NS;
				     until += 5 * S_NS) {
					nl_swimnet_run(net, until);
					if (nl_swimnet_detection(net, n - 1, &s, &d, &a) == 0)
						break;
				}
				if (nl_swimnet_detection(net, n - 1, &s, &d, &a) == 0) {
					fs += (double)s / S_NS;
					fd += (double)d / S_NS;
					ad += (double)a / S_NS;
					ok++;
				} else {
					miss++;
				}
				nl_swimnet_free(net);
			}
			printf("%s,%u,%u,%.2f,%.2f,%.2f,%u\n", modes[m].name, n, o->trials,
				ok ? fs / ok : 0, ok ? fd / ok : 0, ok ? ad / ok : 0, miss);
			fflush(stdout);
		}
	printf("SUMMARY experiment=detect nmax=%u trials=%u loss=%.2f seed=%llu\n", o->nmax,
		o->trials, o->loss, (unsigned long long)o->seed);
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o = {
		.n = 32, .nmax = 1024, .trials = 5, .paused = 1, .seconds = 600,
		.pause_ms = 3000, .every_ms = 10000, .loss = 0, .seed = 1,
	};
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: %s loss|pause|partition|detect [--n N] [--nmax N] [--trials T] "
			"[--seconds S] [--paused C] [--pause-ms MS] [--every-ms MS] [--loss P] "
			"[--seed S]\n", argv[0]);
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (strcmp(k, "--n") == 0)
			o.n = (uint32_t)strtoul(v, NULL, 0);
		else if (strcmp(k, "--nmax") == 0)
			o.nmax = (uint32_t)strtoul(v, NULL, 0);
		else if (strcmp(k, "--trials") == 0)
			o.trials = (uint32_t)strtoul(v, NULL, 0);
		else if (strcmp(k, "--seconds") == 0)
			o.seconds = strtoull(v, NULL, 0);
		else if (strcmp(k, "--paused") == 0)
			o.paused = (uint32_t)strtoul(v, NULL, 0);
		else if (strcmp(k, "--pause-ms") == 0)
			o.pause_ms = strtoull(v, NULL, 0);
		else if (strcmp(k, "--every-ms") == 0)
			o.every_ms = strtoull(v, NULL, 0);
		else if (strcmp(k, "--loss") == 0)
			o.loss = strtod(v, NULL);
		else if (strcmp(k, "--seed") == 0)
			o.seed = strtoull(v, NULL, 0);
		else {
			fprintf(stderr, "unknown option %s\n", k);
			return 2;
		}
	}
	if (o.pause_ms > o.every_ms || o.n < 2 || o.nmax > NL_SWIM_MAX_MEMBERS) {
		fprintf(stderr, "bad options\n");
		return 2;
	}
	printf("# nlevel-swim-sim %s n=%u nmax=%u trials=%u seconds=%llu paused=%u pause_ms=%llu "
		"every_ms=%llu loss=%.3f seed=%llu git=%s (memberlist DefaultLANConfig)\n", argv[1],
		o.n, o.nmax, o.trials, (unsigned long long)o.seconds, o.paused,
		(unsigned long long)o.pause_ms, (unsigned long long)o.every_ms, o.loss,
		(unsigned long long)o.seed, NL_GIT_DESCRIBE);
	if (strcmp(argv[1], "loss") == 0)
		rc = run_loss(&o);
	else if (strcmp(argv[1], "pause") == 0)
		rc = run_pause(&o);
	else if (strcmp(argv[1], "detect") == 0)
		rc = run_detect(&o);
	else if (strcmp(argv[1], "partition") == 0)
		rc = (o.n <= 64) ? run_partition(&o) : -EINVAL;
	else {
		fprintf(stderr, "unknown experiment %s\n", argv[1]);
		return 2;
	}
	if (rc != 0) {
		fprintf(stderr, "error %d\n", rc);
		return 1;
	}
	return 0;
}
