/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Batch (space-sharing) engine for rigid jobs on P processors, driven by the simulator's
 * event queue (nl_evq.h): seed 000's queues with class limits, FCFS / FirstFit (with an
 * optional overtaking bound) / EASY / conservative backfilling, automatic queue selection and
 * connection reservation. docs/batch.md explains every rule with the paper's words.
 *
 * Theory of operation. Events are job arrivals and job ends (time in seconds). All events
 * with the same time are applied first, then one scheduling pass runs:
 *  - FCFS / FirstFit: queues are visited in configuration order (the first queue has
 *    priority; queue_order = arrival merges them in arrival order instead); in each queue,
 *    waiting jobs in arrival order. FCFS stops a queue at its first
 *    job that does not fit; FirstFit tries every job. A job that starts while an earlier job
 *    of its own queue waits "overtakes" it: it may start only while the CPUs held by
 *    overtakers of that queue stay <= overtake_cpus_max, and every job it passed gets the
 *    intrinsic-priority increment of seed 000 formula (1).
 *  - EASY / conservative: one list of all waiting jobs in arrival order (queues only label
 *    jobs for the metrics). EASY: the head gets a reservation at the shadow time computed from
 *    the running jobs' estimates; a later job may start now if it fits and ends (by its
 *    estimate) before the shadow time or uses only the extra processors. Conservative: every
 *    waiting job gets the earliest slot in the profile, in arrival order; jobs whose slot is
 *    now start.
 *  - Connection reservation (FirstFit only, seed 000 §3.2): a reserving job R flags running
 *    jobs (one request-match job, else max-space jobs until their CPUs cover R). When a
 *    flagged job ends its CPUs are held for R alone; the surplus over R's need is released at
 *    once; R starts when it holds its need (or earlier when held + free CPUs suffice).
 *
 * Invariants (tests/batch/test_batch.c checks them through the event hook):
 *  I1  free + held + sum(cpus of running jobs) == P at every instant; all three >= 0.
 *  I2  a job starts at or after its submit time, and ends run_s later (the double sum), once.
 *  I3  a job that is not a reserving job starts only with cpus <= free (held CPUs are used by
 *      their reserving job only).
 *  I4  EASY and conservative, with estimates >= run times: a job starts no later than the
 *      first reservation computed for it (EASY: the head's shadow time; conservative: the
 *      second of its first slot), whatever the times round to.
 *  I5  active reservations of a queue never exceed its limit (resv_max).
 *
 * Advance reservations (seed 004; nl_batch_run_rsv(), docs/batch.md "Advance reservations").
 * The engine then knows nodes (one CPU per node: node k is CPU k) and replays a stream of
 * reservation requests through a PluS manager (nl_plus.h) whose admission policy is the
 * administrator's ClassAd:
 *  - a request event syncs the node records (isAlive, loadavg, the running job with its
 *    startTime and wallTime = estimate: seed 004 Tables 2-3), fixes the policy's time() and
 *    asks nl_plus_reserve(); the outcome is written into the request;
 *  - a normal job of estimate d starts at t only on idle nodes with
 *    t + d <= nl_plus_node_next_hold() (the contract of docs/classad.md); among those, the
 *    nodes whose next hold is nearest are taken first (the unreserved ones are kept for long
 *    jobs);
 *  - at a window's start every normal job still on one of its nodes is preempted (PluS's
 *    rule, seed 004 §1): killed, its work lost, and put back in its queue at its arrival
 *    position. A policy such as Fig. 8 refuses the nodes where that could happen;
 *  - a window's end makes its nodes available again and runs a scheduling pass.
 * Invariants (tests/batch/test_rsv.c):
 *  R1  no normal job runs on a node during a window of an accepted reservation holding it;
 *  R2  accepted + refused (policy, space, invalid) == requests;
 *  R3  with no request the schedule equals nl_batch_run()'s, job by job;
 *  R4  every job runs to completion exactly once (a preempted job starts again later).
 */
#ifndef NL_BATCH_H
#define NL_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nl_swf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NL_BATCH_MAX_QUEUES 16u
#define NL_BATCH_MAX_SCENARIOS 8u
#define NL_BATCH_NAME_LEN 32u

/** Scheduling policy. */
enum nl_batch_policy {
	NL_BATCH_FCFS = 0,       /**< strict arrival order per queue */
	NL_BATCH_FIRSTFIT,       /**< FCFS order, any job that fits starts (HPC2500) */
	NL_BATCH_EASY,           /**< EASY backfilling (one reservation, the head) */
	NL_BATCH_CONSERVATIVE,   /**< conservative backfilling (a reservation for every job) */
};

