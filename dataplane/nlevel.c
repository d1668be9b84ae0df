/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel: the live appliance.
 *
 *   nlevel <EAL args> -- --config FILE [--scheme nlsc|2lsc] [--groups G] [--static-known K]
 *          [--map M-M@LCORE,...] [--port ID --ip A.B.C.D --udp-port P]
 *          [--emulate --curve DIR [--loads LIST] [--horizon VT] [--ns-per-vt NS]]
 *          [--native SECS [--rate TPS]]
 *
 * Three ways to run: serve a port (default: SUBMITs from clients, sub-tasks to nlevel-workers),
 * an emulated curve (--emulate --curve DIR: nlevel-sim's model in scaled real time, machines
 * in-process, DIR/live.csv with curves.csv's columns) and a native capacity run (--native).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <sodium.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <urcu/urcu-qsbr.h>

#include "nl_cfg.h"
#include "nl_dp.h"
#include "nl_machine.h"
#include "nl_match_model.h"
#include "nl_metrics.h"
#include "nl_model_cfg.h"
#include "nl_port.h"
#include "nl_principal.h"
#include "nl_xa.h"
#include "nlevel_opts.h"

/* Baseline of the same run: one SP/SC rte_ring hop of a 16-byte message (enqueue + dequeue,
 * same lcore, burst of one), the cost a manager-to-manager transfer cannot go below. */
static double
ring_hop_ns(void)
{
	struct rte_ring *r = rte_ring_create_elem("nl_bench_hop", 16, 1024, SOCKET_ID_ANY,
						  RING_F_SP_ENQ | RING_F_SC_DEQ);
	uint64_t msg[2] = { 1, 2 }, out[2], t0, n = 2000000;

	if (r == NULL)
		return -1;
	t0 = rte_rdtsc();
	for (uint64_t i = 0; i < n; i++) {
		msg[0] = i;
		if (rte_ring_sp_enqueue_elem(r, msg, 16) != 0 ||
		    rte_ring_sc_dequeue_elem(r, out, 16) != 0 || out[0] != i)
			break;
	}
	double ns = (double)(rte_rdtsc() - t0) / (double)n / ((double)rte_get_tsc_hz() / 1e9);

	rte_ring_free(r);
	return ns;
}

/* SIGINT, SIGTERM: in port mode the first one drains (nl_port_drain_request_mt(), #34), a
 * second one, or any in the other modes, stops at once. */
static void
on_signal(int sig)
{
	if (!nl_port_drain_request_mt(sig))
		nl_dp_stop();
}

static int
make_dp(struct nl_dp **dp, const struct nl_model_cfg *m, const struct nl_machine *mach,
	const struct nl_app_opts *o, enum nl_scheme scheme, unsigned int groups, unsigned int k,
	bool emulate)
{
	struct nl_dp_opts *d = calloc(1, sizeof(*d));
	unsigned int l;
	int rc;

	if (d == NULL)
		return -ENOMEM;
	d->scheme = scheme;
	d->n_groups = groups;
	d->static_known = k;
	d->emulate = emulate;
	d->port_mode = !emulate && o->native_s <= 0;
	d->native_instant = !emulate && o->native_s > 0 && o->native_instant;
	d->native_book = !emulate && o->native_s > 0 && !o->native_instant;
	d->ns_per_vt = emulate ? o->ns_per_vt : 1000.0;
	d->inbox_size = o->inbox;
	d->pool_size = o->pool;
	d->burst = 32;
	d->publish_vt = emulate ? 1.0 : 100.0; /* u.t. emulated; us otherwise */
	d->work_scale_s = o->work_scale_s;
	if (d->native_book && !o->work_scale_set)
		d->work_scale_s = 1e-8; /* machines ~1 us per sub-task: they keep up with the dispatch */
	d->idle_sleep_us = o->idle_us;
	if (o->xa != NULL && o->xa->n_app > 0) { /* wiring: scale-out extends the engine */
		d->ext = &nl_xa_dp_ext;
		d->ext_arg = o->xa;
	}
	if (o->map != NULL) {
		if (nl_app_parse_map(o->map, d) != 0) {
			fprintf(stderr, "nlevel: --map '%s': bad map (ranges of managers @ enabled "
					"worker lcores)\n", o->map);
			free(d);
			return -EINVAL;
		}
	} else {
		RTE_LCORE_FOREACH_WORKER(l)
			if (d->n_mgr_lcore < NL_DP_MAX_LCORES)
				d->mgr_lcore[d->n_mgr_lcore++] = l;
	}
	if (d->n_mgr_lcore == 0) {
		fprintf(stderr, "nlevel: needs at least one worker lcore (EAL -l 0-1)\n");
		free(d);
		return -EINVAL;
	}
	rc = nl_dp_create(dp, m, mach, d);
	if (rc == -ENOMEM || rc == -ENOENT || rc == -ENOSPC)
		fprintf(stderr, "nlevel: cannot create the engine: out of memory for --pool %u "
				"tasks and --inbox %u slots per manager (DPDK memory: give the EAL "
				"more with -m MB, or lower --pool)\n", o->pool, o->inbox);
	else if (rc != 0)
		fprintf(stderr, "nlevel: cannot create the engine: %s\n", strerror(-rc));
	free(d);
	return rc;
}

static int
run_curve(const struct nl_model_cfg *m, const struct nl_machine *mach, const struct nl_app_opts *o)
{
	char path[4096];
	FILE *f;
	double t_all = 0;

	if (mkdir(o->curve_dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "nlevel: cannot create %s: %s\n", o->curve_dir, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/live.csv", o->curve_dir);
	f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "nlevel: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(f, "scheme,groups,static_known,load_pct,resp_mean_vt,resp_p50_vt,resp_p95_vt,"
		   "resp_p99_vt,ci95_vt,hops_mean,sched_wait_mean_vt,global_util,completed,rejected,"
		   "saturated\n");
	for (unsigned int v = 0; v < m->n_variant; v++) {
		const struct nl_variant *var = &m->variant[v];
		struct nl_dp *dp = NULL;
		bool sat = false;

		if (o->scheme >= 0 && (int)var->scheme != o->scheme)
			continue;
		int crc = make_dp(&dp, m, mach, o, var->scheme, var->n_groups, var->static_known, true);

		if (crc != 0) {
			fclose(f);
			return crc == -EINVAL ? 2 : 1; /* -EINVAL: the input, not the run */
		}
		for (unsigned int l = 0; l < m->n_load; l++) {
			struct nl_dp_point pt;
			bool row_sat;
			int rc;

			fprintf(f, "%s,%u,%u,%g,", nl_scheme_name(var->scheme), var->n_groups,
				var->static_known, m->load_pct[l]);
			if (sat) { /* beyond a saturated point: not run */
				fprintf(f, ",,,,,,,,0,0,1\n");
				continue;
			}
			rc = nl_dp_run_point(dp, m->load_pct[l], m->seed + l, &pt);
			if (rc != 0) {
				fprintf(stderr, "nlevel: run failed: %s\n", strerror(-rc));
				nl_dp_free(dp);
				fclose(f);
				return 1;
			}
			t_all += pt.wall_s;
			sat = pt.saturated;
			/* as nlevel-sim's curves.csv: a point without a measured task is saturated
			 * (docs/output.md `saturated`), its response columns empty; the next point
			 * still runs (a longer load point may measure some) */
			row_sat = pt.saturated || pt.measured == 0;
			if (row_sat)
				fprintf(f, ",,,,,");
			else
				fprintf(f, "%.4f,%.4f,%.4f,%.4f,%.4f,", pt.resp_mean_vt, pt.resp_p50_vt,
					pt.resp_p95_vt, pt.resp_p99_vt, 0.0);
			fprintf(f, "%.4f,%.4f,%.4f,%llu,%llu,%d\n", pt.hops_mean,
				pt.sched_wait_mean_vt, pt.global_util,
				(unsigned long long)pt.completed, (unsigned long long)pt.rejected,
				row_sat ? 1 : 0);
			fflush(f);
			fprintf(stderr, "nlevel: %s G=%u k=%u load %g%%: %s%.1f u.t. (%llu tasks, "
					"hops %.2f, %.2f s)\n",
				nl_scheme_name(var->scheme), var->n_groups, var->static_known,
				m->load_pct[l], pt.saturated ? "saturated, " : "", pt.resp_mean_vt,
				(unsigned long long)pt.measured, pt.hops_mean, pt.wall_s);
			if (!nl_dp_accounting_ok(dp)) {
				fprintf(stderr, "nlevel: accounting invariant broken\n");
				nl_dp_free(dp);
				fclose(f);
				return 1;
			}
			if (nl_dp_stopping())
				break;
		}
		nl_dp_free(dp);
	}
	fclose(f);
	printf("SUMMARY mode=emulated csv=%s wall_s=%.1f ns_per_vt=%g horizon_vt=%g\n", path,
	       t_all, o->ns_per_vt, m->horizon_vt);
	return 0;
}

/*
 * nlevel's own options go after "--" (rte_eal_init() consumes what precedes it). Returns the
 * first argument before "--" (or in a command line without "--") that is one of ours, else NULL.
 */
static const char *
own_option_before_dashes(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strncmp(argv[i], "--", 2) != 0)
			continue;
		size_t len = strcspn(argv[i] + 2, "=");

		for (const struct option *o = nl_app_long_opts; o->name != NULL; o++)
			if (strlen(o->name) == len && strncmp(argv[i] + 2, o->name, len) == 0)
				return argv[i];
	}
	return NULL;
}

