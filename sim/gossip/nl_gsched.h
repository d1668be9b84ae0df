/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The scheduling engine of nlevel-sim's gossip model: compute nodes running jobs of 30-60 min,
 * and either (a) scheduling nodes that learn node records by gossip and match jobs against
 * their own view, or (b) a Condor-like central manager (one collector, one negotiator) — Umeda,
 * Nakada, Matsuoka §2.1.1, §4.3, §4.5, §5.2. docs/gossip.md explains every modelling choice.
 *
 * Gossip side. Every participant (compute and scheduling nodes) opens an exchange every
 * period at its own phase with f random contactable peers (not NAT'd, not gone); an exchange
 * is push-pull anti-entropy of whole views (§4.5): the initiator's view reaches the peer after
 * the one-way latency, the peer's view reaches the initiator one latency later. With whole
 * views exchanged, the record of node s that a scheduling node q holds at time T is the one s
 * made at the latest time g_s from which a chain of exchanges, each later than the previous,
 * leads from s to q by T (a time-respecting path). The engine keeps the exchanges of the last
 * record lifetime in a ring and computes g for every node by one backward sweep over them
 * (latest-departure temporal paths), each time q's view changes. This gives exactly the view
 * nl_gossip's merge rule would give (tests/gossip: the differential test) at O(exchanges in a
 * lifetime) per view change instead of O(N) records per exchange, i.e. O(N^2) per round.
 * A scheduling node also fetches the records of a random node for every job it matches
 * (`sched_pull`, default; §4.1: the machine that places jobs obtains the shared information
 * from an arbitrary node and matches on it), so in a large pool it hears of a freed node once a
 * few nodes hold its record; nl_gsched_spread_wait_s() gives the wait without the fetches.
 *
 * Central side. Every node sends its record every update interval straight to the collector
 * (one hop, §5.2.1), which handles one record at a time. By default (`coll_blocking` false)
 * an update is delayed by `rec_rtts` round trips between the node and the central manager
 * (TCP connection, security negotiation, the update and its acknowledgement) and holds the
 * collector `rec_cost_s` x `rec_scale` (the sensitivity sweep); a blocking collector is held
 * for the round trips too. The negotiator runs every negotiation interval on the records
 * collected so far. The collection cycle, and so the age of what the negotiator sees, grows
 * linearly with the node count once N records take longer than one interval (seed §6.2).
 *
 * Both sides match with the same ClassAd job ad (Requirements, Rank) evaluated by
 * managers/classad against each candidate node record, charge `match_cost_s` per record of
 * their view per job matched, ask the chosen node (one round trip), and put the job back on
 * refusal (gossip: at once with the next candidate, or with `retry` = next-period one job at
 * a time, re-matched on the next period's view, §4.3; central: at the next negotiation cycle,
 * as Condor does). A gossip scheduling node discounts its own jobs started since a record was
 * made, or with `belief` = view trusts the record and is refused (§4.3).
 */
#ifndef NL_GSCHED_H
#define NL_GSCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "nl_gossip.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most scheduling nodes. */
#define NL_GSCHED_MAX_SCHED 64u

/** Scheduling system. */
enum nl_gsched_sys {
	NL_GSCHED_GOSSIP = 0,
	NL_GSCHED_CENTRAL,
};

/** How a scheduling node's view is obtained (docs/gossip.md "How the view is computed"). */
enum nl_gsched_view {
	NL_GSCHED_VIEW_SWEEP = 0, /**< exact temporal-path sweep (whole views only), fast */
	NL_GSCHED_VIEW_LIBRARY,   /**< nl_gossip views on every participant: any rule, O(N) per
				   *   exchange under anti-entropy (small pools) */
};

/** What a scheduling node believes about a record (docs/gossip.md "Scheduling node", §4.3). */
enum nl_gsched_belief {
	/** The record's free cores minus the jobs this scheduling node started there since the
	 *  record was made (it remembers what it sent): stale records cause no refusal. */
	NL_GSCHED_BELIEF_OWN = 0,
	/** The record as it is (§4.3: the scheduling node matches on the information it got
	 *  from the grid; a node that already runs a job says so when asked). */
	NL_GSCHED_BELIEF_VIEW,
};

