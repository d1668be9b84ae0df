/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The seed 002 dispatch model as configuration: machines, tasks, scheduler costs and the
 * experiment grid. Parsed from an INI file into a const struct; every key, its unit and
 * its bounds are documented in docs/config.md and used by both engines (nlevel-sim and the
 * live appliance's emulated mode).
 *
 * Time is in the paper's unit time (u.t., suffix _vt); one u.t. is one model second, so
 * speeds in instructions per second and bits per second apply directly.
 */
#ifndef NL_MODEL_CFG_H
#define NL_MODEL_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_cfg.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NL_MODEL_MAX_SPEEDS 64u
#define NL_MODEL_MAX_LOADS 64u
#define NL_MODEL_MAX_VARIANTS 16u
#define NL_MODEL_MAX_MACH 65536u
#define NL_MODEL_MAX_MCLASS 16u  /**< [machine NAME] sections (issue #15) */
#define NL_MODEL_MAX_MATTR 12u   /**< ClassAd attributes per [machine NAME] */
#define NL_MODEL_MATTR_TEXT 128u /**< longest attribute value + 1 */
#define NL_MODEL_MAX_MRANGE 16u  /**< id ranges per [machine NAME] */
#define NL_MODEL_MAX_TCLASS 8u   /**< [class NAME] sections (task classes) */
#define NL_MODEL_MATCH_TEXT 512u /**< longest Requirements / Rank / attribute value + 1 */

enum nl_vectors_mode {
	NL_VECTORS_BALANCED = 0, /**< every vector held by M / 2^N machines (the expectation) */
	NL_VECTORS_RANDOM = 1,   /**< each resource held with probability res_prob, independently */
};

enum nl_work_dist {
	NL_WORK_FIXED = 0, /**< every task has I = instr, D = data_bits */
	NL_WORK_EXP = 1,   /**< I and D exponential with those means */
};

/** Most statically known resources NLSC takes: its entry table holds 2^k buckets (§4.4). */
#define NL_STATIC_KNOWN_MAX 20u

enum nl_scheme {
	NL_SCHEME_NLSC = 0, /**< N-level scheduling, seed 002 §3.3 */
	NL_SCHEME_2LSC = 1, /**< 2-level scheduling, seed 002 §3.1 */
};

/** Scheduler costs and knobs shared by the policies (managers/). */
struct nl_sched_params {
	unsigned int n_res;          /**< N */
	bool subset;                 /**< subset matching mode (off = exact, the paper) */
	double mgr_service_vt;       /**< NLSC routing decision (steps 2-4) [u.t.] */
	double pick_service_vt;      /**< NLSC leaf / 2LSC group: pick L machines [u.t.] */
	double global_base_vt;       /**< 2LSC global decision, fixed part [u.t.] */
	double global_per_group_vt;  /**< 2LSC global decision, per group inspected [u.t.] */
	double measure_period_vt;    /**< 2LSC global load measurement period [u.t.] */
	double grp_threshold;        /**< 2LSC group load above which it forwards [sub-tasks/machine] */
	unsigned int n_groups;       /**< 2LSC G (set per variant) */
	unsigned int static_known;   /**< resources 1..k known before run time (§4.4), at most
				      *   NL_STATIC_KNOWN_MAX */
	double match_service_vt;     /**< extra service of a pick with Requirements/Rank [u.t.] */
};

/** One ClassAd attribute of a [machine NAME] section: `Name = expression`. */
struct nl_model_mattr {
	char name[32];
	char value[NL_MODEL_MATTR_TEXT];
	unsigned int line;
};

/**
 * A machine class (`[machine NAME]`): the ClassAd attributes of the machines it selects, by
 * id ranges (`machines = 0-47, 90`) or by CPU speed class (`speed_ips = 140e6`).
 */
struct nl_model_mclass {
	char name[32];
	uint32_t range[NL_MODEL_MAX_MRANGE][2]; /**< inclusive machine id ranges */
	unsigned int n_range;
	double speed_ips;            /**< > 0: every machine of this speed (nominal W_i) */
	struct nl_model_mattr attr[NL_MODEL_MAX_MATTR];
	unsigned int n_attr;
	unsigned int line;           /**< line of its first key */
};

/** A task class (`[class NAME]`): a share of the tasks with one Requirements and Rank. */
struct nl_model_tclass {
	char name[32];
	double share;                /**< fraction of all tasks, (0, 1]; shares sum <= 1 */
	char req[NL_MODEL_MATCH_TEXT];  /**< Requirements text ("" = true) */
	char rank[NL_MODEL_MATCH_TEXT]; /**< Rank text ("" = none) */
	unsigned int line_req, line_rank, line;
};

/** One curve of the experiment: a scheme, its G or static k. */
struct nl_variant {
	enum nl_scheme scheme;
	unsigned int n_groups;     /**< 2LSC: G; NLSC: 0 */
	unsigned int static_known; /**< NLSC: k resources known statically; 0 = none */
};

/** Whole model + experiment. */
struct nl_model_cfg {
	/* [system] */
	unsigned int n_mach;         /**< M */
	unsigned int n_res;          /**< N, 1..64 */
	enum nl_vectors_mode vectors;
	double res_prob;             /**< P(machine holds a resource), random mode */
	double star_prob;            /**< P(a resource entry is '*' = undefined), random mode */
	double speed_ips[NL_MODEL_MAX_SPEEDS]; /**< W classes [instr/s], machines split evenly */
	unsigned int n_speed;
	double link_bps;             /**< T_i [bit/s], all machines */
	double bg_load_max;          /**< background load b ~ U[0, max]: W_i(t) = W_i (1 - b) */
	double bg_period_vt;         /**< b is redrawn per machine every period [u.t.] */
	bool subset;
	/* [task] */
	unsigned int n_split;        /**< L */
	double instr;                /**< mean I [instr] */
	double data_bits;            /**< mean D [bit] */
	enum nl_work_dist work_dist;
	double need_prob;            /**< P(task needs a resource) */
	/* [network] */
	double transfer_delay_vt;    /**< scheduler -> scheduler transfer [u.t.] */
	double dispatch_delay_vt;    /**< scheduler -> machine transfer [u.t.] */
	/* [split]: the tree split over appliances (docs/scale-out.md "Simulating a split") */
	unsigned int n_cut;          /**< subtree roots on appliances of their own (0 = one) */
	char cut[16][32];            /**< their manager names (NLSC M(K,bits), 2LSC groupG) */
	double cut_delay_vt;         /**< extra transfer on an edge between appliances [u.t.] */
	double cut_datagram_vt;      /**< cost of the datagram carrying it [u.t.] */
	double summary_period_vt;    /**< gossip period: a manager reads the load of another
				      *   part as last summarised, this old at most [u.t.];
				      *   0 = exact (not modelled) */
	/* [nlsc], [2lsc] */
	struct nl_sched_params sp;   /**< n_groups / static_known filled per variant */
	/* experiment grid */
	struct nl_variant variant[NL_MODEL_MAX_VARIANTS];
	unsigned int n_variant;
	double load_pct[NL_MODEL_MAX_LOADS];
	unsigned int n_load;
	/* [run] */
	double horizon_vt;           /**< simulated time per run [u.t.] */
	double warmup_vt;            /**< tasks arriving before this are not measured [u.t.] */
	unsigned int n_seeds;        /**< independent replications per point */
	uint64_t seed;               /**< base seed */
	uint64_t max_in_system;      /**< tasks in system above which a run is saturated */
	unsigned int threads;        /**< worker threads (0 = one per online CPU) */
	/* [machine NAME], [class NAME]: machine ClassAd records and task classes (issue #15;
	 * compiled and evaluated by managers/match/nl_match_model.h) */
	struct nl_model_mclass mclass[NL_MODEL_MAX_MCLASS];
	unsigned int n_mclass;
	struct nl_model_tclass tclass[NL_MODEL_MAX_TCLASS];
	unsigned int n_tclass;
	char path[256];              /**< the configuration file, for FILE:LINE errors */
	bool pick_scan;              /**< simulator: policies pick by scanning, never by a pick
				      *   index (differential tests; not a configuration key) */
};

/**
 * Parse the model sections ([system], [task], [network], [nlsc], [2lsc], [static], [run]).
 *
 * @param cfg  Loaded store; keys read are marked used.
 * @param out  Output, fully initialised on success.
 * @return 0; -EINVAL with "FILE:LINE: ..." in cfg->err.
 * @par Context  Control path.
 * @par Source   seed 002 §4.2 for the defaults of the shipped config/paper-96.ini.
 */
int nl_model_cfg_parse(struct nl_cfg *cfg, struct nl_model_cfg *out);

/**
 * Parse the `[machine NAME]` and `[class NAME]` sections (docs/config.md "Machine records and
 * task classes") into m->mclass / m->tclass, and `[scheduler] match_service_vt`. Shapes only
 * (selectors, names, shares, lengths); the ClassAd texts are compiled by
 * nl_match_model_build(), which reports their errors with FILE:LINE too.
 *
 * @param cfg  Loaded store; keys read are marked used.
 * @param m    Model being parsed (n_mach, speeds set).
 * @return 0; -EINVAL with "FILE:LINE: ..." in cfg->err.
 * @par Context  Control path (called by nl_model_cfg_parse()).
 * @par Source   HTCondor manual, "Matchmaking with ClassAds" (machine ads, Requirements, Rank).
 */
int nl_model_match_cfg_parse(struct nl_cfg *cfg, struct nl_model_cfg *m);

/**
 * Offered task arrival rate for a system load.
 *
 * Load is offered work over capacity: rho = lambda * L * E[s] / M, with E[s] the mean
 * sub-task time over the machines (I/L at W_i plus D/L at T_i, background load excluded).
 *
 * @param m         Model.
 * @param load_pct  rho in percent.
 * @return lambda [tasks/u.t.].
 * @par Context  Pure.
 */
double nl_model_arrival_rate(const struct nl_model_cfg *m, double load_pct);

/**
 * Whether `name` is the name of a manager of one of the curves m runs, as the policies'
 * mgr_name() write them: NLSC M(0,root) or M(K,bits) (K = 1..N, K bits 0/1, no blanks), 2LSC
 * groupG (G below that curve's groups, no leading zero) or global. Used for [split] cut and
 * [appliance NAME] owns.
 * @param m     Model (its variants parsed).
 * @param name  Manager name.
 * @par Context  Pure.
 */
bool nl_model_mgr_name_ok(const struct nl_model_cfg *m, const char *name);

/** Name of a variant for CSV / logs ("nlsc", "2lsc"). @par Context Pure. */
const char *nl_scheme_name(enum nl_scheme s);

#ifdef __cplusplus
}
#endif
#endif /* NL_MODEL_CFG_H */