/* Free huge pages of the default size (/proc/meminfo HugePages_Free), or -1 if unknown. */
static long
free_hugepages(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long v = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static bool
has_arg(int argc, char **argv, const char *a)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], a) == 0)
			return true;
	return false;
}

int
main(int argc, char **argv)
{
	struct nl_app_opts o = {
		.scheme = -1,
		.groups = -1,
		.ns_per_vt = DEF_NS_PER_VT,
		.udp_port = 7477,
		.worker_timeout_s = 2.0,
		.drain_timeout_s = NL_DEF_DRAIN_TIMEOUT_S,
		.journal_sync = 2, /* #34: full */
		.work_scale_s = 1e-5,
		.inbox = 4096,
		.pool = 32767,
	};
	struct nl_cfg *cfg = NULL;
	struct nl_model_cfg m;
	struct nl_machine *mach;
	char err[NL_CFG_ERR_LEN];
	int n, rc;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			nl_app_usage(stdout);
			return 0;
		}
	const char *own = own_option_before_dashes(argc, argv);

	if (own != NULL) {
		fprintf(stderr, "nlevel: %s is an option of nlevel, not of DPDK's EAL: put nlevel's "
				"options after '--', e.g.\n"
				"  nlevel --no-huge --no-pci --no-shconf -l 0-1 -- --config FILE "
				"--emulate --curve DIR\n", own);
		return 2;
	}
	inet_pton(AF_INET, "10.99.0.1", &o.ip);
	bool no_huge = has_arg(argc, argv, "--no-huge");
	int uid = (int)geteuid();

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		int e = rte_errno;

		fprintf(stderr, "nlevel: EAL initialisation failed: %s\n", rte_strerror(e));
		if (!no_huge && free_hugepages() == 0)
			fprintf(stderr, "nlevel: no free huge pages (HugePages_Free is 0 in "
					"/proc/meminfo). Either reserve some as root, e.g.\n"
					"  echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/"
					"nr_hugepages\n"
					"or run without them: add --no-huge (with --no-pci --no-shconf for "
					"vdevs) before '--'\n");
		else if (!no_huge && uid != 0 && e == EACCES)
			fprintf(stderr, "nlevel: huge pages need root (or CAP_SYS_ADMIN); run as root "
					"or add --no-huge before '--'\n");
		return 2;
	}
	argc -= n;
	argv += n;
	argv[0] = (char *)"nlevel";
	if (nl_app_parse_args(argc, argv, &o) != 0) {
		rte_eal_cleanup();
		return 2;
	}
	if (o.key_file != NULL && nl_auth_key_load(o.key_file, &o.key, err, sizeof(err)) != 0) {
		fprintf(stderr, "nlevel: --key: %s\n", err);
		rte_eal_cleanup();
		return 2;
	}
	rc = nl_cfg_load(&cfg, o.config, err, sizeof(err));
	/* static: every early return below leaves nothing to free (134 kB) */
	static struct nl_xa_cfg xa_cfg;

	o.xa = &xa_cfg;
	if (rc != 0 || nl_model_cfg_parse(cfg, &m) != 0 ||
	    nl_xa_cfg_parse(cfg, &m, o.appliance, o.xa) != 0 || nl_cfg_check_unused(cfg) != 0 ||
	    nl_xa_cfg_keys(o.xa, o.appliance_key, o.key_file != NULL, cfg->err,
			   sizeof(cfg->err)) != 0) {
		fprintf(stderr, "nlevel: %s\n", rc != 0 ? err : cfg->err);
		nl_cfg_free(cfg);
		rte_eal_cleanup();
		return 2;
	}
	if (nl_app_check_model_opts(&o, &m) != 0) {
		nl_cfg_free(cfg);
		rte_eal_cleanup();
		return 2;
	}
	if (o.map != NULL) { /* checked here: a bad map is a bad command line (exit 2) */
		struct nl_dp_opts *d = calloc(1, sizeof(*d));

		rc = d == NULL ? -ENOMEM : nl_app_parse_map(o.map, d);
		free(d);
		if (rc != 0) {
			fprintf(stderr, "nlevel: --map '%s': bad map (ranges M-M or M of managers "
					"0..4095 @ enabled worker lcores, comma-separated)\n", o.map);
			nl_cfg_free(cfg);
			rte_eal_cleanup();
			return 2;
		}
	}
	if (o.appliance != NULL) { /* our address is the configuration's */
		const struct nl_xa_app_cfg *me = &o.xa->app[o.xa->self];

		if ((o.ip_set && o.ip != me->ip) || (o.port_set && o.udp_port != me->port)) {
			fprintf(stderr, "nlevel: --ip/--udp-port differ from [appliance %s] in %s\n",
				me->name, o.config);
			nl_cfg_free(cfg);
				rte_eal_cleanup();
			return 2;
		}
		o.ip = me->ip;
		o.udp_port = me->port;
	}
	if (o.loads != NULL) {
		struct nl_cfg *c = NULL;

		/* the list as the key's value (no INI text: its 198-character line limit) */
		rc = nl_cfg_new(&c, "--loads");
		if (rc == 0)
			rc = nl_cfg_add(c, "run", "loads_pct", o.loads, 0);
		if (rc == 0)
			rc = nl_cfg_get_list(c, "run", "loads_pct", m.load_pct, NL_MODEL_MAX_LOADS,
					     &m.n_load, 0.001, 1000, true);
		if (rc < 0) {
			/* the message without the made-up file:line and key */
			const char *msg = c != NULL ? c->err : "out of memory";
			const char *k = strstr(msg, "loads_pct: ");

			fprintf(stderr, "nlevel: --loads %s: %s\n", o.loads,
				k != NULL ? k + strlen("loads_pct: ") : msg);
			nl_cfg_free(c);
			nl_cfg_free(cfg);
			rte_eal_cleanup();
			return 2;
		}
		nl_cfg_free(c);
	} else if (o.emulate) {
		unsigned int k = 0;

		for (unsigned int i = 0; i < m.n_load; i++)
			if (m.load_pct[i] <= DEF_MAX_LOAD)
				m.load_pct[k++] = m.load_pct[i];
		m.n_load = k;
	}
	if (o.emulate) {
		double h = o.horizon_vt > 0 ? o.horizon_vt : DEF_HORIZON_VT;

		m.warmup_vt = m.warmup_vt * h / m.horizon_vt;
		m.horizon_vt = h;
	}
	if (o.principals_file != NULL) { /* #16 */
		o.principals = malloc(sizeof(*o.principals));
		if (o.principals == NULL ||
		    nl_principals_load(o.principals, o.principals_file, &o.key, m.n_mach, err,
				       sizeof(err)) != 0) {
			fprintf(stderr, "nlevel: --principals: %s\n",
				o.principals != NULL ? err : "out of memory");
			free(o.principals);
			nl_cfg_free(cfg);
			rte_eal_cleanup();
			return 2;
		}
	}
	mach = calloc(m.n_mach, sizeof(*mach));
	if (mach == NULL || nl_machines_build(&m, m.seed, mach) != 0) {
		fprintf(stderr, "nlevel: cannot build %u machines\n", m.n_mach);
		free(mach);
		nl_cfg_free(cfg);
		rte_eal_cleanup();
		return 2;
	}
	if (m.n_mclass + m.n_tclass > 0) { /* issue #15: [machine] / [class] ClassAd texts */
		char merr[NL_CFG_ERR_LEN];

		if (nl_match_model_check(&m, mach, merr, sizeof(merr)) != 0) {
			fprintf(stderr, "nlevel: %s\n", merr);
			free(mach);
			nl_cfg_free(cfg);
			rte_eal_cleanup();
			return 2;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	urcu_qsbr_register_thread();
	if (o.emulate && o.curve_dir != NULL) {
		rc = run_curve(&m, mach, &o);
	} else {
		enum nl_scheme sch = o.scheme >= 0 ? (enum nl_scheme)o.scheme : NL_SCHEME_NLSC;
		unsigned int g = o.groups > 0 ? (unsigned int)o.groups : 0;
		struct nl_dp *dp = NULL;

		if (sch == NL_SCHEME_2LSC && g == 0)
			for (unsigned int v = 0; v < m.n_variant && g == 0; v++)
				if (m.variant[v].scheme == NL_SCHEME_2LSC)
					g = m.variant[v].n_groups;
		if (sch == NL_SCHEME_2LSC && g == 0)
			g = 4;
		/* o.static_known is checked (nl_app_check_model_opts()); NLSC only */
		rc = make_dp(&dp, &m, mach, &o, sch, g, (unsigned int)o.static_known, o.emulate);
		if (rc != 0) {
			/* -EINVAL: the input (command line or configuration), told above */
			rc = rc == -EINVAL ? 2 : 1;
		} else if (o.native_s > 0) {
			struct nl_dp_native_result r;

			double hop = ring_hop_ns();

			rc = nl_dp_run_native(dp, o.rate_tps, o.native_s, &r);
			if (rc == 0)
				printf("SUMMARY mode=native scheme=%s n_res=%u groups=%u mgr_lcores=%u "
				       "rate_offered_tps=%.0f rate_tps=%.0f wall_s=%.3f lat_mean_ns=%.0f "
				       "lat_p99_ns=%.0f tasks=%llu accepted=%llu rejected=%llu "
				       "failed=%llu unfinished=%llu ring_hop_ns=%.1f machines=%s "
				       "work_scale_s=%g xhops=%llu\n",
				       nl_scheme_name(sch), m.n_res, sch == NL_SCHEME_2LSC ? g : 0,
				       nl_dp_mgr_lcores(dp), o.rate_tps, r.rate_tps, r.wall_s,
				       r.lat_mean_ns, r.lat_p99_ns, (unsigned long long)r.tasks,
				       (unsigned long long)r.accepted, (unsigned long long)r.rejected,
				       (unsigned long long)r.failed, (unsigned long long)r.unfinished,
				       hop, o.native_instant ? "instant" : "booked",
				       o.native_instant ? 0.0 : (o.work_scale_set ? o.work_scale_s : 1e-8),
				       (unsigned long long)r.xhops);
			else
				fprintf(stderr, "nlevel: %s\n", strerror(-rc));
			rc = rc != 0;
		} else {
			struct nl_port_opts po = {
				.port_id = o.port_id,
				.udp_port = o.udp_port,
				.ip = o.ip,
				.worker_timeout_s = o.worker_timeout_s,
				.auth = o.key_file != NULL,
				.auth_key = o.key,
				.principals = o.principals,
				.run_as = o.run_as,
				.state_dir = o.state_dir, /* #33 */
				.drain_timeout_s = o.drain_timeout_s, /* #34 */
				.journal_sync = o.journal_sync,
			};
			struct nl_port_counts pc = { 0 };
			struct nl_dp_counts c;
			uint64_t t0 = rte_rdtsc();
			struct nl_svc *svc = NULL;

			/* the operator side: --metrics, systemd readiness (docs/operations.md) */
			rc = nl_svc_start(&svc, o.metrics, getenv("NOTIFY_SOCKET") != NULL, err,
					  sizeof(err));
			if (rc != 0) {
				fprintf(stderr, "nlevel: %s\n", err);
				nl_dp_free(dp);
				rc = rc == -EINVAL ? 2 : 1; /* a bad --metrics; else the run failed */
				goto done;
			}
			if (o.metrics != NULL)
				fprintf(stderr, "nlevel: metrics on http://%s/metrics\n", o.metrics);
			nl_dp_telemetry_init(dp);
			if (o.xa->n_app > 0) { /* wiring: scale-out extends port mode */
				po.ext = &nl_xa_port_ext;
				nl_xa_telemetry_init(dp);
			}
			rc = nl_port_serve(dp, &po, &pc);
			sodium_memzero(&po.auth_key, sizeof(po.auth_key));
			nl_svc_stop(svc);
			if (rc != 0)
				fprintf(stderr, "nlevel: %s\n", strerror(-rc));
			nl_dp_counts_get(dp, &c);
			{ /* the port's frames, for the log of a run that lost something */
				uint64_t bad = 0;

				for (unsigned int e = 0; e < NL_PROTO_E_MAX; e++)
					bad += pc.drops[e];
				fprintf(stderr, "nlevel: frames: %llu received (%llu DONEs, %llu "
					"of them stale), %llu malformed; %llu sent, %llu not sent\n",
					(unsigned long long)pc.rx_frames,
					(unsigned long long)pc.rx_msgs[NL_MSG_DONE],
					(unsigned long long)pc.stale_done, (unsigned long long)bad,
					(unsigned long long)pc.tx_frames,
					(unsigned long long)pc.tx_fail);
			}
			printf("SUMMARY mode=port wall_s=%.1f accepted=%llu rejected=%llu completed=%llu "
			       "failed=%llu in_flight=%llu workers_joined=%llu workers_left=%llu\n",
			       (double)(rte_rdtsc() - t0) / (double)rte_get_tsc_hz(),
			       (unsigned long long)c.accepted, (unsigned long long)c.rejected_ingress,
			       (unsigned long long)c.completed, (unsigned long long)c.failed,
			       (unsigned long long)c.in_flight, (unsigned long long)pc.workers_joined,
			       (unsigned long long)pc.workers_left);
			fflush(stdout);
			rc = rc != 0;
		}
		nl_dp_free(dp);
	}
done:
	urcu_qsbr_unregister_thread();
	if (o.principals != NULL)
		sodium_memzero(o.principals, sizeof(*o.principals));
	free(o.principals);
	free(mach);
	nl_cfg_free(cfg);
	rte_eal_cleanup();
	return rc;
}