/** What a refusal costs a gossip scheduling node (§4.3, §5.2.1). */
enum nl_gsched_retry {
	/** Asks leave for every candidate at once; a refused job goes to the next one. */
	NL_GSCHED_RETRY_NEXT = 0,
	/** One job at a time (the head of the queue, §5.2.1): ask, wait for the answer; on a
	 *  refusal match again on the view of the next gossip period (the retry costs a
	 *  period), the queue behind it waiting. */
	NL_GSCHED_RETRY_PERIOD,
};

/** Where a gossip scheduling node gets its records besides its own periodic exchanges. */
enum nl_gsched_pull {
	/** §4.1: "the machine that submits jobs obtains the shared resource information from
	 *  an arbitrary node of the grid and matches on it"; §4.3: the scheduling node selects
	 *  arbitrary nodes and obtains the records they hold. One exchange with a random
	 *  contactable participant for every job it matches, its records used from the next
	 *  pass on (default). */
	NL_GSCHED_PULL_PER_JOB = 0,
	/** Nowhere else: it is a participant like any other (one exchange a period, and those
	 *  others open with it); the model before this key. */
	NL_GSCHED_PULL_NONE,
	/** One exchange with a random contactable participant for every matching pass that
	 *  sent at least one job, however many (§4.1 read as "obtain, then match the jobs on
	 *  it"), its records used from the next pass on. */
	NL_GSCHED_PULL_PER_PASS,
};

/** What an exchange opened by a gossip scheduling node brings it (library view engine; on the
 *  sweep, which computes only the scheduling nodes' views, all three are the same). */
enum nl_gsched_fetch {
	/** The rule's exchange in the configured mode, both ways: under the stop rule the
	 *  scheduling node also pushes its own hot records and the peer answers "already
	 *  known" (default; the model before this key). */
	NL_GSCHED_FETCH_EXCHANGE = 0,
	/** A pull: the peer sends what its rule sends (under the stop rule, its records still
	 *  being spread), the scheduling node answers "already known" and pushes nothing
	 *  (§4.1: it obtains records from compute nodes). */
	NL_GSCHED_FETCH_PULL,
	/** A pull of every valid record the peer holds, whatever the rule (§4.3: "obtains the
	 *  resource information they have accumulated"; §4.5: a joining node asks a nearby node
	 *  for its records "as the scheduling node does"). */
	NL_GSCHED_FETCH_VIEW,
};

/** Default of nl_gsched_cfg.pull_batch_s with NL_GSCHED_PULL_PER_JOB [s]. */
#define NL_GSCHED_PULL_BATCH_S 15.0

/** Default of nl_gsched_cfg.pull_batch_s with NL_GSCHED_PULL_PER_PASS [s]: there a pass that
 *  sent jobs opens the next fetch, so the bound sets how fast the obtain-match loop runs;
 *  0.25 s gives the same utilizations within 0.005 (docs/results.md, Table 1). */
#define NL_GSCHED_PASS_BATCH_S 1.0

/**
 * Free cores a scheduling node believes a node has, from the record it holds.
 * @param rec_free       Free cores in the record.
 * @param own_since      Jobs this scheduling node started on the node after the record was made.
 * @param pending        Its asks to the node not yet answered.
 * @param refused_since  The node refused it after the record was made.
 * @param b              Belief rule.
 * @return Believed free cores (<= 0: not a candidate).
 * @par Context  Any thread; pure.
 * @par Source   seed paper §4.3.
 */
int32_t nl_gsched_believed_free(int32_t rec_free, int32_t own_since, int32_t pending,
				bool refused_since, enum nl_gsched_belief b);

