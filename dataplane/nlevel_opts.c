/* SPDX-License-Identifier: BSD-3-Clause */
/* nlevel's command line (nlevel_opts.h). */
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
#include "nl_model_cfg.h"
#include "nl_principal.h"
#include "nl_xa.h"
#include "nlevel_opts.h"


void
nl_app_usage(FILE *f)
{
	fprintf(f,
		"usage: nlevel <EAL args> -- --config FILE [options]\n"
		"  --config FILE        model (e.g. config/paper-96.ini)\n"
		"  --scheme nlsc|2lsc   policy (default: port/native nlsc; emulated: every variant)\n"
		"  --groups G           with --scheme 2lsc: groups, integer 1..M machines (default:\n"
		"                       the config's first)\n"
		"  --static-known K     NLSC resources known statically, integer 0..min(N, 20)\n"
		"                       (default 0). Not with --emulate (it runs the config's curves)\n"
		"  --map M-M@L,...      managers M..M run on lcore L (default: round-robin over the\n"
		"                       worker lcores)\n"
		"  --port ID            DPDK port serving clients and workers, 0..65535 (default 0)\n"
		"  --ip A.B.C.D         our IPv4 address (default 10.99.0.1)\n"
		"  --udp-port P         our UDP port, 1..65535 (default 7477)\n"
		"  --appliance NAME     a tree split over appliances: run the part the\n"
		"                       configuration's [appliance NAME] owns; --ip and\n"
		"                       --udp-port default to its address (docs/scale-out.md)\n"
		"  --appliance-key FILE with --appliance and --key: this appliance's own key\n"
		"                       (nlevel-key --appliance); datagrams between appliances\n"
		"                       are then sealed under each pair's key, from the\n"
		"                       configuration's public_key lines, never the site key\n"
		"  --key FILE           site key (owner-only permissions, like MUNGE's): every\n"
		"                       frame is authenticated (protocol version 2) and frames\n"
		"                       without a valid MAC or replayed are dropped; without\n"
		"                       --key the unauthenticated version 1 is spoken (trusted\n"
		"                       networks only). Make one: head -c 32 /dev/urandom > F;\n"
		"                       chmod 600 F (docs/protocol.md)\n"
		"  --principals FILE    with --key: named submitters and workers with keys of\n"
		"                       their own (derived: nlevel-key), rights (a worker's\n"
		"                       slots), caps and fair-share weights (docs/security.md)\n"
		"  --user NAME          port mode: drop root for NAME once the port is up\n"
		"  --metrics ADDR:PORT  port mode: serve Prometheus metrics on http://ADDR:PORT/\n"
		"                       metrics (default port 9477; off by default;\n"
		"                       docs/operations.md)\n"
		"  --state-dir DIR      port mode: the task farm's records (SQLite, WAL), kept\n"
		"                       across restarts for --status (default /var/lib/nlevel;\n"
		"                       created if missing; start-up fails if not writable)\n"
		"  --journal-sync MODE  port mode, the records as a journal (#34): full (default:\n"
		"                       each pass fsynced, a farm DISPATCH leaves once its record\n"
		"                       is on disk: no run is repeated after a crash of the\n"
		"                       appliance or of the host), normal (the same write-ahead,\n"
		"                       durable across a crash of the appliance, not of the host),\n"
		"                       off (records only: after a crash a run may be repeated)\n"
		"  --worker-timeout S   remove a worker silent this long, 0.01..86400 (default 2 s)\n"
		"  --drain-timeout S    port mode, on SIGTERM: refuse new tasks (REJECT shutdown),\n"
		"                       answer queued ones REJECT shutdown, wait at most S s for\n"
		"                       the running ones, 0..86400 (default 30; SIGINT: at most\n"
		"                       2 s); then answer the rest REJECT shutdown and exit 0. A\n"
		"                       second signal stops at once (docs/taskfarm.md)\n"
		"  --work-scale S       wall seconds per model second, 0..1000: port mode, the workers'\n"
		"                       (default 1e-5); native, the booked machines' (default\n"
		"                       1e-8: a paper-96 sub-task lasts about 1 us)\n"
		"  --idle-sleep-us US   port mode: idle lcores nap US microseconds, 0..1e6 (default 0 =\n"
		"                       spin; use on machines shared with the workers)\n"
		"  --emulate            emulated timing: nlevel-sim's model in scaled real time\n"
		"  --curve DIR          emulated: run the load points, write DIR/live.csv\n"
		"  --loads LIST         load points [%%], 0.001..1000 (default: the config's, up to 60)\n"
		"  --horizon VT         arrivals per point [u.t.], 1e-9..1e18 (default 1e5; warm-up\n"
		"                       scaled)\n"
		"  --ns-per-vt NS       wall ns per u.t., 0.001..1e9 (default 10000)\n"
		"  --native SECS        native capacity run, 0.001..1e6 s: in-process machines, each\n"
		"                       sub-task booked for its modelled time x --work-scale; the\n"
		"                       task completes when its last sub-task ends\n"
		"  --native-instant     native: machines finish at once (no booking; the pick\n"
		"                       reads a load table that never changes)\n"
		"  --rate TPS           native: offered rate [tasks/s], 0..1e9 (default 0 = saturate)\n"
		"  --inbox N            inbox ring size, a power of two 64..65536 (default 4096)\n"
		"  --pool N             tasks in the mempool, 1024..262143 (default 32767; DPDK memory\n"
		"                       bounds it too: --no-huge gives 64 MB unless -m MB)\n"
		"  --help\n"
		"DPDK's EAL options come before '--', nlevel's after it; without huge pages add\n"
		"--no-huge (with --no-pci --no-shconf for vdevs). Quickstart: tools/nl-farm-demo.sh.\n"
		"SUMMARY keys: docs/output.md.\n"
		"Numbers are checked as configuration values are: finite, in range, integers where\n"
		"one is wanted (1e3 is 1000; nan, inf, 2x are refused).\n"
		"Exit status: 0 done; 1 the run failed; 2 bad input: command line, configuration\n"
		"(FILE:LINE), or an EAL that cannot start.\n");
}