/** How a job's queue is chosen. */
enum nl_batch_qsel {
	NL_BATCH_QSEL_AUTO = 0, /**< seed 000 §3.1: the runnable queue with the strictest limits */
	NL_BATCH_QSEL_TRACE,    /**< SWF field 15 through the configuration's queue map */
	NL_BATCH_QSEL_RANDOM,   /**< a user's choice: uniform among the runnable queues */
	NL_BATCH_QSEL_FIXED,    /**< one queue for every job */
};

/** A queue and its class (seed 000 Table 2, 3). */
struct nl_batch_queue {
	char name[NL_BATCH_NAME_LEN];
	uint32_t cpu_max;          /**< most CPUs of one job */
	uint32_t proc_max;         /**< most processes of one job */
	uint32_t thread_max;       /**< most threads per process of one job */
	double walltime_max_s;     /**< longest estimate accepted [s]; 0 = no limit */
	uint32_t overtake_cpus_max; /**< CPUs overtakers of this queue may hold; UINT32_MAX = any */
	double prio_threshold;     /**< priority-type reservation threshold; 0 = never */
	bool head_type;            /**< head-type reservations (seed 000: d512 only) */
};

/** The machine and its queues. */
struct nl_batch_sys {
	uint32_t cpus; /**< P */
	struct nl_batch_queue q[NL_BATCH_MAX_QUEUES];
	unsigned int n_q;
};

/** Which waiting job a FCFS/FirstFit pass considers next. */
enum nl_batch_order {
	NL_BATCH_ORDER_PRIORITY = 0, /**< queue by queue in configuration order (first = highest) */
	NL_BATCH_ORDER_ARRIVAL,      /**< all queues merged in arrival order */
};

/** A named scenario (seed 000: conventional, proposal (1), proposal (2)). */
struct nl_batch_scenario {
	char name[NL_BATCH_NAME_LEN];
	enum nl_batch_policy policy;
	enum nl_batch_qsel qsel;
	unsigned int fixed_queue;   /**< NL_BATCH_QSEL_FIXED */
	uint64_t seed;              /**< NL_BATCH_QSEL_RANDOM */
	bool overtake_bound;        /**< apply the queues' overtake_cpus_max */
	uint32_t resv_max[NL_BATCH_MAX_QUEUES]; /**< Table 4: concurrent reservations per queue */
	bool trig_priority, trig_head, trig_nonwait; /**< the three triggers of §3.3 */
	enum nl_batch_order queue_order; /**< FCFS/FirstFit: how queues share a pass */
};

/** How a job started. */
enum nl_batch_how {
	NL_BATCH_HOW_NONE = 0,  /**< never started (not runnable in any queue) */
	NL_BATCH_HOW_HEAD,      /**< first waiting job of its queue / list */
	NL_BATCH_HOW_OVERTAKE,  /**< FirstFit overtaking or backfilling */
	NL_BATCH_HOW_RESERVED,  /**< through a connection reservation */
};

/** One rigid job: input fields, then the engine's output. */
struct nl_batch_job {
	double submit_s;   /**< arrival [s] */
	double run_s;      /**< actual run time [s] */
	double est_s;      /**< user estimate [s], >= run_s for I4 */
	uint32_t cpus;     /**< processors held for the whole run */
	uint32_t procs;    /**< processes (seed 000 class limits) */
	uint32_t threads;  /**< threads per process */
	int32_t user_queue; /**< queue for QSEL_TRACE, -1 = none */
	int64_t swf_id;    /**< SWF job number, for reports */
	int32_t user;      /**< SWF user id (field 12), -1 = unknown: the job record's owner */
	/* output */
	int32_t queue;     /**< queue it went to; -1 = runnable nowhere (never starts) */
	uint8_t how;       /**< enum nl_batch_how */
	bool reserved;     /**< a connection reservation was made for it */
	double start_s;    /**< start [s]; -1 if never */
	double end_s;      /**< end [s]; -1 if never */
	double resv_s;     /**< EASY: first shadow time computed for it as head; conservative:
			    *   the second of its first reservation; -1 = none */
	double prio;       /**< intrinsic priority reached (seed 000 formula (1)) */
};

