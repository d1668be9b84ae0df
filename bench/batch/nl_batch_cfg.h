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
};

/**
 * Parse the batch sections.
 * @return 0, or -EINVAL with "FILE:LINE: ..." in cfg->err.
 * @par Context  Control path.
 */
int nl_batch_cfg_parse(struct nl_cfg *cfg, struct nl_batch_cfg *out);

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

/** Apply the thread mapping to one job (cpus set). @par Context Pure. */
void nl_batch_map_threads(const struct nl_batch_cfg *c, struct nl_batch_job *j);

#ifdef __cplusplus
}
#endif
#endif /* NL_BATCH_CFG_H */
