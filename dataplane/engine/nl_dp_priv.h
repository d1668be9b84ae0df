/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core structures of the live engine (nl_dp.h), shared by its files and read by the layers
 * above it (port/, xa/), as DPDK's internal headers are by its drivers. Not a public header.
 *
 *   nl_dp.h          public API
 *   nl_dp_priv.h     core structures and the internal calls between the files (this file)
 *   nl_dp_inline.h   hot-path inlines (pending bits, histogram buckets)
 *   nl_dp.c          creation, run reset, drain and teardown
 *   nl_dp_ops.c      engine ops the policies call, and ingress (a task's path)
 *   nl_dp_lcore.c    the manager lcore loop
 *   nl_dp_emu.c      control lcore and emulation: machines, messages in transit, runs
 *   nl_dp_gen.c      machine generations under RCU
 *   nl_dp_stats.c    run statistics and counters
 *   nl_dp_match.c    the model's task classes (emulated and native runs)
 *   nl_dp_tel_gate.c the telemetry gate (every layer's commands run behind it)
 *   nl_dp_tel.c      the engine's telemetry commands
 *
 * The engine knows no port, farm or peer appliance: what a layer above adds per task it keeps
 * in tables of its own indexed by the task's pool index (nl_task.aux), and what it adds to
 * the engine's life comes through struct nl_dp_ext_ops (nl_dp.h).
 *
 * The model (task stream, manager FIFO, sub-task service, completion) is managers/nl_model.h,
 * the simulator's too.
 */
#ifndef NL_DP_PRIV_H
#define NL_DP_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <urcu/urcu-qsbr.h>

#include "nl_dp.h"
#include "nl_evq.h"
#include "nl_model.h"

/* Task flags (struct nl_task.flags): the low 16 bits count outstanding sub-tasks (nl_model.h
 * I2); the engine's own flags sit above. */
#define NL_TF_FAILED (1u << 16)  /* refused or lost after acceptance */
#define NL_TF_DEAD (1u << 17)    /* returned to the pool by a teardown drain */
#define NL_TF_REASON_SHIFT 24    /* enum nl_reject_reason of a failure */

/* A message in a manager inbox (ring element, 16 bytes). */
struct nl_dp_msg {
	struct nl_task *t;
	double stamp_vt; /* emulated: when it reaches the manager; native: ingress time */
};

/* A sub-task on its way to a machine (ring element, 32 bytes). */
struct nl_dp_sub {
	struct nl_task *t;
	double arrive_vt; /* when it reaches the machine (emulated) */
	uint64_t seq;     /* booking sequence number of manager mgr (nl_load.h I4) */
	uint32_t mach;
	uint16_t mgr;
	uint16_t sub;
};

/* A machine generation: the machine table the policies see, published under RCU (I3). */
struct nl_dp_gen {
	struct nl_sched *s;
	struct nl_machine *mach; /* [n_mach] */
	uint8_t *alive;          /* [n_mach] */
	unsigned int n_mach;
	uint64_t id;
	struct rcu_head rcu;
};

struct nl_dp_lcore;

#define NL_DP_HAND_CAP 1024u /* same-lcore hand-over FIFO of an lcore (power of two) */
#define NL_DP_XBURST 32u /* tasks staged per destination lcore before one SP/SC enqueue */
#define NL_DP_WHEEL 1024u    /* native booking: completion wheel slots of 1 u.t. (power of two) */
#define NL_DP_LAT_BURST 256u /* latency samples held per burst (more in one burst: not sampled) */

struct nl_dp_mgr {
	/* What every hop reads or writes comes first, in one cache line: a native hop checks
	 * the owner of the next manager and counts on both (eng_pass). */
	uint32_t id;
	unsigned int lcore;
	struct nl_dp_lcore *owner;  /* lcore that polls it */
	uint32_t lc_idx;            /* index in owner->mgr[] and bit in owner->pend[] */
	uint32_t owner_lc;          /* the owner's index in dp->lc; UINT32_MAX for a scale-out
				     * proxy (its owner is not a manager lcore) */
	/* statistics: written by the owner lcore, read by telemetry (relaxed) */
	uint64_t tasks_in;
	uint64_t tasks_out;
	uint64_t fwd_out;
	uint64_t dispatched;
	uint64_t refused;
	struct rte_ring *inbox;
	struct nl_load_view view;
	bool has_cur;
	struct nl_dp_msg cur;
	double cur_done_vt;
	struct nl_model_mgr srv;      /* emulated: the manager as a FIFO server (nl_model.h) */
	double next_measure_vt;
	uint64_t svc_hist[NL_DP_HIST_BUCKETS]; /* decide() cost [ns], log2 buckets */
	uint64_t foreign;             /* lock-step runs only: other managers' bookings written
				       * into the view (lockstep_share(), nl_dp_ops.c) */
} __rte_cache_aligned;

struct nl_dp_lcore {
	struct nl_dp *dp;
	unsigned int lcore_id;
	struct nl_dp_mgr *mgr[4096];
	unsigned int n_mgr;
	/* Pending bits, one per manager of this lcore: set (release) by whoever enqueued into
	 * its inbox, taken (acquire exchange) by this lcore, which polls only those managers. */
	uint64_t pend[4096 / 64];
	bool ingress;                 /* runs the generator */
	struct nl_engine eng;         /* ctx = this struct */
	struct nl_dp_gen *gen;        /* current generation, valid until the next QS */
	struct nl_dp_mgr *at;         /* manager being served */
	uint64_t hk_mask;
	double now_vt;                /* this lcore's emulated clock (see nl_dp_lcore_main) */
	uint64_t clock_mvt;           /* now_vt in 1/1000 u.t., for other threads (relaxed) */
	/* emulated: tasks forwarded by this lcore's managers, in transit until their stamp
	 * (t_vt = arrival at the manager, arg = manager id, ptr = task) */
	struct nl_evq transit;
	/* native and port modes: tasks forwarded (or admitted) to a manager of this lcore are
	 * handed over without a ring: a FIFO only this lcore touches (nl_dp_hand_put_st) */
	struct nl_dp_hand {
		struct nl_task *t;
		uint32_t mgr;
		uint32_t pad;
	} hand[NL_DP_HAND_CAP];
	uint64_t hand_head, hand_tail;
	/* native and port modes with several manager lcores: tasks for managers of other
	 * lcores are staged per destination lcore and enqueued a burst at a time on the pair's
	 * single-producer/single-consumer ring (dp->xring), which the destination drains into
	 * its hand-over FIFO; every round ends with the stages flushed (nl_dp_xhop_*_st) */
	unsigned int idx;             /* index in dp->lc */
	struct nl_dp_hand *xout;      /* [n_lc * NL_DP_XBURST] staged tasks, by destination */
	uint32_t *xout_n;             /* [n_lc] tasks staged for each destination */
	uint64_t xhop_out;            /* tasks enqueued for other lcores (statistics) */
	/* generator (the ingress lcore) */
	struct nl_model_src src;
	uint64_t generated;
	uint64_t accepted;
	uint64_t rejected_ingress;
	/* native booking: tasks wait for their last sub-task's end on a timing wheel of
	 * NL_DP_WHEEL one-u.t. slots (slot = floor(end) mod NL_DP_WHEEL), lists threaded through
	 * wh_next[] by the task's pool index (nl_task.aux); a task a lap or more ahead stays in
	 * its slot until its lap comes */
	uint32_t *wh_next;            /* [pool_size] next task index, UINT32_MAX = end of list */
	double *wh_end;               /* [pool_size] end of the task's last sub-task [u.t.] */
	uint32_t wh_head[NL_DP_WHEEL];
	uint64_t wh_cur;              /* slots before this one (absolute) are done */
	uint64_t wh_n;                /* tasks on the wheel */
	uint64_t booked_tasks;        /* tasks put on the wheel so far */
	/* native latency statistics */
	double lat_arrive_vt[NL_DP_LAT_BURST]; /* ingress stamps of the burst not yet sampled */
	unsigned int lat_pend;
	uint64_t lat_hist[64 * 8];    /* 8 sub-buckets per power of two [ns] */
	uint64_t lat_n;
	double lat_sum_ns;
	uint64_t dispatched_tasks;
} __rte_cache_aligned;

struct nl_dp {
	struct nl_model_cfg m;
	struct nl_dp_opts o;
	const struct nl_policy_ops *policy; /* o.policy, or the ops of o.scheme */
	struct nl_sched_params sp;
	struct nl_machine *mach0;     /* configured machines */
	unsigned int n_mach;
	struct nl_dp_gen *gen_rcu;    /* RCU root (I3) */
	struct nl_load_table *load;
	struct nl_dp_mgr *mgr;
	unsigned int n_mgr;
	struct rte_mempool *pool;
	struct nl_task **pool_task;   /* [n_pool] the task object of each pool index (its aux,
				       * kept for the object's whole life in the pool) */
	unsigned int n_pool;
	struct rte_ring *sub_ring;    /* managers -> control (sub-tasks) */
	struct rte_ring *fin_ring;    /* managers -> control (refused tasks) */
	struct nl_dp_lcore *lc;       /* [n_lc] */
	struct rte_ring **xring;      /* [n_lc * n_lc] SP/SC hop rings, src * n_lc + dst; NULL on
				       * the diagonal, and all NULL emulated or with one lcore */
	unsigned int n_lc;
	/* clock */
	uint64_t tsc0;
	double vt_per_cyc;
	double cyc_per_ns;
	/* run parameters (emulated) */
	double lambda;
	double horizon_vt;
	double warmup_vt;
	struct nl_model_bg bg;        /* background load of the machines (off unless emulated) */
	uint32_t measure_mgr;         /* manager that runs ops->measure(), or NL_NODE_NONE */
	uint64_t gen_done;            /* generator finished (relaxed flag) */
	uint64_t run_quit;            /* lcores stop (relaxed flag) */
	/* control-lcore state (I3) */
	struct nl_evq fin_q;          /* emulated machines: t_vt = sub-task finish, arg = machine */
	double *resp;
	size_t n_resp, cap_resp;
	double sum_hops, sum_wait;
	uint64_t completed, failed, rejected_policy;
	double last_publish_vt;
	bool ctl_dirty;               /* load table changed since the last publish */
	/* port mode (the layer driving the engine, port/) */
	uint64_t io_accepted;         /* tasks an outside ingress accepted (nl_dp_ingress_st()) */
	uint64_t io_rejected;         /* and answered REJECT before acceptance */
	double work_scale_us;         /* port mode: wall us per model second (booking estimate) */
	double dur_scale;             /* vt per model second in managers' bookings */
	struct nl_match_tab *match_tab; /* emulated/native: the model's [class] table (nl_dp_match.c) */
	uint32_t *match_h;            /* [n_pool] class handle of each generated task, or NULL */
	void *ext;                    /* the extension's state (o.ext, nl_dp_ext_ops), or NULL */
	uint8_t *split_part;          /* emulated [split]: appliance of each manager, or NULL */
};

/*
 * Engine internals shared by its files and the layers above (not public API).
 * Suffixes as everywhere: _st = the calling lcore owns the object, _ctl = control thread.
 */

/**
 * Current engine time: TSC since the run started, scaled to u.t. (ns_per_vt wall ns per u.t.
 * in emulated mode; 1 u.t. = 1 us in native and port modes).
 * @return now [u.t.]. @par Context Any lcore; reads the TSC, no memory written.
 */
double nl_dp_now_vt(const struct nl_dp *dp);

/**
 * Manager lcore main loop (STYLE.md shape): polls its managers in bursts, quiescent state in
 * the housekeeping block, exits when the run ends.
 * @param arg  struct nl_dp_lcore * owned by this lcore.
 * @return 0. @par Context The lcore launched with it (rte_eal_remote_launch).
 */
int nl_dp_lcore_main(void *arg);

/**
 * Account a task whose last sub-task finished at fin_vt (completed, or failed when flagged),
 * record its response time and return it to the mempool.
 * @par Context Control lcore only.
 */
void nl_dp_task_finish_ctl(struct nl_dp *dp, struct nl_task *t, double fin_vt);

/**
 * Publish a new machine generation (machines, alive flags, a fresh policy bound to them) with
 * rcu_assign_pointer; the old one is freed after a grace period (urcu_qsbr_call_rcu).
 * @param mach, alive  [n_mach] copied. @param alive  NULL = all alive.
 * @return 0, or -ENOMEM / the policy's -errno (nothing published).
 * @par Context Control thread; may allocate.
 */
int nl_dp_gen_publish_ctl(struct nl_dp *dp, const struct nl_machine *mach, const uint8_t *alive,
			  unsigned int n_mach);

/**
 * Admit a new task at its entry manager (policy entry(), rnd uniform 64-bit).
 * @param stamp_vt  Arrival time [u.t.].
 * @return 0; -ENOBUFS when the entry inbox is full (the caller answers REJECT overload).
 * @par Context Ingress lcore, QSBR-online; no allocation, no lock.
 */
int nl_dp_ingress_st(struct nl_dp_lcore *lc, struct nl_task *t, double stamp_vt, uint64_t rnd);

/**
 * As nl_dp_ingress_st(), at a given entry manager instead of the policy's entry(): port mode's
 * local entry of a split tree (issue #36, nl_port_ext_ops.entry_ctl), where the extension
 * drew mgr from the policy's own entry() restricted to this appliance's managers.
 * @param mgr  A manager id < the policy's n_mgr. @return 0; -ENOBUFS (inbox full).
 * @par Context The lcore that owns lc (port mode: the I/O lcore).
 */
int nl_dp_ingress_at_st(struct nl_dp_lcore *lc, struct nl_task *t, uint32_t mgr, double stamp_vt);

/**
 * Put t on manager `mgr`'s inbox, stamped now, and set its lcore's pending bit (any
 * manager: one a manager lcore polls, or a scale-out proxy's).
 * @return true; false when mgr does not exist or its inbox is full (the caller fails t).
 * @par Context Any thread that holds t (inboxes are multi-producer).
 */
bool nl_dp_inbox_put_ctl(struct nl_dp *dp, struct nl_task *t, uint32_t mgr);

/**
 * Decide at manager mg on lc, an lcore struct no manager lcore runs (a scale-out proxy's,
 * whose managers this caller has adopted, issue #36 standby): the policy's periodic
 * measurement when mg is the measuring manager and it is due, then a burst of mg's inbox,
 * exactly as a manager lcore's poll does (mgr_poll_st()), with lc->eng.ops =
 * nl_dp_engine_ops_ctl (no pass-through, I6: lc owns managers the caller does not decide
 * at). Hand-overs to managers of lc go to their inboxes; mg's pending bit is set again when
 * it still has work.
 * @return tasks decided (0 when timing is emulated or lc does not own mg).
 * @par Context The one thread that serves lc (the control lcore), which publishes the
 * machine generations (it reads dp->gen_rcu without a read-side section).
 * @par Source docs/scale-out.md "Standby".
 */
unsigned int nl_dp_mgr_serve_ctl(struct nl_dp_lcore *lc, struct nl_dp_mgr *mg);

/**
 * Native and port modes: hand t to manager `mgr` without its inbox (no atomic, no pending
 * bit). A manager of the same lcore gets it through the lcore's hand-over FIFO, decided when
 * the lcore drains it, in FIFO order. A manager of another manager lcore gets it through the
 * pair's SP/SC ring: staged per destination, enqueued when NL_DP_XBURST are staged or when
 * the round ends (nl_dp_xhop_flush_st()), taken into the destination's FIFO at the start of
 * its round (nl_dp_xhop_recv_st()). A task the ring cannot take is failed (REJECT overload),
 * so none is lost; with two manager lcores a ring holds a pool's worth, so that cannot happen,
 * with more it holds the pool's share of one lcore (nl_dp.c xring_create).
 * @return true; false when timing is emulated, the same lcore's FIFO is full, lc is not a
 * manager lcore (port mode's I/O lcore) or mgr is a scale-out proxy's: the caller uses the
 * manager's inbox.
 * @par Context The lcore that owns lc. @par Source issue "Dispatch at the physical limit" (2).
 */
bool nl_dp_hand_put_st(struct nl_dp_lcore *lc, struct nl_task *t, uint32_t mgr);

/* Enqueue every staged task on its destination's ring (one burst per destination); no-op
 * on an lcore without stages. Owner. */
void nl_dp_xhop_flush_st(struct nl_dp_lcore *lc);

/* Move tasks other lcores enqueued for this one into its hand-over FIFO, as much as it has
 * room for. @return how many. Owner lcore. */
unsigned int nl_dp_xhop_recv_st(struct nl_dp_lcore *lc);

/* Native booking: tasks whose last sub-task ended by now_vt are complete (counted in
 * dispatched_tasks) and go back to the pool. @return how many. Owner lcore. */
unsigned int nl_dp_native_done_st(struct nl_dp_lcore *lc, double now_vt);

/* Native and port modes: turn the burst's noted dispatches into latency samples with one
 * clock read (issue "Dispatch at the physical limit": samples per burst). Owner lcore. */
void nl_dp_lat_flush_st(struct nl_dp_lcore *lc);

/**
 * Emulated timing: move the tasks this lcore forwarded whose transfer ended (stamp <= now)
 * into their manager's inbox, earliest first (ties in forwarding order), so every manager
 * admits tasks in the order they reach it (nl_model.h I3). A full inbox fails the task
 * (REJECT overload), it is never dropped.
 * @return tasks moved. @par Context The lcore that owns lc, QSBR-online.
 */
unsigned int nl_dp_transit_release_st(struct nl_dp_lcore *lc, double now_vt);

/**
 * Fail a task the engine cannot carry on (full inbox or sub-task ring, bad dispatch): it goes
 * to the control lcore, which answers REJECT `why` and accounts it (nl_dp.h I1).
 * @par Context A manager lcore (or the I/O lcore) that holds t.
 */
void nl_dp_task_fail_st(struct nl_dp_lcore *lc, struct nl_task *t, enum nl_reject_reason why);

/**
 * One round of a manager lcore at now_vt: the generator (ingress lcore), tasks in transit,
 * then up to NL_DP_SWEEPS sweeps over the managers whose pending bit is set.
 * @return work done (tasks generated, moved or decided). @par Context The lcore owning lc,
 * QSBR-online, lc->gen set for the round.
 */
unsigned int nl_dp_lcore_round_st(struct nl_dp_lcore *lc, double now_vt);

/**
 * Earliest time after which lc has work: the next arrival (ingress), the earliest message in
 * transit, a manager's end of service or due measurement; now_vt when a manager has a task
 * waiting in its inbox; INFINITY when idle (emulated lock-step driver).
 * @par Context Lock-step driver (the thread that runs every round).
 */
double nl_dp_lcore_next_vt(const struct nl_dp_lcore *lc, double now_vt);

/**
 * Emulated machines, one control round at now_vt: book the managers' sub-tasks on their
 * machines (nl_model_sub_vt() from the time each starts), complete those finished by now
 * (nl_model_task_sub_done()), account refused tasks, publish the load table when due.
 * @return work done. @par Context Control lcore (the load table's writer).
 */
unsigned int nl_dp_ctl_poll_emul(struct nl_dp *dp, double now_vt);

/** Earliest time the control lcore has work (INFINITY when idle). @par Context Control. */
double nl_dp_ctl_next_vt(const struct nl_dp *dp, double now_vt);

/**
 * Reset every run statistic, manager and view, publish a fresh generation and seed the task
 * source (lambda arrivals per u.t., seed): the state of a new run.
 * @par Context Control thread, lcores stopped.
 */
void nl_dp_run_reset_ctl(struct nl_dp *dp, double lambda, uint64_t seed);

/** Launch every manager lcore on nl_dp_lcore_main. @return 0 or the EAL's error. */
int nl_dp_launch_ctl(struct nl_dp *dp);

/**
 * After the lcores stopped: return every task still held anywhere (inboxes, service slots,
 * transit, rings, emulated machines) to the mempool exactly once, counted failed.
 * @par Context Control thread, lcores stopped.
 */
void nl_dp_drain_ctl(struct nl_dp *dp);

/** Mark every manager as having work, so each is polled at least once. @par Context Control. */
void nl_dp_kick_ctl(struct nl_dp *dp);

/** The engine ops the policies call on a manager lcore (nl_dp_ops.c; ctx = the lcore). */
extern const struct nl_engine_ops nl_dp_engine_ops;
/** The same with lock-step's shared bookings (opts.lockstep: lockstep_share(), nl_dp_ops.c). */
extern const struct nl_engine_ops nl_dp_engine_ops_lockstep;
/** The same without pass-through (I6), for nl_dp_mgr_serve_ctl()'s lcore. */
extern const struct nl_engine_ops nl_dp_engine_ops_ctl;

/** Free a machine generation now (no reader may hold it). @par Context Control. */
void nl_dp_gen_free_ctl(struct nl_dp_gen *g);

/** Sum of a uint64_t counter of every lcore (offsetof in struct nl_dp_lcore). Relaxed. */
uint64_t nl_dp_sum_lc(const struct nl_dp *dp, size_t off);

/**
 * Fill a point's statistics from the finished run (response percentiles, utilizations of the
 * policy's top manager and the busiest one). @par Context Control, lcores stopped.
 */
void nl_dp_point_stats_ctl(struct nl_dp *dp, struct nl_dp_point *pt);

/**
 * Fill a native run's result (rate over wall_s [s], latency mean and p99, the task counts:
 * `unfinished` of dp->failed are the tasks the stop's drain returned, the rest failed during
 * the run). @par Context Control, stopped.
 */
void nl_dp_native_stats_ctl(const struct nl_dp *dp, double wall_s, uint64_t unfinished,
			    struct nl_dp_native_result *r);

#endif /* NL_DP_PRIV_H */