/**
 * Expected time for a record made at one participant to reach one other given participant by
 * anti-entropy gossip, in the standard asynchronous model: every participant opens `fanout`
 * exchanges per period at exponential times, each with a peer drawn uniformly among the
 * others. With i participants informed, the next one is informed at rate
 * r x i (n - i) / (n - 1), r = 2 f / P for push-pull (either end of a contact can carry the
 * record) and f / P for push or pull only; the given participant is still uninformed at count i
 * with probability (n - i) / (n - 1), so the expectation is the sum over i of that probability
 * times the mean sojourn at i: H(n - 1) / r, H the harmonic number (about (ln n + 0.577) / r).
 * Read as a scheduling wait (docs/gossip.md "How fast a record reaches the scheduling node"):
 * the time a compute node that has just become free waits until its "free" record reaches the
 * scheduling node, the floor of gossip's idle gap with a queue that never runs dry.
 * @param n_part    Participants (compute nodes + scheduling nodes), >= 2.
 * @param period_s  Gossip period P [s], > 0.
 * @param fanout    f, exchanges a participant opens per period, >= 1.
 * @param mode      Push-pull, push or pull.
 * @return Expected time [s]; NAN when an argument is out of range.
 * @par Context  Any thread; pure; O(n_part).
 * @par Source   Umeda, Nakada, Matsuoka §4.5 (exchanges with random nodes), §5.2 (once a
 *               minute); the sojourn argument is the SI epidemic on a complete graph (Pittel,
 *               "On spreading a rumor", SIAM J. Appl. Math. 1987, for push).
 */
double nl_gsched_spread_wait_s(uint32_t n_part, double period_s, unsigned int fanout,
			       enum nl_gossip_mode mode);

/** Network latency generator (docs/gossip.md "Network"). */
struct nl_gsched_net {
	unsigned int sites;  /**< sites placed uniformly at random in a unit square, >= 1 */
	double intra_min_s;  /**< one-way delay inside a site: uniform [min, max] per pair [s] */
	double intra_max_s;
	double inter_min_s;  /**< between sites: min + (max - min) x distance / sqrt(2) [s] */
	double inter_max_s;
};