/** Kinds of engine events reported to the hook. */
enum nl_batch_ev_kind {
	NL_BATCH_EV_START = 0, /**< job starts (cpus taken from free, or held + free) */
	NL_BATCH_EV_END,       /**< job ends */
	NL_BATCH_EV_HOLD,      /**< a flagged job ended: `cpus` now held for reserving job `job` */
	NL_BATCH_EV_RESV,      /**< connection reservation made for `job` (`cpus` = planned CPUs,
				*   `other` = the request-match job or -1) */
	NL_BATCH_EV_FLAG,      /**< running job `other` flagged for reserving job `job` */
	NL_BATCH_EV_ADMIT,     /**< advance-reservation request `job` decided: `other` = 1
				*   accepted (`nodes`[`cpus`] its nodes), 0 refused */
	NL_BATCH_EV_PREEMPT,   /**< job `job` preempted at the start of request `other`'s window
				*   (`nodes`[`cpus`] the nodes it held) */
	NL_BATCH_EV_WINDOW,    /**< request `job`'s window starts (`other` = 1) or ends (0) */
};

/** One engine event (for tests and traces). State fields are after the event. */
struct nl_batch_ev {
	enum nl_batch_ev_kind kind;
	double t_s;
	size_t job;
	long other;
	uint32_t cpus;
	uint32_t free_cpus;   /**< after the event */
	uint32_t held_cpus;   /**< all reservations, after the event */
	uint32_t held_used;   /**< START: CPUs taken from the job's own held pool */
	const uint32_t *nodes; /**< START, END, ADMIT, PREEMPT with reservations: [cpus] node
				 *   indices (valid during the call); NULL otherwise */
};

/** Optional observer. */
struct nl_batch_hooks {
	void (*on_ev)(void *arg, const struct nl_batch_ev *e);
	void *arg;
};

/** Run totals. */
struct nl_batch_stats {
	size_t jobs;          /**< jobs that ran */
	size_t unrunnable;    /**< jobs no queue accepts (or wider than P) */
	double makespan_s;    /**< last end - first submit [s] */
	double first_submit_s;
	double cpu_s;         /**< sum of cpus x run time [CPU s] */
	uint64_t events;      /**< events popped */
	uint64_t passes;      /**< scheduling passes */
	uint64_t resv_made;   /**< connection reservations made */
	uint64_t resv_refused; /**< triggered but over the queue limit or impossible */
	uint64_t resv_by_trigger[3]; /**< made: priority, head, non-waiting */
	double held_cpu_s;    /**< CPU time held idle for reserving jobs [CPU s] */
	/* advance reservations (nl_batch_run_rsv()) */
	uint64_t rsv_requests;       /**< requests replayed */
	uint64_t rsv_accepted;       /**< admitted by the policy */
	uint64_t rsv_refused_policy; /**< refused: the policy gave too few nodes (-EACCES) */
	uint64_t rsv_refused_space;  /**< refused: too few nodes free of other reservations */
	uint64_t rsv_invalid;        /**< refused as malformed (-EINVAL) */
	uint64_t preempted;          /**< normal jobs preempted at a window's start */
	double preempted_cpu_s;      /**< work lost to preemption [CPU s] */
	double rsv_node_s;           /**< node time of accepted reservations [node s] */
};

/** Outcome of an advance-reservation request. */
enum nl_batch_rsv_outcome {
	NL_BATCH_RSV_PENDING = 0,    /**< not replayed (the run stopped before it) */
	NL_BATCH_RSV_ACCEPTED,       /**< admitted: its nodes are held for the window */
	NL_BATCH_RSV_REFUSED_POLICY, /**< the policy accepted too few nodes */
	NL_BATCH_RSV_REFUSED_SPACE,  /**< too few nodes free of other reservations */
	NL_BATCH_RSV_INVALID,        /**< malformed (e.g. end <= start) */
};

#define NL_BATCH_RSV_WHY_LEN 160u

/** One advance-reservation request (seed 004 §2): input fields, then the engine's output. */
struct nl_batch_rsv_req {
	double at_s;       /**< when the request arrives [s, trace time] */
	double start_s;    /**< window start [s, trace time], integral */
	double end_s;      /**< window end [s, trace time], integral, > start_s */
	uint32_t nodes;    /**< nodes asked for */
	char owner[NL_BATCH_NAME_LEN]; /**< PLUS_RSV_OWNER */
	/* output */
	uint8_t outcome;   /**< enum nl_batch_rsv_outcome */
	uint32_t preempted; /**< normal jobs preempted at its start */
	char why[NL_BATCH_RSV_WHY_LEN]; /**< refused by the policy: the first clause not true */
};

struct nl_plus;

