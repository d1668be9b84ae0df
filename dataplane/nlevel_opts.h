/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * nlevel's command line: the options, their documented ranges (usage(), docs/dataplane.md
 * "Options") and the checks against the model. Split from nlevel.c, the program's runs.
 */
#ifndef NLEVEL_OPTS_H
#define NLEVEL_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nl_dp.h"
#include "nl_model_cfg.h"
#include "nl_principal.h"
#include "nl_proto.h"
#include "nl_xa.h"

#define DEF_NS_PER_VT 10000.0 /* emulated: 1 u.t. = 10 us */
#define DEF_HORIZON_VT 1e5    /* emulated: 1 s of wall time per point */
#define DEF_MAX_LOAD 60.0

/* Ranges of the numeric options (usage(), docs/dataplane.md "Options"); a value outside, not
 * finite or not an integer where one is wanted is a bad command line (exit 2). */
#define NL_MIN_WORKER_TIMEOUT_S 0.01 /* --worker-timeout [s] */
#define NL_MAX_WORKER_TIMEOUT_S 86400.0
#define NL_DEF_DRAIN_TIMEOUT_S 30.0  /* --drain-timeout [s] (#34); SIGINT: at most 2 s */
#define NL_MAX_DRAIN_TIMEOUT_S 86400.0
#define NL_MIN_HORIZON_VT 1e-9       /* --horizon [u.t.], as nlevel-sim --horizon */
#define NL_MAX_HORIZON_VT 1e18
#define NL_MIN_NS_PER_VT 1e-3        /* --ns-per-vt [ns] */
#define NL_MAX_NS_PER_VT 1e9
#define NL_MIN_NATIVE_S 1e-3         /* --native [s] */
#define NL_MAX_NATIVE_S 1e6
#define NL_MAX_RATE_TPS 1e9          /* --rate [tasks/s], 0 = saturate */
#define NL_MAX_WORK_SCALE_S 1e3      /* --work-scale [wall s per model s] */
#define NL_MAX_IDLE_US 1000000       /* --idle-sleep-us [us] */
#define NL_MIN_INBOX 64              /* --inbox [slots], a power of two */
#define NL_MAX_INBOX 65536
#define NL_MIN_POOL 1024             /* --pool [tasks] */
#define NL_MAX_POOL 262143

struct nl_app_opts {
	const char *config;
	const char *curve_dir;
	const char *loads;
	const char *map;
	int scheme;                /* -1 = every variant of the config */
	int groups;
	int static_known;
	bool emulate;
	double horizon_vt;
	double ns_per_vt;
	double native_s;
	bool native_instant;       /* --native-instant: machines finish at once */
	bool work_scale_set;       /* --work-scale given */
	double rate_tps;
	uint16_t port_id;
	uint16_t udp_port;
	uint32_t ip;
	double worker_timeout_s;
	double drain_timeout_s;    /* --drain-timeout (#34) [s] */
	double work_scale_s;
	unsigned int idle_us;
	unsigned int inbox;
	unsigned int pool;
	const char *key_file;      /* --key: authenticated protocol (version 2) */
	struct nl_auth_key key;
	const char *appliance_key; /* --appliance-key (#36): this appliance's own key */
	const char *principals_file; /* --principals (#16) */
	struct nl_principals *principals;
	const char *run_as;        /* --user (#16) */
	const char *state_dir;     /* --state-dir (#33): the task farm's records */
	int journal_sync;          /* --journal-sync (#34): 2 full (default), 1 normal, 0 off */
	const char *appliance;     /* --appliance: our part of a split tree (nl_xa.h) */
	struct nl_xa_cfg *xa;      /* the configuration's [appliance] sections */
	const char *metrics;       /* --metrics ADDR:PORT (port mode; nl_metrics.h) */
	bool ip_set, port_set;
	const char *num[128];      /* numeric options as given, by getopt code (parse_numbers()) */
};

/** nlevel's long options (getopt_long()), after EAL's `--`. */
extern const struct option nl_app_long_opts[];

/** Print the help text to f. @par Context Main thread. */
void nl_app_usage(FILE *f);

/**
 * Parse nlevel's options (after EAL's): every value checked against its range.
 * @param argc  Arguments left after rte_eal_init().
 * @param argv  Them.
 * @param o     Output (defaults set by the caller before).
 * @return 0, or -EINVAL after a message on stderr (exit status 2). --help is handled before.
 * @par Context Main thread, before the engine starts.
 */
int nl_app_parse_args(int argc, char **argv, struct nl_app_opts *o);

/**
 * Check the options that depend on the model (--groups against M, --static-known against N
 * and NL_STATIC_KNOWN_MAX, the scheme they belong to).
 * @return 0, or -EINVAL after a message on stderr.
 * @par Context Main thread.
 */
int nl_app_check_model_opts(const struct nl_app_opts *o, const struct nl_model_cfg *m);

/**
 * Parse --map "M-M@LCORE,..." into d's manager-to-lcore map.
 * @return 0, or -EINVAL after a message on stderr.
 * @par Context Main thread.
 */
int nl_app_parse_map(const char *s, struct nl_dp_opts *d);

#endif /* NLEVEL_OPTS_H */