const struct option nl_app_long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "scheme", required_argument, NULL, 's' },
	{ "groups", required_argument, NULL, 'g' },
	{ "static-known", required_argument, NULL, 'k' },
	{ "map", required_argument, NULL, 'm' },
	{ "port", required_argument, NULL, 'p' },
	{ "ip", required_argument, NULL, 'i' },
	{ "udp-port", required_argument, NULL, 'u' },
	{ "worker-timeout", required_argument, NULL, 'w' },
	{ "drain-timeout", required_argument, NULL, 'D' },
	{ "emulate", no_argument, NULL, 'e' },
	{ "curve", required_argument, NULL, 'C' },
	{ "loads", required_argument, NULL, 'l' },
	{ "horizon", required_argument, NULL, 'H' },
	{ "ns-per-vt", required_argument, NULL, 'n' },
	{ "native", required_argument, NULL, 'N' },
	{ "native-instant", no_argument, NULL, 'J' },
	{ "rate", required_argument, NULL, 'r' },
	{ "inbox", required_argument, NULL, 'I' },
	{ "pool", required_argument, NULL, 'P' },
	{ "work-scale", required_argument, NULL, 'W' },
	{ "idle-sleep-us", required_argument, NULL, 'Z' },
	{ "key", required_argument, NULL, 'K' },
	{ "principals", required_argument, NULL, 'X' },
	{ "user", required_argument, NULL, 'U' },
	{ "appliance", required_argument, NULL, 'A' },
	{ "appliance-key", required_argument, NULL, 'Y' },
	{ "metrics", required_argument, NULL, 'M' },
	{ "state-dir", required_argument, NULL, 'S' },
	{ "journal-sync", required_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A numeric option checked as a configuration key is (nl_cfg_option_number()). */
static int
cli_number(const char *opt, const char *v, double lo, double hi, uint64_t *u, double *d)
{
	return nl_cfg_option_number("nlevel", opt, v, lo, hi, u, d);
}

/* The numeric options with their documented ranges (nl_app_usage()); those checked against the
 * model (--groups, --static-known) come later, in nl_app_check_model_opts(). */
static int
parse_numbers(struct nl_app_opts *o)
{
	uint64_t u;
	const char **n = o->num;

	if (cli_number("--groups", n['g'], 1, NL_MODEL_MAX_MACH, &u, NULL) != 0)
		return -EINVAL;
	if (n['g'] != NULL)
		o->groups = (int)u;
	if (cli_number("--static-known", n['k'], 0, NL_STATIC_KNOWN_MAX, &u, NULL) != 0)
		return -EINVAL;
	if (n['k'] != NULL)
		o->static_known = (int)u;
	if (cli_number("--port", n['p'], 0, 65535, &u, NULL) != 0)
		return -EINVAL;
	if (n['p'] != NULL)
		o->port_id = (uint16_t)u;
	if (cli_number("--udp-port", n['u'], 1, 65535, &u, NULL) != 0)
		return -EINVAL;
	if (n['u'] != NULL) {
		o->udp_port = (uint16_t)u;
		o->port_set = true;
	}
	if (cli_number("--worker-timeout", n['w'], NL_MIN_WORKER_TIMEOUT_S,
		       NL_MAX_WORKER_TIMEOUT_S, NULL, &o->worker_timeout_s) != 0 ||
	    cli_number("--drain-timeout", n['D'], 0, NL_MAX_DRAIN_TIMEOUT_S, NULL,
		       &o->drain_timeout_s) != 0 ||
	    cli_number("--horizon", n['H'], NL_MIN_HORIZON_VT, NL_MAX_HORIZON_VT, NULL,
		       &o->horizon_vt) != 0 ||
	    cli_number("--ns-per-vt", n['n'], NL_MIN_NS_PER_VT, NL_MAX_NS_PER_VT, NULL,
		       &o->ns_per_vt) != 0 ||
	    cli_number("--native", n['N'], NL_MIN_NATIVE_S, NL_MAX_NATIVE_S, NULL,
		       &o->native_s) != 0 ||
	    cli_number("--rate", n['r'], 0, NL_MAX_RATE_TPS, NULL, &o->rate_tps) != 0 ||
	    cli_number("--work-scale", n['W'], 0, NL_MAX_WORK_SCALE_S, NULL, &o->work_scale_s) != 0)
		return -EINVAL;
	o->work_scale_set = n['W'] != NULL;
	if (cli_number("--idle-sleep-us", n['Z'], 0, NL_MAX_IDLE_US, &u, NULL) != 0)
		return -EINVAL;
	if (n['Z'] != NULL)
		o->idle_us = (unsigned int)u;
	if (cli_number("--inbox", n['I'], NL_MIN_INBOX, NL_MAX_INBOX, &u, NULL) != 0)
		return -EINVAL;
	if (n['I'] != NULL) {
		if ((u & (u - 1)) != 0) {
			fprintf(stderr, "nlevel: --inbox: %s is not a power of two\n", n['I']);
			return -EINVAL;
		}
		o->inbox = (unsigned int)u;
	}
	if (cli_number("--pool", n['P'], NL_MIN_POOL, NL_MAX_POOL, &u, NULL) != 0)
		return -EINVAL;
	if (n['P'] != NULL)
		o->pool = (unsigned int)u;
	return 0;
}

int
nl_app_parse_args(int argc, char **argv, struct nl_app_opts *o)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", nl_app_long_opts, NULL)) != -1) {
		if (optarg != NULL && c > 0 && c < 128 && strchr("gkpuwHnNrIPWZD", c) != NULL) {
			o->num[c] = optarg; /* checked by parse_numbers() */
			continue;
		}
		switch (c) {
		case 'c': o->config = optarg; break;
		case 's':
			if (strcmp(optarg, "nlsc") == 0)
				o->scheme = NL_SCHEME_NLSC;
			else if (strcmp(optarg, "2lsc") == 0)
				o->scheme = NL_SCHEME_2LSC;
			else {
				fprintf(stderr, "nlevel: --scheme: '%s' is not nlsc or 2lsc\n", optarg);
				return -EINVAL;
			}
			break;
		case 'm': o->map = optarg; break;
		case 'i':
			if (inet_pton(AF_INET, optarg, &o->ip) != 1) {
				fprintf(stderr, "nlevel: --ip: '%s' is not an IPv4 address\n", optarg);
				return -EINVAL;
			}
			o->ip_set = true;
			break;
		case 'e': o->emulate = true; break;
		case 'C': o->curve_dir = optarg; break;
		case 'l': o->loads = optarg; break;
		case 'J': o->native_instant = true; break;
		case 'K': o->key_file = optarg; break;
		case 'X': o->principals_file = optarg; break;
		case 'U': o->run_as = optarg; break;
		case 'A': o->appliance = optarg; break;
		case 'Y': o->appliance_key = optarg; break;
		case 'M': o->metrics = optarg; break;
		case 'S': o->state_dir = optarg; break;
		case 'j':
			if (strcmp(optarg, "full") == 0)
				o->journal_sync = 2;
			else if (strcmp(optarg, "normal") == 0)
				o->journal_sync = 1;
			else if (strcmp(optarg, "off") == 0)
				o->journal_sync = 0;
			else {
				fprintf(stderr, "nlevel: --journal-sync: want full, normal or off, "
						"got '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 'h': nl_app_usage(stdout); exit(0);
		default: nl_app_usage(stderr); return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "nlevel: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (parse_numbers(o) != 0)
		return -EINVAL;
	if (o->config == NULL) {
		fprintf(stderr, "nlevel: --config FILE is required\n");
		return -EINVAL;
	}
	if (o->emulate && o->curve_dir == NULL) {
		fprintf(stderr, "nlevel: --emulate needs --curve DIR (emulated load points)\n");
		return -EINVAL;
	}
	if (o->curve_dir != NULL && !o->emulate) {
		fprintf(stderr, "nlevel: --curve needs --emulate\n");
		return -EINVAL;
	}
	if (o->native_s > 0 && o->emulate) {
		fprintf(stderr, "nlevel: --native and --emulate exclude each other\n");
		return -EINVAL;
	}
	if (o->emulate && (o->num['g'] != NULL || o->num['k'] != NULL)) {
		fprintf(stderr, "nlevel: --groups/--static-known: not with --emulate, which runs "
				"the configuration's curves ([2lsc] groups, [nlsc] static_known; "
				"--scheme picks the scheme)\n");
		return -EINVAL;
	}
	if (!o->emulate && o->num['g'] != NULL && o->scheme != NL_SCHEME_2LSC) {
		fprintf(stderr, "nlevel: --groups: 2LSC only (add --scheme 2lsc)\n");
		return -EINVAL;
	}
	if (o->num['k'] != NULL && o->scheme == NL_SCHEME_2LSC) {
		fprintf(stderr, "nlevel: --static-known: NLSC only (not with --scheme 2lsc)\n");
		return -EINVAL;
	}
	if (!o->emulate && (o->loads != NULL || o->num['H'] != NULL || o->num['n'] != NULL)) {
		fprintf(stderr, "nlevel: --loads/--horizon/--ns-per-vt: emulated runs only (with "
				"--emulate --curve DIR)\n");
		return -EINVAL;
	}
	if (o->native_s <= 0 && (o->num['r'] != NULL || o->native_instant)) {
		fprintf(stderr, "nlevel: --rate/--native-instant: native runs only (with --native "
				"SECS)\n");
		return -EINVAL;
	}
	if (o->appliance != NULL && (o->native_s > 0 || o->emulate)) {
		fprintf(stderr, "nlevel: --appliance: a split tree runs in port mode only (not with "
				"--native or --emulate)\n");
		return -EINVAL;
	}
	if (o->key_file != NULL && (o->native_s > 0 || o->emulate)) {
		fprintf(stderr, "nlevel: --key authenticates frames: port mode only (not with "
				"--native or --emulate, which take no frames)\n");
		return -EINVAL;
	}
	if (o->principals_file != NULL && o->key_file == NULL) {
		fprintf(stderr, "nlevel: --principals needs --key (the principals' keys are derived "
				"from the site key)\n");
		return -EINVAL;
	}
	if ((o->run_as != NULL || o->metrics != NULL) && (o->native_s > 0 || o->emulate)) {
		fprintf(stderr, "nlevel: --user/--metrics: port mode only\n");
		return -EINVAL;
	}
	return 0;
}

/* Options that depend on the model: --groups (2LSC G, 1..M) and --static-known (NLSC k,
 * 0..min(N, NL_STATIC_KNOWN_MAX)), as the configuration's [2lsc] groups and [nlsc]
 * static_known. -EINVAL with a message. */
int
nl_app_check_model_opts(const struct nl_app_opts *o, const struct nl_model_cfg *m)
{
	unsigned int kmax = m->n_res < NL_STATIC_KNOWN_MAX ? m->n_res : NL_STATIC_KNOWN_MAX;

	if (o->num['g'] != NULL && (unsigned int)o->groups > m->n_mach) {
		fprintf(stderr, "nlevel: --groups: %s is out of range [1, %u] (the machines M of "
				"%s)\n", o->num['g'], m->n_mach, o->config);
		return -EINVAL;
	}
	if (o->num['k'] != NULL && (unsigned int)o->static_known > kmax) {
		fprintf(stderr, "nlevel: --static-known: %s is out of range [0, %u] (the resources "
				"N = %u of %s, at most %u)\n", o->num['k'], kmax, m->n_res, o->config,
			NL_STATIC_KNOWN_MAX);
		return -EINVAL;
	}
	return 0;
}

/* "--map 0-14@1,15-30@2": manager ranges to lcores. */
int
nl_app_parse_map(const char *s, struct nl_dp_opts *d)
{
	char buf[1024], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	d->n_mgr_lcore = 0;
	d->mgr_map_n = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		unsigned int a, b, l, idx;
		int n = 0;

		if (sscanf(tok, "%u-%u@%u%n", &a, &b, &l, &n) != 3 || tok[n] != '\0') {
			if (sscanf(tok, "%u@%u%n", &a, &l, &n) != 2 || tok[n] != '\0')
				return -EINVAL;
			b = a;
		}
		if (a > b || b >= 4096 || !rte_lcore_is_enabled(l) || l == rte_get_main_lcore())
			return -EINVAL;
		for (idx = 0; idx < d->n_mgr_lcore && d->mgr_lcore[idx] != l; idx++)
			;
		if (idx == d->n_mgr_lcore) {
			if (d->n_mgr_lcore == NL_DP_MAX_LCORES)
				return -EINVAL;
			d->mgr_lcore[d->n_mgr_lcore++] = l;
		}
		for (unsigned int m = a; m <= b; m++) {
			d->mgr_map[m] = idx;
			if ((int)m + 1 > d->mgr_map_n)
				d->mgr_map_n = (int)m + 1;
		}
	}
	return d->n_mgr_lcore > 0 ? 0 : -EINVAL;
}
