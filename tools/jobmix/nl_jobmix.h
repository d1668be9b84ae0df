/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Job-mix models learned from a real job log and sampled to make synthetic mixes (seed 001 §4).
 *
 * Two models are learned from the same jobs (nodes, requested walltime, run time, submit time):
 *  - the statistics-based model (§4.1.1): each parameter (nodes, requested walltime, run time
 *    as a fraction of the walltime) is split into G groups of equal job count by value; each
 *    group is a normal distribution (weight, mean, standard deviation); parameters are drawn
 *    independently;
 *  - the probability-distribution map (§4.1.2): the sparse joint histogram of
 *    (nodes in units of U, requested walltime in units of T up to a cap, run time in 1 % of the
 *    requested walltime). Sampling picks a cell with probability count / jobs, so a cell that
 *    is not in the map is never generated (§4.2).
 * Both share the submit-time profile (§3.6, Fig. 10): job counts per (weekday, hour of day) of
 * local time, and the overall rate [jobs/s].
 *
 * Rounding to cells (all "ceiling", so a cell k holds (k-1)*unit < x <= k*unit):
 *   node cell  n = ceil(nodes / U), >= 1
 *   wall cell  w = ceil(walltime_s / T), >= 1, clamped to the cap W
 *   ratio cell r = ceil(100 * run_s / walltime_s), clamped to 1..100 (run 0 -> 1)
 * The ratio uses the job's own walltime (before clamping to the cap). A map-generated job of cell
 * (n, w, r) has nodes = min(n*U, max_nodes) (the cell's upper bound clamped to the machine),
 * walltime = w*T and an integer run time drawn uniformly among the seconds whose ratio cell is r;
 * with T >= 100 s such a second always exists, so every generated job rounds back to its cell
 * (tests/jobmix).
 *
 * The model file is text (docs/jobmix.md "Model file"); nl_jobmix_model_load() names the line
 * of any error.
 */
#ifndef NL_JOBMIX_H
#define NL_JOBMIX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NL_JOBMIX_SLOTS 168u        /**< weekday x hour-of-day slots (0 = Monday 00:00) */
#define NL_JOBMIX_WEEK_S 604800     /**< seconds per week */
#define NL_JOBMIX_MAX_GROUPS 16u    /**< normal-model groups per parameter */
#define NL_JOBMIX_RATIO_CELLS 100u  /**< run-time cells (1 % of the walltime each) */
#define NL_JOBMIX_MIN_TIME_UNIT_S 100u /**< smallest walltime unit (see @file) [s] */
#define NL_JOBMIX_ERR_LEN 512u      /**< recommended size of error buffers [bytes] */
/** Largest UnixStartTime of a log or model: 9999-12-31 23:59:59 UTC [s]; the smallest is 0. */
#define NL_JOBMIX_START_MAX_S INT64_C(253402300799)
/** Largest job learned [nodes]; a map cell must hold a node count <= this (2^40). */
#define NL_JOBMIX_MAX_NODES (INT64_C(1) << 40)

/** Parameters of the normal model (index into nl_jobmix_model::grp). */
enum nl_jobmix_param {
	NL_JOBMIX_P_NODES = 0, /**< nodes */
	NL_JOBMIX_P_WALL,      /**< requested walltime [s] */
	NL_JOBMIX_P_RATIO,     /**< run time / requested walltime, in [0, 1] */
	NL_JOBMIX_P__COUNT
};

/** Generation method. */
enum nl_jobmix_method {
	NL_JOBMIX_MAP = 0, /**< probability-distribution map (§4.1.2) */
	NL_JOBMIX_NORMAL,  /**< statistics-based normal groups (§4.1.1) */
};

/** One job as the models see it. */
struct nl_jobmix_job {
	int64_t submit_s; /**< submit time [s] since the log start */
	int64_t nodes;    /**< nodes (processors / procs_per_node, rounded up), >= 1 */
	int64_t wall_s;   /**< requested walltime [s], >= 1 */
	int64_t run_s;    /**< run time [s], 0 <= run_s (may exceed wall_s in a real log) */
};

/** Map resolution and learning options. */
struct nl_jobmix_units {
	uint32_t node_unit;      /**< U [nodes] >= 1 */
	uint32_t time_unit_s;    /**< T [s] >= NL_JOBMIX_MIN_TIME_UNIT_S */
	uint32_t wall_cells;     /**< W, cap of the walltime cell (queue limit / T); 0 = from data */
	uint32_t groups;         /**< G, normal groups per parameter, 1..NL_JOBMIX_MAX_GROUPS */
};

/** One normal group. */
struct nl_jobmix_group {
	double weight; /**< share of the jobs, sum over a parameter = 1 */
	double mean;
	double sd;     /**< standard deviation, >= 0 */
	double lo, hi; /**< smallest and largest value of the group's jobs */
};

/** One non-empty map cell. */
struct nl_jobmix_cell {
	uint32_t node_c;  /**< node cell, 1.. */
	uint32_t wall_c;  /**< walltime cell, 1..W */
	uint32_t ratio_c; /**< run-time cell, 1..100 */
	uint64_t count;   /**< jobs in the cell */
};

/** A learned model. */
struct nl_jobmix_model {
	struct nl_jobmix_units u;
	uint64_t n_jobs;              /**< jobs learned from */
	uint64_t n_clamped;           /**< of which walltime above the cap W */
	int64_t max_nodes;            /**< machine size [nodes] (largest job when unknown) */
	int64_t start_unix_s;         /**< UnixStartTime of the source log */
	char zone[64];                /**< TimeZoneString of the source log ("UTC" if unknown) */
	char source[256];             /**< file name of the source log */
	double rate_per_s;            /**< overall submit rate [jobs/s] */
	uint64_t slot[NL_JOBMIX_SLOTS]; /**< submits per weekday*24+hour of local time */
	struct nl_jobmix_group grp[NL_JOBMIX_P__COUNT][NL_JOBMIX_MAX_GROUPS];
	unsigned int n_grp[NL_JOBMIX_P__COUNT];
	double lo[NL_JOBMIX_P__COUNT], hi[NL_JOBMIX_P__COUNT]; /**< range of each parameter */
	struct nl_jobmix_cell *cell;  /**< [n_cell] sorted by (node_c, wall_c, ratio_c) */
	size_t n_cell;
	uint64_t *cum;                /**< [n_cell] cumulative counts (sampling) */
};

/**
 * Fill the default units: U = 1, T = 300 s, W from data, G = 4 (suited to a ~100-node machine
 * such as the KTH SP2; K: U = 12, T = 600 s, W = 144).
 * @param u  Output units.
 * @par Context  Pure.
 * @par Source   seed 001 Table 2 (K's units); docs/results.md (Seed 001) (the SP2's).
 */
void nl_jobmix_units_default(struct nl_jobmix_units *u);

/**
 * Node cell of a job.
 * @param nodes  Nodes of the job (< 1 counts as 1).
 * @param unit   U [nodes], >= 1.
 * @return ceil(nodes / unit), at least 1.
 * @par Context  Pure.
 * @par Source   seed 001 Table 2 (12-node units on K).
 */
uint32_t nl_jobmix_node_cell(int64_t nodes, uint32_t unit);

/**
 * Walltime cell of a job.
 * @param wall_s  Requested walltime [s].
 * @param unit_s  T [s], >= 1.
 * @param cap     W, the last cell (queue limit / T); 0 = no cap.
 * @return ceil(wall_s / unit_s), at least 1, at most cap.
 * @par Context  Pure.
 * @par Source   seed 001 Table 2 (10-minute units up to 24 h on K).
 */
uint32_t nl_jobmix_wall_cell(int64_t wall_s, uint32_t unit_s, uint32_t cap);

/**
 * Run-time cell of a job: run time in 1 % of its requested walltime.
 * @param run_s   Run time [s] (<= 0 gives cell 1).
 * @param wall_s  Requested walltime [s] (<= 0 gives cell 1).
 * @return ceil(100 * run_s / wall_s) clamped to 1..100.
 * @par Context  Pure.
 * @par Source   seed 001 Table 2.
 */
uint32_t nl_jobmix_ratio_cell(int64_t run_s, int64_t wall_s);

/**
 * Time of week of an absolute time in the current local zone (TZ; see nl_jobmix_set_zone()).
 * Defined for every value: a time localtime_r() cannot convert (a year beyond int) is first
 * moved by whole 400-year Gregorian cycles (20,871 weeks, so the weekday is kept) into
 * 1970..2369, and taken in UTC if even that fails.
 * @param unix_s  Seconds since the Unix epoch.
 * @return seconds since Monday 00:00 local time, 0..NL_JOBMIX_WEEK_S-1.
 * @par Context  Any thread after the zone is set; uses localtime_r().
 */
int64_t nl_jobmix_tow_s(int64_t unix_s);

/**
 * Time of week of start_unix_s + off_s, without overflow: when the sum does not fit in
 * int64_t, both terms are reduced modulo the 400-year cycle first (see nl_jobmix_tow_s()).
 * @param start_unix_s  Seconds since the Unix epoch (a log's UnixStartTime).
 * @param off_s         Offset [s] (a submit time).
 * @return seconds since Monday 00:00 local time, 0..NL_JOBMIX_WEEK_S-1.
 * @par Context  As nl_jobmix_tow_s().
 */
int64_t nl_jobmix_tow_at_s(int64_t start_unix_s, int64_t off_s);

/**
 * Make @p zone (an IANA name such as "Europe/Stockholm") the local zone of this process.
 * @return 0; -EINVAL for an empty or over-long name.
 * @par Context  Control thread only (setenv + tzset).
 */
int nl_jobmix_set_zone(const char *zone);

/**
 * Learn both models and the submit profile from jobs.
 *
 * @param m       Output: the model (free with nl_jobmix_model_free()); zeroed first.
 * @param u       Units; wall_cells 0 = ceil(largest walltime / T).
 * @param jobs    [n] jobs, any order; the local zone must be the log's (nl_jobmix_set_zone()).
 * @param n       Number of jobs, >= 1.
 * @param start_unix_s  UnixStartTime of the log [s], 0..NL_JOBMIX_START_MAX_S.
 * @param err     "message" on error; may be NULL.
 * @param len     Size of err [bytes].
 * @return 0; -EINVAL for n = 0, bad units, start_unix_s out of range or a job with nodes
 *         outside 1..NL_JOBMIX_MAX_NODES, wall_s < 1 or run_s < 0; -ENOMEM.
 * @par Context  Control path; allocates; O(n log n).
 * @par Source   seed 001 §4.1.1, §4.1.2, §3.6.
 */
int nl_jobmix_learn(struct nl_jobmix_model *m, const struct nl_jobmix_units *u,
		    const struct nl_jobmix_job *jobs, size_t n, int64_t start_unix_s,
		    char *err, size_t len);

/**
 * Free a model's arrays (the struct itself is the caller's).
 * @param m  Model, or NULL.
 * @par Context  Control path.
 */
void nl_jobmix_model_free(struct nl_jobmix_model *m);

/**
 * Write a model in the text format of docs/jobmix.md ("Model file"), so that
 * nl_jobmix_model_load() reads it back: in the source name every blank, control character and
 * '#' is written as '_' (an empty name as "-").
 * @param m  Model.
 * @param f  Output stream.
 * @return 0; -EINVAL (nothing written) when the zone is empty or holds a blank, a control
 *         character or '#' (it could not be read back); -EIO.
 * @par Context  Control path.
 */
int nl_jobmix_model_write(const struct nl_jobmix_model *m, FILE *f);

/**
 * Read a model file.
 *
 * @param m     Output model (free with nl_jobmix_model_free()).
 * @param path  File.
 * @param err   "PATH:LINE: message" (or "PATH: message"); may be NULL.
 * @param len   Size of err [bytes] (NL_JOBMIX_ERR_LEN is enough).
 * @return 0; -ENOENT (or another -errno) when it cannot be opened; -EINVAL for a bad line, a
 *         missing key or an inconsistent model (cell counts not summing to 'jobs', or adding
 *         up past UINT64_MAX; a cell wholly above max_nodes; start_unix_s outside
 *         0..NL_JOBMIX_START_MAX_S); -ENOMEM.
 * @par Context  Control path; allocates.
 */
int nl_jobmix_model_load(struct nl_jobmix_model *m, const char *path, char *err, size_t len);

/**
 * Read a model from text in memory.
 * @param m     Output model (free with nl_jobmix_model_free()).
 * @param name  Stands for the path in messages.
 * @param text  NUL-terminated model text.
 * @param err   "NAME:LINE: message"; may be NULL.
 * @param len   Size of err [bytes].
 * @return as nl_jobmix_model_load().
 * @par Context  Control path; allocates.
 */
int nl_jobmix_model_load_string(struct nl_jobmix_model *m, const char *name, const char *text,
				char *err, size_t len);

/** Generation options. */
struct nl_jobmix_gen {
	enum nl_jobmix_method method;
	uint64_t seed;
	double rate_per_s; /**< overall submit rate [jobs/s]; <= 0: the learned rate */
};

/**
 * Draw jobs from a model. Submit times are a non-homogeneous Poisson process whose rate in
 * each (weekday, hour) slot of local time is rate * 168 * slot / sum(slot), starting at 0 =
 * the model's start_unix_s; they are non-decreasing integers. The same model, options and
 * seed give the same jobs. A map job of node cell n gets min(n * U, max_nodes) nodes: the
 * cell's upper bound, clamped to the machine (the top cell of a machine that is not a
 * multiple of U), so no job is wider than max_nodes and every job stays in its cell.
 *
 * @param m     Model (the local zone must be the model's zone).
 * @param g     Options.
 * @param out   Output: [n] jobs.
 * @param n     Jobs to draw.
 * @return 0; -EINVAL when the method's part of the model is empty, the cell counts sum to 0,
 *         max_nodes < 1 or a map cell lies wholly above it, the profile is all zero or the
 *         rate is below one job per 1,000 weeks; -ERANGE (out partly filled) when the submit
 *         clock stops advancing or finds no non-empty slot in two weeks (cannot happen with
 *         a model the loader accepts).
 * @par Context  Any thread (pure but for localtime_r); O(n log cells + hours spanned).
 * @par Source   seed 001 §4.1, §3.6.
 */
int nl_jobmix_generate(const struct nl_jobmix_model *m, const struct nl_jobmix_gen *g,
		       struct nl_jobmix_job *out, size_t n);

/**
 * Two-sample Kolmogorov-Smirnov distance sup |F_a - F_b| (ties handled: both sides step past
 * equal values together).
 * @param a, b  Samples; SORTED ascending in place.
 * @return the distance in [0, 1]; 0 when either sample is empty.
 * @par Context  Pure but for the in-place sort.
 */
double nl_jobmix_ks(double *a, size_t na, double *b, size_t nb);

/**
 * Total-variation distance between the joint (node, wall, ratio) cell histograms of two job
 * sets: 1/2 sum |p_a - p_b| over cells, in [0, 1].
 * @return the distance, or -1 on allocation failure or an empty set.
 * @par Context  Pure; allocates; O((na + nb) log).
 */
double nl_jobmix_joint_tv(const struct nl_jobmix_job *a, size_t na, const struct nl_jobmix_job *b,
			  size_t nb, const struct nl_jobmix_units *u);

#ifdef __cplusplus
}
#endif
#endif /* NL_JOBMIX_H */