/** One run. */
struct nl_gsched_cfg {
	enum nl_gsched_sys sys;
	uint32_t n_nodes;          /**< compute nodes */
	unsigned int n_sched;      /**< scheduling nodes (gossip), 1..NL_GSCHED_MAX_SCHED */
	double load;               /**< offered load x capacity; <= 0: queue never runs dry */
	double horizon_s;          /**< simulated time [s] */
	double warmup_s;           /**< not measured [s] */
	double period_s;           /**< gossip period [s] */
	double lifetime_s;         /**< record lifetime (both systems) [s] */
	unsigned int fanout;       /**< gossip f */
	enum nl_gossip_mode mode;  /**< gossip direction */
	enum nl_gossip_rule rule;  /**< anti-entropy, or stop-k (library views only) */
	unsigned int stop_k;       /**< k of the stop rule */
	enum nl_gsched_view view;  /**< view engine */
	/** Library engine: a participant remakes its own record only when its state changed
	 *  (free cores) or when the record it holds is within a period of its lifetime, instead
	 *  of at every exchange. Under stop-k an idle node is then not re-announced. */
	bool refresh_on_change;
	double nat_share;          /**< compute nodes behind NAT, [0, 1) */
	unsigned int cores;        /**< cores per node (jobs use one) */
	double job_min_s, job_max_s; /**< job length, uniform [s] */
	double fail_per_day;       /**< failures per node per day (crash, no leave message) */
	double leave_per_day;      /**< graceful leaves per node per day (leave message) */
	double rejoin_s;           /**< a failed or gone node comes back after this [s] */
	double neg_interval_s;     /**< negotiation cycle (central) [s] */
	double update_interval_s;  /**< record updates to the collector (central) [s] */
	bool update_on_change;     /**< central: a node also sends an update when its state
				    *   changes (a job starts or ends), as HTCondor's startd does */
	double rec_rtts;           /**< round trips per collected record (central) */
	double rec_cost_s;         /**< fixed cost per collected record (central) [s] */
	/** Central: the negotiator's time per machine record at the start of every cycle [s]
	 *  (reading the collector's records before matching, HTCondor's negotiation "phase 1";
	 *  a per-cycle cost linear in N, on top of the per-job scan that match_cost_s charges).
	 *  The cycle's matches leave only after it; a cycle longer than neg_interval_s delays
	 *  the next. 0 (default): none. An experiment knob (docs/results.md, Table 1). */
	double neg_ad_cost_s;
	/** Central: round trips the negotiator waits on, one match at a time, before the next
	 *  match of its cycle (the first Condor 6 matchmakers open a blocking TCP connection to
	 *  the matched startd and send it the match before they take the next job: 1; later ones
	 *  send it by UDP: 0). A per-cycle cost that grows with the cycle's matches, so with N.
	 *  0 (default): matches leave at once. */
	double match_rtts;
	/** Central: the collector waits on its records' round trips (true: one record at a
	 *  time holds it for rec_rtts round trips + rec_cost_s) or serves connections as they
	 *  become ready (false, default: the round trips delay each update, in parallel, and
	 *  only rec_cost_s holds the collector). */
	bool coll_blocking;
	enum nl_gsched_belief belief; /**< gossip scheduling nodes' belief rule */
	enum nl_gsched_retry retry;   /**< gossip: what a refusal costs */
	enum nl_gsched_pull sched_pull; /**< gossip: records fetched per job matched (§4.1) */
	/** Gossip: scheduling nodes are clients, not participants (§4.1: compute nodes exchange
	 *  records among themselves; a scheduling node obtains them from compute nodes). Nobody
	 *  draws a scheduling node as a peer; it still opens its periodic exchange and its
	 *  fetches, with compute nodes only, and under NL_GOSSIP_PUSH these pull (it obtains
	 *  the peer's records and sends none). false (the struct's zero; nlevel-sim's default
	 *  is true): a participant like any other. */
	bool sched_client;
	/** Gossip: what the exchanges a scheduling node opens bring it (periodic ones and the
	 *  fetches of NL_GSCHED_PULL_PER_JOB). */
	enum nl_gsched_fetch sched_fetch;
	/** With NL_GSCHED_PULL_PER_JOB or _PER_PASS a scheduling node recomputes its view for
	 *  pulled records at most this often [s]; 0 = NL_GSCHED_PULL_BATCH_S (per job) or
	 *  NL_GSCHED_PASS_BATCH_S (per pass). An engine bound on the number of
	 *  sweeps (several jobs a second in a large pool), not a model parameter:
	 *  tests/gossip/test_gsched.c checks that 1 s gives the same utilization within 0.003. */
	double pull_batch_s;
	double rec_scale;          /**< multiplies the per-record cost (sensitivity) */
	double match_cost_s;       /**< matchmaking cost per (job, record) evaluation [s] */
	double ask_timeout_s;      /**< no answer from a failed node after this [s] */
	const char *job_ad;        /**< ClassAd: Requirements and Rank over TARGET (a node) */
	struct nl_gsched_net net;
	uint64_t net_seed;         /**< site layout and intra-site delays (same for every run) */
	uint64_t seed;             /**< everything else */
	/** Optional (NULL = none): the run stores the share of its simulated time done so far
	 *  here, in millionths, every few thousand events (relaxed; for a progress line). */
	_Atomic uint32_t *progress_ppm;
};

/** Outcome of one run. */
struct nl_gsched_res {
	double util;               /**< busy core time / live core time after warm-up */
	double info_age_s;         /**< mean age of the records a scheduler matched on [s] */
	double cycle_s;            /**< central: mean time to collect every node once [s] */
	double rec_cost_s;         /**< central: mean cost of one collected record [s] */
	uint64_t started;          /**< jobs started */
	uint64_t started_meas;     /**< of them, started after warm-up */
	/** Idle core time after warm-up per job started after warm-up [s]: how long a free core
	 *  waits for its next job (the queue never dry: util = L / (L + gap), L the mean job
	 *  length); NAN when no job started after warm-up. */
	double idle_gap_s;
	uint64_t refused;          /**< asks refused (busy, failed or gone node) */
	uint64_t requeued;         /**< jobs lost on a failed node or a leaving one, run again */
	uint64_t exchanges;        /**< gossip exchanges opened */
	uint64_t recs_sent;        /**< records carried by them, both directions (library engine
				    *   only: the sweep exchanges whole views and counts none) */
	uint64_t sweeps;           /**< view recomputations (gossip) */
	uint64_t evals;            /**< ClassAd evaluations really run */
	uint64_t fails, leaves, joins;
	double sim_s;              /**< simulated time [s] */
};