/** The reservation side of a run (nl_batch_run_rsv()). */
struct nl_batch_rsv {
	struct nl_plus *plus;   /**< manager with sys->cpus nodes and no reservation; the run sets
				  *   its node records and clock, and leaves it holding the
				  *   reservations of the last history_s */
	double epoch_s;         /**< trace time 0 in seconds since the Unix epoch (SWF
				  *   UnixStartTime): what the policy's time() and absTime see */
	double history_s;       /**< an ended reservation stays visible to plus_rsvutil() this
				  *   long [s] (seed 004 Fig. 7 looks 7 days back) */
	struct nl_batch_rsv_req *req; /**< [n_req], any order; outputs written */
	size_t n_req;
};

/**
 * Runnable test of seed 000 §3.1: cpus, processes, threads and estimate within the class.
 * @return true when queue q accepts the job. @par Context Pure.
 */
bool nl_batch_queue_accepts(const struct nl_batch_queue *q, const struct nl_batch_job *j);

/**
 * Automatic queue selection (seed 000 §3.1): among the queues that accept the job, the one
 * with the strictest limits, compared as (cpu_max, walltime_max_s (0 = infinite),
 * thread_max, proc_max, configuration order).
 * @return queue index, or -1 when none accepts it. @par Context Pure.
 */
int nl_batch_queue_auto(const struct nl_batch_sys *sys, const struct nl_batch_job *j);

/**
 * Intrinsic-priority increment of seed 000 formula (1):
 * (thread(j)/thread_max(q) * cpu(j)/cpu_max(q))^(-1/2).
 * @return the increment (>= 1 for a job the queue accepts). @par Context Pure.
 */
double nl_batch_prio_increment(const struct nl_batch_queue *q, const struct nl_batch_job *j);

/**
 * Simulate one scenario.
 *
 * @param sys    Machine and queues.
 * @param sc     Scenario.
 * @param jobs   [n] jobs in submit order (the inputs are read, the outputs written).
 * @param n      Number of jobs.
 * @param st     Output totals.
 * @param hooks  Optional observer (NULL: none; the run is then at full speed).
 * @return 0; -EINVAL for an unsorted job list, a policy/reservation mismatch (reservations
 *         need FirstFit) or a bad fixed queue; -ENOMEM.
 * @par Context  Single thread; allocates O(n); deterministic.
 */
int nl_batch_run(const struct nl_batch_sys *sys, const struct nl_batch_scenario *sc,
		 struct nl_batch_job *jobs, size_t n, struct nl_batch_stats *st,
		 const struct nl_batch_hooks *hooks);

/**
 * Simulate one scenario together with a stream of advance-reservation requests (seed 004),
 * with node identity (node k = CPU k); see "Advance reservations" above.
 *
 * @param sys    Machine and queues; sys->cpus == nl_plus_n_nodes(rsv->plus).
 * @param sc     Scenario: policy FCFS or FirstFit, no connection reservation (resv_max 0).
 * @param jobs   [n] jobs in submit order (inputs read, outputs written).
 * @param n      Number of jobs.
 * @param rsv    Requests and their manager; NULL runs nl_batch_run().
 * @param st     Output totals (the rsv_* and preempted* fields too).
 * @param hooks  Optional observer.
 * @return 0; -EINVAL as nl_batch_run(), or for another policy, connection reservations, a
 *         node count mismatch or a request with nodes == 0; -ENOMEM.
 * @par Context  Single thread; allocates O(n + P + requests); deterministic.
 * @par Source   seed 004 §1-§2 (PluS preempts at the window start), §5.4 (Fig. 8).
 */
int nl_batch_run_rsv(const struct nl_batch_sys *sys, const struct nl_batch_scenario *sc,
		     struct nl_batch_job *jobs, size_t n, const struct nl_batch_rsv *rsv,
		     struct nl_batch_stats *st, const struct nl_batch_hooks *hooks);

/** Per-queue (or whole-system) metrics of a finished run. */
struct nl_batch_metrics {
	size_t jobs;
	double wait_mean_s, wait_median_s, wait_max_s;
	double bsld_mean;     /**< bounded slowdown max(1, (wait + run) / max(run, tau)) */
	double utilization;   /**< cpu_s of these jobs / (P x makespan) */
};

/**
 * Metrics of the jobs in queue q (q < 0: all jobs) after nl_batch_run().
 * @param tau_s  Bounded-slowdown threshold [s] (10 s in the literature).
 * @return 0, or -ENOMEM.
 */
int nl_batch_metrics(const struct nl_batch_sys *sys, const struct nl_batch_job *jobs, size_t n,
		     const struct nl_batch_stats *st, int q, double tau_s,
		     struct nl_batch_metrics *out);

/** Name of a policy ("fcfs", "firstfit", "easy", "conservative"). */
const char *nl_batch_policy_name(enum nl_batch_policy p);

#ifdef __cplusplus
}
#endif
#endif /* NL_BATCH_H */
