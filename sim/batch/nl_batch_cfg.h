/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Configuration of the batch model ([batch], [queue.NAME], [scenario.NAME] sections; every
 * key in docs/batch.md) and the conversion of an SWF trace into engine jobs.
 */
#ifndef NL_BATCH_CFG_H
#define NL_BATCH_CFG_H

#include <stddef.h>
#include <stdint.h>

#include "nl_batch.h"
#include "nl_cfg.h"
#include "nl_swf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NL_BATCH_MAX_QMAP 64u /**< SWF queue numbers mapped to queues */

#define NL_BATCH_RSV_OWNERS_MAX 16u

/**
 * [reservations]: the stream of advance-reservation requests replayed with the trace (seed
 * 004; docs/batch.md "Advance reservations").
 */
struct nl_batch_rsv_cfg {
	bool on;                   /**< the section is present */
	const char *requests;      /**< a request file (nl_batch_rsv_load()) instead of the
				     *   generator, or NULL (into the store) */
	const char *policy_file;   /**< ClassAd admission policy (into the store; relative paths
				     *   are resolved like the trace) */
	double rate_per_h;         /**< Poisson request rate [1/h] */
	double lead_min_s, lead_max_s; /**< start - request time, uniform [s] */
	double dur_min_s, dur_max_s;   /**< end - start, uniform [s] */
	uint32_t nodes_min, nodes_max; /**< nodes asked for, uniform integer */
	char owners[NL_BATCH_RSV_OWNERS_MAX][NL_BATCH_NAME_LEN]; /**< drawn uniformly */
	unsigned int n_owners;
	uint64_t seed;             /**< request stream seed */
	double history_s;          /**< ended reservations seen by plus_rsvutil() [s] */
};

/** Parsed batch configuration. */
struct nl_batch_cfg {
	struct nl_batch_sys sys;
	struct nl_batch_scenario sc[NL_BATCH_MAX_SCENARIOS];
	unsigned int n_sc;
	const char *trace;           /**< [batch] trace (into the store), or NULL */
	struct nl_swf_filter filter; /**< [batch] procs, overrun, drop_cancelled, drop_zero_run */
	double tau_s;                /**< [batch] bsld_tau_s, bounded-slowdown threshold [s] */
	double submit_scale;         /**< [batch] submit_scale: submit times x this (< 1 = more load) */
	uint32_t cpus_scale;         /**< [batch] cpus_scale: job CPUs = SWF processors x this */
	uint32_t threads_per_proc;   /**< [batch] threads_per_proc: K; procs = ceil(cpus/K) */
	double thread_jobs_pct;      /**< [batch] thread_jobs_pct: share of pure-thread jobs */
	uint32_t thread_jobs_cpus_max; /**< [batch] thread_jobs_cpus_max: wider jobs are never
				      *   pure-thread; 0 = no limit */
	uint64_t jobs_max;           /**< [batch] jobs_max: first N kept jobs only; 0 = all */
	int64_t qmap_swf[NL_BATCH_MAX_QMAP]; /**< [queue.X] swf_queue numbers ... */
	unsigned int qmap_q[NL_BATCH_MAX_QMAP]; /**< ... and the queue each maps to */
	unsigned int n_qmap;
	struct nl_batch_rsv_cfg rsv; /**< [reservations] */
};

/**
 * Parse the batch sections.
 * @return 0, or -EINVAL with "FILE:LINE: ..." in cfg->err.
 * @par Context  Control path.
 */
int nl_batch_cfg_parse(struct nl_cfg *cfg, struct nl_batch_cfg *out);

/**
 * `[batch] cpus = auto`: replace it by the trace's processor count, its `MaxProcs` header
 * times `[batch] cpus_scale` (docs/batch.md), before nl_batch_cfg_parse(). Nothing is done
 * when cpus is not `auto`.
 *
 * @param cfg   Configuration, not parsed yet.
 * @param t     The trace.
 * @param path  The trace's path, for messages.
 * @param cpus  Output (may be NULL): the processor count set; 0 when cpus is not `auto`.
 * @return 0; -EINVAL with "FILE:LINE: [batch] cpus: ..." in cfg->err when the header gives no
 *         processor count in 1..2^24 (a MaxNodes line is named as a hint); -ENOMEM.
 * @par Context  Control path.
 */
int nl_batch_cfg_cpus_auto(struct nl_cfg *cfg, const struct nl_swf *t, const char *path,
			   uint64_t *cpus);

/**
 * Turn an SWF trace into engine jobs: the filtering rules (nl_swf_rigid()), the thread
 * mapping (threads_per_proc, thread_jobs_pct), the SWF queue map, sorted by submit time
 * (stable), at most jobs_max.
 *
 * @param out    Output: malloc'ed array (free()).
 * @param n      Output: number of jobs.
 * @param drops  Output: records dropped per nl_swf_drop reason (index 0 = kept).
 * @return 0 or -ENOMEM.
 */
int nl_batch_jobs_from_swf(const struct nl_swf *t, const struct nl_batch_cfg *c,
			   struct nl_batch_job **out, size_t *n,
			   size_t drops[NL_SWF_DROP__COUNT]);

/**
 * Draw the request stream of [reservations]: Poisson arrivals over [t0_s, t1_s] (trace
 * seconds), each with a lead time, a duration, a node count and an owner drawn uniformly from
 * the configured ranges. All times are whole seconds. Deterministic in rc->seed.
 *
 * @param rc    Configuration (rc->on).
 * @param t0_s  First request no earlier than this [s].
 * @param t1_s  None after this [s].
 * @param out   Output: malloc'ed array sorted by at_s (free()); NULL when none.
 * @param n     Output: number of requests.
 * @return 0 or -ENOMEM.
 * @par Context  Pure apart from the allocation.
 */
int nl_batch_rsv_generate(const struct nl_batch_rsv_cfg *rc, double t0_s, double t1_s,
			  struct nl_batch_rsv_req **out, size_t *n);

/**
 * Read a request stream from a CSV file: a header naming at least the columns at_s,
 * start_s, end_s, nodes, owner (any order, other columns ignored), then one request per line
 * (trace seconds, whole numbers; '#' lines and blank lines skipped). Kept in file order: the
 * engine takes requests in any order and breaks ties of at_s by index.
 *
 * @param path  File.
 * @param out   Output: malloc'ed array (free()); NULL when empty.
 * @param n     Output: number of requests.
 * @param err   Output on error: "FILE:LINE: message".
 * @param len   Bytes of err.
 * @return 0; -ENOENT (cannot open), -EINVAL (bad header or line), -ENOMEM.
 * @par Context  Control path.
 */
int nl_batch_rsv_load(const char *path, struct nl_batch_rsv_req **out, size_t *n, char *err,
		      size_t len);

/** Apply the thread mapping to one job (cpus set). @par Context Pure. */
void nl_batch_map_threads(const struct nl_batch_cfg *c, struct nl_batch_job *j);

#ifdef __cplusplus
}
#endif
#endif /* NL_BATCH_CFG_H */