/**
 * Run one simulation.
 * @param c    Run parameters (checked: -EINVAL when out of range).
 * @param res  Output.
 * @return 0; -EINVAL (bad parameters or a job ad without Requirements/Rank); -ENOMEM.
 * @par Context  Any thread; owns all it allocates. Deterministic for a given c.
 * @par Source   seed paper §2.1.1, §4.3, §4.5, §5.2.
 */
int nl_gsched_run(const struct nl_gsched_cfg *c, struct nl_gsched_res *res);

/**
 * Measure the cost of one ClassAd matchmaking evaluation (Requirements and Rank of the job
 * ad against one node record) on this machine.
 * @param job_ad  ClassAd text.
 * @param out_s   Output: seconds per evaluation (the fastest of 10 batches of 2,000).
 * @return 0; -EINVAL (ad does not compile or lacks Requirements/Rank); -ENOMEM.
 * @par Context  Control path; reads the clock (CLOCK_MONOTONIC); a few ms.
 * @par Source   seed paper §5.2 (a measured matchmaking cost, common to both systems).
 */
int nl_gsched_match_cost(const char *job_ad, double *out_s);

/**
 * One-way latency between two compute nodes under the generator (for docs and tests).
 * @param c  Run parameters (net, seed, n_nodes).
 * @param a  Node id, or n_nodes for the central manager / first scheduling node's site.
 * @param b  Node id.
 * @param out_s  Output [s].
 * @return 0; -EINVAL; -ENOMEM.
 * @par Context  Any thread; allocates a whole run's state (tests and docs only).
 * @par Source   seed paper §5.2 (GridG delays up to about 200 ms; our generator: docs/gossip.md).
 */
int nl_gsched_latency(const struct nl_gsched_cfg *c, uint32_t a, uint32_t b, double *out_s);

/** One gossip exchange as the sweep sees it. */
struct nl_gsched_contact {
	uint32_t a;    /**< initiator */
	uint32_t b;    /**< peer */
	float lat_s;   /**< one-way latency [s] */
	double t_s;    /**< when a sent its view [s]; b's reply leaves at t_s + lat_s */
};

/**
 * Latest-departure times towards one destination: for every participant x, the latest time
 * g[x] such that the record x makes at g[x] reaches `dst` by `now_s` through the contacts
 * (in ascending time order), each used in the directions `mode` allows.
 * @param ct       [n] contacts, ascending t_s.
 * @param n        Count.
 * @param mode     Directions.
 * @param dst      Destination participant.
 * @param now_s    Time of the view [s].
 * @param horizon_s  Ignore contacts older than now_s - horizon_s (expired records) [s].
 * @param n_part   Participants (size of g).
 * @param g        Output [n_part]: time [s], or -INFINITY when nothing of x reaches dst.
 * @return participants reached (dst included).
 * @par Context  Any thread; pure on its arguments; O(n) worst case.
 * @par Source   seed paper §4.5 (what whole-view exchanges deliver); latest-departure temporal
 *               paths (Wu et al., "Path problems in temporal graphs", VLDB 2014).
 */
uint32_t nl_gsched_sweep(const struct nl_gsched_contact *ct, size_t n, enum nl_gossip_mode mode,
			 uint32_t dst, double now_s, double horizon_s, uint32_t n_part, double *g);

#ifdef __cplusplus
}
#endif
#endif /* NL_GSCHED_H */
